// Package fakewait is the waiting loop the test fakes of the chat platforms share: check a
// condition after every change the fake signals (and on a short tick), and fail the test
// when the timeout passes first.
package fakewait

import (
	"testing"
	"time"
)

// Until calls cond until it holds. changed returns the channel the fake closes on its next
// change; it is taken before cond is checked, so no change between the two is missed.
func Until(tb testing.TB, name string, timeout, tick time.Duration, what string, changed func() <-chan struct{}, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ch := changed()
		if cond() {
			return
		}
		left := time.Until(deadline)
		if left <= 0 {
			tb.Fatalf("%s: timed out after %s waiting for %s", name, timeout, what)
		}
		select {
		case <-ch:
		case <-time.After(min(left, tick)):
		}
	}
}
