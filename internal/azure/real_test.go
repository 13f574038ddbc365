package azure

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerregistry/armcontainerregistry"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/network/armnetwork/v9"

	"github.com/pullpath/pullpath/internal/verdict"
)

// The scenarios of testdata/real are built by gen.py from real az and ARM
// output (testdata/real/SOURCES.md). Each row: the verdict, its certainty,
// the dump a certain one must name, the command an uncertain one must name.
var (
	corpOnPrem = Target{Host: "registry.corp.example", IP: "10.10.0.4"}
	inHub      = Target{Host: "registry.hub.example", IP: "10.2.0.10"}
)

type realCase struct {
	dir      string
	targets  []Target
	ok       bool
	cause    string
	role     verdict.Role
	endpoint string
	certain  bool
	from     []string // dumps the verdict must name
	settle   string   // substring of the command an uncertain verdict names
	summary  string   // substring of the summary
}

var realCases = []realCase{
	{dir: "healthy", ok: true, certain: true,
		from: []string{"routes-nodepool1.json", "nsg-nodepool1.json", "dns-links.json", "dns-records.json", "vnet-spoke2.json"}},
	{dir: "udr-none", targets: []Target{corpOnPrem}, cause: "route.blackhole", endpoint: "registry.corp.example:443", certain: true,
		from: []string{"route-table-spoke2.json", "vnet-spoke2.json"}, summary: "route to-onprem: 10.10.0.0/16 → None"},
	{dir: "transit-off", targets: []Target{corpOnPrem}, cause: "route.gateway-transit", endpoint: "registry.corp.example:443", certain: true,
		from: []string{"vnet-spoke2.json virtualNetworkPeerings", "vnet-hub2.json virtualNetworkPeerings"}, summary: "lacks allowGatewayTransit"},
	{dir: "peering-one-way", targets: []Target{inHub}, cause: "route.peering", endpoint: "registry.hub.example:443", certain: true,
		from: []string{"vnet-spoke2.json virtualNetworkPeerings", "vnet-hub2.json virtualNetworkPeerings"}, summary: "Initiated"},
	{dir: "zone-not-linked", cause: "dns.zone-not-linked", endpoint: "acrdemo.azurecr.io:443", certain: true,
		from: []string{"dns-links.json", "vnet-spoke2.json"}},
	{dir: "nsg-deny", cause: "route.nsg-deny", role: verdict.RoleBlob, endpoint: "acrdemo.westeurope.data.azurecr.io:443", certain: true,
		from: []string{"nsg-nodepool1.json"}, summary: "DenyOtherOutbound (priority 4000)"},
	{dir: "custom-dns", cause: "dns.custom-forwarder", endpoint: "acrdemo.azurecr.io:443", certain: false,
		settle: "conditional forwarder", summary: "10.10.0.53"},
	{dir: "missing-data-record", cause: "dns.missing-record", role: verdict.RoleBlob, endpoint: "acrdemo.westeurope.data.azurecr.io:443", certain: true,
		from: []string{"dns-records.json", "private-endpoint.json"}},
	{dir: "zone-group", ok: true, certain: true, from: []string{"dns-zone-group.json", "routes-nodepool1.json"}},
	{dir: "propagation-disabled", targets: []Target{corpOnPrem}, cause: "route.propagation-disabled", endpoint: "registry.corp.example:443", certain: true,
		from: []string{"route-table-spoke2.json"}, summary: "disableBgpRoutePropagation"},
	// Routes rebuilt from the route tables alone, gateway transit on and
	// propagation not disabled: the gateway may have learned a route that
	// no dump shows, so "no route" must not be certain.
	{dir: "gateway-routes-unknown", targets: []Target{corpOnPrem}, cause: "route.no-route", endpoint: "registry.corp.example:443", certain: false,
		settle: "az network vnet-gateway list-learned-routes -g " + "rg-dual-hub-vnra-udr-transit -n vpngw-hub2"},
	// With the learned routes the route is proved; the advertised routes
	// (none) leave the way back unproved but named.
	{dir: "gateway-routes-learned", targets: []Target{corpOnPrem}, cause: "route.return-path", endpoint: "registry.corp.example:443", certain: false,
		settle: "static route to 10.20.1.0/24", summary: "advertises none that covers it"},
	// The first misreading: peerings only inside `az network vnet show`.
	{dir: "vnet-show-peerings", targets: []Target{inHub}, ok: true, certain: false, settle: "az network nic list-effective-nsg"},
}

