package etcd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/ledger"
	"github.com/approvebot/approvebot/internal/tcpproxy"
	"github.com/approvebot/approvebot/store/storetest"
)

// replicas opens n stores on one fresh prefix, as n approvebot replicas would.
func replicas(t *testing.T, n int, tune func(*Options)) []*Store {
	t.Helper()
	endpoints := etcdEndpoints(t)
	prefix := freshPrefix()
	out := make([]*Store, n)
	for i := range out {
		out[i] = openAt(t, endpoints, prefix, func(o *Options) {
			o.Name = fmt.Sprintf("replica-%d", i)
			o.Logger = testLogger(t)
			if tune != nil {
				tune(o)
			}
		})
	}
	return out
}

// testLogger logs to the test's output when -v is given.
func testLogger(t *testing.T) *slog.Logger {
	if !testing.Verbose() {
		return nil
	}
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }

func pendingReq(id, session string) *approval.Request {
	now := time.Now().UTC()
	return &approval.Request{ID: id, State: approval.StatePending, Session: session, Agent: "agent", Fingerprint: "fp-" + id,
		Tool: "Bash", CreatedAt: now, ExpiresAt: now.Add(time.Minute)}
}

func humanAt(outcome approval.Outcome, by string) approval.Resolution {
	st := approval.StateAllowed
	if outcome == approval.OutcomeDeny {
		st = approval.StateDenied
	}
	return approval.Resolution{State: st, Outcome: outcome, Source: approval.SourceHuman, DecidedBy: by, DecidedAt: time.Now().UTC(), RequireLive: true}
}

// feed collects what Follow hands over.
type feed struct {
	mu      sync.Mutex
	got     []approval.Request
	changed chan struct{}
}

func newFeed() *feed { return &feed{changed: make(chan struct{})} }

func (f *feed) add(r approval.Request) {
	f.mu.Lock()
	f.got = append(f.got, r)
	close(f.changed)
	f.changed = make(chan struct{})
	f.mu.Unlock()
}

// wait returns once cond holds for what was handed over, or fails the test.
func (f *feed) wait(t *testing.T, what string, cond func([]approval.Request) bool) []approval.Request {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		f.mu.Lock()
		got := append([]approval.Request(nil), f.got...)
		ch := f.changed
		f.mu.Unlock()
		if cond(got) {
			return got
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("timed out waiting for %s; got %+v", what, got)
		}
	}
}

func last(got []approval.Request, id string) (approval.Request, bool) {
	for i := len(got) - 1; i >= 0; i-- {
		if got[i].ID == id {
			return got[i], true
		}
	}
	return approval.Request{}, false
}

func TestFollowHandsOverEveryChangeOfAnotherReplica(t *testing.T) {
	rs := replicas(t, 2, nil)
	a, b := rs[0], rs[1]
	ctx := context.Background()
	before := pendingReq(storetest.ID(1), "s")
	if err := a.Create(ctx, before, approval.AuditEntry{Event: approval.EventRequest}); err != nil {
		t.Fatal(err)
	}
	f := newFeed()
	if err := b.Follow(ctx, f.add); err != nil {
		t.Fatal(err)
	}
	if got := f.wait(t, "the pending list", func(g []approval.Request) bool { return len(g) >= 1 }); got[0].ID != before.ID {
		t.Fatalf("first handed over %+v", got[0])
	}
	r := pendingReq(storetest.ID(2), "s")
	if err := a.Create(ctx, r, approval.AuditEntry{Event: approval.EventRequest}); err != nil {
		t.Fatal(err)
	}
	ref := approval.CardRef{Channel: "telegram", Chat: "1", Message: "9"}
	if _, err := a.AddCard(ctx, r.ID, ref); err != nil {
		t.Fatal(err)
	}
	if _, won, err := a.Resolve(ctx, r.ID, humanAt(approval.OutcomeDeny, "op"), ledger.Effects{}); err != nil || !won {
		t.Fatalf("won=%v err=%v", won, err)
	}
	got := f.wait(t, "the decision", func(g []approval.Request) bool {
		d, ok := last(g, r.ID)
		return ok && d.State == approval.StateDenied
	})
	var states []string
	for _, x := range got {
		if x.ID == r.ID {
			states = append(states, fmt.Sprintf("%s/%d", x.State, len(x.Cards)))
		}
	}
	if fmt.Sprint(states) != "[pending/0 pending/1 denied/1]" {
		t.Fatalf("handed over %v, want created, carded, decided in order", states)
	}
}

