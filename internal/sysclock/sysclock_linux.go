package sysclock

import (
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// uptime reads the kernel's boot id and CLOCK_BOOTTIME (which counts suspended time too:
// a request waits through a suspend as it does through anything else).
func uptime() (string, time.Duration, bool) {
	raw, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", 0, false
	}
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts); err != nil {
		return "", 0, false
	}
	return strings.TrimSpace(string(raw)), time.Duration(ts.Nano()), true
}
