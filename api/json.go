package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth bounds JSON nesting in a request body.
const maxDepth = 64

// checkJSON rejects what encoding/json would silently accept: invalid UTF-8 and escaped lone
// surrogates (both would be replaced by U+FFFD, so distinct inputs would share a
// fingerprint), duplicate object keys — also keys that differ only in case, which Go's
// struct decoding and case-insensitive parsers treat as one (the last would win, while the
// tool that runs the call may take the first: the human would approve something else) —
// nesting deeper than maxDepth and trailing data after the value. It is one pass over the
// bytes that allocates only for escaped or numerous keys; decodeStrict decodes afterwards.
func checkJSON(body []byte) *apiError {
	if !utf8.Valid(body) {
		return errInvalidUTF8
	}
	s := scanner{b: body}
	s.space()
	if e := s.value(1); e != nil {
		return e
	}
	s.space()
	if s.i != len(s.b) {
		return newError(400, "invalid_json", "trailing data after the JSON value")
	}
	return nil
}

// scanner walks one JSON text (RFC 8259) for checkJSON.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) syntax(what string) *apiError {
	if s.i >= len(s.b) {
		return newError(400, "invalid_json", "malformed JSON: unexpected end of input, "+what)
	}
	return newError(400, "invalid_json", fmt.Sprintf("malformed JSON at byte %d: unexpected %q, %s", s.i, s.b[s.i], what))
}

func (s *scanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

func (s *scanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value scans one value; depth is the nesting level a container opened here would have.
func (s *scanner) value(depth int) *apiError {
	switch c := s.peek(); {
	case c == '{':
		return s.object(depth)
	case c == '[':
		return s.array(depth)
	case c == '"':
		_, e := s.str(false)
		return e
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		return s.number()
	}
	return s.syntax("expected a value")
}

var errTooDeep = newError(400, "too_deep", fmt.Sprintf("JSON nested deeper than %d levels", maxDepth))

func (s *scanner) object(depth int) *apiError {
	if depth > maxDepth {
		return errTooDeep
	}
	s.i++ // {
	s.space()
	if s.peek() == '}' {
		s.i++
		return nil
	}
	var few [8][]byte
	keys := keySet{few: few[:0]}
	for {
		if s.peek() != '"' {
			return s.syntax("expected an object key")
		}
		k, e := s.str(true)
		if e != nil {
			return e
		}
		if e := keys.add(k); e != nil {
			return e
		}
		s.space()
		if s.peek() != ':' {
			return s.syntax("expected ':' after an object key")
		}
		s.i++
		s.space()
		if e := s.value(depth + 1); e != nil {
			return e
		}
		s.space()
		switch s.peek() {
		case ',':
			s.i++
			s.space()
		case '}':
			s.i++
			return nil
		default:
			return s.syntax("expected ',' or '}' in an object")
		}
	}
}

func (s *scanner) array(depth int) *apiError {
	if depth > maxDepth {
		return errTooDeep
	}
	s.i++ // [
	s.space()
	if s.peek() == ']' {
		s.i++
		return nil
	}
	for {
		if e := s.value(depth + 1); e != nil {
			return e
		}
		s.space()
		switch s.peek() {
		case ',':
			s.i++
			s.space()
		case ']':
			s.i++
			return nil
		default:
			return s.syntax("expected ',' or ']' in an array")
		}
	}
}

func (s *scanner) literal(lit string) *apiError {
	if !bytes.HasPrefix(s.b[s.i:], []byte(lit)) {
		return s.syntax("expected " + lit)
	}
	s.i += len(lit)
	return nil
}

func (s *scanner) digits() int {
	n := 0
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}

// number scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? — of any size: the value is
// kept as written (json.Number), never rounded.
func (s *scanner) number() *apiError {
	if s.peek() == '-' {
		s.i++
	}
	switch c := s.peek(); {
	case c == '0':
		s.i++
	case c >= '1' && c <= '9':
		s.digits()
	default:
		return s.syntax("expected a digit")
	}
	if s.peek() == '.' {
		s.i++
		if s.digits() == 0 {
			return s.syntax("expected a digit after '.'")
		}
	}
	if c := s.peek(); c == 'e' || c == 'E' {
		s.i++
		if c := s.peek(); c == '+' || c == '-' {
			s.i++
		}
		if s.digits() == 0 {
			return s.syntax("expected a digit in the exponent")
		}
	}
	return nil
}

var errLoneSurrogate = newError(400, "invalid_utf8", "request body escapes a lone UTF-16 surrogate (\\uD800-\\uDFFF without its pair)")

// str scans a string. For a key it returns the decoded bytes (a slice of the body when the
// key has no escapes).
func (s *scanner) str(key bool) ([]byte, *apiError) {
	s.i++ // "
	start := s.i
	var dec []byte // the decoded key, once an escape was seen
	for s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			out := s.b[start:s.i]
			if dec != nil {
				out = dec
			}
			s.i++
			return out, nil
		case c < 0x20:
			return nil, s.syntax("control characters must be escaped in a string")
		case c != '\\':
			if dec != nil {
				dec = append(dec, c)
			}
			s.i++
			continue
		}
		// An escape.
		if key && dec == nil {
			dec = append([]byte(nil), s.b[start:s.i]...)
		}
		if s.i+1 >= len(s.b) {
			s.i++
			return nil, s.syntax("unfinished escape")
		}
		e := s.b[s.i+1]
		if e != 'u' {
			var r byte
			switch e {
			case '"', '\\', '/':
				r = e
			case 'b':
				r = '\b'
			case 'f':
				r = '\f'
			case 'n':
				r = '\n'
			case 'r':
				r = '\r'
			case 't':
				r = '\t'
			default:
				s.i++
				return nil, s.syntax("invalid escape")
			}
			if key {
				dec = append(dec, r)
			}
			s.i += 2
			continue
		}
		r, ok := hex4(s.b, s.i+2)
		if !ok {
			s.i += 2
			return nil, s.syntax("expected four hex digits after \\u")
		}
		s.i += 6
		switch {
		case r >= 0xD800 && r < 0xDC00:
			lo, ok := rune(0), false
			if s.i+1 < len(s.b) && s.b[s.i] == '\\' && s.b[s.i+1] == 'u' {
				lo, ok = hex4(s.b, s.i+2)
			}
			if !ok || lo < 0xDC00 || lo > 0xDFFF {
				return nil, errLoneSurrogate
			}
			s.i += 6
			r = utf16.DecodeRune(r, lo)
		case r >= 0xDC00 && r <= 0xDFFF:
			return nil, errLoneSurrogate
		}
		if key {
			dec = utf8.AppendRune(dec, r)
		}
	}
	return nil, s.syntax("unterminated string")
}

