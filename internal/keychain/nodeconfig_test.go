package keychain

import (
	"encoding/base64"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestNodeDockerConfig: the kubelet's node keyring reads the first
// config.json that decodes, even one without auths, and only then the
// legacy .dockercfg files; a file that does not decode is passed over with
// a reason and no secret. auth decodes with padding when it ends in "="
// and without otherwise, as the kubelet's decodeDockerConfigFieldAuth.
func TestNodeDockerConfig(t *testing.T) {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	raw := func(s string) string { return base64.RawStdEncoding.EncodeToString([]byte(s)) }
	jsonFile := func(user, pass string) string {
		return fmt.Sprintf(`{"auths":{"registry.example":{"auth":%q}}}`, b64(user+":"+pass))
	}
	for _, tt := range []struct {
		name     string
		files    map[string]string
		wantFile string
		wantUser string
		skipped  int
	}{
		{"none", nil, "", "", 0},
		{"root dir first", map[string]string{"/var/lib/kubelet/config.json": jsonFile("a", "pw-a"), "/.docker/config.json": jsonFile("b", "pw-b")}, "/var/lib/kubelet/config.json", "a", 0},
		{"a bad file is passed over", map[string]string{"/var/lib/kubelet/config.json": "{not json s3cret", "/.docker/config.json": jsonFile("b", "pw-b")}, "/.docker/config.json", "b", 1},
		{"a bad auth is passed over", map[string]string{"/var/lib/kubelet/config.json": `{"auths":{"r":{"auth":"!!"}}}`, "/.docker/config.json": jsonFile("b", "pw-b")}, "/.docker/config.json", "b", 1},
		{"config.json without auths ends the search", map[string]string{"/var/lib/kubelet/config.json": `{"credsStore":"desktop"}`, "/.docker/config.json": jsonFile("b", "pw-b")}, "/var/lib/kubelet/config.json", "", 0},
		{"config.json before .dockercfg", map[string]string{"/var/lib/kubelet/.dockercfg": fmt.Sprintf(`{"registry.example":{"auth":%q}}`, b64("old:pw-old")), "/.docker/config.json": jsonFile("b", "pw-b")}, "/.docker/config.json", "b", 0},
		{"legacy .dockercfg", map[string]string{"/var/lib/kubelet/.dockercfg": fmt.Sprintf(`{"registry.example":{"auth":%q}}`, b64("old:pw-old"))}, "/var/lib/kubelet/.dockercfg", "old", 0},
		{"unpadded auth", map[string]string{"/var/lib/kubelet/config.json": fmt.Sprintf(`{"auths":{"registry.example":{"auth":%q}}}`, raw("ab:pw-ab"))}, "/var/lib/kubelet/config.json", "ab", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			read := func(p string) ([]byte, error) {
				if c, ok := tt.files[p]; ok {
					return []byte(c), nil
				}
				return nil, fmt.Errorf("open %s: %w", p, os.ErrNotExist)
			}
			auths, file, skipped := NodeDockerConfig(read,
				[]string{"/var/lib/kubelet/config.json", "/config.json", "/.docker/config.json"},
				[]string{"/var/lib/kubelet/.dockercfg", "/.dockercfg"})
			if file != tt.wantFile || len(skipped) != tt.skipped {
				t.Fatalf("file %q, skipped %q; want %q and %d skipped", file, skipped, tt.wantFile, tt.skipped)
			}
			if got := auths["registry.example"].Username; got != tt.wantUser {
				t.Errorf("user %q, want %q (auths %d)", got, tt.wantUser, len(auths))
			}
			for _, s := range skipped {
				if strings.Contains(s, "s3cret") || strings.Contains(s, "pw-") {
					t.Errorf("a skip reason shows a secret: %s", s)
				}
			}
		})
	}
}
