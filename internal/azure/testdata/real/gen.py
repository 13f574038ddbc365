#!/usr/bin/env python3
"""Builds the scenario directories under testdata/real from the real az and
ARM outputs kept verbatim in raw/ (see SOURCES.md for where each comes from).

Every file a scenario holds is one raw file with its names, IDs, addresses
and the values the scenario is about changed; every other field, null and
casing is the raw file's. The RESHAPE table below says, per output file,
what was changed; gen.py writes it into each scenario's RESHAPED.md.

Run from this directory: python3 gen.py
"""
import copy
import json
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
RAW = os.path.join(HERE, "raw")
SUB = "00000000-0000-0000-0000-000000000000"
RG = "rg-dual-hub-vnra-udr-transit"
NET = f"/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.Network"
SPOKE = f"{NET}/virtualNetworks/spoke2-vnet"
HUB = f"{NET}/virtualNetworks/hub2-vnet"
ZONE = f"{NET}/privateDnsZones/privatelink.azurecr.io"
PE = f"{NET}/privateEndpoints/pe-acrdemo"
RT = f"{NET}/routeTables/rt-spoke2"
GW = f"{NET}/virtualNetworkGateways/vpngw-hub2"
LOGIN, DATA = "acrdemo.azurecr.io", "acrdemo.westeurope.data.azurecr.io"
LOGIN_IP, DATA_IP = "10.20.2.4", "10.20.2.5"


def raw(*path):
    with open(os.path.join(RAW, *path)) as f:
        return json.load(f)


def body(example):
    """The 200 response body of a REST API specification example."""
    return example["responses"]["200"]["body"]


def resub(obj):
    """Replace the redacted subscription of net-lab-builder's captures."""
    return json.loads(json.dumps(obj).replace("<SUBSCRIPTION_ID>", SUB))


# ---- the base world, each part from one raw file ------------------------

def vnets():
    """spoke2-vnet (the node VNet) and hub2-vnet from a real
    `az network vnet list`; snet-pe and GatewaySubnet added."""
    out = {}
    for v in resub(raw("net-lab-builder", "02-vnets.json")):
        if v["name"] in ("spoke2-vnet", "hub2-vnet"):
            out[v["name"]] = v
    spoke, hub = out["spoke2-vnet"], out["hub2-vnet"]
    pe = copy.deepcopy(spoke["subnets"][0])
    pe["name"] = "snet-pe"
    pe["id"] = SPOKE + "/subnets/snet-pe"
    pe["addressPrefix"] = "10.20.2.0/24"
    del pe["routeTable"]
    spoke["subnets"].append(pe)
    # GatewaySubnet in the REST shape azure-cli's recording shows.
    gws = {"name": "GatewaySubnet", "id": HUB + "/subnets/GatewaySubnet",
           "etag": "W/\"aad34fab-e089-4b6e-bb28-7df32d755abd\"",
           "properties": {"provisioningState": "Succeeded", "addressPrefix": "10.2.255.0/27", "delegations": [],
                          "ipConfigurations": [{"id": GW + "/ipConfigurations/default"}],
                          "privateEndpointNetworkPolicies": "Enabled", "privateLinkServiceNetworkPolicies": "Enabled"},
           "type": "Microsoft.Network/virtualNetworks/subnets"}
    hub["subnets"].append(gws)
    for p in spoke["virtualNetworkPeerings"] + hub["virtualNetworkPeerings"]:
        p["allowVirtualNetworkAccess"] = True
    return spoke, hub


def peering(v, remote):
    for p in v["virtualNetworkPeerings"]:
        if p["remoteVirtualNetwork"]["id"].endswith("/" + remote):
            return p
    raise KeyError(remote)


def aks():
    c = body(raw("azure-rest-api-specs", "ManagedClustersGet.json"))
    # the AKS API spells the group "resourcegroups", as this example does
    c["properties"]["agentPoolProfiles"][0]["vnetSubnetID"] = (
        f"/subscriptions/{SUB}/resourcegroups/{RG}/providers/Microsoft.Network/virtualNetworks/spoke2-vnet/subnets/vm-subnet")
    return c


def private_endpoint():
    p = body(raw("azure-rest-api-specs", "PrivateEndpointGet.json"))
    p["name"], p["id"], p["location"] = "pe-acrdemo", PE, "westeurope"
    props = p["properties"]
    plc = props["privateLinkServiceConnections"][0]
    plc["id"] = PE + "/privateLinkServiceConnections/pe-acrdemo"
    plc["properties"]["privateLinkServiceId"] = f"/subscriptions/{SUB}/resourceGroups/{RG}/providers/Microsoft.ContainerRegistry/registries/acrdemo"
    plc["properties"]["groupIds"] = ["registry"]
    props["subnet"]["id"] = SPOKE + "/subnets/snet-pe"
    props["customDnsConfigs"][0].update(fqdn=LOGIN, ipAddresses=[LOGIN_IP])
    props["customDnsConfigs"][1].update(fqdn=DATA, ipAddresses=[DATA_IP])
    props["ipConfigurations"][0]["properties"].update(groupId="registry", memberName="registry", privateIPAddress=LOGIN_IP)
    props["ipConfigurations"][1]["properties"].update(groupId="registry", memberName="registry_data_westeurope", privateIPAddress=DATA_IP)
    return p


