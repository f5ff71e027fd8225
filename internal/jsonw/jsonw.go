// Package jsonw appends JSON values byte for byte as encoding/json writes them, without
// reflection, for the few records approvebot writes on every request (the request
// object it answers, the stored request and its audit entry). Each encoder built on it
// is tested to produce exactly what json.Marshal produces for the same value, so a field
// added to a type without its encoder fails the tests rather than going missing.
package jsonw

import (
	"strconv"
	"time"
	"unicode/utf8"
)

const hex = "0123456789abcdef"

// String appends s as a JSON string: encoding/json's escaping, including its replacement
// of invalid UTF-8 by U+FFFD and its escaping of U+2028 and U+2029; with escapeHTML
// also <, > and & (json.Marshal does; an Encoder with SetEscapeHTML(false) does not).
func String(dst []byte, s string, escapeHTML bool) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && (!escapeHTML || (b != '<' && b != '>' && b != '&')) {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// Time appends t as time.Time's MarshalJSON does (RFC 3339 with nanoseconds, quoted).
func Time(dst []byte, t time.Time) []byte {
	dst = append(dst, '"')
	dst = t.AppendFormat(dst, time.RFC3339Nano)
	return append(dst, '"')
}

// Bool appends true or false.
func Bool(dst []byte, b bool) []byte {
	if b {
		return append(dst, "true"...)
	}
	return append(dst, "false"...)
}

// Uint appends n.
func Uint(dst []byte, n uint64) []byte { return strconv.AppendUint(dst, n, 10) }

// Object builds one JSON object field by field.
type Object struct {
	B          []byte
	EscapeHTML bool
	n          int
}

// Start opens the object on dst.
func Start(dst []byte, escapeHTML bool) Object {
	return Object{B: append(dst, '{'), EscapeHTML: escapeHTML}
}

// Key appends a field's key (a literal known not to need escaping) and its colon.
func (o *Object) Key(k string) {
	if o.n > 0 {
		o.B = append(o.B, ',')
	}
	o.n++
	o.B = append(o.B, '"')
	o.B = append(o.B, k...)
	o.B = append(o.B, '"', ':')
}

// Str appends a string field.
func (o *Object) Str(k, v string) {
	o.Key(k)
	o.B = String(o.B, v, o.EscapeHTML)
}

// StrOmit appends a string field unless it is empty (omitempty).
func (o *Object) StrOmit(k, v string) {
	if v != "" {
		o.Str(k, v)
	}
}

// StrPtr appends a string field, null when v is nil.
func (o *Object) StrPtr(k string, v *string) {
	if v == nil {
		o.Null(k)
		return
	}
	o.Str(k, *v)
}

// Bool appends a boolean field.
func (o *Object) Bool(k string, v bool) {
	o.Key(k)
	o.B = Bool(o.B, v)
}

// BoolOmit appends a boolean field unless it is false (omitempty).
func (o *Object) BoolOmit(k string, v bool) {
	if v {
		o.Bool(k, v)
	}
}

// Uint appends a number field.
func (o *Object) Uint(k string, v uint64) {
	o.Key(k)
	o.B = Uint(o.B, v)
}

// Time appends a time field.
func (o *Object) Time(k string, t time.Time) {
	o.Key(k)
	o.B = Time(o.B, t)
}

// TimeOmitZero appends a time field unless it is the zero time (omitzero).
func (o *Object) TimeOmitZero(k string, t time.Time) {
	if !t.IsZero() {
		o.Time(k, t)
	}
}

// TimePtr appends a time field, null when t is nil.
func (o *Object) TimePtr(k string, t *time.Time) {
	if t == nil {
		o.Null(k)
		return
	}
	o.Time(k, *t)
}

// Null appends a null field.
func (o *Object) Null(k string) {
	o.Key(k)
	o.B = append(o.B, "null"...)
}

// End closes the object and returns the bytes.
func (o *Object) End() []byte { return append(o.B, '}') }
