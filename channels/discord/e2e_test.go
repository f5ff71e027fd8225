package discord_test

// End-to-end tests: the real approvebot binary (internal/testserver) against the fake
// Discord of discordtest (REST API and gateway on 127.0.0.1), driven the way a human
// would drive Discord.

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/approvebot/approvebot/channels/discord/discordtest"
	"github.com/approvebot/approvebot/internal/testserver"
)

const (
	botToken = "MTEwMDAwMDAwMDAwMDAwMDAwMg.Gx7Lq2.fake-discord-bot-token-for-tests_0123456789"
	guild    = "800000000000000001"
	chanA    = "900000000000000001"
	chanB    = "900000000000000002"
	chanX    = "900000000000000009" // a channel of the guild where no card goes
	agentTok = testserver.AgentToken
	opTok    = testserver.OperatorToken
)

var (
	approver  = discordtest.User{ID: "700000000000000001", Username: "alice", Nick: "Alice"}
	approver2 = discordtest.User{ID: "700000000000000002", Username: "bob"}
	stranger  = discordtest.User{ID: "700000000000000666", Username: "mallory"}
)

type env struct {
	t    *testing.T
	fake *discordtest.Server
	srv  *testserver.Server
}

type envOpts struct {
	server string // extra [server] lines
	extra  string // extra [channels.discord] lines
	window string // deny_reason_window (default 3s)
	fake   *discordtest.Server
	dir    string
}

func startEnv(t *testing.T, o envOpts) *env {
	t.Helper()
	fake := o.fake
	if fake == nil {
		fake = discordtest.Start(t, discordtest.Options{Token: botToken, Channels: map[string]string{chanA: guild, chanB: guild, chanX: guild}})
	}
	server := o.server
	if server == "" {
		server = `approval_timeout = "60s"`
	}
	window := o.window
	if window == "" {
		window = "3s"
	}
	cfg := configFor(fake, fmt.Sprintf("deny_reason_window = %q\n%s", window, o.extra))
	srv := testserver.Start(t, testserver.Options{Server: server, Config: cfg, Env: []string{"TEST_DISCORD_TOKEN=" + botToken}, Dir: o.dir})
	e := &env{t: t, fake: fake, srv: srv}
	if !strings.Contains(o.extra, `mode = "http"`) {
		fake.Wait(t, 20*time.Second, "the gateway connection", fake.Connected)
	}
	fake.Wait(t, 20*time.Second, "command registration", func() bool { return len(fake.Commands(guild)) > 0 })
	t.Cleanup(func() {
		if t.Failed() {
			return
		}
		if rej := fake.Rejections(); len(rej) > 0 {
			t.Errorf("the fake Discord rejected %d request(s): %+v", len(rej), rej)
		}
		if strings.Contains(srv.Logs(), botToken) || strings.Contains(srv.Logs(), "fake-discord-bot-token") {
			t.Errorf("the bot token appears in approvebot's logs")
		}
		for _, report := range raceReports(srv.Logs()) {
			// discordgo has a known race between a log call and its own reconnect (in the
			// library only); any report that touches approvebot's code fails the test.
			if strings.Contains(report, "github.com/approvebot/approvebot/") {
				t.Errorf("data race in approvebot:\n%s", report)
			} else {
				t.Logf("data race inside a dependency (not approvebot's code):\n%s", report)
			}
		}
	})
	return e
}

// raceReports splits the race detector's reports out of a log.
func raceReports(logs string) []string {
	var out []string
	for _, part := range strings.Split(logs, "WARNING: DATA RACE")[1:] {
		if end := strings.Index(part, "=================="); end >= 0 {
			part = part[:end]
		}
		out = append(out, part)
	}
	return out
}

func (e *env) ask(session, command string) string {
	e.t.Helper()
	code, m := e.srv.JSON(e.t, "POST", "/v1/requests", agentTok, map[string]any{
		"tool": "bash", "args": map[string]any{"command": command}, "session": session,
	})
	if code != 202 || m["state"] != "pending" {
		e.t.Fatalf("want a pending request, got %d %v", code, m)
	}
	return m["id"].(string)
}

func (e *env) get(id string) map[string]any {
	e.t.Helper()
	_, m := e.srv.JSON(e.t, "GET", "/v1/requests/"+id, agentTok, nil)
	return m
}

