// Package storetest is the store contract: one suite of tests that every backend of
// gate.Store (the bbolt file in store/, the etcd cluster in store/etcd) must pass, run by
// each backend's own tests. It checks what the gate and the API rely on: a decision is
// one compare-and-set with its effects and audit entry, a late human decision becomes a
// timeout, failures of one write never touch another, retention keeps what it must, and
// everything acknowledged is there after a reopen.
package storetest

import (
	"context"
	"encoding/base32"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/ledger"
	"github.com/approvebot/approvebot/core/policy"
)

// Store is what the suite exercises: the gate's contract and the operator's reads.
type Store interface {
	gate.Store
	Audit(ctx context.Context, q approval.AuditQuery) (approval.AuditPage, error)
	AuditCounts(ctx context.Context, since, until time.Time) ([]approval.HourCount, error)
	Grants(ctx context.Context, limit int) ([]ledger.Item, int, error)
	Denials(ctx context.Context, limit int) ([]ledger.Item, int, error)
	PausedSessions(ctx context.Context, limit int) ([]ledger.Session, int, error)
	AllowlistEntries() []policy.AllowlistEntry
	ListAllowlist(ctx context.Context) ([]approval.AllowlistItem, error)
	RevokeAllowlist(ctx context.Context, sel approval.AllowlistSelector, audit approval.AuditEntry) ([]approval.AllowlistItem, error)
	Prune(ctx context.Context, before time.Time, maxEntries int) (audit, requests int, err error)
	Ping() error
	Close() error
}

// Backend opens stores of one kind.
type Backend struct {
	// Open returns a new, empty store, closed when the test ends, and a function that
	// opens the same data again once the first store is closed.
	Open func(t *testing.T) (s Store, reopen func(t *testing.T) Store)
	// ErrClosed is what a write after Close fails with.
	ErrClosed error
	// Damage overwrites the stored record of request id with bytes that do not decode,
	// as a damaged disk or a stray write would.
	Damage func(t *testing.T, s Store, id string)
}

// Run runs the whole contract against b.
func Run(t *testing.T, b Backend) {
	tests := []struct {
		name string
		fn   func(t *testing.T, b Backend)
	}{
		{"CreateGetAndPending", testCreateGetAndPending},
		{"CreateRefusesAnExistingID", testCreateRefusesAnExistingID},
		{"ConcurrentCreatesOfOneRequest", testConcurrentCreatesOfOneRequest},
		{"ResolveIsCompareAndSet", testResolveIsCompareAndSet},
		{"ResolveAfterDeadlineTimesOut", testResolveAfterDeadlineTimesOut},
		{"ResolveUnknownIsNotFound", testResolveUnknownIsNotFound},
		{"GrantsAndDenialsPerSession", testGrantsAndDenialsPerSession},
		{"DenialsPauseAtThreshold", testDenialsPauseAtThreshold},
		{"TimeoutAndCancelAreNotLedgered", testTimeoutAndCancelAreNotLedgered},
		{"GroupCommitIsolatesFailures", testGroupCommitIsolatesFailures},
		{"AuditOrderLimitAndFilters", testAuditOrderLimitAndFilters},
		{"AllowlistPersistListAndRevoke", testAllowlistPersistListAndRevoke},
		{"CardsRecordedAndReturned", testCardsRecordedAndReturned},
		{"SessionSettingsWithAudit", testSessionSettingsWithAudit},
		{"PausedForEveryAgentAndUnpaused", testPausedForEveryAgentAndUnpaused},
		{"PruneKeepsPendingAndTheNewest", testPruneKeepsPendingAndTheNewest},
		{"ReopenKeepsEverythingAcknowledged", testReopenKeepsEverythingAcknowledged},
		{"WritesAfterCloseFail", testWritesAfterCloseFail},
		{"DamagedRequestIsDeniedNeverAllowed", testDamagedRequestIsDeniedNeverAllowed},
		{"AuditPagesWalkEveryEntryOnce", testAuditPagesWalkEveryEntryOnce},
		{"AuditFiltersAndCounts", testAuditFiltersAndCounts},
		{"LedgerListings", testLedgerListings},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, b) })
	}
}

var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// IDAt returns a valid request id created at t (the time gate.NewID puts first), unique
// by n.
func IDAt(t time.Time, n int) string {
	var b [16]byte
	ms := uint64(t.UnixMilli())
	for i := 5; i >= 0; i-- {
		b[i] = byte(ms)
		ms >>= 8
	}
	for i := 15; i >= 6 && n > 0; i-- {
		b[i] = byte(n)
		n >>= 8
	}
	return idEncoding.EncodeToString(b[:])
}

// ID is a valid request id made now, unique by n.
func ID(n int) string { return IDAt(time.Now(), n) }

func pending(id, session, fp string) *approval.Request {
	now := time.Now().UTC()
	return &approval.Request{ID: id, State: approval.StatePending, Session: session, Agent: "agent", Fingerprint: fp,
		Tool: "Bash", Summary: "make " + fp, CreatedAt: now, ExpiresAt: now.Add(time.Minute)}
}

func decided(id, session string) *approval.Request {
	now := time.Now().UTC()
	return &approval.Request{ID: id, State: approval.StateAllowed, Allowed: true, Outcome: approval.OutcomeAllowOnce,
		Source: approval.SourcePolicy, Session: session, Agent: "agent", Tool: "Read", CreatedAt: now, DecidedAt: now}
}

func human(outcome approval.Outcome) approval.Resolution {
	st := approval.StateAllowed
	if outcome == approval.OutcomeDeny {
		st = approval.StateDenied
	}
	return approval.Resolution{State: st, Outcome: outcome, Source: approval.SourceHuman, DecidedBy: "op",
		DecidedAt: time.Now().UTC(), RequireLive: true, Message: "decided by op"}
}

