package web_test

// Browser tests: the real approvebot binary (internal/testserver), a fake Telegram on
// 127.0.0.1, and headless Chromium driven by chromedp the way an operator uses the panel.
// They run only with APPROVEBOT_INTEGRATION=1 (they need /usr/bin/chromium, or the browser
// named by APPROVEBOT_CHROMIUM).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/approvebot/approvebot/channels/telegram/telegramtest"
	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/internal/testserver"
	"github.com/approvebot/approvebot/store"
)

const (
	brTGToken = "5550002:AApanel-browser-secret-token_0123456789"
	brChat    = int64(-1009)
)

var brAlice = telegramtest.User{ID: 111, FirstName: "Alice"}

func needBrowser(t *testing.T) string {
	t.Helper()
	if os.Getenv("APPROVEBOT_INTEGRATION") != "1" {
		t.Skip("browser test: set APPROVEBOT_INTEGRATION=1 to drive the panel in headless Chromium (/usr/bin/chromium)")
	}
	bin := os.Getenv("APPROVEBOT_CHROMIUM")
	if bin == "" {
		bin = "/usr/bin/chromium"
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("APPROVEBOT_INTEGRATION=1 but there is no Chromium at %s (apt-get install chromium, or set APPROVEBOT_CHROMIUM): %v", bin, err)
	}
	return bin
}

// chrome starts a fresh headless Chromium (its own profile, nothing from the network) and
// returns a tab's context and a count of the JavaScript dialogs (alert, confirm) that
// opened: the panel opens none, so one means agent text ran as script.
func chrome(t *testing.T, bin string) (context.Context, *atomic.Int32) {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.NoSandbox, // CI runs as root
		chromedp.Headless,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	dialogs := &atomic.Int32{}
	opened := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for _, err := range opened {
			if err != nil {
				return
			}
			dialogs.Add(1)
			// A dialog blocks the page; dismiss it so the test can report it.
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	return ctx, dialogs
}

// do runs browser steps with a deadline, failing the test with what was being done and
// the page's text.
func do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	get(t, ctx, what, chromedp.Steps(steps...))
}

// get runs one browser action and returns its value.
func get[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	tctx, cancel := context.WithTimeout(ctx, 45*time.Second)
	defer cancel()
	v, err := chromedp.Run(tctx, a)
	if err != nil {
		text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
		t.Fatalf("%s: %v\npage text:\n%s", what, err, text)
	}
	return v
}

