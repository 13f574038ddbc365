package labtest

import (
	"net/http"
	"testing"

	"github.com/pullpath/pullpath/internal/lab"
)

func TestNew(t *testing.T) {
	l := New(t, lab.Options{})
	s := Scenario(t, l, "healthy")
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, "https://"+l.Registry+"/v2/", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := (&http.Client{Transport: l.Transport()}).Do(req)
	if err != nil {
		t.Fatalf("GET /v2/ on the lab registry: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("GET /v2/ = %d, want 401 (token auth)", resp.StatusCode)
	}
	if s.Image == "" || !s.Expect.OK {
		t.Errorf("Scenario(healthy) = %+v, want an image expected to pull", s)
	}
}
