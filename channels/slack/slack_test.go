package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	slackgo "github.com/slack-go/slack"

	"github.com/approvebot/approvebot/channels/slack/slacktest"
	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/chatops"
	"github.com/approvebot/approvebot/core/policy"
	"github.com/approvebot/approvebot/core/render"
	"github.com/approvebot/approvebot/internal/chattest"
	"github.com/approvebot/approvebot/internal/retry"
	"github.com/approvebot/approvebot/internal/testserver"
)

const (
	testBot    = "xoxb-1-2-unitTestBotTokenSecret"
	testApp    = "xapp-1-A1-3-unitTestAppTokenSecret"
	testSecret = "unitTestSigningSecret0123456789"
	testTeam   = "T0UNIT"
	testChan   = "C0UNIT"
	testID     = "abcdefghijklmnopqrstuvwxyz"
)

func newFake(t *testing.T) *slacktest.Server {
	t.Helper()
	f, err := slacktest.New(slacktest.Options{BotToken: testBot, AppToken: testApp, TeamID: testTeam,
		Channels: []string{testChan}, SigningSecret: testSecret, PingInterval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f
}

type logBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newChannel(t *testing.T, f *slacktest.Server, mutate func(*Config, *Secrets)) (*Channel, *logBuf) {
	t.Helper()
	logs := &logBuf{}
	cfg := Config{
		APIURL: f.APIURL(), Channels: []string{testChan}, Approvers: []string{"U0ALICE"},
		DenyReasonWindow: policy.Duration{Duration: time.Second},
	}
	sec := Secrets{BotToken: testBot, AppToken: testApp, SigningSecret: testSecret}
	if mutate != nil {
		mutate(&cfg, &sec)
	}
	c, err := New(cfg, sec, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})), nil)
	if err != nil {
		t.Fatal(err)
	}
	c.retry = retry.Policy{Base: 20 * time.Millisecond, Max: 100 * time.Millisecond}
	t.Cleanup(func() {
		for _, s := range []string{testBot, testApp, testSecret} {
			if strings.Contains(logs.String(), s) {
				t.Errorf("a secret appeared in the logs")
			}
		}
	})
	return c, logs
}

func sampleCard() render.Card {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return render.Card{
		RequestID: testID, Tool: "bash", Summary: "echo <!channel> *bold* `tick` ```fence``` & <https://x|y>",
		Agent: "agent <@U123>", Session: "s1", Cwd: "/tmp/<x>", AgentReason: "because & <!here>",
		CreatedAt: now, ExpiresAt: now.Add(2 * time.Minute), AllowAlways: true, Truncated: true,
	}
}

// The blocks sent through slack-go are exactly render's Block Kit JSON, and Slack (the
// fake's limits) accepts them.
func TestBlocksRoundTrip(t *testing.T) {
	pending := sampleCard()
	resolved := sampleCard()
	resolved.Resolution = &render.Resolution{State: approval.StateDenied, Outcome: approval.OutcomeDeny,
		Source: approval.SourceHuman, DecidedBy: "alice (slack:T1:U1)", Reason: "no <!channel> way", DecidedAt: pending.CreatedAt}
	long := sampleCard()
	long.Summary = strings.Repeat("x", 5000)
	long.AgentReason = strings.Repeat("é", 5000)
	for name, bs := range map[string][]render.SlackBlock{
		"pending":  render.SlackPending(pending, testChan).Blocks,
		"resolved": render.SlackResolved(resolved, testChan, "1.2").Blocks,
		"long":     render.SlackPending(long, testChan).Blocks,
	} {
		t.Run(name, func(t *testing.T) {
			want, _ := json.Marshal(bs)
			blocks, err := toBlocks(bs)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(blocks)
			var w, g any
			json.Unmarshal(want, &w)
			json.Unmarshal(got, &g)
			if !reflect.DeepEqual(w, g) {
				t.Fatalf("round trip changed the blocks:\nwant %s\ngot  %s", want, got)
			}
			if errs := slacktest.ValidateBlocks(got, slacktest.MaxBlocks); len(errs) > 0 {
				t.Fatalf("Slack would refuse the card: %v", errs)
			}
		})
	}
}

