package explain

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pullpath/pullpath/internal/verdict"
)

// TestNodeAndPolicyShapes covers the shapes added with the 2026-12-01
// corpus batch: node failures that are not network, engine wordings, short
// messages and unusual proxy answers. Each row is a shape, written with
// placeholder names, not a copied message; rows marked "not" pin what the
// rule must leave alone.
func TestNodeAndPolicyShapes(t *testing.T) {
	checkShapes(t, []shapeCase{
		// The kubelet's own pull limit is the node's, not the registry's.
		{"kubelet pull QPS", `Failed to pull image "r.example/app:1": pull QPS exceeded`,
			want{verdict.LayerRuntime, "runtime.throttled", verdict.RoleNone, "", "r.example/app:1"}},
		{"registry rate limit stays the registry's", `Failed to pull image "r.example/app:1": rpc error: code = Unknown desc = failed to pull and unpack image "r.example/app:1": failed to resolve reference "r.example/app:1": unexpected status from HEAD request to https://r.example/v2/app/manifests/1: 429 Too Many Requests`,
			want{verdict.LayerRegistry, "registry.ratelimit", verdict.RoleRegistry, "r.example", "r.example/app:1"}},
		// Cancelled pulls name no step; the no-progress watchdog cancels a download.
		{"bare context canceled", `context canceled`,
			want{verdict.LayerUnknown, "unknown.canceled", verdict.RoleNone, "", ""}},
		{"no-progress watchdog", `level=error msg="cancel pulling image r.example/app:1 because of no progress in 1m0s"`,
			want{verdict.LayerTransfer, "transfer.no-progress", verdict.RoleBlob, "", ""}},
		// Windows layer import and Docker's platform warning.
		{"hcsshim layer import", `failed to extract layer sha256:ab: hcsshim::ImportLayer failed in Win32: Access is denied. (0x5): unknown`,
			want{verdict.LayerRuntime, "runtime.unpack", verdict.RoleNone, "", ""}},
		{"hcsshim base layer on the windows snapshotter path", `hcsshim::ProcessBaseLayer \\?\C:\ProgramData\containerd\root\io.containerd.snapshotter.v1.windows\snapshots\7: Access is denied.: unknown`,
			want{verdict.LayerRuntime, "runtime.unpack", verdict.RoleNone, "", ""}},
		{"docker platform warning", `WARNING: The requested image's platform (linux/arm64) does not match the detected host platform (linux/amd64) and no specific platform was requested`,
			want{verdict.LayerManifest, "manifest.platform", verdict.RoleNone, "", ""}},
		{"docker 1.x connect timeout", `Network timed out while trying to connect to https://r.example/v1/repositories/app/images. You may want to check your internet connection or if you are behind a proxy.`,
			want{verdict.LayerRoute, "route.timeout", verdict.RoleRegistry, "r.example", ""}},
		// Blob and content answers.
		{"docker's unknown blob", `docker: unknown blob.`,
			want{verdict.LayerTransfer, "transfer.status", verdict.RoleBlob, "", ""}},
		{"HTML where JSON was expected", `Error response from daemon: error unmarshalling content: invalid character '<' looking for beginning of value`,
			want{verdict.LayerRegistry, "registry.protocol", verdict.RoleNone, "", ""}},
		{"HTML error body keeps its status", `Error response from daemon: error parsing HTTP 403 response body: invalid character '<' looking for beginning of value: "<html>"`,
			want{verdict.LayerAuthz, "authz.denied", verdict.RoleNone, "", ""}},
		// A cut connection while resolving is no download.
		{"unexpected EOF while resolving", `failed to pull and unpack image "r.example/app:1": failed to resolve reference "r.example/app:1": unexpected EOF`,
			want{verdict.LayerRoute, "route.reset", verdict.RoleRegistry, "r.example", "r.example/app:1"}},
		{"not: unexpected EOF in a download", `Error pulling image (1) from r.example/app, unexpected EOF`,
			want{verdict.LayerTransfer, "transfer.reset", verdict.RoleBlob, "", ""}},
		// Docker 1.x v1 wordings.
		{"v1 image not found is denied or missing", `Pulling repository r.example/team/app
Error: image team/app:1 not found`,
			want{verdict.LayerAuthz, "authz.denied-or-missing", verdict.RoleRegistry, "r.example", "r.example/team/app"}},
		{"v1 repository without registry names no host", `Error: Status 403 trying to pull repository team/app: ""`,
			want{verdict.LayerAuthz, "authz.denied", verdict.RoleNone, "", ""}},
		{"v1 repository with registry names it", `Trying to pull repository r.example:5000/team/app ... not found`,
			want{verdict.LayerManifest, "manifest.unknown", verdict.RoleRegistry, "r.example", "r.example:5000/team/app"}},
		// Where the image is named.
		{"schema 1 notice names the image", `[DEPRECATION NOTICE] Docker Image Format v1 and Docker Image manifest version 2, schema 1 support is disabled by default and will be removed in an upcoming release. Suggest the author of r.example/team/app:1 to upgrade the image to the OCI Format or Docker Image manifest v2, schema 2.`,
			want{verdict.LayerManifest, "manifest.invalid", verdict.RoleRegistry, "r.example", "r.example/team/app:1"}},
		{"engine API URL names the image", `500 Server Error: Internal Server Error for url: http+docker://localhost/v1.45/images/create?tag=1&fromImage=r.example%3A8193%2Fteam%2Fapp: Internal Server Error ("received unexpected HTTP status: 503 Service Unavailable")`,
			want{verdict.LayerRegistry, "registry.unavailable", verdict.RoleRegistry, "r.example", "r.example:8193/team/app"}},
		{"leading reference with a domain", `r.example/team/app: toomanyrequests: slow down`,
			want{verdict.LayerRegistry, "registry.ratelimit", verdict.RoleRegistry, "r.example", "r.example/team/app"}},
		{"not: leading short name", `app:1: failed to authorize: failed to fetch anonymous token: unexpected status: 401`,
			want{verdict.LayerAuth, "auth.no-credentials", verdict.RoleAuth, "", ""}},
		{"not: an archive file is no image", `writing image "app.tar": unsupported status code 404; body: 404 page not found`,
			want{verdict.LayerManifest, "manifest.unknown", verdict.RoleNone, "", ""}},
		// containerd names the mirror it pulled from.
		{"pulling from a mirror address", `failed to resolve reference "r.example/app:1": pulling from host 10.0.0.9:5000 failed with status code [manifests 1]: 503 Service Unavailable`,
			want{verdict.LayerRegistry, "registry.unavailable", verdict.RoleMirror, "10.0.0.9", "r.example/app:1"}},
		{"not: pulling from the image's own registry", `failed to resolve reference "r.example/app:1": pulling from host r.example failed with status code [manifests 1]: 503 Service Unavailable`,
			want{verdict.LayerRegistry, "registry.unavailable", verdict.RoleRegistry, "r.example", "r.example/app:1"}},
		// containers/image names every endpoint it tried: the mirrors in
		// order, then the primary (docker/docker_image_src.go). The verdict
		// is the first one's, the mirror's "unknown".
		{"mirror unknown and hub denied", `initializing source docker://app:1: (Mirrors also failed: [mirror.example/library/app:1: manifest unknown]): docker.io/library/app:1: requested access to the resource is denied`,
			want{verdict.LayerManifest, "manifest.unknown", verdict.RoleMirror, "mirror.example", "app:1"}},
		// Structured kubelet lines.
		{"klog key values after a bare back-off", `"Error syncing pod, skipping" err="failed to \"StartContainer\" for \"app\" with ImagePullBackOff: \"Back-off pulling image \\\"r.example/app:1\\\"\"" pod="ns/app-1" podUID=0b1c`,
			want{verdict.LayerUnknown, "unknown.backoff", verdict.RoleNone, "", "r.example/app:1"}},
		// Downloads: the storage URL, read timeouts and deadlines in a download.
		{"storage URL in a download is the blob host", `failed to copy: httpReadSeeker: failed open: failed to do request: Get "https://cdn.example/x/data": net/http: TLS handshake timeout`,
			want{verdict.LayerTLS, "tls.timeout", verdict.RoleBlob, "cdn.example", ""}},
		{"not: a registry API URL keeps its role", `failed to copy: httpReadSeeker: failed open: failed to do request: Get "https://r.example/v2/a/manifests/1": net/http: TLS handshake timeout`,
			want{verdict.LayerTLS, "tls.timeout", verdict.RoleRegistry, "r.example", ""}},
		{"read timeout in a download", `failed to copy: read tcp 10.0.0.1:1->10.9.9.9:443: read: connection timed out`,
			want{verdict.LayerTransfer, "transfer.timeout", verdict.RoleBlob, "10.9.9.9", ""}},
		{"deadline in a named download", `failed to pull and unpack image "r.example/a:1": failed to copy: httpReadSeeker: failed open: failed to do request: Get "https://r.example/v2/a/blobs/sha256:ab": context deadline exceeded`,
			want{verdict.LayerTransfer, "transfer.timeout", verdict.RoleBlob, "r.example", "r.example/a:1"}},
		{"not: a bare deadline", `rpc error: code = DeadlineExceeded desc = context deadline exceeded`,
			want{verdict.LayerUnknown, "unknown.kubelet-deadline", verdict.RoleNone, "", ""}},
		{"docker's pulling blob", `pulling blob "sha256:ab": received unexpected HTTP status: 502 Bad Gateway`,
			want{verdict.LayerRegistry, "registry.unavailable", verdict.RoleBlob, "", ""}},
		// Node configuration: no search registries, no nameserver.
		{"unqualified name with no search registries", `rpc error: code = Unknown desc = no registries configured while trying to pull an unqualified image`,
			want{verdict.LayerConfig, "config.reference", verdict.RoleNone, "", ""}},
		{"no nameserver to ask", `Get https://r.example/v2/: dial tcp: lookup r.example: no DNS servers`,
			want{verdict.LayerConfig, "config.resolv-conf", verdict.RoleNone, "", ""}},
		{"not: a nameserver that fails", `Get https://r.example/v2/: dial tcp: lookup r.example on 10.0.0.10:53: server misbehaving`,
			want{verdict.LayerDNS, "dns.servfail", verdict.RoleRegistry, "r.example", ""}},
		// A proxy's reason phrase after the URL.
		{"proxy reason phrase", `Get https://r.example/v2/: AuthorizedOnly`,
			want{verdict.LayerRoute, "route.proxy", verdict.RoleProxy, "", ""}},
		{"proxy reason phrase of two words", `Head "https://r.example/v2/app/manifests/1": Blocked By Policy`,
			want{verdict.LayerRoute, "route.proxy", verdict.RoleProxy, "", ""}},
		{"not: bare EOF after the URL", `Get https://r.example/v2/: EOF`,
			want{verdict.LayerRoute, "route.reset", verdict.RoleRegistry, "r.example", ""}},
		{"not: a registry error code after the URL", `Head "https://r.example/v2/app/manifests/1": denied`,
			want{verdict.LayerAuthz, "authz.denied", verdict.RoleRegistry, "r.example", ""}},
	})
}