// entriesOf is an audit page's entries.
func entriesOf(p approval.AuditPage, err error) ([]approval.AuditEntry, error) { return p.Entries, err }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func testCreateGetAndPending(t *testing.T, b Backend) {
	s, _ := b.Open(t)
	ctx := context.Background()
	p, d := pending(ID(1), "s", "fp"), decided(ID(2), "s")
	p.Cwd, p.AgentReason, p.Routes = "/srv", "deploy", []approval.Target{{Channel: "telegram", Chat: "1"}}
	p.AskReason = "touches the sensitive path /home/u/.ssh/id_rsa (~/.ssh)"
	must(t, s.Create(ctx, p, approval.AuditEntry{Event: approval.EventRequest, RequestID: p.ID, AskReason: p.AskReason}))
	must(t, s.Create(ctx, d, approval.AuditEntry{Event: approval.EventDecision, RequestID: d.ID, Outcome: d.Outcome}))
	got, err := s.Get(ctx, p.ID)
	must(t, err)
	if got.State != approval.StatePending || got.Cwd != "/srv" || got.AgentReason != "deploy" || got.AskReason != p.AskReason || len(got.Routes) != 1 ||
		!got.CreatedAt.Equal(p.CreatedAt) || !got.ExpiresAt.Equal(p.ExpiresAt) {
		t.Fatalf("pending request read back as %+v", got)
	}
	got, err = s.Get(ctx, d.ID)
	must(t, err)
	if got.State != approval.StateAllowed || got.Outcome != approval.OutcomeAllowOnce || !got.Allowed {
		t.Fatalf("decided request read back as %+v", got)
	}
	list, err := s.Pending(ctx)
	must(t, err)
	if len(list) != 1 || list[0].ID != p.ID || list[0].AskReason != p.AskReason {
		t.Fatalf("pending list %+v, want only %s", list, p.ID)
	}
	entries, err := entriesOf(s.Audit(ctx, approval.AuditQuery{RequestID: p.ID}))
	must(t, err)
	if len(entries) != 1 || entries[0].AskReason != p.AskReason {
		t.Fatalf("the request's audit entry %+v lost its ask reason", entries)
	}
	for _, id := range []string{ID(3), "not-an-id", ""} {
		if _, err := s.Get(ctx, id); !errors.Is(err, approval.ErrNotFound) {
			t.Fatalf("Get(%q) = %v, want ErrNotFound", id, err)
		}
	}
	if err := s.Ping(); err != nil {
		t.Fatalf("ping: %v", err)
	}
}

func testCreateRefusesAnExistingID(t *testing.T, b Backend) {
	s, _ := b.Open(t)
	ctx := context.Background()
	// One id per case, made once: ID reads the clock, so two calls can be a millisecond
	// apart and make two ids.
	ids := []string{ID(1), ID(2), ID(3), ID(4), ID(5), ID(6)}
	same := pending(ids[4], "s", "a")
	sameDecided := decided(ids[5], "s")
	tests := []struct {
		name        string
		first, then *approval.Request
	}{
		{"pending then pending", pending(ids[0], "s", "a"), pending(ids[0], "s", "b")},
		{"pending then decided", pending(ids[1], "s", "a"), decided(ids[1], "s")},
		{"decided then pending", decided(ids[2], "s"), pending(ids[2], "s", "a")},
		{"decided then decided", decided(ids[3], "s"), decided(ids[3], "t")},
		// The very same request again, byte for byte, is no retry of the first: refused.
		{"the same pending request twice", same, same},
		{"the same decided request twice", sameDecided, sameDecided},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.first.ID != tc.then.ID {
				t.Fatalf("the case has two ids: %s and %s", tc.first.ID, tc.then.ID)
			}
			must(t, s.Create(ctx, tc.first, approval.AuditEntry{Event: "request", RequestID: tc.first.ID}))
			if err := s.Create(ctx, tc.then, approval.AuditEntry{Event: "request", RequestID: tc.then.ID}); err == nil {
				t.Fatal("a second request with the same id was stored")
			}
			got, err := s.Get(ctx, tc.first.ID)
			must(t, err)
			if got.State != tc.first.State || got.Session != tc.first.Session || got.Fingerprint != tc.first.Fingerprint {
				t.Fatalf("the first request was overwritten: %+v", got)
			}
			entries, err := entriesOf(s.Audit(ctx, approval.AuditQuery{RequestID: tc.first.ID}))
			must(t, err)
			if len(entries) != 1 {
				t.Fatalf("%d audit entries for the id, want the first create's only", len(entries))
			}
		})
	}
	list, err := s.Pending(ctx)
	must(t, err)
	if len(list) != 3 {
		t.Fatalf("%d pending, want the 3 first pending creates", len(list))
	}
}

// testConcurrentCreatesOfOneRequest: many callers create the same request at once (in one
// group commit, or racing ones): exactly one is stored, the others are refused.
func testConcurrentCreatesOfOneRequest(t *testing.T, b Backend) {
	s, _ := b.Open(t)
	ctx := context.Background()
	tests := []struct {
		name string
		req  *approval.Request
	}{
		{"pending", pending(ID(1), "s", "fp")},
		{"decided", decided(ID(2), "s")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			const n = 32
			var wg sync.WaitGroup
			var stored atomic.Int64
			for i := 0; i < n; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if s.Create(ctx, tc.req, approval.AuditEntry{Event: "request", RequestID: tc.req.ID}) == nil {
						stored.Add(1)
					}
				}()
			}
			wg.Wait()
			if got := stored.Load(); got != 1 {
				t.Fatalf("%d of %d identical creates were stored, want one", got, n)
			}
			entries, err := entriesOf(s.Audit(ctx, approval.AuditQuery{RequestID: tc.req.ID}))
			must(t, err)
			if len(entries) != 1 {
				t.Fatalf("%d audit entries, want one", len(entries))
			}
		})
	}
	list, err := s.Pending(ctx)
	must(t, err)
	if len(list) != 1 {
		t.Fatalf("%d pending, want one", len(list))
	}
}

