package discord

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/approvebot/approvebot/channels/discord/discordtest"
	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/policy"
	"github.com/approvebot/approvebot/core/render"
	"github.com/approvebot/approvebot/internal/chattest"
)

const (
	testToken = "MTEwMDAwMDAwMDAwMDAwMDAwMg.Gx7Lq2.unit-test-secret-token-abcdefghijklmnop"
	gA        = "800000000000000001"
	gOther    = "800000000000000099"
	cA        = "900000000000000001"
	cDM       = "900000000000000077"
	cOther    = "900000000000000099"
	uApprover = "700000000000000001"
	uStranger = "700000000000000666"
)

type harness struct {
	t    *testing.T
	fake *discordtest.Server
	ch   *Channel
	r    *chattest.Resolver
}

// newRequest registers a pending request routed to chat.
func newRequest(r *chattest.Resolver, chat, summary string, edit ...func(*approval.Request)) approval.Request {
	req := approval.Request{Tool: "bash", Summary: summary, Session: "s1", Agent: "agent",
		Routes: []approval.Target{{Channel: Name, Chat: chat}}}
	for _, e := range edit {
		e(&req)
	}
	return r.Add(req)
}

// newHarness runs a channel on a fresh fake with the in-memory gate; tune adjusts the
// channel before Run.
func newHarness(t *testing.T, cfg Config, tune ...func(*Channel)) *harness {
	t.Helper()
	fake := discordtest.Start(t, discordtest.Options{Token: testToken, Channels: map[string]string{cA: gA, cDM: "", cOther: gOther}})
	if cfg.Approvers == nil {
		cfg.Approvers = []string{uApprover}
	}
	if cfg.Channels == nil {
		cfg.Channels = []string{cA}
	}
	cfg.APIURL = fake.URL
	if cfg.DenyReasonWindow.Duration == 0 {
		cfg.DenyReasonWindow.Duration = 2 * time.Second
	}
	var logs strings.Builder
	var lmu sync.Mutex
	logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		lmu.Lock()
		defer lmu.Unlock()
		return logs.Write(p)
	}), &slog.HandlerOptions{Level: slog.LevelDebug}))
	ch, err := New(cfg, Secrets{Token: testToken}, logger, nil)
	if err != nil {
		t.Fatal(err)
	}
	ch.retry.Base, ch.retry.Max = 10*time.Millisecond, 50*time.Millisecond
	for _, f := range tune {
		f(ch)
	}
	r := chattest.New()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ch.Run(ctx, r) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Errorf("Run did not return after cancel")
		}
		lmu.Lock()
		defer lmu.Unlock()
		if strings.Contains(logs.String(), testToken) || strings.Contains(logs.String(), "unit-test-secret") {
			t.Errorf("the token appears in the logs:\n%s", logs.String())
		}
	})
	fake.Wait(t, 10*time.Second, "Run to start", func() bool { return ch.ops.Load() != nil })
	if cfg.Mode != ModeHTTP {
		fake.Wait(t, 10*time.Second, "gateway", fake.Connected)
	}
	return &harness{t: t, fake: fake, ch: ch, r: r}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// post posts the card of a new stub request to chat and records it.
func (h *harness) post(chat, summary string) (approval.Request, approval.CardRef) {
	h.t.Helper()
	req := newRequest(h.r, chat, summary)
	ref, err := h.ch.Post(context.Background(), chat, render.CardFor(&req))
	if err != nil {
		h.t.Fatal(err)
	}
	h.r.AddCard(req.ID, ref)
	return h.r.Request(req.ID), ref
}

func TestNewRejectsBadConfig(t *testing.T) {
	good := Config{Approvers: []string{uApprover}, Channels: []string{cA}}
	for name, tc := range map[string]struct {
		cfg   func(Config) Config
		token string
	}{
		"empty token":       {func(c Config) Config { return c }, ""},
		"no approvers":      {func(c Config) Config { c.Approvers = nil; return c }, testToken},
		"username approver": {func(c Config) Config { c.Approvers = []string{"alice"}; return c }, testToken},
		"bad channel":       {func(c Config) Config { c.Channels = []string{"../x"}; return c }, testToken},
		"http without key":  {func(c Config) Config { c.Mode = ModeHTTP; return c }, testToken},
		"bad key":           {func(c Config) Config { c.PublicKey = "zz"; return c }, testToken},
		"bad api_url":       {func(c Config) Config { c.APIURL = "ftp://x"; return c }, testToken},
		"bad mode":          {func(c Config) Config { c.Mode = "webhook"; return c }, testToken},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := New(tc.cfg(good), Secrets{Token: tc.token}, nil, nil)
			if err == nil {
				t.Fatal("want an error")
			}
			if strings.Contains(err.Error(), "unit-test-secret") {
				t.Fatalf("error leaks the token: %v", err)
			}
		})
	}
	if _, err := New(good, Secrets{Token: testToken}, nil, nil); err != nil {
		t.Fatal(err)
	}
}

