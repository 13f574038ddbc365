package clustercmd

import (
	"context"

	"github.com/pullpath/pullpath/internal/cluster"
	"github.com/pullpath/pullpath/internal/nodeview"
)

// ServiceAccountTokens is the full pullpath's cli.Features.ServiceAccountTokens:
// `probe --service-account NS/NAME` tokens from the API server of the
// current kubeconfig context (KUBECONFIG or ~/.kube/config), with the
// TokenRequest the kubelet makes.
func ServiceAccountTokens(ctx context.Context, ns, name, audience string) (*nodeview.ServiceAccount, error) {
	cs, err := cluster.NewKubeFlags().Clientset()
	if err != nil {
		return nil, err
	}
	return cluster.ServiceAccountToken(ctx, cluster.ClientsetTokens(cs), ns, name, audience, nil)
}
