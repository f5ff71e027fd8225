package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/policy"
	"github.com/approvebot/approvebot/store"
)

// The scale mode answers "does it stay as fast with a million requests stored?". It fills
// the database to each size in turn, in this process, through the same gate and store
// code the server runs (much faster than over HTTP, and the records are the server's
// own); then it starts the real server on the file and measures what must not grow with
// it: the time to a first /healthz, the RSS, point reads and audit queries. Sizes are
// cumulative: 50000,300000,1000000 fills 50k, measures, fills 250k more, measures, …

// Fill shape: many sessions (the audit indexes' hard case; a prime, so every session gets
// every kind of request), the tool's agent tokens, mostly policy decisions, a few human
// ones; fillers enough that group commits are full.
const (
	scaleSessions = 1999
	scaleHumanPct = 2
	scaleFillers  = 512
)

// ScaleReport is the figures of one size.
type ScaleReport struct {
	Requests int     `json:"stored_requests"`
	FillRPS  float64 `json:"fill_rps"`
	DBBytes  int64   `json:"db_bytes"`
	// Startup is from starting the server process to its first 200 on /healthz, page
	// cache warm (the file was just written), the median of StartupRuns starts.
	Startup     Dist  `json:"startup"`
	StartupRuns int   `json:"startup_runs"`
	RSSStarted  int64 `json:"rss_after_start_bytes"`
	RSSQueried  int64 `json:"rss_after_queries_bytes"`
	// AnonQueried is the part of RSSQueried that is the process's own memory; the rest is
	// pages of the mapped bbolt file the queries read (page cache, given back under
	// memory pressure).
	AnonQueried int64 `json:"rss_anon_after_queries_bytes"`
	// Queries: latency of each kind of read, over HTTP, one at a time.
	Queries map[string]Dist `json:"queries"`
	Errors  map[string]int  `json:"errors"`
}

// scaleSample is what the fill keeps to query later.
type scaleSample struct {
	mu  sync.Mutex
	ids []string
	n   int
	rng *rand.Rand
}

// add keeps a uniform sample of at most 1024 ids (reservoir sampling).
func (s *scaleSample) add(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	if len(s.ids) < 1024 {
		s.ids = append(s.ids, id)
	} else if j := s.rng.IntN(s.n); j < len(s.ids) {
		s.ids[j] = id
	}
}

func (s *scaleSample) pick(rng *rand.Rand) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ids[rng.IntN(len(s.ids))]
}

type scaleOptions struct {
	sizes      []int
	agents     int // concurrent fillers
	tokens     int
	queries    int // repeats of each query
	starts     int // server starts per size
	serverTOML string
	logLevel   string
}

// runScale fills dir's database to each size and measures the server on it.
func runScale(ctx context.Context, bin, dir string, o scaleOptions, say func(string, ...any)) ([]ScaleReport, error) {
	path := filepath.Join(dir, "approvebot.db")
	sample := &scaleSample{rng: rand.New(rand.NewPCG(1, 2))}
	var out []ScaleReport
	stored := 0
	for _, size := range o.sizes {
		if size <= stored {
			return out, fmt.Errorf("-scale sizes must grow: %d after %d", size, stored)
		}
		say("filling %s to %d requests…", path, size)
		rep := ScaleReport{Requests: size, Queries: map[string]Dist{}, Errors: map[string]int{}}
		start := time.Now()
		if err := fill(ctx, path, stored, size, o, sample); err != nil {
			return out, err
		}
		rep.FillRPS = float64(size-stored) / time.Since(start).Seconds()
		stored = size
		rep.DBBytes = fileSize(path)
		say("measuring at %d requests (%.0f MiB)…", size, mib(rep.DBBytes))
		if err := measureScale(ctx, bin, dir, o, sample, &rep); err != nil {
			return out, err
		}
		out = append(out, rep)
	}
	return out, nil
}

// fill submits requests from..to-1 through an in-process gate on the database.
func fill(ctx context.Context, path string, from, to int, o scaleOptions, sample *scaleSample) error {
	st, err := store.Open(path, store.Options{})
	if err != nil {
		return err
	}
	defer st.Close()
	eng, err := policy.NewEngine(policy.Config{ToolPermissions: map[string]string{deniedTool: "deny"}}, st)
	if err != nil {
		return err
	}
	g, err := gate.New(gate.Options{OperatorOnly: true, ApprovalTimeout: time.Hour}, st, eng, nil, nil)
	if err != nil {
		return err
	}
	defer g.Close(context.Background())
	next := atomic.Int64{}
	next.Store(int64(from))
	errc := make(chan error, o.agents)
	var wg sync.WaitGroup
	for w := 0; w < o.agents; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= to {
					return
				}
				if err := fillOne(ctx, g, i, o.tokens, sample); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		return err
	}
	return ctx.Err()
}

