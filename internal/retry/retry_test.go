package retry

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

var (
	errBusy = errors.New("503 busy")
	errGone = errors.New("404 gone")
	errSlow = errors.New("429 slow down")
)

func classify(err error) Verdict {
	switch {
	case errors.Is(err, errSlow):
		return Verdict{Retry: true, After: 3 * time.Second}
	case errors.Is(err, errBusy):
		return Again
	}
	return Permanent
}

// script answers each attempt with the next error (nil: success), recording when it ran.
type script struct {
	errs  []error
	start time.Time
	at    []time.Duration
}

func (s *script) attempt(context.Context) error {
	s.at = append(s.at, time.Since(s.start))
	if len(s.errs) == 0 {
		return nil
	}
	err := s.errs[0]
	s.errs = s.errs[1:]
	return err
}

func TestDo(t *testing.T) {
	policy := Policy{Base: 100 * time.Millisecond, Max: 400 * time.Millisecond, Pad: 25 * time.Millisecond}
	cases := []struct {
		name     string
		policy   Policy
		errs     []error
		deadline time.Duration // 0: none
		cancelAt time.Duration // 0: never
		reason   Reason        // 0: success
		attempts int
		// at bounds when each attempt ran: [lo, hi].
		at [][2]time.Duration
	}{
		{name: "first attempt succeeds", policy: policy, attempts: 1, at: [][2]time.Duration{{0, 0}}},
		{name: "retry-after is waited exactly, plus the pad", policy: policy, errs: []error{errSlow}, attempts: 2,
			at: [][2]time.Duration{{0, 0}, {3025 * time.Millisecond, 3025 * time.Millisecond}}},
		{name: "5xx backs off, doubling up to the ceiling, with jitter", policy: policy,
			errs: []error{errBusy, errBusy, errBusy, errBusy}, attempts: 5,
			at: [][2]time.Duration{
				{0, 0},
				{50 * time.Millisecond, 100 * time.Millisecond},
				{150 * time.Millisecond, 300 * time.Millisecond},
				{350 * time.Millisecond, 700 * time.Millisecond},
				{550 * time.Millisecond, 1100 * time.Millisecond},
			}},
		{name: "a permanent error is not retried", policy: policy, errs: []error{errGone}, reason: Failed, attempts: 1,
			at: [][2]time.Duration{{0, 0}}},
		{name: "a wait past the deadline gives up at once", policy: policy, errs: []error{errSlow}, deadline: 2 * time.Second,
			reason: Deadline, attempts: 1, at: [][2]time.Duration{{0, 0}}},
		{name: "cancel during the wait", policy: policy, errs: []error{errSlow}, cancelAt: time.Second,
			reason: Ended, attempts: 1, at: [][2]time.Duration{{0, 0}}},
		{name: "without a deadline, attempts are bounded when asked", policy: Policy{Base: time.Millisecond, MaxAttempts: 3},
			errs: []error{errBusy, errBusy, errBusy, errBusy}, reason: Exhausted, attempts: 3},
		{name: "without a bound, retries go on", policy: Policy{Base: time.Millisecond},
			errs: []error{errBusy, errBusy, errBusy, errBusy, errBusy, errBusy, errBusy, errBusy, errBusy}, attempts: 10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := context.Background()
				if c.deadline > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, c.deadline)
					defer cancel()
				}
				if c.cancelAt > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithCancel(ctx)
					time.AfterFunc(c.cancelAt, cancel)
				}
				s := &script{errs: c.errs, start: time.Now()}
				var heard []time.Duration
				p := c.policy
				p.OnRetry = func(_ int, _ error, wait time.Duration) { heard = append(heard, wait) }
				err := p.Do(ctx, s.attempt, classify)
				if c.reason == 0 {
					if err != nil {
						t.Fatalf("Do = %v, want success", err)
					}
				} else if !Gave(err, c.reason) {
					t.Fatalf("Do = %v, want reason %d", err, c.reason)
				}
				if len(s.at) != c.attempts {
					t.Fatalf("%d attempts, want %d", len(s.at), c.attempts)
				}
				for i, b := range c.at {
					if s.at[i] < b[0] || s.at[i] > b[1] {
						t.Errorf("attempt %d ran at %s, want %s..%s", i+1, s.at[i], b[0], b[1])
					}
				}
				if c.reason == Deadline || c.reason == Failed {
					if d := time.Since(s.start); d != 0 {
						t.Errorf("gave up after %s, want at once", d)
					}
				}
				if want := c.attempts - 1; c.reason == 0 && len(heard) != want {
					t.Errorf("OnRetry heard %d retries, want %d", len(heard), want)
				}
			})
		})
	}
}

func TestErrorKeepsTheLastAttemptAndTheContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(time.Second, cancel)
		err := Policy{}.Do(ctx, func(context.Context) error { return errSlow }, classify)
		if !errors.Is(err, errSlow) || !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v does not wrap both the last error and the context's", err)
		}
		done, stop := context.WithCancel(context.Background())
		stop()
		calls := 0
		err = Policy{}.Do(done, func(context.Context) error { calls++; return nil }, classify)
		if calls != 0 || !Gave(err, Ended) || !errors.Is(err, context.Canceled) {
			t.Fatalf("an ended context still ran the call: calls %d err %v", calls, err)
		}
	})
}

func TestBackoff(t *testing.T) {
	b := Backoff{Base: time.Second, Max: 4 * time.Second}
	for i, hi := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 4 * time.Second} {
		if w := b.Next(); w < hi/2 || w > hi {
			t.Fatalf("wait %d = %s, want %s..%s", i, w, hi/2, hi)
		}
	}
	b.Reset()
	if w := b.Next(); w > time.Second {
		t.Fatalf("after Reset the wait is %s", w)
	}
	var zero Backoff
	if w := zero.Next(); w < DefaultBase/2 || w > DefaultBase {
		t.Fatalf("zero Backoff waits %s", w)
	}
}

func TestSleepEndsWithTheContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(time.Second, cancel)
		start := time.Now()
		if Sleep(ctx, time.Hour) || time.Since(start) != time.Second {
			t.Fatalf("Sleep outlived its context (%s)", time.Since(start))
		}
		if !Sleep(context.Background(), time.Minute) {
			t.Fatal("a whole wait reported as cut short")
		}
	})
}
