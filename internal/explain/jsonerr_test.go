package explain

import (
	"strings"
	"testing"
)

// TestErrorsNameNoGoTypes: a JSON or YAML input of the wrong shape gets an
// error that names the input's field and what it wants, never a Go type.
func TestErrorsNameNoGoTypes(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{`[{"kind":"List","items":"x"}]`, `field items is a JSON string, want an array`},
		{`[{"kind":"Event","count":"4"}]`, `field count is a JSON string, want a number`},
		{`[{"kind":"Event","metadata":[]}]`, `field metadata is a JSON array, want an object`},
		{"kind: Event\ncount: many\n", `field count is a JSON string, want a number`},
	}
	for _, tt := range tests {
		_, err := Parse([]byte(tt.in))
		if err == nil {
			t.Errorf("Parse(%q) error = nil, want one", tt.in)
			continue
		}
		msg := err.Error()
		for _, bad := range []string{"explain.", "k8s", "Go struct", "Go value", "[]"} {
			if strings.Contains(msg, bad) {
				t.Errorf("Parse(%q) error %q shows a Go name (%q)", tt.in, msg, bad)
			}
		}
		if !strings.Contains(msg, tt.want) {
			t.Errorf("Parse(%q) error %q, want it to say %q", tt.in, msg, tt.want)
		}
	}
}
