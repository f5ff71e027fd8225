package store

import (
	"context"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/approvebot/approvebot/core/approval"
)

// Rearm records a pending request's deadline and wait clock as the gate re-read them at
// start after a wall-clock step. A request no longer pending is returned unchanged.
func (s *Store) Rearm(ctx context.Context, id string, expiresAt time.Time, wait *approval.WaitClock) (approval.Request, error) {
	var out approval.Request
	err := s.write(ctx, false, func(tx *bolt.Tx) error {
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
		r.ExpiresAt, r.Wait = expiresAt, wait
		out = r
		return putJSON(tx.Bucket(bucketRequests), []byte(id), r)
	})
	return out, err
}
