package runtimecfg

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/nodeview"
	"github.com/pullpath/pullpath/internal/verdict"
)

// authJSON is a containers auth file with one user for host.
func authJSON(host, user, pass string) string {
	return fmt.Sprintf(`{"auths":{%q:{"auth":%q}}}`, host, base64.StdEncoding.EncodeToString([]byte(user+":"+pass)))
}

// nsFile is the namespaced auth file name for the normalised name, spelled
// out as crio-credential-provider's pkg/auth FilePath builds it.
func nsFile(dir, ns, name string) string {
	return fmt.Sprintf("%s/%s-%x.json", dir, ns, sha256.Sum256([]byte(name)))
}

func crioNSPlan(t *testing.T, root, image string, o Options) (*Config, *Plan, error) {
	t.Helper()
	c, err := Load(root, nodeview.RuntimeBinary{}, o)
	if err != nil {
		return c, nil, err
	}
	view, _ := nodeview.Load(root)
	p, err := c.PlanImage(context.Background(), view, image, "", false)
	return c, p, err
}

func hasCode(ws []verdict.Warning, code string) (verdict.Warning, bool) {
	for _, w := range ws {
		if w.Code == code {
			return w, true
		}
	}
	return verdict.Warning{}, false
}

func TestCRIONamespacedAuthFileName(t *testing.T) {
	for _, tc := range []struct{ image, name string }{
		// The kubelet's short name normalises to docker.io/library.
		{"nginx:1.27", "docker.io/library/nginx"},
		{"team/app", "docker.io/team/app"},
		// Tag and digest are not part of the name.
		{"registry.example:5000/team/app@" + digest, "registry.example:5000/team/app"},
		{"registry.example/team/app:1", "registry.example/team/app"},
	} {
		got, err := CRIONamespacedAuthFile("/etc/crio/auth", "shop", tc.image)
		if err != nil {
			t.Fatalf("%s: %v", tc.image, err)
		}
		if want := nsFile("/etc/crio/auth", "shop", tc.name); got != want {
			t.Errorf("%s: %s, want %s", tc.image, got, want)
		}
	}
	// FilePath's refusals.
	if _, err := CRIONamespacedAuthFile("etc/crio/auth", "shop", "nginx"); err == nil || !strings.Contains(err.Error(), "not an absolute path") {
		t.Errorf("relative dir: %v", err)
	}
	if _, err := CRIONamespacedAuthFile("/etc/crio/auth", "", "nginx"); err == nil {
		t.Error("no namespace: no error")
	}
}

