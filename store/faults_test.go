package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/ledger"
)

// seeded is a closed database with pending and decided requests, sessions and audit entries.
type seeded struct {
	path    string
	pending []string
	decided map[string]approval.Request
}

func seedDB(t *testing.T, dir string, n int) seeded {
	t.Helper()
	path := filepath.Join(dir, "seed.db")
	s, err := Open(path, Options{ProbeInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sd := seeded{path: path, decided: map[string]approval.Request{}}
	for i := 0; i < n; i++ {
		id := gate.NewID()
		r := pending(id, fmt.Sprintf("sess-%d", i%7), fmt.Sprintf("fp-%d", i))
		r.Agent, r.Tool, r.Summary = "agent", "bash", strings.Repeat("x", i%300)
		if err := s.Create(ctx, r, approval.AuditEntry{Event: approval.EventRequest, RequestID: id}); err != nil {
			t.Fatal(err)
		}
		switch i % 3 {
		case 0:
			sd.pending = append(sd.pending, id)
		case 1:
			got, _, err := s.Resolve(ctx, id, human(approval.OutcomeAllowOnce), ledger.Effects{})
			if err != nil {
				t.Fatal(err)
			}
			sd.decided[id] = got
		case 2:
			got, _, err := s.Resolve(ctx, id, human(approval.OutcomeDeny), ledger.Effects{Denial: true, PauseAfter: 3})
			if err != nil {
				t.Fatal(err)
			}
			sd.decided[id] = got
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return sd
}

func fileHeaderOf(t *testing.T, raw []byte) fileHeader {
	t.Helper()
	h, err := readHeader(bytes.NewReader(raw), int64(len(raw)))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestOpenRefusesDamagedFiles(t *testing.T) {
	sd := seedDB(t, t.TempDir(), 300)
	orig, _ := os.ReadFile(sd.path)
	h := fileHeaderOf(t, orig)
	ps := h.meta.pageSize
	tests := []struct {
		name   string
		damage func([]byte) []byte
		want   string
	}{
		{"zero length", func([]byte) []byte { return nil }, "the file is empty (0 bytes)"},
		{"one byte", func(b []byte) []byte { return b[:1] }, "shorter than the two meta pages"},
		{"half", func(b []byte) []byte { return b[:len(b)/2] }, "(truncated)"},
		{"one page short", func(b []byte) []byte { return b[:int(h.meta.hwm-1)*ps] }, "(truncated)"},
		{"both metas scrambled", func(b []byte) []byte {
			b[pageHeaderSize+20] ^= 0xff
			b[ps+pageHeaderSize+20] ^= 0xff
			return b
		}, "both meta pages are damaged"},
		{"not bbolt at all", func(b []byte) []byte {
			r := rand.New(rand.NewPCG(1, 2))
			for i := range b {
				b[i] = byte(r.Uint32())
			}
			return b
		}, "both meta pages are damaged"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "approvebot.db")
			damaged := tc.damage(append([]byte(nil), orig...))
			if err := os.WriteFile(path, damaged, 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := Open(path, Options{ProbeInterval: -1})
			if err == nil {
				s.Close()
				t.Fatal("opened a damaged database")
			}
			var de *DamagedFileError
			if !errors.As(err, &de) || !errors.Is(err, ErrDamaged) {
				t.Fatalf("err = %T %v, want *DamagedFileError", err, err)
			}
			msg := err.Error()
			for _, want := range []string{path, tc.want, "restore the file from a backup", "approvebot verify " + path, "will not replace it"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error does not say %q:\n%s", want, msg)
				}
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(after, damaged) {
				t.Fatal("Open changed the damaged file")
			}
			rep, err := Verify(path)
			if err != nil {
				t.Fatal(err)
			}
			if rep.OK() || len(rep.Problems) == 0 {
				t.Fatalf("verify passed a damaged file: %+v", rep)
			}
		})
	}
}

// TestDamageInThePageTreeIsMetLater: with the free list persisted, start-up reads only the
// meta pages, the free-list page and the bucket roots, so damage deeper in the tree is met
// by the operation that reads it: an error naming the bucket, never a fault, never an allow;
// verify finds it.
func TestDamageInThePageTreeIsMetLater(t *testing.T) {
	sd := seedDB(t, t.TempDir(), 300)
	orig, _ := os.ReadFile(sd.path)
	h := fileHeaderOf(t, orig)
	ps := h.meta.pageSize
	tests := []struct {
		name   string
		damage func([]byte) []byte
		want   string
	}{
		{"a branch page points outside the file", func(b []byte) []byte {
			// The requests bucket's root is a branch page (300 requests): aim its first
			// child far beyond the end of the file.
			root := bucketRootPage(t, b, h, "requests")
			p := b[int(root)*ps:]
			if ne.Uint16(p[8:]) != flagBranch {
				t.Fatal("the requests bucket's root is not a branch page")
			}
			ne.PutUint64(p[pageHeaderSize+8:], 1<<40)
			return b
		}, "outside the"},
		{"a page header scrambled", func(b []byte) []byte {
			root := bucketRootPage(t, b, h, "requests")
			child := ne.Uint64(b[int(root)*ps+pageHeaderSize+8:])
			for i := 0; i < pageHeaderSize; i++ {
				b[int(child)*ps+i] ^= 0xa5
			}
			return b
		}, "page"},
		{"a leaf element points past its page", func(b []byte) []byte {
			root := bucketRootPage(t, b, h, "requests")
			child := ne.Uint64(b[int(root)*ps+pageHeaderSize+8:])
			p := b[int(child)*ps:]
			ne.PutUint32(p[pageHeaderSize+12:], 1<<30) // vsize of the first element
			return b
		}, "points past the page"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "approvebot.db")
			os.WriteFile(path, tc.damage(append([]byte(nil), orig...)), 0o600)
			s, err := Open(path, Options{ProbeInterval: -1})
			if err != nil {
				if !errors.Is(err, ErrDamaged) {
					t.Fatalf("not a damage error: %v", err)
				}
				return
			}
			ctx := context.Background()
			failed := 0
			ids := append([]string(nil), sd.pending...)
			for id := range sd.decided {
				ids = append(ids, id)
			}
			for _, id := range ids {
				got, err := s.Get(ctx, id)
				switch {
				case err != nil && !errors.Is(err, gate.ErrStoreUnavailable) && !errors.Is(err, approval.ErrNotFound):
					t.Fatalf("Get %s: %T %v", id, err, err)
				case err != nil:
					failed++
					if de := (*DamageError)(nil); errors.As(err, &de) && de.Bucket != "requests" {
						t.Fatalf("the error does not name the bucket: %v", err)
					}
				case got.Allowed && !sd.decided[id].Allowed:
					t.Fatalf("request %s reads as allowed", id)
				}
			}
			if failed == 0 {
				t.Fatal("no read met the damage")
			}
			s.Close()
			rep, err := Verify(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Problems) == 0 || !strings.Contains(strings.Join(rep.Problems, "\n"), tc.want) {
				t.Fatalf("verify: %+v", rep.Problems)
			}
		})
	}
}

func TestOpenCreatesOnlyWhereNoFileExists(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "does", "not", "exist")
	path := filepath.Join(dir, "approvebot.db")
	s, err := Open(path, Options{ProbeInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := os.Mkdir(filepath.Join(t.TempDir(), "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	notFile := t.TempDir()
	if _, err := Open(notFile, Options{ProbeInterval: -1}); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("a directory at the path: %v", err)
	}
}

func TestOneDamagedMetaPageOpensOnTheOther(t *testing.T) {
	sd := seedDB(t, t.TempDir(), 30)
	raw, _ := os.ReadFile(sd.path)
	h := fileHeaderOf(t, raw)
	// Damage the older meta page: nothing committed is lost.
	older := 1 - h.meta.page
	raw[older*h.meta.pageSize+pageHeaderSize+20] ^= 0xff
	os.WriteFile(sd.path, raw, 0o600)
	s, err := Open(sd.path, Options{ProbeInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Pending(context.Background())
	if err != nil || len(got) != len(sd.pending) {
		t.Fatalf("pending = %d, %v; want %d", len(got), err, len(sd.pending))
	}
}

// TestScrambledCopiesNeverCrashOrAllow scrambles copies of a real database at random and
// opens each: it must refuse with a clear error or open, and every operation on an opened
// one must return (no panic, no fault) without allowing anything that was not allowed.
func TestScrambledCopiesNeverCrashOrAllow(t *testing.T) {
	sd := seedDB(t, t.TempDir(), 400)
	orig, _ := os.ReadFile(sd.path)
	h := fileHeaderOf(t, orig)
	ps := h.meta.pageSize
	refused, opened := 0, 0
	seeds := uint64(60)
	if v := os.Getenv("FAULTS_SEEDS"); v != "" {
		fmt.Sscan(v, &seeds)
	}
	for seed := uint64(1); seed <= seeds; seed++ {
		r := rand.New(rand.NewPCG(seed, 99))
		raw := append([]byte(nil), orig...)
		// A few bursts of garbage anywhere after the meta pages.
		for n := 1 + r.IntN(4); n > 0; n-- {
			at := 2*ps + r.IntN(len(raw)-2*ps)
			for i := 0; i < 1+r.IntN(64) && at+i < len(raw); i++ {
				raw[at+i] = byte(r.Uint32())
			}
		}
		path := filepath.Join(t.TempDir(), "approvebot.db")
		os.WriteFile(path, raw, 0o600)
		s, err := Open(path, Options{ProbeInterval: -1})
		if err != nil {
			if !errors.Is(err, ErrDamaged) {
				t.Fatalf("seed %d: not a damage error: %v", seed, err)
			}
			refused++
			continue
		}
		opened++
		ctx := context.Background()
		if _, err := s.Pending(ctx); err != nil && !errors.Is(err, ErrDamaged) {
			t.Errorf("seed %d: Pending: %v", seed, err)
		}
		for i, id := range sd.pending {
			got, err := s.Get(ctx, id)
			if err == nil && got.Allowed {
				t.Fatalf("seed %d: pending request %s reads as allowed", seed, id)
			}
			if i >= 4 {
				continue // a few decisions per copy: each is an fsync
			}
			if _, _, err := s.Resolve(ctx, id, approval.Resolution{State: approval.StateDenied, Outcome: approval.OutcomeDeny,
				Source: approval.SourceHuman, DecidedBy: "op", DecidedAt: time.Now()}, ledger.Effects{}); err != nil && !errors.Is(err, gate.ErrStoreUnavailable) && !errors.Is(err, approval.ErrNotFound) {
				t.Errorf("seed %d: Resolve: %v", seed, err)
			}
		}
		for id, want := range sd.decided {
			got, err := s.Get(ctx, id)
			if err == nil && got.Allowed && !want.Allowed {
				t.Fatalf("seed %d: denied request %s reads as allowed", seed, id)
			}
		}
		s.Audit(ctx, approval.AuditQuery{Limit: 10000})
		s.Session(ctx, "agent", "sess-1")
		s.Close()
	}
	t.Logf("%d scrambled copies: %d refused at open, %d opened", seeds, refused, opened)
}

// bucketRootPage finds a top-level bucket's root page in a file's bytes.
func bucketRootPage(t *testing.T, b []byte, h fileHeader, name string) uint64 {
	t.Helper()
	ps := h.meta.pageSize
	p := b[int(h.meta.root)*ps:]
	for i := 0; i < int(ne.Uint16(p[10:])); i++ {
		e := p[pageHeaderSize+i*elementSize:]
		pos, ksize := int(ne.Uint32(e[4:])), int(ne.Uint32(e[8:]))
		if string(e[pos:pos+ksize]) == name {
			return ne.Uint64(e[pos+ksize:])
		}
	}
	t.Fatalf("no bucket %s in the root page", name)
	return 0
}

// damageRecord corrupts a stored record's value in place, in its middle (still a valid
// bbolt file).
func damageRecord(t *testing.T, path string, bucket []byte, key string) {
	t.Helper()
	damageRecordAt(t, path, bucket, key, func(v []byte) int { return len(v) / 2 })
}

func damageRecordAt(t *testing.T, path string, bucket []byte, key string, at func([]byte) int) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, NoFreelistSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucket)
		v := append([]byte(nil), b.Get([]byte(key))...)
		if len(v) == 0 {
			return fmt.Errorf("no record %q in %s", key, bucket)
		}
		v[at(v)] = 0 // a NUL inside JSON is never valid
		return b.Put([]byte(key), v)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestDamagedPendingRequestIsQuarantinedAndDenied(t *testing.T) {
	sd := seedDB(t, t.TempDir(), 30)
	victim := sd.pending[2]
	// Damaged at its very end: what comes before (agent, session, tool) is still read.
	damageRecordAt(t, sd.path, bucketRequests, victim, func(v []byte) int { return len(v) - 1 })
	s, err := Open(sd.path, Options{ProbeInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	got, err := s.Pending(ctx)
	if err != nil || len(got) != len(sd.pending)-1 {
		t.Fatalf("pending = %d, %v; want the other %d", len(got), err, len(sd.pending)-1)
	}
	r, err := s.Get(ctx, victim)
	if err != nil {
		t.Fatal(err)
	}
	if r.State != approval.StateDenied || r.Allowed || r.Source != approval.SourceStore || r.Outcome != approval.OutcomeDeny ||
		!strings.Contains(r.Message, "damaged") || r.Agent != "agent" || r.Tool != "bash" {
		t.Fatalf("stand-in = %+v", r)
	}
	if _, won, err := s.Resolve(ctx, victim, human(approval.OutcomeAllowOnce), ledger.Effects{}); err != nil || won {
		t.Fatalf("a decision on the quarantined request: won=%v err=%v", won, err)
	}
	q, _ := s.Quarantined(ctx)
	if len(q) != 1 || q[0].Bucket != "requests" || q[0].Key != victim {
		t.Fatalf("quarantine = %+v", q)
	}
	page, _ := s.Audit(ctx, approval.AuditQuery{RequestID: victim})
	entries := page.Entries
	var seen bool
	for _, e := range entries {
		seen = seen || (e.Event == approval.EventQuarantine && e.Source == approval.SourceStore)
	}
	if !seen {
		t.Fatalf("no quarantine audit entry: %+v", entries)
	}
	if h := s.Health(); h.Damaged != 1 {
		t.Fatalf("damaged = %d", h.Damaged)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
}

func TestDamagedDecidedRequestReadsAsDeniedAndIsQuarantined(t *testing.T) {
	sd := seedDB(t, t.TempDir(), 30)
	var victim string
	for id, r := range sd.decided {
		if r.Allowed {
			victim = id
			break
		}
	}
	damageRecord(t, sd.path, bucketRequests, victim)
	s, err := Open(sd.path, Options{ProbeInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	r, err := s.Get(ctx, victim)
	if err != nil || r.Allowed || r.Source != approval.SourceStore {
		t.Fatalf("damaged allowed record reads as %+v, %v", r, err)
	}
	waitUntil(t, "the background quarantine", func() bool {
		q, _ := s.Quarantined(ctx)
		return len(q) == 1
	})
}

func TestDamagedSessionReadsAsPaused(t *testing.T) {
	sd := seedDB(t, t.TempDir(), 30)
	damageRecord(t, sd.path, bucketSessions, string(sessionKey("agent", "sess-2")))
	s, err := Open(sd.path, Options{ProbeInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	l, err := s.Lookup(ctx, "agent", "sess-2", "fp-x")
	if err != nil || !l.Session.Paused {
		t.Fatalf("damaged session = %+v, %v; want paused", l.Session, err)
	}
	// An operator's unpause rewrites it whole.
	waitUntil(t, "the background quarantine", func() bool { q, _ := s.Quarantined(ctx); return len(q) == 1 })
	recs, err := s.Unpause(ctx, "agent", "sess-2", approval.AuditEntry{Event: approval.EventUnpause})
	if err != nil || len(recs.Agents) != 1 || recs.Agents[0].Paused {
		t.Fatalf("unpause = %+v, %v", recs, err)
	}
}

func TestDamagedAuditEntryIsSkippedAndReported(t *testing.T) {
	sd := seedDB(t, t.TempDir(), 20)
	db, _ := bolt.Open(sd.path, 0o600, &bolt.Options{NoFreelistSync: true})
	var key []byte
	db.View(func(tx *bolt.Tx) error {
		k, _ := tx.Bucket(bucketAudit).Cursor().First()
		key = append([]byte(nil), k...)
		return nil
	})
	db.Close()
	damageRecord(t, sd.path, bucketAudit, string(key))
	s, err := Open(sd.path, Options{ProbeInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	page, err := s.Audit(context.Background(), approval.AuditQuery{Limit: 10000})
	if err != nil || len(page.Damaged) != 1 || page.Damaged[0].Bucket != "audit" {
		t.Fatalf("damaged = %+v, err = %v", page.Damaged, err)
	}
	if len(page.Entries) == 0 {
		t.Fatal("the rest of the trail was not returned")
	}
}

func TestDamagedAllowlistEntryAllowsNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.db")
	s, _ := Open(path, Options{ProbeInterval: -1})
	ctx := context.Background()
	r := pending(gate.NewID(), "s", "fp")
	r.Agent = "agent"
	s.Create(ctx, r, approval.AuditEntry{})
	s.Resolve(ctx, r.ID, human(approval.OutcomeAllowAlways), ledger.Effects{Allowlist: []string{"/usr/bin/make", "/usr/bin/ls"}})
	s.Close()
	damageRecord(t, path, bucketAllowlist, string(allowlistKey("/usr/bin/make", "agent", "")))
	s, err := Open(path, Options{ProbeInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.AllowlistEntries(); len(got) != 1 || got[0].Pattern != "/usr/bin/ls" {
		t.Fatalf("entries = %+v", got)
	}
	waitUntil(t, "the damaged entry to be quarantined", func() bool { q, _ := s.Quarantined(ctx); return len(q) == 1 })
}

func TestDeletedOrReplacedFileStopsWrites(t *testing.T) {
	for _, tc := range []struct {
		name   string
		do     func(path string)
		reason string
	}{
		{"deleted", func(path string) { os.Remove(path) }, "was deleted"},
		{"directory deleted", func(path string) { os.RemoveAll(filepath.Dir(path)) }, "was deleted"},
		{"replaced", func(path string) {
			os.Rename(path, path+".old")
			os.WriteFile(path, []byte("new"), 0o600)
		}, "was replaced"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "d", "approvebot.db")
			s, err := Open(path, Options{ProbeInterval: 10 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			r := pending(gate.NewID(), "s", "fp")
			if err := s.Create(ctx, r, approval.AuditEntry{}); err != nil {
				t.Fatal(err)
			}
			tc.do(path)
			waitUntil(t, "the probe to notice", func() bool { return s.Health().Lost })
			h := s.Health()
			if h.Writable || !strings.Contains(h.Error, tc.reason) {
				t.Fatalf("health = %+v", h)
			}
			err = s.Create(ctx, pending(gate.NewID(), "s", "fp2"), approval.AuditEntry{})
			var ue *UnavailableError
			if !errors.As(err, &ue) || !errors.Is(err, gate.ErrStoreUnavailable) {
				t.Fatalf("write after loss: %v", err)
			}
			// What it holds is still readable, and can be saved.
			if got, err := s.Get(ctx, r.ID); err != nil || got.ID != r.ID {
				t.Fatalf("read after loss: %v", err)
			}
			var buf bytes.Buffer
			if _, err := s.Backup(ctx, &buf, nil); err != nil {
				t.Fatalf("backup after loss: %v", err)
			}
			rescued := filepath.Join(t.TempDir(), "rescued.db")
			os.WriteFile(rescued, buf.Bytes(), 0o600)
			r2, err := Open(rescued, Options{ProbeInterval: -1})
			if err != nil {
				t.Fatal(err)
			}
			defer r2.Close()
			if _, err := r2.Get(ctx, r.ID); err != nil {
				t.Fatalf("rescued copy lacks the request: %v", err)
			}
		})
	}
}

func TestBackupWhileWriting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b.db")
	s, _ := Open(path, Options{ProbeInterval: -1})
	defer s.Close()
	ctx := context.Background()
	var ids []string
	for i := 0; i < 200; i++ {
		r := pending(gate.NewID(), "s", fmt.Sprint(i))
		s.Create(ctx, r, approval.AuditEntry{})
		ids = append(ids, r.ID)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			s.Create(ctx, pending(gate.NewID(), "w", fmt.Sprint(i)), approval.AuditEntry{})
		}
	}()
	var buf bytes.Buffer
	var size int64
	n, err := s.Backup(ctx, &buf, func(sz int64) { size = sz })
	close(stop)
	<-done
	if err != nil || n != size || int64(buf.Len()) != n {
		t.Fatalf("backup: n=%d size=%d len=%d err=%v", n, size, buf.Len(), err)
	}
	copyPath := filepath.Join(t.TempDir(), "copy.db")
	os.WriteFile(copyPath, buf.Bytes(), 0o600)
	rep, err := Verify(copyPath)
	if err != nil || !rep.OK() {
		t.Fatalf("verify of the backup: %+v %v", rep, err)
	}
	c, err := Open(copyPath, Options{ProbeInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, id := range ids {
		if _, err := c.Get(ctx, id); err != nil {
			t.Fatalf("backup lacks %s: %v", id, err)
		}
	}
}

func TestVerify(t *testing.T) {
	sd := seedDB(t, t.TempDir(), 60)
	rep, err := Verify(sd.path)
	if err != nil || !rep.OK() {
		t.Fatalf("clean file: %+v %v", rep, err)
	}
	if rep.Records["requests"] != 60 || rep.Records["pending"] != len(sd.pending) {
		t.Fatalf("records = %v", rep.Records)
	}
	damageRecord(t, sd.path, bucketRequests, sd.pending[0])
	rep, _ = Verify(sd.path)
	if rep.OK() || len(rep.Damaged) != 1 || rep.Damaged[0].Bucket != "requests" || len(rep.Problems) != 0 {
		t.Fatalf("damaged record: %+v", rep)
	}
	s, _ := Open(sd.path, Options{ProbeInterval: -1})
	defer s.Close()
	if _, err := Verify(sd.path); !errors.Is(err, ErrInUse) {
		t.Fatalf("verify of a file in use: %v", err)
	}
}

func TestClockCheckpointSurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.db")
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	s, _ := Open(path, Options{ProbeInterval: -1, Now: func() time.Time { return base }})
	if !s.LastAlive().IsZero() {
		t.Fatal("a new database has a checkpoint")
	}
	s.Close()
	// The clock is now an hour behind: the checkpoint still says when approvebot last ran.
	s, _ = Open(path, Options{ProbeInterval: -1, Now: func() time.Time { return base.Add(-time.Hour) }})
	defer s.Close()
	if got := s.LastAlive(); !got.Equal(base) {
		t.Fatalf("last alive = %v, want %v", got, base)
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