func TestRetryPolicy(t *testing.T) {
	for _, tc := range []struct {
		name  string
		err   error
		retry bool
		wait  time.Duration
	}{
		{"429 with Retry-After", &slackgo.RateLimitedError{RetryAfter: 7 * time.Second}, true, 7 * time.Second},
		{"429 without Retry-After", slackgo.StatusCodeError{Code: 429}, true, 0},
		{"500", slackgo.StatusCodeError{Code: 500}, true, 0},
		{"503", slackgo.StatusCodeError{Code: 503}, true, 0},
		{"404", slackgo.StatusCodeError{Code: 404}, false, 0},
		{"ratelimited body", slackgo.SlackErrorResponse{Err: "ratelimited"}, true, 0},
		{"internal_error", slackgo.SlackErrorResponse{Err: "internal_error"}, true, 0},
		{"invalid_auth", slackgo.SlackErrorResponse{Err: "invalid_auth"}, false, 0},
		{"message_not_found", slackgo.SlackErrorResponse{Err: "message_not_found"}, false, 0},
		{"transport", &url.Error{Op: "Post", URL: "http://x", Err: errors.New("connection refused")}, true, 0},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), false, 0},
		{"other", errors.New("boom"), false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wait, retry := retryable(tc.err)
			if retry != tc.retry || wait != tc.wait {
				t.Fatalf("retryable = %s, %t; want %s, %t", wait, retry, tc.wait, tc.retry)
			}
		})
	}
	for code, fatal := range map[string]bool{"invalid_auth": true, "token_revoked": true, "missing_scope": true, "not_allowed_token_type": true, "ratelimited": false, "message_not_found": false} {
		if got := isFatal(slackgo.SlackErrorResponse{Err: code}); got != fatal {
			t.Errorf("isFatal(%s) = %t", code, got)
		}
	}
}

func TestPostRetriesAndGivesUp(t *testing.T) {
	card := sampleCard()
	t.Run("429 honours Retry-After", func(t *testing.T) {
		f := newFake(t)
		c, _ := newChannel(t, f, func(cfg *Config, _ *Secrets) { cfg.Mode = ModeHTTP })
		f.RateLimit("chat.postMessage", 1, 1)
		start := time.Now()
		ref, err := c.Post(context.Background(), testChan, card)
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d < time.Second {
			t.Fatalf("retried after %s, sooner than Retry-After", d)
		}
		if ref.Channel != Name || ref.Chat != testChan || ref.Message == "" {
			t.Fatalf("ref %+v", ref)
		}
		if !c.Health().OK {
			t.Fatalf("health after success: %+v", c.Health())
		}
	})
	t.Run("5xx backs off", func(t *testing.T) {
		f := newFake(t)
		c, _ := newChannel(t, f, nil)
		f.ServerError("chat.postMessage", 3, 502)
		if _, err := c.Post(context.Background(), testChan, card); err != nil {
			t.Fatal(err)
		}
		f.Do(func(st *slacktest.State) {
			if n := len(st.Calls("chat.postMessage")); n != 4 {
				t.Fatalf("want 4 attempts, got %d", n)
			}
		})
	})
	t.Run("a wait past the deadline gives up at once", func(t *testing.T) {
		f := newFake(t)
		c, _ := newChannel(t, f, nil)
		f.RateLimit("chat.postMessage", 1, 30)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		start := time.Now()
		_, err := c.Post(ctx, testChan, card)
		if err == nil || time.Since(start) > time.Second {
			t.Fatalf("err %v after %s", err, time.Since(start))
		}
		if !strings.Contains(err.Error(), "would pass the deadline") {
			t.Fatalf("err %v", err)
		}
		if c.Health().OK {
			t.Fatalf("health should report the failure")
		}
	})
	t.Run("permanent errors are not retried and leak no secret", func(t *testing.T) {
		f := newFake(t)
		c, _ := newChannel(t, f, nil)
		f.Revoke(testBot, "token_revoked")
		_, err := c.Post(context.Background(), testChan, card)
		var ce *CallError
		if !errors.As(err, &ce) || ce.Code != "token_revoked" {
			t.Fatalf("err %v", err)
		}
		f.Do(func(st *slacktest.State) {
			if n := len(st.Calls("chat.postMessage")); n != 1 {
				t.Fatalf("retried a permanent error: %d calls", n)
			}
		})
	})
	t.Run("transport errors leak no secret", func(t *testing.T) {
		c, _ := newChannel(t, newFake(t), func(cfg *Config, _ *Secrets) {
			// A proxy URL that embeds the token: the error must still not show it.
			cfg.APIURL = "http://127.0.0.1:1/" + testBot + "/"
		})
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		_, err := c.Post(ctx, testChan, card)
		if err == nil {
			t.Fatal("posted to nowhere")
		}
		if strings.Contains(err.Error(), testBot) || strings.Contains(c.Health().LastError, testBot) {
			t.Fatalf("the token leaked: %v", err)
		}
	})
	t.Run("edit of an unknown message", func(t *testing.T) {
		f := newFake(t)
		c, _ := newChannel(t, f, func(cfg *Config, _ *Secrets) { cfg.Mode = ModeHTTP })
		err := c.Edit(context.Background(), approval.CardRef{Channel: Name, Chat: testChan, Message: "9.9"}, card)
		var ce *CallError
		if !errors.As(err, &ce) || ce.Code != "message_not_found" {
			t.Fatalf("err %v", err)
		}
		if !c.Health().OK {
			t.Fatalf("one deleted card is not a channel failure: %+v", c.Health())
		}
	})
}

