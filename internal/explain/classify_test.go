package explain

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pullpath/pullpath/internal/verdict"
)

// want is the part of a Result a table test asserts.
type want struct {
	Layer verdict.Layer
	Cause string
	Role  verdict.Role
	Host  string
	Image string
}

func got(r Result) want {
	return want{Layer: r.Verdict.Layer, Cause: r.Verdict.Cause, Role: r.Verdict.Role, Host: r.Host, Image: r.Image}
}

func TestClassifyShapes(t *testing.T) {
	tests := []struct {
		name string
		msg  string
		want want
	}{
		{"kubelet wraps containerd dns", `Failed to pull image "myacr.azurecr.io/app:v1": rpc error: code = Unknown desc = failed to pull and unpack image "myacr.azurecr.io/app:v1": failed to resolve reference "myacr.azurecr.io/app:v1": failed to do request: Head "https://myacr.azurecr.io/v2/app/manifests/v1": dial tcp: lookup myacr.azurecr.io on 168.63.129.16:53: no such host`,
			want{verdict.LayerDNS, "dns.nxdomain", verdict.RoleRegistry, "myacr.azurecr.io", "myacr.azurecr.io/app:v1"}},
		{"cgo resolver without server", `dial tcp: lookup k8s.gcr.io: device or resource busy`,
			want{verdict.LayerDNS, "dns.servfail", verdict.RoleRegistry, "k8s.gcr.io", ""}},
		{"dns timeout", `Get "https://r.example/v2/": dial tcp: lookup r.example on 10.0.0.10:53: read udp 10.0.0.5:41234->10.0.0.10:53: i/o timeout`,
			want{verdict.LayerDNS, "dns.timeout", verdict.RoleRegistry, "r.example", ""}},
		{"dns refused", `Get "https://r.example/v2/": dial tcp: lookup r.example on 10.0.0.10:53: dial udp 10.0.0.10:53: connect: connection refused`,
			want{verdict.LayerDNS, "dns.unreachable", verdict.RoleRegistry, "r.example", ""}},
		{"server misbehaving", `dial tcp: lookup registry-1.docker.io on 127.0.0.53:53: server misbehaving`,
			want{verdict.LayerDNS, "dns.servfail", verdict.RoleRegistry, "registry-1.docker.io", ""}},
		{"blob host nxdomain is a blob failure", `failed to copy: httpReadSeeker: failed open: failed to do request: Get "https://myacr.westeurope.data.azurecr.io/v2/app/blobs/sha256:ab": dial tcp: lookup myacr.westeurope.data.azurecr.io: no such host`,
			want{verdict.LayerDNS, "dns.nxdomain", verdict.RoleBlob, "myacr.westeurope.data.azurecr.io", ""}},
		{"auth realm dns", `failed to authorize: failed to fetch anonymous token: Get "https://auth.docker.io/token?scope=repository%3Alibrary%2Fnginx%3Apull&service=registry.docker.io": dial tcp: lookup auth.docker.io: no such host`,
			want{verdict.LayerDNS, "dns.nxdomain", verdict.RoleAuth, "auth.docker.io", ""}},
		{"dial timeout", `failed to do request: Head "https://test.azurecr.io/v2/app/manifests/v1": dial tcp 10.1.2.3:443: i/o timeout`,
			want{verdict.LayerRoute, "route.timeout", verdict.RoleRegistry, "test.azurecr.io", ""}},
		{"refused", `Get "https://10.0.0.9:5000/v2/": dial tcp 10.0.0.9:5000: connect: connection refused`,
			want{verdict.LayerRoute, "route.refused", verdict.RoleRegistry, "10.0.0.9", ""}},
		{"unreachable", `Head "https://r.example/v2/a/manifests/b": dial tcp 10.0.0.9:443: connect: no route to host`,
			want{verdict.LayerRoute, "route.unreachable", verdict.RoleRegistry, "r.example", ""}},
		{"proxy", `Get "https://registry-1.docker.io/v2/": proxyconnect tcp: dial tcp 10.9.9.9:3128: connect: connection refused`,
			want{verdict.LayerRoute, "route.proxy", verdict.RoleProxy, "10.9.9.9", ""}},
		{"lookup error no predicate names", `Get "https://r.example/v2/": dial tcp: lookup r.example: no buffer space available`,
			want{verdict.LayerDNS, "dns.servfail", verdict.RoleRegistry, "r.example", ""}},
		{"lookup of an image is not DNS", `failed to lookup image myimage.v2: some error`,
			want{verdict.LayerUnknown, "unknown", verdict.RoleNone, "", ""}},
		{"connect error no predicate names", `failed to do request: Head "https://r.example/v2/app/manifests/1": dial tcp 10.1.2.3:443: connectex: A socket operation was attempted to an unreachable something.`,
			want{verdict.LayerRoute, "route.connect", verdict.RoleRegistry, "r.example", ""}},
		{"proxy refuses CONNECT", `failed to pull and unpack image "r.example/app:1": failed to resolve reference "r.example/app:1": failed to do request: Head "https://r.example/v2/app/manifests/1": Forbidden`,
			want{verdict.LayerRoute, "route.proxy", verdict.RoleProxy, "", "r.example/app:1"}},
		{"docker prints a registry code bare, lower case", `Error response from daemon: Head "https://ghcr.io/v2/o/app/manifests/latest": unauthorized`,
			want{verdict.LayerAuth, "auth.no-credentials", verdict.RoleRegistry, "ghcr.io", ""}},
		{"proxy wants credentials", `Get "https://ghcr.io/v2/": Proxy Authentication Required`,
			want{verdict.LayerRoute, "route.proxy", verdict.RoleProxy, "", ""}},
		{"tls handshake timeout", `failed to do request: Head "https://test.azurecr.io/v2/test-api/manifests/v1.1.3": net/http: TLS handshake timeout`,
			want{verdict.LayerTLS, "tls.timeout", verdict.RoleRegistry, "test.azurecr.io", ""}},
		{"tls untrusted go1.20", `Get "https://harbor.corp/v2/": tls: failed to verify certificate: x509: certificate signed by unknown authority`,
			want{verdict.LayerTLS, "tls.untrusted", verdict.RoleRegistry, "harbor.corp", ""}},
		{"tls name", `Get "https://r.corp/v2/": x509: certificate is valid for a.corp, b.corp, not r.corp`,
			want{verdict.LayerTLS, "tls.name", verdict.RoleRegistry, "r.corp", ""}},
		{"tls expired", `Get "https://r.corp/v2/": x509: certificate has expired or is not yet valid: current time 2024-01-01T00:00:00Z is after 2023-12-01T00:00:00Z`,
			want{verdict.LayerTLS, "tls.expired", verdict.RoleRegistry, "r.corp", ""}},
		{"plain http", `Get "https://r.corp:5000/v2/": http: server gave HTTP response to HTTPS client`,
			want{verdict.LayerTLS, "tls.plain-http", verdict.RoleRegistry, "r.corp", ""}},
		{"anonymous 401", `failed to authorize: failed to fetch anonymous token: unexpected status from GET request to https://ghcr.io/token?scope=repository%3Ao%2Fp%3Apull&service=ghcr.io: 401 Unauthorized`,
			want{verdict.LayerAuth, "auth.no-credentials", verdict.RoleAuth, "ghcr.io", ""}},
		{"oauth 401 old form", `failed to resolve reference "a.azurecr.io/b:c": failed to authorize: failed to fetch oauth token: unexpected status: 401 Unauthorized`,
			want{verdict.LayerAuth, "auth.bad-credentials", verdict.RoleAuth, "a.azurecr.io", "a.azurecr.io/b:c"}},
		{"ecr no basic auth", `failed to resolve reference "1.dkr.ecr.us-east-1.amazonaws.com/a:b": pull access denied, repository does not exist or may require authorization: authorization failed: no basic auth credentials`,
			want{verdict.LayerAuth, "auth.no-credentials", verdict.RoleRegistry, "1.dkr.ecr.us-east-1.amazonaws.com", "1.dkr.ecr.us-east-1.amazonaws.com/a:b"}},
		{"ip denied", `unexpected status from HEAD request to https://a.azurecr.io/v2/b/manifests/c: 403 Forbidden` + "\n" + `denied: client with IP '1.2.3.4' is not allowed access. Refer https://aka.ms/acr/firewall to grant access.`,
			want{verdict.LayerAuthz, "authz.ip-denied", verdict.RoleRegistry, "a.azurecr.io", ""}},
		{"denied or missing", `failed to resolve reference "docker.io/library/nope:1": pull access denied, repository does not exist or may require authorization: server message: insufficient_scope: authorization failed`,
			want{verdict.LayerAuthz, "authz.denied-or-missing", verdict.RoleRegistry, "registry-1.docker.io", "docker.io/library/nope:1"}},
		{"crane unauthorized", `GET https://index.docker.io/v2/library/nope/manifests/latest: UNAUTHORIZED: authentication required; [map[Action:pull Class: Name:library/nope Type:repository]]`,
			want{verdict.LayerAuth, "auth.no-credentials", verdict.RoleRegistry, "index.docker.io", ""}},
		{"not found", `rpc error: code = NotFound desc = failed to pull and unpack image "r.example/a:b": failed to resolve reference "r.example/a:b": r.example/a:b: not found`,
			want{verdict.LayerManifest, "manifest.unknown", verdict.RoleRegistry, "r.example", "r.example/a:b"}},
		{"crio manifest unknown", `rpc error: code = Unknown desc = reading manifest v9 in quay.io/org/app: manifest unknown`,
			want{verdict.LayerManifest, "manifest.unknown", verdict.RoleRegistry, "quay.io", "quay.io/org/app:v9"}},
		{"platform", `failed to pull and unpack image "docker.io/x/y:1": no match for platform in manifest: not found`,
			want{verdict.LayerManifest, "manifest.platform", verdict.RoleRegistry, "registry-1.docker.io", "docker.io/x/y:1"}},
		{"ratelimit", `failed to copy: httpReadSeeker: failed open: unexpected status code https://registry-1.docker.io/v2/library/busybox/manifests/sha256:ab: 429 Too Many Requests - Server message: toomanyrequests: You have reached your pull rate limit. https://www.docker.com/increase-rate-limit`,
			want{verdict.LayerRegistry, "registry.ratelimit", verdict.RoleRegistry, "registry-1.docker.io", ""}},
		{"5xx", `unexpected status from HEAD request to https://quay.io/v2/a/b/manifests/c: 502 Bad Gateway`,
			want{verdict.LayerRegistry, "registry.unavailable", verdict.RoleRegistry, "quay.io", ""}},
		{"blob reset", `failed to copy: httpReadSeeker: failed open: failed to do request: Get "https://prod-us-east-1-starport-layer-bucket.s3.us-east-1.amazonaws.com/ab/cd?X-Amz-Signature=x": read tcp 10.0.0.1:5555->52.1.1.1:443: read: connection reset by peer`,
			want{verdict.LayerTransfer, "transfer.reset", verdict.RoleBlob, "prod-us-east-1-starport-layer-bucket.s3.us-east-1.amazonaws.com", ""}},
		{"blob storage denied", `failed to copy: httpReadSeeker: failed open: unexpected status code https://weumanaged15.blob.core.windows.net/x/docker/registry/v2/blobs/sha256/ab/cd/data?se=2024&sig=zz: 403 Forbidden`,
			want{verdict.LayerTransfer, "transfer.status", verdict.RoleBlob, "weumanaged15.blob.core.windows.net", ""}},
		{"short read", `failed to copy: short read: expected 2753 bytes but got 0: unexpected EOF`,
			want{verdict.LayerTransfer, "transfer.size", verdict.RoleBlob, "", ""}},
		{"disk", `failed to extract layer sha256:ab: write /var/lib/containerd/x: no space left on device: unknown`,
			want{verdict.LayerRuntime, "runtime.disk", verdict.RoleNone, "", ""}},
		{"never pull", `Container image "app:1" is not present with pull policy of Never`,
			want{verdict.LayerConfig, "config.never-pull", verdict.RoleNone, "", "app:1"}},
		{"bad reference", `Failed to apply default image tag "App:1": couldn't parse image reference "App:1": invalid reference format: repository name must be lowercase`,
			want{verdict.LayerConfig, "config.reference", verdict.RoleNone, "", "App:1"}},
		{"registry unavailable no detail", `image pull failed for r.example/a:b because the registry is unavailable`,
			want{verdict.LayerRegistry, "registry.unavailable", verdict.RoleRegistry, "r.example", "r.example/a:b"}},
		{"registry unavailable with detail", `image pull failed for r.example/a:b because the registry is unavailable: pinging container registry r.example: Get "https://r.example/v2/": dial tcp 10.0.0.2:443: connect: connection refused`,
			want{verdict.LayerRoute, "route.refused", verdict.RoleRegistry, "r.example", "r.example/a:b"}},
		{"backoff", `Back-off pulling image "nginx:1.25"`,
			want{verdict.LayerUnknown, "unknown.backoff", verdict.RoleNone, "", "nginx:1.25"}},
		{"error reason only", `Error: ImagePullBackOff`,
			want{verdict.LayerUnknown, "unknown.backoff", verdict.RoleNone, "", ""}},
		{"bare deadline", `rpc error: code = DeadlineExceeded desc = context deadline exceeded`,
			want{verdict.LayerUnknown, "unknown.kubelet-deadline", verdict.RoleNone, "", ""}},
		{"bare deadline, no gRPC status", `context deadline exceeded`,
			want{verdict.LayerUnknown, "unknown.deadline", verdict.RoleNone, "", ""}},
		{"mirror", `failed to do request: Head "https://mirror.corp/v2/library/nginx/manifests/1?ns=docker.io": dial tcp 10.0.0.3:443: i/o timeout`,
			want{verdict.LayerRoute, "route.timeout", verdict.RoleMirror, "mirror.corp", ""}},
		{"runtime socket is not the route", `rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing: dial unix /run/containerd/containerd.sock: connect: connection refused"`,
			want{verdict.LayerRuntime, "runtime.error", verdict.RoleNone, "", ""}},
		{"json escaped", `error="failed to pull and unpack image \"docker.io/library/x:1\": failed to resolve reference \"docker.io/library/x:1\": docker.io/library/x:1: not found"`,
			want{verdict.LayerManifest, "manifest.unknown", verdict.RoleRegistry, "registry-1.docker.io", "docker.io/library/x:1"}},
		{"not a failure", `Successfully pulled image "nginx:1" in 2.1s`,
			want{verdict.LayerNone, "", verdict.RoleNone, "", "nginx:1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Classify(tt.msg)
			if diff := cmp.Diff(tt.want, got(r)); diff != "" {
				t.Errorf("Classify(%q) mismatch (-want +got):\n%s", tt.msg, diff)
			}
		})
	}
}

