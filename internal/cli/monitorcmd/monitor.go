// Package monitorcmd is `pullpath monitor`, the node agent. It links no
// Kubernetes client: both binaries carry it, and the full pullpath adds the
// `status` subcommand, which reads the cluster (internal/cli/clustercmd).
package monitorcmd

import (
	"context"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/pullpath/pullpath/internal/cli"
	"github.com/pullpath/pullpath/internal/monitor"
	"github.com/pullpath/pullpath/internal/report"
)

type options struct {
	streams   cli.Streams
	config    string
	root      string
	listen    string
	node      string
	pool      string
	condition bool
	once      bool
	output    string
	dnsPort   int
}

// NewCmdMonitor builds `pullpath monitor`: the agent a DaemonSet runs on
// every node.
func NewCmdMonitor(streams cli.Streams) *cobra.Command {
	o := &options{streams: streams}
	cmd := &cobra.Command{
		Use:   "monitor --config FILE",
		Short: "Watch the pull path from this node on a schedule: Prometheus metrics, a node condition, events",
		Long: `monitor is the node agent. It runs the probe of ` + "`pullpath probe`" + ` on a schedule for
every target of its configuration, from the node's network namespace and with
the node's files (--root /host in the DaemonSet of deploy/monitor), and reports:

  /metrics   Prometheus metrics: pullpath_probe_success, pullpath_probe_failure_info
             {layer,cause,role,owner,endpoint}, pullpath_step_duration_seconds{step}, ...
  PullPathReady   a node condition, False with the cause while a target fails
             (needs the RBAC of deploy/monitor/rbac.yaml; --node-condition=false skips it)
  events     PullPathBroken / PullPathRepaired on the node, on transitions

With --once it probes every target once, prints the results and exits; -o json and
-o yaml print them as one MonitorResults document (schema/monitorresults.schema.json).` +
			cli.ExitCodesHelp("every target works (--once), or the agent stopped cleanly", "a target fails (--once)"),
		Example: `  pullpath monitor --config /etc/pullpath/config.yaml --root /host --listen :9808
  pullpath monitor --config monitor.yaml --once -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd.Context()) },
	}
	f := cmd.Flags()
	f.StringVar(&o.config, "config", "", "the agent's configuration (YAML or JSON: targets, interval, blobs, full_interval, full_byte_budget)")
	f.StringVar(&o.root, "root", "/", "the node's root as mounted in the pod (/host in the DaemonSet)")
	f.StringVar(&o.listen, "listen", ":9808", "address to serve /metrics, /results and /healthz on (empty: none)")
	f.StringVar(&o.node, "node", "", "this node's name (default $NODE_NAME, else the host name)")
	f.StringVar(&o.pool, "pool", "", "this node's pool (default: from the node's labels through the API server, else $PULLPATH_POOL)")
	f.BoolVar(&o.condition, "node-condition", true, "set the PullPathReady node condition and post events (in a cluster only)")
	f.BoolVar(&o.once, "once", false, "probe every target once, print the results and exit")
	f.IntVar(&o.dnsPort, "dns-port", 53, "port of the nameservers in resolv.conf (for labs that cannot bind 53)")
	cli.AddOutputFlag(cmd, &o.output, report.DocumentFormats)
	return cmd
}

func (o *options) run(ctx context.Context) error {
	if o.config == "" {
		return cli.UsageErrorf("--config is required: the file that names the targets to watch")
	}
	if err := cli.CheckOutput(o.output, report.DocumentFormats); err != nil {
		return err
	}
	if o.dnsPort < 1 || o.dnsPort > 65535 {
		return cli.UsageErrorf("invalid value %d for --dns-port: want 1-65535", o.dnsPort)
	}
	cfg, err := monitor.LoadConfig(o.config)
	if err != nil {
		return cli.UsageErrorf("%v", err)
	}
	if fi, err := os.Stat(o.root); err != nil || !fi.IsDir() {
		return cli.UsageErrorf("invalid value %q for --root: not a directory", o.root)
	}
	node := o.node
	if node == "" {
		node = os.Getenv("NODE_NAME")
	}
	if node == "" {
		node, _ = os.Hostname()
	}
	a := &monitor.Agent{Config: cfg, Node: node, Root: o.root, DNSPort: o.dnsPort, Log: o.streams.Err}
	if o.condition && !o.once {
		if c, err := monitor.InClusterNodeClient(node); err == nil {
			a.Client = c
			a.Coord = &monitor.Coordinator{Client: c, Namespace: monitor.InClusterNamespace()}
		} else {
			fmt.Fprintf(o.streams.Err, "monitor: no node condition: %v\n", err)
		}
	}
	a.Pool = o.pool
	if a.Pool == "" && a.Client != nil {
		lctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		if n, err := a.Client.Get(lctx); err == nil {
			a.Pool = n.Pool()
		} else {
			fmt.Fprintf(o.streams.Err, "monitor: reading node %s for its pool: %v\n", node, err)
		}
		cancel()
	}
	if a.Pool == "" {
		a.Pool = os.Getenv("PULLPATH_POOL")
	}
	if a.Pool == "" {
		a.Pool = "unknown"
	}
	a.Metrics = monitor.NewMetrics(node, a.Pool, cli.Version)

	if o.once {
		return o.printOnce(a.Round(ctx))
	}
	var ln net.Listener
	if o.listen != "" {
		if ln, err = net.Listen("tcp", o.listen); err != nil {
			return &cli.ExitError{Code: cli.ExitInternal, Err: fmt.Errorf("listening on %s: %w", o.listen, err)}
		}
	}
	fmt.Fprintf(o.streams.Err, "monitor: node %s, pool %s, %d targets every %s, metrics on %s\n",
		node, a.Pool, len(cfg.Targets), time.Duration(cfg.Interval), o.listen)
	if err := a.Run(ctx, ln); err != nil {
		return &cli.ExitError{Code: cli.ExitInternal, Err: err}
	}
	return nil
}

func (o *options) printOnce(results []monitor.Result) error {
	code := cli.ExitOK
	for _, r := range results {
		if !r.Verdict.OK {
			code = cli.ExitFailure
		}
	}
	if o.output != report.FormatText {
		doc := struct {
			Results []monitor.Result `json:"results"`
		}{results}
		if err := cli.WriteDocument(o.streams.Out, o.output, report.KindMonitorResults, &doc); err != nil {
			return err
		}
		return cli.ExitWith(code)
	}
	for _, r := range results {
		v := r.Verdict
		if v.OK {
			fmt.Fprintf(o.streams.Out, "✔ %s %s (%s, %d ms)\n", r.Target, r.Image, r.Mode, r.Ms)
			continue
		}
		fmt.Fprintf(o.streams.Out, "✘ %s %s: %s at %s (%s), owner %s: %s\n", r.Target, r.Image, v.Cause, v.Endpoint, v.Role, v.Owner, v.Summary)
	}
	return cli.ExitWith(code)
}
