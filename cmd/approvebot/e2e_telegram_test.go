package main

// End-to-end tests of the Telegram channel: the real `approvebot serve` binary, pointed by
// [channels.telegram] api_url at the fake Bot API on 127.0.0.1, driven the way people do it
// — an agent asks over HTTP, an approver presses a button or types a command in the chat.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/approvebot/approvebot/channels/telegram/telegramtest"
	"github.com/approvebot/approvebot/internal/testserver"
)

const (
	tgToken   = "5550001:AAtelegram-e2e-secret-token_0123456789"
	tgSecret  = "e2e-webhook-secret_0123456789"
	tgOps     = int64(-1001)
	tgOncall  = int64(-1002)
	tgNoMatch = "the bot token"
)

var (
	tgAlice = telegramtest.User{ID: 111, FirstName: "Alice"} // approver
	tgBob   = telegramtest.User{ID: 222, FirstName: "Bob"}   // not an approver
)

type tgRig struct {
	s    *testserver.Server
	fake *telegramtest.Server
}

// tgStart runs a fake Bot API and approvebot polling it. server is extra [server] TOML.
func tgStart(t *testing.T, server, extra string) *tgRig {
	t.Helper()
	fake := telegramtest.Start(t, telegramtest.Options{Token: tgToken})
	fake.AddChat(telegramtest.Chat{ID: tgOps, Type: "supergroup", Title: "ops"})
	fake.AddChat(telegramtest.Chat{ID: tgOncall, Type: "supergroup", Title: "on-call"})
	if server == "" {
		server = `approval_timeout = "60s"`
	}
	cfg := fmt.Sprintf(`[channels.telegram]
token_env = "TEST_TELEGRAM_TOKEN"
api_url = %q
chats = [%d, %d]
approvers = [%d]
poll_timeout = "3s"
deny_reason_window = "2s"
%s
`, fake.URL, tgOps, tgOncall, tgAlice.ID, extra)
	s := testserver.Start(t, testserver.Options{
		Server: server, Config: cfg,
		Env: []string{"TEST_TELEGRAM_TOKEN=" + tgToken, "TEST_TELEGRAM_WEBHOOK_SECRET=" + tgSecret},
	})
	r := &tgRig{s: s, fake: fake}
	t.Cleanup(func() { r.noTokenInLogs(t) })
	if !strings.Contains(extra, "webhook") {
		fake.WaitFor(t, 30*time.Second, "approvebot to poll getUpdates", fake.Polling)
	}
	return r
}

func (r *tgRig) noTokenInLogs(t *testing.T) {
	t.Helper()
	secret := strings.SplitN(tgToken, ":", 2)[1]
	if logs := r.s.Logs(); strings.Contains(logs, secret) {
		t.Errorf("%s appears in the logs:\n%s", tgNoMatch, logs)
	}
}

// ask files a request that a human must decide and returns its id (202 pending).
func (r *tgRig) ask(t *testing.T, session, command string) string {
	t.Helper()
	code, m := r.s.JSON(t, "POST", "/v1/requests", testserver.AgentToken,
		map[string]any{"tool": "bash", "args": map[string]any{"command": command}, "session": session})
	if code != 202 || m["state"] != "pending" {
		t.Fatalf("want a pending request, got %d %v", code, m)
	}
	return m["id"].(string)
}

// askAndWait files a request whose agent waits for the decision (in the background).
func (r *tgRig) askAndWait(t *testing.T, session, command string) chan map[string]any {
	t.Helper()
	result := make(chan map[string]any, 1)
	go func() {
		body, _ := json.Marshal(map[string]any{"tool": "bash", "args": map[string]any{"command": command}, "session": session, "wait": "50s"})
		req, _ := http.NewRequest("POST", r.s.URL+"/v1/requests", strings.NewReader(string(body)))
		req.Header.Set("Authorization", "Bearer "+testserver.AgentToken)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			result <- map[string]any{"error": err.Error()}
			return
		}
		defer resp.Body.Close()
		var m map[string]any
		json.NewDecoder(resp.Body).Decode(&m)
		m["http_status"] = resp.StatusCode
		result <- m
	}()
	return result
}

