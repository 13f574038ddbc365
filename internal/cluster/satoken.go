package cluster

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/pullpath/pullpath/internal/cluster/kube"
	"github.com/pullpath/pullpath/internal/nodeview"
)

// TokenCreator is the TokenRequest call (POST
// /api/v1/namespaces/NS/serviceaccounts/NAME/token).
type TokenCreator interface {
	CreateToken(ctx context.Context, ns, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error)
}

// ServiceAccountGetter reads a service account (its UID and annotations).
type ServiceAccountGetter interface {
	GetServiceAccount(ctx context.Context, ns, name string) (*corev1.ServiceAccount, error)
}

// ServiceAccountClient is what ServiceAccountToken needs of the API server.
type ServiceAccountClient interface {
	TokenCreator
	ServiceAccountGetter
}

// ClientsetTokens adapts a clientset to ServiceAccountClient.
func ClientsetTokens(cs kube.Interface) ServiceAccountClient { return clientsetTokens{cs} }

type clientsetTokens struct{ cs kube.Interface }

func (c clientsetTokens) CreateToken(ctx context.Context, ns, name string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	return c.cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name, tr, metav1.CreateOptions{})
}

func (c clientsetTokens) GetServiceAccount(ctx context.Context, ns, name string) (*corev1.ServiceAccount, error) {
	return c.cs.CoreV1().ServiceAccounts(ns).Get(ctx, name, metav1.GetOptions{})
}

// BoundPod is the pod a token is bound to, as the kubelet binds the token
// it hands a credential provider to the pod being started.
type BoundPod struct {
	Name string
	UID  types.UID
}

// NewTokenRequest builds the TokenRequest the kubelet makes for a
// credential provider with tokenAttributes (pkg/credentialprovider/plugin,
// serviceAccountProvider.getServiceAccountToken, v1.34): the service
// account's UID as a precondition, the provider's audience, bound to the
// pod when there is one, and no expirationSeconds (the API server's
// default, one hour).
func NewTokenRequest(saUID types.UID, audience string, pod *BoundPod) *authenticationv1.TokenRequest {
	tr := &authenticationv1.TokenRequest{
		ObjectMeta: metav1.ObjectMeta{UID: saUID},
		Spec:       authenticationv1.TokenRequestSpec{Audiences: []string{audience}},
	}
	if pod != nil {
		tr.Spec.BoundObjectRef = &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID}
	}
	return tr
}

// ServiceAccountToken gets what the kubelet gives a credential provider
// for a pod running as service account ns/name: the account's annotations
// and a token for audience (bound to pod when given). It needs get on
// serviceaccounts and create on serviceaccounts/token in ns. Errors never
// hold the token.
func ServiceAccountToken(ctx context.Context, c ServiceAccountClient, ns, name, audience string, pod *BoundPod) (*nodeview.ServiceAccount, error) {
	if audience == "" {
		return nil, fmt.Errorf("service account %s/%s: the provider names no serviceAccountTokenAudience", ns, name)
	}
	rc, cancel := reqCtx(ctx)
	defer cancel()
	sa, err := c.GetServiceAccount(rc, ns, name)
	if err != nil {
		return nil, fmt.Errorf("reading service account %s/%s: %w", ns, name, err)
	}
	tr, err := c.CreateToken(rc, ns, name, NewTokenRequest(sa.UID, audience, pod))
	if err != nil {
		return nil, fmt.Errorf("requesting a token of service account %s/%s for audience %q (TokenRequest): %w", ns, name, audience, err)
	}
	if tr == nil || tr.Status.Token == "" {
		return nil, fmt.Errorf("requesting a token of service account %s/%s for audience %q: the API server returned no token", ns, name, audience)
	}
	ann := make(map[string]string, len(sa.Annotations))
	for k, v := range sa.Annotations {
		ann[k] = v
	}
	return &nodeview.ServiceAccount{Namespace: ns, Name: name, UID: string(sa.UID), Annotations: ann, Token: tr.Status.Token, Audience: audience}, nil
}
