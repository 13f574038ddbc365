package explain

import (
	"net/url"
	"strings"
	"sync"

	"github.com/pullpath/pullpath/internal/verdict"
)

// Result is the verdict for one pull failure message.
type Result struct {
	// Verdict holds layer, cause, role, owner, endpoint (host:port, default
	// port 443), summary, next steps and evidence (the innermost error,
	// redacted). Layer none means the message reports no pull failure.
	Verdict verdict.Verdict `json:"verdict"`
	// Image is the image reference when the message names it.
	Image string `json:"image,omitempty"`
	// Host is the failing host.
	Host string `json:"host,omitempty"`
	// URL is the innermost URL, its query string redacted.
	URL string `json:"url,omitempty"`
	// Runtime is the component whose error text the message carries:
	// "containerd", "cri-o", "docker", "podman", "skopeo", "crane",
	// "kubelet", or "" when the text does not say.
	Runtime string `json:"runtime,omitempty"`
	// Ambiguous lists other readings, each "cause: sentence", when the
	// text is honestly ambiguous.
	Ambiguous []string `json:"ambiguous,omitempty"`
	// Sandbox is set when the message is the pull of the node's sandbox
	// (pause) image that pod sandbox creation started: Image is then that
	// image, not the container's.
	Sandbox bool `json:"sandbox,omitempty"`
	// Endpoints lists every endpoint the text names when it names more than
	// one (containers/image's "(Mirrors also failed: ...)"), in the
	// runtime's plan order, each with its own failure and role. The
	// verdict is the failure of the first one that failed.
	Endpoints []Endpoint `json:"endpoints,omitempty"`
}

// Endpoint is one endpoint a message names, with its own failure.
type Endpoint struct {
	// Host is the endpoint's host; Endpoint is host:port.
	Host     string        `json:"host"`
	Endpoint string        `json:"endpoint,omitempty"`
	Role     verdict.Role  `json:"role,omitempty"`
	Layer    verdict.Layer `json:"layer"`
	Cause    string        `json:"cause,omitempty"`
	// Evidence is that endpoint's error text, redacted.
	Evidence string `json:"evidence,omitempty"`
}

// Failed reports whether r names a pull failure (any layer but none).
func (r Result) Failed() bool { return r.Verdict.Layer != verdict.LayerNone && r.Verdict.Layer != "" }

// Classify reads one pull failure message of any wrapping depth — a
// kubelet event, a container's waiting message, a runtime log line or a
// client's error — and returns the verdict for its innermost cause. Input
// beyond MaxMessageBytes is ignored. A message that reports no failure
// gets layer none.
func Classify(msg string) Result { return classify(msg, "") }

// classify is Classify with an image reference known from elsewhere (the
// container's image field), used when the text names no host.
func classify(msg, imageHint string) Result {
	s := normalize(capText(msg, MaxMessageBytes))
	l := lowerASCII(s)
	s, l = dropEngineStatus(s, l)
	full := newTxt(l)
	o := unwrapOuter(s, full)
	if o.image == "" {
		o.image = imageHint
	}
	var p part
	var others []part
	var endpoints []Endpoint
	switch {
	case o.cause != "":
		p = part{cause: o.cause, runtime: "kubelet", evidence: Redact(capText(s, 600))}
		if o.cause == verdict.CodeRegistryUnavailable || o.cause == verdict.CodeConfigPolicy {
			p.runtime = "cri-o"
		}
	default:
		dl := ""
		tail := len(o.detail) <= len(s) && s[len(s)-len(o.detail):] == o.detail
		if tail {
			dl = l[len(s)-len(o.detail):]
		} else {
			dl = lowerASCII(o.detail)
		}
		if full.has("(mirrors also failed: ") {
			if mp := splitMirrors(o.detail, dl); mp != nil {
				p, endpoints = planOrder(mp, detectRuntime(s, full))
				break
			}
		}
		var oneP, oneL [1]string
		parts, lower := splitAggregate(o.detail, dl)
		if parts == nil {
			oneP[0], oneL[0] = o.detail, dl
			parts, lower = oneP[:], oneL[:]
		}
		best := -1
		all := make([]part, len(parts))
		for i, d := range parts {
			var pt *txt
			if len(parts) == 1 && tail && len(d) == len(o.detail) {
				// The detail is the tail of the message: reuse its scan.
				pt = &txt{l: lower[i], h: full.h}
			} else {
				pt = newTxt(lower[i])
			}
			all[i] = analyze(d, pt, o.image)
			if best < 0 || verdict.LayerOf(all[i].cause).Rank() > verdict.LayerOf(all[best].cause).Rank() {
				best = i
			}
		}
		p = all[best]
		for i := range all {
			if i != best && all[i].cause != p.cause && all[i].cause != "" {
				others = append(others, all[i])
			}
		}
		if p.runtime == "" && o.kubelet {
			p.runtime = "kubelet"
		}
	}
	if p.cause == "" {
		return Result{Image: o.image, Runtime: p.runtime, Sandbox: o.sandbox, Verdict: verdict.Verdict{
			Layer: verdict.LayerNone, Summary: "The message reports no image pull failure.", Next: []string{}}}
	}
	if p.host == "" && o.image != "" && needsHost(p.cause) && p.role != verdict.RoleBlob && p.role != verdict.RoleProxy {
		ref := o.image
		if r := resolvedRef(s, l); r != "" {
			ref = r
		}
		p.host = imageDomain(ref)
		if p.role == verdict.RoleNone {
			p.role = verdict.RoleRegistry
		}
		if p.role == verdict.RoleAuth && p.host == "registry-1.docker.io" {
			p.host = "auth.docker.io"
		}
		if p.port == "" {
			p.port = imagePort(o.image)
		}
	}
	r := Result{Image: o.image, Host: p.host, URL: p.url, Runtime: p.runtime, Sandbox: o.sandbox, Endpoints: endpoints}
	endpoint := ""
	if p.host != "" {
		port := p.port
		if port == "" {
			port = "443"
		}
		endpoint = joinHostPort(p.host, port)
	}
	layer := verdict.LayerOf(p.cause)
	d := describe(p.cause, p.role, endpoint)
	summary := d.Summary
	if p.role == verdict.RoleBlob && (layer == verdict.LayerDNS || layer == verdict.LayerRoute || layer == verdict.LayerTLS) {
		summary = "Only the manifest endpoint is reachable: the registry answered, but the blob host it redirects layer downloads to fails. " + summary
	}
	r.Verdict = verdict.Verdict{
		Layer:    layer,
		Cause:    p.cause,
		Role:     p.role,
		Owner:    verdict.OwnerOf(p.cause),
		Endpoint: endpoint,
		Summary:  summary,
		Next:     d.Next,
		Evidence: p.evidence,
	}
	r.Ambiguous = ambiguity(p, l, o.image)
	for _, e := range endpoints[min(1, len(endpoints)):] {
		if e.Cause != "" && e.Cause != p.cause {
			r.Ambiguous = append(r.Ambiguous, e.Cause+": the runtime also tried "+verdict.RolePhrase(e.Role)+" "+e.Endpoint+
				" and it failed differently; the verdict is the first endpoint's, in the order the runtime tried them ("+capText(e.Evidence, 200)+")")
		}
	}
	for _, op := range others {
		r.Ambiguous = append(r.Ambiguous, op.cause+": the kubelet tried more than one credential and with another one the pull failed differently ("+capText(op.evidence, 200)+")")
		if strings.HasPrefix(op.cause, "auth.") && layer == verdict.LayerManifest {
			r.Ambiguous = append(r.Ambiguous[:len(r.Ambiguous)-1], op.cause+": the anonymous or other-credential attempt was refused (401), but the authenticated attempt shows the real problem: "+string(p.cause))
		}
	}
	return r
}

