package render

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Hardening: what an agent writes is shown so that nothing in it can hide, reorder or forge
// text. Every character that is invisible, reorders text or moves the cursor is made
// visible, never silently dropped, because what runs contains it:
//
//   - line breaks (LF, CR, CRLF, VT, FF, NEL, U+2028, U+2029) become NewlineMark, so a command
//     cannot draw a second line such as "✅ Approved";
//   - a tab becomes a space;
//   - other C0 controls and DEL become their Control Pictures (NUL → ␀, ESC → ␛), which also
//     defuses ANSI escape sequences: "\x1b[31m" is shown as "␛[31m";
//   - C1 controls, format characters (bidi embeddings, overrides and isolates U+202A–U+202E,
//     U+2066–U+2069, U+200B–U+200F, U+061C, U+FEFF, soft hyphen, tag characters), spaces other
//     than U+0020, private-use and unassigned code points, variation selectors and invisible
//     fillers are shown as "[U+XXXX]";
//   - combining marks at the start of a word, or more than maxMarks in a row, are shown as
//     "[U+XXXX]" (no stacking over the line above or below);
//   - a word that mixes scripts (a Cyrillic "а" in a Latin word) shows its minority letters
//     as "[U+XXXX]", and a host name that mixes scripts or is spelled only with letters that
//     look Latin is shown in Punycode ("аpple.com" → "xn--pple-43d.com");
//   - look-alikes of URL punctuation (the division slash "∕", the ideographic full stop "。",
//     the fullwidth "＠" …) are shown as "[U+XXXX]";
//   - invalid UTF-8 becomes U+FFFD.

// maxMarks is how many combining marks may follow one base character.
const maxMarks = 3

// visible writes r as "[U+XXXX]".
func visible(b *strings.Builder, r rune) {
	b.WriteString("[U+")
	h := strings.ToUpper(strconv.FormatInt(int64(r), 16))
	for i := len(h); i < 4; i++ {
		b.WriteByte('0')
	}
	b.WriteString(h)
	b.WriteByte(']')
}

// invisible reports code points that render as nothing (or as a blank) although they are
// not format characters.
func invisible(r rune) bool {
	switch {
	case r == 0x034F, // combining grapheme joiner
		r == 0x115F, r == 0x1160, r == 0x3164, r == 0xFFA0, // Hangul fillers
		r == 0x17B4, r == 0x17B5, // Khmer inherent vowels
		r >= 0x180B && r <= 0x180F,                               // Mongolian variation selectors and separator
		r == 0x2800,                                              // braille blank
		r >= 0xFE00 && r <= 0xFE0F, r >= 0xE0100 && r <= 0xE01EF, // variation selectors
		r >= 0x1D173 && r <= 0x1D17A: // musical formatting
		return true
	}
	return false
}

// urlLookalike are characters that look like the ASCII punctuation a URL or path is built
// from ('/', '.', ':', '@', '#', '?') but are not it: "https://good.com∕@evil.com" goes to
// evil.com. They are shown as [U+XXXX].
func urlLookalike(r rune) bool {
	switch r {
	case 0x2215, 0x2044, 0x29F8, 0x2571, 0xFF0F, 0x2F03, // slashes
		0x3002, 0xFF0E, 0xFF61, 0x2024, 0xFE52, 0x0701, 0x0702, 0xA4F8, // dots
		0xFF1A, 0xFE55, 0xA789, 0x2236, 0x0589, 0x05C3, 0x02D0, 0xFE13, // colons
		0xFF20, 0xFE6B, // at signs
		0xFF03, 0xFE5F, 0xFF1F, 0xFE56: // number signs, question marks
		return true
	}
	return false
}

func isNewline(r rune) bool {
	switch r {
	case '\n', '\r', '\v', '\f', 0x85, 0x2028, 0x2029:
		return true
	}
	return false
}

