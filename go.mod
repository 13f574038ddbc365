module github.com/pullpath/pullpath

go 1.26.8

require (
	github.com/containerd/platforms v1.0.0-rc.5
	github.com/google/go-cmp v0.7.0
	github.com/opencontainers/go-digest v1.0.0
	github.com/opencontainers/image-spec v1.1.1
	github.com/spf13/cobra v1.10.2
)

require (
	github.com/containerd/log v0.2.0 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/sirupsen/logrus v1.10.2 // indirect
	github.com/spf13/pflag v1.0.10 // indirect
	golang.org/x/sys v0.50.0 // indirect
)
