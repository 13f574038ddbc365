package azure

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pullpath/pullpath/internal/verdict"
)

// DataPlane holds data-plane verdicts by node pool, read from a probe or
// diagnose JSON document. The key "" holds a verdict that names no pool
// (a ProbeReport), which applies to every pool.
type DataPlane map[string]DataPlaneVerdict

// ParseDataPlane reads a ProbeReport (pullpath probe -o json) or a
// DiagnoseReport (pullpath diagnose --probe -o json).
func ParseDataPlane(b []byte, from string) (DataPlane, error) {
	var doc struct {
		Kind    string           `json:"kind"`
		Verdict *verdict.Verdict `json:"verdict"`
		Nodes   []struct {
			Name  string `json:"name"`
			Pool  string `json:"pool"`
			Probe *struct {
				Verdict *verdict.Verdict `json:"verdict"`
			} `json:"probe"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("reading data-plane verdict %s: %w", from, err)
	}
	dp := DataPlane{}
	mk := func(v *verdict.Verdict, node string) DataPlaneVerdict {
		return DataPlaneVerdict{OK: v.OK, Layer: v.Layer, Cause: v.Cause, Role: v.Role, Endpoint: v.Endpoint, Node: node, From: from, Source: SourceDataPlane}
	}
	switch doc.Kind {
	case "DiagnoseReport":
		for _, n := range doc.Nodes {
			if n.Probe == nil || n.Probe.Verdict == nil || n.Pool == "" {
				continue
			}
			// The first failing node of a pool speaks for it.
			if cur, ok := dp[n.Pool]; ok && !cur.OK {
				continue
			}
			dp[n.Pool] = mk(n.Probe.Verdict, n.Name)
		}
	case "ProbeReport", "":
		if doc.Verdict == nil {
			return nil, fmt.Errorf("reading data-plane verdict %s: no verdict in the document", from)
		}
		dp[""] = mk(doc.Verdict, "")
	default:
		return nil, fmt.Errorf("reading data-plane verdict %s: kind %q holds no probe verdict (want ProbeReport or DiagnoseReport)", from, doc.Kind)
	}
	if len(dp) == 0 {
		return nil, fmt.Errorf("reading data-plane verdict %s: no node probe verdict with a pool", from)
	}
	return dp, nil
}

// Attach sets each pool's agreement from the data-plane verdicts.
func (dp DataPlane) Attach(r *Report) {
	for i := range r.Pools {
		d, ok := dp[r.Pools[i].Name]
		if !ok {
			d, ok = dp[""]
		}
		if ok {
			a := Compare(r.Pools[i].Verdict, d)
			r.Pools[i].Agreement = &a
		}
	}
}

// networkCause reports whether a data-plane cause is a failure of the
// network path (what Azure's configuration decides): resolution, connect,
// a handshake that never completes, a blob host that cannot be reached.
func networkCause(v DataPlaneVerdict) bool {
	switch v.Layer {
	case verdict.LayerDNS, verdict.LayerRoute:
		return true
	}
	return v.Cause == verdict.CodeTLSTimeout || v.Cause == verdict.CodeTransferBlobUnreachable || v.Cause == verdict.CodeTransferTimeout || v.Cause == verdict.CodeUnknownDeadline
}

// Compare says whether a control-plane verdict and a data-plane verdict
// for the same pool describe the same fault.
func Compare(cp Verdict, dp DataPlaneVerdict) Agreement {
	a := Agreement{DataPlane: dp}
	dpName := dp.Cause
	if dp.OK {
		dpName = "a working pull"
	}
	switch {
	case cp.OK && dp.OK:
		a.Agree = true
		a.Summary = "Both agree: the node pulls, and Azure's configuration gives it a private path."
	case cp.OK && !networkCause(dp):
		a.Agree = true
		a.Summary = fmt.Sprintf("Consistent: the network path is complete in Azure's configuration, and the node fails later, at %s (%s): not a network setting.", dp.Layer, dp.Cause)
	case cp.OK:
		a.Summary = fmt.Sprintf("They disagree: the node fails with %s but Azure's configuration shows a complete path. The fault lies where the control plane cannot see: custom DNS forwarding, an appliance's rules, an on-premises route or firewall, or the node's own configuration.", dp.Cause)
	case dp.OK:
		a.Summary = fmt.Sprintf("They disagree: the node pulls, yet Azure's configuration says %s (%s). The probed node may resolve or route differently from the pool's configuration (a hosts entry, a cached answer), or the configuration changed since the probe.", cp.Cause, cp.Setting)
	case sameFault(cp, dp):
		a.Agree = true
		a.Summary = fmt.Sprintf("Same fault: %s on the node and %s in Azure's configuration; the setting: %s.", dpName, cp.Cause, cp.Setting)
	default:
		a.Summary = fmt.Sprintf("They disagree: the node fails with %s (%s layer), Azure's configuration with %s (%s layer, %s). Fix the earlier one in pull order first and probe again.", dp.Cause, dp.Layer, cp.Cause, cp.Layer, cp.Setting)
	}
	return a
}

// sameFault: a DNS setting explains a DNS failure, a route, peering,
// gateway or security setting explains a connect failure, and a broken
// data endpoint explains "only the manifest endpoint is reachable".
func sameFault(cp Verdict, dp DataPlaneVerdict) bool {
	if cp.Role == verdict.RoleBlob && strings.HasPrefix(dp.Cause, "transfer.") {
		return cp.Layer == verdict.LayerDNS || cp.Layer == verdict.LayerRoute
	}
	switch cp.Layer {
	case verdict.LayerDNS:
		return dp.Layer == verdict.LayerDNS
	case verdict.LayerRoute:
		return dp.Layer == verdict.LayerRoute || dp.Cause == verdict.CodeTLSTimeout || dp.Cause == verdict.CodeUnknownDeadline
	}
	return cp.Layer == dp.Layer
}
