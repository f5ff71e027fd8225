package etcd

import (
	"context"
	"strings"
	"sync"
	"testing"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/store/storetest"
)

// lostAnswers wraps a client's KV: a transaction that writes an armed key commits, and its
// caller is told it timed out, as when etcd commits and the answer is lost on the way (a
// leader change, a connection cut after the request went out).
type lostAnswers struct {
	clientv3.KV
	mu    sync.Mutex
	armed map[string]int // key -> commits still to answer with a timeout
	lost  int
	// then runs once after the first committed transaction that writes a key with its
	// prefix, before its caller learns the outcome.
	then map[string]func()
}

func newLostAnswers() *lostAnswers {
	return &lostAnswers{armed: map[string]int{}, then: map[string]func(){}}
}

// afterCommit runs fn once, after the next committed transaction that writes a key under
// prefix and before its answer.
func (l *lostAnswers) afterCommit(prefix string, fn func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.then[prefix] = fn
}

func (l *lostAnswers) wrap(kv clientv3.KV) clientv3.KV { l.KV = kv; return l }

// arm makes the next n committed transactions that write key report a timeout.
func (l *lostAnswers) arm(key string, n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.armed[key] = n
}

func (l *lostAnswers) lostCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lost
}

func (l *lostAnswers) Txn(ctx context.Context) clientv3.Txn {
	return &lostAnswerTxn{Txn: l.KV.Txn(ctx), l: l}
}

type lostAnswerTxn struct {
	clientv3.Txn
	l      *lostAnswers
	writes []string
}

func (t *lostAnswerTxn) If(cs ...clientv3.Cmp) clientv3.Txn { t.Txn = t.Txn.If(cs...); return t }

func (t *lostAnswerTxn) Then(ops ...clientv3.Op) clientv3.Txn {
	for _, op := range ops {
		if op.IsPut() {
			t.writes = append(t.writes, string(op.KeyBytes()))
		}
	}
	t.Txn = t.Txn.Then(ops...)
	return t
}

func (t *lostAnswerTxn) Else(ops ...clientv3.Op) clientv3.Txn { t.Txn = t.Txn.Else(ops...); return t }

func (t *lostAnswerTxn) Commit() (*clientv3.TxnResponse, error) {
	resp, err := t.Txn.Commit()
	if err != nil || !resp.Succeeded {
		return resp, err
	}
	t.l.mu.Lock()
	var then []func()
	for _, k := range t.writes {
		for p, fn := range t.l.then {
			if strings.HasPrefix(k, p) {
				then = append(then, fn)
				delete(t.l.then, p)
			}
		}
	}
	t.l.mu.Unlock()
	for _, fn := range then {
		fn()
	}
	t.l.mu.Lock()
	defer t.l.mu.Unlock()
	for _, k := range t.writes {
		if t.l.armed[k] > 0 {
			t.l.armed[k]--
			t.l.lost++
			return nil, rpctypes.ErrTimeout
		}
	}
	return resp, nil
}

func TestCreateWhoseAnswerIsLostIsStoredOnceAndTheIDStaysTaken(t *testing.T) {
	tests := []struct {
		name string
		req  func(id string) *approval.Request
		key  func(k keys, id string) string
	}{
		{"pending", func(id string) *approval.Request { return pendingReq(id, "s") }, keys.pending},
		{"decided", func(id string) *approval.Request {
			r := pendingReq(id, "s")
			r.State, r.Outcome, r.Source, r.Allowed = approval.StateAllowed, approval.OutcomeAllowOnce, approval.SourcePolicy, true
			r.DecidedAt = r.CreatedAt
			return r
		}, keys.decided},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lost := newLostAnswers()
			s := openAt(t, etcdEndpoints(t), freshPrefix(), func(o *Options) { o.wrapKV = lost.wrap; o.Logger = testLogger(t) })
			ctx := context.Background()
			id := storetest.ID(1)
			r := tc.req(id)
			lost.arm(tc.key(s.k, id), 2)
			if err := s.Create(ctx, r, approval.AuditEntry{Event: approval.EventRequest, RequestID: id}); err != nil {
				t.Fatalf("a create committed once and told twice it timed out: %v", err)
			}
			if n := lost.lostCount(); n != 1 {
				// The second armed answer is never used: the re-run finds the write done and
				// commits nothing.
				t.Fatalf("%d answers lost, want 1", n)
			}
			got, err := s.Get(ctx, id)
			if err != nil || got.State != r.State || got.Fingerprint != r.Fingerprint {
				t.Fatalf("read back %+v %v", got, err)
			}
			page, err := s.Audit(ctx, approval.AuditQuery{RequestID: id})
			if err != nil || len(page.Entries) != 1 {
				t.Fatalf("audit %+v %v, want the one entry", page.Entries, err)
			}
			if r.State == approval.StatePending {
				raw, _, err := newTxn(s, ctx, nil).get(s.k.countAll())
				if err != nil || string(raw) != "1" {
					t.Fatalf("pending counter %q %v, want 1 (counted once)", raw, err)
				}
			}
			// The id is taken: the same request again, or another under its id, is refused.
			for _, again := range []*approval.Request{r, pendingReq(id, "other")} {
				err := s.Create(ctx, again, approval.AuditEntry{Event: approval.EventRequest, RequestID: id})
				if err == nil || !strings.Contains(err.Error(), "already exists") {
					t.Fatalf("create of a taken id: %v, want refused", err)
				}
			}
		})
	}
}