// waitDecided long-polls the request until it is decided.
func (e *env) waitDecided(id string) map[string]any {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		code, m := e.srv.JSON(e.t, "GET", "/v1/requests/"+id+"?wait=10s", agentTok, nil)
		if code == 200 && m["state"] != "pending" {
			return m
		}
	}
	e.t.Fatalf("request %s was not decided in time: %v", id, e.get(id))
	return nil
}

// card waits for the card of request id in a channel and returns it.
func (e *env) card(channel, id string) discordtest.Message {
	e.t.Helper()
	var found discordtest.Message
	e.fake.Wait(e.t, 20*time.Second, "the card of "+id+" in "+channel, func() bool {
		for _, m := range e.fake.Cards(channel) {
			if strings.Contains(m.Content, id) {
				found = m
				return true
			}
		}
		return false
	})
	return found
}

// cardsOf returns every card message of request id, across channels.
func (e *env) cardsOf(id string) []discordtest.Message {
	var out []discordtest.Message
	for _, ch := range []string{chanA, chanB, chanX} {
		for _, m := range e.fake.Cards(ch) {
			if strings.Contains(m.Content, id) {
				out = append(out, m)
			}
		}
	}
	return out
}

// waitResolved waits until every card of id has no buttons and contains want.
func (e *env) waitResolved(id, want string) {
	e.t.Helper()
	e.fake.Wait(e.t, 20*time.Second, "every card of "+id+" resolved with "+strconv.Quote(want), func() bool {
		cards := e.cardsOf(id)
		if len(cards) == 0 {
			return false
		}
		for _, m := range cards {
			if len(m.Buttons()) > 0 || !strings.Contains(m.Content, want) {
				return false
			}
		}
		return true
	})
}

// botAnswer waits for the bot's answer to message msg in channel and returns it: the bot
// answers every command it reads, after the decision (or the refusal) is made.
func (e *env) botAnswer(channel, msg string) discordtest.Message {
	e.t.Helper()
	var answer discordtest.Message
	e.fake.Wait(e.t, 10*time.Second, "the bot's answer to "+msg, func() bool {
		for _, x := range e.fake.Messages(channel) {
			if x.Bot && x.ReplyTo == msg {
				answer = x
				return true
			}
		}
		return false
	})
	return answer
}

func button(action, id string) string { return "ab1:" + action + ":" + id }

func (e *env) audit(id string) []map[string]any {
	e.t.Helper()
	code, m := e.srv.JSON(e.t, "GET", "/v1/audit?request="+id, opTok, nil)
	if code != 200 {
		e.t.Fatalf("audit: %d %v", code, m)
	}
	var out []map[string]any
	for _, x := range m["entries"].([]any) {
		out = append(out, x.(map[string]any))
	}
	return out
}

func (e *env) auditAll() []map[string]any {
	e.t.Helper()
	code, m := e.srv.JSON(e.t, "GET", "/v1/audit?limit=1000", opTok, nil)
	if code != 200 {
		e.t.Fatalf("audit: %d %v", code, m)
	}
	var out []map[string]any
	for _, x := range m["entries"].([]any) {
		out = append(out, x.(map[string]any))
	}
	return out
}

func responses(t *testing.T, f *discordtest.Server, interaction string, n int) []discordtest.Response {
	t.Helper()
	return f.WaitResponses(t, interaction, n, 10*time.Second)
}

func mustEphemeral(t *testing.T, r discordtest.Response, want string) {
	t.Helper()
	if r.Kind != "callback" || r.Type != 4 || r.Flags&discordtest.FlagEphemeral == 0 {
		t.Fatalf("want an ephemeral message (type 4, flags 64), got %+v", r)
	}
	if !strings.Contains(r.Content, want) {
		t.Fatalf("ephemeral answer %q lacks %q", r.Content, want)
	}
}

