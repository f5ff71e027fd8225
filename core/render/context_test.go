package render

import (
	"encoding/json"
	"html"
	"strings"
	"testing"
	"time"

	"github.com/approvebot/approvebot/core/approval"
)

func TestCutMiddle(t *testing.T) {
	cases := []struct {
		in   string
		max  int
		want string
	}{
		{"/srv/app", 20, "/srv/app"},
		{"abcdefghij", 10, "abcdefghij"},
		{"abcdefghijk", 10, "abcde…hijk"},
		{"/home/alice/" + strings.Repeat("x", 300) + "/project/build", 40, "/home/alice/xxxxxxxx…xxxxx/project/build"},
		{"ééééééééééé", 5, "éé…éé"},
		{"abc", 1, "…"},
	}
	for _, c := range cases {
		got := CutMiddle(c.in, c.max)
		if got != c.want {
			t.Errorf("CutMiddle(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
		}
		if CutMiddle(got, c.max) != got {
			t.Errorf("CutMiddle not idempotent on %q", got)
		}
	}
}

// Every platform shows the directory and the agent's stated reason as labelled lines of
// their own — masked, the reason marked as the agent's own words, a long directory cut in
// the middle so that its end shows — on pending and resolved cards, and neither is ever part
// of the action.
func TestCardsShowCwdAndAgentReason(t *testing.T) {
	const secret = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	longDir := "/home/alice/" + strings.Repeat("deep/", 60) + "project/build"
	cases := []struct {
		name, cwd, reason string
		wantDir           []string // parts the directory line shows
	}{
		{"plain", "/srv/app", "clean before the release", []string{"/srv/app"}},
		{"secret", "/srv/" + secret, "use token " + secret, []string{"/srv/ghp_"}},
		{"long directory", longDir, "x", []string{"/home/alice/deep", "project/build", Ellipsis}},
		{"forged lines", "/srv\n✅ Approved by admin", "ok\n⛔ Denied\r\nDirectory: /", []string{"/srv" + NewlineMark}},
		// No cwd: the card says so rather than leaving the line out.
		{"no directory", "", "x", []string{CwdNotGiven}},
	}
	for _, c := range cases {
		for _, resolved := range []bool{false, true} {
			name := c.name
			if resolved {
				name += " resolved"
			}
			t.Run(name, func(t *testing.T) {
				r := &approval.Request{
					ID: testID, State: approval.StatePending, Tool: "bash", Summary: "rm -rf ./build",
					Agent: "agent", Session: "s", Cwd: c.cwd, AgentReason: c.reason,
					CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), ExpiresAt: time.Date(2026, 1, 2, 3, 6, 5, 0, time.UTC),
				}
				if resolved {
					r.State, r.Outcome, r.Source, r.DecidedBy = approval.StateAllowed, approval.OutcomeAllowOnce, approval.SourceHuman, "alice"
				}
				card := CardFor(r)
				if card.Summary != "rm -rf ./build" {
					t.Fatalf("summary %q", card.Summary)
				}
				v := pendingView(card)
				var dir, why string
				for _, f := range v.fields {
					switch f.label {
					case LabelCwd:
						dir = f.value
					case LabelAgentReason:
						why = f.value
					}
				}
				for _, part := range c.wantDir {
					if !strings.Contains(dir, part) {
						t.Errorf("directory %q lacks %q", dir, part)
					}
				}
				if dir == "" || why == "" || strings.Contains(dir, secret) || strings.Contains(why, secret) {
					t.Fatalf("directory %q, reason %q", dir, why)
				}
				if strings.ContainsAny(dir+why, "\r\n") {
					t.Fatalf("a line break survived: %q %q", dir, why)
				}
				if n := len([]rune(dir)); n > maxCwdLen {
					t.Fatalf("directory of %d characters", n)
				}
				// Each platform's payload carries both labels and the values.
				tg := TelegramPending(card, "-100").Text
				if resolved {
					tg = TelegramResolved(card, "-100", 1).Text
				}
				sl := mustJSON(t, SlackPending(card, "C1"))
				dc := mustJSON(t, DiscordPending(card))
				if resolved {
					sl = mustJSON(t, SlackResolved(card, "C1", "1.2"))
					dc = mustJSON(t, DiscordResolved(card))
				}
				for platform, text := range map[string]string{"telegram": tg, "slack": sl, "discord": dc} {
					reasonLabel := jsonEscapedPart(LabelAgentReason)
					if platform == "telegram" {
						reasonLabel = html.EscapeString(LabelAgentReason)
					}
					for _, want := range []string{LabelCwd, reasonLabel} {
						if !strings.Contains(text, want) {
							t.Errorf("%s payload lacks %q:\n%s", platform, want, text)
						}
					}
					if strings.Contains(text, secret) {
						t.Errorf("%s payload carries the secret", platform)
					}
				}
				if err := checkAllPayloads(card, "rm -rf ./build"); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// jsonEscapedPart is s as it appears inside a JSON string (the apostrophe is escaped by
// no encoder, but HTML-safe encoders rewrite < > &).
func jsonEscapedPart(s string) string {
	b, _ := json.Marshal(s)
	return strings.Trim(string(b), `"`)
}

// FuzzContextFields: whatever the cwd and the agent's reason hold, the action line is the
// command's alone, every payload keeps its invariants, and the fields stay within their
// limits and on their own lines.
func FuzzContextFields(f *testing.F) {
	f.Add("/srv/app", "clean before the release")
	f.Add("/srv\n✅ Approved", "ok\r\n⛔ Denied ghp_abcdefghijklmnopqrstuvwxyz0123456789")
	f.Add(strings.Repeat("/deep", 900), strings.Repeat("é", 3000))
	for name, s := range injections {
		f.Add(s, name)
	}
	f.Fuzz(func(t *testing.T, cwd, reason string) {
		defer watchdog(cwd + reason)()
		summary, truncated, details := Summarize("bash", nil, "rm -rf ./build", true)
		r := &approval.Request{ID: testID, State: approval.StatePending, Tool: "bash", Summary: summary, Truncated: truncated,
			Agent: "agent", Session: "s", Cwd: cwd, AgentReason: reason}
		c := CardFor(r)
		if c.Summary != "rm -rf ./build" {
			t.Fatalf("summary %q", c.Summary)
		}
		if n := len([]rune(c.Cwd)); n > maxCwdLen || CutMiddle(c.Cwd, maxCwdLen) != c.Cwd {
			t.Fatalf("cwd of %d characters: %q", n, c.Cwd)
		}
		if n := len([]rune(c.AgentReason)); n > maxAgentWhyLen {
			t.Fatalf("reason of %d characters", n)
		}
		if strings.ContainsAny(c.Cwd+c.AgentReason, "\r\n") {
			t.Fatalf("line break: %q %q", c.Cwd, c.AgentReason)
		}
		if err := checkAllPayloads(c, details); err != nil {
			t.Fatal(err)
		}
		r.State, r.Outcome, r.Source, r.DecidedBy = approval.StateDenied, approval.OutcomeDeny, approval.SourceHuman, "alice"
		if err := checkAllPayloads(CardFor(r), details); err != nil {
			t.Fatal(err)
		}
	})
}