func TestAggregatePicksFurthest(t *testing.T) {
	msg := `Failed to pull image "a.b/c:d": [rpc error: code = Unknown desc = failed to pull and unpack image "a.b/c:d": failed to resolve reference "a.b/c:d": failed to authorize: failed to fetch anonymous token: unexpected status: 401 Unauthorized, rpc error: code = NotFound desc = failed to pull and unpack image "a.b/c:d": failed to resolve reference "a.b/c:d": a.b/c:d: not found]`
	r := Classify(msg)
	if r.Verdict.Cause != "manifest.unknown" {
		t.Fatalf("Classify(%q).Cause = %q, want manifest.unknown", msg, r.Verdict.Cause)
	}
	if len(r.Ambiguous) == 0 || !strings.HasPrefix(r.Ambiguous[0], "auth.") {
		t.Errorf("Classify(%q).Ambiguous = %q, want the 401 reading", msg, r.Ambiguous)
	}
}

func TestDeniedOrMissingIsAmbiguous(t *testing.T) {
	r := Classify(`pull access denied, repository does not exist or may require authorization: server message: insufficient_scope: authorization failed`)
	if len(r.Ambiguous) != 2 {
		t.Fatalf("Ambiguous = %q, want two readings", r.Ambiguous)
	}
	joined := strings.Join(r.Ambiguous, " ")
	for _, w := range []string{"manifest.name-unknown", "authz.denied"} {
		if !strings.Contains(joined, w) {
			t.Errorf("Ambiguous = %q, want a %s reading", r.Ambiguous, w)
		}
	}
	if len(r.Verdict.Next) < 2 {
		t.Errorf("Next = %q, want steps that separate the readings", r.Verdict.Next)
	}
}

