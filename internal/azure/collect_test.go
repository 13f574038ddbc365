package azure

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	azfake "github.com/Azure/azure-sdk-for-go/sdk/azcore/fake"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerregistry/armcontainerregistry"
	acrfake "github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerregistry/armcontainerregistry/fake"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	aksfake "github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6/fake"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/network/armnetwork/v9"
	netfake "github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/network/armnetwork/v9/fake"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/privatedns/armprivatedns"
	dnsfake "github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/privatedns/armprivatedns/fake"
)

const (
	fakeSub    = "00000000-0000-0000-0000-00000000c0de"
	fakeZoneID = "/subscriptions/" + fakeSub + "/resourceGroups/rg-hub/providers/Microsoft.Network/privateDnsZones/privatelink.azurecr.io"
	fakeNICID  = "/subscriptions/" + fakeSub + "/resourceGroups/MC_rg-aks_aks-prod_westeurope/providers/Microsoft.Network/networkInterfaces/aks-nodepool1-12345678-nic-0"
	// canaryToken is what the fake credential hands the SDK: it must reach
	// the (fake) ARM endpoint and never any output.
	canaryToken = "canary-arm-token-7f3a9c1e5b2d"
)

// canaryCredential is a TokenCredential whose token is the canary.
type canaryCredential struct{}

func (canaryCredential) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: canaryToken, ExpiresOn: time.Now().Add(time.Hour)}, nil
}

// fakeARM serves a snapshot through the SDK's own fake servers, one per
// arm* module, behind one transport that routes by resource provider. It
// records every request so tests can see what the collector asked and
// which Authorization it sent.
type fakeARM struct {
	mu            sync.Mutex
	hosts         map[string]bool
	authorization []string
	paths         []string
	net, dns      policy.Transporter
	aks, acr      policy.Transporter
}

func (f *fakeARM) Do(req *http.Request) (*http.Response, error) {
	f.mu.Lock()
	f.hosts[req.URL.Host] = true
	f.authorization = append(f.authorization, req.Header.Get("Authorization"))
	f.paths = append(f.paths, req.URL.Path)
	f.mu.Unlock()
	p := strings.ToLower(req.URL.Path)
	switch {
	case strings.Contains(p, "/microsoft.network/privatednszones/"):
		return f.dns.Do(req)
	case strings.Contains(p, "/microsoft.containerservice/"):
		return f.aks.Do(req)
	case strings.Contains(p, "/microsoft.containerregistry/"):
		return f.acr.Do(req)
	}
	return f.net.Do(req)
}

func notFound(e *azfake.ErrorResponder) { e.SetResponseError(http.StatusNotFound, "ResourceNotFound") }

