package explain

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzClassify(f *testing.F) {
	for _, r := range loadCorpus(f) {
		f.Add(r.Msg)
	}
	f.Add(`Failed to pull image "a": [rpc error: code = Unknown desc = x, rpc error: code = NotFound desc = y]`)
	f.Add(strings.Repeat(`\\\\\"`, 100))
	f.Add(strings.Repeat("https://", 100))
	f.Add(`initializing source docker://a/b:1: (Mirrors also failed: [m.example/b:1: x] [[]] [`)
	f.Add(`(Mirrors also failed: ]]): : `)
	f.Add(`Failed to create pod sandbox: failed to get sandbox image "`)
	f.Fuzz(func(t *testing.T, msg string) {
		r := Classify(msg)
		for _, e := range r.Endpoints {
			if !e.Layer.Valid() {
				t.Errorf("Classify(%q) endpoint %q layer %q is not a contract layer", msg, e.Host, e.Layer)
			}
		}
		if !r.Verdict.Layer.Valid() {
			t.Errorf("Classify(%q) layer %q is not a contract layer", msg, r.Verdict.Layer)
		}
		if r.Failed() && r.Verdict.Summary == "" {
			t.Errorf("Classify(%q) has no summary", msg)
		}
		if len(r.Verdict.Evidence) > 4*MaxMessageBytes {
			t.Errorf("Classify(%q) evidence is %d bytes", msg, len(r.Verdict.Evidence))
		}
		if utf8.ValidString(msg) && !utf8.ValidString(r.Verdict.Evidence) {
			t.Errorf("Classify(%q) evidence is not valid UTF-8: %q", msg, r.Verdict.Evidence)
		}
	})
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{"describe-acr-dns.txt", "describe-two-containers.txt", "events-ratelimit.json", "pod-ghcr-401.yaml"} {
		f.Add(readFixture(f, name))
	}
	f.Add([]byte(`{"kind":"List","items":[{"kind":"List","items":[]}]}`))
	f.Add([]byte("kind: Pod\n---\nkind: Event\nmessage: x\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		fs, _ := Explain(in)
		for _, fd := range fs {
			if fd.Count < 1 {
				t.Errorf("Explain(%q) finding count %d < 1", in, fd.Count)
			}
		}
	})
}
