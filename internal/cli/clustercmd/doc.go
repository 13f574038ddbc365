// Package clustercmd holds `pullpath diagnose`, the command that reads the
// cluster. It is its own package so that only the binaries that diagnose
// link the Kubernetes client (cmd/pullpath does, cmd/pullpath-node does not).
package clustercmd
