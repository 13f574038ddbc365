package nodelab

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/pullpath/pullpath/test/netlab"
)

// KubernetesService is the ClusterIP of the default/kubernetes Service: the
// first address of the API server's --service-cluster-ip-range
// (10.96.0.0/24). Pods reach the API server there
// (KUBERNETES_SERVICE_HOST), port 443.
var KubernetesService = netip.MustParseAddr("10.96.0.1")

// RouteKubernetesService does on the node what kube-proxy does for the
// kubernetes Service, which the tier does not run: inside the node's
// network namespace only, a route for the service range through the
// node's gateway and a DNAT of KubernetesService:443 to the API server's
// address and port, so that a hostNetwork pod's in-cluster client reaches
// the API server. The machine's own tables are not touched.
func (nd *Node) RouteKubernetesService(ctx context.Context) error {
	gw := gateway(netip.PrefixFrom(nd.Addr, 24).Masked())
	if err := nd.NS.IP(ctx, "route", "add", KubernetesService.String()+"/32", "via", gw.String()); err != nil {
		return err
	}
	err := netlab.Run(ctx, "nsenter", "--net="+nd.NS.Path(), "--", "iptables", "-w", "-t", "nat", "-A", "OUTPUT",
		"-d", KubernetesService.String()+"/32", "-p", "tcp", "--dport", "443",
		"-j", "DNAT", "--to-destination", fmt.Sprintf("%s:%d", APIServer, APIPort))
	if err != nil {
		return fmt.Errorf("routing the kubernetes Service on %s: %w", nd.Spec.Name, err)
	}
	return nil
}
