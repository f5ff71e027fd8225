package etcd

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/ledger"
)

// Read-only listings of session memory for the operator panel.

// ledgerValue is what a grant or denial key holds: when, and the decision that wrote it.
type ledgerValue struct {
	At        time.Time `json:"at"`
	RequestID string    `json:"request_id"`
}

func ledgerEntry(r *approval.Request) []byte {
	raw, _ := json.Marshal(ledgerValue{At: r.DecidedAt, RequestID: r.ID})
	return raw
}

// Grants lists the live session grants, newest first, at most limit of them (limit <= 0:
// all), and how many there are in all.
func (s *Store) Grants(ctx context.Context, limit int) ([]ledger.Item, int, error) {
	return s.ledgerItems(ctx, s.k.p+"grant/", limit)
}

// Denials lists the denial ledger, newest first, at most limit of them (limit <= 0: all),
// and how many there are.
func (s *Store) Denials(ctx context.Context, limit int) ([]ledger.Item, int, error) {
	return s.ledgerItems(ctx, s.k.p+"deny/", limit)
}

func (s *Store) ledgerItems(ctx context.Context, prefix string, limit int) ([]ledger.Item, int, error) {
	kvs, err := s.scan(ctx, prefix)
	if err != nil {
		return nil, 0, err
	}
	var out []ledger.Item
	for _, kv := range kvs {
		parts := strings.Split(strings.TrimPrefix(string(kv.Key), prefix), "/")
		if len(parts) != 3 {
			continue
		}
		session, ok1 := unhx(parts[0])
		agent, ok2 := unhx(parts[1])
		fp, ok3 := unhx(parts[2])
		var v ledgerValue
		if !ok1 || !ok2 || !ok3 || json.Unmarshal(kv.Value, &v) != nil {
			continue
		}
		out = append(out, ledger.Item{Agent: agent, Session: session, Fingerprint: fp, At: v.At, RequestID: v.RequestID})
	}
	total := len(out)
	sort.Slice(out, func(i, j int) bool {
		if !out[i].At.Equal(out[j].At) {
			return out[i].At.After(out[j].At)
		}
		if out[i].Session != out[j].Session {
			return out[i].Session < out[j].Session
		}
		if out[i].Agent != out[j].Agent {
			return out[i].Agent < out[j].Agent
		}
		return out[i].Fingerprint < out[j].Fingerprint
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	// What the decision says, while its request is still stored (retention may have
	// pruned it: then only the key fields and the time are known).
	for i := range out {
		if out[i].RequestID == "" {
			continue
		}
		r, err := s.Get(ctx, out[i].RequestID)
		if err != nil {
			out[i].RequestID = ""
			continue
		}
		out[i].Tool, out[i].Summary, out[i].DecidedBy, out[i].Reason = r.Tool, r.Summary, r.DecidedBy, r.Reason
	}
	return out, total, nil
}

// PausedSessions lists the paused session records, newest pause first, at most limit of
// them, and how many there are.
func (s *Store) PausedSessions(ctx context.Context, limit int) ([]ledger.Session, int, error) {
	prefix := s.k.p + "sess/"
	kvs, err := s.scan(ctx, prefix)
	if err != nil {
		return nil, 0, err
	}
	var out []ledger.Session
	for _, kv := range kvs {
		parts := strings.Split(strings.TrimPrefix(string(kv.Key), prefix), "/")
		if len(parts) != 2 {
			continue
		}
		name, ok1 := unhx(parts[0])
		agent, ok2 := unhx(parts[1])
		if !ok1 || !ok2 {
			continue
		}
		sess, err := decodeSession(string(kv.Key), agent, name, kv.Value)
		if s.readOnly(err) == nil && sess.Paused {
			out = append(out, sess)
		}
	}
	total := len(out)
	sort.Slice(out, func(i, j int) bool {
		if !out[i].PausedAt.Equal(out[j].PausedAt) {
			return out[i].PausedAt.After(out[j].PausedAt)
		}
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].Agent < out[j].Agent
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, total, nil
}

// scan reads every key under prefix, a page at a time, at one revision.
func (s *Store) scan(ctx context.Context, prefix string) ([]*mvccpb.KeyValue, error) {
	ctx, cancel := context.WithTimeout(ctx, 4*DefaultReadTimeout)
	defer cancel()
	from, end := prefix, clientv3.GetPrefixRangeEnd(prefix)
	var rev int64
	var out []*mvccpb.KeyValue
	for {
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(1000)}
		if rev != 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		resp, err := s.cli.Get(ctx, from, opts...)
		if err != nil {
			return nil, unavailable("reading "+prefix, err)
		}
		if rev == 0 {
			rev = resp.Header.Revision
		}
		out = append(out, resp.Kvs...)
		if !resp.More || len(resp.Kvs) == 0 {
			return out, nil
		}
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}
