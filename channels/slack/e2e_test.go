package slack_test

// End-to-end tests: the real `approvebot serve` binary (internal/testserver) talks to the
// Slack fake (slacktest) on 127.0.0.1; the tests play the agent over the HTTP API and the
// humans through the fake, and assert exact outcomes.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/approvebot/approvebot/channels/slack/slacktest"
	"github.com/approvebot/approvebot/core/render"
	"github.com/approvebot/approvebot/internal/testserver"
)

const (
	botToken      = "xoxb-1111111111-2222222222-e2eBotTokenSecretValue"
	appToken      = "xapp-1-AFAKE-3333333333-e2eAppTokenSecretValue"
	signingSecret = "e2eSigningSecretValue0123456789ab"
	team          = "T0FAKE"
	chan1         = "C0APPROVE1"
	chan2         = "C0APPROVE2"
	slash         = "/approvebot"
)

var (
	alice      = slacktest.User{ID: "U0ALICE", Team: team, Name: "alice"}
	bob        = slacktest.User{ID: "U0BOB", Team: team, Name: "bob"}
	mallory    = slacktest.User{ID: "U0MALLORY", Team: team, Name: "mallory"}
	aliceElse  = slacktest.User{ID: "U0ALICE", Team: "T0OTHER", Name: "alice"} // same user id, other workspace
	secretVals = []string{botToken, appToken, signingSecret}
)

type env struct {
	t    *testing.T
	fake *slacktest.Server
	srv  *testserver.Server
	opts testserver.Options
}

type setup struct {
	server string // extra [server] lines
	mode   string // "socket" (default) or "http"
	extra  string // extra [channels.slack] lines
	window string // deny_reason_window (default 3s)
}

