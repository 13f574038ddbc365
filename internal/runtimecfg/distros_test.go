package runtimecfg

import (
	"slices"
	"testing"

	"github.com/pullpath/pullpath/internal/nodeview"
)

// The files below are laid out as each distribution writes them (the
// sources are named in distros.go); none of these distributions runs on
// this machine, so these golden tests are not live.

// bottlerocketConfig is core-kit's containerd-config-toml_k8s_containerd_sock
// as rendered with one docker.io mirror and docker.io credentials.
const bottlerocketConfig = `version = 2
root = "/var/lib/containerd"
state = "/run/containerd"
disabled_plugins = [
    "io.containerd.internal.v1.opt",
    "io.containerd.snapshotter.v1.aufs",
    "io.containerd.snapshotter.v1.devmapper",
    "io.containerd.snapshotter.v1.native",
    "io.containerd.snapshotter.v1.zfs",
]

[grpc]
address = "/run/containerd/containerd.sock"

[plugins."io.containerd.grpc.v1.cri"]
enable_selinux = true
sandbox_image = "localhost/kubernetes/pause:0.1.0"

[plugins."io.containerd.grpc.v1.cri".containerd]
default_runtime_name = "shimpei"

[plugins."io.containerd.grpc.v1.cri".cni]
bin_dir = "/opt/cni/bin"
conf_dir = "/etc/cni/net.d"

[plugins."io.containerd.grpc.v1.cri".registry.mirrors."docker.io"]
endpoint = ["https://mirror.example.com"]

[plugins."io.containerd.grpc.v1.cri".registry.configs."registry-1.docker.io".auth]
username = "pull"
password = "secret"
`

// eksAL2Config is amazon-eks-ami's templates/al2/runtime/containerd-config.toml.
const eksAL2Config = `version = 2
root = "/var/lib/containerd"
state = "/run/containerd"
imports = ["/etc/containerd/config.d/*.toml"]

[grpc]
address = "/run/containerd/containerd.sock"

[plugins."io.containerd.grpc.v1.cri".containerd]
default_runtime_name = "runc"
discard_unpacked_layers = true

[plugins."io.containerd.grpc.v1.cri"]
sandbox_image = "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/pause:3.5"
enable_cdi = true

[plugins."io.containerd.grpc.v1.cri".registry]
config_path = "/etc/containerd/certs.d:/etc/docker/certs.d"

[plugins."io.containerd.grpc.v1.cri".cni]
bin_dir = "/opt/cni/bin"
conf_dir = "/etc/cni/net.d"
`

// eksAL2023Config is nodeadm's config2.template.toml (containerd 2,
// version 3) as nodeadm writes it.
const eksAL2023Config = `version = 3
root = "/var/lib/containerd"
state = "/run/containerd"

[grpc]
address = "/run/containerd/containerd.sock"

[plugins.'io.containerd.cri.v1.images']
discard_unpacked_layers = true

[plugins.'io.containerd.cri.v1.images'.pinned_images]
sandbox = "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/pause:3.10"

[plugins."io.containerd.cri.v1.images".registry]
config_path = "/etc/containerd/certs.d:/etc/docker/certs.d"

[plugins.'io.containerd.cri.v1.runtime'.cni]
bin_dir = "/opt/cni/bin"
conf_dir = "/etc/cni/net.d"
`

// gkeConfig is what configure-helper.sh writes (containerd config v2 form).
const gkeConfig = `# Kubernetes doesn't use containerd restart manager.
disabled_plugins = ["io.containerd.internal.v1.restart"]
oom_score = -999

[debug]
  level = "info"

[grpc]
  gid = 412

[plugins."io.containerd.grpc.v1.cri"]
  stream_server_address = "127.0.0.1"
  max_container_log_line_size = 262144
[plugins."io.containerd.grpc.v1.cri".cni]
  bin_dir = "/home/kubernetes/bin"
  conf_dir = "/etc/cni/net.d"
[plugins."io.containerd.grpc.v1.cri".containerd]
  default_runtime_name = "runc"
[plugins."io.containerd.grpc.v1.cri".registry.mirrors."docker.io"]
  endpoint = ["https://mirror.gcr.io","https://registry-1.docker.io"]
`

func endpointHosts(p *Plan) []string {
	var out []string
	for _, e := range p.Endpoints {
		out = append(out, e.Scheme+"://"+e.Host)
	}
	return out
}

