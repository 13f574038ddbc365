package verdict

// The registry layer's causes and warnings.
var registryEntries = []Cause{
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
}
