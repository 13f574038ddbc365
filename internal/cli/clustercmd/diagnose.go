package clustercmd

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/pullpath/pullpath/internal/cli"
	"github.com/pullpath/pullpath/internal/cluster"
	"github.com/pullpath/pullpath/internal/explain"
	"github.com/pullpath/pullpath/internal/verdict"
)

// diagnoseClassifier reads the kubelet's event and waiting texts with the
// same classifier as `pullpath explain`.
func diagnoseClassifier(msg string) verdict.Verdict {
	return explain.Classify(msg).Verdict
}

// defaultProbeImage is the probe's own image unless --probe-image says
// otherwise. A node that cannot reach ghcr.io needs --probe-image pointing
// at a copy in a registry it can reach.
func defaultProbeImage() string { return "ghcr.io/pullpath/pullpath:" + cli.Version }

type diagnoseOptions struct {
	streams  cli.Streams
	kube     *cluster.KubeFlags
	classify cluster.Classifier

	output         string
	probe          bool
	podView        bool
	probeImage     string
	probeNamespace string
	usePullSecret  bool
	cleanup        bool
	keep           bool
	deadline       time.Duration
	stepTimeout    time.Duration
	wait           time.Duration
	maxImages      int
	// providerConfig and providerBinDir: the kubelet's credential provider
	// paths on the nodes, for a distribution diagnose does not know.
	providerConfig, providerBinDir string
	crioAuthDir, crioPolicyDir     string
	tokenAudience                  string
}

// NewCmdDiagnose builds `pullpath diagnose KIND/NAME`.
func NewCmdDiagnose(streams cli.Streams) *cobra.Command {
	return newCmdDiagnose(streams, diagnoseClassifier)
}

func newCmdDiagnose(streams cli.Streams, classify cluster.Classifier) *cobra.Command {
	o := &diagnoseOptions{streams: streams, classify: classify, kube: cluster.NewKubeFlags()}
	cmd := &cobra.Command{
		Use:   "diagnose (pod NAME | KIND/NAME)",
		Short: "Diagnose a workload's image pull from the cluster: failure, node, pools, cached images, trigger, identity",
		Long: `diagnose reads a workload's pull failure the way you would by hand, and goes
further: the first detailed "Failed to pull image" event and the node it landed on,
every node pool the workload could be scheduled to (nodeSelector, required node
affinity, taints, OS/arch), which nodes hold the image in their cache (so the
replicas there only look healthy), the change that exposed it (scale-up, node
replacement, pool upgrade), and the pull identity without printing secrets.

With --probe it runs ` + "`pullpath probe`" + ` as a Job pinned to the node the pod landed on
and to the newest node of every eligible pool, on the host network with the node's
resolver and /etc, and removes the Jobs when done (also on Ctrl-C). With
--pod-view it also runs the same probe from an ordinary, unprivileged pod on each
of those nodes (pod network, cluster DNS) and shows both paths hop by hop, the
first hop where they part marked: "it works from a pod" proves nothing about the
pull, which runs on the node (docs/pod-vs-node.md).

KIND is pod, deployment, statefulset, daemonset or job; a bare NAME is a pod.

-o json and -o yaml print one DiagnoseReport document (schema/diagnosereport.schema.json).` +
			cli.ExitCodesHelp("no pull failure found", "a pull failure was diagnosed (or no pod exists to pull)"),
		Example: `  pullpath diagnose pod app-7d9f8c6b5d-x2kqp -n shop
  pullpath diagnose deployment/app -n shop -o json
  pullpath diagnose deployment/app -n shop --probe --probe-image myacr.azurecr.io/tools/pullpath:v0.1.0
  pullpath diagnose deployment/app -n shop --probe --pod-view
  pullpath diagnose --cleanup -n shop
  kubectl pullpath diagnose deploy/app -n shop`,
		RunE:              func(cmd *cobra.Command, args []string) error { return o.run(cmd, args) },
		ValidArgsFunction: o.completeWorkload,
	}
	o.kube.AddFlags(cmd.Flags())
	f := cmd.Flags()
	cli.AddOutputFlag(cmd, &o.output, diagnoseFormats)
	f.BoolVar(&o.probe, "probe", false, "run pullpath probe as a Job on the landed node and the newest node of every eligible pool")
	f.StringVar(&o.probeImage, "probe-image", "", "the probe's own image (default "+defaultProbeImage()+")")
	f.StringVar(&o.probeNamespace, "probe-namespace", "", "namespace for the probe Jobs (default: the workload's)")
	f.BoolVar(&o.usePullSecret, "use-pull-secret", false, "mount the workload's matching pull secret into the probe (needs get on secrets)")
	f.BoolVar(&o.cleanup, "cleanup", false, "delete every probe Job pullpath left in the namespace, then exit")
	f.BoolVar(&o.podView, "pod-view", false, "with --probe, also probe from an ordinary pod on each probed node (pod network, cluster DNS, the image's trust store; unprivileged, no host mounts) and compare its path with the node's hop by hop")
	f.BoolVar(&o.keep, "keep", false, "leave the probe Jobs in place (they expire after 10 minutes)")
	f.DurationVar(&o.deadline, "probe-deadline", 2*time.Minute, "deadline of each probe run on a node")
	f.DurationVar(&o.stepTimeout, "probe-step-timeout", 0, "timeout of each probe step (0: the probe's default)")
	f.DurationVar(&o.wait, "probe-wait", 0, "how long to wait for all probes (0: the deadline plus 2 minutes)")
	f.StringVar(&o.providerConfig, "probe-credential-provider-config", "", "node path of the kubelet's --image-credential-provider-config, mounted read-only into the probe (default: known for AKS, EKS, GKE)")
	f.StringVar(&o.crioAuthDir, "probe-crio-namespaced-auth-dir", "", "node path of CRI-O's namespaced_auth_dir on CRI-O nodes, mounted read-only into the probe when outside /etc (default /etc/crio/auth)")
	f.StringVar(&o.crioPolicyDir, "probe-crio-signature-policy-dir", "", "node path of CRI-O's signature_policy_dir on CRI-O nodes, mounted read-only into the probe when outside /etc (default /etc/crio/policies)")
	f.StringVar(&o.providerBinDir, "probe-credential-provider-bin-dir", "", "node path of the kubelet's --image-credential-provider-bin-dir, mounted read-only into the probe (with --probe-credential-provider-config)")
	f.StringVar(&o.tokenAudience, "probe-service-account-audience", "", "give the probe a token of the workload's service account for this audience (the serviceAccountTokenAudience of a kubelet credential provider with tokenAttributes, KEP-4412; AKS: api://AKSIdentityBinding), as the kubelet gives the provider")
	f.IntVar(&o.maxImages, "max-listed-images", 50, "the kubelet's nodeStatusMaxImages in this cluster (-1: no cap)")
	return cmd
}

