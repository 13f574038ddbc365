// Package clustertest starts a real etcd and kube-apiserver on loopback for
// tests, and builds and loads realistic cluster fixtures. The binaries come
// from tools/kube/build.sh through the PULLPATH_KUBE_BIN environment
// variable; without it the tests that need them skip.
package clustertest

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/pullpath/pullpath/internal/testpki"
	"github.com/pullpath/pullpath/internal/tiers"
)

// EnvBin names the directory holding the etcd and kube-apiserver binaries.
const EnvBin = "PULLPATH_KUBE_BIN"

// AdminToken is the static bearer token of the admin user (system:masters).
const AdminToken = "pullpath-test-admin-token"

// Server is a running etcd + kube-apiserver pair.
type Server struct {
	// URL is the API server's https://127.0.0.1:port.
	URL string
	// CAFile is the PEM file of the CA that signed the serving certificate.
	CAFile string
	// Kubeconfig is a kubeconfig file for the admin user.
	Kubeconfig string
	// Config is a rest config for the admin user.
	Config *rest.Config
	// Clientset is an admin clientset.
	Clientset kubernetes.Interface
}

// Start starts etcd and kube-apiserver on loopback random ports and stops
// them when the test ends. It skips the test when PULLPATH_KUBE_BIN is not
// set, and fails it when the binaries are there but do not start.
func Start(t testing.TB) *Server {
	t.Helper()
	return StartWith(t, Options{})
}

// Options change how Start runs the binaries.
type Options struct {
	// ResolvConf, when set, is bind-mounted over /etc/resolv.conf (and a
	// hosts file naming only localhost over /etc/hosts) in a private mount
	// namespace of each binary, so that nothing they resolve reaches this
	// machine's resolver. It needs root and unshare(1); without them the
	// test skips, saying so.
	ResolvConf string
}

