package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"

	"github.com/approvebot/approvebot/api"
	"github.com/approvebot/approvebot/config"
	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/policy"
	"github.com/approvebot/approvebot/internal/sysclock"
	"github.com/approvebot/approvebot/metrics"
	"github.com/approvebot/approvebot/store"
	"github.com/approvebot/approvebot/web"
)

func cmdServe(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("serve", "serve [-config FILE]", stderr)
	configPath := fs.String("config", "", "config file (TOML); empty runs on embedded defaults")
	if err := fs.Parse(args); err != nil {
		return parseError(err, 2)
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return &exitError{code: 2, msg: fmt.Sprintf("unexpected arguments: %q", fs.Args())}
	}
	cfg, err := config.Load(*configPath)
	if err != nil {
		return err
	}
	return serve(ctx, cfg, stdout, stderr, nil)
}

func newLogger(cfg config.Log, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.Level))
	opts := &slog.HandlerOptions{Level: level, ReplaceAttr: redactAttr}
	if cfg.Format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// gcPercent is the collector's target when GOGC is not set: the heap may grow to five
// times the live data between collections instead of Go's twice. Every request allocates
// ~20 KB it drops at once, so the default collects constantly: measured with the load tool,
// 400 takes 10% off the server's CPU per request, for 119 MiB of RSS instead of 78 MiB
// with 10,000 requests pending (docs/operations.md).
const gcPercent = 400