func (o *diagnoseOptions) run(cmd *cobra.Command, args []string) error {
	render, rerr := diagnoseRenderer(o.output)
	if rerr != nil {
		return rerr
	}
	if err := o.validate(); err != nil {
		return err
	}
	if o.cleanup && len(args) > 0 {
		return cli.UsageErrorf("--cleanup takes no workload")
	}
	if !o.cleanup {
		if len(args) == 0 {
			return cli.UsageErrorf("diagnose needs a workload: pod NAME, KIND/NAME or NAME")
		}
		if err := checkWorkloadArgs(args); err != nil {
			return err
		}
		if _, err := cluster.ParseWorkload(args, ""); err != nil {
			return &cli.ExitError{Code: cli.ExitUsage, Err: err}
		}
	}
	// A missing, unreadable or invalid kubeconfig is the user's input: exit 2.
	ns, err := o.kube.Namespace()
	if err != nil {
		return &cli.ExitError{Code: cli.ExitUsage, Err: err}
	}
	cs, err := o.kube.Clientset()
	if err != nil {
		code := cli.ExitInternal
		if cluster.IsConfigError(err) {
			code = cli.ExitUsage
		}
		return &cli.ExitError{Code: code, Err: err}
	}
	ctx := cmd.Context()
	if o.cleanup {
		deleted, err := cluster.Cleanup(ctx, cs, ns, "")
		for _, d := range deleted {
			fmt.Fprintf(o.streams.Out, "job/%s deleted\n", d)
		}
		if err != nil {
			return &cli.ExitError{Code: cli.ExitInternal, Err: err}
		}
		if len(deleted) == 0 {
			fmt.Fprintf(o.streams.Err, "no probe jobs in namespace %s\n", ns)
		}
		return nil
	}
	ref, err := cluster.ParseWorkload(args, ns)
	if err != nil {
		return &cli.ExitError{Code: cli.ExitUsage, Err: err}
	}
	var do cluster.DiagnoseOptions
	if cli.IsTerminal(o.streams.Err) {
		// Progress only for a person watching; logs and pipes get the result.
		do.Progress = func(msg string) { fmt.Fprintf(o.streams.Err, "pullpath: %s\n", msg) }
	}
	if o.probe {
		img := o.probeImage
		if img == "" {
			img = defaultProbeImage()
		}
		do.Probe = &cluster.ProbeOptions{
			Image: img, Namespace: o.probeNamespace, UsePullSecret: o.usePullSecret,
			Deadline: o.deadline, StepTimeout: o.stepTimeout, Wait: o.wait, Keep: o.keep,
			ProviderConfig: o.providerConfig, ProviderBinDir: o.providerBinDir,
			CRIONamespacedAuthDir: o.crioAuthDir, CRIOSignaturePolicyDir: o.crioPolicyDir, TokenAudience: o.tokenAudience,
			PodView: o.podView,
		}
	}
	rep, err := cluster.Diagnose(ctx, cs, ref, do, cluster.WithClassifier(o.classify), cluster.WithMaxListedImages(o.maxImages))
	if rep == nil {
		code := cli.ExitInternal
		if errors.Is(err, cluster.ErrNotFound) {
			code = cli.ExitUsage
		}
		return &cli.ExitError{Code: code, Err: err}
	}
	// Always print the partial report, even when a later step failed.
	if rerr := render(o.streams.Out, rep); rerr != nil {
		return &cli.ExitError{Code: cli.ExitInternal, Err: rerr}
	}
	if err != nil {
		return &cli.ExitError{Code: cli.ExitInternal, Err: err}
	}
	if rep.Failed() {
		return cli.ExitWith(cli.ExitFailure)
	}
	return nil
}
