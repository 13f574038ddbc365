// Command kubelet is the upstream kubelet, built from k8s.io/kubernetes at
// the version pinned in this module's go.mod. pullpath's node tier
// (test/nodelab) runs one per network namespace, each with its own
// containerd, to give diagnose real kubelet events and real status.images.
// It is a test tool and is never shipped.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	"k8s.io/kubernetes/cmd/kubelet/app"
)

func main() {
	os.Exit(cli.Run(app.NewKubeletCommand()))
}
