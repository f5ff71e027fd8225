//go:build !linux

package sysclock

import "time"

// Elsewhere there is no boot clock: approvebot falls back to the wall clock and the store's
// clock checkpoint.
func bootID() string { return "" }

func sinceBoot() (time.Duration, bool) { return 0, false }
