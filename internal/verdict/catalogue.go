package verdict

import (
	"sort"
	"strings"
)

// Cause describes one cause code: its layer, its owner when that differs from
// the layer's default, a one-sentence summary and the next steps. In the
// texts, {endpoint} is replaced by the failing host:port (or "the endpoint")
// and {role} by the role phrase ("the registry API host", "the token service",
// "the blob host", "the mirror").
//
// A warning (Kind KindWarning) is in the same catalogue: something that
// works today but will break or mislead later. It never makes a verdict;
// its layer is the step it concerns and its owner who acts on it.
type Cause struct {
	Code    string
	Kind    Kind
	Layer   Layer
	Owner   Owner
	Summary string
	Next    []string
}

// Kind tells a cause from a warning in the catalogue.
type Kind string

// The kinds of catalogue entries. The zero Kind is a cause.
const (
	KindCause   Kind = ""
	KindWarning Kind = "warning"
)

// Sentences shared by many causes: credentials never fix a network, DNS or TLS
// failure, and the evidence that counts is the node's, not a pod's or a laptop's.
const (
	credsIrrelevant = "Credentials are irrelevant to this failure: an imagePullSecret installs no route, changes no resolver and makes no certificate trusted."
	nodeView        = "Test from the node itself (its network namespace, /etc/resolv.conf, /etc/hosts, /etc/containerd/certs.d and trust store), e.g. `pullpath probe` on the node or `pullpath diagnose --probe`; a pod or a laptop proves nothing about the pull."
	everyHost       = "Allow and route every hostname the registry hands out during the pull: the registry API host, its token realm and every blob/CDN host it redirects layer downloads to."
)

var catalogue = map[string]Cause{}

func register(cs ...Cause) {
	for _, c := range cs {
		catalogue[c.Code] = c
	}
}

