package main

import (
	"bytes"
	"os"
	"testing"
)

// TestTableCurrent: internal/runtimecfg/pluginkeys_gen.go is what the
// generator writes from containerd's source. It reads the module cache
// only (GOPROXY=off: nothing downloads at test time) and says so when the
// pinned containerd modules are not there.
func TestTableCurrent(t *testing.T) {
	got, err := generate([]string{"GOPROXY=off"})
	if err != nil {
		t.Skipf("tier source: TestTableCurrent skipped: containerd's source is not in the module cache (go generate ./internal/runtimecfg fetches it; .ci/run downloads it): %v", err)
	}
	t.Log("tier source: TestTableCurrent runs on containerd's source from the module cache")
	want, err := os.ReadFile("../../internal/runtimecfg/pluginkeys_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("internal/runtimecfg/pluginkeys_gen.go is stale: run go generate ./internal/runtimecfg")
	}
}