func TestCardInEachChannelApproverPressAllowsAndEditsEveryCard(t *testing.T) {
	t.Parallel()
	e := startEnv(t, envOpts{})
	id := e.ask("s1", "rm -rf ./build")
	a, b := e.card(chanA, id), e.card(chanB, id)
	for _, m := range []discordtest.Message{a, b} {
		want := []string{button("once", id), button("session", id), button("deny", id)}
		if got := m.Buttons(); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("card buttons = %v, want %v", got, want)
		}
		if !strings.Contains(m.Content, "rm -rf ./build") {
			t.Errorf("card does not show the action: %q", m.Content)
		}
	}
	if len(e.fake.Cards(chanX)) != 0 {
		t.Errorf("a card went to a channel that is not configured")
	}
	start := time.Now()
	in := e.fake.Press(t, chanA, a.ID, approver, button("once", id))
	r := responses(t, e.fake, in, 1)[0]
	if r.Type != 7 {
		t.Fatalf("want an update-message response (type 7), got %+v", r)
	}
	if d := r.At.Sub(start); d > 3*time.Second {
		t.Errorf("the press was answered after %s", d)
	}
	m := e.waitDecided(id)
	if m["state"] != "allowed" || m["outcome"] != "allow_once" || m["source"] != "human" {
		t.Fatalf("decision = %v", m)
	}
	if by := m["decided_by"].(string); !strings.Contains(by, "discord:"+approver.ID) {
		t.Errorf("decided_by = %q, want the approver's Discord id", by)
	}
	e.waitResolved(id, "Allowed once")
	for _, c := range e.cardsOf(id) {
		if !strings.Contains(c.Content, "rm -rf ./build") || !strings.Contains(c.Content, approver.ID) {
			t.Errorf("resolved card lacks the action or the decider: %q", c.Content)
		}
	}
	// Health reports the channel.
	_, h := e.srv.JSON(t, "GET", "/healthz", "", nil)
	ch, _ := h["channels"].(map[string]any)["discord"].(map[string]any)
	if ch["ok"] != true {
		t.Errorf("healthz discord = %v", ch)
	}
	// Intents: guild messages, direct messages and message content.
	for _, in := range e.fake.Intents() {
		if in&(1<<9) == 0 || in&(1<<12) == 0 || in&(1<<15) == 0 {
			t.Errorf("identify intents = %b, want GUILD_MESSAGES, DIRECT_MESSAGES and MESSAGE_CONTENT", in)
		}
	}
}

func TestNonApproverPressChangesNothingAndIsAudited(t *testing.T) {
	t.Parallel()
	e := startEnv(t, envOpts{})
	id := e.ask("s1", "terraform destroy")
	a := e.card(chanA, id)
	e.card(chanB, id)
	for _, action := range []string{"once", "deny"} {
		in := e.fake.Press(t, chanA, a.ID, stranger, button(action, id))
		mustEphemeral(t, responses(t, e.fake, in, 1)[0], "not an approver")
	}
	// Each refusal was answered after chatops refused it: nothing is still in flight.
	if m := e.get(id); m["state"] != "pending" {
		t.Fatalf("a stranger's press changed the request: %v", m)
	}
	for _, c := range e.cardsOf(id) {
		if c.Edits != 0 || len(c.Buttons()) != 3 {
			t.Errorf("a stranger's press changed a card: %+v", c)
		}
	}
	n := 0
	for _, en := range e.audit(id) {
		if en["event"] == "unauthorized" && strings.Contains(fmt.Sprint(en["actor"]), "discord:"+stranger.ID) {
			n++
		}
	}
	if n != 2 {
		t.Errorf("want 2 unauthorized audit entries for the stranger, got %d: %v", n, e.audit(id))
	}
	// The approver can still decide.
	in := e.fake.Press(t, chanA, a.ID, approver, button("session", id))
	if r := responses(t, e.fake, in, 1)[0]; r.Type != 7 {
		t.Fatalf("approver press answered %+v", r)
	}
	if m := e.waitDecided(id); m["outcome"] != "allow_session" {
		t.Fatalf("decision = %v", m)
	}
	// The loser of the race (a stale card) gets a private answer and changes nothing.
	in = e.fake.PressStale(t, chanB, e.card(chanB, id).ID, approver2, button("once", id))
	mustEphemeral(t, responses(t, e.fake, in, 1)[0], "Already decided")
	if m := e.get(id); m["outcome"] != "allow_session" {
		t.Fatalf("the loser changed the decision: %v", m)
	}
}

func TestDenyModalReasonReachesAgent(t *testing.T) {
	t.Parallel()
	e := startEnv(t, envOpts{})
	id := e.ask("s1", "rm -rf /srv/data")
	a := e.card(chanA, id)
	e.card(chanB, id)
	in := e.fake.Press(t, chanA, a.ID, approver, button("deny", id))
	r := responses(t, e.fake, in, 1)[0]
	if r.Type != 9 {
		t.Fatalf("Deny should open a modal (type 9), got %+v", r)
	}
	sub := e.fake.SubmitModal(t, in, approver, map[string]string{"reason": "wrong directory, use /tmp"})
	if r := responses(t, e.fake, sub, 1)[0]; r.Type != 7 {
		t.Fatalf("modal submit answered %+v", r)
	}
	m := e.waitDecided(id)
	if m["outcome"] != "deny" || m["reason"] != "wrong directory, use /tmp" {
		t.Fatalf("decision = %v", m)
	}
	if msg := m["message"].(string); !strings.Contains(msg, `The user said: "wrong directory, use /tmp"`) {
		t.Errorf("agent message %q does not quote the human", msg)
	}
	e.waitResolved(id, "Denied")
	for _, c := range e.cardsOf(id) {
		if !strings.Contains(c.Content, "wrong directory, use /tmp") {
			t.Errorf("resolved card lacks the reason: %q", c.Content)
		}
	}
}

