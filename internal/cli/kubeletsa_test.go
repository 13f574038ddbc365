package cli

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/lab/labtest"
)

// saToken is a JWT-shaped token for aud whose signature is canary.
func saToken(aud, canary string) string {
	claims, _ := json.Marshal(map[string]any{"aud": []string{aud}, "sub": "system:serviceaccount:shop:puller"})
	return "eyJhbGciOiJSUzI1NiJ9." + base64.RawURLEncoding.EncodeToString(claims) + "." + canary
}

// TestProbeServiceAccount runs `probe --as-kubelet` for a provider with
// tokenAttributes (KEP-4412) against the lab's token-auth registry: the
// provider runs only with the service account and annotations it requires,
// gets the token, and the token never appears in any output, also when the
// provider hands it to the registry as a password.
func TestProbeServiceAccount(t *testing.T) {
	skipUnlessRoot(t)
	l := labtest.New(t, lab.Options{})
	sc := labtest.Scenario(t, l, "healthy-auth")
	host := sc.Image[:strings.IndexByte(sc.Image, '/')]
	provider := buildCredProvider(t)
	const canary = "pp-canary-SaT0ken7Zq-signature"
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(saToken("lab-audience", canary)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	otherAud := filepath.Join(dir, "other")
	if err := os.WriteFile(otherAud, []byte(saToken("someone-else", canary)), 0o600); err != nil {
		t.Fatal(err)
	}
	tokenAttrs := func(cacheType string) string {
		return "    tokenAttributes:\n      serviceAccountTokenAudience: lab-audience\n      cacheType: " + cacheType +
			"\n      requireServiceAccount: true\n      requiredServiceAccountAnnotationKeys: [lab.test/client-id]\n"
	}
	good := kubeletNode{provider: provider, mode: "good", key: host, user: sc.Username, pass: sc.Password, matchImages: []string{host}, extra: tokenAttrs("ServiceAccount")}
	with := func(f func(*kubeletNode)) kubeletNode { n := good; f(&n); return n }
	sa := []string{"--service-account", "shop/puller", "--service-account-token-file", tokenFile, "--service-account-annotation", "lab.test/client-id=c-1"}
	tests := []struct {
		name     string
		node     kubeletNode
		args     []string
		wantExit int
		want     []string
		cause    string
	}{
		{"with the service account: the provider runs", good, sa, ExitOK, []string{"The pull path works", "kubelet credential provider lab-provider"}, "ok"},
		{"no service account while required: not run", good, nil, ExitFailure,
			[]string{"auth.provider-service-account", "requires the pod's service account token"}, "auth.provider-service-account"},
		{"required annotation missing: not run", good, sa[:4], ExitFailure,
			[]string{"auth.provider-service-account", "requires the annotation lab.test/client-id"}, "auth.provider-service-account"},
		{"token for another audience", good, []string{"--service-account", "shop/puller", "--service-account-token-file", otherAud, "--service-account-annotation", "lab.test/client-id=c-1"}, ExitFailure,
			[]string{"auth.provider-service-account", `wants a token for audience "lab-audience"`}, "auth.provider-service-account"},
		{"token echoed as password, cacheType ServiceAccount: refused", with(func(n *kubeletNode) { n.mode = "echo" }), sa, ExitFailure,
			[]string{"auth.provider-failed", "returned the service account token as the password"}, "auth.provider-failed"},
		{"token echoed as password, cacheType Token: the registry rejects it", with(func(n *kubeletNode) { n.mode = "echo"; n.extra = tokenAttrs("Token") }), sa, ExitFailure,
			[]string{"auth.bad-credentials"}, "auth.bad-credentials"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := tt.node.root(t, sc.Root)
			for _, format := range []string{"text", "json"} {
				args := probeArgs(l, sc, append([]string{"--root", root, "-o", format}, tt.args...)...)
				code, out, stderr := runCLI(t, "", args...)
				if code != tt.wantExit {
					t.Fatalf("pullpath %v: exit %d, want %d\n%s%s", args, code, tt.wantExit, out, stderr)
				}
				if format == "text" {
					for _, w := range tt.want {
						if !strings.Contains(out, w) {
							t.Errorf("text output lacks %q:\n%s", w, out)
						}
					}
				} else {
					var rep struct{ Verdict struct{ Cause string } }
					if err := json.Unmarshal([]byte(out), &rep); err != nil {
						t.Fatalf("-o json: %v\n%s", err, out)
					}
					if rep.Verdict.Cause != tt.cause {
						t.Errorf("JSON verdict cause %q, want %q", rep.Verdict.Cause, tt.cause)
					}
				}
				for _, f := range append(canaryForms("", saToken("lab-audience", canary)), canaryForms("", canary)...) {
					if f != "" && (strings.Contains(out, f) || strings.Contains(stderr, f)) {
						t.Errorf("%s output shows the service-account token as %q:\n%s%s", format, f, out, stderr)
					}
				}
			}
		})
	}
	// Flag errors are usage errors (exit 2), before anything runs.
	for _, bad := range [][]string{
		{"--service-account", "puller"},
		{"--service-account-token-file", tokenFile},
		{"--service-account", "shop/puller"}, // no API client in this build of the cli package's tests
		{"--service-account", "shop/puller", "--service-account-token-file", tokenFile, "--service-account-annotation", "novalue"},
	} {
		if code, out, stderr := runCLI(t, "", append([]string{"probe", sc.Image, "--root", sc.Root}, bad...)...); code != ExitUsage {
			t.Errorf("probe %v: exit %d, want %d (usage)\n%s%s", bad, code, ExitUsage, out, stderr)
		}
	}
}

