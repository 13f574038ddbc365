package monitor

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestMetricsUncompressed: /metrics answers a scrape that accepts gzip (as
// Prometheus's do) with the plain exposition; compressing it cost the idle
// agent 3.4 MiB of heap (see Handler).
func TestMetricsUncompressed(t *testing.T) {
	a := &Agent{Metrics: NewMetrics("n", "p", "test")}
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL+"/metrics", nil)
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if ce := resp.Header.Get("Content-Encoding"); ce != "" {
		t.Errorf("Content-Encoding %q, want none", ce)
	}
	if !strings.Contains(string(b), "pullpath_build_info{") {
		t.Errorf("the exposition has no pullpath_build_info:\n%.300s", b)
	}
}
