package explain

import (
	"strings"
)

// Predicates, each tested on its own (see causes_test.go).

func isNeverPull(t *txt) bool {
	return t.h.any(neverPullPhrases)
}

var neverPullPhrases = newSet("with pull policy of never", "errimageneverpull")

func isBadReference(t *txt) bool {
	return t.h.any(badReferencePhrases)
}

var badReferencePhrases = newSet("invalid reference format", "couldn't parse image reference", "could not parse reference", "failed to apply default image tag", "invalidimagename", "repository name must be lowercase", "repository name must have at least one component", "invalid repository name", "error parsing image name", "failed to parse image name", "invalid image name", "name_invalid", "invalid name: ", "short-name resolution enforced", "did not resolve to an alias", "short name mode is enforcing", "couldn't parse image name", "invalid checksum digest format", "invalid tag format", "tag_invalid", "unsupported transport", "must be a fully qualified", "pull an unqualified image")

func isPolicy(t *txt) bool {
	return t.h.any(policyPhrases) && !t.h.any(policyFalseFriends)
}

var policyFalseFriends = newSet("x509", "x-amz-signature")

var policyPhrases = newSet("signaturevalidationfailed", "signature validation failed", "source image rejected", "a signature was required", "no signature exists", "signature verification failed", "signatures do not match", "is blocked by", "image is blocked", "not allowed by policy", "rejected by policy", "policy requirements", "running image docker://")

func isCredentialConfig(t *txt) bool {
	return t.h.any(credentialConfigPhrases)
}

var credentialConfigPhrases = newSet("error getting credentials", "docker-credential-", "credential helper", "error reading docker config", "failed to read auth file", "reading json file", "error parsing auth file", "illegal base64 data", "error decoding auth", "invalid auth configuration", "failed to get credentials", "exec plugin: invalid apiversion", "error running credential provider", "credential provider plugin", "failed to decode registry auth")

func isHostsConfig(t *txt) bool {
	return (t.h.any(hostsTOMLFile) && t.h.any(configErrorWords)) ||
		t.h.any(registriesConfPhrases)
}

var registriesConfPhrases = newSet("error loading registries", "loading registries configuration", "failed to load registry config", "invalid registry configuration", "registries.conf: toml", "loading registries.conf", "parsing registries.conf")

var configErrorWords = newSet("toml:", "failed to", "error", "invalid")

var hostsTOMLFile = newSet("hosts.toml")

func isCAFile(t *txt) bool {
	return t.h.any(caFilePhrases)
}

var caFilePhrases = newSet("failed to load ca", "failed to append ca", "error loading ca", "unable to load ca", "failed to read ca", "no certificates found in", "failed to load x509 key pair", "tls: failed to find any pem data")

func isDiskFull(t *txt) bool {
	return t.h.any(diskFullPhrases)
}

var diskFullPhrases = newSet("no space left on device", "disk quota exceeded", "not enough space", "insufficient disk space", "not enough free space", "disk full")

func isRuntimeSocket(t *txt) bool {
	return t.h.any(runtimeSocketPhrases)
}

var runtimeSocketPhrases = newSet("dial unix ", "containerd.sock", "crio.sock", "docker.sock", "dockershim.sock", "cri-dockerd.sock", "cannot connect to the docker daemon", "is the docker daemon running", "connection error: desc = \"transport", "unknown service runtime.v1", "unknown service runtime.v1alpha2", "runtime is down")

func isSnapshotter(t *txt) bool {
	return t.h.any(snapshotterPhrases)
}

var snapshotterPhrases = newSet("snapshotter", "failed to prepare extraction snapshot", "failed to create snapshot", "snapshot sha256", "failed to stat parent", "failed to mount", "mount callback failed", "overlayfs", "overlay:", "failed to commit snapshot", "parent snapshot", "failed to create prepare snapshot", "error creating overlay mount", "driver not supported", "devmapper", "zfs:", "stargz")

func isUnpack(t *txt) bool {
	return t.h.any(unpackPhrases)
}

