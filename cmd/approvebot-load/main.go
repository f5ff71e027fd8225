// Command approvebot-load measures an approvebot server under load. It starts the real
// server (or targets a running one on loopback with -url) and drives concurrent agents with
// a mix of policy-allowed, policy-denied, floor-refused and human-decided requests; a
// simulated approver decides the human ones over the operator API. It reports throughput,
// latency percentiles per kind, the time from a decision to the waiting agent, errors, the
// server's peak RSS and the bbolt file size. With -hold N it instead holds N requests pending
// at once (each with a long-polling agent) and reports the server's memory.
//
// Every loop is bounded in count and time, and only loopback targets are accepted.
//
//	go build -o /tmp/approvebot ./cmd/approvebot
//	go run ./cmd/approvebot-load -bin /tmp/approvebot -agents 64 -duration 10s
//	go run ./cmd/approvebot-load -bin /tmp/approvebot -hold 10000
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		var f failed
		if !errors.As(err, &f) {
			fmt.Fprintln(os.Stderr, "approvebot-load:", err)
		}
		os.Exit(1)
	}
}

// failed means the run completed but found errors; the report says which.
type failed struct{ n int }

func (f failed) Error() string { return strconv.Itoa(f.n) + " errors" }

// Limits that keep every run bounded.
const (
	maxDuration = 10 * time.Minute
	maxAgents   = 5000
	maxHold     = 15000
)