// keySet finds duplicate keys in one object, also keys equal under case folding: a linear
// scan for the few keys most objects have, a map of folded keys beyond that.
type keySet struct {
	few    [][]byte
	folded map[string][]byte
}

const fewKeys = 16

func (k *keySet) add(key []byte) *apiError {
	if k.folded == nil {
		for _, p := range k.few {
			if bytes.EqualFold(p, key) {
				return dupKey(p, key)
			}
		}
		if len(k.few) < fewKeys {
			k.few = append(k.few, key)
			return nil
		}
		k.folded = make(map[string][]byte, 2*fewKeys)
		for _, p := range k.few {
			k.folded[foldKey(string(p))] = p
		}
		k.few = nil
	}
	f := foldKey(string(key))
	if p, dup := k.folded[f]; dup {
		return dupKey(p, key)
	}
	k.folded[f] = key
	return nil
}

func dupKey(prev, key []byte) *apiError {
	if bytes.Equal(prev, key) {
		return newError(400, "duplicate_key", fmt.Sprintf("duplicate JSON object key %q", key))
	}
	return newError(400, "duplicate_key", fmt.Sprintf("JSON object keys %q and %q differ only in case", prev, key))
}

// foldKey maps every key equal under Unicode simple case folding (what strings.EqualFold
// and encoding/json's field matching use) to one string: each rune becomes the smallest
// rune of its folding orbit.
func foldKey(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		// For an ASCII letter the upper case is the smallest rune of its orbit.
		return strings.ToUpper(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		m := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			m = min(m, f)
		}
		b.WriteRune(m)
	}
	return b.String()
}

func hex4(b []byte, at int) (rune, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[at : at+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c-'a') + 10
		case c >= 'A' && c <= 'F':
			r |= rune(c-'A') + 10
		default:
			return 0, false
		}
	}
	return r, true
}

// decodeStrict decodes body into v, refusing unknown fields and trailing data.
func decodeStrict(body []byte, v any) *apiError {
	if len(bytes.TrimSpace(body)) == 0 {
		return newError(400, "invalid_json", "request body is empty")
	}
	if e := checkJSON(body); e != nil {
		return e
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		var ute *json.UnmarshalTypeError
		switch {
		case errors.As(err, &ute):
			return newError(400, "invalid_field", fmt.Sprintf("field %q: expected %s", ute.Field, ute.Type))
		case bytes.Contains([]byte(err.Error()), []byte("unknown field")):
			return newError(400, "unknown_field", err.Error())
		}
		return newError(400, "invalid_json", err.Error())
	}
	if dec.More() {
		return newError(400, "invalid_json", "trailing data after the JSON value")
	}
	if _, err := dec.Token(); err != io.EOF {
		return newError(400, "invalid_json", "trailing data after the JSON value")
	}
	return nil
}
