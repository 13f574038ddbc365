package netpath

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/pullpath/pullpath/internal/verdict"
)

// DefaultHandshakeTimeout is containerd's TLS handshake timeout
// (docker.DefaultHTTPTransport).
const DefaultHandshakeTimeout = 10 * time.Second

// ExpiryWarning is how close to expiry a certificate draws tls.expiring.
const ExpiryWarning = 14 * 24 * time.Hour

// CertInfo describes one presented certificate.
type CertInfo struct {
	Subject   string    `json:"subject"`
	Issuer    string    `json:"issuer"`
	SANs      []string  `json:"sans"`
	NotBefore time.Time `json:"not_before"`
	NotAfter  time.Time `json:"not_after"`
	SerialHex string    `json:"serial_hex"`
}

// TLSResult is the outcome of one TLS handshake.
type TLSResult struct {
	// Conn is the established connection on success; the caller closes
	// it. On failure the connection is closed.
	Conn    *tls.Conn
	Version string
	// Chain is the chain the server presented, leaf first, recorded even
	// when verification failed.
	Chain    []CertInfo
	Duration time.Duration
	// Err is tls.untrusted, tls.name, tls.expired, tls.timeout,
	// tls.plain-http or tls.handshake, wrapping Go's error.
	Err *verdict.Error
	// Warnings: tls.expiring, tls.skip-verify.
	Warnings []verdict.Warning
}

// Handshake runs a TLS client handshake over raw with cfg (nil means Go's
// defaults: the system roots) for serverName (used when cfg.ServerName is
// empty), with a deadline of timeout (DefaultHandshakeTimeout when zero)
// capped by ctx.
//
// The chain is recorded even when it is rejected: the handshake itself
// skips Go's built-in check and VerifyConnection repeats it with the same
// roots, name, time and intermediates, returning Go's own
// *tls.CertificateVerificationError. When cfg.InsecureSkipVerify is set
// (skip_verify in hosts.toml) nothing is verified and tls.skip-verify is
// warned.
func Handshake(ctx context.Context, raw net.Conn, serverName string, cfg *tls.Config, timeout time.Duration) (res TLSResult) {
	start := time.Now()
	defer func() { res.Duration = time.Since(start) }()
	if raw == nil {
		res.Err = verdict.Errorf(verdict.CodeTLSHandshake, verdict.RoleNone, "", "no connection to run the handshake on")
		return res
	}
	if timeout <= 0 {
		timeout = DefaultHandshakeTimeout
	}
	c := &tls.Config{}
	if cfg != nil {
		c = cfg.Clone()
	}
	if c.ServerName == "" {
		c.ServerName = strings.TrimSuffix(strings.TrimPrefix(serverName, "["), "]")
	}
	skip := c.InsecureSkipVerify
	if !skip && c.ServerName == "" {
		res.Err = verdict.Wrap(verdict.CodeTLSHandshake, verdict.RoleNone, "", errors.New("tls: either ServerName or InsecureSkipVerify must be specified in the tls.Config"))
		raw.Close()
		return res
	}
	var presented []*x509.Certificate
	theirs := c.VerifyConnection
	c.InsecureSkipVerify = true
	c.VerifyConnection = func(cs tls.ConnectionState) error {
		presented = cs.PeerCertificates
		if !skip {
			if err := verifyChain(c, cs.PeerCertificates); err != nil {
				return err
			}
		}
		if theirs != nil {
			return theirs(cs)
		}
		return nil
	}

	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if dl, ok := ctx.Deadline(); ok {
		_ = raw.SetDeadline(dl)
	}
	conn := tls.Client(raw, c)
	err := conn.HandshakeContext(ctx)
	res.Chain = certInfos(presented)
	if skip {
		res.Warnings = append(res.Warnings, verdict.Warning{Code: verdict.CodeTLSSkipVerify,
			Message: fmt.Sprintf("the certificate of %s is not verified (skip_verify): any certificate is accepted, an interceptor's too", c.ServerName)})
	}
	if err != nil {
		conn.Close()
		res.Err = verdict.Wrap(ClassifyTLSError(err), verdict.RoleNone, "", err)
		if res.Err.Cause == verdict.CodeTLSTimeout {
			res.Err.Detail = fmt.Sprintf("no TLS answer within %s", timeout)
		}
		return res
	}
	_ = raw.SetDeadline(time.Time{})
	st := conn.ConnectionState()
	res.Conn = conn
	res.Version = tls.VersionName(st.Version)
	if len(presented) > 0 {
		now := time.Now()
		if c.Time != nil {
			now = c.Time()
		}
		leaf := presented[0]
		if left := leaf.NotAfter.Sub(now); left < ExpiryWarning {
			res.Warnings = append(res.Warnings, verdict.Warning{Code: verdict.CodeTLSExpiring,
				Message: fmt.Sprintf("the certificate of %s expires %s (in %s)", c.ServerName, leaf.NotAfter.UTC().Format(time.RFC3339), left.Round(time.Hour))})
		}
	}
	return res
}

