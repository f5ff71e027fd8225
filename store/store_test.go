package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/ledger"
)

func open(t *testing.T) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "t.db"), Options{LockTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Check(); err != nil {
			t.Errorf("consistency check: %v", err)
		}
		if err := s.CheckIndexes(); err != nil {
			t.Errorf("audit indexes: %v", err)
		}
		s.Close()
	})
	return s
}

func pending(id, session, fp string) *approval.Request {
	now := time.Now().UTC()
	return &approval.Request{ID: id, State: approval.StatePending, Agent: "a", Session: session, Fingerprint: fp, CreatedAt: now, ExpiresAt: now.Add(time.Minute)}
}

func human(outcome approval.Outcome) approval.Resolution {
	st := approval.StateAllowed
	if outcome == approval.OutcomeDeny {
		st = approval.StateDenied
	}
	return approval.Resolution{State: st, Outcome: outcome, Source: approval.SourceHuman, DecidedBy: "op", DecidedAt: time.Now().UTC(), RequireLive: true}
}

func TestOpenLockedGivesClearError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "locked.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = Open(path, Options{LockTimeout: 50 * time.Millisecond})
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "database "+path+" is locked by another process") {
		t.Fatalf("err = %v", err)
	}
}

func TestSchemaVersionChecked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Put(keySchema, []byte{0, 0, 0, 99}) })
	db.Close()
	if _, err := Open(path, Options{}); err == nil || !strings.Contains(err.Error(), "schema version 99") {
		t.Fatalf("err = %v", err)
	}
}

func TestResolveIsCompareAndSet(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	if err := s.Create(ctx, pending("r1", "s", "fp"), approval.AuditEntry{Event: "request", RequestID: "r1"}); err != nil {
		t.Fatal(err)
	}
	const n = 200
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
			r, won, err := s.Resolve(ctx, "r1", human(outcome), ledger.EffectsOf(outcome, approval.SourceHuman, 3, nil))
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
			}
		}()
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d winners", wins)
	}
	entries := auditEntries(t, s, approval.AuditQuery{RequestID: "r1"})
	if len(entries) != 2 {
		t.Fatalf("%d audit entries, want request + one decision", len(entries))
	}
	sess, _ := s.Session(ctx, "a", "s")
	if sess.Denials > 1 {
		t.Fatalf("denials counted %d times", sess.Denials)
	}
	list, _ := s.Pending(ctx)
	if len(list) != 0 {
		t.Fatalf("still pending: %v", list)
	}
}

func TestResolveAfterDeadlineTimesOut(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	r := pending("r2", "s", "fp")
	r.ExpiresAt = time.Now().Add(-time.Second)
	s.Create(ctx, r, approval.AuditEntry{})
	got, won, err := s.Resolve(ctx, "r2", human(approval.OutcomeAllowOnce), ledger.Effects{Grant: true})
	if err != nil || won {
		t.Fatalf("won=%v err=%v", won, err)
	}
	if got.Outcome != approval.OutcomeTimeout || got.Allowed {
		t.Fatalf("late allow became %s allowed=%v", got.Outcome, got.Allowed)
	}
	if ok, _ := s.HasGrant(ctx, "a", "s", "fp"); ok {
		t.Fatal("a late allow_session stored a grant")
	}
}

func TestDenialsPauseAtThreshold(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		id := fmt.Sprintf("d%d", i)
		fp := fmt.Sprintf("fp%d", i)
		s.Create(ctx, pending(id, "s", fp), approval.AuditEntry{})
		s.Resolve(ctx, id, human(approval.OutcomeDeny), ledger.EffectsOf(approval.OutcomeDeny, approval.SourceHuman, 3, nil))
		l, _ := s.Lookup(ctx, "a", "s", fp)
		if !l.Denied {
			t.Fatalf("denial %d not ledgered", i)
		}
		if l.Session.Paused != (i == 2) {
			t.Fatalf("after %d denials paused=%v", i+1, l.Session.Paused)
		}
	}
	recs, err := s.Unpause(ctx, "a", "s", approval.AuditEntry{Event: approval.EventUnpause})
	if err != nil || len(recs.Agents) != 1 || recs.Agents[0].Paused || recs.Agents[0].Denials != 0 {
		t.Fatalf("unpause: %+v %v", recs, err)
	}
	// Settings writes never reset the counters.
	tier := "ask"
	s.UpdateSession(ctx, "a", "s", ledger.Settings{Tier: &tier}, approval.AuditEntry{Event: approval.EventSession})
	l, _ := s.Lookup(ctx, "a", "s", "fp0")
	if !l.Denied || l.Session.Tier != "ask" {
		t.Fatalf("lookup after settings: %+v", l)
	}
}