func loadReal(t *testing.T, dir string, targets []Target) (*Snapshot, *Report) {
	t.Helper()
	s, err := LoadAz(filepath.Join("testdata", "real", dir))
	if err != nil {
		t.Fatalf("LoadAz(%s): %v", dir, err)
	}
	s.Targets = targets
	return s, Analyze(s, Options{})
}

func TestRealScenarios(t *testing.T) {
	ents, err := os.ReadDir(filepath.Join("testdata", "real"))
	if err != nil {
		t.Fatal(err)
	}
	dirs := 0
	for _, e := range ents {
		if e.IsDir() && e.Name() != "raw" {
			dirs++
		}
	}
	if dirs != len(realCases) {
		t.Errorf("%d scenario directories in testdata/real, %d rows here: give every one its row", dirs, len(realCases))
	}
	for _, tt := range realCases {
		t.Run(tt.dir, func(t *testing.T) {
			_, r := loadReal(t, tt.dir, tt.targets)
			if len(r.Pools) != 1 || r.Pools[0].Name != "nodepool1" {
				t.Fatalf("pools = %+v", r.Pools)
			}
			v := r.Pools[0].Verdict
			if v.OK != tt.ok || (!tt.ok && v.Cause != tt.cause) {
				t.Fatalf("verdict = ok %v %q (%s), want ok %v %q", v.OK, v.Cause, v.Summary, tt.ok, tt.cause)
			}
			if v.Certain != tt.certain {
				t.Errorf("certain = %v, want %v (%s; settle %q)", v.Certain, tt.certain, v.Summary, v.Settle)
			}
			if !tt.ok {
				if v.Endpoint != tt.endpoint || (tt.role != "" && v.Role != tt.role) {
					t.Errorf("endpoint %q role %q, want %q %q", v.Endpoint, v.Role, tt.endpoint, tt.role)
				}
				if v.Layer != verdict.LayerOf(tt.cause) || len(v.Next) == 0 {
					t.Errorf("layer %q next %v", v.Layer, v.Next)
				}
			}
			for _, f := range tt.from {
				if !contains(v.From, f) {
					t.Errorf("from = %q, want it to name %q", v.From, f)
				}
			}
			if v.Certain && len(v.From) == 0 {
				t.Errorf("a certain verdict names no dump")
			}
			if !v.Certain && (v.Settle == "" || !strings.Contains(v.Settle, tt.settle)) {
				t.Errorf("settle = %q, want it to name %q", v.Settle, tt.settle)
			}
			if !strings.Contains(v.Summary, tt.summary) {
				t.Errorf("summary = %q, want %q", v.Summary, tt.summary)
			}
			checkProofRule(t, r)
		})
	}
}

// checkProofRule: every certain check names the dump that proves it, and
// every uncertain finding names the command that would settle it.
func checkProofRule(t *testing.T, r *Report) {
	t.Helper()
	for _, p := range r.Pools {
		for _, c := range p.Checks {
			if c.Certain && len(c.From) == 0 {
				t.Errorf("certain check %s %s (%s) names no dump", c.Step, c.Endpoint, c.Summary)
			}
			if !c.Certain && (!c.OK || c.Skipped) && c.Settle == "" && c.Step != StepEndpoints {
				t.Errorf("uncertain check %s %s (%s) names no command to settle it", c.Step, c.Endpoint, c.Summary)
			}
		}
	}
}

