package store

import (
	"context"
	"encoding/json"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/approvebot/approvebot/core/approval"
)

// pruneChunk bounds one prune transaction so the writer is never held for long.
const pruneChunk = 2000

// Prune applies audit retention: audit entries older than before (zero: no age limit) and
// beyond the newest maxEntries (0: no cap) are deleted, and so are decided requests created
// before `before`. Pending requests, grants, denials and sessions are never pruned. It
// returns how many audit entries and requests were removed.
func (s *Store) Prune(ctx context.Context, before time.Time, maxEntries int) (audit, requests int, err error) {
	for {
		n, err := s.pruneAudit(ctx, before, maxEntries)
		audit += n
		if err != nil || n < pruneChunk {
			break
		}
	}
	if before.IsZero() {
		return audit, 0, err
	}
	for err == nil {
		var n int
		n, err = s.pruneRequests(ctx, before)
		requests += n
		if n < pruneChunk {
			break
		}
	}
	return audit, requests, err
}

func (s *Store) pruneAudit(ctx context.Context, before time.Time, maxEntries int) (int, error) {
	var removed int
	err := s.write(ctx, false, func(tx *bolt.Tx) error {
		removed = 0
		b := tx.Bucket(bucketAudit)
		excess := 0
		if maxEntries > 0 {
			if n := b.Stats().KeyN; n > maxEntries {
				excess = n - maxEntries
			}
		}
		var limit []byte
		if !before.IsZero() {
			limit = auditKey(before, 0)
		}
		c := b.Cursor()
		var doomed [][]byte
		for k, _ := c.First(); k != nil && len(doomed) < pruneChunk; k, _ = c.Next() {
			old := limit != nil && string(k) < string(limit)
			if !old && len(doomed) >= excess {
				break
			}
			doomed = append(doomed, append([]byte(nil), k...))
		}
		for _, k := range doomed {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		removed = len(doomed)
		return nil
	})
	return removed, err
}

func (s *Store) pruneRequests(ctx context.Context, before time.Time) (int, error) {
	var removed int
	err := s.write(ctx, false, func(tx *bolt.Tx) error {
		removed = 0
		b := tx.Bucket(bucketRequests)
		var doomed [][]byte
		err := b.ForEach(func(k, v []byte) error {
			if len(doomed) >= pruneChunk {
				return nil
			}
			var r approval.Request
			if err := json.Unmarshal(v, &r); err != nil {
				return nil // damaged: kept, and quarantined when it is next read
			}
			if r.State != approval.StatePending && r.CreatedAt.Before(before) {
				doomed = append(doomed, append([]byte(nil), k...))
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range doomed {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		removed = len(doomed)
		return nil
	})
	return removed, err
}
