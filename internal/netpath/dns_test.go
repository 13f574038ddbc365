package netpath

import (
	"context"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/miekg/dns"

	"github.com/pullpath/pullpath/internal/nodeview"
	"github.com/pullpath/pullpath/internal/verdict"
)

// behaviour is how one test nameserver answers.
type behaviour struct {
	kind  string   // "zone" (default), "rcode", "silent", "closed", "lame"
	rcode int      // for "rcode"
	zone  []string // RRs in presentation format, for "zone"
}

// lab is a set of nameservers on 127.0.0.x sharing one port.
type lab struct {
	port  int
	addrs []netip.Addr
}

// startLab starts one nameserver per behaviour on 127.0.0.(10+i), all on
// the same random port.
func startLab(t testing.TB, bs ...behaviour) lab {
	t.Helper()
	for attempt := 0; attempt < 20; attempt++ {
		l, ok := tryLab(t, bs)
		if ok {
			return l
		}
	}
	t.Fatal("no common free UDP port on 127.0.0.10+")
	return lab{}
}

func tryLab(t testing.TB, bs []behaviour) (lab, bool) {
	var l lab
	var conns []net.PacketConn
	closeAll := func() {
		for _, c := range conns {
			c.Close()
		}
	}
	for i := range bs {
		ip := netip.AddrFrom4([4]byte{127, 0, 0, byte(10 + i)})
		pc, err := net.ListenPacket("udp", net.JoinHostPort(ip.String(), strconv.Itoa(l.port)))
		if err != nil {
			closeAll()
			return lab{}, false
		}
		if l.port == 0 {
			l.port = pc.LocalAddr().(*net.UDPAddr).Port
		}
		conns = append(conns, pc)
		l.addrs = append(l.addrs, ip)
	}
	for i, b := range bs {
		pc := conns[i]
		switch b.kind {
		case "closed":
			pc.Close() // ICMP port unreachable from now on
		case "silent":
			t.Cleanup(func() { pc.Close() })
		default:
			srv := &dns.Server{PacketConn: pc, Handler: handler(b)}
			started := make(chan struct{})
			srv.NotifyStartedFunc = func() { close(started) }
			go srv.ActivateAndServe()
			<-started
			t.Cleanup(func() { srv.Shutdown() })
		}
	}
	return l, true
}

func handler(b behaviour) dns.HandlerFunc {
	var rrs []dns.RR
	for _, s := range b.zone {
		rr, err := dns.NewRR(s)
		if err != nil {
			panic(err)
		}
		rrs = append(rrs, rr)
	}
	return func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		q := r.Question[0]
		switch b.kind {
		case "rcode":
			m.RecursionAvailable = true
			m.Rcode = b.rcode
		case "lame":
			m.RecursionAvailable = false
		default:
			m.RecursionAvailable = true
			ans, exists := lookupZone(rrs, q.Name, q.Qtype)
			m.Answer = ans
			if !exists {
				m.Rcode = dns.RcodeNameError
			}
		}
		_ = w.WriteMsg(m)
	}
}

func lookupZone(rrs []dns.RR, name string, qtype uint16) ([]dns.RR, bool) {
	var ans []dns.RR
	exists := false
	cur := name
	for range 8 {
		next := ""
		for _, rr := range rrs {
			if !strings.EqualFold(rr.Header().Name, cur) {
				continue
			}
			exists = true
			if c, ok := rr.(*dns.CNAME); ok {
				ans = append(ans, rr)
				next = c.Target
			} else if rr.Header().Rrtype == qtype {
				ans = append(ans, rr)
			}
		}
		if next == "" {
			break
		}
		cur = next
	}
	return ans, exists
}

func (l lab) resolver(search []string, hosts string) *Resolver {
	v := &nodeview.View{Resolv: nodeview.ResolvConf{Nameservers: l.addrs, Search: search, Ndots: 1, Timeout: 5 * time.Second, Attempts: 2}}
	if hosts != "" {
		v.Hosts, _ = nodeview.ParseHosts(strings.NewReader(hosts))
	}
	return &Resolver{View: v, Port: l.port, Timeout: 300 * time.Millisecond}
}

