package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/approvebot/approvebot/core/approval"
)

// The audit trail's secondary indexes. Each maps a name (a request id, a session, an
// agent) to the audit keys of the entries carrying it: the key is the name with its
// length in front, then the 16-byte audit key, and the value is empty. The entries of
// one name are contiguous and in trail order, and no name's keys can be taken for
// another's (a session "a" is not a prefix of "ab", nor of "a\x00b"). A query filtered by
// one of them visits only its matches; audit_seq maps a seq to its audit key, for the
// cursor.

// auditIndex is one secondary index and the field it indexes.
type auditIndex struct {
	bucket []byte
	field  func(e *indexedFields) string
}

var auditIndexes = []auditIndex{
	{bucketAuditRequest, func(e *indexedFields) string { return e.RequestID }},
	{bucketAuditSession, func(e *indexedFields) string { return e.Session }},
	{bucketAuditAgent, func(e *indexedFields) string { return e.Agent }},
}

// indexedFields are the parts of an entry its indexes and counters are made of: what
// retention and the migration decode, instead of the whole entry.
type indexedFields struct {
	Event     string           `json:"event"`
	RequestID string           `json:"request_id"`
	Session   string           `json:"session"`
	Agent     string           `json:"agent"`
	Outcome   approval.Outcome `json:"outcome"`
}

func fieldsOf(e *approval.AuditEntry) indexedFields {
	return indexedFields{Event: e.Event, RequestID: e.RequestID, Session: e.Session, Agent: e.Agent, Outcome: e.Outcome}
}

func decodeIndexed(raw []byte) (indexedFields, error) {
	var f indexedFields
	if err := json.Unmarshal(raw, &f); err != nil {
		return f, fmt.Errorf("corrupt audit entry: %w", err)
	}
	return f, nil
}

// indexPrefix is a name as it starts its index keys: its length (uvarint), then it.
func indexPrefix(name string) []byte {
	p := binary.AppendUvarint(make([]byte, 0, binary.MaxVarintLen64+len(name)+16), uint64(len(name)))
	return append(p, name...)
}

func seqKey(seq uint64) []byte {
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], seq)
	return k[:]
}

// index writes the indexes and counters of the entry stored under key.
func index(tx *bolt.Tx, key []byte, f *indexedFields) error {
	b := tx.Bucket(bucketAuditSeq)
	b.FillPercent = appendFill
	if err := b.Put(key[8:16:16], key); err != nil {
		return err
	}
	for _, ix := range auditIndexes {
		name := ix.field(f)
		if name == "" {
			continue
		}
		b := tx.Bucket(ix.bucket)
		b.FillPercent = appendFill
		if err := b.Put(append(indexPrefix(name), key...), nil); err != nil {
			return err
		}
	}
	return countDecision(tx, key, f, 1)
}

// unindex removes what index wrote for the entry stored under key.
func unindex(tx *bolt.Tx, key []byte, f *indexedFields) error {
	if err := tx.Bucket(bucketAuditSeq).Delete(key[8:16]); err != nil {
		return err
	}
	for _, ix := range auditIndexes {
		if name := ix.field(f); name != "" {
			if err := tx.Bucket(ix.bucket).Delete(append(indexPrefix(name), key...)); err != nil {
				return err
			}
		}
	}
	return countDecision(tx, key, f, -1)
}

// errIndexMissing means an index names an entry the trail does not hold: the indexes are
// written with their entry in one transaction, so this is damage, never a race.
var errIndexMissing = errors.New("audit index names an entry the trail does not hold")

// auditWalk visits the trail's entries newest first: all of them, or those one index
// names. It yields audit keys and values within [lower, upper).
type auditWalk struct {
	audit  *bolt.Bucket
	c      *bolt.Cursor
	prefix []byte // nil: the trail itself
	lower  []byte
}

func newAuditWalk(tx *bolt.Tx, q *approval.AuditQuery) *auditWalk {
	w := &auditWalk{audit: tx.Bucket(bucketAudit)}
	for _, ix := range []struct {
		bucket []byte
		name   string
	}{{bucketAuditRequest, q.RequestID}, {bucketAuditSession, q.Session}, {bucketAuditAgent, q.Agent}} {
		if ix.name != "" {
			w.c, w.prefix = tx.Bucket(ix.bucket).Cursor(), indexPrefix(ix.name)
			break
		}
	}
	if w.c == nil {
		w.c = w.audit.Cursor()
	}
	if !q.Since.IsZero() {
		w.lower = auditKey(q.Since, 0)
	}
	return w
}

