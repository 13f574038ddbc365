package explain

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// row is what an Explain test asserts of each finding.
type row struct {
	Cause, Role, Host, Image string
	Count                    int
}

func rows(fs []Finding) []row {
	out := make([]row, 0, len(fs))
	for _, f := range fs {
		out = append(out, row{f.Result.Verdict.Cause, string(f.Result.Verdict.Role), f.Result.Host, f.Result.Image, f.Count})
	}
	return out
}

func TestExplainFixtures(t *testing.T) {
	tests := []struct {
		file string
		want []row
	}{
		{"describe-acr-dns.txt", []row{
			// The waiting reason, the Error: lines and the Back-off
			// carry no detail; the Failed event explains them.
			{"dns.nxdomain", "registry", "myacr.azurecr.io", "myacr.azurecr.io/team/app:1.2", 4},
		}},
		{"describe-two-containers.txt", []row{
			{"route.timeout", "blob", "prod-eu-west-1-starport-layer-bucket.s3.eu-west-1.amazonaws.com", "123456789012.dkr.ecr.eu-west-1.amazonaws.com/web:2.4.1", 4},
		}},
		{"events-ratelimit.json", []row{
			{"registry.ratelimit", "registry", "registry-1.docker.io", "redis:7.2", 5},
		}},
		{"pod-ghcr-401.yaml", []row{
			{"auth.no-credentials", "auth", "ghcr.io", "ghcr.io/acme/api:v3.1.0", 1},
			{"unknown.backoff", "", "", "ghcr.io/acme/metrics-agent:0.4", 1},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			fs, err := Explain(readFixture(t, tt.file))
			if err != nil {
				t.Fatalf("Explain(%s) error: %v", tt.file, err)
			}
			if diff := cmp.Diff(tt.want, rows(fs)); diff != "" {
				t.Errorf("Explain(%s) mismatch (-want +got):\n%s", tt.file, diff)
			}
			for _, f := range fs {
				for _, s := range []string{f.Message.Text, f.Result.URL, f.Result.Verdict.Evidence} {
					if strings.Contains(s, "EXAMPLE") || strings.Contains(s, "IQoJ") {
						t.Errorf("Explain(%s) leaks a signed query: %q", tt.file, s)
					}
				}
			}
		})
	}
}

func TestExplainBackoffAlone(t *testing.T) {
	fs, err := Explain([]byte(`Back-off pulling image "r.example/a:1"`))
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 1 || fs[0].Result.Verdict.Cause != "unknown.backoff" {
		t.Fatalf("Explain(back-off) = %+v, want one unknown.backoff", rows(fs))
	}
	if !strings.Contains(strings.Join(fs[0].Result.Verdict.Next, " "), "kubectl describe pod") {
		t.Errorf("Explain(back-off) next = %q, want where the detail is", fs[0].Result.Verdict.Next)
	}
}

func TestExplainNoFailure(t *testing.T) {
	in := "Pulling image \"nginx:1\"\nSuccessfully pulled image \"nginx:1\" in 1.2s\nStarted container nginx\n"
	fs, err := Explain([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 0 {
		t.Errorf("Explain(no failure) = %+v, want none", rows(fs))
	}
}

func TestExplainKeepsInputOrderAndGroups(t *testing.T) {
	in := strings.Join([]string{
		`Failed to pull image "a.example/x:1": failed to do request: Head "https://a.example/v2/x/manifests/1": dial tcp 10.0.0.1:443: i/o timeout`,
		`Failed to pull image "b.example/y:1": b.example/y:1: not found`,
		`Failed to pull image "a.example/x:1": failed to do request: Head "https://a.example/v2/x/manifests/1": dial tcp 10.0.0.2:443: i/o timeout`,
	}, "\n")
	fs, err := Explain([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []row{
		{"route.timeout", "registry", "a.example", "a.example/x:1", 2},
		{"manifest.unknown", "registry", "b.example", "b.example/y:1", 1},
	}
	if diff := cmp.Diff(want, rows(fs)); diff != "" {
		t.Errorf("Explain mismatch (-want +got):\n%s", diff)
	}
}

func TestExplainIgnoresUnrelatedEvents(t *testing.T) {
	in := `{"kind":"EventList","items":[
	{"kind":"Event","reason":"Unhealthy","message":"Liveness probe failed: Get \"http://10.1.1.1:8080/healthz\": dial tcp 10.1.1.1:8080: connect: connection refused","involvedObject":{"kind":"Pod","name":"p"}},
	{"kind":"Event","reason":"FailedMount","message":"MountVolume.SetUp failed for volume \"cfg\" : configmap \"cfg\" not found","involvedObject":{"kind":"Pod","name":"p"}},
	{"kind":"Event","reason":"BackOff","message":"Back-off restarting failed container app in pod p_ns","involvedObject":{"kind":"Pod","name":"p"}}]}`
	fs, err := Explain([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 0 {
		t.Errorf("Explain(unrelated events) = %+v, want none", rows(fs))
	}
}

// TestExplainSandboxEvents checks that a FailedCreatePodSandBox event that
// failed pulling the sandbox image is a finding for that image, and that
// one that failed setting up the pod network (CNI) is not a pull failure.
func TestExplainSandboxEvents(t *testing.T) {
	in := `{"kind":"EventList","apiVersion":"v1","items":[
{"kind":"Event","reason":"FailedCreatePodSandBox","type":"Warning","count":3,"involvedObject":{"kind":"Pod","namespace":"default","name":"web-1"},
 "message":"Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox image \"mcr.example/oss/kubernetes/pause:3.6\": failed to pull image \"mcr.example/oss/kubernetes/pause:3.6\": failed to pull and unpack image \"mcr.example/oss/kubernetes/pause:3.6\": failed to resolve reference \"mcr.example/oss/kubernetes/pause:3.6\": failed to do request: Head \"https://mcr.example/v2/oss/kubernetes/pause/manifests/3.6\": dial tcp: lookup mcr.example on 10.0.0.10:53: no such host"},
{"kind":"Event","reason":"FailedCreatePodSandBox","type":"Warning","count":1,"involvedObject":{"kind":"Pod","namespace":"default","name":"web-2"},
 "message":"Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox \"ab\": plugin type=\"calico\" failed (add): error getting ClusterInformation: connection is unauthorized: Unauthorized"}]}`
	fs, err := Explain([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []row{{"dns.nxdomain", "registry", "mcr.example", "mcr.example/oss/kubernetes/pause:3.6", 3}}
	if diff := cmp.Diff(want, rows(fs)); diff != "" {
		t.Fatalf("findings mismatch (-want +got):\n%s", diff)
	}
	if !fs[0].Result.Sandbox {
		t.Errorf("the sandbox image's pull is not marked Sandbox")
	}
}