def zone_groups():
    groups = body(raw("azure-rest-api-specs", "PrivateEndpointDnsZoneGroupList.json"))["value"][:1]
    g = groups[0]
    g["name"], g["id"] = "default", PE + "/privateDnsZoneGroups/default"
    zc = g["properties"]["privateDnsZoneConfigs"][0]["properties"]
    zc["privateDnsZoneId"] = ZONE
    zc["recordSets"][0].update(recordSetName="acrdemo", fqdn="acrdemo.privatelink.azurecr.io", ipAddresses=[LOGIN_IP])
    zc["recordSets"][1].update(recordSetName="acrdemo.westeurope.data", fqdn="acrdemo.westeurope.data.privatelink.azurecr.io", ipAddresses=[DATA_IP])
    return {"value": groups}


def links(completed, in_progress):
    ls = body(raw("azure-rest-api-specs", "VirtualNetworkLinkList.json"))
    for l, v in zip(ls["value"], (completed, in_progress)):
        l["id"] = ZONE + "/virtualNetworkLinks/link-" + v.rsplit("/", 1)[1]
        l["name"] = "link-" + v.rsplit("/", 1)[1]
        l["properties"]["virtualNetwork"]["id"] = v
    return ls["value"]


def records(with_data=True):
    rs = body(raw("azure-rest-api-specs", "RecordSetAList.json"))["value"]
    for r, (name, ip) in zip(rs, (("acrdemo", LOGIN_IP), ("acrdemo.westeurope.data", DATA_IP))):
        r["id"] = ZONE + "/A/" + name
        r["name"] = name
        r["properties"]["fqdn"] = name + ".privatelink.azurecr.io."
        r["properties"]["aRecords"][0]["ipv4Address"] = ip
    return rs if with_data else rs[:1]


def route_table(first_route=None, disable_propagation=False):
    rt = body(raw("azure-rest-api-specs", "RouteTableGet.json"))
    rt["name"], rt["id"], rt["location"] = "rt-spoke2", RT, "northeurope"
    rt["properties"]["disableBgpRoutePropagation"] = disable_propagation
    if first_route:
        r = rt["properties"]["routes"][0]
        r["name"] = first_route[0]
        r["id"] = RT + "/routes/" + first_route[0]
        r["properties"]["addressPrefix"] = first_route[1]
        r["properties"]["nextHopType"] = first_route[2]
    return rt


def effective_routes():
    routes = raw("net-lab-builder", "R4-effective-routes.json")
    s = json.dumps(routes).replace("10.61.0.0/16", "10.20.0.0/16").replace("10.61.2.4/32", LOGIN_IP + "/32")
    return json.loads(s)


def effective_nsg(prefix):
    nsg = raw("net-lab-builder", "R4-effective-nsg.json")
    s = json.dumps(nsg).replace("10.61.2.4/32", prefix).replace("10.61.1.0/24", "10.20.1.0/24") \
        .replace("10.61.0.0/16", "10.20.0.0/16").replace("snet-client", "vm-subnet") \
        .replace("vnet-endpoint-path", "spoke2-vnet").replace("<RESOURCE_GROUP>", RG).replace("<GUID>", SUB)
    return json.loads(s)


def learned():
    return raw("net-lab-builder", "04-pre-vpngw-onprem-learned-routes.json")


def advertised():
    return raw("net-lab-builder", "04-pre-vpngw-hub1-advertised-to-onprem.json")


# ---- the scenarios ------------------------------------------------------

def base():
    spoke, hub = vnets()
    return {
        "aks.json": aks(),
        "vnet-spoke2.json": spoke,
        "vnet-hub2.json": hub,
        "private-endpoint.json": private_endpoint(),
        "dns-links.json": links(SPOKE, HUB),
        "dns-records.json": records(),
        "route-table-spoke2.json": route_table(),
    }


def transit(files, on):
    peering(files["vnet-spoke2.json"], "hub2-vnet")["useRemoteGateways"] = on
    peering(files["vnet-hub2.json"], "spoke2-vnet")["allowGatewayTransit"] = on