func zone(rrs ...string) behaviour { return behaviour{zone: rrs} }

func TestResolve(t *testing.T) {
	const reg = "registry.example."
	okZone := zone(reg+" 60 IN A 10.0.0.5", reg+" 60 IN AAAA fd00::5")
	tests := []struct {
		name      string
		servers   []behaviour
		host      string
		search    []string
		hosts     string
		wantAddrs []string
		wantCause string
		wantSrc   string
		wantCNAME []string
		wantWarn  []string
		wantEvid  string // substring of the evidence
		wantQ     []string
	}{
		{name: "answer", servers: []behaviour{okZone}, host: "registry.example", wantAddrs: []string{"10.0.0.5", "fd00::5"}, wantSrc: "dns"},
		{name: "nxdomain", servers: []behaviour{zone()}, host: "registry.example", wantCause: "dns.nxdomain", wantSrc: "dns", wantEvid: "no such host"},
		{name: "servfail everywhere", servers: []behaviour{{kind: "rcode", rcode: dns.RcodeServerFailure}, {kind: "rcode", rcode: dns.RcodeRefused}}, host: "registry.example", wantCause: "dns.servfail", wantSrc: "dns", wantEvid: "server misbehaving"},
		{name: "servfail then answer: the second server decides", servers: []behaviour{{kind: "rcode", rcode: dns.RcodeServerFailure}, okZone}, host: "registry.example", wantAddrs: []string{"10.0.0.5", "fd00::5"}, wantSrc: "dns", wantWarn: []string{"dns.split-answer"}},
		{name: "timeout", servers: []behaviour{{kind: "silent"}}, host: "registry.example", wantCause: "dns.timeout", wantSrc: "dns", wantEvid: "timeout"},
		{name: "timeout then answer", servers: []behaviour{{kind: "silent"}, okZone}, host: "registry.example", wantAddrs: []string{"10.0.0.5", "fd00::5"}, wantSrc: "dns"},
		{name: "unreachable nameserver", servers: []behaviour{{kind: "closed"}}, host: "registry.example", wantCause: "dns.unreachable", wantSrc: "dns", wantEvid: "connection refused"},
		{name: "nodata", servers: []behaviour{zone(reg + " 60 IN TXT \"hello\"")}, host: "registry.example", wantCause: "dns.no-address", wantSrc: "dns", wantEvid: "no such host"},
		{name: "lame referral moves on", servers: []behaviour{{kind: "lame"}}, host: "registry.example", wantCause: "dns.servfail", wantSrc: "dns"},
		{
			name: "privatelink to a public address is a failure",
			servers: []behaviour{zone("myreg.azurecr.io. 60 IN CNAME myreg.privatelink.azurecr.io.",
				"myreg.privatelink.azurecr.io. 60 IN CNAME weu.fe.azcr.io.", "weu.fe.azcr.io. 60 IN A 20.61.0.7")},
			host: "myreg.azurecr.io", wantAddrs: []string{"20.61.0.7"}, wantCause: "dns.private-zone", wantSrc: "dns",
			wantCNAME: []string{"myreg.privatelink.azurecr.io.", "weu.fe.azcr.io."},
		},
		{
			name: "privatelink to a private address works",
			servers: []behaviour{zone("myreg.azurecr.io. 60 IN CNAME myreg.privatelink.azurecr.io.",
				"myreg.privatelink.azurecr.io. 60 IN A 10.1.2.3")},
			host: "myreg.azurecr.io", wantAddrs: []string{"10.1.2.3"}, wantSrc: "dns", wantCNAME: []string{"myreg.privatelink.azurecr.io."},
		},
		{
			name:    "split answers: the first server decides, with a warning",
			servers: []behaviour{zone(reg + " 60 IN A 10.0.0.5"), zone(reg + " 60 IN A 20.0.0.9")},
			host:    "registry.example", wantAddrs: []string{"10.0.0.5"}, wantSrc: "dns", wantWarn: []string{"dns.split-answer"},
		},
		{
			name:    "NXDOMAIN from the first server stops the walk",
			servers: []behaviour{zone(), okZone},
			host:    "registry.example", wantCause: "dns.nxdomain", wantSrc: "dns", wantWarn: []string{"dns.split-answer"},
		},
		{
			name:    "/etc/hosts wins and is flagged",
			servers: []behaviour{zone()},
			host:    "Registry.Example.", hosts: "10.9.9.9 registry.example\n",
			wantAddrs: []string{"10.9.9.9"}, wantSrc: "hosts", wantWarn: []string{"dns.hosts-entry"},
			wantQ: []string{"Registry.Example. A", "Registry.Example. AAAA"},
		},
		{name: "IP literal", servers: []behaviour{zone()}, host: "10.1.2.3", wantAddrs: []string{"10.1.2.3"}, wantSrc: "literal"},
		{name: "IPv6 literal in brackets", servers: []behaviour{zone()}, host: "[fd00::1]", wantAddrs: []string{"fd00::1"}, wantSrc: "literal"},
		{
			name:    "search list before a name with fewer than ndots dots",
			servers: []behaviour{zone("registry.corp.example. 60 IN A 10.0.0.7")},
			host:    "registry", search: []string{"corp.example", "other.example"},
			wantAddrs: []string{"10.0.0.7"}, wantSrc: "dns",
			wantQ: []string{"registry.corp.example. A", "registry.corp.example. AAAA"},
		},
		{
			name:    "name with dots first, then the search list; the original name's error is reported",
			servers: []behaviour{zone()},
			host:    "registry.example", search: []string{"corp.example"},
			wantCause: "dns.nxdomain", wantSrc: "dns", wantEvid: "lookup registry.example on",
			wantQ: []string{"registry.example. A", "registry.example. AAAA", "registry.example.corp.example. A", "registry.example.corp.example. AAAA"},
		},
		{name: "invalid name", servers: []behaviour{zone()}, host: "bad..name", wantCause: "dns.nxdomain", wantSrc: "dns"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := startLab(t, tt.servers...)
			r := l.resolver(tt.search, tt.hosts)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			got := r.Resolve(ctx, tt.host)

			var gotAddrs []string
			for _, a := range got.Addrs {
				gotAddrs = append(gotAddrs, a.String())
			}
			if diff := cmp.Diff(tt.wantAddrs, gotAddrs, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Resolve(%q) addrs (-want +got):\n%s", tt.host, diff)
			}
			gotCause := ""
			if got.Err != nil {
				gotCause = got.Err.Cause
				if got.Err.Layer != verdict.LayerDNS {
					t.Errorf("Resolve(%q) error layer = %v, want dns", tt.host, got.Err.Layer)
				}
			}
			if gotCause != tt.wantCause {
				t.Errorf("Resolve(%q) cause = %q, want %q (err %v)", tt.host, gotCause, tt.wantCause, got.Err)
			}
			if tt.wantEvid != "" && (got.Err == nil || got.Err.Err == nil || !strings.Contains(got.Err.Err.Error(), tt.wantEvid)) {
				t.Errorf("Resolve(%q) evidence = %v, want it to contain %q", tt.host, got.Err, tt.wantEvid)
			}
			if got.Source != "literal" && got.Duration <= 0 {
				t.Errorf("Resolve(%q) duration = %v, want the time spent", tt.host, got.Duration)
			}
			if got.Source != tt.wantSrc {
				t.Errorf("Resolve(%q) source = %q, want %q", tt.host, got.Source, tt.wantSrc)
			}
			if diff := cmp.Diff(tt.wantCNAME, got.CNAMEs, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Resolve(%q) CNAMEs (-want +got):\n%s", tt.host, diff)
			}
			var warns []string
			for _, w := range got.Warnings {
				warns = append(warns, w.Code)
			}
			if diff := cmp.Diff(tt.wantWarn, warns, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Resolve(%q) warnings (-want +got):\n%s", tt.host, diff)
			}
			if tt.wantQ != nil {
				seen := map[string]bool{}
				var qs []string
				for _, a := range got.Answers {
					if !seen[a.Query] {
						seen[a.Query] = true
						qs = append(qs, a.Query)
					}
				}
				if diff := cmp.Diff(tt.wantQ, qs); diff != "" {
					t.Errorf("Resolve(%q) queries (-want +got):\n%s", tt.host, diff)
				}
			}
			if got.Source == "dns" && got.Err != nil && got.Err.Cause != "dns.nxdomain" || got.Source == "dns" && len(tt.servers) > 0 && tt.host != "bad..name" {
				if len(got.Answers) < 2*len(tt.servers) {
					t.Errorf("Resolve(%q) kept %d answers, want every server asked for A and AAAA (%d)", tt.host, len(got.Answers), 2*len(tt.servers))
				}
			}
		})
	}
}

