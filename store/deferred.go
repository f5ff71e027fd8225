package store

import (
	"bytes"
	"encoding/binary"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// The deferred indexes (session, agent) are written in partitions. When the entries after
// the last partition, the tail, reach deferredBatch, a group commit's transaction writes
// them as a new partition: each key is the partition number, then the name with its
// length in front, then the audit key, and the keys are put in sorted order at the end of
// the bucket. A partition costs about one page per 80 entries whatever the number of
// sessions, where keys by name first would dirty a page per session. audit_parts maps a
// partition's last audit key to its number, so the newest partition's key is the
// watermark: everything up to it is indexed, everything after it is the tail.
//
// A query by session walks the tail on the trail itself (never much more than one batch
// of entries), then the partitions newest first, seeking its name in each: its cost is
// its matches plus one seek per partition it passes (one per deferredBatch entries).

// deferredWatermark is the key of the last entry the deferred indexes hold (nil: none).
func deferredWatermark(tx *bolt.Tx) []byte {
	k, _ := tx.Bucket(bucketAuditParts).Cursor().Last()
	return k
}

// partitionOf is the number of the partition holding the entry stored under key (nil:
// the entry is in the tail).
func partitionOf(tx *bolt.Tx, key []byte) []byte {
	_, p := tx.Bucket(bucketAuditParts).Cursor().Seek(key)
	return p
}

func deferredKey(part []byte, name string, key []byte) []byte {
	return append(append(append(make([]byte, 0, 8+binary.MaxVarintLen64+len(name)+16), part...), indexPrefix(name)...), key...)
}

// indexedEntry is an entry as a partition needs it.
type indexedEntry struct {
	key    []byte
	fields indexedFields
}

// writePartition writes entries (in trail order, all after the watermark) as the next
// partition.
func writePartition(tx *bolt.Tx, entries []indexedEntry) error {
	if len(entries) == 0 {
		return nil
	}
	parts := tx.Bucket(bucketAuditParts)
	n, err := parts.NextSequence()
	if err != nil {
		return err
	}
	part := seqKey(n)
	for _, ix := range auditIndexes {
		if !ix.deferred {
			continue
		}
		keys := make([][]byte, 0, len(entries))
		for i := range entries {
			if name := ix.field(&entries[i].fields); name != "" {
				keys = append(keys, deferredKey(part, name, entries[i].key))
			}
		}
		slices.SortFunc(keys, bytes.Compare)
		b := tx.Bucket(ix.bucket)
		b.FillPercent = 1 // appended in order, never inserted into
		for _, k := range keys {
			if err := b.Put(k, nil); err != nil {
				return err
			}
		}
	}
	return parts.Put(bytes.Clone(entries[len(entries)-1].key), part)
}

// buildDeferred writes the tail as a partition once it holds batch entries (at most
// maxDeferredBuild of them). It runs in a group commit's transaction.
func buildDeferred(tx *bolt.Tx, batch int) error {
	audit := tx.Bucket(bucketAudit)
	w := deferredWatermark(tx)
	var wseq uint64
	if w != nil {
		wseq = auditKeySeq(w)
	}
	if audit.Sequence()-wseq < uint64(batch) {
		return nil
	}
	c := audit.Cursor()
	k, v := c.First()
	if w != nil {
		if k, v = c.Seek(w); bytes.Equal(k, w) {
			k, v = c.Next()
		}
	}
	var entries []indexedEntry
	for ; k != nil && len(entries) < maxDeferredBuild; k, v = c.Next() {
		// An entry too damaged to read its names is indexed under none (a query by its
		// session cannot find it, one by time still does): the indexes must not stop behind it.
		f, _ := decodeIndexed(v)
		entries = append(entries, indexedEntry{bytes.Clone(k), f})
	}
	return writePartition(tx, entries)
}

func (s *Store) buildDeferred(tx *bolt.Tx) error { return buildDeferred(tx, s.deferredBatch) }

// unindexDeferred removes the deferred index keys of an entry retention removes.
func unindexDeferred(tx *bolt.Tx, key []byte, f *indexedFields) error {
	part := partitionOf(tx, key)
	if part == nil {
		return nil
	}
	for _, ix := range auditIndexes {
		if name := ix.field(f); name != "" && ix.deferred {
			if err := tx.Bucket(ix.bucket).Delete(deferredKey(part, name, key)); err != nil {
				return err
			}
		}
	}
	return nil
}

// dropEmptyPartitions forgets the partitions whose entries are all gone (retention
// removes the oldest entries first).
func dropEmptyPartitions(tx *bolt.Tx) error {
	first, _ := tx.Bucket(bucketAudit).Cursor().First()
	c := tx.Bucket(bucketAuditParts).Cursor()
	var gone [][]byte
	for k, _ := c.First(); k != nil && (first == nil || bytes.Compare(k, first) < 0); k, _ = c.Next() {
		gone = append(gone, bytes.Clone(k))
	}
	parts := tx.Bucket(bucketAuditParts)
	for _, k := range gone {
		if err := parts.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// deferredWalk walks one name of a deferred index: the tail first, from the trail, then
// the partitions newest first.
type deferredWalk struct {
	ix     *bolt.Cursor
	parts  *bolt.Cursor
	name   []byte // the name with its length in front
	floor  []byte // the watermark (nil: nothing indexed)
	inTail bool
	prefix []byte // the current partition's number and the name
}

func newDeferredWalk(tx *bolt.Tx, ix auditIndex, name string) *deferredWalk {
	return &deferredWalk{
		ix: tx.Bucket(ix.bucket).Cursor(), parts: tx.Bucket(bucketAuditParts).Cursor(), name: indexPrefix(name),
		floor: deferredWatermark(tx), inTail: true,
	}
}

func (d *deferredWalk) first(w *auditWalk, upper []byte) ([]byte, []byte, error) {
	if d.floor != nil && upper != nil && bytes.Compare(upper, d.floor) <= 0 {
		// The whole range is indexed: start in the partition holding upper.
		d.inTail = false
		pk, pv := d.parts.Seek(upper)
		return d.inPartition(w, pk, pv, upper)
	}
	k, v := seekBefore(w.pc, upper)
	return d.tailAt(w, k, v)
}

func (d *deferredWalk) prev(w *auditWalk) ([]byte, []byte, error) {
	if d.inTail {
		k, v := w.pc.Prev()
		return d.tailAt(w, k, v)
	}
	k, v, err := w.entry(keyOrNil(d.ix.Prev()), d.prefix)
	if k != nil || err != nil {
		return k, v, err
	}
	return d.olderPartition(w)
}

func keyOrNil(k, _ []byte) []byte { return k }

// tailAt yields a tail entry, or leaves the tail for the newest partition.
func (d *deferredWalk) tailAt(w *auditWalk, k, v []byte) ([]byte, []byte, error) {
	if k != nil && (d.floor == nil || bytes.Compare(k, d.floor) > 0) {
		return w.trailAt(k, v)
	}
	d.inTail = false
	if d.floor == nil || !w.inRange(k) {
		return nil, nil, nil
	}
	pk, pv := d.parts.Last()
	return d.inPartition(w, pk, pv, nil)
}

// inPartition yields the name's newest entry in the partition (lastKey → number) before
// upper (nil: its newest), or goes on to older partitions.
func (d *deferredWalk) inPartition(w *auditWalk, lastKey, part, upper []byte) ([]byte, []byte, error) {
	for lastKey != nil {
		if w.lower != nil && bytes.Compare(lastKey, w.lower) < 0 {
			return nil, nil, nil // this partition and every older one are before since
		}
		d.prefix = append(append(d.prefix[:0], part...), d.name...)
		target := afterName(d.prefix)
		if upper != nil {
			target = append(bytes.Clone(d.prefix), upper...)
			upper = nil
		}
		k, v, err := w.entry(keyOrNil(seekBefore(d.ix, target)), d.prefix)
		if k != nil || err != nil {
			return k, v, err
		}
		lastKey, part = d.parts.Prev()
	}
	return nil, nil, nil
}

func (d *deferredWalk) olderPartition(w *auditWalk) ([]byte, []byte, error) {
	pk, pv := d.parts.Prev()
	return d.inPartition(w, pk, pv, nil)
}