// dropEngineStatus removes the Docker Engine API's own status wrapper —
// `(HTTP code 500) server error - ` (docker clients, Kitematic, compose)
// and `API error (500): ` (old dockerd) — from a message. That status is
// the daemon's answer to its client, not the registry's, and read as a
// registry status it would turn every wrapped failure into a 5xx. l is the
// lowercase copy of s; both are returned with the wrapper removed.
func dropEngineStatus(s, l string) (string, string) {
	for n := 0; n < 4; n++ {
		i, end := -1, -1
		if j := strings.Index(l, "(http code "); j >= 0 && j+14 < len(l) && l[j+14] == ')' && isDigit(l[j+11]) && isDigit(l[j+12]) && isDigit(l[j+13]) {
			i, end = j, j+15
			// The reason words that follow, up to " - ".
			if k := strings.Index(l[end:], " - "); k >= 0 && k <= 40 {
				end += k + 3
			}
		} else if j := strings.Index(l, "api error ("); j >= 0 && j+15 <= len(l) && l[j+14] == ')' && isDigit(l[j+11]) && isDigit(l[j+12]) && isDigit(l[j+13]) {
			i, end = j, j+15
			if strings.HasPrefix(l[end:], ": ") {
				end += 2
			}
		}
		if i < 0 {
			break
		}
		s, l = s[:i]+s[end:], l[:i]+l[end:]
	}
	return s, l
}

// bareStatusAfterURL reports whether the chain ends in a bare status text
// right after an unquoted URL (`Get https://r/v2/: Forbidden`, Go before
// 1.14): like the quoted form isProxyRefusal reads, that is a proxy
// refusing CONNECT, since a registry's answer is never a transport error.
func bareStatusAfterURL(s string, urls []foundURL) bool {
	for _, f := range urls {
		end := f.start + len(f.raw)
		if end > len(s) || !strings.HasPrefix(s[end:], ": ") {
			continue
		}
		rest := s[end+2:]
		for _, r := range proxyRefusals {
			if strings.HasPrefix(rest, r) {
				tail := strings.TrimLeft(rest[len(r):], " ")
				if tail == "" || tail[0] == ']' || tail[0] == ',' || tail[0] == '"' || tail[0] == '\'' || tail[0] == '}' {
					return true
				}
			}
		}
	}
	return false
}

// proxyReasonAfterURL reports whether the chain ends in `Get <url>: <Reason
// Phrase>`: Go's transport returns the reason phrase of a proxy's non-200
// answer to CONNECT as the error text, whatever words the proxy chose
// ("AuthorizedOnly", "Forbidden by policy"). A reason phrase is one to
// five capitalised words of letters; a registry's own answer never reads
// like that (it comes with a status code or a lower-case error code).
func proxyReasonAfterURL(s string) bool {
	// The tail first (cheap, and it rules out nearly every message): the
	// text after the last ": ", at most 40 bytes.
	e := strings.TrimRight(s, " .\"')]}")
	k := len(e)
	for k > 0 && len(e)-k <= 41 && e[k-1] != ':' {
		k--
	}
	if k == 0 || e[k-1] != ':' || k >= len(e) || e[k] != ' ' {
		return false
	}
	reason := e[k+1:]
	if len(reason) < 3 || len(reason) > 40 || reason[0] < 'A' || reason[0] > 'Z' || reason == "EOF" {
		return false
	}
	words := 1
	for i := 0; i < len(reason); i++ {
		c := reason[i]
		switch {
		case c == ' ':
			words++
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		default:
			return false
		}
	}
	if words > 5 {
		return false
	}
	// Between the method and the reason only the URL, quoted or not (a
	// pasted "https: /host" counts as one).
	rest := e[:k-1]
	i := lastIndexAny(rest, "Get ", "Head ", "GET ", "HEAD ")
	if i < 0 {
		return false
	}
	u := rest[i+strings.IndexByte(rest[i:], ' ')+1:]
	u = strings.Trim(u, `"`)
	u = strings.Replace(u, "s: /", "s://", 1)
	return strings.HasPrefix(u, "http") && !strings.ContainsAny(u, " ")
}

// hasEmptyLabel reports whether a host name has an empty label (a leading,
// trailing or doubled dot), as a name cut out of a pasted URL leaves it.
func hasEmptyLabel(h string) bool {
	return strings.HasPrefix(h, ".") || strings.Contains(h, "..")
}

// needsHost reports whether a cause is about an endpoint, so that the
// image's registry stands in when the text names no host.
func needsHost(cause string) bool {
	switch verdict.LayerOf(cause) {
	case verdict.LayerConfig, verdict.LayerRuntime, verdict.LayerUnknown:
		return false
	}
	return true
}

func joinHostPort(h, p string) string {
	if strings.Contains(h, ":") {
		return "[" + h + "]:" + p
	}
	return h + ":" + p
}

// outer is what the kubelet and client wrappers around the runtime error
// say: the image, the detail text and a cause when the wrapper alone
// decides it.
type outer struct {
	image   string
	detail  string
	cause   string
	kubelet bool
	// sandbox is set when the pull is the sandbox image's, started by pod
	// sandbox creation; image is then the sandbox image.
	sandbox bool
}

// unwrapOuter strips the kubelet's wrappers (Failed to pull image,
// Back-off pulling image, image pull failed for ... because ...) and finds
// the image reference.
func unwrapOuter(s string, t *txt) outer {
	l := t.l
	o := outer{detail: s}
	o.image = findImage(s, t)
	if img := sandboxImage(s, t); img != "" {
		o.image, o.sandbox = img, true
	}
	switch {
	case t.has("with pull policy of never") || t.has("errimageneverpull"):
		o.cause, o.kubelet = verdict.CodeConfigNeverPull, true
		return o
	case t.has("failed to apply default image tag") || t.has("invalidimagename"):
		o.cause, o.kubelet = verdict.CodeConfigReference, true
		return o
	}
	if i := indexIf(t, "back-off pulling image "); i >= 0 {
		o.kubelet = true
		rest := cutKlogTail(afterQuoted(s, i+len("back-off pulling image ")))
		if isEmptyDetail(rest) {
			o.cause = verdict.CodeUnknownBackoff
			return o
		}
		o.detail = rest
	}
	if i := indexIf(t, "failed to pull image "); i >= 0 {
		o.kubelet = true
		o.detail = afterQuoted(s, i+len("failed to pull image "))
	}
	if i := indexIf(t, "image pull failed for "); i >= 0 {
		o.kubelet = true
		rest := s[i:]
		rl := l[i:]
		for _, because := range []string{"because the registry is unavailable", "because the signature validation failed"} {
			if j := strings.Index(rl, because); j >= 0 {
				d := strings.TrimLeft(rest[j+len(because):], " :")
				if isEmptyDetail(d) {
					if strings.Contains(because, "signature") {
						o.cause = verdict.CodeConfigPolicy
					} else {
						o.cause = verdict.CodeRegistryUnavailable
					}
					return o
				}
				o.detail = d
			}
		}
	}
	if isEmptyDetail(o.detail) {
		o.cause = verdict.CodeUnknownBackoff
		o.kubelet = true
	}
	return o
}

// cutKlogTail cuts the key/value pairs a structured kubelet log line puts
// after its err="..." value (` pod="ns/name" podUID=...`, ` image="..."`):
// they name the pod, not the failure.
func cutKlogTail(d string) string {
	best := -1
	for _, k := range []string{`" pod=`, `" poduid=`, `" podUID=`, `" image=`, `" containerName=`} {
		if i := strings.Index(d, k); i >= 0 && (best < 0 || i < best) {
			best = i
		}
	}
	if best < 0 {
		return d
	}
	return d[:best+1]
}

