package azure

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerregistry/armcontainerregistry"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/armcontainerservice/v6"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/network/armnetwork/v9"
)

// The files LoadAz reads from a directory, each the output of one az CLI
// command with -o json. Names with a * may appear many times.
const AzLayout = `aks.json                  az aks show -g RG -n CLUSTER                       (required)
acr.json                  az acr show -n REGISTRY                            (optional)
vnet*.json                az network vnet show -g RG -n VNET (or vnet list)  (node VNet, hub, endpoint VNet;
                          its virtualNetworkPeerings are read as the VNet's peerings)
peerings-VNET.json        az network vnet peering list -g RG --vnet-name VNET       (optional)
private-endpoint*.json    az network private-endpoint show -g RG -n PE
dns-zone-group*.json      az network private-endpoint dns-zone-group list -g RG --endpoint-name PE (optional)
pe-nic*.json              az network nic show --ids PE_NIC_ID    (the endpoint's NIC, optional)
dns-links.json            az network private-dns link vnet list -g RG -z privatelink.azurecr.io
dns-records.json          az network private-dns record-set a list -g RG -z privatelink.azurecr.io
routes-POOL.json          az network nic show-effective-route-table -g RG -n NIC   (a node NIC of POOL)
nsg-POOL.json             az network nic list-effective-nsg -g RG -n NIC           (optional)
route-table*.json         az network route-table show -g RG -n TABLE               (optional)
gateway-learned*.json     az network vnet-gateway list-learned-routes -g RG -n GW  (optional)
gateway-advertised*.json  az network vnet-gateway list-advertised-routes -g RG -n GW --peer IP (optional)`

// maxDumpBytes bounds one dump file.
const maxDumpBytes = 32 << 20

// DefaultZone is the private DNS zone of Azure Container Registry.
const DefaultZone = "privatelink.azurecr.io"

