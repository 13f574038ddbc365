package clustercmd

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/pullpath/pullpath/internal/cluster/clustertest"
)

// TestServiceAccountTokensHook: the full binary's `probe --service-account`
// gets its token from the API server of KUBECONFIG's current context.
func TestServiceAccountTokensHook(t *testing.T) {
	srv := clustertest.Start(t)
	ctx := context.Background()
	t.Setenv("KUBECONFIG", srv.Kubeconfig)
	if _, err := srv.Clientset.CoreV1().ServiceAccounts("default").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "puller",
		Annotations: map[string]string{"lab.test/client-id": "c-1"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sa, err := ServiceAccountTokens(ctx, "default", "puller", "lab-audience")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(sa.Token, ".") != 2 || sa.Audience != "lab-audience" || sa.Annotations["lab.test/client-id"] != "c-1" {
		t.Errorf("ServiceAccountTokens = audience %q, annotations %v, a JWT: %v", sa.Audience, sa.Annotations, strings.Count(sa.Token, ".") == 2)
	}
	if _, err := ServiceAccountTokens(ctx, "default", "nobody", "lab-audience"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("missing service account: %v, want not found", err)
	}
}