// shapeCase is one row of a shape table: a message and the verdict parts
// Classify must give it.
type shapeCase struct {
	name string
	msg  string
	want want
}

// checkShapes runs a shape table, one subtest per row.
func checkShapes(t *testing.T, tests []shapeCase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, got(Classify(tt.msg))); diff != "" {
				t.Errorf("Classify(%q) mismatch (-want +got):\n%s", tt.msg, diff)
			}
		})
	}
}

func TestProxyReasonAfterURL(t *testing.T) {
	tests := []struct {
		msg  string
		want bool
	}{
		{`Get https://r.example/v2/: AuthorizedOnly`, true},
		{`Get "https://r.example/v2/": Forbidden`, true},
		{`Get https: /r.example/v1/repositories/app/images: AuthorizedOnly`, true},
		{`Get https://r.example/v2/: EOF`, false},
		{`Get https://r.example/v2/: unauthorized: authentication required`, false},
		{`Get "https://r.example/v2/": net/http: TLS handshake timeout`, false},
		{`Get "https://r.example/v2/": dial tcp 10.0.0.1:443: i/o timeout`, false},
		{`Head "https://r.example/v2/a/manifests/1": Denied For Six Words Or More`, false},
		{`failed: Forbidden`, false},
	}
	for _, tt := range tests {
		if got := proxyReasonAfterURL(tt.msg); got != tt.want {
			t.Errorf("proxyReasonAfterURL(%q) = %v, want %v", tt.msg, got, tt.want)
		}
	}
}