func init() {
	register(
		// config
		Cause{Code: "config.reference", Layer: LayerConfig, Owner: OwnerApp,
			Summary: "The image reference is malformed, so no pull can start.",
			Next:    []string{"Fix the image field of the workload: registry/repository[:tag][@sha256:digest], lowercase repository, no scheme."}},
		Cause{Code: "config.hosts-toml", Layer: LayerConfig,
			Summary: "The node's containerd registry host configuration (hosts.toml) cannot be read or parsed.",
			Next:    []string{"Fix the hosts.toml named in the evidence (TOML syntax, [host.\"https://...\"] tables, capabilities pull/resolve/push).", "Check config_path in /etc/containerd/config.toml points at the directory you edited."}},
		Cause{Code: "config.ca-file", Layer: LayerConfig,
			Summary: "A CA file the node's pull configuration names cannot be read or holds no certificate.",
			Next:    []string{"Fix the `ca` path in hosts.toml or the CA bundle named in the evidence; it must hold PEM certificates."}},
		Cause{Code: "config.resolv-conf", Layer: LayerConfig,
			Summary: "The node's /etc/resolv.conf cannot be read or names no usable nameserver.",
			Next:    []string{"Check /etc/resolv.conf on the node (and /run/systemd/resolve/resolv.conf behind the 127.0.0.53 stub)."}},
		Cause{Code: "config.hosts-file", Layer: LayerConfig,
			Summary: "The node's /etc/hosts cannot be read.",
			Next:    []string{"Check /etc/hosts on the node."}},
		Cause{Code: "config.credentials", Layer: LayerConfig, Owner: OwnerIdentity,
			Summary: "The pull credentials given cannot be read (docker config or pull secret is malformed).",
			Next:    []string{"Check the docker config / pull secret: it must be dockerconfigjson with an `auths` entry for the registry host."}},
		Cause{Code: "config.policy", Layer: LayerConfig,
			Summary: "The node's image policy rejects the image (signature verification, policy.json or a blocked registry), so the runtime refuses the pull.",
			Next:    []string{"Check the runtime's image policy on the node (/etc/containers/policy.json and registries.conf for CRI-O/podman, containerd's image verifier plugins) and the image's signatures for this registry."}},
		Cause{Code: "config.never-pull", Layer: LayerConfig, Owner: OwnerApp,
			Summary: "The image is not on the node and the pull policy is Never, so the kubelet does not try to pull.",
			Next:    []string{"Set imagePullPolicy to IfNotPresent or Always, or pre-load the image on every node that can run the pod."}},

		// dns
		Cause{Code: "dns.nxdomain", Layer: LayerDNS,
			Summary: "The node's resolver says {endpoint} does not exist (NXDOMAIN).",
			Next:    []string{"Resolve the name from the node's context: `dig <host>` against the nameservers in the node's /etc/resolv.conf.", "For a private registry, check that the private DNS zone (e.g. privatelink.*) is linked to the node network or forwarded by the custom DNS servers the node uses.", credsIrrelevant}},
		Cause{Code: "dns.servfail", Layer: LayerDNS,
			Summary: "The node's resolver failed to answer for {endpoint} (SERVFAIL or refused).",
			Next:    []string{"Check the DNS servers in the node's /etc/resolv.conf and their forwarders for the registry's zone.", credsIrrelevant}},
		Cause{Code: "dns.timeout", Layer: LayerDNS,
			Summary: "The node's resolver did not answer in time for {endpoint}.",
			Next:    []string{"Check that the node can reach its nameservers on UDP/TCP 53 (routes, NSGs/security groups, firewall) and that they are up.", credsIrrelevant}},
		Cause{Code: "dns.unreachable", Layer: LayerDNS,
			Summary: "The node's resolver cannot be reached to look up {endpoint} (nothing answers on port 53).",
			Next:    []string{"Check that the nameservers in the node's /etc/resolv.conf are up and reachable from the node on UDP/TCP 53 (routes, NSGs/security groups, firewall).", credsIrrelevant}},
		Cause{Code: "dns.no-address", Layer: LayerDNS,
			Summary: "The node's resolver knows {endpoint} but returns no address for it.",
			Next:    []string{"Check the A/AAAA records of the name in the zone the node resolves.", credsIrrelevant}},
		Cause{Code: "dns.private-zone", Layer: LayerDNS,
			Summary: "The node's resolver cannot see the private zone: {endpoint} resolves through a privatelink CNAME to a public address.",
			Next:    []string{"Link the private DNS zone (e.g. privatelink.azurecr.io) to the node's VNet, or make the custom DNS servers forward it (Azure: 168.63.129.16).", "Add a record for every host the pull touches, including each data endpoint (<reg>.<region>.data) of every replica.", credsIrrelevant}},

		// route
		Cause{Code: "route.timeout", Layer: LayerRoute,
			Summary: "Connecting to {role} {endpoint} timed out: packets are silently dropped on the forward or the return path.",
			Next:    []string{"Check the effective routes of the node's subnet/NIC toward the registry network, gateway transit through the intended VPN gateway or appliance, and the RETURN route from the registry side to the node subnet (a route one way is not a route).", "Check security rules at both ends (NSG/security groups, firewalls) for TCP to that port.", credsIrrelevant}},
		Cause{Code: "route.refused", Layer: LayerRoute,
			Summary: "{role} {endpoint} refused the connection: the address is reachable but nothing accepts on that port.",
			Next:    []string{"Check that the address the node resolves is the registry's (not a stale record) and that the service listens on that port; check proxies or firewalls that answer with a reset.", credsIrrelevant}},
		Cause{Code: "route.unreachable", Layer: LayerRoute,
			Summary: "The node has no route to {role} {endpoint} (network or host unreachable).",
			Next:    []string{"Check the node's routing table and the subnet's effective routes toward the registry network; add a route through the intended gateway.", credsIrrelevant}},
		Cause{Code: "route.reset", Layer: LayerRoute,
			Summary: "The connection to {role} {endpoint} was reset during connect: a firewall or proxy on the path is cutting it.",
			Next:    []string{"Check firewalls, TLS inspection appliances and egress rules on the path for the registry host names.", credsIrrelevant}},
		Cause{Code: "route.connect", Layer: LayerRoute,
			Summary: "Connecting to {role} {endpoint} failed (an operating-system error other than timeout, refusal, unreachable or reset).",
			Next:    []string{"Read the error in the evidence; check routes, firewalls and security rules between the node and that address.", credsIrrelevant}},
		Cause{Code: "route.proxy", Layer: LayerRoute,
			Summary: "The HTTPS proxy the runtime is configured with ({endpoint}) cannot be reached or refused the tunnel to the registry host.",
			Next:    []string{"Check HTTPS_PROXY/NO_PROXY in containerd's environment (systemctl show containerd -p Environment) and the proxy's reachability and allowlist.", credsIrrelevant}},

		// tls
		Cause{Code: "tls.untrusted", Layer: LayerTLS,
			Summary: "The certificate of {role} {endpoint} is signed by an authority the node does not trust.",
			Next:    []string{"Add the issuing CA to the node trust store (e.g. AKS --custom-ca-trust-certificates) or to hosts.toml `ca` for that host, then restart containerd; a TLS-inspecting proxy shows up this way too.", credsIrrelevant}},
		Cause{Code: "tls.name", Layer: LayerTLS,
			Summary: "The certificate of {role} {endpoint} is not valid for the name the node uses.",
			Next:    []string{"Issue a certificate whose SANs include the registry host name exactly as in the image reference, or use the name the certificate is for.", credsIrrelevant}},
		Cause{Code: "tls.expired", Layer: LayerTLS,
			Summary: "The certificate of {role} {endpoint} has expired or is not yet valid.",
			Next:    []string{"Renew the certificate; check the node's clock if it should be valid.", credsIrrelevant}},
		Cause{Code: "tls.timeout", Layer: LayerTLS, Owner: OwnerNetwork,
			Summary: "The TCP connection to {role} {endpoint} opened but the TLS handshake timed out: a firewall or appliance on the path holds the traffic.",
			Next:    []string{"Check NVAs/firewalls with TLS or SNI filtering on the path (allow the registry host names) and MTU on the VPN path.", credsIrrelevant}},
		Cause{Code: "tls.plain-http", Layer: LayerTLS, Owner: OwnerApp,
			Summary: "{role} {endpoint} speaks plain HTTP on the port the node uses for HTTPS.",
			Next:    []string{"Serve the registry over TLS, or configure the host as http:// in hosts.toml for that registry (not recommended)."}},
		Cause{Code: "tls.handshake", Layer: LayerTLS,
			Summary: "The TLS handshake with {role} {endpoint} failed.",
			Next:    []string{"Check the TLS versions/ciphers and client-certificate requirements of the server, and any appliance on the path.", credsIrrelevant}},

		// auth
		Cause{Code: "auth.no-credentials", Layer: LayerAuth,
			Summary: "{role} {endpoint} requires credentials and the pull had none (anonymous pull rejected with 401).",
			Next:    []string{"Give the runtime an identity for this registry: an imagePullSecret (on the pod or its service account) with an entry for the registry host, or the node's credential provider (AKS kubelet identity with AcrPull, EKS node role, GKE node service account)."}},
		Cause{Code: "auth.bad-credentials", Layer: LayerAuth,
			Summary: "{role} {endpoint} rejected the credentials the pull used (401).",
			Next:    []string{"Check which identity was sent (pull secret user, kubelet identity) and that its password/token is current and matches this registry host."}},
		Cause{Code: "auth.cleartext", Layer: LayerAuth, Owner: OwnerRegistry,
			Summary: "{role} {endpoint} would receive the pull's credentials over plain http; pullpath refused to send them in cleartext.",
			Next:    []string{"Serve the token realm (and the registry) over https; the realm is the URL in the registry's WWW-Authenticate challenge.", "Only if this plain-http host is intended, declare it in the node's hosts.toml (server or [host.\"http://...\"]), as containerd requires."}},
		Cause{Code: "auth.token", Layer: LayerAuth,
			Summary: "The token service at {endpoint} did not issue a usable token.",
			Next:    []string{"Check the registry's WWW-Authenticate challenge (realm, service) and the token service's answer for this scope."}},

		// authz
		Cause{Code: "authz.denied", Layer: LayerAuthz,
			Summary: "The identity is known but may not pull this repository from {endpoint} (403/denied or insufficient scope).",
			Next:    []string{"Grant the pull identity read on this repository (ACR: AcrPull or Container Registry Repository Reader for ABAC registries; ECR: repository policy/IAM; token scope repository:<repo>:pull)."}},
		Cause{Code: "authz.ip-denied", Layer: LayerAuthz,
			Summary: "The registry's firewall refuses the node's client IP at {endpoint}.",
			Next:    []string{"Allow the node's egress IP in the registry's network rules, or reach the registry through its private endpoint (and check the node resolves the private address)."}},
		Cause{Code: "authz.denied-or-missing", Layer: LayerAuthz,
			Summary: "The registry answered 'access denied or repository does not exist': either the repository/tag is missing or the identity may not read it; the registry does not say which.",
			Next:    []string{"Check that the repository and tag exist (e.g. `crane ls <registry>/<repo>` or the registry portal) with an identity that can read it.", "If it exists, check the pull identity's scope on that repository."}},

		// manifest
		Cause{Code: "manifest.unknown", Layer: LayerManifest,
			Summary: "The registry has no manifest for this tag or digest.",
			Next:    []string{"Check the tag/digest in the workload's image field; list tags of the repository to see what exists."}},
		Cause{Code: "manifest.name-unknown", Layer: LayerManifest,
			Summary: "The registry has no repository of this name.",
			Next:    []string{"Check the repository path in the image field (project/namespace prefix, library/ for Docker Hub official images)."}},
		Cause{Code: "manifest.platform", Layer: LayerManifest,
			Summary: "The image index has no manifest for the node's platform.",
			Next:    []string{"Build and push the image for the node's OS/architecture (e.g. linux/arm64 pools), or keep the workload off nodes of that platform with a nodeSelector."}},
		Cause{Code: "manifest.invalid", Layer: LayerManifest, Owner: OwnerRegistry,
			Summary: "The registry returned a manifest the runtime cannot use (unknown media type or malformed).",
			Next:    []string{"Inspect the manifest (`crane manifest <image>`) and re-push the image with a standard OCI or Docker media type."}},

		// transfer
		Cause{Code: "transfer.reset", Layer: LayerTransfer,
			Summary: "A layer download from {role} {endpoint} started and was cut (reset or unexpected EOF).",
			Next:    []string{"Check firewalls/proxies that cut long transfers and MTU on the VPN path; " + everyHost}},
		Cause{Code: "transfer.timeout", Layer: LayerTransfer,
			Summary: "A layer download from {role} {endpoint} stalled.",
			Next:    []string{"Check bandwidth and stalls on the path to the blob host; " + everyHost}},
		Cause{Code: "transfer.no-progress", Layer: LayerTransfer,
			Summary: "The runtime's own no-progress watchdog cancelled the pull: no bytes of a layer download from {role} {endpoint} arrived for the watchdog's whole window (containerd's image_pull_progress_timeout, 5 minutes by default; CRI-O's pull_progress_timeout; the kubelet's image-pull-progress-deadline with dockershim). The connection was made; the transfer stalled.",
			Next:    []string{"Check the path to the blob host for a stall: a proxy or appliance that holds large responses, MTU on a VPN path, a congested or throttled link; " + everyHost, "Raising image_pull_progress_timeout in containerd's CRI configuration only hides a stall; it helps when the node is merely slow (a very large layer on a slow link)."}},
		Cause{Code: "transfer.digest", Layer: LayerTransfer, Owner: OwnerRegistry,
			Summary: "A downloaded blob from {endpoint} does not match its digest.",
			Next:    []string{"Check for a proxy or cache that rewrites content, and the registry's storage for a corrupt blob."}},
		Cause{Code: "transfer.size", Layer: LayerTransfer,
			Summary: "A downloaded blob from {endpoint} has the wrong size (short read or too long).",
			Next:    []string{"Check proxies or firewalls that truncate downloads on the path to the blob host."}},
		Cause{Code: "transfer.redirect", Layer: LayerTransfer, Owner: OwnerRegistry,
			Summary: "A blob download from {endpoint} was redirected too many times or to an unusable location.",
			Next:    []string{"Check the registry's storage redirect configuration."}},
		Cause{Code: "transfer.downgrade", Layer: LayerTransfer, Owner: OwnerRegistry,
			Summary: "{role} {endpoint} redirected a request from https to plain http with the pull's credentials; pullpath refused to follow it in cleartext.",
			Next:    []string{"Fix the registry's or storage's redirect to use https (check the registry's external URL / storage redirect settings and any proxy that rewrites Location headers).", "Only if this plain-http host is intended, declare it in the node's hosts.toml, as containerd requires."}},
		Cause{Code: "transfer.status", Layer: LayerTransfer, Owner: OwnerRegistry,
			Summary: "{role} {endpoint} refused a layer download the registry handed out (unexpected HTTP status).",
			Next:    []string{"Check the blob storage's access policy for the node (signed URL expiry, storage firewall, private endpoint), " + everyHost}},
		Cause{Code: "transfer.blob-unreachable", Layer: LayerTransfer,
			Summary: "Only the manifest endpoint is reachable: authentication and the manifest succeeded but {role} {endpoint} cannot be reached for the layers.",
			Next:    []string{everyHost, "Check DNS, routes and firewall/allowlist rules for the blob host from the node (ACR: *.blob.core.windows.net or <reg>.<region>.data.azurecr.io; ECR: the S3 starport bucket; Docker Hub: production.cloudflare.docker.com)."}},

		// registry
		Cause{Code: "registry.ratelimit", Layer: LayerRegistry,
			Summary: "The registry at {endpoint} is rate-limiting the pull (429 Too Many Requests).",
			Next:    []string{"Authenticate pulls (higher limits), use a pull-through cache or mirror, or wait for the window to reset."}},
		Cause{Code: "registry.unavailable", Layer: LayerRegistry,
			Summary: "The registry at {endpoint} answered with a server error (5xx).",
			Next:    []string{"Check the registry's status page or service health; retry later."}},
		Cause{Code: "registry.protocol", Layer: LayerRegistry,
			Summary: "The registry at {endpoint} answered in a way the runtime cannot use (bad challenge, bad token response, unexpected status).",
			Next:    []string{"Inspect the exchange in the trace (pullpath probe -o json) and the registry's logs."}},
		Cause{Code: "registry.no-answer", Layer: LayerRegistry,
			Summary: "The connection to {role} {endpoint} was made, but no answer came before the client's deadline (Go's `request canceled (Client.Timeout exceeded while awaiting headers)`, `timeout awaiting response headers`, or a read that timed out): the server, or a proxy or TLS-inspecting appliance in front of it, accepted the connection and never answered.",
			Next:    []string{"Time the request from the node: `curl -sv -o /dev/null -w '%{time_connect} %{time_starttransfer}\\n' https://<host>/v2/` shows whether the connection opens and how long the first byte takes.", "Check the registry's health and load, and any proxy or appliance on the path that holds requests (an egress proxy waiting on its own upstream answers this way)."}},

		// runtime
		Cause{Code: "runtime.unpack", Layer: LayerRuntime,
			Summary: "The image arrived but the node failed to unpack a layer.",
			Next:    []string{"Check containerd's log on the node (journalctl -u containerd) and the snapshotter's state."}},
		Cause{Code: "runtime.disk", Layer: LayerRuntime,
			Summary: "The node ran out of disk space while storing the image.",
			Next:    []string{"Free space on the node's container storage (image garbage collection thresholds, larger OS disk)."}},
		Cause{Code: "runtime.snapshotter", Layer: LayerRuntime,
			Summary: "The node's snapshotter failed while preparing the image.",
			Next:    []string{"Check containerd's log and the snapshotter configuration on the node."}},
		Cause{Code: "runtime.error", Layer: LayerRuntime,
			Summary: "The node's runtime failed after the download.",
			Next:    []string{"Check containerd's log on the node (journalctl -u containerd)."}},
		Cause{Code: "runtime.throttled", Layer: LayerRuntime,
			Summary: "The kubelet's own pull rate limit (registryPullQPS / registryBurst) refused to start the pull: the registry was never asked.",
			Next:    []string{"Raise registryPullQPS and registryBurst in the node's kubelet configuration (0 means no limit), or stagger the pods that start at once on the node; the registry's own rate limit is not involved."}},
		Cause{Code: "runtime.content-store", Layer: LayerRuntime,
			Summary: "The bytes arrived, and the node's content store failed to write, resume or commit them (containerd's ingest directory or a lease-locked ref, CRI-O's or podman's storage): the registry and the network are not at fault.",
			Next:    []string{"Read the path in the evidence: a stale or emptied directory under /var/lib/containerd/io.containerd.content.v1.content/ingest/ makes every retry fail the same way; remove that ingest directory (or `ctr -n k8s.io content rm` the ref) and pull again.", "A `ref ... locked` error means another pull of the same layer is running or was left behind by a crashed client: wait for it, or restart containerd to drop the stale lease.", "Check the node's disk and filesystem health under the runtime's root (dmesg, `df -h`, `df -i`)."}},

		// unknown
		Cause{Code: "unknown.deadline", Layer: LayerUnknown,
			Summary: "The pull hit a deadline without saying which step was waiting.",
			Next:    []string{"Find the earlier `Failed to pull image` event or containerd's log (journalctl -u containerd, look for 'trying next host' / 'fetch failed') to see the step.", nodeView}},
		Cause{Code: "unknown.kubelet-deadline", Layer: LayerUnknown, Owner: OwnerNode,
			Summary: "The CRI call ended with the gRPC code DeadlineExceeded and no runtime text, which is what the kubelet's own deadline for the call gives: the kubelet stopped waiting (--runtime-request-timeout, 2 minutes by default, which older kubelets applied to pulls and which bounds the sandbox creation that pulls the sandbox image), so the runtime's account of the step never reached it.",
			Next:    []string{"Read the runtime's log on the node for the same image at that time (journalctl -u containerd or -u crio): it names the step that was still running when the kubelet gave up.", "Pull the image by hand on the node (`crictl pull <image>`) to see how long it takes; a slow but working pull is fixed by pre-pulling, a mirror nearer the node or a longer --runtime-request-timeout.", nodeView}},
		Cause{Code: "unknown.canceled", Layer: LayerUnknown, Owner: OwnerNode,
			Summary: "The pull was cancelled, and the text does not say who cancelled it: the kubelet when the pod was deleted or its worker stopped, the kubelet's or the runtime's no-progress watchdog, or a client that gave up. No step of the pull path is named.",
			Next:    []string{"Check whether the pod was deleted or replaced at that time (`kubectl get events`); if so, nothing is broken.", "Otherwise look in the runtime's log for `cancel pulling image ... because of no progress` (containerd) or the pull's last progress line: that is a stalled download, and the host it was reading from is the one to test.", nodeView}},
		Cause{Code: "unknown.backoff", Layer: LayerUnknown,
			Summary: "A back-off message carries no detail: the cause is in the earlier `Failed to pull image` event or the container's waiting message.",
			Next:    []string{"Run `kubectl describe pod <pod>` and read the first `Failed to pull image` event, or `kubectl get pod <pod> -o jsonpath='{.status.containerStatuses[*].state.waiting.message}'`, and pass that text to `pullpath explain`."}},
		Cause{Code: "unknown.interrupted", Layer: LayerUnknown,
			Summary: "The probe was interrupted before it finished: the trace shows the steps done so far, and no step is blamed.",
			Next:    []string{"Run the probe again and let it finish; --timeout bounds each step and --deadline the whole probe."}},
		Cause{Code: "unknown", Layer: LayerUnknown,
			Summary: "The failure does not name a step of the pull path.",
			Next:    []string{nodeView}},
	)
}

