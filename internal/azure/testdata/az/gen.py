#!/usr/bin/env python3
"""Writes the az CLI dump fixtures of internal/azure, one directory per
scenario. Each file has the shape `az ... -o json` prints (the REST resource
with "properties" flattened into the object); SOURCES.md cites the page each
shape comes from. Run from this directory: python3 gen.py"""
import copy, json, os, shutil

SUB = "/subscriptions/00000000-0000-0000-0000-00000000c0de"
AKS_RG, HUB_RG = "rg-aks", "rg-hub"
VNET_AKS = f"{SUB}/resourceGroups/{AKS_RG}/providers/Microsoft.Network/virtualNetworks/vnet-aks"
VNET_HUB = f"{SUB}/resourceGroups/{HUB_RG}/providers/Microsoft.Network/virtualNetworks/vnet-hub"
SNET_NODES = f"{VNET_AKS}/subnets/snet-nodes"
SNET_PE = f"{VNET_HUB}/subnets/snet-pe"
RT_AKS = f"{SUB}/resourceGroups/{AKS_RG}/providers/Microsoft.Network/routeTables/rt-aks"
RT_PE = f"{SUB}/resourceGroups/{HUB_RG}/providers/Microsoft.Network/routeTables/rt-pe"
NSG_AKS = f"{SUB}/resourceGroups/{AKS_RG}/providers/Microsoft.Network/networkSecurityGroups/nsg-aks"
ZONE = f"{SUB}/resourceGroups/{HUB_RG}/providers/Microsoft.Network/privateDnsZones/privatelink.azurecr.io"
VMSS_IPCFG = (f"{SUB}/resourceGroups/MC_rg-aks_aks-prod_westeurope/providers/Microsoft.Compute/"
              "virtualMachineScaleSets/aks-nodepool1-12345678-vmss/virtualMachines/0/networkInterfaces/"
              "aks-nodepool1-12345678-vmss/ipConfigurations/ipconfig1")

def aks():
    return {"id": f"{SUB}/resourcegroups/{AKS_RG}/providers/Microsoft.ContainerService/managedClusters/aks-prod",
            "name": "aks-prod", "location": "westeurope", "type": "Microsoft.ContainerService/ManagedClusters",
            "resourceGroup": AKS_RG, "kubernetesVersion": "1.33.2", "nodeResourceGroup": "MC_rg-aks_aks-prod_westeurope",
            "provisioningState": "Succeeded",
            "agentPoolProfiles": [{"name": "nodepool1", "count": 3, "vmSize": "Standard_D4ds_v5", "mode": "System",
                                   "osType": "Linux", "type": "VirtualMachineScaleSets", "vnetSubnetId": SNET_NODES,
                                   "provisioningState": "Succeeded"}],
            "networkProfile": {"networkPlugin": "azure", "networkPluginMode": "overlay", "outboundType": "loadBalancer"}}

def acr():
    return {"id": f"{SUB}/resourceGroups/{HUB_RG}/providers/Microsoft.ContainerRegistry/registries/acrprod",
            "name": "acrprod", "location": "westeurope", "type": "Microsoft.ContainerRegistry/registries",
            "resourceGroup": HUB_RG, "loginServer": "acrprod.azurecr.io", "dataEndpointEnabled": True,
            "dataEndpointHostNames": ["acrprod.westeurope.data.azurecr.io", "acrprod.northeurope.data.azurecr.io"],
            "publicNetworkAccess": "Disabled", "sku": {"name": "Premium", "tier": "Premium"},
            "privateEndpointConnections": [{"id": f"{SUB}/resourceGroups/{HUB_RG}/providers/Microsoft.ContainerRegistry/registries/acrprod/privateEndpointConnections/pe-acrprod.1",
                                            "name": "pe-acrprod.1", "resourceGroup": HUB_RG,
                                            "privateEndpoint": {"id": f"{SUB}/resourceGroups/{HUB_RG}/providers/Microsoft.Network/privateEndpoints/pe-acrprod", "resourceGroup": HUB_RG},
                                            "privateLinkServiceConnectionState": {"status": "Approved", "description": "", "actionsRequired": "None"},
                                            "provisioningState": "Succeeded"}]}

