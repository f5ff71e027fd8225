package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/policy"
	"github.com/approvebot/approvebot/web"
)

func TestSignIn(t *testing.T) {
	r := newRig(t, policy.Config{})
	cases := []struct {
		name   string
		token  string
		status int
		says   string
	}{
		{"operator token", operatorToken, http.StatusSeeOther, ""},
		{"operator token with spaces around", "  " + operatorToken + "\n", http.StatusSeeOther, ""},
		{"agent token", agentToken, http.StatusForbidden, "The panel needs an operator token"},
		{"unknown token", "not-a-token-0123456789abcdef", http.StatusUnauthorized, "That token is not valid"},
		{"empty", "", http.StatusUnauthorized, "That token is not valid"},
		{"operator token with a prefix", "x" + operatorToken, http.StatusUnauthorized, "That token is not valid"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := r.browser()
			a := b.signIn(c.token)
			if a.status != c.status {
				t.Fatalf("status %d, want %d: %s", a.status, c.status, a.body)
			}
			var session *http.Cookie
			for _, ck := range (&http.Response{Header: a.header}).Cookies() {
				if ck.Name == "approvebot_session" && ck.Value != "" {
					session = ck
				}
			}
			if c.status != http.StatusSeeOther {
				wantIn(t, a.body, c.says, `<label for="token">Operator token</label>`)
				if session != nil {
					t.Fatal("a refused sign-in set a session cookie")
				}
				if c.token != "" && strings.Contains(a.body, strings.TrimSpace(c.token)) {
					t.Fatal("the refused token is shown back")
				}
				return
			}
			if session == nil || !session.HttpOnly || session.SameSite != http.SameSiteStrictMode || session.Path != "/ui/" ||
				session.MaxAge != int(12*60*60) || session.Secure {
				t.Fatalf("session cookie %+v", session)
			}
			if loc := a.header.Get("Location"); loc != "/ui/" {
				t.Fatalf("redirect to %q", loc)
			}
			page := b.get("/ui/")
			wantIn(t, page.body, "Signed in as <strong>operator</strong>", ">Sign out</button>", "Nothing is waiting")
		})
	}
}

func TestSignInOverHTTPSProxyMarksCookiesSecure(t *testing.T) {
	r := newRig(t, policy.Config{})
	b := r.browser()
	b.get("/ui/")
	a := b.post("/ui/signin", url.Values{"csrf": {b.csrf}, "token": {operatorToken}}, "X-Forwarded-Proto", "https")
	if a.status != http.StatusSeeOther {
		t.Fatalf("%d %s", a.status, a.body)
	}
	for _, ck := range (&http.Response{Header: a.header}).Cookies() {
		if !ck.Secure {
			t.Fatalf("cookie %s not Secure behind an HTTPS proxy", ck.Name)
		}
	}
}

