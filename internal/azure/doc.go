// Package azure compares an AKS cluster's node network with the private path
// its registry needs, from Azure's own configuration (the control plane):
// the registry's private endpoint and every FQDN it serves, the
// privatelink.azurecr.io records and VNet links, the VNet's DNS servers, the
// effective routes and security rules of a node NIC, the peerings on both
// sides and the return route. It reads that configuration either through the
// Azure SDK for Go (Collector) or from the JSON the az CLI prints (LoadAz),
// into one Snapshot, and Analyze turns a Snapshot into verdicts in the shared
// vocabulary with source control-plane.
//
// Only the full pullpath binary links this package; the node binary and the
// probe must not (see depcheck_test.go).
package azure
