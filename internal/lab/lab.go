package lab

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/distribution/distribution/v3/configuration"
	"github.com/distribution/distribution/v3/registry/handlers"
	"github.com/miekg/dns"
	"github.com/sirupsen/logrus"

	// The registry's plugins register themselves by import.
	"github.com/distribution/distribution/v3/registry/auth/token"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/middleware/redirect"
)

// Domain is the DNS zone the lab serves.
const Domain = "lab.test"

// Addrs are the addresses the lab's hosts listen on (and its DNS answers
// with). Dead and DeadDNS must have nothing listening: they are the targets
// of the refused-connection and dead-resolver scenarios.
type Addrs struct {
	Registry netip.Addr `json:"registry"`
	Auth     netip.Addr `json:"auth"`
	Blob     netip.Addr `json:"blob"`
	Mirror   netip.Addr `json:"mirror"`
	Dead     netip.Addr `json:"dead"`
	DNS      netip.Addr `json:"dns"`
	DNS2     netip.Addr `json:"dns2"`
	DeadDNS  netip.Addr `json:"deadDNS"`
}

// DefaultAddrs are the loopback addresses a lab uses when Options.Addrs
// leaves a field zero.
func DefaultAddrs() Addrs {
	return Addrs{
		Registry: netip.MustParseAddr("127.0.10.1"),
		Auth:     netip.MustParseAddr("127.0.10.2"),
		Blob:     netip.MustParseAddr("127.0.10.3"),
		Mirror:   netip.MustParseAddr("127.0.10.4"),
		Dead:     netip.MustParseAddr("127.0.10.99"),
		DNS:      netip.MustParseAddr("127.0.53.1"),
		DNS2:     netip.MustParseAddr("127.0.53.2"),
		DeadDNS:  netip.MustParseAddr("127.0.53.99"),
	}
}

func (a Addrs) withDefaults() Addrs {
	d := DefaultAddrs()
	set := func(p *netip.Addr, def netip.Addr) {
		if !p.IsValid() {
			*p = def
		}
	}
	set(&a.Registry, d.Registry)
	set(&a.Auth, d.Auth)
	set(&a.Blob, d.Blob)
	set(&a.Mirror, d.Mirror)
	set(&a.Dead, d.Dead)
	set(&a.DNS, d.DNS)
	set(&a.DNS2, d.DNS2)
	set(&a.DeadDNS, d.DeadDNS)
	return a
}

// Options configure a lab. The zero value is a loopback lab on the default
// addresses.
type Options struct {
	// Addrs are the hosts' addresses; a zero field takes its DefaultAddrs value.
	Addrs Addrs
	// Listen opens the TCP listeners (HTTPS and DNS over TCP). The default
	// is net.Listen; the netns tier passes one that binds inside a namespace.
	Listen func(network, address string) (net.Listener, error)
	// ListenPacket opens the DNS UDP sockets. The default is net.ListenPacket.
	ListenPacket func(network, address string) (net.PacketConn, error)
	// DialContext opens the lab's own connections (the image push at start,
	// and Transport) once a lab name has been mapped to its address. The
	// default is a net.Dialer; the netns tier passes one that dials inside
	// the namespace.
	DialContext func(ctx context.Context, network, address string) (net.Conn, error)
	// Dir holds the registry storage and the scenario roots. When empty the
	// lab makes a temporary directory and Close removes it.
	Dir string
	// PublicAddr is the "public" answer of the private-zone scenario. Nobody
	// ever dials it. The default is 203.0.113.10 (TEST-NET-3).
	PublicAddr netip.Addr
	// HTTPSPort is the port every HTTPS host listens on. The default (0)
	// is 443, falling back to one random port shared by every HTTPS host
	// when 443 cannot be bound; image references and redirects then carry
	// ":PORT".
	HTTPSPort int
	// DNSPort is the port both DNS servers listen on (UDP and TCP). The
	// default (0) is 53, falling back to one random port shared by both
	// servers when 53 cannot be bound; resolv.conf cannot name a port, so a
	// client must then be told Lab.DNSPort.
	DNSPort int
	// Layers is the number of layers of team/app, the image every healthy
	// scenario pulls (and the repositories that share it). The default is 3.
	Layers int
	// LayerSize is the size in bytes of the random (incompressible) file in
	// each layer of team/app. The default is 64 KiB; the benchmark tier uses
	// 128 MiB × 8. corrupt/app and multi/app always have 3 layers of 64 KiB.
	LayerSize int64
	// TokenTTL is the lifetime of the tokens the token host issues (its
	// expires_in). The default is 5 minutes; the monitor's scale
	// simulation shortens it with its intervals.
	TokenTTL time.Duration
	// Log receives the registry's log (logrus's standard logger, which is
	// process-wide) and the HTTP servers' errors. The default discards them.
	Log io.Writer
}

