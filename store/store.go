// Package store keeps approvebot's durable state in one bbolt file: requests with their
// posted cards, session memory (grants, denial ledger, pauses), persisted allowlist entries
// and the append-only audit trail. It is the only package that imports bbolt. Writes from
// concurrent callers are grouped into one fsync'd transaction (group commit); a method that
// writes returns only after its transaction is committed.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/ledger"
	"github.com/approvebot/approvebot/core/policy"
)

// Every bucket and key name lives here.
var (
	bucketMeta      = []byte("meta")
	bucketRequests  = []byte("requests")
	bucketPending   = []byte("pending")
	bucketSessions  = []byte("sessions")
	bucketGrants    = []byte("grants")
	bucketDenials   = []byte("denials")
	bucketAllowlist = []byte("allowlist")
	bucketAudit     = []byte("audit")
	// bucketQuarantine keeps damaged records moved aside, keyed by bucket and key.
	bucketQuarantine = []byte("quarantine")

	// The audit trail's indexes and counters (index.go, counts.go), written in the
	// transaction of the entry they describe.
	bucketAuditSeq     = []byte("audit_seq")     // seq → audit key
	bucketAuditRequest = []byte("audit_request") // request id, audit key → nothing
	bucketAuditSession = []byte("audit_session") // session, audit key → nothing
	bucketAuditAgent   = []byte("audit_agent")   // agent, audit key → nothing
	bucketAuditHours   = []byte("audit_hours")   // hour, outcome → decisions
	bucketAuditParts   = []byte("audit_parts")   // last audit key → partition (deferred.go)

	allBuckets = [][]byte{bucketMeta, bucketRequests, bucketPending, bucketSessions, bucketGrants, bucketDenials, bucketAllowlist, bucketAudit,
		bucketAuditSeq, bucketAuditRequest, bucketAuditSession, bucketAuditAgent, bucketAuditHours, bucketAuditParts,
		bucketQuarantine}

	keySchema = []byte("schema_version")
	// keyAuditRemoved counts the audit entries ever removed, so the trail's length is
	// its sequence minus this, without walking it.
	keyAuditRemoved = []byte("audit_removed")
	// keyAuditLegacySeq is the last seq the version-3 migration mapped in audit_seq.
	keyAuditLegacySeq = []byte("audit_legacy_seq")
	// keyMigrateAudit and keyMigrateRequests are how far an interrupted migration got
	// (migrate.go).
	keyMigrateAudit    = []byte("migrate_audit_at")
	keyMigrateRequests = []byte("migrate_requests_at")
)

// SchemaVersion is the layout this code reads and writes. Files of an older version are
// migrated at open (migrate.go); a newer one is refused.
const SchemaVersion = 3

const maxBatch = 512

// appendFill packs pages of the append-mostly buckets (time-ordered keys) fuller than
// bbolt's default half-split.
const appendFill = 0.9

// Options tunes the store.
type Options struct {
	// LockTimeout is how long Open waits for another process's lock (default 2s).
	LockTimeout time.Duration
	// Now is the clock for audit keys and the clock checkpoint; nil means time.Now.
	Now func() time.Time
	// ProbeInterval is how often the store checks that its file is still in place and that
	// a small write (the clock checkpoint) commits (default 1s; negative turns it off).
	ProbeInterval time.Duration
	// Logger receives migrations at open and the store's warnings and errors; nil discards.
	Logger *slog.Logger
	// Retention is applied by every group commit (Prune also applies it on demand).
	Retention Retention
	// unsyncedFreelist opens without writing the freelist (the layout before version 3),
	// for the benchmark that measures what writing it costs.
	unsyncedFreelist bool
}

