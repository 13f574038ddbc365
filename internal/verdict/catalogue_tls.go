package verdict

// The tls layer's causes and warnings.
var tlsEntries = []Cause{
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

	// Warnings: what works today but will break or mislead.
	warning("tls.skip-verify", LayerTLS, OwnerPKI,
		"The node's hosts.toml (or containerd's localhost default) skips certificate verification for this host: the pull works with any certificate, an interceptor's too.",
		"Install the registry's CA on the node (hosts.toml `ca`, or the system trust store) and remove skip_verify."),
	warning("tls.expiring", LayerTLS, OwnerPKI,
		"The host's certificate expires soon: the pull fails with tls.expired on that date.",
		"Renew the certificate before the date in the message, and check its automation (cert-manager, the platform's managed certificate)."),
}
