package explain

import (
	"strings"
	"testing"
)

// TestPredicates tests every cause predicate of causes.go on its own: each
// must hold for the texts it is named after and not for a near miss (a
// text of another cause that shares words with it). Texts are given as the
// runtimes print them; the test lowercases them as Classify does.
func TestPredicates(t *testing.T) {
	lookup := func(l string) int { return strings.LastIndex(l, "lookup ") }
	tests := []struct {
		name string
		pred func(t *txt) bool
		yes  []string
		no   []string
	}{
		{"isNeverPull", isNeverPull,
			[]string{`Container image "r/a:1" is not present with pull policy of Never`, `Error: ErrImageNeverPull`},
			[]string{`Back-off pulling image "r/a:1"`}},
		{"isBadReference", isBadReference,
			[]string{`couldn't parse image reference "R/A": invalid reference format: repository name must be lowercase`, `short-name resolution enforced but cannot prompt without a TTY`},
			[]string{`r.example/a:1: not found`}},
		{"isPolicy", isPolicy,
			[]string{`Source image rejected: A signature was required, but no signature exists`},
			[]string{`x509: certificate signature verification failed`, `SignatureDoesNotMatch: x-amz-signature mismatch`}},
		{"isCredentialConfig", isCredentialConfig,
			[]string{`error getting credentials - err: exit status 1, out: docker-credential-ecr-login`, `failed to decode registry auth: illegal base64 data at input byte 4`},
			[]string{`no basic auth credentials`}},
		{"isHostsConfig", isHostsConfig,
			[]string{`failed to load hosts.toml: toml: line 3: expected '.' or '='`, `error loading registries configuration "/etc/containers/registries.conf"`},
			[]string{`reading /etc/containerd/certs.d/r/hosts.toml`}},
		{"isCAFile", isCAFile,
			[]string{`failed to load CA file /etc/containerd/certs.d/r/ca.crt`, `tls: failed to find any PEM data in certificate input`},
			[]string{`x509: certificate signed by unknown authority`}},
		{"isDiskFull", isDiskFull,
			[]string{`write /var/lib/containerd/tmpmounts/x: no space left on device`, `disk quota exceeded`},
			[]string{`write /var/lib/containerd/x: read-only file system`}},
		{"isRuntimeSocket", isRuntimeSocket,
			[]string{`dial unix /run/containerd/containerd.sock: connect: no such file or directory`, `Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?`},
			[]string{`dial tcp 10.0.0.1:443: connect: connection refused`}},
		{"isSnapshotter", isSnapshotter,
			[]string{`failed to prepare extraction snapshot "extract-1": failed to mount`, `snapshotter not loaded: overlayfs`},
			[]string{`failed to extract layer sha256:ab`}},
		{"isUnpack", isUnpack,
			[]string{`failed to extract layer sha256:ab: archive/tar: invalid tar header: unknown`, `hcsshim::ImportLayer failed in Win32`},
			[]string{`failed to copy: short read`}},
		{"isDigest", isDigest,
			[]string{`failed commit on ref "layer-sha256:ab": unexpected commit digest sha256:cd, expected sha256:ab`, `digest mismatch`},
			[]string{`failed commit on ref "layer-sha256:ab": failed size validation`}},
		{"isSize", isSize,
			[]string{`"layer-sha256:ab" failed size validation: 131237591 != 214923389`, `short read: expected 100 bytes but got 7: unexpected EOF`},
			[]string{`unexpected commit digest sha256:cd`}},
		{"isRedirectLoop", isRedirectLoop,
			[]string{`Get "https://r/v2/a/blobs/sha256:ab": stopped after 10 redirects`},
			[]string{`Get "https://r/v2/": EOF`}},
		{"isProxy", isProxy,
			[]string{`proxyconnect tcp: dial tcp 10.0.0.9:3128: connect: connection refused`, `407 Proxy Authentication Required`},
			[]string{`dial tcp 10.0.0.9:443: connect: connection refused`}},
		{"isTLSName", isTLSName,
			[]string{`x509: certificate is valid for a.example, not r.example`, `x509: cannot validate certificate for 10.0.0.1 because it doesn't contain any IP SANs`},
			[]string{`x509: certificate signed by unknown authority`}},
		{"isTLSExpired", isTLSExpired,
			[]string{`x509: certificate has expired or is not yet valid: current time 2026-01-01T00:00:00Z is after 2025-01-01T00:00:00Z`},
			[]string{`x509: certificate is valid for a.example, not r.example`}},
		{"isTLSUntrusted", isTLSUntrusted,
			[]string{`tls: failed to verify certificate: x509: certificate signed by unknown authority`, `SSL certificate problem: self-signed certificate in certificate chain`},
			[]string{`x509: certificate has expired or is not yet valid`}},
		{"isPlainHTTP", isPlainHTTP,
			[]string{`http: server gave HTTP response to HTTPS client`, `tls: first record does not look like a TLS handshake`},
			[]string{`remote error: tls: handshake failure`}},
		{"isTLSTimeout", isTLSTimeout,
			[]string{`net/http: TLS handshake timeout`},
			[]string{`dial tcp 10.0.0.1:443: i/o timeout`}},
		{"isTLSOther", isTLSOther,
			[]string{`remote error: tls: handshake failure`, `tls: protocol version not supported`},
			[]string{`dial tcp 10.0.0.1:443: connect: connection refused`}},
		{"isNXDomain", isNXDomain,
			[]string{`dial tcp: lookup r.example on 10.0.0.10:53: no such host`, `getaddrinfo ENOTFOUND r.example`},
			[]string{`dial tcp: lookup r.example on 10.0.0.10:53: server misbehaving`}},
		{"isNoAddress", isNoAddress,
			[]string{`lookup r.example: no address associated with hostname`},
			[]string{`lookup r.example: no such host`}},
		{"isServfail", isServfail,
			[]string{`dial tcp: lookup r.example on 10.0.0.10:53: server misbehaving`},
			[]string{`dial tcp: lookup r.example on 10.0.0.10:53: no such host`}},
		{"isDNSTimeout", func(t *txt) bool { return isDNSTimeout(t, lookup(t.l)) },
			[]string{`dial tcp: lookup r.example on 10.0.0.10:53: read udp 10.0.0.5:4000->10.0.0.10:53: i/o timeout`, `dial tcp: lookup r.example: Temporary failure in name resolution`},
			[]string{`dial tcp 10.0.0.1:443: i/o timeout`}},
		{"isDNSUnreachable", func(t *txt) bool { return isDNSUnreachable(t, lookup(t.l)) },
			[]string{`dial tcp: lookup r.example on 10.0.0.10:53: dial udp 10.0.0.10:53: connect: network is unreachable`, `lookup ghcr.io on [::1]:53: read udp [::1]:49751->[::1]:53: read: connection refused`},
			[]string{`dial tcp 10.0.0.1:443: connect: connection refused`}},
		{"isDNSBusy", func(t *txt) bool { return isDNSBusy(t, lookup(t.l)) },
			[]string{`dial tcp: lookup k8s.gcr.io: device or resource busy`},
			[]string{`open /etc/resolv.conf: too many open files`}},
		{"isRefused", isRefused,
			[]string{`dial tcp 10.0.0.1:443: connect: connection refused`, `No connection could be made because the target machine actively refused it.`},
			[]string{`read tcp 10.0.0.5:1->10.0.0.1:443: read: connection reset by peer`}},
		{"isUnreachable", isUnreachable,
			[]string{`dial tcp 10.0.0.1:443: connect: no route to host`, `connect: network is unreachable`},
			[]string{`dial tcp 10.0.0.1:443: i/o timeout`}},
		{"isConnectTimeout", isConnectTimeout,
			[]string{`dial tcp 10.0.0.1:443: i/o timeout`, `net/http: request canceled while waiting for connection (Client.Timeout exceeded while awaiting headers)`},
			[]string{`read tcp 10.0.0.5:1->10.0.0.1:443: i/o timeout`}},
		{"isReset", isReset,
			[]string{`read tcp 10.0.0.5:1->10.0.0.1:443: read: connection reset by peer`, `Get "https://r.example/v2/": EOF`},
			[]string{`dial tcp 10.0.0.1:443: connect: connection refused`}},
		{"endsWithEOF", endsWithEOF,
			[]string{`Head "https://r.example/v2/a/manifests/1": EOF`, `[Get "https://r/v2/": EOF, rpc error: code = Unknown desc = x]`},
			[]string{`unexpected EOF reading the EOFError file`}},
		{"isReadTimeout", isReadTimeout,
			[]string{`read tcp 10.0.0.5:1->52.1.2.3:443: i/o timeout`, `net/http: request canceled (Client.Timeout exceeded while reading body)`},
			[]string{`dial tcp 52.1.2.3:443: i/o timeout`}},
		{"isIPDenied", isIPDenied,
			[]string{`client with IP '1.2.3.4' is not allowed access. Refer https://aka.ms/acr/firewall to grant access.`},
			[]string{`denied: requested access to the resource is denied`}},
		{"isRateLimit", func(t *txt) bool { return isRateLimit(t, httpStatus(t.l)) },
			[]string{`toomanyrequests: You have reached your pull rate limit.`, `unexpected status from GET request to https://r/v2/: 429 Too Many Requests`},
			[]string{`unexpected status: 403 Forbidden`}},
		{"isDeniedOrMissing", isDeniedOrMissing,
			[]string{`pull access denied for a, repository does not exist or may require 'docker login'`, `errors: denied: requested access to the resource is denied unauthorized: authentication required`},
			[]string{`denied: requested access to the resource is denied`}},
		{"isPlatform", isPlatform,
			[]string{`no match for platform in manifest: not found`, `no supported platform found in manifest list`, `no matching manifest for linux/arm64/v8 in the manifest list entries`},
			[]string{`manifest unknown: manifest unknown`}},
		{"isManifestInvalid", isManifestInvalid,
			[]string{`unsupported manifest media type and no default available: application/vnd.x`, `MANIFEST_INVALID: manifest invalid`},
			[]string{`manifest unknown`}},
		{"isNameUnknown", isNameUnknown,
			[]string{`name unknown: repository name not known to registry`, `NAME_UNKNOWN: repository not found`},
			[]string{`manifest unknown: manifest tagged by "1" is not found`}},
		{"isManifestUnknown", isManifestUnknown,
			[]string{`reading manifest 1 in r.example/a: manifest unknown`, `manifest for a:1 not found: manifest unknown`},
			[]string{`name unknown: repository name not known to registry`}},
		{"manifestForNotFound", manifestForNotFound,
			[]string{`Error response from daemon: manifest for r.example/a:1 not found`},
			[]string{`manifest for r.example/a:1 is invalid`}},
		{"endsNotFound", endsNotFound,
			[]string{`failed to resolve reference "r.example/a:1": r.example/a:1: not found`, `rpc error: code = NotFound desc = failed to pull and unpack image`},
			[]string{`not found a thing, kept going: EOF`}},
		{"isBlobUnknown", isBlobUnknown,
			[]string{`blob unknown: blob unknown to registry`, `<Code>NoSuchKey</Code>`},
			[]string{`manifest unknown`}},
		{"isStorageDenied", isStorageDenied,
			[]string{`<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>`, `AuthorizationPermissionMismatch`},
			[]string{`denied: requested access to the resource is denied`}},
		{"isBadCredentials", isBadCredentials,
			[]string{`unauthorized: incorrect username or password`, `failed to fetch oauth token: unexpected status: 401 Unauthorized`},
			[]string{`no basic auth credentials`}},
		{"isNoCredentials", isNoCredentials,
			[]string{`no basic auth credentials`, `failed to fetch anonymous token: unexpected status: 401 Unauthorized`},
			[]string{`unauthorized: incorrect username or password`}},
		{"isUnauthorized", func(t *txt) bool { return isUnauthorized(t, httpStatus(t.l)) },
			[]string{`unexpected status: 401 Unauthorized`, `unauthorized: authentication required`},
			[]string{`unexpected status: 403 Forbidden`}},
		{"isForbidden", func(t *txt) bool { return isForbidden(t, httpStatus(t.l)) },
			[]string{`unexpected status: 403 Forbidden`, `denied: requested access to the resource is denied`},
			[]string{`unexpected status: 401 Unauthorized`}},
		{"isTokenProblem", isTokenProblem,
			[]string{`authorization server did not include a token in the response`, `unable to decode token response: invalid character`},
			[]string{`unexpected status: 401 Unauthorized`}},
		{"isDeadline", isDeadline,
			[]string{`context deadline exceeded`, `rpc error: code = DeadlineExceeded`},
			[]string{`context canceled`}},
		{"isNoResolver", isNoResolver,
			[]string{`dial tcp: lookup r.example: no DNS servers`},
			[]string{`dial tcp: lookup r.example: no such host`}},
		{"isKubeletThrottle", isKubeletThrottle,
			[]string{`Failed to pull image "r/a:1": pull QPS exceeded`},
			[]string{`toomanyrequests: rate limit exceeded`}},
		{"isHTMLAnswer", isHTMLAnswer,
			[]string{`invalid character '<' looking for beginning of value`},
			[]string{`invalid character 'x' in literal true`}},
		{"isCanceled", isCanceled,
			[]string{`context canceled`, `net/http: request canceled`},
			[]string{`context deadline exceeded`}},
		{"isContentStore", isContentStore,
			[]string{`failed reading status of resume write: stat /var/lib/containerd/io.containerd.content.v1.content/ingest/ab/data: no such file or directory: not found`, `ref k8s.io/1/layer-sha256:ab locked: unavailable`},
			[]string{`failed commit on ref "layer-sha256:ab": unexpected commit digest`}},
		{"isNoProgress", isNoProgress,
			[]string{`cancel pulling image r.example/a:1 because of no progress in 5m0s`},
			[]string{`context canceled`}},
		{"isHeaderWait", isHeaderWait,
			[]string{`net/http: request canceled (Client.Timeout exceeded while awaiting headers)`, `net/http: timeout awaiting response headers`},
			[]string{`net/http: request canceled while waiting for connection (Client.Timeout exceeded while awaiting headers)`}},
		{"isRuntimeCanceled", isRuntimeCanceled,
			[]string{`rpc error: code = Canceled desc = failed to pull and unpack image "r.example/a:1": context canceled`},
			[]string{`rpc error: code = Canceled desc = context canceled`, `failed to pull and unpack image "r.example/a:1": failed to extract layer: context canceled while unpacking, then EOF`}},
		{"isKubeletDeadline", isKubeletDeadline,
			[]string{`rpc error: code = DeadlineExceeded desc = context deadline exceeded`, `ErrImagePull: "rpc error: code = 4 desc = context deadline exceeded"`},
			[]string{`rpc error: code = DeadlineExceeded desc = failed to pull and unpack image "r/a:1": dial tcp 10.0.0.1:443: i/o timeout`}},
		{"isV1NotFound", isV1NotFound,
			[]string{`Error: image library/a:1 not found`},
			[]string{`Error: image manifest for a:1 not found`}},
		{"isFilesystem", isFilesystem,
			[]string{`open /var/lib/containerd/x: permission denied`, `input/output error`},
			[]string{`dial tcp 10.0.0.1:443: connect: connection refused`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, s := range tt.yes {
				if !tt.pred(newTxt(lowerASCII(normalize(s)))) {
					t.Errorf("%s(%q) = false, want true", tt.name, s)
				}
			}
			for _, s := range tt.no {
				if tt.pred(newTxt(lowerASCII(normalize(s)))) {
					t.Errorf("%s(%q) = true, want false", tt.name, s)
				}
			}
		})
	}
}

// TestProxyRefusalPredicates covers the two predicates that read the
// original-case text: a bare reason phrase right after a quoted URL is a
// proxy's answer to CONNECT; a registry's lower-case error code is not.
func TestProxyRefusalPredicates(t *testing.T) {
	if !isProxyRefusal(`Head "https://r.example/v2/a/manifests/1": Forbidden`) {
		t.Errorf("isProxyRefusal missed a bare Forbidden after the URL")
	}
	if isProxyRefusal(`Head "https://r.example/v2/a/manifests/1": denied: denied`) {
		t.Errorf("isProxyRefusal read a registry's denied as a proxy")
	}
	if !proxyReasonAfterURL(`Get https://r.example/v2/: AuthorizedOnly`) {
		t.Errorf("proxyReasonAfterURL missed a proxy's own reason phrase")
	}
	if proxyReasonAfterURL(`Get https://r.example/v2/: EOF`) {
		t.Errorf("proxyReasonAfterURL read a bare EOF as a reason phrase")
	}
}
