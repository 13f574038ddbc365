// Command kube-apiserver is the upstream Kubernetes API server, built from
// k8s.io/kubernetes at the version pinned in this module's go.mod. pullpath's
// tests start it on loopback to exercise internal/cluster against a real API
// server. It is a test tool and is never shipped.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
