package gate

import (
	"time"

	"github.com/approvebot/approvebot/core/approval"
)

// Uptime reads a clock that a wall-clock step cannot move and a process restart does not
// reset: the system's boot id and the time since boot (CLOCK_BOOTTIME on Linux). ok is
// false where there is none; the gate then falls back to the wall clock, bounded by the
// store's clock checkpoint.
type Uptime func() (boot string, since time.Duration, ok bool)

// waitClock reads the clocks for a request that has waited `waited` of its window.
func (g *Gate) waitClock(now time.Time, window, waited time.Duration) *approval.WaitClock {
	c := &approval.WaitClock{Window: window, Waited: waited, At: now.UTC()}
	if g.opts.Uptime != nil {
		if boot, up, ok := g.opts.Uptime(); ok {
			c.Boot, c.Uptime = boot, up
		}
	}
	return c
}

// remaining is how long a pending request found in the store may still wait, never more
// than what was left of its original window. Within one boot the time since the last
// reading is exact (uptime); across a reboot, or without an uptime clock, it is the wall
// clock's, counted from no earlier than the store's clock checkpoint (approvebot was still
// running then), so a wall clock stepped backwards cannot hand the request more time. The
// wall-clock deadline bounds it too, so a clock stepped forwards only shortens it.
func (g *Gate) remaining(rec *approval.Request, now time.Time) (left, window time.Duration) {
	c := rec.Wait
	if c == nil {
		c = &approval.WaitClock{Window: rec.ExpiresAt.Sub(rec.CreatedAt), At: rec.CreatedAt}
	}
	var since time.Duration
	boot, up, ok := "", time.Duration(0), false
	if g.opts.Uptime != nil {
		boot, up, ok = g.opts.Uptime()
	}
	if ok && c.Boot != "" && c.Boot == boot && up >= c.Uptime {
		since = up - c.Uptime
	} else {
		from := now
		if g.opts.LastAlive.After(from) {
			from = g.opts.LastAlive
		}
		since = max(from.Sub(c.At), 0)
	}
	left = c.Window - c.Waited - since
	if byWall := rec.ExpiresAt.Sub(now); byWall < left {
		left = byWall
	}
	return max(left, 0), c.Window
}

// clockSkewTolerance is how far a re-armed deadline may differ from the stored one before
// the record is rewritten in the current wall clock's terms.
const clockSkewTolerance = time.Second