def subnet(vnet, name, prefix, rt=None, nsg=None, ipcfgs=()):
    rg = AKS_RG if "vnet-aks" in vnet else HUB_RG
    s = {"id": f"{vnet}/subnets/{name}", "name": name, "addressPrefix": prefix, "resourceGroup": rg,
         "type": "Microsoft.Network/virtualNetworks/subnets", "provisioningState": "Succeeded",
         "privateEndpointNetworkPolicies": "Disabled", "privateLinkServiceNetworkPolicies": "Enabled",
         "delegations": []}
    if rt: s["routeTable"] = {"id": rt, "resourceGroup": rg}
    if nsg: s["networkSecurityGroup"] = {"id": nsg, "resourceGroup": rg}
    if ipcfgs: s["ipConfigurations"] = [{"id": i, "resourceGroup": "MC_rg-aks_aks-prod_westeurope"} for i in ipcfgs]
    return s

def vnet_aks(dns=()):
    return {"id": VNET_AKS, "name": "vnet-aks", "location": "westeurope", "resourceGroup": AKS_RG,
            "type": "Microsoft.Network/virtualNetworks", "provisioningState": "Succeeded",
            "addressSpace": {"addressPrefixes": ["10.240.0.0/16"]},
            "dhcpOptions": {"dnsServers": list(dns)}, "enableDdosProtection": False,
            "subnets": [subnet(VNET_AKS, "snet-nodes", "10.240.0.0/22", RT_AKS, NSG_AKS, [VMSS_IPCFG])],
            "virtualNetworkPeerings": []}

def vnet_hub(pe_rt=None):
    return {"id": VNET_HUB, "name": "vnet-hub", "location": "westeurope", "resourceGroup": HUB_RG,
            "type": "Microsoft.Network/virtualNetworks", "provisioningState": "Succeeded",
            "addressSpace": {"addressPrefixes": ["10.0.0.0/16"]}, "dhcpOptions": {"dnsServers": []},
            "subnets": [subnet(VNET_HUB, "GatewaySubnet", "10.0.255.0/27"),
                        subnet(VNET_HUB, "snet-pe", "10.0.1.0/24", pe_rt),
                        subnet(VNET_HUB, "snet-dns", "10.0.2.0/24")],
            "virtualNetworkPeerings": []}

def peering(local, name, remote, remote_space, state="Connected", transit=False, use_remote=False):
    rg = AKS_RG if "vnet-aks" in local else HUB_RG
    return {"id": f"{local}/virtualNetworkPeerings/{name}", "name": name, "resourceGroup": rg,
            "type": "Microsoft.Network/virtualNetworks/virtualNetworkPeerings",
            "allowVirtualNetworkAccess": True, "allowForwardedTraffic": True,
            "allowGatewayTransit": transit, "useRemoteGateways": use_remote,
            "peeringState": state, "peeringSyncLevel": "FullyInSync", "provisioningState": "Succeeded",
            "remoteVirtualNetwork": {"id": remote, "resourceGroup": HUB_RG if "vnet-hub" in remote else AKS_RG},
            "remoteAddressSpace": {"addressPrefixes": [remote_space]}}

