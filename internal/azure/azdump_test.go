package azure

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/verdict"
)

// onprem is the registry behind the VPN of the article, given by hand.
var onprem = Target{Host: "registry.corp.example", IP: "192.168.10.20"}

// scenarioCase is one row of the article's table: a dump directory, the
// hand-given targets, and the verdict Azure's configuration must give.
type scenarioCase struct {
	dir      string
	targets  []Target
	ok       bool
	cause    string
	role     verdict.Role
	endpoint string
	setting  []string // substrings the named setting must hold
	summary  []string // substrings the summary must hold
	certain  bool
}

var scenarioCases = []scenarioCase{
	{dir: "healthy", targets: []Target{onprem}, ok: true, certain: false},
	{dir: "blackhole", targets: []Target{onprem}, cause: "route.blackhole", role: verdict.RoleRegistry, endpoint: "registry.corp.example:443",
		setting: []string{"route table rt-aks", "route to-onprem", "192.168.0.0/16 → None"}, certain: true},
	{dir: "no-route", targets: []Target{{Host: "registry.corp.example", IP: "172.20.5.5"}}, cause: "route.no-route", role: verdict.RoleRegistry,
		endpoint: "registry.corp.example:443", setting: []string{"none toward 172.20.5.5", "172.16.0.0/12 → None"}, certain: true},
	{dir: "transit-one-side", targets: []Target{onprem}, cause: "route.gateway-transit", endpoint: "registry.corp.example:443",
		setting: []string{"peering aks-to-hub useRemoteGateways=false"}, summary: []string{"the node side (peering aks-to-hub on vnet-aks) lacks useRemoteGateways"}, certain: true},
	{dir: "transit-both-sides", targets: []Target{onprem}, cause: "route.gateway-transit", endpoint: "registry.corp.example:443",
		setting: []string{"peering aks-to-hub useRemoteGateways=false", "peering hub-to-aks allowGatewayTransit=false"},
		summary: []string{"node side", "hub side (peering hub-to-aks on vnet-hub) lacks allowGatewayTransit"}, certain: true},
	{dir: "peering-one-way", cause: "route.peering", endpoint: "acrprod.azurecr.io:443",
		setting: []string{"VNet vnet-hub peerings"}, summary: []string{"Initiated", "A route one way is not a route"}, certain: true},
	{dir: "zone-not-linked", cause: "dns.zone-not-linked", endpoint: "acrprod.azurecr.io:443",
		setting: []string{"privatelink.azurecr.io", "none to vnet-aks"}, certain: true},
	{dir: "custom-dns", cause: "dns.custom-forwarder", endpoint: "acrprod.azurecr.io:443",
		setting: []string{"dnsServers 10.0.2.4,10.0.2.5", "conditional forwarder azurecr.io → 168.63.129.16"}, certain: false},
	{dir: "custom-dns-unlinked", cause: "dns.zone-not-linked", endpoint: "acrprod.azurecr.io:443",
		setting: []string{"none to vnet-hub, the DNS server's VNet"}, certain: true},
	{dir: "missing-data-record", cause: "dns.missing-record", role: verdict.RoleBlob, endpoint: "acrprod.northeurope.data.azurecr.io:443",
		setting: []string{"A record acrprod.northeurope.data → 10.0.1.6 (missing)"}, summary: []string{"Only the manifest endpoint is reachable"}, certain: true},
	{dir: "nsg-deny", cause: "route.nsg-deny", endpoint: "acrprod.azurecr.io:443",
		setting: []string{"network security group nsg-aks", "outbound rule deny-hub-https (priority 200, Deny)"}, certain: true},
	{dir: "return-path", cause: "route.return-path", endpoint: "acrprod.azurecr.io:443",
		setting: []string{"route table rt-pe, route to-aks: 10.240.0.0/16 → None"}, certain: true},
}

func loadScenario(t *testing.T, dir string, targets []Target) *Report {
	t.Helper()
	s, err := LoadAz(filepath.Join("testdata", "az", dir))
	if err != nil {
		t.Fatalf("LoadAz(%s): %v", dir, err)
	}
	s.Targets = targets
	return Analyze(s, Options{})
}

// checkScenario asserts a report against its row; shared by the offline
// and the SDK tests so both paths must give the same answer.
func checkScenario(t *testing.T, tt scenarioCase, r *Report) {
	t.Helper()
	if len(r.Pools) != 1 || r.Pools[0].Name != "nodepool1" {
		t.Fatalf("pools = %+v, want nodepool1", r.Pools)
	}
	v := r.Pools[0].Verdict
	if v.Source != SourceControlPlane {
		t.Errorf("source = %q", v.Source)
	}
	if v.OK != tt.ok || v.Cause != tt.cause && !tt.ok {
		t.Fatalf("%s: verdict = ok %v cause %q (%s), want ok %v cause %q", tt.dir, v.OK, v.Cause, v.Summary, tt.ok, tt.cause)
	}
	if v.Certain != tt.certain {
		t.Errorf("%s: certain = %v, want %v (%s)", tt.dir, v.Certain, tt.certain, v.Summary)
	}
	if tt.ok {
		if v.Layer != verdict.LayerNone || r.Verdict.OK != true {
			t.Errorf("%s: ok verdict %+v / report %+v", tt.dir, v, r.Verdict)
		}
		return
	}
	if tt.role != "" && v.Role != tt.role {
		t.Errorf("%s: role = %q, want %q", tt.dir, v.Role, tt.role)
	}
	if v.Endpoint != tt.endpoint {
		t.Errorf("%s: endpoint = %q, want %q", tt.dir, v.Endpoint, tt.endpoint)
	}
	if v.Layer != verdict.LayerOf(tt.cause) || v.Owner == verdict.OwnerNone || len(v.Next) == 0 {
		t.Errorf("%s: layer %q owner %q next %v", tt.dir, v.Layer, v.Owner, v.Next)
	}
	for _, want := range tt.setting {
		if !strings.Contains(v.Setting, want) {
			t.Errorf("%s: setting = %q, want it to name %q", tt.dir, v.Setting, want)
		}
	}
	for _, want := range tt.summary {
		if !strings.Contains(v.Summary, want) {
			t.Errorf("%s: summary = %q, want %q", tt.dir, v.Summary, want)
		}
	}
	if r.Verdict.Cause != tt.cause || r.Verdict.OK {
		t.Errorf("%s: report verdict = %q, want %q", tt.dir, r.Verdict.Cause, tt.cause)
	}
}