var unpackPhrases = newSet("failed to extract layer", "failed to unpack", "unpacking image", "apply layer error", "failed to apply layer", "failed to register layer", "error extracting tar", "error processing tar file", "archive/tar:", "lchown", "error committing", "applylayer", "extracting layer", "failed to untar", "error creating mount", "wrong diff id", "failed to apply diff", "read-only file system", "invalid tar header", "adding layer with blob", "untar", "hcsshim::importlayer", "hcsshim::processbaselayer", "hcsshim::processutilityvmimage", "processbaselayer ", "importlayer failed", "unpack destination", "error unpacking image")

func isDigest(t *txt) bool {
	return t.h.any(digestPhrases)
}

var digestPhrases = newSet("digest mismatch", "unexpected commit digest", "does not match expected digest", "verification failed for digest", "digest did not match", "layer verification failed", "digest verification failed", "computed digest", "digests did not match", "digest_invalid", "digest invalid", "checksum mismatch", "hash mismatch", "unexpected digest")

func isSize(t *txt) bool {
	return t.h.any(sizePhrases)
}

var sizePhrases = newSet("short read", "failed size validation", "unexpected commit size", "size mismatch", "size_invalid", "unexpected size", "content length mismatch", "expected size")

func isRedirectLoop(t *txt) bool {
	return t.h.any(redirectLoopPhrases)
}

var redirectLoopPhrases = newSet("stopped after 10 redirects", "too many redirects", "redirect loop")

func isProxy(t *txt) bool {
	return t.h.any(proxyPhrases)
}

var proxyPhrases = newSet("proxyconnect", "proxy authentication required", "407 proxy", "error connecting to proxy", "socks connect", "proxy refused", "unable to connect to proxy", "failed to connect to proxy")

// proxyRefusals are the bare status texts Go's transport returns when the
// proxy answers CONNECT with anything but 200 (`Head "https://r/v2/...":
// Forbidden`): no status code, no "unexpected status", right after the
// quoted URL. A registry's own 403 never reads like that.
// Go writes them as http.StatusText does (capitalised); registry error
// codes that Docker prints bare are lower case ("unauthorized", "denied"),
// so the match is case-sensitive on the original text.
var proxyRefusals = []string{"Forbidden", "Proxy Authentication Required", "Bad Gateway", "Service Unavailable", "Gateway Timeout", "Not Found", "Method Not Allowed", "Bad Request", "Unauthorized"}

// isProxyRefusal reports a CONNECT refused by the proxy: a quoted URL
// followed by `": <bare status text>` at the end of the message (or of a
// bracketed list item).
func isProxyRefusal(s string) bool {
	for i := strings.Index(s, `": `); i >= 0; {
		rest := s[i+3:]
		for _, r := range proxyRefusals {
			if strings.HasPrefix(rest, r) {
				tail := strings.TrimLeft(rest[len(r):], " ")
				if tail == "" || tail[0] == ']' || tail[0] == ',' || tail[0] == '"' || tail[0] == '\'' {
					return true
				}
			}
		}
		j := strings.Index(rest, `": `)
		if j < 0 {
			break
		}
		i += 3 + j
	}
	return false
}

// TLS predicates.

func isTLSName(t *txt) bool {
	return t.h.any(tlsNamePhrases)
}

var tlsNamePhrases = newSet("certificate is valid for", "not valid for any names", "doesn't contain any ip sans", "legacy common name field", "certificate is not valid for", "hostname mismatch", "doesn't match host name", "does not match host name", "certificate name does not match", "subject alternative name")

func isTLSExpired(t *txt) bool {
	return t.h.any(tlsExpiredPhrases)
}

var tlsExpiredPhrases = newSet("certificate has expired", "expired or is not yet valid", "certificate is expired", "certificate is not yet valid", "certificate expired")

func isTLSUntrusted(t *txt) bool {
	return t.h.any(tlsUntrustedPhrases)
}

var tlsUntrustedPhrases = newSet("unknown authority", "certificate is not trusted", "self signed certificate", "self-signed certificate", "unable to get local issuer", "certificate verify failed", "not standards compliant", "failed to verify certificate", "untrusted certificate", "certificate chain", "unable to verify the first certificate")

func isPlainHTTP(t *txt) bool {
	return t.h.any(plainHTTPPhrases)
}

