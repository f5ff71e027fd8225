package gate

import (
	"context"
	"errors"
	"fmt"

	"github.com/approvebot/approvebot/core/approval"
)

// Recover runs at start: pending requests past their deadline time out (their cards are
// edited), the rest are re-armed and, when no card reached a chat yet, delivered again.
// What is left of each window is measured so that a wall clock stepped backwards while
// approvebot was down cannot stretch it (see remaining); such a request's deadline is
// rewritten in the current clock's terms.
//
// On a Shared store Recover starts the mirror of the cluster's pending requests instead
// (see Shared): nothing is timed out or delivered at start, every replica's timers do
// the first and the creator or the maintenance leader the second.
func (g *Gate) Recover(ctx context.Context) (expired, rearmed int, err error) {
	if sh := g.shared(); sh != nil {
		return g.recoverShared(ctx, sh)
	}
	pending, err := g.store.Pending(ctx)
	if err != nil {
		return 0, 0, err
	}
	now := g.now()
	stepped := 0
	for _, rec := range pending {
		left, window := g.remaining(&rec, now)
		if d := now.Add(left).Sub(rec.ExpiresAt); left > 0 && (d > clockSkewTolerance || d < -clockSkewTolerance) {
			cur, err := g.store.Rearm(ctx, rec.ID, now.Add(left).UTC(), g.waitClock(now, window, window-left))
			if err != nil {
				return expired, rearmed, fmt.Errorf("re-arming request %s: %w", rec.ID, err)
			}
			if cur.State != approval.StatePending {
				continue
			}
			rec = cur
			stepped++
		}
		if left <= 0 {
			if _, err := g.resolve(ctx, rec.ID, g.timeoutResolution("deadline passed while approvebot was down")); err != nil {
				var lost *AlreadyDecidedError
				if !errors.As(err, &lost) {
					return expired, rearmed, err
				}
			}
			expired++
			continue
		}
		w := &waiter{done: make(chan struct{}), rec: rec, stored: true}
		g.mu.Lock()
		g.addLive(w)
		for _, c := range rec.Cards {
			g.cards[c] = rec.ID
		}
		g.mu.Unlock()
		g.arm(w, left)
		g.metrics.Pending(1)
		rearmed++
		if len(rec.Cards) == 0 && len(rec.Routes) > 0 {
			// Whether the allowlist would cover it is re-judged under today's policy.
			g.deliver(rec, rec.Routes, false)
		}
	}
	if stepped > 0 {
		g.log.Warn("the wall clock is behind the time these requests were last seen waiting: each keeps only what was left of its window",
			"requests", stepped, "last_alive", g.opts.LastAlive)
	}
	return expired, rearmed, nil
}

func (g *Gate) isClosed() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.closed
}

// Close stops taking requests, releases long-polls (the agents re-poll after a restart),
// stops timers and waits up to ctx for card edits in flight. Pending requests stay pending
// in the store and are re-armed by the next Recover.
func (g *Gate) Close(ctx context.Context) error {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return nil
	}
	g.closed = true
	close(g.closing)
	g.events.close()
	type release struct {
		rec      approval.Request
		watchers []*watch
	}
	var released []release
	for _, w := range g.live {
		if w.timer != nil {
			w.timer.Stop()
		}
		if len(w.watchers) > 0 {
			released = append(released, release{w.rec, w.watchers})
			w.watchers = nil
		}
	}
	g.mu.Unlock()
	for _, r := range released {
		for _, wt := range r.watchers {
			wt.fn(r.rec)
		}
	}
	done := make(chan struct{})
	go func() { g.jobs.Wait(); close(done) }()
	select {
	case <-done:
		g.bgCancel()
		return nil
	case <-ctx.Done():
		g.bgCancel()
		<-done
		return ctx.Err()
	}
}
