package explain

import (
	"strings"
)

// This file holds the named predicates that turn the innermost error of a
// chain into a cause code. Each works on a lowercase, whitespace-normalised
// text and uses plain substring tests: no regular expressions, so the cost
// is linear in the text.

// detection is what detectCause finds in one error chain.
type detection struct {
	cause string
	// blobContext is set when the chain says a layer download was running
	// (httpReadSeeker, failed to copy, pulling a blob) even without a URL.
	blobContext bool
	// authContext is set when the chain says a token was being fetched.
	authContext bool
	// anonymous is set when the token fetch was anonymous.
	anonymous bool
	// status is the innermost HTTP status code named, 0 when none.
	status int
}

// Predicates, each tested on its own (see causes_test.go).

func isNeverPull(l string) bool {
	return containsAny(l, "with pull policy of never", "errimageneverpull")
}

func isBadReference(l string) bool {
	return containsAny(l, "invalid reference format", "couldn't parse image reference", "could not parse reference",
		"failed to apply default image tag", "invalidimagename", "repository name must be lowercase",
		"repository name must have at least one component", "invalid repository name", "error parsing image name",
		"failed to parse image name", "invalid image name", "name_invalid", "invalid name: ",
		"short-name resolution enforced", "did not resolve to an alias", "short name mode is enforcing",
		"couldn't parse image name", "invalid checksum digest format", "invalid tag format", "tag_invalid",
		"unsupported transport", "must be a fully qualified")
}

func isPolicy(l string) bool {
	return containsAny(l, "signaturevalidationfailed", "signature validation failed", "source image rejected",
		"a signature was required", "no signature exists", "signature verification failed",
		"signatures do not match", "is blocked by", "image is blocked", "not allowed by policy",
		"rejected by policy", "policy requirements", "running image docker://") && !containsAny(l, "x509", "x-amz-signature")
}

func isCredentialConfig(l string) bool {
	return containsAny(l, "error getting credentials", "docker-credential-", "credential helper",
		"error reading docker config", "failed to read auth file", "reading json file", "error parsing auth file",
		"illegal base64 data", "error decoding auth", "invalid auth configuration", "failed to get credentials",
		"exec plugin: invalid apiversion", "error running credential provider", "credential provider plugin",
		"failed to decode registry auth")
}

func isHostsConfig(l string) bool {
	return (strings.Contains(l, "hosts.toml") && containsAny(l, "toml:", "failed to", "error", "invalid")) ||
		containsAny(l, "registries.conf", "error loading registries", "loading registries configuration",
			"failed to load registry config", "invalid registry configuration", "certs.d") &&
			containsAny(l, "toml", "parse", "loading", "invalid", "open ", "failed to load")
}

func isCAFile(l string) bool {
	return containsAny(l, "failed to load ca", "failed to append ca", "error loading ca", "unable to load ca",
		"failed to read ca", "no certificates found in", "failed to load x509 key pair", "tls: failed to find any pem data")
}

func isDiskFull(l string) bool {
	return containsAny(l, "no space left on device", "disk quota exceeded", "not enough space",
		"insufficient disk space", "not enough free space", "disk full")
}

func isRuntimeSocket(l string) bool {
	return containsAny(l, "dial unix ", "containerd.sock", "crio.sock", "docker.sock", "dockershim.sock",
		"cri-dockerd.sock", "cannot connect to the docker daemon", "is the docker daemon running",
		"connection error: desc = \"transport", "runtime service failed", "unknown service runtime.v1",
		"unknown service runtime.v1alpha2", "runtime is down")
}

func isSnapshotter(l string) bool {
	return containsAny(l, "snapshotter", "failed to prepare extraction snapshot", "failed to create snapshot",
		"snapshot sha256", "failed to stat parent", "failed to mount", "mount callback failed",
		"overlayfs", "overlay:", "failed to commit snapshot", "parent snapshot", "failed to create prepare snapshot",
		"error creating overlay mount", "driver not supported", "devmapper", "zfs:", "stargz")
}

func isUnpack(l string) bool {
	return containsAny(l, "failed to extract layer", "failed to unpack", "unpacking image",
		"apply layer error", "failed to apply layer", "failed to register layer", "error extracting tar",
		"error processing tar file", "archive/tar:", "lchown", "error committing",
		"applylayer", "extracting layer", "failed to untar", "error creating mount", "wrong diff id",
		"failed to apply diff", "read-only file system", "invalid tar header", "adding layer with blob", "untar")
}

func isDigest(l string) bool {
	return containsAny(l, "digest mismatch", "unexpected commit digest", "does not match expected digest",
		"verification failed for digest", "digest did not match", "layer verification failed",
		"digest verification failed", "computed digest", "wrong diff id", "digests did not match",
		"digest_invalid", "digest invalid", "checksum mismatch", "hash mismatch", "unexpected digest")
}

