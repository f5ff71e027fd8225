package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/policy"
)

// AllowlistItem is a persisted "allow always" entry with its provenance (the type every
// store shares).
type AllowlistItem = approval.AllowlistItem

// allowlistKey is the length-prefixed pattern and agent, then the args glob.
func allowlistKey(pattern, agent, args string) []byte {
	k := make([]byte, 0, 4+len(pattern)+len(agent)+len(args))
	k = binary.BigEndian.AppendUint16(k, uint16(len(pattern)))
	k = append(k, pattern...)
	k = binary.BigEndian.AppendUint16(k, uint16(len(agent)))
	k = append(k, agent...)
	return append(k, args...)
}

func allowlistPatternPrefix(pattern string) []byte {
	k := binary.BigEndian.AppendUint16(nil, uint16(len(pattern)))
	return append(k, pattern...)
}

// persistAllowlist stores the patterns of an "allow always" for the agent that asked: a
// human's "always" for one agent is never an allow for another.
func persistAllowlist(tx *bolt.Tx, r *approval.Request, patterns []string) error {
	if len(patterns) == 0 {
		return nil
	}
	if r.Agent == "" {
		return fmt.Errorf("request %s has no agent: its allow-always cannot be kept", r.ID)
	}
	for _, p := range patterns {
		if err := checkKeyPart("allowlist pattern", p); err != nil {
			return err
		}
		rec := AllowlistItem{Pattern: p, Agent: r.Agent, AddedBy: r.DecidedBy, RequestID: r.ID, AddedAt: r.DecidedAt}
		if err := putJSON(tx.Bucket(bucketAllowlist), allowlistKey(p, r.Agent, ""), rec); err != nil {
			return err
		}
	}
	return nil
}

// reloadAllowlist reads the persisted entries into memory. A damaged entry is left out (it
// allows nothing) and quarantined.
func (s *Store) reloadAllowlist() error {
	var entries []policy.AllowlistEntry
	err := s.view("allowlist", func(tx *bolt.Tx) error {
		return tx.Bucket(bucketAllowlist).ForEach(func(k, v []byte) error {
			var r AllowlistItem
			if err := json.Unmarshal(v, &r); err != nil {
				s.quarantineLater(damagedAllowlistEntry(k, v, err))
				return nil
			}
			if e, ok := policyEntry(r); ok {
				entries = append(entries, e)
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	s.allow.Store(&entries)
	return nil
}

// policyEntry is the policy's form of a persisted entry. An entry restricted to some
// arguments is left out until the policy can match arguments: dropping the restriction
// would make it wider than what the human allowed.
func policyEntry(r AllowlistItem) (policy.AllowlistEntry, bool) {
	if !r.Unrestricted() {
		return policy.AllowlistEntry{}, false
	}
	return policy.AllowlistEntry{Pattern: r.Pattern, Agent: r.Agent}, true
}

// AllowlistEntries returns the persisted entries (implements policy.PersistedAllowlist).
func (s *Store) AllowlistEntries() []policy.AllowlistEntry {
	if p := s.allow.Load(); p != nil {
		return *p
	}
	return nil
}

// ListAllowlist returns the persisted entries with who added them, by pattern, agent and
// args.
func (s *Store) ListAllowlist(_ context.Context) ([]AllowlistItem, error) {
	var out []AllowlistItem
	err := s.view("allowlist", func(tx *bolt.Tx) error {
		return tx.Bucket(bucketAllowlist).ForEach(func(k, v []byte) error {
			var r AllowlistItem
			if err := json.Unmarshal(v, &r); err != nil {
				s.quarantineLater(damagedAllowlistEntry(k, v, err))
				return nil
			}
			out = append(out, r)
			return nil
		})
	})
	return out, err
}

// AllowlistSelector picks persisted entries of one pattern (the type every store shares).
type AllowlistSelector = approval.AllowlistSelector

// RevokeAllowlist removes the persisted entries the selector picks and returns them (none:
// nothing matched). One audit entry per removed entry names its pattern, agent and args.
func (s *Store) RevokeAllowlist(ctx context.Context, sel AllowlistSelector, audit approval.AuditEntry) ([]AllowlistItem, error) {
	var revoked []AllowlistItem
	err := s.write(ctx, true, func(tx *bolt.Tx) error {
		revoked = nil
		b := tx.Bucket(bucketAllowlist)
		prefix := allowlistPatternPrefix(sel.Pattern)
		var keys [][]byte
		var damaged []*RecordError
		c := b.Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			var r AllowlistItem
			if err := json.Unmarshal(v, &r); err != nil {
				damaged = append(damaged, damagedAllowlistEntry(k, v, err))
				continue
			}
			if sel.Matches(r) {
				keys = append(keys, append([]byte(nil), k...))
				revoked = append(revoked, r)
			}
		}
		for _, re := range damaged {
			// A damaged entry under the pattern is dropped too: it allows nothing.
			if err := s.quarantineIn(tx, re); err != nil {
				return err
			}
		}
		for i, k := range keys {
			if err := b.Delete(k); err != nil {
				return err
			}
			e := audit
			e.Agent = revoked[i].Agent
			e.Reason = revokeReason(revoked[i])
			if err := s.appendAudit(tx, e); err != nil {
				return err
			}
		}
		return nil
	})
	return revoked, err
}

func revokeReason(r AllowlistItem) string { return r.RevokeReason() }

func damagedAllowlistEntry(k, v []byte, err error) *RecordError {
	return &RecordError{Bucket: string(bucketAllowlist), Key: string(k), Raw: append([]byte(nil), v...), Err: err}
}
