package etcd

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/ledger"
)

// Session memory belongs to an agent: each agent's own record of a session name, and the
// record every agent of that name shares (agent ""), all under the name's prefix, as in
// the bbolt store.

// decodeSession reads one record as stored (zero value with the names set when absent). A
// damaged record reads as a paused session with a *recordError: readers go on with that
// (and quarantine it later), writers quarantine it first.
func decodeSession(key, agent, name string, raw []byte) (ledger.Session, error) {
	var sess ledger.Session
	if raw != nil {
		if err := json.Unmarshal(raw, &sess); err != nil {
			return gate.DamagedSession(name, agent, time.Now().UTC()),
				&recordError{kind: "sessions", key: key, name: name, agent: agent, raw: raw, err: err}
		}
	}
	sess.Name, sess.Agent = name, agent
	return sess, nil
}

// readOnly hands a damaged record a read met to the background quarantine: the read goes
// on with the stand-in.
func (s *Store) readOnly(err error) error {
	if re := asRecordError(err); re != nil {
		s.quarantineLater(re)
		return nil
	}
	return err
}

// ownSession reads one record inside a write transaction, quarantining a damaged one.
func (t *txn) ownSession(agent, name string) (ledger.Session, bool, error) {
	key := t.s.k.session(agent, name)
	raw, found, err := t.get(key)
	if err != nil {
		return ledger.Session{}, false, err
	}
	sess, err := decodeSession(key, agent, name, raw)
	if re := asRecordError(err); re != nil {
		_, err = t.quarantineIn(re)
	}
	return sess, found, err
}

func (t *txn) putSession(sess ledger.Session) error {
	raw, err := json.Marshal(sess)
	if err != nil {
		return err
	}
	t.put(t.s.k.session(sess.Agent, sess.Name), raw)
	return nil
}

// agentRecords are every agent's own record of a session name, in agent order.
func (t *txn) agentRecords(name string) ([]ledger.Session, error) {
	prefix := t.s.k.sessionPrefix(name)
	kvs, err := t.getPrefix(prefix)
	if err != nil {
		return nil, err
	}
	var out []ledger.Session
	for _, kv := range kvs {
		if kv.key == prefix {
			continue // the shared record
		}
		agent, ok := unhx(strings.TrimPrefix(kv.key, prefix))
		if !ok {
			continue
		}
		sess, _, err := t.ownSession(agent, name)
		if err != nil {
			return nil, err
		}
		out = append(out, sess)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Agent < out[j].Agent })
	return out, nil
}

// Session returns the agent's session as it applies to the agent: its own record merged
// with the one every agent of the name shares.
func (s *Store) Session(ctx context.Context, agent, name string) (ledger.Session, error) {
	ctx, cancel := s.readCtx(ctx)
	defer cancel()
	ok, sk := s.k.session(agent, name), s.k.session("", name)
	resp, err := s.cli.Txn(ctx).Then(clientv3.OpGet(ok), clientv3.OpGet(sk)).Commit()
	if err != nil {
		return ledger.Session{}, unavailable("reading session", err)
	}
	return s.mergeSessions(agent, name, ok, sk, valueOf(resp, 0), valueOf(resp, 1))
}

func (s *Store) mergeSessions(agent, name, ownKey, sharedKey string, own, shared []byte) (ledger.Session, error) {
	o, err := decodeSession(ownKey, agent, name, own)
	if err = s.readOnly(err); err != nil || agent == "" {
		return o, err
	}
	sh, err := decodeSession(sharedKey, "", name, shared)
	if err = s.readOnly(err); err != nil {
		return o, err
	}
	return ledger.Merge(o, sh), nil
}

// valueOf is the value the i-th get of a transaction found (nil: none).
func valueOf(resp *clientv3.TxnResponse, i int) []byte {
	if kvs := resp.Responses[i].GetResponseRange().Kvs; len(kvs) == 1 {
		return kvs[0].Value
	}
	return nil
}

func countOf(resp *clientv3.TxnResponse, i int) bool {
	return resp.Responses[i].GetResponseRange().Count > 0
}

// HasGrant reports the agent's session grant for the fingerprint.
func (s *Store) HasGrant(ctx context.Context, agent, session, fp string) (bool, error) {
	return s.exists(ctx, s.k.grant(agent, session, fp))
}

// IsDenied reports a ledgered human denial of the fingerprint in the agent's session, or
// in the record every agent of the name shares.
func (s *Store) IsDenied(ctx context.Context, agent, session, fp string) (bool, error) {
	ctx, cancel := s.readCtx(ctx)
	defer cancel()
	resp, err := s.cli.Txn(ctx).Then(
		clientv3.OpGet(s.k.denial(agent, session, fp), clientv3.WithCountOnly()),
		clientv3.OpGet(s.k.denial("", session, fp), clientv3.WithCountOnly()),
	).Commit()
	if err != nil {
		return false, unavailable("reading denials", err)
	}
	return countOf(resp, 0) || (agent != "" && countOf(resp, 1)), nil
}

func (s *Store) exists(ctx context.Context, key string) (bool, error) {
	ctx, cancel := s.readCtx(ctx)
	defer cancel()
	resp, err := s.cli.Get(ctx, key, clientv3.WithCountOnly())
	if err != nil {
		return false, unavailable("reading "+key, err)
	}
	return resp.Count > 0, nil
}

