package netlab_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/test/netlab"
)

// helperConfig is what the test hands the lab helper process.
type helperConfig struct {
	Addrs    netlab.Addrs
	DNSNetns string // the namespace holding the DNS addresses
	Dir      string
}

// labInfo is what the lab helper reports about the lab it serves.
type labInfo struct {
	Registry  string
	CAPEM     string
	Username  string
	Password  string
	Scenarios []labScenario
}

type labScenario struct {
	Name, Description, Image, Root, Username, Password, Platform string
	Expect                                                       expect
}

// expect is the verdict a column must give.
type expect struct {
	OK       bool
	Layer    string
	Cause    string
	Role     string
	Endpoint string
	Warnings []string
}

func (l *labInfo) scenario(name string) (labScenario, bool) {
	for _, s := range l.Scenarios {
		if s.Name == name {
			return s, true
		}
	}
	return labScenario{}, false
}

// startLab runs the embedded lab in the registry namespace of n (as its own
// process, so that everything it dials and resolves stays in that
// namespace) with the DNS servers bound in the DNS namespace.
func startLab(t *testing.T, ctx context.Context, n *netlab.Net) *labInfo {
	t.Helper()
	if runLabHelper == nil {
		t.Fatal("the embedded lab's helper (runLabHelper) is not linked into this test binary")
	}
	// The registry host's own view of /etc: the lab resolver, no machine
	// resolver.
	etc := filepath.Join(n.Dir, "registry-etc")
	writeFiles(t, etc, map[string]string{
		"resolv.conf": "nameserver " + n.Addrs.DNS.String() + "\n",
		"hosts":       "127.0.0.1 localhost\n",
	})
	if err := n.Registry.SetEtc(etc); err != nil {
		t.Fatal(err)
	}
	cfg, err := json.Marshal(helperConfig{Addrs: n.Addrs, DNSNetns: n.DNS.Name, Dir: filepath.Join(n.Dir, "lab")})
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := n.Registry.Command(context.Background(), self, "-test.run=^$")
	cmd.Env = append(cmd.Env, labHelperEnv+"="+string(cfg))
	logf, err := os.Create(filepath.Join(n.Dir, "lab.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = logf
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the lab helper: %v", err)
	}
	t.Cleanup(func() {
		stdin.Close() // the helper closes the lab and exits on EOF
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Cancel()
			<-done
		}
		logf.Close()
	})
	type result struct {
		info *labInfo
		err  error
	}
	resc := make(chan result, 1)
	go func() {
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil {
			resc <- result{err: fmt.Errorf("reading the lab helper's report: %w", err)}
			return
		}
		var info labInfo
		if err := json.Unmarshal([]byte(line), &info); err != nil {
			resc <- result{err: fmt.Errorf("decoding the lab helper's report: %w", err)}
			return
		}
		go io.Copy(io.Discard, stdout)
		resc <- result{info: &info}
	}()
	select {
	case r := <-resc:
		if r.err != nil {
			t.Fatalf("%v\nlab log:\n%s", r.err, readTail(logf.Name()))
		}
		return r.info
	case <-ctx.Done():
		t.Fatalf("waiting for the lab helper: %v\nlab log:\n%s", ctx.Err(), readTail(logf.Name()))
	}
	return nil
}

// checkRoot makes sure a node root cannot send the runtime to the machine's
// resolver: it must have its own resolv.conf naming only lab addresses.
func checkRoot(t *testing.T, root string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "etc", "resolv.conf"))
	if err != nil {
		t.Fatalf("node root %s has no etc/resolv.conf: %v", root, err)
	}
	lab := netip.MustParsePrefix("198.18.0.0/15")
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "nameserver" {
			a, err := netip.ParseAddr(f[1])
			if err != nil || !lab.Contains(a) {
				t.Fatalf("node root %s names nameserver %s outside the lab's 198.18.0.0/15", root, f[1])
			}
		}
	}
}
