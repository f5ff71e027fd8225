package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// maxDepth bounds JSON nesting in a request body.
const maxDepth = 64

// checkJSON rejects what encoding/json would silently accept: invalid UTF-8 (it would be
// replaced), duplicate object keys (the last would win, while the tool that runs the call
// may take the first — the human would approve something else), nesting deeper than
// maxDepth and trailing data after the value.
func checkJSON(body []byte) *apiError {
	if !utf8.Valid(body) {
		return errInvalidUTF8
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	type frame struct {
		object bool
		keys   map[string]struct{}
		expect bool // next string token in an object is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return newError(400, "invalid_json", "malformed JSON: "+err.Error())
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		isKey := top != nil && top.object && top.expect
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				if len(stack) >= maxDepth {
					return newError(400, "too_deep", fmt.Sprintf("JSON nested deeper than %d levels", maxDepth))
				}
				if top != nil && top.object {
					top.expect = true
				}
				stack = append(stack, &frame{object: t == '{', keys: map[string]struct{}{}, expect: t == '{'})
			case '}', ']':
				stack = stack[:len(stack)-1]
			}
			continue
		case string:
			if isKey {
				if _, dup := top.keys[t]; dup {
					return newError(400, "duplicate_key", fmt.Sprintf("duplicate JSON object key %q", t))
				}
				top.keys[t] = struct{}{}
				top.expect = false
				continue
			}
		}
		if top != nil && top.object {
			top.expect = true
		}
		if len(stack) == 0 {
			// A scalar at the top level: only one value is allowed.
			if dec.More() {
				return newError(400, "invalid_json", "trailing data after the JSON value")
			}
		}
	}
	return nil
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
