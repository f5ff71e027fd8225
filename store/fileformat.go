package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
)

// This file reads a bbolt file the way bbolt lays it out on disk (format version 2), through
// ReadAt and never through the memory map, so that damage is an error and never a fault.
// bbolt keeps these structures internal; only the few fields the checks need are read.

const (
	boltMagic        = 0xED0CDAED
	boltVersion      = 2
	pageHeaderSize   = 16 // id u64, flags u16, count u16, overflow u32
	elementSize      = 16 // branch: pos, ksize u32, pgid u64; leaf: flags, pos, ksize, vsize u32
	bucketHeaderSize = 16 // root pgid u64, sequence u64
	metaChecksumAt   = 56 // the checksum covers the meta's first 56 bytes
	flagBranch       = 0x01
	flagLeaf         = 0x02
	flagMeta         = 0x04
	flagFreelist     = 0x10
	leafIsBucket     = 0x01
	noFreelist       = ^uint64(0)
	maxTreeDepth     = 64
	minPageSize      = 1 << 10
	maxPageSize      = 1 << 24
)

var ne = binary.NativeEndian

// boltMeta is the part of a meta page the checks use.
type boltMeta struct {
	page     int // 0 or 1
	pageSize int
	root     uint64
	freelist uint64
	hwm      uint64 // pages in use: the file must hold at least hwm*pageSize bytes
	txid     uint64
}

// parseMeta validates one meta page (its bytes from the page header on) as bbolt does:
// magic, version and checksum, plus the bounds bbolt asserts before it trusts the meta.
func parseMeta(b []byte, page int) (boltMeta, error) {
	if len(b) < pageHeaderSize+64 {
		return boltMeta{}, errors.New("too short")
	}
	m := b[pageHeaderSize:]
	switch {
	case ne.Uint32(m[0:]) != boltMagic:
		return boltMeta{}, errors.New("not a bbolt meta page (bad magic)")
	case ne.Uint32(m[4:]) != boltVersion:
		return boltMeta{}, fmt.Errorf("bbolt format version %d, not %d", ne.Uint32(m[4:]), boltVersion)
	}
	h := fnv.New64a()
	h.Write(m[:metaChecksumAt])
	if h.Sum64() != ne.Uint64(m[metaChecksumAt:]) {
		return boltMeta{}, errors.New("checksum mismatch")
	}
	meta := boltMeta{
		page: page, pageSize: int(ne.Uint32(m[8:])), root: ne.Uint64(m[16:]),
		freelist: ne.Uint64(m[32:]), hwm: ne.Uint64(m[40:]), txid: ne.Uint64(m[48:]),
	}
	switch {
	case meta.pageSize < minPageSize || meta.pageSize > maxPageSize || meta.pageSize&(meta.pageSize-1) != 0:
		return boltMeta{}, fmt.Errorf("page size %d is not a power of two in [1 KiB, 16 MiB]", meta.pageSize)
	case meta.hwm < 3 || meta.root < 2 || meta.root >= meta.hwm:
		return boltMeta{}, fmt.Errorf("root page %d outside the %d pages in use", meta.root, meta.hwm)
	case meta.freelist != noFreelist && (meta.freelist < 2 || meta.freelist >= meta.hwm):
		return boltMeta{}, fmt.Errorf("free-list page %d outside the %d pages in use", meta.freelist, meta.hwm)
	}
	return meta, nil
}

// fileHeader is what the cheap start-up check learns: the meta bbolt will use and whether
// the other one is damaged.
type fileHeader struct {
	size int64
	meta boltMeta
	// otherDamaged describes the meta page that failed validation ("" when both are valid).
	otherDamaged string
}