// Report is everything one run measured.
type Report struct {
	URL        string      `json:"url"`
	Started    bool        `json:"started_server"`
	GOMAXPROCS int         `json:"client_gomaxprocs"`
	CPUs       int         `json:"cpus"`
	Load       *LoadReport `json:"load,omitempty"`
	Hold       *HoldReport `json:"hold,omitempty"`
	PeakRSS    int64       `json:"server_peak_rss_bytes"`
	RSS        int64       `json:"server_rss_bytes"`
	DBBytes    int64       `json:"db_bytes"`
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("approvebot-load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		bin        = fs.String("bin", "", "approvebot binary to start (default: go build it into a temporary directory)")
		urlFlag    = fs.String("url", "", "load a running server instead (loopback only); tokens from $APPROVEBOT_LOAD_AGENT_TOKEN and $APPROVEBOT_LOAD_OPERATOR_TOKEN")
		pid        = fs.Int("pid", 0, "with -url: the server's process id, to read its memory")
		dbPath     = fs.String("db", "", "with -url: the server's bbolt file, to report its size")
		dir        = fs.String("dir", "", "directory for the started server's config and database (default: a temporary one, removed after)")
		agents     = fs.Int("agents", 64, "concurrent agents")
		tokens     = fs.Int("tokens", 8, "agent tokens the started server is configured with (agents share them round-robin)")
		duration   = fs.Duration("duration", 10*time.Second, "how long agents keep filing requests")
		maxReqs    = fs.Int64("requests", 5_000_000, "stop after this many requests in all")
		mixFlag    = fs.String("mix", "allowed=70,denied=10,floor=10,human=10", "weights of the request kinds")
		approvers  = fs.Int("approvers", 8, "concurrent decision senders of the simulated approver")
		think      = fs.Duration("think", 10*time.Millisecond, "how long a human request waits before the approver presses (so the agent is long-polling)")
		listEvery  = fs.Duration("list-every", 5*time.Millisecond, "how often the simulated approver lists pending requests")
		verify     = fs.Int("verify", 200, "decided requests to re-read from the store and audit trail afterwards")
		hold       = fs.Int("hold", 0, "instead of the mixed load: hold this many requests pending at once")
		holdPoll   = fs.Bool("hold-poll", true, "in -hold mode, an agent long-polls each held request")
		logLevel   = fs.String("log-level", "info", "the started server's log level")
		serverProc = fs.Int("server-gomaxprocs", 0, "the started server's GOMAXPROCS (0: all CPUs)")
		jsonOut    = fs.Bool("json", false, "print the report as JSON")
		extraCfg   = fs.String("config-extra", "", "TOML file appended to the started server's config (e.g. [store] backend = \"etcd\")")
		scaleFlag  = fs.String("scale", "", "instead: fill the database to each of these sizes in turn (e.g. 50000,300000,1000000) and measure start-up, RSS, point reads and audit queries at each")
		queries    = fs.Int("queries", 50, "with -scale: how many times each query runs per size")
		starts     = fs.Int("starts", 3, "with -scale: server starts per size (the start-up figure is their median)")
		maxEntries = fs.Int("audit-max-entries", 0, "the started server's audit_max_entries (0: none)")
		retention  = fs.Duration("audit-retention", 0, "the started server's audit_retention (0: none)")
		sizeEvery  = fs.Duration("size-every", 0, "sample the bbolt file's size this often during a load run (0: only at the end)")
		client     = fs.String("client", "raw", "HTTP client of the policy-decided requests: raw (one prepared keep-alive request per agent, least CPU) or net/http")
	)
	if err := fs.Parse(args); err != nil {
		return err
	}
	m, err := parseMix(*mixFlag)
	if err != nil {
		return err
	}
	switch {
	case *duration <= 0 || *duration > maxDuration:
		return fmt.Errorf("-duration must be in (0, %s]", maxDuration)
	case *agents < 1 || *agents > maxAgents:
		return fmt.Errorf("-agents must be in [1, %d]", maxAgents)
	case *hold < 0 || *hold > maxHold:
		return fmt.Errorf("-hold must be in [0, %d]", maxHold)
	case *maxReqs < 1:
		return errors.New("-requests must be positive")
	case *approvers < 1 || *approvers > 1000:
		return errors.New("-approvers must be in [1, 1000]")
	case *tokens < 1 || *tokens > 1000:
		return errors.New("-tokens must be in [1, 1000]")
	case *listEvery < time.Millisecond:
		return errors.New("-list-every must be at least 1ms")
	case *client != "raw" && *client != "net/http":
		return errors.New("-client must be raw or net/http")
	}
	say := func(format string, a ...any) { fmt.Fprintf(stderr, "approvebot-load: "+format+"\n", a...) }

	var t *target
	if *urlFlag != "" {
		u, err := checkLoopback(*urlFlag)
		if err != nil {
			return err
		}
		agentTok, opTok := os.Getenv("APPROVEBOT_LOAD_AGENT_TOKEN"), os.Getenv("APPROVEBOT_LOAD_OPERATOR_TOKEN")
		if agentTok == "" || opTok == "" {
			return errors.New("-url needs $APPROVEBOT_LOAD_AGENT_TOKEN and $APPROVEBOT_LOAD_OPERATOR_TOKEN")
		}
		t = &target{url: u.String(), agents: []string{agentTok}, operator: opTok, pid: *pid, db: *dbPath}
	} else {
		work := *dir
		if work == "" {
			work, err = os.MkdirTemp("", "approvebot-load-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(work)
		}
		if *bin == "" {
			if *bin, err = buildServer(ctx, work, stderr); err != nil {
				return err
			}
		}
		var serverTOML strings.Builder
		if *maxEntries > 0 {
			fmt.Fprintf(&serverTOML, "audit_max_entries = %d\n", *maxEntries)
		}
		if *retention > 0 {
			fmt.Fprintf(&serverTOML, "audit_retention = %q\n", retention.String())
		}
		if *scaleFlag != "" {
			sizes, err := parseSizes(*scaleFlag)
			if err != nil {
				return err
			}
			reps, err := runScale(ctx, *bin, work, scaleOptions{sizes: sizes, agents: scaleFillers, tokens: *tokens, queries: max(*queries, 1),
				starts: max(*starts, 1), serverTOML: serverTOML.String(), logLevel: *logLevel}, say)
			if *jsonOut {
				enc := json.NewEncoder(stdout)
				enc.SetIndent("", "  ")
				if jerr := enc.Encode(map[string]any{"scale": reps}); jerr != nil && err == nil {
					err = jerr
				}
			} else {
				printScale(stdout, reps)
			}
			if err != nil {
				return err
			}
			n := 0
			for _, r := range reps {
				n += errCounts(r.Errors).total()
			}
			if n > 0 {
				return failed{n}
			}
			return nil
		}
		sc := serverConfig{agents: *tokens, maxPending: max(50000, *hold+*agents+1000), approvalTimeout: 10 * time.Minute,
			logLevel: *logLevel, gomaxprocs: *serverProc, serverTOML: serverTOML.String()}
		if *extraCfg != "" {
			raw, err := os.ReadFile(*extraCfg)
			if err != nil {
				return fmt.Errorf("-config-extra: %w", err)
			}
			sc.extra = string(raw)
		}
		if t, err = startServer(ctx, *bin, work, sc); err != nil {
			return err
		}
		defer t.stop()
		say("server pid %d on %s, database %s", t.pid, t.url, t.db)
	}

	conns := *agents + *approvers + 16
	if *hold > 0 && *holdPoll {
		conns += *hold
	}
	d := &driver{t: t, api: newAPI(t.url, conns), callTimeout: 30 * time.Second, opts: loadOptions{
		agents: *agents, duration: *duration, maxRequests: *maxReqs, mix: m, approvers: *approvers, think: *think, listEvery: *listEvery, verify: *verify,
		rawClient: *client == "raw", sizeEvery: *sizeEvery,
	}}
	defer d.api.close()
	rep := &Report{URL: t.url, Started: t.startedBy, GOMAXPROCS: runtime.GOMAXPROCS(0), CPUs: runtime.NumCPU()}
	errCount := 0
	if *hold > 0 {
		rep.Hold, err = d.hold(ctx, *hold, *holdPoll, say)
		if err != nil {
			return err
		}
		errCount = errCounts(rep.Hold.Errors).total()
	} else {
		say("%d agents for %s, mix %s", *agents, *duration, m)
		rep.Load, err = d.run(ctx)
		if err != nil {
			return err
		}
		errCount = rep.Load.ErrorCount
	}
	rep.PeakRSS, rep.RSS, _ = procStatus(t.pid)
	if t.startedBy {
		// Stop first so the size is the file as it rests on disk.
		if err := t.stop(); err != nil {
			return err
		}
	}
	rep.DBBytes = fileSize(t.db)
	if *jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		printReport(stdout, rep)
	}
	if errCount > 0 {
		return failed{errCount}
	}
	return nil
}