func TestResolveAnswersEvidence(t *testing.T) {
	l := startLab(t, zone("registry.example. 60 IN A 10.0.0.5"), behaviour{kind: "rcode", rcode: dns.RcodeRefused}, behaviour{kind: "closed"})
	r := l.resolver(nil, "")
	got := r.Resolve(context.Background(), "registry.example")
	type row struct{ Server, Query, Rcode, Outcome string }
	var rows []row
	for _, a := range got.Answers {
		rows = append(rows, row{a.Server, a.Query, a.Rcode, a.Outcome})
		if a.Outcome == outcomeUnreachable && !strings.Contains(a.Err, "refused") {
			t.Errorf("answer from closed port Err = %q, want Go's connection refused", a.Err)
		}
	}
	p := strconv.Itoa(l.port)
	want := []row{
		{"127.0.0.10:" + p, "registry.example. A", "NOERROR", "ok"},
		{"127.0.0.10:" + p, "registry.example. AAAA", "NOERROR", "nodata"},
		{"127.0.0.11:" + p, "registry.example. A", "REFUSED", "servfail"},
		{"127.0.0.11:" + p, "registry.example. AAAA", "REFUSED", "servfail"},
		{"127.0.0.12:" + p, "registry.example. A", "", "unreachable"},
		{"127.0.0.12:" + p, "registry.example. AAAA", "", "unreachable"},
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("Resolve answers (-want +got):\n%s", diff)
	}
}

