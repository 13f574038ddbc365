package netpath

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/miekg/dns"

	"github.com/pullpath/pullpath/internal/nodeview"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Resolver resolves a host the way the node's runtime does, from the
// node's view, and keeps every nameserver's answer as evidence.
//
// Each nameserver is asked once per name and type (resolv.conf attempts
// are not repeated: a server silent for one timeout is reported as such),
// and always in file order (rotate, which only changes who is asked first,
// is not applied). A truncated UDP answer is asked again over TCP, and
// options use-vc asks over TCP only, as Go does.
type Resolver struct {
	// View is the node's view (resolv.conf and hosts). A nil View means
	// no hosts file and the resolver defaults (127.0.0.1 and ::1).
	View *nodeview.View
	// Timeout bounds each query; the default is resolv.conf's timeout
	// (5s unless set). The context's deadline caps it.
	Timeout time.Duration
	// Port is the nameservers' port; the default is 53.
	Port int
	// PrivatePrefixes are counted as private next to IsPrivate's ranges
	// when judging a privatelink answer (e.g. a lab network that uses
	// 198.18.0.0/15 as its "private" side). The default is none.
	PrivatePrefixes []netip.Prefix
}

// ResolverAnswer is what one nameserver said to one query.
type ResolverAnswer struct {
	Server string       `json:"server"`          // ip:port asked
	Query  string       `json:"query"`           // "name. A" or "name. AAAA"
	Rcode  string       `json:"rcode,omitempty"` // NOERROR, NXDOMAIN, SERVFAIL, REFUSED, ...; "" without a response
	Addrs  []netip.Addr `json:"addrs"`
	CNAMEs []string     `json:"cnames"`          // the CNAME chain from the query name, targets in order
	Err    string       `json:"error,omitempty"` // the exchange error (timeout, refused), Go's text
	Millis float64      `json:"duration_ms"`
	// Outcome is the answer as the resolver judges it: ok, nxdomain,
	// nodata, servfail, lame, timeout or unreachable.
	Outcome string `json:"outcome"`
}

// DNSResult is the outcome of resolving one host.
type DNSResult struct {
	Host string
	// Source is "literal" (an IP in the reference), "hosts" (/etc/hosts)
	// or "dns".
	Source string
	Addrs  []netip.Addr
	// CNAMEs is the CNAME chain of the answer used.
	CNAMEs []string
	// Answers holds every query to every nameserver, in the order asked:
	// each search-list name, each nameserver, A then AAAA.
	Answers []ResolverAnswer
	// Warnings: dns.hosts-entry, dns.split-answer.
	Warnings []verdict.Warning
	// Err is dns.nxdomain, dns.servfail, dns.timeout, dns.unreachable,
	// dns.no-address or dns.private-zone; nil when the host resolved.
	Err      *verdict.Error
	Duration time.Duration
}

// Outcomes of one answer.
const (
	outcomeOK          = "ok"
	outcomeNXDomain    = "nxdomain"
	outcomeNoData      = "nodata"
	outcomeServFail    = "servfail"
	outcomeLame        = "lame"
	outcomeTimeout     = "timeout"
	outcomeUnreachable = "unreachable"
)

// ednsSize is the UDP payload size Go's resolver advertises.
const ednsSize = 1232

