package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// maxDepth bounds JSON nesting, as the server does.
const maxDepth = 64

// checkStrict rejects what encoding/json would silently accept and what a fail-closed
// reader must not: invalid UTF-8, duplicate object keys (the last would win — an answer
// {"allowed":false,"allowed":true} must not read as an allow), nesting deeper than
// maxDepth, anything but one JSON object, and trailing data.
func checkStrict(raw []byte) error {
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
				if len(stack) >= maxDepth {
					return fmt.Errorf("JSON nested deeper than %d levels", maxDepth)
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
					return fmt.Errorf("duplicate key %q", clean(k, 40))
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

// StrictObject decodes one JSON object as approvebot's API would accept it: valid UTF-8,
// no duplicate keys, at most 64 levels deep, nothing after it. Numbers stay json.Number so
// that re-encoding the arguments reproduces them exactly (the fingerprint is over the args).
func StrictObject(raw []byte) (map[string]any, error) {
	if err := checkStrict(raw); err != nil {
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
