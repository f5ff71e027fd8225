package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/approvebot/approvebot/core/approval"
)

// The per-hour decision counters: key = the hour's start (Unix seconds, big-endian) then
// the outcome, value = how many decision entries of that outcome the trail holds for
// that hour (big-endian uint64). They change in the transaction of the entry they count,
// and retention takes them down with the entries it removes.

func hourKey(hour int64, outcome approval.Outcome) []byte {
	k := make([]byte, 8, 8+len(outcome))
	binary.BigEndian.PutUint64(k, uint64(hour))
	return append(k, outcome...)
}

// countDecision adds delta to the counter of the entry stored under key, if it is a
// decision. The hour is the key's time, the entry's time as the trail orders it.
func countDecision(tx *bolt.Tx, key []byte, f *indexedFields, delta int64) error {
	if f.Event != approval.EventDecision || f.Outcome == "" {
		return nil
	}
	sec := int64(binary.BigEndian.Uint64(key[:8])) / int64(time.Second)
	k := hourKey(sec-sec%3600, f.Outcome)
	b := tx.Bucket(bucketAuditHours)
	var n int64
	if v := b.Get(k); len(v) == 8 {
		n = int64(binary.BigEndian.Uint64(v))
	}
	n += delta
	if n <= 0 {
		return b.Delete(k)
	}
	var v [8]byte
	binary.BigEndian.PutUint64(v[:], uint64(n))
	return b.Put(k, v[:])
}

// AuditCounts counts the decision entries per hour by outcome, for every hour that
// overlaps [since, until) (zero: no bound), oldest first: whole hours, also when since or
// until falls inside one. Hours without a decision are left out.
func (s *Store) AuditCounts(_ context.Context, since, until time.Time) ([]approval.HourCount, error) {
	var out []approval.HourCount
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketAuditHours).Cursor()
		var k, v []byte
		if since.IsZero() {
			k, v = c.First()
		} else {
			k, v = c.Seek(hourKey(since.Truncate(time.Hour).Unix(), ""))
		}
		end := int64(-1)
		if !until.IsZero() {
			end = until.Unix()
			if until.Truncate(time.Second).Before(until) {
				end++ // an until inside a second still overlaps that second's hour
			}
		}
		for ; k != nil; k, v = c.Next() {
			if len(k) <= 8 || len(v) != 8 {
				return fmt.Errorf("corrupt audit counter %x", k)
			}
			hour := int64(binary.BigEndian.Uint64(k[:8]))
			if end >= 0 && hour >= end {
				break
			}
			t := time.Unix(hour, 0).UTC()
			if n := len(out); n == 0 || !out[n-1].Hour.Equal(t) {
				out = append(out, approval.HourCount{Hour: t, Outcomes: map[approval.Outcome]int{}})
			}
			out[len(out)-1].Outcomes[approval.Outcome(k[8:])] = int(binary.BigEndian.Uint64(v))
		}
		return nil
	})
	return out, err
}
