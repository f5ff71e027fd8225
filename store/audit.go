package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/approvebot/approvebot/core/approval"
)

// Audit page bounds.
const (
	defaultAuditLimit = 100
	maxAuditLimit     = 10000
	// defaultAuditScan bounds the entries one query examines, so a filter that matches
	// rarely cannot make one request walk the whole trail; the page's NextBefore resumes.
	defaultAuditScan = 100_000
)

// auditKey is time-ordered: 8 bytes of big-endian Unix nanoseconds, then the bucket's
// sequence, so two entries in the same nanosecond keep their order.
func auditKey(t time.Time, seq uint64) []byte {
	var k [16]byte
	binary.BigEndian.PutUint64(k[:8], uint64(t.UnixNano()))
	binary.BigEndian.PutUint64(k[8:], seq)
	return k[:]
}

func auditKeySeq(k []byte) uint64 { return binary.BigEndian.Uint64(k[8:16]) }

// appendAudit appends e with the next sequence number. An entry's time never goes back:
// one earlier than the newest entry's (a decision timed before the write queued behind
// another, or the clock stepped back) takes the newest entry's time, so the trail's time
// order, its key order and its sequence order are one order.
func (s *Store) appendAudit(tx *bolt.Tx, e approval.AuditEntry) error {
	b := tx.Bucket(bucketAudit)
	b.FillPercent = appendFill
	seq, err := b.NextSequence()
	if err != nil {
		return err
	}
	if e.Time.IsZero() {
		e.Time = s.now().UTC()
	}
	if last, _ := b.Cursor().Last(); len(last) == 16 {
		if newest := int64(binary.BigEndian.Uint64(last[:8])); e.Time.UnixNano() < newest {
			e.Time = time.Unix(0, newest).UTC()
		}
	}
	e.Seq = seq
	s.appended++
	key := auditKey(e.Time, seq)
	if err := b.Put(key, appendAuditEntry(make([]byte, 0, 512), &e)); err != nil {
		return err
	}
	f := fieldsOf(&e)
	return index(tx, key, &f)
}

// AppendAudit appends one entry.
func (s *Store) AppendAudit(ctx context.Context, e approval.AuditEntry) error {
	return s.write(ctx, false, func(tx *bolt.Tx) error { return s.appendAudit(tx, e) })
}

// Audit returns one page of matching entries: the newest before q.Before, oldest first. An
// entry that does not decode is skipped and named in the page's Damaged.
func (s *Store) Audit(_ context.Context, q approval.AuditQuery) (approval.AuditPage, error) {
	if q.Limit <= 0 {
		q.Limit = defaultAuditLimit
	}
	q.Limit = min(q.Limit, maxAuditLimit)
	var page approval.AuditPage
	err := s.view("audit", func(tx *bolt.Tx) error {
		var err error
		page, err = auditPage(tx, q, s.auditScan)
		return err
	})
	for _, d := range page.Damaged {
		s.noteDamaged(&RecordError{Bucket: d.Bucket, Key: d.Key, Err: errors.New(d.Error)})
	}
	return page, err
}

func auditPage(tx *bolt.Tx, q approval.AuditQuery, budget int) (approval.AuditPage, error) {
	var page approval.AuditPage
	m := newAuditMatcher(q)
	w := newAuditWalk(tx, &q)
	var last uint64 // the seq of the last entry examined
	scanned := 0
	k, v, err := w.first(upperBound(tx, &q))
	for ; k != nil && err == nil; k, v, err = w.prev() {
		if scanned == budget || len(page.Entries) == q.Limit {
			// Stopped early: the next page starts after the last entry examined.
			page.NextBefore = last
			break
		}
		scanned++
		last = auditKeySeq(k)
		e, ok, merr := m.match(v)
		if merr != nil {
			page.Damaged = append(page.Damaged, approval.DamagedRecord{Bucket: string(bucketAudit), Key: fmt.Sprintf("%x", k), Error: merr.Error()})
			continue
		}
		if ok {
			page.Entries = append(page.Entries, e)
		}
	}
	reverse(page.Entries)
	return page, err
}

// auditMatcher applies a query's field filters to stored entries. Before decoding an
// entry it looks for each filtered field's exact JSON text in the raw value: a value
// without it cannot match, so most entries a filter rejects are never decoded.
type auditMatcher struct {
	q       approval.AuditQuery
	needles [][]byte
}

func newAuditMatcher(q approval.AuditQuery) *auditMatcher {
	m := &auditMatcher{q: q}
	for _, f := range []struct{ name, val string }{
		{"request_id", q.RequestID}, {"session", q.Session}, {"agent", q.Agent},
		{"tool", q.Tool}, {"outcome", string(q.Outcome)}, {"source", string(q.Source)},
	} {
		if f.val == "" {
			continue
		}
		val, _ := json.Marshal(f.val) // the encoding putJSON gave the stored entry
		m.needles = append(m.needles, append([]byte(`"`+f.name+`":`), val...))
	}
	return m
}

func (m *auditMatcher) match(raw []byte) (approval.AuditEntry, bool, error) {
	var e approval.AuditEntry
	for _, n := range m.needles {
		if !bytes.Contains(raw, n) {
			return e, false, nil
		}
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return e, false, fmt.Errorf("corrupt audit entry: %w", err)
	}
	q := m.q
	ok := (q.RequestID == "" || e.RequestID == q.RequestID) &&
		(q.Session == "" || e.Session == q.Session) &&
		(q.Agent == "" || e.Agent == q.Agent) &&
		(q.Tool == "" || e.Tool == q.Tool) &&
		(q.Outcome == "" || e.Outcome == q.Outcome) &&
		(q.Source == "" || e.Source == q.Source)
	return e, ok, nil
}

func reverse[T any](s []T) {
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
}
