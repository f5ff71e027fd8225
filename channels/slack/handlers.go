package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	slackgo "github.com/slack-go/slack"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/chatops"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/render"
)

// The Deny modal.
const (
	denyCallbackID = "ab1:deny_reason"
	reasonBlockID  = "reason"
	reasonActionID = "reason"
	// maxReason matches the gate's own cap on a human's reason.
	maxReason = 2000
)

// Private answers specific to Slack.
const (
	textUsage   = "Usage: %[1]s approve [id] · %[1]s deny [id] <reason> · %[1]s pending"
	textNoModal = "The reason form could not open, so the request was denied without a reason."
)

// denyMeta travels in the modal's private_metadata.
type denyMeta struct {
	ID   string `json:"id"`
	Chat string `json:"chat"`
	TS   string `json:"ts,omitempty"`
}

// actor builds the chatops identity "TEAM:USER". The workspace is the user's own
// (user.team_id) when Slack says it, else the payload's team. Without both, the id matches
// no approver.
func actor(user, userTeam, team, name string) chatops.Actor {
	t := userTeam
	if t == "" {
		t = team
	}
	if user == "" || t == "" {
		return chatops.Actor{Name: name}
	}
	return chatops.Actor{ID: t + ":" + user, Name: name}
}

func (c *Channel) onInteraction(ctx context.Context, st *runState, cb slackgo.InteractionCallback) {
	switch cb.Type {
	case slackgo.InteractionTypeBlockActions:
		chat := cb.Container.ChannelID
		if chat == "" {
			chat = cb.Channel.ID
		}
		msg := cb.Container.MessageTs
		if msg == "" {
			msg = cb.Message.Timestamp
		}
		who := actor(cb.User.ID, cb.User.TeamID, cb.Team.ID, cb.User.Name)
		for _, a := range cb.ActionCallback.BlockActions {
			action, id, ok := render.ParseCallback(a.ActionID)
			if !ok {
				continue
			}
			c.press(ctx, st, chat, msg, cb.User.ID, who, action, id, cb.TriggerID)
		}
	case slackgo.InteractionTypeViewSubmission, slackgo.InteractionTypeViewClosed:
		if cb.View.CallbackID != denyCallbackID {
			return
		}
		var meta denyMeta
		if err := json.Unmarshal([]byte(cb.View.PrivateMetadata), &meta); err != nil || !gate.ValidID(meta.ID) {
			return
		}
		reason := ""
		if cb.Type == slackgo.InteractionTypeViewSubmission && cb.View.State != nil {
			reason = cb.View.State.Values[reasonBlockID][reasonActionID].Value
		}
		reason, _ = render.Cut(strings.TrimSpace(reason), maxReason)
		who := actor(cb.User.ID, cb.User.TeamID, cb.Team.ID, cb.User.Name)
		ans, ok := st.waits.Reason(ctx, waitKey(who, meta.ID), who, reason)
		if !ok {
			// The window passed, or approvebot restarted: decide directly (the gate
			// answers "already decided" when the window's deny came first).
			ans = st.ops.Deny(ctx, meta.Chat, who, meta.ID, reason)
		}
		if !ans.Decided() {
			c.ephemeral(ctx, meta.Chat, cb.User.ID, ans.Text)
		}
	}
}

func waitKey(who chatops.Actor, id string) string { return who.ID + "/" + id }

// press handles one button press.
func (c *Channel) press(ctx context.Context, st *runState, chat, msg, user string, who chatops.Actor, action render.Action, id, trigger string) {
	ans := st.ops.Press(ctx, chat, msg, who, action, id, true)
	switch {
	case ans.Kind == chatops.KindNeedReason:
		key := waitKey(who, id)
		st.waits.Start(st.ctx, key, chat, who, id, func(a chatops.Answer) {
			if !a.Decided() {
				c.ephemeral(st.ctx, chat, user, a.Text)
			}
		})
		if err := c.openDenyModal(ctx, trigger, denyMeta{ID: id, Chat: chat, TS: msg}, ans.Request); err != nil {
			c.log.Warn("slack: the deny reason modal could not open; denying without a reason", "request_id", id, "err", err)
			if a, ok := st.waits.Reason(ctx, key, who, ""); ok {
				text := a.Text
				if a.Decided() {
					text = textNoModal
				}
				c.ephemeral(ctx, chat, user, text)
			}
		}
	case ans.Kind == chatops.KindDetails && ans.Details != "":
		c.details(ctx, chat, user, id, ans.Details)
	case ans.Kind == chatops.KindDetails:
		c.ephemeral(ctx, chat, user, nonEmpty(ans.Text, "No more details for this request."))
	case !ans.Decided():
		c.ephemeral(ctx, chat, user, ans.Text)
	}
}