// isEmptyDetail reports whether a detail carries nothing but kubelet
// reason words (Error: ErrImagePull, ImagePullBackOff).
func isEmptyDetail(d string) bool {
	t := strings.TrimSpace(d)
	for t != "" {
		before := t
		t = strings.TrimLeft(t, " :.\"'[]")
		for _, w := range []string{"error", "errimagepull", "imagepullbackoff", "back-off pulling image", "warning", "failed"} {
			if len(t) >= len(w) && strings.EqualFold(t[:len(w)], w) {
				t = t[len(w):]
			}
		}
		if t == before {
			return false
		}
	}
	return true
}

// afterQuoted returns what follows the quoted string that starts at or
// after i, without the ": " separator.
func afterQuoted(s string, i int) string {
	rest := s[i:]
	if strings.HasPrefix(rest, "\"") {
		if j := strings.IndexByte(rest[1:], '"'); j >= 0 {
			rest = rest[j+2:]
		}
	} else if j := strings.IndexByte(rest, ' '); j >= 0 {
		rest = rest[j:]
	} else {
		rest = ""
	}
	rest = strings.TrimLeft(rest, " :")
	return rest
}

// findImage returns the image reference the message names.
func findImage(s string, t *txt) string {
	l := t.l
	if !t.h.any(psImageHint) {
		return leadingRef(s)
	}
	for _, pre := range []string{"failed to pull image ", "back-off pulling image ", "failed to pull and unpack image ",
		"failed to resolve reference ", "container image ", "pullimage ", "pulling image ", "failed to apply default image tag ",
		"failed to inspect image ", "image "} {
		if !t.has(pre) {
			continue
		}
		if img, ok := quotedAfter(s, l, pre); ok && plausibleRef(img) {
			return img
		}
	}
	for _, pre := range []string{"failed to pull image ", "initializing source docker://", "pull access denied for ", "image pull failed for ",
		"trying to pull repository ", "pulling repository ", "trying to pull ", "error: unable to pull ", "manifest for ", "pulling image docker://",
		"reading manifest ", "suggest the author of "} {
		if !t.has(pre) {
			continue
		}
		if w, off := wordAfter(s, l, pre); w != "" && plausibleRef(w) {
			if pre == "trying to pull " && !strings.ContainsAny(w, "/:@") {
				// podman names a qualified reference; a bare word is prose
				// ("trying to pull an unqualified image", "... repository").
				continue
			}
			if (pre == "trying to pull repository " || pre == "pulling repository ") && !hasDomain(w) {
				// Docker 1.x names the repository without its registry
				// ("Status 403 trying to pull repository library/x").
				continue
			}
			w = strings.TrimSuffix(w, "...")
			if pre == "manifest for " && !strings.HasPrefix(l[off+len(w):], " not found") {
				continue
			}
			if pre == "reading manifest " {
				// reading manifest <tag> in <repo>
				i := strings.Index(l, pre)
				rest := l[i+len(pre):]
				if j := strings.Index(rest, " in "); j > 0 && !strings.Contains(rest[:j], " ") {
					repo, _ := wordAfter(s[i+len(pre)+j:], rest[j:], " in ")
					if repo != "" {
						if strings.HasPrefix(w, "sha256:") {
							return repo + "@" + w
						}
						return repo + ":" + w
					}
				}
				continue
			}
			return w
		}
	}
	if img := engineAPIImage(l); img != "" {
		return img
	}
	return leadingRef(s)
}

// sandboxImage returns the sandbox (pause) image whose pull a pod sandbox
// creation failed on, or "": containerd's `failed to get sandbox image
// "<ref>"` and `failed to inspect sandbox image "<ref>"`, dockershim's
// `failed pulling image "<ref>"` and a kubelet pull wrapper inside a
// `Failed to create pod sandbox` / `CreatePodSandbox` / `RunPodSandbox`
// text. The image is the runtime's sandbox image (containerd's
// sandbox_image / pinned sandbox image, CRI-O's pause_image, the kubelet's
// --pod-infra-container-image with dockershim), not the container's.
func sandboxImage(s string, t *txt) string {
	if !t.h.any(sandboxPhrases) {
		return ""
	}
	for _, pre := range []string{"failed to get sandbox image ", "failed to inspect sandbox image ", "failed pulling image ",
		"failed to pull image ", "initializing source docker://"} {
		if !t.has(pre) {
			continue
		}
		if img, ok := quotedAfter(s, t.l, pre); ok && plausibleRef(img) {
			return img
		}
		if pre == "initializing source docker://" {
			if w, _ := wordAfter(s, t.l, pre); w != "" && plausibleRef(w) {
				return w
			}
		}
	}
	return ""
}

var sandboxPhrases = newSet("sandbox image ", "pod sandbox", "podsandbox")

// mirrorPart is one endpoint's attempt in a containers/image message that
// names several: the reference tried there, its error text (and the
// lowercase copy), and whether it was a mirror or the primary location.
type mirrorPart struct {
	ref, text, lower string
	mirror           bool
}

// splitMirrors splits containers/image's report of a pull that failed on
// every endpoint, `(Mirrors also failed: [<ref>: <err>] [<ref>: <err>]):
// <primary ref>: <primary err>` (the mirrors in the order tried, the
// primary last), into its attempts in that order. dl is the lowercase copy
// of d. A text without the wrapper gives nil.
func splitMirrors(d, dl string) []mirrorPart {
	const w = "(mirrors also failed: "
	i := strings.Index(dl, w)
	if i < 0 {
		return nil
	}
	var out []mirrorPart
	j := i + len(w)
	for len(out) < 16 {
		for j < len(d) && d[j] == ' ' {
			j++
		}
		if j >= len(d) || d[j] != '[' {
			break
		}
		// The item ends at the "]" that a "[", a ")" or the end follows:
		// an error text may hold brackets of its own.
		end := -1
		for k := j + 1; k < len(d); {
			c := strings.IndexByte(d[k:], ']')
			if c < 0 {
				break
			}
			k += c
			rest := strings.TrimLeft(d[k+1:], " ")
			if rest == "" || rest[0] == '[' || rest[0] == ')' {
				end = k
				break
			}
			k++
		}
		if end < 0 {
			end = len(d)
		}
		if ref, text, lower, ok := cutAttempt(d[j+1:end], dl[j+1:end]); ok {
			out = append(out, mirrorPart{ref: ref, text: text, lower: lower, mirror: true})
		}
		j = end + 1
	}
	if len(out) == 0 {
		return nil
	}
	for j < len(d) && d[j] == ' ' {
		j++
	}
	if j < len(d) && d[j] == ')' {
		rest, restL := d[j+1:], dl[j+1:]
		if strings.HasPrefix(rest, ": ") {
			if ref, text, lower, ok := cutAttempt(rest[2:], restL[2:]); ok {
				out = append(out, mirrorPart{ref: ref, text: text, lower: lower})
			}
		}
	}
	return out
}

// cutAttempt splits `<ref>: <error>` into the reference and the error.
func cutAttempt(s, l string) (ref, text, lower string, ok bool) {
	i := strings.Index(s, ": ")
	if i <= 0 {
		return "", "", "", false
	}
	ref = strings.TrimSpace(s[:i])
	if !plausibleRef(ref) || !strings.Contains(ref, "/") {
		return "", "", "", false
	}
	return ref, strings.TrimSpace(s[i+2:]), strings.TrimSpace(l[i+2:]), true
}