// Store is the bbolt-backed store. It implements gate.Store.
type Store struct {
	db   *bolt.DB
	path string
	now  func() time.Time

	mu     sync.RWMutex // guards closed and sends on ops
	closed bool
	ops    chan *op
	wdone  chan struct{}

	allow atomic.Pointer[[]policy.AllowlistEntry]
	// auditScan is how many entries one audit query examines at most.
	auditScan int
	// deferredBatch is the tail length that has the deferred indexes written.
	deferredBatch int
	// build is the group commit's op that writes the deferred indexes when due;
	// buildPaused (writer only) stops it for a while after it failed.
	build       *op
	buildPaused time.Time
	log         *slog.Logger
	// retention, applied by retain in each group commit; appended (writer only) counts the
	// audit entries of the group being committed.
	retention    Retention
	retain       *op
	retainPaused time.Time
	appended     int

	writes, commits, commitNanos atomic.Uint64

	// h is the write health; isLost is set once no write will be tried again.
	h      health
	isLost atomic.Bool
	// commitStart is when the commit now running began (Unix ns; 0 when none is).
	commitStart atomic.Int64
	// fileID identifies the file opened, to notice it being deleted or replaced.
	fileID os.FileInfo
	// lastAlive is the clock checkpoint found at open; ckWall/ckMono the last one written.
	lastAlive      time.Time
	ckMu           sync.Mutex
	ckWall, ckMono time.Time
	probeStop      chan struct{}
	probeDone      chan struct{}
	stopProbe      sync.Once
	// quarantining dedupes the background quarantine of records met by reads; damagedSeen
	// counts and logs each damaged record once.
	quarantining, damagedSeen sync.Map
}

var _ gate.Store = (*Store)(nil)

type op struct {
	fn   func(tx *bolt.Tx) error
	done chan error
	// allowlist marks a write that changes the persisted allowlist.
	allowlist bool
}

// ErrLocked is returned by Open when another process holds the database.
var ErrLocked = errors.New("database is locked by another process")

// Open opens the database file, or creates it where no file exists, creating every bucket
// in one transaction. An existing file that is empty, truncated or damaged is a
// *DamagedFileError: it is never replaced by a new database. Start-up reads only the meta
// pages and the pages bbolt itself must walk to open the file, so it stays fast at any size.
func Open(path string, opts Options) (*Store, error) {
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = 2 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.ProbeInterval == 0 {
		opts.ProbeInterval = time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("creating data directory: %w", err)
		}
	}
	existed, warning, err := preflight(path)
	if err != nil {
		return nil, err
	}
	if warning != "" {
		opts.Logger.Warn("database meta page damaged: bbolt uses the other one, which may be one transaction older", "db", path, "detail", warning)
	}
	bopts := boltOptions(opts.LockTimeout)
	bopts.NoFreelistSync = opts.unsyncedFreelist
	var db *bolt.DB
	err = guard("", func() error {
		var err error
		db, err = bolt.Open(path, 0o600, bopts)
		return err
	})
	if err != nil {
		if errors.Is(err, berrors.ErrTimeout) {
			return nil, fmt.Errorf("database %s is locked by another process (is another approvebot running?): %w", path, ErrLocked)
		}
		if existed && (errors.Is(err, ErrDamaged) || errors.Is(err, berrors.ErrInvalid) || errors.Is(err, berrors.ErrChecksum) || errors.Is(err, berrors.ErrVersionMismatch)) {
			return nil, &DamagedFileError{Path: path, Detail: err.Error()}
		}
		return nil, fmt.Errorf("opening database %s: %w", path, err)
	}
	var version uint32
	var lastAlive time.Time
	err = guard("meta", func() error {
		return db.Update(func(tx *bolt.Tx) error {
			for _, name := range allBuckets {
				if _, err := tx.CreateBucketIfNotExists(name); err != nil {
					return fmt.Errorf("bucket %s: %w", name, err)
				}
			}
			lastAlive = readAlive(tx)
			v, ok := schemaVersion(tx)
			switch raw := tx.Bucket(bucketMeta).Get(keySchema); {
			case raw != nil && !ok:
				return &DamageError{Bucket: "meta", Detail: fmt.Sprintf("the schema version is %d bytes, not 4", len(raw))}
			case !ok:
				if k, _ := tx.Bucket(bucketRequests).Cursor().First(); existed && k != nil {
					return &DamageError{Bucket: "meta", Detail: "the schema version is missing although requests are stored"}
				}
				version = SchemaVersion
				return putSchemaVersion(tx, SchemaVersion) // a new file
			case v > SchemaVersion:
				return fmt.Errorf("database schema version %d, this approvebot reads version %d", v, SchemaVersion)
			}
			version = v
			return nil
		})
	})
	if err == nil && version < SchemaVersion {
		err = guard("", func() error {
			return migrate(db, version, migrateEnv{log: opts.Logger, chunk: migrateChunk, now: opts.Now})
		})
	}
	if err != nil {
		db.Close()
		if errors.Is(err, ErrDamaged) {
			return nil, &DamagedFileError{Path: path, Detail: err.Error()}
		}
		return nil, fmt.Errorf("initialising database %s: %w", path, err)
	}
	s := &Store{db: db, path: path, now: opts.Now, log: opts.Logger, ops: make(chan *op, 4096), wdone: make(chan struct{}),
		auditScan: defaultAuditScan, deferredBatch: defaultDeferredBatch, lastAlive: lastAlive}
	s.build = &op{fn: s.buildDeferred, done: make(chan error, 1)}
	s.retention = opts.Retention
	s.retain = &op{fn: s.retainStep, done: make(chan error, 1)}
	s.h.writable = true
	if s.fileID, err = os.Stat(path); err != nil {
		db.Close()
		return nil, fmt.Errorf("database %s: %w", path, err)
	}
	if err := s.reloadAllowlist(); err != nil {
		db.Close()
		return nil, err
	}
	go s.writer()
	s.probeStop, s.probeDone = make(chan struct{}), make(chan struct{})
	if opts.ProbeInterval > 0 {
		go s.probe(opts.ProbeInterval)
	} else {
		close(s.probeDone)
	}
	return s, nil
}

