package probe

import (
	"context"
	"errors"

	"github.com/pullpath/pullpath/internal/verdict"
)

// interrupted returns the unknown.interrupted error when the caller's
// context was cancelled (Ctrl-C: signal.NotifyContext cancels it, and its
// cause names the signal), and nil otherwise. A step that failed because
// of the cancellation is then not blamed on its host.
func interrupted(ctx context.Context) error {
	if !errors.Is(ctx.Err(), context.Canceled) {
		return nil
	}
	cause := context.Cause(ctx)
	if cause == nil || cause == context.Canceled {
		cause = errors.New("cancelled by the caller")
	}
	return verdict.Wrap(verdict.CodeUnknownInterrupted, verdict.RoleNone, "", cause)
}

// The signal's cause reports errors.Is(cause, context.Canceled), so the
// plain cancellation is told apart by identity.

// cancelledDetail says why a step was cancelled: an earlier failure of the
// probe, or the caller (Ctrl-C, whose cause names the signal).
func cancelledDetail(ctx context.Context) string {
	if c := context.Cause(ctx); c != nil && c != context.Canceled && c != context.DeadlineExceeded {
		return "interrupted (" + c.Error() + ")"
	}
	return "cancelled after an earlier failure"
}