var plainHTTPPhrases = newSet("server gave http response to https client", "first record does not look like a tls handshake", "http response to https client", "wrong version number", "ssl routines:ssl3_get_record")

func isTLSTimeout(t *txt) bool { return t.h.any(tlsTimeoutPhrases) }

func isTLSOther(t *txt) bool {
	return t.h.any(tlsOtherPhrases)
}

var tlsOtherPhrases = newSet("remote error: tls", "tls: handshake failure", "tls: protocol version", "tls: bad certificate", "tls: unrecognized name", "tls: internal error", "tls: ", "x509: ", "handshake failure", "ssl handshake", "tls handshake")

var tlsTimeoutPhrases = newSet("tls handshake timeout")

// DNS predicates. lookupAt is the index of the last "lookup " (-1 when none).

func isNXDomain(t *txt) bool {
	return t.h.any(nxdomainPhrases)
}

var nxdomainPhrases = newSet("no such host", "name or service not known", "nodename nor servname", "could not resolve host", "enotfound", "nxdomain", "unknown host", "could not resolve", "name does not resolve", "host not found")

func isNoAddress(t *txt) bool {
	return t.h.any(noAddressPhrases)
}

var noAddressPhrases = newSet("no address associated with hostname", "no ip addresses", "no a or aaaa record")

func isServfail(t *txt) bool {
	return t.h.any(servfailPhrases)
}

var servfailPhrases = newSet("server misbehaving", "servfail", "dns server failure", "refused the query")

func isDNSTimeout(t *txt, lookupAt int) bool {
	l := t.l
	if t.h.any(dnsTimeoutPhrases) {
		return true
	}
	if lookupAt < 0 {
		return false
	}
	tail := l[lookupAt:]
	return containsAny(tail, "i/o timeout", "timeout", "timed out", "try again", "deadline exceeded")
}

var dnsTimeoutPhrases = newSet("temporary failure in name resolution", "eai_again", "dns resolution timed out", "dns lookup timed out")

func isDNSUnreachable(t *txt, lookupAt int) bool {
	l := t.l
	if lookupAt < 0 {
		return false
	}
	tail := l[lookupAt:]
	return containsAny(tail, "connection refused", "network is unreachable", "no route to host", "host is unreachable") ||
		strings.Contains(tail, ":53: connect:")
}

func isDNSBusy(t *txt, lookupAt int) bool {
	l := t.l
	return lookupAt >= 0 && containsAny(l[lookupAt:], "device or resource busy", "too many open files", "resource temporarily unavailable")
}

// Route predicates.

func isRefused(t *txt) bool {
	return t.h.any(refusedPhrases)
}

var refusedPhrases = newSet("connection refused", "econnrefused", "actively refused")

func isUnreachable(t *txt) bool {
	return t.h.any(unreachablePhrases)
}

var unreachablePhrases = newSet("no route to host", "network is unreachable", "host is unreachable", "host unreachable", "ehostunreach", "enetunreach", "network unreachable", "unreachable network", "unreachable host")

func isConnectTimeout(t *txt) bool {
	l := t.l
	if t.h.any(connectTimeoutPhrases) {
		return true
	}
	if !t.h.any(dialTCPPhrase) {
		return false
	}
	i := strings.LastIndex(l, "dial tcp")
	return i >= 0 && containsAny(l[i:], "i/o timeout", "timeout", "deadline exceeded")
}

var dialTCPPhrase = newSet("dial tcp")

var connectTimeoutPhrases = newSet("connection timed out", "connect: operation timed out", "request canceled while waiting for connection", "etimedout", "connect timeout", "connection timeout", "awaiting response headers", "while awaiting headers", "dial timeout", "timed out while trying to connect", "did not properly respond after a period of time", "connected host has failed to respond", "wsaetimedout")

func isReset(t *txt) bool {
	return t.h.any(resetPhrases) || endsWithEOF(t)
}

var resetPhrases = newSet("connection reset", "econnreset", "broken pipe", "connection was forcibly closed", "server closed", "connection closed", "use of closed network connection", "unexpected eof", "http2: server sent goaway", "stream error", "internal_error; received from peer", "forcibly closed")

