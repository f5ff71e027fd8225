package etcd

import (
	"context"
	"encoding/json"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/ledger"
)

// decodeSession reads a session's record. A damaged record reads as a paused session with
// a *recordError: readers go on with that (and quarantine it later), writers first.
func decodeSession(key, name string, raw []byte) (ledger.Session, error) {
	var sess ledger.Session
	if raw != nil {
		if err := json.Unmarshal(raw, &sess); err != nil {
			return gate.DamagedSession(name, time.Now().UTC()), &recordError{kind: "sessions", key: key, name: name, raw: raw, err: err}
		}
	}
	sess.Name = name
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

func (t *txn) readSession(name string) (ledger.Session, error) {
	key := t.s.k.session(name)
	raw, _, err := t.get(key)
	if err != nil {
		return ledger.Session{}, err
	}
	sess, err := decodeSession(key, name, raw)
	if re := asRecordError(err); re != nil {
		_, err = t.quarantineIn(re)
	}
	return sess, err
}

func (t *txn) putSession(sess ledger.Session) error {
	raw, err := json.Marshal(sess)
	if err != nil {
		return err
	}
	t.put(t.s.k.session(sess.Name), raw)
	return nil
}

// Session returns a session's memory (zero value when unknown).
func (s *Store) Session(ctx context.Context, name string) (ledger.Session, error) {
	ctx, cancel := s.readCtx(ctx)
	defer cancel()
	key := s.k.session(name)
	resp, err := s.cli.Get(ctx, key)
	if err != nil {
		return ledger.Session{}, unavailable("reading session", err)
	}
	var raw []byte
	if len(resp.Kvs) == 1 {
		raw = resp.Kvs[0].Value
	}
	sess, err := decodeSession(key, name, raw)
	return sess, s.readOnly(err)
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

// HasGrant reports a session grant for the fingerprint.
func (s *Store) HasGrant(ctx context.Context, session, fp string) (bool, error) {
	return s.exists(ctx, s.k.grant(session, fp))
}

// IsDenied reports a ledgered human denial of the fingerprint in the session.
func (s *Store) IsDenied(ctx context.Context, session, fp string) (bool, error) {
	return s.exists(ctx, s.k.denial(session, fp))
}

// Lookup reads the session, grant and denial in one (linearizable) read: a pause or a
// denial written by any replica is seen by the next ask on every replica.
func (s *Store) Lookup(ctx context.Context, session, fp string) (ledger.Lookup, error) {
	ctx, cancel := s.readCtx(ctx)
	defer cancel()
	sk := s.k.session(session)
	resp, err := s.cli.Txn(ctx).Then(
		clientv3.OpGet(sk),
		clientv3.OpGet(s.k.grant(session, fp), clientv3.WithCountOnly()),
		clientv3.OpGet(s.k.denial(session, fp), clientv3.WithCountOnly()),
		clientv3.OpGet(s.k.allowVersion(), clientv3.WithKeysOnly()),
	).Commit()
	if err != nil {
		return ledger.Lookup{}, unavailable("reading session", err)
	}
	var l ledger.Lookup
	var raw []byte
	if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) == 1 {
		raw = kvs[0].Value
	}
	if l.Session, err = decodeSession(sk, session, raw); s.readOnly(err) != nil {
		return l, err
	}
	l.Granted = resp.Responses[1].GetResponseRange().Count > 0
	l.Denied = resp.Responses[2].GetResponseRange().Count > 0
	if kvs := resp.Responses[3].GetResponseRange().Kvs; len(kvs) == 1 {
		// Another replica changed the allowlist since it was read: read it again before
		// this ask is evaluated, so a revoked entry never allows anything after the
		// revocation was answered.
		if err := s.reloadAllowlist(ctx, kvs[0].ModRevision); err != nil {
			return l, err
		}
	}
	return l, nil
}

// PutSession writes a session's settings, with an optional audit entry.
func (s *Store) PutSession(ctx context.Context, sess ledger.Session, audit *approval.AuditEntry) error {
	return s.write(ctx, func(t *txn) error {
		cur, err := t.readSession(sess.Name)
		if err != nil {
			return err
		}
		// Counters are owned by decisions; settings never overwrite them.
		cur.Tier, cur.Unattended, cur.Parent = sess.Tier, sess.Unattended, sess.Parent
		if err := t.putSession(cur); err != nil {
			return err
		}
		if audit != nil {
			return t.appendAudit(*audit)
		}
		return nil
	})
}

// Unpause lifts the pause and resets the denial count.
func (s *Store) Unpause(ctx context.Context, name string, audit approval.AuditEntry) (ledger.Session, error) {
	var out ledger.Session
	err := s.write(ctx, func(t *txn) error {
		sess, err := t.readSession(name)
		if err != nil {
			return err
		}
		sess.Paused, sess.PausedAt, sess.Denials = false, time.Time{}, 0
		out = sess
		if err := t.putSession(sess); err != nil {
			return err
		}
		return t.appendAudit(audit)
	})
	return out, err
}