func evalJS[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	return get(t, ctx, "evaluating "+js, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
}

func scriptsOff(ctx context.Context, tg *chromedp.Target) error {
	_, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
	return err
}

// XPath helpers: find things the way a person does, by their visible label.
func xButton(scope, label string) string {
	return scope + fmt.Sprintf(`//button[normalize-space(.)=%q]`, label)
}

func xLabelled(scope, label string) string {
	return scope + fmt.Sprintf(`//*[@id=//label[normalize-space(.)=%q]/@for]`, label)
}

func xRequest(id string) string { return fmt.Sprintf(`//article[@id="req-%s"]`, id) }

type brRig struct {
	s    *testserver.Server
	fake *telegramtest.Server
}

// agentAsk files a request as the agent and waits for the decision in the background.
func (r *brRig) agentAsk(t *testing.T, body map[string]any) (id string, result <-chan map[string]any) {
	t.Helper()
	body["wait"] = "2s"
	code, m := r.s.JSON(t, "POST", "/v1/requests", testserver.AgentToken, body)
	if code != 202 || m["state"] != "pending" {
		t.Fatalf("want a pending request, got %d %v", code, m)
	}
	id = m["id"].(string)
	out := make(chan map[string]any, 1)
	go func() {
		req, _ := http.NewRequest("GET", r.s.URL+"/v1/requests/"+id+"?wait=90s", nil)
		req.Header.Set("Authorization", "Bearer "+testserver.AgentToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			out <- map[string]any{"error": err.Error()}
			return
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		out <- m
	}()
	return id, out
}

func waitResult(t *testing.T, ch <-chan map[string]any) map[string]any {
	t.Helper()
	select {
	case m := <-ch:
		return m
	case <-time.After(60 * time.Second):
		t.Fatal("the waiting agent got no answer")
	}
	return nil
}

// card waits for the Telegram card of request id.
func (r *brRig) card(t *testing.T, id string) telegramtest.Message {
	t.Helper()
	var card telegramtest.Message
	r.fake.WaitFor(t, 30*time.Second, "the card of "+id, func() bool {
		for _, m := range r.fake.BotMessages(brChat) {
			if strings.Contains(m.Plain, "Request: "+id) {
				card = m
				return true
			}
		}
		return false
	})
	return card
}

// seedHistory writes a day of decisions into the database before the server starts, so
// the chart has hours to show.
func seedHistory(t *testing.T, db string) {
	t.Helper()
	st, err := store.Open(db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	start := time.Now().UTC().Truncate(time.Hour).Add(-23 * time.Hour)
	agents := []string{"claude-code", "ci-deploy", "nightly-etl"}
	cmds := []string{"git push origin main", "terraform apply -auto-approve", "rm -rf ./dist", "kubectl rollout restart deploy/api", "make release"}
	for h := range 23 {
		n := 2 + (h*7)%9
		for i := range n {
			o := approval.OutcomeAllowOnce
			src := approval.SourcePolicy
			switch {
			case (h+i)%7 == 0:
				o, src = approval.OutcomeDeny, approval.SourceHuman
			case (h+i)%11 == 0:
				o, src = approval.OutcomeTimeout, approval.SourceTimeout
			case i%3 == 0:
				o, src = approval.OutcomeAllowSession, approval.SourceHuman
			}
			e := approval.AuditEntry{
				Time: start.Add(time.Duration(h)*time.Hour + time.Duration(i)*time.Minute), Event: approval.EventDecision,
				Session: fmt.Sprintf("seed-%d", h%4), Agent: agents[(h+i)%3], Tool: "bash", Outcome: o, Source: src,
				Summary: cmds[(h+i)%len(cmds)], DecidedBy: map[bool]string{true: "alice", false: "approvebot"}[src == approval.SourceHuman],
			}
			if err := st.AppendAudit(ctx, e); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// screenshotDir is where the screenshots go: docs/ with APPROVEBOT_SCREENSHOTS=1 (to
// refresh the README's), else the test's temporary directory.
func screenshotDir(t *testing.T) string {
	if os.Getenv("APPROVEBOT_SCREENSHOTS") == "1" {
		return filepath.Join("..", "docs")
	}
	return t.TempDir()
}

func TestPanelInABrowser(t *testing.T) {
	bin := needBrowser(t)
	fake := telegramtest.Start(t, telegramtest.Options{Token: brTGToken})
	fake.AddChat(telegramtest.Chat{ID: brChat, Type: "supergroup", Title: "on-call"})
	dir := t.TempDir()
	seedHistory(t, filepath.Join(dir, "approvebot.db"))
	s := testserver.Start(t, testserver.Options{
		Dir:    dir,
		Server: `approval_timeout = "300s"`,
		Config: fmt.Sprintf(`[policy]
allow_always = "persist"

[channels.telegram]
token_env = "TEST_TELEGRAM_TOKEN"
api_url = %q
chats = [%d]
approvers = [%d]
poll_timeout = "2s"
`, fake.URL, brChat, brAlice.ID),
		Env: []string{"TEST_TELEGRAM_TOKEN=" + brTGToken},
	})
	fake.WaitFor(t, 30*time.Second, "approvebot to poll Telegram", fake.Polling)
	r := &brRig{s: s, fake: fake}
	ctx, dialogs := chrome(t, bin)
	ui := s.URL + "/ui/"
	flashOK := `//p[contains(@class,"flash-ok")]`
	alert := `//p[@role="alert"]`

	t.Run("an agent token cannot sign in", func(t *testing.T) {
		do(t, ctx, "signing in with the agent token",
			chromedp.Navigate(ui),
			chromedp.SendKeys(xLabelled("", "Operator token"), testserver.AgentToken),
			chromedp.Click(xButton("", "Sign in")),
			chromedp.WaitVisible(alert),
		)
		if msg := get(t, ctx, "reading the refusal", chromedp.Text(alert)); !strings.Contains(msg, "needs an operator token") {
			t.Fatalf("refusal says %q", msg)
		}
		if body := evalJS[string](t, ctx, "document.documentElement.outerHTML"); strings.Contains(body, testserver.AgentToken) {
			t.Fatal("the page shows the token")
		}
	})

	t.Run("sign in", func(t *testing.T) {
		do(t, ctx, "signing in with the operator token",
			chromedp.Navigate(ui),
			chromedp.SendKeys(xLabelled("", "Operator token"), testserver.OperatorToken),
			chromedp.Click(xButton("", "Sign in")),
			chromedp.WaitVisible(xButton("", "Sign out")),
			chromedp.WaitVisible(chromedp.CSS("#pending-empty")),
		)
		if cookies := evalJS[string](t, ctx, "document.cookie"); strings.Contains(cookies, "approvebot_session") {
			t.Fatal("the session cookie is readable by script (not HttpOnly)")
		}
		if body := evalJS[string](t, ctx, "document.documentElement.outerHTML"); strings.Contains(body, testserver.OperatorToken) {
			t.Fatal("the page shows the token")
		}
	})

	var deniedID string
	t.Run("a request appears live and is denied with a reason", func(t *testing.T) {
		evalJS[int](t, ctx, `window.__sameDocument = 1`)
		id, result := r.agentAsk(t, map[string]any{"tool": "bash", "args": map[string]any{"command": "rm -rf ./build"},
			"session": "browser-deny", "cwd": "/srv/app", "reason": "clean before the release"})
		deniedID = id
		req := xRequest(id)
		do(t, ctx, "waiting for the request to appear", chromedp.WaitVisible(req))
		shown := get(t, ctx, "reading the request", chromedp.Text(req))
		if evalJS[int](t, ctx, `window.__sameDocument || 0`) != 1 {
			t.Fatal("the page reloaded instead of updating live")
		}
		for _, w := range []string{"Approval needed", "bash", "rm -rf ./build", "agent", "browser-deny", "/srv/app", "clean before the release", "rule that asked", "left"} {
			if !strings.Contains(strings.ToLower(shown), strings.ToLower(w)) {
				t.Errorf("the pending request lacks %q:\n%s", w, shown)
			}
		}
		card := r.card(t, id) // the chat card was posted too
		do(t, ctx, "denying with a reason",
			chromedp.SendKeys(xLabelled(req, "Reason"), "wrong directory, use /tmp"),
			chromedp.Click(xButton(req, "Deny")),
			chromedp.WaitVisible(flashOK),
		)
		got := waitResult(t, result)
		if got["state"] != "denied" || got["allowed"] != false || got["decided_by"] != "operator" ||
			!strings.Contains(fmt.Sprint(got["message"]), `The user said: "wrong directory, use /tmp"`) {
			t.Fatalf("the waiting agent got %v", got)
		}
		r.fake.WaitFor(t, 30*time.Second, "the chat card edited", func() bool {
			m, _ := r.fake.Message(brChat, card.ID)
			return !m.HasButtons() && strings.Contains(m.Plain, "wrong directory, use /tmp")
		})
	})

	t.Run("a decision in the chat updates the page", func(t *testing.T) {
		do(t, ctx, "reloading", chromedp.Navigate(ui), chromedp.WaitVisible(xButton("", "Sign out")))
		evalJS[int](t, ctx, `window.__sameDocument = 2`)
		id, result := r.agentAsk(t, map[string]any{"tool": "bash", "args": map[string]any{"command": "make deploy"}, "session": "browser-chat"})
		req := xRequest(id)
		do(t, ctx, "waiting for the request", chromedp.WaitVisible(xButton(req, "Allow once")))
		card := r.card(t, id)
		r.fake.PressButton(brChat, card.ID, brAlice, "Allow once")
		do(t, ctx, "waiting for the page to show the chat's decision", chromedp.WaitVisible(req+`[@data-state="allowed"]`))
		if text := get(t, ctx, "reading the decided request", chromedp.Text(req)); !strings.Contains(text, "Allowed once") || !strings.Contains(text, "Alice") {
			t.Fatalf("decided request shows:\n%s", text)
		}
		if evalJS[int](t, ctx, `window.__sameDocument || 0`) != 2 {
			t.Fatal("the page reloaded instead of updating live")
		}
		if n := evalJS[int](t, ctx, fmt.Sprintf(`document.querySelectorAll("#req-%s button").length`, id)); n != 0 {
			t.Fatalf("a decided request keeps %d buttons", n)
		}
		if got := waitResult(t, result); got["state"] != "allowed" || got["allowed"] != true {
			t.Fatalf("agent got %v", got)
		}
	})

	t.Run("a hostile request renders inert", func(t *testing.T) {
		hostile := "notify-oncall \u202egnp.exe\u202c '<img src=x onerror=window.__pwned=1><script>window.__pwned=2</script>" +
			"<a href=javascript:window.__pwned=3>x</a>" + strings.Repeat("<b>very</b> long ", 4000) + "'"
		id, _ := r.agentAsk(t, map[string]any{"tool": "bash", "args": map[string]any{"command": hostile},
			"session": "browser-hostile\u2066", "reason": `<iframe src="javascript:window.__pwned=4"></iframe><img src=x onerror=alert(1)>`})
		req := xRequest(id)
		do(t, ctx, "waiting for the hostile request", chromedp.WaitVisible(req))
		summary := get(t, ctx, "reading the summary", chromedp.Text(req+`//pre[@class="summary"]`))
		do(t, ctx, "opening Details", chromedp.Click(req+`//details/summary`), chromedp.WaitVisible(req+`//details/pre`))
		details := get(t, ctx, "reading the details", chromedp.Text(req+`//details/pre`))
		reason := get(t, ctx, "reading the agent's reason", chromedp.Text(req+`//dt[.="Agent's reason"]/following-sibling::dd`))
		if n := evalJS[int](t, ctx, fmt.Sprintf(`document.querySelectorAll("#req-%s :is(img,script,a[href^=javascript],iframe,b)").length`, id)); n != 0 {
			t.Fatalf("%d elements made from agent text", n)
		}
		if v := evalJS[int](t, ctx, `window.__pwned || 0`); v != 0 || dialogs.Load() != 0 {
			t.Fatalf("agent text ran as script (%d, %d dialogs)", v, dialogs.Load())
		}
		if !strings.Contains(summary, "[U+202E]gnp.exe[U+202C]") || !strings.Contains(summary, "<img src=x onerror=") ||
			!strings.Contains(details, "<b>very</b> long") || !strings.Contains(reason, `<iframe src="javascript:`) ||
			strings.ContainsAny(summary+details+reason, "\u202e\u202c\u2066") {
			t.Fatalf("hostile text not shown as hardened text: summary %q, details %.300q, reason %q", summary, details, reason)
		}
		if n := len([]rune(summary)); n > 200 {
			t.Fatalf("summary of %d characters", n)
		}
		if w := evalJS[bool](t, ctx, `document.documentElement.scrollWidth <= window.innerWidth`); !w {
			t.Fatal("the huge request makes the page scroll sideways")
		}
		if code, m := r.s.JSON(t, "DELETE", "/v1/requests/"+id, testserver.AgentToken, nil); code != 200 {
			t.Fatalf("cancel: %d %v", code, m)
		}
	})

	t.Run("a forged form without the CSRF token is refused", func(t *testing.T) {
		id, _ := r.agentAsk(t, map[string]any{"tool": "bash", "args": map[string]any{"command": "make forged"}, "session": "browser-forge"})
		// From the panel's own origin, with the cookie, but without the token.
		status := evalJS[int](t, ctx, fmt.Sprintf(`fetch("/ui/requests/%s/decision", {method: "POST",
			body: new URLSearchParams({outcome: "allow_once"})}).then(r => r.status)`, id))
		if status != 403 {
			t.Fatalf("same-origin post without the token: %d", status)
		}
		// From another site, as a CSRF attack would: a form that submits itself.
		evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprintf(w, `<!doctype html><form id=f method=post action="%s/ui/requests/%s/decision"><input name=outcome value=allow_once><input name=csrf value=guess></form><script>document.getElementById("f").submit()</script>`, s.URL, id)
		}))
		defer evil.Close()
		do(t, ctx, "visiting the attacker's page",
			chromedp.Navigate(strings.Replace(evil.URL, "127.0.0.1", "localhost", 1)),
			chromedp.WaitVisible(`//h1[normalize-space(.)="Forbidden"]`),
		)
		if code, m := r.s.JSON(t, "GET", "/v1/requests/"+id, testserver.OperatorToken, nil); code != 202 || m["state"] != "pending" {
			t.Fatalf("the forged form decided the request: %d %v", code, m)
		}
		r.s.JSON(t, "DELETE", "/v1/requests/"+id, testserver.AgentToken, nil)
	})

	t.Run("allow always, then revoke the allowlist entry", func(t *testing.T) {
		id, result := r.agentAsk(t, map[string]any{"tool": "bash", "args": map[string]any{"command": "touch /tmp/approvebot-browser-always"}, "session": "browser-always"})
		req := xRequest(id)
		do(t, ctx, "allowing always",
			chromedp.Navigate(ui),
			chromedp.Click(xButton(req, "Allow always")),
			chromedp.WaitVisible(flashOK+`[contains(.,"Allowed always")]`),
		)
		if got := waitResult(t, result); got["outcome"] != "allow_always" {
			t.Fatalf("agent got %v", got)
		}
		do(t, ctx, "opening the allowlist",
			chromedp.Click(`//nav//a[normalize-space(.)="Allowlist"]`),
			chromedp.WaitVisible(xButton("", "Revoke")),
		)
		if listed := get(t, ctx, "reading the allowlist", chromedp.Text(chromedp.CSS("table"))); !strings.Contains(listed, "touch") {
			t.Fatalf("allowlist shows %q", listed)
		}
		do(t, ctx, "revoking",
			chromedp.Click(xButton("", "Revoke")),
			chromedp.WaitVisible(flashOK+`[contains(.,"Revoked")]`),
			chromedp.WaitVisible(`//p[normalize-space(.)="No stored entries."]`),
		)
		if _, m := r.s.JSON(t, "GET", "/v1/allowlist", testserver.OperatorToken, nil); len(m["entries"].([]any)) != 0 {
			t.Fatalf("allowlist after revoke: %v", m)
		}
	})

	t.Run("reading without JavaScript; a second decision loses", func(t *testing.T) {
		tab, cancel := chromedp.NewContext(ctx)
		defer cancel()
		// A tab lives as long as the context of its first action: open it without a deadline.
		if err := chromedp.Do(tab); err != nil {
			t.Fatal(err)
		}
		do(t, tab, "opening the panel without JavaScript", chromedp.Func(scriptsOff), chromedp.Navigate(ui), chromedp.WaitVisible(xButton("", "Sign out")))
		id, _ := r.agentAsk(t, map[string]any{"tool": "bash", "args": map[string]any{"command": "make race"}, "session": "browser-race"})
		req := xRequest(id)
		do(t, tab, "reloading", chromedp.Reload(), chromedp.WaitVisible(xButton(req, "Allow once")))
		code, m := r.s.JSON(t, "POST", "/v1/requests/"+id+"/decision", testserver.OperatorToken, map[string]any{"outcome": "deny", "reason": "first"})
		if code != 200 {
			t.Fatalf("API decision: %d %v", code, m)
		}
		do(t, tab, "pressing Allow once on the stale page", chromedp.Click(xButton(req, "Allow once")), chromedp.WaitVisible(alert))
		if msg := get(t, tab, "reading the answer", chromedp.Text(alert)); !strings.Contains(msg, "Already decided (deny) by operator at ") {
			t.Fatalf("the losing press says %q", msg)
		}
	})

	t.Run("filter the history", func(t *testing.T) {
		do(t, ctx, "filtering by session and outcome",
			chromedp.Navigate(ui+"history"),
			chromedp.WaitVisible(chromedp.CSS("figure.chart svg")),
			chromedp.SendKeys(xLabelled("", "Session"), "browser-deny"),
			chromedp.SetValue(xLabelled("", "Outcome"), "deny"),
			chromedp.Click(xButton("", "Filter")),
			// The filtered page, not the one the click left.
			chromedp.WaitVisible(`//input[@id="f-session"][@value="browser-deny"]`),
			chromedp.WaitVisible(`//table[@class="audit"]`),
		)
		rows := evalJS[[]string](t, ctx, `[...document.querySelectorAll("table.audit tbody tr")].map(tr => tr.innerText)`)
		if len(rows) != 1 || !strings.Contains(rows[0], "browser-deny") || !strings.Contains(rows[0], "wrong directory, use /tmp") {
			t.Fatalf("filtered rows: %q", rows)
		}
		do(t, ctx, "opening the entry's request",
			chromedp.Click(`//table[@class="audit"]//a[normalize-space(.)="open"]`),
			chromedp.WaitVisible(xRequest(deniedID)+`[@data-state="denied"]`),
		)
	})

	t.Run("labels, keyboard and a phone-sized screen", func(t *testing.T) {
		id, _ := r.agentAsk(t, map[string]any{"tool": "bash", "args": map[string]any{"command": "make labels"}, "session": "browser-labels"})
		for _, p := range []string{ui, ui + "history", ui + "allowlist", ui + "requests/" + id} {
			do(t, ctx, "opening "+p, chromedp.Navigate(p), chromedp.WaitVisible(chromedp.CSS("main")))
			unlabelled := evalJS[[]string](t, ctx, `[...document.querySelectorAll("input:not([type=hidden]), select, textarea")].filter(e => e.labels.length === 0).map(e => e.outerHTML)`)
			if len(unlabelled) != 0 {
				t.Errorf("%s: form fields without a label: %q", p, unlabelled)
			}
		}
		// Keyboard only: the Reason field, then Enter, denies.
		do(t, ctx, "denying with the keyboard",
			chromedp.Navigate(ui),
			chromedp.Focus(xLabelled(xRequest(id), "Reason")),
			chromedp.SendKeys(xLabelled(xRequest(id), "Reason"), "typed only\r"),
			chromedp.WaitVisible(flashOK+`[contains(.,"typed only")]`),
		)
		do(t, ctx, "phone-sized, history",
			chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(3), chromedp.EmulateMobile, chromedp.EmulatePortrait),
			chromedp.Navigate(ui+"history"),
			chromedp.WaitVisible(chromedp.CSS("figure.chart")),
		)
		if w := evalJS[bool](t, ctx, `document.documentElement.scrollWidth <= window.innerWidth`); !w {
			t.Error("the history scrolls sideways on a phone")
		}
		id2, _ := r.agentAsk(t, map[string]any{"tool": "bash", "args": map[string]any{"command": "terraform apply -auto-approve -target=module.db"}, "session": "browser-phone",
			"cwd": "/srv/infra", "reason": "apply the reviewed plan"})
		do(t, ctx, "phone-sized, pending", chromedp.Navigate(ui), chromedp.WaitVisible(xButton(xRequest(id2), "Deny")))
		if w := evalJS[bool](t, ctx, `document.documentElement.scrollWidth <= window.innerWidth`); !w {
			t.Error("the pending page scrolls sideways on a phone")
		}
		shot := get(t, ctx, "phone screenshot", chromedp.CaptureScreenshot())
		if err := os.WriteFile(filepath.Join(t.TempDir(), "panel-phone.png"), shot, 0o644); err != nil {
			t.Fatal(err)
		}
		do(t, ctx, "back to a laptop", chromedp.ResetViewport())
		r.s.JSON(t, "DELETE", "/v1/requests/"+id2, testserver.AgentToken, nil)
	})

	t.Run("screenshots", func(t *testing.T) {
		out := screenshotDir(t)
		for _, c := range []struct {
			session, cmd, reason, cwd string
		}{
			{"ci-deploy-812", "kubectl rollout restart deployment/api -n prod", "roll out build 812", "/home/ci/api"},
			{"claude-7f3a", "terraform apply -auto-approve -target=module.db", "apply the reviewed plan for the db module", "/srv/infra"},
		} {
			r.agentAsk(t, map[string]any{"tool": "bash", "args": map[string]any{"command": c.cmd}, "session": c.session, "reason": c.reason, "cwd": c.cwd})
		}
		for _, sh := range []struct{ path, file, wait string }{
			{ui, "panel-pending.png", `(//article[@data-state="pending"])[2]//span[@class="card-ref"]`},
			{ui + "history", "panel-history.png", `//figure[@class="chart"]`},
		} {
			do(t, ctx, "opening "+sh.path, chromedp.EmulateViewport(1280, 860), chromedp.Navigate(sh.path), chromedp.WaitVisible(sh.wait))
			png := get(t, ctx, "screenshot of "+sh.path, chromedp.CaptureScreenshot())
			if !bytes.HasPrefix(png, []byte("\x89PNG")) {
				t.Fatalf("%s is not a PNG", sh.file)
			}
			if err := os.WriteFile(filepath.Join(out, sh.file), png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	})

	t.Run("sign out", func(t *testing.T) {
		do(t, ctx, "signing out",
			chromedp.Navigate(ui),
			chromedp.Click(xButton("", "Sign out")),
			chromedp.WaitVisible(xLabelled("", "Operator token")),
			chromedp.Navigate(ui+"history"),
			chromedp.WaitVisible(xLabelled("", "Operator token")),
		)
	})
	if n := dialogs.Load(); n != 0 {
		t.Fatalf("%d JavaScript dialogs opened", n)
	}
}
