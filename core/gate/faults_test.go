package gate_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/ledger"
	"github.com/approvebot/approvebot/core/policy"
	"github.com/approvebot/approvebot/store"
)

func TestPerAgentCapKeepsOtherAgentsWorking(t *testing.T) {
	e := newEnv(t, policy.Config{}, gate.Options{OperatorOnly: true, MaxPendingTotal: 10})
	ctx := context.Background()
	// The default per-agent cap is half the total: a noisy agent gets 5.
	for i := 0; i < 5; i++ {
		if _, err := e.g.Submit(ctx, askBash(fmt.Sprint("noisy", i), fmt.Sprint("s", i)), gate.Caller{Name: "noisy"}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := e.g.Submit(ctx, askBash("noisy-more", "s9"), gate.Caller{Name: "noisy"})
	if !errors.Is(err, gate.ErrTooManyPending) || !strings.Contains(err.Error(), `agent "noisy"`) {
		t.Fatalf("over the per-agent cap: %v", err)
	}
	for i := 0; i < 5; i++ {
		if _, err := e.g.Submit(ctx, askBash(fmt.Sprint("quiet", i), "q"), gate.Caller{Name: "quiet"}); err != nil {
			t.Fatalf("another agent was turned away: %v", err)
		}
	}
	// A decision frees the noisy agent's slot.
	list := e.g.LivePending("", "")
	for _, r := range list {
		if r.Agent == "noisy" {
			if _, err := e.g.Decide(ctx, r.ID, gate.Decision{Outcome: approval.OutcomeDeny, DecidedBy: "op"}); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	if _, err := e.g.Submit(ctx, askBash("noisy-again", "s8"), gate.Caller{Name: "noisy"}); err != nil {
		t.Fatalf("after a decision: %v", err)
	}
}

// fakeClocks is a wall clock and an uptime clock the test moves by hand.
type fakeClocks struct {
	mu   sync.Mutex
	wall time.Time
	boot string
	up   time.Duration
}

func (c *fakeClocks) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.wall
}

func (c *fakeClocks) uptime() (string, time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.boot, c.up, c.boot != ""
}

func (c *fakeClocks) set(f func(*fakeClocks)) {
	c.mu.Lock()
	f(c)
	c.mu.Unlock()
}

// TestRestartAfterWallClockStepKeepsTheWindow: a request waits part of its window, the
// server stops, the wall clock steps back, the server starts. The request keeps only what
// was left of its window — never the step on top.
func TestRestartAfterWallClockStepKeepsTheWindow(t *testing.T) {
	base := time.Date(2031, 3, 1, 12, 0, 0, 0, time.UTC)
	const window = time.Hour
	tests := []struct {
		name string
		// down moves the clocks while approvebot is stopped, after 10 minutes of waiting.
		down     func(c *fakeClocks)
		useAlive bool
		// wantLeft is what must be left of the window after the restart (0: timed out).
		wantLeft time.Duration
	}{
		{"same boot, wall clock 2h back, 20m down", func(c *fakeClocks) {
			c.wall, c.up = c.wall.Add(-2*time.Hour+20*time.Minute), c.up+20*time.Minute
		}, false, 30 * time.Minute},
		{"same boot, wall clock 2h back, 55m down: expired", func(c *fakeClocks) {
			c.wall, c.up = c.wall.Add(-2*time.Hour+55*time.Minute), c.up+55*time.Minute
		}, false, 0},
		{"rebooted, wall clock 2h back: counted from the last checkpoint", func(c *fakeClocks) {
			c.wall, c.boot, c.up = c.wall.Add(-2*time.Hour), "boot-2", 30*time.Second
		}, true, 50 * time.Minute},
		{"no uptime clock, no checkpoint, wall clock 2h back: never more than the window left", func(c *fakeClocks) {
			c.wall, c.boot = c.wall.Add(-2*time.Hour), ""
		}, false, window},
		{"same boot, wall clock 1h forward, 5m down: the shorter of the two", func(c *fakeClocks) {
			c.wall, c.up = c.wall.Add(time.Hour+5*time.Minute), c.up+5*time.Minute
		}, false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := &fakeClocks{wall: base, boot: "boot-1", up: 5 * time.Hour}
			path := filepath.Join(t.TempDir(), "c.db")
			st, err := store.Open(path, store.Options{ProbeInterval: -1, Now: clk.now})
			if err != nil {
				t.Fatal(err)
			}
			eng, _ := policy.NewEngine(policy.Config{}, st)
			g, _ := gate.New(gate.Options{OperatorOnly: true, ApprovalTimeout: window, Now: clk.now, Uptime: clk.uptime}, st, eng, nil, nil)
			ctx := context.Background()
			rec, err := g.Submit(ctx, askBash("make deploy", "s"), gate.Caller{Name: "a"})
			if err != nil {
				t.Fatal(err)
			}
			clk.set(func(c *fakeClocks) { c.wall, c.up = c.wall.Add(10*time.Minute), c.up+10*time.Minute })
			g.Close(ctx)
			st.Close() // writes the clock checkpoint: base+10m
			clk.set(tc.down)

			st, err = store.Open(path, store.Options{ProbeInterval: -1, Now: clk.now})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			opts := gate.Options{OperatorOnly: true, ApprovalTimeout: window, Now: clk.now, Uptime: clk.uptime}
			if tc.useAlive {
				opts.LastAlive = st.LastAlive()
			}
			g, _ = gate.New(opts, st, eng, nil, nil)
			defer g.Close(ctx)
			expired, rearmed, err := g.Recover(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := st.Get(ctx, rec.ID)
			if tc.wantLeft == 0 {
				if expired != 1 || got.Outcome != approval.OutcomeTimeout {
					t.Fatalf("expired=%d rearmed=%d, request %s/%s; want timed out", expired, rearmed, got.State, got.Outcome)
				}
				return
			}
			if rearmed != 1 || got.State != approval.StatePending {
				t.Fatalf("expired=%d rearmed=%d state=%s", expired, rearmed, got.State)
			}
			if left := got.ExpiresAt.Sub(clk.now()); left < tc.wantLeft-time.Second || left > tc.wantLeft+time.Second {
				t.Fatalf("left after restart = %v, want %v (deadline %v, now %v)", left, tc.wantLeft, got.ExpiresAt, clk.now())
			}
		})
	}
}

// failingStore fails the writes that time requests out while fail is set, as a full disk
// would.
type failingStore struct {
	*store.Store
	fail atomic.Bool
}

func (f *failingStore) Resolve(ctx context.Context, id string, res approval.Resolution, eff ledger.Effects) (approval.Request, bool, error) {
	if f.fail.Load() {
		return approval.Request{}, false, fmt.Errorf("disk full: %w", gate.ErrStoreUnavailable)
	}
	return f.Store.Resolve(ctx, id, res, eff)
}

// TestTimedOutRequestCannotBeWonWhileTheStoreCannotWrite: the timer fires while the store
// cannot write; no decision can win afterwards, even with a wall clock that says the
// request is live, and the timeout is written once the store can write again.
func TestTimedOutRequestCannotBeWonWhileTheStoreCannotWrite(t *testing.T) {
	clk := &fakeClocks{wall: time.Date(2031, 3, 1, 12, 0, 0, 0, time.UTC)}
	st, err := store.Open(filepath.Join(t.TempDir(), "f.db"), store.Options{ProbeInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	fs := &failingStore{Store: st}
	eng, _ := policy.NewEngine(policy.Config{}, st)
	// The wall clock never moves: by it, the request is live forever.
	g, _ := gate.New(gate.Options{OperatorOnly: true, ApprovalTimeout: 50 * time.Millisecond, Now: clk.now}, fs, eng, nil, nil)
	defer g.Close(context.Background())
	ctx := context.Background()
	fs.fail.Store(true)
	rec, err := g.Submit(ctx, askBash("make deploy", "s"), gate.Caller{Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the request's own 50 ms window, on the real clock
	if _, err := g.Decide(ctx, rec.ID, gate.Decision{Outcome: approval.OutcomeAllowOnce, DecidedBy: "op"}); !errors.Is(err, gate.ErrStoreUnavailable) {
		t.Fatalf("decision while the store cannot write: %v", err)
	}
	fs.fail.Store(false)
	waitFor(t, "the timeout to be written once the store can write", func() bool {
		r, _ := st.Get(ctx, rec.ID)
		return r.Outcome == approval.OutcomeTimeout
	})
	_, err = g.Decide(ctx, rec.ID, gate.Decision{Outcome: approval.OutcomeAllowOnce, DecidedBy: "op"})
	var lost *gate.AlreadyDecidedError
	if !errors.Is(err, gate.ErrExpired) && (!errors.As(err, &lost) || lost.Request.Allowed) {
		t.Fatalf("late decision: %v", err)
	}
}

func TestWatchIsCalledOnceOnDecisionOrClose(t *testing.T) {
	e := newEnv(t, policy.Config{}, gate.Options{OperatorOnly: true})
	ctx := context.Background()
	rec, _ := e.g.Submit(ctx, askBash("make a", "s"), gate.Caller{Name: "a"})
	got := make(chan approval.Request, 2)
	if _, ok := e.g.Watch(rec.ID, func(r approval.Request) { got <- r }); !ok {
		t.Fatal("a live request cannot be watched")
	}
	e.g.Decide(ctx, rec.ID, gate.Decision{Outcome: approval.OutcomeAllowOnce, DecidedBy: "op"})
	if r := <-got; r.State != approval.StateAllowed {
		t.Fatalf("watch got %+v", r)
	}
	if _, ok := e.g.Watch(rec.ID, func(approval.Request) {}); ok {
		t.Fatal("a decided request can be watched")
	}
	other, _ := e.g.Submit(ctx, askBash("make b", "s"), gate.Caller{Name: "a"})
	stop, _ := e.g.Watch(other.ID, func(r approval.Request) { got <- r })
	if !stop() || stop() {
		t.Fatal("stop did not report the first cancel only")
	}
	e.g.Watch(other.ID, func(r approval.Request) { got <- r })
	e.g.Close(ctx)
	if r := <-got; r.ID != other.ID || r.State != approval.StatePending {
		t.Fatalf("watch on close got %+v", r)
	}
	if len(got) != 0 {
		t.Fatal("a stopped watch was called")
	}
}
