package etcd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/ledger"
)

func decodeRequest(key, id string, raw []byte) (approval.Request, error) {
	var r approval.Request
	if err := json.Unmarshal(raw, &r); err != nil {
		return gate.DamagedRequest(id, raw, time.Now().UTC()), &recordError{kind: "requests", key: key, name: id, raw: raw, err: err}
	}
	return r, nil
}

// readRequest finds a request in the pending or the decided keys. A damaged record is
// quarantined in the transaction and read as its stand-in (decided: denied by the store).
func (t *txn) readRequest(id string) (r approval.Request, pending, found bool, err error) {
	pk := t.s.k.pending(id)
	raw, ok, err := t.get(pk)
	if err != nil {
		return r, false, false, err
	}
	key := pk
	if !ok {
		key = t.s.k.decided(id)
		raw, ok, err = t.get(key)
		if err != nil || !ok {
			return r, false, false, err
		}
	}
	r, err = decodeRequest(key, id, raw)
	if re := asRecordError(err); re != nil {
		r, err = t.quarantineIn(re)
		return r, false, true, err
	}
	return r, key == pk, true, err
}

// Create stores a new request with its audit entry. A pending request is counted
// against the cluster-wide caps in the same transaction and owned by this replica.
func (s *Store) Create(ctx context.Context, r *approval.Request, audit approval.AuditEntry) error {
	raw, err := json.Marshal(r)
	if err != nil {
		return err
	}
	id := r.ID
	pending := r.State == approval.StatePending
	return s.write(ctx, func(t *txn) error {
		pk, dk := t.s.k.pending(id), t.s.k.decided(id)
		main := dk
		if pending {
			main = pk
		}
		if cur, exists := t.expectAbsent(main); exists {
			if t.mayHaveCommitted() && bytes.Equal(cur, raw) {
				return nil // an earlier attempt of this very write committed
			}
			return fmt.Errorf("request %s already exists", id)
		}
		other := pk
		if pending {
			other = dk
		}
		if _, exists := t.expectAbsent(other); exists {
			return fmt.Errorf("request %s already exists", id)
		}
		t.put(main, raw)
		if pending {
			if err := t.countPending(r, +1); err != nil {
				return err
			}
			t.putLease(t.s.k.owner(id), []byte(t.s.opts.Name), t.s.lease.id())
		}
		return t.appendAudit(audit)
	})
}

// delPosts deletes the claims of a request's card posts (it is no longer pending).
func (t *txn) delPosts(id string) {
	p := t.s.k.postPrefix(id)
	t.delRange(p, clientv3.GetPrefixRangeEnd(p))
}

// countPending moves the pending counters by delta, refusing to go over the caps.
func (t *txn) countPending(r *approval.Request, delta int64) error {
	lim := t.s.opts.Limits
	for _, c := range []struct {
		key, what string
		max       int
	}{
		{t.s.k.countAll(), "", lim.Total},
		{t.s.k.countAgent(r.Agent), fmt.Sprintf("agent %q", r.Agent), lim.PerAgent},
		{t.s.k.countSession(r.Agent, r.Session), fmt.Sprintf("session %q", r.Session), lim.PerSession},
	} {
		raw, _, err := t.get(c.key)
		if err != nil {
			return err
		}
		n, _ := strconv.ParseInt(string(raw), 10, 64)
		if delta > 0 && c.max > 0 && n >= int64(c.max) {
			if c.what == "" {
				return fmt.Errorf("%w: %d requests are already waiting for a human across the cluster", gate.ErrTooManyPending, n)
			}
			return fmt.Errorf("%w: %s already has %d requests waiting across the cluster", gate.ErrTooManyPending, c.what, n)
		}
		n = max(n+delta, 0)
		if n == 0 && c.what != "" {
			t.del(c.key)
		} else {
			t.put(c.key, []byte(strconv.FormatInt(n, 10)))
		}
	}
	return nil
}

