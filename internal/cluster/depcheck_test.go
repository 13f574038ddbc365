package cluster

import (
	"os/exec"
	"strings"
	"testing"
)

// TestOnlyClusterImportsClientGo fails when a package outside
// internal/cluster imports client-go directly (one package owns the
// dependency, as in crane's depcheck_test.go). internal/cli reaches the cluster through this package
// and cli-runtime's config flags only.
func TestOnlyClusterImportsClientGo(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command(goBin, "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "github.com/pullpath/pullpath/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		pkg := fields[0]
		checked++
		if strings.HasPrefix(pkg, "github.com/pullpath/pullpath/internal/cluster") {
			continue
		}
		for _, imp := range fields[1:] {
			if strings.HasPrefix(imp, "k8s.io/client-go") {
				t.Errorf("%s imports %s: only internal/cluster may import client-go", pkg, imp)
			}
		}
	}
	if checked < 3 {
		t.Fatalf("go list listed %d packages, want the whole module", checked)
	}
}