// boltOptions are the bbolt settings of every open. The freelist is written with every
// commit, so opening reads it instead of walking every page of the file (which took time
// and memory in proportion to the file: 474 ms and an RSS of the file's size at a
// million requests). A file written without it (before this version) is walked once at
// its first open and has it from then on.
//
// The array freelist, not the hashmap one: it hands out the lowest free pages first, so the
// run of pages the freelist itself is written to with every commit is freed whole and found
// whole again. With the hashmap freelist single-page allocations broke those runs up, and
// once retention by age had left thousands of pages free (the window's content follows the
// request rate) every commit grew the file for its freelist: under audit_retention = 15s
// the file grew from 176 to 533 MiB in 90 s of load and the writer spent its time on the
// list; with the array freelist it stays at 289 MiB and the same load runs 70% faster
// (measured with approvebot-load, README "Retention").
func boltOptions(lockTimeout time.Duration) *bolt.Options {
	return &bolt.Options{
		Timeout:        lockTimeout,
		NoFreelistSync: false,
		FreelistType:   bolt.FreelistArrayType,
	}
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

// Close stops the probe, writes a last clock checkpoint, stops the writer after the queued
// writes and closes the file.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.mu.Unlock()
	s.stopProbe.Do(func() { close(s.probeStop) })
	<-s.probeDone
	if s.lostReason() == "" {
		ctx, cancel := context.WithTimeout(context.Background(), stuckWrite)
		_ = s.checkpoint(ctx)
		cancel()
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.ops)
	s.mu.Unlock()
	<-s.wdone
	return s.db.Close()
}

// Ping reports whether the database is open and readable (cheap: for /healthz).
func (s *Store) Ping() error {
	s.mu.RLock()
	closed := s.closed
	s.mu.RUnlock()
	if closed {
		return ErrClosed
	}
	return s.view("meta", func(tx *bolt.Tx) error {
		if tx.Bucket(bucketMeta) == nil {
			return errors.New("meta bucket missing")
		}
		return nil
	})
}

