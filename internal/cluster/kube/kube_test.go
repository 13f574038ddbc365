package kube_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/rest"

	"github.com/pullpath/pullpath/internal/cluster/clustertest"
	"github.com/pullpath/pullpath/internal/cluster/kube"
)

// headers records the Accept and User-Agent headers of every request.
type headers struct {
	mu     sync.Mutex
	accept []string
	agents []string
	inner  http.RoundTripper
}

func (h *headers) RoundTrip(r *http.Request) (*http.Response, error) {
	h.mu.Lock()
	h.accept = append(h.accept, r.Method+" "+r.URL.Path+" "+r.Header.Get("Accept"))
	h.agents = append(h.agents, r.Header.Get("User-Agent"))
	h.mu.Unlock()
	return h.inner.RoundTrip(r)
}

// TestClientAgainstAPIServer drives every verb of the client against a real
// kube-apiserver: create, get, list, watch, patch and delete (jobs, service
// accounts, secrets, nodes, the apps/v1 workloads), a TokenRequest whose
// token the API server then authenticates, and the API errors the callers
// classify (not found, forbidden).
func TestClientAgainstAPIServer(t *testing.T) {
	srv := clustertest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := rest.CopyConfig(srv.Config)
	rec := &headers{}
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper { rec.inner = rt; return rec }
	c, err := kube.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	const ns = "default"

	// Service account and secret: create, get, list by label.
	sa, err := c.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "probe", Labels: map[string]string{"t": "kube"}}}, metav1.CreateOptions{})
	if err != nil || sa.UID == "" {
		t.Fatalf("creating a service account: %v (uid %q)", err, sa.UID)
	}
	if got, err := c.CoreV1().ServiceAccounts(ns).Get(ctx, "probe", metav1.GetOptions{}); err != nil || got.UID != sa.UID {
		t.Fatalf("getting the service account: %v, uid %q, want %q", err, got.UID, sa.UID)
	}
	if l, err := c.CoreV1().ServiceAccounts(ns).List(ctx, metav1.ListOptions{LabelSelector: "t=kube"}); err != nil || len(l.Items) != 1 || l.Items[0].Name != "probe" {
		t.Fatalf("listing service accounts t=kube: %v, %d items, want the one", err, len(l.Items))
	}
	if _, err := c.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "pull"}, Type: corev1.SecretTypeDockerConfigJson,
		Data: map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{}}`)}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating a secret: %v", err)
	}
	if s, err := c.CoreV1().Secrets(ns).Get(ctx, "pull", metav1.GetOptions{}); err != nil || s.Type != corev1.SecretTypeDockerConfigJson || string(s.Data[corev1.DockerConfigJsonKey]) != `{"auths":{}}` {
		t.Fatalf("getting the secret back: %v, type %q", err, s.Type)
	}

	// Errors keep their API status, in the core and in the named groups.
	if _, err := c.CoreV1().Pods(ns).Get(ctx, "nope", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("getting a missing pod: %v, want not found", err)
	}
	if _, err := c.AppsV1().Deployments(ns).Get(ctx, "nope", metav1.GetOptions{}); !apierrors.IsNotFound(err) || !strings.Contains(err.Error(), `deployments.apps "nope" not found`) {
		t.Errorf("getting a missing deployment: %v, want the API server's not found", err)
	}
	for name, list := range map[string]func() (int, error){
		"nodes": func() (int, error) {
			l, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
			return len(l.Items), err
		},
		"pods": func() (int, error) {
			l, err := c.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
			return len(l.Items), err
		},
		"events": func() (int, error) {
			l, err := c.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
			return len(l.Items), err
		},
		"replicasets": func() (int, error) {
			l, err := c.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
			return len(l.Items), err
		},
		"statefulsets": func() (int, error) {
			l, err := c.AppsV1().StatefulSets(ns).List(ctx, metav1.ListOptions{})
			return len(l.Items), err
		},
		"daemonsets": func() (int, error) {
			l, err := c.AppsV1().DaemonSets(ns).List(ctx, metav1.ListOptions{})
			return len(l.Items), err
		},
	} {
		if n, err := list(); err != nil || n != 0 {
			t.Errorf("listing %s: %v, %d items, want none", name, err, n)
		}
	}

	// Jobs: watch, create, patch, delete.
	jobs := c.BatchV1().Jobs(ns)
	w, err := jobs.Watch(ctx, metav1.ListOptions{LabelSelector: "t=kube"})
	if err != nil {
		t.Fatalf("watching jobs: %v", err)
	}
	defer w.Stop()
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "probe", Labels: map[string]string{"t": "kube"}},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "probe", Image: "registry.lab.test/probe:1"}}}}}}
	if _, err := jobs.Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating a job: %v", err)
	}
	patched, err := jobs.Patch(ctx, "probe", types.MergePatchType, []byte(`{"metadata":{"labels":{"patched":"yes"}}}`), metav1.PatchOptions{})
	if err != nil || patched.Labels["patched"] != "yes" || patched.Labels["t"] != "kube" {
		t.Fatalf("patching the job: %v, labels %v", err, patched.Labels)
	}
	bg := metav1.DeletePropagationBackground
	if err := jobs.Delete(ctx, "probe", metav1.DeleteOptions{PropagationPolicy: &bg}); err != nil {
		t.Fatalf("deleting the job: %v", err)
	}
	var seen []watch.EventType
	for len(seen) < 3 {
		select {
		case ev := <-w.ResultChan():
			j, ok := ev.Object.(*batchv1.Job)
			if !ok || j.Name != "probe" {
				t.Fatalf("watch event %s carries %T, want the job", ev.Type, ev.Object)
			}
			seen = append(seen, ev.Type)
		case <-ctx.Done():
			t.Fatalf("watch saw %v, want ADDED MODIFIED DELETED", seen)
		}
	}
	if want := []watch.EventType{watch.Added, watch.Modified, watch.Deleted}; strings.Join(eventStrings(seen), " ") != strings.Join(eventStrings(want), " ") {
		t.Errorf("watch events %v, want %v", seen, want)
	}
	if _, err := jobs.Get(ctx, "probe", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("getting the deleted job: %v, want not found", err)
	}

	// TokenRequest: the token authenticates as the service account, which
	// no role lets read anything.
	exp := int64(600)
	tr, err := c.CreateToken(ctx, ns, "probe", &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &exp}})
	if err != nil || tr.Status.Token == "" || tr.Status.ExpirationTimestamp.IsZero() {
		t.Fatalf("CreateToken: %v, token set %v, expiry %v", err, tr.Status.Token != "", tr.Status.ExpirationTimestamp)
	}
	asSA, err := kube.NewForConfig(&rest.Config{Host: srv.URL, BearerToken: tr.Status.Token, TLSClientConfig: rest.TLSClientConfig{CAFile: srv.CAFile}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = asSA.CoreV1().Secrets(ns).Get(ctx, "pull", metav1.GetOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "system:serviceaccount:default:probe") {
		t.Errorf("reading a secret with the service account's token: %v, want forbidden for system:serviceaccount:default:probe", err)
	}
	if _, err := c.CreateToken(ctx, ns, "nope", &authenticationv1.TokenRequest{}); !apierrors.IsNotFound(err) {
		t.Errorf("CreateToken for a missing service account: %v, want not found", err)
	}

	// The wire: protobuf preferred, as client-go's typed clients do, and
	// client-go's default user agent.
	rec.mu.Lock()
	defer rec.mu.Unlock()
	for _, a := range rec.accept {
		if !strings.HasSuffix(a, " application/vnd.kubernetes.protobuf,application/json") {
			t.Errorf("request %q: want protobuf preferred over JSON", a)
		}
	}
	if len(rec.agents) < 15 || rec.agents[0] != rest.DefaultKubernetesUserAgent() {
		t.Errorf("%d requests, user agent %q; want at least 15 with %q", len(rec.agents), rec.agents[0], rest.DefaultKubernetesUserAgent())
	}
}

func eventStrings(ts []watch.EventType) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = string(t)
	}
	return out
}

// TestNewForConfigRateLimits checks kubernetes.NewForConfig's rule: QPS
// without Burst is an error unless a RateLimiter is given.
func TestNewForConfigRateLimits(t *testing.T) {
	if _, err := kube.NewForConfig(&rest.Config{Host: "https://127.0.0.1:1", QPS: 5}); err == nil || !strings.Contains(err.Error(), "burst is required") {
		t.Errorf("QPS without Burst: %v, want the burst error", err)
	}
	c, err := kube.NewForConfig(&rest.Config{Host: "https://127.0.0.1:1", QPS: 5, Burst: 10})
	if err != nil || c == nil {
		t.Errorf("QPS and Burst: %v", err)
	}
}