// TestDistroLayoutsByName: Bottlerocket, EKS AL2, EKS AL2023 and GKE are
// recognised by name, their files read as their containerd reads them.
func TestDistroLayoutsByName(t *testing.T) {
	t.Log("golden layouts: no Bottlerocket, Amazon Linux or GKE node runs on this machine, those tiers are not live")
	ctd17 := nodeview.RuntimeBinary{Path: "/usr/bin/containerd", ModulePath: "github.com/containerd/containerd", ModuleVersion: "v1.7.27"}
	ctd2 := nodeview.RuntimeBinary{Path: "/usr/bin/containerd", ModulePath: "github.com/containerd/containerd/v2", ModuleVersion: "v2.0.5"}
	tests := []struct {
		name       string
		files      map[string]string
		rb         nodeview.RuntimeBinary
		registry   string
		layout     string
		mode       string
		wantHosts  []string
		wantFiles  []string
		wantNoWarn bool
	}{
		{"bottlerocket", map[string]string{"/etc/os-release": "NAME=Bottlerocket\nID=bottlerocket\nVERSION_ID=1.30.0\n", DefaultConfig: bottlerocketConfig},
			ctd17, "docker.io", "bottlerocket", ModeLegacy,
			[]string{"https://mirror.example.com", "https://registry-1.docker.io"}, []string{DefaultConfig}, true},
		{"EKS AL2 with a drop-in", map[string]string{"/etc/os-release": "NAME=\"Amazon Linux\"\nVERSION=\"2\"\nID=\"amzn\"\nVERSION_ID=\"2\"\n", DefaultConfig: eksAL2Config,
			"/etc/containerd/config.d/10-mirror.toml": "version = 2\n", "/etc/containerd/certs.d/quay.io/hosts.toml": "server = \"https://quay.io\"\n[host.\"https://quay-mirror.example.com\"]\n  capabilities = [\"pull\", \"resolve\"]\n"},
			ctd17, "quay.io", "eks-al2", ModeConfigPath,
			[]string{"https://quay-mirror.example.com", "https://quay.io"}, []string{DefaultConfig, "/etc/containerd/config.d/10-mirror.toml"}, true},
		{"EKS AL2023 nodeadm", map[string]string{"/etc/os-release": "NAME=\"Amazon Linux\"\nVERSION=\"2023\"\nID=\"amzn\"\nVERSION_ID=\"2023\"\n", DefaultConfig: eksAL2023Config,
			"/etc/containerd/base-runtime-spec.json": "{}", "/etc/docker/certs.d/ghcr.io/hosts.toml": "server = \"https://ghcr.io\"\n[host.\"https://ghcr-mirror.example.com\"]\n  capabilities = [\"pull\", \"resolve\"]\n"},
			ctd2, "ghcr.io", "eks-al2023", ModeConfigPath,
			[]string{"https://ghcr-mirror.example.com", "https://ghcr.io"}, []string{DefaultConfig}, true},
		{"GKE COS", map[string]string{"/etc/os-release": "NAME=\"Container-Optimized OS\"\nID=cos\nVERSION_ID=117\n", DefaultConfig: gkeConfig},
			ctd17, "docker.io", "gke", ModeLegacy,
			// GKE's list already ends with registry-1.docker.io, but the CRI
			// plugin's registryEndpoints compares each endpoint with the
			// reference's host (docker.io), not the default host, and
			// appends registry-1.docker.io again: it is tried twice
			// (containerd 2.2.9 internal/cri/server/images/image_pull.go).
			[]string{"https://mirror.gcr.io", "https://registry-1.docker.io", "https://registry-1.docker.io"}, []string{DefaultConfig}, true},
		{"GKE by its files (Ubuntu node image)", map[string]string{"/etc/os-release": "NAME=\"Ubuntu\"\nID=ubuntu\nVERSION_ID=\"22.04\"\n", DefaultConfig: gkeConfig},
			ctd17, "docker.io", "gke", ModeLegacy,
			// GKE's list already ends with registry-1.docker.io, but the CRI
			// plugin's registryEndpoints compares each endpoint with the
			// reference's host (docker.io), not the default host, and
			// appends registry-1.docker.io again: it is tried twice
			// (containerd 2.2.9 internal/cri/server/images/image_pull.go).
			[]string{"https://mirror.gcr.io", "https://registry-1.docker.io", "https://registry-1.docker.io"}, []string{DefaultConfig}, true},
		{"plain containerd", map[string]string{"/etc/os-release": "ID=debian\nVERSION_ID=\"12\"\n", DefaultConfig: "version = 2\n"},
			ctd17, "docker.io", "containerd", ModeLegacy,
			[]string{"https://registry-1.docker.io"}, []string{DefaultConfig}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, p, err := plan(t, writeRoot(t, tt.files), tt.rb, tt.registry, false)
			if err != nil {
				t.Fatal(err)
			}
			if c.Layout != tt.layout || c.Mode != tt.mode {
				t.Fatalf("layout %s mode %s, want %s %s (settings %+v)", c.Layout, c.Mode, tt.layout, tt.mode, c.Settings)
			}
			var files []string
			for _, f := range c.Files {
				files = append(files, f.Path)
			}
			if !slices.Equal(files, tt.wantFiles) {
				t.Errorf("files %q, want %q", files, tt.wantFiles)
			}
			if got := endpointHosts(p); !slices.Equal(got, tt.wantHosts) {
				t.Errorf("plan %q, want %q", got, tt.wantHosts)
			}
			if tt.wantNoWarn && len(c.Warnings) > 0 {
				t.Errorf("warnings %+v on the distribution's own files", c.Warnings)
			}
		})
	}
	// Bottlerocket's docker.io credentials are keyed by the default
	// endpoint's host, where the CRI plugin looks them up.
	c, _, _ := plan(t, writeRoot(t, map[string]string{"/etc/os-release": "ID=bottlerocket\n", DefaultConfig: bottlerocketConfig}), ctd17, "docker.io", false)
	if cfg, ok := c.reg.Configs["registry-1.docker.io"]; !ok || cfg.Auth == nil {
		t.Errorf("bottlerocket: configs %+v, want an auth under registry-1.docker.io", c.reg.Configs)
	}
}