// planOrder analyses every attempt of a several-endpoint message and
// returns the verdict part, the failure of the first endpoint in the
// runtime's plan order that names one, with every endpoint and its own
// failure. Each attempt's host is the registry of the reference tried
// there when the error names none; a mirror's role is mirror.
func planOrder(mp []mirrorPart, runtime string) (part, []Endpoint) {
	parts := make([]part, len(mp))
	eps := make([]Endpoint, 0, len(mp))
	first := -1
	for k, m := range mp {
		e := analyze(m.text, newTxt(m.lower), m.ref)
		if e.host == "" && needsHost(e.cause) && e.role != verdict.RoleBlob && e.role != verdict.RoleProxy {
			e.host, e.port = imageDomain(m.ref), imagePort(m.ref)
		}
		if needsHost(e.cause) {
			switch {
			case m.mirror && (e.role == verdict.RoleNone || e.role == verdict.RoleRegistry):
				e.role = verdict.RoleMirror
			case !m.mirror && e.role == verdict.RoleNone:
				e.role = verdict.RoleRegistry
			}
		}
		if e.runtime == "" {
			e.runtime = runtime
		}
		parts[k] = e
		if first < 0 && e.cause != "" {
			first = k
		}
		ep := Endpoint{Host: e.host, Role: e.role, Layer: verdict.LayerOf(e.cause), Cause: e.cause, Evidence: e.evidence}
		if e.cause == "" {
			ep.Layer = verdict.LayerNone
		}
		if e.host != "" {
			port := e.port
			if port == "" {
				port = "443"
			}
			ep.Endpoint = joinHostPort(e.host, port)
		}
		eps = append(eps, ep)
	}
	if first < 0 {
		first = 0
	}
	return parts[first], eps
}

// hasDomain reports whether a reference starts with a registry domain
// (a first component with a dot or a port, or localhost).
func hasDomain(ref string) bool {
	i := strings.IndexByte(ref, '/')
	if i < 0 {
		return false
	}
	d := ref[:i]
	return strings.ContainsAny(d, ".:") || d == "localhost"
}

// engineAPIImage returns the image of a Docker Engine API URL that a
// client printed (`.../images/create?tag=1&fromImage=registry%3A5000%2Fapp:`),
// or "".
func engineAPIImage(l string) string {
	i := strings.Index(l, "/images/create?")
	if i < 0 {
		return ""
	}
	j := strings.Index(l[i:], "fromimage=")
	if j < 0 {
		return ""
	}
	v := l[i+j+len("fromimage="):]
	if k := strings.IndexAny(v, "& \"'"); k >= 0 {
		v = v[:k]
	}
	v = strings.TrimRight(v, ":")
	ref, err := url.QueryUnescape(v)
	if err != nil || !plausibleRef(ref) {
		return ""
	}
	return ref
}

// leadingRef returns the reference a client error starts with
// (`docker.io/library/openjdk: toomanyrequests: ...`): a first token with
// a registry domain, followed by ": ".
func leadingRef(s string) string {
	i := strings.Index(s, ": ")
	if i <= 0 || strings.ContainsAny(s[:i], " \"'") {
		return ""
	}
	ref := s[:i]
	if !hasDomain(ref) || !plausibleRef(ref) || strings.Contains(ref, "://") {
		return ""
	}
	return ref
}

// splitAggregate splits the kubelet's aggregate of several credentials'
// errors, `[err1, err2]`, into its parts. dl is the lowercase copy of d
// (same offsets); each part comes with its lowercase copy, sliced from dl,
// so that no part is lowercased again. A text that is no aggregate gives
// nil: it is its own single part.
func splitAggregate(d, dl string) (parts, lower []string) {
	t, tl := trimSpaceBoth(d, dl)
	if !strings.HasPrefix(t, "[") {
		return nil, nil
	}
	t, tl = t[1:], tl[1:]
	if strings.HasSuffix(t, "]") {
		t, tl = t[:len(t)-1], tl[:len(tl)-1]
	}
	for {
		i := strings.Index(tl, ", rpc error:")
		if i < 0 {
			break
		}
		parts, lower = append(parts, t[:i]), append(lower, tl[:i])
		t, tl = t[i+2:], tl[i+2:]
		if len(parts) >= 16 {
			break
		}
	}
	return append(parts, t), append(lower, tl)
}

// trimSpaceBoth is strings.TrimSpace on s and, at the same offsets, on its
// lowercase copy l.
func trimSpaceBoth(s, l string) (string, string) {
	t := strings.TrimLeft(s, " \t\n\r")
	l = l[len(s)-len(t):]
	u := strings.TrimRight(t, " \t\n\r")
	return u, l[:len(u)]
}

// part is the analysis of one runtime error chain.
type part struct {
	cause    string
	role     verdict.Role
	host     string
	port     string
	url      string
	runtime  string
	evidence string
	status   int
	anon     bool
	hub      bool
}

