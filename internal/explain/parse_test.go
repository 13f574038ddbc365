package explain

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// brief is what a parse test asserts of each message.
type brief struct {
	Source, Reason, Object, Image string
	Count                         int
	TextPrefix                    string
}

// briefs reduces messages to briefs; TextPrefix holds the text cut to the
// length of the wanted prefix (or all of it).
func briefs(ms []Message, want []brief) []brief {
	out := make([]brief, 0, len(ms))
	for i, m := range ms {
		p := m.Text
		if i < len(want) && len(p) > len(want[i].TextPrefix) {
			p = p[:len(want[i].TextPrefix)]
		}
		out = append(out, brief{m.Source, m.Reason, m.Object, m.Image, m.Count, p})
	}
	return out
}

func TestParseDescribe(t *testing.T) {
	ms, err := Parse(readFixture(t, "describe-acr-dns.txt"))
	if err != nil {
		t.Fatalf("Parse(describe) error: %v", err)
	}
	want := []brief{
		{"waiting", "ImagePullBackOff", "pod/team-a/app-7d9c5b7f4-x2k8q/app", "myacr.azurecr.io/team/app:1.2", 1, "ImagePullBackOff"},
		{"describe", "Scheduled", "pod/team-a/app-7d9c5b7f4-x2k8q", "", 1, "Successfully assigned team-a/app-7d9c5b7f"},
		{"describe", "Pulling", "pod/team-a/app-7d9c5b7f4-x2k8q", "", 4, `Pulling image "myacr.azurecr.io/team/app:`},
		{"describe", "Failed", "pod/team-a/app-7d9c5b7f4-x2k8q", "", 4, `Failed to pull image "myacr.azurecr.io/tea`},
		{"describe", "Failed", "pod/team-a/app-7d9c5b7f4-x2k8q", "", 4, "Error: ErrImagePull"},
		{"describe", "Failed", "pod/team-a/app-7d9c5b7f4-x2k8q", "", 6, "Error: ImagePullBackOff"},
		{"describe", "BackOff", "pod/team-a/app-7d9c5b7f4-x2k8q", "", 21, `Back-off pulling image "myacr.azurecr.io/t`},
	}
	if diff := cmp.Diff(want, briefs(ms, want)); diff != "" {
		t.Errorf("Parse(describe) mismatch (-want +got):\n%s", diff)
	}
}

func TestParseDescribeWaitingMessage(t *testing.T) {
	ms, err := Parse(readFixture(t, "describe-two-containers.txt"))
	if err != nil {
		t.Fatalf("Parse error: %v", err)
	}
	if len(ms) == 0 || ms[0].Source != "waiting" || ms[0].Reason != "ErrImagePull" || !strings.Contains(ms[0].Text, "starport-layer-bucket") {
		t.Fatalf("Parse first message = %+v, want the web container's waiting message", ms[0])
	}
	if ms[0].Object != "pod/default/web-0/web" || ms[0].Image != "123456789012.dkr.ecr.eu-west-1.amazonaws.com/web:2.4.1" {
		t.Errorf("Parse waiting object/image = %q %q", ms[0].Object, ms[0].Image)
	}
	for _, m := range ms {
		if m.Source == "waiting" && strings.Contains(m.Object, "sidecar") {
			t.Errorf("Parse returned the running sidecar: %+v", m)
		}
	}
}

func TestParseEventsJSON(t *testing.T) {
	ms, err := Parse(readFixture(t, "events-ratelimit.json"))
	if err != nil {
		t.Fatalf("Parse(events json) error: %v", err)
	}
	if len(ms) != 6 {
		t.Fatalf("Parse(events json) = %d messages, want 6", len(ms))
	}
	m := ms[1]
	if m.Source != "event" || m.Reason != "Failed" || m.Count != 3 || m.Object != "pod/cache/redis-5c7d8f9b6-2qk4z/redis" {
		t.Errorf("Parse(events json)[1] = %+v", m)
	}
	if m.First.IsZero() || !m.Last.After(m.First) {
		t.Errorf("Parse(events json)[1] times = %v %v, want first < last", m.First, m.Last)
	}
}

func TestParsePodYAML(t *testing.T) {
	ms, err := Parse(readFixture(t, "pod-ghcr-401.yaml"))
	if err != nil {
		t.Fatalf("Parse(pod yaml) error: %v", err)
	}
	want := []brief{
		{"waiting", "ErrImagePull", "pod/backend/api-6b8d9f7c5-qwxyz/api", "ghcr.io/acme/api:v3.1.0", 1, `failed to pull and unpack image "ghcr.io/`},
		{"waiting", "ImagePullBackOff", "pod/backend/api-6b8d9f7c5-qwxyz/metrics", "ghcr.io/acme/metrics-agent:0.4", 1, `Back-off pulling image "ghcr.io/acme/metri`},
	}
	if diff := cmp.Diff(want, briefs(ms, want)); diff != "" {
		t.Errorf("Parse(pod yaml) mismatch (-want +got):\n%s", diff)
	}
}

