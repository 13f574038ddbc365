package clustercmd

import (
	"strconv"

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
	if o.maxImages < -1 {
		return cli.InvalidFlag("max-listed-images", strconv.Itoa(o.maxImages), "-1 (no cap), 0 or more, as the kubelet's nodeStatusMaxImages")
	}
	return nil
}