func TestDenyWithoutReasonAfterWindow(t *testing.T) {
	t.Parallel()
	e := startEnv(t, envOpts{window: "1s"})
	id := e.ask("s1", "dropdb prod")
	a := e.card(chanA, id)
	in := e.fake.Press(t, chanA, a.ID, approver, button("deny", id))
	if r := responses(t, e.fake, in, 1)[0]; r.Type != 9 {
		t.Fatalf("want a modal, got %+v", r)
	}
	if m := e.get(id); m["state"] != "pending" {
		t.Fatalf("denied before the window passed: %v", m)
	}
	m := e.waitDecided(id)
	if m["outcome"] != "deny" || m["reason"] != "" || m["source"] != "human" {
		t.Fatalf("decision = %v", m)
	}
	e.waitResolved(id, "Denied")
	// A late submit after the window changes nothing.
	sub := e.fake.SubmitModal(t, in, approver, map[string]string{"reason": "too late"})
	mustEphemeral(t, responses(t, e.fake, sub, 1)[0], "Already decided")
	if m := e.get(id); m["reason"] != "" {
		t.Fatalf("a late reason changed the decision: %v", m)
	}
}

func TestSlashCommandsFIFOAndTargeted(t *testing.T) {
	t.Parallel()
	e := startEnv(t, envOpts{})
	var ids []string
	for i := range 3 {
		ids = append(ids, e.ask("s1", fmt.Sprintf("make deploy-%d", i)))
		e.card(chanA, ids[i])
		e.card(chanB, ids[i])
		time.Sleep(20 * time.Millisecond)
	}
	// /pending lists all three, oldest first.
	in := e.fake.Slash(t, chanA, approver, "pending", nil)
	r := responses(t, e.fake, in, 1)[0]
	mustEphemeral(t, r, "3 waiting")
	if i0, i2 := strings.Index(r.Content, ids[0]), strings.Index(r.Content, ids[2]); i0 < 0 || i2 < 0 || i0 > i2 {
		t.Errorf("/pending is not oldest first: %q", r.Content)
	}
	// /approve without an id: the oldest.
	in = e.fake.Slash(t, chanA, approver, "approve", nil)
	mustEphemeral(t, responses(t, e.fake, in, 1)[0], "Allowed")
	if m := e.waitDecided(ids[0]); m["outcome"] != "allow_once" {
		t.Fatalf("oldest: %v", m)
	}
	for _, id := range ids[1:] {
		if m := e.get(id); m["state"] != "pending" {
			t.Fatalf("FIFO /approve decided %s too: %v", id, m)
		}
	}
	e.waitResolved(ids[0], "Allowed once")
	// /deny reason:… id:… targets exactly that request.
	in = e.fake.Slash(t, chanB, approver2, "deny", map[string]string{"reason": "not on a Friday", "id": strings.ToUpper(ids[2])})
	mustEphemeral(t, responses(t, e.fake, in, 1)[0], "Denied")
	m := e.waitDecided(ids[2])
	if m["outcome"] != "deny" || !strings.Contains(m["message"].(string), `The user said: "not on a Friday"`) {
		t.Fatalf("targeted deny: %v", m)
	}
	if m := e.get(ids[1]); m["state"] != "pending" {
		t.Fatalf("targeted deny decided the wrong request: %v", m)
	}
	// A stranger's command changes nothing and is audited.
	in = e.fake.Slash(t, chanA, stranger, "approve", nil)
	mustEphemeral(t, responses(t, e.fake, in, 1)[0], "not an approver")
	if m := e.get(ids[1]); m["state"] != "pending" {
		t.Fatalf("a stranger's /approve decided: %v", m)
	}
	// A command naming a request from a channel where its card did not go finds nothing.
	in = e.fake.Slash(t, chanX, approver, "approve", map[string]string{"id": ids[1]})
	mustEphemeral(t, responses(t, e.fake, in, 1)[0], "No such request")
	if m := e.get(ids[1]); m["state"] != "pending" {
		t.Fatalf("an /approve from another channel decided: %v", m)
	}
	found := false
	for _, en := range e.auditAll() {
		found = found || (en["event"] == "unauthorized" && strings.Contains(fmt.Sprint(en["actor"]), stranger.ID))
	}
	if !found {
		t.Errorf("the stranger's /approve was not audited")
	}
}