// Check runs bbolt's consistency check (walks the whole file: tests and tools, not probes).
// It runs in a write transaction, queued with the other writes: bbolt's check in a
// read-only transaction is not safe while a write commits (it reads the live freelist).
func (s *Store) Check() error {
	return s.write(context.Background(), false, func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		return nil
	})
}

// CommitStats counts the group commits of one store since it was opened.
type CommitStats struct {
	// Writes is how many write operations were committed (or failed) in groups.
	Writes uint64
	// Commits is how many transactions carried them (each one fsync'd).
	Commits uint64
	// Time is the time spent in those transactions, writing and fsyncing.
	Time time.Duration
}

// CommitStats reports the group-commit counters.
func (s *Store) CommitStats() CommitStats {
	return CommitStats{Writes: s.writes.Load(), Commits: s.commits.Load(), Time: time.Duration(s.commitNanos.Load())}
}

// ErrClosed is returned by writes after Close.
var ErrClosed = errors.New("store is closed")

// write queues fn for the next group commit and waits until it is committed. fn must only
// touch tx (it may run more than once when another write in its group fails).
func (s *Store) write(ctx context.Context, allowlist bool, fn func(tx *bolt.Tx) error) error {
	if reason := s.lostReason(); reason != "" {
		return &UnavailableError{Path: s.path, Err: errLost{reason}}
	}
	o := &op{fn: fn, done: make(chan error, 1), allowlist: allowlist}
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return ErrClosed
	}
	select {
	case s.ops <- o:
	case <-ctx.Done():
		s.mu.RUnlock()
		return ctx.Err()
	}
	s.mu.RUnlock()
	// Once queued the write happens; wait for it whatever ctx says, so a caller never
	// reports a failure for something that was committed.
	return <-o.done
}

func (s *Store) writer() {
	defer close(s.wdone)
	// Faults on the memory map become panics here, which commit recovers.
	debug.SetPanicOnFault(true)
	batch := make([]*op, 0, maxBatch+2)
	for first := range s.ops {
		batch = append(batch[:0], first)
	drain:
		for len(batch) < maxBatch {
			select {
			case o, ok := <-s.ops:
				if !ok {
					break drain
				}
				batch = append(batch, o)
			default:
				break drain
			}
		}
		start := time.Now()
		n := len(batch)
		// Every group also carries retention and the deferred index build; each writes
		// only when due.
		s.appended = 0
		build := !start.Before(s.buildPaused)
		if build {
			batch = append(batch, s.build)
		}
		retain := !start.Before(s.retainPaused)
		if retain {
			batch = append(batch, s.retain)
		}
		s.commit(batch)
		if retain {
			if err := <-s.retain.done; err != nil {
				s.log.Error("audit retention failed; retrying in a minute", "err", err)
				s.retainPaused = start.Add(time.Minute)
			}
		}
		if build {
			if err := <-s.build.done; err != nil {
				// The entries stay in the tail, where queries still find them.
				s.log.Error("writing the deferred audit indexes failed; retrying in a minute", "err", err)
				s.buildPaused = start.Add(time.Minute)
			}
		}
		s.writes.Add(uint64(n))
		s.commits.Add(1)
		s.commitNanos.Add(uint64(time.Since(start)))
	}
}