// Lab is a running lab. Its exported fields are read-only.
type Lab struct {
	// Domain is the zone the lab's DNS serves, "lab.test".
	Domain string
	// Registry is the registry host as it appears in image references:
	// "registry.lab.test", or "registry.lab.test:PORT" off port 443.
	Registry string
	// HTTPSPort is the port of every HTTPS host (443 or the fallback port).
	HTTPSPort int
	// DNSPort is the port of both DNS servers (53 or the fallback port).
	DNSPort int
	// ProxyPort and DenyProxyPort are the ports of the lab's HTTPS proxy
	// (proxy.lab.test, CONNECT only): the first tunnels to lab hosts, the
	// second refuses every tunnel with 403.
	ProxyPort, DenyProxyPort int
	// CAPEM is the lab CA certificate (PEM) every lab host's certificate
	// chains to, except the tls-untrusted scenario's.
	CAPEM []byte
	// Username and Password are the valid pull identity.
	Username, Password string
	// Scenarios are the served scenarios with their expected verdicts.
	Scenarios []Scenario
	// Addrs are the addresses in use.
	Addrs Addrs
	// PublicAddr is the never-dialled public address of dns-private-zone.
	PublicAddr netip.Addr
	// Dir holds the registry storage (Dir/storage) and the files below.
	Dir string
	// RootsDir holds one node root per scenario (RootsDir/<scenario>).
	RootsDir string
	// CAFile is the lab CA certificate (PEM), Dir/ca.pem.
	CAFile string
	// DockerConfig is a docker config.json holding the valid pull identity
	// for the registry host, Dir/docker/config.json (so that tools can find
	// the password without it being printed).
	DockerConfig string

	opts        Options
	ownDir      bool
	caPool      *x509.CertPool
	certs       *certStore
	zone1       *zone // the primary DNS server's zone
	zone2       *zone // the second DNS server's zone (disagrees on split)
	hostsFile   map[string]netip.Addr
	app         *handlers.App
	blobs       *blobHost
	counter     *counter
	setupSecret string
	pusherPass  string
	transport   *http.Transport
	images      []Image

	httpServers []*http.Server
	proxies     []*proxy
	dnsServers  []*dns.Server
	listeners   []io.Closer
	wg          sync.WaitGroup
	closeOnce   sync.Once
	closeErr    error
}

// The lab's host names, relative to Domain. Each one's job is documented in
// zoneRecords and scenarios.
const (
	hRegistry   = "registry"
	hAuth       = "auth"
	hBlob       = "blob"
	hMirror     = "mirror"
	hRefused    = "refused"
	hNX         = "nx"
	hPrivReg    = "privreg"
	hUntrusted  = "untrusted"
	hWrongName  = "wrongname"
	hExpired    = "expired"
	hHostsOnly  = "hostsonly"
	hSplit      = "split"
	hAuthDown   = "authdown"
	hNXBlob     = "nxblob"
	hDeadBlob   = "deadblob"
	hDeadMirror = "deadmirror"
	hOtherName  = "other" // the only SAN of the wrong-name certificate
)

