package main

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// Dist summarises a latency distribution, in milliseconds.
type Dist struct {
	N   int     `json:"n"`
	P50 float64 `json:"p50_ms"`
	P95 float64 `json:"p95_ms"`
	P99 float64 `json:"p99_ms"`
	Max float64 `json:"max_ms"`
	Min float64 `json:"min_ms"`
}

func distOf(d []time.Duration) Dist {
	if len(d) == 0 {
		return Dist{}
	}
	s := slices.Clone(d)
	slices.Sort(s)
	q := func(p float64) float64 {
		i := int(p*float64(len(s))+0.5) - 1
		i = max(0, min(i, len(s)-1))
		return ms(s[i])
	}
	return Dist{N: len(s), P50: q(0.50), P95: q(0.95), P99: q(0.99), Max: ms(s[len(s)-1]), Min: ms(s[0])}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func (d Dist) String() string {
	if d.N == 0 {
		return "-"
	}
	return fmt.Sprintf("p50 %.2f  p95 %.2f  p99 %.2f  max %.2f ms", d.P50, d.P95, d.P99, d.Max)
}

// errCounts counts errors by a short stable name.
type errCounts map[string]int

func (e errCounts) add(name string) { e[name]++ }

func (e errCounts) merge(o errCounts) {
	for k, v := range o {
		e[k] += v
	}
}

func (e errCounts) total() int {
	n := 0
	for _, v := range e {
		n += v
	}
	return n
}

func (e errCounts) String() string {
	if len(e) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(e))
	for k := range e {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, e[k]))
	}
	return strings.Join(parts, " ")
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