func start(t *testing.T, s setup) *env {
	t.Helper()
	fake, err := slacktest.New(slacktest.Options{
		BotToken: botToken, AppToken: appToken, TeamID: team, Channels: []string{chan1, chan2},
		SigningSecret: signingSecret, PingInterval: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fake.Close)
	mode := s.mode
	if mode == "" {
		mode = "socket"
	}
	window := s.window
	if window == "" {
		window = "3s"
	}
	cfg := fmt.Sprintf(`[channels.slack]
api_url = %q
mode = %q
channels = [%q, %q]
approvers = ["U0ALICE", "T0FAKE:U0BOB"]
deny_reason_window = %q
%s
`, fake.APIURL(), mode, chan1, chan2, window, s.extra)
	server := s.server
	if server == "" {
		server = `approval_timeout = "60s"`
	}
	opts := testserver.Options{
		Server: server, Config: cfg,
		Env: []string{"APPROVEBOT_SLACK_BOT_TOKEN=" + botToken, "APPROVEBOT_SLACK_APP_TOKEN=" + appToken,
			"APPROVEBOT_SLACK_SIGNING_SECRET=" + signingSecret},
	}
	e := &env{t: t, fake: fake, opts: opts}
	e.srv = testserver.Start(t, opts)
	if mode == "http" {
		fake.SetRequestURL(e.srv.URL + "/slack/events")
	}
	e.waitReady()
	t.Cleanup(func() {
		if e.srv == nil {
			return
		}
		logs := e.srv.Logs()
		for _, sec := range secretVals {
			if strings.Contains(logs, sec) {
				t.Errorf("a secret appeared in the logs")
			}
		}
	})
	return e
}

// waitReady waits until the channel is up: connected in socket mode, auth.test done in HTTP.
func (e *env) waitReady() {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		_, h := e.srv.JSON(e.t, "GET", "/healthz", "", nil)
		if ch, ok := h["channels"].(map[string]any)["slack"].(map[string]any); ok && ch["ok"] == true {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	e.t.Fatalf("slack channel never became healthy:\n%s", e.srv.Logs())
}

func (e *env) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	e.t.Cleanup(cancel)
	return ctx
}

// asked is one agent request, with the agent waiting on it.
type asked struct {
	id     string
	mu     sync.Mutex
	result map[string]any
	done   chan struct{}
}

// ask submits a bash command as the agent, waiting for the decision in the background (as an
// agent blocks on POST with wait), and returns once the request is pending.
func (e *env) ask(command string) *asked {
	e.t.Helper()
	return e.askMatching(command, command)
}

// askMatching is ask for a command whose summary is found by match (a long command's
// summary is cut).
func (e *env) askMatching(command, match string) *asked {
	e.t.Helper()
	a := &asked{done: make(chan struct{})}
	go func() {
		defer close(a.done)
		body := map[string]any{"tool": "bash", "args": map[string]any{"command": command}, "session": "s-" + match, "wait": "60s"}
		raw, _ := json.Marshal(body)
		req, _ := http.NewRequest("POST", e.srv.URL+"/v1/requests", strings.NewReader(string(raw)))
		req.Header.Set("Authorization", "Bearer "+testserver.AgentToken)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return // the server was killed
		}
		defer resp.Body.Close()
		var m map[string]any
		json.NewDecoder(resp.Body).Decode(&m)
		a.mu.Lock()
		a.result = m
		a.mu.Unlock()
	}()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		_, list := e.srv.JSON(e.t, "GET", "/v1/requests?state=pending", testserver.OperatorToken, nil)
		reqs, _ := list["requests"].([]any)
		for _, r := range reqs {
			m := r.(map[string]any)
			if strings.Contains(m["summary"].(string), match) {
				a.id = m["id"].(string)
				return a
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.t.Fatalf("request %q never became pending:\n%s", command, e.srv.Logs())
	return nil
}

// answer is what the waiting agent got.
func (e *env) answer(a *asked) map[string]any {
	e.t.Helper()
	select {
	case <-a.done:
	case <-time.After(40 * time.Second):
		var all []slacktest.Ephemeral
		e.fake.Do(func(st *slacktest.State) { all = st.Ephemerals("") })
		e.t.Fatalf("the agent never got an answer for %s; private answers: %+v", a.id, all)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.result == nil {
		e.t.Fatalf("the agent's wait for %s failed", a.id)
	}
	return a.result
}

// get reads a request as the operator.
func (e *env) get(id string) map[string]any {
	e.t.Helper()
	code, m := e.srv.JSON(e.t, "GET", "/v1/requests/"+id, testserver.OperatorToken, nil)
	if code != 200 && code != 202 {
		e.t.Fatalf("GET %s: %d %v", id, code, m)
	}
	return m
}

// poll re-asks as the agent, long-polling (after a restart).
func (e *env) poll(id string) map[string]any {
	e.t.Helper()
	_, m := e.srv.JSON(e.t, "GET", "/v1/requests/"+id+"?wait=30s", testserver.AgentToken, nil)
	return m
}

// card waits for the card of request id in channel and returns it.
func (e *env) card(channel, id string) slacktest.Message {
	e.t.Helper()
	var got slacktest.Message
	err := e.fake.Wait(e.ctx(), func(st *slacktest.State) bool {
		for _, m := range st.Messages(channel) {
			for _, b := range slacktest.Buttons(m.Versions[0]) {
				if strings.HasSuffix(b.ActionID, ":"+id) {
					got = m
					return true
				}
			}
		}
		return false
	})
	if err != nil {
		e.t.Fatalf("no card for %s in %s", id, channel)
	}
	return got
}

// resolved waits until the card (channel, ts) was edited and has no buttons, and returns it.
func (e *env) resolved(channel, ts string) slacktest.Message {
	e.t.Helper()
	var got slacktest.Message
	err := e.fake.Wait(e.ctx(), func(st *slacktest.State) bool {
		m, ok := st.Message(channel, ts)
		got = m
		return ok && m.Updates > 0 && len(slacktest.Buttons(m.Blocks)) == 0
	})
	if err != nil {
		e.t.Fatalf("card %s/%s was never resolved (updates %d, blocks %s)", channel, ts, got.Updates, got.Blocks)
	}
	return got
}

// ephemeral waits for a private answer to user containing text.
func (e *env) ephemeral(user, text string) slacktest.Ephemeral {
	e.t.Helper()
	var got slacktest.Ephemeral
	err := e.fake.Wait(e.ctx(), func(st *slacktest.State) bool {
		for _, m := range st.Ephemerals(user) {
			if strings.Contains(m.Text, text) {
				got = m
				return true
			}
		}
		return false
	})
	if err != nil {
		var all []slacktest.Ephemeral
		e.fake.Do(func(st *slacktest.State) { all = st.Ephemerals("") })
		e.t.Fatalf("no private answer to %s containing %q; got %+v", user, text, all)
	}
	return got
}

func (e *env) audit(id string) []map[string]any {
	e.t.Helper()
	_, m := e.srv.JSON(e.t, "GET", "/v1/audit?request="+id, testserver.OperatorToken, nil)
	var out []map[string]any
	for _, x := range m["entries"].([]any) {
		out = append(out, x.(map[string]any))
	}
	return out
}

func action(a render.Action, id string) string { return render.CallbackData(a, id) }

func str(m map[string]any, k string) string { s, _ := m[k].(string); return s }

func mustState(t *testing.T, m map[string]any, state, outcome string) {
	t.Helper()
	if str(m, "state") != state || str(m, "outcome") != outcome {
		t.Fatalf("want state %s outcome %s, got %s %s: %v", state, outcome, str(m, "state"), str(m, "outcome"), m)
	}
}

func TestCardToEveryChannelAndApproverPressAllows(t *testing.T) {
	t.Parallel()
	e := start(t, setup{})
	a := e.ask("rm -rf ./build-e2e-1")
	c1, c2 := e.card(chan1, a.id), e.card(chan2, a.id)
	for _, c := range []slacktest.Message{c1, c2} {
		if c.Params.Get("parse") != "none" || c.Params.Get("link_names") != "false" || c.Params.Get("unfurl_links") != "false" {
			t.Errorf("card posted without parse=none/link_names=false/unfurl_links=false: %v", c.Params)
		}
		var acts []string
		for _, b := range slacktest.Buttons(c.Blocks) {
			acts = append(acts, b.ActionID)
		}
		want := []string{action(render.ActionAllowOnce, a.id), action(render.ActionAllowSession, a.id), action(render.ActionDeny, a.id)}
		if strings.Join(acts, ",") != strings.Join(want, ",") {
			t.Errorf("buttons %v, want %v", acts, want)
		}
		if !strings.Contains(slacktest.BlockText(c.Blocks), "rm -rf ./build-e2e-1") {
			t.Errorf("card does not show the action: %s", c.Blocks)
		}
	}
	if err := e.fake.Press(e.ctx(), alice, chan2, c2.TS, action(render.ActionAllowOnce, a.id)); err != nil {
		t.Fatal(err)
	}
	got := e.answer(a)
	mustState(t, got, "allowed", "allow_once")
	if got["allowed"] != true || !strings.Contains(str(got, "decided_by"), "slack:T0FAKE:U0ALICE") {
		t.Fatalf("agent answer %v", got)
	}
	for _, c := range []slacktest.Message{c1, c2} {
		r := e.resolved(c.Channel, c.TS)
		text := slacktest.BlockText(r.Blocks)
		if !strings.Contains(text, "Allowed once") || !strings.Contains(text, "U0ALICE") || !strings.Contains(text, "rm -rf ./build-e2e-1") {
			t.Errorf("resolved card %s does not show outcome, decider and action:\n%s", c.Channel, text)
		}
	}
	// Every envelope was acknowledged within Slack's 3 s.
	e.fake.Do(func(st *slacktest.State) {
		for id, d := range st.Acks() {
			if d > time.Second {
				t.Errorf("envelope %s acknowledged after %s", id, d)
			}
		}
	})
	// The loser of the race — a press on the stale card after the decision — is told so.
	if err := e.fake.PressStale(e.ctx(), bob, chan1, c1.TS, action(render.ActionDeny, a.id)); err != nil {
		t.Fatal(err)
	}
	e.ephemeral("U0BOB", "Already decided (allow_once)")
	if g := e.get(a.id); str(g, "outcome") != "allow_once" {
		t.Fatalf("the loser changed the decision: %v", g)
	}
}

func TestStrangerAndWrongTeamChangeNothing(t *testing.T) {
	t.Parallel()
	e := start(t, setup{})
	a := e.ask("rm -rf ./build-e2e-2")
	c := e.card(chan1, a.id)
	for _, u := range []slacktest.User{mallory, aliceElse} {
		for _, act := range []render.Action{render.ActionAllowOnce, render.ActionDeny} {
			if err := e.fake.Press(e.ctx(), u, chan1, c.TS, action(act, a.id)); err != nil {
				t.Fatal(err)
			}
		}
	}
	// A stranger's slash command and thread reply are refused too.
	if err := e.fake.Slash(e.ctx(), mallory, chan1, slash, "approve"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.fake.Reply(e.ctx(), aliceElse, chan1, c.TS, "approve"); err != nil {
		t.Fatal(err)
	}
	// 4 presses + 1 slash + 1 reply: each answered privately, each audited.
	err := e.fake.Wait(e.ctx(), func(st *slacktest.State) bool {
		n := 0
		for _, m := range st.Ephemerals("") {
			if m.Text == "You are not an approver here. Nothing was changed." {
				n++
			}
		}
		return n == 6
	})
	if err != nil {
		var all []slacktest.Ephemeral
		e.fake.Do(func(st *slacktest.State) { all = st.Ephemerals("") })
		t.Fatalf("want 6 refusals, got %+v", all)
	}
	g := e.get(a.id)
	if str(g, "state") != "pending" {
		t.Fatalf("a stranger changed the request: %v", g)
	}
	var actors []string
	for _, en := range e.audit(a.id) {
		if en["event"] == "unauthorized" {
			actors = append(actors, str(en, "actor"))
		}
	}
	if len(actors) != 5 { // the slash command without an id names no request
		t.Fatalf("want 5 unauthorized audit entries for the request, got %v", actors)
	}
	joined := strings.Join(actors, "\n")
	for _, who := range []string{"T0FAKE:U0MALLORY", "T0OTHER:U0ALICE"} {
		if !strings.Contains(joined, who) {
			t.Errorf("no audit entry names %s: %v", who, actors)
		}
	}
	e.fake.Do(func(st *slacktest.State) {
		m, _ := st.Message(chan1, c.TS)
		if m.Updates != 0 || len(st.Views()) != 0 {
			t.Errorf("a stranger's press edited the card (%d) or opened a modal (%d)", m.Updates, len(st.Views()))
		}
	})
	// The right approver still decides.
	if err := e.fake.Press(e.ctx(), alice, chan1, c.TS, action(render.ActionAllowSession, a.id)); err != nil {
		t.Fatal(err)
	}
	mustState(t, e.answer(a), "allowed", "allow_session")
}

func TestDenyModalReasonReachesAgent(t *testing.T) {
	t.Parallel()
	e := start(t, setup{})
	a := e.ask("rm -rf ./build-e2e-3")
	c := e.card(chan1, a.id)
	if err := e.fake.Press(e.ctx(), bob, chan1, c.TS, action(render.ActionDeny, a.id)); err != nil {
		t.Fatal(err)
	}
	var view slacktest.View
	if err := e.fake.Wait(e.ctx(), func(st *slacktest.State) bool {
		if vs := st.Views(); len(vs) == 1 {
			view = vs[0]
			return true
		}
		return false
	}); err != nil {
		t.Fatal("no modal opened")
	}
	if view.User.ID != "U0BOB" || str(e.get(a.id), "state") != "pending" {
		t.Fatalf("modal for %v; request %v", view.User, e.get(a.id))
	}
	if _, err := e.fake.SubmitView(e.ctx(), bob, view.ID, "wrong directory, use /tmp"); err != nil {
		t.Fatal(err)
	}
	got := e.answer(a)
	mustState(t, got, "denied", "deny")
	if !strings.Contains(str(got, "message"), `The user said: "wrong directory, use /tmp"`) {
		t.Fatalf("agent message %q", str(got, "message"))
	}
	for _, ch := range []string{chan1, chan2} {
		cc := e.card(ch, a.id)
		text := slacktest.BlockText(e.resolved(ch, cc.TS).Blocks)
		if !strings.Contains(text, "Denied") || !strings.Contains(text, "wrong directory, use /tmp") {
			t.Errorf("resolved card in %s:\n%s", ch, text)
		}
	}
}

func TestDenyWithoutReason(t *testing.T) {
	t.Parallel()
	e := start(t, setup{window: "2s"})
	t.Run("window passes", func(t *testing.T) {
		a := e.ask("rm -rf ./build-e2e-4a")
		c := e.card(chan1, a.id)
		start := time.Now()
		if err := e.fake.Press(e.ctx(), alice, chan1, c.TS, action(render.ActionDeny, a.id)); err != nil {
			t.Fatal(err)
		}
		got := e.answer(a)
		mustState(t, got, "denied", "deny")
		if d := time.Since(start); d < 2*time.Second {
			t.Errorf("denied after %s, before the 2s reason window", d)
		}
		if strings.Contains(str(got, "message"), "The user said") {
			t.Errorf("a reason appeared from nowhere: %q", str(got, "message"))
		}
		e.resolved(chan1, c.TS)
	})
	t.Run("modal closed", func(t *testing.T) {
		a := e.ask("rm -rf ./build-e2e-4b")
		c := e.card(chan1, a.id)
		if err := e.fake.Press(e.ctx(), alice, chan1, c.TS, action(render.ActionDeny, a.id)); err != nil {
			t.Fatal(err)
		}
		var view slacktest.View
		e.fake.Wait(e.ctx(), func(st *slacktest.State) bool {
			vs := st.Views()
			if len(vs) == 2 {
				view = vs[1]
			}
			return len(vs) == 2
		})
		start := time.Now()
		if err := e.fake.CloseView(e.ctx(), alice, view.ID); err != nil {
			t.Fatal(err)
		}
		mustState(t, e.answer(a), "denied", "deny")
		if d := time.Since(start); d > time.Second {
			t.Errorf("closing the modal took %s to deny (the window's doing, not the close's)", d)
		}
	})
}

func TestFIFOApproveAndPending(t *testing.T) {
	t.Parallel()
	e := start(t, setup{})
	var reqs []*asked
	for i := range 3 {
		reqs = append(reqs, e.ask(fmt.Sprintf("rm -rf ./fifo-%d", i)))
		e.card(chan1, reqs[i].id)
	}
	if err := e.fake.Slash(e.ctx(), alice, chan1, slash, "pending"); err != nil {
		t.Fatal(err)
	}
	p := e.ephemeral("U0ALICE", "3 waiting (oldest first)")
	if i0, i1, i2 := strings.Index(p.Text, reqs[0].id), strings.Index(p.Text, reqs[1].id), strings.Index(p.Text, reqs[2].id); !(i0 >= 0 && i0 < i1 && i1 < i2) {
		t.Fatalf("pending list not oldest first: %q", p.Text)
	}
	if err := e.fake.Slash(e.ctx(), alice, chan1, slash, "approve"); err != nil {
		t.Fatal(err)
	}
	mustState(t, e.answer(reqs[0]), "allowed", "allow_once")
	e.ephemeral("U0ALICE", "Allowed (allow_once).")
	for _, r := range reqs[1:] {
		if g := e.get(r.id); str(g, "state") != "pending" {
			t.Fatalf("FIFO approve touched a newer request: %v", g)
		}
	}
	// "/approvebot deny <reason>" takes the next oldest, with the reason.
	if err := e.fake.Slash(e.ctx(), bob, chan1, slash, "deny not now"); err != nil {
		t.Fatal(err)
	}
	got := e.answer(reqs[1])
	mustState(t, got, "denied", "deny")
	if !strings.Contains(str(got, "message"), `The user said: "not now"`) {
		t.Fatalf("message %q", str(got, "message"))
	}
	// An explicit id wins over FIFO; loose text is not a command.
	if err := e.fake.Slash(e.ctx(), alice, chan1, slash, "approve please"); err != nil {
		t.Fatal(err)
	}
	e.ephemeral("U0ALICE", "Usage: /approvebot approve")
	if err := e.fake.Slash(e.ctx(), alice, chan1, slash, "approve "+reqs[2].id); err != nil {
		t.Fatal(err)
	}
	mustState(t, e.answer(reqs[2]), "allowed", "allow_once")
}

func TestThreadReplyTargetsThatCard(t *testing.T) {
	t.Parallel()
	e := start(t, setup{})
	first := e.ask("rm -rf ./thread-1")
	e.card(chan1, first.id)
	second := e.ask("rm -rf ./thread-2")
	c2 := e.card(chan1, second.id)
	// approvebot records the card's ts (what a thread reply is matched with) right after
	// Slack answers the post; a human reads the card before replying.
	e.srv.WaitCards(t, second.id, 1)
	// Chat in the thread is not a command.
	if _, err := e.fake.Reply(e.ctx(), alice, chan1, c2.TS, "allow me to look first"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.fake.Reply(e.ctx(), alice, chan1, c2.TS, "deny wrong directory, use /tmp"); err != nil {
		t.Fatal(err)
	}
	got := e.answer(second)
	mustState(t, got, "denied", "deny")
	if !strings.Contains(str(got, "message"), `The user said: "wrong directory, use /tmp"`) {
		t.Fatalf("message %q", str(got, "message"))
	}
	if g := e.get(first.id); str(g, "state") != "pending" {
		t.Fatalf("the reply touched the other (older) request: %v", g)
	}
	// A reply in a decided card's thread changes nothing, and never falls back to FIFO.
	if _, err := e.fake.Reply(e.ctx(), alice, chan1, c2.TS, "approve"); err != nil {
		t.Fatal(err)
	}
	e.ephemeral("U0ALICE", "not a request waiting for a decision")
	if g := e.get(first.id); str(g, "state") != "pending" {
		t.Fatalf("a reply to a decided card approved another request: %v", g)
	}
	c1 := e.card(chan1, first.id)
	if _, err := e.fake.Reply(e.ctx(), bob, chan1, c1.TS, "<@UBOT> approve"); err != nil {
		t.Fatal(err)
	}
	mustState(t, e.answer(first), "allowed", "allow_once")
}

func TestTimeoutAndCancelEditTheCard(t *testing.T) {
	t.Parallel()
	e := start(t, setup{server: `approval_timeout = "2s"`})
	a := e.ask("rm -rf ./timeout")
	c := e.card(chan1, a.id)
	mustState(t, e.answer(a), "denied", "timeout")
	if text := slacktest.BlockText(e.resolved(chan1, c.TS).Blocks); !strings.Contains(text, "Expired") {
		t.Errorf("timed-out card:\n%s", text)
	}
	// A press on the expired card is answered privately and changes nothing.
	if err := e.fake.PressStale(e.ctx(), alice, chan1, c.TS, action(render.ActionAllowOnce, a.id)); err != nil {
		t.Fatal(err)
	}
	e.ephemeral("U0ALICE", "This request expired")

	b := e.ask("rm -rf ./cancel")
	cb := e.card(chan2, b.id)
	code, got := e.srv.JSON(t, "DELETE", "/v1/requests/"+b.id, testserver.AgentToken, nil)
	if code != 200 {
		t.Fatalf("cancel: %d %v", code, got)
	}
	mustState(t, got, "denied", "cancelled")
	if text := slacktest.BlockText(e.resolved(chan2, cb.TS).Blocks); !strings.Contains(text, "Cancelled") {
		t.Errorf("cancelled card:\n%s", text)
	}

	// An operator's decision over the API edits the cards too.
	o := e.ask("rm -rf ./operator")
	co := e.card(chan1, o.id)
	code, got = e.srv.JSON(t, "POST", "/v1/requests/"+o.id+"/decision", testserver.OperatorToken, map[string]any{"outcome": "deny", "reason": "not today"})
	if code != 200 {
		t.Fatalf("operator decision: %d %v", code, got)
	}
	mustState(t, e.answer(o), "denied", "deny")
	if text := slacktest.BlockText(e.resolved(chan1, co.TS).Blocks); !strings.Contains(text, "Denied") || !strings.Contains(text, "not today") || !strings.Contains(text, "operator") {
		t.Errorf("card after the operator's decision:\n%s", text)
	}
}

func TestKillAndRestartWithLiveCard(t *testing.T) {
	t.Parallel()
	e := start(t, setup{server: `approval_timeout = "30s"`})
	a := e.ask("rm -rf ./restart-live")
	c := e.card(chan1, a.id)
	e.card(chan2, a.id)
	// A second request whose Deny form is open when approvebot dies.
	b := e.ask("rm -rf ./restart-modal")
	cb := e.card(chan1, b.id)
	if err := e.fake.Press(e.ctx(), bob, chan1, cb.TS, action(render.ActionDeny, b.id)); err != nil {
		t.Fatal(err)
	}
	var view slacktest.View
	e.fake.Wait(e.ctx(), func(st *slacktest.State) bool {
		vs := st.Views()
		if len(vs) == 1 {
			view = vs[0]
		}
		return len(vs) == 1
	})
	e.srv.WaitCards(t, a.id, 2)
	e.srv.WaitCards(t, b.id, 1)
	e.srv.Kill()
	e.srv = e.srv.Restart(t)
	e.waitReady()
	// The form is submitted to the new process, which never saw the press: still denied,
	// with the reason.
	if _, err := e.fake.SubmitView(e.ctx(), bob, view.ID, "after the restart"); err != nil {
		t.Fatal(err)
	}
	gotB := e.poll(b.id)
	mustState(t, gotB, "denied", "deny")
	if !strings.Contains(str(gotB, "message"), `The user said: "after the restart"`) {
		t.Fatalf("message %q", str(gotB, "message"))
	}
	if err := e.fake.Press(e.ctx(), alice, chan1, c.TS, action(render.ActionAllowOnce, a.id)); err != nil {
		t.Fatal(err)
	}
	mustState(t, e.poll(a.id), "allowed", "allow_once")
	e.resolved(chan1, c.TS)
	e.resolved(chan2, e.card(chan2, a.id).TS)
	e.fake.Do(func(st *slacktest.State) {
		if n := len(st.Messages(chan1)); n != 2 {
			t.Errorf("restart posted a card again: %d messages", n)
		}
	})
}

func TestKillAndRestartAfterDeadline(t *testing.T) {
	t.Parallel()
	e := start(t, setup{server: `approval_timeout = "2s"`})
	a := e.ask("rm -rf ./restart-expired")
	c := e.card(chan1, a.id)
	e.card(chan2, a.id)
	e.srv.WaitCards(t, a.id, 2)
	deadline := e.srv.ExpiresAt(t, a.id)
	e.srv.Kill()
	testserver.SleepUntil(deadline) // the deadline passes while approvebot is down
	e.srv = e.srv.Restart(t)
	e.waitReady()
	mustState(t, e.poll(a.id), "denied", "timeout")
	if text := slacktest.BlockText(e.resolved(chan1, c.TS).Blocks); !strings.Contains(text, "Expired") {
		t.Errorf("card after restart:\n%s", text)
	}
	if err := e.fake.PressStale(e.ctx(), alice, chan1, c.TS, action(render.ActionAllowOnce, a.id)); err != nil {
		t.Fatal(err)
	}
	e.ephemeral("U0ALICE", "This request expired")
	mustState(t, e.get(a.id), "denied", "timeout")
}

func TestSocketReconnectLosesNothing(t *testing.T) {
	t.Parallel()
	e := start(t, setup{})
	a := e.ask("rm -rf ./reconnect-1")
	c := e.card(chan1, a.id)
	// A network failure: the websocket dies without a close frame.
	e.fake.Drop()
	if err := e.fake.Wait(e.ctx(), func(st *slacktest.State) bool { return st.Connects() >= 2 && st.LiveConns() >= 1 }); err != nil {
		t.Fatalf("no reconnection after a drop:\n%s", e.srv.Logs())
	}
	if err := e.fake.Press(e.ctx(), alice, chan1, c.TS, action(render.ActionAllowOnce, a.id)); err != nil {
		t.Fatal(err)
	}
	mustState(t, e.answer(a), "allowed", "allow_once")
	e.resolved(chan1, c.TS)

	// Slack asks for a reconnect (disconnect envelope) while a press is on its way: the
	// press is delivered on the new connection and acknowledged there.
	b := e.ask("rm -rf ./reconnect-2")
	cb := e.card(chan2, b.id)
	e.fake.Disconnect()
	e.fake.Drop()
	if err := e.fake.Press(e.ctx(), bob, chan2, cb.TS, action(render.ActionAllowSession, b.id)); err != nil {
		t.Fatal(err)
	}
	mustState(t, e.answer(b), "allowed", "allow_session")
	e.resolved(chan2, cb.TS)
}

func TestRateLimitStormLosesNothing(t *testing.T) {
	t.Parallel()
	e := start(t, setup{})
	// Every Web API call is rate limited for a while: posts, edits and answers all wait
	// Retry-After and go through.
	e.fake.RateLimit("chat.postMessage", 2, 1)
	e.fake.ServerError("chat.postMessage", 1, 503)
	a := e.ask("rm -rf ./storm")
	c1 := e.card(chan1, a.id)
	c2 := e.card(chan2, a.id)
	e.fake.RateLimit("chat.update", 2, 1)
	e.fake.RateLimit("chat.postEphemeral", 1, 1)
	if err := e.fake.Press(e.ctx(), mallory, chan1, c1.TS, action(render.ActionAllowOnce, a.id)); err != nil {
		t.Fatal(err)
	}
	e.ephemeral("U0MALLORY", "You are not an approver here")
	if err := e.fake.Press(e.ctx(), alice, chan1, c1.TS, action(render.ActionAllowOnce, a.id)); err != nil {
		t.Fatal(err)
	}
	mustState(t, e.answer(a), "allowed", "allow_once")
	e.resolved(chan1, c1.TS)
	e.resolved(chan2, c2.TS)
	e.fake.Do(func(st *slacktest.State) {
		limited := 0
		for _, call := range st.Calls("") {
			if call.Status == 429 {
				limited++
			}
		}
		if limited != 5 {
			t.Errorf("want 5 rate-limited calls, got %d", limited)
		}
		if n := len(st.Messages(chan1)) + len(st.Messages(chan2)); n != 2 {
			t.Errorf("want exactly 2 cards, got %d", n)
		}
	})
}

func TestHTTPModeSignedPressAndForgedOrStaleRejected(t *testing.T) {
	t.Parallel()
	e := start(t, setup{mode: "http"})
	a := e.ask("rm -rf ./http-mode")
	c := e.card(chan1, a.id)
	target := e.srv.URL + "/slack/events"
	payload, err := e.fake.PressPayload(alice, chan1, c.TS, action(render.ActionAllowOnce, a.id), false)
	if err != nil {
		t.Fatal(err)
	}
	d, err := slacktest.Encode("interactive", payload)
	if err != nil {
		t.Fatal(err)
	}
	send := func(name string, req *http.Request, want int) {
		t.Helper()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("%s: status %d, want %d", name, resp.StatusCode, want)
		}
	}
	forged, _ := slacktest.SignedRequest(e.ctx(), target, d, "not-the-signing-secret", time.Now())
	send("forged", forged, 401)
	stale, _ := slacktest.SignedRequest(e.ctx(), target, d, signingSecret, time.Now().Add(-6*time.Minute))
	send("stale", stale, 401)
	unsigned, _ := http.NewRequest("POST", target, strings.NewReader(string(d.Body)))
	unsigned.Header.Set("Content-Type", d.ContentType)
	send("unsigned", unsigned, 401)
	// A valid signature over a different body (tampered payload) is forged too.
	tampered, _ := slacktest.SignedRequest(e.ctx(), target, d, signingSecret, time.Now())
	tampered.Body = http.NoBody
	tampered.ContentLength = 0
	send("tampered", tampered, 401)
	big := slacktest.HTTPDelivery{ContentType: d.ContentType, Body: []byte("payload=" + strings.Repeat("x", 300<<10))}
	huge, _ := slacktest.SignedRequest(e.ctx(), target, big, signingSecret, time.Now())
	send("oversized", huge, 413)

	if g := e.get(a.id); str(g, "state") != "pending" {
		t.Fatalf("a rejected request decided: %v", g)
	}
	_, m := e.srv.JSON(t, "GET", "/v1/audit?since=1h", testserver.OperatorToken, nil)
	rejected := 0
	for _, x := range m["entries"].([]any) {
		en := x.(map[string]any)
		if en["event"] == "unauthorized" && strings.Contains(str(en, "reason"), "rejected Slack request") {
			rejected++
		}
	}
	if rejected != 4 {
		t.Fatalf("want 4 audited rejections, got %d: %v", rejected, m["entries"])
	}
	// The genuine, signed press works; replaying it changes nothing.
	good, _ := slacktest.SignedRequest(e.ctx(), target, d, signingSecret, time.Now())
	send("signed", good, 200)
	mustState(t, e.answer(a), "allowed", "allow_once")
	e.resolved(chan1, c.TS)

	// Modal deny and slash commands over HTTP too.
	b := e.ask("rm -rf ./http-mode-2")
	cb := e.card(chan2, b.id)
	if err := e.fake.Press(e.ctx(), alice, chan2, cb.TS, action(render.ActionDeny, b.id)); err != nil {
		t.Fatal(err)
	}
	var view slacktest.View
	e.fake.Wait(e.ctx(), func(st *slacktest.State) bool {
		vs := st.Views()
		if len(vs) == 1 {
			view = vs[0]
		}
		return len(vs) == 1
	})
	if _, err := e.fake.SubmitView(e.ctx(), alice, view.ID, "not over http"); err != nil {
		t.Fatal(err)
	}
	got := e.answer(b)
	if !strings.Contains(str(got, "message"), `The user said: "not over http"`) {
		t.Fatalf("message %q", str(got, "message"))
	}
	if err := e.fake.Slash(e.ctx(), mallory, chan2, slash, "pending"); err != nil {
		t.Fatal(err)
	}
	e.ephemeral("U0MALLORY", "You are not an approver here")
}

func TestFatalAuthErrorStopsTheChannelLoudly(t *testing.T) {
	t.Parallel()
	fake, err := slacktest.New(slacktest.Options{BotToken: botToken, AppToken: appToken, TeamID: team, Channels: []string{chan1}})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	// The app token lacks connections:write: the library would retry forever.
	fake.FailWith("apps.connections.open", -1, "missing_scope")
	s := testserver.Start(t, testserver.Options{
		Server: `approval_timeout = "30s"`,
		Config: fmt.Sprintf("[channels.slack]\napi_url = %q\nchannels = [%q]\napprovers = [\"U0ALICE\"]\n", fake.APIURL(), chan1),
		Env:    []string{"APPROVEBOT_SLACK_BOT_TOKEN=" + botToken, "APPROVEBOT_SLACK_APP_TOKEN=" + appToken},
	})
	deadline := time.Now().Add(20 * time.Second)
	var h map[string]any
	for time.Now().Before(deadline) {
		_, h = s.JSON(t, "GET", "/healthz", "", nil)
		ch, _ := h["channels"].(map[string]any)["slack"].(map[string]any)
		if strings.Contains(str(ch, "detail"), "stopped: missing_scope") && ch["ok"] == false {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	testserver.Eventually(t, 10*time.Second, "a loud stop in the logs (health "+fmt.Sprint(h)+")", func() bool {
		return strings.Contains(s.Logs(), "slack channel stopped")
	})
	var opens int
	fake.Do(func(st *slacktest.State) { opens = len(st.Calls("apps.connections.open")) })
	time.Sleep(1500 * time.Millisecond)
	fake.Do(func(st *slacktest.State) {
		if n := len(st.Calls("apps.connections.open")); n != opens || n > 3 {
			t.Errorf("still looping on apps.connections.open: %d then %d calls", opens, n)
		}
	})
	// With no way to hear a press, a request is not left on a dead card: it falls back (deny).
	code, got := s.JSON(t, "POST", "/v1/requests", testserver.AgentToken, map[string]any{
		"tool": "bash", "args": map[string]any{"command": "rm -rf ./fatal"}, "session": "s1", "wait": "10s"})
	if code != 200 || str(got, "state") != "denied" || str(got, "source") != "fallback" {
		t.Fatalf("want an immediate fallback deny, got %d %v", code, got)
	}
	for _, sec := range secretVals {
		if strings.Contains(s.Logs(), sec) {
			t.Errorf("a secret appeared in the logs")
		}
	}
}

func TestStartupFailsClearlyWithoutTokens(t *testing.T) {
	t.Parallel()
	fake, err := slacktest.New(slacktest.Options{BotToken: botToken, AppToken: appToken, TeamID: team, Channels: []string{chan1}})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	for _, tc := range []struct {
		name, config string
		env          []string
		want         string
	}{
		{"no bot token", "approvers = [\"U0ALICE\"]", nil, "APPROVEBOT_SLACK_BOT_TOKEN is not set"},
		{"no app token", "approvers = [\"U0ALICE\"]", []string{"APPROVEBOT_SLACK_BOT_TOKEN=" + botToken}, "app-level token"},
		{"username approver", "approvers = [\"@alice\"]", []string{"APPROVEBOT_SLACK_BOT_TOKEN=" + botToken, "APPROVEBOT_SLACK_APP_TOKEN=" + appToken}, "not a Slack user id"},
		{"channel name", "approvers = [\"U0ALICE\"]\nchannels = [\"#ops\"]", []string{"APPROVEBOT_SLACK_BOT_TOKEN=" + botToken, "APPROVEBOT_SLACK_APP_TOKEN=" + appToken}, "not a channel id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := runServe(t, fmt.Sprintf("[channels.slack]\napi_url = %q\n%s\n", fake.APIURL(), tc.config), tc.env)
			if !strings.Contains(out, tc.want) {
				t.Fatalf("want %q in:\n%s", tc.want, out)
			}
		})
	}
}

// runServe runs `approvebot serve` on a config expected to fail, and returns its output.
func runServe(t *testing.T, channels string, env []string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf("[server]\nlisten = \"127.0.0.1:0\"\ndata = %q\n\n[[agents]]\nname = \"agent\"\ntoken_env = \"TEST_AGENT_TOKEN\"\nrole = \"agent\"\n\n%s",
		filepath.Join(dir, "db"), channels)
	path := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, testserver.Binary(t), "serve", "-config", path)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TEST_AGENT_TOKEN="+testserver.AgentToken)
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("serve succeeded on a bad config:\n%s", out)
	}
	return string(out)
}

func TestDetailsPressShowsTheWholeActionPrivately(t *testing.T) {
	t.Parallel()
	e := start(t, setup{})
	long := "rm -rf ./" + strings.Repeat("segment-", 40) + "THE-END"
	a := e.askMatching(long, long[:60])
	c := e.card(chan1, a.id)
	var acts []string
	for _, b := range slacktest.Buttons(c.Blocks) {
		acts = append(acts, b.ActionID)
	}
	if !strings.Contains(strings.Join(acts, " "), action(render.ActionDetails, a.id)) {
		t.Fatalf("no Details button on a cut card: %v", acts)
	}
	if err := e.fake.Press(e.ctx(), mallory, chan1, c.TS, action(render.ActionDetails, a.id)); err != nil {
		t.Fatal(err)
	}
	e.ephemeral("U0MALLORY", "You are not an approver here")
	if err := e.fake.Press(e.ctx(), alice, chan1, c.TS, action(render.ActionDetails, a.id)); err != nil {
		t.Fatal(err)
	}
	err := e.fake.Wait(e.ctx(), func(st *slacktest.State) bool {
		for _, m := range st.Ephemerals("U0ALICE") {
			if strings.Contains(slacktest.BlockText(m.Blocks), "THE-END") {
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Fatal("the details never reached the approver")
	}
	if g := e.get(a.id); str(g, "state") != "pending" {
		t.Fatalf("details decided something: %v", g)
	}
}
