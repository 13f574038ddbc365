package monitor

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/distribution/reference"
	"sigs.k8s.io/yaml"
)

// Blob modes of a scheduled probe. They are the probe's own modes.
const (
	BlobsHead = "head"
	BlobsFull = "full"
	BlobsNone = "none"
)

// Defaults of a Config.
const (
	DefaultInterval       = 5 * time.Minute
	DefaultFullInterval   = 6 * time.Hour
	DefaultFullByteBudget = 1 << 30 // 1 GiB per full round
	DefaultTimeout        = 5 * time.Second
	DefaultDeadline       = 2 * time.Minute
)

// Config is the agent's configuration, read from the ConfigMap the DaemonSet
// mounts (YAML or JSON). Its field names are part of the stable interface.
type Config struct {
	// Targets are the images to watch. Each has a bounded, configured name
	// that becomes the metrics' target label (never free text).
	Targets []Target `json:"targets"`
	// Interval is how often every target is probed in Blobs mode.
	Interval Duration `json:"interval,omitempty"`
	// Blobs is the mode of every interval: head (the default: the manifest
	// and a HEAD of every blob), full or none (manifest only).
	Blobs string `json:"blobs,omitempty"`
	// FullInterval is how often a full, verified download of every layer
	// replaces the interval's probe (0 keeps the default; negative turns
	// full rounds off).
	FullInterval Duration `json:"full_interval,omitempty"`
	// FullByteBudget caps the bytes a full round may download over all
	// targets; a target that would exceed it is probed in head mode
	// instead, and pullpath_full_skipped_total says so.
	FullByteBudget int64 `json:"full_byte_budget,omitempty"`
	// FullPerInterval is k: how many nodes of each pool download each
	// target in full per FullInterval (one at a time, holding the pool's
	// Lease). The default is 1.
	FullPerInterval int `json:"full_per_interval,omitempty"`
	// RegistryBudgets are optional cluster-wide request budgets, per
	// registry (the image reference's host), in requests per minute; each
	// agent keeps to its share (the budget divided by the number of nodes).
	RegistryBudgets []RegistryBudget `json:"registry_budgets,omitempty"`
	// Timeout is each network step's deadline; Deadline one probe's.
	Timeout  Duration `json:"timeout,omitempty"`
	Deadline Duration `json:"deadline,omitempty"`
	// DockerConfig is a docker config.json (a mounted dockerconfigjson
	// Secret) to take credentials from; empty means anonymous.
	DockerConfig string `json:"docker_config,omitempty"`
}

// RegistryBudget is the requests per minute the whole cluster's agents may
// send one registry.
type RegistryBudget struct {
	Registry          string `json:"registry"`
	RequestsPerMinute int    `json:"requests_per_minute"`
}

// Target is one watched image.
type Target struct {
	// Name is the metrics' target label: 1–63 characters of [A-Za-z0-9_.-].
	Name  string `json:"name"`
	Image string `json:"image"`
	// Platform is os/arch[/variant]; empty means the node's.
	Platform string `json:"platform,omitempty"`
}

// Duration is a time.Duration written as Go writes one ("90s", "5m").
type Duration time.Duration

// UnmarshalJSON reads "5m" (or a number of seconds).
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var n float64
		if err2 := json.Unmarshal(b, &n); err2 != nil {
			return fmt.Errorf("a duration is a string such as \"5m\" or a number of seconds, not %s", b)
		}
		*d = Duration(n * float64(time.Second))
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("invalid duration %q: want e.g. 90s, 5m or 6h", s)
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes the duration as Go prints it.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// validTargetName: 1 to 63 of [A-Za-z0-9_.-] (a label value and a file
// name). A loop, not a regexp: a package-level regexp is compiled at every
// start of the node binary, and {1,63} compiles to 63 copies.
func validTargetName(s string) bool {
	if len(s) == 0 || len(s) > 63 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// LoadConfig reads and checks a configuration file.
func LoadConfig(file string) (Config, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return Config{}, fmt.Errorf("reading the monitor configuration: %w", err)
	}
	return ParseConfig(b)
}

// ParseConfig parses YAML or JSON, applies defaults and checks every field.
func ParseConfig(b []byte) (Config, error) {
	var c Config
	if err := yaml.UnmarshalStrict(b, &c); err != nil {
		return Config{}, fmt.Errorf("parsing the monitor configuration: %s", cleanYAMLError(err))
	}
	c.defaults()
	return c, c.Validate()
}