func isSize(l string) bool {
	return containsAny(l, "short read", "failed size validation", "unexpected commit size", "size mismatch",
		"size_invalid", "unexpected size", "content length mismatch", "expected size")
}

func isRedirectLoop(l string) bool {
	return containsAny(l, "stopped after 10 redirects", "too many redirects", "redirect loop")
}

func isProxy(l string) bool {
	return containsAny(l, "proxyconnect", "proxy authentication required", "407 proxy", "error connecting to proxy",
		"socks connect", "proxy refused", "unable to connect to proxy", "failed to connect to proxy")
}

// TLS predicates.

func isTLSName(l string) bool {
	return containsAny(l, "certificate is valid for", "not valid for any names", "doesn't contain any ip sans",
		"legacy common name field", "certificate is not valid for", "hostname mismatch", "doesn't match host name",
		"does not match host name", "certificate name does not match", "subject alternative name")
}

func isTLSExpired(l string) bool {
	return containsAny(l, "certificate has expired", "expired or is not yet valid", "certificate is expired",
		"certificate is not yet valid", "certificate expired")
}

func isTLSUntrusted(l string) bool {
	return containsAny(l, "unknown authority", "certificate is not trusted", "self signed certificate",
		"self-signed certificate", "unable to get local issuer", "certificate verify failed",
		"not standards compliant", "failed to verify certificate", "untrusted certificate",
		"certificate chain", "unable to verify the first certificate")
}

func isPlainHTTP(l string) bool {
	return containsAny(l, "server gave http response to https client", "first record does not look like a tls handshake",
		"http response to https client", "wrong version number", "ssl routines:ssl3_get_record")
}

func isTLSTimeout(l string) bool { return strings.Contains(l, "tls handshake timeout") }

func isTLSOther(l string) bool {
	return containsAny(l, "remote error: tls", "tls: handshake failure", "tls: protocol version",
		"tls: bad certificate", "tls: unrecognized name", "tls: internal error", "tls: ", "x509: ", "handshake failure",
		"ssl handshake", "tls handshake")
}

// DNS predicates. lookupAt is the index of the last "lookup " (-1 when none).

func isNXDomain(l string) bool {
	return containsAny(l, "no such host", "name or service not known", "nodename nor servname", "could not resolve host",
		"enotfound", "nxdomain", "unknown host", "could not resolve", "name does not resolve", "host not found")
}

func isNoAddress(l string) bool {
	return containsAny(l, "no address associated with hostname", "no ip addresses", "no a or aaaa record")
}

func isServfail(l string) bool {
	return containsAny(l, "server misbehaving", "servfail", "dns server failure", "refused the query")
}

func isDNSTimeout(l string, lookupAt int) bool {
	if containsAny(l, "temporary failure in name resolution", "eai_again", "dns resolution timed out", "dns lookup timed out") {
		return true
	}
	if lookupAt < 0 {
		return false
	}
	tail := l[lookupAt:]
	return containsAny(tail, "i/o timeout", "timeout", "timed out", "try again", "deadline exceeded")
}

func isDNSUnreachable(l string, lookupAt int) bool {
	if lookupAt < 0 {
		return false
	}
	tail := l[lookupAt:]
	return containsAny(tail, "connection refused", "network is unreachable", "no route to host", "host is unreachable") ||
		strings.Contains(tail, ":53: connect:")
}

func isDNSBusy(l string, lookupAt int) bool {
	return lookupAt >= 0 && containsAny(l[lookupAt:], "device or resource busy", "too many open files", "resource temporarily unavailable")
}

// Route predicates.

func isRefused(l string) bool {
	return containsAny(l, "connection refused", "econnrefused", "actively refused")
}

func isUnreachable(l string) bool {
	return containsAny(l, "no route to host", "network is unreachable", "host is unreachable", "host unreachable",
		"ehostunreach", "enetunreach", "network unreachable")
}

func isConnectTimeout(l string) bool {
	if containsAny(l, "connection timed out", "connect: operation timed out", "request canceled while waiting for connection",
		"etimedout", "connect timeout", "connection timeout", "awaiting response headers", "while awaiting headers",
		"dial timeout") {
		return true
	}
	i := strings.LastIndex(l, "dial tcp")
	return i >= 0 && containsAny(l[i:], "i/o timeout", "timeout", "deadline exceeded")
}

func isReset(l string) bool {
	return containsAny(l, "connection reset", "econnreset", "broken pipe", "connection was forcibly closed",
		"server closed", "connection closed", "use of closed network connection", "unexpected eof",
		"http2: server sent goaway", "stream error", "internal_error; received from peer", "forcibly closed") || endsWithEOF(l)
}

