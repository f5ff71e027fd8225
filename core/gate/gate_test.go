package gate_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/policy"
	"github.com/approvebot/approvebot/core/render"
	"github.com/approvebot/approvebot/store"
)

// fakeChannel records posts and edits; it can be told to fail, or to hold every post until
// hold is closed (a platform slower than the human).
type fakeChannel struct {
	name  string
	chats []string
	fail  bool
	hold  chan struct{}

	mu      sync.Mutex
	posts   []render.Card
	edits   map[approval.CardRef]render.Card
	n       int
	holding int
}

func (f *fakeChannel) Name() string    { return f.name }
func (f *fakeChannel) Chats() []string { return f.chats }
func (f *fakeChannel) Health() gate.Health {
	return gate.Health{OK: !f.fail}
}

func (f *fakeChannel) Post(ctx context.Context, chat string, c render.Card) (approval.CardRef, error) {
	if f.hold != nil {
		f.mu.Lock()
		f.holding++
		f.mu.Unlock()
		select {
		case <-f.hold:
		case <-ctx.Done():
			return approval.CardRef{}, ctx.Err()
		}
	}
	if f.fail {
		return approval.CardRef{}, errors.New("platform down")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n++
	f.posts = append(f.posts, c)
	return approval.CardRef{Channel: f.name, Chat: chat, Message: fmt.Sprint(f.n)}, nil
}

func (f *fakeChannel) Edit(ctx context.Context, ref approval.CardRef, c render.Card) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.edits == nil {
		f.edits = map[approval.CardRef]render.Card{}
	}
	f.edits[ref] = c
	return nil
}

// held is how many posts have reached the platform and wait on hold.
func (f *fakeChannel) held() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.holding
}

func (f *fakeChannel) editCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.edits)
}

type env struct {
	g     *gate.Gate
	st    *store.Store
	chans []*fakeChannel
}

func newEnv(t testing.TB, pcfg policy.Config, opts gate.Options, chans ...*fakeChannel) *env {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "g.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := policy.NewEngine(pcfg, st)
	if err != nil {
		t.Fatal(err)
	}
	var cs []gate.Channel
	for _, c := range chans {
		cs = append(cs, c)
	}
	g, err := gate.New(opts, st, eng, cs, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		g.Close(context.Background())
		if err := st.Check(); err != nil {
			t.Errorf("store check: %v", err)
		}
		st.Close()
	})
	return &env{g: g, st: st, chans: chans}
}