func testResolveIsCompareAndSet(t *testing.T, b Backend) {
	s, _ := b.Open(t)
	ctx := context.Background()
	id := ID(1)
	must(t, s.Create(ctx, pending(id, "s", "fp"), approval.AuditEntry{Event: "request", RequestID: id}))
	const n = 100
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outcome := approval.OutcomeAllowOnce
			if i%2 == 0 {
				outcome = approval.OutcomeDeny
			}
			res := human(outcome)
			res.DecidedBy = fmt.Sprint("op", i)
			r, won, err := s.Resolve(ctx, id, res, ledger.EffectsOf(outcome, approval.SourceHuman, 3, nil))
			if err != nil {
				t.Error(err)
				return
			}
			if r.State == approval.StatePending {
				t.Error("pending after resolve")
			}
			if won {
				mu.Lock()
				wins++
				mu.Unlock()
				if r.DecidedBy != res.DecidedBy {
					t.Errorf("the winner got someone else's decision: %+v", r)
				}
			}
		}()
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d winners", wins)
	}
	entries, err := entriesOf(s.Audit(ctx, approval.AuditQuery{RequestID: id}))
	must(t, err)
	if len(entries) != 2 || entries[0].Event != approval.EventRequest || entries[1].Event != approval.EventDecision {
		t.Fatalf("audit %+v, want the request and one decision", entries)
	}
	sess, err := s.Session(ctx, "agent", "s")
	must(t, err)
	if sess.Denials > 1 {
		t.Fatalf("denials counted %d times", sess.Denials)
	}
	list, err := s.Pending(ctx)
	must(t, err)
	if len(list) != 0 {
		t.Fatalf("still pending: %v", list)
	}
}

func testResolveAfterDeadlineTimesOut(t *testing.T, b Backend) {
	s, _ := b.Open(t)
	ctx := context.Background()
	r := pending(ID(1), "s", "fp")
	r.ExpiresAt = time.Now().Add(-time.Second)
	must(t, s.Create(ctx, r, approval.AuditEntry{}))
	res := human(approval.OutcomeAllowSession)
	res.TimeoutMessage = "too late"
	got, won, err := s.Resolve(ctx, r.ID, res, ledger.Effects{Grant: true})
	if err != nil || won {
		t.Fatalf("won=%v err=%v", won, err)
	}
	if got.Outcome != approval.OutcomeTimeout || got.Allowed || got.State != approval.StateDenied ||
		got.Message != "too late" || !got.DecidedAt.Equal(res.DecidedAt) {
		t.Fatalf("late allow became %+v", got)
	}
	if ok, _ := s.HasGrant(ctx, "agent", "s", "fp"); ok {
		t.Fatal("a late allow_session stored a grant")
	}
	// The timeout is final: a second decision loses.
	again, won, err := s.Resolve(ctx, r.ID, human(approval.OutcomeAllowOnce), ledger.Effects{})
	if err != nil || won || again.Outcome != approval.OutcomeTimeout {
		t.Fatalf("after the timeout: won=%v err=%v %+v", won, err, again)
	}
}

func testResolveUnknownIsNotFound(t *testing.T, b Backend) {
	s, _ := b.Open(t)
	ctx := context.Background()
	if _, _, err := s.Resolve(ctx, ID(9), human(approval.OutcomeDeny), ledger.Effects{}); !errors.Is(err, approval.ErrNotFound) {
		t.Fatalf("resolve unknown: %v", err)
	}
	if _, err := s.AddCard(ctx, ID(9), approval.CardRef{Channel: "x", Chat: "1", Message: "1"}); !errors.Is(err, approval.ErrNotFound) {
		t.Fatalf("card on unknown: %v", err)
	}
}

func testGrantsAndDenialsPerSession(t *testing.T, b Backend) {
	s, _ := b.Open(t)
	ctx := context.Background()
	tests := []struct {
		name            string
		outcome         approval.Outcome
		grant, denial   bool
		otherSessionToo bool
	}{
		{"allow once remembers nothing", approval.OutcomeAllowOnce, false, false, false},
		{"allow session grants", approval.OutcomeAllowSession, true, false, false},
		{"deny ledgers", approval.OutcomeDeny, false, true, false},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id, fp := ID(i+1), fmt.Sprint("fp", i)
			must(t, s.Create(ctx, pending(id, "s1", fp), approval.AuditEntry{}))
			_, won, err := s.Resolve(ctx, id, human(tc.outcome), ledger.EffectsOf(tc.outcome, approval.SourceHuman, 0, nil))
			if err != nil || !won {
				t.Fatalf("won=%v err=%v", won, err)
			}
			l, err := s.Lookup(ctx, "agent", "s1", fp)
			must(t, err)
			g, _ := s.HasGrant(ctx, "agent", "s1", fp)
			d, _ := s.IsDenied(ctx, "agent", "s1", fp)
			if l.Granted != tc.grant || g != tc.grant || l.Denied != tc.denial || d != tc.denial {
				t.Fatalf("lookup %+v grant=%v denied=%v", l, g, d)
			}
			other, err := s.Lookup(ctx, "agent", "s2", fp)
			must(t, err)
			if other.Granted || other.Denied {
				t.Fatalf("another session inherited it: %+v", other)
			}
			// A session name that extends another's is not the same session.
			ext, _ := s.Lookup(ctx, "agent", "s1"+fp, "")
			if ext.Granted || ext.Denied {
				t.Fatalf("a longer session name matched: %+v", ext)
			}
		})
	}
}

