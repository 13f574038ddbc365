package nodepool

import "testing"

func TestFromLabels(t *testing.T) {
	for _, tc := range []struct {
		labels           map[string]string
		os, arch         string
		wantName, wantBy string
	}{
		{map[string]string{"kubernetes.azure.com/agentpool": "user1", "agentpool": "legacy"}, "linux", "amd64", "user1", "kubernetes.azure.com/agentpool"},
		{map[string]string{"agentpool": "legacy"}, "linux", "amd64", "legacy", "agentpool"},
		{map[string]string{"eks.amazonaws.com/nodegroup": "ng-1"}, "linux", "arm64", "ng-1", "eks.amazonaws.com/nodegroup"},
		{map[string]string{"cloud.google.com/gke-nodepool": "default-pool"}, "linux", "amd64", "default-pool", "cloud.google.com/gke-nodepool"},
		{map[string]string{"karpenter.sh/nodepool": "spot"}, "linux", "amd64", "spot", "karpenter.sh/nodepool"},
		{map[string]string{"kubernetes.io/arch": "arm64", "node.kubernetes.io/instance-type": "m6g.large"}, "linux", "amd64", "nopool/linux-arm64-m6g.large", "fallback"},
		{nil, "windows", "amd64", "nopool/windows-amd64", "fallback"},
	} {
		name, by := FromLabels(tc.labels, tc.os, tc.arch)
		if name != tc.wantName || by != tc.wantBy {
			t.Errorf("FromLabels(%v) = %q, %q; want %q, %q", tc.labels, name, by, tc.wantName, tc.wantBy)
		}
	}
}