func newFakeARM(s *Snapshot) *fakeARM {
	f := &fakeARM{hosts: map[string]bool{}}
	vnet := func(rg, name string) *armnetwork.VirtualNetwork {
		for _, v := range s.VNets {
			if r, err := arm.ParseResourceID(str(v.ID)); err == nil && strings.EqualFold(r.ResourceGroupName, rg) && r.Name == name {
				return v
			}
		}
		return nil
	}
	f.net = netfake.NewServerFactoryTransport(&netfake.ServerFactory{
		VirtualNetworksServer: netfake.VirtualNetworksServer{
			Get: func(_ context.Context, rg, name string, _ *armnetwork.VirtualNetworksClientGetOptions) (r azfake.Responder[armnetwork.VirtualNetworksClientGetResponse], e azfake.ErrorResponder) {
				if v := vnet(rg, name); v != nil {
					r.SetResponse(http.StatusOK, armnetwork.VirtualNetworksClientGetResponse{VirtualNetwork: *v}, nil)
				} else {
					notFound(&e)
				}
				return
			}},
		VirtualNetworkPeeringsServer: netfake.VirtualNetworkPeeringsServer{
			NewListPager: func(rg, name string, _ *armnetwork.VirtualNetworkPeeringsClientListOptions) (r azfake.PagerResponder[armnetwork.VirtualNetworkPeeringsClientListResponse]) {
				var list []*armnetwork.VirtualNetworkPeering
				if v := vnet(rg, name); v != nil {
					list = s.Peerings[strings.ToLower(str(v.ID))]
				}
				r.AddPage(http.StatusOK, armnetwork.VirtualNetworkPeeringsClientListResponse{VirtualNetworkPeeringListResult: armnetwork.VirtualNetworkPeeringListResult{Value: list}}, nil)
				return
			}},
		PrivateEndpointsServer: netfake.PrivateEndpointsServer{
			Get: func(_ context.Context, rg, name string, _ *armnetwork.PrivateEndpointsClientGetOptions) (r azfake.Responder[armnetwork.PrivateEndpointsClientGetResponse], e azfake.ErrorResponder) {
				for _, pe := range s.PrivateEndpoints {
					if str(pe.Name) == name {
						r.SetResponse(http.StatusOK, armnetwork.PrivateEndpointsClientGetResponse{PrivateEndpoint: *pe}, nil)
						return
					}
				}
				notFound(&e)
				return
			}},
		PrivateDNSZoneGroupsServer: netfake.PrivateDNSZoneGroupsServer{
			NewListPager: func(pe, rg string, _ *armnetwork.PrivateDNSZoneGroupsClientListOptions) (r azfake.PagerResponder[armnetwork.PrivateDNSZoneGroupsClientListResponse]) {
				zone, name := fakeZoneID, "default"
				g := &armnetwork.PrivateDNSZoneGroup{Name: &name, Properties: &armnetwork.PrivateDNSZoneGroupPropertiesFormat{
					PrivateDNSZoneConfigs: []*armnetwork.PrivateDNSZoneConfig{{Properties: &armnetwork.PrivateDNSZonePropertiesFormat{PrivateDNSZoneID: &zone}}}}}
				r.AddPage(http.StatusOK, armnetwork.PrivateDNSZoneGroupsClientListResponse{PrivateDNSZoneGroupListResult: armnetwork.PrivateDNSZoneGroupListResult{Value: []*armnetwork.PrivateDNSZoneGroup{g}}}, nil)
				return
			}},
		VirtualNetworkGatewaysServer: netfake.VirtualNetworkGatewaysServer{
			BeginGetLearnedRoutes: func(_ context.Context, rg, name string, _ *armnetwork.VirtualNetworkGatewaysClientBeginGetLearnedRoutesOptions) (r azfake.PollerResponder[armnetwork.VirtualNetworkGatewaysClientGetLearnedRoutesResponse], e azfake.ErrorResponder) {
				if s.Gateway.Learned == nil {
					notFound(&e)
					return
				}
				r.AddNonTerminalResponse(http.StatusAccepted, nil)
				r.SetTerminalResponse(http.StatusOK, armnetwork.VirtualNetworkGatewaysClientGetLearnedRoutesResponse{GatewayRouteListResult: armnetwork.GatewayRouteListResult{Value: s.Gateway.Learned}}, nil)
				return
			}},
		RouteTablesServer: netfake.RouteTablesServer{
			Get: func(_ context.Context, rg, name string, _ *armnetwork.RouteTablesClientGetOptions) (r azfake.Responder[armnetwork.RouteTablesClientGetResponse], e azfake.ErrorResponder) {
				for _, rt := range s.RouteTables {
					if str(rt.Name) == name {
						r.SetResponse(http.StatusOK, armnetwork.RouteTablesClientGetResponse{RouteTable: *rt}, nil)
						return
					}
				}
				notFound(&e)
				return
			}},
		InterfacesServer: netfake.InterfacesServer{
			// The private endpoint's NIC: the dump's pe-nic*.json, or (for
			// the generated scenarios, which have none) the NIC Azure
			// makes, one IP configuration per customDnsConfigs entry.
			Get: func(_ context.Context, rg, name string, _ *armnetwork.InterfacesClientGetOptions) (r azfake.Responder[armnetwork.InterfacesClientGetResponse], e azfake.ErrorResponder) {
				for _, n := range s.EndpointNICs {
					if strings.EqualFold(str(n.Name), name) {
						r.SetResponse(http.StatusOK, armnetwork.InterfacesClientGetResponse{Interface: *n}, nil)
						return
					}
				}
				for _, pe := range s.PrivateEndpoints {
					for _, ni := range pe.Properties.NetworkInterfaces {
						if !strings.EqualFold(idName(str(ni.ID)), name) {
							continue
						}
						nic := armnetwork.Interface{ID: ni.ID, Name: &name, Properties: &armnetwork.InterfacePropertiesFormat{}}
						for _, c := range pe.Properties.CustomDNSConfigs {
							ips := strs(c.IPAddresses)
							if len(ips) == 0 {
								continue
							}
							ip := ips[0]
							nic.Properties.IPConfigurations = append(nic.Properties.IPConfigurations, &armnetwork.InterfaceIPConfiguration{
								Properties: &armnetwork.InterfaceIPConfigurationPropertiesFormat{PrivateIPAddress: &ip,
									PrivateLinkConnectionProperties: &armnetwork.InterfaceIPConfigurationPrivateLinkConnectionProperties{Fqdns: []*string{c.Fqdn}}}})
						}
						r.SetResponse(http.StatusOK, armnetwork.InterfacesClientGetResponse{Interface: nic}, nil)
						return
					}
				}
				notFound(&e)
				return
			},
			BeginGetEffectiveRouteTable: func(_ context.Context, rg, name string, _ *armnetwork.InterfacesClientBeginGetEffectiveRouteTableOptions) (r azfake.PollerResponder[armnetwork.InterfacesClientGetEffectiveRouteTableResponse], e azfake.ErrorResponder) {
				n := s.NICs["nodepool1"]
				if n == nil || name != "aks-nodepool1-12345678-nic-0" {
					notFound(&e)
					return
				}
				r.AddNonTerminalResponse(http.StatusAccepted, nil)
				r.SetTerminalResponse(http.StatusOK, armnetwork.InterfacesClientGetEffectiveRouteTableResponse{EffectiveRouteListResult: armnetwork.EffectiveRouteListResult{Value: n.Routes}}, nil)
				return
			},
			BeginListEffectiveNetworkSecurityGroups: func(_ context.Context, rg, name string, _ *armnetwork.InterfacesClientBeginListEffectiveNetworkSecurityGroupsOptions) (r azfake.PollerResponder[armnetwork.InterfacesClientListEffectiveNetworkSecurityGroupsResponse], e azfake.ErrorResponder) {
				n := s.NICs["nodepool1"]
				if n == nil || name != "aks-nodepool1-12345678-nic-0" {
					notFound(&e)
					return
				}
				r.SetTerminalResponse(http.StatusOK, armnetwork.InterfacesClientListEffectiveNetworkSecurityGroupsResponse{EffectiveNetworkSecurityGroupListResult: armnetwork.EffectiveNetworkSecurityGroupListResult{Value: n.Security}}, nil)
				return
			}},
	})
	f.dns = dnsfake.NewServerFactoryTransport(&dnsfake.ServerFactory{
		VirtualNetworkLinksServer: dnsfake.VirtualNetworkLinksServer{
			NewListPager: func(rg, zone string, _ *armprivatedns.VirtualNetworkLinksClientListOptions) (r azfake.PagerResponder[armprivatedns.VirtualNetworkLinksClientListResponse]) {
				r.AddPage(http.StatusOK, armprivatedns.VirtualNetworkLinksClientListResponse{VirtualNetworkLinkListResult: armprivatedns.VirtualNetworkLinkListResult{Value: s.Zone.Links}}, nil)
				return
			}},
		RecordSetsServer: dnsfake.RecordSetsServer{
			NewListByTypePager: func(rg, zone string, typ armprivatedns.RecordType, _ *armprivatedns.RecordSetsClientListByTypeOptions) (r azfake.PagerResponder[armprivatedns.RecordSetsClientListByTypeResponse]) {
				if typ != armprivatedns.RecordTypeA {
					r.AddResponseError(http.StatusBadRequest, "BadRecordType")
					return
				}
				// Two pages, as ARM pages long zones.
				half := len(s.Zone.Records) / 2
				r.AddPage(http.StatusOK, armprivatedns.RecordSetsClientListByTypeResponse{RecordSetListResult: armprivatedns.RecordSetListResult{Value: s.Zone.Records[:half]}}, nil)
				r.AddPage(http.StatusOK, armprivatedns.RecordSetsClientListByTypeResponse{RecordSetListResult: armprivatedns.RecordSetListResult{Value: s.Zone.Records[half:]}}, nil)
				return
			}},
	})
	f.aks = aksfake.NewServerFactoryTransport(&aksfake.ServerFactory{
		ManagedClustersServer: aksfake.ManagedClustersServer{
			Get: func(_ context.Context, rg, name string, _ *armcontainerservice.ManagedClustersClientGetOptions) (r azfake.Responder[armcontainerservice.ManagedClustersClientGetResponse], e azfake.ErrorResponder) {
				if s.Cluster == nil || name != str(s.Cluster.Name) {
					notFound(&e)
					return
				}
				r.SetResponse(http.StatusOK, armcontainerservice.ManagedClustersClientGetResponse{ManagedCluster: *s.Cluster}, nil)
				return
			}},
	})
	f.acr = acrfake.NewServerFactoryTransport(&acrfake.ServerFactory{
		RegistriesServer: acrfake.RegistriesServer{
			Get: func(_ context.Context, rg, name string, _ *armcontainerregistry.RegistriesClientGetOptions) (r azfake.Responder[armcontainerregistry.RegistriesClientGetResponse], e azfake.ErrorResponder) {
				if s.Registry == nil || name != str(s.Registry.Name) {
					notFound(&e)
					return
				}
				r.SetResponse(http.StatusOK, armcontainerregistry.RegistriesClientGetResponse{Registry: *s.Registry}, nil)
				return
			}},
	})
	return f
}

