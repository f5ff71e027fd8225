package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	bolt "go.etcd.io/bbolt"
)

// A migration brings a database from version to-1 to version to. It runs at Open, before
// anything reads the store, in transactions that each record how far they got, so a
// crash or a kill midway resumes where it stopped. The version is bumped only when it is
// complete.
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
}

func (e migrateEnv) committed() error {
	if e.afterChunk != nil {
		return e.afterChunk()
	}
	return nil
}

var migrations = []migration{
	{2, "index the audit trail", migrateAuditIndexes},
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

// migrateAuditIndexes (version 2) writes the indexes, the per-hour counters and the
// removed-entries count for a trail written before they existed, then removes the
// decided requests whose entries retention had already removed (before version 2,
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
				// Keys written before version 2 are not all in seq order: each gets its
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
				// Entries removed before version 2: the sequence counted them all.
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