// commit runs a group in one transaction. When one function fails, it alone gets the error
// and the others are committed without it. When the commit itself fails, every write of the
// group gets an *UnavailableError and the store's health says so; when bbolt panics (damage
// met by the write), the store stops writing for good.
func (s *Store) commit(batch []*op) {
	for len(batch) > 0 {
		failed := -1
		err := guard("", func() error {
			return s.db.Update(func(tx *bolt.Tx) error {
				for i, o := range batch {
					failed = i
					if err := o.fn(tx); err != nil {
						return err
					}
				}
				failed = -1
				s.commitStart.Store(time.Now().UnixNano())
				return nil
			})
		})
		s.commitStart.Store(0)
		var de *DamageError
		if errors.As(err, &de) && de.Panicked {
			// bbolt panicked inside the write transaction. Its rollback rebuilds the free
			// list and, on damage, may panic again before releasing the writer lock:
			// another Update could wait forever. Stop writing.
			s.lose(fmt.Sprintf("bbolt failed inside a write transaction (%s): no more writes until approvebot is restarted; "+
				"stop it and run `approvebot verify %s`", de.Error(), s.path))
			for _, o := range batch {
				o.done <- &UnavailableError{Path: s.path, Err: err}
			}
			return
		}
		if err == nil {
			s.noteCommit(nil)
			reload := false
			for _, o := range batch {
				reload = reload || o.allowlist
			}
			if reload {
				if rerr := s.reloadAllowlist(); rerr != nil {
					err = rerr
				}
			}
			for _, o := range batch {
				o.done <- err
			}
			return
		}
		if failed < 0 {
			if !errors.Is(err, ErrDamaged) {
				s.noteCommit(err)
				err = &UnavailableError{Path: s.path, Err: err}
			}
			for _, o := range batch {
				o.done <- err
			}
			return
		}
		batch[failed].done <- err
		batch = append(batch[:failed:failed], batch[failed+1:]...)
	}
}

// getJSON decodes one record; a record that does not decode is a *RecordError naming the
// bucket and the key.
func getJSON(b *bolt.Bucket, name []byte, key []byte, v any) (bool, error) {
	raw := b.Get(key)
	if raw == nil {
		return false, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return true, &RecordError{Bucket: string(name), Key: string(key), Raw: append([]byte(nil), raw...), Err: err}
	}
	return true, nil
}

func putJSON(b *bolt.Bucket, key []byte, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return b.Put(key, raw)
}

// --- requests ---

// readRequest reads a request's record. A damaged record reads as its stand-in (denied by
// the store) with a *RecordError: readers go on with that, writers quarantine it first.
func (s *Store) readRequest(tx *bolt.Tx, id string) (approval.Request, bool, error) {
	var r approval.Request
	found, err := getJSON(tx.Bucket(bucketRequests), bucketRequests, []byte(id), &r)
	if re := asRecordError(err); re != nil {
		return damagedRequest(id, re.Raw, s.now().UTC()), true, err
	}
	return r, found, err
}

// requestIn reads a request inside a write transaction, quarantining a damaged record.
func (s *Store) requestIn(tx *bolt.Tx, id string) (approval.Request, bool, error) {
	r, found, err := s.readRequest(tx, id)
	if re := asRecordError(err); re != nil {
		return r, found, s.quarantineIn(tx, re)
	}
	return r, found, err
}

// Create stores a new request with its audit entry.
func (s *Store) Create(ctx context.Context, r *approval.Request, audit approval.AuditEntry) error {
	raw := appendRequest(make([]byte, 0, 1024), r)
	id := []byte(r.ID)
	pending := r.State == approval.StatePending
	return s.write(ctx, false, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketRequests)
		b.FillPercent = appendFill
		if b.Get(id) != nil {
			return fmt.Errorf("request %s already exists", r.ID)
		}
		if err := b.Put(id, raw); err != nil {
			return err
		}
		if pending {
			if err := tx.Bucket(bucketPending).Put(id, nil); err != nil {
				return err
			}
		}
		return s.appendAudit(tx, audit)
	})
}

// Get returns a request by id.
func (s *Store) Get(_ context.Context, id string) (approval.Request, error) {
	var r approval.Request
	err := s.view("requests", func(tx *bolt.Tx) error {
		var found bool
		var err error
		r, found, err = s.readRequest(tx, id)
		err = s.readOnly(err)
		if err == nil && !found {
			err = approval.ErrNotFound
		}
		return err
	})
	return r, err
}