func TestTimeoutAndCancelAreNotLedgered(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	for _, o := range []approval.Outcome{approval.OutcomeTimeout, approval.OutcomeCancelled} {
		id := string(o)
		s.Create(ctx, pending(id, "s", "fp-"+id), approval.AuditEntry{})
		res := approval.Resolution{State: approval.StateDenied, Outcome: o, Source: approval.SourceTimeout, DecidedAt: time.Now()}
		s.Resolve(ctx, id, res, ledger.EffectsOf(o, res.Source, 1, nil))
		l, _ := s.Lookup(ctx, "a", "s", "fp-"+id)
		if l.Denied || l.Session.Denials != 0 || l.Session.Paused {
			t.Fatalf("%s was ledgered: %+v", o, l)
		}
	}
}

func TestGroupCommitIsolatesFailures(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, 100)
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("g%d", i)
			if i%10 == 0 {
				id = "dup" // all but one of these fail: the id exists
			}
			errs[i] = s.Create(ctx, pending(id, "s", id), approval.AuditEntry{Event: "request", RequestID: id})
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
	entries := auditEntries(t, s, approval.AuditQuery{Limit: 1000})
	if len(entries) != 91 {
		t.Fatalf("%d audit entries, want 91 (a failed write leaves nothing)", len(entries))
	}
}

func TestAuditOrderLimitAndSince(t *testing.T) {
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := open(t)
	ctx := context.Background()
	for i := 0; i < 10; i++ {
		s.AppendAudit(ctx, approval.AuditEntry{Time: clock.Add(time.Duration(i) * time.Minute), Event: "x", Session: fmt.Sprint(i % 2), Reason: fmt.Sprint(i)})
	}
	all := auditEntries(t, s, approval.AuditQuery{Limit: 3})
	if len(all) != 3 || all[0].Reason != "7" || all[2].Reason != "9" {
		t.Fatalf("limit keeps the newest, oldest first: %+v", all)
	}
	since := auditEntries(t, s, approval.AuditQuery{Since: clock.Add(5 * time.Minute)})
	if len(since) != 5 || since[0].Reason != "5" {
		t.Fatalf("since: %+v", since)
	}
	odd := auditEntries(t, s, approval.AuditQuery{Session: "1"})
	if len(odd) != 5 {
		t.Fatalf("session filter: %d", len(odd))
	}
}

func TestAllowlistPersistAndRevoke(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	s.Create(ctx, pending("a1", "s", "fp"), approval.AuditEntry{})
	res := human(approval.OutcomeAllowAlways)
	if _, won, err := s.Resolve(ctx, "a1", res, ledger.EffectsOf(approval.OutcomeAllowAlways, approval.SourceHuman, 3, []string{"/usr/bin/make"})); !won || err != nil {
		t.Fatalf("won=%v err=%v", won, err)
	}
	if e := s.AllowlistEntries(); len(e) != 1 || e[0].Pattern != "/usr/bin/make" {
		t.Fatalf("entries %+v", e)
	}
	revoked, err := s.RevokeAllowlist(ctx, AllowlistSelector{Pattern: "/usr/bin/make"}, approval.AuditEntry{Event: approval.EventAllowlist})
	if len(revoked) != 1 || err != nil {
		t.Fatalf("revoke %v %v", revoked, err)
	}
	if e := s.AllowlistEntries(); len(e) != 0 {
		t.Fatalf("revoked entry still served: %+v", e)
	}
}

func TestCardsRecordedAndReturned(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	s.Create(ctx, pending("c1", "s", "fp"), approval.AuditEntry{})
	ref := approval.CardRef{Channel: "telegram", Chat: "1", Message: "42"}
	r, err := s.AddCard(ctx, "c1", ref)
	if err != nil || len(r.Cards) != 1 {
		t.Fatalf("%+v %v", r, err)
	}
	r, _ = s.AddCard(ctx, "c1", ref)
	if len(r.Cards) != 1 {
		t.Fatal("the same card was recorded twice")
	}
	got, _, _ := s.Resolve(ctx, "c1", human(approval.OutcomeDeny), ledger.Effects{})
	if len(got.Cards) != 1 || got.Cards[0] != ref {
		t.Fatalf("resolved request lost its cards: %+v", got.Cards)
	}
	if _, err := s.AddCard(ctx, "nope", ref); !errors.Is(err, approval.ErrNotFound) {
		t.Fatalf("err = %v", err)
	}
}

func TestWritesAfterCloseFail(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "c.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := s.AppendAudit(context.Background(), approval.AuditEntry{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("err = %v", err)
	}
}
