package verdict

// The transfer layer's causes and warnings.
var transferEntries = []Cause{
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

	// A transfer below the minimum progress.
	Cause{Code: "transfer.stall", Layer: LayerTransfer,
		Summary: "{role} {endpoint} started an answer but sends it too slowly to finish (a trickle below the minimum progress, or past the time a manifest or token may take).",
		Next: []string{
			"Check the path to that host for a congested or throttled link, a proxy or appliance that holds the response, and the host's own load.",
			"The runtime would wait on such a transfer until the kubelet's deadline; " + everyHost}},
}