// Get returns a request by id.
func (s *Store) Get(ctx context.Context, id string) (approval.Request, error) {
	ctx, cancel := s.readCtx(ctx)
	defer cancel()
	pk, dk := s.k.pending(id), s.k.decided(id)
	resp, err := s.cli.Txn(ctx).Then(clientv3.OpGet(pk), clientv3.OpGet(dk)).Commit()
	if err != nil {
		return approval.Request{}, unavailable("reading request", err)
	}
	for i, key := range []string{pk, dk} {
		if kvs := resp.Responses[i].GetResponseRange().Kvs; len(kvs) == 1 {
			r, err := decodeRequest(key, id, kvs[0].Value)
			if re := asRecordError(err); re != nil {
				s.quarantineLater(re)
				return r, nil
			}
			return r, err
		}
	}
	return approval.Request{}, approval.ErrNotFound
}

// Pending returns every request still pending in the cluster.
func (s *Store) Pending(ctx context.Context) ([]approval.Request, error) {
	out, _, err := s.pendingAt(ctx)
	return out, err
}

// pendingAt lists the pending requests and the revision of that list.
func (s *Store) pendingAt(ctx context.Context) ([]approval.Request, int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 4*DefaultReadTimeout)
	defer cancel()
	var out []approval.Request
	prefix := s.k.pendingPrefix()
	from := prefix
	end := clientv3.GetPrefixRangeEnd(prefix)
	var rev int64
	for {
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(500)}
		if rev != 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		resp, err := s.cli.Get(ctx, from, opts...)
		if err != nil {
			return nil, 0, unavailable("listing pending requests", err)
		}
		if rev == 0 {
			rev = resp.Header.Revision
		}
		for _, kv := range resp.Kvs {
			key := string(kv.Key)
			r, err := decodeRequest(key, strings.TrimPrefix(key, prefix), kv.Value)
			if re := asRecordError(err); re != nil {
				// Left out of the list; its stand-in (denied) replaces it.
				s.quarantineLater(re)
				continue
			}
			out = append(out, r)
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return out, rev, nil
		}
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// Resolve is the compare-and-set every decision goes through: the pending record is
// compared at the revision it was read at, and the decision, its effects, the counters
// and the audit entry are written in the same transaction.
func (s *Store) Resolve(ctx context.Context, id string, res approval.Resolution, eff ledger.Effects) (approval.Request, bool, error) {
	var out approval.Request
	var won bool
	err := s.write(ctx, func(t *txn) error {
		won = false
		r, pending, found, err := t.readRequest(id)
		if err != nil {
			return err
		}
		if !found {
			return approval.ErrNotFound
		}
		out = r
		if !pending {
			// A re-run after an unknown outcome finds its own decision: it won.
			won = r.DecidedAt.Equal(res.DecidedAt) && r.DecidedBy == res.DecidedBy && r.Outcome == res.Outcome
			return nil
		}
		apply, effects := res, eff
		if res.RequireLive && !r.ExpiresAt.IsZero() && !res.DecidedAt.Before(r.ExpiresAt) {
			apply = approval.Resolution{
				State: approval.StateDenied, Outcome: approval.OutcomeTimeout, Source: approval.SourceTimeout,
				DecidedBy: "approvebot", Reason: "no human answered in time", Message: res.TimeoutMessage,
				DecidedAt: res.DecidedAt,
			}
			effects = ledger.Effects{}
		} else {
			won = true
		}
		r.State, r.Outcome, r.Source = apply.State, apply.Outcome, apply.Source
		r.Allowed = apply.Outcome.Allows() && apply.State == approval.StateAllowed
		r.DecidedBy, r.Reason, r.Message, r.DecidedAt = apply.DecidedBy, apply.Reason, apply.Message, apply.DecidedAt
		if err := t.applyEffects(&r, effects); err != nil {
			return err
		}
		raw, err := json.Marshal(r)
		if err != nil {
			return err
		}
		t.put(t.s.k.decided(id), raw)
		t.del(t.s.k.pending(id))
		t.del(t.s.k.owner(id))
		t.delPosts(id)
		if err := t.countPending(&r, -1); err != nil {
			return err
		}
		a := res.Audit
		a.Event, a.RequestID, a.Session, a.Agent, a.Tool = approval.EventDecision, r.ID, r.Session, r.Agent, r.Tool
		a.State, a.Outcome, a.Source, a.DecidedBy, a.Reason = r.State, r.Outcome, r.Source, r.DecidedBy, r.Reason
		a.Summary, a.Fingerprint, a.Rule, a.Time = r.Summary, r.Fingerprint, r.Rule, r.DecidedAt
		if err := t.appendAudit(a); err != nil {
			return err
		}
		out = r
		return nil
	})
	if err == nil && won && len(eff.Allowlist) > 0 {
		err = s.reloadAllowlist(ctx, math.MaxInt64)
	}
	return out, won, err
}