// Lookup reads the agent's session, grant and denial in one linearizable read: a pause or
// a denial written by any replica is seen by the next ask on every replica.
func (s *Store) Lookup(ctx context.Context, agent, session, fp string) (ledger.Lookup, error) {
	ctx, cancel := s.readCtx(ctx)
	defer cancel()
	ok, sk := s.k.session(agent, session), s.k.session("", session)
	resp, err := s.cli.Txn(ctx).Then(
		clientv3.OpGet(ok),
		clientv3.OpGet(sk),
		clientv3.OpGet(s.k.grant(agent, session, fp), clientv3.WithCountOnly()),
		clientv3.OpGet(s.k.denial(agent, session, fp), clientv3.WithCountOnly()),
		clientv3.OpGet(s.k.denial("", session, fp), clientv3.WithCountOnly()),
		clientv3.OpGet(s.k.allowVersion(), clientv3.WithKeysOnly()),
	).Commit()
	if err != nil {
		return ledger.Lookup{}, unavailable("reading session", err)
	}
	var l ledger.Lookup
	if l.Session, err = s.mergeSessions(agent, session, ok, sk, valueOf(resp, 0), valueOf(resp, 1)); err != nil {
		return l, err
	}
	l.Granted = agent != "" && countOf(resp, 2)
	l.Denied = countOf(resp, 3) || (agent != "" && countOf(resp, 4))
	if kvs := resp.Responses[5].GetResponseRange().Kvs; len(kvs) == 1 {
		// Another replica changed the allowlist since it was read: read it again before
		// this ask is evaluated, so a revoked entry never allows anything after the
		// revocation was answered.
		if err := s.reloadAllowlist(ctx, kvs[0].ModRevision); err != nil {
			return l, err
		}
	}
	return l, nil
}

// applySessionEffects applies a decision's grant and denial to the requesting agent's
// session. A request without an agent is refused rather than written to the record every
// agent shares.
func (t *txn) applySessionEffects(r *approval.Request, eff ledger.Effects) error {
	if !eff.Grant && !eff.Denial {
		return nil
	}
	if r.Agent == "" {
		return fmt.Errorf("request %s has no agent: its session memory cannot be kept", r.ID)
	}
	at := ledgerEntry(r)
	if eff.Grant {
		t.put(t.s.k.grant(r.Agent, r.Session, r.Fingerprint), at)
	}
	if eff.Denial {
		t.put(t.s.k.denial(r.Agent, r.Session, r.Fingerprint), at)
		sess, _, err := t.ownSession(r.Agent, r.Session)
		if err != nil {
			return err
		}
		sess.Denials++
		if eff.PauseAfter > 0 && sess.Denials >= eff.PauseAfter && !sess.Paused {
			sess.Paused, sess.PausedAt = true, r.DecidedAt
		}
		return t.putSession(sess)
	}
	return nil
}

// LinkParent records parent as the parent of the agent's session, unless it has one.
func (s *Store) LinkParent(ctx context.Context, agent, session, parent string) error {
	if agent == "" {
		return fmt.Errorf("linking session %q: no agent", session)
	}
	return s.write(ctx, func(t *txn) error {
		sess, _, err := t.ownSession(agent, session)
		if err != nil || sess.Parent != "" {
			return err
		}
		sess.Parent = parent
		return t.putSession(sess)
	})
}

// UpdateSession applies an operator's settings to the agent's session or, with agent "",
// to the session name for every agent: the shared record takes them and every agent's own
// record drops its own values of them. Decision counters are never touched.
func (s *Store) UpdateSession(ctx context.Context, agent, name string, set ledger.Settings, audit approval.AuditEntry) (ledger.Records, error) {
	var out ledger.Records
	err := s.write(ctx, func(t *txn) error {
		out = ledger.Records{}
		shared, _, err := t.ownSession("", name)
		if err != nil {
			return err
		}
		if agent != "" {
			own, _, err := t.ownSession(agent, name)
			if err != nil {
				return err
			}
			set.Apply(&own)
			if err := t.putSession(own); err != nil {
				return err
			}
			out.Shared, out.Agents = shared, []ledger.Session{own}
			return t.appendAudit(audit)
		}
		set.Apply(&shared)
		if err := t.putSession(shared); err != nil {
			return err
		}
		out.Shared = shared
		agents, err := t.agentRecords(name)
		if err != nil {
			return err
		}
		for _, own := range agents {
			set.Yield(&own)
			out.Agents = append(out.Agents, own)
			if err := t.putSession(own); err != nil {
				return err
			}
		}
		return t.appendAudit(audit)
	})
	return out, err
}

// Unpause lifts the pause and resets the denial count of the agent's session or, with
// agent "", of every record of the session name. Denied fingerprints stay denied.
func (s *Store) Unpause(ctx context.Context, agent, name string, audit approval.AuditEntry) (ledger.Records, error) {
	var out ledger.Records
	lift := func(sess *ledger.Session) { sess.Paused, sess.PausedAt, sess.Denials = false, time.Time{}, 0 }
	err := s.write(ctx, func(t *txn) error {
		out = ledger.Records{}
		shared, sharedFound, err := t.ownSession("", name)
		if err != nil {
			return err
		}
		if agent != "" {
			own, _, err := t.ownSession(agent, name)
			if err != nil {
				return err
			}
			lift(&own)
			if err := t.putSession(own); err != nil {
				return err
			}
			out.Shared, out.Agents = shared, []ledger.Session{own}
			return t.appendAudit(audit)
		}
		lift(&shared)
		if sharedFound {
			if err := t.putSession(shared); err != nil {
				return err
			}
		}
		out.Shared = shared
		agents, err := t.agentRecords(name)
		if err != nil {
			return err
		}
		for _, own := range agents {
			lift(&own)
			out.Agents = append(out.Agents, own)
			if err := t.putSession(own); err != nil {
				return err
			}
		}
		return t.appendAudit(audit)
	})
	return out, err
}