// serve runs the service until ctx ends. ready, when not nil, receives the bound address.
func serve(ctx context.Context, cfg *config.Config, stdout, stderr io.Writer, ready chan<- string) error {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		memCtx, stopMem := context.WithCancel(context.Background())
		defer stopMem()
		go followMemory(memCtx)
	}
	log := newLogger(cfg.Log, stderr)
	clocks, err := testClocks(log)
	if err != nil {
		return err
	}
	// The data directory first: on a first start it may not exist yet, and the generated
	// tokens file lives beside the database by default.
	if err := os.MkdirAll(filepath.Dir(cfg.Server.Data), 0o700); err != nil {
		return fmt.Errorf("creating the data directory: %w", err)
	}
	tokens, err := loadTokens(cfg, stdout)
	if err != nil {
		return err
	}
	st, err := openBackend(ctx, cfg, log, clocks.Now)
	if err != nil {
		return err
	}
	defer st.Close()
	engine, err := policy.NewEngine(cfg.Policy, st)
	if err != nil {
		return err
	}
	chans, handlers, err := buildChannels(cfg, log)
	if err != nil {
		return err
	}
	roles := &leading{}
	health := func() map[string]gate.Health { return channelHealth(chans, st, roles) }
	m := metrics.New(health, st.commits)
	m.Store(func() metrics.StoreHealth {
		h := st.health()
		return metrics.StoreHealth{Writable: h.Writable, WriteErrors: h.WriteErrors, Damaged: h.Damaged}
	})
	routes := make([]gate.Route, 0, len(cfg.Routes))
	for _, r := range cfg.Routes {
		routes = append(routes, gate.Route{Agent: r.Agent, Session: r.Session, Tool: r.Tool, Channel: r.Channel, Chats: r.Chats})
	}
	g, err := gate.New(gate.Options{
		ApprovalTimeout: cfg.Server.ApprovalTimeout.Duration, DeliveryTimeout: cfg.Server.DeliveryTimeout.Duration,
		MaxPendingTotal: cfg.Server.MaxPending, MaxPendingPerSession: cfg.Server.MaxPendingPerSession,
		MaxPendingPerAgent: cfg.Server.MaxPendingPerAgent,
		OperatorOnly:       !cfg.Server.HeadlessFallback, Logger: log, Metrics: m,
		Now: clocks.Now, Uptime: clocks.Uptime, LastAlive: st.LastAlive(),
	}, st, engine, chans, routes)
	if err != nil {
		return err
	}
	expired, rearmed, err := g.Recover(ctx)
	if err != nil {
		if errors.Is(err, store.ErrDamaged) {
			// Damage deeper in the file than start-up reads, met by the first walk of the
			// pending requests: the same refusal, and the same advice, as damage found at open.
			return &store.DamagedFileError{Path: cfg.Server.Data, Detail: "recovering pending requests: " + err.Error()}
		}
		return fmt.Errorf("recovering pending requests: %w", err)
	}
	if expired+rearmed > 0 {
		log.Info("recovered pending requests", "expired", expired, "rearmed", rearmed)
	}
	srvAPI, err := api.New(api.Options{
		Gate: g, Audit: st, Allowlist: allowlistAdapter{st}, Tokens: tokens, MaxBody: cfg.Server.MaxBody,
		MaxWait: cfg.Server.MaxWait.Duration, RateLimit: cfg.Server.RateLimit, RateBurst: cfg.Server.RateBurst,
		Metrics: m, Logger: log, Extra: handlers, Backup: st.backup(),
		Health: func(ctx context.Context) (api.StoreHealth, map[string]gate.Health) {
			h := st.health()
			sh := api.StoreHealth{Readable: true, Writable: h.Writable, Error: h.Error}
			if err := st.Ping(); err != nil {
				sh.Readable = false
				if sh.Error == "" {
					sh.Error = err.Error()
				} else {
					sh.Error += "; reading fails too: " + err.Error()
				}
			}
			return sh, health()
		},
	})
	if err != nil {
		return err
	}
	m.Waiting(srvAPI.Waiting)
	panel, err := web.New(web.Options{Gate: g, Store: st, Auth: srvAPI.Authenticate, Logger: log})
	if err != nil {
		return err
	}
	srvAPI.Mount(web.Prefix, panel)
	ln, err := net.Listen("tcp", cfg.Server.Listen)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", cfg.Server.Listen, err)
	}
	srv := &http.Server{
		Handler:           srvAPI.Handler(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      cfg.Server.MaxWait.Duration + 30*time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    32 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()

	runCtx, stopRunners := context.WithCancel(context.Background())
	var runners sync.WaitGroup
	for _, c := range chans {
		r, ok := c.(gate.Runner)
		if !ok {
			continue
		}
		run := func(ctx context.Context) {
			if err := r.Run(ctx, counting{Gate: g, Counter: m}); err != nil && !errors.Is(err, context.Canceled) {
				log.Error("channel stopped", "channel", c.Name(), "err", err)
			}
		}
		runners.Add(1)
		go func() {
			defer runners.Done()
			if receivesByHTTP(c) {
				// Webhooks reach whichever replica the load balancer picks: every one
				// runs the channel (a redelivered event is handled once, see Claim).
				run(runCtx)
				return
			}
			// On a cluster only one replica polls or holds the platform's connection.
			role := roleChannelPrefix + c.Name()
			lead(runCtx, st, role, func(ctx context.Context) {
				roles.set(role, true)
				defer roles.set(role, false)
				run(ctx)
			})
		}()
	}
	runners.Add(1)
	go func() {
		defer runners.Done()
		lead(runCtx, st, roleMaintenance, func(ctx context.Context) {
			maintain(ctx, st, g, cfg.Server.AuditRetention.Duration, cfg.Server.AuditMaxEntries, log)
		})
	}()
	log.Info("approvebot listening", "addr", ln.Addr().String(), "db", cfg.Server.Data, "channels", len(chans))
	if ready != nil {
		ready <- ln.Addr().String()
	}

	select {
	case <-ctx.Done():
	case err := <-serveErr:
		stopRunners()
		runners.Wait()
		return fmt.Errorf("http server: %w", err)
	}
	log.Info("shutting down")
	shCtx, cancel := context.WithTimeout(context.Background(), cfg.Server.ShutdownTimeout.Duration)
	defer cancel()
	// Release long-polls first (agents re-poll after the restart), then drain HTTP, stop the
	// channels, and wait for card edits in flight; pending requests stay in the store.
	closeErr := make(chan error, 1)
	go func() { closeErr <- g.Close(shCtx) }()
	if err := srv.Shutdown(shCtx); err != nil {
		log.Warn("http shutdown", "err", err)
	}
	if err := srvAPI.Drain(shCtx); err != nil {
		log.Warn("long-polls not all answered before the shutdown timeout", "err", err)
	}
	stopRunners()
	runners.Wait()
	if err := <-closeErr; err != nil {
		log.Warn("gate shutdown", "err", err)
	}
	return nil
}

// maintain is the maintenance leader's work: retention and, on a cluster, the delivery
// of requests whose replica died.
func maintain(ctx context.Context, st backend, g *gate.Gate, age time.Duration, maxEntries int, log *slog.Logger) {
	var wg sync.WaitGroup
	if c, ok := st.(cluster); ok {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.Adopt(ctx, g.Adopt); err != nil && ctx.Err() == nil {
				log.Error("adopting the requests of gone replicas failed", "err", err)
			}
		}()
	}
	if age > 0 || maxEntries > 0 {
		retain(ctx, st, age, maxEntries, log)
	}
	wg.Wait()
}