// analyze finds the innermost cause, the failing host and its role in one
// error chain.
func analyze(s string, t *txt, image string) part {
	l := t.l
	p := part{runtime: detectRuntime(s, t)}
	status := httpStatus(l)
	p.status = status
	urls := findURLs(s, l)
	var inner *foundURL
	for i := len(urls) - 1; i >= 0; i-- {
		if !docHosts[hostOf(urls[i].u)] {
			inner = &urls[i]
			break
		}
	}
	blobCtx := t.h.any(blobContextPhrases) || t.h.any(unexpectedEOFPhrase) && !isResolving(t)
	authCtx := t.h.any(tokenContextPhrases)
	p.anon = t.has("anonymous")

	// Role and host from the innermost URL, else from context.
	var u *url.URL
	if inner != nil {
		u = inner.u
		p.url = redactURL(u)
		p.host = hostOf(u)
		if hasEmptyLabel(p.host) {
			// A name cut out of the URL (https://.azurecr.io/v2/) names
			// no host; the path still tells the role.
			p.host = ""
		}
		p.port = u.Port()
		if p.port == "" && strings.EqualFold(u.Scheme, "http") {
			p.port = "80"
		}
		p.role = roleOfURL(u)
		if p.role == verdict.RoleRegistry && blobCtx && !strings.HasPrefix(u.Path, "/v2/") && !strings.HasPrefix(u.Path, "/v1/") {
			// A download is running and the URL is no registry API path:
			// it is the storage URL the registry redirected the layer to.
			p.role = verdict.RoleBlob
		}
	}
	if p.role == verdict.RoleRegistry && authCtx && u != nil && !strings.Contains(u.Path, "/manifests/") && !isBlobPath(u.Path) &&
		strings.Contains(l[inner.start:], "token") {
		// A token request whose realm has an unusual path.
		p.role = verdict.RoleAuth
	}
	if u == nil {
		switch {
		case blobCtx:
			p.role = verdict.RoleBlob
		case authCtx:
			p.role = verdict.RoleAuth
		case t.h.any(registryContextPhrases):
			p.role = verdict.RoleRegistry
		}
		for _, pre := range []string{"pinging container registry ", "pinging docker registry ", "pulling from host ", "registry "} {
			if !t.has(pre) {
				continue
			}
			if w, _ := wordAfter(s, l, pre); w != "" {
				// containerd names the host it pulled from, an address too;
				// the other wordings name a registry only by its name.
				if h, port := hostToken(w); validHost(h) && (!isIP(h) || pre == "pulling from host ") || h == "localhost" {
					p.host, p.port = h, port
					if pre == "pulling from host " && image != "" && !sameRegistry(h, imageDomain(image)) {
						// Not the image's registry: a mirror from hosts.toml.
						p.role = verdict.RoleMirror
					}
					if p.role == verdict.RoleNone {
						p.role = roleOfHost(h)
					}
					break
				}
			}
		}
	}
	// The dial target names the address (and port) that failed.
	var dialHost, dialPort string
	if t.h.any(psDial) {
		dialHost, dialPort = dialTarget(s, l)
	}
	if p.host == "" && dialHost != "" && (p.role == verdict.RoleBlob || image == "") {
		p.host, p.port = dialHost, dialPort
		if p.role == verdict.RoleNone {
			p.role = roleOfHost(dialHost)
		}
	}
	if p.port == "" && dialPort != "" && (dialHost == p.host || isIP(dialHost)) && p.host != "" {
		p.port = dialPort
	}

	// A transfer can only be cut once a download runs: a HEAD on a blob
	// URL downloads nothing.
	downloading := blobCtx || p.role == verdict.RoleBlob && (inner == nil || inner.method != "HEAD")
	p.cause = detectCause(t, status, p.role, downloading)
	if (verdict.LayerOf(p.cause).Rank() >= verdict.LayerAuth.Rank() || verdict.LayerOf(p.cause) == verdict.LayerUnknown) &&
		(isProxyRefusal(s) || bareStatusAfterURL(s, urls) || proxyReasonAfterURL(s)) {
		p.cause = verdict.CodeRouteProxy
	}

	switch verdict.LayerOf(p.cause) {
	case verdict.LayerDNS:
		// The name that failed to resolve is the failing host.
		if h := lookupHost(s, l); h != "" {
			if h != p.host {
				p.port = ""
				if u != nil && p.role == verdict.RoleMirror {
					p.role = verdict.RoleRegistry
				}
				if u == nil || !sameRegistry(h, hostOf(u)) {
					p.role = roleOfHostCtx(h, p.role, image)
				}
			}
			p.host = h
		}
	case verdict.LayerTLS:
		// x509 names the host it verified: "..., not <host>", "wanted to
		// match <host>", "validate certificate for <ip>".
		if h := tlsHost(s, l); h != "" && (p.host == "" || u == nil) {
			p.host, p.port = h, ""
			if p.role == verdict.RoleNone || p.role == verdict.RoleRegistry {
				p.role = roleOfHostCtx(h, p.role, image)
			}
		}
	case verdict.LayerRoute:
		if p.cause == verdict.CodeRouteProxy {
			// The failing hop is the proxy: its address when the message
			// names it (proxyconnect), else unknown.
			p.role = verdict.RoleProxy
			p.host, p.port = "", ""
			if h, port := proxyTarget(s, l); h != "" {
				p.host, p.port = h, port
			}
		}
	}
	if p.role == verdict.RoleNone && p.host != "" && p.cause != verdict.CodeRouteProxy {
		p.role = roleOfHost(p.host)
	}
	if verdict.LayerOf(p.cause) == verdict.LayerTransfer && p.role == verdict.RoleNone {
		// A transfer failure is a layer download even when no URL says so.
		p.role = verdict.RoleBlob
	}
	if p.host == "" && p.role == verdict.RoleNone && (image != "" && needsHost(p.cause) || p.cause == verdict.CodeAuthzIPDenied) {
		p.role = verdict.RoleRegistry
	}
	// A refusal on a storage host is a blob download the storage refused.
	if p.role == verdict.RoleBlob && (strings.HasPrefix(p.cause, "auth.") || strings.HasPrefix(p.cause, "authz.") ||
		p.cause == verdict.CodeManifestUnknown || p.cause == verdict.CodeManifestNameUnknown) &&
		(isBlobHost(p.host) || isStorageDenied(t) || image != "" && p.host != "" && !sameRegistry(p.host, imageDomain(image))) {
		p.cause = verdict.CodeTransferStatus
	}
	if l := verdict.LayerOf(p.cause); l == verdict.LayerRuntime || l == verdict.LayerConfig {
		// The node's own failure: no endpoint is to blame.
		p.role, p.host, p.port = verdict.RoleNone, "", ""
	}
	p.hub = sameRegistry(p.host, "docker.io") || p.host == "auth.docker.io" || image != "" && sameRegistry(imageDomain(image), "docker.io")
	p.evidence = evidenceOf(s, l)
	return p
}

var registryContextPhrases = newSet("pinging container registry", "pinging docker registry", "pulling from host ")

var tokenContextPhrases = newSet("failed to fetch anonymous token", "failed to fetch oauth token", "fetching token", "oauth token", "anonymous token", "token endpoint", "get token", "getting token", "requesting bear token", "requesting bearer token", "failed to authorize", "fetch token", "obtain token", "retrieve auth token", "auth token:")

var unexpectedEOFPhrase = newSet("unexpected eof")

var blobContextPhrases = newSet("httpreadseeker", "failed to copy", "reading blob", "fetching blob", "fetch blob", "downloading blob", "error pulling image configuration", "download failed after attempts", "failed to fetch layer", "copying blob", "writing blob", "storing blob", "happened during read", "pulling fs layer", "failed to download layer", "error downloading", "layer download", "blob download", "could not fetch content", "download failed", "layer verification", "filesystem layer", "pulling blob")

// isResolving reports whether the chain is about resolving the reference
// (the manifest request or the ping), with no layer download named.
func isResolving(t *txt) bool {
	return t.h.any(resolvePhrases) && !t.h.any(blobContextPhrases)
}

var resolvePhrases = newSet("failed to resolve reference", "pinging container registry", "pinging docker registry", "reading manifest")

// roleOfHostCtx decides the role of a host named only by a DNS lookup.
func roleOfHostCtx(h string, current verdict.Role, image string) verdict.Role {
	r := roleOfHost(h)
	if r != verdict.RoleRegistry {
		return r
	}
	if image != "" && !sameRegistry(h, imageDomain(image)) && current == verdict.RoleBlob {
		return verdict.RoleBlob
	}
	if current == verdict.RoleAuth || current == verdict.RoleBlob {
		return current
	}
	return verdict.RoleRegistry
}

// lookupHost returns the name in the innermost "lookup <name>".
func lookupHost(s, l string) string {
	i := strings.LastIndex(l, "lookup ")
	if i < 0 {
		for _, pre := range []string{"could not resolve host: ", "could not resolve host ", "getaddrinfo enotfound ", "unknown host "} {
			if w, _ := wordAfter(s, l, pre); w != "" {
				if h, _ := hostToken(w); validHost(h) {
					return h
				}
			}
		}
		return ""
	}
	w, _ := wordAfter(s[i:], l[i:], "lookup ")
	h, _ := hostToken(w)
	h = strings.TrimSuffix(h, ".")
	if !validHost(h) && !validLabel(h) {
		return ""
	}
	return h
}

// dialTarget returns the address in the innermost "dial tcp <addr>" or
// "connect to <addr>", or "" when the dial had no address (DNS failed).
func dialTarget(s, l string) (host, port string) {
	for _, pre := range []string{"dial tcp4 ", "dial tcp6 ", "dial tcp ", "connecting to ", "connect to "} {
		if pre != "dial tcp " && !strings.Contains(l, strings.TrimSpace(pre)) {
			continue
		}
		i := strings.LastIndex(l, pre)
		if i < 0 {
			continue
		}
		w, _ := wordAfter(s[i:], l[i:], pre)
		if strings.HasPrefix(w, "lookup") {
			return "", ""
		}
		h, p := hostToken(w)
		if validHost(h) {
			return h, p
		}
	}
	// read tcp <src>-><dst>: ...
	if i := strings.LastIndex(l, "->"); i >= 0 && lastIndexAny(l, "read tcp", "write tcp") >= 0 {
		w, _ := wordAfter(s[i:], l[i:], "->")
		if h, p := hostToken(w); validHost(h) {
			return h, p
		}
	}
	return "", ""
}