func TestReplyToCardTargetsThatCard(t *testing.T) {
	t.Parallel()
	e := startEnv(t, envOpts{})
	first := e.ask("s1", "kubectl delete ns a")
	time.Sleep(20 * time.Millisecond)
	second := e.ask("s1", "kubectl delete ns b")
	e.card(chanA, first)
	c2 := e.card(chanA, second)
	msg := e.fake.Say(t, chanA, approver, "/approve", c2.ID)
	m := e.waitDecided(second)
	if m["outcome"] != "allow_once" {
		t.Fatalf("reply /approve: %v", m)
	}
	if s := e.get(first); s["state"] != "pending" {
		t.Fatalf("the reply decided the oldest request instead: %v", s)
	}
	// The bot answers the reply in the channel, quietly.
	answer := e.botAnswer(chanA, msg)
	if !strings.Contains(answer.Content, "Allowed") || answer.Flags&discordtest.FlagSuppressNotifications == 0 {
		t.Errorf("answer to the reply = %+v", answer)
	}
	// A reply to the resolved card does not fall through to the oldest request.
	e.waitResolved(second, "Allowed once")
	late := e.fake.Say(t, chanA, approver, "/approve", c2.ID)
	if a := e.botAnswer(chanA, late); !strings.Contains(a.Content, "not a request waiting") {
		t.Errorf("answer to a reply to a resolved card = %q", a.Content)
	}
	if s := e.get(first); s["state"] != "pending" {
		t.Fatalf("a reply to a resolved card decided another request: %v", s)
	}
	// /deny <reason> as a reply.
	c1 := e.card(chanA, first)
	e.fake.Say(t, chanA, approver2, "/deny use the staging cluster", c1.ID)
	m = e.waitDecided(first)
	if m["outcome"] != "deny" || m["reason"] != "use the staging cluster" {
		t.Fatalf("reply /deny: %v", m)
	}
	// A stranger's reply changes nothing.
	third := e.ask("s1", "kubectl delete ns c")
	c3 := e.card(chanA, third)
	if a := e.botAnswer(chanA, e.fake.Say(t, chanA, stranger, "/approve", c3.ID)); !strings.Contains(a.Content, "not an approver") {
		t.Errorf("answer to a stranger's reply = %q", a.Content)
	}
	if s := e.get(third); s["state"] != "pending" {
		t.Fatalf("a stranger's reply decided: %v", s)
	}
}

func TestTimeoutAndCancelEditTheCard(t *testing.T) {
	t.Parallel()
	e := startEnv(t, envOpts{server: `approval_timeout = "1s"`})
	id := e.ask("s1", "shutdown -h now")
	e.card(chanA, id)
	e.card(chanB, id)
	m := e.waitDecided(id)
	if m["outcome"] != "timeout" {
		t.Fatalf("want a timeout, got %v", m)
	}
	e.waitResolved(id, "Expired")

	// Cancelled at once, well inside the timeout; the cards are edited whenever they land.
	id2 := e.ask("s1", "shutdown -r now")
	if code, _ := e.srv.Do(t, "DELETE", "/v1/requests/"+id2, agentTok, nil); code != 200 {
		t.Fatalf("cancel: %d", code)
	}
	a := e.card(chanA, id2)
	e.card(chanB, id2)
	e.waitResolved(id2, "Cancelled")
	// A press on the cancelled card (a stale client) changes nothing.
	in := e.fake.PressStale(t, chanA, a.ID, approver, button("once", id2))
	mustEphemeral(t, responses(t, e.fake, in, 1)[0], "Already decided")
	if m := e.get(id2); m["outcome"] != "cancelled" {
		t.Fatalf("press after cancel: %v", m)
	}
}

