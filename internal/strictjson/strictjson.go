// Package strictjson reads JSON the way a fail-closed reader must: one object, valid UTF-8,
// no duplicate keys, bounded nesting, nothing after it. encoding/json would silently take
// the last of two duplicate keys — an answer {"allowed":false,"allowed":true} or a hook
// input {"command":"ls","command":"rm -rf ~"} must not be read that way.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// MaxDepth bounds JSON nesting, as the server does.
const MaxDepth = 64

// Check rejects invalid UTF-8, duplicate object keys, nesting deeper than MaxDepth,
// anything but one JSON object, and trailing data.
func Check(raw []byte) error {
	if !utf8.Valid(raw) {
		return errors.New("invalid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	type frame struct {
		object bool
		keys   map[string]struct{}
		key    bool // the next string in this object is a key
	}
	var stack []*frame
	values := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if len(stack) == 0 {
			values++
			if values > 1 {
				return errors.New("trailing data after the JSON value")
			}
			if d, ok := tok.(json.Delim); !ok || d != '{' {
				return errors.New("not a JSON object")
			}
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				if len(stack) >= MaxDepth {
					return fmt.Errorf("JSON nested deeper than %d levels", MaxDepth)
				}
				if top != nil && top.object {
					top.key = true
				}
				stack = append(stack, &frame{object: d == '{', keys: map[string]struct{}{}, key: d == '{'})
			case '}', ']':
				stack = stack[:len(stack)-1]
			}
			continue
		}
		if top != nil && top.object {
			if top.key {
				k, _ := tok.(string)
				if _, dup := top.keys[k]; dup {
					return fmt.Errorf("duplicate key %q", cut(k, 40))
				}
				top.keys[k] = struct{}{}
				top.key = false
				continue
			}
			top.key = true
		}
	}
	if values == 0 {
		return errors.New("empty answer")
	}
	if len(stack) != 0 {
		return errors.New("truncated JSON")
	}
	return nil
}

// Object decodes one JSON object that passes Check. Numbers stay json.Number so that
// re-encoding the arguments reproduces them exactly (the fingerprint is over the args).
func Object(raw []byte) (map[string]any, error) {
	if err := Check(raw); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errors.New("not a JSON object")
	}
	return m, nil
}

// cut shortens s to at most n runes, marking the cut.
func cut(s string, n int) string {
	i := 0
	for p := range s {
		if i == n {
			return s[:p] + "…"
		}
		i++
	}
	return s
}