// endsWithEOF reports whether the chain ends in a bare EOF (": EOF").
func endsWithEOF(l string) bool {
	t := strings.TrimRight(l, " \"'.]")
	return strings.HasSuffix(t, ": eof") || t == "eof" || strings.Contains(l, ": eof,") || strings.Contains(l, ": eof ")
}

func isReadTimeout(l string) bool {
	i := lastIndexAny(l, "read tcp", "read: ", "reading body", "read body")
	return containsAny(l, "client.timeout exceeded while reading body", "no progress", "stalled",
		"context canceled while reading") || (i >= 0 && containsAny(l[i:], "i/o timeout", "timeout"))
}

// Registry and provider predicates.

func isIPDenied(l string) bool {
	return containsAny(l, "is not allowed access", "client with ip", "aka.ms/acr/firewall",
		"ip address is not allowed", "not allowed from this ip", "vpcservicecontrols", "vpc service controls",
		"request is prohibited by organization's policy", "ip not allowed", "ip address not allowed")
}

func isRateLimit(l string, status int) bool {
	return status == 429 || containsAny(l, "toomanyrequests", "too many requests", "rate limit", "ratelimit",
		"rate exceeded", "throttl", "pull qps exceeded", "quota exceeded for")
}

func isDeniedOrMissing(l string) bool {
	return containsAny(l, "repository does not exist or may require", "does not exist or no pull access",
		"repository does not exist or you don't have", "does not exist or may require 'docker login'") ||
		// Docker Hub answers a missing repository with both errors.
		strings.Contains(l, "requested access to the resource is denied") && strings.Contains(l, "authentication required")
}

func isPlatform(l string) bool {
	return containsAny(l, "no match for platform", "no matching manifest for", "does not match the specified platform",
		"no image found in image index for architecture", "no image found in manifest list for architecture",
		"image index for architecture", "manifest list for architecture", "no child with platform",
		"choosing an image from manifest list", "choosing image instance", "platform not supported",
		"does not support the platform", "not match the platform", "no suitable image found for platform",
		"not found for platform")
}

func isManifestInvalid(l string) bool {
	return containsAny(l, "manifest invalid", "manifest_invalid", "unknown media type", "unsupported media type",
		"unsupported manifest", "manifest media type", "schema 1", "schema1", "not a valid manifest",
		"invalid manifest", "unsupported mediatype", "mediatype in manifest should be", "unexpected media type",
		"encountered unknown type", "unable to recognize manifest", "failed to unmarshal manifest",
		"unsupported docker v2 schema")
}

func isNameUnknown(l string) bool {
	return containsAny(l, "name unknown", "name_unknown", "repository name not known", "repository not found",
		"repository does not exist", "repo not found", "project not found", "no such repository",
		"the repository with name", "namespace not found")
}

func isManifestUnknown(l string) bool {
	return containsAny(l, "manifest unknown", "manifest_unknown", "not found: manifest", "manifest not found",
		"tag not found", "tag does not exist", "no such image", "image not found",
		"not found: not found", "requested image not found", "does not have tag") || manifestForNotFound(l)
}

// manifestForNotFound matches Docker's `manifest for X not found`.
func manifestForNotFound(l string) bool {
	i := strings.Index(l, "manifest for ")
	return i >= 0 && strings.Contains(l[i:], " not found")
}

// endsNotFound matches containerd's `<ref>: not found` and CRI NotFound.
func endsNotFound(l string) bool {
	t := strings.TrimRight(l, " \"'.]")
	return strings.HasSuffix(t, ": not found") || strings.HasSuffix(t, " not found") ||
		strings.Contains(l, "code = notfound") || strings.Contains(l, ": not found,") || strings.Contains(l, ": not found ")
}

func isBlobUnknown(l string) bool {
	return containsAny(l, "blob unknown", "blob_unknown", "manifest_blob_unknown", "blob not found",
		"nosuchkey", "the specified key does not exist", "no such object", "the specified blob does not exist", "blobnotfound")
}

func isStorageDenied(l string) bool {
	return containsAny(l, "<code>accessdenied", "accessdenied", "request has expired", "signaturedoesnotmatch",
		"authenticationfailed", "authorizationpermissionmismatch", "authorizationfailure", "signature not valid",
		"sas token", "x-amz-expires", "invalidaccesskeyid", "expiredtoken", "the provided token has expired",
		"server failed to authenticate the request", "this request is not authorized to perform this operation")
}

