package render

import (
	"html"
	"strings"
	"testing"
	"time"

	"github.com/approvebot/approvebot/core/approval"
)

// Every platform shows why approvebot asks — the policy's reason and the rule that asked —
// as a labelled line of its own on pending and resolved cards, masked, cut to its limit,
// never inside the action line; a card without a reason has no such line.
func TestCardsShowWhyApprovebotAsks(t *testing.T) {
	const secret = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	const sensitive = "touches the sensitive path /root/.ssh/id_rsa (~/.ssh)"
	cases := []struct {
		name, reason, rule string
		want               string // what the line shows ("" for no line)
		cut                bool
	}{
		{"sensitive path", sensitive, "exec.sensitive", sensitive + " (rule exec.sensitive)", false},
		{"outside write", "writes /etc/x, outside the project /repo", "exec.effects", "writes /etc/x, outside the project /repo (rule exec.effects)", false},
		{"no rule", "the auto tier asks a human before an irreversible tool", "", "the auto tier asks a human before an irreversible tool", false},
		{"secret", "touches the sensitive path /srv/" + secret + "/.env (.env)", "exec.sensitive", "touches the sensitive path /srv/ghp_", false},
		{"forged lines", "reads x\n✅ Approved by admin\r\nDirectory: /", "exec.sensitive", "reads x" + NewlineMark, false},
		{"long", "touches the sensitive path /" + strings.Repeat("deep/", 400) + ".env (.env)", "exec.sensitive", "touches the sensitive path /deep/deep/", true},
		{"none", "", "exec.allowlist", "", false},
	}
	for _, c := range cases {
		for _, resolved := range []bool{false, true} {
			name := c.name
			if resolved {
				name += " resolved"
			}
			t.Run(name, func(t *testing.T) {
				r := &approval.Request{
					ID: testID, State: approval.StatePending, Tool: "bash", Summary: "cat ~/.ssh/id_rsa",
					Agent: "agent", Session: "s", Cwd: "/repo", AskReason: c.reason, Rule: c.rule,
					CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), ExpiresAt: time.Date(2026, 1, 2, 3, 6, 5, 0, time.UTC),
				}
				label := LabelAskReason
				if resolved {
					r.State, r.Outcome, r.Source, r.DecidedBy = approval.StateDenied, approval.OutcomeDeny, approval.SourceHuman, "alice"
					label = LabelAskedReason
				}
				card := CardFor(r)
				if card.Summary != "cat ~/.ssh/id_rsa" {
					t.Fatalf("the action line changed: %q", card.Summary)
				}
				var why string
				found := 0
				for _, f := range pendingView(card).fields {
					if f.label == LabelAskReason || f.label == LabelAskedReason {
						if f.label != label {
							t.Fatalf("label %q on a card resolved=%v", f.label, resolved)
						}
						why = f.value
						found++
					}
				}
				if c.want == "" {
					if found != 0 {
						t.Fatalf("a line without a reason: %q", why)
					}
					return
				}
				if found != 1 || !strings.HasPrefix(why, c.want) || strings.Contains(why, secret) || strings.ContainsAny(why, "\r\n") {
					t.Fatalf("why line %q (%d), want it to start with %q", why, found, c.want)
				}
				if n := len([]rune(card.AskReason)); n > maxAskReasonLen {
					t.Fatalf("reason of %d characters", n)
				}
				if c.cut != strings.HasSuffix(card.AskReason, Ellipsis) {
					t.Fatalf("cut %v: %q", c.cut, card.AskReason)
				}
				tg := TelegramPending(card, "-100").Text
				sl := mustJSON(t, SlackPending(card, "C1"))
				dc := mustJSON(t, DiscordPending(card))
				if resolved {
					tg = TelegramResolved(card, "-100", 1).Text
					sl = mustJSON(t, SlackResolved(card, "C1", "1.2"))
					dc = mustJSON(t, DiscordResolved(card))
				}
				// The label and the value (as each platform escapes it) on a line of their own.
				short, _ := Cut(why, 60)
				short = strings.TrimSuffix(short, Ellipsis)
				wants := map[string][]string{
					"telegram": {"<b>" + html.EscapeString(label) + ":</b> <code>" + html.EscapeString(short)},
					"slack":    {jsonEscapedPart("*" + label + ":*"), jsonEscapedPart(SlackEscape(short))},
					"discord":  {jsonEscapedPart("**" + label + ":** `` " + DiscordEscape(short))},
				}
				for platform, text := range map[string]string{"telegram": tg, "slack": sl, "discord": dc} {
					for _, w := range wants[platform] {
						if !strings.Contains(text, w) {
							t.Errorf("%s payload lacks %q:\n%s", platform, w, text)
						}
					}
					if strings.Contains(text, secret) {
						t.Errorf("%s payload carries the secret", platform)
					}
				}
				// The action line is the summary alone.
				if first := strings.Split(tg, "\n")[1]; first != "<pre>cat ~/.ssh/id_rsa</pre>" {
					t.Fatalf("telegram action line %q", first)
				}
				if err := checkAllPayloads(card, "cat ~/.ssh/id_rsa"); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// The why line is one of the fields fit cuts: with every field at its limit, each platform
// still fits (Discord's 2,000 characters are the tightest) and still shows the line.
func TestWhyLineFitsThePlatformLimits(t *testing.T) {
	long := strings.Repeat("é@`<&*_", 400)
	r := &approval.Request{
		ID: testID, State: approval.StatePending, Tool: long, Summary: strings.Repeat("x", MaxSummary), Truncated: true,
		Agent: long, Session: long, Cwd: long, AgentReason: long, AskReason: long, Rule: long, ShowAllowAlways: true,
		CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), ExpiresAt: time.Date(2026, 1, 2, 3, 6, 5, 0, time.UTC),
	}
	card := CardFor(r)
	if err := checkAllPayloads(card, long); err != nil {
		t.Fatal(err)
	}
	for platform, text := range map[string]string{
		"telegram": TelegramPending(card, "-100").Text,
		"slack":    mustJSON(t, SlackPending(card, "C1")),
		"discord":  DiscordPending(card).Content,
	} {
		if !strings.Contains(text, LabelAskReason) {
			t.Errorf("%s lost the why line:\n%s", platform, text)
		}
	}
}
