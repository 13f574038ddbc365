package cluster

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/pullpath/pullpath/internal/cluster/clustertest"
)

func TestNewTokenRequest(t *testing.T) {
	got := NewTokenRequest("sa-uid", "api://AKSIdentityBinding", &BoundPod{Name: "app-1", UID: "pod-uid"})
	want := &authenticationv1.TokenRequest{
		ObjectMeta: metav1.ObjectMeta{UID: "sa-uid"},
		Spec: authenticationv1.TokenRequestSpec{Audiences: []string{"api://AKSIdentityBinding"},
			BoundObjectRef: &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: "app-1", UID: "pod-uid"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("NewTokenRequest (-want +got):\n%s", diff)
	}
	if got.Spec.ExpirationSeconds != nil {
		t.Errorf("expirationSeconds = %d, want unset as the kubelet leaves it", *got.Spec.ExpirationSeconds)
	}
	if tr := NewTokenRequest("u", "aud", nil); tr.Spec.BoundObjectRef != nil {
		t.Errorf("no pod: boundObjectRef = %+v, want none", tr.Spec.BoundObjectRef)
	}
}

// fakeSA is a ServiceAccountClient that records the TokenRequest.
type fakeSA struct {
	sa     *corev1.ServiceAccount
	getErr error
	tokErr error
	got    *authenticationv1.TokenRequest
}

func (f *fakeSA) GetServiceAccount(_ context.Context, ns, name string) (*corev1.ServiceAccount, error) {
	return f.sa, f.getErr
}

func (f *fakeSA) CreateToken(_ context.Context, ns, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	f.got = tr
	if f.tokErr != nil {
		return nil, f.tokErr
	}
	out := tr.DeepCopy()
	out.Status.Token = "tok-for-" + tr.Spec.Audiences[0]
	return out, nil
}

func TestServiceAccountToken(t *testing.T) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "puller", Namespace: "shop", UID: "u-1", Annotations: map[string]string{"kubernetes.azure.com/acr-client-id": "cid"}}}
	f := &fakeSA{sa: sa}
	got, err := ServiceAccountToken(context.Background(), f, "shop", "puller", "api://AKSIdentityBinding", nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.Token != "tok-for-api://AKSIdentityBinding" || got.UID != "u-1" || got.Annotations["kubernetes.azure.com/acr-client-id"] != "cid" || got.Audience != "api://AKSIdentityBinding" {
		t.Errorf("ServiceAccountToken = %+v", got)
	}
	if f.got.UID != "u-1" {
		t.Errorf("the TokenRequest carries UID %q, want the service account's u-1 (the kubelet's precondition)", f.got.UID)
	}
	for _, tt := range []struct {
		name string
		f    *fakeSA
		aud  string
		want string
	}{
		{"no audience", &fakeSA{sa: sa}, "", "names no serviceAccountTokenAudience"},
		{"service account unreadable", &fakeSA{getErr: errors.New(`serviceaccounts "puller" is forbidden`)}, "a", "reading service account shop/puller"},
		{"token forbidden", &fakeSA{sa: sa, tokErr: errors.New(`serviceaccounts "puller" is forbidden: User "dev" cannot create resource "serviceaccounts/token"`)}, "a", "(TokenRequest): serviceaccounts \"puller\" is forbidden"},
	} {
		if _, err := ServiceAccountToken(context.Background(), tt.f, "shop", "puller", tt.aud, nil); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.name, err, tt.want)
		}
	}
}

// TestServiceAccountTokenAPIServer makes the real TokenRequest against a
// kube-apiserver: the token's claims name the service account and the
// audience asked for, bound to the pod when one is given.
func TestServiceAccountTokenAPIServer(t *testing.T) {
	srv := clustertest.Start(t)
	ctx := context.Background()
	cs := srv.Clientset
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "satoken"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sa, err := cs.CoreV1().ServiceAccounts("satoken").Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "puller",
		Annotations: map[string]string{"kubernetes.azure.com/acr-client-id": "00000000-1111-2222-3333-444444444444"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod, err := cs.CoreV1().Pods("satoken").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "app"},
		Spec: corev1.PodSpec{ServiceAccountName: "puller", Containers: []corev1.Container{{Name: "app", Image: "myacr.azurecr.io/app:1"}}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, bound := range []*BoundPod{nil, {Name: pod.Name, UID: pod.UID}} {
		got, err := ServiceAccountToken(ctx, ClientsetTokens(clustertest.FromClientset(cs)), "satoken", "puller", "api://AKSIdentityBinding", bound)
		if err != nil {
			t.Fatalf("ServiceAccountToken (pod %v): %v", bound, err)
		}
		if got.UID != string(sa.UID) || got.Annotations["kubernetes.azure.com/acr-client-id"] == "" {
			t.Errorf("service account data = uid %s, annotations %v", got.UID, got.Annotations)
		}
		claims := jwtClaims(t, got.Token)
		if claims.Sub != "system:serviceaccount:satoken:puller" || !slices.Contains(claims.Aud, "api://AKSIdentityBinding") {
			t.Errorf("token claims sub %q aud %v, want the service account and the audience", claims.Sub, claims.Aud)
		}
		if bound != nil && (claims.K8s.Pod.Name != "app" || claims.K8s.Pod.UID != pod.UID) {
			t.Errorf("bound token's pod claim = %+v, want app/%s", claims.K8s.Pod, pod.UID)
		}
	}
	// The UID precondition the kubelet sends (v1.34) is enforced only by
	// newer API servers than the tier's v1.32.4, so it is not asserted here.
	if _, err := ServiceAccountToken(ctx, ClientsetTokens(clustertest.FromClientset(cs)), "satoken", "nobody", "aud", nil); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("missing service account: err = %v, want not found", err)
	}
}

