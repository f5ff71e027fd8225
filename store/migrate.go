package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/ledger"
)

// A migration upgrades the file's layout by one schema version, inside the transaction
// that opens it: the file is at the old version or the new one, never in between. Each
// migration leaves an audit entry saying what it changed.
type migration struct {
	from uint32
	run  func(tx *bolt.Tx) (note string, err error)
}

var migrations = []migration{
	{from: 1, run: migrateAgentSessions},
}

// migrate brings a file written at schema version from up to SchemaVersion.
func migrate(tx *bolt.Tx, from uint32, now time.Time) error {
	for v := from; v < SchemaVersion; v++ {
		var m *migration
		for i := range migrations {
			if migrations[i].from == v {
				m = &migrations[i]
			}
		}
		if m == nil {
			return fmt.Errorf("no migration from schema version %d", v)
		}
		note, err := m.run(tx)
		if err != nil {
			return fmt.Errorf("migrating schema version %d to %d: %w", v, v+1, err)
		}
		b := tx.Bucket(bucketAudit)
		seq, err := b.NextSequence()
		if err != nil {
			return err
		}
		e := approval.AuditEntry{Seq: seq, Time: now.UTC(), Event: approval.EventMigration, Actor: "approvebot",
			Reason: fmt.Sprintf("schema version %d to %d: %s", v, v+1, note)}
		if err := putJSON(b, auditKey(e.Time, seq), e); err != nil {
			return err
		}
	}
	var ver [4]byte
	binary.BigEndian.PutUint32(ver[:], SchemaVersion)
	return tx.Bucket(bucketMeta).Put(keySchema, ver[:])
}

// migrateAgentSessions re-keys session memory by agent (schema 1 → 2). Schema 1 keyed
// sessions, grants and denials by the session name alone, so one agent could use another's
// grants and pause its sessions. Grants are dropped (fail closed: nobody can tell which
// agent a human granted, so each asks again). Session records and denials are kept for
// every agent that used the session (as the requests and the audit trail record it); when
// none is known they go to the record every agent of the name shares, which only
// restricts. Operator settings (tier, unattended) go to the shared record: they were made
// for the session name. Persisted allowlist entries are re-keyed with their agent and args.
func migrateAgentSessions(tx *bolt.Tx) (string, error) {
	owners, err := sessionOwners(tx)
	if err != nil {
		return "", err
	}
	grants := tx.Bucket(bucketGrants).Stats().KeyN
	if err := recreate(tx, bucketGrants); err != nil {
		return "", err
	}

	type kv struct{ k, v []byte }
	collect := func(name []byte) ([]kv, error) {
		var out []kv
		err := tx.Bucket(name).ForEach(func(k, v []byte) error {
			out = append(out, kv{append([]byte(nil), k...), append([]byte(nil), v...)})
			return nil
		})
		if err != nil {
			return nil, err
		}
		return out, recreate(tx, name)
	}

	oldSessions, err := collect(bucketSessions)
	if err != nil {
		return "", err
	}
	kept, unowned := 0, 0
	agentsSeen := map[string]bool{}
	for _, e := range oldSessions {
		name := string(e.k)
		var old ledger.Session
		if err := json.Unmarshal(e.v, &old); err != nil {
			return "", fmt.Errorf("corrupt session record %q: %w", e.k, err)
		}
		shared := ledger.Session{Name: name, Tier: old.Tier, Unattended: old.Unattended}
		agents := owners[name]
		if len(agents) == 0 {
			shared.Parent, shared.Denials, shared.Paused, shared.PausedAt = old.Parent, old.Denials, old.Paused, old.PausedAt
			unowned++
		}
		for _, a := range agents {
			agentsSeen[a] = true
			own := ledger.Session{Name: name, Agent: a, Parent: old.Parent, Denials: old.Denials, Paused: old.Paused, PausedAt: old.PausedAt}
			if err := putSession(tx, own); err != nil {
				return "", err
			}
			kept++
		}
		if shared.Tier != "" || shared.Unattended || shared.Parent != "" || shared.Denials > 0 || shared.Paused {
			if err := putSession(tx, shared); err != nil {
				return "", err
			}
		}
	}

	oldDenials, err := collect(bucketDenials)
	if err != nil {
		return "", err
	}
	denials := 0
	for _, e := range oldDenials {
		i := bytes.LastIndexByte(e.k, 0)
		if i < 0 {
			return "", fmt.Errorf("corrupt denial key %q", e.k)
		}
		session, fp := string(e.k[:i]), string(e.k[i+1:])
		agents := owners[session]
		if len(agents) == 0 {
			agents = []string{""}
		}
		for _, a := range agents {
			if err := checkKeyPart("session name", session); err != nil {
				return "", err
			}
			if err := tx.Bucket(bucketDenials).Put(ledgerKey(a, session, fp), e.v); err != nil {
				return "", err
			}
			denials++
		}
	}

	oldAllow, err := collect(bucketAllowlist)
	if err != nil {
		return "", err
	}
	for _, e := range oldAllow {
		var r AllowlistItem
		if err := json.Unmarshal(e.v, &r); err != nil {
			return "", fmt.Errorf("corrupt allowlist entry %q: %w", e.k, err)
		}
		if r.Pattern == "" {
			r.Pattern = string(e.k)
		}
		if err := putJSON(tx.Bucket(bucketAllowlist), allowlistKey(r.Pattern, r.Agent, r.Args), r); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("sessions belong to an agent: dropped %d session grants (they are asked again); "+
		"kept %d session records and %d denials for the %d agents that used them, %d sessions with no known agent for every agent",
		grants, kept, denials, len(agentsSeen), unowned), nil
}

// sessionOwners maps each session name to the agents that used it, as the stored requests
// and the audit trail record it (the trail outlives pruned requests).
func sessionOwners(tx *bolt.Tx) (map[string][]string, error) {
	set := map[string]map[string]bool{}
	add := func(session, agent string) {
		if session == "" || agent == "" {
			return
		}
		if set[session] == nil {
			set[session] = map[string]bool{}
		}
		set[session][agent] = true
	}
	var rec struct {
		Session string `json:"session"`
		Agent   string `json:"agent"`
	}
	for _, name := range [][]byte{bucketRequests, bucketAudit} {
		err := tx.Bucket(name).ForEach(func(k, v []byte) error {
			rec.Session, rec.Agent = "", ""
			if err := json.Unmarshal(v, &rec); err != nil {
				return fmt.Errorf("corrupt record %q in %s: %w", k, name, err)
			}
			add(rec.Session, rec.Agent)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	out := make(map[string][]string, len(set))
	for s, agents := range set {
		for a := range agents {
			out[s] = append(out[s], a)
		}
		sort.Strings(out[s])
	}
	return out, nil
}

func recreate(tx *bolt.Tx, name []byte) error {
	if err := tx.DeleteBucket(name); err != nil {
		return err
	}
	_, err := tx.CreateBucket(name)
	return err
}