func TestAnonymous401MentionsWrongName(t *testing.T) {
	r := Classify(`failed to authorize: failed to fetch anonymous token: unexpected status: 401 Unauthorized`)
	if len(r.Ambiguous) == 0 || !strings.Contains(r.Ambiguous[0], "manifest.unknown") {
		t.Errorf("Ambiguous = %q, want the wrong-name reading", r.Ambiguous)
	}
}

func TestBlobSummarySaysOnlyManifest(t *testing.T) {
	r := Classify(`failed to copy: httpReadSeeker: failed open: failed to do request: Get "https://x.blob.core.windows.net/a/docker/registry/v2/blobs/sha256/ab/cd/data?sig=s": dial tcp 20.1.1.1:443: i/o timeout`)
	if r.Verdict.Role != verdict.RoleBlob || !strings.Contains(r.Verdict.Summary, "Only the manifest endpoint is reachable") {
		t.Errorf("Classify blob timeout: role %q summary %q, want role blob and the sentence that only the manifest endpoint is reachable", r.Verdict.Role, r.Verdict.Summary)
	}
	if !strings.Contains(strings.Join(r.Verdict.Next, " "), "Credentials are irrelevant") {
		t.Errorf("Next = %q, want the sentence that credentials are irrelevant", r.Verdict.Next)
	}
}

