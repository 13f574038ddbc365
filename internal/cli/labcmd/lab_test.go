package labcmd

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/cli"
)

// syncBuffer is a bytes.Buffer safe for one writer and one reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestLabServe(t *testing.T) {
	for _, tt := range []struct {
		format string
		check  func(t *testing.T, out string)
	}{
		{"json", func(t *testing.T, out string) {
			var got struct {
				Registry     string `json:"registry"`
				DockerConfig string `json:"dockerConfig"`
				Scenarios    []struct {
					Name   string `json:"name"`
					Image  string `json:"image"`
					Root   string `json:"root"`
					Expect struct {
						OK    bool   `json:"ok"`
						Layer string `json:"layer"`
					} `json:"expect"`
				} `json:"scenarios"`
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("lab serve -o json: %v\n%s", err, out)
			}
			if len(got.Scenarios) < 20 || got.Scenarios[0].Name != "healthy" || !got.Scenarios[0].Expect.OK {
				t.Errorf("lab serve -o json scenarios = %+v, want healthy first and 20 or more", got.Scenarios)
			}
			if _, err := os.Stat(got.DockerConfig); err != nil {
				t.Errorf("docker config while serving: %v", err)
			}
		}},
		{"text", func(t *testing.T, out string) {
			for _, want := range []string{"SCENARIO", "healthy", "registry.lab.test", "dns.nxdomain", "puller (wrong password)"} {
				if !strings.Contains(out, want) {
					t.Errorf("lab serve output lacks %q:\n%s", want, out)
				}
			}
		}},
	} {
		t.Run(tt.format, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var out, errOut syncBuffer
			cmd := NewCmdLab(cli.Streams{In: strings.NewReader(""), Out: &out, Err: &errOut})
			cmd.SetArgs([]string{"serve", "-o", tt.format})
			done := make(chan error, 1)
			go func() { done <- cmd.ExecuteContext(ctx) }()
			// Wait for the lab to say it runs (bounded), then stop it.
			deadline := time.Now().Add(time.Minute)
			for !strings.Contains(errOut.String(), "lab running") && time.Now().Before(deadline) {
				select {
				case err := <-done:
					t.Fatalf("lab serve ended early: %v\n%s", err, errOut.String())
				case <-time.After(20 * time.Millisecond):
				}
			}
			tt.check(t, out.String())
			cancel()
			if err := <-done; err != nil {
				t.Fatalf("lab serve: %v", err)
			}
			if strings.Contains(out.String(), "password\"") {
				t.Errorf("output names a password field:\n%s", out.String())
			}
		})
	}
}

func TestLabServeBadOutput(t *testing.T) {
	cmd := NewCmdLab(cli.Streams{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	cmd.SetArgs([]string{"serve", "-o", "yaml"})
	err := cmd.ExecuteContext(t.Context())
	ee, ok := err.(*cli.ExitError)
	if !ok || ee.Code != cli.ExitUsage || !strings.Contains(err.Error(), "json, text") {
		t.Errorf("lab serve -o yaml = %v, want a usage error listing json, text", err)
	}
}