func fillOne(ctx context.Context, g *gate.Gate, i, tokens int, sample *scaleSample) error {
	session := "load-" + strconv.Itoa(i%scaleSessions)
	caller := gate.Caller{Name: "load-agent-" + strconv.Itoa(i%tokens)}
	var ask gate.Ask
	switch k := i % 100; {
	case k < scaleHumanPct:
		ask = gate.Ask{Tool: "bash", Args: map[string]any{"command": humanPrefix + strconv.Itoa(i)}, Session: session}
	case k < 70:
		ask = gate.Ask{Tool: "read_file", Args: map[string]any{"path": "/srv/app/file-" + strconv.Itoa(i%500)}, Session: session,
			Facts: approval.Facts{ReadOnly: true}}
	case k < 85:
		ask = gate.Ask{Tool: deniedTool, Args: map[string]any{"name": "prod"}, Session: session}
	default:
		ask = gate.Ask{Tool: "bash", Args: map[string]any{"command": "rm -rf /"}, Session: session}
	}
	rec, err := g.Submit(ctx, ask, caller)
	if err != nil {
		return fmt.Errorf("filling request %d: %w", i, err)
	}
	if rec.State == approval.StatePending {
		if _, err := g.Decide(ctx, rec.ID, gate.Decision{Outcome: approval.OutcomeAllowOnce, DecidedBy: "load-operator", Channel: "api"}); err != nil {
			return fmt.Errorf("deciding request %d: %w", i, err)
		}
	}
	sample.add(rec.ID)
	return nil
}

// measureScale starts the server o.starts times on the filled file and queries it.
func measureScale(ctx context.Context, bin, dir string, o scaleOptions, sample *scaleSample, rep *ScaleReport) error {
	sc := serverConfig{agents: o.tokens, maxPending: 50000, approvalTimeout: 10 * time.Minute, logLevel: o.logLevel,
		serverTOML: o.serverTOML, readyPoll: time.Millisecond}
	var startups []time.Duration
	var t *target
	for i := 0; i < o.starts; i++ {
		var err error
		if t, err = startServer(ctx, bin, dir, sc); err != nil {
			return err
		}
		startups = append(startups, t.startup)
		if i < o.starts-1 {
			if err := t.stop(); err != nil {
				return err
			}
		}
	}
	defer t.stop()
	rep.Startup, rep.StartupRuns = distOf(startups), len(startups)
	_, rep.RSSStarted, _ = procStatus(t.pid)
	a := newAPI(t.url, 4)
	defer a.close()
	rng := rand.New(rand.NewPCG(3, uint64(rep.Requests)))
	errs := errCounts(rep.Errors)
	queryTimes := map[string][]time.Duration{}
	get := func(name, path string, check func(raw []byte) error) {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		start := time.Now()
		code, raw, err := a.do(cctx, "GET", path, t.operator, nil)
		d := time.Since(start)
		if err != nil || code != 200 {
			errs.add(errName(name, code, raw, err))
			return
		}
		if err := check(raw); err != nil {
			errs.add(name + "_" + err.Error())
			return
		}
		queryTimes[name] = append(queryTimes[name], d)
	}
	for q := 0; q < o.queries; q++ {
		id := sample.pick(rng)
		session := url.QueryEscape("load-" + strconv.Itoa(rng.IntN(min(scaleSessions, rep.Requests))))
		agent := url.QueryEscape("load-agent-" + strconv.Itoa(rng.IntN(o.tokens)))
		get("get_request", "/v1/requests/"+id, func(raw []byte) error {
			if v, err := decodeView(raw); err != nil || v.ID != id || v.State == "pending" {
				return fmt.Errorf("bad_answer")
			}
			return nil
		})
		// Session pages of 20: from 50k stored requests on every session has that many
		// entries, so each size answers the same amount and only the store's work differs.
		get("audit_request", "/v1/audit?request="+id, entriesAtLeast(1))
		get("audit_session", "/v1/audit?limit=20&session="+session, entriesAtLeast(1))
		get("audit_agent", "/v1/audit?limit=100&agent="+agent, entriesAtLeast(min(100, rep.Requests/o.tokens)))
		get("audit_session_tool_outcome", "/v1/audit?limit=20&tool=read_file&outcome=allow_once&session="+session, entriesAtLeast(0))
		get("audit_newest", "/v1/audit?limit=100", entriesAtLeast(100))
		get("audit_tool_scan", "/v1/audit?limit=100&tool=bash&source=human", entriesAtLeast(0))
		get("audit_since_1h", "/v1/audit?limit=100&since=1h", entriesAtLeast(1))
		get("audit_counts_24h", "/v1/audit/counts?since=24h", func(raw []byte) error {
			var v struct {
				Hours []json.RawMessage `json:"hours"`
			}
			if err := json.Unmarshal(raw, &v); err != nil || len(v.Hours) == 0 {
				return fmt.Errorf("no_hours")
			}
			return nil
		})
		// Ten pages of 20 deep into one agent's entries (an agent has thousands at every
		// size), following the cursor.
		before := ""
		cctx, cancel := context.WithTimeout(ctx, time.Minute)
		start := time.Now()
		pages := 0
		for ; pages < 10; pages++ {
			code, raw, err := a.do(cctx, "GET", "/v1/audit?limit=20&agent="+agent+before, t.operator, nil)
			var p struct {
				Entries    []json.RawMessage `json:"entries"`
				NextBefore uint64            `json:"next_before"`
			}
			if err != nil || code != 200 || json.Unmarshal(raw, &p) != nil {
				errs.add(errName("audit_pages", code, raw, err))
				break
			}
			if p.NextBefore == 0 {
				break
			}
			before = "&before=" + strconv.FormatUint(p.NextBefore, 10)
		}
		cancel()
		queryTimes["audit_10_pages"] = append(queryTimes["audit_10_pages"], time.Since(start))
	}
	for name, d := range queryTimes {
		rep.Queries[name] = distOf(d)
	}
	_, rep.RSSQueried, _ = procStatus(t.pid)
	rep.AnonQueried = procRSSAnon(t.pid)
	return nil
}