// endsWithEOF reports whether the chain ends in a bare EOF (": EOF").
func endsWithEOF(t *txt) bool {
	e := strings.TrimRight(t.l, " \"'.]")
	return strings.HasSuffix(e, ": eof") || e == "eof" || t.h.any(eofInsidePhrases)
}

var eofInsidePhrases = newSet(": eof,", ": eof ")

func isReadTimeout(t *txt) bool {
	l := t.l
	if t.h.any(readTimeoutPhrases) {
		return true
	}
	if !t.h.any(readPhrases) {
		return false
	}
	i := lastIndexAny(l, "read tcp", "read: ", "reading body", "read body")
	return i >= 0 && containsAny(l[i:], "i/o timeout", "timeout")
}

var readPhrases = newSet("read tcp", "read: ", "reading body", "read body")

var readTimeoutPhrases = newSet("client.timeout exceeded while reading body", "no progress", "stalled", "context canceled while reading")

// Registry and provider predicates.

func isIPDenied(t *txt) bool {
	return t.h.any(ipDeniedPhrases)
}

var ipDeniedPhrases = newSet("is not allowed access", "client with ip", "aka.ms/acr/firewall", "ip address is not allowed", "not allowed from this ip", "vpcservicecontrols", "vpc service controls", "request is prohibited by organization's policy", "ip not allowed", "ip address not allowed")

func isRateLimit(t *txt, status int) bool {
	return status == 429 || t.h.any(rateLimitPhrases)
}

var rateLimitPhrases = newSet("toomanyrequests", "too many requests", "rate limit", "ratelimit", "rate exceeded", "throttl", "quota exceeded for")

func isDeniedOrMissing(t *txt) bool {
	return t.h.any(deniedOrMissingPhrases) ||
		// Docker Hub answers a missing repository with both errors.
		t.h.any(hubDeniedPhrase) && t.h.any(authRequiredPhrase) ||
		// Hub's denial next to another registry's (a mirror's) "unknown"
		// for the same name: the name most likely does not exist.
		t.h.any(hubDeniedPhrase) && (t.h.any(nameUnknownPhrases) || t.h.any(manifestUnknownPhrases))
}

var manifestUnknownPhrases = newSet("manifest unknown", "manifest_unknown", "not found: manifest", "manifest not found", "tag not found", "tag does not exist", "no such image", "image not found", "not found: not found", "requested image not found", "does not have tag")

var nameUnknownPhrases = newSet("name unknown", "name_unknown", "repository name not known", "repository not found", "repository does not exist", "repo not found", "project not found", "no such repository", "the repository with name", "namespace not found")

var authRequiredPhrase = newSet("authentication required")

var hubDeniedPhrase = newSet("requested access to the resource is denied")

var deniedOrMissingPhrases = newSet("repository does not exist or may require", "does not exist or no pull access", "repository does not exist or you don't have", "does not exist or may require 'docker login'")

func isPlatform(t *txt) bool {
	return t.h.any(platformPhrases)
}

var platformPhrases = newSet("no match for platform", "no matching manifest for", "does not match the specified platform", "no image found in image index for architecture", "no image found in manifest list for architecture", "image index for architecture", "manifest list for architecture", "no child with platform", "choosing an image from manifest list", "choosing image instance", "platform not supported", "does not support the platform", "not match the platform", "no suitable image found for platform", "not found for platform", "does not match the detected host platform", "no supported platform found in manifest list")

func isManifestInvalid(t *txt) bool {
	return t.h.any(manifestInvalidPhrases)
}

var manifestInvalidPhrases = newSet("manifest invalid", "manifest_invalid", "unknown media type", "unsupported media type", "unsupported manifest", "manifest media type", "schema 1", "schema1", "not a valid manifest", "invalid manifest", "unsupported mediatype", "mediatype in manifest should be", "unexpected media type", "encountered unknown type", "unable to recognize manifest", "failed to unmarshal manifest", "unsupported docker v2 schema")

func isNameUnknown(t *txt) bool {
	return t.h.any(nameUnknownPhrases)
}

