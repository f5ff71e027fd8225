package gate

import (
	"context"
	"errors"
)

// Recover runs at start: pending requests past their deadline time out (their cards are
// edited), the rest are re-armed and, when no card reached a chat yet, delivered again.
func (g *Gate) Recover(ctx context.Context) (expired, rearmed int, err error) {
	pending, err := g.store.Pending(ctx)
	if err != nil {
		return 0, 0, err
	}
	now := g.now()
	for _, rec := range pending {
		if !now.Before(rec.ExpiresAt) {
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
		g.live[rec.ID] = w
		for _, c := range rec.Cards {
			g.cards[c] = rec.ID
		}
		g.mu.Unlock()
		g.arm(w, rec.ExpiresAt.Sub(now))
		g.metrics.Pending(1)
		rearmed++
		if len(rec.Cards) == 0 && len(rec.Routes) > 0 {
			// Whether the allowlist would cover it is re-judged under today's policy.
			g.deliver(rec, false)
		}
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
	for _, w := range g.live {
		if w.timer != nil {
			w.timer.Stop()
		}
	}
	g.mu.Unlock()
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
