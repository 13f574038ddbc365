package runtimecfg

import (
	"bufio"
	"bytes"
	"strings"

	"github.com/pullpath/pullpath/internal/nodeview"
)

// Distributions whose containerd reads the default /etc/containerd/config.toml
// are recognised by name from what is on disk, so that the report says
// which layout the files follow (the files are read the same way: what
// differs is where each distribution puts its settings):
//
//   - Bottlerocket (/etc/os-release ID=bottlerocket): its API renders
//     /etc/containerd/config.toml (a tmpfs) from
//     packages/containerd/containerd-config-toml_k8s_containerd_sock
//     (bottlerocket-os/bottlerocket-core-kit): config version 2, legacy
//     inline registry.mirrors from settings.container-registry.mirrors,
//     and docker.io credentials written under
//     registry.configs."registry-1.docker.io".auth, the host of docker.io's
//     default endpoint, where the CRI plugin looks them up.
//   - EKS on Amazon Linux 2 (ID=amzn, VERSION_ID=2): amazon-eks-ami's
//     templates/al2/runtime/containerd-config.toml, version 2, config_path
//     "/etc/containerd/certs.d:/etc/docker/certs.d" and
//     imports = ["/etc/containerd/config.d/*.toml"].
//   - EKS on Amazon Linux 2023 (ID=amzn, VERSION_ID=2023): nodeadm writes
//     one /etc/containerd/config.toml from its template
//     (nodeadm/internal/containerd/config.template.toml, version 2, or
//     config2.template.toml, version 3 for containerd 2) merged with the
//     NodeConfig's inline spec.containerd.config by nodeadm itself
//     (config.go: containerd's import merge would replace whole sections),
//     config_path "/etc/containerd/certs.d:/etc/docker/certs.d", and
//     /etc/containerd/base-runtime-spec.json beside it.
//   - GKE (ID=cos, or a config.toml whose CNI bin_dir is
//     /home/kubernetes/bin): cluster/gce/gci/configure-helper.sh
//     (kubernetes/kubernetes) writes legacy inline mirrors,
//     [plugins."io.containerd.grpc.v1.cri".registry.mirrors."docker.io"]
//     endpoint = ["https://mirror.gcr.io","https://registry-1.docker.io"].
func recogniseDistro(root string) (name, why string) {
	id, ver := osRelease(root)
	switch {
	case id == "bottlerocket":
		return "bottlerocket", "/etc/os-release ID=bottlerocket"
	case id == "amzn" && ver == "2023":
		why := "/etc/os-release ID=amzn VERSION_ID=2023"
		if _, _, err := nodeview.ReadInRoot(root, "/etc/containerd/base-runtime-spec.json"); err == nil {
			why += ", nodeadm's /etc/containerd/base-runtime-spec.json"
		}
		return "eks-al2023", why
	case id == "amzn" && ver == "2":
		return "eks-al2", "/etc/os-release ID=amzn VERSION_ID=2"
	case id == "cos":
		return "gke", "/etc/os-release ID=cos (Container-Optimized OS)"
	}
	if data, _, err := nodeview.ReadInRoot(root, DefaultConfig); err == nil && bytes.Contains(data, []byte(`"/home/kubernetes/bin"`)) {
		return "gke", DefaultConfig + " has GKE's CNI bin_dir /home/kubernetes/bin"
	}
	return "", ""
}

// osRelease returns ID and VERSION_ID of /etc/os-release (or
// /usr/lib/os-release) under root, unquoted.
func osRelease(root string) (id, version string) {
	for _, f := range []string{"/etc/os-release", "/usr/lib/os-release"} {
		data, _, err := nodeview.ReadInRoot(root, f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
			if !ok {
				continue
			}
			v = strings.Trim(v, `"'`)
			switch k {
			case "ID":
				id = v
			case "VERSION_ID":
				version = v
			}
		}
		return id, version
	}
	return "", ""
}
