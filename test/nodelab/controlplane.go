package nodelab

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// APIPort is the API server's port on APIServer.
const APIPort = 6443

// ControlPlane is etcd, kube-apiserver, kube-scheduler and
// kube-controller-manager running in the control-plane namespace, each with
// the lab's resolv.conf and hosts in its mount namespace, so that nothing
// it resolves ever reaches this machine's resolver.
type ControlPlane struct {
	// Dir holds the PKI, the token file, kubeconfigs and logs.
	Dir string
	// URL is https://198.18.30.10:6443, reachable only from inside the lab.
	URL string
	// CAFile is the CA of the API server's certificate.
	CAFile string
	// AdminToken is the bearer token of the admin user (system:masters).
	AdminToken string
	// AdminKubeconfig is a kubeconfig for the admin user at URL.
	AdminKubeconfig string

	net        *Net
	nodeTokens map[string]string
	procs      []*Proc
}

// StartControlPlane starts the control plane from the binaries in bin and
// waits until the API server is ready. nodeNames are the nodes that may
// register: each gets a token as system:node:<name> in system:nodes.
func StartControlPlane(ctx context.Context, n *Net, bin string, nodeNames []string) (cp *ControlPlane, err error) {
	dir := filepath.Join(n.Dir, "control")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	cp = &ControlPlane{Dir: dir, URL: fmt.Sprintf("https://%s:%d", APIServer, APIPort), net: n, nodeTokens: map[string]string{}}
	defer func() {
		if err != nil {
			cp.Stop()
			cp = nil
		}
	}()
	p, err := writePKI(dir, net.IP(APIServer.AsSlice()), net.IPv4(127, 0, 0, 1), net.IPv4(10, 96, 0, 1))
	if err != nil {
		return nil, err
	}
	cp.CAFile = p.caFile
	if cp.AdminToken, err = randomToken(); err != nil {
		return nil, err
	}
	var tokens strings.Builder
	fmt.Fprintf(&tokens, "%s,admin,admin-uid,system:masters\n", cp.AdminToken)
	for _, name := range nodeNames {
		tok, err := randomToken()
		if err != nil {
			return nil, err
		}
		cp.nodeTokens[name] = tok
		fmt.Fprintf(&tokens, "%s,system:node:%s,node-%s,system:nodes\n", tok, name, name)
	}
	tokenFile := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokenFile, []byte(tokens.String()), 0o600); err != nil {
		return nil, err
	}
	resolv := filepath.Join(dir, "resolv.conf")
	hosts := filepath.Join(dir, "hosts")
	if err := os.WriteFile(resolv, []byte("nameserver "+DNS.String()+"\n"), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(hosts, []byte("127.0.0.1 localhost\n"), 0o644); err != nil {
		return nil, err
	}
	cp.AdminKubeconfig = filepath.Join(dir, "admin.kubeconfig")
	if err := writeKubeconfig(cp.AdminKubeconfig, cp.URL, cp.CAFile, "admin", cp.AdminToken); err != nil {
		return nil, err
	}
	local := filepath.Join(dir, "local.kubeconfig")
	if err := writeKubeconfig(local, fmt.Sprintf("https://127.0.0.1:%d", APIPort), cp.CAFile, "admin", cp.AdminToken); err != nil {
		return nil, err
	}
	start := func(name string, args ...string) (*Proc, error) {
		pr, err := Start(ctx, Spec{
			NS:    n.Control,
			Binds: []Bind{{resolv, "/etc/resolv.conf"}, {hosts, "/etc/hosts"}},
			Args:  append([]string{filepath.Join(bin, name)}, args...),
			Env:   baseEnv(),
			Log:   filepath.Join(dir, name+".log"),
		})
		if err == nil {
			cp.procs = append(cp.procs, pr)
		}
		return pr, err
	}
	if _, err := start("etcd",
		"--name", "default", "--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", "http://127.0.0.1:2379", "--advertise-client-urls", "http://127.0.0.1:2379",
		"--listen-peer-urls", "http://127.0.0.1:2380", "--initial-advertise-peer-urls", "http://127.0.0.1:2380",
		"--initial-cluster", "default=http://127.0.0.1:2380", "--listen-metrics-urls", "http://127.0.0.1:2381",
		"--unsafe-no-fsync", "--log-level", "warn"); err != nil {
		return nil, err
	}
	api, err := start("kube-apiserver",
		"--etcd-servers", "http://127.0.0.1:2379",
		"--bind-address", "0.0.0.0",
		"--advertise-address", APIServer.String(),
		"--secure-port", fmt.Sprint(APIPort),
		"--cert-dir", filepath.Join(dir, "apiserver-certs"),
		"--tls-cert-file", p.certFile, "--tls-private-key-file", p.keyFile,
		"--client-ca-file", p.caFile,
		"--token-auth-file", tokenFile,
		"--authorization-mode", "Node,RBAC",
		"--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file", p.saKeyFile,
		"--service-account-signing-key-file", p.saKeyFile,
		"--service-cluster-ip-range", "10.96.0.0/24",
		"--kubelet-preferred-address-types", "InternalIP",
		"--allow-privileged=true",
		"--enable-priority-and-fairness=false",
		"--v", "0")
	if err != nil {
		return nil, err
	}
	if err := cp.waitReady(ctx, api); err != nil {
		return nil, err
	}
	if _, err := start("kube-scheduler", "--kubeconfig", local, "--authentication-kubeconfig", local, "--authorization-kubeconfig", local,
		"--leader-elect=false", "--bind-address", "127.0.0.1", "--secure-port", "10259", "--v", "0"); err != nil {
		return nil, err
	}
	if _, err := start("kube-controller-manager", "--kubeconfig", local, "--authentication-kubeconfig", local, "--authorization-kubeconfig", local,
		"--leader-elect=false", "--bind-address", "127.0.0.1", "--secure-port", "10257",
		"--root-ca-file", p.caFile, "--service-account-private-key-file", p.saKeyFile,
		"--use-service-account-credentials=false", "--controllers", "*",
		"--concurrent-gc-syncs", "5", "--v", "0"); err != nil {
		return nil, err
	}
	return cp, nil
}

