package nodeview

import (
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/verdict"
)

// TestResolvConfWithoutNameserver: an empty, binary, keyword-only or
// not-an-IP resolv.conf all get the same config.resolv-conf error, saying
// that the resolver falls back to the local host.
func TestResolvConfWithoutNameserver(t *testing.T) {
	tests := []struct {
		name, content, why string
	}{
		{"empty", "", "no nameserver line"},
		{"blank lines", "\n\n# generated\n", "no nameserver line"},
		{"search only", "search cluster.local\n", "no nameserver line"},
		{"binary", "\x7fELF\x02\x01\x01\x00\x00\x00\xff\xfe\nnameserver\x00\n", "not a text file"},
		{"not an ip", "nameserver not-an-ip\n", "nameserver line holds no IP address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			writeFiles(t, root, map[string]string{"etc/resolv.conf": tt.content})
			_, err := Load(root)
			ve, ok := verdict.AsError(err)
			if !ok || ve.Cause != "config.resolv-conf" {
				t.Fatalf("Load(resolv.conf %q) error = %v, want config.resolv-conf", tt.content, err)
			}
			msg := err.Error()
			if !strings.Contains(msg, "falls back to the local host (127.0.0.1 and ::1)") || !strings.Contains(msg, tt.why) {
				t.Errorf("Load(resolv.conf %q) error = %q, want it to say %q and the local-host fallback", tt.content, msg, tt.why)
			}
			if strings.ContainsRune(msg, 0) || strings.Contains(msg, "\x7fELF") {
				t.Errorf("Load(binary resolv.conf) error shows the file's bytes: %q", msg)
			}
		})
	}
}

// TestHostsTOMLErrorsNameNoGoTypes: a hosts.toml value of the wrong type
// is reported by its line, key and what it accepts, not by the Go field.
func TestHostsTOMLErrorsNameNoGoTypes(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"[host.\"https://mirror.example\"]\nskip_verify = \"yes\"\n", `line 2, column 15: skip_verify in [host."https://mirror.example"] is a TOML string, want true or false`},
		{"skip_verify = 1\n", `line 1, column 15: skip_verify is a TOML integer, want true or false`},
		{"capabilities = \"pull\"\n", `capabilities is a TOML string, want an array of strings`},
		{"server = 4\n", `server is a TOML integer, want a string`},
		{"x = [\n", `line 1, column 6: array is incomplete`},
	}
	for _, tt := range tests {
		_, err := parseHostsTOML("/etc/containerd/certs.d/r.example", []byte(tt.in))
		if err == nil {
			t.Errorf("parseHostsTOML(%q) error = nil", tt.in)
			continue
		}
		msg := err.Error()
		if strings.Contains(msg, "nodeview.") || strings.Contains(msg, "struct") || strings.Contains(msg, "hostsTOMLEntry") || !strings.Contains(msg, tt.want) {
			t.Errorf("parseHostsTOML(%q) error = %q, want %q and no Go names", tt.in, msg, tt.want)
		}
	}
}