// proxyTarget returns the proxy address of a proxyconnect error.
func proxyTarget(s, l string) (host, port string) {
	i := strings.Index(l, "proxyconnect tcp: ")
	if i < 0 {
		return "", ""
	}
	rest, restL := s[i:], l[i:]
	if h := lookupHost(rest, restL); h != "" {
		return h, ""
	}
	return dialTarget(rest, restL)
}

// detectCause applies the cause predicates in order: configuration and
// node failures first (they stop a pull whatever the network does), then
// the network path (proxy, TLS, DNS, route), then what the registry
// answered, then bare deadlines.
func detectCause(t *txt, status int, role verdict.Role, blob bool) string {
	l := t.l
	lookupAt := strings.LastIndex(l, "lookup ")
	switch {
	case isNeverPull(t):
		return verdict.CodeConfigNeverPull
	case isPolicy(t):
		return verdict.CodeConfigPolicy
	case isBadReference(t):
		return verdict.CodeConfigReference
	case isCredentialConfig(t):
		return verdict.CodeConfigCredentials
	case isHostsConfig(t):
		return verdict.CodeConfigHostsTOML
	case isCAFile(t):
		return verdict.CodeConfigCAFile
	case isNoResolver(t):
		return verdict.CodeConfigResolvConf
	case isRuntimeSocket(t):
		return verdict.CodeRuntimeError
	case isDiskFull(t):
		return verdict.CodeRuntimeDisk
	case isKubeletThrottle(t):
		return verdict.CodeRuntimeThrottled
	case isContentStore(t):
		return verdict.CodeRuntimeContentStore
	case isDigest(t):
		return verdict.CodeTransferDigest
	case isSize(t):
		return verdict.CodeTransferSize
	case isManifestInvalid(t) && t.h.any(mediaTypeWords):
		// An unusable manifest stops the unpack before any layer.
		return verdict.CodeManifestInvalid
	case isUnpack(t):
		return verdict.CodeRuntimeUnpack
	case isSnapshotter(t):
		return verdict.CodeRuntimeSnapshotter
	case isRedirectLoop(t):
		return verdict.CodeTransferRedirect
	case isProxy(t):
		return verdict.CodeRouteProxy
	case isTLSName(t):
		return verdict.CodeTLSName
	case isTLSExpired(t):
		return verdict.CodeTLSExpired
	case isTLSUntrusted(t):
		return verdict.CodeTLSUntrusted
	case isPlainHTTP(t):
		return verdict.CodeTLSPlainHTTP
	case isTLSTimeout(t):
		return verdict.CodeTLSTimeout
	case isNoAddress(t):
		return verdict.CodeDNSNoAddress
	case isNXDomain(t):
		return verdict.CodeDNSNXDomain
	case isServfail(t):
		return verdict.CodeDNSServFail
	case isDNSUnreachable(t, lookupAt):
		return verdict.CodeDNSUnreachable
	case isDNSTimeout(t, lookupAt):
		return verdict.CodeDNSTimeout
	case isDNSBusy(t, lookupAt):
		return verdict.CodeDNSServFail
	case isRefused(t):
		return verdict.CodeRouteRefused
	case isUnreachable(t) || t.has("connect: operation not permitted"):
		return verdict.CodeRouteUnreachable
	case isIPDenied(t):
		return verdict.CodeAuthzIPDenied
	case isRateLimit(t, status):
		return verdict.CodeRegistryRatelimit
	case isNoProgress(t):
		return verdict.CodeTransferNoProgress
	case isHeaderWait(t):
		if blob {
			// Headers that never came for a layer download.
			return verdict.CodeTransferTimeout
		}
		return verdict.CodeRegistryNoAnswer
	case isConnectTimeout(t):
		if blob && (t.h.any(awaitingHeadersPhrases) || t.has("read: connection timed out")) {
			// Headers or bytes that stopped coming during a download.
			return verdict.CodeTransferTimeout
		}
		return verdict.CodeRouteTimeout
	case isReadTimeout(t):
		if blob {
			// The bytes of a running download stopped coming.
			return verdict.CodeTransferTimeout
		}
		// A read timed out: the connection was made and the answer
		// never came.
		return verdict.CodeRegistryNoAnswer
	case isTLSOther(t):
		return verdict.CodeTLSHandshake
	case isReset(t):
		if blob || t.has("unexpected eof") && !isResolving(t) {
			return verdict.CodeTransferReset
		}
		return verdict.CodeRouteReset
	case status >= 500 || t.h.any(serverErrorPhrases):
		return verdict.CodeRegistryUnavailable
	case t.has("no basic auth credentials"):
		// ECR's Basic challenge with no credential: containerd wraps it in
		// "pull access denied", but the text says what is missing.
		return verdict.CodeAuthNoCredentials
	case isDeniedOrMissing(t):
		// Docker's "pull access denied ... may require 'docker login'"
		// wraps whatever the registry said; an expired or rejected
		// credential in that inner text is the real answer.
		if t.h.any(expiredTokenPhrases) || t.h.any(rejectedCredentialPhrases) {
			return verdict.CodeAuthBadCredentials
		}
		return verdict.CodeAuthzDeniedOrMissing
	case isPlatform(t):
		return verdict.CodeManifestPlatform
	case isManifestInvalid(t):
		return verdict.CodeManifestInvalid
	case isBlobUnknown(t):
		return verdict.CodeTransferStatus
	case isStorageDenied(t) && (blob || role == verdict.RoleBlob):
		return verdict.CodeTransferStatus
	case isNameUnknown(t):
		return verdict.CodeManifestNameUnknown
	case isV1NotFound(t):
		return verdict.CodeAuthzDeniedOrMissing
	case isManifestUnknown(t):
		return verdict.CodeManifestUnknown
	}
	if c := authCause(t, status, role); c != "" {
		return c
	}
	switch {
	case isTokenProblem(t):
		return verdict.CodeAuthToken
	case status == 404 || endsNotFound(t):
		switch role {
		case verdict.RoleAuth:
			return verdict.CodeAuthToken
		case verdict.RoleBlob:
			return verdict.CodeTransferStatus
		}
		return verdict.CodeManifestUnknown
	case status >= 400 || t.h.any(unexpectedStatusPhrases) || isHTMLAnswer(t):
		if role == verdict.RoleBlob {
			return verdict.CodeTransferStatus
		}
		if role == verdict.RoleAuth {
			return verdict.CodeAuthToken
		}
		return verdict.CodeRegistryProtocol
	case isGoLookup(l, lookupAt):
		// A name lookup failed with an error no predicate names: the
		// resolver failed, as for "device or resource busy".
		return verdict.CodeDNSServFail
	case strings.Contains(l, "dial tcp ") || strings.Contains(l, "connectex: "):
		// The TCP connect failed with an OS error no predicate names.
		return verdict.CodeRouteConnect
	case isFilesystem(t):
		return verdict.CodeRuntimeError
	case isReadTimeout(t):
		return verdict.CodeTransferTimeout
	case isRuntimeCanceled(t):
		return verdict.CodeTransferNoProgress
	case isKubeletDeadline(t):
		return verdict.CodeUnknownKubeletDeadline
	case isDeadline(t) && blob:
		// A deadline while a named download ran: the download stalled.
		return verdict.CodeTransferTimeout
	case isDeadline(t):
		return verdict.CodeUnknownDeadline
	case isCanceled(t):
		return verdict.CodeUnknownCanceled
	case t.h.any(failureMarkers):
		return "unknown"
	}
	return ""
}

var rejectedCredentialPhrases = newSet("incorrect username or password", "invalid username/password", "authentication failed", "bad credentials")

