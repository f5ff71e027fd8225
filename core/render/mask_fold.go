package render

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Secrets written so that no rule sees them whole: a token split by a no-break space, a
// zero-width or other invisible character, or broken over a line continuation. What the
// human sees would still be the whole secret (the separator shows as [U+00A0], or the
// continuation joins the lines), so such text is also searched in folded views — with the
// continuations and invisible characters taken out, and the space-like ones read once as a
// space and once taken out — and every secret found there is masked in the text as written,
// separators included.

// foldedView is a rewriting of a text with a map back to it: runs of its bytes, each from
// a run of the original.
type foldedView struct {
	text string
	runs []foldRun
}

// foldRun says that text[view:view+n] came from the original bytes [orig, orig+origN):
// byte for byte when n == origN, else one space that stands for a space-like character.
type foldRun struct {
	view, orig, n, origN int32
}

// at maps the view's byte i to the original bytes it came from.
func (v *foldedView) at(i int) (start, end int) {
	lo, hi := 0, len(v.runs)
	for lo < hi {
		m := (lo + hi) / 2
		if r := v.runs[m]; i >= int(r.view+r.n) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	r := v.runs[min(lo, len(v.runs)-1)]
	if r.n != r.origN {
		return int(r.orig), int(r.orig + r.origN)
	}
	o := int(r.orig) + i - int(r.view)
	return o, o + 1
}

// span maps a span of the view back to the original text.
func (v *foldedView) span(sp span) span {
	start, _ := v.at(sp.start)
	_, end := v.at(sp.end - 1)
	keep, _ := v.at(min(sp.keep, len(v.text)-1))
	sp.start, sp.end, sp.keep = start, end, keep
	return sp
}

// foldClass says what a folded view does with a character.
type foldClass int

const (
	foldKeep   foldClass = iota
	foldDrop             // invisible: always taken out
	foldSpace            // space-like: read as a space, or taken out
	foldJoiner           // a line continuation: taken out with its line break
)

// classify returns the fold class of the character at s[i] and its length.
func classifyFold(s string, i int) (foldClass, int) {
	c := s[i]
	if c < utf8.RuneSelf {
		switch {
		case (c == '\\' || c == '`' || c == '^') && i+1 < len(s) && s[i+1] == '\n':
			return foldJoiner, 2
		case (c == '\\' || c == '`' || c == '^') && i+2 < len(s) && s[i+1] == '\r' && s[i+2] == '\n':
			return foldJoiner, 3
		case c == '\r' && (i+1 >= len(s) || s[i+1] != '\n'):
			return foldSpace, 1
		case c < 0x20 && c != '\t' && c != '\n' && c != '\r', c == 0x7f:
			return foldDrop, 1
		}
		return foldKeep, 1
	}
	r, size := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError && size == 1 {
		return foldKeep, 1
	}
	if r < 0x10000 {
		t := bmpFolds()
		switch {
		case t.drop[r>>6]&(1<<(r&63)) != 0:
			return foldDrop, size
		case t.space[r>>6]&(1<<(r&63)) != 0:
			return foldSpace, size
		}
		return foldKeep, size
	}
	return runeFold(r), size
}

// runeFold is the fold class of a character outside ASCII.
func runeFold(r rune) foldClass {
	switch {
	case r >= 0x80 && r < 0xA0 && r != 0x85, // C1 controls
		unicode.Is(unicode.Cf, r), unicode.Is(unicode.Mn, r), unicode.Is(unicode.Me, r), invisible(r):
		return foldDrop
	case unicode.Is(unicode.Zs, r), r == 0x2028, r == 0x2029, r == 0x85:
		return foldSpace
	}
	return foldKeep
}

// foldTable holds runeFold of the Basic Multilingual Plane as two bit sets, built on first
// use: one lookup per character instead of a search in four Unicode tables.
type foldTable struct {
	drop, space [0x10000 / 64]uint64
}

var bmpFolds = sync.OnceValue(func() *foldTable {
	t := new(foldTable)
	for r := rune(0x80); r < 0x10000; r++ {
		switch runeFold(r) {
		case foldDrop:
			t.drop[r>>6] |= 1 << (r & 63)
		case foldSpace:
			t.space[r>>6] |= 1 << (r & 63)
		}
	}
	return t
})

// countFolds counts what a folded view would change in s, and the space-like characters
// among them.
func countFolds(s string) (folds, spaceLike int) {
	for i := 0; i < len(s); {
		if c := s[i]; c >= 0x20 && c < 0x7f && c != '\\' && c != '`' && c != '^' || c == '\t' || c == '\n' {
			i++
			continue
		}
		class, size := classifyFold(s, i)
		if class != foldKeep {
			folds++
		}
		if class == foldSpace {
			spaceLike++
		}
		i += size
	}
	return folds, spaceLike
}

// foldedViews returns the folded views of s: none when nothing would fold, one when no
// space-like character occurs, else the view that reads them as spaces and the one that
// takes them out.
func foldedViews(s string) []*foldedView {
	folds, spaceLike := countFolds(s)
	if folds == 0 {
		return nil
	}
	spaced := buildFold(s, true, folds)
	if spaceLike == 0 {
		return []*foldedView{spaced}
	}
	return []*foldedView{spaced, buildFold(s, false, folds)}
}

func buildFold(s string, spaces bool, folds int) *foldedView {
	v := &foldedView{runs: make([]foldRun, 0, 2*folds+1)}
	var b strings.Builder
	b.Grow(len(s))
	keep := func(from, to int) {
		if to <= from {
			return
		}
		v.runs = append(v.runs, foldRun{view: int32(b.Len()), orig: int32(from), n: int32(to - from), origN: int32(to - from)})
		b.WriteString(s[from:to])
	}
	run := 0 // start of the current run of kept bytes
	for i := 0; i < len(s); {
		if c := s[i]; c >= 0x20 && c < 0x7f && c != '\\' && c != '`' && c != '^' || c == '\t' || c == '\n' {
			i++
			continue
		}
		class, size := classifyFold(s, i)
		if class == foldKeep {
			i += size
			continue
		}
		keep(run, i)
		if class == foldSpace && spaces {
			v.runs = append(v.runs, foldRun{view: int32(b.Len()), orig: int32(i), n: 1, origN: int32(size)})
			b.WriteByte(' ')
		}
		i += size
		run = i
	}
	keep(run, len(s))
	v.text = b.String()
	return v
}