func printReport(w io.Writer, r *Report) {
	fmt.Fprintf(w, "approvebot-load against %s (server started by the tool: %t; %d CPUs)\n", r.URL, r.Started, r.CPUs)
	if l := r.Load; l != nil {
		fmt.Fprintf(w, "\n%d agents, %.1fs, mix %s\n\n", l.Agents, l.Elapsed, l.Mix)
		fmt.Fprintf(w, "%-8s %9s %9s %7s %8s %8s %8s %8s\n", "kind", "count", "req/s", "errors", "p50 ms", "p95 ms", "p99 ms", "max ms")
		for _, k := range kindNames {
			kr := l.Kinds[k]
			fmt.Fprintf(w, "%-8s %9d %9.0f %7d %8.2f %8.2f %8.2f %8.2f\n", k, kr.Count, kr.RPS, kr.Errors, kr.P50, kr.P95, kr.P99, kr.Max)
		}
		fmt.Fprintf(w, "\npolicy-decided: %d requests, %.0f req/s (all kinds %.0f req/s), each durably audited before its answer\n",
			l.PolicyDecided, l.PolicyDecidedRPS, l.TotalRPS)
		if l.PressToAgent.N > 0 {
			fmt.Fprintf(w, "human decision -> waiting agent (from the press):          %s (n=%d)\n", l.PressToAgent, l.PressToAgent.N)
			fmt.Fprintf(w, "human decision -> waiting agent (from the decision's 200): %s\n", l.DecidedToAgent)
		}
		if l.ServerCPU > 0 {
			fmt.Fprintf(w, "server CPU: %.1fs, %.0f µs per request", l.ServerCPU, l.CPUPerRequest)
			if l.Kinds["human"].Count == 0 {
				fmt.Fprintf(w, " (at that cost %d CPUs of its own would serve %.0f req/s)", r.CPUs, float64(r.CPUs)*1e6/l.CPUPerRequest)
			} else {
				fmt.Fprint(w, " (the approver's polling included)")
			}
			fmt.Fprintf(w, "; this tool used %.1fs\n", l.ClientCPU)
		}
		if len(l.DBSizes) > 0 {
			fmt.Fprintf(w, "bbolt file during the run (MiB):")
			for _, n := range l.DBSizes {
				fmt.Fprintf(w, " %.0f", mib(n))
			}
			fmt.Fprintf(w, " (max %.1f)\n", mib(l.DBMax))
		}
		fmt.Fprintf(w, "verified in store and audit trail: %d\n", l.Verified)
		fmt.Fprintf(w, "errors: %s\n", errCounts(l.Errors))
		if len(l.Notes) > 0 {
			fmt.Fprintf(w, "notes: %s\n", errCounts(l.Notes))
		}
	}
	if h := r.Hold; h != nil {
		fmt.Fprintf(w, "\nhold: %d requested, %d pending at once, %d agents long-polling (%d counted waiting by the server)\n", h.Requested, h.Held, h.Polling, h.Waiting)
		fmt.Fprintf(w, "filed at %.0f req/s; listing all pending took %.1f ms\n", h.CreateRPS, h.ListTime)
		fmt.Fprintf(w, "server RSS: %.1f MiB before, %.1f MiB while held (steady, the largest of 6 readings over 3 s)\n", mib(h.RSSBefore), mib(h.RSSHeld))
		if rt := h.Runtime; rt != nil {
			fmt.Fprintf(w, "  Go runtime while held: %.0f goroutines, heap in use %.1f MiB, stacks %.1f MiB, heap idle not returned %.1f MiB\n",
				rt["go_goroutines"], mib(int64(rt["go_memstats_heap_inuse_bytes"])), mib(int64(rt["go_memstats_stack_inuse_bytes"])),
				mib(int64(rt["go_memstats_heap_idle_bytes"]-rt["go_memstats_heap_released_bytes"])))
		}
		fmt.Fprintf(w, "released: %d decided at %.0f decisions/s, %d agents answered; press -> waiting agent %s\n", h.Decided, h.DecideRPS, h.Released, h.PressToAgent)
		if h.ReleasePeakRSS > 0 {
			fmt.Fprintf(w, "server peak RSS while releasing: %.1f MiB\n", mib(h.ReleasePeakRSS))
		}
		fmt.Fprintf(w, "errors: %s\n", errCounts(h.Errors))
	}
	if r.PeakRSS > 0 {
		fmt.Fprintf(w, "server peak RSS (VmHWM): %.1f MiB\n", mib(r.PeakRSS))
	}
	if r.DBBytes > 0 {
		fmt.Fprintf(w, "bbolt file: %.1f MiB\n", mib(r.DBBytes))
	}
}

// parseSizes reads -scale: growing positive counts, comma-separated (1000000 or 1e6).
func parseSizes(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		f, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
		if err != nil || f < 1 || f > 1e8 || f != float64(int(f)) {
			return nil, fmt.Errorf("-scale %q: want growing counts such as 50000,300000,1000000", s)
		}
		if len(out) > 0 && int(f) <= out[len(out)-1] {
			return nil, fmt.Errorf("-scale %q: sizes must grow", s)
		}
		out = append(out, int(f))
	}
	return out, nil
}
