package netpath

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/pullpath/pullpath/internal/nodeview"
)

// startUDPAndTCP serves one address over UDP (via udp) and TCP (via tcp) on
// the same port of 127.0.0.30.
func startUDPAndTCP(t *testing.T, udp, tcp dns.HandlerFunc) (netip.Addr, int) {
	t.Helper()
	ip := netip.MustParseAddr("127.0.0.30")
	for range 20 {
		pc, err := net.ListenPacket("udp", net.JoinHostPort(ip.String(), "0"))
		if err != nil {
			t.Fatal(err)
		}
		port := pc.LocalAddr().(*net.UDPAddr).Port
		ln, err := net.Listen("tcp", pc.LocalAddr().String())
		if err != nil {
			pc.Close()
			continue
		}
		for _, s := range []*dns.Server{{PacketConn: pc, Handler: udp}, {Listener: ln, Handler: tcp}} {
			started := make(chan struct{})
			s.NotifyStartedFunc = func() { close(started) }
			go s.ActivateAndServe()
			<-started
			t.Cleanup(func() { s.Shutdown() })
		}
		return ip, port
	}
	t.Fatal("no port free for both UDP and TCP")
	return ip, 0
}

func answerA(addr string, truncate bool) dns.HandlerFunc {
	return func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		m.RecursionAvailable = true
		if truncate {
			m.Truncated = true
		} else if r.Question[0].Qtype == dns.TypeA {
			rr, _ := dns.NewRR(r.Question[0].Name + " 60 IN A " + addr)
			m.Answer = append(m.Answer, rr)
		}
		_ = w.WriteMsg(m)
	}
}

func TestResolveTCP(t *testing.T) {
	tests := []struct {
		name   string
		useTCP bool
		udp    dns.HandlerFunc
		want   string
	}{
		{name: "truncated UDP answer is retried over TCP", udp: answerA("", true), want: "10.0.0.30"},
		{name: "options use-vc asks over TCP only", useTCP: true, udp: answerA("10.0.0.99", false), want: "10.0.0.30"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ip, port := startUDPAndTCP(t, tt.udp, answerA("10.0.0.30", false))
			v := &nodeview.View{Resolv: nodeview.ResolvConf{Nameservers: []netip.Addr{ip}, Ndots: 1, Timeout: time.Second, Attempts: 1, UseTCP: tt.useTCP}}
			r := &Resolver{View: v, Port: port}
			got := r.Resolve(context.Background(), "registry.example")
			if got.Err != nil || len(got.Addrs) != 1 || got.Addrs[0].String() != tt.want {
				t.Errorf("Resolve = %v, %v, want [%s]", got.Addrs, got.Err, tt.want)
			}
		})
	}
}

func TestResolveNilViewAndEmptyHost(t *testing.T) {
	r := &Resolver{}
	if got := r.Resolve(context.Background(), ""); got.Err == nil || got.Err.Cause != "dns.nxdomain" || len(got.Answers) != 0 {
		t.Errorf("Resolve(\"\") = %v with %d answers, want dns.nxdomain without asking anyone", got.Err, len(got.Answers))
	}
	if got := r.Resolve(context.Background(), "127.0.0.1"); got.Source != "literal" {
		t.Errorf("Resolve(127.0.0.1) with a nil View source = %q, want literal", got.Source)
	}
}