// Resolve resolves host from the node's point of view.
//
//  1. An IP literal is its own answer.
//  2. /etc/hosts wins over DNS (nsswitch "files dns"); the name is still
//     asked of DNS for evidence, and the entry is flagged dns.hosts-entry
//     because it vanishes when the node is replaced (a warning, not a
//     failure: it works today).
//  3. Otherwise each candidate name (search list and ndots applied as
//     Go's resolver applies them) is asked of every nameserver of
//     resolv.conf at once, A and AAAA. The verdict follows Go's resolver:
//     per query type, the first nameserver in resolv.conf order that
//     answers authoritatively (addresses, NXDOMAIN or NODATA) decides;
//     SERVFAIL, REFUSED, a lame answer, a timeout or an unreachable server
//     passes to the next. The first candidate name with addresses wins.
//  4. Nameservers that answer differently give dns.split-answer; a
//     privatelink CNAME chain ending on public addresses is
//     dns.private-zone, a failure: the caller must not connect.
func (r *Resolver) Resolve(ctx context.Context, host string) (res DNSResult) {
	start := time.Now()
	res = DNSResult{Host: host}
	defer func() { res.Duration = time.Since(start) }()

	if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")); err == nil {
		res.Source, res.Addrs = "literal", []netip.Addr{a}
		return res
	}
	rc := nodeview.DefaultResolvConf()
	var hostsAddrs []netip.Addr
	if r.View != nil {
		rc = r.View.Resolv
		hostsAddrs = r.View.LookupHosts(host)
	}
	if len(rc.Nameservers) == 0 {
		rc.Nameservers = nodeview.DefaultNameservers
	}

	lk := r.lookup(ctx, host, rc)
	res.Answers = lk.answers
	if r.View != nil && r.View.ResolvedUpstream != nil && lk.qname != "" {
		// Evidence only: the verdict is the stub's, which is what the
		// runtime asks.
		up := r.askAll(ctx, lk.qname, *r.View.ResolvedUpstream)
		var upAddrs []netip.Addr
		for i := range up {
			up[i].Server += " (systemd-resolved upstream)"
			upAddrs = append(upAddrs, up[i].Addrs...)
		}
		res.Answers = append(res.Answers, up...)
		if lk.err != nil && len(upAddrs) > 0 {
			res.Warnings = append(res.Warnings, verdict.Warning{Code: verdict.CodeDNSStubDiffers,
				Message: fmt.Sprintf("systemd-resolved's stub says %s for %s but its upstream (%s) answers %s: check resolved's per-link DNS servers and domains (resolvectl status) on the node", lk.err.Cause, host, r.View.ResolvedUpstream.Path, joinAddrs(upAddrs))})
		}
	}
	if w := r.splitWarning(host, lk.decider); w != nil {
		res.Warnings = append(res.Warnings, *w)
	}
	if len(hostsAddrs) > 0 {
		res.Source, res.Addrs = "hosts", hostsAddrs
		dnsSays := "DNS gives the same name no address"
		if len(lk.addrs) > 0 {
			dnsSays = "DNS answers " + joinAddrs(lk.addrs)
		} else if lk.err != nil {
			dnsSays = "DNS says " + lk.err.Cause
		}
		res.Warnings = append(res.Warnings, verdict.Warning{Code: verdict.CodeDNSHostsEntry,
			Message: fmt.Sprintf("%s resolves from /etc/hosts (%s), not DNS; the entry vanishes when the node is replaced (%s)", host, joinAddrs(hostsAddrs), dnsSays)})
		return res
	}
	res.Source = "dns"
	res.Addrs, res.CNAMEs, res.Err = lk.addrs, lk.cnames, lk.err
	if res.Err == nil {
		res.Err = r.privateZone(host, lk.qname, res.CNAMEs, res.Addrs)
	}
	return res
}

// lookupResult is the outcome of the DNS part of Resolve.
type lookupResult struct {
	answers []ResolverAnswer
	addrs   []netip.Addr
	cnames  []string
	qname   string           // the candidate name that decided
	decider []ResolverAnswer // the answers for qname
	err     *verdict.Error
}

func (r *Resolver) lookup(ctx context.Context, host string, rc nodeview.ResolvConf) lookupResult {
	var out lookupResult
	names := nameList(host, rc)
	if len(names) == 0 {
		out.err = verdict.Wrap(verdict.CodeDNSNXDomain, verdict.RoleNone, "", &net.DNSError{Err: "no such host", Name: host, IsNotFound: true})
		out.err.Detail = fmt.Sprintf("%q is not a name the resolver looks up", host)
		return out
	}
	original := strings.TrimSuffix(host, ".") + "."
	var firstErr, origErr *verdict.Error
	var firstAnswers, origAnswers []ResolverAnswer
	for _, name := range names {
		answers := r.askAll(ctx, name, rc)
		out.answers = append(out.answers, answers...)
		addrs, cnames, err := decide(host, answers, len(rc.Nameservers))
		if len(addrs) > 0 {
			out.addrs, out.cnames, out.qname, out.decider = addrs, cnames, name, answers
			return out
		}
		if firstErr == nil {
			firstErr, firstAnswers = err, answers
		}
		if name == original {
			origErr, origAnswers = err, answers
		}
	}
	// Go's resolver reports the original name's error when it was asked,
	// else the first.
	out.err, out.decider, out.qname = firstErr, firstAnswers, names[0]
	if origErr != nil {
		out.err, out.decider, out.qname = origErr, origAnswers, original
	}
	return out
}