type tokenClaims struct {
	Sub string   `json:"sub"`
	Aud []string `json:"aud"`
	K8s struct {
		Pod struct {
			Name string    `json:"name"`
			UID  types.UID `json:"uid"`
		} `json:"pod"`
	} `json:"kubernetes.io"`
}

func jwtClaims(t *testing.T, tok string) tokenClaims {
	t.Helper()
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("the token is not a JWT (%d parts)", len(parts))
	}
	b, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c tokenClaims
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestProbeJobServiceAccountToken: with --probe-service-account-audience
// the Job runs as the workload's service account, gets a projected token
// for the audience, and hands it and the account's annotations to the
// probe; the API server accepts the Job.
func TestProbeJobServiceAccountToken(t *testing.T) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "puller", Namespace: "shop", Annotations: map[string]string{
		"kubernetes.azure.com/acr-client-id": "cid", "kubectl.kubernetes.io/last-applied-configuration": "{...}"}}}
	po := ProbeOptions{Image: "myacr.azurecr.io/tools/pullpath:v1", RunID: "abcd1234", TokenAudience: "api://AKSIdentityBinding"}
	if note := withWorkloadServiceAccount(context.Background(), &fakeSA{sa: sa}, &po, &corev1.PodSpec{ServiceAccountName: "puller"}, "shop", "shop"); note != "" {
		t.Fatal(note)
	}
	j := ProbeJob(ProbeTarget{Node: clustertest.NewNode}, clustertest.Image, "shop", po, "")
	ps := j.Spec.Template.Spec
	if ps.ServiceAccountName != "puller" || ps.AutomountServiceAccountToken == nil || *ps.AutomountServiceAccountToken {
		t.Errorf("serviceAccountName %q, automount %v; want puller and no API token", ps.ServiceAccountName, ps.AutomountServiceAccountToken)
	}
	var proj *corev1.ServiceAccountTokenProjection
	for _, v := range ps.Volumes {
		if v.Projected != nil && len(v.Projected.Sources) == 1 {
			proj = v.Projected.Sources[0].ServiceAccountToken
		}
	}
	if proj == nil || proj.Audience != "api://AKSIdentityBinding" || proj.Path != "token" {
		t.Errorf("projected token = %+v, want audience api://AKSIdentityBinding", proj)
	}
	args := strings.Join(ps.Containers[0].Args, " ")
	for _, want := range []string{"--service-account shop/puller", "--service-account-token-file " + saTokenDir + "/token", "--service-account-annotation kubernetes.azure.com/acr-client-id=cid"} {
		if !strings.Contains(args, want) {
			t.Errorf("args %q lack %q", args, want)
		}
	}
	if strings.Contains(args, "last-applied") {
		t.Errorf("args %q pass kubectl's last-applied-configuration", args)
	}
	// Another namespace for the Jobs: no token, and a note.
	po2 := ProbeOptions{Image: po.Image, RunID: "x", TokenAudience: "aud"}
	if note := withWorkloadServiceAccount(context.Background(), &fakeSA{sa: sa}, &po2, nil, "shop", "pullpath"); note == "" || po2.TokenAudience != "" {
		t.Errorf("jobs in another namespace: note %q, audience %q; want a note and no token", note, po2.TokenAudience)
	}
	if j := ProbeJob(ProbeTarget{Node: "n"}, clustertest.Image, "pullpath", po2, ""); j.Spec.Template.Spec.ServiceAccountName != "" {
		t.Errorf("serviceAccountName %q without a token, want the namespace default", j.Spec.Template.Spec.ServiceAccountName)
	}

	srv := clustertest.Start(t)
	ctx := context.Background()
	if _, err := srv.Clientset.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Clientset.BatchV1().Jobs("shop").Create(ctx, j, metav1.CreateOptions{}); err != nil {
		t.Errorf("the API server refuses the probe Job with a projected token: %v", err)
	}
}
