package azure

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The Azure SDK weighs only on the full binary's `azure` command: the node
// binary, the probe and the packages it runs on must not link it (STYLE:
// each binary links only what its commands use).
func TestSDKStaysOutOfTheNodePath(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("skipped: no go command to run go list -deps (hack/test.sh runs this with the Go toolchain)")
	}
	root := "../.."
	pkgs := []string{"./internal/probe", "./internal/netpath", "./internal/registry", "./internal/nodeview", "./internal/explain", "./internal/verdict"}
	if _, err := os.Stat(filepath.Join(root, "cmd", "pullpath-node")); err == nil {
		pkgs = append(pkgs, "./cmd/pullpath-node")
	} else {
		t.Log("cmd/pullpath-node does not exist on this branch: only the packages are checked")
	}
	for _, p := range pkgs {
		cmd := exec.Command("go", "list", "-deps", p)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", p, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			if strings.HasPrefix(dep, "github.com/Azure/azure-sdk-for-go/") || dep == "github.com/pullpath/pullpath/internal/azure" ||
				strings.HasPrefix(dep, "github.com/AzureAD/") {
				t.Errorf("%s links %s", p, dep)
			}
		}
	}
	// And the check itself can fail: the full binary does link the SDK.
	cmd := exec.Command("go", "list", "-deps", "./cmd/pullpath")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps ./cmd/pullpath: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/network/armnetwork/v9\n") {
		t.Error("./cmd/pullpath does not link armnetwork: the check above would pass vacuously")
	}
}