func (r *tgRig) get(t *testing.T, id string) map[string]any {
	t.Helper()
	code, m := r.s.JSON(t, "GET", "/v1/requests/"+id, testserver.AgentToken, nil)
	if code != 200 && code != 202 {
		t.Fatalf("GET %s: %d %v", id, code, m)
	}
	return m
}

// waitDecided long-polls until the request is decided.
func (r *tgRig) waitDecided(t *testing.T, id string) map[string]any {
	t.Helper()
	code, m := r.s.JSON(t, "GET", "/v1/requests/"+id+"?wait=30s", testserver.AgentToken, nil)
	if code != 200 {
		t.Fatalf("request %s not decided: %d %v", id, code, m)
	}
	return m
}

// card waits for the card of request id in chat and returns it.
func (r *tgRig) card(t *testing.T, chat int64, id string) telegramtest.Message {
	t.Helper()
	var card telegramtest.Message
	r.fake.WaitFor(t, 30*time.Second, fmt.Sprintf("the card of %s in chat %d", id, chat), func() bool {
		for _, m := range r.fake.BotMessages(chat) {
			if strings.Contains(m.Plain, "Request: "+id) {
				card = m
				return true
			}
		}
		return false
	})
	return card
}

// cardWhen waits until the card of id in chat satisfies cond.
func (r *tgRig) cardWhen(t *testing.T, chat int64, id, what string, cond func(telegramtest.Message) bool) telegramtest.Message {
	t.Helper()
	first := r.card(t, chat, id)
	var m telegramtest.Message
	r.fake.WaitFor(t, 30*time.Second, fmt.Sprintf("card %s in chat %d to be %s", id, chat, what), func() bool {
		m, _ = r.fake.Message(chat, first.ID)
		return cond(m)
	})
	return m
}

func (r *tgRig) resolvedCard(t *testing.T, chat int64, id string, wants ...string) telegramtest.Message {
	t.Helper()
	return r.cardWhen(t, chat, id, "resolved ("+strings.Join(wants, ", ")+")", func(m telegramtest.Message) bool {
		if m.HasButtons() || m.Edits == 0 {
			return false
		}
		for _, w := range wants {
			if !strings.Contains(m.Plain, w) {
				return false
			}
		}
		return true
	})
}

func (r *tgRig) answer(t *testing.T, qid string) telegramtest.Answer {
	t.Helper()
	var a telegramtest.Answer
	r.fake.WaitFor(t, 30*time.Second, "the answer to callback "+qid, func() bool {
		var ok bool
		a, ok = r.fake.AnswerTo(qid)
		return ok
	})
	return a
}

// replyTo waits for the bot's reply to message msg in chat.
func (r *tgRig) replyTo(t *testing.T, chat int64, msg int) telegramtest.Message {
	t.Helper()
	var out telegramtest.Message
	r.fake.WaitFor(t, 30*time.Second, fmt.Sprintf("the bot's reply to message %d", msg), func() bool {
		for _, m := range r.fake.BotMessages(chat) {
			if m.ReplyTo == msg {
				out = m
				return true
			}
		}
		return false
	})
	return out
}

func tgWant(t *testing.T, m map[string]any, kv ...any) {
	t.Helper()
	for i := 0; i < len(kv); i += 2 {
		k := kv[i].(string)
		if got := m[k]; fmt.Sprint(got) != fmt.Sprint(kv[i+1]) {
			t.Errorf("%s = %v, want %v (object %v)", k, got, kv[i+1], m)
		}
	}
}