// harden applies the character rules above (all but the script check) to valid UTF-8.
func harden(s string) string {
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	marks := 0
	atWordStart := true
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Me, r) {
			if !invisible(r) && !atWordStart && marks < maxMarks {
				marks++
				b.WriteRune(r)
			} else {
				visible(&b, r)
			}
			continue
		}
		marks = 0
		atWordStart = false
		switch {
		case r == '\r' && i < len(s) && s[i] == '\n':
			i++
			b.WriteString(NewlineMark)
			atWordStart = true
		case isNewline(r):
			b.WriteString(NewlineMark)
			atWordStart = true
		case r == '\t':
			b.WriteByte(' ')
			atWordStart = true
		case r == ' ':
			b.WriteByte(' ')
			atWordStart = true
		case r < 0x20:
			b.WriteRune(0x2400 + r)
			atWordStart = true
		case r == 0x7F:
			b.WriteRune(0x2421)
			atWordStart = true
		case r < 0x80:
			b.WriteByte(byte(r))
		case r == utf8.RuneError:
			b.WriteRune(r)
		case r <= 0x9F, // C1
			unicode.Is(unicode.Cf, r),
			unicode.Is(unicode.Zs, r),
			unicode.Is(unicode.Co, r),
			invisible(r),
			urlLookalike(r),
			!unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S): // unassigned
			visible(&b, r)
			atWordStart = true
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// ---- look-alikes ------------------------------------------------------------------------

// script identifies a writing system for the mixed-script check. Han, Hiragana, Katakana,
// Bopomofo and Hangul count as one, as they are written together.
type script int

const (
	scriptNone script = iota
	scriptLatin
	scriptCyrillic
	scriptGreek
	scriptArmenian
	scriptCherokee
	scriptGeorgian
	scriptHebrew
	scriptArabic
	scriptCJK
	scriptDevanagari
	scriptThai
	scriptOther // any other letter: its block decides (see scriptOf)
)

var scriptTables = []struct {
	s script
	t *unicode.RangeTable
}{
	{scriptLatin, unicode.Latin},
	{scriptCyrillic, unicode.Cyrillic},
	{scriptGreek, unicode.Greek},
	{scriptArmenian, unicode.Armenian},
	{scriptCherokee, unicode.Cherokee},
	{scriptGeorgian, unicode.Georgian},
	{scriptHebrew, unicode.Hebrew},
	{scriptArabic, unicode.Arabic},
	{scriptCJK, unicode.Han},
	{scriptCJK, unicode.Hiragana},
	{scriptCJK, unicode.Katakana},
	{scriptCJK, unicode.Hangul},
	{scriptCJK, unicode.Bopomofo},
	{scriptDevanagari, unicode.Devanagari},
	{scriptThai, unicode.Thai},
}

// scriptOf returns the script of a letter; scriptNone for anything else. Letters of other
// scripts (including the mathematical alphanumerics, which are "Common" and look Latin) get
// an id per 128-code-point block, so two different ones still count as a mix.
func scriptOf(r rune) script {
	if r < 0x80 {
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' {
			return scriptLatin
		}
		return scriptNone
	}
	if !unicode.IsLetter(r) {
		return scriptNone
	}
	if r >= 0xFF00 && r <= 0xFFEF { // fullwidth and halfwidth forms look like another script
		return scriptOther + 1
	}
	for _, st := range scriptTables {
		if unicode.Is(st.t, r) {
			return st.s
		}
	}
	if r >= 0x1D400 && r <= 0x1D7FF { // mathematical alphanumerics look Latin or Greek
		return scriptOther + 1
	}
	if unicode.Is(unicode.Common, r) || unicode.Is(unicode.Inherited, r) { // ー, ｰ …
		return scriptNone
	}
	return scriptOther + 2 + script(r>>7)
}

// latinConfusable are Cyrillic, Greek and Armenian letters that look like Latin ones.
var latinConfusable = map[rune]bool{}

