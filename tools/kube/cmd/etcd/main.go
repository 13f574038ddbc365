// Command etcd is the upstream etcd server, built from go.etcd.io/etcd/server/v3
// at the version Kubernetes pins. pullpath's tests start it on loopback as the
// storage of a test kube-apiserver. It is a test tool and is never shipped.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
