// Package labtest starts the pull-path lab (package lab) for tests.
//
// The default addresses and ports hold one lab at a time; a second lab in
// the same machine (another test binary of `go test ./...` running in
// parallel, or a second Start in one process) falls back to random ports
// on the same addresses, and its references carry ":PORT". To share one
// lab among the tests of a package, start it in TestMain.
package labtest

import (
	"context"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/lab"
)

// New starts a lab with opts for the test and closes it when the test ends.
// It fails the test when the lab cannot start within a minute.
func New(tb testing.TB, opts lab.Options) *lab.Lab {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	l, err := lab.Start(ctx, opts)
	if err != nil {
		tb.Fatalf("starting lab: %v", err)
	}
	tb.Cleanup(func() {
		if err := l.Close(); err != nil {
			tb.Errorf("closing lab: %v", err)
		}
	})
	return l
}

// Scenario returns the lab's scenario called name, failing the test when
// there is none.
func Scenario(tb testing.TB, l *lab.Lab, name string) lab.Scenario {
	tb.Helper()
	s, ok := l.Scenario(name)
	if !ok {
		tb.Fatalf("lab has no scenario %q", name)
	}
	return s
}