func askBash(cmd, session string) gate.Ask {
	return gate.Ask{Tool: "bash", Args: map[string]any{"command": cmd}, Session: session}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestCardsPostedToEveryChatAndEditedOnDecision(t *testing.T) {
	tg := &fakeChannel{name: "telegram", chats: []string{"1", "2"}}
	sl := &fakeChannel{name: "slack", chats: []string{"C1"}}
	e := newEnv(t, policy.Config{}, gate.Options{}, tg, sl)
	ctx := context.Background()
	rec, err := e.g.Submit(ctx, askBash("make deploy", "s"), gate.Caller{Name: "agent"})
	if err != nil || rec.State != approval.StatePending {
		t.Fatalf("%+v %v", rec, err)
	}
	waitFor(t, "three cards recorded", func() bool {
		r, _ := e.st.Get(ctx, rec.ID)
		return len(r.Cards) == 3
	})
	if got := e.g.LivePending("telegram", "2"); len(got) != 1 || got[0].ID != rec.ID {
		t.Fatalf("LivePending: %+v", got)
	}
	stored, _ := e.st.Get(ctx, rec.ID)
	for _, ref := range stored.Cards {
		if r, ok := e.g.ByCard(ref.Channel, ref.Chat, ref.Message); !ok || r.ID != rec.ID {
			t.Fatalf("ByCard did not find the posted card %v", ref)
		}
	}
	if _, err := e.g.Decide(ctx, rec.ID, gate.Decision{Outcome: approval.OutcomeAllowOnce, DecidedBy: "alice"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "every card edited", func() bool { return tg.editCount() == 2 && sl.editCount() == 1 })
	for ref, c := range tg.edits {
		if c.Resolution == nil || c.Resolution.DecidedBy != "alice" || c.Resolution.Outcome != approval.OutcomeAllowOnce {
			t.Fatalf("card %v not resolved: %+v", ref, c.Resolution)
		}
	}
	// A second decision loses and says who won.
	_, err = e.g.Decide(ctx, rec.ID, gate.Decision{Outcome: approval.OutcomeDeny, DecidedBy: "bob"})
	var lost *gate.AlreadyDecidedError
	if !errors.As(err, &lost) || lost.Request.DecidedBy != "alice" {
		t.Fatalf("err = %v", err)
	}
}

func TestUndeliverableFallsBackToDeny(t *testing.T) {
	down := &fakeChannel{name: "telegram", chats: []string{"1"}, fail: true}
	e := newEnv(t, policy.Config{}, gate.Options{}, down)
	ctx := context.Background()
	rec, _ := e.g.Submit(ctx, askBash("make deploy", "s"), gate.Caller{Name: "agent"})
	got, err := e.g.Wait(ctx, rec.ID, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != approval.StateDenied || got.Source != approval.SourceFallback || got.Allowed {
		t.Fatalf("undeliverable request: %+v", got)
	}
}

func TestNoRouteFallsBackAtOnce(t *testing.T) {
	tg := &fakeChannel{name: "telegram"} // no chats
	e := newEnv(t, policy.Config{}, gate.Options{}, tg)
	rec, err := e.g.Submit(context.Background(), askBash("make deploy", "s"), gate.Caller{Name: "agent"})
	if err != nil || rec.State != approval.StateDenied || rec.Source != approval.SourceFallback {
		t.Fatalf("%+v %v", rec, err)
	}
}

func TestDeliverySlowerThanDecisionStillEditsCard(t *testing.T) {
	slow := &fakeChannel{name: "telegram", chats: []string{"1"}, hold: make(chan struct{})}
	e := newEnv(t, policy.Config{}, gate.Options{OperatorOnly: true}, slow)
	ctx := context.Background()
	rec, _ := e.g.Submit(ctx, askBash("make deploy", "s"), gate.Caller{Name: "agent"})
	waitFor(t, "the post to reach the platform", func() bool { return slow.held() == 1 })
	if _, err := e.g.Decide(ctx, rec.ID, gate.Decision{Outcome: approval.OutcomeDeny, DecidedBy: "op"}); err != nil {
		t.Fatal(err)
	}
	if n := slow.editCount(); n != 0 {
		t.Fatalf("%d edits before the card exists", n)
	}
	close(slow.hold)
	// The card lands after the decision: it must still end resolved, not live.
	waitFor(t, "late card edited", func() bool { return slow.editCount() == 1 })
}

// The default 120 s of silence, on the bubble's clock: no test waits for it.
func TestTimeoutEditsCardsAndIsRefusal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tg := &fakeChannel{name: "telegram", chats: []string{"1"}}
		e := newEnv(t, policy.Config{}, gate.Options{}, tg)
		ctx := context.Background()
		start := time.Now()
		rec, _ := e.g.Submit(ctx, askBash("make deploy", "s"), gate.Caller{Name: "agent"})
		got, _ := e.g.Wait(ctx, rec.ID, 5*time.Minute)
		if got.Outcome != approval.OutcomeTimeout || got.Allowed || got.State != approval.StateDenied {
			t.Fatalf("%+v", got)
		}
		if waited := time.Since(start); waited != gate.DefaultApprovalTimeout {
			t.Fatalf("timed out after %s", waited)
		}
		waitFor(t, "expired card edited", func() bool { return tg.editCount() == 1 })
		if _, err := e.g.Decide(ctx, rec.ID, gate.Decision{Outcome: approval.OutcomeAllowOnce, DecidedBy: "late"}); err == nil {
			t.Fatal("a decision after the timeout won")
		}
	})
}

