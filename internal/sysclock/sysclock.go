// Package sysclock reads the clock that measures a waiting request across an approvebot
// restart whatever the wall clock does: the system's boot id and the time since boot.
package sysclock

import "time"

// Clocks is approvebot's view of time: the wall clock and the uptime clock.
type Clocks struct {
	// Offset shifts the wall clock (a fault-injection seam: a clock stepped back is a
	// negative offset).
	Offset time.Duration
	// Boot, when not empty, replaces the system's boot id (a seam: a reboot).
	Boot string
}

// Now is the wall clock, shifted by Offset.
func (c Clocks) Now() time.Time {
	if c.Offset == 0 {
		return time.Now()
	}
	return time.Now().Add(c.Offset)
}

// Uptime is the boot id and the time since boot; ok is false where the system has none.
func (c Clocks) Uptime() (boot string, since time.Duration, ok bool) {
	boot, since, ok = uptime()
	if ok && c.Boot != "" {
		boot = c.Boot
	}
	return boot, since, ok
}
