package etcd

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/approvebot/approvebot/core/gate"
)

// probeEvery is how often a replica writes its probe key while nothing else wrote.
const probeEvery = 5 * time.Second

// Health is the store's state for /healthz and the metrics.
type Health struct {
	// Writable is false while writes fail (no quorum, etcd unreachable) and while the
	// replica's lease is not being kept alive.
	Writable bool
	// Error says why not ("" when writable).
	Error string
	// Since is when the store stopped being writable (zero when writable).
	Since time.Time
	// WriteErrors counts failed writes since open.
	WriteErrors uint64
	// Damaged counts damaged records met since open (each record once).
	Damaged uint64
}

type health struct {
	mu        sync.Mutex
	failing   bool
	err       string
	since     time.Time
	lastWrite time.Time
	errs      uint64
	damaged   uint64
}

// noteWrite records the outcome of one transaction that reached etcd (or gave up).
func (s *Store) noteWrite(err error) {
	s.h.mu.Lock()
	defer s.h.mu.Unlock()
	s.h.lastWrite = time.Now()
	if err == nil {
		if s.h.failing {
			s.log.Info("etcd: writes commit again")
		}
		s.h.failing, s.h.err, s.h.since = false, "", time.Time{}
		return
	}
	if !errors.Is(err, gate.ErrStoreUnavailable) {
		return // an op's own refusal, not the store's state
	}
	s.h.errs++
	if !s.h.failing {
		s.log.Error("etcd: writes fail; every request that needs a write is refused", "err", err)
		s.h.failing, s.h.since = true, time.Now()
	}
	s.h.err = err.Error()
}

// Health reports whether the store can write, and why not.
func (s *Store) Health() Health {
	s.h.mu.Lock()
	h := Health{Writable: !s.h.failing, Error: s.h.err, Since: s.h.since, WriteErrors: s.h.errs, Damaged: s.h.damaged}
	s.h.mu.Unlock()
	if h.Writable && !s.lease.alive() {
		h.Writable, h.Error = false, "the replica's etcd lease is not being kept alive (etcd unreachable?)"
	}
	return h
}

// probe writes this replica's probe key whenever nothing was written for probeEvery, so
// Health tells the truth on an idle replica too.
func (s *Store) probe() {
	defer s.bgJobs.Done()
	t := time.NewTicker(probeEvery)
	defer t.Stop()
	for {
		select {
		case <-s.bg.Done():
			return
		case <-t.C:
		}
		s.h.mu.Lock()
		idle := time.Since(s.h.lastWrite) >= probeEvery
		s.h.mu.Unlock()
		if !idle {
			continue
		}
		ctx, cancel := context.WithTimeout(s.bg, s.opts.WriteTimeout)
		at := []byte(time.Now().UTC().Format(time.RFC3339Nano))
		_ = s.write(ctx, func(t *txn) error { t.put(t.s.k.probe(t.s.opts.Name), at); return nil })
		cancel()
	}
}

// LastAlive is zero: a request's wait on etcd is measured by the wall clocks of the
// replicas (keep them synchronised), not by one process's checkpoint.
func (s *Store) LastAlive() time.Time { return time.Time{} }
