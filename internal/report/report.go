package report

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/pullpath/pullpath/internal/probe"
	"github.com/pullpath/pullpath/internal/runtimecfg"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Formats lists the formats every command accepts as a document.
//
// Deprecated: use DocumentFormats or AllFormats with CheckFormatIn.
var Formats = DocumentFormats

// CheckFormat returns an error naming the valid formats when f is not one
// of DocumentFormats.
func CheckFormat(f string) error { return CheckFormatIn(f, DocumentFormats) }

// JSON writes v as indented JSON.
func JSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// Style colours text for a terminal; the zero value prints plain text.
type Style struct{ Color bool }

func (s Style) wrap(code, text string) string {
	if !s.Color {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}

// Green, Red, Yellow, Dim and Bold colour text when s.Color is set.
func (s Style) Green(t string) string  { return s.wrap("32", t) }
func (s Style) Red(t string) string    { return s.wrap("31", t) }
func (s Style) Yellow(t string) string { return s.wrap("33", t) }
func (s Style) Dim(t string) string    { return s.wrap("2", t) }
func (s Style) Bold(t string) string   { return s.wrap("1", t) }

func (s Style) mark(st probe.Status) string {
	switch st {
	case probe.StatusOK:
		return s.Green("✔")
	case probe.StatusFailed:
		return s.Red("✘")
	case probe.StatusWarning:
		return s.Yellow("!")
	}
	return s.Dim("–")
}

// resolverText is one resolver's answer for --compare-node.
func resolverText(a probe.ResolverAnswer) string {
	servers := strings.Join(a.Servers, ", ")
	switch a.Source {
	case "hosts":
		servers = "/etc/hosts"
	case "literal":
		servers = "IP literal"
	}
	ans := strings.Join(a.Addrs, ", ")
	if a.Cause != "" {
		ans = strings.ToUpper(strings.TrimPrefix(a.Cause, "dns."))
	}
	return fmt.Sprintf("%s → %s  (%s)", Dash(servers), ans, Dash(a.Resolv))
}

// ProbeText renders a probe report for a person.
func ProbeText(w io.Writer, r *probe.Report, s Style) error {
	b := &strings.Builder{}
	fmt.Fprintf(b, "%s %s\n", s.Bold("probe"), r.Image)
	var meta []string
	if r.Reference != "" && r.Reference != r.Image {
		meta = append(meta, "reference "+r.Reference)
	}
	if r.Root != "" {
		meta = append(meta, "root "+r.Root)
	}
	if r.Platform != "" {
		meta = append(meta, "platform "+r.Platform)
	}
	if r.Identity != "" {
		meta = append(meta, "identity "+r.Identity)
	}
	if r.Proxy != nil {
		px := "proxy " + r.Proxy.HTTPSProxy
		if r.Proxy.NoProxy != "" {
			px += " (no_proxy " + r.Proxy.NoProxy + ")"
		}
		meta = append(meta, px)
	}
	if len(meta) > 0 {
		fmt.Fprintf(b, "  %s\n", s.Dim(strings.Join(meta, " · ")))
	}
	if rc := r.RuntimeConfig; rc != nil {
		fmt.Fprintf(b, "  %s\n", s.Dim(runtimeLine(rc)))
	}
	if len(r.Plan) > 0 {
		var plan []string
		for _, h := range r.Plan {
			plan = append(plan, fmt.Sprintf("%s://%s (%s)", h.Scheme, h.Host, h.Role))
		}
		fmt.Fprintf(b, "  plan: %s\n", strings.Join(plan, " → "))
	}
	if c := r.Credentials; c != nil && len(c.Tried) > 0 {
		// What the kubelet sends and which host the node presents it to
		// (internal/keychain); names and keys, never a secret.
		fmt.Fprintf(b, "  kubelet credentials, in order: %s\n", strings.Join(c.Tried, "; "))
		for _, h := range r.Plan {
			if h.Credential != "" {
				fmt.Fprintf(b, "  %s gets: %s\n", h.Host, h.Credential)
			}
		}
	}
	for _, ep := range r.Endpoints {
		fmt.Fprintf(b, "\n%s %s:%d\n", s.Bold(string(ep.Role)), ep.Host, ep.Port)
		for _, st := range ep.Steps {
			line := fmt.Sprintf("  %s %-5s %s", s.mark(st.Status), st.Name, st.Target)
			if st.Detail != "" {
				line += "  " + st.Detail
			}
			if st.Status != probe.StatusSkipped {
				line += s.Dim(fmt.Sprintf(" (%s)", fmtMillis(st.Millis)))
			}
			fmt.Fprintln(b, line)
		}
	}
	if len(r.Blobs) > 0 {
		var ok, failed, skipped int
		var bytes int64
		hosts := map[string]bool{}
		for _, bl := range r.Blobs {
			switch {
			case bl.Verified:
				ok++
			case bl.Error != "" && strings.HasPrefix(bl.Error, "skipped"):
				skipped++
			case bl.Error != "":
				failed++
			}
			bytes += bl.Bytes
			if bl.Host != "" {
				hosts[bl.Host] = true
			}
		}
		fmt.Fprintf(b, "\n%s %d blobs, %d verified, %d failed, %d skipped, %s received", s.Bold("blobs"), len(r.Blobs), ok, failed, skipped, probe.HumanBytes(bytes))
		if len(hosts) > 0 {
			fmt.Fprintf(b, " from %s", strings.Join(slices.Sorted(maps.Keys(hosts)), ", "))
		}
		fmt.Fprintln(b)
		for _, bl := range r.Blobs {
			if bl.Error != "" && !strings.HasPrefix(bl.Error, "skipped") {
				fmt.Fprintf(b, "  %s %s %s\n", s.Red("✘"), short(bl.Digest), bl.Error)
			}
		}
	}
	if len(r.Warnings) > 0 {
		fmt.Fprintf(b, "\n%s\n", s.Bold("warnings"))
		for _, wn := range r.Warnings {
			ep := ""
			if wn.Endpoint != "" {
				ep = " " + wn.Endpoint
			}
			fmt.Fprintf(b, "  %s %s%s: %s\n", s.Yellow("!"), wn.Code, ep, wn.Message)
		}
	}
	writeVerdict(b, r.Verdict, s)
	if len(r.CompareNode) > 0 {
		fmt.Fprintf(b, "\n%s\n", s.Bold("resolvers: node (--root) vs this pod"))
		for _, c := range r.CompareNode {
			mark := s.Green("=")
			if c.Differs {
				mark = s.Red("≠")
			}
			fmt.Fprintf(b, "  %s %s\n      node %s\n      pod  %s\n", mark, c.Host, resolverText(c.Node), resolverText(c.Pod))
		}
		if slices.ContainsFunc(r.CompareNode, func(c probe.ResolverComparison) bool { return c.Differs }) {
			fmt.Fprintf(b, "  the pull resolves with the node's resolver: what this pod resolves proves nothing about it\n")
		}
	}
	if r.Runtime != nil {
		rt := r.Runtime
		fmt.Fprintf(b, "\n%s %s %s\n", s.Bold("runtime pull"), rt.Socket, s.Dim("("+fmtMillis(float64(rt.Millis))+")"))
		switch {
		case rt.OK:
			fmt.Fprintf(b, "  %s the runtime pulled the image\n", s.Green("✔"))
		case rt.Error != "":
			fmt.Fprintf(b, "  %s %s\n", s.Red("✘"), rt.Error)
		}
		if rt.Verdict != nil {
			fmt.Fprintf(b, "  explained: layer %s  cause %s  role %s  endpoint %s\n", rt.Verdict.Layer, rt.Verdict.Cause, Dash(string(rt.Verdict.Role)), Dash(rt.Verdict.Endpoint))
		}
		if rt.OK || rt.Verdict != nil {
			if rt.Agrees {
				fmt.Fprintf(b, "  %s the runtime agrees with the probe\n", s.Green("✔"))
			} else {
				fmt.Fprintf(b, "  %s the runtime and the probe DISAGREE\n", s.Red("✘"))
			}
		}
		if rt.Note != "" {
			fmt.Fprintf(b, "  %s\n", rt.Note)
		}
	}
	fmt.Fprintf(b, "\n%s\n", probeSummary(r))
	_, err := io.WriteString(w, b.String())
	return err
}

// writeVerdict renders a verdict block.
func writeVerdict(b *strings.Builder, v verdict.Verdict, s Style) {
	fmt.Fprintln(b)
	if v.OK {
		fmt.Fprintf(b, "%s %s\n", s.Green("✔ verdict: ok"), v.Summary)
	} else {
		fields := []string{"layer " + string(v.Layer)}
		if v.Cause != "" {
			fields = append(fields, "cause "+v.Cause)
		}
		if v.Owner != "" {
			fields = append(fields, "owner "+string(v.Owner))
		}
		if v.Role != "" {
			fields = append(fields, "role "+string(v.Role))
		}
		if v.Endpoint != "" {
			fields = append(fields, "endpoint "+v.Endpoint)
		}
		fmt.Fprintf(b, "%s %s\n", s.Red("✘ verdict:"), strings.Join(fields, "  "))
		fmt.Fprintf(b, "  %s\n", v.Summary)
		if v.Evidence != "" {
			fmt.Fprintf(b, "  %s %s\n", s.Dim("evidence:"), v.Evidence)
		}
	}
	if len(v.Next) > 0 {
		fmt.Fprintf(b, "%s\n", s.Bold("next"))
		for _, n := range v.Next {
			fmt.Fprintf(b, "  - %s\n", n)
		}
	}
}

// VerdictText renders one verdict block (used by explain and diagnose).
func VerdictText(w io.Writer, v verdict.Verdict, s Style) error {
	b := &strings.Builder{}
	writeVerdict(b, v, s)
	_, err := io.WriteString(w, b.String())
	return err
}

// Summary is the one-line summary of a verdict.
func Summary(v verdict.Verdict, millis int64) string {
	if v.OK {
		return fmt.Sprintf("OK in %s", fmtMillis(float64(millis)))
	}
	s := fmt.Sprintf("FAIL %s", v.Cause)
	if v.Endpoint != "" {
		s += " at " + v.Endpoint
	}
	if v.Role != "" {
		s += " (" + string(v.Role) + ")"
	}
	if v.Owner != "" {
		s += ", owner " + string(v.Owner)
	}
	return s + fmt.Sprintf(", in %s", fmtMillis(float64(millis)))
}

func fmtMillis(ms float64) string {
	switch {
	case ms >= 1000:
		return fmt.Sprintf("%.2fs", ms/1000)
	case ms >= 10:
		return fmt.Sprintf("%.0fms", ms)
	}
	return fmt.Sprintf("%.1fms", ms)
}

func short(d string) string {
	if i := strings.IndexByte(d, ':'); i >= 0 && len(d) > i+13 {
		return d[:i+13]
	}
	return d
}

// Dash returns x, or "-" when x is empty, for table cells.
func Dash(x string) string {
	if x == "" {
		return "-"
	}
	return x
}

// runtimeLine says which runtime configuration the plan follows: the
// runtime and version, the registry model and where it was set, and the
// pull path.
func runtimeLine(rc *probe.RuntimeConfig) string {
	rt := rc.Runtime.Name
	switch {
	case rc.Runtime.Assumed:
		rt += " (version unknown, 2.0 assumed)"
	case rc.Runtime.Version != "":
		rt += " " + rc.Runtime.Version
	}
	parts := []string{"runtime " + rt}
	for _, st := range rc.Settings {
		if st.Key == "registry.config_path" {
			v := st.Value
			if v == "" {
				v = "(empty: legacy mirrors, certs.d not read)"
			}
			parts = append(parts, "config_path "+v+" from "+st.Source)
		}
	}
	if rc.PullPath != "" {
		parts = append(parts, "pull path "+rc.PullPath)
	}
	if rc.Plan != nil && rc.Plan.CRIO != nil {
		parts = append(parts, crioLine(rc.Plan.CRIO)...)
	}
	return strings.Join(parts, " · ")
}

// crioLine is the CRI-O part of the runtime line: the [[registry]] of
// registries.conf that matched, a short name's resolution and the
// signature policy's requirement.
func crioLine(f *runtimecfg.CRIOFacts) []string {
	reg := "registries.conf: no [[registry]] matches"
	if f.Registry != "" {
		reg = "registries.conf [[registry]] " + f.Registry + " at " + f.RegistrySource
	}
	out := []string{reg}
	if f.ShortName != "" {
		out = append(out, "short name: "+f.ShortName)
	}
	if f.Policy != nil && len(f.Policy.Requirements) > 0 {
		out = append(out, "policy "+strings.Join(f.Policy.Requirements, "+")+" ("+f.Policy.File+")")
	}
	return out
}