func TestParsePodJSONList(t *testing.T) {
	in := `{"apiVersion":"v1","kind":"List","items":[{"kind":"Pod","metadata":{"name":"p","namespace":"n"},
	"spec":{"containers":[{"name":"c","image":"r.example/a:1"}]},
	"status":{"containerStatuses":[{"name":"c","image":"r.example/a:1","state":{"waiting":{"reason":"ErrImageNeverPull","message":"Container image \"r.example/a:1\" is not present with pull policy of Never"}}}]}}]}`
	ms, err := Parse([]byte(in))
	if err != nil {
		t.Fatalf("Parse(pod list json) error: %v", err)
	}
	want := []brief{{"waiting", "ErrImageNeverPull", "pod/n/p/c", "r.example/a:1", 1, `Container image "r.example/a:1" is not pr`}}
	if diff := cmp.Diff(want, briefs(ms, want)); diff != "" {
		t.Errorf("Parse(pod list json) mismatch (-want +got):\n%s", diff)
	}
}

func TestParseEventsV1AndYAMLList(t *testing.T) {
	in := `apiVersion: v1
items:
- apiVersion: events.k8s.io/v1
  kind: Event
  note: 'Failed to pull image "quay.io/a/b:1": rpc error: code = Unknown desc = reading manifest 1 in quay.io/a/b: manifest unknown'
  reason: Failed
  regarding:
    kind: Pod
    name: b-1
    namespace: ns
  deprecatedCount: 7
kind: List
`
	ms, err := Parse([]byte(in))
	if err != nil {
		t.Fatalf("Parse error: %v", err)
	}
	if len(ms) != 1 || ms[0].Count != 7 || ms[0].Object != "pod/ns/b-1" || !strings.HasPrefix(ms[0].Text, "Failed to pull image") {
		t.Errorf("Parse(events.k8s.io yaml) = %+v", ms)
	}
}

func TestParseText(t *testing.T) {
	in := "Failed to pull image \"a.b/c:1\": rpc error: code = Unknown desc = x: 401 Unauthorized\n" +
		"unauthorized: authentication required\n" +
		"\n" +
		"context deadline exceeded\n" +
		"   continued line\n"
	ms, err := Parse([]byte(in))
	if err != nil {
		t.Fatalf("Parse(text) error: %v", err)
	}
	if len(ms) != 2 {
		t.Fatalf("Parse(text) = %d messages %+v, want 2", len(ms), ms)
	}
	if !strings.Contains(ms[0].Text, "authentication required") || !strings.Contains(ms[1].Text, "continued line") {
		t.Errorf("Parse(text) did not join continuation lines: %+v", ms)
	}
}

func TestParseGetEventsTable(t *testing.T) {
	in := `LAST SEEN   TYPE      REASON    OBJECT                 MESSAGE
2m          Normal    Pulling   pod/app-1              Pulling image "r.example/a:1"
2m          Warning   Failed    pod/app-1              Failed to pull image "r.example/a:1": rpc error: code = NotFound desc = failed to pull and unpack image "r.example/a:1": failed to resolve reference "r.example/a:1": r.example/a:1: not found
`
	ms, err := Parse([]byte(in))
	if err != nil {
		t.Fatalf("Parse error: %v", err)
	}
	if len(ms) != 2 || ms[1].Reason != "Failed" || ms[1].Object != "pod/app-1" || !strings.HasPrefix(ms[1].Text, "Failed to pull image") {
		t.Errorf("Parse(get events table) = %+v", ms)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
	}{
		{"empty", "  \n\t\n"},
		{"binary", "\x00\x01\x02\x03\xff\xfe\x00\x00garbage\x00"},
		{"broken json", `{"kind": "Event", "message": `},
		{"json not k8s", `{"foo": 1, "bar": [1, 2]}`},
		{"yaml not k8s", "kind: Deployment\nspec:\n  replicas: 1\n"},
		{"broken yaml", "kind: Pod\nstatus: [unclosed\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.in))
			if err == nil {
				t.Fatalf("Parse(%q) error = nil, want an error", tt.in)
			}
			if !errors.Is(err, ErrUnrecognized) {
				t.Errorf("Parse(%q) error = %v, want ErrUnrecognized", tt.in, err)
			}
		})
	}
}
