// Package retry runs a platform call again until it succeeds, fails for good, or its
// context ends. The caller's classifier says whether an error is worth another attempt and
// how long the platform asked to wait (Retry-After); otherwise the policy backs off
// exponentially with jitter. The context is checked before every attempt, and a wait that
// would pass its deadline is not started: the call gives up at once, so the caller can fall
// back instead of waiting in vain. The chat channels share it instead of each keeping a loop.
package retry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// Policy is how a call is retried. The zero Policy backs off from DefaultBase to
// DefaultMax and retries until the context ends.
type Policy struct {
	// Base is the first backoff; it doubles after every retried failure, up to Max.
	Base, Max time.Duration
	// MaxAttempts bounds the attempts of a call whose context has no deadline (0: no bound).
	MaxAttempts int
	// Pad is added to a wait the platform asked for (rounding on its side).
	Pad time.Duration
	// OnRetry, when set, hears of every failure that will be retried, before the wait.
	OnRetry func(attempt int, err error, wait time.Duration)
}

// Backoff bounds of the zero Policy.
const (
	DefaultBase = 250 * time.Millisecond
	DefaultMax  = 5 * time.Second
)

// Verdict is a classifier's judgement of one failed attempt.
type Verdict struct {
	// Retry says another attempt may succeed (429, 5xx, a transport failure).
	Retry bool
	// After is the wait the platform asked for; 0 means back off.
	After time.Duration
}

// Permanent is the verdict for an error that another attempt cannot cure.
var Permanent = Verdict{}

// Again is the verdict for an error worth another attempt after the backoff.
var Again = Verdict{Retry: true}

// Reason says why a call gave up.
type Reason int

const (
	// Failed: the classifier judged the last error permanent.
	Failed Reason = iota + 1
	// Ended: the context ended (before an attempt or during a wait).
	Ended
	// Deadline: the next wait would pass the context's deadline.
	Deadline
	// Exhausted: MaxAttempts attempts failed (context without a deadline).
	Exhausted
)

// Error is a call that gave up.
type Error struct {
	Reason Reason
	// Last is the last attempt's error; nil when the context ended before the first one.
	Last error
	// Attempts is how many attempts were made.
	Attempts int
	// Wait is the wait that would have passed the deadline (Reason Deadline).
	Wait time.Duration
	// Ctx is the context's error (Reason Ended).
	Ctx error
}

func (e *Error) Error() string {
	switch e.Reason {
	case Ended:
		if e.Last == nil {
			return e.Ctx.Error()
		}
		return fmt.Sprintf("%v (gave up after %d attempt(s): %v)", e.Last, e.Attempts, e.Ctx)
	case Deadline:
		return fmt.Sprintf("%v (gave up: retrying in %s would pass the deadline)", e.Last, e.Wait.Round(time.Millisecond))
	case Exhausted:
		return fmt.Sprintf("%v (gave up after %d attempts)", e.Last, e.Attempts)
	}
	return e.Last.Error()
}

// Unwrap gives the last attempt's error, and the context's error when it ended the call.
func (e *Error) Unwrap() []error {
	var out []error
	if e.Last != nil {
		out = append(out, e.Last)
	}
	if e.Ctx != nil {
		out = append(out, e.Ctx)
	}
	return out
}

// Do runs attempt until it returns nil, classify says Permanent, or ctx ends. It returns
// nil or an *Error.
func (p Policy) Do(ctx context.Context, attempt func(context.Context) error, classify func(error) Verdict) error {
	b := p.backoff()
	var last error
	for n := 1; ; n++ {
		if err := ctx.Err(); err != nil {
			return &Error{Reason: Ended, Last: last, Attempts: n - 1, Ctx: err}
		}
		err := attempt(ctx)
		if err == nil {
			return nil
		}
		last = err
		if ctxErr := ctx.Err(); ctxErr != nil {
			return &Error{Reason: Ended, Last: last, Attempts: n, Ctx: ctxErr}
		}
		v := classify(err)
		if !v.Retry {
			return &Error{Reason: Failed, Last: last, Attempts: n}
		}
		_, hasDeadline := ctx.Deadline()
		if !hasDeadline && p.MaxAttempts > 0 && n >= p.MaxAttempts {
			return &Error{Reason: Exhausted, Last: last, Attempts: n}
		}
		wait := b.Next()
		if v.After > 0 {
			wait = v.After + p.Pad
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return &Error{Reason: Deadline, Last: last, Attempts: n, Wait: wait}
		}
		if p.OnRetry != nil {
			p.OnRetry(n, err, wait)
		}
		if !Sleep(ctx, wait) {
			return &Error{Reason: Ended, Last: last, Attempts: n, Ctx: ctx.Err()}
		}
	}
}

func (p Policy) backoff() *Backoff {
	return &Backoff{Base: p.Base, Max: p.Max}
}

// Backoff hands out exponentially growing, jittered waits: for reconnect loops that are
// not one call (a websocket, a poll loop). The zero Backoff starts at DefaultBase.
type Backoff struct {
	Base, Max time.Duration
	next      time.Duration
}

// Next returns the next wait, between half and all of the current step, and doubles the
// step (up to Max).
func (b *Backoff) Next() time.Duration {
	base, ceiling := b.Base, b.Max
	if base <= 0 {
		base = DefaultBase
	}
	if ceiling <= 0 {
		ceiling = max(DefaultMax, base)
	}
	if b.next <= 0 {
		b.next = base
	}
	step := min(b.next, ceiling)
	b.next = min(2*step, ceiling)
	return step/2 + rand.N(step/2+1)
}

// Reset starts the waits over, after a success.
func (b *Backoff) Reset() { b.next = 0 }

// Sleep waits d or until ctx ends, and reports whether the whole wait passed.
func Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Gave reports whether err is a call that gave up for reason r.
func Gave(err error, r Reason) bool {
	var e *Error
	return errors.As(err, &e) && e.Reason == r
}