// Pending returns every request still pending in the store. A damaged record among them is
// quarantined (its request denied by the store) and left out; the others are returned.
func (s *Store) Pending(ctx context.Context) ([]approval.Request, error) {
	var out []approval.Request
	var damaged []*RecordError
	err := s.view("pending", func(tx *bolt.Tx) error {
		return tx.Bucket(bucketPending).ForEach(func(k, _ []byte) error {
			r, found, err := s.readRequest(tx, string(k))
			if re := asRecordError(err); re != nil {
				damaged = append(damaged, re)
				return nil
			}
			if err != nil {
				return err
			}
			if found && r.State == approval.StatePending {
				out = append(out, r)
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	for _, re := range damaged {
		s.noteDamaged(re)
		if err := s.quarantineNow(ctx, re); err != nil {
			return out, fmt.Errorf("quarantining %v: %w", re, err)
		}
	}
	return out, nil
}

// Resolve is the compare-and-set every decision goes through.
func (s *Store) Resolve(ctx context.Context, id string, res approval.Resolution, eff ledger.Effects) (approval.Request, bool, error) {
	var out approval.Request
	var won bool
	err := s.write(ctx, len(eff.Allowlist) > 0, func(tx *bolt.Tx) error {
		won = false
		r, found, err := s.requestIn(tx, id)
		if err != nil {
			return err
		}
		if !found {
			return approval.ErrNotFound
		}
		out = r
		if r.State != approval.StatePending {
			return nil
		}
		apply := res
		effects := eff
		if res.RequireLive && !r.ExpiresAt.IsZero() && !res.DecidedAt.Before(r.ExpiresAt) {
			apply = approval.Resolution{
				State: approval.StateDenied, Outcome: approval.OutcomeTimeout, Source: approval.SourceTimeout,
				DecidedBy: "approvebot", Reason: "no human answered in time", Message: res.TimeoutMessage,
				DecidedAt: res.DecidedAt,
			}
			effects = ledger.Effects{}
		} else {
			won = true
		}
		r.State, r.Outcome, r.Source = apply.State, apply.Outcome, apply.Source
		r.Allowed = apply.Outcome.Allows() && apply.State == approval.StateAllowed
		r.Explicit = r.Allowed && apply.Explicit
		r.DecidedBy, r.Reason, r.Message, r.DecidedAt = apply.DecidedBy, apply.Reason, apply.Message, apply.DecidedAt
		if err := s.applySessionEffects(tx, &r, effects); err != nil {
			return err
		}
		if err := persistAllowlist(tx, &r, effects.Allowlist); err != nil {
			return err
		}
		if err := tx.Bucket(bucketRequests).Put([]byte(id), appendRequest(make([]byte, 0, 1024), &r)); err != nil {
			return err
		}
		if err := tx.Bucket(bucketPending).Delete([]byte(id)); err != nil {
			return err
		}
		a := res.Audit
		a.Event, a.RequestID, a.Session, a.Agent, a.Tool = approval.EventDecision, r.ID, r.Session, r.Agent, r.Tool
		a.State, a.Outcome, a.Source, a.DecidedBy, a.Reason = r.State, r.Outcome, r.Source, r.DecidedBy, r.Reason
		a.Summary, a.Fingerprint, a.Rule, a.Time = r.Summary, r.Fingerprint, r.Rule, r.DecidedAt
		if err := s.appendAudit(tx, a); err != nil {
			return err
		}
		out = r
		return nil
	})
	return out, won, err
}

// AddCard records a posted card and returns the request after the write.
func (s *Store) AddCard(ctx context.Context, id string, ref approval.CardRef) (approval.Request, error) {
	var out approval.Request
	err := s.write(ctx, false, func(tx *bolt.Tx) error {
		r, found, err := s.requestIn(tx, id)
		if err != nil {
			return err
		}
		if !found {
			return approval.ErrNotFound
		}
		for _, c := range r.Cards {
			if c == ref {
				out = r
				return nil
			}
		}
		r.Cards = append(r.Cards, ref)
		out = r
		return tx.Bucket(bucketRequests).Put([]byte(id), appendRequest(make([]byte, 0, 1024), &r))
	})
	return out, err
}