// The generated fixtures obey the same rule.
func TestProofRuleGeneratedScenarios(t *testing.T) {
	for _, tt := range scenarioCases {
		checkProofRule(t, loadScenario(t, tt.dir, tt.targets))
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// copyReal copies a real scenario into a temporary directory, letting
// edit change a file's JSON on the way (nil leaves the file out).
func copyReal(t *testing.T, dir string, edit func(name string, v any) any) string {
	t.Helper()
	return copyDump(t, filepath.Join("testdata", "real", dir), edit)
}

// copyDump copies the JSON files of a dump directory, through edit.
func copyDump(t *testing.T, src string, edit func(name string, v any) any) string {
	t.Helper()
	out := t.TempDir()
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if edit != nil {
			var v any
			if err := json.Unmarshal(b, &v); err != nil {
				t.Fatal(err)
			}
			v = edit(e.Name(), v)
			if v == nil {
				continue
			}
			if b, err = json.Marshal(v); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(out, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// A VNet dumped by `az network vnet
// show` without its virtualNetworkPeerings (and no peerings-*.json) has
// peerings not read, which is no certain "no peering".
func TestPeeringsNotReadAreNotAbsent(t *testing.T) {
	dir := copyReal(t, "vnet-show-peerings", func(name string, v any) any {
		if m, ok := v.(map[string]any); ok && strings.HasPrefix(name, "vnet-") {
			delete(m, "virtualNetworkPeerings")
		}
		return v
	})
	s, err := LoadAz(dir)
	if err != nil {
		t.Fatal(err)
	}
	s.Targets = []Target{inHub}
	r := Analyze(s, Options{})
	v := r.Pools[0].Verdict
	if v.OK || v.Certain || !strings.Contains(v.Settle, "az network vnet peering list -g rg-dual-hub-vnra-udr-transit --vnet-name spoke2-vnet") {
		t.Errorf("verdict = ok %v %q certain %v settle %q, want an uncertain finding naming the peering list", v.OK, v.Cause, v.Certain, v.Settle)
	}
	// With the peerings in the vnet dump, the hub is reached and the
	// route check is certain, naming that dump.
	_, r = loadReal(t, "vnet-show-peerings", []Target{inHub})
	for _, c := range r.Pools[0].Checks {
		if c.Step == StepRoute && c.Endpoint == "registry.hub.example" {
			if !c.OK || !c.Certain || !contains(c.From, "vnet-spoke2.json virtualNetworkPeerings") || !contains(c.From, "vnet-hub2.json virtualNetworkPeerings") {
				t.Errorf("route to the hub = %+v, want ok and certain from both vnet dumps", c)
			}
		}
	}
}

// Rebuilt routes leave a gateway-transit path uncertain; the gateway's
// learned routes (list-learned-routes) settle it.
func TestGatewayRoutesDecideOnPremises(t *testing.T) {
	_, r := loadReal(t, "gateway-routes-learned", []Target{corpOnPrem})
	found := false
	for _, c := range r.Pools[0].Checks {
		if c.Step == StepRoute && c.Endpoint == "registry.corp.example" {
			found = true
			if !c.OK || !c.Certain || c.Route == nil || c.Route.NextHopType != hopGateway || c.Route.Prefix != "10.10.0.4/32" || !contains(c.From, "gateway-learned.json") {
				t.Errorf("route = %+v, want ok and certain through the learned 10.10.0.4/32, naming gateway-learned.json", c)
			}
		}
	}
	if !found {
		t.Fatal("no route check for the on-premises target")
	}
	// The learned routes do not help once the route table keeps them out.
	s, _ := loadReal(t, "gateway-routes-learned", []Target{corpOnPrem})
	for _, rt := range s.RouteTables {
		yes := true
		rt.Properties.DisableBgpRoutePropagation = &yes
	}
	if v := Analyze(s, Options{}).Pools[0].Verdict; v.Cause != "route.propagation-disabled" || !v.Certain {
		t.Errorf("with propagation disabled: %q certain %v", v.Cause, v.Certain)
	}
}

// A user route over the endpoints' subnet: the /32 InterfaceEndpoint
// routes win while the endpoint subnet's privateEndpointNetworkPolicies
// is Disabled (as captured); with RouteTableEnabled the user route does.
func TestEndpointRoutesAndNetworkPolicies(t *testing.T) {
	for _, tt := range []struct {
		policy string
		cause  string
	}{{"Disabled", ""}, {"RouteTableEnabled", "route.blackhole"}, {"Enabled", "route.blackhole"}} {
		s, _ := loadReal(t, "udr-none", nil)
		for _, rt := range s.RouteTables {
			p, hop, name := "10.20.2.0/24", armnetwork.RouteNextHopTypeNone, "pe-to-none"
			rt.Properties.Routes = append(rt.Properties.Routes, &armnetwork.Route{Name: &name,
				Properties: &armnetwork.RoutePropertiesFormat{AddressPrefix: &p, NextHopType: &hop}})
		}
		sn := s.subnetByID("/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/rg-dual-hub-vnra-udr-transit/providers/Microsoft.Network/virtualNetworks/spoke2-vnet/subnets/snet-pe")
		if sn == nil {
			t.Fatal("snet-pe not read")
		}
		pol := armnetwork.VirtualNetworkPrivateEndpointNetworkPolicies(tt.policy)
		sn.Properties.PrivateEndpointNetworkPolicies = &pol
		r := Analyze(s, Options{})
		for _, c := range r.Pools[0].Checks {
			if c.Step != StepRoute {
				continue
			}
			if c.Cause != tt.cause {
				t.Errorf("policy %s: route %s = %q (%s), want %q", tt.policy, c.Endpoint, c.Cause, c.Summary, tt.cause)
			}
			if tt.cause == "" && (c.Route == nil || c.Route.NextHopType != hopInterfaceEndpoint || !c.Certain) {
				t.Errorf("policy %s: route %s = %+v, want the certain /32 InterfaceEndpoint route", tt.policy, c.Endpoint, c.Route)
			}
		}
	}
	// The endpoint subnet not read: which route wins is unknown.
	s, _ := loadReal(t, "udr-none", nil)
	for _, rt := range s.RouteTables {
		p, hop, name := "10.20.2.0/24", armnetwork.RouteNextHopTypeNone, "pe-to-none"
		rt.Properties.Routes = append(rt.Properties.Routes, &armnetwork.Route{Name: &name,
			Properties: &armnetwork.RoutePropertiesFormat{AddressPrefix: &p, NextHopType: &hop}})
	}
	for _, v := range s.VNets {
		var keep []*armnetwork.Subnet
		for _, sn := range v.Properties.Subnets {
			if str(sn.Name) != "snet-pe" {
				keep = append(keep, sn)
			}
		}
		v.Properties.Subnets = keep
	}
	v := Analyze(s, Options{}).Pools[0].Verdict
	if v.Certain || !strings.Contains(v.Settle, "privateEndpointNetworkPolicies") {
		t.Errorf("endpoint subnet not read: verdict %q certain %v settle %q, want uncertain naming privateEndpointNetworkPolicies", v.Cause, v.Certain, v.Settle)
	}
}

// ARM IDs differ in casing between APIs (AKS prints resourcegroups,
// net-lab-builder's capture upper-cases a group): nothing compares them
// case-sensitively.
func TestIDCasing(t *testing.T) {
	dir := copyReal(t, "healthy", func(name string, v any) any {
		b, _ := json.Marshal(v)
		s := string(b)
		switch {
		case strings.HasPrefix(name, "dns-links"), strings.HasPrefix(name, "private-endpoint"):
			s = strings.ReplaceAll(s, "/resourceGroups/rg-dual-hub-vnra-udr-transit/", "/resourcegroups/RG-DUAL-HUB-VNRA-UDR-TRANSIT/")
			s = strings.ReplaceAll(s, "spoke2-vnet", "SPOKE2-VNET")
		case strings.HasPrefix(name, "aks"):
			s = strings.ReplaceAll(s, "/providers/Microsoft.Network/virtualNetworks/", "/providers/microsoft.network/virtualnetworks/")
		}
		var out any
		_ = json.Unmarshal([]byte(s), &out)
		return out
	})
	s, err := LoadAz(dir)
	if err != nil {
		t.Fatal(err)
	}
	v := Analyze(s, Options{}).Pools[0].Verdict
	if !v.OK || !v.Certain {
		t.Errorf("healthy with mixed-case IDs = %q certain %v (%s)", v.Cause, v.Certain, v.Summary)
	}
}

// Zone links read without the records (or the reverse) is not both read.
func TestZoneHalfRead(t *testing.T) {
	dir := copyReal(t, "healthy", func(name string, v any) any {
		if name == "dns-records.json" {
			return nil
		}
		return v
	})
	s, err := LoadAz(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := Analyze(s, Options{})
	v := r.Pools[0].Verdict
	if !v.OK || v.Certain || !strings.Contains(v.Settle, "az network private-dns record-set a list") {
		t.Errorf("without dns-records.json: ok %v %q certain %v settle %q, want an unconfirmed ok naming the record list", v.OK, v.Cause, v.Certain, v.Settle)
	}
}

// Without customDnsConfigs and zone groups, the endpoint's own NIC gives
// each FQDN its address (privateLinkConnectionProperties); with none of
// the three read, the data endpoint's address is not read rather than
// missing.
func TestEndpointNICGivesAddresses(t *testing.T) {
	s, _ := loadReal(t, "zone-group", nil)
	for k := range s.ZoneGroups {
		delete(s.ZoneGroups, k)
	}
	pe := s.PrivateEndpoints[0]
	nicID := str(pe.Properties.NetworkInterfaces[0].ID)
	nic := &armnetwork.Interface{ID: &nicID, Properties: &armnetwork.InterfacePropertiesFormat{}}
	for fqdn, ip := range map[string]string{"acrdemo.azurecr.io": "10.20.2.4", "acrdemo.westeurope.data.azurecr.io": "10.20.2.5"} {
		fqdn, ip := fqdn, ip
		nic.Properties.IPConfigurations = append(nic.Properties.IPConfigurations, &armnetwork.InterfaceIPConfiguration{
			Properties: &armnetwork.InterfaceIPConfigurationPropertiesFormat{PrivateIPAddress: &ip,
				PrivateLinkConnectionProperties: &armnetwork.InterfaceIPConfigurationPrivateLinkConnectionProperties{Fqdns: []*string{&fqdn}}}})
	}
	s.EndpointNICs = []*armnetwork.Interface{nic}
	s.setFrom(fromPENIC, nicID, "pe-nic.json")
	eps, _ := s.endpoints()
	if len(eps) != 2 || eps[0].FQDN != "acrdemo.azurecr.io" || eps[0].IP != "10.20.2.4" || eps[1].From != "pe-nic.json" {
		t.Errorf("endpoints from the NIC = %+v", eps)
	}
	s.EndpointNICs = nil
	acr := "acrdemo"
	s.Registry = &armcontainerregistry.Registry{Name: &acr, Properties: &armcontainerregistry.RegistryProperties{
		DataEndpointHostNames: []*string{to("acrdemo.westeurope.data.azurecr.io")}}}
	_, checks := s.endpoints()
	if len(checks) != 1 || checks[0].Certain || !strings.Contains(checks[0].Settle, "dns-zone-group list -g rg-dual-hub-vnra-udr-transit --endpoint-name pe-acrdemo") {
		t.Errorf("data endpoint without any source read = %+v, want uncertain naming the zone group list", checks)
	}
}

func to(s string) *string { return &s }
