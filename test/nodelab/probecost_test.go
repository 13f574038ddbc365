package nodelab_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/google/go-containerregistry/pkg/v1/random"

	"github.com/pullpath/pullpath/internal/cluster"
)

var rusageLine = regexp.MustCompile(`pullpath-node: rusage: maxrss_kib=(\d+) rss_anon_kib=(\d+) rss_file_kib=(\d+)\n?`)

// TestProbePeakRSSOnRealNodes measures the slim binary's peak RSS during a
// full verified pull on a real node: the probe Job of `pullpath diagnose
// --probe` (cluster.ProbeJob, unchanged but for PULLPATH_DEBUG_RUSAGE=1) runs
// `/pullpath probe IMAGE --root /host -o json` (pullpath-node) on pool A's
// node, through its kubelet and containerd, against a 64 MiB image of 4
// random layers in the tier's registry. The binary prints its own
// getrusage ru_maxrss after its report, which the test reads from the pod
// log. What is asserted is that each probe downloaded and verified every
// blob; the peak is logged, not asserted (STYLE: numbers are reported).
//
//	export PULLPATH_KUBE_BIN=$(bash tools/kube/build.sh) PULLPATH_NODELAB=1
//	flock /tmp/pp-netns.lock go test -count=1 -v -run TestProbePeakRSSOnRealNodes ./test/nodelab/
func TestProbePeakRSSOnRealNodes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	w := startWorld(t, ctx, []string{poolA0.Name})
	w.addNode(ctx, poolA0)
	img, err := random.Image(16<<20, 4)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := w.lab.Push(ctx, appRepo, "big", img)
	if err != nil {
		t.Fatal(err)
	}
	const runs = 3
	var peaks []int
	for i := range runs {
		runID := fmt.Sprintf("rss%d", i)
		job := cluster.ProbeJob(cluster.ProbeTarget{Node: poolA0.Name, Pool: "poola", Platform: "linux/amd64"}, ref, "default",
			cluster.ProbeOptions{Image: probeImage, RunID: runID}, "")
		c := &job.Spec.Template.Spec.Containers[0]
		c.Env = append(c.Env, corev1.EnvVar{Name: "PULLPATH_DEBUG_RUSAGE", Value: "1"})
		if _, err := w.cs.BatchV1().Jobs("default").Create(ctx, job, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		var pod corev1.Pod
		w.poll(ctx, 3*time.Minute, "probe Job "+runID+" to finish", func() bool {
			list, err := w.cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: cluster.LabelRun + "=" + runID})
			if err != nil || len(list.Items) == 0 {
				return false
			}
			pod = list.Items[0]
			return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
		})
		log, err := w.cs.CoreV1().Pods("default").GetLogs(pod.Name, &corev1.PodLogOptions{Container: "probe"}).DoRaw(ctx)
		if err != nil {
			t.Fatalf("logs of %s: %v", pod.Name, err)
		}
		// containerd reads stdout and stderr concurrently: the rusage line
		// (stderr, one write) can land between two lines of the report.
		m := rusageLine.FindSubmatch(log)
		rep, err := cluster.ParseProbeLog(rusageLine.ReplaceAll(log, nil))
		if err != nil {
			t.Fatalf("probe %s (%s): %v\n%s", runID, pod.Status.Phase, err, log)
		}
		var verified, bytes int64
		for _, b := range rep.Blobs {
			if b.Verified {
				verified++
				bytes += b.Bytes
			}
		}
		if !rep.Verdict.OK || pod.Status.Phase != corev1.PodSucceeded || verified < 5 || bytes < 64<<20 {
			t.Fatalf("probe %s: %s, verdict ok=%v %s/%s, %d blobs verified (%d bytes), want ok with the config and 4 layers of 16 MiB verified\n%s",
				runID, pod.Status.Phase, rep.Verdict.OK, rep.Verdict.Layer, rep.Verdict.Cause, verified, bytes, log)
		}
		if m == nil {
			t.Fatalf("probe %s: no rusage line in its log (is the probe image pullpath-node?)\n%s", runID, log)
		}
		peak, _ := strconv.Atoi(string(m[1]))
		anon, _ := strconv.Atoi(string(m[2]))
		file, _ := strconv.Atoi(string(m[3]))
		peaks = append(peaks, peak)
		t.Logf("probe cost on %s (run %d): full verified pull of %d blobs, %.1f MiB in %d ms; peak RSS %.1f MiB (ru_maxrss), at exit RssAnon %.1f + RssFile %.1f MiB",
			poolA0.Name, i+1, verified, float64(bytes)/(1<<20), rep.Millis, float64(peak)/1024, float64(anon)/1024, float64(file)/1024)
		_ = w.cs.BatchV1().Jobs("default").Delete(ctx, job.Name, metav1.DeleteOptions{PropagationPolicy: ptr(metav1.DeletePropagationBackground)})
	}
	t.Logf("probe peak RSS on the real-node tier over %d runs: min %.1f / max %.1f MiB (target ≤ 25)", runs, float64(slices.Min(peaks))/1024, float64(slices.Max(peaks))/1024)
}