// Start starts a lab: certificates, listeners, DNS servers, the token
// service, the registry and the blob host, then pushes the images and
// writes the scenario roots. ctx bounds the start (the push above all); the
// lab runs until Close.
func Start(ctx context.Context, opts Options) (l *Lab, err error) {
	if opts.Listen == nil {
		opts.Listen = net.Listen
	}
	if opts.ListenPacket == nil {
		opts.ListenPacket = net.ListenPacket
	}
	if opts.DialContext == nil {
		opts.DialContext = (&net.Dialer{Timeout: 10 * time.Second}).DialContext
	}
	if !opts.PublicAddr.IsValid() {
		opts.PublicAddr = netip.MustParseAddr("203.0.113.10")
	}
	if opts.Layers <= 0 {
		opts.Layers = 3
	}
	if opts.LayerSize <= 0 {
		opts.LayerSize = 64 << 10
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	l = &Lab{
		Domain:     Domain,
		Addrs:      opts.Addrs.withDefaults(),
		PublicAddr: opts.PublicAddr,
		Username:   "puller",
		Dir:        opts.Dir,
		opts:       opts,
	}
	built := l
	defer func() {
		// A failed start returns a nil lab: close the one it built (the
		// named result is already nil by then).
		if err != nil {
			_ = built.Close()
			l = nil
		}
	}()
	if l.Dir == "" {
		if l.Dir, err = os.MkdirTemp("", "pullpath-lab-"); err != nil {
			return nil, fmt.Errorf("making lab directory: %w", err)
		}
		l.ownDir = true
	}
	if l.Password, err = randomString(12); err != nil {
		return nil, err
	}
	if l.pusherPass, err = randomString(12); err != nil {
		return nil, err
	}
	if l.setupSecret, err = randomString(16); err != nil {
		return nil, err
	}
	now := time.Now()
	if err := l.makeCerts(now); err != nil {
		return nil, err
	}
	httpLns, err := l.bindHTTPS()
	if err != nil {
		return nil, err
	}
	udp, tcp, err := l.bindDNS()
	if err != nil {
		return nil, err
	}
	l.Registry = l.host(hRegistry)
	l.buildZones()

	tokens, signerPEM, err := l.newTokenService(now)
	if err != nil {
		return nil, err
	}
	storage := filepath.Join(l.Dir, "storage")
	if err := os.MkdirAll(storage, 0o755); err != nil {
		return nil, fmt.Errorf("making storage directory: %w", err)
	}
	signerFile := filepath.Join(l.Dir, "token-signer.pem")
	if err := os.WriteFile(signerFile, signerPEM, 0o644); err != nil {
		return nil, fmt.Errorf("writing token signer certificate: %w", err)
	}
	if l.app, err = l.newRegistryApp(storage, signerFile, tokens.service); err != nil {
		return nil, err
	}
	l.blobs = &blobHost{root: storage}
	reg := &front{next: l.app, secret: l.setupSecret, hostFor: l.host}

	errLog := log.New(opts.Log, "lab: ", 0)
	handlersByListener := []http.Handler{reg, tokens, l.blobs, reg} // registry, auth, blob, mirror
	l.counter = &counter{secret: l.setupSecret}
	for i, ln := range httpLns {
		srv := &http.Server{
			Handler:           l.counter.wrap(listenerHosts[i], handlersByListener[i]),
			TLSConfig:         l.certs.tlsConfig(),
			ReadHeaderTimeout: 10 * time.Second,
			IdleTimeout:       60 * time.Second,
			ErrorLog:          errLog,
		}
		l.httpServers = append(l.httpServers, srv)
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			_ = srv.ServeTLS(ln, "", "")
		}()
	}
	if err := l.serveDNS(udp, tcp); err != nil {
		return nil, err
	}
	if err := l.startProxies(); err != nil {
		return nil, err
	}

	l.transport = &http.Transport{
		DialContext:           l.DialContext,
		TLSClientConfig:       &tls.Config{RootCAs: l.caPool, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 30 * time.Second,
		IdleConnTimeout:       30 * time.Second,
		MaxIdleConnsPerHost:   16,
	}
	if err := l.pushImages(ctx); err != nil {
		return nil, err
	}
	if err := l.writeFiles(); err != nil {
		return nil, err
	}
	if err := l.buildScenarios(); err != nil {
		return nil, err
	}
	return l, nil
}

// writeFiles writes the CA and the docker config.
func (l *Lab) writeFiles() error {
	l.RootsDir = filepath.Join(l.Dir, "roots")
	l.CAFile = filepath.Join(l.Dir, "ca.pem")
	l.DockerConfig = filepath.Join(l.Dir, "docker", "config.json")
	if err := os.WriteFile(l.CAFile, l.CAPEM, 0o644); err != nil {
		return fmt.Errorf("writing lab CA: %w", err)
	}
	auth := base64.StdEncoding.EncodeToString([]byte(l.Username + ":" + l.Password))
	cfg, err := json.MarshalIndent(map[string]any{"auths": map[string]any{l.Registry: map[string]string{"auth": auth}}}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(l.DockerConfig), 0o700); err != nil {
		return fmt.Errorf("writing docker config: %w", err)
	}
	if err := os.WriteFile(l.DockerConfig, cfg, 0o600); err != nil {
		return fmt.Errorf("writing docker config: %w", err)
	}
	return nil
}

func randomString(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("reading random bytes: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// host is short's name as references and URLs carry it: "short.lab.test",
// with ":PORT" off port 443.
func (l *Lab) host(short string) string {
	name := short + "." + Domain
	if l.HTTPSPort == 443 {
		return name
	}
	return net.JoinHostPort(name, strconv.Itoa(l.HTTPSPort))
}

// Endpoint is "short.lab.test:PORT", the endpoint form verdicts use.
func (l *Lab) Endpoint(short string) string {
	return net.JoinHostPort(short+"."+Domain, strconv.Itoa(l.HTTPSPort))
}

func (l *Lab) makeCerts(now time.Time) error {
	ca, err := newAuthority("pullpath lab CA", now)
	if err != nil {
		return err
	}
	other, err := newAuthority("pullpath lab OTHER CA (not trusted by any node root)", now)
	if err != nil {
		return err
	}
	l.CAPEM = ca.pem
	l.caPool = x509.NewCertPool()
	l.caPool.AddCert(ca.cert)
	valid := leafSpec{notBefore: now.Add(-time.Hour), notAfter: now.Add(365 * 24 * time.Hour)}
	// The main certificate: every name that must pass TLS (including names
	// whose fault lies elsewhere: their TLS is not what is being tested).
	mainSpec := valid
	for _, h := range []string{hRegistry, hAuth, hBlob, hMirror, hHostsOnly, hSplit, hPrivReg,
		hRefused, hNX, hAuthDown, hNXBlob, hDeadBlob, hDeadMirror} {
		mainSpec.names = append(mainSpec.names, h+"."+Domain)
	}
	for _, a := range []netip.Addr{l.Addrs.Registry, l.Addrs.Auth, l.Addrs.Blob, l.Addrs.Mirror} {
		mainSpec.ips = append(mainSpec.ips, net.IP(a.AsSlice()))
	}
	main, err := ca.issue(mainSpec)
	if err != nil {
		return err
	}
	// tls-untrusted: right name, signed by a CA no node root trusts.
	untrustedSpec := valid
	untrustedSpec.names = []string{hUntrusted + "." + Domain}
	untrusted, err := other.issue(untrustedSpec)
	if err != nil {
		return err
	}
	// tls-name: trusted CA, but valid only for other.lab.test.
	wrongSpec := valid
	wrongSpec.names = []string{hOtherName + "." + Domain}
	wrong, err := ca.issue(wrongSpec)
	if err != nil {
		return err
	}
	// tls-expired: trusted CA, right name, expired yesterday.
	expiredSpec := leafSpec{names: []string{hExpired + "." + Domain}, notBefore: now.Add(-30 * 24 * time.Hour), notAfter: now.Add(-24 * time.Hour)}
	expired, err := ca.issue(expiredSpec)
	if err != nil {
		return err
	}
	l.certs = &certStore{main: main, byName: map[string]*tls.Certificate{
		hUntrusted + "." + Domain: untrusted,
		hWrongName + "." + Domain: wrong,
		hExpired + "." + Domain:   expired,
	}}
	return nil
}

// bindHTTPS opens the registry, auth, blob and mirror listeners, in that
// order, all on one port.
func (l *Lab) bindHTTPS() ([]net.Listener, error) {
	addrs := []netip.Addr{l.Addrs.Registry, l.Addrs.Auth, l.Addrs.Blob, l.Addrs.Mirror}
	bind := func(port int) ([]net.Listener, int, error) {
		var lns []net.Listener
		for _, a := range addrs {
			ln, err := l.opts.Listen("tcp", netip.AddrPortFrom(a, uint16(port)).String())
			if err != nil {
				for _, x := range lns {
					_ = x.Close()
				}
				return nil, 0, fmt.Errorf("listening on %s port %d: %w", a, port, err)
			}
			if port == 0 {
				port = ln.Addr().(*net.TCPAddr).Port
			}
			lns = append(lns, ln)
		}
		return lns, port, nil
	}
	lns, port, err := bindPort(l.opts.HTTPSPort, 443, bind)
	if err != nil {
		return nil, err
	}
	l.HTTPSPort = port
	for _, ln := range lns {
		l.listeners = append(l.listeners, ln)
	}
	return lns, nil
}

// bindPort binds with fixed when it is set; otherwise with preferred, and
// when that fails with a random port (port 0 for the first socket, the same
// port for the rest), retried a few times in case the rest collide.
func bindPort[T any](fixed, preferred int, bind func(port int) (T, int, error)) (T, int, error) {
	if fixed != 0 {
		return bind(fixed)
	}
	v, port, err := bind(preferred)
	if err == nil {
		return v, port, nil
	}
	for range 10 {
		v, port, err = bind(0)
		if err == nil {
			return v, port, nil
		}
	}
	return v, 0, err
}

// bindDNS opens UDP and TCP sockets for both DNS servers on one port.
func (l *Lab) bindDNS() ([]net.PacketConn, []net.Listener, error) {
	type socks struct {
		udp []net.PacketConn
		tcp []net.Listener
	}
	closeAll := func(s socks) {
		for _, c := range s.udp {
			_ = c.Close()
		}
		for _, c := range s.tcp {
			_ = c.Close()
		}
	}
	bind := func(port int) (socks, int, error) {
		var s socks
		for _, a := range []netip.Addr{l.Addrs.DNS, l.Addrs.DNS2} {
			pc, err := l.opts.ListenPacket("udp", netip.AddrPortFrom(a, uint16(port)).String())
			if err != nil {
				closeAll(s)
				return socks{}, 0, fmt.Errorf("listening on %s udp port %d: %w", a, port, err)
			}
			s.udp = append(s.udp, pc)
			if port == 0 {
				port = pc.LocalAddr().(*net.UDPAddr).Port
			}
			ln, err := l.opts.Listen("tcp", netip.AddrPortFrom(a, uint16(port)).String())
			if err != nil {
				closeAll(s)
				return socks{}, 0, fmt.Errorf("listening on %s tcp port %d: %w", a, port, err)
			}
			s.tcp = append(s.tcp, ln)
		}
		return s, port, nil
	}
	s, port, err := bindPort(l.opts.DNSPort, 53, bind)
	if err != nil {
		return nil, nil, err
	}
	l.DNSPort = port
	for _, c := range s.udp {
		l.listeners = append(l.listeners, c)
	}
	for _, c := range s.tcp {
		l.listeners = append(l.listeners, c)
	}
	return s.udp, s.tcp, nil
}

// buildZones writes the lab zone. Each name's job:
//
//   - registry, auth, blob, mirror: the four live hosts;
//   - refused, authdown, deadblob, deadmirror: the dead address, where
//     nothing listens (route-refused, auth-host-down, blob-refused,
//     mirror-fallback);
//   - untrusted, wrongname, expired: the registry address, where SNI picks
//     a faulty certificate (tls-untrusted, tls-name, tls-expired);
//   - privreg: CNAME privreg.privatelink → CNAME privreg.cloudapp → the
//     public address, the way a registry name resolves when the resolver
//     cannot see the private zone (dns-private-zone);
//   - split: the registry address on the first server, the mirror address
//     (which serves the same registry) on the second (split-answer);
//   - nx, nxblob, hostsonly: absent, so NXDOMAIN (dns-nxdomain,
//     blob-nxdomain; hostsonly exists only in the hosts-entry root's
//     etc/hosts).
func (l *Lab) buildZones() {
	a := l.Addrs
	origin := Domain + "."
	recs := map[string]record{}
	addr := func(short string, ip netip.Addr) { recs[short+"."+origin] = record{addrs: []netip.Addr{ip}} }
	addr(hRegistry, a.Registry)
	addr(hAuth, a.Auth)
	addr(hBlob, a.Blob)
	addr(hMirror, a.Mirror)
	addr(hProxy, a.Mirror)
	addr("ns1", a.DNS)
	for _, h := range []string{hRefused, hAuthDown, hDeadBlob, hDeadMirror, hDeadProxy} {
		addr(h, a.Dead)
	}
	for _, h := range []string{hUntrusted, hWrongName, hExpired, hSplit} {
		addr(h, a.Registry)
	}
	recs["privreg."+origin] = record{cname: "privreg.privatelink." + origin}
	recs["privreg.privatelink."+origin] = record{cname: "privreg.cloudapp." + origin}
	addr("privreg.cloudapp", l.PublicAddr)

	recs2 := make(map[string]record, len(recs))
	for k, v := range recs {
		recs2[k] = v
	}
	recs2[hSplit+"."+origin] = record{addrs: []netip.Addr{a.Mirror}}
	l.zone1 = &zone{origin: origin, records: recs}
	l.zone2 = &zone{origin: origin, records: recs2}
	// What the hosts-entry root's etc/hosts adds; the lab's own dialer
	// knows it too.
	l.hostsFile = map[string]netip.Addr{hHostsOnly + "." + Domain: a.Registry}
}

func (l *Lab) serveDNS(udp []net.PacketConn, tcp []net.Listener) error {
	zones := []*zone{l.zone1, l.zone2}
	for i := range udp {
		for _, srv := range []*dns.Server{
			{PacketConn: udp[i], Handler: zones[i]},
			{Listener: tcp[i], Handler: zones[i], ReadTimeout: 5 * time.Second},
		} {
			started := make(chan struct{})
			srv.NotifyStartedFunc = func() { close(started) }
			l.dnsServers = append(l.dnsServers, srv)
			done := make(chan error, 1)
			l.wg.Add(1)
			go func() {
				defer l.wg.Done()
				done <- srv.ActivateAndServe()
			}()
			select {
			case <-started:
			case err := <-done:
				return fmt.Errorf("serving DNS: %w", err)
			}
		}
	}
	return nil
}

func (l *Lab) newTokenService(now time.Time) (*tokenService, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generating token signing key: %w", err)
	}
	certPEM, err := signerCertPEM(key, now)
	if err != nil {
		return nil, nil, err
	}
	return &tokenService{
		issuer:  hAuth + "." + Domain,
		service: l.Registry,
		key:     key,
		kid:     token.GetJWKThumbprint(&key.PublicKey), // distribution's own: it checks the kid with it
		users:   map[string]string{l.Username: l.Password, "pusher": l.pusherPass},
		public:  map[string]bool{"team": true, "multi": true, "foreign": true},
		now:     time.Now,
		ttl:     l.opts.TokenTTL,
	}, certPEM, nil
}

// newRegistryApp configures distribution's registry: filesystem storage,
// token auth whose realm is the auth host, and the redirect storage
// middleware that answers blob GETs with 307 to the blob host.
func (l *Lab) newRegistryApp(storage, signerFile, service string) (app *handlers.App, err error) {
	secret, err := randomString(16)
	if err != nil {
		return nil, err
	}
	yaml := fmt.Sprintf(`version: 0.1
log:
  level: info
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: %q
  maintenance:
    uploadpurging:
      enabled: false
http:
  secret: %q
auth:
  token:
    realm: %q
    service: %q
    issuer: %q
    rootcertbundle: %q
middleware:
  storage:
    - name: redirect
      options:
        baseurl: %q
`, storage, secret, "https://"+l.host(hAuth)+"/token", service, hAuth+"."+Domain, signerFile, "https://"+l.host(hBlob))
	cfg, err := configuration.Parse(strings.NewReader(yaml))
	if err != nil {
		return nil, fmt.Errorf("parsing registry configuration: %w", err)
	}
	logrus.SetOutput(l.opts.Log)
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("starting registry: %v", r)
		}
	}()
	return handlers.NewApp(context.Background(), cfg), nil
}