// nameList is the list of names Go's resolver tries for name, in order
// (net/dnsclient_unix.go nameList): a rooted name alone; otherwise the
// name first when it has at least ndots dots, then each search suffix,
// then the name last when it has fewer.
func nameList(name string, rc nodeview.ResolvConf) []string {
	if name == "" || !validName(strings.TrimSuffix(name, ".")) {
		return nil
	}
	if strings.HasSuffix(name, ".") {
		return []string{name}
	}
	hasNdots := strings.Count(name, ".") >= rc.Ndots
	name += "."
	var names []string
	if hasNdots {
		names = append(names, name)
	}
	for _, s := range rc.Search {
		fqdn := name + strings.TrimSuffix(s, ".") + "."
		if len(fqdn) <= 254 && validName(strings.TrimSuffix(fqdn, ".")) {
			names = append(names, fqdn)
		}
	}
	if !hasNdots {
		names = append(names, name)
	}
	return names
}

// validName reports whether s is a domain name the resolver would send:
// at most 253 characters, labels of 1..63 characters, no .onion.
func validName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, l := range strings.Split(s, ".") {
		if l == "" || len(l) > 63 {
			return false
		}
		for i := 0; i < len(l); i++ {
			if c := l[i]; c <= ' ' || c == 0x7f {
				return false
			}
		}
	}
	return !strings.HasSuffix(strings.ToLower(s), ".onion") && strings.ToLower(s) != "onion"
}

// askAll asks every nameserver for name, A and AAAA, at once, and returns
// the answers in resolv.conf order, A before AAAA.
func (r *Resolver) askAll(ctx context.Context, name string, rc nodeview.ResolvConf) []ResolverAnswer {
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = rc.Timeout
	}
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	port := r.Port
	if port <= 0 {
		port = 53
	}
	qtypes := []uint16{dns.TypeA, dns.TypeAAAA}
	answers := make([]ResolverAnswer, len(rc.Nameservers)*len(qtypes))
	var wg sync.WaitGroup
	for i, ns := range rc.Nameservers {
		server := net.JoinHostPort(ns.String(), strconv.Itoa(port))
		for j, qt := range qtypes {
			wg.Add(1)
			go func(k int, server string, qt uint16) {
				defer wg.Done()
				answers[k] = ask(ctx, server, name, qt, timeout, rc.UseTCP)
			}(i*len(qtypes)+j, server, qt)
		}
	}
	wg.Wait()
	return answers
}

