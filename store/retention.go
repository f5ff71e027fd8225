package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"time"

	bolt "go.etcd.io/bbolt"
)

// pruneChunk bounds one prune transaction, so a group commit that carries one is never
// held up for long.
const pruneChunk = 1000

// Prune applies retention to the audit trail, oldest entries first: entries older than
// before (zero: no age limit) and beyond the newest maxEntries (0: no cap) are removed
// with their indexes and counters, and so is every decided request whose entry is
// removed. A request still pending is kept, however old (it goes when an entry of it
// goes after it is decided). Grants, denials, sessions and the allowlist are never
// pruned. It returns how many audit entries and requests were removed.
//
// Its cost is proportional to what it removes: the trail's length is its sequence minus
// the entries ever removed (kept in meta), never a walk.
func (s *Store) Prune(ctx context.Context, before time.Time, maxEntries int) (audit, requests int, err error) {
	for {
		var a, r int
		a, r, err = s.pruneChunk(ctx, before, maxEntries)
		audit += a
		requests += r
		if err != nil || a < pruneChunk {
			return audit, requests, err
		}
	}
}

func (s *Store) pruneChunk(ctx context.Context, before time.Time, maxEntries int) (audit, requests int, err error) {
	err = s.write(ctx, false, func(tx *bolt.Tx) error {
		var err error
		audit, requests, err = pruneOldest(tx, before, maxEntries, pruneChunk)
		return err
	})
	return audit, requests, err
}

// pruneOldest removes at most limit of the oldest entries that retention drops (older
// than before, beyond the newest maxEntries), with their indexes, counters and decided
// requests.
func pruneOldest(tx *bolt.Tx, before time.Time, maxEntries, limit int) (audit, requests int, err error) {
	b := tx.Bucket(bucketAudit)
	excess := 0
	if maxEntries > 0 {
		if n := auditLen(tx); n > uint64(maxEntries) {
			excess = int(min(n-uint64(maxEntries), uint64(limit)))
		}
	}
	var old []byte
	if !before.IsZero() {
		old = auditKey(before, 0)
	}
	if excess == 0 && old == nil {
		return 0, 0, nil
	}
	type doomed struct{ key, value []byte }
	var gone []doomed
	c := b.Cursor()
	for k, v := c.First(); k != nil && len(gone) < limit; k, v = c.Next() {
		if !(old != nil && bytes.Compare(k, old) < 0) && len(gone) >= excess {
			break
		}
		gone = append(gone, doomed{bytes.Clone(k), bytes.Clone(v)})
	}
	if len(gone) == 0 {
		return 0, 0, nil
	}
	requestsB, pendingB := tx.Bucket(bucketRequests), tx.Bucket(bucketPending)
	for _, d := range gone {
		f, err := decodeIndexed(d.value)
		if err != nil {
			// Too damaged to read its names: it goes anyway (retention would drop it),
			// with what can be removed without them; the request it named, if any, stays.
			f = indexedFields{}
		}
		if err := unindex(tx, d.key, &f); err != nil {
			return 0, 0, err
		}
		if err := b.Delete(d.key); err != nil {
			return 0, 0, err
		}
		if id := []byte(f.RequestID); len(id) > 0 && pendingB.Get(id) == nil && requestsB.Get(id) != nil {
			if err := requestsB.Delete(id); err != nil {
				return 0, 0, err
			}
			requests++
		}
	}
	if err := dropEmptyPartitions(tx); err != nil {
		return 0, 0, err
	}
	return len(gone), requests, addAuditRemoved(tx, uint64(len(gone)))
}

// retainStep is retention as each group commit applies it: it removes about twice as
// many of the oldest entries as the group appended, while retention drops any. Removing
// as the trail grows, instead of in bulk every few seconds, keeps the pages freed at any
// time few: bbolt writes the list of free pages with every commit, and a bulk prune of
// 10,000 entries left 5,000 free pages to write with every commit until reused (5% of
// the writer's CPU, measured).
func (s *Store) retainStep(tx *bolt.Tx) error {
	if s.retention.MaxEntries <= 0 && s.retention.Age <= 0 {
		return nil
	}
	var before time.Time
	if s.retention.Age > 0 {
		before = s.now().Add(-s.retention.Age)
	}
	_, _, err := pruneOldest(tx, before, s.retention.MaxEntries, min(2*s.appended+16, pruneChunk))
	return err
}

// Retention is what the audit trail keeps (zero: everything).
type Retention struct {
	// MaxEntries keeps the newest entries only (0: no cap).
	MaxEntries int
	// Age keeps the entries younger than this (0: no age limit).
	Age time.Duration
}

// auditLen is how many entries the trail holds.
func auditLen(tx *bolt.Tx) uint64 {
	return tx.Bucket(bucketAudit).Sequence() - auditRemoved(tx)
}

func auditRemoved(tx *bolt.Tx) uint64 {
	if v := tx.Bucket(bucketMeta).Get(keyAuditRemoved); len(v) == 8 {
		return binary.BigEndian.Uint64(v)
	}
	return 0
}

func addAuditRemoved(tx *bolt.Tx, n uint64) error {
	if n == 0 {
		return nil
	}
	var v [8]byte
	binary.BigEndian.PutUint64(v[:], auditRemoved(tx)+n)
	return tx.Bucket(bucketMeta).Put(keyAuditRemoved, v[:])
}
