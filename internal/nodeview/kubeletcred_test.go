package nodeview

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	kubeletv1 "k8s.io/kubelet/config/v1"
	cpv1 "k8s.io/kubelet/pkg/apis/credentialprovider/v1"
	"sigs.k8s.io/yaml"

	"github.com/pullpath/pullpath/internal/verdict"
)

// TestCredentialProviderConfigAgainstKubeletTypes decodes every testdata
// config with k8s.io/kubelet's own types and with the mirror, and compares
// the JSON both give back.
func TestCredentialProviderConfigAgainstKubeletTypes(t *testing.T) {
	files, _ := filepath.Glob("testdata/kubeletcred/*")
	if len(files) < 5 {
		t.Fatalf("found %d testdata configs, want at least 5", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var theirs kubeletv1.CredentialProviderConfig
			if err := yaml.UnmarshalStrict(data, &theirs); err != nil {
				t.Fatalf("k8s.io/kubelet's types: %v", err)
			}
			ours, err := ParseCredentialProviderConfig(data)
			if err != nil {
				t.Fatalf("ParseCredentialProviderConfig: %v", err)
			}
			if diff := cmp.Diff(asJSON(t, theirs), asJSON(t, ours)); diff != "" {
				t.Errorf("the mirror decodes differently (-kubelet +ours):\n%s", diff)
			}
			if len(ours.Providers) == 0 || len(ours.Providers[0].MatchImages) == 0 || ours.Providers[0].DefaultCacheDuration == nil {
				t.Errorf("decoded %+v, want a provider with matchImages and a cache duration", ours)
			}
		})
	}
}

func asJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMirrorHasEveryKubeletField walks k8s.io/kubelet's config and
// credential provider types: a JSON field added there fails here until the
// mirror has it with the same shape.
func TestMirrorHasEveryKubeletField(t *testing.T) {
	pairs := []struct{ theirs, ours any }{
		{kubeletv1.CredentialProviderConfig{}, CredentialProviderConfig{}},
		{cpv1.CredentialProviderRequest{}, credentialProviderRequest{}},
		{cpv1.CredentialProviderResponse{}, credentialProviderResponse{}},
	}
	for _, p := range pairs {
		compareFields(t, reflect.TypeOf(p.theirs), reflect.TypeOf(p.ours), reflect.TypeOf(p.theirs).Name())
	}
}

func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" {
			for k, v := range jsonFields(f.Type) { // metav1.TypeMeta
				out[k] = v
			}
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

func compareFields(t *testing.T, theirs, ours reflect.Type, at string) {
	t.Helper()
	for theirs.Kind() == reflect.Pointer || theirs.Kind() == reflect.Slice || theirs.Kind() == reflect.Map {
		if ours.Kind() != theirs.Kind() {
			t.Errorf("%s: kubelet has a %s, the mirror a %s", at, theirs.Kind(), ours.Kind())
			return
		}
		theirs, ours = theirs.Elem(), ours.Elem()
	}
	if theirs.Kind() != reflect.Struct || theirs.Name() == "Duration" {
		if theirs.Name() == "Duration" && ours.Name() != "Duration" {
			t.Errorf("%s: kubelet has a metav1.Duration, the mirror a %s", at, ours)
		} else if theirs.Kind() != reflect.Struct && theirs.Kind() != ours.Kind() {
			t.Errorf("%s: kubelet has a %s, the mirror a %s", at, theirs.Kind(), ours.Kind())
		}
		return
	}
	of := jsonFields(ours)
	for name, ft := range jsonFields(theirs) {
		ot, ok := of[name]
		if !ok {
			t.Errorf("%s.%s: in k8s.io/kubelet, not in the mirror", at, name)
			continue
		}
		compareFields(t, ft, ot, at+"."+name)
	}
}