// AllowlistItem is a persisted "allow always" entry with its provenance.
type AllowlistItem = approval.AllowlistItem

func (t *txn) applyEffects(r *approval.Request, eff ledger.Effects) error {
	if err := t.applySessionEffects(r, eff); err != nil {
		return err
	}
	if len(eff.Allowlist) == 0 {
		return nil
	}
	// An "allow always" is for the agent that asked: never an allow for another.
	if r.Agent == "" {
		return fmt.Errorf("request %s has no agent: its allow-always cannot be kept", r.ID)
	}
	for _, p := range eff.Allowlist {
		raw, err := json.Marshal(AllowlistItem{Pattern: p, Agent: r.Agent, AddedBy: r.DecidedBy, RequestID: r.ID, AddedAt: r.DecidedAt})
		if err != nil {
			return err
		}
		t.put(t.s.k.allow(p, r.Agent, ""), raw)
	}
	t.put(t.s.k.allowVersion(), nil)
	return nil
}

// AddCard records a posted card and returns the request after the write.
func (s *Store) AddCard(ctx context.Context, id string, ref approval.CardRef) (approval.Request, error) {
	var out approval.Request
	err := s.write(ctx, func(t *txn) error {
		r, pending, found, err := t.readRequest(id)
		if err != nil {
			return err
		}
		if !found {
			return approval.ErrNotFound
		}
		out = r
		for _, c := range r.Cards {
			if c == ref {
				return nil
			}
		}
		r.Cards = append(r.Cards, ref)
		out = r
		raw, err := json.Marshal(r)
		if err != nil {
			return err
		}
		if pending {
			t.put(t.s.k.pending(id), raw)
		} else {
			t.put(t.s.k.decided(id), raw)
		}
		return nil
	})
	return out, err
}

// ownWrites remembers the revision of this replica's last write to each pending key
// until the follower has passed it, so that the follower never hands the gate an older
// state of a request than the gate itself already applied.
type ownWrites struct {
	mu     sync.Mutex
	on     bool
	prefix string
	rev    map[string]int64
}

func newOwnWrites() *ownWrites { return &ownWrites{rev: map[string]int64{}} }

func (o *ownWrites) start(prefix string) {
	o.mu.Lock()
	o.on, o.prefix = true, prefix
	o.mu.Unlock()
}

func (o *ownWrites) note(key string, rev int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.on && strings.HasPrefix(key, o.prefix) {
		o.rev[key] = max(o.rev[key], rev)
	}
}

// stale reports whether an event at rev on key is older than this replica's own write.
func (o *ownWrites) stale(key string, rev int64) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	r, ok := o.rev[key]
	if !ok {
		return false
	}
	if rev < r {
		return true
	}
	delete(o.rev, key)
	return false
}

// forget drops every entry at or below rev (a resync read everything at rev).
func (o *ownWrites) forget(rev int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for k, r := range o.rev {
		if r <= rev {
			delete(o.rev, k)
		}
	}
}
