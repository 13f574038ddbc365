package cluster

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/pullpath/pullpath/internal/redact"
	"github.com/pullpath/pullpath/internal/verdict"
)

// CauseNoPod is the cause of a workload without any pod: no pull was ever
// attempted, so there is no pull failure to diagnose, and no pull success
// either.
const CauseNoPod = verdict.CodeUnknownNoPod

// noPodVerdict is the verdict for a controller with no pod: it says that
// no pod exists, and why when the spec or the events tell (replicas 0, a
// ReplicaSet's FailedCreate such as an exceeded quota or a denying
// admission webhook). It is never "no pull failure".
func noPodVerdict(in *Input, workload string) verdict.Verdict {
	d := verdict.Describe(CauseNoPod, verdict.RoleNone, "")
	v := verdict.Verdict{Layer: verdict.LayerUnknown, Cause: CauseNoPod, Next: d.Next}
	why := "no event says why (events expire after an hour by default)"
	switch {
	case in.Replicas != nil && *in.Replicas == 0:
		why = "its spec.replicas is 0"
	default:
		if e := lastFailedCreate(in.Events); e != nil {
			why = fmt.Sprintf("%s/%s reports %s: %s", strings.ToLower(e.InvolvedObject.Kind), e.InvolvedObject.Name, e.Reason, redact.String(e.Message))
			v.Evidence = redact.String(e.Message)
		}
	}
	v.Summary = fmt.Sprintf("No pod of %s exists, so the node never tried to pull the image: %s.", workload, why)
	return v
}

// lastFailedCreate is the newest event saying a controller could not
// create a pod.
func lastFailedCreate(evs []corev1.Event) *corev1.Event {
	var out *corev1.Event
	for i := range evs {
		e := &evs[i]
		if !slices.Contains([]string{"FailedCreate", "FailedCreatePodSandBox"}, e.Reason) && !strings.Contains(e.Message, "forbidden") {
			continue
		}
		if out == nil || !eventTime(e).Before(eventTime(out)) {
			out = e
		}
	}
	return out
}
