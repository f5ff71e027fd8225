package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/approvebot/approvebot/core/gate"
)

// Health is the store's state for /healthz and the metrics.
type Health struct {
	// Writable is false while writes fail (disk full, EPERM, read-only, EIO), while a write
	// has waited too long for the disk, and for good once the file was deleted or replaced.
	Writable bool
	// Error says why not ("" when writable).
	Error string
	// Since is when the store stopped being writable (zero when writable).
	Since time.Time
	// WriteErrors counts failed commits since open.
	WriteErrors uint64
	// Damaged counts damaged records met since open (each record once).
	Damaged uint64
	// Lost is set once the file was deleted or replaced under the running server, or the
	// disk reported an I/O error: no write is tried again until a restart.
	Lost bool
}

// UnavailableError is a write the store did not commit: the disk is full, the file cannot
// be written (EPERM, read-only, EIO), or it was deleted or replaced. The caller was not
// told of any success. It matches gate.ErrStoreUnavailable (the API answers 503
// store_unavailable) and unwraps to the operating system's error.
type UnavailableError struct {
	Path string
	Err  error
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("store %s cannot write: %v", e.Path, e.Err)
}

func (e *UnavailableError) Unwrap() error { return e.Err }

// Is matches gate.ErrStoreUnavailable.
func (e *UnavailableError) Is(target error) bool { return target == gate.ErrStoreUnavailable }

// errLost is the write error once the file is gone.
type errLost struct{ reason string }

func (e errLost) Error() string { return e.reason }

// stuckWrite is how long one commit may wait for the disk before the store reports itself
// unwritable (a hung disk is not a healthy one, even before the write fails).
const stuckWrite = 10 * time.Second

// lostLogEvery repeats the loud log line while the file stays lost.
const lostLogEvery = time.Minute

// recoverAfter is how long commits must go without a failure before the store says it is
// writable again. A full disk still takes the probe's small write into a reused page, so one
// success right after a failure proves little.
const recoverAfter = 5 * time.Second

type health struct {
	mu       sync.Mutex
	writable bool
	err      string
	since    time.Time
	lost     string
	// lastFail is when a commit last failed.
	lastFail time.Time
	// lostLogged is when the loud line about a lost file was last logged.
	lostLogged time.Time
	// errs counts failed commits; damaged counts damaged records.
	errs, damaged uint64
}

// Health reports whether the store can write, and why not.
func (s *Store) Health() Health {
	s.h.mu.Lock()
	h := Health{Writable: s.h.writable && s.h.lost == "", Error: s.h.err, Since: s.h.since,
		WriteErrors: s.h.errs, Damaged: s.h.damaged, Lost: s.h.lost != ""}
	s.h.mu.Unlock()
	if h.Lost {
		h.Error = s.h.lost
	}
	if start := s.commitStart.Load(); h.Writable && start != 0 {
		if waited := time.Since(time.Unix(0, start)); waited > stuckWrite {
			h.Writable, h.Error = false, fmt.Sprintf("a write has waited %s for the disk", waited.Round(time.Second))
			h.Since = time.Unix(0, start).Add(stuckWrite)
		}
	}
	return h
}

// noteCommit records the outcome of one commit that reached the disk (err is nil, or the
// error bbolt returned from writing or syncing).
func (s *Store) noteCommit(err error) {
	s.h.mu.Lock()
	defer s.h.mu.Unlock()
	if err == nil {
		if s.h.writable || s.h.lost != "" || time.Since(s.h.lastFail) < recoverAfter {
			return
		}
		s.log.Info("store writable again", "db", s.path, "unwritable_for", time.Since(s.h.since).Round(time.Millisecond))
		s.h.writable, s.h.err, s.h.since = true, "", time.Time{}
		return
	}
	s.h.errs++
	s.h.lastFail = time.Now()
	if s.h.writable {
		s.h.since = time.Now()
		s.log.Error("store cannot write: requests that need a write are refused (503 store_unavailable) until it can",
			"db", s.path, "err", err)
	}
	s.h.writable, s.h.err = false, err.Error()
	if ioError(err) && s.h.lost == "" {
		// After a failed write-back the kernel may have dropped the pages it could not
		// write, so a later fsync that succeeds proves nothing: stop writing for good.
		s.isLost.Store(true)
		s.h.lost = fmt.Sprintf("the disk reported an I/O error writing %s (%v): no more writes until approvebot is restarted "+
			"(check the disk, then run `approvebot verify %s` with approvebot stopped)", s.path, err, s.path)
		s.log.Error("store stopped writing after an I/O error", "db", s.path, "err", err)
	}
	if s.h.lost == "" && unmapped(err) {
		// bbolt could not map the file again after growing it: its data is gone from
		// memory and no later transaction can work.
		s.isLost.Store(true)
		s.h.lost = fmt.Sprintf("bbolt lost its mapping of %s (%v): no more writes until approvebot is restarted "+
			"(check the disk, then run `approvebot verify %s` with approvebot stopped)", s.path, err, s.path)
		s.log.Error("store stopped writing: bbolt lost its mapping of the file", "db", s.path, "err", err)
	}
}