func TestNewValidates(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*Config, *Secrets)
		want   string
	}{
		{"ok", func(*Config, *Secrets) {}, ""},
		{"user token", func(_ *Config, s *Secrets) { s.BotToken = "xoxp-1" }, "bot token (xoxb-"},
		{"bot token as app token", func(_ *Config, s *Secrets) { s.AppToken = testBot }, "app-level token"},
		{"http without secret", func(c *Config, _ *Secrets) { c.Mode = ModeHTTP }, "signing secret"},
		{"bad mode", func(c *Config, _ *Secrets) { c.Mode = "rtm" }, "channels.slack.mode"},
		{"username", func(c *Config, _ *Secrets) { c.Approvers = []string{"alice"} }, "not a Slack user id"},
		{"bad team", func(c *Config, _ *Secrets) { c.Approvers = []string{"acme:U0ALICE"} }, "not a Slack user id"},
		{"no approvers", func(c *Config, _ *Secrets) { c.Approvers = nil }, "at least one approver"},
		{"channel name", func(c *Config, _ *Secrets) { c.Channels = []string{"#ops"} }, "not a channel id"},
		{"per-channel stranger", func(c *Config, _ *Secrets) { c.ChannelApprovers = map[string][]string{"C0X": {"U0BOB"}} }, "not in channels.slack.approvers"},
		{"bad api url", func(c *Config, _ *Secrets) { c.APIURL = "ftp://x" }, "api_url"},
		{"slash command", func(c *Config, _ *Secrets) { c.SlashCommand = "approvebot" }, "slash_command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Approvers: []string{"U0ALICE"}, Channels: []string{"C0X"}}
			sec := Secrets{BotToken: testBot, AppToken: testApp}
			tc.mutate(&cfg, &sec)
			_, err := New(cfg, sec, nil, nil)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
			if err != nil && (strings.Contains(err.Error(), testBot) || strings.Contains(err.Error(), testApp)) {
				t.Fatalf("a token leaked into %v", err)
			}
		})
	}
}