func testDenialsPauseAtThreshold(t *testing.T, b Backend) {
	s, _ := b.Open(t)
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		id, fp := ID(i+1), fmt.Sprintf("fp%d", i)
		must(t, s.Create(ctx, pending(id, "s", fp), approval.AuditEntry{}))
		if _, _, err := s.Resolve(ctx, id, human(approval.OutcomeDeny), ledger.EffectsOf(approval.OutcomeDeny, approval.SourceHuman, 3, nil)); err != nil {
			t.Fatal(err)
		}
		l, err := s.Lookup(ctx, "agent", "s", fp)
		must(t, err)
		if !l.Denied || l.Session.Denials != i+1 {
			t.Fatalf("denial %d not ledgered: %+v", i, l)
		}
		if l.Session.Paused != (i == 2) {
			t.Fatalf("after %d denials paused=%v", i+1, l.Session.Paused)
		}
	}
	recs, err := s.Unpause(ctx, "agent", "s", approval.AuditEntry{Event: approval.EventUnpause, Session: "s"})
	if err != nil || len(recs.Agents) != 1 || recs.Agents[0].Paused || recs.Agents[0].Denials != 0 {
		t.Fatalf("unpause: %+v %v", recs, err)
	}
	// Settings writes never reset the counters, nor the ledger.
	tier := "ask"
	_, err = s.UpdateSession(ctx, "agent", "s", ledger.Settings{Tier: &tier}, approval.AuditEntry{Event: approval.EventSession, Session: "s"})
	must(t, err)
	l, _ := s.Lookup(ctx, "agent", "s", "fp0")
	if !l.Denied || l.Session.Tier != "ask" || l.Session.Paused {
		t.Fatalf("lookup after settings: %+v", l)
	}
	entries, _ := entriesOf(s.Audit(ctx, approval.AuditQuery{Session: "s"}))
	var events []string
	for _, e := range entries {
		events = append(events, e.Event)
	}
	if fmt.Sprint(events) != "[decision decision decision unpause session]" {
		t.Fatalf("audit events %v", events)
	}
}

func testTimeoutAndCancelAreNotLedgered(t *testing.T, b Backend) {
	s, _ := b.Open(t)
	ctx := context.Background()
	for i, o := range []approval.Outcome{approval.OutcomeTimeout, approval.OutcomeCancelled} {
		id, fp := ID(i+1), "fp-"+string(o)
		must(t, s.Create(ctx, pending(id, "s", fp), approval.AuditEntry{}))
		res := approval.Resolution{State: approval.StateDenied, Outcome: o, Source: approval.SourceTimeout, DecidedBy: "approvebot", DecidedAt: time.Now()}
		if _, won, err := s.Resolve(ctx, id, res, ledger.EffectsOf(o, res.Source, 1, nil)); err != nil || !won {
			t.Fatalf("%s: won=%v err=%v", o, won, err)
		}
		l, _ := s.Lookup(ctx, "agent", "s", fp)
		if l.Denied || l.Session.Denials != 0 || l.Session.Paused {
			t.Fatalf("%s was ledgered: %+v", o, l)
		}
	}
}

func testGroupCommitIsolatesFailures(t *testing.T, b Backend) {
	s, _ := b.Open(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, 100)
	dup := ID(100000)
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := ID(i + 1)
			if i%10 == 0 {
				id = dup // all but one of these fail: the id exists
			}
			errs[i] = s.Create(ctx, pending(id, "s", fmt.Sprint("f", i)), approval.AuditEntry{Event: "request", RequestID: id})
		}()
	}
	wg.Wait()
	failed := 0
	for _, err := range errs {
		if err != nil {
			failed++
		}
	}
	if failed != 9 {
		t.Fatalf("%d creates failed, want 9", failed)
	}
	list, _ := s.Pending(ctx)
	if len(list) != 91 {
		t.Fatalf("%d pending, want 91", len(list))
	}
	entries, _ := entriesOf(s.Audit(ctx, approval.AuditQuery{Limit: 1000}))
	if len(entries) != 91 {
		t.Fatalf("%d audit entries, want 91 (a failed write leaves nothing)", len(entries))
	}
}

func testAuditOrderLimitAndFilters(t *testing.T, b Backend) {
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s, _ := b.Open(t)
	ctx := context.Background()
	for i := 0; i < 10; i++ {
		must(t, s.AppendAudit(ctx, approval.AuditEntry{Time: clock.Add(time.Duration(i) * time.Minute), Event: "x",
			Session: fmt.Sprint(i % 2), RequestID: fmt.Sprint("r", i%3), Reason: fmt.Sprint(i)}))
	}
	tests := []struct {
		name string
		q    approval.AuditQuery
		want []string // reasons, oldest first
	}{
		{"limit keeps the newest, oldest first", approval.AuditQuery{Limit: 3}, []string{"7", "8", "9"}},
		{"since", approval.AuditQuery{Since: clock.Add(5 * time.Minute)}, []string{"5", "6", "7", "8", "9"}},
		{"session", approval.AuditQuery{Session: "1"}, []string{"1", "3", "5", "7", "9"}},
		{"request", approval.AuditQuery{RequestID: "r0"}, []string{"0", "3", "6", "9"}},
		{"request and session", approval.AuditQuery{RequestID: "r0", Session: "0"}, []string{"0", "6"}},
		{"session since with limit", approval.AuditQuery{Session: "0", Since: clock.Add(3 * time.Minute), Limit: 2}, []string{"6", "8"}},
		{"a name no entry has", approval.AuditQuery{Session: "10"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := entriesOf(s.Audit(ctx, tc.q))
			must(t, err)
			var reasons []string
			for _, e := range got {
				reasons = append(reasons, e.Reason)
			}
			if fmt.Sprint(reasons) != fmt.Sprint(tc.want) {
				t.Fatalf("got %v, want %v", reasons, tc.want)
			}
			for i := 1; i < len(got); i++ {
				if got[i].Seq <= got[i-1].Seq || got[i].Time.Before(got[i-1].Time) {
					t.Fatalf("not in order: %+v", got)
				}
			}
		})
	}
}