func init() {
	for _, r := range "аеорсухіјѕԁԛԝӏһүвкмнтьАВЕКМНОРСТХІЈЅҮԚԜ" + // Cyrillic
		"οανικρτυεχΑΒΕΖΗΙΚΜΝΟΡΤΥΧ" + // Greek
		"օսցհոզ" { // Armenian
		latinConfusable[r] = true
	}
}

// lookalikes applies the mixed-script rules to hardened text.
func lookalikes(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	start := -1
	for i, r := range s {
		if isWordRune(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			writeToken(&b, s[start:i])
			start = -1
		}
		b.WriteRune(r)
	}
	if start >= 0 {
		writeToken(&b, s[start:])
	}
	return b.String()
}

func isWordRune(r rune) bool {
	return r == '.' || r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.M, r)
}

func hasNonASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return true
		}
	}
	return false
}

// writeToken writes one run of word characters and dots, flagging look-alikes.
func writeToken(b *strings.Builder, tok string) {
	if !hasNonASCII(tok) {
		b.WriteString(tok)
		return
	}
	if labels, ok := hostLabels(tok); ok && suspiciousHost(labels) {
		for i, l := range labels {
			if i > 0 {
				b.WriteByte('.')
			}
			if p, ok := punycodeLabel(l); ok {
				b.WriteString(p)
			} else {
				b.WriteString(l)
			}
		}
		return
	}
	// Word by word (split at '.', '-', '_' and digits): flag the minority script.
	start := -1
	for i, r := range tok {
		if unicode.IsLetter(r) || unicode.Is(unicode.M, r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			writeWord(b, tok[start:i])
			start = -1
		}
		b.WriteRune(r)
	}
	if start >= 0 {
		writeWord(b, tok[start:])
	}
}

// hostLabels splits a token that has the shape of a host name: at least two non-empty
// labels, the last one letters only.
func hostLabels(tok string) ([]string, bool) {
	if !strings.Contains(tok, ".") {
		return nil, false
	}
	labels := strings.Split(tok, ".")
	if len(labels) < 2 {
		return nil, false
	}
	for _, l := range labels {
		if l == "" {
			return nil, false
		}
	}
	tld := labels[len(labels)-1]
	if utf8.RuneCountInString(tld) < 2 {
		return nil, false
	}
	for _, r := range tld {
		if !unicode.IsLetter(r) && !unicode.Is(unicode.M, r) {
			return nil, false
		}
	}
	return labels, true
}

// suspiciousHost: a label mixes scripts, or a non-ASCII label is spelled only with letters
// that look Latin ("аррӏе").
func suspiciousHost(labels []string) bool {
	for _, l := range labels {
		if !hasNonASCII(l) {
			continue
		}
		if mixedScripts(l) {
			return true
		}
		allConfusable := true
		letters := 0
		for _, r := range l {
			if unicode.IsLetter(r) {
				letters++
				if !latinConfusable[r] {
					allConfusable = false
				}
			}
		}
		if letters > 0 && allConfusable {
			return true
		}
	}
	return false
}

func mixedScripts(w string) bool {
	first := scriptNone
	for _, r := range w {
		sc := scriptOf(r)
		if sc == scriptNone {
			continue
		}
		if first == scriptNone {
			first = sc
		} else if sc != first {
			return true
		}
	}
	return false
}

// writeWord writes a word of letters and marks; when it mixes scripts, the letters not of
// its majority script (Latin on a tie) are shown as [U+XXXX].
func writeWord(b *strings.Builder, w string) {
	if !mixedScripts(w) {
		b.WriteString(w)
		return
	}
	counts := map[script]int{}
	for _, r := range w {
		if sc := scriptOf(r); sc != scriptNone {
			counts[sc]++
		}
	}
	major, best := scriptNone, -1
	for sc, n := range counts {
		if n > best || n == best && sc == scriptLatin || n == best && major != scriptLatin && sc < major {
			major, best = sc, n
		}
	}
	for _, r := range w {
		sc := scriptOf(r)
		if sc != scriptNone && sc != major {
			visible(b, r)
		} else {
			b.WriteRune(r)
		}
	}
}