// LoadAz reads a directory of az CLI JSON dumps (see AzLayout) into a
// Snapshot. The az CLI prints each ARM resource with its "properties"
// flattened into the object; LoadAz puts them back so the SDK's own model
// types read them. Unreadable files are errors; missing optional ones are
// simply absent from the snapshot.
func LoadAz(dir string) (*Snapshot, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("reading az dumps: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("reading az dumps: %s is not a directory", dir)
	}
	s := &Snapshot{Peerings: map[string][]*armnetwork.VirtualNetworkPeering{}, NICs: map[string]*NodeNIC{},
		ZoneGroups: map[string][]*armnetwork.PrivateDNSZoneGroup{}, From: map[string]string{}}
	var errs []error
	read := func(name string) []byte {
		b, err := readLimited(filepath.Join(dir, name))
		if err != nil {
			errs = append(errs, err)
			return nil
		}
		return b
	}
	glob := func(pattern string) []string {
		m, _ := filepath.Glob(filepath.Join(dir, pattern))
		sort.Strings(m)
		for i := range m {
			m[i] = filepath.Base(m[i])
		}
		return m
	}
	if b := read("aks.json"); b != nil {
		s.Cluster = &armcontainerservice.ManagedCluster{}
		errs = append(errs, decodeResource(azAKSKeys(b), s.Cluster, "aks.json"))
		s.setFrom(fromAKS, "", "aks.json")
	}
	if len(glob("acr.json")) > 0 {
		if b := read("acr.json"); b != nil {
			s.Registry = &armcontainerregistry.Registry{}
			errs = append(errs, decodeResource(b, s.Registry, "acr.json", "privateEndpointConnections"))
			s.setFrom(fromACR, "", "acr.json")
		}
	}
	for _, f := range glob("vnet*.json") {
		b := read(f)
		if b == nil {
			continue
		}
		var vnets []*armnetwork.VirtualNetwork
		if err := decodeOneOrList(b, &vnets, f, "subnets", "virtualNetworkPeerings"); err != nil {
			errs = append(errs, err)
			continue
		}
		for _, v := range vnets {
			s.VNets = append(s.VNets, v)
			s.setFrom(fromVNet, str(v.ID), f)
			// az network vnet show prints the VNet's peerings; a VNet
			// printed without the key (or with null) had them not read.
			if v.Properties != nil && v.Properties.VirtualNetworkPeerings != nil {
				s.Peerings[strings.ToLower(str(v.ID))] = v.Properties.VirtualNetworkPeerings
				s.setFrom(fromPeerings, str(v.ID), f+" virtualNetworkPeerings")
			}
		}
	}
	for _, f := range glob("peerings-*.json") {
		b := read(f)
		if b == nil {
			continue
		}
		var list []*armnetwork.VirtualNetworkPeering
		if err := decodeOneOrList(b, &list, f); err != nil {
			errs = append(errs, err)
			continue
		}
		vnetName := strings.TrimSuffix(strings.TrimPrefix(f, "peerings-"), ".json")
		key := ""
		for _, v := range s.VNets {
			if strings.EqualFold(str(v.Name), vnetName) {
				key = str(v.ID)
			}
		}
		if key == "" && len(list) > 0 && list[0] != nil {
			key = parentID(str(list[0].ID))
		}
		if key == "" {
			errs = append(errs, fmt.Errorf("%s: no VNet named %q among the vnet*.json dumps", f, vnetName))
			continue
		}
		s.Peerings[strings.ToLower(key)] = list
		s.setFrom(fromPeerings, key, f)
	}
	for _, f := range glob("private-endpoint*.json") {
		if b := read(f); b != nil {
			pe := &armnetwork.PrivateEndpoint{}
			if err := decodeResource(b, pe, f, "privateLinkServiceConnections", "manualPrivateLinkServiceConnections", "ipConfigurations"); err != nil {
				errs = append(errs, err)
				continue
			}
			s.PrivateEndpoints = append(s.PrivateEndpoints, pe)
			s.setFrom(fromPE, str(pe.ID), f)
		}
	}
	for _, f := range glob("dns-zone-group*.json") {
		b := read(f)
		if b == nil {
			continue
		}
		var groups []*armnetwork.PrivateDNSZoneGroup
		if err := decodeOneOrList(b, &groups, f, "privateDnsZoneConfigs"); err != nil {
			errs = append(errs, err)
			continue
		}
		for _, g := range groups {
			pe := zoneGroupEndpoint(str(g.ID))
			if pe == "" {
				errs = append(errs, fmt.Errorf("%s: zone group %q: its ID names no private endpoint", f, str(g.Name)))
				continue
			}
			s.ZoneGroups[strings.ToLower(pe)] = append(s.ZoneGroups[strings.ToLower(pe)], g)
			s.setFrom(fromZoneGroups, pe, f)
		}
	}
	for _, f := range glob("pe-nic*.json") {
		if b := read(f); b != nil {
			nic := &armnetwork.Interface{}
			if err := decodeResource(b, nic, f, "ipConfigurations"); err != nil {
				errs = append(errs, err)
				continue
			}
			s.EndpointNICs = append(s.EndpointNICs, nic)
			s.setFrom(fromPENIC, str(nic.ID), f)
		}
	}
	for _, f := range glob("route-table*.json") {
		if b := read(f); b != nil {
			rt := &armnetwork.RouteTable{}
			if err := decodeResource(b, rt, f, "routes"); err != nil {
				errs = append(errs, err)
				continue
			}
			s.RouteTables = append(s.RouteTables, rt)
			s.setFrom(fromRouteTable, str(rt.ID), f)
		}
	}
	s.Zone.Name = DefaultZone
	if len(glob("dns-links.json")) > 0 {
		if b := read("dns-links.json"); b != nil {
			if err := decodeOneOrList(b, &s.Zone.Links, "dns-links.json"); err != nil {
				errs = append(errs, err)
			} else {
				s.Zone.LinksRead = true
				s.setFrom(fromLinks, "", "dns-links.json")
			}
		}
	}
	if len(glob("dns-records.json")) > 0 {
		if b := read("dns-records.json"); b != nil {
			if err := decodeOneOrList(b, &s.Zone.Records, "dns-records.json"); err != nil {
				errs = append(errs, err)
			} else {
				s.Zone.RecordsRead = true
				s.setFrom(fromRecords, "", "dns-records.json")
			}
		}
	}
	if z := zoneFromDump(s); z != "" {
		s.Zone.Name = z
	}
	for kind, pattern := range map[string]string{fromLearned: "gateway-learned*.json", fromAdvertised: "gateway-advertised*.json"} {
		for _, f := range glob(pattern) {
			b := read(f)
			if b == nil {
				continue
			}
			var routes []*armnetwork.GatewayRoute
			if err := decodeValues(b, &routes, f); err != nil {
				errs = append(errs, err)
				continue
			}
			if routes == nil {
				routes = []*armnetwork.GatewayRoute{}
			}
			if kind == fromLearned {
				s.Gateway.Learned = append(s.Gateway.Learned, routes...)
				if s.Gateway.Learned == nil {
					s.Gateway.Learned = []*armnetwork.GatewayRoute{}
				}
			} else {
				s.Gateway.Advertised = append(s.Gateway.Advertised, routes...)
				if s.Gateway.Advertised == nil {
					s.Gateway.Advertised = []*armnetwork.GatewayRoute{}
				}
			}
			s.From[fromKey(kind, "")] = joinFrom(s.From[fromKey(kind, "")], f)
		}
	}
	for _, f := range glob("routes-*.json") {
		pool := strings.TrimSuffix(strings.TrimPrefix(f, "routes-"), ".json")
		b := read(f)
		if b == nil {
			continue
		}
		var routes []*armnetwork.EffectiveRoute
		if err := decodeValues(b, &routes, f); err != nil {
			errs = append(errs, err)
			continue
		}
		if routes == nil {
			routes = []*armnetwork.EffectiveRoute{}
		}
		nicFor(s, pool).Routes = routes
		nicFor(s, pool).ID = f
		s.setFrom(fromRoutes, pool, f)
	}
	for _, f := range glob("nsg-*.json") {
		pool := strings.TrimSuffix(strings.TrimPrefix(f, "nsg-"), ".json")
		b := read(f)
		if b == nil {
			continue
		}
		groups, err := decodeEffectiveNSGs(b)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f, err))
			continue
		}
		nicFor(s, pool).Security = groups
		s.setFrom(fromNSG, pool, f)
	}
	for _, n := range s.NICs {
		if n.Security == nil && n.SecurityNote == "" {
			n.SecurityNote = "no nsg-POOL.json (az network nic list-effective-nsg) in the dump"
		}
	}
	return s, errors.Join(errs...)
}

