package web_test

import (
	"context"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/policy"
)

// Markup the page itself never writes inside a request: if any of it shows up, agent text
// became markup.
var injected = regexp.MustCompile(`(?i)<(script|img|svg|iframe|a |style|form|input[^>]*hidden[^>]*evil|object|embed|link|meta)[^>]*(evil|pwned|onerror|onload|javascript)`)

var filterForm = regexp.MustCompile(`(?s)<form method="get" action="/ui/history" class="filters"[^>]*>.*?</form>`)

func TestHostileTextRendersInert(t *testing.T) {
	huge := strings.Repeat("A<b>x</b>&amp;", 200000) // ~2.8 MB
	cases := []struct {
		name string
		ask  gate.Ask
		// shown must appear (as text); never must not appear raw in the page.
		shown []string
		never []string
	}{
		{"markup in the command", gate.Ask{Tool: "bash", Session: "s", Args: map[string]any{"command": `echo "<script>window.pwned=1</script><img src=x onerror=alert(1)>"`}},
			[]string{"&lt;script&gt;window.pwned=1&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"}, []string{"<script>window.pwned", "<img src=x"}},
		{"markup in every field", gate.Ask{Tool: "deploy", Session: `s"><svg onload=alert(1)>`, Cwd: `/srv/<iframe src=javascript:alert(1)>`,
			Reason: `<a href="https://evil.example">click</a>`, Args: map[string]any{"target": `"><a href=javascript:pwned()>x</a>`}},
			[]string{"&lt;a href=&#34;https://evil.example&#34;&gt;click&lt;/a&gt;", "&lt;iframe"}, []string{`<a href="https://evil.example"`, "<svg onload", "<iframe src"}},
		{"bidi and invisible characters", gate.Ask{Tool: "bash", Session: "s\u202e", Reason: "safe\u2066 \u200bthing", Args: map[string]any{"command": "echo \u202eexe.txt\u202c; ls\u2067"}},
			[]string{"[U+202E]exe.txt[U+202C]", "[U+2067]", "s[U+202E]", "safe[U+2066] [U+200B]thing"}, []string{"\u202e", "\u2066", "\u2067", "\u200b", "\u202c"}},
		{"fake second line", gate.Ask{Tool: "bash", Session: "s", Cwd: "/srv\n✅ Approved", Reason: "ok\r\n✅ Approved by security", Args: map[string]any{"command": "ls\n✅ Approved by security\r\nrm -rf /srv"}},
			[]string{"ls; ✅ Approved by security; rm -rf /srv", "/srv⏎✅ Approved", "ok⏎✅ Approved by security"}, []string{"ls\n", "srv\n", "ok\r"}},
		{"terminal escapes", gate.Ask{Tool: "bash", Session: "s", Args: map[string]any{"command": "echo \x1b[2J\x1b[31mok\x07"}},
			[]string{"␛[2J␛[31mok␇"}, []string{"\x1b", "\x07"}},
		{"a huge action", gate.Ask{Tool: "write_file", Session: "s", Args: map[string]any{"path": "/tmp/x", "content": huge}},
			[]string{"Cut at 200 characters", "<summary>Details</summary>", "[cut: the action is"}, []string{"<b>x</b>"}},
		{"a secret", gate.Ask{Tool: "bash", Session: "s", Args: map[string]any{"command": "curl -H 'Authorization: Bearer ghp_0123456789abcdefghijklmnopqrstuvwxyzAB' https://api.github.com"}},
			[]string{"[masked]"}, []string{"ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, policy.Config{Default: "ask"})
			rec, err := r.g.Submit(context.Background(), c.ask, gate.Caller{Name: "agent"})
			if err != nil || rec.State != approval.StatePending {
				t.Fatalf("%+v %v", rec, err)
			}
			b := r.browser()
			b.mustSignIn()
			es := b.stream("?after=0")
			streamed := es.until("the request", requestEvent(rec.ID, "pending")).data
			pages := map[string]string{
				"pending":  b.get("/ui/").body,
				"request":  b.get("/ui/requests/" + rec.ID).body,
				"streamed": streamed,
			}
			// Decided with a hostile reason too, then in the history.
			b.decide(rec.ID, "deny", `</code><script>window.pwned=1</script>`+"\u202e")
			// The filter form holds exactly what was typed into it (here: the hostile session
			// name); the rest of the page must show it hardened like everywhere else.
			history := b.get("/ui/history?" + url.Values{"session": {c.ask.Session}}.Encode()).body
			pages["history"] = filterForm.ReplaceAllString(history, "")
			pages["ledger"] = b.get("/ui/ledger").body
			pages["decided"] = b.get("/ui/requests/" + rec.ID).body
			for name, body := range pages {
				if m := injected.FindString(body); m != "" {
					t.Errorf("%s page: agent text became markup: %q", name, m)
				}
				for _, n := range c.never {
					if strings.Contains(body, n) {
						t.Errorf("%s page contains %q", name, n)
					}
				}
				if strings.Contains(body, "<script>window.pwned") || strings.Count(body, "<script") > 1 {
					t.Errorf("%s page: a script element besides the panel's own", name)
				}
				if len(body) > 200<<10 {
					t.Errorf("%s page is %d bytes", name, len(body))
				}
			}
			for _, name := range []string{"pending", "request", "streamed"} {
				for _, s := range c.shown {
					if !strings.Contains(pages[name], s) && !strings.Contains(text(pages[name]), s) {
						t.Errorf("%s page lacks %q", name, s)
					}
				}
			}
			if !strings.Contains(text(pages["decided"]), "</code><script>window.pwned=1</script>[U+202E]") {
				t.Errorf("the hostile reason is not shown as text")
			}
			if t.Failed() {
				t.Logf("request page:\n%s", pages["request"])
			}
		})
	}
}

func TestNoPageEverShowsAToken(t *testing.T) {
	r := newRig(t, policy.Config{AllowAlways: "persist"})
	rec := r.askCmd("s", "touch /tmp/approvebot-panel-z")
	b := r.browser()
	b.mustSignIn()
	b.decide(rec.ID, "allow_always", "")
	r.askCmd("s", "make deploy")
	for _, p := range []string{"/ui/", "/ui/history", "/ui/grants", "/ui/allowlist", "/ui/sessions", "/ui/ledger", "/ui/requests/" + rec.ID, "/ui/nope"} {
		a := b.get(p)
		for _, tok := range []string{operatorToken, agentToken, otherOpToken} {
			if strings.Contains(a.body, tok) || strings.Contains(a.header.Get("Set-Cookie"), tok) {
				t.Errorf("%s shows a token", p)
			}
		}
	}
}