func TestKillAndRestartWithALiveCard(t *testing.T) {
	t.Parallel()
	e := startEnv(t, envOpts{})
	id := e.ask("s1", "git push --force")
	a := e.card(chanA, id)
	e.card(chanB, id)
	e.srv.WaitCards(t, id, 2)
	e.srv.Kill()
	e.fake.Wait(t, 10*time.Second, "the gateway to drop", func() bool { return !e.fake.Connected() })
	before := e.fake.Identifies()
	srv2 := testserver.Start(t, testserver.Options{Dir: e.srv.Dir, Server: `approval_timeout = "60s"`,
		Config: configFor(e.fake, ""), Env: []string{"TEST_DISCORD_TOKEN=" + botToken}})
	e.srv = srv2
	e.fake.Wait(t, 20*time.Second, "a new gateway session", func() bool { return e.fake.Identifies() > before && e.fake.Connected() })
	in := e.fake.Press(t, chanA, a.ID, approver, button("once", id))
	if r := responses(t, e.fake, in, 1)[0]; r.Type != 7 {
		t.Fatalf("press after restart answered %+v", r)
	}
	if m := e.waitDecided(id); m["outcome"] != "allow_once" {
		t.Fatalf("after restart: %v", m)
	}
	e.waitResolved(id, "Allowed once")
	if n := len(e.cardsOf(id)); n != 2 {
		t.Errorf("want the 2 original cards, got %d (a restart re-posted?)", n)
	}
}

func TestRestartAfterDeadlineMarksCardExpired(t *testing.T) {
	t.Parallel()
	e := startEnv(t, envOpts{server: `approval_timeout = "2s"`})
	id := e.ask("s1", "rm -rf ./.cache")
	a := e.card(chanA, id)
	e.card(chanB, id)
	e.srv.WaitCards(t, id, 2)
	deadline := e.srv.ExpiresAt(t, id)
	e.srv.Kill()
	testserver.SleepUntil(deadline) // the deadline passes while approvebot is down
	srv2 := testserver.Start(t, testserver.Options{Dir: e.srv.Dir, Server: `approval_timeout = "2s"`,
		Config: configFor(e.fake, ""), Env: []string{"TEST_DISCORD_TOKEN=" + botToken}})
	e.srv = srv2
	e.waitResolved(id, "Expired")
	if m := e.get(id); m["outcome"] != "timeout" {
		t.Fatalf("after restart past the deadline: %v", m)
	}
	e.fake.Wait(t, 20*time.Second, "the gateway", e.fake.Connected)
	in := e.fake.PressStale(t, chanA, a.ID, approver, button("once", id))
	mustEphemeral(t, responses(t, e.fake, in, 1)[0], "expired")
}

// configFor is the [channels.discord] section for the fake, plus extra lines.
func configFor(f *discordtest.Server, extra string) string {
	return fmt.Sprintf(`[channels.discord]
token_env = "TEST_DISCORD_TOKEN"
api_url = %q
channels = [%q, %q]
guilds = [%q]
approvers = [%q, %q]
%s
`, f.URL, chanA, chanB, guild, approver.ID, approver2.ID, extra)
}

func TestRateLimitStormDelaysButLosesNothing(t *testing.T) {
	t.Parallel()
	e := startEnv(t, envOpts{})
	e.fake.RateLimit(12, 100*time.Millisecond, "/messages")
	var ids []string
	for i := range 3 {
		ids = append(ids, e.ask("s1", fmt.Sprintf("helm uninstall app-%d", i)))
	}
	for _, id := range ids {
		e.card(chanA, id)
		e.card(chanB, id)
	}
	if e.fake.RateLimited() == 0 {
		t.Fatalf("the storm did not happen")
	}
	for _, id := range ids {
		if n := len(e.cardsOf(id)); n != 2 {
			t.Errorf("request %s has %d cards, want exactly 2 (one per channel)", id, n)
		}
		if m := e.get(id); m["state"] != "pending" {
			t.Errorf("a rate-limited card made the request fall back: %v", m)
		}
	}
	// Edits under a storm also get through.
	e.fake.RateLimit(8, 100*time.Millisecond, "/messages")
	for _, id := range ids {
		in := e.fake.Press(t, chanA, e.card(chanA, id).ID, approver, button("once", id))
		if r := responses(t, e.fake, in, 1)[0]; r.Type != 7 {
			t.Fatalf("press under a storm answered %+v", r)
		}
	}
	for _, id := range ids {
		if m := e.waitDecided(id); m["outcome"] != "allow_once" {
			t.Fatalf("%s: %v", id, m)
		}
		e.waitResolved(id, "Allowed once")
	}
}