func TestResolveHonoursContext(t *testing.T) {
	l := startLab(t, behaviour{kind: "silent"})
	r := l.resolver(nil, "")
	r.Timeout = time.Hour
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(1)
	var got DNSResult
	go func() { defer wg.Done(); got = r.Resolve(ctx, "registry.example") }()
	wg.Wait()
	if got.Err == nil || got.Err.Cause != "dns.timeout" {
		t.Errorf("Resolve with a 200ms context and a silent server = %v, want dns.timeout", got.Err)
	}
}

func TestNameList(t *testing.T) {
	rc := func(ndots int, search ...string) nodeview.ResolvConf {
		return nodeview.ResolvConf{Ndots: ndots, Search: search}
	}
	tests := []struct {
		name string
		rc   nodeview.ResolvConf
		want []string
	}{
		{"registry.example", rc(1), []string{"registry.example."}},
		{"registry.example.", rc(5, "a.example"), []string{"registry.example."}},
		{"registry.example", rc(1, "a.example", "b.example."), []string{"registry.example.", "registry.example.a.example.", "registry.example.b.example."}},
		{"registry.example", rc(5, "svc.cluster.local"), []string{"registry.example.svc.cluster.local.", "registry.example."}},
		{"registry", rc(1, "corp.example"), []string{"registry.corp.example.", "registry."}},
		{"", rc(1), nil},
		{"a..b", rc(1), nil},
		{"hidden.onion", rc(1), nil},
		{strings.Repeat("a", 64) + ".example", rc(1), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := nameList(tt.name, tt.rc)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("nameList(%q) (-want +got):\n%s", tt.name, diff)
			}
		})
	}
}

