package nodeview

import (
	"errors"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var cmpAddr = cmp.Comparer(func(a, b netip.Addr) bool { return a == b })

func TestParseHosts(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []HostsEntry
		badLine []int
	}{
		{name: "empty", in: ""},
		{
			name: "debian default",
			in:   "127.0.0.1\tlocalhost\n127.0.1.1\tnode-1.corp.example node-1\n\n# The following lines are desirable for IPv6 capable hosts\n::1     localhost ip6-localhost ip6-loopback\n",
			want: []HostsEntry{
				{Addr: netip.MustParseAddr("127.0.0.1"), Names: []string{"localhost"}, Line: 1},
				{Addr: netip.MustParseAddr("127.0.1.1"), Names: []string{"node-1.corp.example", "node-1"}, Line: 2},
				{Addr: netip.MustParseAddr("::1"), Names: []string{"localhost", "ip6-localhost", "ip6-loopback"}, Line: 5},
			},
		},
		{
			name: "comment in the middle of a line, zone, CRLF",
			in:   "10.1.2.3 myreg.azurecr.io # added by hand\r\nfe80::1%eth0 link.example\r\n",
			want: []HostsEntry{
				{Addr: netip.MustParseAddr("10.1.2.3"), Names: []string{"myreg.azurecr.io"}, Line: 1},
				{Addr: netip.MustParseAddr("fe80::1%eth0"), Names: []string{"link.example"}, Line: 2},
			},
		},
		{
			name: "bad lines are skipped and reported",
			in:   "10.1.2.300 bad.example\n10.1.2.4\nregistry.example 10.1.2.5\n10.1.2.6 good.example\n",
			want: []HostsEntry{
				{Addr: netip.MustParseAddr("10.1.2.6"), Names: []string{"good.example"}, Line: 4},
			},
			badLine: []int{1, 2, 3},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseHosts(strings.NewReader(tt.in))
			if diff := cmp.Diff(tt.want, got, cmpAddr, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("ParseHosts(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
			var lines []int
			for _, e := range unjoin(err) {
				var le *HostsLineError
				if !errors.As(e, &le) {
					t.Fatalf("ParseHosts(%q) error %v is not a *HostsLineError", tt.in, e)
				}
				lines = append(lines, le.Line)
			}
			if diff := cmp.Diff(tt.badLine, lines, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("ParseHosts(%q) bad lines (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

func TestLookupHosts(t *testing.T) {
	entries, err := ParseHosts(strings.NewReader("10.0.0.1 Registry.Example alias\n10.0.0.2 registry.example.\n10.0.0.1 registry.example\nfd00::5 registry.example\n10.9.9.9 other.example\n"))
	if err != nil {
		t.Fatal(err)
	}
	v := &View{Hosts: entries}
	tests := []struct {
		name string
		want []netip.Addr
	}{
		{"registry.example", addrs("10.0.0.1", "10.0.0.2", "fd00::5")},
		{"REGISTRY.example.", addrs("10.0.0.1", "10.0.0.2", "fd00::5")},
		{"alias", addrs("10.0.0.1")},
		{"missing.example", nil},
		{"", nil},
		{".", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := v.LookupHosts(tt.name)
			if diff := cmp.Diff(tt.want, got, cmpAddr, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("LookupHosts(%q) mismatch (-want +got):\n%s", tt.name, diff)
			}
		})
	}
	var nilView *View
	if got := nilView.LookupHosts("x"); got != nil {
		t.Errorf("(*View)(nil).LookupHosts = %v, want nil", got)
	}
}

func FuzzParseHosts(f *testing.F) {
	for _, s := range []string{"", "127.0.0.1 localhost\n", "::1 a b c # x\n", "fe80::1%eth0 z\n", "bad line\n1.2.3.4\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		entries, _ := ParseHosts(strings.NewReader(in))
		v := &View{Hosts: entries}
		for _, e := range entries {
			if !e.Addr.IsValid() || len(e.Names) == 0 || e.Line < 1 {
				t.Fatalf("ParseHosts(%q) gave invalid entry %+v", in, e)
			}
			for _, n := range e.Names {
				if strings.ContainsAny(n, "# \t") {
					t.Fatalf("ParseHosts(%q) name %q holds a comment or blank", in, n)
				}
				if trimDot(n) != "" && len(v.LookupHosts(n)) == 0 {
					t.Fatalf("ParseHosts(%q): LookupHosts(%q) finds nothing for a parsed name", in, n)
				}
			}
		}
	})
}