// cleanYAMLError drops the Go type names that the decoder puts in its
// messages ("json: unknown field" is kept, "monitor.Config" is not).
func cleanYAMLError(err error) string {
	s := err.Error()
	s = strings.TrimPrefix(s, "error unmarshaling JSON: while decoding JSON: ")
	s = strings.ReplaceAll(s, "Go struct field ", "field ")
	s = strings.ReplaceAll(s, " of type monitor.Duration", "")
	s = regexp.MustCompile(`\bmonitor\.[A-Za-z]+\.`).ReplaceAllString(s, "")
	return s
}

func (c *Config) defaults() {
	if c.Interval == 0 {
		c.Interval = Duration(DefaultInterval)
	}
	if c.Blobs == "" {
		c.Blobs = BlobsHead
	}
	if c.FullInterval == 0 {
		c.FullInterval = Duration(DefaultFullInterval)
	}
	if c.FullByteBudget == 0 {
		c.FullByteBudget = DefaultFullByteBudget
	}
	if c.FullPerInterval == 0 {
		c.FullPerInterval = 1
	}
	if c.Timeout == 0 {
		c.Timeout = Duration(DefaultTimeout)
	}
	if c.Deadline == 0 {
		c.Deadline = Duration(DefaultDeadline)
	}
}

// Validate checks a configuration whose defaults are applied.
func (c Config) Validate() error {
	if len(c.Targets) == 0 {
		return fmt.Errorf("the monitor configuration names no targets: add targets: [{name: app, image: registry.example/team/app:1.0}]")
	}
	seen := map[string]bool{}
	for i, t := range c.Targets {
		if !validTargetName(t.Name) {
			return fmt.Errorf("targets[%d]: invalid name %q: want 1-63 characters of letters, digits, '_', '.' or '-' (it becomes the target label)", i, t.Name)
		}
		if seen[t.Name] {
			return fmt.Errorf("targets[%d]: the name %q is used twice", i, t.Name)
		}
		seen[t.Name] = true
		if _, err := reference.ParseNormalizedNamed(t.Image); err != nil {
			return fmt.Errorf("targets[%d] (%s): invalid image %q: %v", i, t.Name, t.Image, err)
		}
		if t.Platform != "" && !validPlatform(t.Platform) {
			return fmt.Errorf("targets[%d] (%s): invalid platform %q: want os/arch[/variant], e.g. linux/amd64", i, t.Name, t.Platform)
		}
	}
	switch c.Blobs {
	case BlobsHead, BlobsFull, BlobsNone:
	default:
		return fmt.Errorf("invalid blobs mode %q (valid: head, full, none)", c.Blobs)
	}
	if c.Interval < Duration(time.Second) {
		return fmt.Errorf("invalid interval %s: want at least 1s", time.Duration(c.Interval))
	}
	if c.Timeout <= 0 || c.Deadline <= 0 {
		return fmt.Errorf("timeout and deadline must be positive")
	}
	if c.FullPerInterval < 0 {
		return fmt.Errorf("invalid full_per_interval %d: want how many nodes per pool download in full per full_interval (1 or more)", c.FullPerInterval)
	}
	for i, b := range c.RegistryBudgets {
		if b.Registry == "" || strings.ContainsAny(b.Registry, "/ ") {
			return fmt.Errorf("registry_budgets[%d]: invalid registry %q: want a registry host as image references name it, e.g. myacr.azurecr.io", i, b.Registry)
		}
		if b.RequestsPerMinute <= 0 {
			return fmt.Errorf("registry_budgets[%d] (%s): invalid requests_per_minute %d: want a positive number", i, b.Registry, b.RequestsPerMinute)
		}
	}
	if c.FullByteBudget < 0 {
		return fmt.Errorf("invalid full_byte_budget %d: want a positive number of bytes", c.FullByteBudget)
	}
	return nil
}

// validPlatform: os/arch[/variant], each part [a-z0-9]+.
func validPlatform(p string) bool {
	parts := strings.Split(p, "/")
	if len(parts) < 2 || len(parts) > 3 {
		return false
	}
	for _, part := range parts {
		if part == "" {
			return false
		}
		for i := 0; i < len(part); i++ {
			if c := part[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9') {
				return false
			}
		}
	}
	return true
}