def private_endpoint(fqdns):
    return {"id": f"{SUB}/resourceGroups/{HUB_RG}/providers/Microsoft.Network/privateEndpoints/pe-acrprod",
            "name": "pe-acrprod", "location": "westeurope", "resourceGroup": HUB_RG,
            "type": "Microsoft.Network/privateEndpoints", "provisioningState": "Succeeded",
            "customDnsConfigs": [{"fqdn": f, "ipAddresses": [ip]} for f, ip in fqdns],
            "subnet": {"id": SNET_PE, "resourceGroup": HUB_RG},
            "networkInterfaces": [{"id": f"{SUB}/resourceGroups/{HUB_RG}/providers/Microsoft.Network/networkInterfaces/pe-acrprod.nic.0b1c", "resourceGroup": HUB_RG}],
            "privateLinkServiceConnections": [{"id": f"{SUB}/resourceGroups/{HUB_RG}/providers/Microsoft.Network/privateEndpoints/pe-acrprod/privateLinkServiceConnections/pe-acrprod",
                                               "name": "pe-acrprod", "resourceGroup": HUB_RG, "groupIds": ["registry"],
                                               "privateLinkServiceId": acr()["id"],
                                               "privateLinkServiceConnectionState": {"status": "Approved", "actionsRequired": "None", "description": "Auto-Approved"},
                                               "provisioningState": "Succeeded"}]}

FQDNS = [("acrprod.azurecr.io", "10.0.1.4"), ("acrprod.westeurope.data.azurecr.io", "10.0.1.5"),
         ("acrprod.northeurope.data.azurecr.io", "10.0.1.6")]

def link(name, vnet):
    return {"id": f"{ZONE}/virtualNetworkLinks/{name}", "name": name, "location": "global", "resourceGroup": HUB_RG,
            "type": "Microsoft.Network/privateDnsZones/virtualNetworkLinks", "etag": "\"0a00c0de-0000-0100-0000-000000000000\"",
            "registrationEnabled": False, "virtualNetwork": {"id": vnet, "resourceGroup": HUB_RG if "hub" in vnet else AKS_RG},
            "virtualNetworkLinkState": "Completed", "provisioningState": "Succeeded"}

def record(name, ip):
    return {"id": f"{ZONE}/A/{name}", "name": name, "resourceGroup": HUB_RG, "etag": "0c0de000-0000-0000-0000-000000000000",
            "type": "Microsoft.Network/privateDnsZones/A", "fqdn": f"{name}.privatelink.azurecr.io.", "ttl": 3600,
            "isAutoRegistered": False, "aRecords": [{"ipv4Address": ip}]}

def route(source, prefixes, hop, name=None, ips=(), state="Active"):
    return {"disableBgpRoutePropagation": False, "name": name, "source": source, "state": state,
            "addressPrefix": list(prefixes), "nextHopType": hop, "nextHopIpAddress": list(ips)}

def routes(peered=True, gateway=True, user=None):
    """Effective routes of a node NIC in snet-nodes."""
    out = [route("Default", ["10.240.0.0/16"], "VnetLocal")]
    if peered:
        out.append(route("Default", ["10.0.0.0/16"], "VNetPeering"))
    if gateway:
        out.append(route("VirtualNetworkGateway", ["192.168.0.0/16"], "VirtualNetworkGateway", ips=["10.0.255.4", "10.0.255.5"],
                         state="Invalid" if user and user.get("addressPrefix") == "192.168.0.0/16" else "Active"))
    out.append(route("Default", ["0.0.0.0/0"], "Internet"))
    out.append(route("Default", ["10.0.0.0/8"], "None"))
    out.append(route("Default", ["172.16.0.0/12"], "None"))
    out.append(route("Default", ["192.168.0.0/16"], "None", state="Invalid" if gateway else "Active"))
    out.append(route("Default", ["100.64.0.0/10"], "None"))
    if user:
        out.append(route("User", [user["addressPrefix"]], user["nextHopType"], name=user["name"]))
    return {"nextLink": None, "value": out}

