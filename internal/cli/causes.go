package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// layerMeanings are the contract's layer table (docs/contract.md
// vocabulary), in pull order, with none and unknown last.
var layerMeanings = []struct {
	Layer   verdict.Layer
	Meaning string
}{
	{verdict.LayerConfig, "the node's own pull configuration is broken (unreadable hosts.toml, bad CA file, bad reference)"},
	{verdict.LayerDNS, "the node's resolver cannot give a usable address (NXDOMAIN, SERVFAIL, resolver timeout, public answer where the private zone is needed)"},
	{verdict.LayerRoute, "no working TCP path (timeout, refused, unreachable, reset during connect), also via a proxy"},
	{verdict.LayerTLS, "TLS fails (untrusted, wrong name, expired, handshake timeout, plain HTTP on a TLS port)"},
	{verdict.LayerAuth, "the registry or token service rejects the credentials or their absence (401)"},
	{verdict.LayerAuthz, "the identity is known but may not pull this repository, or the client IP is refused (403, denied, insufficient_scope)"},
	{verdict.LayerManifest, "the reference does not exist or has no manifest for the node's platform"},
	{verdict.LayerTransfer, "a blob download starts but fails: reset, EOF, stall, digest or size mismatch"},
	{verdict.LayerRegistry, "the registry answers but refuses service (429 rate limit, 5xx)"},
	{verdict.LayerRuntime, "the bytes arrived but the node failed with them (unpack, disk, snapshotter); only from messages"},
	{verdict.LayerUnknown, "a failure that names no step (e.g. a bare deadline)"},
	{verdict.LayerNone, "nothing failed"},
}

// causeList is the CauseList document (schema/causelist.schema.json).
type causeList struct {
	Layers []layerEntry `json:"layers"`
	Causes []causeEntry `json:"causes"`
	// Warnings are the warning codes: what works today but will break or
	// mislead; they never make a verdict.
	Warnings []causeEntry `json:"warnings"`
}

type layerEntry struct {
	Layer        verdict.Layer `json:"layer"`
	Rank         int           `json:"rank"`
	DefaultOwner verdict.Owner `json:"default_owner"`
	Meaning      string        `json:"meaning"`
}

// causeEntry is one cause. Summary and next keep the catalogue's
// {endpoint} and {role} placeholders, which a verdict fills in.
type causeEntry struct {
	Code    string        `json:"code"`
	Layer   verdict.Layer `json:"layer"`
	Owner   verdict.Owner `json:"owner"`
	Summary string        `json:"summary"`
	Next    []string      `json:"next"`
}

// catalogueList is the whole catalogue: layers in the contract's order,
// causes in pull order of their layer (unknown last), then by code.
func catalogueList() *causeList {
	cl := &causeList{}
	for _, l := range layerMeanings {
		cl.Layers = append(cl.Layers, layerEntry{Layer: l.Layer, Rank: l.Layer.Rank(), DefaultOwner: verdict.DefaultOwner(l.Layer), Meaning: l.Meaning})
	}
	var unknown []causeEntry
	for _, c := range verdict.Causes() {
		e := causeEntry{Code: c.Code, Layer: c.Layer, Owner: verdict.OwnerOf(c.Code), Summary: c.Summary, Next: c.Next}
		if c.Layer == verdict.LayerUnknown {
			unknown = append(unknown, e)
			continue
		}
		cl.Causes = append(cl.Causes, e)
	}
	cl.Causes = append(cl.Causes, unknown...)
	cl.Warnings = []causeEntry{}
	for _, c := range verdict.Warnings() {
		cl.Warnings = append(cl.Warnings, causeEntry{Code: c.Code, Layer: c.Layer, Owner: verdict.OwnerOf(c.Code), Summary: c.Summary, Next: c.Next})
	}
	return cl
}

type causesOptions struct {
	streams Streams
	output  string
}

// NewCmdCauses builds `pullpath causes [LAYER|CODE...]`.
func NewCmdCauses(streams Streams) *cobra.Command {
	o := &causesOptions{streams: streams}
	cmd := &cobra.Command{
		Use:   "causes [LAYER|CODE...]",
		Short: "List the catalogue: every layer, cause and warning code, its owner, meaning and next steps",
		Long: `causes prints the vocabulary every verdict uses: the layers of the pull path in
pull order with their default owner, then every cause code with its layer, owner,
one-line meaning and the next steps a verdict with that cause gives, then every
warning code (what works today but will break or mislead) the same way. In the
texts, {endpoint} stands for the failing host:port and {role} for the failing
endpoint's role. Arguments keep only the named layers, cause and warning codes.

-o json and -o yaml print one CauseList document (schema/causelist.schema.json).
docs/causes.md is the same list, generated.` + exitCodesHelp("the list was printed", "(not used)"),
		Example: `  pullpath causes
  pullpath causes dns tls.untrusted
  pullpath causes dns.hosts-entry
  pullpath causes -o json | jq -r '.causes[] | select(.owner == "network") | .code'`,
		ValidArgsFunction: completeCauses,
		RunE:              func(_ *cobra.Command, args []string) error { return o.run(args) },
	}
	addOutputFlag(cmd, &o.output, report.DocumentFormats)
	return cmd
}