func TestParseCredentialProviderConfigRejects(t *testing.T) {
	tests := []struct{ name, cfg, want string }{
		{"wrong kind", "apiVersion: kubelet.config.k8s.io/v1\nkind: KubeletConfiguration\n", "wrong Kind"},
		{"unknown version", "apiVersion: kubelet.config.k8s.io/v2\nkind: CredentialProviderConfig\n", `unsupported apiVersion "kubelet.config.k8s.io/v2"`},
		{"no providers", "apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders: []\n", "at least 1 item in plugins"},
		{"unknown field", "apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders:\n- name: a\n  matchimages: [x]\n", `unknown field "providers[0].matchimages"`},
		{"provider rules", `apiVersion: kubelet.config.k8s.io/v1
kind: CredentialProviderConfig
providers:
- name: bin/x
  apiVersion: credentialprovider.kubelet.k8s.io/v2
  matchImages: []
  defaultCacheDuration: -1m
- name: ok
  apiVersion: credentialprovider.kubelet.k8s.io/v1
  matchImages: ["%zz"]
`, `providers[0].name: Invalid value: "bin/x": not a file name; providers[0].apiVersion: Unsupported value: "credentialprovider.kubelet.k8s.io/v2"; providers[0].matchImages: Required value: at least 1 item in matchImages is required; providers[0].defaultCacheDuration: Invalid value: must be greater than or equal to 0; providers[1].matchImages: Invalid value: "%zz": match image is invalid`},
		{"cache duration", "apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders:\n- name: a\n  apiVersion: credentialprovider.kubelet.k8s.io/v1\n  matchImages: [x.io]\n", "providers[0].defaultCacheDuration: Required value"},
		{"not a duration", "apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders:\n- name: a\n  apiVersion: credentialprovider.kubelet.k8s.io/v1\n  matchImages: [x.io]\n  defaultCacheDuration: soon\n", "invalid duration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseCredentialProviderConfig([]byte(tt.cfg))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ParseCredentialProviderConfig = %v, want an error containing %q", err, tt.want)
			}
		})
	}
	_, err := ParseCredentialProviderConfig([]byte("apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders:\n- name: a\n  apiVersion: credentialprovider.kubelet.k8s.io/v1\n  matchImages: [\"%zz\"]\n  defaultCacheDuration: 1m\n"))
	if err == nil || !strings.Contains(err.Error(), "match image is invalid") {
		t.Errorf("a matchImages entry that is no URL: err = %v, want match image is invalid", err)
	}
}