func TestTelegramApproverPressAllowsWaitingAgent(t *testing.T) {
	t.Parallel()
	r := tgStart(t, "", "")
	result := r.askAndWait(t, "tg-allow", "rm -rf ./build")
	var id string
	r.fake.WaitFor(t, 30*time.Second, "a card in the ops chat", func() bool {
		for _, m := range r.fake.BotMessages(tgOps) {
			if _, after, ok := strings.Cut(m.Plain, "Request: "); ok {
				id = strings.Fields(after)[0]
				return true
			}
		}
		return false
	})
	// A card in each configured chat, HTML, with the buttons.
	for _, chat := range []int64{tgOps, tgOncall} {
		c := r.card(t, chat, id)
		if c.ParseMode != "HTML" || !strings.Contains(c.Plain, "rm -rf ./build") || !c.HasButtons() {
			t.Fatalf("card in %d: %+v", chat, c)
		}
		if _, ok := c.ButtonData("ab1:once:" + id); !ok {
			t.Fatalf("card in %d has no Allow once for %s: %v", chat, id, c.Keyboard)
		}
	}
	card := r.card(t, tgOps, id)
	qid := r.fake.PressButton(tgOps, card.ID, tgAlice, "ab1:once:")
	if a := r.answer(t, qid); a.ShowAlert || !strings.Contains(a.Text, "Allowed") {
		t.Fatalf("answer %+v", a)
	}
	select {
	case m := <-result:
		tgWant(t, m, "http_status", 200, "state", "allowed", "allowed", true, "outcome", "allow_once", "source", "human",
			"decided_by", "Alice (telegram:111)")
	case <-time.After(30 * time.Second):
		t.Fatal("the waiting agent got no answer")
	}
	// Every card is edited: no buttons, the outcome, who and when.
	for _, chat := range []int64{tgOps, tgOncall} {
		m := r.resolvedCard(t, chat, id, "Allowed once", "Alice (telegram:111)", "At:", "rm -rf ./build")
		if !strings.Contains(m.Plain, time.Now().UTC().Format("2006-01-02")) {
			t.Errorf("card in %d does not say when: %q", chat, m.Plain)
		}
	}
	code, h := r.s.JSON(t, "GET", "/healthz", "", nil)
	tg, _ := h["channels"].(map[string]any)["telegram"].(map[string]any)
	if code != 200 || tg["ok"] != true {
		t.Fatalf("healthz %d %v", code, h)
	}
	if u := r.fake.Unanswered(); len(u) != 0 {
		t.Fatalf("unanswered callback queries %v", u)
	}
}

func TestTelegramNonApproverPressChangesNothing(t *testing.T) {
	t.Parallel()
	r := tgStart(t, "", "")
	id := r.ask(t, "tg-stranger", "git push --force")
	card := r.card(t, tgOps, id)
	qid := r.fake.PressButton(tgOps, card.ID, tgBob, "ab1:once:")
	a := r.answer(t, qid)
	if !a.ShowAlert || !strings.Contains(a.Text, "not an approver") {
		t.Fatalf("answer %+v", a)
	}
	tgWant(t, r.get(t, id), "state", "pending", "allowed", false)
	if m, _ := r.fake.Message(tgOps, card.ID); !m.HasButtons() || m.Edits != 0 {
		t.Fatalf("the card changed: %+v", m)
	}
	_, audit := r.s.JSON(t, "GET", "/v1/audit?request="+id, testserver.OperatorToken, nil)
	found := false
	for _, e := range audit["entries"].([]any) {
		e := e.(map[string]any)
		if e["event"] == "unauthorized" && e["channel"] == "telegram" && strings.Contains(fmt.Sprint(e["actor"]), "telegram:222") {
			found = true
		}
	}
	if !found {
		t.Fatalf("no unauthorized audit entry for bob: %v", audit)
	}
	if _, metrics := r.s.Do(t, "GET", "/metrics", "", nil); !strings.Contains(string(metrics), `approvebot_refused_attempts_total{channel="telegram"} 1`) {
		t.Errorf("refused press not counted in /metrics")
	}
	// Bob's typed command is refused too, and the request stays pending.
	msg := r.fake.Say(tgOps, &tgBob, "/approve "+id, 0)
	if rep := r.replyTo(t, tgOps, msg); !strings.Contains(rep.Plain, "not an approver") {
		t.Fatalf("reply %q", rep.Plain)
	}
	tgWant(t, r.get(t, id), "state", "pending")
}