func TestFollowMissesNoDecisionAcrossAPartitionAndACompaction(t *testing.T) {
	endpoints := etcdEndpoints(t)
	proxy, err := tcpproxy.New(hostPort(endpoints[0]))
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	prefix := freshPrefix()
	a := openAt(t, endpoints, prefix, func(o *Options) { o.Name = "a" })
	b := openAt(t, []string{"http://" + proxy.Addr()}, prefix, func(o *Options) { o.Name = "b"; o.LeaseTTL = 10 * time.Second })
	ctx := context.Background()
	r := pendingReq(storetest.ID(1), "s")
	if err := a.Create(ctx, r, approval.AuditEntry{}); err != nil {
		t.Fatal(err)
	}
	f := newFeed()
	if err := b.Follow(ctx, f.add); err != nil {
		t.Fatal(err)
	}
	f.wait(t, "the pending request", func(g []approval.Request) bool { return len(g) == 1 })

	proxy.Cut()
	if _, won, err := a.Resolve(ctx, r.ID, humanAt(approval.OutcomeAllowOnce, "op"), ledger.Effects{}); err != nil || !won {
		t.Fatalf("won=%v err=%v", won, err)
	}
	// The history b's watch would resume from goes.
	for i := 0; i < 5; i++ {
		a.AppendAudit(ctx, approval.AuditEntry{Event: "x"})
	}
	resp, err := a.cli.Get(ctx, a.k.schema())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.cli.Compact(ctx, resp.Header.Revision); err != nil {
		t.Fatal(err)
	}
	proxy.Restore()
	f.wait(t, "the decision made while cut off", func(g []approval.Request) bool {
		d, ok := last(g, r.ID)
		return ok && d.State == approval.StateAllowed && d.DecidedBy == "op"
	})
}

func TestCompareAndSetAcrossReplicas(t *testing.T) {
	rs := replicas(t, 3, nil)
	ctx := context.Background()
	id := storetest.ID(1)
	if err := rs[0].Create(ctx, pendingReq(id, "s"), approval.AuditEntry{Event: approval.EventRequest, RequestID: id}); err != nil {
		t.Fatal(err)
	}
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 60; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out := approval.OutcomeAllowOnce
			if i%2 == 1 {
				out = approval.OutcomeDeny
			}
			_, won, err := rs[i%3].Resolve(ctx, id, humanAt(out, fmt.Sprint("op", i)), ledger.EffectsOf(out, approval.SourceHuman, 3, nil))
			if err != nil {
				t.Error(err)
			}
			if won {
				wins.Add(1)
			}
		}()
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d winners across three replicas", wins.Load())
	}
	page, err := rs[1].Audit(ctx, approval.AuditQuery{RequestID: id})
	if err != nil || len(page.Entries) != 2 {
		t.Fatalf("audit %+v %v, want the request and one decision", page.Entries, err)
	}
}

