package main

import (
	"context"
	"fmt"
	"net/http/httptrace"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// maxConnecting bounds the long-polls being sent at once in hold mode.
const maxConnecting = 256

// HoldReport is the figures of the hold mode: many requests pending at once.
type HoldReport struct {
	Requested int `json:"requested"`
	// Held is how many the server listed as pending at once.
	Held int `json:"held"`
	// Polling is how many agents were long-polling their request while it was held;
	// Waiting how many the server counted waiting (approvebot_waiting_agents) when its
	// memory was read — the figures count only when it is all of them.
	Polling    int     `json:"polling"`
	Waiting    int     `json:"waiting"`
	CreateRPS  float64 `json:"create_rps"`
	CreateTime float64 `json:"create_s"`
	ListTime   float64 `json:"list_pending_ms"`
	RSSHeld    int64   `json:"rss_held_bytes"`
	RSSBefore  int64   `json:"rss_before_bytes"`
	PeakRSS    int64   `json:"peak_rss_bytes"`
	// ReleasePeakRSS is the peak RSS while every held request was decided and its agent
	// answered (VmHWM reset just before; 0 when it could not be reset).
	ReleasePeakRSS int64          `json:"release_peak_rss_bytes"`
	DecideRPS      float64        `json:"decide_rps"`
	Decided        int            `json:"decided"`
	Released       int            `json:"released"`
	PressToAgent   Dist           `json:"press_to_agent"`
	Errors         map[string]int `json:"errors"`
	// Runtime is the server's own view of its memory while the requests are held (from the
	// Go collector on /metrics): where the RSS goes.
	Runtime map[string]float64 `json:"runtime,omitempty"`
}

// hold files n requests a human must decide (100 per session, under the per-session cap),
// optionally with an agent long-polling each, reads the server's memory while they are all
// pending, then decides them all and checks every waiting agent learned its decision.
func (d *driver) hold(ctx context.Context, n int, poll bool, stderr func(string, ...any)) (*HoldReport, error) {
	rep := &HoldReport{Requested: n}
	errs := errCounts{}
	var emu sync.Mutex
	addErr := func(s string) { emu.Lock(); errs.add(s); emu.Unlock() }
	_, rep.RSSBefore, _ = procStatus(d.t.pid)

	ids := make([]string, n)
	tokens := make([]string, n)
	var next atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	workers := min(64, n)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				tok := d.t.agents[i%len(d.t.agents)]
				body := mustJSON(map[string]any{"tool": "bash", "args": map[string]any{"command": fmt.Sprintf("%shold-%d", humanPrefix, i)},
					"session": "hold-" + strconv.Itoa(i/100)})
				cctx, cancel := context.WithTimeout(ctx, d.callTimeout)
				code, raw, err := d.api.do(cctx, "POST", "/v1/requests", tok, body)
				cancel()
				if err != nil || code != 202 {
					addErr(errName("hold_create", code, raw, err))
					continue
				}
				v, err := decodeView(raw)
				if err != nil || v.State != "pending" {
					addErr("hold_create_not_pending")
					continue
				}
				ids[i], tokens[i] = v.ID, tok
			}
		}()
	}
	wg.Wait()
	rep.CreateTime = time.Since(start).Seconds()
	rep.CreateRPS = float64(n) / rep.CreateTime
	stderr("hold: %d requests filed in %.1fs", n, rep.CreateTime)

	// Agents long-poll their own request, as the real client does while a human thinks.
	type result struct {
		id   string
		seen time.Time
		ok   bool
	}
	results := make(chan result, n)
	var polling sync.WaitGroup
	// At most this many polls are being sent at once: 10,000 connections opened in the
	// same instant overflow the kernel's accept queue, which measures the kernel, not
	// approvebot. Each poll waits only until its request is written.
	sending := make(chan struct{}, maxConnecting)
	if poll {
		for i, id := range ids {
			if id == "" {
				continue
			}
			polling.Add(1)
			rep.Polling++
			go func() {
				defer polling.Done()
				for {
					sending <- struct{}{}
					var once sync.Once
					sent := func() { once.Do(func() { <-sending }) }
					cctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
					cctx = httptrace.WithClientTrace(cctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { sent() }})
					code, raw, err := d.api.do(cctx, "GET", "/v1/requests/"+id+"?wait=5m", tokens[i], nil)
					sent()
					cancel()
					if err != nil || (code != 200 && code != 202) {
						addErr(errName("hold_poll", code, raw, err))
						results <- result{id: id}
						return
					}
					v, err := decodeView(raw)
					if err != nil {
						addErr("hold_poll_bad_answer")
						results <- result{id: id}
						return
					}
					if v.State != "pending" {
						results <- result{id: id, seen: time.Now(), ok: v.State == "allowed" && v.Allowed}
						return
					}
				}
			}()
		}
		// Every agent must be waiting on the server before its memory is read.
		rep.Waiting = d.waitForWaiters(ctx, rep.Polling, stderr)
		if rep.Waiting < rep.Polling {
			addErr("hold_not_all_waiting")
		}
	}

	listStart := time.Now()
	list, err := d.pending(ctx)
	rep.ListTime = float64(time.Since(listStart).Microseconds()) / 1000
	if err != nil {
		return rep, fmt.Errorf("listing pending requests: %w", err)
	}
	rep.Held = len(list)
	// Steady state: the largest of a few readings over a few seconds, all agents waiting.
	for i := 0; i < 6; i++ {
		rep.RSSHeld = max(rep.RSSHeld, rssNow(d.t.pid))
		time.Sleep(500 * time.Millisecond)
	}
	rep.Runtime = d.runtimeStats(ctx)
	rep.PeakRSS, _, _ = procStatus(d.t.pid)
	stderr("hold: %d pending at once, %d agents waiting, server RSS %.1f MiB (peak so far %.1f MiB)", rep.Held, rep.Waiting, mib(rep.RSSHeld), mib(rep.PeakRSS))
	resetPeak := resetPeakRSS(d.t.pid) == nil

	// Release: decide every one of them, as fast as the approvers can.
	d.presses = map[string]press{}
	d.apErrs = errCounts{}
	d.notes = errCounts{}
	work := make(chan string, 1024)
	var dw sync.WaitGroup
	for w := 0; w < max(1, d.opts.approvers); w++ {
		dw.Add(1)
		go func() {
			defer dw.Done()
			for id := range work {
				d.decide(ctx, id, "allow_once")
			}
		}()
	}
	dstart := time.Now()
	for _, id := range ids {
		if id != "" {
			work <- id
		}
	}
	close(work)
	dw.Wait()
	rep.Decided = len(d.presses)
	rep.DecideRPS = float64(rep.Decided) / time.Since(dstart).Seconds()
	errs.merge(d.apErrs)
	if poll {
		polling.Wait()
		close(results)
		var lat []time.Duration
		for r := range results {
			if !r.ok {
				addErr("hold_agent_not_allowed")
				continue
			}
			rep.Released++
			if p, ok := d.presses[r.id]; ok {
				lat = append(lat, r.seen.Sub(p.sent))
			}
		}
		rep.PressToAgent = distOf(lat)
	} else {
		rep.Released = len(d.presses)
	}
	peak, _, _ := procStatus(d.t.pid)
	if resetPeak {
		rep.ReleasePeakRSS = peak
	}
	rep.PeakRSS = max(rep.PeakRSS, peak)
	rep.Errors = errs
	return rep, nil
}