// StartWith is Start with options.
func StartWith(t testing.TB, o Options) *Server {
	t.Helper()
	tiers.Require(t, tiers.APIServer)
	bin := os.Getenv(EnvBin)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	var wrap []string
	if o.ResolvConf != "" {
		unshare, err := exec.LookPath("unshare")
		if os.Geteuid() != 0 || err != nil {
			t.Skip("the API server with the lab's resolv.conf: skipped: needs root and unshare(1) for a private mount namespace")
		}
		hosts := filepath.Join(dir, "hosts")
		writeFile(t, hosts, "127.0.0.1 localhost\n")
		wrap = []string{unshare, "--mount", "--propagation", "private", "sh", "-c",
			`mount --bind "$1" /etc/resolv.conf && mount --bind "$2" /etc/hosts && shift 2 && exec "$@"`, "sh", o.ResolvConf, hosts}
	}
	start := func(t testing.TB, logFile, bin string, args ...string) {
		t.Helper()
		if wrap != nil {
			args = append(append(append([]string(nil), wrap[1:]...), bin), args...)
			bin = wrap[0]
		}
		startProcess(t, logFile, bin, args...)
	}

	etcdClient, etcdPeer := freePort(t), freePort(t)
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(etcdClient)
	peerURL := "http://127.0.0.1:" + strconv.Itoa(etcdPeer)
	start(t, filepath.Join(dir, "etcd.log"), filepath.Join(bin, "etcd"),
		"--name", "default",
		"--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", etcdURL,
		"--advertise-client-urls", etcdURL,
		"--listen-peer-urls", peerURL,
		"--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "default="+peerURL,
		"--listen-metrics-urls", "http://127.0.0.1:"+strconv.Itoa(freePort(t)),
		"--unsafe-no-fsync",
		"--log-level", "warn",
	)

	pki := writePKI(t, dir)
	tokens := filepath.Join(dir, "tokens.csv")
	writeFile(t, tokens, AdminToken+",admin,admin-uid,system:masters\n")
	port := freePort(t)
	srv := &Server{URL: "https://127.0.0.1:" + strconv.Itoa(port), CAFile: pki.CAFile}
	start(t, filepath.Join(dir, "kube-apiserver.log"), filepath.Join(bin, "kube-apiserver"),
		"--etcd-servers", etcdURL,
		"--bind-address", "127.0.0.1",
		"--advertise-address", "127.0.0.1",
		"--secure-port", strconv.Itoa(port),
		"--cert-dir", filepath.Join(dir, "apiserver-certs"),
		"--tls-cert-file", pki.CertFile,
		"--tls-private-key-file", pki.KeyFile,
		"--token-auth-file", tokens,
		"--authorization-mode", "RBAC",
		"--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file", pki.SAKeyFile,
		"--service-account-signing-key-file", pki.SAKeyFile,
		"--service-cluster-ip-range", "10.96.0.0/24",
		"--allow-privileged=true",
		"--enable-priority-and-fairness=false",
		"--v", "0",
	)
	srv.Config = &rest.Config{Host: srv.URL, BearerToken: AdminToken, TLSClientConfig: rest.TLSClientConfig{CAFile: pki.CAFile}, Timeout: 30 * time.Second, QPS: 200, Burst: 400}
	waitReady(ctx, t, srv, filepath.Join(dir, "kube-apiserver.log"))
	cs, err := kubernetes.NewForConfig(srv.Config)
	if err != nil {
		t.Fatalf("creating clientset: %v", err)
	}
	srv.Clientset = cs
	srv.Kubeconfig = filepath.Join(dir, "kubeconfig")
	writeFile(t, srv.Kubeconfig, fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: %s
    certificate-authority: %s
users:
- name: admin
  user:
    token: %s
contexts:
- name: test
  context: {cluster: test, user: admin, namespace: default}
current-context: test
`, srv.URL, pki.CAFile, AdminToken))
	return srv
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// freePort returns a loopback port that was free a moment ago, for a
// daemon that binds it itself. It is taken below Linux's ephemeral range
// (32768-60999): a port that port 0 handed out would go to the next
// listener of any process asking for port 0 (another test package's etcd
// took one kube-apiserver's port between the check and the bind, in a run
// of every package at once), while this range is used only by callers
// choosing it at random, as here.
func freePort(t testing.TB) int {
	t.Helper()
	for range 200 {
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(20000+rand.IntN(12000)))
		if err != nil {
			continue
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		return port
	}
	t.Fatal("finding a free port in 20000-31999: every port tried was taken")
	return 0
}

// startProcess runs a binary until the test ends, logging to a file that is
// printed when the test fails.
func startProcess(t testing.TB, logFile, bin string, args ...string) {
	t.Helper()
	log, err := os.Create(logFile)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		log.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logFile)
			if len(b) > 8000 {
				b = b[len(b)-8000:]
			}
			t.Logf("%s log (tail):\n%s", filepath.Base(bin), b)
		}
	})
}

// waitReady polls /readyz until the server is ready. The bound is a
// startup deadline, not an assertion about speed.
func waitReady(ctx context.Context, t testing.TB, srv *Server, logFile string) {
	t.Helper()
	pool := x509.NewCertPool()
	ca, err := os.ReadFile(srv.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	pool.AppendCertsFromPEM(ca)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	deadline := time.Now().Add(90 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/readyz", nil)
		req.Header.Set("Authorization", "Bearer "+AdminToken)
		resp, err := client.Do(req)
		if err == nil {
			var buf bytes.Buffer
			_, _ = buf.ReadFrom(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, buf.String())
		} else {
			last = err.Error()
		}
		time.Sleep(250 * time.Millisecond)
	}
	b, _ := os.ReadFile(logFile)
	if len(b) > 8000 {
		b = b[len(b)-8000:]
	}
	t.Fatalf("kube-apiserver did not become ready: %s\n%s", last, b)
}

// writePKI makes a CA, a serving certificate for 127.0.0.1/localhost and a
// service-account signing key, all fresh for this test.
func writePKI(t testing.TB, dir string) testpki.APIServerFiles {
	t.Helper()
	f, err := testpki.WriteAPIServer(dir, net.IPv4(127, 0, 0, 1))
	if err != nil {
		t.Fatal(err)
	}
	return f
}
