package slacktest

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"
)

const (
	bot = "xoxb-fake-test"
	app = "xapp-fake-test"
	ch  = "C0FAKE"
)

func newFake(t *testing.T) (*Server, *slack.Client) {
	t.Helper()
	s, err := New(Options{BotToken: bot, AppToken: app, Channels: []string{ch}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, slack.New(bot, slack.OptionAPIURL(s.APIURL()))
}

func section(n int) slack.Block {
	return slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, strings.Repeat("a", n), false, false), nil, nil)
}

func button(actionID, value string) slack.Block {
	b := slack.NewButtonBlockElement(actionID, value, slack.NewTextBlockObject(slack.PlainTextType, "Go", false, false))
	return slack.NewActionBlock("", b)
}

func code(err error) string {
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		return se.Err
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

// The fake refuses what Slack refuses, with Slack's error codes.
func TestLimits(t *testing.T) {
	s, api := newFake(t)
	ctx := context.Background()
	many := make([]slack.Block, 51)
	for i := range many {
		many[i] = section(1)
	}
	for _, tc := range []struct {
		name string
		opts []slack.MsgOption
		want string
	}{
		{"ok", []slack.MsgOption{slack.MsgOptionText("hi", false), slack.MsgOptionBlocks(section(3000), button(strings.Repeat("a", 255), strings.Repeat("v", 2000)))}, ""},
		{"section 3001", []slack.MsgOption{slack.MsgOptionBlocks(section(3001))}, "invalid_blocks"},
		{"51 blocks", []slack.MsgOption{slack.MsgOptionBlocks(many...)}, "invalid_blocks"},
		{"text 40001", []slack.MsgOption{slack.MsgOptionText(strings.Repeat("x", 40001), false)}, "msg_too_long"},
		{"action_id 256", []slack.MsgOption{slack.MsgOptionBlocks(button(strings.Repeat("a", 256), "v"))}, "invalid_blocks"},
		{"value 2001", []slack.MsgOption{slack.MsgOptionBlocks(button("a", strings.Repeat("v", 2001)))}, "invalid_blocks"},
		{"duplicate action_id", []slack.MsgOption{slack.MsgOptionBlocks(button("a", "1"), button("a", "2"))}, "invalid_blocks"},
		{"empty", []slack.MsgOption{slack.MsgOptionText("", false)}, "no_text"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := api.PostMessageContext(ctx, ch, tc.opts...)
			if got := code(err); got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
	if _, _, err := api.PostMessageContext(ctx, "C0NOWHERE", slack.MsgOptionText("x", false)); code(err) != "channel_not_found" {
		t.Fatalf("unknown channel: %v", err)
	}
	if _, _, _, err := api.UpdateMessageContext(ctx, ch, "123.456", slack.MsgOptionText("x", false)); code(err) != "message_not_found" {
		t.Fatalf("update of an unknown ts: %v", err)
	}
	// Tokens: the app token is not a bot token, and a revoked token stays revoked.
	if _, err := slack.New(app, slack.OptionAPIURL(s.APIURL())).AuthTestContext(ctx); code(err) != "not_allowed_token_type" {
		t.Fatalf("app token on auth.test: %v", err)
	}
	s.Revoke(bot, "token_revoked")
	if _, err := api.AuthTestContext(ctx); code(err) != "token_revoked" {
		t.Fatalf("revoked: %v", err)
	}
}

func TestRateLimitAnswer(t *testing.T) {
	s, api := newFake(t)
	s.RateLimit("chat.postMessage", 1, 3)
	_, _, err := api.PostMessageContext(context.Background(), ch, slack.MsgOptionText("x", false))
	var rl *slack.RateLimitedError
	if !errors.As(err, &rl) || rl.RetryAfter != 3*time.Second {
		t.Fatalf("got %v", err)
	}
	if _, _, err := api.PostMessageContext(context.Background(), ch, slack.MsgOptionText("x", false)); err != nil {
		t.Fatalf("after the storm: %v", err)
	}
	s.ServerError("chat.update", 1, 503)
	_, _, _, err = api.UpdateMessageContext(context.Background(), ch, "1.1", slack.MsgOptionText("x", false))
	var sc slack.StatusCodeError
	if !errors.As(err, &sc) || sc.Code != 503 {
		t.Fatalf("got %v", err)
	}
}

func TestStoresVersionsAndTriggers(t *testing.T) {
	s, api := newFake(t)
	ctx := context.Background()
	_, ts, err := api.PostMessageContext(ctx, ch, slack.MsgOptionText("v1", false), slack.MsgOptionBlocks(button("ab1:once:x", "v")))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := api.UpdateMessageContext(ctx, ch, ts, slack.MsgOptionText("v2", false), slack.MsgOptionBlocks(section(10))); err != nil {
		t.Fatal(err)
	}
	s.Do(func(st *State) {
		m, ok := st.Message(ch, ts)
		if !ok || m.Updates != 1 || len(m.Versions) != 2 || len(Buttons(m.Blocks)) != 0 || len(Buttons(m.Versions[0])) != 1 {
			t.Fatalf("message %+v", m)
		}
	})
	// A press on the updated card finds no button; on the stale one it does.
	if _, err := s.PressPayload(User{ID: "U1", Team: "T1"}, ch, ts, "ab1:once:x", false); err == nil {
		t.Fatal("pressed a button that is gone")
	}
	p, err := s.PressPayload(User{ID: "U1", Team: "T1"}, ch, ts, "ab1:once:x", true)
	if err != nil {
		t.Fatal(err)
	}
	trigger := p["trigger_id"].(string)
	view := slack.ModalViewRequest{Type: slack.VTModal, Title: slack.NewTextBlockObject(slack.PlainTextType, "t", false, false),
		Blocks: slack.Blocks{BlockSet: []slack.Block{section(5)}}}
	long := view
	long.Title = slack.NewTextBlockObject(slack.PlainTextType, strings.Repeat("t", 25), false, false)
	if _, err := api.OpenViewContext(ctx, trigger, long); code(err) != "invalid_arguments" {
		t.Fatalf("title of 25: %v", err)
	}
	if _, err := api.OpenViewContext(ctx, trigger, view); err != nil {
		t.Fatal(err)
	}
	if _, err := api.OpenViewContext(ctx, trigger, view); code(err) != "expired_trigger_id" {
		t.Fatalf("trigger used twice: %v", err)
	}
	if _, err := api.OpenViewContext(ctx, "nope", view); code(err) != "invalid_trigger_id" {
		t.Fatalf("unknown trigger: %v", err)
	}
	raw, _ := json.Marshal(p)
	if !strings.Contains(string(raw), `"team_id":"T1"`) {
		t.Fatalf("press payload without the user's team: %s", raw)
	}
}