func joinFrom(a, b string) string {
	if a == "" {
		return b
	}
	return a + ", " + b
}

// zoneGroupEndpoint is the private endpoint a zone group ID belongs to
// (…/privateEndpoints/PE/privateDnsZoneGroups/NAME).
func zoneGroupEndpoint(id string) string {
	parts := strings.Split(strings.TrimSuffix(id, "/"), "/")
	for i := len(parts) - 2; i > 0; i-- {
		if strings.EqualFold(parts[i], "privateDnsZoneGroups") && i >= 2 {
			return strings.Join(parts[:i], "/")
		}
	}
	return ""
}

// azAKSKeys renames the agent pool keys az spells differently from the
// REST API (az prints vnetSubnetId, the API and SDK vnetSubnetID).
func azAKSKeys(b []byte) []byte {
	var obj map[string]json.RawMessage
	if json.Unmarshal(b, &obj) != nil {
		return b
	}
	var pools []map[string]json.RawMessage
	if json.Unmarshal(obj["agentPoolProfiles"], &pools) != nil {
		return b
	}
	for _, p := range pools {
		for az, api := range map[string]string{"vnetSubnetId": "vnetSubnetID", "podSubnetId": "podSubnetID"} {
			if v, ok := p[az]; ok {
				p[api] = v
				delete(p, az)
			}
		}
	}
	pb, err := json.Marshal(pools)
	if err != nil {
		return b
	}
	obj["agentPoolProfiles"] = pb
	out, err := json.Marshal(obj)
	if err != nil {
		return b
	}
	return out
}

func nicFor(s *Snapshot, pool string) *NodeNIC {
	n := s.NICs[pool]
	if n == nil {
		n = &NodeNIC{}
		s.NICs[pool] = n
	}
	return n
}

// zoneFromDump reads the zone's name from a link or record ID.
func zoneFromDump(s *Snapshot) string {
	ids := []string{}
	for _, l := range s.Zone.Links {
		if l != nil {
			ids = append(ids, str(l.ID))
		}
	}
	for _, r := range s.Zone.Records {
		if r != nil {
			ids = append(ids, str(r.ID))
		}
	}
	for _, id := range ids {
		parts := strings.Split(id, "/")
		for i, p := range parts {
			if strings.EqualFold(p, "privateDnsZones") && i+1 < len(parts) {
				return strings.ToLower(parts[i+1])
			}
		}
	}
	return ""
}

// parentID cuts the last type/name pair off a resource ID.
func parentID(id string) string {
	parts := strings.Split(strings.TrimSuffix(id, "/"), "/")
	if len(parts) < 3 {
		return ""
	}
	return strings.Join(parts[:len(parts)-2], "/")
}

func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading az dump: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxDumpBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading az dump %s: %w", path, err)
	}
	if len(b) > maxDumpBytes {
		return nil, fmt.Errorf("reading az dump %s: larger than %d bytes", path, maxDumpBytes)
	}
	return b, nil
}