// retainEvery is how often retention runs on its own. On bbolt every commit applies it to
// what the commit adds (store.Options.Retention); these runs remove a backlog (a bound just
// lowered, a file from before) and age out entries while no commit comes. On etcd they
// are the retention, on the maintenance leader.
const retainEvery = 10 * time.Second

// retain prunes the audit trail and the decided requests of the entries it removes, at
// start and every retainEvery.
func retain(ctx context.Context, st backend, age time.Duration, maxEntries int, log *slog.Logger) {
	t := time.NewTicker(retainEvery)
	defer t.Stop()
	for {
		var before time.Time
		if age > 0 {
			before = time.Now().Add(-age)
		}
		a, r, err := st.Prune(ctx, before, maxEntries)
		if err != nil && ctx.Err() == nil {
			log.Error("audit retention failed", "err", err)
		} else if a+r > 0 {
			log.Info("audit retention", "audit_entries_removed", a, "requests_removed", r)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// receivesByHTTP reports whether a channel takes its events on an HTTP endpoint (webhook
// mode) rather than by polling or holding a connection.
func receivesByHTTP(c gate.Channel) bool {
	h, ok := c.(interface {
		HTTPHandler() (string, http.Handler)
	})
	if !ok {
		return false
	}
	path, _ := h.HTTPHandler()
	return path != ""
}

// channelHealth is each channel's health. On a cluster, a replica that does not lead a
// polling channel says so: it posts and edits cards, another replica reads the presses.
func channelHealth(chans []gate.Channel, st backend, roles *leading) map[string]gate.Health {
	_, shared := st.(cluster)
	out := make(map[string]gate.Health, len(chans))
	for _, c := range chans {
		h := c.Health()
		if shared && !receivesByHTTP(c) && !roles.get(roleChannelPrefix+c.Name()) {
			h.Detail = "standby: another replica reads this channel's updates"
			h.OK = h.OK || h.LastError == ""
		}
		out[c.Name()] = h
	}
	return out
}

// leading remembers the roles this replica leads now.
type leading struct{ m sync.Map }

func (l *leading) set(role string, on bool) { l.m.Store(role, on) }

func (l *leading) get(role string) bool {
	v, _ := l.m.Load(role)
	on, _ := v.(bool)
	return on
}

type allowlistAdapter struct{ st backend }

func (a allowlistAdapter) ListAllowlistJSON(ctx context.Context) (any, error) {
	items, err := a.st.ListAllowlist(ctx)
	if items == nil {
		items = []store.AllowlistItem{}
	}
	return items, err
}

func (a allowlistAdapter) RevokeAllowlist(ctx context.Context, sel api.AllowlistSelector, e approvalAuditEntry) (any, int, error) {
	revoked, err := a.st.RevokeAllowlist(ctx, approval.AllowlistSelector(sel), e)
	if revoked == nil {
		revoked = []store.AllowlistItem{}
	}
	return revoked, len(revoked), err
}

// The fault-injection seams of the clock, for the tests that restart approvebot across a
// wall-clock step or a reboot. An operator never sets them.
const (
	envClockOffset = "APPROVEBOT_TEST_CLOCK_OFFSET" // a Go duration: "-1h" is a clock stepped back
	envBootID      = "APPROVEBOT_TEST_BOOT_ID"      // replaces the system's boot id
)

func testClocks(log *slog.Logger) (*sysclock.Clocks, error) {
	var offset time.Duration
	if v := os.Getenv(envClockOffset); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", envClockOffset, err)
		}
		offset = d
		log.Warn("test seam: the wall clock is shifted", "offset", d)
	}
	boot := os.Getenv(envBootID)
	if boot != "" {
		log.Warn("test seam: the boot id is replaced", "boot_id", boot)
	}
	return sysclock.New(offset, boot), nil
}
