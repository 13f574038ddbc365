// Command kube-controller-manager is the upstream controller manager, built
// from k8s.io/kubernetes at the version pinned in this module's go.mod.
// pullpath's node tier runs it for Deployments, ReplicaSets and the probe
// Jobs. It is a test tool and is never shipped.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	os.Exit(cli.Run(app.NewControllerManagerCommand()))
}
