package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/ledger"
)

// Session memory is keyed by the session name and the agent. A session record's key is
// sessionPrefix(name) followed by the agent's name ("" for the record every agent of that
// name shares, whose key is the prefix itself); a grant's or denial's key is the prefix, the
// length-prefixed agent and the fingerprint. Every record of one session name shares the
// prefix, so a change for every agent finds them with one seek, and no choice of names
// can make two keys collide.

func sessionPrefix(name string) []byte {
	k := make([]byte, 2, 2+len(name)+32)
	binary.BigEndian.PutUint16(k, uint16(len(name)))
	return append(k, name...)
}

func sessionKey(agent, name string) []byte {
	return append(sessionPrefix(name), agent...)
}

func ledgerKey(agent, name, fp string) []byte {
	k := sessionPrefix(name)
	k = binary.BigEndian.AppendUint16(k, uint16(len(agent)))
	k = append(k, agent...)
	return append(k, fp...)
}

// checkKeyPart refuses names too long for a 2-byte length prefix (the gate's limits are far
// below it; this keeps the encoding unambiguous whatever the caller).
func checkKeyPart(what, s string) error {
	if len(s) > 0xffff {
		return fmt.Errorf("%s of %d bytes is too long for a store key", what, len(s))
	}
	return nil
}

// readOwnSession reads one record as stored (zero value with the names set when absent). A
// damaged record reads as a paused session with a *RecordError: readers go on with that
// (readOnly), writers quarantine it first (ownSessionIn).
func (s *Store) readOwnSession(tx *bolt.Tx, agent, name string) (ledger.Session, bool, error) {
	var sess ledger.Session
	found, err := getJSON(tx.Bucket(bucketSessions), bucketSessions, sessionKey(agent, name), &sess)
	if err != nil {
		return damagedSession(name, agent, s.now().UTC()), found, err
	}
	sess.Name, sess.Agent = name, agent
	return sess, found, err
}

// ownSessionIn reads one record inside a write transaction, quarantining a damaged one.
func (s *Store) ownSessionIn(tx *bolt.Tx, agent, name string) (ledger.Session, bool, error) {
	sess, found, err := s.readOwnSession(tx, agent, name)
	if re := asRecordError(err); re != nil {
		return sess, found, s.quarantineIn(tx, re)
	}
	return sess, found, err
}

// readOnly passes a damaged record met by a read to the background quarantine: the read
// goes on with the record's stand-in.
func (s *Store) readOnly(err error) error {
	if re := asRecordError(err); re != nil {
		s.quarantineLater(re)
		return nil
	}
	return err
}

func putSession(tx *bolt.Tx, sess ledger.Session) error {
	if err := checkKeyPart("session name", sess.Name); err != nil {
		return err
	}
	return putJSON(tx.Bucket(bucketSessions), sessionKey(sess.Agent, sess.Name), sess)
}

// readSession is the agent's session as it applies to the agent: its own record merged
// with the one every agent of the name shares. A damaged record is read as paused and
// queued for quarantine.
func (s *Store) readSession(tx *bolt.Tx, agent, name string) (ledger.Session, error) {
	own, _, err := s.readOwnSession(tx, agent, name)
	if err = s.readOnly(err); err != nil || agent == "" {
		return own, err
	}
	shared, _, err := s.readOwnSession(tx, "", name)
	if err = s.readOnly(err); err != nil {
		return own, err
	}
	return ledger.Merge(own, shared), nil
}

// Session returns the agent's session as it applies to the agent (zero value when unknown).
func (s *Store) Session(_ context.Context, agent, name string) (ledger.Session, error) {
	var sess ledger.Session
	err := s.view("sessions", func(tx *bolt.Tx) error {
		var err error
		sess, err = s.readSession(tx, agent, name)
		return err
	})
	return sess, err
}

// HasGrant reports the agent's session grant for the fingerprint.
func (s *Store) HasGrant(_ context.Context, agent, session, fp string) (bool, error) {
	var ok bool
	err := s.view("grants", func(tx *bolt.Tx) error {
		ok = tx.Bucket(bucketGrants).Get(ledgerKey(agent, session, fp)) != nil
		return nil
	})
	return ok, err
}

// denied reports a ledgered denial of the fingerprint in the agent's session, or in the
// record every agent of the name shares (denials kept from before sessions had owners).
func denied(tx *bolt.Tx, agent, session, fp string) bool {
	b := tx.Bucket(bucketDenials)
	return b.Get(ledgerKey(agent, session, fp)) != nil || (agent != "" && b.Get(ledgerKey("", session, fp)) != nil)
}

// IsDenied reports a ledgered human denial of the fingerprint in the agent's session.
func (s *Store) IsDenied(_ context.Context, agent, session, fp string) (bool, error) {
	var ok bool
	err := s.view("denials", func(tx *bolt.Tx) error {
		ok = denied(tx, agent, session, fp)
		return nil
	})
	return ok, err
}

// Lookup reads the agent's session, grant and denial in one transaction.
func (s *Store) Lookup(_ context.Context, agent, session, fp string) (ledger.Lookup, error) {
	var l ledger.Lookup
	err := s.view("sessions, grants and denials", func(tx *bolt.Tx) error {
		var err error
		if l.Session, err = s.readSession(tx, agent, session); err != nil {
			return err
		}
		l.Granted = agent != "" && tx.Bucket(bucketGrants).Get(ledgerKey(agent, session, fp)) != nil
		l.Denied = denied(tx, agent, session, fp)
		return nil
	})
	return l, err
}

