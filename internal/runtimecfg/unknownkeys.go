package runtimecfg

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// serverConfig has the keys of containerd's server configuration (the top
// level of config.toml and its [grpc], [ttrpc], [debug], [metrics],
// [cgroup], [proxy_plugins.*] and [stream_processors.*] tables), as
// containerd 2.2.9 declares them (cmd/containerd/server/config/config.go,
// Config and its section types); 1.x also knows plugin_dir (skipped in
// unknownServerKeys). Plugin tables are left to each plugin (the
// registry's are checked in registry).
type serverConfig struct {
	Version          int                        `toml:"version"`
	Root             string                     `toml:"root"`
	State            string                     `toml:"state"`
	TempDir          string                     `toml:"temp"`
	GRPC             serverGRPC                 `toml:"grpc"`
	TTRPC            serverSocket               `toml:"ttrpc"`
	Debug            serverDebug                `toml:"debug"`
	Metrics          serverMetrics              `toml:"metrics"`
	DisabledPlugins  []string                   `toml:"disabled_plugins"`
	RequiredPlugins  []string                   `toml:"required_plugins"`
	Plugins          map[string]any             `toml:"plugins"`
	OOMScore         int                        `toml:"oom_score"`
	Cgroup           serverCgroup               `toml:"cgroup"`
	ProxyPlugins     map[string]serverProxy     `toml:"proxy_plugins"`
	Timeouts         map[string]string          `toml:"timeouts"`
	Imports          []string                   `toml:"imports"`
	StreamProcessors map[string]serverProcessor `toml:"stream_processors"`
}

type serverGRPC struct {
	Address        string `toml:"address"`
	TCPAddress     string `toml:"tcp_address"`
	TCPTLSCA       string `toml:"tcp_tls_ca"`
	TCPTLSCert     string `toml:"tcp_tls_cert"`
	TCPTLSKey      string `toml:"tcp_tls_key"`
	UID            int    `toml:"uid"`
	GID            int    `toml:"gid"`
	MaxRecvMsgSize int    `toml:"max_recv_message_size"`
	MaxSendMsgSize int    `toml:"max_send_message_size"`
	TCPTLSCName    string `toml:"tcp_tls_common_name"`
}

type serverSocket struct {
	Address string `toml:"address"`
	UID     int    `toml:"uid"`
	GID     int    `toml:"gid"`
}

type serverDebug struct {
	Address string `toml:"address"`
	UID     int    `toml:"uid"`
	GID     int    `toml:"gid"`
	Level   string `toml:"level"`
	Format  string `toml:"format"`
}

type serverMetrics struct {
	Address       string `toml:"address"`
	GRPCHistogram bool   `toml:"grpc_histogram"`
}

type serverCgroup struct {
	Path string `toml:"path"`
}

type serverProxy struct {
	Type         string            `toml:"type"`
	Address      string            `toml:"address"`
	Platform     string            `toml:"platform"`
	Exports      map[string]string `toml:"exports"`
	Capabilities []string          `toml:"capabilities"`
}

type serverProcessor struct {
	Accepts []string `toml:"accepts"`
	Returns string   `toml:"returns"`
	Path    string   `toml:"path"`
	Args    []string `toml:"args"`
	Env     []string `toml:"env"`
}

// unknownServerKeys lists, as lint messages, the keys of one configuration
// file outside the plugin tables that containerd does not know. It decodes
// the file as containerd 2.x's loadConfigFile does (go-toml's
// DisallowUnknownFields): 2.x logs "Ignoring unknown key in TOML" for
// each and goes on; 1.x ignores them without a word. Either way the
// setting has no effect. A type error is not this lint's: the file's own
// decode reports it.
func unknownServerKeys(file string, data []byte, rt Runtime) []string {
	var sc serverConfig
	err := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields().Decode(&sc)
	var se *toml.StrictMissingError
	if !errors.As(err, &se) {
		return nil
	}
	var out []string
	for _, e := range se.Errors {
		key := strings.Join(e.Key(), ".")
		if rt.major < 2 && key == "plugin_dir" {
			continue
		}
		row, _ := e.Position()
		how := "ignores it without a word"
		if rt.major >= 2 {
			how = "logs \"Ignoring unknown key in TOML\" and ignores it"
		}
		if key == "plugin_dir" {
			how = "no longer has plugin_dir (removed in 2.0) and " + how
		}
		out = append(out, fmt.Sprintf("%s:%d: %s does not know the key %s and %s: the setting has no effect", file, row, rtLabel(rt), key, how))
	}
	return out
}

// rtLabel is "containerd 1.6.20", "containerd 2.x" or "containerd".
func rtLabel(rt Runtime) string {
	if rt.Version == "" || rt.Assumed {
		return "containerd"
	}
	return "containerd " + rt.Version
}