func isBadCredentials(l string) bool {
	return containsAny(l, "incorrect username or password", "invalid username/password", "invalid username or password",
		"bad credentials", "invalid credentials", "authentication failed", "wrong password", "invalid password",
		"token has expired", "token is expired", "authorization token has expired", "expired token", "invalid_token",
		"token expired", "login failed", "invalid_grant", "invalid_client", "unauthorized_client",
		"failed to fetch oauth token", "password is incorrect", "bad username or password",
		"the security token included in the request is invalid", "invalid identity token", "credentials are invalid",
		"your authorization token has expired", "bad auth", "login attempt failed")
}

func isNoCredentials(l string) bool {
	return containsAny(l, "no basic auth credentials", "authentication required", "anonymous", "no credentials",
		"credentials not found", "requires authentication", "login required", "not logged in", "missing credentials",
		"please login", "docker login", "unauthenticated")
}

func isUnauthorized(l string, status int) bool {
	return status == 401 || containsAny(l, "unauthorized", "authentication required", "no basic auth credentials",
		"not authenticated", "unauthenticated")
}

func isForbidden(l string, status int) bool {
	return status == 403 || containsAny(l, "forbidden", "denied", "insufficient_scope", "not authorized",
		"permission denied", "access is denied", "accessdenied", "not allowed", "permission_denied",
		"does not have permission", "insufficient scope", "unauthorized to access repository")
}

func isTokenProblem(l string) bool {
	return containsAny(l, "did not include a token", "unable to decode token response", "failed to find supported auth scheme",
		"failed to fetch token", "error fetching token", "could not fetch token", "failed to obtain token",
		"token response", "malformed auth challenge", "unsupported auth scheme", "failed to parse bearer",
		"invalid www-authenticate", "get token", "getting token")
}

func isDeadline(l string) bool {
	return containsAny(l, "context deadline exceeded", "deadline exceeded", "deadlineexceeded", "timed out", "timeout")
}

// httpStatus returns the innermost HTTP status code the text names, or 0.
// It looks for a status number followed by its reason phrase and for
// numbers after "status code", "status:" and similar.
func httpStatus(l string) int {
	best, bestAt := 0, -1
	for _, p := range reasonPhrases {
		if i := strings.LastIndex(l, p.text); i > bestAt {
			// The number must stand alone: "401 unauthorized", not "x401 unauthorized".
			if i == 0 || l[i-1] == ' ' || l[i-1] == ':' || l[i-1] == '"' || l[i-1] == '(' || l[i-1] == '[' {
				best, bestAt = p.code, i
			}
		}
	}
	for _, pre := range statusPrefixes {
		off := 0
		for {
			i := strings.Index(l[off:], pre)
			if i < 0 {
				break
			}
			j := off + i + len(pre)
			off = j
			for j < len(l) && (l[j] == ' ' || l[j] == '"' || l[j] == '=' || l[j] == ':') {
				j++
			}
			if j+3 <= len(l) && isDigit(l[j]) && isDigit(l[j+1]) && isDigit(l[j+2]) && (j+3 == len(l) || !isDigit(l[j+3])) {
				code := int(l[j]-'0')*100 + int(l[j+1]-'0')*10 + int(l[j+2]-'0')
				if code >= 100 && code < 600 && j > bestAt {
					best, bestAt = code, j
				}
			}
		}
	}
	return best
}

type reasonPhrase struct {
	code int
	text string
}

var reasonPhrases = []reasonPhrase{
	{400, "400 bad request"}, {401, "401 unauthorized"}, {403, "403 forbidden"}, {404, "404 not found"},
	{405, "405 method not allowed"}, {406, "406 not acceptable"}, {407, "407 proxy authentication required"},
	{408, "408 request timeout"}, {409, "409 conflict"}, {410, "410 gone"}, {413, "413 request entity too large"},
	{416, "416 requested range not satisfiable"}, {429, "429 too many requests"},
	{500, "500 internal server error"}, {501, "501 not implemented"}, {502, "502 bad gateway"},
	{503, "503 service unavailable"}, {503, "503 service temporarily unavailable"}, {504, "504 gateway timeout"},
	{504, "504 gateway time-out"}, {520, "520 "}, {521, "521 "}, {522, "522 "}, {523, "523 "}, {524, "524 "},
}

var statusPrefixes = []string{
	"status code", "status:", "status ", "statuscode", "status=", "http status", "response code",
	"returned error:", "error code", "http error", "code:", "responded with",
	"failed with status", "got http response code", "received unexpected http status:", "status code from registry", "error parsing http",
}

// isFilesystem matches a local file operation failing on the node.
func isFilesystem(l string) bool {
	return containsAny(l, "open /", "mkdir /", "stat /", "lstat /", "rename /", "unlinkat /", "chmod /",
		"chown /", "remove /", "write /", "input/output error", "read-only file system", "too many open files",
		"cannot allocate memory", "failed to create temp", "readlink /", "symlink /")
}
