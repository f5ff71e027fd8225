package store

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/ledger"
)

// Read-only listings of session memory for the operator panel.

// LedgerItem is one live session grant or one ledgered denial (the type every store
// shares).
type LedgerItem = ledger.Item

// Grants lists the live session grants, newest first, at most limit of them (limit <= 0:
// all), and how many there are in all.
func (s *Store) Grants(_ context.Context, limit int) ([]LedgerItem, int, error) {
	return s.ledgerItems(bucketGrants, limit, func(e *approval.AuditEntry) bool {
		return e.Source == approval.SourceHuman && (e.Outcome == approval.OutcomeAllowSession || e.Outcome == approval.OutcomeAllowAlways)
	})
}

// Denials lists the denial ledger (human denials that refuse the same call again in that
// session), newest first, at most limit of them (limit <= 0: all), and how many there are.
func (s *Store) Denials(_ context.Context, limit int) ([]LedgerItem, int, error) {
	return s.ledgerItems(bucketDenials, limit, func(e *approval.AuditEntry) bool {
		return e.Source == approval.SourceHuman && e.Outcome == approval.OutcomeDeny
	})
}

// ledgerItems lists a grants or denials bucket; made tells the decision that wrote an
// item from later decisions of the same call (a grant used, a ledgered refusal).
func (s *Store) ledgerItems(bucket []byte, limit int, made func(*approval.AuditEntry) bool) ([]LedgerItem, int, error) {
	var out []LedgerItem
	total := 0
	err := s.view(string(bucket), func(tx *bolt.Tx) error {
		err := tx.Bucket(bucket).ForEach(func(k, v []byte) error {
			agent, session, fp, ok := splitLedgerKey(k)
			if !ok {
				return fmt.Errorf("corrupt key %q in %s", k, bucket)
			}
			var at time.Time
			if err := at.UnmarshalBinary(v); err != nil {
				return fmt.Errorf("corrupt time of %q in %s: %w", k, bucket, err)
			}
			out = append(out, LedgerItem{Agent: agent, Session: session, Fingerprint: fp, At: at})
			return nil
		})
		if err != nil {
			return err
		}
		total = len(out)
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
		for i := range out {
			if err := describe(tx, &out[i], made); err != nil {
				return err
			}
		}
		return nil
	})
	return out, total, err
}

// describeScan bounds the audit entries read to describe one item.
const describeScan = 1024

// describe fills in an item from its decision's audit entry. The grant or denial is
// written in the decision's transaction with the decision's time, and the audit key starts
// with the entry's time, which is that time or (when the trail already held a newer entry)
// a little later; so the entry is found by a seek and a short walk, not a scan.
func describe(tx *bolt.Tx, it *LedgerItem, made func(*approval.AuditEntry) bool) error {
	c := tx.Bucket(bucketAudit).Cursor()
	n := 0
	for k, v := c.Seek(auditKey(it.At, 0)); k != nil && n < describeScan; k, v = c.Next() {
		n++
		var e approval.AuditEntry
		if err := json.Unmarshal(v, &e); err != nil {
			continue // damaged: Audit and verify name it
		}
		if e.Event != approval.EventDecision || e.Session != it.Session || e.Fingerprint != it.Fingerprint || !made(&e) {
			continue
		}
		// An item of the record every agent shares (kept from before sessions had owners)
		// may come from any agent's decision; an agent's own only from that agent's.
		if it.Agent != "" && e.Agent != it.Agent {
			continue
		}
		it.RequestID, it.Tool, it.Summary, it.DecidedBy, it.Reason = e.RequestID, e.Tool, e.Summary, e.DecidedBy, e.Reason
		return nil
	}
	return nil
}

// splitLedgerKey reads a grant's or denial's key (see ledgerKey).
func splitLedgerKey(k []byte) (agent, session, fp string, ok bool) {
	session, rest, ok := cutLengthPrefixed(k)
	if !ok {
		return "", "", "", false
	}
	agent, rest, ok = cutLengthPrefixed(rest)
	return agent, session, string(rest), ok
}

// splitSessionKey reads a session record's key (see sessionKey).
func splitSessionKey(k []byte) (agent, session string, ok bool) {
	session, rest, ok := cutLengthPrefixed(k)
	return string(rest), session, ok
}

func cutLengthPrefixed(k []byte) (part string, rest []byte, ok bool) {
	if len(k) < 2 {
		return "", nil, false
	}
	n := int(binary.BigEndian.Uint16(k))
	if len(k) < 2+n {
		return "", nil, false
	}
	return string(k[2 : 2+n]), k[2+n:], true
}

// PausedSessions lists the paused session records, most recently paused first, at most
// limit of them (limit <= 0: all), and how many there are. A record's Agent is the agent
// whose session it is; "" is the record every agent of that name shares.
func (s *Store) PausedSessions(_ context.Context, limit int) ([]ledger.Session, int, error) {
	var out []ledger.Session
	err := s.view("sessions", func(tx *bolt.Tx) error {
		return tx.Bucket(bucketSessions).ForEach(func(k, v []byte) error {
			agent, name, ok := splitSessionKey(k)
			if !ok {
				return fmt.Errorf("corrupt session key %q", k)
			}
			var sess ledger.Session
			if err := json.Unmarshal(v, &sess); err != nil {
				// Damaged: it reads as paused (and is quarantined), so it is listed as such.
				s.quarantineLater(&RecordError{Bucket: string(bucketSessions), Key: string(k), Raw: append([]byte(nil), v...), Err: err})
				sess = damagedSession(name, agent, time.Time{})
			}
			if sess.Paused {
				sess.Name, sess.Agent = name, agent
				out = append(out, sess)
			}
			return nil
		})
	})
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
	return out, total, err
}