func TestLoadKubeletCredentials(t *testing.T) {
	aks, _ := os.ReadFile("testdata/kubeletcred/aks.yaml")
	eks, _ := os.ReadFile("testdata/kubeletcred/eks.json")
	gke, _ := os.ReadFile("testdata/kubeletcred/gke.yaml")
	tests := []struct {
		name         string
		files        map[string]string
		cfg, bin     string
		sources      []string
		provider     string
		wantCause    string
		wantNoConfig bool
	}{
		{name: "AKS: /etc/default/kubelet KUBELET_FLAGS through the unit's EnvironmentFile", files: map[string]string{
			"etc/systemd/system/kubelet.service":              "[Unit]\nDescription=Kubelet\n[Service]\nEnvironmentFile=/etc/default/kubelet\nExecStart=/usr/local/bin/kubelet \\\n        --enable-server \\\n        --node-labels=\"${KUBELET_NODE_LABELS}\" \\\n        $KUBELET_TLS_BOOTSTRAP_FLAGS \\\n        $KUBELET_FLAGS\n",
			"etc/default/kubelet":                             "KUBELET_NODE_LABELS=agentpool=nodepool1\nKUBELET_FLAGS=--address=0.0.0.0 --image-credential-provider-bin-dir=/var/lib/kubelet/credential-provider --image-credential-provider-config=/var/lib/kubelet/credential-provider-config.yaml --max-pods=30\n",
			"var/lib/kubelet/credential-provider-config.yaml": string(aks),
		}, cfg: "/var/lib/kubelet/credential-provider-config.yaml", bin: "/var/lib/kubelet/credential-provider", sources: []string{"/etc/systemd/system/kubelet.service"}, provider: "acr-credential-provider"},
		{name: "EKS: space-separated flags in a drop-in's Environment=", files: map[string]string{
			"etc/systemd/system/kubelet.service":                         "[Service]\nExecStart=/usr/bin/kubelet $KUBELET_ARGS $KUBELET_EXTRA_ARGS\nRestart=always\n",
			"etc/systemd/system/kubelet.service.d/10-kubelet-args.conf":  "[Service]\nEnvironment='KUBELET_ARGS=--node-ip=10.0.0.5 --image-credential-provider-config /etc/eks/image-credential-provider/config.json --image-credential-provider-bin-dir /etc/eks/image-credential-provider'\n",
			"etc/systemd/system/kubelet.service.d/30-kubelet-extra.conf": "[Service]\nEnvironment='KUBELET_EXTRA_ARGS=--v=2'\n",
			"etc/eks/image-credential-provider/config.json":              string(eks),
		}, cfg: "/etc/eks/image-credential-provider/config.json", bin: "/etc/eks/image-credential-provider", sources: []string{"/etc/systemd/system/kubelet.service", "/etc/systemd/system/kubelet.service.d/10-kubelet-args.conf", "/etc/systemd/system/kubelet.service.d/30-kubelet-extra.conf"}, provider: "ecr-credential-provider"},
		{name: "kubeadm: ExecStart reset in the drop-in, KUBELET_EXTRA_ARGS quoted in /etc/default/kubelet", files: map[string]string{
			"usr/lib/systemd/system/kubelet.service":                   "[Service]\nExecStart=/usr/bin/kubelet --image-credential-provider-config=/wrong.yaml\n",
			"usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf": "[Service]\nEnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env\nEnvironmentFile=-/etc/default/kubelet\nExecStart=\nExecStart=/usr/bin/kubelet $KUBELET_KUBECONFIG_ARGS $KUBELET_CONFIG_ARGS $KUBELET_KUBEADM_ARGS $KUBELET_EXTRA_ARGS\n",
			"etc/default/kubelet":                                      "KUBELET_EXTRA_ARGS=\"--image-credential-provider-config=/etc/kubernetes/gke.yaml --image-credential-provider-bin-dir=/usr/local/bin/cp\"\n",
			"etc/kubernetes/gke.yaml":                                  string(gke),
		}, cfg: "/etc/kubernetes/gke.yaml", bin: "/usr/local/bin/cp", sources: []string{"/usr/lib/systemd/system/kubelet.service", "/usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf"}, provider: "auth-provider-gcp"},
		{name: "no unit: /etc/default/kubelet alone", files: map[string]string{
			"etc/default/kubelet":          "KUBELET_OPTS=\"--v=2 --image-credential-provider-config=/etc/srv/cri_auth_config.yaml --image-credential-provider-bin-dir=/home/kubernetes/bin\"\n",
			"etc/srv/cri_auth_config.yaml": string(gke),
		}, cfg: "/etc/srv/cri_auth_config.yaml", bin: "/home/kubernetes/bin", sources: []string{"/etc/default/kubelet"}, provider: "auth-provider-gcp"},
		{name: "a kubelet without providers", files: map[string]string{
			"etc/systemd/system/kubelet.service": "[Service]\nExecStart=/usr/bin/kubelet --v=2\n",
		}, wantNoConfig: true},
		{name: "config named but missing", files: map[string]string{
			"etc/systemd/system/kubelet.service": "[Service]\nExecStart=/usr/bin/kubelet --image-credential-provider-config=/etc/cp.yaml --image-credential-provider-bin-dir=/bin\n",
		}, cfg: "/etc/cp.yaml", bin: "/bin", wantCause: "config.credential-provider"},
		{name: "config invalid", files: map[string]string{
			"etc/systemd/system/kubelet.service": "[Service]\nExecStart=/usr/bin/kubelet --image-credential-provider-config=/etc/cp.yaml --image-credential-provider-bin-dir=/bin\n",
			"etc/cp.yaml":                        "apiVersion: kubelet.config.k8s.io/v1\nkind: CredentialProviderConfig\nproviders: []\n",
		}, cfg: "/etc/cp.yaml", bin: "/bin", wantCause: "config.credential-provider"},
		{name: "bin dir missing", files: map[string]string{
			"etc/systemd/system/kubelet.service": "[Service]\nExecStart=/usr/bin/kubelet --image-credential-provider-config=/etc/cp.yaml\n",
			"etc/cp.yaml":                        string(aks),
		}, cfg: "/etc/cp.yaml", wantCause: "config.credential-provider", provider: "acr-credential-provider"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			writeFiles(t, root, tt.files)
			kc, err := LoadKubeletCredentials(root)
			if tt.wantNoConfig {
				if kc != nil || err != nil {
					t.Fatalf("LoadKubeletCredentials = %+v, %v; want nil, nil", kc, err)
				}
				return
			}
			if kc == nil {
				t.Fatalf("LoadKubeletCredentials = nil, %v; want the config %s", err, tt.cfg)
			}
			if kc.ConfigPath != tt.cfg || kc.BinDir != tt.bin {
				t.Errorf("config, bin dir = %q, %q; want %q, %q", kc.ConfigPath, kc.BinDir, tt.cfg, tt.bin)
			}
			if tt.sources != nil {
				if diff := cmp.Diff(tt.sources, kc.Sources); diff != "" {
					t.Errorf("sources (-want +got):\n%s", diff)
				}
			}
			if tt.wantCause != "" {
				ve, ok := verdict.AsError(err)
				if !ok || ve.Cause != tt.wantCause {
					t.Fatalf("err = %v, want cause %s", err, tt.wantCause)
				}
			} else if err != nil {
				t.Fatalf("LoadKubeletCredentials: %v", err)
			}
			if tt.provider != "" && (len(kc.Config.Providers) == 0 || kc.Config.Providers[0].Name != tt.provider) {
				t.Errorf("providers = %+v, want %s", kc.Config.Providers, tt.provider)
			}
		})
	}
}