// realTagMap rewrites effective-NSG responses the way the service sends
// them, with tagMap an object of tag → prefixes (the SDK's model says
// string), so the collector's workaround is exercised.
type realTagMap struct{}

func (realTagMap) Do(req *policy.Request) (*http.Response, error) {
	resp, err := req.Next()
	if err != nil || !strings.Contains(req.Raw().URL.Path, "effectiveNetworkSecurityGroups") || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if json.Unmarshal(body, &doc) == nil {
		if vals, ok := doc["value"].([]any); ok {
			for _, v := range vals {
				if m, ok := v.(map[string]any); ok {
					m["tagMap"] = map[string]any{"VirtualNetwork": []string{"10.240.0.0/16"}}
				}
			}
			body, _ = json.Marshal(doc)
		}
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	return resp, nil
}

func collectScenario(t *testing.T, dir string, withNIC, serviceTagMap bool) (*Snapshot, *fakeARM, error) {
	t.Helper()
	want, err := LoadAz("testdata/az/" + dir)
	if err != nil {
		t.Fatal(err)
	}
	f := newFakeARM(want)
	opts := &arm.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: f}}
	if serviceTagMap {
		opts.PerRetryPolicies = []policy.Policy{realTagMap{}}
	}
	cfg := Config{Subscription: fakeSub, ClusterGroup: "rg-aks", Cluster: "aks-prod", RegistryGroup: "rg-hub", Registry: "acrprod"}
	if withNIC {
		cfg.NICs = map[string]string{"nodepool1": fakeNICID}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got, err := NewCollector(canaryCredential{}, opts).Collect(ctx, cfg)
	return got, f, err
}

