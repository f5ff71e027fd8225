package store

import (
	"errors"
	"fmt"
	"runtime/debug"

	bolt "go.etcd.io/bbolt"

	"github.com/approvebot/approvebot/core/gate"
)

// ErrDamaged is matched (errors.Is) by every error about damaged data: a damaged file at
// open, a page bbolt could not read, a record that does not decode.
var ErrDamaged = errors.New("damaged data")

// DamageError is an operation that met damaged data in the open database: bbolt panicked or
// faulted on the memory map (both recovered), or a record did not decode. The operation
// failed; nothing it would have decided was applied. It matches gate.ErrStoreUnavailable,
// so the API answers 503 and never 500.
type DamageError struct {
	// Bucket names where it happened ("" when unknown).
	Bucket string
	// Detail is bbolt's panic or the decoding error.
	Detail string
	// Panicked is set when bbolt panicked or faulted (recovered).
	Panicked bool
}

func (e *DamageError) Error() string {
	if e.Bucket == "" {
		return "store: damaged data: " + e.Detail
	}
	return fmt.Sprintf("store: damaged data in bucket %s: %s", e.Bucket, e.Detail)
}

// Is matches ErrDamaged and gate.ErrStoreUnavailable.
func (e *DamageError) Is(target error) bool {
	return target == ErrDamaged || target == gate.ErrStoreUnavailable
}

// guard runs fn with faults on the memory map turned into panics (debug.SetPanicOnFault is
// per goroutine), and turns any panic into a DamageError naming the bucket. bbolt's View
// rolls its read transaction back while the panic unwinds, so reads that do not touch the
// damage go on working. A write transaction's rollback may itself fail on the damage and
// leave bbolt's writer lock held: commit then stops all writes (see commit).
func guard(bucket string, fn func() error) (err error) {
	prev := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(prev)
		if p := recover(); p != nil {
			err = &DamageError{Bucket: bucket, Detail: fmt.Sprint(p), Panicked: true}
		}
	}()
	return fn()
}

// view is a guarded read transaction; bucket names what it reads, for the error.
func (s *Store) view(bucket string, fn func(tx *bolt.Tx) error) error {
	return guard(bucket, func() error { return s.db.View(fn) })
}
