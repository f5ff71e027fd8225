package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/ledger"
)

// A migration brings a database from version to-1 to version to. It runs at Open, before
// anything reads the store, either in one transaction (the file is at the old version or
// the new one, never in between) or in transactions that each record how far they got, so
// a crash or a kill midway resumes where it stopped. Either way the version is bumped in
// the transaction that completes it (migrate does that for a multi-transaction step,
// with its progress marks).
type migration struct {
	to   uint32
	name string
	run  func(db *bolt.DB, env migrateEnv) error
}

// migrateEnv is what a migration runs with.
type migrateEnv struct {
	log *slog.Logger
	// chunk is how many records one migration transaction handles.
	chunk int
	// afterChunk, when set, runs after each committed chunk; an error stops the
	// migration there (tests use it to interrupt one).
	afterChunk func() error
	// now is the clock of the audit entries migrations leave.
	now func() time.Time
}

func (e migrateEnv) committed() error {
	if e.afterChunk != nil {
		return e.afterChunk()
	}
	return nil
}

var migrations = []migration{
	{2, "sessions belong to an agent", migrateAgentSessionsStep},
	{3, "index the audit trail", migrateAuditIndexes},
}

// migrationProgress are the meta keys where migrations record how far they got.
var migrationProgress = [][]byte{keyMigrateAudit, keyMigrateRequests}

// migrateChunk is how many records one migration transaction handles at open.
const migrateChunk = 20000

func schemaVersion(tx *bolt.Tx) (uint32, bool) {
	v := tx.Bucket(bucketMeta).Get(keySchema)
	if len(v) != 4 {
		return 0, false
	}
	return binary.BigEndian.Uint32(v), true
}

func putSchemaVersion(tx *bolt.Tx, v uint32) error {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], v)
	return tx.Bucket(bucketMeta).Put(keySchema, b[:])
}

