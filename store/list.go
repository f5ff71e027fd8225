package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/ledger"
)

// Read-only listings of session memory for the operator panel.

// LedgerItem is one live session grant or one ledgered denial, with what the decision's
// audit entry says about it while that entry is still in the trail (retention may have
// pruned it; then only the key fields and the time are known).
type LedgerItem struct {
	Agent       string    `json:"agent,omitempty"`
	Session     string    `json:"session"`
	Fingerprint string    `json:"fingerprint"`
	At          time.Time `json:"at"`
	RequestID   string    `json:"request_id,omitempty"`
	Tool        string    `json:"tool,omitempty"`
	Summary     string    `json:"summary,omitempty"`
	DecidedBy   string    `json:"decided_by,omitempty"`
	Reason      string    `json:"reason,omitempty"`
}

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
	err := s.db.View(func(tx *bolt.Tx) error {
		err := tx.Bucket(bucket).ForEach(func(k, v []byte) error {
			session, fp, ok := splitPair(k)
			if !ok {
				return fmt.Errorf("corrupt key %q in %s", k, bucket)
			}
			var at time.Time
			if err := at.UnmarshalBinary(v); err != nil {
				return fmt.Errorf("corrupt time of %q in %s: %w", k, bucket, err)
			}
			out = append(out, LedgerItem{Session: session, Fingerprint: fp, At: at})
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
			return fmt.Errorf("corrupt audit entry: %w", err)
		}
		if e.Event != approval.EventDecision || e.Session != it.Session || e.Fingerprint != it.Fingerprint || !made(&e) {
			continue
		}
		it.Agent, it.RequestID, it.Tool, it.Summary, it.DecidedBy, it.Reason = e.Agent, e.RequestID, e.Tool, e.Summary, e.DecidedBy, e.Reason
		return nil
	}
	return nil
}

func splitPair(k []byte) (a, b string, ok bool) {
	i := bytes.IndexByte(k, 0)
	if i < 0 {
		return "", "", false
	}
	return string(k[:i]), string(k[i+1:]), true
}

// PausedSessions lists the paused sessions, most recently paused first, at most limit of
// them (limit <= 0: all), and how many there are.
func (s *Store) PausedSessions(_ context.Context, limit int) ([]ledger.Session, int, error) {
	var out []ledger.Session
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketSessions).ForEach(func(k, v []byte) error {
			var sess ledger.Session
			if err := json.Unmarshal(v, &sess); err != nil {
				return fmt.Errorf("corrupt session %q: %w", k, err)
			}
			if sess.Paused {
				sess.Name = string(k)
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
		return out[i].Name < out[j].Name
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, total, err
}