func TestRewriteTransportHonoursAPIURLWithPath(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Method + " " + r.URL.Path + "?" + r.URL.RawQuery
		w.Write([]byte(`{"url":"ws://x/gw"}`))
	}))
	defer srv.Close()
	c, err := New(Config{Approvers: []string{uApprover}, APIURL: srv.URL + "/proxy/"}, Secrets{Token: testToken}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.session.Gateway(); err != nil {
		t.Fatal(err)
	}
	if want := "GET /proxy/api/v9/gateway?"; got != want {
		t.Fatalf("request went to %q, want %q", got, want)
	}
}

func TestCallRetriesHonoursRetryAfterAndNeverLeaksSecrets(t *testing.T) {
	type step struct {
		status int
		body   string
	}
	for _, tc := range []struct {
		name      string
		steps     []step
		timeout   time.Duration
		wantCalls int
		wantErr   string
		minWait   time.Duration
	}{
		{"429 then ok waits retry_after", []step{{429, `{"retry_after":0.2,"global":false,"message":"You are being rate limited."}`}, {200, `{"id":"1"}`}}, 5 * time.Second, 2, "", 200 * time.Millisecond},
		{"5xx then ok", []step{{502, `{}`}, {500, `{"code":0,"message":"boom"}`}, {200, `{"id":"1"}`}}, 10 * time.Second, 3, "", 0},
		{"4xx is final", []step{{400, `{"code":50035,"message":"Invalid Form Body"}`}}, 5 * time.Second, 1, "HTTP 400 (code 50035: Invalid Form Body)", 0},
		{"401 is final and says so", []step{{401, `{"code":0,"message":"401: Unauthorized"}`}}, 5 * time.Second, 1, "HTTP 401", 0},
		{"retry_after past the deadline gives up at once", []step{{429, `{"retry_after":30}`}}, time.Second, 1, "rate limited", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			n := 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				i := n
				n++
				mu.Unlock()
				if i >= len(tc.steps) {
					i = len(tc.steps) - 1
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.steps[i].status)
				io.WriteString(w, tc.steps[i].body)
			}))
			defer srv.Close()
			c, err := New(Config{Approvers: []string{uApprover}, APIURL: srv.URL}, Secrets{Token: testToken}, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			c.retry.Base, c.retry.Max = 10*time.Millisecond, 50*time.Millisecond
			ctx, cancel := context.WithTimeout(context.Background(), tc.timeout)
			defer cancel()
			start := time.Now()
			// An interaction callback: its token is in the URL path.
			ep := discordgo.EndpointInteractionResponse("1400000000000000001", "interaction-token-secret-xyz")
			_, err = c.request(ctx, "interaction response", "POST", ep, "b", map[string]any{"type": 6})
			took := time.Since(start)
			mu.Lock()
			calls := n
			mu.Unlock()
			if calls != tc.wantCalls {
				t.Errorf("calls = %d, want %d", calls, tc.wantCalls)
			}
			if took < tc.minWait {
				t.Errorf("retried after %s, want at least retry_after %s", took, tc.minWait)
			}
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want %q", err, tc.wantErr)
			}
			for _, secret := range []string{"interaction-token-secret", "unit-test-secret", srv.URL} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error %q leaks %q", err, secret)
				}
			}
			if took > tc.timeout+500*time.Millisecond {
				t.Errorf("call took %s, past its deadline %s", took, tc.timeout)
			}
		})
	}
}