func testAllowlistPersistListAndRevoke(t *testing.T, b Backend) {
	s, _ := b.Open(t)
	ctx := context.Background()
	id := ID(1)
	must(t, s.Create(ctx, pending(id, "s", "fp"), approval.AuditEntry{}))
	res := human(approval.OutcomeAllowAlways)
	if _, won, err := s.Resolve(ctx, id, res, ledger.EffectsOf(approval.OutcomeAllowAlways, approval.SourceHuman, 3, []string{"/usr/bin/make", "/usr/bin/go"})); !won || err != nil {
		t.Fatalf("won=%v err=%v", won, err)
	}
	if e := s.AllowlistEntries(); len(e) != 2 {
		t.Fatalf("entries %+v", e)
	}
	items, err := s.ListAllowlist(ctx)
	must(t, err)
	sort.Slice(items, func(i, j int) bool { return items[i].Pattern < items[j].Pattern })
	if len(items) != 2 || items[1].Pattern != "/usr/bin/make" || items[1].AddedBy != "op" || items[1].RequestID != id ||
		!items[1].AddedAt.Equal(res.DecidedAt) {
		t.Fatalf("items %+v", items)
	}
	if ok, _ := s.HasGrant(ctx, "agent", "s", "fp"); !ok {
		t.Fatal("allow always did not grant the session too")
	}
	revoked, err := s.RevokeAllowlist(ctx, approval.AllowlistSelector{Pattern: "/usr/bin/make"}, approval.AuditEntry{Event: approval.EventAllowlist})
	if len(revoked) != 1 || revoked[0].Agent != "agent" || err != nil {
		t.Fatalf("revoke %+v %v", revoked, err)
	}
	if e := s.AllowlistEntries(); len(e) != 1 || e[0].Pattern != "/usr/bin/go" {
		t.Fatalf("revoked entry still served: %+v", e)
	}
	if again, err := s.RevokeAllowlist(ctx, approval.AllowlistSelector{Pattern: "/usr/bin/make"}, approval.AuditEntry{Event: approval.EventAllowlist}); len(again) != 0 || err != nil {
		t.Fatalf("second revoke %+v %v", again, err)
	}
	entries, _ := entriesOf(s.Audit(ctx, approval.AuditQuery{}))
	revokes := 0
	for _, e := range entries {
		if e.Event == approval.EventAllowlist {
			revokes++
		}
	}
	if revokes != 1 {
		t.Fatalf("%d revocations audited, want 1", revokes)
	}
}

func testCardsRecordedAndReturned(t *testing.T, b Backend) {
	s, _ := b.Open(t)
	ctx := context.Background()
	id := ID(1)
	must(t, s.Create(ctx, pending(id, "s", "fp"), approval.AuditEntry{}))
	ref := approval.CardRef{Channel: "telegram", Chat: "1", Message: "42"}
	r, err := s.AddCard(ctx, id, ref)
	if err != nil || len(r.Cards) != 1 || r.State != approval.StatePending {
		t.Fatalf("%+v %v", r, err)
	}
	r, _ = s.AddCard(ctx, id, ref)
	if len(r.Cards) != 1 {
		t.Fatal("the same card was recorded twice")
	}
	list, _ := s.Pending(ctx)
	if len(list) != 1 || len(list[0].Cards) != 1 {
		t.Fatalf("pending list lost the card: %+v", list)
	}
	got, _, _ := s.Resolve(ctx, id, human(approval.OutcomeDeny), ledger.Effects{})
	if len(got.Cards) != 1 || got.Cards[0] != ref {
		t.Fatalf("resolved request lost its cards: %+v", got.Cards)
	}
	// A card posted after the decision is recorded too (so that it is edited).
	late := approval.CardRef{Channel: "slack", Chat: "C1", Message: "1.2"}
	r, err = s.AddCard(ctx, id, late)
	if err != nil || len(r.Cards) != 2 || r.State != approval.StateDenied {
		t.Fatalf("late card: %+v %v", r, err)
	}
}

