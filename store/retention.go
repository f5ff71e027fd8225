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
		audit, requests = 0, 0
		b := tx.Bucket(bucketAudit)
		excess := 0
		if maxEntries > 0 {
			if n := auditLen(tx); n > uint64(maxEntries) {
				excess = int(min(n-uint64(maxEntries), pruneChunk))
			}
		}
		var limit []byte
		if !before.IsZero() {
			limit = auditKey(before, 0)
		}
		type doomed struct{ key, value []byte }
		var gone []doomed
		c := b.Cursor()
		for k, v := c.First(); k != nil && len(gone) < pruneChunk; k, v = c.Next() {
			old := limit != nil && bytes.Compare(k, limit) < 0
			if !old && len(gone) >= excess {
				break
			}
			gone = append(gone, doomed{bytes.Clone(k), bytes.Clone(v)})
		}
		requestsB, pendingB := tx.Bucket(bucketRequests), tx.Bucket(bucketPending)
		for _, d := range gone {
			f, err := decodeIndexed(d.value)
			if err != nil {
				return err
			}
			if err := unindex(tx, d.key, &f); err != nil {
				return err
			}
			if err := b.Delete(d.key); err != nil {
				return err
			}
			if id := []byte(f.RequestID); len(id) > 0 && pendingB.Get(id) == nil && requestsB.Get(id) != nil {
				if err := requestsB.Delete(id); err != nil {
					return err
				}
				requests++
			}
		}
		audit = len(gone)
		if err := dropEmptyPartitions(tx); err != nil {
			return err
		}
		return addAuditRemoved(tx, uint64(len(gone)))
	})
	return audit, requests, err
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
