package lab

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"
)

// hProxy is the lab's HTTPS proxy (CONNECT), on the mirror address: the
// kind of proxy a corporate network puts between nodes and registries. It
// listens on two ports: ProxyPort tunnels to lab hosts, DenyProxyPort
// refuses every tunnel with 403, as a proxy whose allowlist lacks the
// registry does.
const (
	hProxy     = "proxy"
	hDeadProxy = "deadproxy"
)

// proxy is a CONNECT-only HTTP proxy. It resolves and dials with dial (the
// lab's own names), never anything else.
type proxy struct {
	dial  func(ctx context.Context, network, addr string) (net.Conn, error)
	allow bool

	mu    sync.Mutex
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

var _ http.Handler = (*proxy)(nil)

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodConnect {
		http.Error(w, "this proxy only tunnels (CONNECT)", http.StatusMethodNotAllowed)
		return
	}
	if !p.allow {
		http.Error(w, "CONNECT to "+r.Host+" is forbidden by the proxy's policy", http.StatusForbidden)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	up, err := p.dial(ctx, "tcp", r.Host)
	cancel()
	if err != nil {
		http.Error(w, "the proxy cannot reach "+r.Host+": "+err.Error(), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "no hijacking", http.StatusInternalServerError)
		return
	}
	down, buf, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	if _, err := down.Write([]byte("HTTP/1.1 200 Connection Established\r\n\r\n")); err != nil {
		up.Close()
		down.Close()
		return
	}
	if !p.track(up, down) {
		return
	}
	p.wg.Add(2)
	go func() {
		defer p.wg.Done()
		_, _ = io.Copy(up, buf)
		if c, ok := up.(interface{ CloseWrite() error }); ok {
			_ = c.CloseWrite()
		}
	}()
	go func() {
		defer p.wg.Done()
		_, _ = io.Copy(down, up)
		p.untrack(up, down)
	}()
}

// track registers the tunnel's two connections; false when the proxy is
// closed already.
func (p *proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns == nil {
		for _, c := range cs {
			c.Close()
		}
		return false
	}
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *proxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		c.Close()
		delete(p.conns, c)
	}
}

// close ends every tunnel (http.Server.Close does not know hijacked
// connections) and waits for their copies.
func (p *proxy) close() {
	p.mu.Lock()
	for c := range p.conns {
		c.Close()
	}
	p.conns = nil
	p.mu.Unlock()
	p.wg.Wait()
}

// startProxies listens on two random ports of the mirror address and
// serves the allowing and the denying proxy.
func (l *Lab) startProxies() error {
	for i, allow := range []bool{true, false} {
		ln, err := l.opts.Listen("tcp", netip.AddrPortFrom(l.Addrs.Mirror, 0).String())
		if err != nil {
			return err
		}
		l.listeners = append(l.listeners, ln)
		port := ln.Addr().(*net.TCPAddr).Port
		if i == 0 {
			l.ProxyPort = port
		} else {
			l.DenyProxyPort = port
		}
		p := &proxy{dial: l.DialContext, allow: allow, conns: map[net.Conn]struct{}{}}
		l.proxies = append(l.proxies, p)
		srv := &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
		l.httpServers = append(l.httpServers, srv)
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			_ = srv.Serve(ln)
		}()
	}
	return nil
}
