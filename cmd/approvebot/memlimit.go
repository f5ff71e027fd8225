package main

import (
	"context"
	"math"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// With GOGC at 400 the heap may grow to five times what is live between collections. That
// is the right trade while little is live (a busy server's garbage is ~20 KB per request,
// collected often), and the wrong one when much is: 10,000 agents waiting in long-polls
// left 222 MiB of RSS, 65–89 MiB of it garbage not yet returned, and a release peak of
// 279–334 MiB. followMemory sets a soft memory limit that follows what is live: the larger
// of memoryFloor and memoryHeadroom times the live heap and stacks. Under it GOGC=400
// decides as before; above it the collector runs early, and since the limit always stays
// above what is live it never has to run without end. GOMEMLIMIT, when set, wins.
const (
	memoryFloor    = 128 << 20
	memoryHeadroom = 1.5
	memoryEvery    = 2 * time.Second
)

var memorySamples = []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/stacks:bytes"}}

// memoryLimitFor is the limit for a live heap and stacks of live bytes.
func memoryLimitFor(live uint64) int64 {
	return int64(max(float64(memoryFloor), math.Ceil(memoryHeadroom*float64(live))))
}

// followMemory adjusts the soft memory limit until ctx ends.
func followMemory(ctx context.Context) {
	t := time.NewTicker(memoryEvery)
	defer t.Stop()
	samples := append([]metrics.Sample(nil), memorySamples...)
	for {
		metrics.Read(samples)
		var live uint64
		for _, s := range samples {
			if s.Value.Kind() == metrics.KindUint64 {
				live += s.Value.Uint64()
			}
		}
		debug.SetMemoryLimit(memoryLimitFor(live))
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
