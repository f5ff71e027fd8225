package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestCheckJSON runs checkJSON through decodeStrict, which every body goes through.
func TestCheckJSON(t *testing.T) {
	for _, c := range []struct {
		name, body, code string
	}{
		{"plain", `{"a":1,"b":[{"a":2}],"c":{"a":3}}`, ""},
		{"same key in sibling objects", `{"x":{"k":1},"y":{"k":1}}`, ""},
		{"duplicate", `{"a":1,"a":2}`, "duplicate_key"},
		{"duplicate nested", `{"a":{"b":[{"c":1,"c":1}]}}`, "duplicate_key"},
		{"duplicate after escape", `{"a":1,"\u0061":2}`, "duplicate_key"},
		{"case", `{"tool":"bash","TOOL":"x"}`, "duplicate_key"},
		{"kelvin sign", `{"k":1,"\u212a":2}`, "duplicate_key"},
		{"kelvin sign and upper K", `{"K":1,"\u212a":2}`, "duplicate_key"},
		{"long s", `{"s":1,"\u017f":2}`, "duplicate_key"},
		{"distinct non-ASCII", `{"é":1,"e":2,"ß":3,"ss":4}`, ""},
		{"too deep", strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1), "too_deep"},
		{"deep enough", strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth), ""},
		{"invalid utf8", "{\"a\":\"\xff\"}", "invalid_utf8"},
		{"lone high surrogate", `{"a":"\ud800"}`, "invalid_utf8"},
		{"lone high surrogate at end", `{"a":"x\uDBFF"}`, "invalid_utf8"},
		{"high then non-surrogate", `{"a":"\ud800\u0041"}`, "invalid_utf8"},
		{"lone low surrogate", `{"a":"\udc00"}`, "invalid_utf8"},
		{"surrogate in key", `{"\udfff":1}`, "invalid_utf8"},
		{"pair", `{"a":"\ud83d\ude00"}`, ""},
		{"escaped backslash before u", `{"a":"\\ud800"}`, ""},
		{"escaped quote", `{"a":"\"\ud800"}`, "invalid_utf8"},
		{"bom", "\xef\xbb\xbf{}", "invalid_json"},
		{"trailing", `{} {}`, "invalid_json"},
		{"huge numbers", `{"a":1e400,"b":` + strings.Repeat("9", 100) + `}`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var v any
			e := decodeStrict([]byte(c.body), &v)
			switch {
			case c.code == "" && e != nil:
				t.Fatalf("rejected: %s %s", e.Code, e.Message)
			case c.code != "" && (e == nil || e.Code != c.code):
				t.Fatalf("got %v, want %s", e, c.code)
			}
		})
	}
}

func TestFoldKey(t *testing.T) {
	same := [][2]string{{"tool", "TOOL"}, {"Tool", "tOoL"}, {"k", "\u212a"}, {"K", "\u212a"}, {"s", "\u017f"}, {"straße", "STRAßE"}}
	for _, p := range same {
		if foldKey(p[0]) != foldKey(p[1]) {
			t.Errorf("%q and %q fold apart: %q %q", p[0], p[1], foldKey(p[0]), foldKey(p[1]))
		}
		if !strings.EqualFold(p[0], p[1]) {
			t.Errorf("test case %q/%q is not EqualFold", p[0], p[1])
		}
	}
	for _, p := range [][2]string{{"a", "b"}, {"ß", "ss"}, {"é", "e"}, {"command", "command "}} {
		if foldKey(p[0]) == foldKey(p[1]) {
			t.Errorf("%q and %q fold together", p[0], p[1])
		}
	}
}

// FuzzFoldKey checks foldKey against strings.EqualFold.
func FuzzFoldKey(f *testing.F) {
	f.Add("tool", "TOOL")
	f.Add("k", "\u212a")
	f.Fuzz(func(t *testing.T, a, b string) {
		if (foldKey(a) == foldKey(b)) != strings.EqualFold(a, b) {
			t.Fatalf("foldKey disagrees with EqualFold on %q, %q", a, b)
		}
	})
}

