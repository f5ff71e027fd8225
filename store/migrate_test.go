package store

import (
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/approvebot/approvebot/core/approval"
)

// testdata/schema1-trail.bolt.gz was written by the store of schema version 1 (commit
// 6a51053), testdata/schema2-trail.bolt.gz by the store of version 2 (commit d20c3e5), both
// with testdata/genv1: 120 requests (policy-decided, human-decided, a few pending), audit
// entries out of time order (version 1; version 2 already kept them in order), an
// unauthorized press, and audit_max_entries applied as those versions did it (39 entries
// pruned, their requests kept). Regenerate (COMMIT as above):
//
//	git archive COMMIT | tar -x -C /tmp/v && mkdir /tmp/v/cmd/genv1 &&
//	cp store/testdata/genv1/main.go /tmp/v/cmd/genv1/ && (cd /tmp/v && go run ./cmd/genv1 OUT.bolt) && gzip -9 OUT.bolt
func v1Database(t *testing.T) string { return fixtureDatabase(t, "testdata/schema1-trail.bolt.gz") }

func fixtureDatabase(t *testing.T, name string) string {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "old.db")
	out, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, zr); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// v1Facts reads what the version-1 file holds, with bbolt alone.
type v1Facts struct {
	entries     []approval.AuditEntry // in key order
	requests    map[string]approval.Request
	pending     map[string]bool
	withEntries map[string]bool
}