func TestPendingCaps(t *testing.T) {
	e := newEnv(t, policy.Config{}, gate.Options{OperatorOnly: true, MaxPendingPerSession: 2, MaxPendingTotal: 3, MaxPendingPerAgent: 3})
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		if _, err := e.g.Submit(ctx, askBash(fmt.Sprint("cmd", i), "s1"), gate.Caller{Name: "a"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.g.Submit(ctx, askBash("cmd3", "s1"), gate.Caller{Name: "a"}); !errors.Is(err, gate.ErrTooManyPending) {
		t.Fatalf("per-session cap: %v", err)
	}
	e.g.Submit(ctx, askBash("x", "s2"), gate.Caller{Name: "a"})
	if _, err := e.g.Submit(ctx, askBash("y", "s3"), gate.Caller{Name: "a"}); !errors.Is(err, gate.ErrTooManyPending) {
		t.Fatalf("total cap: %v", err)
	}
}

func TestAllowAlwaysClampedToSession(t *testing.T) {
	e := newEnv(t, policy.Config{}, gate.Options{OperatorOnly: true})
	ctx := context.Background()
	rec, _ := e.g.Submit(ctx, askBash("make deploy", "s"), gate.Caller{Name: "a"})
	got, err := e.g.Decide(ctx, rec.ID, gate.Decision{Outcome: approval.OutcomeAllowAlways, DecidedBy: "op"})
	if err != nil || got.Outcome != approval.OutcomeAllowSession {
		t.Fatalf("allow_always under allow_always=session: %+v %v", got.Outcome, err)
	}
	if len(e.st.AllowlistEntries()) != 0 {
		t.Fatal("clamped allow_always persisted an allowlist entry")
	}
}

func TestRecoverTimesOutExpiredAndRearmsLive(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.db")
	st, _ := store.Open(path, store.Options{})
	eng, _ := policy.NewEngine(policy.Config{}, st)
	// The first run's clock is an hour behind: its request's 5-minute deadline has passed
	// by the time the next run starts, with no waiting.
	past := func() time.Time { return time.Now().Add(-time.Hour) }
	g, _ := gate.New(gate.Options{OperatorOnly: true, ApprovalTimeout: 5 * time.Minute, Now: past}, st, eng, nil, nil)
	ctx := context.Background()
	expiring, _ := g.Submit(ctx, askBash("a", "s"), gate.Caller{Name: "a"})
	g.Close(ctx)
	st.Close()

	st, _ = store.Open(path, store.Options{})
	defer st.Close()
	g, _ = gate.New(gate.Options{OperatorOnly: true, ApprovalTimeout: time.Minute}, st, eng, nil, nil)
	defer g.Close(ctx)
	live, _ := g.Submit(ctx, askBash("b", "s"), gate.Caller{Name: "a"})
	g.Close(ctx)
	g, _ = gate.New(gate.Options{OperatorOnly: true, ApprovalTimeout: time.Minute}, st, eng, nil, nil)
	defer g.Close(ctx)
	expired, rearmed, err := g.Recover(ctx)
	if err != nil || expired != 1 || rearmed != 1 {
		t.Fatalf("expired=%d rearmed=%d err=%v", expired, rearmed, err)
	}
	r, _ := g.Get(ctx, expiring.ID)
	if r.Outcome != approval.OutcomeTimeout {
		t.Fatalf("expired request: %+v", r)
	}
	if _, err := g.Decide(ctx, live.ID, gate.Decision{Outcome: approval.OutcomeAllowOnce, DecidedBy: "op"}); err != nil {
		t.Fatalf("re-armed request not decidable: %v", err)
	}
}

func TestFingerprintIsCanonical(t *testing.T) {
	a, _ := gate.Canonical(map[string]any{"b": 1, "a": "<x>"})
	b, _ := gate.Canonical(map[string]any{"a": "<x>", "b": 1})
	if string(a) != string(b) || string(a) != `{"a":"<x>","b":1}` {
		t.Fatalf("canonical forms %s / %s", a, b)
	}
	f1 := gate.Fingerprint("bash", a, "/x")
	if f1 == gate.Fingerprint("bash", a, "/y") || f1 == gate.Fingerprint("sh", a, "/x") {
		t.Fatal("fingerprint ignores tool or cwd")
	}
	// Length prefixes: moving bytes between fields changes the fingerprint.
	if gate.Fingerprint("ab", []byte("c"), "") == gate.Fingerprint("a", []byte("bc"), "") {
		t.Fatal("fingerprint fields are ambiguous")
	}
}

func BenchmarkGatePolicyDecided(b *testing.B) {
	e := newEnv(b, policy.Config{}, gate.Options{})
	ctx := context.Background()
	a := gate.Ask{Tool: "read_file", Args: map[string]any{"path": "/etc/hosts"}, Session: "bench"}
	b.ReportAllocs()
	// 64 agents per core asking at once: the group commit shares each fsync among them.
	b.SetParallelism(64)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r, err := e.g.Submit(ctx, a, gate.Caller{Name: "agent"})
			if err != nil || !r.Allowed {
				b.Fatalf("%+v %v", r, err)
			}
		}
	})
	cs := e.st.CommitStats()
	b.ReportMetric(float64(cs.Writes)/float64(max(cs.Commits, 1)), "writes/commit")
}
