package netpath

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/pullpath/pullpath/internal/testpki"
)

func TestHandshake(t *testing.T) {
	ca := testpki.MustCA(t, "pullpath test CA")
	other := testpki.MustCA(t, "some other CA")
	now := time.Now()
	good := serverCert(t, ca, now.Add(-time.Hour), now.Add(90*24*time.Hour), "registry.example")
	expired := serverCert(t, ca, now.Add(-60*24*time.Hour), now.Add(-24*time.Hour), "registry.example")
	expiring := serverCert(t, ca, now.Add(-time.Hour), now.Add(3*24*time.Hour), "registry.example")
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(plain.Close)

	tests := []struct {
		name       string
		addr       string
		serverName string
		cfg        *tls.Config
		timeout    time.Duration
		wantCause  string
		wantEvid   string
		wantChain  int
		wantWarn   []string
	}{
		{name: "trusted", addr: tlsServer(t, good), serverName: "registry.example", cfg: &tls.Config{RootCAs: ca.Pool()}, wantChain: 2},
		{name: "untrusted", addr: tlsServer(t, good), serverName: "registry.example", cfg: &tls.Config{RootCAs: other.Pool()},
			wantCause: "tls.untrusted", wantEvid: "tls: failed to verify certificate: x509: certificate signed by unknown authority", wantChain: 2},
		{name: "wrong name", addr: tlsServer(t, good), serverName: "other.example", cfg: &tls.Config{RootCAs: ca.Pool()},
			wantCause: "tls.name", wantEvid: "x509: certificate is valid for registry.example, not other.example", wantChain: 2},
		{name: "expired", addr: tlsServer(t, expired), serverName: "registry.example", cfg: &tls.Config{RootCAs: ca.Pool()},
			wantCause: "tls.expired", wantEvid: "x509: certificate has expired or is not yet valid", wantChain: 2},
		{name: "expiring soon", addr: tlsServer(t, expiring), serverName: "registry.example", cfg: &tls.Config{RootCAs: ca.Pool()},
			wantChain: 2, wantWarn: []string{"tls.expiring"}},
		{name: "skip_verify accepts anything, with a warning", addr: tlsServer(t, good), serverName: "other.example", cfg: &tls.Config{RootCAs: other.Pool(), InsecureSkipVerify: true},
			wantChain: 2, wantWarn: []string{"tls.skip-verify"}},
		{name: "plain HTTP on the TLS port", addr: plain.Listener.Addr().String(), serverName: "registry.example", cfg: &tls.Config{RootCAs: ca.Pool()},
			wantCause: "tls.plain-http", wantEvid: "first record does not look like a TLS handshake"},
		{name: "server never speaks TLS", addr: silentServer(t), serverName: "registry.example", cfg: &tls.Config{RootCAs: ca.Pool()}, timeout: 200 * time.Millisecond,
			wantCause: "tls.timeout"},
		{name: "no server name and no skip_verify", addr: tlsServer(t, good), serverName: "", cfg: &tls.Config{RootCAs: ca.Pool()},
			wantCause: "tls.handshake", wantEvid: "either ServerName or InsecureSkipVerify"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			cr := Connect(ctx, netip.MustParseAddrPort(tt.addr), time.Second)
			if cr.Err != nil {
				t.Fatalf("Connect(%s) = %v", tt.addr, cr.Err)
			}
			got := Handshake(ctx, cr.Conn, tt.serverName, tt.cfg, tt.timeout)
			if got.Conn != nil {
				defer got.Conn.Close()
			}
			cause := ""
			if got.Err != nil {
				cause = got.Err.Cause
			}
			if cause != tt.wantCause {
				t.Fatalf("Handshake(%s) cause = %q, want %q (err %v)", tt.name, cause, tt.wantCause, got.Err)
			}
			if tt.wantEvid != "" && !strings.Contains(got.Err.Error(), tt.wantEvid) {
				t.Errorf("Handshake(%s) evidence = %q, want it to contain %q", tt.name, got.Err.Error(), tt.wantEvid)
			}
			if got.Duration <= 0 {
				t.Errorf("Handshake(%s) duration = %v, want the time spent", tt.name, got.Duration)
			}
			if len(got.Chain) != tt.wantChain {
				t.Errorf("Handshake(%s) chain length = %d, want %d", tt.name, len(got.Chain), tt.wantChain)
			}
			if tt.wantChain > 0 {
				leaf := got.Chain[0]
				if leaf.Subject != "CN=registry.example" || leaf.Issuer != "CN=pullpath test CA" || leaf.SerialHex != "beef" {
					t.Errorf("Handshake(%s) leaf = %+v, want CN=registry.example issued by the test CA, serial beef", tt.name, leaf)
				}
				if diff := cmp.Diff([]string{"registry.example"}, leaf.SANs); diff != "" {
					t.Errorf("Handshake(%s) SANs (-want +got):\n%s", tt.name, diff)
				}
			}
			var warns []string
			for _, w := range got.Warnings {
				warns = append(warns, w.Code)
			}
			if diff := cmp.Diff(tt.wantWarn, warns, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Handshake(%s) warnings (-want +got):\n%s", tt.name, diff)
			}
			if tt.wantCause == "" && (got.Conn == nil || got.Version == "") {
				t.Errorf("Handshake(%s) = no connection or version, want an open TLS connection", tt.name)
			}
			if tt.wantCause != "" && got.Conn != nil {
				t.Errorf("Handshake(%s) failed but returned a connection", tt.name)
			}
		})
	}
}

