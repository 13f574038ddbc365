package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/pullpath/pullpath/internal/probe"
	"github.com/pullpath/pullpath/internal/registry"
)

type probeOptions struct {
	streams       Streams
	opts          probe.Options
	output        string
	noColor       bool
	username      string
	passwordStdin bool
	progress      bool
	runtimePull   bool
	compareNode   bool
	podRoot       string
	criSocket     string
	asKubelet     bool
	sa            saFlags
	features      Features
}

// NewCmdProbe builds `pullpath probe IMAGE`.
func NewCmdProbe(streams Streams, features Features) *cobra.Command {
	o := &probeOptions{streams: streams, features: features}
	cmd := &cobra.Command{
		Use:   "probe IMAGE",
		Short: "Walk the whole pull path of IMAGE from here, as the node's runtime would",
		Long: `probe performs the pull the way containerd does, from the network namespace it
runs in and with the node's files read under --root: resolv.conf and hosts,
containerd's certs.d/hosts.toml (mirrors, ca, skip_verify), the node trust
store. It resolves, connects, handshakes and speaks the registry protocol for
every host as it is discovered (registry, mirrors, token realm, blob hosts),
downloads and verifies every blob, and names the first step that fails.

Run it on the node (hostNetwork, --root /host) — a pod with cluster DNS proves
nothing about the pull.

-o json and -o yaml print one ProbeReport document (schema/probereport.schema.json);
-o html writes one self-contained page that draws the pull path.` + exitCodesHelp("the pull path works", "a failure was diagnosed; the verdict says where"),
		Example: `  pullpath probe myreg.azurecr.io/team/app:1.2
  pullpath probe --root /host -o json registry.example/app@sha256:...
  echo "$PASSWORD" | pullpath probe --username puller --password-stdin private.example/app:1
  pullpath probe --root /host --as-kubelet myreg.azurecr.io/team/app:1.2`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("as-kubelet") {
				o.opts.AsKubelet = &o.asKubelet
			}
			return o.run(cmd.Context(), args[0])
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.opts.Root, "root", "/", "read the node's files (etc/resolv.conf, etc/hosts, etc/containerd/certs.d, CA bundle) under this directory")
	f.StringVar(&o.opts.HostsDir, "hosts-dir", "", "containerd config_path on the node, read under --root; colon-separated like containerd's (default /etc/containerd/certs.d:/etc/docker/certs.d)")
	f.StringVar(&o.opts.NodeOS, "node-os", "", "the node's operating system as a GOOS (linux, windows) when --root is a copy of another system's files (a Windows node's C: drive): it decides the certs.d directory names and config_path list the runtime uses; default: this machine's")
	f.StringVar(&o.opts.RuntimeVersion, "runtime-version", "", "the runtime's version as the node reports it (status.nodeInfo.containerRuntimeVersion, e.g. containerd://1.7.27-k3s1; diagnose --probe passes it): it beats the version read from the files under --root")
	f.StringVar(&o.opts.PodNamespace, "pod-namespace", "", "the namespace of the pod whose pull this stands for (diagnose --probe passes it): CRI-O reads that namespace's auth file (namespaced_auth_dir) and signature policy (signature_policy_dir) with it; without it they are not read and the report says so")
	f.StringVar(&o.opts.Platform, "platform", "", "the node's platform os/arch[/variant] (default: this machine's)")
	f.StringVar(&o.username, "username", "", "registry user name (the password comes from --password-stdin)")
	f.BoolVar(&o.passwordStdin, "password-stdin", false, "read the registry password or token from stdin")
	f.StringVar(&o.opts.DockerConfig, "docker-config", "", "take credentials from this docker config.json (in place of the node's)")
	f.BoolVar(&o.opts.NoNodeDockerConfig, "no-node-docker-config", false, "leave out the kubelet's node docker config files under --root (config.json or .dockercfg under its --root-dir, /, $HOME/.docker, /.docker), which its keyring holds and the probe reads by default")
	f.StringVar(&o.opts.PullSecret, "pull-secret", "", "take credentials from this Kubernetes Secret (dockerconfigjson, JSON or YAML)")
	f.StringVar(&o.opts.Blobs, "blobs", probe.BlobsFull, "blob check: full (download and verify every blob), head, none")
	f.IntVar(&o.opts.Jobs, "jobs", 4, "parallel blob downloads")
	f.DurationVar(&o.opts.Timeout, "timeout", 5*time.Second, "deadline of each step (DNS query, connect, TLS handshake, response headers, download stall)")
	f.DurationVar(&o.opts.Deadline, "deadline", 10*time.Minute, "deadline of the whole probe")
	addOutputFlag(cmd, &o.output, probeFormats)
	f.BoolVar(&o.noColor, "no-color", false, "never colour the output")
	f.BoolVar(&o.progress, "progress", true, "show a progress bar on stderr when it is a terminal")
	f.BoolVar(&o.compareNode, "compare-node", false, "in a pod that sees the node's files under --root: also resolve every host with the pod's own resolver and print both resolvers' answers side by side (no second Job)")
	f.BoolVar(&o.runtimePull, "runtime-pull", false, "after the probe, ask the node's runtime to pull through CRI (as the kubelet does) and compare; this adds the image to the node's image store")
	f.StringVar(&o.criSocket, "cri-socket", "", "CRI socket of the node's runtime (default <root>/run/containerd/containerd.sock)")
	if features.RuntimeDialer == nil {
		// The slim node binary links no CRI client (see run).
		_ = f.MarkHidden("runtime-pull")
		_ = f.MarkHidden("cri-socket")
	}
	f.IntVar(&o.opts.DNSPort, "dns-port", 53, "port of the nameservers in resolv.conf (for labs that cannot bind 53)")
	_ = f.MarkHidden("dns-port")
	f.StringVar(&o.podRoot, "compare-pod-root", "/", "with --compare-node, the pod's own files (for labs: a pod reads its own /)")
	_ = f.MarkHidden("compare-pod-root")
	f.BoolVar(&o.asKubelet, "as-kubelet", false, "pull with the credentials the kubelet's credential providers give (its --image-credential-provider-config, read under --root), run as the kubelet runs them (default: on when that config exists and no other credentials are given)")
	f.DurationVar(&o.opts.ProviderTimeout, "credential-provider-timeout", 0, "deadline of one credential provider run (default: the kubelet's, 1m)")
	_ = f.MarkHidden("credential-provider-timeout")
	o.sa.add(f)
	registerProbeCompletions(cmd)
	return cmd
}