func TestIsPrivate(t *testing.T) {
	tests := []struct {
		addr string
		want bool
	}{
		{"10.1.2.3", true}, {"172.16.0.1", true}, {"172.32.0.1", false}, {"192.168.1.1", true},
		{"100.64.0.1", true}, {"100.127.255.255", true}, {"100.128.0.1", false},
		{"127.0.0.1", true}, {"169.254.169.254", true}, {"fd00::1", true}, {"fc00::1", true},
		{"fe80::1", true}, {"::1", true}, {"::ffff:10.0.0.1", true}, {"20.61.0.7", false},
		{"2001:db8::1", false}, {"8.8.8.8", false}, {"198.18.0.1", false},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			if got := IsPrivate(netip.MustParseAddr(tt.addr)); got != tt.want {
				t.Errorf("IsPrivate(%s) = %v, want %v", tt.addr, got, tt.want)
			}
		})
	}
	if IsPrivate(netip.Addr{}) {
		t.Errorf("IsPrivate(zero Addr) = true, want false")
	}
}

func TestPrivatePrefixes(t *testing.T) {
	l := startLab(t, zone("myreg.azurecr.io. 60 IN CNAME myreg.privatelink.azurecr.io.", "myreg.privatelink.azurecr.io. 60 IN A 198.18.5.5"))
	r := l.resolver(nil, "")
	if got := r.Resolve(context.Background(), "myreg.azurecr.io"); got.Err == nil || got.Err.Cause != "dns.private-zone" {
		t.Fatalf("Resolve without PrivatePrefixes = %v, want dns.private-zone", got.Err)
	}
	r.PrivatePrefixes = []netip.Prefix{netip.MustParsePrefix("198.18.0.0/15")}
	if got := r.Resolve(context.Background(), "myreg.azurecr.io"); got.Err != nil {
		t.Fatalf("Resolve with 198.18.0.0/15 private = %v, want success", got.Err)
	}
}

// TestResolvedUpstreamEvidence: behind systemd-resolved's stub the verdict
// is the stub's (what the runtime asks), its upstreams are asked too for
// evidence, and a stub failure where an upstream answers is warned.
func TestResolvedUpstreamEvidence(t *testing.T) {
	const reg = "registry.example."
	l := startLab(t, behaviour{kind: "rcode", rcode: dns.RcodeNameError}, zone(reg+" 60 IN A 10.0.0.5"))
	r := &Resolver{Port: l.port, Timeout: 300 * time.Millisecond, View: &nodeview.View{
		Resolv:           nodeview.ResolvConf{Nameservers: l.addrs[:1], Ndots: 1},
		ResolvedUpstream: &nodeview.ResolvConf{Nameservers: l.addrs[1:], Ndots: 1, Path: "/run/systemd/resolve/resolv.conf"},
	}}
	res := r.Resolve(context.Background(), "registry.example")
	if res.Err == nil || res.Err.Cause != "dns.nxdomain" {
		t.Fatalf("Resolve = %+v, want the stub's dns.nxdomain", res.Err)
	}
	upstream := 0
	for _, a := range res.Answers {
		if strings.Contains(a.Server, "systemd-resolved upstream") {
			upstream++
		}
	}
	if upstream == 0 {
		t.Errorf("answers %+v carry no upstream evidence", res.Answers)
	}
	warned := false
	for _, w := range res.Warnings {
		warned = warned || w.Code == "dns.stub-differs"
	}
	if !warned {
		t.Errorf("warnings %+v lack dns.stub-differs", res.Warnings)
	}
}
