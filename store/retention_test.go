package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/ledger"
)

// retentionFixture: 10 requests decided by the policy an hour apart from base (one
// decision entry each), then one pending request, then a request a human decided.
func retentionFixture(t *testing.T, s *Store, base time.Time) {
	t.Helper()
	ctx := context.Background()
	for i := 0; i < 10; i++ {
		at := base.Add(time.Duration(i) * time.Hour)
		id := fmt.Sprintf("p%d", i)
		r := &approval.Request{ID: id, State: approval.StateAllowed, Allowed: true, Outcome: approval.OutcomeAllowOnce,
			Source: approval.SourcePolicy, CreatedAt: at, DecidedAt: at, Session: "s", Agent: "a"}
		if err := s.Create(ctx, r, approval.AuditEntry{Time: at, Event: approval.EventDecision, RequestID: id, Session: "s", Agent: "a", Outcome: r.Outcome}); err != nil {
			t.Fatal(err)
		}
	}
	at := base.Add(10 * time.Hour)
	wait := &approval.Request{ID: "waiting", State: approval.StatePending, CreatedAt: at, ExpiresAt: at.Add(time.Hour * 1000), Session: "s"}
	if err := s.Create(ctx, wait, approval.AuditEntry{Time: at, Event: approval.EventRequest, RequestID: "waiting", Session: "s"}); err != nil {
		t.Fatal(err)
	}
	at = base.Add(11 * time.Hour)
	human := &approval.Request{ID: "human", State: approval.StatePending, CreatedAt: at, ExpiresAt: at.Add(time.Hour * 1000), Session: "s"}
	if err := s.Create(ctx, human, approval.AuditEntry{Time: at, Event: approval.EventRequest, RequestID: "human", Session: "s"}); err != nil {
		t.Fatal(err)
	}
	res := approval.Resolution{State: approval.StateDenied, Outcome: approval.OutcomeDeny, Source: approval.SourceHuman, DecidedBy: "op",
		DecidedAt: base.Add(12 * time.Hour)}
	if _, won, err := s.Resolve(ctx, "human", res, ledger.Effects{}); !won || err != nil {
		t.Fatalf("won=%v err=%v", won, err)
	}
}

func TestPrune(t *testing.T) {
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	// The trail: p0…p9 (seq 1-10), waiting's request entry (11), human's request entry
	// (12) and its decision (13).
	tests := []struct {
		name         string
		before       time.Time
		maxEntries   int
		entries      int // removed
		requests     int // removed
		gone, kept   []string
		oldestLeft   uint64
		countedHours int
	}{
		{"nothing configured", time.Time{}, 0, 0, 0, nil, []string{"p0", "waiting", "human"}, 1, 11},
		{"cap keeps the newest", time.Time{}, 5, 8, 8, []string{"p0", "p7"}, []string{"p8", "waiting", "human"}, 9, 3},
		{"cap drops a pending request's entry, not the request", time.Time{}, 2, 11, 10, []string{"p9"}, []string{"waiting", "human"}, 12, 1},
		{"cap drops a decided request with its first entry", time.Time{}, 1, 12, 11, []string{"human"}, []string{"waiting"}, 13, 1},
		{"age", base.Add(4*time.Hour + time.Minute), 0, 5, 5, []string{"p0", "p4"}, []string{"p5", "waiting"}, 6, 6},
		{"age before everything", base.Add(-time.Hour), 0, 0, 0, nil, []string{"p0"}, 1, 11},
		{"the stricter of age and cap", base.Add(2 * time.Hour), 9, 4, 4, []string{"p3"}, []string{"p4"}, 5, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := open(t)
			ctx := context.Background()
			retentionFixture(t, s, base)
			a, r, err := s.Prune(ctx, tt.before, tt.maxEntries)
			if err != nil || a != tt.entries || r != tt.requests {
				t.Fatalf("pruned %d entries and %d requests (%v), want %d and %d", a, r, err, tt.entries, tt.requests)
			}
			for _, id := range tt.gone {
				if _, err := s.Get(ctx, id); !errors.Is(err, approval.ErrNotFound) {
					t.Errorf("request %s kept: %v", id, err)
				}
			}
			for _, id := range tt.kept {
				if _, err := s.Get(ctx, id); err != nil {
					t.Errorf("request %s pruned: %v", id, err)
				}
			}
			left := auditEntries(t, s, approval.AuditQuery{Limit: maxAuditLimit})
			if len(left) != 13-tt.entries || (len(left) > 0 && left[0].Seq != tt.oldestLeft) {
				t.Fatalf("left %v, want %d entries from seq %d", seqs(left), 13-tt.entries, tt.oldestLeft)
			}
			counts, _ := s.AuditCounts(ctx, time.Time{}, time.Time{})
			if len(counts) != tt.countedHours {
				t.Fatalf("counters for %d hours, want %d: %+v", len(counts), tt.countedHours, counts)
			}
			// Indexes and counters are checked by open's cleanup; the session index
			// must not name a pruned entry.
			if got := auditEntries(t, s, approval.AuditQuery{Session: "s", Limit: maxAuditLimit}); len(got) != len(left) {
				t.Fatalf("session index: %d entries, trail %d", len(got), len(left))
			}
		})
	}
}