// details shows the full redacted action privately, in render's Slack chunks.
func (c *Channel) details(ctx context.Context, chat, user, id, text string) {
	for _, m := range render.SlackDetails(chat, "", id, text) {
		blocks, err := toBlocks(m.Blocks)
		if err != nil {
			return
		}
		err = c.call(ctx, "chat.postEphemeral", func(ctx context.Context) error {
			_, err := c.api.PostEphemeralContext(ctx, chat, user, slackgo.MsgOptionText(m.Text, false),
				slackgo.MsgOptionBlocks(blocks...), slackgo.MsgOptionParse(false), slackgo.MsgOptionLinkNames(false))
			return err
		})
		if err != nil {
			c.log.Warn("slack: details could not be shown", "request_id", id, "err", err)
			return
		}
	}
}

// openDenyModal opens the reason form (views.open needs the press's trigger, valid 3 s).
func (c *Channel) openDenyModal(ctx context.Context, trigger string, meta denyMeta, r approval.Request) error {
	if trigger == "" {
		return fmt.Errorf("no trigger_id in the press")
	}
	md, err := json.Marshal(meta)
	if err != nil {
		return err
	}
	plain := func(s string) *slackgo.TextBlockObject {
		return slackgo.NewTextBlockObject(slackgo.PlainTextType, render.SlackEscape(s), false, false)
	}
	what := render.Clean(render.Mask(r.Tool), 64)
	if r.Summary != "" {
		what += ": " + render.Clean(render.Mask(r.Summary), render.MaxSummary)
	}
	what, _ = render.Cut(what, 300)
	secs := int(c.cfg.DenyReasonWindow.Round(time.Second) / time.Second)
	input := slackgo.NewPlainTextInputBlockElement(plain("e.g. wrong directory, use /tmp"), reasonActionID)
	input.Multiline = true
	input.MaxLength = maxReason
	in := slackgo.NewInputBlock(reasonBlockID, plain("Reason (the agent reads it)"), nil, input)
	in.Optional = true
	view := slackgo.ModalViewRequest{
		Type:            slackgo.VTModal,
		Title:           plain("Deny request"),
		Submit:          plain("Deny"),
		Close:           plain("Skip reason"),
		CallbackID:      denyCallbackID,
		PrivateMetadata: string(md),
		NotifyOnClose:   true,
		Blocks: slackgo.Blocks{BlockSet: []slackgo.Block{
			slackgo.NewSectionBlock(plain(what), nil, nil),
			slackgo.NewContextBlock("", plain(fmt.Sprintf("Request %s. It is denied either way: with your reason, or without one if you skip or after %ds.", meta.ID, secs))),
			in,
		}},
	}
	ctx, cancel := context.WithTimeout(ctx, ackWindow)
	defer cancel()
	return c.call(ctx, "views.open", func(ctx context.Context) error {
		_, err := c.api.OpenViewContext(ctx, trigger, view)
		return err
	})
}

// onSlash handles `/approvebot approve|deny <reason>|pending` typed anywhere.
func (c *Channel) onSlash(ctx context.Context, st *runState, cmd slackgo.SlashCommand) {
	if !strings.EqualFold(cmd.Command, c.cfg.SlashCommand) {
		return
	}
	who := actor(cmd.UserID, "", cmd.TeamID, cmd.UserName)
	reply := func(text string) { c.replySlash(ctx, cmd, text) }
	parsed, ok := chatops.ParseCommand(cmd.Text)
	if !ok || !strictCommand(cmd.Text) {
		reply(fmt.Sprintf(textUsage, c.cfg.SlashCommand))
		return
	}
	ans := st.ops.Command(ctx, cmd.ChannelID, who, parsed, "")
	reply(ans.Text)
}

