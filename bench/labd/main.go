// Command labd runs the embedded pull-path lab for the benchmark harness
// (bench/run.sh) on its own loopback addresses (127.0.66.x for the HTTPS
// hosts, 127.0.67.x for DNS), so that it can bind ports 443 and 53 while
// another lab holds the defaults. Ports 443 and 53 matter: the peers reach
// the lab through a scenario root's resolv.conf, which cannot name a port.
//
// It writes a JSON description of the lab to --out once the image is pushed
// (the harness waits for that file), a CA directory for skopeo
// (--src-cert-dir), one credentials file per scenario that needs them
// (mode 0600, "user:password", for ctr --user), and serves until SIGINT or
// SIGTERM.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/pullpath/pullpath/internal/lab"
)

type scenarioJSON struct {
	Name      string     `json:"name"`
	Image     string     `json:"image"`
	Root      string     `json:"root"`
	Platform  string     `json:"platform"`
	CredsFile string     `json:"credsFile,omitempty"`
	Expect    lab.Expect `json:"expect"`
}

type labJSON struct {
	Registry     string         `json:"registry"`
	HTTPSPort    int            `json:"httpsPort"`
	DNSPort      int            `json:"dnsPort"`
	Dir          string         `json:"dir"`
	CAFile       string         `json:"caFile"`
	CertDir      string         `json:"certDir"`
	DockerConfig string         `json:"dockerConfig"`
	Image        string         `json:"image"`
	Bytes        int64          `json:"bytes"`
	Layers       int            `json:"layers"`
	PushSeconds  float64        `json:"pushSeconds"`
	Scenarios    []scenarioJSON `json:"scenarios"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "labd:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		dir       = flag.String("dir", "", "lab directory (must be empty or absent)")
		out       = flag.String("out", "", "write the lab description (JSON) here when ready")
		layers    = flag.Int("layers", 8, "layers of team/app")
		layerSize = flag.Int64("layer-size", 128<<20, "bytes of random data per layer")
	)
	flag.Parse()
	if *dir == "" || *out == "" {
		return fmt.Errorf("--dir and --out are required")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	addr := netip.MustParseAddr
	opts := lab.Options{
		Dir:       *dir,
		HTTPSPort: 443,
		DNSPort:   53,
		Layers:    *layers,
		LayerSize: *layerSize,
		Addrs: lab.Addrs{
			Registry: addr("127.0.66.1"), Auth: addr("127.0.66.2"), Blob: addr("127.0.66.3"), Mirror: addr("127.0.66.4"),
			Dead: addr("127.0.66.99"), DNS: addr("127.0.67.1"), DNS2: addr("127.0.67.2"), DeadDNS: addr("127.0.67.99"),
		},
	}
	start := time.Now()
	startCtx, cancel := context.WithTimeout(ctx, 20*time.Minute)
	l, err := lab.Start(startCtx, opts)
	cancel()
	if err != nil {
		return fmt.Errorf("starting lab: %w", err)
	}
	defer l.Close()
	desc := labJSON{
		Registry: l.Registry, HTTPSPort: l.HTTPSPort, DNSPort: l.DNSPort, Dir: l.Dir, CAFile: l.CAFile,
		DockerConfig: l.DockerConfig, Image: l.Registry + "/team/app:1.0",
		Bytes: int64(*layers) * *layerSize, Layers: *layers, PushSeconds: time.Since(start).Seconds(),
	}
	desc.CertDir = filepath.Join(l.Dir, "certdir")
	if err := os.MkdirAll(desc.CertDir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(desc.CertDir, "ca.crt"), l.CAPEM, 0o644); err != nil {
		return err
	}
	credsDir := filepath.Join(l.Dir, "creds")
	if err := os.MkdirAll(credsDir, 0o700); err != nil {
		return err
	}
	for _, s := range l.Scenarios {
		sj := scenarioJSON{Name: s.Name, Image: s.Image, Root: s.Root, Platform: s.Platform, Expect: s.Expect}
		if s.Username != "" {
			sj.CredsFile = filepath.Join(credsDir, s.Name)
			if err := os.WriteFile(sj.CredsFile, []byte(s.Username+":"+s.Password), 0o600); err != nil {
				return err
			}
		}
		desc.Scenarios = append(desc.Scenarios, sj)
	}
	data, err := json.MarshalIndent(desc, "", "  ")
	if err != nil {
		return err
	}
	tmp := *out + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, *out); err != nil {
		return err
	}
	<-ctx.Done()
	return l.Close()
}