// NodeToken returns the token of node name.
func (cp *ControlPlane) NodeToken(name string) string { return cp.nodeTokens[name] }

// HTTPClient returns a client that trusts the API server's CA and dials
// from inside the control-plane namespace.
func (cp *ControlPlane) HTTPClient() (*http.Client, error) {
	ca, err := os.ReadFile(cp.CAFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool},
		DialContext:     cp.DialContext,
	}}, nil
}

// DialContext dials an address from inside the control-plane namespace
// (client-go's rest.Config.Dial).
func (cp *ControlPlane) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	return cp.net.Control.DialContext(ctx, network, address)
}

func (cp *ControlPlane) waitReady(ctx context.Context, api *Proc) error {
	c, err := cp.HTTPClient()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var last string
	err = waitFor(ctx, api, 300*time.Millisecond, func() bool {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, cp.URL+"/readyz", nil)
		req.Header.Set("Authorization", "Bearer "+cp.AdminToken)
		resp, err := c.Do(req)
		if err != nil {
			last = err.Error()
			return false
		}
		resp.Body.Close()
		last = resp.Status
		return resp.StatusCode == http.StatusOK
	})
	if err != nil {
		return fmt.Errorf("waiting for kube-apiserver (%s): %w\n%s", last, err, api.Tail(4000))
	}
	return nil
}

// Logs returns the tail of every control-plane log, for a failing test.
func (cp *ControlPlane) Logs(n int) string {
	var b strings.Builder
	for _, p := range cp.procs {
		fmt.Fprintf(&b, "=== %s\n%s\n", filepath.Base(p.Spec.Args[0]), p.Tail(n))
	}
	return b.String()
}

// Stop ends the control plane, newest process first.
func (cp *ControlPlane) Stop() {
	for i := len(cp.procs) - 1; i >= 0; i-- {
		cp.procs[i].Stop(10 * time.Second)
	}
}

func writeKubeconfig(path, server, caFile, user, token string) error {
	return os.WriteFile(path, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: nodelab
  cluster:
    server: %s
    certificate-authority: %s
users:
- name: %s
  user:
    token: %s
contexts:
- name: nodelab
  context: {cluster: nodelab, user: %s}
current-context: nodelab
`, server, caFile, user, token, user)), 0o600)
}