// TestKubeletDockerConfigFiles: the node keyring's files follow the
// kubelet's --root-dir and its unit's HOME; without them, /var/lib/kubelet
// and the relative .docker taken from /.
func TestKubeletDockerConfigFiles(t *testing.T) {
	for _, tt := range []struct {
		name      string
		unit      string
		json, cfg string
	}{
		{"defaults", "",
			"/var/lib/kubelet/config.json /config.json /.docker/config.json", "/var/lib/kubelet/.dockercfg /.dockercfg"},
		{"root dir and HOME from the unit", "[Service]\nEnvironment=HOME=/root\nExecStart=/usr/bin/kubelet --root-dir=/data/kubelet --v=2\n",
			"/data/kubelet/config.json /config.json /root/.docker/config.json /.docker/config.json", "/data/kubelet/.dockercfg /.dockercfg /root/.dockercfg"},
		{"root dir as two words", "[Service]\nExecStart=/usr/bin/kubelet --root-dir /k\n",
			"/k/config.json /config.json /.docker/config.json", "/k/.dockercfg /.dockercfg"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			if tt.unit != "" {
				p := filepath.Join(root, "etc/systemd/system/kubelet.service")
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(tt.unit), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			jsonFiles, cfgFiles, _ := KubeletDockerConfigFiles(root)
			if got := strings.Join(jsonFiles, " "); got != tt.json {
				t.Errorf("config.json files %s, want %s", got, tt.json)
			}
			if got := strings.Join(cfgFiles, " "); got != tt.cfg {
				t.Errorf(".dockercfg files %s, want %s", got, tt.cfg)
			}
		})
	}
}
