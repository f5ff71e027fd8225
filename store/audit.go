package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
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
	return putJSON(b, auditKey(e.Time, seq), e)
}

// AppendAudit appends one entry.
func (s *Store) AppendAudit(ctx context.Context, e approval.AuditEntry) error {
	return s.write(ctx, false, func(tx *bolt.Tx) error { return s.appendAudit(tx, e) })
}

// Audit returns one page of matching entries: the newest before q.Before, oldest first.
func (s *Store) Audit(_ context.Context, q approval.AuditQuery) (approval.AuditPage, error) {
	if q.Limit <= 0 {
		q.Limit = defaultAuditLimit
	}
	q.Limit = min(q.Limit, maxAuditLimit)
	var page approval.AuditPage
	var skipped []approval.DamagedRecord
	err := s.view("audit", func(tx *bolt.Tx) error {
		var err error
		page, skipped, err = s.auditPage(tx, q, s.auditScan)
		return err
	})
	if err == nil && len(skipped) > 0 {
		err = &approval.SkippedError{Records: skipped}
	}
	return page, err
}

// auditPage walks one page. Damaged entries are skipped and returned: the page is
// complete but for them.
func (s *Store) auditPage(tx *bolt.Tx, q approval.AuditQuery, budget int) (approval.AuditPage, []approval.DamagedRecord, error) {
	var skipped []approval.DamagedRecord
	var page approval.AuditPage
	m := newAuditMatcher(q)
	c := tx.Bucket(bucketAudit).Cursor()
	var lower []byte
	if !q.Since.IsZero() {
		lower = auditKey(q.Since, 0)
	}
	k, v := c.Last()
	if !q.Until.IsZero() {
		k, _ = c.Seek(auditKey(q.Until, 0))
		if k == nil {
			k, v = c.Last()
		} else {
			k, v = c.Prev()
		}
	}
	scanned := 0
	for ; k != nil; k, v = c.Prev() {
		if lower != nil && bytes.Compare(k, lower) < 0 {
			break
		}
		seq := auditKeySeq(k)
		if q.Before != 0 && seq >= q.Before {
			continue
		}
		if scanned == budget {
			page.NextBefore = auditKeySeq(k) + 1
			break
		}
		scanned++
		e, ok, err := m.match(v)
		if err != nil {
			re := &RecordError{Bucket: string(bucketAudit), Key: string(k), Err: err}
			s.noteDamaged(re)
			skipped = append(skipped, approval.DamagedRecord{Bucket: re.Bucket, Key: fmt.Sprintf("%x", k), Error: err.Error()})
			continue
		}
		if !ok {
			continue
		}
		page.Entries = append(page.Entries, e)
		if len(page.Entries) == q.Limit {
			page.NextBefore = e.Seq
			break
		}
	}
	reverse(page.Entries)
	return page, skipped, nil
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

// AuditCounts counts the decision entries per hour by outcome, for every hour that
// overlaps [since, until) (zero: no bound), oldest first: whole hours, also when since or
// until falls inside one. Hours without a decision are left out.
func (s *Store) AuditCounts(_ context.Context, since, until time.Time) ([]approval.HourCount, error) {
	var out []approval.HourCount
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketAudit).Cursor()
		var k, v []byte
		if since.IsZero() {
			k, v = c.First()
		} else {
			k, v = c.Seek(auditKey(since.Truncate(time.Hour), 0))
		}
		var upper []byte
		if !until.IsZero() {
			end := until.Truncate(time.Hour)
			if end.Before(until) {
				end = end.Add(time.Hour)
			}
			upper = auditKey(end, 0)
		}
		for ; k != nil; k, v = c.Next() {
			if upper != nil && bytes.Compare(k, upper) >= 0 {
				break
			}
			var e approval.AuditEntry
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("corrupt audit entry: %w", err)
			}
			if e.Event != approval.EventDecision || e.Outcome == "" {
				continue
			}
			hour := e.Time.UTC().Truncate(time.Hour)
			if n := len(out); n == 0 || !out[n-1].Hour.Equal(hour) {
				out = append(out, approval.HourCount{Hour: hour, Outcomes: map[approval.Outcome]int{}})
			}
			out[len(out)-1].Outcomes[e.Outcome]++
		}
		return nil
	})
	return out, err
}