// The real SDK clients, against the SDK's fake servers serving each
// scenario, must reach the same verdict as the offline dumps.
func TestSDKScenarios(t *testing.T) {
	for _, tt := range scenarioCases {
		t.Run(tt.dir, func(t *testing.T) {
			s, f, err := collectScenario(t, tt.dir, true, true)
			if err != nil {
				t.Fatalf("Collect: %v", err)
			}
			s.Targets = tt.targets
			r := Analyze(s, Options{})
			checkScenario(t, tt, r)
			checkProofRule(t, r)
			if v := r.Pools[0].Verdict; v.Certain && (len(v.From) == 0 || !strings.HasPrefix(v.From[0], "ARM ")) {
				t.Errorf("certain verdict from %q, want the ARM reads named", v.From)
			}
			if !strings.Contains(r.Pools[0].RoutesFrom, "effective routes of aks-nodepool1-12345678-nic-0") {
				t.Errorf("routes from = %q", r.Pools[0].RoutesFrom)
			}
			if len(f.hosts) != 1 || !f.hosts["management.azure.com"] {
				t.Errorf("requests went to %v, want only the (in-process) ARM endpoint", f.hosts)
			}
			for _, a := range f.authorization {
				if a != "Bearer "+canaryToken {
					t.Fatalf("a request carried Authorization %q, want the credential's bearer token", a)
				}
			}
		})
	}
}

// A scale-set NIC has no effective view in ARM: the routes are rebuilt
// from configuration, said so, and the verdict still names the route.
func TestSDKScaleSetNICReconstructs(t *testing.T) {
	s, _, err := collectScenario(t, "blackhole", false, false)
	if err != nil {
		t.Fatalf("Collect: %v", err)
	}
	n := s.NICs["nodepool1"]
	if n == nil || !strings.Contains(n.ID, "virtualMachineScaleSets/aks-nodepool1-12345678-vmss") || n.Routes != nil {
		t.Fatalf("NIC = %+v, want the scale-set NIC without effective routes", n)
	}
	s.Targets = []Target{onprem}
	r := Analyze(s, Options{})
	if v := r.Pools[0].Verdict; v.Cause != "route.blackhole" || !strings.Contains(v.Setting, "route to-onprem") {
		t.Errorf("verdict = %q %q", v.Cause, v.Setting)
	}
	if !strings.Contains(r.Pools[0].RoutesFrom, "scale-set instance NIC") {
		t.Errorf("routes from = %q, want the reason", r.Pools[0].RoutesFrom)
	}
}