func testSessionSettingsWithAudit(t *testing.T, b Backend) {
	s, _ := b.Open(t)
	ctx := context.Background()
	tier, yes := "read_only", true
	e := approval.AuditEntry{Event: approval.EventSession, Session: "s", Actor: "op", Reason: "tier"}
	recs, err := s.UpdateSession(ctx, "agent", "s", ledger.Settings{Tier: &tier, Unattended: &yes}, e)
	must(t, err)
	if len(recs.Agents) != 1 || recs.Agents[0].Tier != "read_only" || !recs.Agents[0].Unattended {
		t.Fatalf("records %+v", recs)
	}
	must(t, s.LinkParent(ctx, "agent", "s", "p"))
	must(t, s.LinkParent(ctx, "agent", "s", "q")) // the first link stays
	got, err := s.Session(ctx, "agent", "s")
	must(t, err)
	if got.Name != "s" || got.Tier != "read_only" || !got.Unattended || got.Parent != "p" {
		t.Fatalf("session %+v", got)
	}
	// Another agent's session of the same name is another session.
	other, err := s.Session(ctx, "agent2", "s")
	must(t, err)
	if other.Tier != "" || other.Unattended || other.Parent != "" {
		t.Fatalf("another agent's session %+v", other)
	}
	// A change for every agent applies to each, over their own settings.
	ask := "ask"
	recs, err = s.UpdateSession(ctx, "", "s", ledger.Settings{Tier: &ask}, approval.AuditEntry{Event: approval.EventSession, Session: "s"})
	must(t, err)
	if recs.Shared.Tier != "ask" || len(recs.Agents) != 1 || recs.Agents[0].Tier != "" {
		t.Fatalf("records after a change for every agent: %+v", recs)
	}
	for _, agent := range []string{"agent", "agent2"} {
		got, _ := s.Session(ctx, agent, "s")
		if got.Tier != "ask" {
			t.Fatalf("%s's session after a change for every agent: %+v", agent, got)
		}
	}
	unknown, err := s.Session(ctx, "agent", "nobody")
	must(t, err)
	if unknown.Name != "nobody" || unknown.Tier != "" || unknown.Paused {
		t.Fatalf("unknown session %+v", unknown)
	}
	entries, _ := entriesOf(s.Audit(ctx, approval.AuditQuery{Session: "s"}))
	if len(entries) != 2 || entries[0].Actor != "op" {
		t.Fatalf("audit %+v", entries)
	}
}

func testPausedForEveryAgentAndUnpaused(t *testing.T, b Backend) {
	s, _ := b.Open(t)
	ctx := context.Background()
	// A pause reached by one agent's denials is that agent's.
	for i := 0; i < 2; i++ {
		id := ID(i + 1)
		must(t, s.Create(ctx, pending(id, "s", fmt.Sprint("fp", i)), approval.AuditEntry{}))
		if _, _, err := s.Resolve(ctx, id, human(approval.OutcomeDeny), ledger.EffectsOf(approval.OutcomeDeny, approval.SourceHuman, 2, nil)); err != nil {
			t.Fatal(err)
		}
	}
	if l, _ := s.Lookup(ctx, "agent", "s", "x"); !l.Session.Paused {
		t.Fatalf("not paused after two denials: %+v", l)
	}
	if l, _ := s.Lookup(ctx, "agent2", "s", "fp0"); l.Session.Paused || l.Denied {
		t.Fatalf("another agent's session inherited the pause or the denial: %+v", l)
	}
	recs, err := s.Unpause(ctx, "", "s", approval.AuditEntry{Event: approval.EventUnpause, Session: "s"})
	must(t, err)
	if len(recs.Agents) != 1 || recs.Agents[0].Paused || recs.Agents[0].Denials != 0 {
		t.Fatalf("unpause for every agent: %+v", recs)
	}
	l, _ := s.Lookup(ctx, "agent", "s", "fp0")
	if l.Session.Paused || !l.Denied {
		t.Fatalf("after the unpause: %+v (the denial stays ledgered)", l)
	}
}

func testPruneKeepsPendingAndTheNewest(t *testing.T, b Backend) {
	s, _ := b.Open(t)
	ctx := context.Background()
	old := time.Now().Add(-48 * time.Hour).UTC()
	// Oldest first: a store may keep its trail's times from going back.
	oldDecided := pending(IDAt(old, 1), "s", "f")
	oldDecided.CreatedAt = old
	must(t, s.Create(ctx, oldDecided, approval.AuditEntry{Time: old}))
	if _, won, err := s.Resolve(ctx, oldDecided.ID, approval.Resolution{State: approval.StateDenied, Outcome: approval.OutcomeDeny,
		Source: approval.SourceHuman, DecidedBy: "op", DecidedAt: old}, ledger.Effects{}); err != nil || !won {
		t.Fatalf("won=%v err=%v", won, err)
	}
	oldPending := pending(IDAt(old, 2), "s", "g")
	oldPending.CreatedAt = old
	oldPending.ExpiresAt = time.Now().Add(time.Hour)
	must(t, s.Create(ctx, oldPending, approval.AuditEntry{Time: old}))
	for i := 0; i < 30; i++ {
		must(t, s.AppendAudit(ctx, approval.AuditEntry{Time: old.Add(time.Duration(i) * time.Second), Event: "old", Session: "s"}))
	}
	for i := 0; i < 20; i++ {
		must(t, s.AppendAudit(ctx, approval.AuditEntry{Event: "new", Session: "s"}))
	}
	newDecided := decided(ID(3), "s")
	must(t, s.Create(ctx, newDecided, approval.AuditEntry{Event: "new", Session: "s"}))

	a, r, err := s.Prune(ctx, time.Now().Add(-24*time.Hour), 15)
	must(t, err)
	if r != 1 {
		t.Fatalf("pruned %d requests, want the old decided one", r)
	}
	if _, err := s.Get(ctx, oldDecided.ID); !errors.Is(err, approval.ErrNotFound) {
		t.Fatalf("the old decided request is still there: %v", err)
	}
	for _, id := range []string{oldPending.ID, newDecided.ID} {
		if _, err := s.Get(ctx, id); err != nil {
			t.Fatalf("request %s was pruned: %v", id, err)
		}
	}
	entries, _ := entriesOf(s.Audit(ctx, approval.AuditQuery{Limit: 1000}))
	if len(entries) != 15 || a != 39 {
		t.Fatalf("kept %d entries (pruned %d), want the newest 15 of 54", len(entries), a)
	}
	for _, e := range entries {
		if e.Event != "new" {
			t.Fatalf("an old entry survived: %+v", e)
		}
	}
	// Filtered queries see the same trail.
	bySession, _ := entriesOf(s.Audit(ctx, approval.AuditQuery{Session: "s", Limit: 1000}))
	if len(bySession) != 15 {
		t.Fatalf("session query after prune: %d entries, want 15", len(bySession))
	}
}

