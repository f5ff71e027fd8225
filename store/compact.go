package store

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
)

// compactTxSize bounds one transaction of the copy, so memory stays small on a big file.
const compactTxSize = 64 << 20

// CompactResult is what Compact did.
type CompactResult struct {
	Before, After int64 // file sizes in bytes
	Took          time.Duration
}

// Compact gives back the space of a file whose data shrank (bbolt reuses freed pages but
// never shortens its file): it copies every bucket into a new file beside it, checks the
// copy, and renames it over the original. It holds the database's lock throughout, so it
// fails with ErrLocked while a server runs on the file; a file of an older schema is
// migrated first. The directory needs room for the copy.
func Compact(path string, lockTimeout time.Duration, log *slog.Logger) (CompactResult, error) {
	var res CompactResult
	start := time.Now()
	src, err := Open(path, Options{LockTimeout: lockTimeout, Logger: log})
	if err != nil {
		return res, err
	}
	defer src.Close()
	fi, err := os.Stat(path)
	if err != nil {
		return res, err
	}
	res.Before = fi.Size()
	tmp := path + ".compact"
	if err := os.Remove(tmp); err != nil && !os.IsNotExist(err) {
		return res, fmt.Errorf("removing a leftover %s: %w", tmp, err)
	}
	dst, err := bolt.Open(tmp, fi.Mode().Perm(), boltOptions(lockTimeout))
	if err != nil {
		return res, fmt.Errorf("creating %s: %w", tmp, err)
	}
	fail := func(err error) (CompactResult, error) {
		dst.Close()
		os.Remove(tmp)
		return res, err
	}
	if err := bolt.Compact(dst, src.db, compactTxSize); err != nil {
		return fail(fmt.Errorf("copying %s: %w", path, err))
	}
	if err := checkCopy(src.db, dst); err != nil {
		return fail(fmt.Errorf("checking the compacted copy: %w", err))
	}
	if err := dst.Close(); err != nil {
		os.Remove(tmp)
		return res, err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return res, fmt.Errorf("replacing %s: %w", path, err)
	}
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		err = d.Sync()
		d.Close()
		if err != nil {
			return res, fmt.Errorf("syncing the directory of %s: %w", path, err)
		}
	}
	if fi, err := os.Stat(path); err == nil {
		res.After = fi.Size()
	}
	res.Took = time.Since(start)
	return res, nil
}

// checkCopy checks the copy's pages and that every bucket holds as many keys, with the
// same sequence, as the original's.
func checkCopy(src, dst *bolt.DB) error {
	type shape struct{ keys, seq uint64 }
	shapes := func(db *bolt.DB) (map[string]shape, error) {
		out := map[string]shape{}
		err := db.View(func(tx *bolt.Tx) error {
			return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
				out[string(name)] = shape{uint64(b.Stats().KeyN), b.Sequence()}
				return nil
			})
		})
		return out, err
	}
	want, err := shapes(src)
	if err != nil {
		return err
	}
	got, err := shapes(dst)
	if err != nil {
		return err
	}
	for name, w := range want {
		if got[name] != w {
			return fmt.Errorf("bucket %s: %d keys, sequence %d in the copy; %d and %d in the original", name, got[name].keys, got[name].seq, w.keys, w.seq)
		}
	}
	if len(got) != len(want) {
		return fmt.Errorf("the copy has %d buckets, the original %d", len(got), len(want))
	}
	return dst.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		return nil
	})
}