// replySlash answers a slash command privately: through its response_url when it points at
// Slack (or at the configured API host), else with chat.postEphemeral.
func (c *Channel) replySlash(ctx context.Context, cmd slackgo.SlashCommand, text string) {
	if text == "" {
		return
	}
	if c.trustedResponseURL(cmd.ResponseURL) {
		text, _ = render.Cut(text, 3000)
		rctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		err := c.call(rctx, "response_url", func(ctx context.Context) error {
			_, _, err := c.api.PostMessageContext(ctx, cmd.ChannelID,
				slackgo.MsgOptionResponseURL(cmd.ResponseURL, slackgo.ResponseTypeEphemeral),
				slackgo.MsgOptionText(render.SlackEscape(text), false))
			return err
		})
		if err == nil {
			return
		}
		c.log.Warn("slack: answering through response_url failed; trying chat.postEphemeral", "err", err)
	}
	c.ephemeral(ctx, cmd.ChannelID, cmd.UserID, text)
}

func (c *Channel) trustedResponseURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || raw == "" {
		return false
	}
	if u.Scheme == "https" && u.Host == "hooks.slack.com" {
		return true
	}
	return u.Host == c.apiHost && (u.Scheme == "https" || u.Scheme == "http")
}

var leadingMention = regexp.MustCompile(`^\s*<@[A-Z0-9]+>\s*`)

// strictCommand rejects loose text that ParseCommand would read as a command: "approve"
// and "pending" take nothing but an optional request id, so "allow me to explain" is chat.
func strictCommand(text string) bool {
	words := strings.Fields(text)
	if len(words) == 0 {
		return false
	}
	verb := strings.ToLower(strings.TrimPrefix(words[0], "/"))
	switch verb {
	case "approve", "allow":
		return len(words) == 1 || (len(words) == 2 && gate.ValidID(strings.ToLower(words[1])))
	case "pending", "list":
		return len(words) == 1
	}
	return true
}

// eventEnvelope is an Events API callback, with the fields of a message event that matter.
type eventEnvelope struct {
	Type      string `json:"type"`
	Challenge string `json:"challenge"`
	TeamID    string `json:"team_id"`
	EventID   string `json:"event_id"`
	Event     struct {
		Type     string `json:"type"`
		Subtype  string `json:"subtype"`
		User     string `json:"user"`
		Team     string `json:"team"`
		UserTeam string `json:"user_team"`
		BotID    string `json:"bot_id"`
		Text     string `json:"text"`
		TS       string `json:"ts"`
		ThreadTS string `json:"thread_ts"`
		Channel  string `json:"channel"`
	} `json:"event"`
}

// onEvent handles a message in a card's thread: `approve`, `deny <reason>` or `pending`.
func (c *Channel) onEvent(ctx context.Context, st *runState, env eventEnvelope) {
	ev := env.Event
	if env.Type != "event_callback" || ev.Type != "message" || ev.BotID != "" || ev.User == "" {
		return
	}
	if ev.Subtype != "" && ev.Subtype != "thread_broadcast" {
		return
	}
	if ev.ThreadTS == "" || ev.ThreadTS == ev.TS {
		return // only replies in a thread are commands
	}
	text := leadingMention.ReplaceAllString(ev.Text, "")
	cmd, ok := chatops.ParseCommand(text)
	if !ok || !strictCommand(text) {
		return
	}
	team := ev.UserTeam
	if team == "" {
		team = ev.Team
	}
	who := actor(ev.User, team, env.TeamID, "")
	if cmd.ID == "" && cmd.Verb != chatops.VerbPending {
		// Name the thread's request, so even a refused attempt is audited against it.
		if rec, ok := st.resolver.ByCard(Name, ev.Channel, ev.ThreadTS); ok {
			cmd.ID = rec.ID
		}
	}
	// A reply in a card's thread targets that card; chatops refuses (and audits) a stranger
	// first, and changes nothing when the thread's card is no longer waiting.
	ans := st.ops.Command(ctx, ev.Channel, who, cmd, ev.ThreadTS)
	if !ans.Decided() {
		c.ephemeral(ctx, ev.Channel, ev.User, ans.Text)
	}
}