func TestSecretsRedacted(t *testing.T) {
	msgs := []string{
		`failed to copy: httpReadSeeker: failed open: failed to do request: Get "https://x.blob.core.windows.net/a/data?se=2024-01-01&sig=SECRETSIG%3D&sp=r": dial tcp 1.1.1.1:443: i/o timeout`,
		`Get "https://prod-eu-west-1-starport-layer-bucket.s3.eu-west-1.amazonaws.com/x?X-Amz-Security-Token=SECRETTOK&X-Amz-Signature=SECRETSIG": EOF`,
		`unexpected status: 401 Unauthorized, Authorization: Bearer SECRETBEARERTOKEN123`,
		`failed to fetch oauth token: POST https://u:SECRETPASS@r.example/oauth2/token password=SECRETPASS2: 401`,
		`token eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.SECRETJWTSIG rejected: 401 Unauthorized`,
	}
	for _, m := range msgs {
		r := Classify(m)
		for _, field := range []string{r.Verdict.Evidence, r.URL, Redact(m)} {
			if strings.Contains(field, "SECRET") {
				t.Errorf("Classify(%q) leaks a secret: %q", m, field)
			}
		}
	}
}

func TestRedactKeepsPlainText(t *testing.T) {
	in := `failed to fetch oauth token: unexpected status: 401 Unauthorized; Bearer realm="https://auth.docker.io/token",service="registry.docker.io"`
	out := Redact(in)
	if !strings.Contains(out, "failed to fetch oauth token: unexpected status: 401 Unauthorized") || !strings.Contains(out, `Bearer realm=`) {
		t.Errorf("Redact(%q) = %q, want the plain text kept", in, out)
	}
}

