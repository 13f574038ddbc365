package netlab_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"time"

	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/test/netlab"
)

func init() { runLabHelper = labHelper }

// labHelper is the lab helper process: it runs inside the registry
// namespace (started with ip netns exec), binds the DNS servers inside the
// DNS namespace, reports the lab as one JSON line on stdout and serves
// until stdin closes.
func labHelper(config string) int {
	var cfg helperConfig
	if err := json.Unmarshal([]byte(config), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, "lab helper: decoding config:", err)
		return 2
	}
	dnsNS := &netlab.Netns{Name: cfg.DNSNetns}
	inDNS := func(address string) bool {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return false
		}
		a := ap.Addr()
		return a == cfg.Addrs.DNS || a == cfg.Addrs.DNS2 || a == cfg.Addrs.DeadDNS
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	l, err := lab.Start(ctx, lab.Options{
		Addrs: lab.Addrs{
			Registry: cfg.Addrs.Registry, Auth: cfg.Addrs.Auth, Blob: cfg.Addrs.Blob,
			Mirror: cfg.Addrs.Mirror, Dead: cfg.Addrs.Dead,
			DNS: cfg.Addrs.DNS, DNS2: cfg.Addrs.DNS2, DeadDNS: cfg.Addrs.DeadDNS,
		},
		Listen: func(network, address string) (net.Listener, error) {
			if inDNS(address) {
				return dnsNS.Listen(network, address)
			}
			return net.Listen(network, address)
		},
		ListenPacket: func(network, address string) (net.PacketConn, error) {
			if inDNS(address) {
				return dnsNS.ListenPacket(network, address)
			}
			return net.ListenPacket(network, address)
		},
		Dir:        cfg.Dir,
		PublicAddr: cfg.Addrs.Public,
		HTTPSPort:  443,
		DNSPort:    53,
		Log:        os.Stderr,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "lab helper: starting lab:", err)
		return 1
	}
	defer l.Close()
	info := labInfo{Registry: l.Registry, CAPEM: string(l.CAPEM), Username: l.Username, Password: l.Password}
	for _, s := range l.Scenarios {
		info.Scenarios = append(info.Scenarios, labScenario{
			Name: s.Name, Description: s.Description, Image: s.Image, Root: s.Root,
			Username: s.Username, Password: s.Password, Platform: s.Platform,
			Expect: expect{OK: s.Expect.OK, Layer: string(s.Expect.Layer), Cause: s.Expect.Cause,
				Role: string(s.Expect.Role), Endpoint: s.Expect.Endpoint, Warnings: s.Expect.Warnings},
		})
	}
	b, err := json.Marshal(info)
	if err != nil {
		fmt.Fprintln(os.Stderr, "lab helper:", err)
		return 1
	}
	os.Stdout.Write(append(b, '\n'))
	io.Copy(io.Discard, os.Stdin)
	return 0
}
