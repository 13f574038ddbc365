// Command kube-scheduler is the upstream scheduler, built from
// k8s.io/kubernetes at the version pinned in this module's go.mod.
// pullpath's node tier runs it so that placement (selectors, affinity,
// taints) is what Kubernetes decides, not what a test assumes. It is a test
// tool and is never shipped.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
)

func main() {
	os.Exit(cli.Run(app.NewSchedulerCommand()))
}