func testReopenKeepsEverythingAcknowledged(t *testing.T, b Backend) {
	s, reopen := b.Open(t)
	ctx := context.Background()
	p := pending(ID(1), "s", "fp")
	must(t, s.Create(ctx, p, approval.AuditEntry{Event: approval.EventRequest, RequestID: p.ID}))
	ref := approval.CardRef{Channel: "telegram", Chat: "1", Message: "7"}
	_, err := s.AddCard(ctx, p.ID, ref)
	must(t, err)
	q := pending(ID(2), "s", "fq")
	must(t, s.Create(ctx, q, approval.AuditEntry{Event: approval.EventRequest, RequestID: q.ID}))
	_, won, err := s.Resolve(ctx, q.ID, human(approval.OutcomeAllowSession), ledger.Effects{Grant: true})
	if err != nil || !won {
		t.Fatalf("won=%v err=%v", won, err)
	}
	must(t, s.Close())

	s2 := reopen(t)
	got, err := s2.Get(ctx, p.ID)
	must(t, err)
	if got.State != approval.StatePending || len(got.Cards) != 1 || got.Cards[0] != ref {
		t.Fatalf("pending request after reopen: %+v", got)
	}
	got, err = s2.Get(ctx, q.ID)
	must(t, err)
	if got.Outcome != approval.OutcomeAllowSession || got.DecidedBy != "op" {
		t.Fatalf("decided request after reopen: %+v", got)
	}
	if l, _ := s2.Lookup(ctx, "agent", "s", "fq"); !l.Granted {
		t.Fatal("grant lost on reopen")
	}
	list, _ := s2.Pending(ctx)
	if len(list) != 1 {
		t.Fatalf("pending after reopen: %+v", list)
	}
	entries, _ := entriesOf(s2.Audit(ctx, approval.AuditQuery{}))
	if len(entries) != 3 {
		t.Fatalf("audit after reopen: %d entries, want 3", len(entries))
	}
}

func testWritesAfterCloseFail(t *testing.T, b Backend) {
	s, _ := b.Open(t)
	must(t, s.Close())
	ctx := context.Background()
	if err := s.AppendAudit(ctx, approval.AuditEntry{}); !errors.Is(err, b.ErrClosed) {
		t.Fatalf("append after close: %v", err)
	}
	if err := s.Create(ctx, pending(ID(1), "s", "f"), approval.AuditEntry{}); !errors.Is(err, b.ErrClosed) {
		t.Fatalf("create after close: %v", err)
	}
	if s.Ping() == nil {
		t.Fatal("a closed store answers ping")
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
}

func testDamagedRequestIsDeniedNeverAllowed(t *testing.T, b Backend) {
	s, _ := b.Open(t)
	ctx := context.Background()
	tests := []struct {
		name   string
		decide bool // the first touch is a decision rather than a read
	}{
		{"read first", false},
		{"decided first", true},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id := ID(i + 1)
			must(t, s.Create(ctx, pending(id, "s", fmt.Sprint("fp", i)), approval.AuditEntry{Event: approval.EventRequest, RequestID: id}))
			b.Damage(t, s, id)
			if tc.decide {
				r, won, err := s.Resolve(ctx, id, human(approval.OutcomeAllowOnce), ledger.Effects{})
				if err != nil || won || r.Allowed || r.Source != approval.SourceStore {
					t.Fatalf("a decision on a damaged record: won=%v err=%v %+v", won, err, r)
				}
			}
			got, err := s.Get(ctx, id)
			must(t, err)
			if got.Allowed || got.State != approval.StateDenied || got.Source != approval.SourceStore || got.Session != "s" {
				t.Fatalf("damaged request reads as %+v", got)
			}
			deadline := time.Now().Add(10 * time.Second)
			for {
				list, err := s.Pending(ctx)
				must(t, err)
				if len(list) == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("a damaged request is still listed pending: %+v", list)
				}
				time.Sleep(20 * time.Millisecond)
			}
			r, won, err := s.Resolve(ctx, id, human(approval.OutcomeAllowOnce), ledger.Effects{})
			if err != nil || won || r.Allowed {
				t.Fatalf("a decision after the quarantine: won=%v err=%v %+v", won, err, r)
			}
		})
	}
}

func testAuditPagesWalkEveryEntryOnce(t *testing.T, b Backend) {
	s, _ := b.Open(t)
	ctx := context.Background()
	clock := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	const n = 57
	for i := 0; i < n; i++ {
		must(t, s.AppendAudit(ctx, approval.AuditEntry{Time: clock.Add(time.Duration(i) * time.Second), Event: "x", Reason: fmt.Sprint(i)}))
	}
	for _, limit := range []int{1, 10, 56, 57, 100} {
		t.Run(fmt.Sprint("limit ", limit), func(t *testing.T) {
			var seen []string
			var before uint64
			for pages := 0; ; pages++ {
				if pages > n+1 {
					t.Fatal("the cursor does not end")
				}
				page, err := s.Audit(ctx, approval.AuditQuery{Limit: limit, Before: before})
				must(t, err)
				if len(page.Entries) > limit {
					t.Fatalf("a page of %d entries for limit %d", len(page.Entries), limit)
				}
				// Pages go backwards; each page is oldest first.
				var reasons []string
				for _, e := range page.Entries {
					reasons = append(reasons, e.Reason)
				}
				seen = append(reasons, seen...)
				if page.NextBefore == 0 {
					break
				}
				before = page.NextBefore
			}
			if len(seen) != n {
				t.Fatalf("walked %d entries, want %d: %v", len(seen), n, seen)
			}
			for i, r := range seen {
				if r != fmt.Sprint(i) {
					t.Fatalf("entry %d is %s: %v", i, r, seen)
				}
			}
		})
	}
}