def scenarios():
    out = {}

    s = base()
    s["routes-nodepool1.json"] = effective_routes()
    s["nsg-nodepool1.json"] = effective_nsg(LOGIN_IP + "/31")
    out["healthy"] = (s, "routes and nsg of a standalone NIC (R4 captures) with 10.61.0.0/16 → 10.20.0.0/16, the /32 → 10.20.2.4/32; "
                         "the NSG's 10.61.1.0/24 → 10.20.1.0/24 (vm-subnet), 10.61.0.0/16 → 10.20.0.0/16, and its AllowTranslatorPrivateEndpoint rule widened to 10.20.2.4/31 (both endpoint IPs)")

    s = base()
    s["route-table-spoke2.json"] = route_table(("to-onprem", "10.10.0.0/16", "None"))
    out["udr-none"] = (s, "route1 → to-onprem 10.10.0.0/16 next hop None")

    s = base()
    out["transit-off"] = (s, "peerings as captured: useRemoteGateways and allowGatewayTransit false on both sides")

    s = base()
    sp = peering(s["vnet-spoke2.json"], "hub2-vnet")
    sp["peeringState"] = "Initiated"
    s["vnet-hub2.json"]["virtualNetworkPeerings"] = [p for p in s["vnet-hub2.json"]["virtualNetworkPeerings"]
                                                     if not p["remoteVirtualNetwork"]["id"].endswith("/spoke2-vnet")]
    out["peering-one-way"] = (s, "spoke2-to-hub2 peeringState Initiated; hub2-to-spoke2 removed")

    s = base()
    s["dns-links.json"] = links(HUB, SPOKE)
    out["zone-not-linked"] = (s, "the zone's Completed link points at hub2-vnet, the InProgress one at spoke2-vnet")

    s = base()
    s["routes-nodepool1.json"] = effective_routes()
    s["nsg-nodepool1.json"] = effective_nsg(LOGIN_IP + "/32")
    out["nsg-deny"] = (s, "as healthy, but the NSG's allow rule covers the login server only (10.20.2.4/32), so the real DenyOtherOutbound (4000) decides the data endpoint")

    s = base()
    s["vnet-spoke2.json"]["dhcpOptions"] = {"dnsServers": ["10.10.0.53"]}
    out["custom-dns"] = (s, "spoke2-vnet gets dhcpOptions.dnsServers [10.10.0.53] (a resolver outside every VNet read)")

    s = base()
    s["dns-records.json"] = records(with_data=False)
    out["missing-data-record"] = (s, "recorda2 (acrdemo.westeurope.data) left out")

    s = base()
    s["private-endpoint.json"]["properties"]["customDnsConfigs"] = []
    s["dns-zone-group.json"] = zone_groups()
    del s["dns-records.json"]
    s["routes-nodepool1.json"] = effective_routes()
    s["nsg-nodepool1.json"] = effective_nsg(LOGIN_IP + "/31")
    out["zone-group"] = (s, "as healthy, but customDnsConfigs [] and no dns-records.json: the zone group (second group of the example, zone2.com, left out) holds the names")

    s = base()
    transit(s, True)
    s["route-table-spoke2.json"] = route_table(disable_propagation=True)
    out["propagation-disabled"] = (s, "gateway transit on (useRemoteGateways, allowGatewayTransit true); disableBgpRoutePropagation true")

    s = base()
    transit(s, True)
    out["gateway-routes-unknown"] = (s, "gateway transit on; no learned-routes dump")

    s = base()
    transit(s, True)
    s["gateway-learned.json"] = learned()
    s["gateway-advertised.json"] = advertised()
    out["gateway-routes-learned"] = (s, "gateway transit on; the learned and advertised routes as captured")

    s = base()
    out["vnet-show-peerings"] = (s, "the base world: peerings only inside the vnet dumps (no peerings-*.json)")
    return out


SHARED = """Shared by every scenario (see ../SOURCES.md for the raw files):
- aks.json: ManagedClustersGet.json's body; vnetSubnetID added to nodepool1 (spoke2-vnet/vm-subnet, with the AKS API's `resourcegroups` casing).
- vnet-spoke2.json, vnet-hub2.json: the spoke2-vnet and hub2-vnet entries of 02-vnets.json (subscription placeholder filled in);
  subnet snet-pe (10.20.2.0/24, a copy of vm-subnet without its route table) added to spoke2-vnet; a GatewaySubnet (shape of the
  azure-cli recording's vnet2 GatewaySubnet, with an ipConfiguration naming vpngw-hub2) added to hub2-vnet; allowVirtualNetworkAccess
  set true on the peerings (captured false).
- private-endpoint.json: PrivateEndpointGet.json's body renamed pe-acrdemo in snet-pe; customDnsConfigs and ipConfigurations point at
  acrdemo.azurecr.io 10.20.2.4 and acrdemo.westeurope.data.azurecr.io 10.20.2.5; groupIds registry.
- dns-links.json: VirtualNetworkLinkList.json's value; link 1 (Completed) and link 2 (InProgress, registrationEnabled) point at VNets.
- dns-records.json: RecordSetAList.json's value renamed acrdemo and acrdemo.westeurope.data with the endpoint IPs.
- route-table-spoke2.json: RouteTableGet.json's body renamed rt-spoke2 (the table vm-subnet names).
"""


def main():
    for name, (files, note) in sorted(scenarios().items()):
        d = os.path.join(HERE, name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        for fn, obj in sorted(files.items()):
            with open(os.path.join(d, fn), "w") as f:
                json.dump(obj, f, indent=2)
                f.write("\n")
        with open(os.path.join(d, "RESHAPED.md"), "w") as f:
            f.write(f"# {name}: what gen.py changed in the raw files\n\n{SHARED}\nThis scenario: {note}.\n")


if __name__ == "__main__":
    main()