def route_table(rid, name, routes_):
    rg = AKS_RG if "rg-aks" in rid else HUB_RG
    return {"id": rid, "name": name, "location": "westeurope", "resourceGroup": rg,
            "type": "Microsoft.Network/routeTables", "disableBgpRoutePropagation": False, "provisioningState": "Succeeded",
            "routes": [{"id": f"{rid}/routes/{r['name']}", "name": r["name"], "resourceGroup": rg,
                        "type": "Microsoft.Network/routeTables/routes", "addressPrefix": r["addressPrefix"],
                        "nextHopType": r["nextHopType"], "provisioningState": "Succeeded", "hasBgpOverride": False,
                        **({"nextHopIpAddress": r["nextHopIpAddress"]} if "nextHopIpAddress" in r else {})} for r in routes_],
            "subnets": []}

def rule(name, prio, access, direction, dst, dst_expanded=(), src="*", src_expanded=(), port="0-65535", proto="All"):
    return {"name": name, "protocol": proto, "sourcePortRange": "0-65535", "destinationPortRange": port,
            "sourceAddressPrefix": src, "destinationAddressPrefix": dst,
            "expandedSourceAddressPrefix": list(src_expanded), "expandedDestinationAddressPrefix": list(dst_expanded),
            "access": access, "priority": prio, "direction": direction}

def nsg(extra=()):
    vnet_exp = ["10.240.0.0/16", "10.0.0.0/16", "192.168.0.0/16", "168.63.129.16/32"]
    rules = list(extra) + [
        rule("defaultSecurityRules/AllowVnetOutBound", 65000, "Allow", "Outbound", "VirtualNetwork", vnet_exp, "VirtualNetwork", vnet_exp),
        rule("defaultSecurityRules/AllowInternetOutBound", 65001, "Allow", "Outbound", "Internet", ["32.0.0.0/3", "4.0.0.0/6"]),
        rule("defaultSecurityRules/DenyAllOutBound", 65500, "Deny", "Outbound", "0.0.0.0/0"),
        rule("defaultSecurityRules/AllowVnetInBound", 65000, "Allow", "Inbound", "VirtualNetwork", vnet_exp, "VirtualNetwork", vnet_exp),
        rule("defaultSecurityRules/DenyAllInBound", 65500, "Deny", "Inbound", "0.0.0.0/0")]
    # tagMap as the service and az print it: an object of tag -> prefixes
    return {"value": [{"networkSecurityGroup": {"id": NSG_AKS, "resourceGroup": AKS_RG},
                       "association": {"subnet": {"id": SNET_NODES, "resourceGroup": AKS_RG}},
                       "effectiveSecurityRules": rules,
                       "tagMap": {"VirtualNetwork": vnet_exp, "Internet": ["32.0.0.0/3", "4.0.0.0/6"]}}]}

def base():
    return {
        "aks.json": aks(), "acr.json": acr(),
        "vnet-aks.json": vnet_aks(), "vnet-hub.json": vnet_hub(),
        "peerings-vnet-aks.json": [peering(VNET_AKS, "aks-to-hub", VNET_HUB, "10.0.0.0/16", use_remote=True)],
        "peerings-vnet-hub.json": [peering(VNET_HUB, "hub-to-aks", VNET_AKS, "10.240.0.0/16", transit=True)],
        "private-endpoint.json": private_endpoint(FQDNS),
        "dns-links.json": [link("link-hub", VNET_HUB), link("link-aks", VNET_AKS)],
        "dns-records.json": [record("acrprod", "10.0.1.4"), record("acrprod.westeurope.data", "10.0.1.5"),
                             record("acrprod.northeurope.data", "10.0.1.6")],
        "routes-nodepool1.json": routes(user={"name": "to-onprem", "addressPrefix": "192.168.0.0/16", "nextHopType": "VirtualNetworkGateway"}),
        "nsg-nodepool1.json": nsg(),
        "route-table-aks.json": route_table(RT_AKS, "rt-aks", [{"name": "to-onprem", "addressPrefix": "192.168.0.0/16", "nextHopType": "VirtualNetworkGateway"}]),
    }