// ask sends one query with a deadline and judges the answer.
func ask(ctx context.Context, server, name string, qtype uint16, timeout time.Duration, useTCP bool) ResolverAnswer {
	ans := ResolverAnswer{Server: server, Query: name + " " + dns.TypeToString[qtype]}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < timeout {
		timeout = max(time.Until(dl), time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	m.SetEdns0(ednsSize, false)
	start := time.Now()
	network := "udp"
	if useTCP {
		network = "tcp"
	}
	c := &dns.Client{Net: network, Timeout: timeout}
	resp, _, err := c.ExchangeContext(ctx, m, server)
	if err == nil && resp.Truncated && network == "udp" {
		c.Net = "tcp"
		resp, _, err = c.ExchangeContext(ctx, m, server)
	}
	ans.Millis = float64(time.Since(start).Microseconds()) / 1000
	if err != nil {
		ans.Err = err.Error()
		switch {
		case isTimeout(err):
			ans.Outcome = outcomeTimeout
		case isRefused(err) || isUnreachable(err):
			ans.Outcome = outcomeUnreachable
		default:
			ans.Outcome = outcomeServFail // Go: cannot unmarshal DNS message → server misbehaving
		}
		return ans
	}
	ans.Rcode = dns.RcodeToString[resp.Rcode]
	if ans.Rcode == "" {
		ans.Rcode = strconv.Itoa(resp.Rcode)
	}
	ans.CNAMEs, ans.Addrs = chase(name, resp.Answer, qtype)
	switch {
	case resp.Rcode == dns.RcodeNameError:
		ans.Outcome = outcomeNXDomain
	case resp.Rcode != dns.RcodeSuccess:
		ans.Outcome = outcomeServFail
	case !resp.Authoritative && !resp.RecursionAvailable && len(resp.Answer) == 0 && len(resp.Extra) == 0:
		// Go (like libresolv) moves on from an invalid referral.
		ans.Outcome = outcomeLame
	case len(ans.Addrs) == 0:
		ans.Outcome = outcomeNoData
	default:
		ans.Outcome = outcomeOK
	}
	return ans
}

// chase returns the CNAME chain starting at name and every address of
// type qtype in the answer section (Go takes every A/AAAA record of the
// answer, whatever its owner).
func chase(name string, rrs []dns.RR, qtype uint16) ([]string, []netip.Addr) {
	targets := map[string]string{}
	var addrs []netip.Addr
	for _, rr := range rrs {
		switch v := rr.(type) {
		case *dns.CNAME:
			targets[strings.ToLower(v.Hdr.Name)] = v.Target
		case *dns.A:
			if qtype == dns.TypeA {
				if a, ok := netip.AddrFromSlice(v.A.To4()); ok {
					addrs = append(addrs, a)
				}
			}
		case *dns.AAAA:
			if qtype == dns.TypeAAAA {
				if a, ok := netip.AddrFromSlice(v.AAAA.To16()); ok {
					addrs = append(addrs, a)
				}
			}
		}
	}
	var chain []string
	cur := strings.ToLower(name)
	for range 16 {
		t, ok := targets[cur]
		if !ok {
			break
		}
		chain = append(chain, t)
		cur = strings.ToLower(t)
	}
	return chain, addrs
}

// decide applies Go's per-query-type server walk to the answers for one
// name and returns the addresses (A then AAAA), the CNAME chain of the
// deciding answer, or the error Go would report.
func decide(host string, answers []ResolverAnswer, nservers int) ([]netip.Addr, []string, *verdict.Error) {
	var (
		addrs  []netip.Addr
		cnames []string
		errs   []*ResolverAnswer
	)
	for qt := 0; qt < 2; qt++ {
		var last *ResolverAnswer
		var final *ResolverAnswer
		for s := 0; s < nservers; s++ {
			a := &answers[s*2+qt]
			if a.Outcome == outcomeOK || a.Outcome == outcomeNXDomain || a.Outcome == outcomeNoData {
				final = a
				break
			}
			last = a
		}
		switch {
		case final != nil && final.Outcome == outcomeOK:
			addrs = append(addrs, final.Addrs...)
			if cnames == nil {
				cnames = final.CNAMEs
			}
		case final != nil:
			errs = append(errs, final)
		case last != nil:
			errs = append(errs, last)
		}
	}
	if len(addrs) > 0 {
		return addrs, cnames, nil
	}
	if len(errs) == 0 {
		return nil, nil, verdict.Errorf(verdict.CodeDNSNoAddress, verdict.RoleNone, "", "no nameserver to ask")
	}
	// The most definite statement wins.
	rank := map[string]int{outcomeNXDomain: 0, outcomeNoData: 1, outcomeServFail: 2, outcomeLame: 3, outcomeUnreachable: 4, outcomeTimeout: 5}
	sort.SliceStable(errs, func(i, j int) bool { return rank[errs[i].Outcome] < rank[errs[j].Outcome] })
	return nil, nil, answerError(host, errs[0])
}

// answerError is the *verdict.Error for a failing answer, wrapping the
// *net.DNSError Go's resolver would return (so the evidence reads like
// containerd's log).
func answerError(host string, a *ResolverAnswer) *verdict.Error {
	de := &net.DNSError{Name: host, Server: a.Server}
	var cause, detail string
	switch a.Outcome {
	case outcomeNXDomain:
		cause, de.Err, de.IsNotFound = verdict.CodeDNSNXDomain, "no such host", true
		detail = fmt.Sprintf("%s answered NXDOMAIN for %s", a.Server, strings.Fields(a.Query)[0])
	case outcomeNoData:
		cause, de.Err, de.IsNotFound = verdict.CodeDNSNoAddress, "no such host", true
		detail = fmt.Sprintf("%s knows the name but has no record for %s", a.Server, a.Query)
	case outcomeServFail, outcomeLame:
		cause, de.Err, de.IsTemporary = verdict.CodeDNSServFail, "server misbehaving", true
		if a.Err != "" {
			de.Err = a.Err
		}
		detail = fmt.Sprintf("%s answered %s for %s", a.Server, orDash(a.Rcode, a.Outcome), a.Query)
	case outcomeTimeout:
		cause, de.Err, de.IsTimeout, de.IsTemporary = verdict.CodeDNSTimeout, a.Err, true, true
		detail = fmt.Sprintf("no answer from %s for %s", a.Server, a.Query)
	default:
		cause, de.Err, de.IsTemporary = verdict.CodeDNSUnreachable, a.Err, true
		detail = fmt.Sprintf("%s cannot be reached", a.Server)
	}
	e := verdict.Wrap(cause, verdict.RoleNone, "", de)
	e.Detail = detail
	return e
}

func orDash(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// splitWarning compares what the nameservers said for the deciding name:
// servers that answered (any rcode) but disagree give dns.split-answer.
func (r *Resolver) splitWarning(host string, answers []ResolverAnswer) *verdict.Warning {
	var parts []string
	seen := map[string]bool{}
	for i := 0; i+1 < len(answers); i += 2 {
		a, aaaa := answers[i], answers[i+1]
		if !responded(a) && !responded(aaaa) {
			continue
		}
		key, shown := summary(a, aaaa)
		parts = append(parts, a.Server+" → "+shown)
		seen[key] = true
	}
	if len(seen) < 2 {
		return nil
	}
	return &verdict.Warning{Code: verdict.CodeDNSSplitAnswer,
		Message: fmt.Sprintf("the node's nameservers disagree about %s: %s; which one the runtime asks decides the pull", host, strings.Join(parts, "; "))}
}

func responded(a ResolverAnswer) bool { return a.Rcode != "" }

// summary is what a server said for A and AAAA together: key compares
// (addresses, NXDOMAIN, no address, or failure whatever its rcode), shown
// is for people.
func summary(a, aaaa ResolverAnswer) (key, shown string) {
	var addrs []netip.Addr
	var rcodes []string
	nx, failed := false, false
	for _, x := range []ResolverAnswer{a, aaaa} {
		addrs = append(addrs, x.Addrs...)
		if x.Rcode != "" && x.Rcode != "NOERROR" && !slices.Contains(rcodes, x.Rcode) {
			rcodes = append(rcodes, x.Rcode)
		}
		nx = nx || x.Outcome == outcomeNXDomain
		failed = failed || x.Outcome == outcomeServFail || x.Outcome == outcomeLame
	}
	switch {
	case len(addrs) > 0:
		slices.SortFunc(addrs, func(x, y netip.Addr) int { return x.Compare(y) })
		s := joinAddrs(slices.Compact(addrs))
		return s, s
	case nx:
		return "NXDOMAIN", "NXDOMAIN"
	case failed:
		if len(rcodes) == 0 {
			rcodes = []string{"lame answer"}
		}
		return "failure", strings.Join(rcodes, "/")
	}
	return "no address", "no address"
}

// privateZone fails a public answer reached through a privatelink name.
func (r *Resolver) privateZone(host, qname string, cnames []string, addrs []netip.Addr) *verdict.Error {
	via := ""
	for _, n := range append([]string{qname}, cnames...) {
		for _, l := range strings.Split(strings.TrimSuffix(n, "."), ".") {
			if strings.EqualFold(l, "privatelink") {
				via = strings.TrimSuffix(n, ".")
			}
		}
		if via != "" {
			break
		}
	}
	if via == "" || len(addrs) == 0 {
		return nil
	}
	for _, a := range addrs {
		if r.isPrivate(a) {
			return nil
		}
	}
	return verdict.Errorf(verdict.CodeDNSPrivateZone, verdict.RoleNone, "",
		"%s resolves through %s to public address %s: the private zone is not visible to the node's resolver", host, via, joinAddrs(addrs))
}

func (r *Resolver) isPrivate(a netip.Addr) bool {
	if IsPrivate(a) {
		return true
	}
	for _, p := range r.PrivatePrefixes {
		if p.Contains(a.Unmap()) {
			return true
		}
	}
	return false
}

func joinAddrs(as []netip.Addr) string {
	s := make([]string, len(as))
	for i, a := range as {
		s[i] = a.String()
	}
	return strings.Join(s, ", ")
}

// isUnreachable reports a network or host unreachable error (ENETUNREACH,
// EHOSTUNREACH), also as text.
func isUnreachable(err error) bool {
	if errors.Is(err, syscall.ENETUNREACH) || errors.Is(err, syscall.EHOSTUNREACH) {
		return true
	}
	s := err.Error()
	return strings.Contains(s, "network is unreachable") || strings.Contains(s, "no route to host")
}