// Approver authorization: the user id counts only together with its workspace.
func TestApproverAuthorization(t *testing.T) {
	parsed, err := parseApprovers("x", []string{"U0ALICE", "T0ACME:U0BOB", " W0GRID "})
	if err != nil {
		t.Fatal(err)
	}
	per := map[string][]string{"C0OPS": approverKeys([]approverID{{user: "U0ALICE"}}, testTeam)}
	a := chatops.NewApprovers(approverKeys(parsed, testTeam), per)
	for _, tc := range []struct {
		chat, user, userTeam, team string
		want                       bool
	}{
		{testChan, "U0ALICE", testTeam, testTeam, true},
		{testChan, "U0ALICE", "", testTeam, true},          // no user.team_id: the payload's team
		{testChan, "U0ALICE", "T0OTHER", testTeam, false},  // same id, other workspace
		{testChan, "U0ALICE", "", "T0OTHER", false},        //
		{testChan, "U0BOB", "T0ACME", testTeam, true},      // pinned workspace
		{testChan, "U0BOB", testTeam, testTeam, false},     // pinned elsewhere
		{testChan, "W0GRID", testTeam, testTeam, true},     //
		{testChan, "U0MALLORY", testTeam, testTeam, false}, //
		{testChan, "", testTeam, testTeam, false},          // no user
		{testChan, "U0ALICE", "", "", false},               // no workspace at all
		{"C0OPS", "U0ALICE", testTeam, testTeam, true},     // per-channel list
		{"C0OPS", "U0BOB", "T0ACME", "T0ACME", false},      // not on that channel's list
	} {
		who := actor(tc.user, tc.userTeam, tc.team, "name")
		if got := a.Allowed(tc.chat, who.ID); got != tc.want {
			t.Errorf("%s %s/%s/%s: allowed %t, want %t", tc.chat, tc.user, tc.userTeam, tc.team, got, tc.want)
		}
	}
	// Without a known workspace, bare ids match nobody.
	if keys := approverKeys([]approverID{{user: "U0ALICE"}}, ""); len(keys) != 0 {
		t.Fatalf("bare id without a workspace became %v", keys)
	}
}

func TestStrictCommand(t *testing.T) {
	for text, want := range map[string]bool{
		"approve": true, "/approve": true, "Approve": true, "approve " + testID: true, "allow": true,
		"approve please": false, "allow me to explain": false, "approve " + testID + " now": false,
		"pending": true, "pending now": false, "deny": true, "deny wrong dir": true, "": false,
	} {
		if got := strictCommand(text); got != want {
			t.Errorf("strictCommand(%q) = %t", text, got)
		}
	}
}