// TestProbeSeveralProviders: two providers match the image; as in the
// kubelet both run and their answers form one keyring, so one that fails or
// answers for another host leaves the other's credentials. When the kubelet
// holds several credentials it tries them in turn until one pulls
// (kuberuntime_image.go PullImage), and so does the probe: a rejected first
// credential and an accepted second one is ok, all rejected is the auth
// cause, and every attempt is named in a warning without its secret.
func TestProbeSeveralProviders(t *testing.T) {
	skipUnlessRoot(t)
	l := labtest.New(t, lab.Options{})
	sc := labtest.Scenario(t, l, "healthy-auth")
	host := sc.Image[:strings.IndexByte(sc.Image, '/')]
	repo := sc.Image[len(host)+1:]
	if i := strings.IndexAny(repo, ":@"); i >= 0 {
		repo = repo[:i]
	}
	provider := buildCredProvider(t)
	second := func(mode, key, pass string) string {
		return "  - name: lab-provider-2\n    matchImages: [\"" + host + "\"]\n    defaultCacheDuration: 10m\n    apiVersion: credentialprovider.kubelet.k8s.io/v1\n    args: [" + mode + "]\n" +
			"    env:\n      - {name: PP_KEY, value: \"" + key + "\"}\n      - {name: PP_USER, value: \"" + sc.Username + "\"}\n      - {name: PP_PASS, value: \"" + pass + "\"}\n"
	}
	// A second auth entry of the first provider (its env list goes on).
	entry2 := func(key, pass string) string {
		return "      - {name: PP_KEY2, value: \"" + key + "\"}\n      - {name: PP_PASS2, value: \"" + pass + "\"}\n"
	}
	const canary = "pp-canary-TwoProv1ders-secret"
	const canary2 = "pp-canary-S3condCred-secret"
	type attempt struct {
		n, of int
		name  string
	} // a failed attempt's warning
	tests := []struct {
		name     string
		first    kubeletNode
		extra    string
		code     int
		cause    string    // the verdict's cause when code is not ExitOK
		want     []string  // warnings in the JSON report
		failed   []attempt // the "credential N of M (NAME) failed" warnings, exactly
		identity string    // in the report's identity
	}{
		{"the first fails, the second's credentials pull", kubeletNode{mode: "fail", key: host, pass: canary}, second("good", host, sc.Password),
			ExitOK, "", []string{"auth.provider-failed"}, nil, "lab-provider-2"},
		{"the first answers for another host", kubeletNode{mode: "good", key: "other.lab.test", pass: canary}, second("good", host, sc.Password),
			ExitOK, "", []string{"auth.provider-no-credentials"}, nil, "lab-provider-2"},
		{"both answer: the first's credential pulls, the second is not needed", kubeletNode{mode: "good", key: host, pass: sc.Password}, second("good", host, canary),
			ExitOK, "", []string{"auth.provider-several-credentials"}, nil, "kubelet credential provider lab-provider)"},
		{"the first is rejected, the second pulls", kubeletNode{mode: "good", key: host, pass: canary}, second("good", host, sc.Password),
			ExitOK, "", []string{"auth.provider-several-credentials", "auth.bad-credentials"},
			[]attempt{{1, 2, "lab-provider under " + host}}, "lab-provider-2"},
		{"both are rejected: the auth cause", kubeletNode{mode: "good", key: host, pass: canary}, second("good", host, canary2),
			ExitFailure, "auth.bad-credentials", []string{"auth.provider-several-credentials", "auth.bad-credentials"},
			[]attempt{{1, 2, "lab-provider under " + host}, {2, 2, "lab-provider-2 under " + host}}, "kubelet credential provider lab-provider)"},
		{"one provider, two entries: the more specific is rejected, the other pulls", kubeletNode{mode: "good", key: host, pass: sc.Password}, entry2(host+"/"+repo, canary2),
			ExitOK, "", []string{"auth.provider-several-credentials", "auth.bad-credentials"},
			[]attempt{{1, 2, "lab-provider under " + host + "/" + repo}}, "kubelet credential provider lab-provider)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := tt.first
			n.provider, n.user, n.matchImages, n.extra = provider, sc.Username, []string{host}, tt.extra
			root := n.root(t, sc.Root)
			bin, err := os.ReadFile(provider)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, "var/lib/kubelet/credential-provider/lab-provider-2"), bin, 0o755); err != nil {
				t.Fatal(err)
			}
			args := probeArgs(l, sc, "--root", root, "-o", "json", "--as-kubelet")
			code, out, stderr := runCLI(t, "", args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tt.code, out, stderr)
			}
			var rep struct {
				Identity string `json:"identity"`
				Verdict  struct{ Cause string }
				Warnings []struct {
					Code, Message string
				} `json:"warnings"`
				CredentialProvider struct {
					Matched []string `json:"matched"`
				} `json:"credential_provider"`
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatal(err)
			}
			if len(rep.CredentialProvider.Matched) != 2 && !strings.Contains(tt.name, "one provider") {
				t.Errorf("matched = %v, want both providers", rep.CredentialProvider.Matched)
			}
			if tt.code != ExitOK && rep.Verdict.Cause != tt.cause {
				t.Errorf("verdict cause %q, want %q", rep.Verdict.Cause, tt.cause)
			}
			if !strings.Contains(rep.Identity, tt.identity) {
				t.Errorf("identity %q, want it to name %q", rep.Identity, tt.identity)
			}
			for _, w := range tt.want {
				found := false
				for _, got := range rep.Warnings {
					found = found || got.Code == w
				}
				if !found {
					t.Errorf("warnings %+v lack %s", rep.Warnings, w)
				}
			}
			var failed []string
			for _, w := range rep.Warnings {
				if strings.HasPrefix(w.Message, "credential ") && strings.Contains(w.Message, " failed: ") {
					failed = append(failed, w.Code+": "+w.Message)
				}
			}
			if len(failed) != len(tt.failed) {
				t.Errorf("failed attempts %q, want %d", failed, len(tt.failed))
			}
			for i, a := range tt.failed {
				if i < len(failed) && !strings.HasPrefix(failed[i], fmt.Sprintf("auth.bad-credentials: credential %d of %d (%s) failed: ", a.n, a.of, a.name)) {
					t.Errorf("failed attempt %d is %q, want credential %d of %d (%s)", i+1, failed[i], a.n, a.of, a.name)
				}
			}
			if tt.want[0] == "auth.provider-several-credentials" && !strings.Contains(out, "lab-provider-2 under "+host) && !strings.Contains(tt.name, "one provider") {
				t.Errorf("the second provider's credential is not named:\n%s", out)
			}
			_, text, textErr := runCLI(t, "", probeArgs(l, sc, "--root", root, "--as-kubelet")...)
			for _, pass := range []string{canary, canary2, sc.Password} {
				for _, f := range canaryForms(sc.Username, pass) {
					for _, o := range []string{out, stderr, text, textErr} {
						if strings.Contains(o, f) {
							t.Errorf("the output shows a provider credential as %q", f)
						}
					}
				}
			}
		})
	}
}
