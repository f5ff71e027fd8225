package etcd

import (
	"context"
	"encoding/base32"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// idEncoding is gate.NewID's alphabet.
var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// Transaction bounds: etcd refuses a transaction with more than --max-txn-ops (128 by
// default) operations on a side, or a request over --max-request-bytes (1.5 MiB).
const (
	maxTxnOps   = 128
	maxTxnBytes = 1 << 20
	maxBatch    = 256
	// writers is how many transactions one replica has in flight at once: etcd commits
	// concurrent proposals in one raft round, so a few writers multiply throughput, and
	// their groups conflict only on the pending counters (the other keys they write are
	// new, or this writer's own).
	writers = 4
	// maxConflicts bounds how often one group is re-run after another replica changed
	// what it read; each re-run reads the changed keys afresh.
	maxConflicts = 64
)

// errConflict is returned when a group kept conflicting with other replicas' writes.
var errConflict = errors.New("too many conflicting writes from other replicas")

// op is one write: fn runs against a transaction and may run more than once (after a
// conflict), so it must only touch t and its own results.
type op struct {
	fn   func(t *txn) error
	done chan error
	// seqs are the audit seqs the op was given, kept across re-runs so that a re-run
	// after an unknown outcome writes the same entries, not new ones.
	seqs []uint64
	// unknown is set once a commit that held the op failed in a way that may still have
	// committed it: only then may a re-run take what it finds for its own earlier write.
	unknown bool
}

// write queues fn for the next transaction and waits until it is committed or failed.
// Once queued the write is tried whatever ctx says, so a caller never reports a failure
// for something that was committed; the writer gives up after the write timeout.
func (s *Store) write(ctx context.Context, fn func(t *txn) error) error {
	o := &op{fn: fn, done: make(chan error, 1)}
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
	return <-o.done
}

func (s *Store) writer(w int) {
	defer s.writers.Done()
	batch := make([]*op, 0, maxBatch)
	var carry []*op
	for {
		batch = append(batch[:0], carry...)
		carry = carry[:0]
		if len(batch) == 0 {
			first, ok := <-s.ops
			if !ok {
				return
			}
			batch = append(batch, first)
		}
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
		n := s.commit(w, batch, &carry)
		s.writes.Add(uint64(n))
		s.commits.Add(1)
		s.commitNanos.Add(uint64(time.Since(start)))
	}
}

// readVal is what a transaction read of one key: its value and mod revision (0: absent).
type readVal struct {
	val    []byte
	modRev int64
}

// txn is an optimistic transaction on etcd, the shape of a bbolt read-write transaction:
// reads are fetched once and remembered, writes are buffered, and the commit compares
// every key read with the revision it was read at, so the whole group commits only on
// the state its functions saw.
type txn struct {
	s      *Store
	ctx    context.Context
	reads  map[string]readVal
	writes map[string]*bufWrite
	order  []string
	ranges []clientv3.Op
	bytes  int
	undo   []undoRec
	// writer is the writer running the transaction (its shard of the hourly counts).
	writer int
	// cur is the op running, and nseq how many audit seqs it has taken in this run.
	cur  *op
	nseq int
}

type bufWrite struct {
	val   []byte
	del   bool
	lease clientv3.LeaseID
}

type undoRec struct {
	key  string
	prev *bufWrite // nil: the key had no buffered write
	new  bool      // the key was appended to order
}

func newTxn(s *Store, ctx context.Context, reads map[string]readVal) *txn {
	if reads == nil {
		reads = map[string]readVal{}
	}
	return &txn{s: s, ctx: ctx, reads: reads, writes: map[string]*bufWrite{}}
}

// get returns the key's value as this transaction sees it.
func (t *txn) get(key string) ([]byte, bool, error) {
	if w, ok := t.writes[key]; ok {
		if w.del {
			return nil, false, nil
		}
		return w.val, true, nil
	}
	if r, ok := t.reads[key]; ok {
		return r.val, r.modRev != 0, nil
	}
	ctx, cancel := t.s.readCtx(t.ctx)
	defer cancel()
	resp, err := t.s.cli.Get(ctx, key)
	if err != nil {
		return nil, false, fmt.Errorf("%w: %w", errReadFailed, unavailable("reading "+key, err))
	}
	r := readVal{}
	if len(resp.Kvs) == 1 {
		r = readVal{val: resp.Kvs[0].Value, modRev: resp.Kvs[0].ModRevision}
	}
	t.reads[key] = r
	return r.val, r.modRev != 0, nil
}

// keyVal is one key a prefix read found.
type keyVal struct {
	key string
	val []byte
}

// getPrefix returns the keys under prefix as this transaction sees them, in key order.
// Each key found is compared at commit like any read; a key another replica adds under
// the prefix meanwhile is not (the transaction then reads as if it came first).
func (t *txn) getPrefix(prefix string) ([]keyVal, error) {
	ctx, cancel := t.s.readCtx(t.ctx)
	defer cancel()
	resp, err := t.s.cli.Get(ctx, prefix, clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errReadFailed, unavailable("reading "+prefix, err))
	}
	seen := map[string]bool{}
	var out []keyVal
	for _, kv := range resp.Kvs {
		k := string(kv.Key)
		seen[k] = true
		if _, ok := t.reads[k]; !ok {
			t.reads[k] = readVal{val: kv.Value, modRev: kv.ModRevision}
		}
		if v, ok, _ := t.get(k); ok {
			out = append(out, keyVal{k, v})
		}
	}
	for _, k := range t.order {
		if !seen[k] && strings.HasPrefix(k, prefix) && !t.writes[k].del {
			out = append(out, keyVal{k, t.writes[k].val})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out, nil
}

// expectAbsent makes the commit require that key does not exist, without reading it
// first. When an earlier attempt found it (a conflict's fresh read), its value is
// returned: the op can tell its own earlier write from another's.
func (t *txn) expectAbsent(key string) ([]byte, bool) {
	if w, ok := t.writes[key]; ok && !w.del {
		return w.val, true
	}
	if r, ok := t.reads[key]; ok {
		return r.val, r.modRev != 0
	}
	t.reads[key] = readVal{}
	return nil, false
}

// mayHaveCommitted reports whether an earlier commit of the running op may have committed
// it (its outcome is unknown): what the op finds written may then be its own.
func (t *txn) mayHaveCommitted() bool { return t.cur.unknown }

// auditSeq is the op's next audit seq, the same on every run of the op.
func (t *txn) auditSeq(at time.Time) uint64 {
	o := t.cur
	if t.nseq == len(o.seqs) {
		o.seqs = append(o.seqs, t.s.seq.next(at))
	}
	n := o.seqs[t.nseq]
	t.nseq++
	return n
}

// reseq replaces the seq just taken (it collided with another replica's entry).
func (t *txn) reseq(at time.Time) uint64 {
	n := t.s.seq.next(at)
	t.cur.seqs[t.nseq-1] = n
	return n
}

func (t *txn) set(key string, w *bufWrite) {
	prev, had := t.writes[key]
	t.undo = append(t.undo, undoRec{key: key, prev: prev, new: !had})
	if !had {
		t.order = append(t.order, key)
	} else {
		t.bytes -= len(key) + len(prev.val)
	}
	t.writes[key] = w
	t.bytes += len(key) + len(w.val)
}

func (t *txn) put(key string, val []byte) { t.set(key, &bufWrite{val: val}) }

func (t *txn) putLease(key string, val []byte, lease clientv3.LeaseID) {
	t.set(key, &bufWrite{val: val, lease: lease})
}

func (t *txn) del(key string) { t.set(key, &bufWrite{del: true}) }

// delRange deletes [from, to) blindly (retention).
func (t *txn) delRange(from, to string) {
	t.ranges = append(t.ranges, clientv3.OpDelete(from, clientv3.WithRange(to)))
}

type savepoint struct{ undo, ranges int }

func (t *txn) save() savepoint { return savepoint{len(t.undo), len(t.ranges)} }

func (t *txn) rollback(sp savepoint) {
	for i := len(t.undo) - 1; i >= sp.undo; i-- {
		u := t.undo[i]
		cur := t.writes[u.key]
		t.bytes -= len(u.key) + len(cur.val)
		if u.prev == nil {
			delete(t.writes, u.key)
		} else {
			t.writes[u.key] = u.prev
			t.bytes += len(u.key) + len(u.prev.val)
		}
		if u.new {
			t.order = t.order[:len(t.order)-1]
		}
	}
	t.undo = t.undo[:sp.undo]
	t.ranges = t.ranges[:sp.ranges]
}

func (t *txn) full() bool {
	return len(t.reads) > maxTxnOps || len(t.order)+len(t.ranges) > maxTxnOps || t.bytes > maxTxnBytes
}

func (t *txn) empty() bool { return len(t.order) == 0 && len(t.ranges) == 0 }

// commitOps builds the transaction: compares of every key read, the buffered writes, and
// on failure a fresh read of every compared key.
func (t *txn) commitOps() (cmps []clientv3.Cmp, then, els []clientv3.Op, readKeys []string) {
	for k, r := range t.reads {
		readKeys = append(readKeys, k)
		if r.modRev == 0 {
			cmps = append(cmps, clientv3.Compare(clientv3.CreateRevision(k), "=", 0))
		} else {
			cmps = append(cmps, clientv3.Compare(clientv3.ModRevision(k), "=", r.modRev))
		}
		els = append(els, clientv3.OpGet(k))
	}
	for _, k := range t.order {
		w := t.writes[k]
		switch {
		case w.del:
			then = append(then, clientv3.OpDelete(k))
		case w.lease != clientv3.NoLease:
			then = append(then, clientv3.OpPut(k, string(w.val), clientv3.WithLease(w.lease)))
		default:
			then = append(then, clientv3.OpPut(k, string(w.val)))
		}
	}
	then = append(then, t.ranges...)
	return cmps, then, els, readKeys
}

// commit runs a group in one transaction and returns how many ops it finished. An op
// whose function fails gets its error alone; an op that would make the transaction too
// big waits for the next one.
func (s *Store) commit(w int, batch []*op, carry *[]*op) int {
	ctx, cancel := context.WithTimeout(s.bg, s.opts.WriteTimeout)
	defer cancel()
	var reads map[string]readVal
	live := batch
	conflicts := 0
	backoff := 20 * time.Millisecond
	for {
		t := newTxn(s, ctx, reads)
		t.writer = w
		var included, failed []*op
		var errs []error
		var deferred []*op
		var readErr error
		for i, o := range live {
			sp := t.save()
			t.cur, t.nseq = o, 0
			err := o.fn(t)
			if err == nil && t.full() {
				t.rollback(sp)
				if len(included) == 0 {
					err = errors.New("etcd: one write is larger than an etcd transaction allows")
				} else {
					deferred = append(deferred, live[i:]...)
					break
				}
			}
			if err != nil {
				t.rollback(sp)
				if errors.Is(err, errReadFailed) {
					readErr = err
				}
				failed = append(failed, o)
				errs = append(errs, err)
				continue
			}
			included = append(included, o)
		}
		if readErr != nil && ctx.Err() == nil && isTransient(readErr) {
			// etcd could not be read: try the whole group again (the failures were not
			// the ops' own), until the write timeout.
			if !sleepCtx(ctx, backoff) {
				return s.failAll(live, unavailable("writing", ctx.Err()))
			}
			backoff = min(backoff*2, time.Second)
			reads = nil
			continue
		}
		for i, o := range failed {
			o.done <- errs[i]
		}
		if len(included) == 0 {
			*carry = append(*carry, deferred...)
			return len(failed)
		}
		if t.empty() {
			// Only reads: nothing to commit, and nothing another replica did changes
			// what these ops returned.
			for _, o := range included {
				o.done <- nil
			}
			*carry = append(*carry, deferred...)
			return len(failed) + len(included)
		}
		cmps, then, els, readKeys := t.commitOps()
		resp, err := s.cli.Txn(ctx).If(cmps...).Then(then...).Else(els...).Commit()
		if err != nil {
			if ctx.Err() == nil && isTransient(err) {
				// The outcome is unknown (a timeout may still commit): run the group
				// again on fresh reads; an op that finds its own write done reports it
				// as done.
				s.log.Warn("etcd write failed; retrying", "err", err)
				for _, o := range included {
					o.unknown = true
				}
				if !sleepCtx(ctx, backoff) {
					return s.failAll(live, unavailable("writing", err))
				}
				backoff = min(backoff*2, time.Second)
				reads = nil
				live = append(included, deferred...)
				continue
			}
			return s.failAll(append(included, deferred...), unavailable("writing", err))
		}
		s.noteWrite(nil)
		if !resp.Succeeded {
			conflicts++
			s.conflicts.Add(1)
			if conflicts > maxConflicts {
				return s.failAll(append(included, deferred...), unavailable("writing", errConflict))
			}
			reads = refreshed(readKeys, resp)
			live = append(included, deferred...)
			continue
		}
		for _, k := range t.order {
			s.own.note(k, resp.Header.Revision)
		}
		for _, o := range included {
			o.done <- nil
		}
		*carry = append(*carry, deferred...)
		return len(failed) + len(included)
	}
}

func (s *Store) failAll(ops []*op, err error) int {
	s.noteWrite(err)
	for _, o := range ops {
		o.done <- err
	}
	return len(ops)
}

// refreshed is the read set a failed transaction's else branch returned.
func refreshed(readKeys []string, resp *clientv3.TxnResponse) map[string]readVal {
	out := make(map[string]readVal, len(readKeys))
	for i, k := range readKeys {
		r := readVal{}
		if i < len(resp.Responses) {
			if rr := resp.Responses[i].GetResponseRange(); rr != nil && len(rr.Kvs) == 1 {
				r = readVal{val: rr.Kvs[0].Value, modRev: rr.Kvs[0].ModRevision}
			}
		}
		out[k] = r
	}
	return out
}

// errReadFailed marks a read that failed inside a transaction function.
var errReadFailed = errors.New("read failed")

// isTransient reports whether err is etcd being unreachable or without a leader, which a
// retry can outlast, rather than a refusal that would be the same next time.
func isTransient(err error) bool {
	var ee rpctypes.EtcdError
	if errors.As(err, &ee) {
		switch ee {
		case rpctypes.ErrGRPCTooManyOps, rpctypes.ErrGRPCRequestTooLarge, rpctypes.ErrGRPCPermissionDenied,
			rpctypes.ErrGRPCAuthFailed, rpctypes.ErrGRPCInvalidAuthToken:
			return false
		}
	}
	if errors.Is(err, rpctypes.ErrTooManyOps) || errors.Is(err, rpctypes.ErrRequestTooLarge) ||
		errors.Is(err, rpctypes.ErrPermissionDenied) || errors.Is(err, rpctypes.ErrAuthFailed) {
		return false
	}
	return !errors.Is(err, context.Canceled)
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
