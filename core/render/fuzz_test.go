package render

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func addSeeds(f *testing.F) {
	for _, s := range injections {
		if len(s) > 4096 {
			s = s[:4096]
		}
		f.Add(s, true)
	}
	for i, s := range samples() {
		if i%7 == 0 {
			f.Add(s.text, false)
		}
	}
	for _, s := range notSecrets[:5] {
		f.Add(s, true)
	}
}

// FuzzSummary: for any input, the summary has at most MaxSummary characters, is valid UTF-8,
// carries no control, bidi or other format character and no line break; the details obey
// the same rules but the length; and cleaning is idempotent.
func FuzzSummary(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, s string, isShell bool) {
		defer watchdog(s)()
		summary, truncated, details := Summarize("bash", map[string]any{"command": s, "k": []any{s, 1.5}}, s, isShell)
		if err := checkSummary(summary); err != nil {
			t.Fatal(err)
		}
		if err := checkText("details", details, false); err != nil || strings.Contains(details, "\n") {
			t.Fatalf("details: %v %q", err, details)
		}
		if truncated != (utf8.RuneCountInString(details) > MaxSummary) && !strings.Contains(details, "[cut: the action is") {
			t.Fatalf("truncated=%v for %d characters of details", truncated, utf8.RuneCountInString(details))
		}
		once := Clean(s, -1)
		if twice := Clean(once, -1); twice != once {
			t.Fatalf("Clean not idempotent:\n%q\n%q", once, twice)
		}
		if m := Mask(s); Mask(m) != m {
			t.Fatalf("Mask not idempotent:\n%q\n%q", m, Mask(m))
		}
	})
}

// FuzzPayloads: for any text in every user field, pending, resolved and details payloads of
// every platform stay within their limits, carry no live mention, markup or link, draw no
// line of their own, and their buttons parse back.
func FuzzPayloads(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, s string, resolved bool) {
		defer watchdog(s)()
		c, details := cardOf(s, resolved)
		if err := checkSummary(c.Summary); err != nil {
			t.Fatal(err)
		}
		if err := checkAllPayloads(c, details); err != nil {
			t.Fatal(err)
		}
		// A hand-built card with raw, unclean strings is made safe by the builders too.
		raw := Card{RequestID: testID, Tool: s, Summary: s, Agent: s, Session: s, Cwd: s, AgentReason: s, AskReason: s, Rule: s, Truncated: true}
		if resolved {
			raw.Resolution = &Resolution{DecidedBy: s, Reason: s}
		}
		if err := checkAllPayloads(raw, s); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzParseCallback: nothing but well-formed data parses, and what parses round-trips.
func FuzzParseCallback(f *testing.F) {
	f.Add("ab1:once:" + testID)
	f.Add("ab1:details:" + testID)
	f.Add("ab1:once:" + testID + "x")
	f.Fuzz(func(t *testing.T, d string) {
		a, id, ok := ParseCallback(d)
		if ok && CallbackData(a, id) != d {
			t.Fatalf("%q parsed to %q %q", d, a, id)
		}
	})
}

// watchdog turns a run slower than 10 s (a quadratic path) into a crash that the fuzzer
// records with its input.
func watchdog(input string) (stop func()) {
	t := time.AfterFunc(10*time.Second, func() {
		panic(fmt.Sprintf("render took over 10s on a %d-byte input %.200q", len(input), input))
	})
	return func() { t.Stop() }
}
