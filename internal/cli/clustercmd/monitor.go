package clustercmd

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/pullpath/pullpath/internal/cli"
	"github.com/pullpath/pullpath/internal/cli/monitorcmd"
	"github.com/pullpath/pullpath/internal/cluster"
	"github.com/pullpath/pullpath/internal/monitor"
)

// NewCmdMonitor is `pullpath monitor` of the full binary: the node agent
// plus `monitor status`, which reads the agents' conditions from the API
// server.
func NewCmdMonitor(streams cli.Streams) *cobra.Command {
	cmd := monitorcmd.NewCmdMonitor(streams)
	cmd.AddCommand(newCmdMonitorStatus(streams))
	return cmd
}

type monitorStatusOptions struct {
	streams cli.Streams
	kube    *cluster.KubeFlags
	output  string
	config  string
	images  []string
}

func newCmdMonitorStatus(streams cli.Streams) *cobra.Command {
	o := &monitorStatusOptions{streams: streams, kube: cluster.NewKubeFlags()}
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Per node pool: healthy, broken (cause, owner, since when) or unknown, from the agents' PullPathReady conditions",
		Long: `status reads the PullPathReady condition that the monitor agents set on their
nodes, and prints one line per node pool: healthy, broken (cause, owner, since
when), partial, or unknown (no agent reporting). With the watched images
(--config or --image) it also counts the running pods that use them, and warns of
a broken pool where nothing runs them yet: the next scale-up lands there and fails.

-o json and -o yaml print one MonitorStatus document (schema/monitorstatus.schema.json);
-o html writes one self-contained page with each pool's path and the pool table.` +
			cli.ExitCodesHelp("every reporting pool is healthy", "a pool is broken or partial"),
		Example: `  pullpath monitor status
  pullpath monitor status --image myacr.azurecr.io/team/app:1.0 -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	o.kube.AddFlags(cmd.Flags())
	f := cmd.Flags()
	f.StringVar(&o.config, "config", "", "the agents' configuration, for the watched images")
	f.StringSliceVar(&o.images, "image", nil, "a watched image (repeatable), as the pods' specs write it")
	cli.AddOutputFlag(cmd, &o.output, monitorStatusFormats)
	return cmd
}

func (o *monitorStatusOptions) run(cmd *cobra.Command) error {
	if err := cli.CheckOutput(o.output, monitorStatusFormats); err != nil {
		return err
	}
	images := append([]string(nil), o.images...)
	if o.config != "" {
		cfg, err := monitor.LoadConfig(o.config)
		if err != nil {
			return cli.UsageErrorf("%v", err)
		}
		for _, t := range cfg.Targets {
			images = append(images, t.Image)
		}
	}
	if _, err := o.kube.Namespace(); err != nil {
		return &cli.ExitError{Code: cli.ExitUsage, Err: err}
	}
	cs, err := o.kube.Clientset()
	if err != nil {
		return &cli.ExitError{Code: cli.ExitUsage, Err: err}
	}
	nodes, err := cluster.MonitoredNodesWithResult(cmd.Context(), cs, monitor.ConditionType, monitor.ResultAnnotation, images)
	if err != nil {
		return &cli.ExitError{Code: cli.ExitInternal, Err: err}
	}
	recs := make([]monitor.NodeRecord, 0, len(nodes))
	for _, n := range nodes {
		r := monitor.NodeRecord{Name: n.Name, Pool: n.Pool, Created: n.Created, WatchedPods: n.WatchedPods, Result: n.Result}
		if c := n.Condition; c != nil {
			r.Condition = &monitor.Condition{Type: string(c.Type), Status: string(c.Status), Reason: c.Reason, Message: c.Message,
				LastHeartbeatTime: c.LastHeartbeatTime.UTC().Format(time.RFC3339), LastTransitionTime: c.LastTransitionTime.UTC().Format(time.RFC3339)}
		}
		recs = append(recs, r)
	}
	st := monitor.Aggregate(recs)
	if err := writeMonitorStatus(o.streams.Out, o.output, &st); err != nil {
		return &cli.ExitError{Code: cli.ExitInternal, Err: err}
	}
	if !st.Healthy {
		return cli.ExitWith(cli.ExitFailure)
	}
	return nil
}