// unflatten turns one az CLI object back into the ARM shape: the
// top-level keys of a resource (id, name, type, location, etag, tags) stay,
// and everything goes under "properties" as well (the SDK's decoders skip
// what they do not know). Objects listed under nested keys are sub-resources
// and are unflattened the same way. An object that already has
// "properties" (the REST shape) is kept as it is.
func unflatten(raw json.RawMessage, nested ...string) (json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	if _, ok := obj["properties"]; ok {
		return raw, nil
	}
	for _, k := range nested {
		arr, ok := obj[k]
		if !ok {
			continue
		}
		var items []json.RawMessage
		if err := json.Unmarshal(arr, &items); err != nil {
			continue // null or not a list: leave it
		}
		for i := range items {
			u, err := unflatten(items[i])
			if err != nil {
				return nil, fmt.Errorf("%s[%d]: %w", k, i, err)
			}
			items[i] = u
		}
		b, err := json.Marshal(items)
		if err != nil {
			return nil, err
		}
		obj[k] = b
	}
	props, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	out := map[string]json.RawMessage{"properties": props}
	for _, k := range []string{"id", "name", "type", "location", "etag", "tags"} {
		if v, ok := obj[k]; ok {
			out[k] = v
		}
	}
	return json.Marshal(out)
}

func decodeResource(b []byte, into any, file string, nested ...string) error {
	u, err := unflatten(bytes.TrimSpace(b), nested...)
	if err == nil {
		err = json.Unmarshal(u, into)
	}
	if err != nil {
		return fmt.Errorf("%s: decoding az output: %w", file, err)
	}
	return nil
}

// decodeOneOrList reads one resource, a JSON array of them (what az list
// commands print) or {"value": [...]} (the REST shape), each unflattened
// with its nested sub-resources.
func decodeOneOrList[T any](b []byte, into *[]*T, file string, nested ...string) error {
	b = bytes.TrimSpace(b)
	var items []json.RawMessage
	switch {
	case len(b) > 0 && b[0] == '[':
		if err := json.Unmarshal(b, &items); err != nil {
			return fmt.Errorf("%s: decoding az output: %w", file, err)
		}
	case len(b) > 0 && b[0] == '{':
		var w map[string]json.RawMessage
		if err := json.Unmarshal(b, &w); err != nil {
			return fmt.Errorf("%s: decoding az output: %w", file, err)
		}
		if v, ok := w["value"]; ok && len(w) <= 2 && !hasKey(w, "id") {
			if err := json.Unmarshal(v, &items); err != nil {
				return fmt.Errorf("%s: decoding az output: value: %w", file, err)
			}
		} else if hasKey(w, "id") {
			items = []json.RawMessage{b}
		} else {
			return fmt.Errorf("%s: decoding az output: want a resource (with an id), a JSON array or {\"value\": [...]}", file)
		}
	default:
		return fmt.Errorf("%s: decoding az output: want a JSON object or array", file)
	}
	for i, it := range items {
		v := new(T)
		if err := decodeResource(it, v, fmt.Sprintf("%s[%d]", file, i), nested...); err != nil {
			return err
		}
		*into = append(*into, v)
	}
	if *into == nil {
		*into = []*T{}
	}
	return nil
}

func hasKey(m map[string]json.RawMessage, k string) bool { _, ok := m[k]; return ok }

// decodeValues reads {"value": [...]} (what the effective-route and
// effective-NSG operations return) or a bare array.
func decodeValues[T any](b []byte, into *[]*T, file string) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '{' {
		var w struct {
			Value json.RawMessage `json:"value"`
		}
		if err := json.Unmarshal(b, &w); err != nil {
			return fmt.Errorf("%s: decoding az output: %w", file, err)
		}
		b = w.Value
		if len(b) == 0 {
			return nil
		}
	}
	if err := json.Unmarshal(b, into); err != nil {
		return fmt.Errorf("%s: decoding az output: %w", file, err)
	}
	return nil
}

// decodeEffectiveNSGs reads an effective network security group list. The
// service sends tagMap as an object of tag → prefixes, while the SDK model
// types it as a string, so the SDK's own decoder refuses real responses;
// tagMap is dropped here (the rules carry their expanded prefixes).
func decodeEffectiveNSGs(b []byte) ([]*armnetwork.EffectiveNetworkSecurityGroup, error) {
	var raw []map[string]json.RawMessage
	if err := decodeValuesRaw(b, &raw); err != nil {
		return nil, err
	}
	out := make([]*armnetwork.EffectiveNetworkSecurityGroup, 0, len(raw))
	for i, g := range raw {
		delete(g, "tagMap")
		gb, err := json.Marshal(g)
		if err != nil {
			return nil, err
		}
		v := &armnetwork.EffectiveNetworkSecurityGroup{}
		if err := json.Unmarshal(gb, v); err != nil {
			return nil, fmt.Errorf("decoding effective security group %d: %w", i, err)
		}
		out = append(out, v)
	}
	return out, nil
}

func decodeValuesRaw(b []byte, into *[]map[string]json.RawMessage) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '{' {
		var w struct {
			Value json.RawMessage `json:"value"`
		}
		if err := json.Unmarshal(b, &w); err != nil {
			return err
		}
		if b = w.Value; len(b) == 0 {
			return nil
		}
	}
	return json.Unmarshal(b, into)
}
