package rig

import (
	"context"
	"errors"
	"math"
	"time"

	"rig.dev/rig/internal/raw"
)

// Forever, as a timeout: no bound.
const Forever time.Duration = math.MaxInt64

// timeoutNs is a Duration in rig's terms: UINT64_MAX for Forever, 0 (only check) for none left.
func timeoutNs(d time.Duration) uint64 {
	switch {
	case d == Forever:
		return math.MaxUint64
	case d <= 0:
		return 0
	}
	return uint64(d)
}

// waitSlice bounds one rig wait made for a context. rig's only way to end a wait early is process-wide
// (rig_interrupt_waits, which would end every goroutine's waits), so a context is honoured by waiting in
// slices and looking at it between them: a cancel is seen within one slice.
const waitSlice = 10 * time.Millisecond

// contextError is a wait ended by its context: it unwraps to rig's error (Timeout or Interrupted) and
// is also the context's own error for errors.Is.
type contextError struct {
	rig *Error
	ctx error
}

func (e *contextError) Error() string        { return e.rig.Error() + " (" + e.ctx.Error() + ")" }
func (e *contextError) Unwrap() error        { return e.rig }
func (e *contextError) Is(target error) bool { return errors.Is(e.ctx, target) }

// waitContext runs wait (given a timeout in ns) until it ends or ctx is done.
func waitContext(ctx context.Context, wait func(ns uint64) raw.Enum_SS_rig_status) error {
	if ctx.Done() == nil { // never done: one wait without a bound
		return call(func() raw.Enum_SS_rig_status { return wait(math.MaxUint64) })
	}
	for {
		if err := ctx.Err(); err != nil {
			return ended(ctx, err)
		}
		slice := waitSlice
		if deadline, ok := ctx.Deadline(); ok {
			if left := time.Until(deadline); left < slice {
				slice = left
			}
		}
		err := call(func() raw.Enum_SS_rig_status { return wait(timeoutNs(slice)) })
		var e *Error
		if err == nil || !errors.As(err, &e) || e.Status != Timeout {
			return err
		}
		if deadline, ok := ctx.Deadline(); ok && !time.Now().Before(deadline) {
			return &contextError{rig: e, ctx: context.DeadlineExceeded}
		}
	}
}

// ended is the error of a wait whose context was done before it ended.
func ended(ctx context.Context, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return &contextError{rig: &Error{Status: Timeout, Message: "the context's deadline passed before the wait ended"}, ctx: err}
	}
	return &contextError{rig: &Error{Status: Interrupted, Message: "the context was canceled before the wait ended"}, ctx: err}
}

// InterruptWaits makes every wait in progress, and every later one until InterruptWaits(false), return
// Interrupted. Safe from a signal-handling goroutine.
func InterruptWaits(on bool) {
	v := 0
	if on {
		v = 1
	}
	raw.Rig_interrupt_waits(v)
}