// readHeader validates the meta pages and that the file is as long as the meta says. It
// reads two pages and never more, so it is as fast for a 10 GB file as for an empty one.
func readHeader(f io.ReaderAt, size int64) (fileHeader, error) {
	if size < 2*minPageSize {
		return fileHeader{}, fmt.Errorf("the file is %d bytes, shorter than the two meta pages every bbolt file starts with (truncated?)", size)
	}
	first := make([]byte, min(size, 4096))
	if _, err := f.ReadAt(first, 0); err != nil {
		return fileHeader{}, fmt.Errorf("reading the first meta page: %w", err)
	}
	m0, err0 := parseMeta(first, 0)
	var sizes []int
	if err0 == nil {
		sizes = []int{m0.pageSize}
	} else {
		// The page size is in the meta: try each one bbolt can use for the second page.
		for ps := minPageSize; ps <= maxPageSize && int64(ps)*2 <= size; ps <<= 1 {
			sizes = append(sizes, ps)
		}
	}
	var m1 boltMeta
	err1 := errors.New("not found at any page size")
	buf := make([]byte, pageHeaderSize+64)
	for _, ps := range sizes {
		if int64(ps)+int64(len(buf)) > size {
			err1 = fmt.Errorf("the file ends before the second meta page (%d bytes)", size)
			break
		}
		if _, err := f.ReadAt(buf, int64(ps)); err != nil {
			err1 = fmt.Errorf("reading: %w", err)
			break
		}
		if m1, err1 = parseMeta(buf, 1); err1 == nil {
			if m1.pageSize != ps {
				err1 = fmt.Errorf("page size %d where the page starts at %d", m1.pageSize, ps)
				continue
			}
			break
		}
	}
	var h fileHeader
	h.size = size
	switch {
	case err0 != nil && err1 != nil:
		return fileHeader{}, fmt.Errorf("both meta pages are damaged (page 0: %v; page 1: %v)", err0, err1)
	case err0 != nil:
		h.meta, h.otherDamaged = m1, fmt.Sprintf("meta page 0 is damaged (%v)", err0)
	case err1 != nil:
		h.meta, h.otherDamaged = m0, fmt.Sprintf("meta page 1 is damaged (%v)", err1)
	case m1.pageSize != m0.pageSize:
		return fileHeader{}, fmt.Errorf("the meta pages disagree on the page size (%d and %d)", m0.pageSize, m1.pageSize)
	case m1.txid > m0.txid:
		h.meta = m1
	default:
		h.meta = m0
	}
	if need := int64(h.meta.hwm) * int64(h.meta.pageSize); size < need {
		return fileHeader{}, fmt.Errorf("the file is %d bytes but its meta page (transaction %d) says it holds %d pages of %d bytes, %d bytes (truncated)",
			size, h.meta.txid, h.meta.hwm, h.meta.pageSize, need)
	}
	return h, nil
}

// pageWalker walks the page tree of a bbolt file through ReadAt, checking every bound bbolt
// relies on without checking (page ids, element offsets, page types), so that bbolt can
// afterwards walk the same pages through its memory map without faulting.
type pageWalker struct {
	f    io.ReaderAt
	meta boltMeta
	seen []uint64 // bitmap of referenced pages
	// record, when set, is called for every key/value that is not a bucket.
	record func(bucket string, key, value []byte)
	// keepGoing collects every problem (verify) instead of stopping at the first (start-up).
	keepGoing bool
	problems  []string
	pages     int
}

// errWalkStop ends a walk at its first problem.
var errWalkStop = errors.New("stop")

func newPageWalker(f io.ReaderAt, meta boltMeta) *pageWalker {
	return &pageWalker{f: f, meta: meta, seen: make([]uint64, (meta.hwm+63)/64)}
}

// maxProblems bounds what a walk of a badly damaged file reports.
const maxProblems = 100

func (w *pageWalker) problem(format string, a ...any) error {
	if len(w.problems) < maxProblems {
		w.problems = append(w.problems, fmt.Sprintf(format, a...))
	}
	if !w.keepGoing || len(w.problems) >= maxProblems {
		return errWalkStop
	}
	return nil
}

// walk checks the whole tree from the root bucket, and the free-list page when there is one.
// The first problem is returned (or every problem, with keepGoing, in w.problems).
func (w *pageWalker) walk() error {
	if w.meta.freelist != noFreelist {
		if err := w.freelist(); err != nil {
			return w.result(err)
		}
	}
	_, err := w.tree("", w.meta.root, nil, nil, 0)
	return w.result(err)
}

func (w *pageWalker) result(err error) error {
	if err != nil && !errors.Is(err, errWalkStop) {
		return err
	}
	if len(w.problems) > 0 {
		return errors.New(w.problems[0])
	}
	return nil
}