func TestCRIONamespaceFiles(t *testing.T) {
	const (
		image  = "registry.example/team/app:1"
		host   = "registry.example"
		global = "/var/lib/kubelet/config.json"
	)
	shopAuth := nsFile("/etc/crio/auth", "shop", "registry.example/team/app")
	base := map[string]string{
		"etc/crio/crio.conf":                 "[crio.image]\nglobal_auth_file = \"" + global + "\"\n",
		"etc/containers/registries.conf":     "",
		strings.TrimPrefix(global, "/"):      authJSON(host, "global-user", "global-pass"),
		strings.TrimPrefix(shopAuth, "/"):    authJSON(host, "shop-user", "shop-pass"),
		"etc/crio/policies/secure.json":      `{"default":[{"type":"reject"}]}`,
		"etc/crio/auth/in-use/.keep":         "",
		"etc/crio/auth/web-0000.json":        authJSON(host, "other-image", "x"),
		"etc/containers/registries.conf.d/x": "",
	}
	with := func(extra map[string]string, drop ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			if !slices.Contains(drop, k) {
				m[k] = v
			}
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	routedUser := func(t *testing.T, p *Plan) (string, string) {
		t.Helper()
		c := p.CRIOCredential(host)
		if c == nil {
			return "anonymous", ""
		}
		return c.Username, c.Source.Name
	}

	t.Run("namespace with its auth file: it replaces global_auth_file", func(t *testing.T) {
		root := crioRoot(t, base)
		_, p, err := crioNSPlan(t, root, image, Options{Namespace: "shop"})
		if err != nil {
			t.Fatal(err)
		}
		ns := p.CRIO.Namespace
		if ns == nil || ns.Name != "shop" || !ns.AuthFileUsed || ns.AuthFile != shopAuth {
			t.Fatalf("namespace fact %+v, want shop's file %s used", ns, shopAuth)
		}
		if u, src := routedUser(t, p); u != "shop-user" || src != shopAuth {
			t.Errorf("registry gets %s from %s, want shop-user from %s", u, src, shopAuth)
		}
		if !strings.Contains(strings.Join(p.CRIO.AuthFiles, "\n"), shopAuth+" (default of CRI-O 1.35+") {
			t.Errorf("auth files %q do not name %s", p.CRIO.AuthFiles, shopAuth)
		}
		if _, ok := hasCode(p.Warnings, verdict.CodeConfigCrioNamespaceUnknown); ok {
			t.Error("namespace known, but warned unknown")
		}
		// The policy: the namespace has no file, the system one applies.
		if ns.PolicyFileUsed || p.CRIO.Policy.File != DefaultPolicy {
			t.Errorf("policy %s (namespace fact %+v), want %s", p.CRIO.Policy.File, ns, DefaultPolicy)
		}
	})

	t.Run("namespace without a file: global_auth_file", func(t *testing.T) {
		root := crioRoot(t, base)
		_, p, err := crioNSPlan(t, root, image, Options{Namespace: "web"})
		if err != nil {
			t.Fatal(err)
		}
		if ns := p.CRIO.Namespace; ns.AuthFileUsed || ns.AuthFile != nsFile("/etc/crio/auth", "web", "registry.example/team/app") || !strings.Contains(ns.Note, "does not exist") {
			t.Errorf("namespace fact %+v", ns)
		}
		if u, src := routedUser(t, p); u != "global-user" || src != global {
			t.Errorf("registry gets %s from %s, want global-user from %s", u, src, global)
		}
	})

	t.Run("namespace unknown: files not read, and the pending ones named", func(t *testing.T) {
		root := crioRoot(t, base)
		_, p, err := crioNSPlan(t, root, image, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if u, _ := routedUser(t, p); u != "global-user" {
			t.Errorf("registry gets %s, want global-user", u)
		}
		w, ok := hasCode(p.Warnings, verdict.CodeConfigCrioNamespaceUnknown)
		if !ok {
			t.Fatalf("no %s warning: %+v", verdict.CodeConfigCrioNamespaceUnknown, p.Warnings)
		}
		// shop's file is for this image; web-0000.json is not; secure has
		// a policy.
		if !strings.Contains(w.Message, "namespaces shop,") && !strings.Contains(w.Message, "namespaces shop)") {
			t.Errorf("warning does not name shop's pending file: %s", w.Message)
		}
		if strings.Contains(w.Message, "web") {
			t.Errorf("warning names web, whose file is for another image: %s", w.Message)
		}
		if !strings.Contains(w.Message, "signature policies of namespaces secure") {
			t.Errorf("warning does not name secure's policy: %s", w.Message)
		}
		if ns := p.CRIO.Namespace; ns.Name != "" || ns.AuthFileUsed || ns.PolicyFileUsed || !strings.Contains(ns.Note, "were not read") {
			t.Errorf("namespace fact %+v", ns)
		}
	})

	t.Run("namespace unknown, no per-namespace files: no warning", func(t *testing.T) {
		root := crioRoot(t, with(nil, strings.TrimPrefix(shopAuth, "/"), "etc/crio/policies/secure.json"))
		_, p, err := crioNSPlan(t, root, image, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if w, ok := hasCode(p.Warnings, verdict.CodeConfigCrioNamespaceUnknown); ok {
			t.Errorf("warned: %s", w.Message)
		}
		if !strings.Contains(p.CRIO.Namespace.Note, "no namespace changes this pull") {
			t.Errorf("note: %s", p.CRIO.Namespace.Note)
		}
	})

	t.Run("namespace policy replaces signature_policy", func(t *testing.T) {
		root := crioRoot(t, with(map[string]string{"etc/crio/crio.conf": "[crio.image]\nsignature_policy = \"/etc/containers/policy.json\"\n"}))
		_, p, err := crioNSPlan(t, root, image, Options{Namespace: "secure"})
		if err != nil {
			t.Fatal(err)
		}
		if p.CRIO.Policy.File != "/etc/crio/policies/secure.json" || !p.CRIO.Namespace.PolicyFileUsed {
			t.Fatalf("policy %+v, namespace %+v", p.CRIO.Policy, p.CRIO.Namespace)
		}
		if w, ok := hasCode(p.Warnings, verdict.CodeConfigSignaturePolicy); !ok || !strings.Contains(w.Message, "reject") || !strings.Contains(w.Message, "namespace secure") {
			t.Errorf("no reject warning naming the namespace's policy: %+v", p.Warnings)
		}
		// Another namespace: crio.conf's signature_policy.
		_, p, err = crioNSPlan(t, root, image, Options{Namespace: "shop"})
		if err != nil {
			t.Fatal(err)
		}
		if p.CRIO.Policy.File != "/etc/containers/policy.json" || p.CRIO.Namespace.PolicyFileUsed {
			t.Errorf("shop: policy %+v", p.CRIO.Policy)
		}
	})

	t.Run("namespaced_auth_dir from crio.conf.d", func(t *testing.T) {
		moved := nsFile("/var/lib/crio/auth", "shop", "registry.example/team/app")
		root := crioRoot(t, with(map[string]string{
			"etc/crio/crio.conf.d/10-auth.conf": "[crio.image]\nnamespaced_auth_dir = \"/var/lib/crio/auth\"\n",
			strings.TrimPrefix(moved, "/"):      authJSON(host, "moved-user", "p"),
		}))
		_, p, err := crioNSPlan(t, root, image, Options{Namespace: "shop"})
		if err != nil {
			t.Fatal(err)
		}
		if u, src := routedUser(t, p); u != "moved-user" || src != moved {
			t.Errorf("registry gets %s from %s, want moved-user from %s", u, src, moved)
		}
	})

	t.Run("CRI-O 1.34 reads no namespaced auth file", func(t *testing.T) {
		root := crioRoot(t, base)
		c, p, err := crioNSPlan(t, root, image, Options{Namespace: "shop", RuntimeVersion: "cri-o://1.34.2"})
		if err != nil {
			t.Fatal(err)
		}
		if v, ok := c.crioVersion(); !ok || v.major != 1 || v.minor != 34 {
			t.Fatalf("version %q (%+v), want 1.34 from --runtime-version", c.Runtime.Version, v)
		}
		if p.CRIO.Namespace.AuthFileUsed || !strings.Contains(p.CRIO.Namespace.Note, "came with 1.35") {
			t.Errorf("namespace fact %+v", p.CRIO.Namespace)
		}
		if u, _ := routedUser(t, p); u != "global-user" {
			t.Errorf("registry gets %s, want global-user", u)
		}
		// 1.28 and later still read the namespace's policy.
		_, p, err = crioNSPlan(t, root, image, Options{Namespace: "secure", RuntimeVersion: "cri-o://1.34.2"})
		if err != nil || !p.CRIO.Namespace.PolicyFileUsed {
			t.Errorf("1.34, namespace secure: policy not used (%v, %+v)", err, p.CRIO.Namespace)
		}
	})

	t.Run("an auth file that is not JSON fails the pull before the network", func(t *testing.T) {
		root := crioRoot(t, with(map[string]string{strings.TrimPrefix(shopAuth, "/"): "{not json"}))
		_, p, err := crioNSPlan(t, root, image, Options{Namespace: "shop"})
		ve, ok := verdict.AsError(err)
		if !ok || ve.Cause != verdict.CodeConfigCrioAuthFile || !strings.Contains(ve.Error(), shopAuth) {
			t.Fatalf("err %v, want %s naming %s", err, verdict.CodeConfigCrioAuthFile, shopAuth)
		}
		if p == nil || p.CRIO.Namespace == nil || !p.CRIO.Namespace.AuthFileUsed {
			t.Errorf("partial plan lacks the namespace fact: %+v", p)
		}
		// Another namespace reads global_auth_file, which is fine.
		if _, _, err := crioNSPlan(t, root, image, Options{Namespace: "web"}); err != nil {
			t.Errorf("namespace web: %v", err)
		}
	})
}
