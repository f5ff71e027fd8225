package etcd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/approvebot/approvebot/core/approval"
)

// Audit page bounds, as in the bbolt store.
const (
	defaultAuditLimit = 100
	maxAuditLimit     = 10000
	// defaultAuditScan bounds the entries one query examines; the page's NextBefore
	// resumes where it stopped.
	defaultAuditScan = 100_000
	// auditChunk is how many keys one range read returns.
	auditChunk = 500
	// untilMargin covers the seqs handed out ahead of their entry's time in a burst: a
	// query bounded by Until reads this much further and filters on the entry's time.
	untilMargin = time.Second
)

// seqGen hands out audit seqs: the entry's time in nanoseconds with the low byte this
// replica's node number, strictly increasing on one replica. The seqs of all replicas
// are in time order (to the precision of their clocks), so key order is time order, and
// a collision of two replicas that drew the same node is caught by the commit's compare.
type seqGen struct {
	mu         sync.Mutex
	node, last uint64
	lastTime   time.Time
}

func (g *seqGen) next(at time.Time) uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := uint64(at.UnixNano())&^0xff | g.node
	if n <= g.last {
		n = (g.last&^0xff + 0x100) | g.node
	}
	g.last = n
	return n
}

// clamp keeps the entry times of one replica from going back, as the bbolt store does.
func (g *seqGen) clamp(at time.Time) time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	if at.Before(g.lastTime) {
		return g.lastTime
	}
	g.lastTime = at
	return at
}

func seqOf(t time.Time) uint64 { return uint64(t.UnixNano()) &^ 0xff }

// appendAudit adds one entry, its index keys and (for a decision) this replica's count of
// the hour, in the transaction.
func (t *txn) appendAudit(e approval.AuditEntry) error {
	if e.Time.IsZero() {
		e.Time = t.s.now().UTC()
	}
	e.Time = t.s.seq.clamp(e.Time)
	seq := t.auditSeq(e.Time)
	for {
		e.Seq = seq
		raw, err := json.Marshal(e)
		if err != nil {
			return err
		}
		key := t.s.k.audit(seq)
		cur, exists := t.expectAbsent(key)
		if exists && !bytes.Equal(cur, raw) {
			seq = t.reseq(e.Time)
			continue
		}
		if !exists {
			t.put(key, raw)
		}
		break
	}
	tail := fmt.Sprintf("%016x", seq)
	for _, ix := range []struct{ kind, name string }{{"r", e.RequestID}, {"s", e.Session}, {"a", e.Agent}} {
		if ix.name != "" {
			t.put(t.s.k.auditIndex(ix.kind, ix.name)+tail, nil)
		}
	}
	if e.Event == approval.EventDecision && e.Outcome != "" {
		hk := t.s.k.hour(e.Time.Unix()/3600, fmt.Sprintf("%s-%d", t.s.opts.Name, t.writer), e.Outcome)
		raw, _, err := t.get(hk)
		if err != nil {
			return err
		}
		n, _ := strconv.ParseInt(string(raw), 10, 64)
		t.put(hk, []byte(strconv.FormatInt(n+1, 10)))
	}
	return nil
}

// AppendAudit appends one entry.
func (s *Store) AppendAudit(ctx context.Context, e approval.AuditEntry) error {
	return s.write(ctx, func(t *txn) error { return t.appendAudit(e) })
}

// auditQuery is one page's selection (the fields of every audit query approvebot has).
type auditQuery struct {
	RequestID, Session, Agent, Tool string
	Outcome                         approval.Outcome
	Source                          approval.Source
	Since, Until                    time.Time
	Before                          uint64
	Limit                           int
}

func (q *auditQuery) match(e *approval.AuditEntry) bool {
	return (q.RequestID == "" || e.RequestID == q.RequestID) &&
		(q.Session == "" || e.Session == q.Session) &&
		(q.Agent == "" || e.Agent == q.Agent) &&
		(q.Tool == "" || e.Tool == q.Tool) &&
		(q.Outcome == "" || e.Outcome == q.Outcome) &&
		(q.Source == "" || e.Source == q.Source) &&
		(q.Since.IsZero() || !e.Time.Before(q.Since)) &&
		(q.Until.IsZero() || e.Time.Before(q.Until))
}