// lookup resolves a lab name the way a node with the lab's resolver and the
// hosts-entry root's etc/hosts would (first DNS server, CNAMEs followed).
func (l *Lab) lookup(name string) (netip.Addr, error) {
	name = strings.TrimSuffix(strings.ToLower(name), ".")
	if a, err := netip.ParseAddr(name); err == nil {
		return a, nil
	}
	if a, ok := l.hostsFile[name]; ok {
		return a, nil
	}
	_, addrs, found := l.zone1.lookup(name)
	if !found || len(addrs) == 0 {
		return netip.Addr{}, &net.DNSError{Err: "no such host", Name: name, IsNotFound: true}
	}
	return addrs[0], nil
}

// DialContext dials address (host:port), resolving lab names with the lab's
// own zone instead of any resolver of the machine. It refuses to dial any
// address that is not one of the lab's hosts (so the private-zone scenario's
// public address is never dialled).
func (l *Lab) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("dialing %s: %w", address, err)
	}
	a, err := l.lookup(host)
	if err != nil {
		return nil, &net.OpError{Op: "dial", Net: network, Err: err}
	}
	switch a {
	case l.Addrs.Registry, l.Addrs.Auth, l.Addrs.Blob, l.Addrs.Mirror, l.Addrs.Dead:
	default:
		return nil, fmt.Errorf("dialing %s: %s is not a lab address; the lab dials nothing else", address, a)
	}
	return l.opts.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
}