func TestSignInFormNeedsItsCSRFToken(t *testing.T) {
	r := newRig(t, policy.Config{})
	cases := []struct {
		name string
		form url.Values
		hdr  []string
	}{
		{"no token", url.Values{"token": {operatorToken}}, nil},
		{"another token", url.Values{"token": {operatorToken}, "csrf": {"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}}, nil},
		{"cross-site", nil, []string{"Sec-Fetch-Site", "cross-site"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := r.browser()
			b.get("/ui/")
			form := c.form
			if form == nil {
				form = url.Values{"token": {operatorToken}, "csrf": {b.csrf}}
			}
			a := b.post("/ui/signin", form, c.hdr...)
			if a.status != http.StatusForbidden {
				t.Fatalf("status %d: %s", a.status, a.body)
			}
			if b.get("/ui/history").status != http.StatusSeeOther {
				t.Fatal("signed in without a valid form")
			}
		})
	}
}

func TestFailedSignInsAreSlowedDown(t *testing.T) {
	clk := &clock{t: time.Now()}
	r := newRigWith(t, policy.Config{}, func(o *web.Options) { o.Now = clk.now })
	b := r.browser()
	for i := range 10 {
		if a := b.signIn("wrong-token-0123456789abcdef"); a.status != http.StatusUnauthorized {
			t.Fatalf("attempt %d: %d", i, a.status)
		}
	}
	a := b.signIn(operatorToken)
	if a.status != http.StatusTooManyRequests || !strings.Contains(a.body, "Too many failed sign-ins") {
		t.Fatalf("11th attempt: %d %s", a.status, a.body)
	}
	// One more try every 6 s.
	clk.add(6 * time.Second)
	if a := b.signIn(operatorToken); a.status != http.StatusSeeOther {
		t.Fatalf("after 6 s: %d", a.status)
	}
}

func TestSignInExpires(t *testing.T) {
	clk := &clock{t: time.Now()}
	r := newRigWith(t, policy.Config{}, func(o *web.Options) { o.Now = clk.now; o.SessionTTL = time.Hour })
	b := r.browser()
	a := b.signIn(operatorToken)
	for _, ck := range (&http.Response{Header: a.header}).Cookies() {
		if ck.Name == "approvebot_session" && ck.MaxAge != 3600 {
			t.Fatalf("cookie lives %d s, want 3600", ck.MaxAge)
		}
	}
	clk.add(59 * time.Minute)
	if a := b.get("/ui/history"); a.status != http.StatusOK {
		t.Fatalf("before expiry: %d", a.status)
	}
	clk.add(time.Minute)
	if a := b.get("/ui/history"); a.status != http.StatusSeeOther {
		t.Fatalf("after expiry: %d", a.status)
	}
	if a := b.post("/ui/signout", url.Values{"csrf": {b.csrf}}); a.status != http.StatusForbidden {
		t.Fatalf("a form of an expired sign-in: %d", a.status)
	}
}

func TestEveryPageNeedsASignIn(t *testing.T) {
	r := newRig(t, policy.Config{})
	rec := r.askCmd("s", "make deploy")
	b := r.browser()
	for _, p := range []string{"/ui/history", "/ui/grants", "/ui/allowlist", "/ui/sessions", "/ui/ledger", "/ui/requests/" + rec.ID} {
		a := b.get(p)
		if a.status != http.StatusSeeOther || a.header.Get("Location") != "/ui/?next="+url.QueryEscape(p) {
			t.Errorf("GET %s signed out: %d %q", p, a.status, a.header.Get("Location"))
		}
		if strings.Contains(a.body, "make deploy") {
			t.Errorf("GET %s signed out shows the request", p)
		}
	}
	if a := b.get("/ui/"); a.status != 200 || strings.Contains(a.body, "make deploy") || !strings.Contains(a.body, "Operator token") {
		t.Errorf("signed-out /ui/: %d %s", a.status, a.body)
	}
	if a := b.get("/ui/events"); a.status != http.StatusUnauthorized {
		t.Errorf("signed-out events: %d", a.status)
	}
	// After signing in, the form brings the browser back where it wanted to go.
	b.get("/ui/?next=" + url.QueryEscape("/ui/requests/"+rec.ID))
	a := b.post("/ui/signin", url.Values{"csrf": {b.csrf}, "token": {operatorToken}, "next": {"/ui/requests/" + rec.ID}})
	if a.header.Get("Location") != "/ui/requests/"+rec.ID {
		t.Fatalf("after sign-in: %q", a.header.Get("Location"))
	}
}

func TestSignOutEndsTheSession(t *testing.T) {
	r := newRig(t, policy.Config{})
	b := r.browser()
	b.mustSignIn()
	old := b.csrf
	if a := b.post("/ui/signout", url.Values{}); a.status != http.StatusForbidden {
		t.Fatalf("sign-out without its token: %d", a.status)
	}
	a := b.post("/ui/signout", url.Values{"csrf": {old}})
	if a.status != http.StatusSeeOther {
		t.Fatalf("sign-out: %d", a.status)
	}
	if a := b.get("/ui/history"); a.status != http.StatusSeeOther {
		t.Fatalf("still signed in after sign-out: %d", a.status)
	}
}

func TestStateChangingFormsNeedTheirCSRFToken(t *testing.T) {
	r := newRig(t, policy.Config{AllowAlways: "persist"})
	rec := r.askCmd("s", "touch /tmp/approvebot-panel-x")
	b := r.browser()
	b.mustSignIn()
	good := b.csrf
	other := r.browser()
	other.mustSignIn() // another operator's valid token is not this one's
	forms := []struct {
		path string
		form url.Values
	}{
		{"/ui/requests/" + rec.ID + "/decision", url.Values{"outcome": {"allow_once"}}},
		{"/ui/requests/" + rec.ID + "/decision", url.Values{"outcome": {"deny"}, "reason": {"x"}}},
		{"/ui/allowlist/revoke", url.Values{"pattern": {"/usr/bin/touch"}}},
		{"/ui/sessions/unpause", url.Values{"session": {"s"}}},
		{"/ui/signout", url.Values{}},
	}
	bad := []struct {
		name string
		csrf string
		hdr  []string
	}{
		{"missing", "", nil},
		{"wrong", strings.Repeat("A", len(good)), nil},
		{"another sign-in's", other.csrf, nil},
		{"cut short", good[:len(good)-1], nil},
		{"right token, another site", good, []string{"Sec-Fetch-Site", "cross-site", "Origin", "https://evil.example"}},
		{"right token, another origin", good, []string{"Sec-Fetch-Site", "", "Origin", "https://evil.example"}},
	}
	for _, f := range forms {
		for _, c := range bad {
			t.Run(f.path+"/"+c.name, func(t *testing.T) {
				form := url.Values{}
				for k, v := range f.form {
					form[k] = v
				}
				if c.csrf != "" {
					form.Set("csrf", c.csrf)
				}
				a := b.post(f.path, form, c.hdr...)
				if a.status != http.StatusForbidden {
					t.Fatalf("status %d: %s", a.status, a.body)
				}
			})
		}
	}
	if got := r.get(rec.ID); got.State != approval.StatePending {
		t.Fatalf("a refused form decided the request: %+v", got)
	}
	if a := b.get("/ui/history"); a.status != http.StatusOK {
		t.Fatalf("a refused sign-out signed out: %d", a.status)
	}
	// Without a sign-in at all, the same forms are refused too.
	anon := r.browser()
	if a := anon.post("/ui/requests/"+rec.ID+"/decision", url.Values{"outcome": {"allow_once"}, "csrf": {good}}); a.status != http.StatusForbidden {
		t.Fatalf("signed-out decision: %d", a.status)
	}
	if got := r.get(rec.ID); got.State != approval.StatePending {
		t.Fatalf("a signed-out form decided the request: %+v", got)
	}
}

func TestPendingShowsWhatTheCardShows(t *testing.T) {
	r := newRig(t, policy.Config{})
	older := r.askCmd("s1", "make build")
	rec := r.ask("s2", map[string]any{"command": "rm -rf ./build"}, "clean before the release")
	waitUntil(t, "the card posted", func() bool { return len(r.get(rec.ID).Cards) == 1 })
	b := r.browser()
	b.mustSignIn()
	a := b.get("/ui/")
	body := text(a.body)
	wantIn(t, body, `<span class="card-ref">telegram <code>-100</code></span>`, "Approval needed", "<code>bash</code>", "<code>rm -rf ./build</code>", "<code>agent</code>", "<code>s2</code>",
		"<code>/srv/app</code>", "clean before the release", "<dt>Rule that asked</dt>", "left</time>",
		">Allow once</button>", ">Allow for session</button>", ">Deny</button>", ">Reason</label>", `id="pending-count" aria-label="2 waiting">2<`)
	if strings.Contains(body, ">Allow always</button>") {
		t.Fatal("Allow always shown while allow_always is not persist")
	}
	if i, j := strings.Index(body, rec.ID), strings.Index(body, older.ID); i < 0 || j < 0 || i > j {
		t.Fatalf("not newest first (%d, %d)", i, j)
	}
	if !strings.Contains(body, `data-events="/ui/events?after=`) {
		t.Fatal("no live updates wired")
	}
}

// The panel says why approvebot asks, as every card does: the sensitive path the command
// touches, on the pending list and the request's page, and "asked" once it is decided.
func TestPanelSaysWhyApprovebotAsks(t *testing.T) {
	r := newRig(t, policy.Config{})
	rec := r.askCmd("s", "cat /home/alice/.ssh/id_rsa")
	const why = "touches the sensitive path /home/alice/.ssh/id_rsa (~/.ssh)"
	if rec.AskReason != why {
		t.Fatalf("ask reason %q", rec.AskReason)
	}
	waitUntil(t, "the card posted", func() bool { return len(r.get(rec.ID).Cards) == 1 })
	b := r.browser()
	b.mustSignIn()
	line := "<dt>Why approvebot asks</dt><dd>" + why + "</dd>"
	wantIn(t, text(b.get("/ui/").body), line, "<code>cat /home/alice/.ssh/id_rsa</code>", "<dt>Rule that asked</dt><dd><code>exec.sensitive</code></dd>")
	wantIn(t, text(b.get("/ui/requests/"+rec.ID).body), line)
	if a := b.decide(rec.ID, "deny", "no"); a.status != http.StatusSeeOther {
		t.Fatalf("deny: %d", a.status)
	}
	wantIn(t, text(b.get("/ui/requests/"+rec.ID).body), "<dt>Why approvebot asked</dt><dd>"+why+"</dd>")
	// Every ask says why, a miss of the allowlist too.
	r2 := r.askCmd("s2", "make build")
	wantIn(t, text(b.get("/ui/requests/"+r2.ID).body), "<dt>Why approvebot asks</dt><dd>not allowlisted: make")
}

func TestDecisionsInThePanelGoThroughTheGate(t *testing.T) {
	r := newRig(t, policy.Config{})
	rec := r.askCmd("s", "rm -rf ./build")
	waitUntil(t, "the card posted", func() bool { return len(r.get(rec.ID).Cards) == 1 })
	b := r.browser()
	b.mustSignIn()

	a := b.decide(rec.ID, "deny", "wrong directory, use /tmp")
	if a.status != http.StatusSeeOther || a.header.Get("Location") != "/ui/" {
		t.Fatalf("deny: %d %q", a.status, a.header.Get("Location"))
	}
	got := r.get(rec.ID)
	if got.State != approval.StateDenied || got.Outcome != approval.OutcomeDeny || got.Source != approval.SourceHuman ||
		got.DecidedBy != "operator" || got.Reason != "wrong directory, use /tmp" ||
		!strings.Contains(got.Message, `The user said: "wrong directory, use /tmp"`) {
		t.Fatalf("after the panel's deny: %+v", got)
	}
	waitUntil(t, "the chat card edited", func() bool { return len(r.chat.edited()) == 1 })
	if c := r.chat.edited()[0]; c.Resolution == nil || c.Resolution.DecidedBy != "operator" || c.Resolution.Reason != "wrong directory, use /tmp" {
		t.Fatalf("edited card: %+v", c.Resolution)
	}
	page := text(b.follow(a).body)
	wantIn(t, page, `Denied: rm -rf ./build (reason: "wrong directory, use /tmp")`)
	trail, _ := r.st.Audit(context.Background(), approval.AuditQuery{RequestID: rec.ID})
	if last := trail.Entries[len(trail.Entries)-1]; last.Channel != "web" || last.DecidedBy != "operator" {
		t.Fatalf("audit of the decision: %+v", last)
	}

	// A second decision, from another operator, loses and says who won and when.
	bob := r.browser()
	if a := bob.signIn(otherOpToken); a.status != http.StatusSeeOther {
		t.Fatal(a.status)
	}
	bob.get("/ui/")
	page = text(bob.follow(bob.decide(rec.ID, "allow_once", "")).body)
	wantIn(t, page, "Already decided (deny) by operator at "+got.DecidedAt.UTC().Format("2006-01-02T15:04:05Z"))
	if again := r.get(rec.ID); again.Outcome != approval.OutcomeDeny || again.DecidedBy != "operator" {
		t.Fatalf("the loser changed the decision: %+v", again)
	}
}

func TestEveryOutcomeFromThePanel(t *testing.T) {
	cases := []struct {
		name, outcome string
		cfg           policy.Config
		cmd           string
		want          approval.Outcome
		says          string
	}{
		{"allow once", "allow_once", policy.Config{}, "make deploy", approval.OutcomeAllowOnce, "Allowed once: make deploy"},
		{"allow for session", "allow_session", policy.Config{}, "make deploy", approval.OutcomeAllowSession, "Allowed for this session: make deploy"},
		{"allow always, clamped", "allow_always", policy.Config{}, "make deploy", approval.OutcomeAllowSession, "Allowed for this session"},
		{"allow always, persisted", "allow_always", policy.Config{AllowAlways: "persist"}, "touch /tmp/approvebot-panel-y", approval.OutcomeAllowAlways, "Allowed always"},
		{"deny without a reason", "deny", policy.Config{}, "make deploy", approval.OutcomeDeny, "Denied: make deploy"},
		{"unknown outcome", "allow_forever", policy.Config{}, "make deploy", approval.OutcomeNone, "Choose Allow once"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, c.cfg)
			rec := r.askCmd("s", c.cmd)
			b := r.browser()
			b.mustSignIn()
			if c.cfg.AllowAlways == "persist" {
				wantIn(t, b.get("/ui/").body, ">Allow always</button>")
			}
			page := text(b.follow(b.decide(rec.ID, c.outcome, "")).body)
			wantIn(t, page, c.says)
			if got := r.get(rec.ID); got.Outcome != c.want {
				t.Fatalf("outcome %q, want %q", got.Outcome, c.want)
			}
		})
	}
}

func TestNobodyDecidesTheirOwnRequest(t *testing.T) {
	r := newRig(t, policy.Config{})
	rec, err := r.g.Submit(context.Background(), askOf("s", "make deploy"), callerOperator)
	if err != nil {
		t.Fatal(err)
	}
	b := r.browser()
	b.mustSignIn()
	wantIn(t, b.get("/ui/").body, "another operator must decide it")
	page := text(b.follow(b.decide(rec.ID, "allow_once", "")).body)
	wantIn(t, page, "You made this request with the same token")
	if got := r.get(rec.ID); got.State != approval.StatePending {
		t.Fatalf("own request decided: %+v", got)
	}
}

func TestRequestPageAndItsTrail(t *testing.T) {
	r := newRig(t, policy.Config{})
	rec := r.askCmd("s", "make deploy")
	b := r.browser()
	b.mustSignIn()
	wantIn(t, b.get("/ui/requests/"+rec.ID).body, "Approval needed", ">Allow once</button>", "Audit trail of this request", ">request<")
	a := b.post("/ui/requests/"+rec.ID+"/decision", url.Values{"csrf": {b.csrf}, "outcome": {"allow_once"}, "return": {"request"}})
	if loc := a.header.Get("Location"); loc != "/ui/requests/"+rec.ID {
		t.Fatalf("back to %q", loc)
	}
	page := text(b.follow(a).body)
	wantIn(t, page, "Allowed once", "<dt>By</dt><dd>operator</dd>", "badge-allow_once", "<td>web</td>")
	if strings.Contains(page, ">Allow once</button>") {
		t.Fatal("a decided request still has buttons")
	}
	for _, p := range []string{"/ui/requests/aaaaaaaaaaaaaaaaaaaaaaaaaa", "/ui/requests/..%2f..%2fetc", "/ui/requests/<x>", "/ui/nope"} {
		if a := b.get(p); a.status != http.StatusNotFound {
			t.Errorf("GET %s: %d", p, a.status)
		}
	}
}

func TestSecurityHeaders(t *testing.T) {
	r := newRig(t, policy.Config{})
	b := r.browser()
	a := b.get("/ui/")
	for k, want := range map[string]string{
		"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
		"X-Frame-Options":         "DENY",
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         "no-referrer",
		"Cache-Control":           "no-store",
	} {
		if got := a.header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	for _, asset := range []string{"/ui/static/panel.css", "/ui/static/panel.js"} {
		if a := b.get(asset); a.status != 200 || len(a.body) < 500 {
			t.Errorf("GET %s: %d (%d bytes)", asset, a.status, len(a.body))
		}
	}
}

func TestSafeNext(t *testing.T) {
	r := newRig(t, policy.Config{})
	cases := map[string]string{
		"/ui/history?session=s":        "/ui/history?session=s",
		"/ui/requests/abc":             "/ui/requests/abc",
		"https://evil.example/ui/":     "/ui/",
		"//evil.example/ui/":           "/ui/",
		"/\\evil.example":              "/ui/",
		"/ui/../v1/audit":              "/ui/",
		"/v1/requests":                 "/ui/",
		"javascript:alert(1)":          "/ui/",
		"/ui/signout":                  "/ui/",
		"":                             "/ui/",
		"/ui/history?x=\"><script>":    "/ui/history?x=%22%3E%3Cscript%3E",
		"http://127.0.0.1/ui/history/": "/ui/",
	}
	for next, want := range cases {
		t.Run(next, func(t *testing.T) {
			b := r.browser()
			b.get("/ui/")
			a := b.post("/ui/signin", url.Values{"csrf": {b.csrf}, "token": {operatorToken}, "next": {next}})
			if got := a.header.Get("Location"); got != want {
				t.Fatalf("next %q → %q, want %q", next, got, want)
			}
		})
	}
}

func TestPendingPageShowsTheNewestAndCountsTheRest(t *testing.T) {
	r := newRig(t, policy.Config{})
	var last approval.Request
	for i := range 203 {
		last = r.askCmd(fmt.Sprint("s", i%4), fmt.Sprint("make step-", i))
	}
	b := r.browser()
	b.mustSignIn()
	body := b.get("/ui/").body
	if n := strings.Count(body, `<article class="req req-pending"`); n != 200 {
		t.Fatalf("%d requests shown, want the newest 200", n)
	}
	wantIn(t, body, `aria-label="203 waiting">203<`, "3 older waiting requests are not shown here", "make step-202")
	if strings.Contains(body, "make step-2<") || !strings.Contains(body, last.ID) {
		t.Fatal("not the newest shown")
	}
}
