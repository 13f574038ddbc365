package lab

import (
	"net"
	"net/netip"
	"strings"

	"github.com/miekg/dns"
)

// record is one name of the lab zone: addresses or a CNAME target (FQDN).
type record struct {
	addrs []netip.Addr
	cname string
}

// zone is the authoritative data one lab DNS server serves.
type zone struct {
	origin  string            // "lab.test."
	records map[string]record // FQDN, lower case
}

func fqdn(name string) string { return dns.Fqdn(strings.ToLower(name)) }

// lookup follows CNAMEs inside the zone and returns the chain of CNAME
// targets and the final addresses. found is false when the name (or the end
// of the chain) does not exist.
func (z *zone) lookup(name string) (chain []string, addrs []netip.Addr, found bool) {
	name = fqdn(name)
	for range 8 {
		rec, ok := z.records[name]
		if !ok {
			return chain, nil, false
		}
		if rec.cname == "" {
			return chain, rec.addrs, true
		}
		chain = append(chain, rec.cname)
		name = rec.cname
	}
	return chain, nil, false
}

func (z *zone) soa() dns.RR {
	return &dns.SOA{
		Hdr:     dns.RR_Header{Name: z.origin, Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: 60},
		Ns:      "ns1." + z.origin,
		Mbox:    "hostmaster." + z.origin,
		Serial:  1,
		Refresh: 3600, Retry: 600, Expire: 86400, Minttl: 30,
	}
}

// ServeDNS answers authoritatively for the zone: A records (and CNAME chains
// inside the zone, written into the answer like a recursive resolver would),
// NODATA for AAAA and other types of existing names, NXDOMAIN for names the
// zone lacks, and REFUSED for names outside the zone (the lab resolver never
// recurses to the internet).
func (z *zone) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(req)
	m.Authoritative = true
	m.RecursionAvailable = true
	if len(req.Question) != 1 {
		m.Rcode = dns.RcodeFormatError
		_ = w.WriteMsg(m)
		return
	}
	q := req.Question[0]
	name := fqdn(q.Name)
	if name != z.origin && !strings.HasSuffix(name, "."+z.origin) {
		m.Rcode = dns.RcodeRefused
		_ = w.WriteMsg(m)
		return
	}
	switch {
	case name == z.origin:
		switch q.Qtype {
		case dns.TypeSOA:
			m.Answer = append(m.Answer, z.soa())
		case dns.TypeNS:
			m.Answer = append(m.Answer, &dns.NS{Hdr: dns.RR_Header{Name: z.origin, Rrtype: dns.TypeNS, Class: dns.ClassINET, Ttl: 60}, Ns: "ns1." + z.origin})
		default:
			m.Ns = append(m.Ns, z.soa())
		}
	default:
		chain, addrs, found := z.lookup(name)
		owner := name
		for _, target := range chain {
			m.Answer = append(m.Answer, &dns.CNAME{Hdr: dns.RR_Header{Name: owner, Rrtype: dns.TypeCNAME, Class: dns.ClassINET, Ttl: 30}, Target: target})
			owner = target
		}
		if !found {
			// RFC 6604: the rcode speaks of the last name of the chain.
			m.Rcode = dns.RcodeNameError
			m.Ns = append(m.Ns, z.soa())
			break
		}
		for _, a := range addrs {
			switch {
			case q.Qtype == dns.TypeA && a.Is4():
				m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: owner, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 30}, A: net.IP(a.AsSlice())})
			case q.Qtype == dns.TypeAAAA && a.Is6() && !a.Is4In6():
				m.Answer = append(m.Answer, &dns.AAAA{Hdr: dns.RR_Header{Name: owner, Rrtype: dns.TypeAAAA, Class: dns.ClassINET, Ttl: 30}, AAAA: net.IP(a.AsSlice())})
			}
		}
		if len(m.Answer) == len(chain) {
			m.Ns = append(m.Ns, z.soa())
		}
	}
	_ = w.WriteMsg(m)
}

var _ dns.Handler = (*zone)(nil)