func isManifestUnknown(t *txt) bool {
	return t.h.any(manifestUnknownPhrases) || manifestForNotFound(t)
}

// manifestForNotFound matches Docker's `manifest for X not found`.
func manifestForNotFound(t *txt) bool {
	if !t.h.any(manifestForPhrase) {
		return false
	}
	l := t.l
	i := strings.Index(l, "manifest for ")
	return i >= 0 && strings.Contains(l[i:], " not found")
}

var manifestForPhrase = newSet("manifest for ")

// endsNotFound matches containerd's `<ref>: not found` and CRI NotFound.
func endsNotFound(t *txt) bool {
	e := strings.TrimRight(t.l, " \"'.]")
	return strings.HasSuffix(e, ": not found") || strings.HasSuffix(e, " not found") ||
		t.h.any(notFoundStatusPhrases)
}

var notFoundStatusPhrases = newSet("code = notfound", ": not found,", ": not found ")

func isBlobUnknown(t *txt) bool {
	return t.h.any(blobUnknownPhrases)
}

var blobUnknownPhrases = newSet("blob unknown", "blob_unknown", "manifest_blob_unknown", "blob not found", "nosuchkey", "the specified key does not exist", "no such object", "the specified blob does not exist", "blobnotfound", "unknown blob")

func isStorageDenied(t *txt) bool {
	return t.h.any(storageDeniedPhrases)
}

var storageDeniedPhrases = newSet("<code>accessdenied", "accessdenied", "request has expired", "signaturedoesnotmatch", "authenticationfailed", "authorizationpermissionmismatch", "authorizationfailure", "signature not valid", "sas token", "invalidaccesskeyid", "expiredtoken", "the provided token has expired", "server failed to authenticate the request", "this request is not authorized to perform this operation")

func isBadCredentials(t *txt) bool {
	return t.h.any(badCredentialsPhrases)
}

var badCredentialsPhrases = newSet("incorrect username or password", "invalid username/password", "invalid username or password", "bad credentials", "invalid credentials", "authentication failed", "wrong password", "invalid password", "token has expired", "token is expired", "authorization token has expired", "expired token", "invalid_token", "token expired", "login failed", "invalid_grant", "invalid_client", "unauthorized_client", "failed to fetch oauth token", "password is incorrect", "bad username or password", "the security token included in the request is invalid", "invalid identity token", "credentials are invalid", "your authorization token has expired", "bad auth", "login attempt failed")

func isNoCredentials(t *txt) bool {
	return t.h.any(noCredentialsPhrases)
}

var noCredentialsPhrases = newSet("no basic auth credentials", "authentication required", "anonymous", "no credentials", "credentials not found", "requires authentication", "login required", "not logged in", "missing credentials", "please login", "docker login", "unauthenticated")

func isUnauthorized(t *txt, status int) bool {
	return status == 401 || t.h.any(unauthorizedPhrases)
}

var unauthorizedPhrases = newSet("unauthorized", "authentication required", "no basic auth credentials", "not authenticated", "unauthenticated")

func isForbidden(t *txt, status int) bool {
	return status == 403 || t.h.any(forbiddenPhrases)
}

var forbiddenPhrases = newSet("forbidden", "denied", "insufficient_scope", "not authorized", "permission denied", "access is denied", "accessdenied", "not allowed", "permission_denied", "does not have permission", "insufficient scope", "unauthorized to access repository")

func isTokenProblem(t *txt) bool {
	return t.h.any(tokenProblemPhrases)
}

var tokenProblemPhrases = newSet("did not include a token", "unable to decode token response", "failed to find supported auth scheme", "failed to fetch token", "error fetching token", "could not fetch token", "failed to obtain token", "token response", "malformed auth challenge", "unsupported auth scheme", "failed to parse bearer", "invalid www-authenticate", "get token", "getting token")

func isDeadline(t *txt) bool {
	return t.h.any(deadlinePhrases)
}

var deadlinePhrases = newSet("context deadline exceeded", "deadline exceeded", "deadlineexceeded", "timed out", "timeout")

