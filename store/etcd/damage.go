package etcd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
)

// recordError is one stored record that does not decode. As in the bbolt store, readers
// get a safe stand-in (a request denied with source "store", a paused session, no
// allowlist entry) and the record is quarantined: its bytes are kept under quar/ and the
// stand-in takes its place, so one damaged record never keeps the rest working.
type recordError struct {
	kind  string // "requests", "sessions", "allowlist", "audit"
	key   string
	name  string // the request id or the session name
	agent string // the session's agent
	raw   []byte
	err   error
}

func (e *recordError) Error() string {
	return fmt.Sprintf("damaged record %s in %s: %v", e.key, e.kind, e.err)
}

func (e *recordError) Unwrap() error { return e.err }

func asRecordError(err error) *recordError {
	var re *recordError
	if errors.As(err, &re) {
		return re
	}
	return nil
}

// quarantined is what quar/ keeps of a damaged record.
type quarantined struct {
	Kind  string    `json:"bucket"`
	Key   string    `json:"key"`
	Raw   []byte    `json:"raw"`
	Error string    `json:"error"`
	At    time.Time `json:"at"`
}

// noteDamaged counts and logs a damaged record, once per record.
func (s *Store) noteDamaged(re *recordError) {
	if _, seen := s.damagedSeen.LoadOrStore(re.key, struct{}{}); seen {
		return
	}
	s.h.mu.Lock()
	s.h.damaged++
	s.h.mu.Unlock()
	s.log.Error("damaged record in the store: quarantined (a request is denied, a session paused, an allowlist entry dropped)",
		"key", re.key, "err", re.err)
}

// quarantineIn moves a damaged record aside in the transaction and puts its stand-in in
// its place; it returns the stand-in request for a request record.
func (t *txn) quarantineIn(re *recordError) (approval.Request, error) {
	s := t.s
	s.noteDamaged(re)
	now := s.now().UTC()
	q, err := json.Marshal(quarantined{Kind: re.kind, Key: re.key, Raw: re.raw, Error: re.err.Error(), At: now})
	if err != nil {
		return approval.Request{}, err
	}
	t.put(s.k.quarantine(re.key), q)
	audit := approval.AuditEntry{Time: now, Event: approval.EventQuarantine, DecidedBy: "approvebot",
		Reason: strings.TrimPrefix(re.Error(), "damaged ")}
	var stand approval.Request
	switch re.kind {
	case "requests":
		stand = gate.DamagedRequest(re.name, re.raw, now)
		raw, err := json.Marshal(stand)
		if err != nil {
			return stand, err
		}
		t.put(s.k.decided(re.name), raw)
		if re.key == s.k.pending(re.name) {
			t.del(s.k.pending(re.name))
			t.del(s.k.owner(re.name))
			t.delPosts(re.name)
			if err := t.countPending(&stand, -1); err != nil {
				return stand, err
			}
		}
		audit.RequestID, audit.Session, audit.Agent, audit.Tool = stand.ID, stand.Session, stand.Agent, stand.Tool
		audit.State, audit.Outcome, audit.Source = stand.State, stand.Outcome, stand.Source
	case "sessions":
		raw, err := json.Marshal(gate.DamagedSession(re.name, re.agent, now))
		if err != nil {
			return stand, err
		}
		t.put(re.key, raw)
		audit.Session = re.name
	case "allowlist":
		t.del(re.key)
		t.put(s.k.allowVersion(), nil)
	default:
		return stand, fmt.Errorf("etcd: no quarantine for %s", re.kind)
	}
	return stand, t.appendAudit(audit)
}

// quarantineLater quarantines, in the background, a damaged record a read met, unless it
// changed meanwhile.
func (s *Store) quarantineLater(re *recordError) {
	s.noteDamaged(re)
	if _, busy := s.quarantining.LoadOrStore(re.key, struct{}{}); busy {
		return
	}
	s.bgJobs.Add(1)
	go func() {
		defer s.bgJobs.Done()
		defer s.quarantining.Delete(re.key)
		ctx, cancel := context.WithTimeout(s.bg, s.opts.WriteTimeout)
		defer cancel()
		if err := s.quarantineNow(ctx, re); err != nil && !errors.Is(err, ErrClosed) && s.bg.Err() == nil {
			s.log.Warn("etcd: quarantining a damaged record failed; the next read tries again", "key", re.key, "err", err)
		}
	}()
}

func (s *Store) quarantineNow(ctx context.Context, re *recordError) error {
	return s.write(ctx, func(t *txn) error {
		raw, ok, err := t.get(re.key)
		if err != nil || !ok || !bytes.Equal(raw, re.raw) {
			return err
		}
		_, err = t.quarantineIn(re)
		return err
	})
}

// Quarantined lists the records moved aside (for operators and tests).
func (s *Store) Quarantined(ctx context.Context) ([]approval.DamagedRecord, error) {
	ctx, cancel := s.readCtx(ctx)
	defer cancel()
	resp, err := s.cli.Get(ctx, s.k.quarantinePrefix(), clientv3.WithPrefix())
	if err != nil {
		return nil, unavailable("reading the quarantine", err)
	}
	var out []approval.DamagedRecord
	for _, kv := range resp.Kvs {
		var q quarantined
		if json.Unmarshal(kv.Value, &q) == nil {
			out = append(out, approval.DamagedRecord{Bucket: q.Kind, Key: q.Key, Error: q.Error})
		}
	}
	return out, nil
}

// Rearm records a pending request's deadline and wait clock as the gate re-read them at
// start. A request no longer pending is returned unchanged.
func (s *Store) Rearm(ctx context.Context, id string, expiresAt time.Time, wait *approval.WaitClock) (approval.Request, error) {
	var out approval.Request
	err := s.write(ctx, func(t *txn) error {
		r, pending, found, err := t.readRequest(id)
		if err != nil {
			return err
		}
		if !found {
			return approval.ErrNotFound
		}
		out = r
		if !pending {
			return nil
		}
		r.ExpiresAt, r.Wait = expiresAt, wait
		out = r
		raw, err := json.Marshal(r)
		if err != nil {
			return err
		}
		t.put(t.s.k.pending(id), raw)
		return nil
	})
	return out, err
}
