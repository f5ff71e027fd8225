package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/approvebot/approvebot/core/approval"
)

func TestCompactGivesSpaceBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	err = s.write(ctx, false, func(tx *bolt.Tx) error {
		for i := 0; i < 20000; i++ {
			at := base.Add(time.Duration(i) * time.Second)
			e := approval.AuditEntry{Time: at, Event: approval.EventDecision, RequestID: fmt.Sprint("r", i), Session: fmt.Sprint("s", i%7),
				Outcome: approval.OutcomeAllowOnce, Summary: "a summary long enough to take some room in the page"}
			if err := s.appendAudit(tx, e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, pending("waiting", "s1", "fp"), approval.AuditEntry{Event: approval.EventRequest, RequestID: "waiting"}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Prune(ctx, time.Time{}, 500); err != nil {
		t.Fatal(err)
	}
	wantAll := seqs(auditEntries(t, s, approval.AuditQuery{Limit: maxAuditLimit}))
	wantSession := seqs(auditEntries(t, s, approval.AuditQuery{Session: "s3", Limit: maxAuditLimit}))

	// While the store is open, compaction is refused: it needs the server stopped.
	if _, err := Compact(path, 50*time.Millisecond, nil); !errors.Is(err, ErrLocked) {
		t.Fatalf("compact of an open database: %v", err)
	}
	s.Close()
	// A copy left by an interrupted compaction is replaced, never used.
	if err := os.WriteFile(path+".compact", []byte("junk"), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := Compact(path, time.Second, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if res.After >= res.Before/2 {
		t.Fatalf("compacted %d bytes to %d", res.Before, res.After)
	}
	if _, err := os.Stat(path + ".compact"); !os.IsNotExist(err) {
		t.Fatalf("temporary copy left behind: %v", err)
	}
	s, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckIndexes(); err != nil {
		t.Fatal(err)
	}
	if got := seqs(auditEntries(t, s, approval.AuditQuery{Limit: maxAuditLimit})); !slices.Equal(got, wantAll) {
		t.Fatalf("trail changed: %d entries, want %d", len(got), len(wantAll))
	}
	if got := seqs(auditEntries(t, s, approval.AuditQuery{Session: "s3", Limit: maxAuditLimit})); !slices.Equal(got, wantSession) {
		t.Fatal("session index changed")
	}
	if list, _ := s.Pending(ctx); len(list) != 1 || list[0].ID != "waiting" {
		t.Fatalf("pending after compaction: %+v", list)
	}
	// The sequence survived: the next entry continues it.
	if err := s.AppendAudit(ctx, approval.AuditEntry{Event: "x"}); err != nil {
		t.Fatal(err)
	}
	if got := auditEntries(t, s, approval.AuditQuery{Limit: 1}); got[0].Seq != 20002 {
		t.Fatalf("next seq %d, want 20002", got[0].Seq)
	}
}
