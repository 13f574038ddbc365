package clustercmd

import (
	"path"
	"strconv"
	"strings"

	"github.com/pullpath/pullpath/internal/cli"
)

// validate checks diagnose's flags before the cluster is asked anything.
func (o *diagnoseOptions) validate() error {
	if err := cli.CheckPositiveDuration("probe-deadline", o.deadline); err != nil {
		return err
	}
	if err := cli.CheckOptionalDuration("probe-step-timeout", o.stepTimeout); err != nil {
		return err
	}
	if err := cli.CheckOptionalDuration("probe-wait", o.wait); err != nil {
		return err
	}
	if (o.providerConfig == "") != (o.providerBinDir == "") {
		return cli.UsageErrorf("--probe-credential-provider-config and --probe-credential-provider-bin-dir go together")
	}
	for name, v := range map[string]string{"probe-credential-provider-config": o.providerConfig, "probe-credential-provider-bin-dir": o.providerBinDir,
		"probe-crio-namespaced-auth-dir": o.crioAuthDir, "probe-crio-signature-policy-dir": o.crioPolicyDir} {
		if v != "" && (!strings.HasPrefix(v, "/") || path.Clean(v) == "/") {
			return cli.InvalidFlag(name, v, "an absolute node path other than /")
		}
	}
	if o.podView && !o.probe {
		return cli.UsageErrorf("--pod-view needs --probe: it compares the pod's path with the node probe's")
	}
	if o.maxImages < -1 {
		return cli.InvalidFlag("max-listed-images", strconv.Itoa(o.maxImages), "-1 (no cap), 0 or more, as the kubelet's nodeStatusMaxImages")
	}
	return nil
}