def scenarios():
    s = {}
    s["healthy"] = base()

    d = base()  # a user route sends on-premises to None
    blackhole = {"name": "to-onprem", "addressPrefix": "192.168.0.0/16", "nextHopType": "None"}
    d["routes-nodepool1.json"] = routes(user=blackhole)
    d["route-table-aks.json"] = route_table(RT_AKS, "rt-aks", [blackhole])
    s["blackhole"] = d

    d = base()  # the registry address is covered by nothing but Azure's default None route
    d["route-table-aks.json"] = route_table(RT_AKS, "rt-aks", [])
    d["routes-nodepool1.json"] = routes()
    s["no-route"] = d

    d = base()  # one side: the node VNet does not use the hub's gateway
    d["peerings-vnet-aks.json"] = [peering(VNET_AKS, "aks-to-hub", VNET_HUB, "10.0.0.0/16", use_remote=False)]
    d["route-table-aks.json"] = route_table(RT_AKS, "rt-aks", [])
    d["routes-nodepool1.json"] = routes(gateway=False)
    s["transit-one-side"] = d

    d = base()  # both sides: neither useRemoteGateways nor allowGatewayTransit
    d["peerings-vnet-aks.json"] = [peering(VNET_AKS, "aks-to-hub", VNET_HUB, "10.0.0.0/16", use_remote=False)]
    d["peerings-vnet-hub.json"] = [peering(VNET_HUB, "hub-to-aks", VNET_AKS, "10.240.0.0/16", transit=False)]
    d["route-table-aks.json"] = route_table(RT_AKS, "rt-aks", [])
    d["routes-nodepool1.json"] = routes(gateway=False)
    s["transit-both-sides"] = d

    d = base()  # a route one way: the hub never peered back
    d["peerings-vnet-aks.json"] = [peering(VNET_AKS, "aks-to-hub", VNET_HUB, "10.0.0.0/16", state="Initiated")]
    d["peerings-vnet-hub.json"] = []
    d["route-table-aks.json"] = route_table(RT_AKS, "rt-aks", [])
    d["routes-nodepool1.json"] = routes(peered=False, gateway=False)
    s["peering-one-way"] = d

    d = base()  # the zone is linked to the hub only
    d["dns-links.json"] = [link("link-hub", VNET_HUB)]
    s["zone-not-linked"] = d

    d = base()  # custom DNS servers in the hub (a linked VNet): forwarding cannot be seen
    d["vnet-aks.json"] = vnet_aks(dns=["10.0.2.4", "10.0.2.5"])
    s["custom-dns"] = d

    d = base()  # custom DNS server in a VNet the zone is not linked to
    d["vnet-aks.json"] = vnet_aks(dns=["10.0.2.4"])
    d["dns-links.json"] = [link("link-aks", VNET_AKS)]
    s["custom-dns-unlinked"] = d

    d = base()  # the northeurope replica's data endpoint has no record
    d["dns-records.json"] = [record("acrprod", "10.0.1.4"), record("acrprod.westeurope.data", "10.0.1.5")]
    s["missing-data-record"] = d

    d = base()  # an outbound deny rule for the endpoint subnet
    d["nsg-nodepool1.json"] = nsg([rule("securityRules/deny-hub-https", 200, "Deny", "Outbound", "10.0.1.0/24", ["10.0.1.0/24"], port="443", proto="Tcp")])
    s["nsg-deny"] = d

    d = base()  # the endpoint subnet's route table drops replies to the nodes
    d["vnet-hub.json"] = vnet_hub(pe_rt=RT_PE)
    d["route-table-pe.json"] = route_table(RT_PE, "rt-pe", [{"name": "to-aks", "addressPrefix": "10.240.0.0/16", "nextHopType": "None"}])
    s["return-path"] = d
    return s

if __name__ == "__main__":
    for name, files in scenarios().items():
        shutil.rmtree(name, ignore_errors=True)
        os.makedirs(name)
        for f, obj in files.items():
            with open(os.path.join(name, f), "w") as fh:
                json.dump(obj, fh, indent=2)
                fh.write("\n")