// first positions the walk at the newest entry before upper (nil: the newest of all).
func (w *auditWalk) first(upper []byte) (key, value []byte, err error) {
	target := append(bytes.Clone(w.prefix), upper...)
	if upper == nil {
		target = append(target, bytes.Repeat([]byte{0xff}, 17)...)
	}
	var k, v []byte
	if sk, _ := w.c.Seek(target); sk == nil {
		k, v = w.c.Last()
	} else {
		k, v = w.c.Prev()
	}
	return w.at(k, v)
}

func (w *auditWalk) prev() (key, value []byte, err error) {
	k, v := w.c.Prev()
	return w.at(k, v)
}

func (w *auditWalk) at(k, v []byte) (key, value []byte, err error) {
	if k == nil {
		return nil, nil, nil
	}
	if w.prefix != nil {
		if len(k) != len(w.prefix)+16 || !bytes.HasPrefix(k, w.prefix) {
			return nil, nil, nil
		}
		k = k[len(w.prefix):]
	}
	if w.lower != nil && bytes.Compare(k, w.lower) < 0 {
		return nil, nil, nil
	}
	if w.prefix != nil {
		if v = w.audit.Get(k); v == nil {
			return nil, nil, fmt.Errorf("%w: %x", errIndexMissing, k)
		}
	}
	return k, v, nil
}

// upperBound is the exclusive upper audit key of a query: the older of Until and the
// cursor entry (nil: none).
func upperBound(tx *bolt.Tx, q *approval.AuditQuery) []byte {
	var upper []byte
	if !q.Until.IsZero() {
		upper = auditKey(q.Until, 0)
	}
	if q.Before != 0 {
		// The cursor's own entry, or when it is gone (pruned), the next one after it.
		if _, key := tx.Bucket(bucketAuditSeq).Cursor().Seek(seqKey(q.Before)); key != nil {
			if upper == nil || bytes.Compare(key, upper) < 0 {
				upper = key
			}
		}
	}
	return upper
}

// CheckIndexes verifies that the audit indexes, the per-hour counters and the trail's
// length name exactly the entries the trail holds. It walks everything: for tests and
// offline tools, not probes.
func (s *Store) CheckIndexes() error {
	return s.db.View(checkIndexes)
}

func checkIndexes(tx *bolt.Tx) error {
	want := map[string]map[string]bool{} // bucket → keys
	for _, b := range [][]byte{bucketAuditSeq, bucketAuditRequest, bucketAuditSession, bucketAuditAgent} {
		want[string(b)] = map[string]bool{}
	}
	hours := map[string]uint64{}
	var n uint64
	err := tx.Bucket(bucketAudit).ForEach(func(k, v []byte) error {
		if len(k) != 16 {
			return fmt.Errorf("audit key %x is not 16 bytes", k)
		}
		f, err := decodeIndexed(v)
		if err != nil {
			return err
		}
		n++
		want[string(bucketAuditSeq)][string(k[8:])] = true
		for _, ix := range auditIndexes {
			if name := ix.field(&f); name != "" {
				want[string(ix.bucket)][string(append(indexPrefix(name), k...))] = true
			}
		}
		if f.Event == approval.EventDecision && f.Outcome != "" {
			sec := int64(binary.BigEndian.Uint64(k[:8])) / 1e9
			hours[string(hourKey(sec-sec%3600, f.Outcome))]++
		}
		return nil
	})
	if err != nil {
		return err
	}
	for name, keys := range want {
		err := tx.Bucket([]byte(name)).ForEach(func(k, v []byte) error {
			if !keys[string(k)] {
				return fmt.Errorf("%s holds %x, which no audit entry needs", name, k)
			}
			if name == string(bucketAuditSeq) && (len(k) != 8 || binary.BigEndian.Uint64(v[8:16]) != binary.BigEndian.Uint64(k)) {
				return fmt.Errorf("%s maps %x to %x", name, k, v)
			}
			delete(keys, string(k))
			return nil
		})
		if err != nil {
			return err
		}
		for k := range keys {
			return fmt.Errorf("%s lacks %x", name, k)
		}
	}
	err = tx.Bucket(bucketAuditHours).ForEach(func(k, v []byte) error {
		if len(v) != 8 || binary.BigEndian.Uint64(v) != hours[string(k)] {
			return fmt.Errorf("audit counter %x is %x, the trail holds %d", k, v, hours[string(k)])
		}
		delete(hours, string(k))
		return nil
	})
	if err != nil {
		return err
	}
	for k, c := range hours {
		return fmt.Errorf("audit counter %x missing (the trail holds %d)", k, c)
	}
	if got := auditLen(tx); got != n {
		return fmt.Errorf("the trail's length is kept as %d, it holds %d", got, n)
	}
	return nil
}