// Lookup returns the catalogue entry of a cause or warning code.
func Lookup(code string) (Cause, bool) {
	c, ok := catalogue[code]
	return c, ok
}

// Causes returns every registered cause (not the warnings), sorted by
// layer rank then code.
func Causes() []Cause { return entries(KindCause) }

// Warnings returns every registered warning code, sorted by layer rank
// then code.
func Warnings() []Cause { return entries(KindWarning) }

func entries(k Kind) []Cause {
	out := make([]Cause, 0, len(catalogue))
	for _, c := range catalogue {
		if c.Kind == k {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Layer.Rank() != out[j].Layer.Rank() {
			return out[i].Layer.Rank() < out[j].Layer.Rank()
		}
		return out[i].Code < out[j].Code
	})
	return out
}

// LayerOf is the layer of a cause code: from the catalogue, else from the
// code's prefix before the first dot, else unknown.
func LayerOf(code string) Layer {
	if c, ok := catalogue[code]; ok {
		return c.Layer
	}
	prefix, _, _ := strings.Cut(code, ".")
	if l := Layer(prefix); l.Rank() > 0 {
		return l
	}
	return LayerUnknown
}

// OwnerOf is who fixes a cause: the catalogue's owner, else the layer's.
func OwnerOf(code string) Owner {
	if c, ok := catalogue[code]; ok && c.Owner != OwnerNone {
		return c.Owner
	}
	return DefaultOwner(LayerOf(code))
}