func TestCapsAreClusterWide(t *testing.T) {
	rs := replicas(t, 2, func(o *Options) { o.Limits = Limits{Total: 3, PerSession: 2, PerAgent: 3} })
	a, b := rs[0], rs[1]
	ctx := context.Background()
	ids := []string{storetest.ID(1), storetest.ID(2), storetest.ID(3), storetest.ID(4)}
	if err := a.Create(ctx, pendingReq(ids[0], "s1"), approval.AuditEntry{}); err != nil {
		t.Fatal(err)
	}
	if err := b.Create(ctx, pendingReq(ids[1], "s1"), approval.AuditEntry{}); err != nil {
		t.Fatal(err)
	}
	err := a.Create(ctx, pendingReq(ids[2], "s1"), approval.AuditEntry{})
	if !errors.Is(err, gate.ErrTooManyPending) {
		t.Fatalf("third of a session across replicas: %v", err)
	}
	if err := b.Create(ctx, pendingReq(ids[2], "s2"), approval.AuditEntry{}); err != nil {
		t.Fatal(err)
	}
	if err := a.Create(ctx, pendingReq(ids[3], "s3"), approval.AuditEntry{}); !errors.Is(err, gate.ErrTooManyPending) {
		t.Fatalf("over the total across replicas: %v", err)
	}
	// Decided requests are not counted: policy decisions never meet the caps.
	if err := a.Create(ctx, &approval.Request{ID: storetest.ID(5), State: approval.StateAllowed, Session: "s1", Agent: "agent"}, approval.AuditEntry{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.Resolve(ctx, ids[0], humanAt(approval.OutcomeDeny, "op"), ledger.Effects{}); err != nil {
		t.Fatal(err)
	}
	if err := a.Create(ctx, pendingReq(ids[3], "s1"), approval.AuditEntry{}); err != nil {
		t.Fatalf("a decision freed no slot: %v", err)
	}
}

func TestOneLeaderPerRoleAndTakeover(t *testing.T) {
	rs := replicas(t, 3, nil)
	var mu sync.Mutex
	leading := map[string]int{}
	maxAtOnce := 0
	leaders := make(chan string, 16)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for _, s := range rs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.Lead(ctx, "channel/telegram", func(lctx context.Context) {
				mu.Lock()
				leading[s.Name()]++
				n := 0
				for _, v := range leading {
					n += v
				}
				maxAtOnce = max(maxAtOnce, n)
				mu.Unlock()
				leaders <- s.Name()
				<-lctx.Done()
				mu.Lock()
				leading[s.Name()]--
				mu.Unlock()
			})
		}()
	}
	first := <-leaders
	byName := map[string]*Store{}
	for _, s := range rs {
		byName[s.Name()] = s
	}
	if got, err := rs[0].Leader(ctx, "channel/telegram"); err != nil || got != first {
		t.Fatalf("Leader() = %q, %v; want %q", got, err, first)
	}
	start := time.Now()
	byName[first].Close() // resigns: the next leader follows at once
	second := <-leaders
	if second == first {
		t.Fatal("a closed replica leads again")
	}
	t.Logf("takeover after a clean stop: %s", time.Since(start).Round(time.Millisecond))
	cancel()
	wg.Wait()
	if maxAtOnce != 1 {
		t.Fatalf("%d leaders at once", maxAtOnce)
	}
}

func TestLeaderCutOffStepsDownBeforeAnotherTakesOver(t *testing.T) {
	endpoints := etcdEndpoints(t)
	proxy, err := tcpproxy.New(hostPort(endpoints[0]))
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	prefix := freshPrefix()
	const ttl = 3 * time.Second
	cut := openAt(t, []string{"http://" + proxy.Addr()}, prefix, func(o *Options) { o.Name = "cut"; o.LeaseTTL = ttl })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stepDown atomic.Int64
	led := make(chan struct{})
	go cut.Lead(ctx, "maintenance", func(lctx context.Context) {
		close(led)
		<-lctx.Done()
		stepDown.Store(time.Now().UnixNano())
	})
	<-led
	other := openAt(t, endpoints, prefix, func(o *Options) { o.Name = "other"; o.LeaseTTL = ttl })
	took := make(chan time.Time, 1)
	go other.Lead(ctx, "maintenance", func(lctx context.Context) {
		took <- time.Now()
		<-lctx.Done()
	})
	start := time.Now()
	proxy.Cut()
	var at time.Time
	select {
	case at = <-took:
	case <-time.After(4 * ttl):
		t.Fatal("no takeover after the leader was cut off")
	}
	down := stepDown.Load()
	if down == 0 || time.Unix(0, down).After(at) {
		t.Fatalf("the cut-off leader stepped down at %v, after the new leader started at %v", time.Unix(0, down), at)
	}
	t.Logf("cut-off leader stepped down after %s, takeover after %s", time.Unix(0, down).Sub(start).Round(time.Millisecond), at.Sub(start).Round(time.Millisecond))
}