func (o *probeOptions) run(ctx context.Context, image string) error {
	if err := checkOutput(o.output, probeFormats); err != nil {
		return err
	}
	if err := o.validate(); err != nil {
		return err
	}
	if o.runtimePull && o.features.RuntimeDialer == nil {
		return usageErrorf("--runtime-pull: this binary links no CRI client (the slim node binary); run the full pullpath on the node for it")
	}
	saFunc, err := o.sa.resolver(o.features.ServiceAccountTokens)
	if err != nil {
		return err
	}
	o.opts.ServiceAccount = saFunc
	if o.passwordStdin {
		if o.username == "" {
			return usageErrorf("--password-stdin needs --username")
		}
		pw, err := readSecret(o.streams.In)
		if err != nil {
			return usageErrorf("reading the password from stdin: %v", err)
		}
		o.opts.Creds = &registry.Credentials{Username: o.username, Password: pw, Source: "--password-stdin"}
	} else if o.username != "" {
		return usageErrorf("--username needs --password-stdin (passwords never go on the command line)")
	}
	if o.features.RuntimeDialer != nil {
		// The full binary asks the running runtime for its version (the
		// CRI Version call, read-only) when its socket is under --root.
		o.opts.CRIVersion = probe.RuntimeVersionFor(o.features.RuntimeDialer, o.criSocket)
	}
	stop := o.startProgress()
	rep, err := probe.Run(ctx, image, o.opts)
	stop()
	if err != nil {
		return &ExitError{Code: ExitUsage, Err: err}
	}
	if o.compareNode && !rep.Interrupted {
		probe.CompareNodeResolvers(ctx, rep, image, o.opts.Root, o.podRoot, o.opts.DNSPort, o.opts.Timeout)
	}
	if o.runtimePull && !rep.Interrupted {
		probe.RuntimePullFor(ctx, rep, image, probe.RuntimeOptions{Dialer: o.features.RuntimeDialer, Socket: o.criSocket, Root: o.opts.Root, Creds: o.opts.Creds, Timeout: o.opts.Deadline})
	}
	if err := o.render(rep); err != nil {
		return &ExitError{Code: ExitInternal, Err: err}
	}
	if rep.Interrupted {
		return &ExitError{Code: ExitInterrupted, Err: errInterrupted}
	}
	if !rep.Verdict.OK || (rep.Runtime != nil && rep.Runtime.Error != "" && !rep.Runtime.OK) {
		return exitCode(ExitFailure)
	}
	return nil
}

// readSecret reads one line (or the whole input, up to 64 KiB) without its
// trailing newline.
func readSecret(r io.Reader) (string, error) {
	data, err := io.ReadAll(io.LimitReader(r, 64<<10))
	if err != nil {
		return "", err
	}
	s := strings.TrimRight(string(data), "\r\n")
	if s == "" {
		return "", fmt.Errorf("stdin is empty")
	}
	return s, nil
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// startProgress draws a progress bar on stderr while blobs download, when
// stderr is a terminal. It returns the function that stops and clears it.
func (o *probeOptions) startProgress() func() {
	if !o.progress || !isTerminal(o.streams.Err) {
		return func() {}
	}
	var mu sync.Mutex
	var done, total int64
	o.opts.Progress = func(d, t int64) {
		mu.Lock()
		done, total = d, t
		mu.Unlock()
	}
	w := bufio.NewWriter(o.streams.Err)
	tick := time.NewTicker(100 * time.Millisecond)
	quit := make(chan struct{})
	finished := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(finished)
		for {
			select {
			case <-quit:
				fmt.Fprint(w, "\r\x1b[K")
				w.Flush()
				return
			case <-tick.C:
				mu.Lock()
				d, t := done, total
				mu.Unlock()
				if t == 0 {
					continue
				}
				const width = 30
				n := int(float64(width) * float64(d) / float64(t))
				if n > width {
					n = width
				}
				rate := float64(d) / time.Since(start).Seconds() / (1 << 20)
				fmt.Fprintf(w, "\r\x1b[Kblobs [%s%s] %s / %s  %.1f MiB/s", strings.Repeat("=", n), strings.Repeat(" ", width-n), probe.HumanBytes(d), probe.HumanBytes(t), rate)
				w.Flush()
			}
		}
	}()
	return func() {
		tick.Stop()
		close(quit)
		<-finished
	}
}