func TestTransportErrorsCarryNoURL(t *testing.T) {
	c, err := New(Config{Approvers: []string{uApprover}, APIURL: "http://127.0.0.1:1"}, Secrets{Token: testToken}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.retry.Base, c.retry.Max = 10*time.Millisecond, 50*time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	ep := discordgo.EndpointFollowupMessage("1100000000000000001", "interaction-token-secret-xyz")
	_, err = c.request(ctx, "interaction followup", "POST", ep, "b", map[string]any{})
	if err == nil {
		t.Fatal("want an error")
	}
	if strings.Contains(err.Error(), "interaction-token-secret") || strings.Contains(err.Error(), "webhooks") {
		t.Fatalf("error leaks the URL: %v", err)
	}
	if h := c.Health(); h.OK || h.LastError == "" {
		t.Fatalf("health after failures = %+v", h)
	}
}

func TestPostIsIdempotentPerRequestAndChat(t *testing.T) {
	h := newHarness(t, Config{})
	req, ref := h.post(cA, "rm -rf ./build")
	again, err := h.ch.Post(context.Background(), cA, render.CardFor(&req))
	if err != nil {
		t.Fatal(err)
	}
	if again != ref {
		t.Fatalf("a second post of the same card made %v, want the same message %v", again, ref)
	}
	if n := len(h.fake.Cards(cA)); n != 1 {
		t.Fatalf("%d cards, want 1", n)
	}
}

func TestSlowDecisionIsAcknowledgedInTime(t *testing.T) {
	h := newHarness(t, Config{}, func(c *Channel) { c.ackBudget = 200 * time.Millisecond })
	h.r.SetDecideDelay(500 * time.Millisecond) // longer than the acknowledgement budget
	req, ref := h.post(cA, "make deploy")
	in := h.fake.Press(t, cA, ref.Message, discordtest.User{ID: uApprover}, "ab1:once:"+req.ID)
	rs := h.fake.WaitResponses(t, in, 2, 10*time.Second)
	if rs[0].Type != 6 {
		t.Fatalf("first response = %+v, want a deferred update (type 6)", rs[0])
	}
	if rs[1].Kind != "edit" || !strings.Contains(rs[1].Content, "Allowed once") {
		t.Fatalf("second response = %+v, want the resolved card", rs[1])
	}
	if m, _ := h.fake.Message(ref.Message); len(m.Buttons()) != 0 {
		t.Fatalf("pressed card still has buttons: %+v", m)
	}
	if r := h.r.Request(req.ID); r.Outcome != approval.OutcomeAllowOnce {
		t.Fatalf("state = %+v", r)
	}
	// A slow slash command: an ephemeral "thinking" answer, then filled in.
	h.fake.Wait(t, 10*time.Second, "global commands", func() bool { return len(h.fake.Commands("global")) > 0 })
	req2, _ := h.post(cA, "make deploy-2")
	in = h.fake.Slash(t, cA, discordtest.User{ID: uApprover}, "approve", map[string]string{"id": req2.ID})
	rs = h.fake.WaitResponses(t, in, 2, 10*time.Second)
	if rs[0].Type != 5 || rs[1].Kind != "edit" || !strings.Contains(rs[1].Content, "Allowed") {
		t.Fatalf("slow slash command answered %+v", rs)
	}
	if !strings.Contains(string(rs[0].Data), `"flags":64`) {
		t.Fatalf("deferred slash answer is not ephemeral: %s", rs[0].Data)
	}
}

func TestDMApproverIsTheUser(t *testing.T) {
	h := newHarness(t, Config{Channels: []string{cDM}})
	req, ref := h.post(cDM, "git push --force")
	in := h.fake.Press(t, cDM, ref.Message, discordtest.User{ID: uApprover}, "ab1:session:"+req.ID)
	if rs := h.fake.WaitResponses(t, in, 1, 5*time.Second); rs[0].Type != 7 {
		t.Fatalf("DM press answered %+v", rs[0])
	}
	if r := h.r.Request(req.ID); r.Outcome != approval.OutcomeAllowSession || !strings.Contains(r.DecidedBy, "discord:"+uApprover) {
		t.Fatalf("state = %+v", r)
	}
}

func TestGuildLimitRefusesOtherGuilds(t *testing.T) {
	h := newHarness(t, Config{Guilds: []string{gA}, Channels: []string{cA}})
	// A card routed to a channel of another guild (say, by a stale route): presses there
	// are refused, privately, and audited.
	req, ref := h.post(cOther, "drop table users")
	in := h.fake.Press(t, cOther, ref.Message, discordtest.User{ID: uApprover}, "ab1:once:"+req.ID)
	rs := h.fake.WaitResponses(t, in, 1, 5*time.Second)
	if rs[0].Type != 4 || rs[0].Flags&discordtest.FlagEphemeral == 0 || !strings.Contains(rs[0].Content, "not an approver") {
		t.Fatalf("press from another guild answered %+v", rs[0])
	}
	if r := h.r.Request(req.ID); r.State != approval.StatePending {
		t.Fatalf("decided from another guild: %+v", r)
	}
	if len(h.r.Audits()) == 0 {
		t.Fatalf("refusal not audited")
	}
}

func TestDetailsButtonAnswersPrivately(t *testing.T) {
	h := newHarness(t, Config{})
	long := strings.Repeat("x", 250) + " @everyone"
	req := newRequest(h.r, cA, long[:199]+"…", func(r *approval.Request) { r.Truncated, r.Details = true, long })
	ref, err := h.ch.Post(context.Background(), cA, render.CardFor(&req))
	if err != nil {
		t.Fatal(err)
	}
	h.r.AddCard(req.ID, ref)
	in := h.fake.Press(t, cA, ref.Message, discordtest.User{ID: uApprover}, "ab1:details:"+req.ID)
	rs := h.fake.WaitResponses(t, in, 1, 5*time.Second)
	if rs[0].Type != 4 || rs[0].Flags&discordtest.FlagEphemeral == 0 || !strings.Contains(rs[0].Content, "xxxxx") {
		t.Fatalf("details answered %+v", rs[0])
	}
	if strings.Contains(rs[0].Content, "@everyone") {
		t.Fatalf("details carry a live @everyone: %q", rs[0].Content)
	}
	in = h.fake.Press(t, cA, ref.Message, discordtest.User{ID: uStranger}, "ab1:details:"+req.ID)
	if rs := h.fake.WaitResponses(t, in, 1, 5*time.Second); !strings.Contains(rs[0].Content, "not an approver") {
		t.Fatalf("a stranger saw details: %+v", rs[0])
	}
}

func TestVerifySignature(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	now := time.Unix(1_800_000_000, 0)
	c, err := New(Config{Approvers: []string{uApprover}, Mode: ModeHTTP, PublicKey: hex.EncodeToString(pub)}, Secrets{Token: testToken}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.now = func() time.Time { return now }
	body := []byte(`{"type":1}`)
	hdr := func(ts string, sig []byte) http.Header {
		h := http.Header{}
		h.Set("X-Signature-Timestamp", ts)
		h.Set("X-Signature-Ed25519", hex.EncodeToString(sig))
		return h
	}
	ts := strconv.FormatInt(now.Unix(), 10)
	good := ed25519.Sign(priv, append([]byte(ts), body...))
	_, other, _ := ed25519.GenerateKey(rand.Reader)
	for name, tc := range map[string]struct {
		h    http.Header
		body []byte
		want bool
	}{
		"good":              {hdr(ts, good), body, true},
		"other body":        {hdr(ts, good), []byte(`{"type":2}`), false},
		"other key":         {hdr(ts, ed25519.Sign(other, append([]byte(ts), body...))), body, false},
		"no signature":      {http.Header{"X-Signature-Timestamp": {ts}}, body, false},
		"short signature":   {hdr(ts, good[:10]), body, false},
		"stale timestamp":   {hdr(strconv.FormatInt(now.Add(-6*time.Minute).Unix(), 10), ed25519.Sign(priv, append([]byte(strconv.FormatInt(now.Add(-6*time.Minute).Unix(), 10)), body...))), body, false},
		"future timestamp":  {hdr(strconv.FormatInt(now.Add(6*time.Minute).Unix(), 10), ed25519.Sign(priv, append([]byte(strconv.FormatInt(now.Add(6*time.Minute).Unix(), 10)), body...))), body, false},
		"non-numeric stamp": {hdr("abc", ed25519.Sign(priv, append([]byte("abc"), body...))), body, false},
		"within the window": {hdr(strconv.FormatInt(now.Add(-4*time.Minute).Unix(), 10), ed25519.Sign(priv, append([]byte(strconv.FormatInt(now.Add(-4*time.Minute).Unix(), 10)), body...))), body, true},
	} {
		t.Run(name, func(t *testing.T) {
			if got := c.verify(tc.h, tc.body); got != tc.want {
				t.Fatalf("verify = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestHTTPEndpointRejectsBadSignaturesAndAudits(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(rand.Reader)
	h := newHarness(t, Config{Mode: ModeHTTP, PublicKey: hex.EncodeToString(pub), ApplicationID: "1100000000000000001"})
	_, handler := h.ch.HTTPHandler()
	srv := httptest.NewServer(handler)
	defer srv.Close()
	send := func(body []byte, sig []byte, ts string) int {
		req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(string(body)))
		req.Header.Set("X-Signature-Timestamp", ts)
		req.Header.Set("X-Signature-Ed25519", hex.EncodeToString(sig))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	body := []byte(`{"type":1}`)
	if code := send(body, ed25519.Sign(priv, append([]byte(ts), body...)), ts); code != 200 {
		t.Fatalf("good ping: %d", code)
	}
	before := len(h.r.Audits())
	for range 5 {
		if code := send(body, make([]byte, 64), ts); code != 401 {
			t.Fatalf("bad signature: %d", code)
		}
	}
	if got := len(h.r.Audits()) - before; got != 1 {
		t.Fatalf("5 bad signatures in a second made %d audit entries, want 1 (rate-limited)", got)
	}
}

func TestActorOf(t *testing.T) {
	u := &discordgo.User{ID: uApprover, Username: "alice"}
	for name, tc := range map[string]struct {
		i    discordgo.Interaction
		want string
		ok   bool
	}{
		"guild member":               {discordgo.Interaction{GuildID: gA, Member: &discordgo.Member{User: u, Nick: "Al"}}, uApprover, true},
		"dm user":                    {discordgo.Interaction{User: u}, uApprover, true},
		"guild, no member, user set": {discordgo.Interaction{GuildID: gA, User: u}, "", false},
		"dm with a member":           {discordgo.Interaction{Member: &discordgo.Member{User: u}, User: u}, "", false},
		"bot":                        {discordgo.Interaction{User: &discordgo.User{ID: uApprover, Bot: true}}, "", false},
		"bad id":                     {discordgo.Interaction{User: &discordgo.User{ID: "alice"}}, "", false},
	} {
		t.Run(name, func(t *testing.T) {
			a, ok := actorOf(&tc.i)
			if ok != tc.ok || a.ID != tc.want {
				t.Fatalf("actorOf = %+v, %v; want %q, %v", a, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestPrivateMessageFitsAndIsInert(t *testing.T) {
	for _, text := range []string{
		"plain", strings.Repeat("@everyone ", 500), strings.Repeat("`", 3000), strings.Repeat("😀", 1500),
		"```\n@here <@123> [x](https://evil)\n```",
	} {
		m := privateMessage(text)
		if n := utf16Len(m.Content); n > render.DiscordMaxContent {
			t.Errorf("content is %d UTF-16 units", n)
		}
		if strings.Contains(m.Content, "@everyone") || strings.Contains(m.Content, "@here") || strings.Contains(m.Content, "<@1") {
			t.Errorf("live mention in %q", m.Content[:min(80, len(m.Content))])
		}
		if m.AllowedMentions.Parse == nil || len(m.AllowedMentions.Parse) != 0 {
			t.Errorf("allowed_mentions.parse = %v", m.AllowedMentions.Parse)
		}
	}
}

func TestRunStopsAndKeepsRequestsPending(t *testing.T) {
	window := 200 * time.Millisecond
	h := newHarness(t, Config{DenyReasonWindow: policy.Duration{Duration: window}})
	req, ref := h.post(cA, "make deploy")
	in := h.fake.Press(t, cA, ref.Message, discordtest.User{ID: uApprover}, "ab1:deny:"+req.ID)
	if rs := h.fake.WaitResponses(t, in, 1, 5*time.Second); rs[0].Type != 9 {
		t.Fatalf("want a modal, got %+v", rs[0])
	}
	// Shutting down within the reason window decides nothing (the wait is dropped). Nothing
	// will happen, so there is nothing to wait for but the window itself.
	h.ch.waits.Load().Stop()
	time.Sleep(3 * window)
	if r := h.r.Request(req.ID); r.State != approval.StatePending {
		t.Fatalf("a stopped wait decided: %+v", r)
	}
}
