package sysclock

import (
	"runtime"
	"testing"
	"time"
)

func TestUptimeAdvancesAndKeepsTheBoot(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the uptime clock is Linux's")
	}
	c := New(0, "")
	b1, u1, ok := c.Uptime()
	if !ok || b1 == "" || u1 <= 0 {
		t.Fatalf("uptime = %q %v %v", b1, u1, ok)
	}
	time.Sleep(10 * time.Millisecond)
	b2, u2, _ := c.Uptime()
	if b2 != b1 || u2-u1 < 10*time.Millisecond {
		t.Fatalf("second reading %q %v after %q %v", b2, u2, b1, u1)
	}
	if b, _, _ := New(0, "other").Uptime(); b != "other" {
		t.Fatalf("boot seam: %q", b)
	}
	if d := time.Until(New(-time.Hour, "").Now()); d > -59*time.Minute {
		t.Fatalf("offset seam: %v", d)
	}
}
