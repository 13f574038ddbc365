package azure

import (
	"net/netip"
	"sort"
	"strconv"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/network/armnetwork/v9"
)

// flow is the connection the runtime opens: TCP from the node subnet to an
// endpoint address on port 443.
type flow struct {
	src     []string // the node subnet's prefixes
	dst     netip.Addr
	port    int
	vnet    []string // address space the VirtualNetwork tag covers
	private bool
}

// portMatches reads an NSG port expression: "*", "443", "400-500".
func portMatches(expr string, port int) bool {
	expr = strings.TrimSpace(expr)
	if expr == "*" {
		return true
	}
	lo, hi, isRange := strings.Cut(expr, "-")
	a, err := strconv.Atoi(lo)
	if err != nil {
		return false
	}
	b := a
	if isRange {
		if b, err = strconv.Atoi(hi); err != nil {
			return false
		}
	}
	return port >= a && port <= b
}

// addrMatches reads an NSG address expression against one address: "*",
// a CIDR, an address, or the VirtualNetwork and Internet tags when Azure
// did not expand them.
func addrMatches(expr string, ip netip.Addr, f flow) bool {
	switch strings.ToLower(strings.TrimSpace(expr)) {
	case "*", "0.0.0.0/0", "any":
		return true
	case "virtualnetwork":
		return prefixesContain(f.vnet, ip)
	case "internet":
		return !f.private
	}
	if p, err := netip.ParsePrefix(expr); err == nil {
		return p.Contains(ip)
	}
	if a, err := netip.ParseAddr(expr); err == nil {
		return a == ip
	}
	return false
}

// exprs gathers a rule side: the expanded prefixes when Azure gave them,
// else the prefix and prefixes as written.
func exprs(expanded []*string, one *string, many []*string) []string {
	if e := strs(expanded); len(e) > 0 {
		return e
	}
	out := strs(many)
	if s := str(one); s != "" {
		out = append(out, s)
	}
	return out
}

func ruleMatches(r *armnetwork.EffectiveNetworkSecurityRule, f flow) bool {
	if str(r.Direction) != string(armnetwork.SecurityRuleDirectionOutbound) {
		return false
	}
	if p := str(r.Protocol); p != "" && !strings.EqualFold(p, "All") && !strings.EqualFold(p, "Tcp") && p != "*" {
		return false
	}
	ports := strs(r.DestinationPortRanges)
	if s := str(r.DestinationPortRange); s != "" {
		ports = append(ports, s)
	}
	portOK := len(ports) == 0
	for _, p := range ports {
		if portMatches(p, f.port) {
			portOK = true
		}
	}
	if !portOK {
		return false
	}
	dstOK := false
	for _, e := range exprs(r.ExpandedDestinationAddressPrefix, r.DestinationAddressPrefix, r.DestinationAddressPrefixes) {
		if addrMatches(e, f.dst, f) {
			dstOK = true
		}
	}
	if !dstOK {
		return false
	}
	src, ok := firstAddr(f.src)
	if !ok {
		return true
	}
	for _, e := range exprs(r.ExpandedSourceAddressPrefix, r.SourceAddressPrefix, r.SourceAddressPrefixes) {
		if addrMatches(e, src, f) {
			return true
		}
	}
	return false
}

// decide returns, for each security group applied to the NIC, the rule
// that decides the flow (lowest priority number that matches). Every group
// must allow it (subnet and NIC groups both apply).
func decide(groups []*armnetwork.EffectiveNetworkSecurityGroup, f flow) []*RuleMatch {
	var out []*RuleMatch
	for _, g := range groups {
		if g == nil {
			continue
		}
		rules := append([]*armnetwork.EffectiveNetworkSecurityRule(nil), g.EffectiveSecurityRules...)
		sort.SliceStable(rules, func(i, j int) bool { return prio(rules[i]) < prio(rules[j]) })
		nsg := ""
		if g.NetworkSecurityGroup != nil {
			nsg = idName(str(g.NetworkSecurityGroup.ID))
		}
		for _, r := range rules {
			if r != nil && ruleMatches(r, f) {
				out = append(out, &RuleMatch{NSG: nsg, Rule: ruleName(r), Access: str(r.Access), Priority: prio(r), Direction: str(r.Direction)})
				break
			}
		}
	}
	return out
}

func prio(r *armnetwork.EffectiveNetworkSecurityRule) int32 {
	if r == nil || r.Priority == nil {
		return 1 << 30
	}
	return *r.Priority
}

// ruleName drops the "securityRules/" or "defaultSecurityRules/" prefix
// effective rules carry.
func ruleName(r *armnetwork.EffectiveNetworkSecurityRule) string {
	n := str(r.Name)
	if i := strings.LastIndexByte(n, '/'); i >= 0 {
		return n[i+1:]
	}
	return n
}