// applySessionEffects applies a decision's grant and denial to the requesting agent's
// session. A request without an agent (none is filed through the API) is refused rather
// than written to the record every agent shares.
func (s *Store) applySessionEffects(tx *bolt.Tx, r *approval.Request, eff ledger.Effects) error {
	if !eff.Grant && !eff.Denial {
		return nil
	}
	if r.Agent == "" {
		return fmt.Errorf("request %s has no agent: its session memory cannot be kept", r.ID)
	}
	if err := checkKeyPart("agent name", r.Agent); err != nil {
		return err
	}
	if err := checkKeyPart("session name", r.Session); err != nil {
		return err
	}
	at, _ := r.DecidedAt.MarshalBinary()
	k := ledgerKey(r.Agent, r.Session, r.Fingerprint)
	if eff.Grant {
		if err := tx.Bucket(bucketGrants).Put(k, at); err != nil {
			return err
		}
	}
	if eff.Denial {
		if err := tx.Bucket(bucketDenials).Put(k, at); err != nil {
			return err
		}
		sess, _, err := s.ownSessionIn(tx, r.Agent, r.Session)
		if err != nil {
			return err
		}
		sess.Denials++
		if eff.PauseAfter > 0 && sess.Denials >= eff.PauseAfter && !sess.Paused {
			sess.Paused, sess.PausedAt = true, r.DecidedAt
		}
		if err := putSession(tx, sess); err != nil {
			return err
		}
	}
	return nil
}

// LinkParent records parent as the parent of the agent's session, unless it has one
// already: the first link stays (a later request cannot move a child away from a parent
// that restricts it).
func (s *Store) LinkParent(ctx context.Context, agent, session, parent string) error {
	if agent == "" {
		return fmt.Errorf("linking session %q: no agent", session)
	}
	return s.write(ctx, false, func(tx *bolt.Tx) error {
		sess, _, err := s.ownSessionIn(tx, agent, session)
		if err != nil || sess.Parent != "" {
			return err
		}
		sess.Parent = parent
		return putSession(tx, sess)
	})
}

// agentRecords calls fn for every agent's own record of a session name, in agent order
// (the shared record is not among them).
func (s *Store) agentRecords(tx *bolt.Tx, name string, fn func(key []byte, sess ledger.Session) error) error {
	prefix := sessionPrefix(name)
	c := tx.Bucket(bucketSessions).Cursor()
	var keys [][]byte
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		if len(k) > len(prefix) {
			keys = append(keys, append([]byte(nil), k...))
		}
	}
	for _, k := range keys {
		agent := string(k[len(prefix):])
		sess, _, err := s.ownSessionIn(tx, agent, name)
		if err != nil {
			return err
		}
		if err := fn(k, sess); err != nil {
			return err
		}
	}
	return nil
}

// UpdateSession applies an operator's settings to the agent's session or, with agent "",
// to the session name for every agent: the shared record takes them and every agent's own
// record drops its own values of them, so the newest instruction for every agent applies
// to each. Decision counters are never touched. It returns the records after the change.
func (s *Store) UpdateSession(ctx context.Context, agent, name string, set ledger.Settings, audit approval.AuditEntry) (ledger.Records, error) {
	var out ledger.Records
	err := s.write(ctx, false, func(tx *bolt.Tx) error {
		out = ledger.Records{}
		shared, _, err := s.ownSessionIn(tx, "", name)
		if err != nil {
			return err
		}
		if agent != "" {
			own, _, err := s.ownSessionIn(tx, agent, name)
			if err != nil {
				return err
			}
			set.Apply(&own)
			if err := putSession(tx, own); err != nil {
				return err
			}
			out.Shared, out.Agents = shared, []ledger.Session{own}
			return s.appendAudit(tx, audit)
		}
		set.Apply(&shared)
		if err := putSession(tx, shared); err != nil {
			return err
		}
		out.Shared = shared
		err = s.agentRecords(tx, name, func(_ []byte, own ledger.Session) error {
			set.Yield(&own)
			out.Agents = append(out.Agents, own)
			return putSession(tx, own)
		})
		if err != nil {
			return err
		}
		return s.appendAudit(tx, audit)
	})
	return out, err
}

// Unpause lifts the pause and resets the denial count of the agent's session or, with
// agent "", of every record of the session name (the shared one included). Denied
// fingerprints stay denied. It returns the records after the change.
func (s *Store) Unpause(ctx context.Context, agent, name string, audit approval.AuditEntry) (ledger.Records, error) {
	var out ledger.Records
	lift := func(sess *ledger.Session) { sess.Paused, sess.PausedAt, sess.Denials = false, time.Time{}, 0 }
	err := s.write(ctx, false, func(tx *bolt.Tx) error {
		out = ledger.Records{}
		shared, sharedFound, err := s.ownSessionIn(tx, "", name)
		if err != nil {
			return err
		}
		if agent != "" {
			own, _, err := s.ownSessionIn(tx, agent, name)
			if err != nil {
				return err
			}
			lift(&own)
			if err := putSession(tx, own); err != nil {
				return err
			}
			out.Shared, out.Agents = shared, []ledger.Session{own}
			return s.appendAudit(tx, audit)
		}
		lift(&shared)
		if sharedFound {
			if err := putSession(tx, shared); err != nil {
				return err
			}
		}
		out.Shared = shared
		err = s.agentRecords(tx, name, func(_ []byte, own ledger.Session) error {
			lift(&own)
			out.Agents = append(out.Agents, own)
			return putSession(tx, own)
		})
		if err != nil {
			return err
		}
		return s.appendAudit(tx, audit)
	})
	return out, err
}
