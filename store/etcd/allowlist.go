package etcd

import (
	"context"
	"encoding/json"
	"math"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/policy"
)

// allowSnapshot is the persisted allowlist as read at a version of its version key.
type allowSnapshot struct {
	version int64
	entries []policy.AllowlistEntry
}

func (s *Store) listAllowlist(ctx context.Context) ([]AllowlistItem, int64, error) {
	ctx, cancel := s.readCtx(ctx)
	defer cancel()
	resp, err := s.cli.Txn(ctx).Then(
		clientv3.OpGet(s.k.allowPrefix(), clientv3.WithPrefix()),
		clientv3.OpGet(s.k.allowVersion(), clientv3.WithKeysOnly()),
	).Commit()
	if err != nil {
		return nil, 0, unavailable("reading the allowlist", err)
	}
	var out []AllowlistItem
	for _, kv := range resp.Responses[0].GetResponseRange().Kvs {
		var it AllowlistItem
		if err := json.Unmarshal(kv.Value, &it); err != nil {
			// Left out (it allows nothing) and quarantined.
			s.quarantineLater(&recordError{kind: "allowlist", key: string(kv.Key), raw: kv.Value, err: err})
			continue
		}
		out = append(out, it)
	}
	var version int64
	if kvs := resp.Responses[1].GetResponseRange().Kvs; len(kvs) == 1 {
		version = kvs[0].ModRevision
	}
	return out, version, nil
}

// reloadAllowlist reads the allowlist again unless the copy held is at least at version.
func (s *Store) reloadAllowlist(ctx context.Context, version int64) error {
	if cur := s.allow.Load(); cur != nil && cur.version >= version {
		return nil
	}
	s.allowMu.Lock()
	defer s.allowMu.Unlock()
	if cur := s.allow.Load(); cur != nil && cur.version >= version {
		return nil
	}
	items, v, err := s.listAllowlist(ctx)
	if err != nil {
		return err
	}
	entries := make([]policy.AllowlistEntry, 0, len(items))
	for _, it := range items {
		if it.Unrestricted() {
			entries = append(entries, policy.AllowlistEntry{Pattern: it.Pattern, Agent: it.Agent})
		}
	}
	s.allow.Store(&allowSnapshot{version: v, entries: entries})
	return nil
}

// AllowlistEntries returns the persisted entries (implements policy.PersistedAllowlist).
func (s *Store) AllowlistEntries() []policy.AllowlistEntry {
	if p := s.allow.Load(); p != nil {
		return p.entries
	}
	return nil
}

// ListAllowlist returns the persisted entries with who added them.
func (s *Store) ListAllowlist(ctx context.Context) ([]AllowlistItem, error) {
	items, _, err := s.listAllowlist(ctx)
	return items, err
}

// AllowlistSelector picks persisted entries of one pattern.
type AllowlistSelector = approval.AllowlistSelector

// RevokeAllowlist removes the persisted entries the selector picks and returns them (none:
// nothing matched); one audit entry per removed entry. Every replica reads the allowlist
// again before its next ask.
func (s *Store) RevokeAllowlist(ctx context.Context, sel AllowlistSelector, audit approval.AuditEntry) ([]AllowlistItem, error) {
	var revoked []AllowlistItem
	err := s.write(ctx, func(t *txn) error {
		revoked = nil
		kvs, err := t.getPrefix(t.s.k.allowPattern(sel.Pattern))
		if err != nil {
			return err
		}
		for _, kv := range kvs {
			var it AllowlistItem
			if err := json.Unmarshal(kv.val, &it); err != nil {
				// A damaged entry under the pattern is dropped too: it allows nothing.
				if _, err := t.quarantineIn(&recordError{kind: "allowlist", key: kv.key, raw: kv.val, err: err}); err != nil {
					return err
				}
				continue
			}
			if !sel.Matches(it) {
				continue
			}
			t.del(kv.key)
			revoked = append(revoked, it)
			e := audit
			e.Agent, e.Reason = it.Agent, it.RevokeReason()
			if err := t.appendAudit(e); err != nil {
				return err
			}
		}
		if len(revoked) > 0 {
			t.put(t.s.k.allowVersion(), nil)
		}
		return nil
	})
	if err == nil && len(revoked) > 0 {
		// This replica sees its own revocation at once.
		err = s.reloadAllowlist(ctx, math.MaxInt64)
	}
	return revoked, err
}
