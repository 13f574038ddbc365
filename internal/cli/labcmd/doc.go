// Package labcmd holds `pullpath demo` and the hidden `pullpath lab`, the
// commands that start the embedded lab. It is its own package so that only
// the binaries that run the lab link distribution's registry (cmd/pullpath
// does, cmd/pullpath-node does not).
package labcmd
