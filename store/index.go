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
// one of them visits only its matches.
//
// The request index is written in the transaction of its entry (request ids start with
// their time, so its keys are appended). The session and agent indexes are deferred
// (deferred.go): keyed by name first, every session an entry lands in would have a page
// of its own written with it, which cost about one page written per request with many
// sessions at once (≈ 20 µs of the writer per request, measured).
//
// audit_seq maps a seq to its audit key for the cursor: every seqMarkEvery-th entry (the
// entries between two marks are in seq order, so the walk from the mark before finds the
// rest), and every entry written before version 3, whose keys are not all in seq order.

// auditIndex is one secondary index and the field it indexes.
type auditIndex struct {
	bucket []byte
	field  func(e *indexedFields) string
	// deferred indexes are written in batches behind a watermark.
	deferred bool
}

var auditIndexes = []auditIndex{
	{bucketAuditRequest, func(e *indexedFields) string { return e.RequestID }, false},
	{bucketAuditSession, func(e *indexedFields) string { return e.Session }, true},
	{bucketAuditAgent, func(e *indexedFields) string { return e.Agent }, true},
}

const (
	// seqMarkEvery is how often audit_seq marks a seq.
	seqMarkEvery = 256
	// defaultDeferredBatch is the tail length that has the deferred indexes written.
	defaultDeferredBatch = 2048
	// maxDeferredBuild bounds one batch, so one group commit is never held up for long.
	maxDeferredBuild = 8192
)

// indexedFields are the parts of an entry its indexes and counters are made of: what
// retention, the deferred indexes and the migration decode, instead of the whole entry.
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

// decodeIndexed reads an entry's indexed fields. An entry is a flat JSON object written
// by encoding/json, so each field's key appears once and only as a key (a quote inside a
// string value is escaped, so `"session":"` cannot occur within one): the fields are
// found by their key and their strings decoded alone, without decoding the whole entry.
func decodeIndexed(raw []byte) (indexedFields, error) {
	var f indexedFields
	if len(raw) < 2 || raw[0] != '{' || raw[len(raw)-1] != '}' {
		return f, fmt.Errorf("corrupt audit entry: not a JSON object: %.40q", raw)
	}
	for _, fld := range []struct {
		key []byte
		dst *string
	}{
		{keyEvent, &f.Event}, {keyRequestID, &f.RequestID}, {keySession, &f.Session}, {keyAgent, &f.Agent},
		{keyOutcome, (*string)(&f.Outcome)},
	} {
		i := bytes.Index(raw, fld.key)
		if i < 0 {
			continue
		}
		v, err := jsonString(raw[i+len(fld.key)-1:])
		if err != nil {
			return f, fmt.Errorf("corrupt audit entry: field %s: %w", fld.key, err)
		}
		*fld.dst = v
	}
	return f, nil
}

var (
	keyEvent     = []byte(`"event":"`)
	keyRequestID = []byte(`"request_id":"`)
	keySession   = []byte(`"session":"`)
	keyAgent     = []byte(`"agent":"`)
	keyOutcome   = []byte(`"outcome":"`)
)