func entriesAtLeast(n int) func([]byte) error {
	return func(raw []byte) error {
		var v struct {
			Entries []json.RawMessage `json:"entries"`
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			return fmt.Errorf("bad_json")
		}
		if len(v.Entries) < n {
			return fmt.Errorf("fewer_than_%d_entries", n)
		}
		return nil
	}
}

func printScale(w io.Writer, reps []ScaleReport) {
	if len(reps) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%-36s", "stored requests")
	for _, r := range reps {
		fmt.Fprintf(w, " %14d", r.Requests)
	}
	row := func(name string, f func(r ScaleReport) string) {
		fmt.Fprintf(w, "\n%-36s", name)
		for _, r := range reps {
			fmt.Fprintf(w, " %14s", f(r))
		}
	}
	row("fill (req/s, in-process)", func(r ScaleReport) string { return fmt.Sprintf("%.0f", r.FillRPS) })
	row("bbolt file (MiB)", func(r ScaleReport) string { return fmt.Sprintf("%.1f", mib(r.DBBytes)) })
	row("start to /healthz p50 (ms)", func(r ScaleReport) string { return fmt.Sprintf("%.1f", r.Startup.P50) })
	row("RSS after start (MiB)", func(r ScaleReport) string { return fmt.Sprintf("%.1f", mib(r.RSSStarted)) })
	row("RSS after queries (MiB)", func(r ScaleReport) string { return fmt.Sprintf("%.1f", mib(r.RSSQueried)) })
	row("  of which not the mapped file", func(r ScaleReport) string { return fmt.Sprintf("%.1f", mib(r.AnonQueried)) })
	for _, q := range []string{"get_request", "audit_request", "audit_session", "audit_agent", "audit_session_tool_outcome",
		"audit_newest", "audit_since_1h", "audit_10_pages", "audit_tool_scan", "audit_counts_24h"} {
		row(q+" p50 (ms)", func(r ScaleReport) string { return fmt.Sprintf("%.2f", r.Queries[q].P50) })
		row(q+" p99 (ms)", func(r ScaleReport) string { return fmt.Sprintf("%.2f", r.Queries[q].P99) })
	}
	row("errors", func(r ScaleReport) string { return strconv.Itoa(errCounts(r.Errors).total()) })
	fmt.Fprintln(w)
}
