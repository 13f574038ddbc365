package explain

import (
	"bytes"
	"github.com/pullpath/pullpath/internal/verdict"
	"strings"
)

// Finding is one pull failure found in the input: the first message that
// shows it, its verdict, and how often it occurred.
type Finding struct {
	Message Message `json:"message"`
	Result  Result  `json:"result"`
	// Count is the number of occurrences: the sum of the counts of every
	// message grouped into this finding.
	Count int `json:"count"`
}

// Explain parses input and classifies every message, in input order. It
// keeps only pull failures, groups identical failures (same image, cause,
// role and endpoint) into one finding with a count, and drops a detail-less
// back-off ("Back-off pulling image", "Error: ImagePullBackOff") when the
// input also holds the failure it stands for. A back-off with no detail
// anywhere stays, with cause unknown.backoff saying where the detail is.
// On a parse error it returns the findings from what could be read.
// ExplainReader does the same for a stream of any size.
func Explain(input []byte) ([]Finding, error) {
	rep, err := ExplainReader(bytes.NewReader(input))
	return rep.Findings, err
}

// explained reports whether a detailed failure in fs covers the
// detail-less back-off b: the same image, or the same pod, or either side
// names neither.
func explained(b Finding, fs []Finding) bool {
	for _, f := range fs {
		if f.Result.Verdict.Cause == verdict.CodeUnknownBackoff {
			continue
		}
		bi, fi := b.Result.Image, f.Result.Image
		bo, fo := podOf(b.Message.Object), podOf(f.Message.Object)
		switch {
		case bi != "" && fi != "" && sameImage(bi, fi):
			return true
		case bo != "" && fo != "" && bo == fo && (bi == "" || fi == ""):
			return true
		case bi == "" && bo == "" || fi == "" && fo == "":
			return true
		}
	}
	return false
}

// podOf drops the container from an object name (pod/ns/name/container).
func podOf(obj string) string {
	parts := strings.Split(obj, "/")
	if len(parts) > 3 {
		parts = parts[:3]
	}
	return strings.Join(parts, "/")
}

// sameImage compares references loosely: docker.io/library/x:latest and x
// are the same image.
func sameImage(a, b string) bool {
	return canonicalImage(a) == canonicalImage(b)
}

func canonicalImage(ref string) string {
	ref = strings.TrimPrefix(strings.TrimSpace(ref), "docker://")
	d := imageDomain(ref)
	rest := ref
	if i := strings.IndexByte(ref, '/'); i >= 0 && strings.ContainsAny(ref[:i], ".:") || strings.HasPrefix(ref, "localhost/") {
		rest = ref[i+1:]
	}
	if d == "registry-1.docker.io" && !strings.Contains(rest, "/") {
		rest = "library/" + rest
	}
	if !strings.Contains(rest, "@") {
		slash := strings.LastIndexByte(rest, '/')
		if !strings.Contains(rest[slash+1:], ":") {
			rest += ":latest"
		}
	}
	return d + "/" + rest
}

// pullRelated reports whether a message can be about an image pull, from
// its reason. Events of other reasons (FailedMount, Unhealthy,
// FailedScheduling, BackOff of a crashing container) are not.
func pullRelated(m Message) bool {
	switch m.Source {
	case "waiting":
		return isPullWaitingReason(m.Reason)
	case "event", "describe":
		switch m.Reason {
		case "", "Failed", "BackOff", "ErrImageNeverPull", "InspectFailed", "ErrImagePull", "ImagePullBackOff",
			"InvalidImageName", "Pulling", "Pulled", "FailedToPullImage", "FailedPullImage":
		case "FailedCreatePodSandBox":
			// Only the sandbox creations that failed pulling the sandbox
			// image; network (CNI) failures are not pulls.
			if !isSandboxPull(m.Text) {
				return false
			}
		default:
			return false
		}
		if m.Reason == "BackOff" && !strings.Contains(strings.ToLower(m.Text), "pulling image") {
			return false
		}
	}
	t := lowerASCII(m.Text)
	if isSandboxPull(m.Text) {
		return true
	}
	return !containsAny(t, "liveness probe", "readiness probe", "startup probe", "mountvolume", "back-off restarting failed container",
		"failedscheduling", "nodes are available", "failed to create pod sandbox", "error syncing pod") ||
		containsAny(t, "pull", "image")
}

// isSandboxPull reports whether a text is a pod sandbox creation that
// failed pulling the sandbox image.
func isSandboxPull(text string) bool {
	l := lowerASCII(text)
	if !strings.Contains(l, "sandbox") {
		return false
	}
	return sandboxImage(text, newTxt(l)) != ""
}