func (o *causesOptions) run(args []string) error {
	if err := checkOutput(o.output, report.DocumentFormats); err != nil {
		return err
	}
	cl, err := filterCauses(catalogueList(), args)
	if err != nil {
		return &ExitError{Code: ExitUsage, Err: err}
	}
	if o.output != report.FormatText {
		return writeDocument(o.streams.Out, o.output, report.KindCauseList, cl)
	}
	if err := writeCausesText(o.streams.Out, cl); err != nil {
		return &ExitError{Code: ExitInternal, Err: err}
	}
	return nil
}

// filterCauses keeps the layers and causes args name; a name that is
// neither a layer nor a code is an error.
func filterCauses(cl *causeList, args []string) (*causeList, error) {
	if len(args) == 0 {
		return cl, nil
	}
	want := map[string]bool{}
	for _, a := range args {
		want[a] = true
	}
	out := &causeList{Layers: []layerEntry{}, Causes: []causeEntry{}, Warnings: []causeEntry{}}
	seen := map[string]bool{}
	for _, l := range cl.Layers {
		if want[string(l.Layer)] {
			out.Layers = append(out.Layers, l)
			seen[string(l.Layer)] = true
		}
	}
	for _, c := range cl.Causes {
		if want[c.Code] || want[string(c.Layer)] {
			out.Causes = append(out.Causes, c)
			seen[c.Code] = true
		}
	}
	for _, c := range cl.Warnings {
		if want[c.Code] || want[string(c.Layer)] {
			out.Warnings = append(out.Warnings, c)
			seen[c.Code] = true
		}
	}
	for _, a := range args {
		if !seen[a] {
			return nil, fmt.Errorf("unknown layer, cause or warning %q (see pullpath causes)", a)
		}
	}
	return out, nil
}

// writeCausesText prints the layer table, then each cause with its next
// steps.
func writeCausesText(w io.Writer, cl *causeList) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if len(cl.Layers) > 0 {
		fmt.Fprintln(tw, "LAYER\tOWNER\tMEANING")
		for _, l := range cl.Layers {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", l.Layer, report.Dash(string(l.DefaultOwner)), l.Meaning)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	var b strings.Builder
	entry := func(kind string, c causeEntry) {
		fmt.Fprintf(&b, "\n%s  (%slayer %s, owner %s)\n  %s\n", c.Code, kind, c.Layer, report.Dash(string(c.Owner)), c.Summary)
		for _, n := range c.Next {
			fmt.Fprintf(&b, "  - %s\n", n)
		}
	}
	for _, c := range cl.Causes {
		entry("", c)
	}
	for _, c := range cl.Warnings {
		entry("warning, ", c)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// causesMarkdown renders docs/causes.md from the catalogue.
func causesMarkdown(cl *causeList) string {
	var b strings.Builder
	b.WriteString("# Cause catalogue\n\n")
	b.WriteString("<!-- Generated from internal/verdict by `go test ./internal/cli -run TestCausesDoc -update`; do not edit. -->\n\n")
	b.WriteString("Every verdict names a `layer` (the first step of the pull path that fails, in pull order), a finer `cause`, and the `owner` who fixes it. `pullpath causes` prints this list; `pullpath causes -o json` prints it as a `CauseList` document. In the texts, `{endpoint}` is the failing host:port and `{role}` the failing endpoint's role.\n\n")
	b.WriteString("## Layers\n\n| layer | default owner | meaning |\n|---|---|---|\n")
	for _, l := range cl.Layers {
		owner := "(none)"
		if l.DefaultOwner != "" {
			owner = "`" + string(l.DefaultOwner) + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", l.Layer, owner, mdCell(l.Meaning))
	}
	b.WriteString("\n## Causes\n")
	layer := verdict.Layer("")
	for _, c := range cl.Causes {
		if c.Layer != layer {
			layer = c.Layer
			fmt.Fprintf(&b, "\n### %s\n\n| cause | owner | meaning | next steps |\n|---|---|---|---|\n", layer)
		}
		next := make([]string, 0, len(c.Next))
		for i, n := range c.Next {
			next = append(next, fmt.Sprintf("%d. %s", i+1, mdCell(n)))
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | %s | %s |\n", c.Code, report.Dash(string(c.Owner)), mdCell(c.Summary), strings.Join(next, "<br>"))
	}
	b.WriteString("\n## Warnings\n\nA warning is something that works today but will break or mislead later; it never makes a verdict. Reports list them under `warnings`.\n\n| warning | layer | owner | meaning | next steps |\n|---|---|---|---|---|\n")
	for _, c := range cl.Warnings {
		next := make([]string, 0, len(c.Next))
		for i, n := range c.Next {
			next = append(next, fmt.Sprintf("%d. %s", i+1, mdCell(n)))
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | `%s` | %s | %s |\n", c.Code, c.Layer, report.Dash(string(c.Owner)), mdCell(c.Summary), strings.Join(next, "<br>"))
	}
	return b.String()
}

// mdCell escapes text for a Markdown table cell.
func mdCell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "{", `\{`, "}", `\}`).Replace(s)
}

// completeCauses completes layer names and cause codes.
func completeCauses(_ *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	cl := catalogueList()
	var out []cobra.Completion
	for _, l := range cl.Layers {
		out = append(out, cobra.CompletionWithDesc(string(l.Layer), l.Meaning))
	}
	for _, c := range append(cl.Causes, cl.Warnings...) {
		out = append(out, cobra.CompletionWithDesc(c.Code, c.Summary))
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