func TestGatewayDisconnectWhilePendingLosesNothing(t *testing.T) {
	t.Parallel()
	e := startEnv(t, envOpts{})
	id := e.ask("s1", "aws s3 rb s3://prod --force")
	a := e.card(chanA, id)
	e.card(chanB, id)
	e.fake.Disconnect()
	// The press happens while the bot is away; the gateway replays it on RESUME.
	in := e.fake.Press(t, chanA, a.ID, approver, button("once", id))
	e.fake.Wait(t, 20*time.Second, "a RESUME", func() bool { return e.fake.Resumes() > 0 })
	if r := responses(t, e.fake, in, 1)[0]; r.Type != 7 {
		t.Fatalf("replayed press answered %+v", r)
	}
	if m := e.waitDecided(id); m["outcome"] != "allow_once" {
		t.Fatalf("after the disconnect: %v", m)
	}
	e.waitResolved(id, "Allowed once")
	// A request made while connected again still works.
	id2 := e.ask("s1", "aws s3 rb s3://staging --force")
	in = e.fake.Press(t, chanB, e.card(chanB, id2).ID, approver, button("once", id2))
	if r := responses(t, e.fake, in, 1)[0]; r.Type != 7 {
		t.Fatalf("press after the reconnect answered %+v", r)
	}
	if m := e.waitDecided(id2); m["outcome"] != "allow_once" {
		t.Fatalf("after the reconnect: %v", m)
	}
}

func TestEveryoneMentionIsNotLive(t *testing.T) {
	t.Parallel()
	e := startEnv(t, envOpts{})
	id := e.ask("s1", "notify-team @everyone @here <@700000000000000001> <@&123456789012345678> [click](https://evil.example)")
	for _, ch := range []string{chanA, chanB} {
		c := e.card(ch, id)
		for _, live := range []string{"@everyone", "@here", "<@7", "<@&1"} {
			if strings.Contains(c.Content, live) {
				t.Errorf("card content carries a live %q: %q", live, c.Content)
			}
		}
		var body struct {
			AllowedMentions struct {
				Parse []string `json:"parse"`
			} `json:"allowed_mentions"`
		}
		if err := json.Unmarshal(c.Body, &body); err != nil || body.AllowedMentions.Parse == nil || len(body.AllowedMentions.Parse) != 0 {
			t.Errorf("card body allowed_mentions = %s", c.Body)
		}
	}
	in := e.fake.Press(t, chanA, e.card(chanA, id).ID, approver, button("deny", id))
	responses(t, e.fake, in, 1)
	sub := e.fake.SubmitModal(t, in, approver, map[string]string{"reason": "no @everyone pings please"})
	responses(t, e.fake, sub, 1)
	e.waitResolved(id, "Denied")
	for _, c := range e.cardsOf(id) {
		if strings.Contains(c.Content, "@everyone") {
			t.Errorf("resolved card carries a live @everyone: %q", c.Content)
		}
	}
}

// sign signs an interaction body as Discord does.
func sign(priv ed25519.PrivateKey, ts string, body []byte) string {
	return hex.EncodeToString(ed25519.Sign(priv, append([]byte(ts), body...)))
}