func TestHTTPStatus(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{"unexpected status: 401 unauthorized", 401},
		{"unexpected status from get request to https://x/: 403 forbidden", 403},
		{"pulling from host x failed with status code [manifests v1]: 404 not found", 404},
		{"received unexpected http status: 500 internal server error", 500},
		{"status code 429", 429},
		{"sha256:abc401 unauthorized", 0},
		{"dial tcp 10.0.0.1:443: i/o timeout", 0},
	}
	for _, tt := range tests {
		if got := httpStatus(tt.in); got != tt.want {
			t.Errorf("httpStatus(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestRoleOfURL(t *testing.T) {
	tests := []struct {
		in   string
		want verdict.Role
	}{
		{"https://auth.docker.io/token?scope=x", verdict.RoleAuth},
		{"https://a.azurecr.io/oauth2/token", verdict.RoleAuth},
		{"https://gitlab.com/jwt/auth?x", verdict.RoleAuth},
		{"https://harbor.corp/service/token", verdict.RoleAuth},
		{"https://quay.io/v2/auth", verdict.RoleAuth},
		{"https://r.example/v2/a/blobs/sha256:ab", verdict.RoleBlob},
		{"https://cdn01.quay.io/sha256/ab", verdict.RoleBlob},
		{"https://pkg-containers.githubusercontent.com/ghcr1/blobs/x", verdict.RoleBlob},
		{"https://docker-images-prod.6aa30f8b08e16409b46e0173d6de2f56.r2.cloudflarestorage.com/registry-v2/x", verdict.RoleBlob},
		{"https://westus.data.mcr.microsoft.com/x", verdict.RoleBlob},
		{"https://d1.cloudfront.net/x", verdict.RoleBlob},
		{"https://r.example/v2/a/manifests/b", verdict.RoleRegistry},
		{"https://mirror.corp/v2/a/manifests/b?ns=docker.io", verdict.RoleMirror},
	}
	for _, tt := range tests {
		fs := findURLs(tt.in, lowerASCII(tt.in))
		if len(fs) != 1 {
			t.Fatalf("findURLs(%q) = %d URLs, want 1", tt.in, len(fs))
		}
		if got := roleOfURL(fs[0].u); got != tt.want {
			t.Errorf("roleOfURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestNormalize(t *testing.T) {
	tests := []struct{ in, want string }{
		{`a \"b\" c`, `a "b" c`},
		{`a \\\"b\\\"`, `a "b"`},
		{"a\n\t b", "a b"},
		{`x\nunauthorized: y`, "x unauthorized: y"},
		{`C:\\path`, `C:\\path`},
	}
	for _, tt := range tests {
		if got := normalize(tt.in); got != tt.want {
			t.Errorf("normalize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestClassifyCapsLargeInput(t *testing.T) {
	big := strings.Repeat("lookup a.example: ", 1<<16) + "no such host"
	if len(big) < 1<<20 {
		t.Fatalf("input is %d bytes, want at least 1 MiB", len(big))
	}
	r := Classify(big)
	// The cap drops the tail, so the classifier never sees the cause: the
	// bound is what this asserts, through the evidence size.
	if len(r.Verdict.Evidence) > 4*MaxMessageBytes {
		t.Errorf("Classify(1 MiB) evidence is %d bytes, want at most %d", len(r.Verdict.Evidence), 4*MaxMessageBytes)
	}
	if r.Verdict.Cause == "dns.nxdomain" {
		t.Errorf("Classify(1 MiB) saw text past MaxMessageBytes")
	}
}

// TestGeneralShapes pins the general rules behind the held-out families:
// the same shape with other hosts and images must read the same way.
// These messages are synthetic variants of real ones in the corpus.
func TestGeneralShapes(t *testing.T) {
	checkShapes(t, []shapeCase{
		{"windows connect timeout on a blob host", `failed to copy: httpReadSeeker: failed open: failed to do request: Get "https://blob.r.example.blob.core.windows.net/x/data?sig=x": dial tcp 10.1.2.3:443: connectex: A connection attempt failed because the connected party did not properly respond after a period of time, or established connection failed because connected host has failed to respond.`,
			want{verdict.LayerRoute, "route.timeout", verdict.RoleBlob, "blob.r.example.blob.core.windows.net", ""}},
		{"presigned URL parameters are no refusal", `failed to copy: httpReadSeeker: failed open: failed to do request: Get "https://bucket.s3.amazonaws.com/x/data?X-Amz-Expires=1200&X-Amz-Signature=x": read tcp 10.0.0.5:1234->10.9.9.9:443: read: connection reset by peer`,
			want{verdict.LayerTransfer, "transfer.reset", verdict.RoleBlob, "bucket.s3.amazonaws.com", ""}},
		{"wrong diff id is an unpack failure", `failed to pull and unpack image "r.example/app:1": failed to unpack image on snapshotter overlayfs: wrong diff id calculated on extraction "sha256:ab"`,
			want{verdict.LayerRuntime, "runtime.unpack", verdict.RoleNone, "", "r.example/app:1"}},
		{"expired token inside pull access denied", `Error response from daemon: pull access denied for 1.dkr.ecr.eu-west-1.amazonaws.com/app, repository does not exist or may require 'docker login': denied: Your authorization token has expired. Reauthenticate and try again.`,
			want{verdict.LayerAuth, "auth.bad-credentials", verdict.RoleRegistry, "1.dkr.ecr.eu-west-1.amazonaws.com", "1.dkr.ecr.eu-west-1.amazonaws.com/app"}},
		{"401 naming the repository scope", `Error reading manifest 1 in r.example/team/app: unauthorized: unauthorized to access repository: team/app, action: pull`,
			want{verdict.LayerAuthz, "authz.denied", verdict.RoleRegistry, "r.example", "r.example/team/app:1"}},
		{"engine status wrapper is not the registry's", `(HTTP code 500) server error - Head "https://r.example/v2/app/manifests/1": denied: access forbidden`,
			want{verdict.LayerAuthz, "authz.denied", verdict.RoleRegistry, "r.example", ""}},
		{"old engine API error wrapper", `API error (500): Get https://r.example/v2/: dial tcp: lookup r.example on 10.0.0.10:53: no such host`,
			want{verdict.LayerDNS, "dns.nxdomain", verdict.RoleRegistry, "r.example", ""}},
		{"bare status after an unquoted URL", `Get https://r.example/v2/: Forbidden`,
			want{verdict.LayerRoute, "route.proxy", verdict.RoleProxy, "", ""}},
		{"host cut out of the URL", `Get "https://.r.example/v2/": denied: client with IP '10.0.0.5' is not allowed access`,
			want{verdict.LayerAuthz, "authz.ip-denied", verdict.RoleRegistry, "", ""}},
		{"podman token fetch names the token service", `Error determining manifest MIME type for docker://r.example/app:1: unable to retrieve auth token: invalid username/password`,
			want{verdict.LayerAuth, "auth.bad-credentials", verdict.RoleAuth, "", ""}},
	})
}

func TestDropEngineStatus(t *testing.T) {
	tests := []struct{ in, want string }{
		{"(HTTP code 500) server error - Get https://r/v2/: EOF", "Get https://r/v2/: EOF"},
		{`Error ((HTTP code 500) server error - Head "https://r/v2/": denied)`, `Error (Head "https://r/v2/": denied)`},
		{"API error (500): Get https://r/v2/: no basic auth credentials", "Get https://r/v2/: no basic auth credentials"},
		{"unexpected status: 500 Internal Server Error", "unexpected status: 500 Internal Server Error"},
		{"(HTTP code 5", "(HTTP code 5"},
	}
	for _, tt := range tests {
		s, l := dropEngineStatus(tt.in, lowerASCII(tt.in))
		if s != tt.want || l != lowerASCII(tt.want) {
			t.Errorf("dropEngineStatus(%q) = %q, %q, want %q", tt.in, s, l, tt.want)
		}
	}
}