// jsonString decodes the JSON string b starts with.
func jsonString(b []byte) (string, error) {
	for i := 1; i < len(b); i++ {
		switch b[i] {
		case '"':
			return string(b[1:i]), nil
		case '\\':
			// An escape: let encoding/json find the end and decode it.
			var s string
			dec := json.NewDecoder(bytes.NewReader(b))
			if err := dec.Decode(&s); err != nil {
				return "", err
			}
			return s, nil
		}
	}
	return "", errors.New("unterminated string")
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

func putIndex(tx *bolt.Tx, ix auditIndex, key []byte, f *indexedFields) error {
	name := ix.field(f)
	if name == "" {
		return nil
	}
	b := tx.Bucket(ix.bucket)
	b.FillPercent = appendFill
	return b.Put(append(indexPrefix(name), key...), nil)
}

// index writes what is kept in the entry's own transaction: its seq mark, the request
// index and the per-hour counter.
func index(tx *bolt.Tx, key []byte, f *indexedFields) error {
	if auditKeySeq(key)%seqMarkEvery == 0 {
		if err := putSeq(tx, key); err != nil {
			return err
		}
	}
	for _, ix := range auditIndexes {
		if !ix.deferred {
			if err := putIndex(tx, ix, key, f); err != nil {
				return err
			}
		}
	}
	return countDecision(tx, key, f, 1)
}

func putSeq(tx *bolt.Tx, key []byte) error {
	b := tx.Bucket(bucketAuditSeq)
	b.FillPercent = appendFill
	return b.Put(key[8:16:16], key)
}

// unindex removes everything written for the entry stored under key (deleting what a
// not yet indexed entry lacks is a no-op).
func unindex(tx *bolt.Tx, key []byte, f *indexedFields) error {
	if err := tx.Bucket(bucketAuditSeq).Delete(key[8:16]); err != nil {
		return err
	}
	for _, ix := range auditIndexes {
		if name := ix.field(f); name != "" && !ix.deferred {
			if err := tx.Bucket(ix.bucket).Delete(append(indexPrefix(name), key...)); err != nil {
				return err
			}
		}
	}
	if err := unindexDeferred(tx, key, f); err != nil {
		return err
	}
	return countDecision(tx, key, f, -1)
}

// legacySeq is the last seq the version-3 migration wrote to audit_seq (0: none): every
// entry up to it has its own key there.
func legacySeq(tx *bolt.Tx) uint64 {
	if v := tx.Bucket(bucketMeta).Get(keyAuditLegacySeq); len(v) == 8 {
		return binary.BigEndian.Uint64(v)
	}
	return 0
}

// errIndexMissing means an index names an entry the trail does not hold: indexes and
// entries are written and removed in the same transactions, so this is damage.
var errIndexMissing = errors.New("audit index names an entry the trail does not hold")

// auditWalk visits the trail's entries newest first: all of them, or those one index
// names. It yields audit keys and values within [lower, upper).
type auditWalk struct {
	audit *bolt.Bucket
	pc    *bolt.Cursor // the trail
	lower []byte
	// A request index walk.
	ix     *bolt.Cursor
	prefix []byte
	// A deferred index walk.
	def *deferredWalk
}

func newAuditWalk(tx *bolt.Tx, q *approval.AuditQuery) *auditWalk {
	w := &auditWalk{audit: tx.Bucket(bucketAudit)}
	w.pc = w.audit.Cursor()
	if !q.Since.IsZero() {
		w.lower = auditKey(q.Since, 0)
	}
	for i, name := range []string{q.RequestID, q.Session, q.Agent} {
		if name == "" {
			continue
		}
		ix := auditIndexes[i]
		if ix.deferred {
			w.def = newDeferredWalk(tx, ix, name)
		} else {
			w.ix, w.prefix = tx.Bucket(ix.bucket).Cursor(), indexPrefix(name)
		}
		break
	}
	return w
}

// seekBefore positions c at the last key before target (nil: the last key).
func seekBefore(c *bolt.Cursor, target []byte) ([]byte, []byte) {
	if target == nil {
		return c.Last()
	}
	if k, _ := c.Seek(target); k == nil {
		return c.Last()
	}
	return c.Prev()
}

// afterName is a seek target after every key that starts with prefix and has an audit
// key after it.
func afterName(prefix []byte) []byte {
	return append(bytes.Clone(prefix), bytes.Repeat([]byte{0xff}, 17)...)
}

// first positions the walk at the newest entry before upper (nil: the newest of all).
func (w *auditWalk) first(upper []byte) (key, value []byte, err error) {
	return w.skipDangling(w.firstRaw(upper))
}

func (w *auditWalk) prev() (key, value []byte, err error) {
	return w.skipDangling(w.prevRaw())
}

// skipDangling passes over index keys whose entry is gone. Indexes and entries change in
// the same transactions, so one only dangles where retention removed an entry too damaged
// to read its names (CheckIndexes reports it); a query answers what is there.
func (w *auditWalk) skipDangling(k, v []byte, err error) ([]byte, []byte, error) {
	for errors.Is(err, errIndexMissing) {
		k, v, err = w.prevRaw()
	}
	return k, v, err
}

func (w *auditWalk) firstRaw(upper []byte) (key, value []byte, err error) {
	switch {
	case w.def != nil:
		return w.def.first(w, upper)
	case w.ix != nil:
		target := afterName(w.prefix)
		if upper != nil {
			target = append(bytes.Clone(w.prefix), upper...)
		}
		return w.indexAt(seekBefore(w.ix, target))
	}
	return w.trailAt(seekBefore(w.pc, upper))
}

func (w *auditWalk) prevRaw() (key, value []byte, err error) {
	switch {
	case w.def != nil:
		return w.def.prev(w)
	case w.ix != nil:
		return w.indexAt(w.ix.Prev())
	}
	return w.trailAt(w.pc.Prev())
}

func (w *auditWalk) inRange(k []byte) bool {
	return k != nil && (w.lower == nil || bytes.Compare(k, w.lower) >= 0)
}

func (w *auditWalk) trailAt(k, v []byte) ([]byte, []byte, error) {
	if !w.inRange(k) {
		return nil, nil, nil
	}
	return k, v, nil
}

// entry resolves an index key's audit key (the part after prefix) to the entry.
func (w *auditWalk) entry(k, prefix []byte) ([]byte, []byte, error) {
	if k == nil || len(k) != len(prefix)+16 || !bytes.HasPrefix(k, prefix) {
		return nil, nil, nil
	}
	k = k[len(prefix):]
	if !w.inRange(k) {
		return nil, nil, nil
	}
	v := w.audit.Get(k)
	if v == nil {
		return nil, nil, fmt.Errorf("%w: %x", errIndexMissing, k)
	}
	return k, v, nil
}

func (w *auditWalk) indexAt(k, _ []byte) ([]byte, []byte, error) { return w.entry(k, w.prefix) }

// seekSeq returns the audit key of the entry with seq, or when it is gone, of the first
// entry after it in the trail (nil: none).
func seekSeq(tx *bolt.Tx, seq uint64) []byte {
	c := tx.Bucket(bucketAuditSeq).Cursor()
	k, v := c.Seek(seqKey(seq))
	if k != nil && binary.BigEndian.Uint64(k) == seq {
		return v
	}
	// From the mark before it, the trail is in seq order.
	var mk, mv []byte
	if k == nil {
		mk, mv = c.Last()
	} else {
		mk, mv = c.Prev()
	}
	pc := tx.Bucket(bucketAudit).Cursor()
	var ak []byte
	if mk != nil {
		ak, _ = pc.Seek(mv)
	} else {
		ak, _ = pc.First()
	}
	for ; ak != nil; ak, _ = pc.Next() {
		if auditKeySeq(ak) >= seq {
			return ak
		}
	}
	return nil
}

// upperBound is the exclusive upper audit key of a query: the older of Until and the
// cursor entry (nil: none).
func upperBound(tx *bolt.Tx, q *approval.AuditQuery) []byte {
	var upper []byte
	if !q.Until.IsZero() {
		upper = auditKey(q.Until, 0)
	}
	if q.Before != 0 {
		if key := seekSeq(tx, q.Before); key != nil && (upper == nil || bytes.Compare(key, upper) < 0) {
			upper = bytes.Clone(key)
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
	legacy := legacySeq(tx)
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
		if seq := auditKeySeq(k); seq <= legacy || seq%seqMarkEvery == 0 {
			want[string(bucketAuditSeq)][string(k[8:])] = true
		}
		part := partitionOf(tx, k)
		for _, ix := range auditIndexes {
			name := ix.field(&f)
			switch {
			case name == "":
			case !ix.deferred:
				want[string(ix.bucket)][string(append(indexPrefix(name), k...))] = true
			case part != nil:
				want[string(ix.bucket)][string(deferredKey(part, name, k))] = true
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
	first, _ := tx.Bucket(bucketAudit).Cursor().First()
	if pk, _ := tx.Bucket(bucketAuditParts).Cursor().First(); pk != nil && (first == nil || bytes.Compare(pk, first) < 0) {
		return fmt.Errorf("audit partition ending at %x outlived its entries", pk)
	}
	if got := auditLen(tx); got != n {
		return fmt.Errorf("the trail's length is kept as %d, it holds %d", got, n)
	}
	return nil
}