var expiredTokenPhrases = newSet("token has expired", "token is expired", "authorization token has expired", "expired token", "token expired", "invalid_token", "the security token included in the request is invalid")

var failureMarkers = newSet("error", "failed", "errimagepull", "imagepullbackoff", "cannot", "unable", "fatal", "denied", "refused", "invalid", "can't", "couldn't", "could not")

var unexpectedStatusPhrases = newSet("unexpected status", "unexpected http status", "received unexpected http status")

var serverErrorPhrases = newSet("internal server error", "bad gateway", "service unavailable", "gateway timeout", "gateway time-out", "temporarily unavailable", "server error", "upstream connect error")

var awaitingHeadersPhrases = newSet("awaiting response headers", "while awaiting headers")

var mediaTypeWords = newSet("media type", "mediatype", "schema 1", "schema1")

// authCause decides between the auth and authz causes from the status and
// the registry's words.
func authCause(t *txt, status int, role verdict.Role) string {
	if t.h.any(anonymousRefusalPhrases) {
		return verdict.CodeAuthNoCredentials
	}
	expired := t.h.any(expiredTokenPhrases)
	switch {
	case status == 401 || (status != 403 && isUnauthorized(t, status)):
		switch {
		case isBadCredentials(t):
			return verdict.CodeAuthBadCredentials
		case isNoCredentials(t):
			return verdict.CodeAuthNoCredentials
		case t.h.any(repositoryScopePhrases):
			// A 401 that names the repository scope the identity lacks
			// (Harbor, distribution's insufficient_scope) is a refusal
			// of this repository, not of the credential.
			return verdict.CodeAuthzDenied
		}
		return verdict.CodeAuthNoCredentials
	case status == 403 || isForbidden(t, status):
		if expired {
			return verdict.CodeAuthBadCredentials
		}
		return verdict.CodeAuthzDenied
	case expired || t.h.any(rejectedCredentialPhrases):
		return verdict.CodeAuthBadCredentials
	}
	return ""
}

var repositoryScopePhrases = newSet("unauthorized to access repository", "insufficient_scope", "insufficient scope")

var anonymousRefusalPhrases = newSet("unauthenticated request", "anonymous request", "unauthenticated requests do not have permission")

// detectRuntime names the component whose error text the chain carries.
func detectRuntime(s string, t *txt) string {
	l := t.l
	switch {
	case t.has("skopeo"):
		return "skopeo"
	case t.has("podman") || t.has("trying to pull ") && !t.has("rpc error"):
		return "podman"
	case t.has("error response from daemon") || t.has("docker pull"):
		return "docker"
	case t.h.any(crioPhrases):
		if strings.HasPrefix(l, "error: ") && !t.has("rpc error") {
			return "podman"
		}
		if t.has("level=fatal") {
			return "skopeo"
		}
		return "cri-o"
	case t.h.any(containerdPhrases):
		return "containerd"
	case t.h.any(dockerPhrases):
		return "docker"
	case isGGCR(s, l):
		return "crane"
	case t.h.any(kubeletPhrases):
		return "kubelet"
	}
	return ""
}

var kubeletPhrases = newSet("failed to pull image", "back-off pulling image", "errimagepull", "imagepullbackoff", "kubelet")

var dockerPhrases = newSet("download failed after attempts", "error pulling image configuration", "pull access denied for ", "docker daemon", "manifest for ", "docker: ", "dockerd")

var containerdPhrases = newSet("failed to pull and unpack image", "failed to resolve reference", "failed to resolve image", "httpreadseeker", "failed to do request", "failed to fetch anonymous token", "failed to fetch oauth token", "pulling from host", "unexpected status from", "failed to authorize", "failed to copy:", "no match for platform in manifest", "failed to extract layer", "containerd", "failed to prepare extraction snapshot", "ctr: ")

var crioPhrases = newSet("initializing source docker://", "pinging container registry", "pinging docker registry", "reading manifest ", "registryunavailable", "choosing an image from manifest list", "copying system image", "writing blob", "reading blob", "cri-o", "crio", "parsing image configuration", "fetching blob")

// isGGCR recognises go-containerregistry's transport errors:
// `GET https://...: UNAUTHORIZED: ...` and its HEAD-without-body note.
func isGGCR(s, l string) bool {
	if strings.Contains(l, "crane") || strings.Contains(l, "head responses have no body") || strings.Contains(l, "ggcr") {
		return true
	}
	for _, m := range []string{"GET https://", "HEAD https://", "POST https://", "GET http://", "HEAD http://"} {
		i := strings.Index(s, m)
		if i < 0 {
			continue
		}
		rest := s[i+len(m):]
		if j := strings.Index(rest, ": "); j >= 0 {
			code := rest[j+2:]
			k := 0
			for k < len(code) && (code[k] >= 'A' && code[k] <= 'Z' || code[k] == '_') {
				k++
			}
			if k >= 4 && k < len(code) && code[k] == ':' {
				return true
			}
			if strings.HasPrefix(code, "unexpected status code") {
				return true
			}
		}
	}
	return false
}

// evidenceOf returns the innermost error: the chain without the kubelet,
// gRPC and runtime wrappers, redacted and capped.
func evidenceOf(s, l string) string {
	t, tl := s, l
	for n := 0; n < 24; n++ {
		t2, tl2 := stripOneWrapper(t, tl)
		if len(t2) == len(t) {
			break
		}
		t, tl = t2, tl2
	}
	if t == "" {
		t = s
	}
	return Redact(capText(strings.TrimSpace(t), 600))
}

var wrapperPrefixes = []string{
	"rpc error: code = ", "failed to pull image ", "failed to pull and unpack image ", "failed to resolve reference ",
	"failed to resolve image: ", "error response from daemon: ", "error: ", "errimagepull: ", "imagepullbackoff: ",
	"back-off pulling image ", "initializing source ", "registryunavailable: ", "failed to do request: ",
	"failed to authorize: ", "warning ", "failed ", "trying to pull ",
}

func stripOneWrapper(t, tl string) (string, string) {
	trim := func(n int) (string, string) {
		return strings.TrimLeft(t[n:], " :[]"), strings.TrimLeft(tl[n:], " :[]")
	}
	t, tl = strings.TrimLeft(t, " :["), strings.TrimLeft(tl, " :[")
	for _, w := range wrapperPrefixes {
		if !strings.HasPrefix(tl, w) {
			continue
		}
		switch w {
		case "rpc error: code = ":
			if i := strings.Index(tl, " desc = "); i >= 0 {
				return trim(i + len(" desc = "))
			}
		case "failed to pull image ", "failed to pull and unpack image ", "failed to resolve reference ", "back-off pulling image ":
			rest := t[len(w):]
			if strings.HasPrefix(rest, "\"") {
				if j := strings.IndexByte(rest[1:], '"'); j >= 0 {
					return trim(len(w) + j + 2)
				}
			}
		case "initializing source ", "trying to pull ":
			if i := strings.Index(tl, ": "); i >= 0 {
				return trim(i + 2)
			}
		case "warning ", "failed ":
			// An event row pasted whole: "Warning Failed 3m kubelet ..."
			continue
		default:
			return trim(len(w))
		}
	}
	return t, tl
}

