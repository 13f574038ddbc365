package azurecmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/spf13/cobra"

	"github.com/pullpath/pullpath/internal/azure"
	"github.com/pullpath/pullpath/internal/cli"
	"github.com/pullpath/pullpath/internal/explain"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

type azureOptions struct {
	streams cli.Streams
	// credential builds the Azure credential; tests replace it.
	credential func() (azcore.TokenCredential, error)
	clientOpts *arm.ClientOptions

	subscription string
	cluster      string
	registry     string
	endpoints    []string
	zone         string
	nics         []string
	pool         string
	targets      []string
	dataPlane    string
	fromAz       string
	output       string
	noColor      bool
	timeout      time.Duration
}

// NewCmdAzure builds `pullpath azure`: the node network compared with the
// private path the registry needs, read from Azure's own configuration.
//
// It is a command of its own rather than `diagnose --azure`: diagnose reads
// a workload through the Kubernetes API, this reads ARM (or az CLI dumps
// handed to a support engineer) and needs no cluster access at all.
func NewCmdAzure(streams cli.Streams) *cobra.Command {
	return newCmdAzure(&azureOptions{streams: streams, credential: func() (azcore.TokenCredential, error) {
		return azidentity.NewDefaultAzureCredential(nil)
	}})
}

func newCmdAzure(o *azureOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "azure --cluster RG/NAME --registry RG/NAME | --from-az DIR",
		Short: "Compare each node pool's network with the private path to the registry, from Azure's configuration",
		Long: `azure reads, for every node pool of an AKS cluster, what Azure's control plane says
about the private path to the registry, and names the setting that breaks it:

  1 endpoints  the registry's private endpoint: FQDN -> IP of the login server and of
               every data endpoint (<reg>.<region>.data.azurecr.io), from its DNS configuration
  2 dns        an A record per FQDN in privatelink.azurecr.io with that IP, the zone linked
               to the VNet the nodes resolve through; custom DNS servers are named with the
               conditional forwarder to 168.63.129.16 to check (forwarding cannot be seen)
  3 route      longest-prefix match of each IP in a node NIC's effective routes: the next hop,
               the route table and route that decided, the peering (both sides) or gateway
               transit behind it
  4 security   the NIC's effective security rules for TCP 443 to each IP, and the deciding rule
  5 return     the endpoint subnet's route back to the node subnet (or: outside Azure)

Verdicts use the shared vocabulary (layer, cause, owner, endpoint) with source
control-plane. With --data-plane (a pullpath probe or diagnose --probe JSON document)
each pool says whether the node's own verdict and Azure's configuration agree.

Credentials come from azidentity's DefaultAzureCredential (environment, workload
identity, managed identity, az login). --from-az reads az CLI dumps instead, no
credentials needed:

` + indent(azure.AzLayout, "  ") + `

-o json and -o yaml print one AzureReport document (schema/azurereport.schema.json);
-o html writes one self-contained page that draws each pool's path.` +
			cli.ExitCodesHelp("every pool has a private path to every registry endpoint", "a pool's path is broken (or unconfirmed); the verdict names the setting"),
		Example: `  pullpath azure --subscription $SUB --cluster rg-aks/aks-prod --registry rg-hub/acrprod
  pullpath azure --cluster rg-aks/aks-prod --registry rg-hub/acrprod --target registry.corp.example=192.168.10.20
  pullpath azure --from-az ./dumps --data-plane probe.json -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd.Context()) },
	}
	f := cmd.Flags()
	f.StringVar(&o.subscription, "subscription", "", "subscription ID (default $AZURE_SUBSCRIPTION_ID)")
	f.StringVar(&o.cluster, "cluster", "", "the AKS cluster as RESOURCE_GROUP/NAME")
	f.StringVar(&o.registry, "registry", "", "the container registry as RESOURCE_GROUP/NAME")
	f.StringArrayVar(&o.endpoints, "private-endpoint", nil, "private endpoint resource ID (repeatable; default: the registry's private endpoint connections)")
	f.StringVar(&o.zone, "zone", "", "private DNS zone resource ID (default: the endpoint's DNS zone group, else privatelink.azurecr.io in the registry's group)")
	f.StringArrayVar(&o.nics, "nic", nil, "POOL=NIC_ID: a standalone NIC in the pool's subnet whose effective routes and rules to read (repeatable)")
	f.StringVar(&o.pool, "pool", "", "check only this node pool")
	f.StringArrayVar(&o.targets, "target", nil, "HOST=IP: another registry endpoint to check, e.g. one on-premises behind the VPN gateway (repeatable)")
	f.StringVar(&o.dataPlane, "data-plane", "", "a pullpath probe or diagnose --probe JSON document to compare with")
	f.StringVar(&o.fromAz, "from-az", "", "read az CLI JSON dumps from this directory instead of calling Azure")
	f.BoolVar(&o.noColor, "no-color", false, "never colour the output")
	f.DurationVar(&o.timeout, "timeout", 2*time.Minute, "deadline for all Azure calls")
	cli.AddOutputFlag(cmd, &o.output, azureFormats)
	return cmd
}

func indent(s, pre string) string {
	return pre + strings.ReplaceAll(s, "\n", "\n"+pre)
}

func splitPair(v, sep, flag string) (string, string, error) {
	a, b, ok := strings.Cut(v, sep)
	if !ok || a == "" || b == "" {
		return "", "", cli.UsageErrorf("--%s %q: want A%sB", flag, v, sep)
	}
	return a, b, nil
}

func (o *azureOptions) run(ctx context.Context) error {
	if err := cli.CheckOutput(o.output, azureFormats); err != nil {
		return err
	}
	var targets []azure.Target
	for _, t := range o.targets {
		h, ip, err := splitPair(t, "=", "target")
		if err != nil {
			return err
		}
		targets = append(targets, azure.Target{Host: h, IP: ip})
	}
	var dp azure.DataPlane
	if o.dataPlane != "" {
		b, err := os.ReadFile(o.dataPlane)
		if err != nil {
			return cli.UsageErrorf("reading --data-plane: %v", err)
		}
		if dp, err = azure.ParseDataPlane(b, o.dataPlane); err != nil {
			return &cli.ExitError{Code: cli.ExitUsage, Err: err}
		}
	}
	var snap *azure.Snapshot
	var readErr error
	input := azure.Input{}
	if o.fromAz != "" {
		input = azure.Input{Mode: "az", Dir: o.fromAz}
		snap, readErr = azure.LoadAz(o.fromAz)
		if snap == nil {
			return &cli.ExitError{Code: cli.ExitUsage, Err: readErr}
		}
	} else {
		cfg, err := o.config()
		if err != nil {
			return err
		}
		input = azure.Input{Mode: "sdk"}
		cred, err := o.credential()
		if err != nil {
			return &cli.ExitError{Code: cli.ExitInternal, Err: fmt.Errorf("creating the Azure credential: %w", err)}
		}
		cctx, cancel := context.WithTimeout(ctx, o.timeout)
		defer cancel()
		snap, readErr = azure.NewCollector(cred, o.clientOpts).Collect(cctx, cfg)
	}
	snap.Targets = append(snap.Targets, targets...)
	rep := azure.Analyze(snap, azure.Options{Pool: o.pool})
	rep.Input.Mode, rep.Input.Dir = input.Mode, input.Dir
	if readErr != nil {
		for _, line := range strings.Split(readErr.Error(), "\n") {
			rep.Warnings = append(rep.Warnings, verdict.Warning{Code: verdict.CodeAzureRead, Message: explain.Redact(line)})
		}
	}
	if dp != nil {
		dp.Attach(rep)
	}
	var err error
	switch o.output {
	case report.FormatJSON, report.FormatYAML:
		// The report carries its own apiVersion and kind.
		err = report.WriteOwnDocument(o.streams.Out, o.output, report.KindAzureReport, rep)
	case report.FormatHTML:
		err = azureHTML(o.streams.Out, rep)
	default:
		err = azureText(o.streams.Out, rep, report.Style{Color: cli.UseColor(o.streams.Out, o.noColor)})
	}
	if err != nil {
		return &cli.ExitError{Code: cli.ExitInternal, Err: err}
	}
	switch {
	case len(rep.Pools) == 0 && readErr != nil:
		return &cli.ExitError{Code: cli.ExitInternal, Err: fmt.Errorf("reading Azure's configuration: %s", explain.Redact(strings.SplitN(readErr.Error(), "\n", 2)[0]))}
	case !rep.Verdict.OK:
		return cli.ExitWith(cli.ExitFailure)
	}
	return nil
}

func (o *azureOptions) config() (azure.Config, error) {
	cfg := azure.Config{Subscription: o.subscription, PrivateEndpoints: o.endpoints, ZoneID: o.zone, NICs: map[string]string{}}
	if cfg.Subscription == "" {
		cfg.Subscription = os.Getenv("AZURE_SUBSCRIPTION_ID")
	}
	if cfg.Subscription == "" {
		return cfg, cli.UsageErrorf("no subscription: pass --subscription or set AZURE_SUBSCRIPTION_ID (or read dumps with --from-az)")
	}
	var err error
	if o.cluster == "" {
		return cfg, cli.UsageErrorf("--cluster RESOURCE_GROUP/NAME is required (or --from-az DIR)")
	}
	if cfg.ClusterGroup, cfg.Cluster, err = splitPair(o.cluster, "/", "cluster"); err != nil {
		return cfg, err
	}
	if o.registry != "" {
		if cfg.RegistryGroup, cfg.Registry, err = splitPair(o.registry, "/", "registry"); err != nil {
			return cfg, err
		}
	} else if len(o.endpoints) == 0 && len(o.targets) == 0 {
		return cfg, cli.UsageErrorf("--registry RESOURCE_GROUP/NAME, --private-endpoint or --target is required")
	}
	for _, n := range o.nics {
		pool, id, err := splitPair(n, "=", "nic")
		if err != nil {
			return cfg, err
		}
		cfg.NICs[pool] = id
	}
	return cfg, nil
}

// azureText renders the report: per pool one line per check, then the
// pool's verdict and the agreement with the data plane; a summary last.
func azureText(w io.Writer, r *azure.Report, s report.Style) error {
	b := &strings.Builder{}
	fmt.Fprintf(b, "%s %s (%s)\n", s.Bold("registry endpoints"), report.Dash(r.Input.Registry), r.Source)
	for _, e := range r.Endpoints {
		fmt.Fprintf(b, "  %-40s %-15s %-8s %s\n", e.FQDN, e.IP, e.Role, report.Dash(e.PrivateEndpoint))
	}
	for _, p := range r.Pools {
		fmt.Fprintf(b, "\n%s %s  subnet %s %s  vnet %s  dns %s\n", s.Bold("pool"), p.Name, idTail(p.Subnet),
			strings.Join(p.SubnetPrefix, ","), report.Dash(p.VNet), dnsServers(p.DNSServers))
		fmt.Fprintf(b, "  %s %s\n", s.Dim("routes:"), p.RoutesFrom)
		for _, c := range p.Checks {
			mark := s.Green("✔")
			switch checkState(c) {
			case report.HopNotReached:
				mark = s.Dim("-")
			case report.HopFailed:
				mark = s.Red("✘")
			case report.HopWarning:
				mark = s.Yellow("?")
			}
			fmt.Fprintf(b, "  %s %-9s %s\n", mark, c.Step, c.Summary)
		}
		writeAzureVerdict(b, p.Verdict, s)
		if a := p.Agreement; a != nil {
			word := s.Red("disagree")
			if a.Agree {
				word = s.Green("agree")
			}
			fmt.Fprintf(b, "%s data plane (%s): %s — %s\n", s.Bold("compare"), dataPlaneCause(a.DataPlane), word, a.Summary)
		}
	}
	for _, wn := range r.Warnings {
		fmt.Fprintf(b, "%s %s: %s\n", s.Yellow("!"), wn.Code, wn.Message)
	}
	fmt.Fprintf(b, "\n%s\n", azureSummary(r))
	_, err := io.WriteString(w, b.String())
	return err
}

func writeAzureVerdict(b *strings.Builder, v azure.Verdict, s report.Style) {
	vb := &strings.Builder{}
	_ = report.VerdictText(vb, v.Verdict, s)
	b.WriteString(vb.String())
	if !v.OK && !v.Certain {
		fmt.Fprintf(b, "  %s %s\n", s.Yellow("unconfirmed:"), unconfirmed)
	}
	if v.Certain && len(v.From) > 0 {
		fmt.Fprintf(b, "  %s %s\n", s.Dim("proof:"), strings.Join(v.From, ", "))
	}
	if !v.Certain && v.Settle != "" {
		fmt.Fprintf(b, "  %s %s\n", s.Yellow("settle:"), v.Settle)
	}
}

func azureSummary(r *azure.Report) string {
	v := r.Verdict
	if v.OK {
		return fmt.Sprintf("OK: %d pool(s), %d endpoint(s), source %s", len(r.Pools), len(r.Endpoints), r.Source)
	}
	out := "FAIL " + v.Cause
	if v.Endpoint != "" {
		out += " at " + v.Endpoint
	}
	if v.Owner != "" {
		out += ", owner " + string(v.Owner)
	}
	if v.Setting != "" {
		out += ", setting: " + v.Setting
	}
	return out + ", source " + r.Source
}

func dnsServers(s []string) string {
	if len(s) == 0 {
		return "Azure DNS"
	}
	return strings.Join(s, ",")
}

func idTail(id string) string {
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		return id[i+1:]
	}
	return report.Dash(id)
}