func TestTelegramDenyCommandQuotesHuman(t *testing.T) {
	t.Parallel()
	r := tgStart(t, "", "")
	result := r.askAndWait(t, "tg-deny", "rm -rf /srv/data/old")
	var id string
	r.fake.WaitFor(t, 30*time.Second, "a card", func() bool {
		for _, m := range r.fake.BotMessages(tgOps) {
			if _, after, ok := strings.Cut(m.Plain, "Request: "); ok {
				id = strings.Fields(after)[0]
				return true
			}
		}
		return false
	})
	msg := r.fake.Say(tgOps, &tgAlice, "/deny wrong directory, use /tmp", 0)
	select {
	case m := <-result:
		tgWant(t, m, "state", "denied", "allowed", false, "outcome", "deny", "reason", "wrong directory, use /tmp")
		if !strings.Contains(m["message"].(string), `The user said: "wrong directory, use /tmp"`) {
			t.Fatalf("agent message %q", m["message"])
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the waiting agent got no answer")
	}
	if rep := r.replyTo(t, tgOps, msg); !strings.Contains(rep.Plain, "Denied") {
		t.Fatalf("reply %q", rep.Plain)
	}
	for _, chat := range []int64{tgOps, tgOncall} {
		r.resolvedCard(t, chat, id, "Denied", "wrong directory, use /tmp", "Alice")
	}
}

func TestTelegramDenyButtonAsksForReason(t *testing.T) {
	t.Parallel()
	r := tgStart(t, "", "")
	id := r.ask(t, "tg-denybtn", "terraform destroy")
	card := r.card(t, tgOps, id)
	r.answer(t, r.fake.PressButton(tgOps, card.ID, tgAlice, "ab1:deny:"))
	prompt := r.replyTo(t, tgOps, card.ID)
	if !prompt.ForceReply {
		t.Fatalf("the prompt is not a ForceReply: %+v", prompt)
	}
	r.fake.Say(tgOps, &tgAlice, "not during the freeze", prompt.ID)
	m := r.waitDecided(t, id)
	tgWant(t, m, "state", "denied", "outcome", "deny", "reason", "not during the freeze")

	// Without a reason, the window (2 s) denies it anyway.
	id2 := r.ask(t, "tg-denybtn2", "terraform destroy -target=x")
	card2 := r.card(t, tgOps, id2)
	r.answer(t, r.fake.PressButton(tgOps, card2.ID, tgAlice, "ab1:deny:"))
	m = r.waitDecided(t, id2)
	tgWant(t, m, "state", "denied", "outcome", "deny", "reason", "")
	r.resolvedCard(t, tgOps, id2, "Denied")
}

func TestTelegramFIFOAndReplyToCard(t *testing.T) {
	t.Parallel()
	r := tgStart(t, "", "")
	var ids []string
	for i := 0; i < 3; i++ {
		ids = append(ids, r.ask(t, "tg-fifo", fmt.Sprintf("make deploy-%d", i)))
		r.card(t, tgOps, ids[i])
		time.Sleep(20 * time.Millisecond)
	}
	msg := r.fake.Say(tgOps, &tgAlice, "/pending", 0)
	list := r.replyTo(t, tgOps, msg).Plain
	if !strings.Contains(list, "3 waiting") || strings.Index(list, ids[0]) > strings.Index(list, ids[2]) {
		t.Fatalf("/pending: %q", list)
	}
	// /approve takes the oldest.
	r.fake.Say(tgOps, &tgAlice, "/approve", 0)
	tgWant(t, r.waitDecided(t, ids[0]), "state", "allowed", "outcome", "allow_once")
	tgWant(t, r.get(t, ids[1]), "state", "pending")
	tgWant(t, r.get(t, ids[2]), "state", "pending")
	// A reply to the newest card resolves that card, not the oldest.
	third := r.card(t, tgOps, ids[2])
	r.fake.Say(tgOps, &tgAlice, "/approve", third.ID)
	tgWant(t, r.waitDecided(t, ids[2]), "state", "allowed", "outcome", "allow_once")
	tgWant(t, r.get(t, ids[1]), "state", "pending")
	// Replied in the other chat, on that chat's card of the middle request.
	second := r.card(t, tgOncall, ids[1])
	r.fake.Say(tgOncall, &tgAlice, "/deny not now", second.ID)
	tgWant(t, r.waitDecided(t, ids[1]), "state", "denied", "reason", "not now")
	for _, id := range ids {
		for _, chat := range []int64{tgOps, tgOncall} {
			r.resolvedCard(t, chat, id)
		}
	}
}

func TestTelegramTimeoutAndCancelEditCards(t *testing.T) {
	t.Parallel()
	r := tgStart(t, `approval_timeout = "1s"`, "")
	timedOut := r.ask(t, "tg-timeout", "shutdown -h now")
	// Cancelled at once, well inside the timeout; its cards are edited whenever they land.
	cancelled := r.ask(t, "tg-cancel", "kubectl delete ns prod")
	code, m := r.s.JSON(t, "DELETE", "/v1/requests/"+cancelled, testserver.AgentToken, nil)
	if code != 200 {
		t.Fatalf("cancel: %d %v", code, m)
	}
	tgWant(t, m, "state", "denied", "outcome", "cancelled")
	for _, chat := range []int64{tgOps, tgOncall} {
		r.resolvedCard(t, chat, cancelled, "Cancelled")
	}
	tgWant(t, r.waitDecided(t, timedOut), "state", "denied", "outcome", "timeout", "allowed", false)
	for _, chat := range []int64{tgOps, tgOncall} {
		r.resolvedCard(t, chat, timedOut, "Expired")
	}
	// A press on the expired card says so and changes nothing.
	card := r.card(t, tgOps, timedOut)
	a := r.answer(t, r.fake.Press(tgOps, card.ID, tgAlice, "ab1:once:"+timedOut))
	if !a.ShowAlert || !strings.Contains(a.Text, "expired") {
		t.Fatalf("answer %+v", a)
	}
	tgWant(t, r.get(t, timedOut), "outcome", "timeout")
}

func TestTelegramKillAndRestartPressStillWorks(t *testing.T) {
	t.Parallel()
	r := tgStart(t, "", "")
	id := r.ask(t, "tg-restart", "systemctl restart nginx")
	card := r.card(t, tgOps, id)
	r.card(t, tgOncall, id)
	r.s.WaitCards(t, id, 2)
	r.s.Kill()
	// The press happens while approvebot is down; Telegram keeps it until someone polls.
	qid := r.fake.PressButton(tgOps, card.ID, tgAlice, "ab1:session:")
	r.s = r.s.Restart(t)
	if a := r.answer(t, qid); a.ShowAlert || !strings.Contains(a.Text, "Allowed") {
		t.Fatalf("answer after restart %+v", a)
	}
	tgWant(t, r.waitDecided(t, id), "state", "allowed", "outcome", "allow_session", "decided_by", "Alice (telegram:111)")
	for _, chat := range []int64{tgOps, tgOncall} {
		r.resolvedCard(t, chat, id, "Allowed for this session")
	}
	if n := len(r.fake.BotMessages(tgOps)); n != 1 {
		t.Fatalf("%d bot messages in the ops chat after the restart, want the one card", n)
	}
}

func TestTelegramRestartAfterDeadlineMarksExpired(t *testing.T) {
	t.Parallel()
	r := tgStart(t, `approval_timeout = "2s"`, "")
	id := r.ask(t, "tg-expire", "dd if=/dev/zero of=disk.img bs=1M count=10")
	card := r.card(t, tgOncall, id)
	r.s.WaitCards(t, id, 2)
	deadline := r.s.ExpiresAt(t, id)
	r.s.Kill()
	testserver.SleepUntil(deadline) // the deadline passes while approvebot is down
	r.s = r.s.Restart(t)
	for _, chat := range []int64{tgOps, tgOncall} {
		r.resolvedCard(t, chat, id, "Expired")
	}
	tgWant(t, r.get(t, id), "state", "denied", "outcome", "timeout")
	// A client still showing the old buttons presses one.
	a := r.answer(t, r.fake.Press(tgOncall, card.ID, tgAlice, "ab1:once:"+id))
	if !a.ShowAlert || !strings.Contains(a.Text, "expired") {
		t.Fatalf("answer %+v", a)
	}
	tgWant(t, r.get(t, id), "outcome", "timeout")
}

func TestTelegram429StormLosesNothing(t *testing.T) {
	t.Parallel()
	r := tgStart(t, "", "")
	// Every call but getUpdates is refused with retry_after 1 for a while.
	r.fake.Inject(telegramtest.Fault{Code: 429, RetryAfter: 1, Times: 6})
	var ids []string
	for i := 0; i < 3; i++ {
		ids = append(ids, r.ask(t, "tg-storm", fmt.Sprintf("scp build-%d.tar prod:/srv", i)))
	}
	for _, id := range ids {
		for _, chat := range []int64{tgOps, tgOncall} {
			r.card(t, chat, id)
		}
		tgWant(t, r.get(t, id), "state", "pending")
	}
	r.fake.Inject(telegramtest.Fault{Code: 429, RetryAfter: 1, Times: 3})
	var qids []string
	for _, id := range ids {
		c := r.card(t, tgOps, id)
		qids = append(qids, r.fake.PressButton(tgOps, c.ID, tgAlice, "ab1:once:"))
	}
	for i, id := range ids {
		tgWant(t, r.waitDecided(t, id), "state", "allowed", "source", "human", "outcome", "allow_once")
		r.answer(t, qids[i])
		for _, chat := range []int64{tgOps, tgOncall} {
			r.resolvedCard(t, chat, id, "Allowed once")
		}
	}
	n429 := 0
	for _, c := range r.fake.Calls("") {
		if c.Status == 429 {
			n429++
		}
	}
	if n429 != 9 {
		t.Fatalf("%d calls were answered 429, want all 9 injected", n429)
	}
	for _, chat := range []int64{tgOps, tgOncall} {
		cards := 0
		for _, m := range r.fake.BotMessages(chat) {
			if strings.Contains(m.Plain, "Request: ") {
				cards++
			}
		}
		if cards != 3 {
			t.Fatalf("%d cards in chat %d, want 3 (none lost, none doubled)", cards, chat)
		}
	}
}

func TestTelegramForgedCallbacksChangeNothing(t *testing.T) {
	t.Parallel()
	r := tgStart(t, "", "")
	id := r.ask(t, "tg-forge", "curl -X DELETE https://api.example.com/v1/db")
	card := r.card(t, tgOps, id)
	other := r.ask(t, "tg-forge2", "rm -r ./old-cache")
	r.card(t, tgOps, other)
	r.fake.Say(tgOps, &tgAlice, "/deny "+other+" no", 0)
	tgWant(t, r.waitDecided(t, other), "outcome", "deny")

	forged := []struct {
		name, data, want string
	}{
		{"unknown id", "ab1:once:" + strings.Repeat("a", 26), "No such request"},
		{"malformed id", "ab1:once:" + id[:20], "not valid"},
		{"unknown action", "ab1:sudo:" + id, "not valid"},
		{"extra field", "ab1:once:" + id + ":x", "not valid"},
		{"other version", "ab2:once:" + id, "not valid"},
		{"empty", "", "not valid"},
		{"replay after decision", "ab1:once:" + other, "Already decided (deny) by Alice"},
	}
	for _, f := range forged {
		t.Run(f.name, func(t *testing.T) {
			a := r.answer(t, r.fake.Press(tgOps, card.ID, tgAlice, f.data))
			if !a.ShowAlert || !strings.Contains(a.Text, f.want) {
				t.Fatalf("answer %+v, want %q", a, f.want)
			}
		})
	}
	tgWant(t, r.get(t, id), "state", "pending")
	tgWant(t, r.get(t, other), "outcome", "deny", "reason", "no")
	if m, _ := r.fake.Message(tgOps, card.ID); !m.HasButtons() || m.Edits != 0 {
		t.Fatalf("the card changed: %+v", m)
	}
}

func TestTelegramDetailsShowsTheWholeActionMasked(t *testing.T) {
	t.Parallel()
	r := tgStart(t, "", "")
	secret := "ghp_" + strings.Repeat("A1b2C3d4E5", 4)[:36]
	cmd := "GITHUB_TOKEN=" + secret + " ./deploy.sh " + strings.Repeat("--flag=value ", 40) + "&& rm -rf /srv/tail-marker"
	id := r.ask(t, "tg-details", cmd)
	card := r.card(t, tgOps, id)
	// The action line is cut before the tail (the "why" line may name the path it writes).
	if action := strings.Split(card.Plain, "\n")[1]; strings.Contains(action, "tail-marker") || strings.Contains(card.Plain, secret) {
		t.Fatalf("card shows more than the cut summary, or the secret: %q", card.Plain)
	}
	a := r.answer(t, r.fake.PressButton(tgOps, card.ID, tgAlice, "ab1:details:"))
	if a.ShowAlert {
		t.Fatalf("answer %+v", a)
	}
	details := r.replyTo(t, tgOps, card.ID)
	if !strings.Contains(details.Plain, "rm -rf /srv/tail-marker") || strings.Contains(details.Plain, secret) || !strings.Contains(details.Plain, "ghp_") {
		t.Fatalf("details %q", details.Plain)
	}
	tgWant(t, r.get(t, id), "state", "pending")
}

func TestTelegramWebhookMode(t *testing.T) {
	t.Parallel()
	r := tgStart(t, "", `mode = "webhook"
webhook_secret_env = "TEST_TELEGRAM_WEBHOOK_SECRET"`)
	hook := r.s.URL + "/telegram/webhook"
	// A wrong secret is 401 and changes nothing.
	for _, secret := range []string{"", "wrong", tgSecret + "x"} {
		req, _ := http.NewRequest("POST", hook, strings.NewReader(`{"update_id":1}`))
		if secret != "" {
			req.Header.Set("X-Telegram-Bot-Api-Secret-Token", secret)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Fatalf("secret %q: status %d, want 401", secret, resp.StatusCode)
		}
	}
	if r.fake.Polling() {
		t.Fatal("webhook mode polls getUpdates")
	}
	r.fake.UseWebhook(hook, tgSecret)
	id := r.ask(t, "tg-webhook", "npm publish")
	card := r.card(t, tgOps, id)
	qid := r.fake.PressButton(tgOps, card.ID, tgAlice, "ab1:once:")
	if a := r.answer(t, qid); a.ShowAlert {
		t.Fatalf("answer %+v", a)
	}
	tgWant(t, r.waitDecided(t, id), "state", "allowed", "decided_by", "Alice (telegram:111)")
	r.resolvedCard(t, tgOps, id, "Allowed once")
}
