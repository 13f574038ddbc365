package probe

import (
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/verdict"
)

func TestParseImage(t *testing.T) {
	tests := []struct {
		in                string
		domain, repo, ref string
		wantErr           bool
	}{
		{"ubuntu", "docker.io", "library/ubuntu", "latest", false},
		{"docker.io/library/ubuntu:22.04", "docker.io", "library/ubuntu", "22.04", false},
		{"myreg.azurecr.io/team/app:1.2", "myreg.azurecr.io", "team/app", "1.2", false},
		{"registry.example:5000/a/b/c", "registry.example:5000", "a/b/c", "latest", false},
		{"localhost/app:1", "localhost", "app", "1", false},
		{"ghcr.io/o/app:1@sha256:" + strings.Repeat("a", 64), "ghcr.io", "o/app", "sha256:" + strings.Repeat("a", 64), false},
		{"[::1]:5000/app:1", "[::1]:5000", "app", "1", false},
		{"team/UPPER:1", "", "", "", true},
		{"UPPER/case", "UPPER", "case", "latest", false}, // an upper-case first part is a registry name to containerd
		{"app:", "", "", "", true},
		{"", "", "", "", true},
		{"app@sha256:short", "", "", "", true},
		{"https://registry.example/app:1", "", "", "", true},
		{strings.Repeat("a", 5000), "", "", "", true},
	}
	for _, tt := range tests {
		img, err := ParseImage(tt.in)
		if tt.wantErr {
			ve, ok := verdict.AsError(err)
			if !ok || ve.Cause != "config.reference" {
				t.Errorf("ParseImage(%.40q) error = %v, want config.reference", tt.in, err)
			}
			continue
		}
		if err != nil || img.Domain != tt.domain || img.Repository != tt.repo || img.Ref != tt.ref {
			t.Errorf("ParseImage(%q) = %+v, %v, want %s %s %s", tt.in, img, err, tt.domain, tt.repo, tt.ref)
		}
	}
}

func FuzzParseImage(f *testing.F) {
	for _, s := range []string{"ubuntu", "a.b:5000/c/d:e", "x@sha256:" + strings.Repeat("0", 64), "UPPER", "a//b", "[::1]/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		img, err := ParseImage(s)
		if err != nil {
			if ve, ok := verdict.AsError(err); !ok || ve.Cause != "config.reference" {
				t.Fatalf("ParseImage(%q) error %v is not config.reference", s, err)
			}
			return
		}
		if img.Domain == "" || img.Repository == "" || img.Ref == "" {
			t.Fatalf("ParseImage(%q) = %+v: empty part", s, img)
		}
		// Normalising is idempotent.
		again, err := ParseImage(img.Normalized)
		if err != nil || again != img {
			t.Fatalf("ParseImage(%q) = %+v, but its normalised form parses to %+v, %v", s, img, again, err)
		}
	})
}
