//go:build !linux

package sysclock

import "time"

// uptime is unknown here: approvebot falls back to the wall clock and the store's clock
// checkpoint.
func uptime() (string, time.Duration, bool) { return "", 0, false }