// auditPage walks the trail (or the index of the query's request, session or agent)
// from the newest entry before the cursor, and returns the matching entries oldest first
// with the cursor of the next page (0: nothing older).
func (s *Store) auditPage(ctx context.Context, q auditQuery, budget int) (out []approval.AuditEntry, next uint64, skipped []approval.DamagedRecord, err error) {
	if q.Limit <= 0 {
		q.Limit = defaultAuditLimit
	}
	q.Limit = min(q.Limit, maxAuditLimit)
	ctx, cancel := context.WithTimeout(ctx, 4*DefaultReadTimeout)
	defer cancel()
	base, indexed := s.k.auditPrefix(), false
	switch {
	case q.RequestID != "":
		base, indexed = s.k.auditIndex("r", q.RequestID), true
	case q.Session != "":
		base, indexed = s.k.auditIndex("s", q.Session), true
	case q.Agent != "":
		base, indexed = s.k.auditIndex("a", q.Agent), true
	}
	lo := base
	if !q.Since.IsZero() {
		lo = fmt.Sprintf("%s%016x", base, seqOf(q.Since))
	}
	hi := clientv3.GetPrefixRangeEnd(base)
	if q.Before != 0 {
		hi = fmt.Sprintf("%s%016x", base, q.Before)
	}
	if !q.Until.IsZero() {
		if u := fmt.Sprintf("%s%016x", base, seqOf(q.Until.Add(untilMargin))); u < hi {
			hi = u
		}
	}
	var last uint64
	scanned := 0
	for hi > lo {
		opts := []clientv3.OpOption{clientv3.WithRange(hi), clientv3.WithSort(clientv3.SortByKey, clientv3.SortDescend), clientv3.WithLimit(auditChunk)}
		if indexed {
			opts = append(opts, clientv3.WithKeysOnly())
		}
		resp, err := s.cli.Get(ctx, lo, opts...)
		if err != nil {
			return nil, 0, nil, unavailable("reading the audit trail", err)
		}
		if len(resp.Kvs) == 0 {
			break
		}
		entries := make([][]byte, len(resp.Kvs))
		seqs := make([]uint64, len(resp.Kvs))
		for i, kv := range resp.Kvs {
			k := string(kv.Key)
			seqs[i], err = strconv.ParseUint(k[strings.LastIndexByte(k, '/')+1:], 16, 64)
			if err != nil {
				return nil, 0, nil, fmt.Errorf("etcd: corrupt audit key %q", k)
			}
			entries[i] = kv.Value
		}
		if indexed {
			if entries, err = s.auditEntries(ctx, seqs); err != nil {
				return nil, 0, nil, err
			}
		}
		for i, raw := range entries {
			if scanned == budget || len(out) == q.Limit {
				reverse(out)
				return out, last, skipped, nil
			}
			scanned++
			last = seqs[i]
			if raw == nil {
				continue // pruned after its index entry was read
			}
			var e approval.AuditEntry
			if err := json.Unmarshal(raw, &e); err != nil {
				key := s.k.audit(seqs[i])
				s.noteDamaged(&recordError{kind: "audit", key: key, raw: raw, err: err})
				skipped = append(skipped, approval.DamagedRecord{Bucket: "audit", Key: key, Error: err.Error()})
				continue
			}
			if q.match(&e) {
				out = append(out, e)
			}
		}
		hi = string(resp.Kvs[len(resp.Kvs)-1].Key)
	}
	reverse(out)
	return out, 0, skipped, nil
}

// auditEntries reads the entries of the given seqs (nil where there is none), a
// transaction of gets at a time.
func (s *Store) auditEntries(ctx context.Context, seqs []uint64) ([][]byte, error) {
	out := make([][]byte, len(seqs))
	for from := 0; from < len(seqs); from += maxTxnOps {
		to := min(from+maxTxnOps, len(seqs))
		ops := make([]clientv3.Op, 0, to-from)
		for _, seq := range seqs[from:to] {
			ops = append(ops, clientv3.OpGet(s.k.audit(seq)))
		}
		resp, err := s.cli.Txn(ctx).Then(ops...).Commit()
		if err != nil {
			return nil, unavailable("reading the audit trail", err)
		}
		for i, r := range resp.Responses {
			if kvs := r.GetResponseRange().Kvs; len(kvs) == 1 {
				out[from+i] = kvs[0].Value
			}
		}
	}
	return out, nil
}

func reverse[T any](s []T) {
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
}

// Audit returns one page of matching entries: the newest before q.Before, oldest first.
// Damaged entries are skipped and named in the page.
func (s *Store) Audit(ctx context.Context, q approval.AuditQuery) (approval.AuditPage, error) {
	entries, next, damaged, err := s.auditPage(ctx, auditQuery{RequestID: q.RequestID, Session: q.Session, Agent: q.Agent, Tool: q.Tool,
		Outcome: q.Outcome, Source: q.Source, Since: q.Since, Until: q.Until, Before: q.Before, Limit: q.Limit}, defaultAuditScan)
	return approval.AuditPage{Entries: entries, NextBefore: next, Damaged: damaged}, err
}

// AuditCounts counts the decisions per hour by outcome, for every hour that overlaps
// [since, until) (zero: no bound), oldest first; hours without a decision are left out.
// Each replica counts its own decisions in the transaction that writes them; the counts
// are their sum.
func (s *Store) AuditCounts(ctx context.Context, since, until time.Time) ([]approval.HourCount, error) {
	byHour, err := s.hourCounts(ctx, since, until)
	if err != nil {
		return nil, err
	}
	out := make([]approval.HourCount, 0, len(byHour))
	for h, outcomes := range byHour {
		out = append(out, approval.HourCount{Hour: time.Unix(h*3600, 0).UTC(), Outcomes: outcomes})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Hour.Before(out[j].Hour) })
	return out, nil
}

// hourCounts sums every replica's per-hour decision counts in [since, until).
func (s *Store) hourCounts(ctx context.Context, since, until time.Time) (map[int64]map[approval.Outcome]int, error) {
	ctx, cancel := s.readCtx(ctx)
	defer cancel()
	p := s.k.hourPrefix()
	lo := p
	if !since.IsZero() {
		lo = fmt.Sprintf("%s%012d/", p, since.Unix()/3600)
	}
	hi := clientv3.GetPrefixRangeEnd(p)
	if !until.IsZero() {
		hi = fmt.Sprintf("%s%012d/", p, (until.Unix()+3599)/3600)
	}
	resp, err := s.cli.Get(ctx, lo, clientv3.WithRange(hi))
	if err != nil {
		return nil, unavailable("reading the hourly counts", err)
	}
	out := map[int64]map[approval.Outcome]int{}
	for _, kv := range resp.Kvs {
		parts := strings.Split(strings.TrimPrefix(string(kv.Key), p), "/")
		if len(parts) != 3 {
			continue
		}
		h, err := strconv.ParseInt(parts[0], 10, 64)
		if err != nil {
			continue
		}
		n, _ := strconv.Atoi(string(kv.Value))
		if out[h] == nil {
			out[h] = map[approval.Outcome]int{}
		}
		out[h][approval.Outcome(parts[2])] += n
	}
	return out, nil
}