// httpStatus returns the innermost HTTP status code the text names, or 0.
// It makes one pass over l (lowercase) looking at every run of exactly
// three digits: the run counts when a reason phrase follows it ("401
// unauthorized") or a status word precedes it ("status code 404",
// "status: 500"). The last such run wins.
func httpStatus(l string) int {
	best := 0
	for i := 0; i < len(l); i++ {
		if !isDigit(l[i]) || i > 0 && (isDigit(l[i-1]) || isAlnum(l[i-1]) || l[i-1] == '.' || l[i-1] == '/' || l[i-1] == '-') {
			continue
		}
		j := i
		for j < len(l) && isDigit(l[j]) {
			j++
		}
		if j-i != 3 || j < len(l) && (isAlnum(l[j]) || l[j] == '.' && j+1 < len(l) && isDigit(l[j+1])) {
			i = j
			continue
		}
		code := int(l[i]-'0')*100 + int(l[i+1]-'0')*10 + int(l[i+2]-'0')
		if code < 100 || code > 599 {
			i = j
			continue
		}
		if reasonFollows(l[j:]) || statusPrecedes(l[:i]) {
			best = code
		}
		i = j
	}
	return best
}

var reasonWords = []string{
	" unauthorized", " forbidden", " not found", " too many requests", " internal server error", " bad gateway",
	" service unavailable", " service temporarily unavailable", " gateway timeout", " gateway time-out", " bad request",
	" method not allowed", " not acceptable", " proxy authentication required", " request timeout", " conflict",
	" gone", " request entity too large", " requested range not satisfiable", " not implemented", " (bad gateway)",
	" (service unavailable)", " (internal server error)", " (unauthorized)", " (forbidden)", " (not found)",
	" (too many requests)",
}

func reasonFollows(rest string) bool {
	if len(rest) > 40 {
		rest = rest[:40]
	}
	for _, w := range reasonWords {
		if len(rest) >= len(w) && rest[:len(w)] == w {
			return true
		}
	}
	return false
}

var statusWords = []string{
	"status code", "status", "statuscode", "response code", "returned error", "error code", "http error",
	"responded with", "got http response code", "received unexpected http status", "status code from registry",
	"error parsing http", "http status", "code", "status code:",
}

func statusPrecedes(before string) bool {
	b := before
	for len(b) > 0 {
		c := b[len(b)-1]
		if c == ' ' || c == ':' || c == '=' || c == '"' || c == '(' {
			b = b[:len(b)-1]
			continue
		}
		break
	}
	if len(b) > 40 {
		b = b[len(b)-40:]
	}
	for _, w := range statusWords {
		if len(b) >= len(w) && b[len(b)-len(w):] == w && (len(b) == len(w) || !isAlnum(b[len(b)-len(w)-1])) {
			return true
		}
	}
	return false
}

// isNoResolver matches a lookup with no nameserver to ask: the node's
// resolv.conf names none (Go: `lookup <host>: no DNS servers`).
func isNoResolver(t *txt) bool {
	return t.h.any(noResolverPhrase)
}

var noResolverPhrase = newSet("no dns servers")

// isKubeletThrottle matches the kubelet refusing to start a pull because
// of its own registryPullQPS limit: the registry was never asked.
func isKubeletThrottle(t *txt) bool {
	return t.h.any(kubeletQPSPhrase)
}

var kubeletQPSPhrase = newSet("pull qps exceeded")

// isHTMLAnswer matches a JSON decoder fed an HTML page: the registry (or
// whatever answers in its name) returned something that is not the
// registry API.
func isHTMLAnswer(t *txt) bool {
	return t.h.any(htmlAnswerPhrase)
}

var htmlAnswerPhrase = newSet("invalid character '<' looking for beginning of value")

// isCanceled matches a cancelled pull with nothing else said: the kubelet,
// the runtime's watchdog or a deleted pod cancelled it, no step is named.
func isCanceled(t *txt) bool {
	return t.h.any(canceledPhrases)
}

var canceledPhrases = newSet("context canceled", "request canceled", "operation was canceled", "context cancelled")

