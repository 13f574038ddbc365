package nodeview

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestInRoot(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"/run/systemd/resolve/stub-resolv.conf": "nameserver 127.0.0.53\n",
		"/etc/resolv.conf":                      "->/run/systemd/resolve/stub-resolv.conf",
		"/etc/rel.conf":                         "->../run/systemd/resolve/stub-resolv.conf",
		"/etc/escape.conf":                      "->../../../../../run/systemd/resolve/stub-resolv.conf",
		"/etc/ssl/certs/dir":                    "->/usr/share/ca",
		"/usr/share/ca/x.crt":                   "x",
		"/etc/loop1":                            "->/etc/loop2",
		"/etc/loop2":                            "->/etc/loop1",
	})
	stub := filepath.Join(root, "run/systemd/resolve/stub-resolv.conf")
	tests := []struct {
		in      string
		want    string
		wantErr bool
	}{
		{in: "/etc/resolv.conf", want: stub},
		{in: "/etc/rel.conf", want: stub},
		{in: "/etc/escape.conf", want: stub},
		{in: "/etc/ssl/certs/dir/x.crt", want: filepath.Join(root, "usr/share/ca/x.crt")},
		{in: "/../../etc/missing/file", want: filepath.Join(root, "etc/missing/file")},
		{in: "relative/path", want: filepath.Join(root, "relative/path")},
		{in: "/etc/loop1", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := inRoot(root, tt.in)
			if tt.wantErr {
				if !errors.Is(err, errSymlinkLoop) {
					t.Fatalf("inRoot(%q) error = %v, want a symlink loop", tt.in, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("inRoot(%q) = %q, %v, want %q", tt.in, got, err, tt.want)
			}
		})
	}
	if got, err := inRoot("/", "/etc"); err != nil || got != "/etc" {
		t.Errorf("inRoot(/, /etc) = %q, %v, want /etc", got, err)
	}
	if _, err := os.Stat(stub); err != nil {
		t.Fatal(err)
	}
}
