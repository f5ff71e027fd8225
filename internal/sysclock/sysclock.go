// Package sysclock reads the clock that measures a waiting request across an approvebot
// restart whatever the wall clock does: the system's boot id and the time since boot.
package sysclock

import "time"

// Clocks is approvebot's view of time: the wall clock and the uptime clock.
type Clocks struct {
	// offset shifts the wall clock (a fault-injection seam: a clock stepped back is a
	// negative offset).
	offset time.Duration
	// boot is the system's boot id, read once ("" where there is none).
	boot string
}

// New reads the boot id. offset shifts the wall clock and boot, when not empty, replaces
// the boot id: both are seams for tests (a clock stepped back, a reboot).
func New(offset time.Duration, boot string) *Clocks {
	c := &Clocks{offset: offset, boot: bootID()}
	if boot != "" && c.boot != "" {
		c.boot = boot
	}
	return c
}

// Now is the wall clock (shifted by the offset).
func (c *Clocks) Now() time.Time {
	if c.offset == 0 {
		return time.Now()
	}
	return time.Now().Add(c.offset)
}

// Uptime is the boot id and the time since boot; ok is false where the system has none.
func (c *Clocks) Uptime() (boot string, since time.Duration, ok bool) {
	if c.boot == "" {
		return "", 0, false
	}
	since, ok = sinceBoot()
	return c.boot, since, ok
}