func TestPruneTwiceRemovesNothingMore(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	retentionFixture(t, s, time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	if a, _, err := s.Prune(ctx, time.Time{}, 4); a != 9 || err != nil {
		t.Fatalf("first prune: %d %v", a, err)
	}
	if a, r, err := s.Prune(ctx, time.Time{}, 4); a != 0 || r != 0 || err != nil {
		t.Fatalf("second prune: %d %d %v", a, r, err)
	}
}

// Under either retention setting the file stops growing: pages retention frees are
// reused by new writes. Each round appends 2,000 decided requests, in transactions of
// 100 like group commits; retention runs in every commit (per commit: Options.Retention)
// or after each round (Prune).
func TestRetentionBoundsTheFile(t *testing.T) {
	for _, tt := range []struct {
		name      string
		cap       int
		age       bool
		perCommit bool
	}{
		{"audit_max_entries, Prune", 2000, false, false},
		{"audit_retention, Prune", 0, true, false},
		{"audit_max_entries, per commit", 2000, false, true},
		{"audit_retention, per commit", 0, true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clock := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
			var s *Store
			if tt.perCommit {
				r := Retention{MaxEntries: tt.cap}
				if tt.age {
					r.Age = 2000 * time.Second
				}
				var err error
				// No write probe: its clock checkpoint would read the test clock from another goroutine.
				s, err = Open(filepath.Join(t.TempDir(), "r.db"), Options{Retention: r, ProbeInterval: -1, Now: func() time.Time { return clock }})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() {
					if err := s.CheckIndexes(); err != nil {
						t.Error(err)
					}
					s.Close()
				})
			} else {
				s = open(t)
			}
			ctx := context.Background()
			var sizes []int64
			for round := 0; round < 10; round++ {
				for tx := 0; tx < 20; tx++ {
					err := s.write(ctx, false, func(tx *bolt.Tx) error {
						for i := 0; i < 100; i++ {
							clock = clock.Add(time.Second)
							id := fmt.Sprintf("r%02d-%07d", round, clock.Unix())
							r := approval.Request{ID: id, State: approval.StateAllowed, Allowed: true, CreatedAt: clock, DecidedAt: clock,
								Outcome: approval.OutcomeAllowOnce, Source: approval.SourcePolicy, Session: fmt.Sprint("s", i%50), Agent: "a",
								Summary: "read_file /etc/hosts and a summary of a typical length for the card"}
							if err := putJSON(tx.Bucket(bucketRequests), []byte(id), r); err != nil {
								return err
							}
							e := approval.AuditEntry{Time: clock, Event: approval.EventDecision, RequestID: id, Session: r.Session, Agent: "a",
								Outcome: r.Outcome, Source: r.Source, Summary: r.Summary}
							if err := s.appendAudit(tx, e); err != nil {
								return err
							}
						}
						return nil
					})
					if err != nil {
						t.Fatal(err)
					}
				}
				if !tt.perCommit {
					var before time.Time
					if tt.age {
						before = clock.Add(-2000 * time.Second)
					}
					if _, _, err := s.Prune(ctx, before, tt.cap); err != nil {
						t.Fatal(err)
					}
				} else if round > 0 {
					// Per commit, the trail never overshoots by more than one commit.
					s.db.View(func(tx *bolt.Tx) error {
						if n := auditLen(tx); n > 2000+100 {
							t.Fatalf("round %d: %d entries kept, retention keeps 2000", round, n)
						}
						return nil
					})
				}
				fi, err := os.Stat(s.Path())
				if err != nil {
					t.Fatal(err)
				}
				sizes = append(sizes, fi.Size())
			}
			// bbolt grows the file in steps; after a few rounds it must level off.
			if last, mid := sizes[len(sizes)-1], sizes[5]; last > mid {
				t.Fatalf("file grew from %d to %d bytes after round 6 with retention on: %v", mid, last, sizes)
			}
			t.Logf("file sizes by round: %v", sizes)
		})
	}
}

// A damaged entry does not stop retention: it goes, and the index keys it leaves behind
// (its names could not be read) are passed over by queries.
func TestPruneDamagedEntry(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "d.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.deferredBatch = 1
	base := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	fillAudit(t, s, base, 30)
	ctx := context.Background()
	// Damage the oldest entry in place.
	err = s.write(ctx, false, func(tx *bolt.Tx) error {
		k, _ := tx.Bucket(bucketAudit).Cursor().First()
		return tx.Bucket(bucketAudit).Put(bytes.Clone(k), []byte("\x00not json"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if a, _, err := s.Prune(ctx, time.Time{}, 20); err != nil || a != 10 {
		t.Fatalf("pruned %d: %v", a, err)
	}
	for _, q := range []approval.AuditQuery{{Session: "a"}, {Agent: "agent-1"}, {RequestID: "req-0"}, {}} {
		page, err := s.Audit(ctx, q)
		if err != nil {
			t.Fatalf("%+v: %v", q, err)
		}
		for _, e := range page.Entries {
			if e.Seq <= 10 {
				t.Fatalf("%+v: a pruned entry answered: %+v", q, e)
			}
		}
	}
	if err := s.CheckIndexes(); err == nil {
		t.Fatal("CheckIndexes does not report the keys the damaged entry left")
	}
}