// migrate runs the migrations from version from up to SchemaVersion.
func migrate(db *bolt.DB, from uint32, env migrateEnv) error {
	log := env.log
	for _, m := range migrations {
		if m.to <= from {
			continue
		}
		start := time.Now()
		log.Info("migrating the database", "path", db.Path(), "to_version", m.to, "step", m.name)
		if err := m.run(db, env); err != nil {
			return fmt.Errorf("migrating to version %d (%s): %w", m.to, m.name, err)
		}
		// The progress marks go with the version bump, in one transaction: a rerun either
		// resumes from them or finds the step done.
		err := db.Update(func(tx *bolt.Tx) error {
			for _, k := range migrationProgress {
				if err := tx.Bucket(bucketMeta).Delete(k); err != nil {
					return err
				}
			}
			return putSchemaVersion(tx, m.to)
		})
		if err != nil {
			return err
		}
		log.Info("database migrated", "path", db.Path(), "version", m.to, "took", time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// migrateAgentSessionsStep (version 2) re-keys session memory by agent in one
// transaction, with an audit entry saying what it changed and the version bump.
func migrateAgentSessionsStep(db *bolt.DB, env migrateEnv) error {
	return db.Update(func(tx *bolt.Tx) error {
		note, err := migrateAgentSessions(tx)
		if err != nil {
			return err
		}
		b := tx.Bucket(bucketAudit)
		seq, err := b.NextSequence()
		if err != nil {
			return err
		}
		e := approval.AuditEntry{Seq: seq, Time: env.now().UTC(), Event: approval.EventMigration, Actor: "approvebot",
			Reason: "schema version 1 to 2: " + note}
		if err := putJSON(b, auditKey(e.Time, seq), e); err != nil {
			return err
		}
		return putSchemaVersion(tx, 2)
	})
}

// migrateAuditIndexes (version 3) writes the indexes, the per-hour counters and the
// removed-entries count for a trail written before they existed, then removes the
// decided requests whose entries retention had already removed (before version 3,
// audit_max_entries pruned entries but never requests).
func migrateAuditIndexes(db *bolt.DB, env migrateEnv) error {
	log := env.log
	// Progress: the last audit key indexed, then how many entries so far.
	for done := false; !done; {
		err := db.Update(func(tx *bolt.Tx) error {
			meta := tx.Bucket(bucketMeta)
			var at []byte
			var n uint64
			if p := meta.Get(keyMigrateAudit); len(p) == 24 {
				at, n = bytes.Clone(p[:16]), binary.BigEndian.Uint64(p[16:])
			}
			c := tx.Bucket(bucketAudit).Cursor()
			k, v := c.First()
			if at != nil {
				if k, v = c.Seek(at); bytes.Equal(k, at) {
					k, v = c.Next()
				}
			}
			chunk := 0
			var entries []indexedEntry
			for ; k != nil && chunk < env.chunk; k, v = c.Next() {
				if len(k) != 16 {
					return fmt.Errorf("audit key %x is not 16 bytes", k)
				}
				k := bytes.Clone(k) // bbolt keeps what Put is given until the commit
				f, err := decodeIndexed(v)
				if err != nil {
					return err
				}
				// Keys written before version 3 are not all in seq order: each gets its
				// own seq key, and the deferred indexes are written at once.
				if err := index(tx, k, &f); err != nil {
					return err
				}
				if err := putSeq(tx, k); err != nil {
					return err
				}
				entries = append(entries, indexedEntry{k, f})
				at = k
				chunk++
			}
			if err := writePartition(tx, entries); err != nil {
				return err
			}
			n += uint64(chunk)
			if k == nil {
				done = true
				// Entries removed before version 3: the sequence counted them all.
				seq := tx.Bucket(bucketAudit).Sequence()
				var v [8]byte
				binary.BigEndian.PutUint64(v[:], seq-n)
				if err := meta.Put(keyAuditRemoved, v[:]); err != nil {
					return err
				}
				var legacy [8]byte
				binary.BigEndian.PutUint64(legacy[:], seq)
				if err := meta.Put(keyAuditLegacySeq, legacy[:]); err != nil {
					return err
				}

			} else {
				log.Info("indexing the audit trail", "entries", n)
			}
			if at == nil {
				return nil // an empty trail
			}
			p := make([]byte, 24)
			copy(p, at)
			binary.BigEndian.PutUint64(p[16:], n)
			return meta.Put(keyMigrateAudit, p)
		})
		if err == nil {
			err = env.committed()
		}
		if err != nil {
			return err
		}
	}
	removed := 0
	for done := false; !done; {
		err := db.Update(func(tx *bolt.Tx) error {
			meta := tx.Bucket(bucketMeta)
			first, _ := tx.Bucket(bucketAudit).Cursor().First()
			if first == nil {
				done = true // no trail to compare with: keep every request
				return nil
			}
			oldest := time.Unix(0, int64(binary.BigEndian.Uint64(first[:8])))
			at := bytes.Clone(meta.Get(keyMigrateRequests))
			reqs, pending, byRequest := tx.Bucket(bucketRequests), tx.Bucket(bucketPending), tx.Bucket(bucketAuditRequest).Cursor()
			c := reqs.Cursor()
			k, v := c.First()
			if at != nil {
				if k, v = c.Seek(at); bytes.Equal(k, at) {
					k, v = c.Next()
				}
			}
			var orphans [][]byte
			for chunk := 0; k != nil && chunk < env.chunk; k, v = c.Next() {
				chunk++
				at = bytes.Clone(k)
				if pending.Get(k) != nil {
					continue
				}
				prefix := indexPrefix(string(k))
				if ik, _ := byRequest.Seek(prefix); ik != nil && len(ik) == len(prefix)+16 && bytes.HasPrefix(ik, prefix) {
					continue
				}
				var r struct {
					CreatedAt time.Time `json:"created_at"`
				}
				if err := json.Unmarshal(v, &r); err != nil {
					return fmt.Errorf("corrupt request %q: %w", k, err)
				}
				if r.CreatedAt.Before(oldest) {
					orphans = append(orphans, at)
				}
			}
			for _, id := range orphans {
				if err := reqs.Delete(id); err != nil {
					return err
				}
			}
			removed += len(orphans)
			done = k == nil
			if at == nil {
				return nil
			}
			return meta.Put(keyMigrateRequests, at)
		})
		if err == nil {
			err = env.committed()
		}
		if err != nil {
			return err
		}
	}
	if removed > 0 {
		log.Info("removed decided requests whose audit entries retention had removed", "requests", removed)
	}
	return nil
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
