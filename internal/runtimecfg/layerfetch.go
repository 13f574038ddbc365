package runtimecfg

import "fmt"

// pluginTransfer is containerd 2.x's transfer service plugin.
const pluginTransfer = "io.containerd.transfer.v1.local"

// layerFetchConfig is the part of a plugin's table that decides whether
// layers are fetched with parallel Range requests.
type layerFetchConfig struct {
	MaxConcurrentDownloads     *int `toml:"max_concurrent_downloads"`
	ConcurrentLayerFetchBuffer int  `toml:"concurrent_layer_fetch_buffer"`
}

// layerFetch records how containerd 2.1+ fetches a layer, as 2.2.9's
// dockerFetcher.open does (core/remotes/docker/fetcher.go): with
// concurrent_layer_fetch_buffer at 512 bytes or more and more than one
// download allowed, it asks the blob host for "Range: bytes=0-", and when
// the answer is longer than one chunk, fetches the rest chunk by chunk in
// parallel ("Range: bytes=<offset>-", each read for one chunk); a host
// that ignores the range (200) gets one request. Otherwise one request per
// layer, no Range. The settings are the transfer service's
// ([plugins."io.containerd.transfer.v1.local"], default
// max_concurrent_downloads 3, buffer 0) on the transfer path, the CRI
// images plugin's on the local path (internal/cri/server/images/
// image_pull.go passes its own). The default, buffer 0, fetches without
// Range.
func (c *Config) layerFetch(l *loaded) {
	if !c.Runtime.AtLeast(2, 1) || c.fatal != nil {
		return
	}
	plugin := pluginTransfer
	if c.PullPath == PullLocal {
		plugin = pluginImagesV3
	}
	var lf layerFetchConfig
	if _, err := l.decodeTable(&lf, plugin); err != nil {
		return // a type error is the plugin's own refusal, reported elsewhere
	}
	parallel := 3
	if lf.MaxConcurrentDownloads != nil {
		parallel = *lf.MaxConcurrentDownloads
	}
	src := "default (concurrent_layer_fetch_buffer 0)"
	if _, set := l.lookup(plugin, "concurrent_layer_fetch_buffer"); set {
		src = l.originOf(plugin, "concurrent_layer_fetch_buffer")
	}
	value := "one request per layer, no Range"
	if lf.ConcurrentLayerFetchBuffer >= 512 && parallel > 1 {
		c.rangeChunk = lf.ConcurrentLayerFetchBuffer
		value = fmt.Sprintf("parallel Range requests: %d-byte chunks, up to %d at once (first \"Range: bytes=0-\")", lf.ConcurrentLayerFetchBuffer, parallel)
	}
	c.Settings = append(c.Settings, Setting{Key: "layer fetch", Value: value, Source: src})
}

// RangeChunk is the chunk size in bytes of the runtime's parallel Range
// layer fetch, 0 when the runtime fetches each layer with one request.
func (c *Config) RangeChunk() int { return c.rangeChunk }