func TestHandshakeIPName(t *testing.T) {
	ca := testpki.MustCA(t, "pullpath test CA")
	now := time.Now()
	withIP := tlsServer(t, serverCert(t, ca, now.Add(-time.Hour), now.Add(90*24*time.Hour), "registry.example", "127.0.0.1"))
	nameOnly := tlsServer(t, serverCert(t, ca, now.Add(-time.Hour), now.Add(90*24*time.Hour), "registry.example"))
	tests := []struct {
		name, addr, want string
	}{
		{"IP SAN matches", withIP, ""},
		{"no IP SAN", nameOnly, "tls.name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cr := Connect(context.Background(), netip.MustParseAddrPort(tt.addr), time.Second)
			if cr.Err != nil {
				t.Fatal(cr.Err)
			}
			got := Handshake(context.Background(), cr.Conn, "127.0.0.1", &tls.Config{RootCAs: ca.Pool()}, time.Second)
			if got.Conn != nil {
				got.Conn.Close()
			}
			cause := ""
			if got.Err != nil {
				cause = got.Err.Cause
			}
			if cause != tt.want {
				t.Errorf("Handshake(127.0.0.1) cause = %q, want %q (err %v)", cause, tt.want, got.Err)
			}
		})
	}
}

func TestHandshakeCancelledContext(t *testing.T) {
	addr := silentServer(t)
	cr := Connect(context.Background(), netip.MustParseAddrPort(addr), time.Second)
	if cr.Err != nil {
		t.Fatal(cr.Err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got := Handshake(ctx, cr.Conn, "registry.example", nil, time.Hour)
	if got.Err == nil || got.Conn != nil {
		t.Errorf("Handshake(cancelled ctx) = %v, %v, want an error and no connection", got.Conn, got.Err)
	}
}

func TestHandshakeNilConn(t *testing.T) {
	got := Handshake(context.Background(), nil, "registry.example", nil, time.Second)
	if got.Err == nil || got.Err.Cause != "tls.handshake" {
		t.Errorf("Handshake(nil conn) = %v, want tls.handshake", got.Err)
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestClassifyTLSError(t *testing.T) {
	leaf := &x509.Certificate{DNSNames: []string{"registry.example"}}
	verr := func(err error) error { return &tls.CertificateVerificationError{Err: err} }
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"nil", nil, ""},
		{"unknown authority", verr(x509.UnknownAuthorityError{Cert: leaf}), "tls.untrusted"},
		{"system roots", x509.SystemRootsError{}, "tls.untrusted"},
		{"not authorized to sign", verr(x509.CertificateInvalidError{Cert: leaf, Reason: x509.NotAuthorizedToSign}), "tls.untrusted"},
		{"hostname", verr(x509.HostnameError{Certificate: leaf, Host: "other.example"}), "tls.name"},
		{"expired", verr(x509.CertificateInvalidError{Cert: leaf, Reason: x509.Expired}), "tls.expired"},
		{"record header", tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"}, "tls.plain-http"},
		{"timeout", &net.OpError{Op: "read", Net: "tcp", Err: timeoutErr{}}, "tls.timeout"},
		{"context deadline", context.DeadlineExceeded, "tls.timeout"},
		{"alert", errors.New("remote error: tls: handshake failure"), "tls.handshake"},
		{"text: unknown authority", errors.New(`Get "https://r/v2/": tls: failed to verify certificate: x509: certificate signed by unknown authority`), "tls.untrusted"},
		{"text: name", errors.New("x509: certificate is valid for a.example, b.example, not c.example"), "tls.name"},
		{"text: IP SANs", errors.New("x509: cannot validate certificate for 10.0.0.1 because it doesn't contain any IP SANs"), "tls.name"},
		{"text: expired", errors.New("x509: certificate has expired or is not yet valid: current time ..."), "tls.expired"},
		{"text: http response", errors.New("http: server gave HTTP response to HTTPS client"), "tls.plain-http"},
		{"text: handshake timeout", errors.New("net/http: TLS handshake timeout"), "tls.timeout"},
		{"reset during handshake", &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, "tls.handshake"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ClassifyTLSError(tt.err); got != tt.want {
				t.Errorf("ClassifyTLSError(%v) = %q, want %q", tt.err, got, tt.want)
			}
		})
	}
}

func TestTLSPredicates(t *testing.T) {
	leaf := &x509.Certificate{DNSNames: []string{"registry.example"}}
	tests := []struct {
		name string
		pred func(error) bool
		yes  []error
		no   []error
	}{
		{"isUnknownAuthority", isUnknownAuthority,
			[]error{x509.UnknownAuthorityError{}, fmt.Errorf("wrapped: %w", x509.UnknownAuthorityError{Cert: leaf}), errors.New("x509: certificate signed by unknown authority")},
			[]error{x509.HostnameError{Certificate: leaf, Host: "x"}, x509.CertificateInvalidError{Cert: leaf, Reason: x509.Expired}, errors.New("EOF")}},
		{"isHostnameMismatch", isHostnameMismatch,
			[]error{x509.HostnameError{Certificate: leaf, Host: "x"}, errors.New("x509: certificate relies on legacy Common Name field, use SANs instead")},
			[]error{x509.UnknownAuthorityError{}, errors.New("EOF")}},
		{"isExpired", isExpired,
			[]error{x509.CertificateInvalidError{Cert: leaf, Reason: x509.Expired}, errors.New("x509: certificate has expired or is not yet valid")},
			[]error{x509.CertificateInvalidError{Cert: leaf, Reason: x509.NotAuthorizedToSign}, errors.New("EOF")}},
		{"isPlainHTTP", isPlainHTTP,
			[]error{tls.RecordHeaderError{}, fmt.Errorf("x: %w", tls.RecordHeaderError{Msg: "m"})},
			[]error{errors.New("remote error: tls: protocol version not supported")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkPredicate(t, tt.name, tt.pred, tt.yes, tt.no) })
	}
}