// verifyChain verifies a presented chain the way crypto/tls's client does
// (verifyServerCertificate): the leaf against cfg.RootCAs (nil: system
// roots) with the rest as intermediates, for cfg.ServerName at cfg.Time.
func verifyChain(cfg *tls.Config, certs []*x509.Certificate) error {
	if len(certs) == 0 {
		return errors.New("tls: server presented no certificate")
	}
	opts := x509.VerifyOptions{
		Roots:         cfg.RootCAs,
		DNSName:       cfg.ServerName,
		Intermediates: x509.NewCertPool(),
	}
	if cfg.Time != nil {
		opts.CurrentTime = cfg.Time()
	}
	for _, c := range certs[1:] {
		opts.Intermediates.AddCert(c)
	}
	if _, err := certs[0].Verify(opts); err != nil {
		return &tls.CertificateVerificationError{UnverifiedCertificates: certs, Err: err}
	}
	return nil
}

func certInfos(certs []*x509.Certificate) []CertInfo {
	var out []CertInfo
	for _, c := range certs {
		ci := CertInfo{Subject: c.Subject.String(), Issuer: c.Issuer.String(), NotBefore: c.NotBefore, NotAfter: c.NotAfter}
		if c.SerialNumber != nil {
			ci.SerialHex = c.SerialNumber.Text(16)
		}
		ci.SANs = append(ci.SANs, c.DNSNames...)
		for _, ip := range c.IPAddresses {
			ci.SANs = append(ci.SANs, ip.String())
		}
		for _, u := range c.URIs {
			ci.SANs = append(ci.SANs, u.String())
		}
		ci.SANs = append(ci.SANs, c.EmailAddresses...)
		out = append(out, ci)
	}
	return out
}

// ClassifyTLSError names the cause of a failed TLS handshake:
// tls.untrusted, tls.name, tls.expired, tls.timeout, tls.plain-http or
// tls.handshake ("" for nil). Typed x509/tls errors are checked first,
// texts last.
func ClassifyTLSError(err error) string {
	switch {
	case err == nil:
		return ""
	case isExpired(err):
		return verdict.CodeTLSExpired
	case isHostnameMismatch(err):
		return verdict.CodeTLSName
	case isUnknownAuthority(err):
		return verdict.CodeTLSUntrusted
	case isPlainHTTP(err):
		return verdict.CodeTLSPlainHTTP
	case isTimeout(err):
		return verdict.CodeTLSTimeout
	}
	return verdict.CodeTLSHandshake
}

// isUnknownAuthority reports a chain that does not lead to a trusted root
// (x509.UnknownAuthorityError, x509.SystemRootsError, or another invalid
// chain such as an intermediate not allowed to sign).
func isUnknownAuthority(err error) bool {
	var ua x509.UnknownAuthorityError
	var sr x509.SystemRootsError
	var ci x509.CertificateInvalidError
	if errors.As(err, &ua) || errors.As(err, &sr) || (errors.As(err, &ci) && ci.Reason != x509.Expired) {
		return true
	}
	return strings.Contains(err.Error(), "certificate signed by unknown authority")
}

// isHostnameMismatch reports a certificate not valid for the name asked
// (x509.HostnameError), including the legacy Common Name case.
func isHostnameMismatch(err error) bool {
	var he x509.HostnameError
	if errors.As(err, &he) {
		return true
	}
	s := err.Error()
	return strings.Contains(s, "x509: certificate is valid for") || strings.Contains(s, "x509: certificate is not valid for any names") ||
		strings.Contains(s, "doesn't contain any IP SANs") || strings.Contains(s, "legacy Common Name field")
}

// isExpired reports a certificate outside its validity period.
func isExpired(err error) bool {
	var ci x509.CertificateInvalidError
	if errors.As(err, &ci) && ci.Reason == x509.Expired {
		return true
	}
	return strings.Contains(err.Error(), "certificate has expired or is not yet valid")
}

// isPlainHTTP reports a server that answered a ClientHello in plain text
// (tls.RecordHeaderError, or net/http's "server gave HTTP response to
// HTTPS client").
func isPlainHTTP(err error) bool {
	var rh tls.RecordHeaderError
	if errors.As(err, &rh) {
		return true
	}
	s := err.Error()
	return strings.Contains(s, "first record does not look like a TLS handshake") || strings.Contains(s, "server gave HTTP response to HTTPS client")
}