// ioError reports EIO, also where bbolt formatted it into its own message.
func ioError(err error) bool {
	return errors.Is(err, syscall.EIO) || strings.Contains(err.Error(), syscall.EIO.Error())
}

// unmapped reports a failed remap, after which bbolt's file mapping is gone.
func unmapped(err error) bool {
	return errors.Is(err, berrors.ErrInvalidMapping) || strings.Contains(err.Error(), "mmap")
}

// lose stops all writes: the file the server has open is no longer the one at its path.
func (s *Store) lose(reason string) {
	s.h.mu.Lock()
	if s.h.lost == "" {
		s.h.lost = reason
		if s.h.writable {
			s.h.since = time.Now()
		}
		s.h.writable = false
		s.isLost.Store(true)
	}
	loud := time.Since(s.h.lostLogged) >= lostLogEvery
	if loud {
		s.h.lostLogged = time.Now()
	}
	s.h.mu.Unlock()
	if loud {
		s.log.Error("DATABASE FILE LOST: approvebot refuses every request that needs a write", "db", s.path, "reason", reason)
	}
}

// lostReason is why writes are refused for good ("" while they are tried).
func (s *Store) lostReason() string {
	if !s.isLost.Load() {
		return ""
	}
	s.h.mu.Lock()
	defer s.h.mu.Unlock()
	return s.h.lost
}

// checkFile reports why the file at the path is not the one open ("" when it is).
func (s *Store) checkFile() string {
	fi, err := os.Stat(s.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("database file %s was deleted or moved away while approvebot was running; "+
			"writes would go to an unlinked file and be lost, so none are accepted. Its contents are still readable: "+
			"run `approvebot backup FILE` now, then stop approvebot and put FILE back at %s", s.path, s.path)
	case err != nil:
		return "" // unreadable directory: the open file is still the one; the writes will tell
	case !os.SameFile(s.fileID, fi):
		return fmt.Sprintf("database file %s was replaced by another file while approvebot was running; "+
			"no write is accepted into the old one. Run `approvebot backup FILE` to keep what the running server holds, "+
			"then restart approvebot", s.path)
	}
	return ""
}

// keyAlive holds the clock checkpoint: the latest wall time the store has vouched for.
var keyAlive = []byte("alive_at")

// LastAlive is the clock checkpoint found at open: approvebot was running at least until
// then (as its wall clock read, kept from going backwards while it ran). Zero when unknown.
func (s *Store) LastAlive() time.Time { return s.lastAlive }

// checkpoint writes the clock checkpoint. It is also the periodic write probe: its outcome
// is the store's health while nothing else writes.
func (s *Store) checkpoint(ctx context.Context) error {
	return s.write(ctx, false, func(tx *bolt.Tx) error {
		// The clock is read on the writer, like every other time the store writes.
		now := s.now()
		s.ckMu.Lock()
		at := now
		if !s.ckWall.IsZero() {
			// A wall-clock step backwards while running does not move the checkpoint back.
			if adv := s.ckWall.Add(time.Since(s.ckMono)); adv.After(at) {
				at = adv
			}
		}
		s.ckWall, s.ckMono = at, time.Now()
		s.ckMu.Unlock()
		var v [8]byte
		binary.BigEndian.PutUint64(v[:], uint64(at.UnixNano()))
		return tx.Bucket(bucketMeta).Put(keyAlive, v[:])
	})
}

func readAlive(tx *bolt.Tx) time.Time {
	v := tx.Bucket(bucketMeta).Get(keyAlive)
	if len(v) != 8 {
		return time.Time{}
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(v)))
}

// probe checks, every interval, that the file at the path is still the one open and that
// a small write commits, until stop is closed.
func (s *Store) probe(interval time.Duration) {
	defer close(s.probeDone)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-s.probeStop:
			return
		case <-t.C:
		}
		if reason := s.checkFile(); reason != "" {
			s.lose(reason)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), stuckWrite)
		_ = s.checkpoint(ctx)
		cancel()
	}
}
