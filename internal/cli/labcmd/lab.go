package labcmd

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/pullpath/pullpath/internal/cli"
	"github.com/pullpath/pullpath/internal/lab"
)

// NewCmdLab builds the hidden `pullpath lab` command group: `lab serve`
// runs the embedded lab for manual runs.
func NewCmdLab(streams cli.Streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:    "lab",
		Short:  "Run the embedded pull-path lab (for development)",
		Hidden: true,
		Args:   cobra.NoArgs,
	}
	cmd.AddCommand(newCmdLabServe(streams))
	return cmd
}

type labServeOptions struct {
	streams   cli.Streams
	dir       string
	httpsPort int
	dnsPort   int
	layers    int
	layerSize int64
	output    string
	verbose   bool
}

func newCmdLabServe(streams cli.Streams) *cobra.Command {
	o := &labServeOptions{streams: streams}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Start the lab, print its scenarios, and serve until interrupted",
		Long: `serve starts the lab on loopback (registry 127.0.10.1, token service 127.0.10.2,
blob host 127.0.10.3, mirror 127.0.10.4, DNS 127.0.53.1 and 127.0.53.2), prints
every scenario with its image, node root and expected verdict, and serves
until Ctrl-C. Ports are 443 and 53 when they can be bound, random otherwise.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	f := cmd.Flags()
	f.StringVar(&o.dir, "dir", "", "directory for the registry storage and scenario roots (kept on exit); the default is a temporary directory, removed on exit")
	f.IntVar(&o.httpsPort, "https-port", 0, "port of every HTTPS host; the default is 443, or a random port when 443 cannot be bound")
	f.IntVar(&o.dnsPort, "dns-port", 0, "port of the DNS servers; the default is 53, or a random port when 53 cannot be bound")
	f.IntVar(&o.layers, "layers", 0, "layers per image; the default is 3")
	f.Int64Var(&o.layerSize, "layer-size", 0, "bytes of random data per layer; the default is 64 KiB")
	f.StringVarP(&o.output, "output", "o", "text", "output format: text or json")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "write the registry's log to stderr")
	return cmd
}

func (o *labServeOptions) run(cmd *cobra.Command) error {
	render, ok := labRenderers[o.output]
	if !ok {
		return cli.UsageErrorf("unknown output %q; valid: %s", o.output, strings.Join(labRendererNames(), ", "))
	}
	opts := lab.Options{Dir: o.dir, HTTPSPort: o.httpsPort, DNSPort: o.dnsPort, Layers: o.layers, LayerSize: o.layerSize}
	if o.verbose {
		opts.Log = o.streams.Err
	}
	ctx := cmd.Context()
	l, err := lab.Start(ctx, opts)
	if err != nil {
		return &cli.ExitError{Code: cli.ExitInternal, Err: fmt.Errorf("starting lab: %w", err)}
	}
	defer l.Close()
	if err := render(o.streams.Out, l); err != nil {
		return err
	}
	fmt.Fprintln(o.streams.Err, "lab running; press Ctrl-C to stop")
	<-ctx.Done()
	if err := l.Close(); err != nil {
		return &cli.ExitError{Code: cli.ExitInternal, Err: fmt.Errorf("closing lab: %w", err)}
	}
	return nil
}

var labRenderers = map[string]func(io.Writer, *lab.Lab) error{
	"text": renderLabText,
	"json": renderLabJSON,
}

func labRendererNames() []string {
	var names []string
	for n := range labRenderers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// identity describes a scenario's credentials without the password.
func identity(l *lab.Lab, s lab.Scenario) string {
	switch {
	case s.Username == "":
		return "anonymous"
	case s.Password == l.Password:
		return s.Username
	default:
		return s.Username + " (wrong password)"
	}
}

func expectText(e lab.Expect) string {
	var b strings.Builder
	if e.OK {
		b.WriteString("ok")
	} else {
		fmt.Fprintf(&b, "%s %s role=%s %s", e.Layer, e.Cause, e.Role, e.Endpoint)
	}
	if len(e.Warnings) > 0 {
		fmt.Fprintf(&b, " warn=%s", strings.Join(e.Warnings, ","))
	}
	return b.String()
}

func renderLabText(w io.Writer, l *lab.Lab) error {
	fmt.Fprintf(w, "lab %s: registry %s, HTTPS port %d, DNS %s and %s port %d\n",
		l.Domain, l.Registry, l.HTTPSPort, l.Addrs.DNS, l.Addrs.DNS2, l.DNSPort)
	fmt.Fprintf(w, "CA: %s\n", l.CAFile)
	fmt.Fprintf(w, "pull identity: %s (password in %s)\n", l.Username, l.DockerConfig)
	fmt.Fprintf(w, "node roots: %s/<scenario>\n\n", l.RootsDir)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tIMAGE\tIDENTITY\tPLATFORM\tEXPECT")
	for _, s := range l.Scenarios {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Name, s.Image, identity(l, s), s.Platform, expectText(s.Expect))
	}
	return tw.Flush()
}

type labScenarioJSON struct {
	Name        string     `json:"name"`
	Description string     `json:"description"`
	Image       string     `json:"image"`
	Root        string     `json:"root"`
	Identity    string     `json:"identity"`
	Platform    string     `json:"platform"`
	Expect      lab.Expect `json:"expect"`
}

func renderLabJSON(w io.Writer, l *lab.Lab) error {
	out := struct {
		Domain       string            `json:"domain"`
		Registry     string            `json:"registry"`
		HTTPSPort    int               `json:"httpsPort"`
		DNSPort      int               `json:"dnsPort"`
		Addrs        lab.Addrs         `json:"addrs"`
		CAFile       string            `json:"caFile"`
		DockerConfig string            `json:"dockerConfig"`
		Scenarios    []labScenarioJSON `json:"scenarios"`
	}{l.Domain, l.Registry, l.HTTPSPort, l.DNSPort, l.Addrs, l.CAFile, l.DockerConfig, nil}
	for _, s := range l.Scenarios {
		out.Scenarios = append(out.Scenarios, labScenarioJSON{s.Name, s.Description, s.Image, s.Root, identity(l, s), s.Platform, s.Expect})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