// TestLayerFetchRange: containerd 2.1+ fetches layers with parallel Range
// requests only when concurrent_layer_fetch_buffer (the transfer service's
// on the transfer path, the CRI images plugin's on the local path) is 512
// bytes or more.
func TestLayerFetchRange(t *testing.T) {
	ctd22 := nodeview.RuntimeBinary{Path: "/usr/bin/containerd", ModulePath: "github.com/containerd/containerd/v2", ModuleVersion: "v2.2.9"}
	ctd16 := nodeview.RuntimeBinary{Path: "/usr/bin/containerd", ModulePath: "github.com/containerd/containerd", ModuleVersion: "v1.6.20"}
	for _, tt := range []struct {
		name, config string
		rb           nodeview.RuntimeBinary
		want         string // "" : no layer fetch setting
	}{
		{"2.2 default", "version = 3\n", ctd22, "one request per layer, no Range"},
		{"2.2 transfer buffer", "version = 3\n[plugins.'io.containerd.transfer.v1.local']\n  concurrent_layer_fetch_buffer = 1048576\n", ctd22, "parallel Range requests: 1048576-byte chunks, up to 3 at once"},
		{"2.2 transfer buffer, one download", "version = 3\n[plugins.'io.containerd.transfer.v1.local']\n  concurrent_layer_fetch_buffer = 1048576\n  max_concurrent_downloads = 1\n", ctd22, "one request per layer, no Range"},
		{"2.2 CRI buffer on the transfer path: not used", "version = 3\n[plugins.'io.containerd.cri.v1.images']\n  concurrent_layer_fetch_buffer = 1048576\n", ctd22, "one request per layer, no Range"},
		{"2.2 local pull with the CRI buffer", "version = 3\n[plugins.'io.containerd.cri.v1.images']\n  use_local_image_pull = true\n  concurrent_layer_fetch_buffer = 65536\n", ctd22, "parallel Range requests: 65536-byte chunks, up to 3 at once"},
		{"1.6", "version = 2\n", ctd16, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := Load(writeRoot(t, map[string]string{DefaultConfig: tt.config}), tt.rb, Options{})
			got := ""
			for _, s := range c.Settings {
				if s.Key == "layer fetch" {
					got = s.Value
				}
			}
			if tt.want == "" && got != "" || tt.want != "" && (len(got) < len(tt.want) || got[:len(tt.want)] != tt.want) {
				t.Errorf("layer fetch %q, want %q (pull path %s)", got, tt.want, c.PullPath)
			}
		})
	}
}