func TestHTTPVerification(t *testing.T) {
	f := newFake(t)
	c, logs := newChannel(t, f, func(cfg *Config, s *Secrets) { cfg.Mode = ModeHTTP; s.AppToken = "" })
	_, h := c.HTTPHandler()
	srv := httptest.NewServer(h)
	defer srv.Close()
	d, _ := slacktest.Encode("slash_commands", f.SlashPayload(slacktest.User{ID: "U0ALICE", Team: testTeam}, testChan, "/approvebot", "pending"))
	do := func(req *http.Request) int {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	ctx := context.Background()
	// Before Run: a valid request is not processed (503), a bad one still 401.
	good, _ := slacktest.SignedRequest(ctx, srv.URL, d, testSecret, time.Now())
	if code := do(good); code != 503 {
		t.Fatalf("before Run: %d", code)
	}
	r := chattest.New()
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- c.Run(runCtx, r) }()
	defer func() { cancel(); <-done }()
	testserver.Eventually(t, 10*time.Second, "Run to start", func() bool { return c.state.Load() != nil })
	for _, tc := range []struct {
		name string
		req  func() *http.Request
		want int
	}{
		{"wrong secret", func() *http.Request {
			q, _ := slacktest.SignedRequest(ctx, srv.URL, d, "wrong", time.Now())
			return q
		}, 401},
		{"stale", func() *http.Request {
			q, _ := slacktest.SignedRequest(ctx, srv.URL, d, testSecret, time.Now().Add(-5*time.Minute-time.Second))
			return q
		}, 401},
		{"future", func() *http.Request {
			q, _ := slacktest.SignedRequest(ctx, srv.URL, d, testSecret, time.Now().Add(6*time.Minute))
			return q
		}, 401},
		{"no headers", func() *http.Request {
			q, _ := http.NewRequest("POST", srv.URL, strings.NewReader(string(d.Body)))
			return q
		}, 401},
		{"garbage signature", func() *http.Request {
			q, _ := slacktest.SignedRequest(ctx, srv.URL, d, testSecret, time.Now())
			q.Header.Set("X-Slack-Signature", "v0=zz")
			return q
		}, 401},
		{"GET", func() *http.Request { q, _ := http.NewRequest("GET", srv.URL, nil); return q }, 405},
		{"too big", func() *http.Request {
			big := slacktest.HTTPDelivery{ContentType: d.ContentType, Body: []byte(strings.Repeat("a", MaxBody+1))}
			q, _ := slacktest.SignedRequest(ctx, srv.URL, big, testSecret, time.Now())
			return q
		}, 413},
		{"valid", func() *http.Request {
			q, _ := slacktest.SignedRequest(ctx, srv.URL, d, testSecret, time.Now())
			return q
		}, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if code := do(tc.req()); code != tc.want {
				t.Fatalf("status %d, want %d", code, tc.want)
			}
		})
	}
	if n := len(r.Audits()); n != 5 {
		t.Fatalf("want 5 audited rejections, got %d", n)
	}
	// The valid /approvebot pending got its private answer.
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	err := f.Wait(wctx, func(st *slacktest.State) bool { return len(st.Ephemerals("U0ALICE")) > 0 })
	if err != nil {
		t.Fatalf("no answer to the slash command:\n%s", logs)
	}
	// The one answer is there; a second would have come through the same handler, which
	// has finished once the worker pool is idle again.
	testserver.Eventually(t, 10*time.Second, "the handlers to finish", func() bool { return len(c.sem) == 0 })
	f.Do(func(st *slacktest.State) {
		if e := st.Ephemerals(""); len(e) != 1 || e[0].Via != "response_url" || e[0].Text != chatops.TextNoPending {
			t.Errorf("answers %+v", e)
		}
	})
	// url_verification is answered with the challenge, only when signed.
	ch := slacktest.HTTPDelivery{ContentType: "application/json", Body: []byte(`{"type":"url_verification","challenge":"abc123","token":"x"}`)}
	q, _ := slacktest.SignedRequest(ctx, srv.URL, ch, testSecret, time.Now())
	resp, err := http.DefaultClient.Do(q)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"abc123"`) {
		t.Fatalf("challenge: %d %s", resp.StatusCode, body)
	}
}

func TestFatalSocketErrorStops(t *testing.T) {
	for _, code := range []string{"invalid_auth", "token_revoked", "missing_scope"} {
		t.Run(code, func(t *testing.T) {
			f := newFake(t)
			c, logs := newChannel(t, f, nil)
			f.FailWith("apps.connections.open", -1, code)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := c.Run(ctx, chattest.New())
			if err == nil || !strings.Contains(err.Error(), code) || ctx.Err() != nil {
				t.Fatalf("Run = %v (ctx %v)", err, ctx.Err())
			}
			h := c.Health()
			if h.OK || !strings.Contains(h.Detail, "stopped: "+code) {
				t.Fatalf("health %+v", h)
			}
			if !strings.Contains(logs.String(), "slack channel stopped") {
				t.Fatalf("not loud:\n%s", logs)
			}
			if _, err := c.Post(context.Background(), testChan, sampleCard()); err == nil {
				t.Fatal("a stopped channel still takes cards")
			}
		})
	}
	t.Run("bad bot token", func(t *testing.T) {
		f := newFake(t)
		c, _ := newChannel(t, f, func(_ *Config, s *Secrets) { s.BotToken = "xoxb-not-the-right-one" })
		err := c.Run(context.Background(), chattest.New())
		if err == nil || !strings.Contains(err.Error(), "invalid_auth") {
			t.Fatalf("Run = %v", err)
		}
	})
}