// RolePhrase names a role in a sentence.
func RolePhrase(r Role) string {
	switch r {
	case RoleRegistry:
		return "the registry API host"
	case RoleAuth:
		return "the token service"
	case RoleBlob:
		return "the blob host"
	case RoleMirror:
		return "the mirror"
	case RoleProxy:
		return "the proxy"
	}
	return "the endpoint"
}

// Description is a filled-in summary and next steps for a cause.
type Description struct {
	Summary string
	Next    []string
}

// Describe fills in the summary and next steps of a cause for a role and
// endpoint. Unknown codes fall back to their layer's generic text.
func Describe(code string, role Role, endpoint string) Description {
	c, ok := catalogue[code]
	if !ok {
		c = catalogue["unknown"]
		c.Summary = "The pull failed at the " + string(LayerOf(code)) + " step."
	}
	ep := endpoint
	if ep == "" {
		ep = "the endpoint"
	}
	fill := func(s string) string {
		if strings.IndexByte(s, '{') < 0 {
			return s
		}
		return strings.ReplaceAll(strings.ReplaceAll(s, "{endpoint}", ep), "{role}", RolePhrase(role))
	}
	d := Description{Summary: upperFirst(fill(c.Summary)), Next: make([]string, 0, len(c.Next)+1)}
	for _, n := range c.Next {
		d.Next = append(d.Next, fill(n))
	}
	if role == RoleBlob && (c.Layer == LayerDNS || c.Layer == LayerRoute || c.Layer == LayerTLS) && code != "route.mtu" { // the blob host is reachable for small packets
		d.Next = append([]string{"Only the manifest endpoint is reachable: the registry answered but the blob host it redirects layer downloads to is not. " + everyHost}, d.Next...)
	}
	return d
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	if s[0] >= 'a' && s[0] <= 'z' {
		return string(s[0]-'a'+'A') + s[1:]
	}
	return s
}
