package sysclock

import (
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

func bootID() string {
	raw, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(raw))
}

// sinceBoot is CLOCK_BOOTTIME, which counts suspended time too: a request waits through a
// suspend as it does through anything else.
func sinceBoot() (time.Duration, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