// A registry that ARM does not find is an error and a partial snapshot,
// not a panic; the cluster's side is still read.
func TestSDKMissingRegistry(t *testing.T) {
	want, err := LoadAz("testdata/az/healthy")
	if err != nil {
		t.Fatal(err)
	}
	want.Registry = nil
	opts := &arm.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: newFakeARM(want)}}
	s, err := NewCollector(canaryCredential{}, opts).Collect(context.Background(),
		Config{Subscription: fakeSub, ClusterGroup: "rg-aks", Cluster: "aks-prod", RegistryGroup: "rg-hub", Registry: "acrprod"})
	if err == nil || !strings.Contains(err.Error(), "reading registry acrprod: 404 ResourceNotFound") {
		t.Fatalf("Collect error = %v, want the 404 named", err)
	}
	if s.Cluster == nil || len(s.VNets) == 0 {
		t.Fatalf("partial snapshot lost the cluster side: %+v", s)
	}
	r := Analyze(s, Options{})
	if r.Pools[0].Verdict.Cause != "dns.no-endpoint-ip" {
		t.Errorf("verdict = %q, want dns.no-endpoint-ip (no private endpoint read)", r.Pools[0].Verdict.Cause)
	}
}

// Live mode reads the learned routes of the gateway in a GatewaySubnet it
// reads: with a scale-set NIC (routes rebuilt) and gateway transit on, the
// on-premises registry's route is proved by them, and without them it is
// not certain either way.
func TestSDKLearnedRoutes(t *testing.T) {
	want, err := LoadAz("testdata/az/healthy")
	if err != nil {
		t.Fatal(err)
	}
	gw := "/subscriptions/" + fakeSub + "/resourceGroups/rg-hub/providers/Microsoft.Network/virtualNetworkGateways/vpngw-hub"
	for _, v := range want.VNets {
		for _, sn := range v.Properties.Subnets {
			if str(sn.Name) == "GatewaySubnet" {
				id := gw + "/ipConfigurations/default"
				sn.Properties.IPConfigurations = append(sn.Properties.IPConfigurations, &armnetwork.IPConfiguration{ID: &id})
			}
		}
	}
	// No user route toward on-premises, and gateway transit on both sides.
	for _, rt := range want.RouteTables {
		rt.Properties.Routes = nil
	}
	yes := true
	for _, list := range want.Peerings {
		for _, p := range list {
			if strings.HasSuffix(str(p.Properties.RemoteVirtualNetwork.ID), "vnet-hub") {
				p.Properties.UseRemoteGateways = &yes
			} else {
				p.Properties.AllowGatewayTransit = &yes
			}
		}
	}
	network, origin, next := "192.168.0.0/16", "EBgp", "10.0.255.4"
	for _, learned := range [][]*armnetwork.GatewayRoute{{{Network: &network, Origin: &origin, NextHop: &next}}, nil} {
		want.Gateway.Learned = learned
		opts := &arm.ClientOptions{ClientOptions: azcore.ClientOptions{Transport: newFakeARM(want)}}
		s, err := NewCollector(canaryCredential{}, opts).Collect(context.Background(),
			Config{Subscription: fakeSub, ClusterGroup: "rg-aks", Cluster: "aks-prod", RegistryGroup: "rg-hub", Registry: "acrprod"})
		if learned != nil && err != nil {
			t.Fatalf("Collect: %v", err)
		}
		s.Targets = []Target{onprem}
		r := Analyze(s, Options{})
		for _, c := range r.Pools[0].Checks {
			if c.Step != StepRoute || c.Endpoint != "registry.corp.example" {
				continue
			}
			if learned != nil && (!c.OK || !c.Certain || !contains(c.From, "ARM virtualNetworkGateways/vpngw-hub/getLearnedRoutes")) {
				t.Errorf("with learned routes: %+v, want ok and certain from the ARM read", c)
			}
			if learned == nil && (c.Certain || !strings.Contains(c.Settle, "list-learned-routes -g rg-hub -n vpngw-hub")) {
				t.Errorf("without learned routes: %+v, want uncertain naming list-learned-routes", c)
			}
		}
	}
}
