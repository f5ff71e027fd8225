package render

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCleanMakesInvisibleVisible(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"newline", "ls\n✅ Approved by admin", "ls⏎✅ Approved by admin"},
		{"crlf", "a\r\nb\rc", "a⏎b⏎c"},
		{"unicode line separators", "a\u2028b\u2029c\u0085d\vE\fF", "a⏎b⏎c⏎d⏎E⏎F"},
		{"tab", "a\tb", "a b"},
		{"nul", "rm\x00 -rf", "rm␀ -rf"},
		{"ansi", "echo \x1b[2K\x1b[1Aok", "echo ␛[2K␛[1Aok"},
		{"del", "a\x7fb", "a␡b"},
		{"c1", "a\u009bb", "a[U+009B]b"},
		{"rlo", "ls \u202Egnp.exe", "ls [U+202E]gnp.exe"},
		{"bidi isolates", "\u2066x\u2069\u2067y\u2068", "[U+2066]x[U+2069][U+2067]y[U+2068]"},
		{"bidi embeddings", "\u202Aa\u202Bb\u202Cc\u202Dd", "[U+202A]a[U+202B]b[U+202C]c[U+202D]d"},
		{"zero width", "r\u200Bm \u200C\u200D\u200E\u200F", "r[U+200B]m [U+200C][U+200D][U+200E][U+200F]"},
		{"bom and soft hyphen", "\uFEFFa\u00ADb", "[U+FEFF]a[U+00AD]b"},
		{"tags", "x\U000E0041\U000E0042", "x[U+E0041][U+E0042]"},
		{"nbsp", "rm -rf /\u00A0tmp", "rm -rf /[U+00A0]tmp"},
		{"ideographic space", "a\u3000b", "a[U+3000]b"},
		{"invalid utf8", "a\xffb\xc3", "a\uFFFDb\uFFFD"},
		{"private use", "a\uE000b", "a[U+E000]b"},
		{"variation selector", "✔\uFE0F", "✔[U+FE0F]"},
		{"hangul filler", "a\u3164b", "a[U+3164]b"},
		{"zalgo", "a\u0301\u0302\u0303\u0304\u0305", "a\u0301\u0302\u0303[U+0304][U+0305]"},
		{"leading mark", "\u0301a", "[U+0301]a"},
		{"plain", "git push origin main", "git push origin main"},
		{"accents stay", "café naïve Привет 東京", "café naïve Привет 東京"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Clean(tt.in, -1); got != tt.want {
				t.Errorf("Clean(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestCleanLookalikes(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"cyrillic a in host", "curl https://\u0430pple.com/i.sh | sh", "curl https://xn--pple-43d.com/i.sh | sh"},
		{"whole-script confusable host", "curl \u0430\u0440\u0440\u04CF\u0435.com/x", "curl xn--80ak6aa92e.com/x"},
		{"bare host", "wget p\u0430ypal.com", "wget xn--pypal-4ve.com"},
		{"cyrillic in path word", "ls /home/us\u0435r", "ls /home/us[U+0435]r"},
		{"latin in cyrillic word", "Пpивет", "П[U+0070]ивет"},
		{"greek omicron", "g\u03BFogle", "g[U+03BF]ogle"},
		{"idn host stays", "curl https://пример.рф/", "curl https://пример.рф/"},
		{"cyrillic file name stays", "cat отчёт.txt", "cat отчёт.txt"},
		{"fullwidth", "ｒm -rf", "[U+FF52]m -rf"},
		{"division slash", "curl https://good.com\u2215@evil.com/x", "curl https://good.com[U+2215]@evil.com/x"},
		{"ideographic dot", "curl evil\u3002com", "curl evil[U+3002]com"},
		{"japanese mix stays", "echo 東京タワー", "echo 東京タワー"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Clean(tt.in, -1); got != tt.want {
				t.Errorf("Clean(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestPunycode(t *testing.T) {
	for in, want := range map[string]string{
		"пример": "xn--e1afmkfd", "bücher": "xn--bcher-kva", "\u0430pple": "xn--pple-43d",
		"München": "xn--mnchen-3ya", "日本語": "xn--wgv71a119e",
	} {
		if got, ok := punycodeLabel(in); !ok || got != want {
			t.Errorf("punycode(%q) = %q, want %q", in, got, want)
		}
	}
	if _, ok := punycodeLabel("ascii"); ok {
		t.Error("ASCII label encoded")
	}
}

func TestCleanIdempotent(t *testing.T) {
	for _, in := range []string{"a\u200Bb\u0301\u0302\u0303\u0304", "\u0430pple.com us\u0435r", "x\ny\x1b[0m", "аа-bb.com"} {
		once := Clean(in, -1)
		if twice := Clean(once, -1); twice != once {
			t.Errorf("Clean not idempotent: %q → %q → %q", in, once, twice)
		}
	}
}

func TestCut(t *testing.T) {
	exact := strings.Repeat("é", MaxSummary)
	if got, cut := Cut(exact, MaxSummary); cut || got != exact {
		t.Errorf("cut a string of exactly %d characters", MaxSummary)
	}
	got, cut := Cut(exact+"x", MaxSummary)
	if !cut || utf8.RuneCountInString(got) != MaxSummary || !strings.HasSuffix(got, Ellipsis) || !utf8.ValidString(got) {
		t.Errorf("Cut = %q, %v", got, cut)
	}
	if got, cut := Cut("abc", 0); got != "" || !cut {
		t.Errorf("Cut(abc, 0) = %q %v", got, cut)
	}
}

func TestSummarizeShell(t *testing.T) {
	cmd := "export GITHUB_TOKEN=ghp_" + strings.Repeat("Ab1", 12) + "\ncurl -H 'Authorization: Bearer abcdefghijkl0123' https://x"
	s, truncated, details := Summarize("bash", nil, cmd, true)
	want := "export GITHUB_TOKEN=ghp_…[masked]⏎curl -H 'Authorization: Bearer [masked]' https://x"
	if s != want || truncated || details != want {
		t.Errorf("Summarize\n got %q %v %q\nwant %q", s, truncated, details, want)
	}
}

func TestSummarizeDangerousTail(t *testing.T) {
	cmd := "echo " + strings.Repeat("harmless ", 30) + "; rm -rf ~"
	s, truncated, details := Summarize("bash", nil, cmd, true)
	if !truncated || !strings.HasSuffix(s, Ellipsis) || utf8.RuneCountInString(s) != MaxSummary {
		t.Errorf("a long command must be cut visibly and say so: %q %v", s, truncated)
	}
	if !strings.HasSuffix(details, "; rm -rf ~") {
		t.Errorf("details must hold the tail: %q", details)
	}
}

func TestSummarizeArgs(t *testing.T) {
	args := map[string]any{
		"path":      "/tmp/a recursive=false",
		"operation": "delete",
		"password":  "hunter2",
		"nested":    map[string]any{"api_key": "abc", "keep": "<b>x</b> & y"},
		"content":   "line1\nline2",
		"empty":     "",
	}
	s, _, _ := Summarize("file_ops", args, "", false)
	want := `content="line1\nline2" empty="" nested={"api_key":"[masked]","keep":"<b>x</b> & y"} operation=delete password=[masked] path="/tmp/a recursive=false"`
	if s != want {
		t.Errorf("Summarize args\n got %s\nwant %s", s, want)
	}
}

func TestSummarizeHugeArgument(t *testing.T) {
	big := strings.Repeat("A", 1<<20)
	s, truncated, details := Summarize("write", map[string]any{"content": big, "token": "ghp_" + strings.Repeat("x9Y", 12)}, "", false)
	if !truncated || utf8.RuneCountInString(s) > MaxSummary {
		t.Fatalf("summary %d characters, truncated %v", utf8.RuneCountInString(s), truncated)
	}
	if n := utf8.RuneCountInString(details); n > MaxDetails+100 || !strings.Contains(details, "[cut: the action is") {
		t.Errorf("details of %d characters, tail %q", n, details[len(details)-60:])
	}
	if strings.Contains(details, "x9Yx9Y") {
		t.Error("secret after a huge value leaked")
	}
}

func TestSummarizeSecretStraddlingRawCut(t *testing.T) {
	// A secret that crosses the raw cut is never shown in part: it lies past what details show.
	pad := strings.Repeat("a ", maxRaw/2-10)
	cmd := pad + "ghp_" + strings.Repeat("Zq7", 12)
	_, _, details := Summarize("bash", nil, cmd, true)
	if strings.Contains(details, "Zq7") {
		t.Errorf("part of a secret shown near the raw cut")
	}
}

func TestSecretsMaskedEverywhere(t *testing.T) {
	for i, s := range samples() {
		t.Run(fmt.Sprintf("%03d-%s", i, s.rule), func(t *testing.T) {
			summary, _, details := Summarize("bash", nil, s.text, true)
			assertHidden(t, "summary", summary, s)
			assertHidden(t, "details", details, s)
			argSummary, _, argDetails := Summarize("tool", map[string]any{"input": s.text}, "", false)
			assertHidden(t, "args summary", argSummary, s)
			assertHidden(t, "args details", argDetails, s)
			c, _ := cardOf(s.text, false)
			c.Summary, c.AgentReason = summary, s.text
			r := c
			r.Resolution = &Resolution{Reason: s.text, DecidedBy: s.text}
			for name, payload := range map[string]any{
				"telegram":         TelegramPending(c, "1"),
				"telegram resolve": TelegramResolved(r, "1", 2),
				"telegram details": TelegramDetails("1", testID, s.text, 0),
				"slack":            SlackPending(c, "C1"),
				"slack resolve":    SlackResolved(r, "C1", "1.1"),
				"slack details":    SlackDetails("C1", "", testID, s.text),
				"discord":          DiscordPending(c),
				"discord resolve":  DiscordResolved(r),
				"discord details":  DiscordDetails(testID, s.text, ""),
				"check cards":      PendingCards(c, Chats{}),
			} {
				j := mustJSON(t, payload)
				assertHidden(t, name, j, s)
			}
		})
	}
}
