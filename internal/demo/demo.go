// Package demo runs the probe over every scenario of the embedded lab and
// compares each verdict with the scenario's expectation. It backs
// `pullpath demo` and the lab-tier table test.
package demo

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/probe"
	"github.com/pullpath/pullpath/internal/registry"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Result is one scenario's outcome.
type Result struct {
	Scenario     string          `json:"scenario"`
	Description  string          `json:"description,omitempty"`
	Image        string          `json:"image"`
	Expected     lab.Expect      `json:"expected"`
	Verdict      verdict.Verdict `json:"verdict"`
	Warnings     []string        `json:"warnings"`
	Milliseconds int64           `json:"duration_ms"`
	Pass         bool            `json:"pass"`
	Mismatches   []string        `json:"mismatches,omitempty"`
	Report       *probe.Report   `json:"-"`
}

// Options tune a demo run.
type Options struct {
	Timeout  time.Duration // per step; default 2s
	Parallel int           // scenarios at once; default 4
	Only     []string      // scenario names; default all
}

// Run probes every scenario of l and checks each verdict.
func Run(ctx context.Context, l *lab.Lab, o Options) []Result {
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Second
	}
	if o.Parallel <= 0 {
		o.Parallel = 4
	}
	want := map[string]bool{}
	for _, n := range o.Only {
		want[n] = true
	}
	var scs []lab.Scenario
	for _, sc := range l.Scenarios {
		if len(want) == 0 || want[sc.Name] {
			scs = append(scs, sc)
		}
	}
	results := make([]Result, len(scs))
	sem := make(chan struct{}, o.Parallel)
	var wg sync.WaitGroup
	for i, sc := range scs {
		wg.Add(1)
		go func(i int, sc lab.Scenario) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			results[i] = RunOne(ctx, l, sc, o.Timeout)
		}(i, sc)
	}
	wg.Wait()
	return results
}

// RunOne probes one scenario.
func RunOne(ctx context.Context, l *lab.Lab, sc lab.Scenario, timeout time.Duration) Result {
	opts := probe.Options{Root: sc.Root, Platform: sc.Platform, Timeout: timeout, Deadline: 30 * timeout, DNSPort: l.DNSPort}
	if sc.Username != "" || sc.Password != "" {
		opts.Creds = &registry.Credentials{Username: sc.Username, Password: sc.Password, Source: "lab scenario"}
	}
	start := time.Now()
	rep, err := probe.Run(ctx, sc.Image, opts)
	res := Result{Scenario: sc.Name, Description: sc.Description, Image: sc.Image, Expected: sc.Expect, Milliseconds: time.Since(start).Milliseconds(), Warnings: []string{}}
	if err != nil {
		res.Mismatches = []string{"probe error: " + err.Error()}
		return res
	}
	res.Report = rep
	res.Verdict = rep.Verdict
	for _, w := range rep.Warnings {
		res.Warnings = append(res.Warnings, w.Code)
	}
	res.Mismatches = Check(sc.Expect, rep)
	res.Pass = len(res.Mismatches) == 0
	return res
}

// Check lists how a report differs from an expectation: ok, layer, cause,
// role, endpoint (when expected) and every expected warning code.
func Check(e lab.Expect, r *probe.Report) []string {
	var out []string
	v := r.Verdict
	if v.OK != e.OK {
		out = append(out, fmt.Sprintf("ok = %v, want %v", v.OK, e.OK))
	}
	if !e.OK {
		if v.Layer != e.Layer {
			out = append(out, fmt.Sprintf("layer = %q, want %q", v.Layer, e.Layer))
		}
		if e.Cause != "" && v.Cause != e.Cause {
			out = append(out, fmt.Sprintf("cause = %q, want %q", v.Cause, e.Cause))
		}
		if v.Role != e.Role {
			out = append(out, fmt.Sprintf("role = %q, want %q", v.Role, e.Role))
		}
		if e.Endpoint != "" && v.Endpoint != e.Endpoint {
			out = append(out, fmt.Sprintf("endpoint = %q, want %q", v.Endpoint, e.Endpoint))
		}
	}
	have := map[string]bool{}
	for _, w := range r.Warnings {
		have[w.Code] = true
	}
	for _, w := range e.Warnings {
		if !have[w] {
			out = append(out, fmt.Sprintf("warning %q missing (have %v)", w, slices.Sorted(maps.Keys(have))))
		}
	}
	return out
}