// isContentStore matches the node's content store failing to write,
// resume or commit bytes that arrived: containerd's ingest directory
// (`failed reading status of resume write: stat .../ingest/<ref>/data`),
// a ref another pull holds (`ref ... locked: unavailable`).
func isContentStore(t *txt) bool {
	return t.h.any(contentStorePhrases)
}

var contentStorePhrases = newSet("failed reading status of resume write", "io.containerd.content.v1.content/ingest", "locked: unavailable", "locking ref ", "could not get status for filter", "failed to resume the status")

// isNoProgress matches a runtime's no-progress watchdog cancelling the
// pull: containerd's `cancel pulling image <ref> because of no progress`,
// dockershim's `Cancel pulling image ...`.
func isNoProgress(t *txt) bool {
	return t.h.any(noProgressPhrases)
}

var noProgressPhrases = newSet("cancel pulling image", "because of no progress")

// isHeaderWait matches a request whose connection was made and whose
// answer never came: Go's `net/http: request canceled (Client.Timeout
// exceeded while awaiting headers)` (the client's timeout after the
// connection was handed over; before it Go says `request canceled while
// waiting for connection`) and the transport's `timeout awaiting response
// headers` (ResponseHeaderTimeout runs only once the request is written).
func isHeaderWait(t *txt) bool {
	return t.h.any(headerWaitPhrases)
}

var headerWaitPhrases = newSet("request canceled (client.timeout exceeded while awaiting headers)", "timeout awaiting response headers")

// isRuntimeCanceled matches containerd's pull chain ending in `context
// canceled` with nothing else said: the runtime's answer reached the
// kubelet, so the kubelet did not cancel the call (its own cancellation
// returns the bare gRPC status); containerd cancels its own pull only from
// its no-progress watchdog.
func isRuntimeCanceled(t *txt) bool {
	if !t.h.any(unpackWrapperPhrase) || !isCanceled(t) {
		return false
	}
	e := strings.TrimRight(t.l, " \"'.])}")
	return strings.HasSuffix(e, ": context canceled")
}

var unpackWrapperPhrase = newSet("failed to pull and unpack image")

// isKubeletDeadline matches the bare gRPC DeadlineExceeded status with no
// runtime text (`rpc error: code = DeadlineExceeded desc = context deadline
// exceeded`, `code = 4` in old kubelets): what the kubelet's own deadline
// for the CRI call returns.
func isKubeletDeadline(t *txt) bool {
	if !t.h.any(grpcDeadlinePhrases) {
		return false
	}
	for _, p := range []string{"code = deadlineexceeded desc = context deadline exceeded", "code = 4 desc = context deadline exceeded"} {
		if i := strings.LastIndex(t.l, p); i >= 0 {
			rest := cutKlogTail(t.l[i+len(p):])
			if strings.TrimLeft(rest, " \"'.])}") == "" {
				return true
			}
		}
	}
	return false
}

var grpcDeadlinePhrases = newSet("code = deadlineexceeded desc = context deadline exceeded", "code = 4 desc = context deadline exceeded")

// isV1NotFound matches Docker 1.x's v1-protocol answer `Error: image
// <repo>:<tag> not found`, which Docker Hub and v1 registries gave for a
// private repository as for a missing one.
func isV1NotFound(t *txt) bool {
	if !t.h.any(v1ImagePhrase) {
		return false
	}
	i := strings.Index(t.l, "error: image ")
	return i >= 0 && strings.Contains(t.l[i:], " not found") && !t.h.any(manifestWord)
}

var manifestWord = newSet("manifest")

var v1ImagePhrase = newSet("error: image ")

// isFilesystem matches a local file operation failing on the node.
func isFilesystem(t *txt) bool {
	return t.h.any(filesystemPhrases)
}

var filesystemPhrases = newSet("open /", "mkdir /", "stat /", "lstat /", "rename /", "unlinkat /", "chmod /", "chown /", "remove /", "write /", "input/output error", "read-only file system", "too many open files", "cannot allocate memory", "failed to create temp", "readlink /", "symlink /")

// txt is one error chain prepared for the predicates: the lowercase text
// and the registered phrases it contains.
type txt struct {
	l string
	h hits
}

func newTxt(l string) *txt { return &txt{l: l, h: scanPhrases(l)} }
