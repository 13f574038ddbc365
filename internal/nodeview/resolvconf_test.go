package nodeview

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func addrs(ss ...string) []netip.Addr {
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out
}

func TestParseResolvConf(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		want      ResolvConf
		wantNotes int
	}{
		{
			name: "empty file uses defaults",
			in:   "",
			want: ResolvConf{Nameservers: addrs("127.0.0.1", "::1"), Ndots: 1, Timeout: 5 * time.Second, Attempts: 2, Defaulted: true},
		},
		{
			name: "systemd-resolved stub",
			in:   "# This is /run/systemd/resolve/stub-resolv.conf\nnameserver 127.0.0.53\noptions edns0 trust-ad\nsearch corp.example.\n",
			want: ResolvConf{Nameservers: addrs("127.0.0.53"), Search: []string{"corp.example"}, Ndots: 1, Timeout: 5 * time.Second, Attempts: 2, Options: []string{"edns0", "trust-ad"}, NameserverLines: 1},
		},
		{
			name:      "only three nameservers kept, extras noted",
			in:        "nameserver 10.0.0.1\nnameserver 10.0.0.2\nnameserver fe80::1%eth0\nnameserver 10.0.0.4\n",
			want:      ResolvConf{Nameservers: addrs("10.0.0.1", "10.0.0.2", "fe80::1%eth0"), Ndots: 1, Timeout: 5 * time.Second, Attempts: 2, NameserverLines: 4},
			wantNotes: 1,
		},
		{
			name: "comments with # and ; and inline garbage after the address",
			in:   "; comment\n# nameserver 9.9.9.9\nnameserver 10.0.0.1 # trailing\n",
			want: ResolvConf{Nameservers: addrs("10.0.0.1"), Ndots: 1, Timeout: 5 * time.Second, Attempts: 2, NameserverLines: 1},
		},
		{
			name: "last of search and domain wins",
			in:   "search a.example b.example\ndomain c.example\n",
			want: ResolvConf{Nameservers: addrs("127.0.0.1", "::1"), Search: []string{"c.example"}, Ndots: 1, Timeout: 5 * time.Second, Attempts: 2, Defaulted: true},
		},
		{
			name: "domain then search",
			in:   "domain c.example\nsearch a.example b.example\nnameserver 10.0.0.1",
			want: ResolvConf{Nameservers: addrs("10.0.0.1"), Search: []string{"a.example", "b.example"}, Ndots: 1, Timeout: 5 * time.Second, Attempts: 2, NameserverLines: 1},
		},
		{
			name: "kubernetes pod style options",
			in:   "nameserver 10.96.0.10\nsearch ns.svc.cluster.local svc.cluster.local cluster.local\noptions ndots:5 timeout:2 attempts:3 rotate use-vc\n",
			want: ResolvConf{Nameservers: addrs("10.96.0.10"), Search: []string{"ns.svc.cluster.local", "svc.cluster.local", "cluster.local"}, Ndots: 5, Timeout: 2 * time.Second, Attempts: 3, Rotate: true, UseTCP: true,
				Options: []string{"ndots:5", "timeout:2", "attempts:3", "rotate", "use-vc"}, NameserverLines: 1},
		},
		{
			name: "options clamped to glibc limits",
			in:   "nameserver 10.0.0.1\noptions ndots:99 timeout:0 attempts:50\n",
			want: ResolvConf{Nameservers: addrs("10.0.0.1"), Ndots: 15, Timeout: time.Second, Attempts: 5, Options: []string{"ndots:99", "timeout:0", "attempts:50"}, NameserverLines: 1},
		},
		{
			name:      "non-numeric option reads as atoi does",
			in:        "nameserver 10.0.0.1\noptions ndots:x timeout:3s\n",
			want:      ResolvConf{Nameservers: addrs("10.0.0.1"), Ndots: 0, Timeout: 3 * time.Second, Attempts: 2, Options: []string{"ndots:x", "timeout:3s"}, NameserverLines: 1},
			wantNotes: 2,
		},
		{
			name:      "invalid nameservers only fall back to localhost",
			in:        "nameserver 10.0.0.300\nnameserver\nnameserver dns.example\n",
			want:      ResolvConf{Nameservers: addrs("127.0.0.1", "::1"), Ndots: 1, Timeout: 5 * time.Second, Attempts: 2, Defaulted: true, NameserverLines: 3},
			wantNotes: 4,
		},
		{
			name:      "CRLF line ends and unknown keywords",
			in:        "nameserver 10.0.0.1\r\nbogus line\r\n",
			want:      ResolvConf{Nameservers: addrs("10.0.0.1"), Ndots: 1, Timeout: 5 * time.Second, Attempts: 2, NameserverLines: 1},
			wantNotes: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseResolvConf(strings.NewReader(tt.in))
			if err != nil {
				t.Fatalf("ParseResolvConf(%q) error = %v", tt.in, err)
			}
			if len(got.Notes) != tt.wantNotes {
				t.Errorf("ParseResolvConf(%q) notes = %q, want %d notes", tt.in, got.Notes, tt.wantNotes)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(ResolvConf{}, "Notes"), cmpopts.EquateEmpty(), cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
				t.Errorf("ParseResolvConf(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestParseResolvConfLongLine(t *testing.T) {
	in := "nameserver 10.0.0.1\nsearch " + strings.Repeat("a", 70<<10) + "\n"
	got, err := ParseResolvConf(strings.NewReader(in))
	if err == nil {
		t.Fatalf("ParseResolvConf(70 KiB line) error = nil, want an error")
	}
	if len(got.Nameservers) != 1 || got.Nameservers[0] != netip.MustParseAddr("10.0.0.1") {
		t.Errorf("ParseResolvConf(70 KiB line) partial nameservers = %v, want [10.0.0.1]", got.Nameservers)
	}
}

func TestAtoi(t *testing.T) {
	tests := []struct {
		in    string
		n     int
		clean bool
	}{{"5", 5, true}, {"", 0, false}, {"x", 0, false}, {"3s", 3, false}, {"-2", -2, true}, {"+7", 7, true}, {"99999999999999999999", 1048576*10 + 9, true}}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			n, clean := atoi(tt.in)
			if tt.in == "99999999999999999999" {
				// Only that it stays bounded and clean matters.
				if n <= 0 || !clean {
					t.Errorf("atoi(%q) = %d, %v, want a large positive clean number", tt.in, n, clean)
				}
				return
			}
			if n != tt.n || clean != tt.clean {
				t.Errorf("atoi(%q) = %d, %v, want %d, %v", tt.in, n, clean, tt.n, tt.clean)
			}
		})
	}
}

func FuzzParseResolvConf(f *testing.F) {
	for _, s := range []string{"", "nameserver 10.0.0.1\n", "options ndots:5 timeout:1 attempts:9 rotate\nsearch a b\n", "nameserver fe80::1%eth0\ndomain x.", "nameserver 1.2.3.4\nnameserver 1.2.3.5\nnameserver ::1\nnameserver 8.8.8.8"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		rc, _ := ParseResolvConf(strings.NewReader(in))
		if len(rc.Nameservers) == 0 || len(rc.Nameservers) > 3 {
			t.Fatalf("ParseResolvConf(%q) gave %d nameservers, want 1..3", in, len(rc.Nameservers))
		}
		if rc.Ndots < 0 || rc.Ndots > 15 || rc.Attempts < 1 || rc.Attempts > 5 || rc.Timeout < time.Second || rc.Timeout > 30*time.Second {
			t.Fatalf("ParseResolvConf(%q) options out of range: %+v", in, rc)
		}
		for _, s := range rc.Search {
			if strings.HasSuffix(s, ".") || s == "" {
				t.Fatalf("ParseResolvConf(%q) search entry %q not normalised", in, s)
			}
		}
	})
}
