package jsonw

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

func FuzzString(f *testing.F) {
	for _, s := range []string{"", "plain", `quote " back \ slash`, "<tag>&amp;", "\x00\x01\b\f\n\r\t\x1f\x7f", "é ü 日本", "\u2028\u2029", "\xff\xfe", "a\xc3", "\U0001F600"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, html := range []bool{true, false} {
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetEscapeHTML(html)
			if err := enc.Encode(s); err != nil {
				t.Fatal(err)
			}
			if got := String(nil, s, html); string(got)+"\n" != want.String() {
				t.Fatalf("String(%q, html=%v) = %s, encoding/json: %s", s, html, got, want.String())
			}
		}
	})
}

func TestTime(t *testing.T) {
	for _, tm := range []time.Time{
		time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC),
		time.Date(2026, 3, 1, 10, 0, 0, 123456789, time.UTC),
		time.Date(2026, 3, 1, 10, 0, 0, 120000000, time.FixedZone("x", 3600+1800)),
		time.Unix(0, 1).UTC(),
	} {
		want, _ := json.Marshal(tm)
		if got := Time(nil, tm); string(got) != string(want) {
			t.Errorf("Time(%v) = %s, want %s", tm, got, want)
		}
	}
}
