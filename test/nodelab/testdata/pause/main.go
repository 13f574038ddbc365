// Command pause is the node tier's pause (sandbox) and app binary: it
// blocks until SIGTERM or SIGINT, like the pause image's /pause. The tier
// builds it and packs it into images with go-containerregistry, so nothing
// is downloaded.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT)
	<-c
}