func TestHTTPInteractionsEndpoint(t *testing.T) {
	t.Parallel()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	fake := discordtest.Start(t, discordtest.Options{Token: botToken, Channels: map[string]string{chanA: guild, chanB: guild}})
	e := startEnv(t, envOpts{fake: fake, extra: fmt.Sprintf("mode = \"http\"\npublic_key = %q\napplication_id = %q", hex.EncodeToString(pub), fake.AppID())})
	id := e.ask("s1", "rm -rf ./dist")
	a := e.card(chanA, id)
	e.card(chanB, id)
	post := func(body []byte, ts, sig string) (int, []byte) {
		req, _ := http.NewRequest("POST", e.srv.URL+"/discord/interactions", strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Signature-Timestamp", ts)
		req.Header.Set("X-Signature-Ed25519", sig)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, raw
	}
	now := strconv.FormatInt(time.Now().Unix(), 10)
	ping := []byte(`{"id":"1","application_id":"` + fake.AppID() + `","type":1,"token":"x","version":1}`)
	if code, out := post(ping, now, sign(priv, now, ping)); code != 200 || !strings.Contains(string(out), `"type":1`) {
		t.Fatalf("PING: %d %s", code, out)
	}
	press := func(user discordtest.User, action string) []byte {
		return []byte(fmt.Sprintf(`{"id":"1400000000000000001","application_id":%q,"type":3,"token":"tok","version":1,
"guild_id":%q,"channel_id":%q,"member":{"user":{"id":%q,"username":%q},"roles":[],"joined_at":"2024-01-01T00:00:00Z","permissions":"0"},
"message":{"id":%q,"channel_id":%q,"content":"","author":{"id":%q,"bot":true},"timestamp":"2024-01-01T00:00:00Z","components":[]},
"data":{"custom_id":%q,"component_type":2}}`, fake.AppID(), guild, chanA, user.ID, user.Username, a.ID, chanA, fake.BotID(), button(action, id)))
	}
	// Bad signature, stale timestamp, oversized body: 401/401/413, nothing decided.
	body := press(approver, "once")
	if code, _ := post(body, now, sign(priv, now, []byte("other"))); code != 401 {
		t.Errorf("bad signature: %d, want 401", code)
	}
	old := strconv.FormatInt(time.Now().Add(-10*time.Minute).Unix(), 10)
	if code, _ := post(body, old, sign(priv, old, body)); code != 401 {
		t.Errorf("stale timestamp: %d, want 401", code)
	}
	big := make([]byte, 70<<10)
	if code, _ := post(big, now, sign(priv, now, big)); code != 413 {
		t.Errorf("oversized body: %d, want 413", code)
	}
	if m := e.get(id); m["state"] != "pending" {
		t.Fatalf("a rejected interaction decided: %v", m)
	}
	found := false
	for _, en := range e.auditAll() {
		found = found || (en["event"] == "unauthorized" && strings.Contains(fmt.Sprint(en["reason"]), "signature"))
	}
	if !found {
		t.Errorf("the bad signature was not audited")
	}
	// A stranger's signed press: ephemeral refusal.
	sb := press(stranger, "once")
	code, out := post(sb, now, sign(priv, now, sb))
	if code != 200 || !strings.Contains(string(out), `"type":4`) || !strings.Contains(string(out), "not an approver") || !strings.Contains(string(out), `"flags":68`) {
		t.Fatalf("stranger press: %d %s", code, out)
	}
	// The approver's signed press: update message with the resolved card.
	code, out = post(body, now, sign(priv, now, body))
	if code != 200 || !strings.Contains(string(out), `"type":7`) || !strings.Contains(string(out), "Allowed once") {
		t.Fatalf("approver press: %d %s", code, out)
	}
	if m := e.waitDecided(id); m["outcome"] != "allow_once" {
		t.Fatalf("decision: %v", m)
	}
	e.waitResolved(id, "Allowed once")
}

// healthOf is the discord entry of /healthz.
func healthOf(t *testing.T, s *testserver.Server) map[string]any {
	t.Helper()
	_, h := s.JSON(t, "GET", "/healthz", "", nil)
	ch, _ := h["channels"].(map[string]any)["discord"].(map[string]any)
	return ch
}

// Connection losses run in the binary: discordgo races with itself (a heartbeat's log
// call against its reconnect), which the race detector would pin on a test process.
func TestHealthFollowsTheGateway(t *testing.T) {
	t.Parallel()
	e := startEnv(t, envOpts{})
	testserver.Eventually(t, 10*time.Second, "a healthy channel", func() bool { return healthOf(t, e.srv)["ok"] == true })
	// Discord goes away for good: the channel reports it.
	e.fake.Close()
	testserver.Eventually(t, 20*time.Second, "the channel to notice", func() bool {
		h := healthOf(t, e.srv)
		return h["ok"] == false && h["detail"] == "gateway not connected"
	})
}

func TestDisallowedIntentIsExplained(t *testing.T) {
	t.Parallel()
	fake := discordtest.Start(t, discordtest.Options{Token: botToken, NoMessageContent: true, Channels: map[string]string{chanA: guild}})
	env := []string{"TEST_DISCORD_TOKEN=" + botToken}
	s := testserver.Start(t, testserver.Options{Config: configFor(fake, ""), Env: env})
	testserver.Eventually(t, 20*time.Second, "the hint in the logs", func() bool {
		return strings.Contains(s.Logs(), "message_content = false")
	})
	if h := healthOf(t, s); h["ok"] != false {
		t.Fatalf("health = %v", h)
	}
	s.Kill()
	// With message_content = false the same bot connects.
	s2 := testserver.Start(t, testserver.Options{Config: configFor(fake, "message_content = false"), Env: env})
	fake.Wait(t, 20*time.Second, "a connection without the intent", fake.Connected)
	testserver.Eventually(t, 10*time.Second, "a healthy channel", func() bool { return healthOf(t, s2)["ok"] == true })
}