func testAuditFiltersAndCounts(t *testing.T, b Backend) {
	s, _ := b.Open(t)
	ctx := context.Background()
	h0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	add := func(at time.Time, agent, tool string, o approval.Outcome, src approval.Source) {
		must(t, s.AppendAudit(ctx, approval.AuditEntry{Time: at, Event: approval.EventDecision, Agent: agent, Tool: tool,
			Outcome: o, Source: src, Session: "s", Reason: fmt.Sprint(agent, tool, o)}))
	}
	add(h0.Add(1*time.Minute), "a", "Bash", approval.OutcomeAllowOnce, approval.SourcePolicy)
	add(h0.Add(2*time.Minute), "b", "Bash", approval.OutcomeDeny, approval.SourceHuman)
	add(h0.Add(70*time.Minute), "a", "Read", approval.OutcomeAllowOnce, approval.SourcePolicy)
	add(h0.Add(71*time.Minute), "a", "Bash", approval.OutcomeTimeout, approval.SourceTimeout)
	must(t, s.AppendAudit(ctx, approval.AuditEntry{Time: h0.Add(72 * time.Minute), Event: approval.EventUnauthorized, Agent: "a"}))
	add(h0.Add(190*time.Minute), "b", "Read", approval.OutcomeAllowOnce, approval.SourcePolicy)
	tests := []struct {
		name string
		q    approval.AuditQuery
		want int
	}{
		{"agent", approval.AuditQuery{Agent: "a"}, 4},
		{"tool", approval.AuditQuery{Tool: "Bash"}, 3},
		{"outcome", approval.AuditQuery{Outcome: approval.OutcomeAllowOnce}, 3},
		{"source", approval.AuditQuery{Source: approval.SourceHuman}, 1},
		{"agent and tool", approval.AuditQuery{Agent: "a", Tool: "Bash"}, 2},
		{"since and until", approval.AuditQuery{Since: h0.Add(60 * time.Minute), Until: h0.Add(72 * time.Minute)}, 2},
		{"until only", approval.AuditQuery{Until: h0.Add(2 * time.Minute)}, 1},
		{"a source no entry has", approval.AuditQuery{Source: "nobody"}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := entriesOf(s.Audit(ctx, tc.q))
			must(t, err)
			if len(got) != tc.want {
				t.Fatalf("%d entries, want %d: %+v", len(got), tc.want, got)
			}
		})
	}
	counts, err := s.AuditCounts(ctx, time.Time{}, time.Time{})
	must(t, err)
	want := "[10:map[allow_once:1 deny:1] 11:map[allow_once:1 timeout:1] 13:map[allow_once:1]]"
	var got []string
	for _, c := range counts {
		got = append(got, fmt.Sprintf("%d:%v", c.Hour.Hour(), c.Outcomes))
	}
	if g := "[" + strings.Join(got, " ") + "]"; g != want {
		t.Fatalf("counts %s, want %s", g, want)
	}
	inside, err := s.AuditCounts(ctx, h0.Add(65*time.Minute), h0.Add(66*time.Minute))
	must(t, err)
	if len(inside) != 1 || inside[0].Hour.Hour() != 11 || inside[0].Outcomes[approval.OutcomeTimeout] != 1 {
		t.Fatalf("counts of an hour a bound falls inside: %+v", inside)
	}
}

func testLedgerListings(t *testing.T, b Backend) {
	s, _ := b.Open(t)
	ctx := context.Background()
	decide := func(n int, session, fp string, o approval.Outcome) string {
		id := ID(n)
		must(t, s.Create(ctx, pending(id, session, fp), approval.AuditEntry{Event: approval.EventRequest, RequestID: id}))
		res := human(o)
		res.Reason = "because " + fp
		res.DecidedAt = time.Now().UTC().Add(time.Duration(n) * time.Millisecond)
		if _, won, err := s.Resolve(ctx, id, res, ledger.EffectsOf(o, approval.SourceHuman, 2, nil)); err != nil || !won {
			t.Fatalf("won=%v err=%v", won, err)
		}
		return id
	}
	g1 := decide(1, "s1", "fa", approval.OutcomeAllowSession)
	g2 := decide(2, "s2", "fb", approval.OutcomeAllowSession)
	d1 := decide(3, "s3", "fc", approval.OutcomeDeny)
	decide(4, "s3", "fd", approval.OutcomeDeny) // the second denial pauses s3
	grants, total, err := s.Grants(ctx, 1)
	must(t, err)
	if total != 2 || len(grants) != 1 || grants[0].RequestID != g2 || grants[0].Session != "s2" || grants[0].Agent != "agent" ||
		grants[0].Fingerprint != "fb" || grants[0].DecidedBy != "op" || grants[0].Tool != "Bash" {
		t.Fatalf("grants %+v (of %d), want the newest, %s", grants, total, g2)
	}
	all, _, err := s.Grants(ctx, 0)
	must(t, err)
	if len(all) != 2 || all[1].RequestID != g1 {
		t.Fatalf("all grants %+v", all)
	}
	denials, total, err := s.Denials(ctx, 0)
	must(t, err)
	if total != 2 || denials[1].RequestID != d1 || denials[1].Reason != "because fc" {
		t.Fatalf("denials %+v", denials)
	}
	paused, total, err := s.PausedSessions(ctx, 0)
	must(t, err)
	if total != 1 || paused[0].Name != "s3" || paused[0].Agent != "agent" || !paused[0].Paused {
		t.Fatalf("paused %+v", paused)
	}
}