// waitForWaiters polls the server's approvebot_waiting_agents until it reaches want (or a
// minute passes) and returns the last value.
func (d *driver) waitForWaiters(ctx context.Context, want int, say func(string, ...any)) int {
	deadline := time.Now().Add(time.Minute)
	got := 0
	for {
		if v, ok := d.metricValue(ctx, "approvebot_waiting_agents"); ok {
			got = int(v)
		}
		if got >= want || time.Now().After(deadline) || ctx.Err() != nil {
			return got
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// metricValue reads one unlabelled metric from the server's /metrics.
func (d *driver) metricValue(ctx context.Context, name string) (float64, bool) {
	cctx, cancel := context.WithTimeout(ctx, d.callTimeout)
	defer cancel()
	code, raw, err := d.api.do(cctx, "GET", "/metrics", d.t.operator, nil)
	if err != nil || code != 200 {
		return 0, false
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return f, err == nil
		}
	}
	return 0, false
}

// resetPeakRSS resets the process's VmHWM (writing 5 to /proc/PID/clear_refs, Linux 4.0+)
// so that the next reading is the peak of what follows.
func resetPeakRSS(pid int) error {
	if pid <= 0 {
		return fmt.Errorf("no server pid")
	}
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}

func rssNow(pid int) int64 {
	_, rss, _ := procStatus(pid)
	return rss
}

// runtimeMetrics are the Go collector's figures that explain the server's RSS.
var runtimeMetrics = []string{
	"go_goroutines", "go_memstats_heap_inuse_bytes", "go_memstats_stack_inuse_bytes",
	"go_memstats_heap_idle_bytes", "go_memstats_heap_released_bytes", "go_memstats_sys_bytes",
}

// runtimeStats reads the server's Go runtime figures from /metrics (nil when unavailable).
func (d *driver) runtimeStats(ctx context.Context) map[string]float64 {
	cctx, cancel := context.WithTimeout(ctx, d.callTimeout)
	defer cancel()
	code, raw, err := d.api.do(cctx, "GET", "/metrics", d.t.operator, nil)
	if err != nil || code != 200 {
		return nil
	}
	out := map[string]float64{}
	for _, line := range strings.Split(string(raw), "\n") {
		name, val, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		for _, m := range runtimeMetrics {
			if name == m {
				if f, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
					out[m] = f
				}
			}
		}
	}
	return out
}