func TestAdoptHandsOverRequestsOfAGoneReplica(t *testing.T) {
	rs := replicas(t, 2, nil)
	gone, heir := rs[0], rs[1]
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	orphan := pendingReq(storetest.ID(1), "s")
	if err := gone.Create(ctx, orphan, approval.AuditEntry{}); err != nil {
		t.Fatal(err)
	}
	mine := pendingReq(storetest.ID(2), "s")
	if err := heir.Create(ctx, mine, approval.AuditEntry{}); err != nil {
		t.Fatal(err)
	}
	f := newFeed()
	go heir.Adopt(ctx, f.add)
	gone.Close() // revokes its lease: its requests have no owner now
	got := f.wait(t, "the orphan", func(g []approval.Request) bool { return len(g) >= 1 })
	if got[0].ID != orphan.ID {
		t.Fatalf("adopted %+v", got[0])
	}
	// Adopted once; the heir's own request is not adopted; a decided one neither.
	third, _ := openStoreLike(t, heir, "third")
	late := pendingReq(storetest.ID(3), "s")
	if err := third.Create(ctx, late, approval.AuditEntry{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := third.Resolve(ctx, late.ID, humanAt(approval.OutcomeDeny, "op"), ledger.Effects{}); err != nil {
		t.Fatal(err)
	}
	third.Close()
	time.Sleep(500 * time.Millisecond) // nothing must arrive: give a wrong adoption the time to show
	f.mu.Lock()
	n := len(f.got)
	f.mu.Unlock()
	if n != 1 {
		t.Fatalf("adopted %d requests, want only the orphan: %+v", n, f.got)
	}
}

// openStoreLike opens another replica on s's prefix.
func openStoreLike(t *testing.T, s *Store, name string) (*Store, string) {
	return openAt(t, s.opts.Endpoints, s.opts.Prefix, func(o *Options) { o.Name = name }), name
}

func TestClaimEventOnceAcrossReplicas(t *testing.T) {
	rs := replicas(t, 2, nil)
	a, b := rs[0], rs[1]
	ctx := context.Background()
	tests := []struct {
		name string
		// finish ends a's handling; then b claims.
		finish  func(done func(bool))
		bClaims bool
		closeA  bool
		eventID string
	}{
		{"handled: never again", func(done func(bool)) { done(true) }, false, false, "1"},
		{"released: handled again", func(done func(bool)) { done(false) }, true, false, "2"},
		{"claimant died: handled again", func(func(bool)) {}, true, true, "3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			first, done, err := a.ClaimEvent(ctx, "telegram", tc.eventID)
			if err != nil || !first {
				t.Fatalf("first claim: %v %v", first, err)
			}
			if again, _, err := b.ClaimEvent(ctx, "telegram", tc.eventID); err != nil || again {
				t.Fatalf("a second replica claimed an event being handled: %v %v", again, err)
			}
			tc.finish(done)
			if tc.closeA {
				a.Close()
			}
			got, _, err := b.ClaimEvent(ctx, "telegram", tc.eventID)
			if err != nil || got != tc.bClaims {
				t.Fatalf("claim after: %v %v, want %v", got, err, tc.bClaims)
			}
		})
	}
	// Another channel's event of the same id is another event.
	if first, _, err := b.ClaimEvent(ctx, "slack", "1"); err != nil || !first {
		t.Fatalf("slack 1 after telegram 1: %v %v", first, err)
	}
}

func TestRevokedAllowlistEntryIsGoneOnEveryReplicaAtTheNextAsk(t *testing.T) {
	rs := replicas(t, 2, nil)
	a, b := rs[0], rs[1]
	ctx := context.Background()
	id := storetest.ID(1)
	if err := a.Create(ctx, pendingReq(id, "s"), approval.AuditEntry{}); err != nil {
		t.Fatal(err)
	}
	if _, won, err := a.Resolve(ctx, id, humanAt(approval.OutcomeAllowAlways, "op"), ledger.Effects{Grant: true, Allowlist: []string{"/usr/bin/make"}}); err != nil || !won {
		t.Fatalf("won=%v err=%v", won, err)
	}
	if _, err := b.Lookup(ctx, "agent", "s2", "fp"); err != nil {
		t.Fatal(err)
	}
	if e := b.AllowlistEntries(); len(e) != 1 {
		t.Fatalf("b after the next ask: %+v", e)
	}
	if revoked, err := a.RevokeAllowlist(ctx, AllowlistSelector{Pattern: "/usr/bin/make"}, approval.AuditEntry{Event: approval.EventAllowlist}); len(revoked) != 1 || err != nil {
		t.Fatalf("revoke %+v %v", revoked, err)
	}
	if _, err := b.Lookup(ctx, "agent", "s2", "fp"); err != nil {
		t.Fatal(err)
	}
	if e := b.AllowlistEntries(); len(e) != 0 {
		t.Fatalf("b still allows a revoked entry at its next ask: %+v", e)
	}
}