func TestCutKlogTail(t *testing.T) {
	tests := []struct{ in, want string }{
		{`"" pod="ns/app" podUID=1`, `""`},
		{`"x" image="r.example/app:1"`, `"x"`},
		{`no key values`, `no key values`},
	}
	for _, tt := range tests {
		if got := cutKlogTail(tt.in); got != tt.want {
			t.Errorf("cutKlogTail(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSplitAggregateKeepsOffsets(t *testing.T) {
	d := ` [rpc error: code = NotFound desc = A: not found, rpc error: code = Unknown desc = B: 401 Unauthorized] `
	parts, lower := splitAggregate(d, lowerASCII(d))
	want := []string{"rpc error: code = NotFound desc = A: not found", "rpc error: code = Unknown desc = B: 401 Unauthorized"}
	if diff := cmp.Diff(want, parts); diff != "" {
		t.Fatalf("splitAggregate parts mismatch (-want +got):\n%s", diff)
	}
	for i := range parts {
		if lower[i] != lowerASCII(parts[i]) {
			t.Errorf("part %d: lower %q is not the lowercase of %q", i, lower[i], parts[i])
		}
	}
	if p, l := splitAggregate("Plain Error", "plain error"); p != nil || l != nil {
		t.Errorf("splitAggregate of a plain error = %q, %q, want nil (its own single part)", p, l)
	}
}

// TestHonestAmbiguity checks that texts which cannot tell two causes apart
// say so: the verdict, and the other reading in Ambiguous.
func TestHonestAmbiguity(t *testing.T) {
	tests := []struct {
		msg, cause, other string
	}{
		{`Get "https://r.example/v2/": net/http: request canceled while waiting for connection (Client.Timeout exceeded while awaiting headers)`, "route.timeout", "registry.no-answer"},
		{`failed to do request: Head "https://r.example/v2/a/manifests/1": dial tcp: i/o timeout`, "route.timeout", "dns.timeout"},
		{`Failed to pull image "r.example/a:1": rpc error: code = Unknown desc = context canceled`, "unknown.canceled", "transfer.no-progress"},
		{`Get "https://r.example/v2/": EOF`, "route.reset", "registry.unavailable"},
		{`Error response from daemon: pull access denied for r.example/a, repository does not exist or may require 'docker login'`, "authz.denied-or-missing", "manifest.name-unknown"},
	}
	for _, tt := range tests {
		r := Classify(tt.msg)
		if r.Verdict.Cause != tt.cause {
			t.Errorf("Classify(%q).Cause = %q, want %q", tt.msg, r.Verdict.Cause, tt.cause)
			continue
		}
		found := false
		for _, a := range r.Ambiguous {
			if strings.HasPrefix(a, tt.other+":") {
				found = true
			}
		}
		if !found {
			t.Errorf("Classify(%q).Ambiguous = %q, want a %s reading", tt.msg, r.Ambiguous, tt.other)
		}
	}
}

// TestIssue27Shapes checks the families that issue's measurement found
// misread, on shapes from the runtimes' sources (containerd, CRI-O,
// containers/image, Go's net/http, the kubelet): who cancelled, stalls
// after the connection, the sandbox image's pull, the content store and
// the bare platform and policy lines.
func TestIssue27Shapes(t *testing.T) {
	tests := []struct {
		name, msg string
		w         want
		sandbox   bool
	}{
		// Cancellations and deadlines: the canceller when the text names it.
		{"containerd's watchdog, in the kubelet's event", `Failed to pull image "r.example/a:1": rpc error: code = Canceled desc = failed to pull and unpack image "r.example/a:1": context canceled`,
			want{verdict.LayerTransfer, "transfer.no-progress", verdict.RoleBlob, "", "r.example/a:1"}, false},
		{"the kubelet cancelled its call", `Failed to pull image "r.example/a:1": rpc error: code = Canceled desc = context canceled`,
			want{verdict.LayerUnknown, "unknown.canceled", verdict.RoleNone, "", "r.example/a:1"}, false},
		{"the kubelet's deadline", `Failed to pull image "r.example/a:1": rpc error: code = DeadlineExceeded desc = context deadline exceeded`,
			want{verdict.LayerUnknown, "unknown.kubelet-deadline", verdict.RoleNone, "", "r.example/a:1"}, false},
		{"not: a deadline with the runtime's step", `Failed to pull image "r.example/a:1": rpc error: code = DeadlineExceeded desc = failed to pull and unpack image "r.example/a:1": failed to resolve reference "r.example/a:1": failed to do request: Head "https://r.example/v2/a/manifests/1": dial tcp 10.0.0.9:443: i/o timeout`,
			want{verdict.LayerRoute, "route.timeout", verdict.RoleRegistry, "r.example", "r.example/a:1"}, false},
		{"connected, no headers", `Error response from daemon: Get https://r.example/v2/: net/http: request canceled (Client.Timeout exceeded while awaiting headers)`,
			want{verdict.LayerRegistry, "registry.no-answer", verdict.RoleRegistry, "r.example", ""}, false},
		{"connected, response header timeout", `failed to do request: Head "https://r.example/v2/a/manifests/1": net/http: timeout awaiting response headers`,
			want{verdict.LayerRegistry, "registry.no-answer", verdict.RoleRegistry, "r.example", ""}, false},
		{"not: waiting for the connection", `Error response from daemon: Get https://r.example/v2/: net/http: request canceled while waiting for connection (Client.Timeout exceeded while awaiting headers)`,
			want{verdict.LayerRoute, "route.timeout", verdict.RoleRegistry, "r.example", ""}, false},
		// Stalls after the connection: transfer at the named host.
		{"read timeout in a layer download", `failed to pull and unpack image "r.example/a:1": failed to copy: read tcp 10.0.0.5:51234->52.1.2.3:443: read: connection timed out`,
			want{verdict.LayerTransfer, "transfer.timeout", verdict.RoleBlob, "52.1.2.3", "r.example/a:1"}, false},
		{"i/o timeout reading a blob URL", `failed to copy: httpReadSeeker: failed open: failed to do request: Get "https://cdn.example/blobs/ab?sig=x": read tcp 10.0.0.5:51234->52.1.2.3:443: i/o timeout`,
			want{verdict.LayerTransfer, "transfer.timeout", verdict.RoleBlob, "cdn.example", ""}, false},
		{"read timeout on the registry API", `Error response from daemon: Get "https://r.example/v2/": read tcp 10.0.0.5:51234->52.1.2.3:443: i/o timeout`,
			want{verdict.LayerRegistry, "registry.no-answer", verdict.RoleRegistry, "r.example", ""}, false},
		{"not: a connect timeout", `failed to do request: Head "https://r.example/v2/a/manifests/1": dial tcp 52.1.2.3:443: i/o timeout`,
			want{verdict.LayerRoute, "route.timeout", verdict.RoleRegistry, "r.example", ""}, false},
		// The sandbox image's pull.
		{"containerd sandbox image", `Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox image "mcr.example/oss/kubernetes/pause:3.6": failed to pull image "mcr.example/oss/kubernetes/pause:3.6": failed to pull and unpack image "mcr.example/oss/kubernetes/pause:3.6": failed to resolve reference "mcr.example/oss/kubernetes/pause:3.6": failed to do request: Head "https://mcr.example/v2/oss/kubernetes/pause/manifests/3.6": dial tcp 10.1.1.1:443: connect: connection refused`,
			want{verdict.LayerRoute, "route.refused", verdict.RoleRegistry, "mcr.example", "mcr.example/oss/kubernetes/pause:3.6"}, true},
		{"dockershim sandbox image", `Failed create pod sandbox: rpc error: code = Unknown desc = failed pulling image "private.example/pause:3.2": Error response from daemon: Get https://private.example/v2/: x509: certificate signed by unknown authority`,
			want{verdict.LayerTLS, "tls.untrusted", verdict.RoleRegistry, "private.example", "private.example/pause:3.2"}, true},
		{"CRI-O pause image", `Failed to create pod sandbox: rpc error: code = Unknown desc = error creating pod sandbox with name "k8s_a": initializing source docker://registry.example/pause:3.9: reading manifest 3.9 in registry.example/pause: manifest unknown`,
			want{verdict.LayerManifest, "manifest.unknown", verdict.RoleRegistry, "registry.example", "registry.example/pause:3.9"}, true},
		{"not: a container's pull", `Failed to pull image "r.example/a:1": rpc error: code = Unknown desc = failed to pull and unpack image "r.example/a:1": failed to resolve reference "r.example/a:1": r.example/a:1: not found`,
			want{verdict.LayerManifest, "manifest.unknown", verdict.RoleRegistry, "r.example", "r.example/a:1"}, false},
		// The node's content store.
		{"resume write", `failed to pull and unpack image "r.example/a:1": failed reading status of resume write: stat /var/lib/containerd/io.containerd.content.v1.content/ingest/ab/data: no such file or directory: not found`,
			want{verdict.LayerRuntime, "runtime.content-store", verdict.RoleNone, "", "r.example/a:1"}, false},
		{"locked ref", `failed to pull and unpack image "r.example/a:1": failed to copy: ref k8s.io/1/layer-sha256:ab locked: unavailable`,
			want{verdict.LayerRuntime, "runtime.content-store", verdict.RoleNone, "", "r.example/a:1"}, false},
		{"not: a commit digest mismatch", `failed to pull and unpack image "r.example/a:1": failed commit on ref "layer-sha256:ab": unexpected commit digest sha256:cd, expected sha256:ab: failed precondition`,
			want{verdict.LayerTransfer, "transfer.digest", verdict.RoleBlob, "", "r.example/a:1"}, false},
		{"storing a blob on a full disk", `writing blob: storing blob to file "/var/tmp/storage1/1": write /var/tmp/storage1/1: no space left on device`,
			want{verdict.LayerRuntime, "runtime.disk", verdict.RoleNone, "", ""}, false},
		// Bare platform and policy lines.
		{"bare platform line", `no supported platform found in manifest list`,
			want{verdict.LayerManifest, "manifest.platform", verdict.RoleNone, "", ""}, false},
		{"bare never-pull line", `Container image "r.example/a:1" is not present with pull policy of Never`,
			want{verdict.LayerConfig, "config.never-pull", verdict.RoleNone, "", "r.example/a:1"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Classify(tt.msg)
			got := want{r.Verdict.Layer, r.Verdict.Cause, r.Verdict.Role, r.Host, r.Image}
			if diff := cmp.Diff(tt.w, got); diff != "" {
				t.Errorf("Classify(%q) mismatch (-want +got):\n%s", tt.msg, diff)
			}
			if r.Sandbox != tt.sandbox {
				t.Errorf("Classify(%q).Sandbox = %v, want %v", tt.msg, r.Sandbox, tt.sandbox)
			}
			if d, ok := verdict.Lookup(r.Verdict.Cause); !ok || len(d.Next) == 0 || verdict.OwnerOf(r.Verdict.Cause) == verdict.OwnerNone {
				t.Errorf("cause %q has no catalogue entry with next steps and an owner", r.Verdict.Cause)
			}
		})
	}
}

// TestMirrorsEndpoints checks that a containers/image text naming every
// endpoint it tried gives each endpoint with its own failure and role, in
// plan order, and the verdict of the first.
func TestMirrorsEndpoints(t *testing.T) {
	msg := `rpc error: code = Unknown desc = initializing source docker://r.example/team/app:1: (Mirrors also failed: [mirror-a.example/team/app:1: pinging container registry mirror-a.example: Get "https://mirror-a.example/v2/": dial tcp 10.0.0.1:443: connect: connection refused]
[mirror-b.example:5000/team/app:1: reading manifest 1 in mirror-b.example:5000/team/app: manifest unknown]): r.example/team/app:1: reading manifest 1 in r.example/team/app: denied: requested access to the resource is denied`
	r := Classify(msg)
	want := []Endpoint{
		{Host: "mirror-a.example", Endpoint: "mirror-a.example:443", Role: verdict.RoleMirror, Layer: verdict.LayerRoute, Cause: "route.refused"},
		{Host: "mirror-b.example", Endpoint: "mirror-b.example:5000", Role: verdict.RoleMirror, Layer: verdict.LayerManifest, Cause: "manifest.unknown"},
		{Host: "r.example", Endpoint: "r.example:443", Role: verdict.RoleRegistry, Layer: verdict.LayerAuthz, Cause: "authz.denied"},
	}
	got := make([]Endpoint, len(r.Endpoints))
	for i, e := range r.Endpoints {
		if e.Evidence == "" {
			t.Errorf("endpoint %d has no evidence", i)
		}
		e.Evidence = ""
		got[i] = e
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Endpoints mismatch (-want +got):\n%s", diff)
	}
	if r.Verdict.Cause != "route.refused" || r.Verdict.Role != verdict.RoleMirror || r.Verdict.Endpoint != "mirror-a.example:443" {
		t.Errorf("verdict = %s %s %s, want the first endpoint's route.refused at the mirror mirror-a.example:443", r.Verdict.Cause, r.Verdict.Role, r.Verdict.Endpoint)
	}
	if len(r.Ambiguous) != 2 || !strings.HasPrefix(r.Ambiguous[0], "manifest.unknown: the runtime also tried the mirror mirror-b.example:5000") ||
		!strings.HasPrefix(r.Ambiguous[1], "authz.denied: the runtime also tried the registry API host r.example:443") {
		t.Errorf("Ambiguous = %q, want the other endpoints' failures", r.Ambiguous)
	}
	if r.Image != "r.example/team/app:1" {
		t.Errorf("Image = %q", r.Image)
	}
	// One endpoint only: no list.
	if r := Classify(`failed to do request: Head "https://r.example/v2/a/manifests/1": dial tcp 10.0.0.9:443: i/o timeout`); r.Endpoints != nil {
		t.Errorf("a one-endpoint text lists endpoints %v", r.Endpoints)
	}
	// A truncated list (no primary) still reads every mirror.
	if r := Classify(`initializing source docker://a:1: (Mirrors also failed: [m.example/library/a:1: manifest unknown]`); len(r.Endpoints) != 1 || r.Verdict.Cause != "manifest.unknown" {
		t.Errorf("truncated list: endpoints %v cause %q", r.Endpoints, r.Verdict.Cause)
	}
}