// Transport returns an HTTP transport that dials lab names to lab addresses
// (see DialContext) and trusts the lab CA, for tests and tools. It does not
// follow the scenario roots: no mirror, no hosts file but the lab's own.
func (l *Lab) Transport() http.RoundTripper { return l.transport }

// Scenario returns the scenario called name.
func (l *Lab) Scenario(name string) (Scenario, bool) {
	for _, s := range l.Scenarios {
		if s.Name == name {
			return s, true
		}
	}
	return Scenario{}, false
}

// Images returns what the lab pushed at start.
func (l *Lab) Images() []Image { return append([]Image(nil), l.images...) }

// Close stops every server, waits for them, and removes the lab directory
// if the lab made it. It is safe to call more than once.
func (l *Lab) Close() error {
	l.closeOnce.Do(func() {
		var errs []error
		for _, srv := range l.httpServers {
			if err := srv.Close(); err != nil {
				errs = append(errs, err)
			}
		}
		for _, srv := range l.dnsServers {
			_ = srv.Shutdown()
		}
		for _, p := range l.proxies {
			p.close()
		}
		for _, c := range l.listeners {
			_ = c.Close() // already closed by their servers, unless Start failed half-way
		}
		l.wg.Wait()
		if l.transport != nil {
			l.transport.CloseIdleConnections()
		}
		if l.app != nil {
			_ = l.app.Shutdown()
		}
		if l.ownDir && l.Dir != "" {
			if err := os.RemoveAll(l.Dir); err != nil {
				errs = append(errs, fmt.Errorf("removing lab directory: %w", err))
			}
		}
		l.closeErr = errors.Join(errs...)
	})
	return l.closeErr
}
