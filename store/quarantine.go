package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/ledger"
)

// RecordError is one stored record that does not decode. Readers get a safe stand-in (a
// request denied with source "store", a paused session, no allowlist entry) and the record
// is quarantined: its bytes are kept in the quarantine bucket and the stand-in takes its
// place, so that one damaged record never keeps the rest of the store from working.
type RecordError struct {
	Bucket string
	Key    string
	Raw    []byte
	Err    error
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("damaged record %q in bucket %s: %v", printableKey([]byte(e.Key)), e.Bucket, e.Err)
}

func (e *RecordError) Unwrap() error { return e.Err }

// Is matches ErrDamaged.
func (e *RecordError) Is(target error) bool { return target == ErrDamaged }

func asRecordError(err error) *RecordError {
	var re *RecordError
	if errors.As(err, &re) {
		return re
	}
	return nil
}

// quarantined is what the quarantine bucket keeps of a damaged record.
type quarantined struct {
	Bucket string    `json:"bucket"`
	Key    string    `json:"key"`
	Raw    []byte    `json:"raw"`
	Error  string    `json:"error"`
	At     time.Time `json:"at"`
}

func damagedRequest(id string, raw []byte, at time.Time) approval.Request {
	return gate.DamagedRequest(id, raw, at)
}

func damagedSession(name, agent string, at time.Time) ledger.Session {
	return gate.DamagedSession(name, agent, at)
}

// quarantineKey is the length-prefixed bucket name, then the record's key.
func quarantineKey(bucket, key string) []byte {
	k := binary.BigEndian.AppendUint16(nil, uint16(len(bucket)))
	k = append(k, bucket...)
	return append(k, key...)
}

// parseSessionKey splits a session record's key (see sessionKey) into name and agent.
func parseSessionKey(k []byte) (name, agent string, ok bool) {
	if len(k) < 2 {
		return "", "", false
	}
	n := int(binary.BigEndian.Uint16(k))
	if len(k) < 2+n {
		return "", "", false
	}
	return string(k[2 : 2+n]), string(k[2+n:]), true
}

// noteDamaged counts and logs a damaged record, once per record.
func (s *Store) noteDamaged(re *RecordError) {
	if _, seen := s.damagedSeen.LoadOrStore(re.Bucket+"\x00"+re.Key, struct{}{}); seen {
		return
	}
	s.h.mu.Lock()
	s.h.damaged++
	s.h.mu.Unlock()
	s.log.Error("damaged record in the store: quarantined (a request is denied, a session paused, an allowlist entry dropped)",
		"bucket", re.Bucket, "key", printableKey([]byte(re.Key)), "err", re.Err)
}

// quarantineIn moves a damaged record aside inside a write transaction and puts its
// stand-in in its place. It is idempotent (a group commit may run it twice).
func (s *Store) quarantineIn(tx *bolt.Tx, re *RecordError) error {
	s.noteDamaged(re)
	now := s.now().UTC()
	q := quarantined{Bucket: re.Bucket, Key: re.Key, Raw: re.Raw, Error: re.Err.Error(), At: now}
	if err := putJSON(tx.Bucket(bucketQuarantine), quarantineKey(re.Bucket, re.Key), q); err != nil {
		return err
	}
	audit := approval.AuditEntry{Time: now, Event: approval.EventQuarantine, DecidedBy: "approvebot",
		Reason: strings.TrimPrefix(re.Error(), "damaged ")}
	switch re.Bucket {
	case string(bucketRequests):
		r := damagedRequest(re.Key, re.Raw, now)
		if err := putJSON(tx.Bucket(bucketRequests), []byte(re.Key), r); err != nil {
			return err
		}
		if err := tx.Bucket(bucketPending).Delete([]byte(re.Key)); err != nil {
			return err
		}
		audit.RequestID, audit.Session, audit.Agent, audit.Tool = r.ID, r.Session, r.Agent, r.Tool
		audit.State, audit.Outcome, audit.Source = r.State, r.Outcome, r.Source
	case string(bucketSessions):
		name, agent, ok := parseSessionKey([]byte(re.Key))
		if !ok {
			// Not a key approvebot writes: drop it rather than guess whose it was.
			if err := tx.Bucket(bucketSessions).Delete([]byte(re.Key)); err != nil {
				return err
			}
			break
		}
		if err := putJSON(tx.Bucket(bucketSessions), []byte(re.Key), damagedSession(name, agent, now)); err != nil {
			return err
		}
		audit.Session, audit.Agent = name, agent
	case string(bucketAllowlist):
		if err := tx.Bucket(bucketAllowlist).Delete([]byte(re.Key)); err != nil {
			return err
		}
	default:
		return fmt.Errorf("no quarantine for bucket %s", re.Bucket)
	}
	return s.appendAudit(tx, audit)
}

// quarantineNow quarantines a damaged record met outside a write transaction, unless it
// changed meanwhile.
func (s *Store) quarantineNow(ctx context.Context, re *RecordError) error {
	return s.write(ctx, re.Bucket == string(bucketAllowlist), func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(re.Bucket))
		if b == nil || !bytes.Equal(b.Get([]byte(re.Key)), re.Raw) {
			return nil
		}
		return s.quarantineIn(tx, re)
	})
}

// quarantineLater quarantines, in the background, a damaged record a read met.
func (s *Store) quarantineLater(re *RecordError) {
	s.noteDamaged(re)
	key := re.Bucket + "\x00" + re.Key
	if _, busy := s.quarantining.LoadOrStore(key, struct{}{}); busy {
		return
	}
	go func() {
		defer s.quarantining.Delete(key)
		ctx, cancel := context.WithTimeout(context.Background(), stuckWrite)
		defer cancel()
		if err := s.quarantineNow(ctx, re); err != nil && !errors.Is(err, ErrClosed) {
			s.log.Warn("quarantining a damaged record failed; the next read tries again", "bucket", re.Bucket,
				"key", printableKey([]byte(re.Key)), "err", err)
		}
	}()
}

// Quarantined lists the records moved aside, oldest key first (for operators and tests).
func (s *Store) Quarantined(_ context.Context) ([]approval.DamagedRecord, error) {
	var out []approval.DamagedRecord
	err := s.view("quarantine", func(tx *bolt.Tx) error {
		return tx.Bucket(bucketQuarantine).ForEach(func(_, v []byte) error {
			var q quarantined
			if err := json.Unmarshal(v, &q); err != nil {
				return nil
			}
			out = append(out, approval.DamagedRecord{Bucket: q.Bucket, Key: printableKey([]byte(q.Key)), Error: q.Error})
			return nil
		})
	})
	return out, err
}
