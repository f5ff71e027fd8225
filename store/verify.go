package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/ledger"
)

// VerifyReport is what Verify found in a database file.
type VerifyReport struct {
	Path     string
	Size     int64
	PageSize int
	// Pages is how many pages the meta says are in use; TxID its transaction.
	Pages uint64
	TxID  uint64
	// Records counts the records of each bucket.
	Records map[string]int
	// Problems are damage to the file itself: meta pages, length, the page tree, bbolt's
	// consistency check. Any problem means: restore from a backup.
	Problems []string
	// Damaged are records that do not decode (approvebot quarantines them when it meets them).
	Damaged []approval.DamagedRecord
	// Warnings are findings that keep the file usable (one damaged meta page).
	Warnings []string
}

// OK reports a file with no problem and no damaged record.
func (r *VerifyReport) OK() bool { return len(r.Problems) == 0 && len(r.Damaged) == 0 }

// ErrInUse is returned by Verify when a running approvebot holds the database.
var ErrInUse = errors.New("the database is in use by a running approvebot")

// Verify checks a database file completely, with approvebot stopped: the meta pages, the
// length, every page of the tree (read through ReadAt, so damage is reported and never
// faults), bbolt's own consistency check, that every record decodes, and that the pending
// index matches the requests. It never writes to the file.
func Verify(path string) (*VerifyReport, error) {
	rep := &VerifyReport{Path: path, Records: map[string]int{}}
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("database %s does not exist", path)
	}
	if err != nil {
		return nil, err
	}
	rep.Size = fi.Size()
	// The shared lock keeps a server from starting on the file while it is read, and says
	// when one is running.
	var db *bolt.DB
	lockErr := guard("", func() error {
		var err error
		db, err = bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: 500 * time.Millisecond})
		return err
	})
	if errors.Is(lockErr, berrors.ErrTimeout) {
		return nil, fmt.Errorf("%s: %w: stop it first, or verify a copy (`approvebot backup COPY` then `approvebot verify COPY`)", path, ErrInUse)
	}
	if db != nil {
		defer db.Close()
	}
	if fi.Size() == 0 {
		rep.Problems = append(rep.Problems, "the file is empty (0 bytes)")
		return rep, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h, err := readHeader(f, fi.Size())
	if err != nil {
		rep.Problems = append(rep.Problems, err.Error())
		return rep, nil
	}
	if h.otherDamaged != "" {
		rep.Warnings = append(rep.Warnings, h.otherDamaged+"; bbolt uses the other one, which may be one transaction older")
	}
	rep.PageSize, rep.Pages, rep.TxID = h.meta.pageSize, h.meta.hwm, h.meta.txid

	states := map[string]approval.State{}
	var pendingKeys []string
	w := newPageWalker(f, h.meta)
	w.keepGoing = true
	w.record = func(bucket string, key, value []byte) {
		rep.Records[bucket]++
		if err := decodeRecord(bucket, key, value, states); err != nil {
			rep.Damaged = append(rep.Damaged, approval.DamagedRecord{Bucket: bucket, Key: printableKey(key), Error: err.Error()})
		}
		if bucket == string(bucketPending) {
			pendingKeys = append(pendingKeys, string(key))
		}
	}
	if err := w.walk(); err != nil && len(w.problems) == 0 {
		return nil, err
	}
	rep.Problems = append(rep.Problems, w.problems...)
	for _, id := range pendingKeys {
		switch st, ok := states[id]; {
		case !ok:
			rep.Problems = append(rep.Problems, fmt.Sprintf("bucket pending: request %s is listed but not stored", id))
		case st != approval.StatePending && st != "damaged":
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("bucket pending: request %s is listed but %s (approvebot ignores it)", id, st))
		}
	}
	if len(rep.Problems) == 0 && db != nil {
		// The tree is sound, so bbolt may now walk it through its map.
		err := guard("", func() error {
			return db.View(func(tx *bolt.Tx) error {
				for err := range tx.Check() {
					rep.Problems = append(rep.Problems, "bbolt check: "+err.Error())
				}
				return nil
			})
		})
		if err != nil {
			rep.Problems = append(rep.Problems, "bbolt check: "+err.Error())
		}
	} else if lockErr != nil && len(rep.Problems) == 0 {
		rep.Problems = append(rep.Problems, "bbolt cannot open the file: "+lockErr.Error())
	}
	sort.Slice(rep.Damaged, func(i, j int) bool {
		if rep.Damaged[i].Bucket != rep.Damaged[j].Bucket {
			return rep.Damaged[i].Bucket < rep.Damaged[j].Bucket
		}
		return rep.Damaged[i].Key < rep.Damaged[j].Key
	})
	return rep, nil
}

// decodeRecord checks that one record reads as what its bucket holds.
func decodeRecord(bucket string, key, value []byte, states map[string]approval.State) error {
	switch bucket {
	case string(bucketRequests):
		var r approval.Request
		states[string(key)] = "damaged"
		if err := json.Unmarshal(value, &r); err != nil {
			return err
		}
		states[string(key)] = r.State
		if r.ID != string(key) {
			return fmt.Errorf("the record is request %q", r.ID)
		}
	case string(bucketSessions):
		var s ledger.Session
		return json.Unmarshal(value, &s)
	case string(bucketAllowlist):
		var a AllowlistItem
		return json.Unmarshal(value, &a)
	case string(bucketAudit):
		var e approval.AuditEntry
		if len(key) != 16 {
			return fmt.Errorf("audit key of %d bytes, not 16", len(key))
		}
		return json.Unmarshal(value, &e)
	case string(bucketQuarantine):
		var q quarantined
		return json.Unmarshal(value, &q)
	case string(bucketGrants), string(bucketDenials):
		var t time.Time
		return t.UnmarshalBinary(value)
	case string(bucketMeta):
		switch string(key) {
		case string(keySchema):
			if len(value) != 4 {
				return fmt.Errorf("schema version of %d bytes, not 4", len(value))
			}
		case string(keyAlive):
			if len(value) != 8 {
				return fmt.Errorf("clock checkpoint of %d bytes, not 8", len(value))
			}
		}
	}
	return nil
}
