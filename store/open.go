package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// DamagedFileError is a database file approvebot will not open: empty, truncated, or with
// damaged meta pages or page tree. Open never replaces such a file with a new database.
type DamagedFileError struct {
	Path string
	// Detail says what is wrong with the file.
	Detail string
}

func (e *DamagedFileError) Error() string {
	return fmt.Sprintf("database %s is damaged: %s. approvebot did not start and will not replace it with an empty database: "+
		"restore the file from a backup (docs/operations.md, \"Backups\"), or move it away to start empty; "+
		"`approvebot verify %s` checks a file completely, with approvebot stopped", e.Path, e.Detail, e.Path)
}

// Is matches ErrDamaged.
func (e *DamagedFileError) Is(target error) bool { return target == ErrDamaged }

// preflight runs the cheap checks on an existing file before bbolt maps it: not empty, valid
// meta pages, as long as the meta says. When bbolt would walk every page at open to rebuild
// its free list (the file has none), the same pages are walked here first through ReadAt,
// so that damage in them is this error and never a fault in bbolt. It reports whether the
// file exists, and a warning when one meta page is damaged (bbolt then uses the other).
func preflight(path string) (exists bool, warning string, err error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, "", nil
	}
	if err != nil {
		return false, "", fmt.Errorf("database %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return true, "", &DamagedFileError{Path: path, Detail: fmt.Sprintf("it is not a regular file (%s)", fi.Mode().Type())}
	}
	if fi.Size() == 0 {
		return true, "", &DamagedFileError{Path: path, Detail: "the file is empty (0 bytes)"}
	}
	f, err := os.Open(path)
	if err != nil {
		return true, "", fmt.Errorf("database %s: %w", path, err)
	}
	defer f.Close()
	h, err := readHeader(f, fi.Size())
	if err != nil {
		return true, "", &DamagedFileError{Path: path, Detail: err.Error()}
	}
	w := newPageWalker(f, h.meta)
	check := w.walk
	if h.meta.freelist != noFreelist {
		// bbolt reads the free list from its page: that page is all it needs checked.
		check = func() error { return w.result(w.freelist()) }
	}
	if err := check(); err != nil {
		return true, "", &DamagedFileError{Path: path, Detail: err.Error()}
	}
	return true, h.otherDamaged, nil
}