// FuzzCheckJSON: the scanner accepts exactly what the Token-based reference and
// encoding/json accept, and when both refuse a body for a duplicate key, depth or surrogate
// it is for the same reason.
func FuzzCheckJSON(f *testing.F) {
	for _, seed := range []string{`{"a":1}`, `{"a":1,"A":2}`, `[1,2,{"x":"\ud83d\ude00"}]`, `{"a":"\ud800"}`, `-0.5e+7`,
		`{"k":{"\u212a":1,"k":2}}`, strings.Repeat("[", 70), `{"a" : [ true , false , null ] }`, "\"\\/\\\"\\b\"", `01`, `1.`, `{"a":1}x`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got := checkJSON(body)
		ref := checkJSONReference(body)
		refOK := ref == nil && json.Valid(body)
		if (got == nil) != refOK {
			t.Fatalf("scanner says %v, reference %v (json.Valid %v) for %q", got, ref, json.Valid(body), body)
		}
		if got != nil && ref != nil && got.Code != ref.Code && got.Code != "invalid_json" && ref.Code != "invalid_json" &&
			!(got.Code == "invalid_utf8" || ref.Code == "invalid_utf8") {
			t.Fatalf("scanner refuses with %s, reference with %s, for %q", got.Code, ref.Code, body)
		}
	})
}

func BenchmarkCheckJSON(b *testing.B) {
	body := []byte(`{"tool":"bash","args":{"command":"kubectl rollout restart deploy/api -n prod","timeout":120,"env":{"A":"1"}},` +
		`"session":"s-0123456789","cwd":"/srv/app","reason":"restart after the config change","facts":{"read_only":false},"wait":"2s"}`)
	b.Run("scanner", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if e := checkJSON(body); e != nil {
				b.Fatal(e)
			}
		}
	})
	b.Run("reference", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if e := checkJSONReference(body); e != nil {
				b.Fatal(e)
			}
		}
	})
}

// checkJSONReference is the first checkJSON, built on json.Decoder.Token: slower, but
// obviously right. FuzzCheckJSON holds the scanner to it.
func checkJSONReference(body []byte) *apiError {
	if !utf8.Valid(body) {
		return errInvalidUTF8
	}
	if e := surrogatesReference(body); e != nil {
		return e
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	type frame struct {
		object bool
		keys   map[string]string // folded key → the key as written
		expect bool              // next string token in an object is a key
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
				stack = append(stack, &frame{object: t == '{', keys: map[string]string{}, expect: t == '{'})
			case '}', ']':
				stack = stack[:len(stack)-1]
			}
			continue
		case string:
			if isKey {
				folded := foldKey(t)
				if prev, dup := top.keys[folded]; dup {
					if prev == t {
						return newError(400, "duplicate_key", fmt.Sprintf("duplicate JSON object key %q", t))
					}
					return newError(400, "duplicate_key", fmt.Sprintf("JSON object keys %q and %q differ only in case", prev, t))
				}
				top.keys[folded] = t
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

// surrogatesReference finds an escaped lone surrogate by decoding every string with
// strconv-like rules: a \\u escape of D800-DFFF must be a high surrogate followed by a low one.
func surrogatesReference(body []byte) *apiError {
	in := false
	for i := 0; i < len(body); i++ {
		switch c := body[i]; {
		case c == '"':
			in = !in
		case c == '\\' && in && i+1 < len(body):
			if body[i+1] != 'u' {
				i++
				continue
			}
			r, ok := hex4(body, i+2)
			if !ok {
				return nil
			}
			if r >= 0xD800 && r < 0xDC00 {
				lo, ok := rune(0), false
				if i+11 < len(body) && body[i+6] == '\\' && body[i+7] == 'u' {
					lo, ok = hex4(body, i+8)
				}
				if !ok || lo < 0xDC00 || lo > 0xDFFF {
					return errLoneSurrogate
				}
				i += 11
				continue
			}
			if r >= 0xDC00 && r <= 0xDFFF {
				return errLoneSurrogate
			}
			i += 5
		}
	}
	return nil
}