func (w *pageWalker) freelist() error {
	p, err := w.read("", w.meta.freelist)
	if err != nil || p == nil {
		return err
	}
	if flags := ne.Uint16(p[8:]); flags != flagFreelist {
		return w.problem("free-list page %d has page type %#x", w.meta.freelist, flags)
	}
	n, start := int(ne.Uint16(p[10:])), pageHeaderSize
	if n == 0xFFFF {
		if len(p) < pageHeaderSize+8 {
			return w.problem("free-list page %d is cut short", w.meta.freelist)
		}
		n, start = int(ne.Uint64(p[pageHeaderSize:])), pageHeaderSize+8
	}
	if uint64(start)+uint64(n)*8 > uint64(len(p)) {
		return w.problem("free-list page %d lists %d pages but holds fewer", w.meta.freelist, n)
	}
	// bbolt writes the ids sorted; one outside the file or out of order would have it hand
	// out a page in use as a free one.
	var prev uint64
	for i := 0; i < n; i++ {
		id := ne.Uint64(p[start+8*i:])
		if id < 2 || id >= w.meta.hwm || id <= prev {
			return w.problem("free-list page %d: entry %d (page %d) is outside the %d pages in use or out of order", w.meta.freelist, i, id, w.meta.hwm)
		}
		prev = id
	}
	return nil
}

// read returns the page (with its overflow pages) after checking its header, or nil with a
// recorded problem.
func (w *pageWalker) read(bucket string, id uint64) ([]byte, error) {
	ps := w.meta.pageSize
	if id < 2 || id >= w.meta.hwm {
		return nil, w.problem("%s: page %d is outside the %d pages in use", where(bucket), id, w.meta.hwm)
	}
	p := make([]byte, ps)
	if _, err := w.f.ReadAt(p, int64(id)*int64(ps)); err != nil {
		return nil, fmt.Errorf("reading page %d: %w", id, err)
	}
	if got := ne.Uint64(p[0:]); got != id {
		return nil, w.problem("%s: page %d carries the id %d", where(bucket), id, got)
	}
	overflow := uint64(ne.Uint32(p[12:]))
	if id+overflow >= w.meta.hwm {
		return nil, w.problem("%s: page %d runs %d pages past the %d pages in use", where(bucket), id, overflow, w.meta.hwm)
	}
	for i := id; i <= id+overflow; i++ {
		if w.seen[i/64]&(1<<(i%64)) != 0 {
			return nil, w.problem("%s: page %d is referenced twice", where(bucket), i)
		}
		w.seen[i/64] |= 1 << (i % 64)
	}
	w.pages += int(overflow) + 1
	if overflow > 0 {
		full := make([]byte, (overflow+1)*uint64(ps))
		copy(full, p)
		if _, err := w.f.ReadAt(full[ps:], int64(id)*int64(ps)+int64(ps)); err != nil {
			return nil, fmt.Errorf("reading page %d: %w", id, err)
		}
		p = full
	}
	return p, nil
}

func where(bucket string) string {
	if bucket == "" {
		return "the root bucket"
	}
	return "bucket " + bucket
}

// tree checks the subtree of one bucket rooted at page id: every key at least minKey and
// below maxKey (nil: unbounded), as bbolt's own check has it. It returns the subtree's
// largest key.
func (w *pageWalker) tree(bucket string, id uint64, minKey, maxKey []byte, depth int) ([]byte, error) {
	if depth > maxTreeDepth {
		return nil, w.problem("%s: the page tree is deeper than %d (a cycle?)", where(bucket), maxTreeDepth)
	}
	p, err := w.read(bucket, id)
	if err != nil || p == nil {
		return nil, err
	}
	return w.node(bucket, id, p, minKey, maxKey, depth)
}