func readV1(t *testing.T, path string, version uint32) v1Facts {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	f := v1Facts{requests: map[string]approval.Request{}, pending: map[string]bool{}, withEntries: map[string]bool{}}
	err = db.View(func(tx *bolt.Tx) error {
		if v, _ := schemaVersion(tx); v != version {
			t.Fatalf("fixture has schema version %d, want %d", v, version)
		}
		tx.Bucket(bucketAudit).ForEach(func(k, v []byte) error {
			var e approval.AuditEntry
			if err := json.Unmarshal(v, &e); err != nil {
				return err
			}
			f.entries = append(f.entries, e)
			f.withEntries[e.RequestID] = true
			return nil
		})
		tx.Bucket(bucketPending).ForEach(func(k, _ []byte) error { f.pending[string(k)] = true; return nil })
		return tx.Bucket(bucketRequests).ForEach(func(k, v []byte) error {
			var r approval.Request
			if err := json.Unmarshal(v, &r); err != nil {
				return err
			}
			f.requests[string(k)] = r
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// freelistPersisted reports whether the file's current meta page names a freelist page.
func freelistPersisted(t *testing.T, path string) bool {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Two meta pages (0 and 1); each: a 16-byte page header, then magic, version, page
	// size, flags (4 bytes each), the root bucket (16), freelist (8), pgid (8), txid (8).
	pageSize := int(binary.LittleEndian.Uint32(raw[16+8:]))
	var freelist, txid uint64
	for _, off := range []int{0, pageSize} {
		m := raw[off+16:]
		if id := binary.LittleEndian.Uint64(m[48:]); id >= txid {
			txid, freelist = id, binary.LittleEndian.Uint64(m[32:])
		}
	}
	return freelist != ^uint64(0)
}

func TestMigrateOlderVersions(t *testing.T) {
	for _, fx := range []struct {
		file    string
		version uint32
		added   int // audit entries the migrations add (version 2's note)
	}{{"testdata/schema1-trail.bolt.gz", 1, 1}, {"testdata/schema2-trail.bolt.gz", 2, 0}} {
		t.Run(fmt.Sprintf("version %d", fx.version), func(t *testing.T) {
			testMigrate(t, fixtureDatabase(t, fx.file), fx.version, fx.added)
		})
	}
}

func testMigrate(t *testing.T, path string, version uint32, added int) {
	before := readV1(t, path, version)
	if freelistPersisted(t, path) {
		t.Fatal("the version-1 fixture already has a freelist: it does not test the migration")
	}
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if err := s.CheckIndexes(); err != nil {
		t.Fatalf("after migration: %v", err)
	}
	s.db.View(func(tx *bolt.Tx) error {
		if v, _ := schemaVersion(tx); v != SchemaVersion {
			t.Errorf("schema version %d after migration", v)
		}
		for _, k := range migrationProgress {
			if tx.Bucket(bucketMeta).Get(k) != nil {
				t.Errorf("progress mark %s left behind", k)
			}
		}
		return nil
	})

	// Every entry is still there, with the entry of the version-2 migration after them,
	// and filtered queries find what a walk finds.
	all := auditEntries(t, s, approval.AuditQuery{Limit: maxAuditLimit})
	if len(all) != len(before.entries)+added || (added > 0 && all[len(all)-1].Event != approval.EventMigration) {
		t.Fatalf("%d entries after migration, %d before, last %+v", len(all), len(before.entries), all[len(all)-1])
	}
	for _, q := range []approval.AuditQuery{
		{RequestID: "req-003"}, {Session: "a"}, {Session: "a\x00b"}, {Agent: "agent-1"},
		{Session: "ab", Outcome: approval.OutcomeDeny}, {Source: approval.SourceHuman},
	} {
		var want []uint64
		for _, e := range before.entries {
			if matches(q, e) {
				want = append(want, e.Seq)
			}
		}
		q.Limit = maxAuditLimit
		if got := seqs(auditEntries(t, s, q)); !slices.Equal(got, want) {
			t.Errorf("%+v: got %v, want %v", q, got, want)
		}
	}
	// Counters from the trail as it was.
	counts, err := s.AuditCounts(ctx, time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, h := range counts {
		for _, n := range h.Outcomes {
			total += n
		}
	}
	decisions := 0
	for _, e := range before.entries {
		if e.Event == approval.EventDecision {
			decisions++
		}
	}
	if total != decisions || decisions == 0 {
		t.Fatalf("counters hold %d decisions, the trail %d", total, decisions)
	}

	// Decided requests whose entries version 1 had pruned are gone; the rest stay.
	removed := 0
	for id, r := range before.requests {
		_, err := s.Get(ctx, id)
		orphan := !before.pending[id] && !before.withEntries[id]
		switch {
		case orphan && !errors.Is(err, approval.ErrNotFound):
			t.Errorf("orphaned decided request %s (created %s) kept: %v", id, r.CreatedAt, err)
		case !orphan && err != nil:
			t.Errorf("request %s lost: %v", id, err)
		case orphan:
			removed++
		}
	}
	if removed == 0 {
		t.Fatal("the fixture has no orphaned requests: it does not test their removal")
	}
	if len(before.pending) == 0 {
		t.Fatal("the fixture has no pending requests")
	}

	// New entries go on after the old ones, and the freelist is written from now on.
	if err := s.AppendAudit(ctx, approval.AuditEntry{Event: "x", Session: "a"}); err != nil {
		t.Fatal(err)
	}
	got := auditEntries(t, s, approval.AuditQuery{Session: "a", Limit: 1})
	if len(got) != 1 || got[0].Event != "x" || got[0].Seq != uint64(len(before.entries)+39+added+1) {
		t.Fatalf("newest entry of session a: %+v", got)
	}
	s.Close()
	if !freelistPersisted(t, path) {
		t.Fatal("no freelist written after the migration")
	}
	if s, err = Open(path, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := s.CheckIndexes(); err != nil {
		t.Fatal(err)
	}
}

// An interrupted migration resumes where it stopped: nothing is counted twice.
func TestMigrationResumesAfterInterruption(t *testing.T) {
	for _, stopAfter := range []int{1, 3, 7} {
		t.Run("after "+string(rune('0'+stopAfter))+" chunks", func(t *testing.T) {
			path := v1Database(t)
			db, err := bolt.Open(path, 0o600, boltOptions(time.Second))
			if err != nil {
				t.Fatal(err)
			}
			db.Update(func(tx *bolt.Tx) error {
				for _, name := range allBuckets {
					if _, err := tx.CreateBucketIfNotExists(name); err != nil {
						return err
					}
				}
				return nil
			})
			chunks := 0
			stop := errors.New("interrupted")
			env := migrateEnv{log: slog.New(slog.DiscardHandler), chunk: 25, now: time.Now, afterChunk: func() error {
				if chunks++; chunks == stopAfter {
					return stop
				}
				return nil
			}}
			if err := migrate(db, 1, env); !errors.Is(err, stop) {
				t.Fatalf("migration: %v", err)
			}
			db.View(func(tx *bolt.Tx) error {
				// Version 2 is one transaction, done; version 3 was interrupted.
				if v, _ := schemaVersion(tx); v != 2 {
					t.Errorf("version %d after an interrupted migration to 3", v)
				}
				return nil
			})
			db.Close()
			s, err := Open(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.CheckIndexes(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