func TestAzDumpScenarios(t *testing.T) {
	for _, tt := range scenarioCases {
		t.Run(tt.dir, func(t *testing.T) {
			checkScenario(t, tt, loadScenario(t, tt.dir, tt.targets))
		})
	}
}

func TestAzDumpHealthyDetails(t *testing.T) {
	r := loadScenario(t, "healthy", []Target{onprem})
	if got := len(r.Endpoints); got != 4 {
		t.Fatalf("endpoints = %+v, want login server, 2 data endpoints and the target", r.Endpoints)
	}
	if e := r.Endpoints[0]; e.FQDN != "acrprod.azurecr.io" || e.IP != "10.0.1.4" || e.Role != verdict.RoleRegistry || e.PrivateEndpoint != "pe-acrprod" {
		t.Errorf("first endpoint = %+v", e)
	}
	want := map[string]string{ // endpoint -> next hop chosen
		"acrprod.azurecr.io": "VNetPeering", "acrprod.northeurope.data.azurecr.io": "VNetPeering",
		"registry.corp.example": "VirtualNetworkGateway",
	}
	seen := 0
	for _, c := range r.Pools[0].Checks {
		if c.Step == StepRoute {
			if hop, ok := want[c.Endpoint]; ok {
				seen++
				if c.Route == nil || c.Route.NextHopType != hop || !c.OK {
					t.Errorf("route %s = %+v, want %s", c.Endpoint, c.Route, hop)
				}
			}
		}
		if c.Step == StepSecurity && (!c.OK || c.Rule == nil || c.Rule.Rule != "AllowVnetOutBound") {
			t.Errorf("security %s = %+v, want AllowVnetOutBound", c.Endpoint, c)
		}
		if c.Step == StepReturn && c.Endpoint == "registry.corp.example" && (c.Certain || !strings.Contains(c.Summary, "outside Azure")) {
			t.Errorf("return path of the on-premises target = %+v, want 'outside Azure', uncertain", c)
		}
	}
	if seen != 3 {
		t.Errorf("saw %d of 3 route checks", seen)
	}
	if !strings.Contains(r.Pools[0].RoutesFrom, "effective routes") {
		t.Errorf("routes from %q", r.Pools[0].RoutesFrom)
	}
}

// Without the effective-route dump, the routes are rebuilt from the VNet,
// its peerings and the route table, and the blackhole is still found.
func TestReconstructedRoutesFindTheBlackhole(t *testing.T) {
	dir := copyDump(t, filepath.Join("testdata", "az", "blackhole"), func(name string, v any) any {
		if strings.HasPrefix(name, "routes-") {
			return nil
		}
		return v
	})
	s, err := LoadAz(dir)
	if err != nil {
		t.Fatal(err)
	}
	s.Targets = []Target{onprem}
	r := Analyze(s, Options{})
	v := r.Pools[0].Verdict
	if v.Cause != "route.blackhole" || !strings.Contains(v.Setting, "route to-onprem") {
		t.Errorf("verdict = %q %q, want route.blackhole naming to-onprem", v.Cause, v.Setting)
	}
	if !strings.Contains(r.Pools[0].RoutesFrom, "reconstructed") {
		t.Errorf("routes from = %q, want reconstructed", r.Pools[0].RoutesFrom)
	}
}

func TestLoadAzBadInput(t *testing.T) {
	if _, err := LoadAz(filepath.Join("testdata", "az", "nope")); err == nil {
		t.Error("LoadAz(missing dir) = nil error")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "aks.json"), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "dns-records.json"), []byte(`{"a": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := LoadAz(dir)
	if err == nil || !strings.Contains(err.Error(), "aks.json") || !strings.Contains(err.Error(), "dns-records.json") {
		t.Errorf("LoadAz(bad json) error = %v, want both files named", err)
	}
	if s == nil {
		t.Fatal("LoadAz returned no partial snapshot")
	}
	r := Analyze(s, Options{})
	if r.Verdict.OK || len(r.Warnings) == 0 {
		t.Errorf("partial report = %+v, want a no-pools warning and no ok", r.Verdict)
	}
}

// A VNet whose DNS server list names Azure DNS itself uses Azure DNS: the
// zone's link to it is what counts.
func TestAzureDNSNamedExplicitly(t *testing.T) {
	s, err := LoadAz(filepath.Join("testdata", "az", "zone-not-linked"))
	if err != nil {
		t.Fatal(err)
	}
	ip := azureDNS
	for _, v := range s.VNets {
		if str(v.Name) == "vnet-aks" {
			v.Properties.DhcpOptions.DNSServers = []*string{&ip}
		}
	}
	if v := Analyze(s, Options{}).Pools[0].Verdict; v.Cause != "dns.zone-not-linked" || !v.Certain {
		t.Errorf("verdict = %q certain %v, want a certain dns.zone-not-linked", v.Cause, v.Certain)
	}
}