// node checks one branch or leaf page held in p (a real page, or an inline bucket's page).
func (w *pageWalker) node(bucket string, id uint64, p []byte, minKey, maxKey []byte, depth int) ([]byte, error) {
	flags, count := ne.Uint16(p[8:]), int(ne.Uint16(p[10:]))
	if uint64(pageHeaderSize)+uint64(count)*elementSize > uint64(len(p)) {
		return nil, w.problem("%s: page %d has %d elements, more than it can hold", where(bucket), id, count)
	}
	if flags == flagBranch && count == 0 {
		return nil, w.problem("%s: branch page %d is empty", where(bucket), id)
	}
	running, last := minKey, []byte(nil)
	for i := 0; i < count; i++ {
		off := uint64(pageHeaderSize + i*elementSize)
		e := p[off : off+elementSize]
		switch flags {
		case flagBranch:
			pos, ksize, child := uint64(ne.Uint32(e[0:])), uint64(ne.Uint32(e[4:])), ne.Uint64(e[8:])
			if off+pos+ksize > uint64(len(p)) {
				return nil, w.problem("%s: branch page %d element %d points past the page", where(bucket), id, i)
			}
			key := p[off+pos : off+pos+ksize]
			if err := w.order(bucket, id, i, running, key, maxKey); err != nil {
				return nil, err
			}
			next := maxKey
			if i < count-1 {
				n := p[off+elementSize:]
				npos, nks := uint64(ne.Uint32(n[0:])), uint64(ne.Uint32(n[4:]))
				if off+elementSize+npos+nks > uint64(len(p)) {
					return nil, w.problem("%s: branch page %d element %d points past the page", where(bucket), id, i+1)
				}
				next = p[off+elementSize+npos : off+elementSize+npos+nks]
			}
			sub, err := w.tree(bucket, child, key, next, depth+1)
			if err != nil {
				return nil, err
			}
			running, last = sub, sub
		case flagLeaf:
			eflags, pos, ksize, vsize := ne.Uint32(e[0:]), uint64(ne.Uint32(e[4:])), uint64(ne.Uint32(e[8:])), uint64(ne.Uint32(e[12:]))
			if off+pos+ksize+vsize > uint64(len(p)) {
				return nil, w.problem("%s: leaf page %d element %d points past the page", where(bucket), id, i)
			}
			key := p[off+pos : off+pos+ksize]
			value := p[off+pos+ksize : off+pos+ksize+vsize]
			if err := w.order(bucket, id, i, running, key, maxKey); err != nil {
				return nil, err
			}
			running, last = key, key
			if eflags&leafIsBucket == 0 {
				if bucket == "" {
					if err := w.problem("the root bucket holds a plain key %q", printableKey(key)); err != nil {
						return nil, err
					}
				} else if w.record != nil {
					w.record(bucket, key, value)
				}
				continue
			}
			if err := w.bucket(childName(bucket, key), value, depth+1); err != nil {
				return nil, err
			}
		default:
			return nil, w.problem("%s: page %d has page type %#x where a branch or leaf page belongs", where(bucket), id, flags)
		}
	}
	return last, nil
}

// order is bbolt's key-order rule: the first key at least the lower bound, every other one
// above the one before, all below the upper bound.
func (w *pageWalker) order(bucket string, id uint64, i int, prev, key, maxKey []byte) error {
	if prev != nil && (bytes.Compare(prev, key) > 0 || (i > 0 && bytes.Equal(prev, key))) {
		return w.problem("%s: page %d element %d is out of key order", where(bucket), id, i)
	}
	if maxKey != nil && bytes.Compare(key, maxKey) >= 0 {
		return w.problem("%s: page %d element %d is beyond its parent's next key", where(bucket), id, i)
	}
	return nil
}

// bucket checks a bucket entry's value: a root page id, or an inline page after the header.
func (w *pageWalker) bucket(name string, value []byte, depth int) error {
	if len(value) < bucketHeaderSize {
		return w.problem("bucket %s: its header is %d bytes, not %d", name, len(value), bucketHeaderSize)
	}
	root := ne.Uint64(value[0:])
	if root != 0 {
		_, err := w.tree(name, root, nil, nil, depth)
		return err
	}
	inline := value[bucketHeaderSize:]
	if len(inline) < pageHeaderSize {
		return w.problem("bucket %s: its inline page is cut short", name)
	}
	if flags := ne.Uint16(inline[8:]); flags != flagLeaf {
		return w.problem("bucket %s: its inline page has page type %#x", name, flags)
	}
	_, err := w.node(name, 0, inline, nil, nil, depth)
	return err
}

func childName(parent string, key []byte) string {
	if parent == "" {
		return printableKey(key)
	}
	return parent + "/" + printableKey(key)
}

// printableKey shows a key as text when it is, and in hex when it is not.
func printableKey(k []byte) string {
	for _, c := range k {
		if c < 0x20 || c > 0x7e {
			return fmt.Sprintf("%x", k)
		}
	}
	return string(k)
}