// ambiguity lists the other readings of an honestly ambiguous message.
func ambiguity(p part, l, image string) []string {
	var out []string
	switch {
	case p.cause == verdict.CodeAuthzDeniedOrMissing:
		out = append(out,
			"manifest.name-unknown: the repository or tag does not exist (a registry that hides private repositories answers the same way) — check the name, tag and platform with an identity that can read the repository",
			"authz.denied: the repository exists but the pull identity may not read it, or the pull was anonymous — check which credential the node used (imagePullSecret or node identity) and its scope")
	case strings.HasPrefix(p.cause, "auth.") && (p.anon || p.status == 401 && strings.Contains(l, "anonymous")):
		out = append(out, "manifest.unknown: containerd (and AKS, which always tries an anonymous pull first) reports 401 for an anonymous attempt, so a wrong repository name, tag or platform can hide behind it — check the name and tag too")
	case p.cause == verdict.CodeAuthzDenied && p.role == verdict.RoleAuth && strings.Contains(p.host, "azurecr."):
		out = append(out, "dns.private-zone: on ACR a 403 from the token service can mean the node reached the registry's public endpoint (private DNS zone not linked to the node's network) or the registry firewall refused the node's IP — resolve the registry name from the node")
	case p.cause == verdict.CodeAuthzDenied && p.hub:
		out = append(out, "manifest.name-unknown: Docker Hub answers 'requested access to the resource is denied' for a repository that does not exist as well as for a private one — check the name")
	case strings.HasPrefix(p.cause, "auth.") && strings.Contains(l, "access to the requested resource is not authorized"):
		out = append(out, "manifest.name-unknown: Quay answers 401 for a repository that does not exist as well as for a private one — check the name")
	case strings.HasPrefix(p.cause, "authz.") && strings.Contains(l, "or it may not exist"):
		out = append(out, "manifest.name-unknown: the registry says the permission is denied 'or it may not exist' — check the repository path as well as the identity's role")
	case p.cause == verdict.CodeRouteReset && !strings.Contains(l, "connection reset"):
		out = append(out, "registry.unavailable: a bare EOF can also be a registry or proxy closing connections under load")
	case p.cause == verdict.CodeRouteTimeout && strings.Contains(l, "awaiting headers"):
		out = append(out, "registry.no-answer: while Go waits for a connection it also waits for a proxy's answer to CONNECT and for the TLS handshake, so a proxy that accepted the connection and never answered reads the same; the client timeout does not say which — check whether `curl -v https://<host>/v2/` from the node connects and how long the answer takes")
	case p.cause == verdict.CodeRouteTimeout && strings.Contains(l, "dial tcp: i/o timeout"):
		out = append(out, "dns.timeout: Go reports `dial tcp: i/o timeout` without an address when the deadline passed while the name was still being resolved — resolve the host from the node")
	case p.cause == verdict.CodeUnknownCanceled:
		out = append(out, "transfer.no-progress: a cancelled pull is often the runtime's no-progress watchdog (containerd's image_pull_progress_timeout, the kubelet's image-pull-progress-deadline with dockershim) cutting a stalled download — look for `cancel pulling image` in the runtime's log")
	case p.cause == verdict.CodeTransferNoProgress && !strings.Contains(l, "no progress"):
		out = append(out, "unknown.canceled: read from containerd's own log rather than from the kubelet's event, the same line follows a cancellation by the kubelet (the pod deleted while its image was pulling) — the kubelet's event for the pod says which")
	}
	_ = image
	return out
}

// tlsHost returns the host an x509 name error says it wanted.
func tlsHost(s, l string) string {
	for _, pre := range []string{"but wanted to match ", "validate certificate for ", "but none matched "} {
		if w, _ := wordAfter(s, l, pre); w != "" {
			if h, _ := hostToken(w); validHost(h) {
				return h
			}
		}
	}
	if i := strings.Index(l, "certificate is valid for "); i >= 0 {
		rest := l[i:]
		if j := strings.LastIndex(rest, ", not "); j >= 0 {
			w, _ := wordAfter(s[i+j:], rest[j:], ", not ")
			if h, _ := hostToken(w); validHost(h) {
				return h
			}
		}
	}
	return ""
}

// plausibleRef reports whether s can be an image reference: no spaces,
// no placeholder brackets.
func plausibleRef(s string) bool {
	if s == "" || len(s) >= 512 || strings.ContainsAny(s, " <>{}\"'`") {
		return false
	}
	// An archive the client writes to is a file, not a reference.
	for _, ext := range []string{".tar", ".tar.gz", ".tgz"} {
		if len(s) > len(ext) && strings.EqualFold(s[len(s)-len(ext):], ext) {
			return false
		}
	}
	return true
}

// resolvedRef returns the reference containerd says it resolved, the
// innermost one, when it differs from the kubelet's.
func resolvedRef(s, l string) string {
	if img, ok := quotedAfter(s, l, "failed to resolve reference "); ok && plausibleRef(img) {
		return img
	}
	return ""
}

// Phrase sets of classify.go (registered at initialisation).
var (
	psImageHint = newSet("failed to pull image ", "back-off pulling image ", "failed to pull and unpack image ",
		"failed to resolve reference ", "container image ", "pullimage ", "pulling image ", "failed to apply default image tag ",
		"failed to inspect image ", "image ", "initializing source docker://", "pull access denied for ", "image pull failed for ",
		"trying to pull ", "error: unable to pull ", "manifest for ", "pulling image docker://", "reading manifest ",
		"pulling repository ", "trying to pull repository ", "suggest the author of ", "/images/create?")
	psDial = newSet("dial tcp", "connecting to ", "connect to ", "->")
)

// describeCache holds verdict.Describe per cause and role with a
// placeholder endpoint; describe fills in the endpoint.
var describeCache sync.Map

const endpointMark = "\x00endpoint\x00"

type describeKey struct {
	cause string
	role  verdict.Role
}

func describe(cause string, role verdict.Role, endpoint string) verdict.Description {
	k := describeKey{cause, role}
	v, ok := describeCache.Load(k)
	if !ok {
		v, _ = describeCache.LoadOrStore(k, verdict.Describe(cause, role, endpointMark))
	}
	d := v.(verdict.Description)
	ep := endpoint
	if ep == "" {
		ep = "the endpoint"
	}
	out := verdict.Description{Summary: strings.ReplaceAll(d.Summary, endpointMark, ep), Next: make([]string, len(d.Next))}
	for i, n := range d.Next {
		out.Next[i] = strings.ReplaceAll(n, endpointMark, ep)
	}
	return out
}

// indexIf is strings.Index(t.l, p), skipped when the scan saw no p.
func indexIf(t *txt, p string) int {
	if !t.has(p) {
		return -1
	}
	return strings.Index(t.l, p)
}

// Phrases looked up with has/indexIf, registered so that they are bit tests.
var _ = newSet("back-off pulling image ", "failed to pull image ", "image pull failed for ",
	"failed to apply default image tag", "invalidimagename", "with pull policy of never", "errimageneverpull",
	"pinging container registry ", "pinging docker registry ", "pulling from host ", "registry ",
	"skopeo", "podman", "trying to pull ", "rpc error", "error response from daemon", "docker pull", "level=fatal",
	"anonymous", "no basic auth credentials", "connect: operation not permitted", "cancel pulling image",
	"awaiting response headers", "while awaiting headers", "unexpected eof", "read: connection timed out",
	"failed to get sandbox image ", "failed to inspect sandbox image ", "failed pulling image ", "initializing source docker://",
	"(mirrors also failed: ")

// isGoLookup reports Go's DNS error shape at lookupAt: "lookup <name>: " or
// "lookup <name> on <server>: ", where name is a host name (has a dot), so
// that "failed to lookup image x: ..." is not read as DNS.
func isGoLookup(l string, lookupAt int) bool {
	if lookupAt < 0 {
		return false
	}
	rest := l[lookupAt+len("lookup "):]
	end := strings.IndexAny(rest, " :")
	if end <= 0 || !strings.Contains(rest[:end], ".") {
		return false
	}
	return strings.HasPrefix(rest[end:], ": ") || strings.HasPrefix(rest[end:], " on ")
}
