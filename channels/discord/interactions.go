package discord

import (
	"context"
	"hash/fnv"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/chatops"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/render"
)

// Interaction response types
// (https://discord.com/developers/docs/interactions/receiving-and-responding#interaction-response-object-interaction-callback-type).
const (
	respPong           = 1
	respMessage        = 4
	respDeferredMsg    = 5
	respDeferredUpdate = 6
	respUpdate         = 7
	respModal          = 9
)

// Message flags.
const (
	flagEphemeral             = 1 << 6
	flagSuppressNotifications = 1 << 12
)

const (
	// ackBudget is how long the work behind a press may take before the interaction is
	// acknowledged with a deferred response (Discord allows 3 s for the first response).
	ackBudget = 2 * time.Second
	// respondTimeout is Discord's window for the first response, counted from receipt.
	respondTimeout = 3 * time.Second
	// workTimeout bounds deciding and answering one interaction.
	workTimeout = 30 * time.Second
	// reasonInput is the custom_id of the Deny modal's text input.
	reasonInput = "reason"
	// maxReason is the longest reason the modal accepts.
	maxReason = 1000
)

// response is an interaction response.
type response struct {
	Type int `json:"type"`
	Data any `json:"data,omitempty"`
}

// responder sends the one initial response of an interaction (the REST callback on the
// gateway, the HTTP answer on the interactions endpoint).
type responder func(ctx context.Context, resp *response) error

// reply is what an interaction ends in.
type reply struct {
	// update replaces the message the component is on (type 7).
	update *render.DiscordMessage
	// private are ephemeral messages to the actor.
	private []render.DiscordMessage
	// modal opens a form (type 9).
	modal *modal
}

type modal struct {
	CustomID   string           `json:"custom_id"`
	Title      string           `json:"title"`
	Components []modalActionRow `json:"components"`
}

type modalActionRow struct {
	Type       int         `json:"type"`
	Components []textInput `json:"components"`
}

type textInput struct {
	Type        int    `json:"type"`
	CustomID    string `json:"custom_id"`
	Style       int    `json:"style"`
	Label       string `json:"label"`
	MinLength   int    `json:"min_length"`
	MaxLength   int    `json:"max_length"`
	Required    bool   `json:"required"`
	Placeholder string `json:"placeholder,omitempty"`
}

func denyModal(id string) *modal {
	return &modal{
		CustomID: render.CallbackData(render.ActionDeny, id),
		Title:    "Deny this request",
		Components: []modalActionRow{{Type: 1, Components: []textInput{{
			Type: 4, CustomID: reasonInput, Style: 2, Label: "Why? The agent is told your words",
			MinLength: 0, MaxLength: maxReason, Required: false, Placeholder: "e.g. wrong directory, use /tmp",
		}}}},
	}
}

func privateReply(text string) reply {
	return reply{private: []render.DiscordMessage{privateMessage(text)}}
}

// handleInteraction answers one interaction. It never decides except through chatops.
func (c *Channel) handleInteraction(ctx context.Context, i *discordgo.Interaction, respond responder) {
	respond = withDeadline(respond, time.Now().Add(respondTimeout))
	ops, waits := c.ops.Load(), c.waits.Load()
	if i.Type == discordgo.InteractionPing {
		c.respond(ctx, respond, &response{Type: respPong})
		return
	}
	if ops == nil {
		c.respondReply(ctx, i, respond, privateReply("approvebot is starting; try again in a moment."), false)
		return
	}
	actor, ok := actorOf(i)
	if !ok {
		c.respondReply(ctx, i, respond, privateReply(chatops.TextNotFound), false)
		return
	}
	chat := i.ChannelID
	if !c.placeAllowed(i.GuildID, chat) {
		c.refuse(ctx, ops.Resolver, chat, actor, "", "interaction from a guild or channel not configured")
		c.respondReply(ctx, i, respond, privateReply(chatops.TextNotApprover), false)
		return
	}
	if cl, ok := ops.Resolver.(gate.Claimer); ok && i.ID != "" {
		// On a cluster an interaction could reach two replicas (a gateway handed over
		// while it was in flight); the one that claims it answers it.
		first, done := cl.Claim(ctx, Name, i.ID)
		if !first {
			return
		}
		defer done(true)
	}
	var work func(context.Context) reply
	component := false
	switch i.Type {
	case discordgo.InteractionMessageComponent:
		component = true
		work = func(ctx context.Context) reply { return c.press(ctx, ops, waits, i, actor) }
	case discordgo.InteractionModalSubmit:
		component = i.Message != nil
		work = func(ctx context.Context) reply { return c.modalSubmit(ctx, ops, waits, i, actor) }
	case discordgo.InteractionApplicationCommand:
		work = func(ctx context.Context) reply { return c.slashCommand(ctx, ops, i, actor) }
	default:
		c.respondReply(ctx, i, respond, privateReply("This interaction is not supported."), false)
		return
	}
	c.within(ctx, i, respond, component, work)
}

// within runs work and answers with its reply when it is ready inside ackBudget;
// otherwise it acknowledges first (deferred) and delivers the reply afterwards.
func (c *Channel) within(ctx context.Context, i *discordgo.Interaction, respond responder, component bool, work func(context.Context) reply) {
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), workTimeout)
	defer cancel()
	done := make(chan reply, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				c.log.Error("interaction handler panicked", "panic", p)
				done <- privateReply(chatops.TextFailed)
			}
		}()
		done <- work(wctx)
	}()
	t := time.NewTimer(c.ackBudget)
	defer t.Stop()
	select {
	case rep := <-done:
		c.respondReply(wctx, i, respond, rep, false)
		return
	case <-t.C:
	}
	// Late: acknowledge now, deliver when ready.
	ack := &response{Type: respDeferredUpdate}
	if !component {
		ack = &response{Type: respDeferredMsg, Data: map[string]any{"flags": flagEphemeral}}
	}
	c.respond(wctx, respond, ack)
	rep := <-done
	c.respondReply(wctx, i, respond, rep, true)
}

// respondReply sends a reply: as the initial response, or (late) as edits and followups.
func (c *Channel) respondReply(ctx context.Context, i *discordgo.Interaction, respond responder, rep reply, late bool) {
	if !late {
		switch {
		case rep.modal != nil:
			c.respond(ctx, respond, &response{Type: respModal, Data: rep.modal})
			return
		case rep.update != nil:
			if c.respond(ctx, respond, &response{Type: respUpdate, Data: rep.update}) {
				c.followups(ctx, i, rep.private)
			}
			return
		case len(rep.private) > 0:
			first := rep.private[0]
			first.Flags |= flagEphemeral
			if c.respond(ctx, respond, &response{Type: respMessage, Data: first}) {
				c.followups(ctx, i, rep.private[1:])
			}
			return
		}
		c.respond(ctx, respond, &response{Type: respDeferredUpdate})
		return
	}
	if rep.modal != nil {
		// Too late for a form: the Deny press stays registered and denies without a reason
		// when its window passes.
		rep.private = append(rep.private, privateMessage("The reason form could not open in time; the request will be denied without a reason unless someone decides first."))
	}
	private := rep.private
	if i.Type == discordgo.InteractionApplicationCommand && len(private) > 0 {
		// The deferred answer is an ephemeral "thinking…" message: fill it in.
		c.editOriginal(ctx, i, private[0])
		private = private[1:]
	} else if rep.update != nil {
		c.editOriginal(ctx, i, *rep.update)
	}
	c.followups(ctx, i, private)
}

// withDeadline bounds the initial response by Discord's window, counted from receipt (not
// from when the work finished).
func withDeadline(respond responder, deadline time.Time) responder {
	return func(ctx context.Context, resp *response) error {
		ctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
		defer cancel()
		return respond(ctx, resp)
	}
}

// respond sends the initial response, reporting whether it went through.
func (c *Channel) respond(ctx context.Context, respond responder, resp *response) bool {
	if err := respond(ctx, resp); err != nil {
		c.log.Warn("answering an interaction failed", "err", err)
		return false
	}
	return true
}

// followups sends ephemeral followup messages on the interaction's webhook.
func (c *Channel) followups(ctx context.Context, i *discordgo.Interaction, msgs []render.DiscordMessage) {
	appID := c.interactionApp(i)
	if appID == "" || len(msgs) == 0 {
		return
	}
	for _, m := range msgs {
		m.Flags |= flagEphemeral
		_, err := c.request(ctx, "interaction followup", http.MethodPost, discordgo.EndpointFollowupMessage(appID, i.Token),
			spread("webhooks", i.ID), m)
		if err != nil {
			c.log.Warn("interaction followup failed", "err", err)
			return
		}
	}
}

// editOriginal edits the interaction's original response (after a deferred answer).
func (c *Channel) editOriginal(ctx context.Context, i *discordgo.Interaction, m render.DiscordMessage) {
	appID := c.interactionApp(i)
	if appID == "" {
		return
	}
	m.Flags &= render.DiscordFlagSuppressEmbeds // the only flag an edit may change
	_, err := c.request(ctx, "interaction edit", http.MethodPatch, discordgo.EndpointInteractionResponseActions(appID, i.Token),
		spread("webhooks", i.ID), m)
	if err != nil {
		c.log.Warn("editing an interaction answer failed", "err", err)
	}
}

func (c *Channel) interactionApp(i *discordgo.Interaction) string {
	if snowflake(i.AppID) {
		return i.AppID
	}
	app, _ := c.ids()
	return app
}

// spread maps per-interaction routes onto a few rate-limit buckets: discordgo never forgets
// a bucket, and one per interaction would grow without bound.
func spread(prefix, id string) string {
	h := fnv.New32a()
	h.Write([]byte(id))
	return prefix + "#" + strconv.Itoa(int(h.Sum32()%8))
}

// restResponder answers through the interaction callback endpoint (gateway mode).
func (c *Channel) restResponder(i *discordgo.Interaction) responder {
	return func(ctx context.Context, resp *response) error {
		_, err := c.request(ctx, "interaction response", http.MethodPost, discordgo.EndpointInteractionResponse(i.ID, i.Token),
			spread("interactions", i.ID), resp)
		return err
	}
}

// actorOf is who acted: the member's user in a guild, the user in a DM. A malformed
// interaction (no user, or a member outside a guild) has no actor.
func actorOf(i *discordgo.Interaction) (chatops.Actor, bool) {
	var u *discordgo.User
	name := ""
	switch {
	case i.GuildID != "":
		if i.Member == nil || i.Member.User == nil {
			return chatops.Actor{}, false
		}
		u, name = i.Member.User, i.Member.Nick
	default:
		if i.Member != nil || i.User == nil {
			return chatops.Actor{}, false
		}
		u = i.User
	}
	if !snowflake(u.ID) || u.Bot {
		return chatops.Actor{}, false
	}
	if name == "" {
		name = u.GlobalName
	}
	if name == "" {
		name = u.Username
	}
	return chatops.Actor{ID: u.ID, Name: name}, true
}

// placeAllowed applies the optional guild limit: with guilds configured, only those guilds
// count (and a DM only when its channel is configured explicitly).
func (c *Channel) placeAllowed(guildID, chat string) bool {
	if !snowflake(chat) {
		return false
	}
	if len(c.guilds) == 0 {
		return true
	}
	if guildID == "" {
		return c.listen[chat]
	}
	return c.guilds[guildID]
}

func (c *Channel) refuse(ctx context.Context, r gate.Resolver, chat string, actor chatops.Actor, id, what string) {
	chatops.CounterOf(r).Refused(Name)
	r.Audit(ctx, approval.AuditEntry{
		Event: approval.EventUnauthorized, RequestID: id, Channel: Name,
		Actor: Name + ":" + actor.ID + " chat " + chat, Reason: what,
	})
}

// otherCard reports whether message (in chat) is known as the card of a request other
// than id: a press whose button names another request than its card is refused. Whether
// the request went to this chat at all is checked by chatops before any decision.
func otherCard(r gate.Resolver, chat, message, id string) bool {
	rec, ok := r.ByCard(Name, chat, message)
	return ok && rec.ID != id
}

func waitKey(id, user string) string { return id + "/" + user }

// press handles a button on a card.
func (c *Channel) press(ctx context.Context, ops *chatops.Ops, waits *chatops.ReasonWaits, i *discordgo.Interaction, actor chatops.Actor) reply {
	data := i.MessageComponentData()
	action, id, ok := render.ParseCallback(data.CustomID)
	if !ok || i.Message == nil || !snowflake(i.Message.ID) {
		return privateReply(chatops.TextNotFound)
	}
	chat, msg := i.ChannelID, i.Message.ID
	if otherCard(ops.Resolver, chat, msg, id) {
		return privateReply(chatops.TextNotFound)
	}
	log := c.log.With("request_id", id, "actor", actor.ID, "action", string(action))
	switch action {
	case render.ActionDetails:
		a := ops.Press(ctx, chat, msg, actor, action, id, false)
		if a.Kind != chatops.KindDetails || a.Details == "" {
			if a.Kind == chatops.KindDetails {
				a.Text = "No details for this request."
			}
			log.Info("details press answered", "answer", a.Text)
			return privateReply(a.Text)
		}
		return reply{private: render.DiscordDetails(id, a.Details, "")}
	case render.ActionDeny:
		a := ops.Press(ctx, chat, msg, actor, action, id, true)
		if a.Kind != chatops.KindNeedReason {
			log.Info("deny press answered", "answer", a.Text)
			return privateReply(a.Text)
		}
		waits.Start(ctx, waitKey(id, actor.ID), chat, actor, id, func(a chatops.Answer) {
			if a.Decided() {
				c.log.Info("denied without a reason after the window", "request_id", id, "actor", actor.ID)
			}
		})
		return reply{modal: denyModal(id)}
	}
	a := ops.Press(ctx, chat, msg, actor, action, id, false)
	if !a.Decided() {
		log.Info("press answered", "answer", a.Text)
		return privateReply(a.Text)
	}
	log.Info("press decided", "outcome", a.Request.Outcome)
	card := render.DiscordResolved(render.CardFor(&a.Request))
	return reply{update: &card}
}

// modalSubmit handles the Deny form.
func (c *Channel) modalSubmit(ctx context.Context, ops *chatops.Ops, waits *chatops.ReasonWaits, i *discordgo.Interaction, actor chatops.Actor) reply {
	data := i.ModalSubmitData()
	action, id, ok := render.ParseCallback(data.CustomID)
	if !ok || action != render.ActionDeny {
		return privateReply(chatops.TextNotFound)
	}
	chat := i.ChannelID
	if i.Message == nil || otherCard(ops.Resolver, chat, i.Message.ID, id) {
		return privateReply(chatops.TextNotFound)
	}
	reason := strings.TrimSpace(modalValue(data.Components, reasonInput))
	if r := []rune(reason); len(r) > maxReason {
		reason = string(r[:maxReason])
	}
	a, ok := waits.Reason(ctx, waitKey(id, actor.ID), actor, reason)
	if !ok {
		// The window passed (or approvebot restarted): deny anyway, with the reason; a
		// request already denied without one answers "already decided".
		a = ops.Deny(ctx, chat, actor, id, reason)
	}
	if !a.Decided() {
		return privateReply(a.Text)
	}
	c.log.Info("denied with a reason", "request_id", id, "actor", actor.ID)
	card := render.DiscordResolved(render.CardFor(&a.Request))
	return reply{update: &card}
}

func modalValue(components []discordgo.MessageComponent, id string) string {
	for _, comp := range components {
		switch v := comp.(type) {
		case *discordgo.ActionsRow:
			if s := modalValue(v.Components, id); s != "" {
				return s
			}
		case *discordgo.TextInput:
			if v.CustomID == id {
				return v.Value
			}
		}
	}
	return ""
}

// slashCommand handles /approve [id], /deny reason:… [id] and /pending.
func (c *Channel) slashCommand(ctx context.Context, ops *chatops.Ops, i *discordgo.Interaction, actor chatops.Actor) reply {
	data := i.ApplicationCommandData()
	var cmd chatops.Command
	switch data.Name {
	case "approve":
		cmd.Verb = chatops.VerbApprove
	case "deny":
		cmd.Verb = chatops.VerbDeny
	case "pending":
		cmd.Verb = chatops.VerbPending
	default:
		return privateReply("Unknown command.")
	}
	for _, o := range data.Options {
		if o == nil || o.Type != discordgo.ApplicationCommandOptionString {
			continue
		}
		v, _ := o.Value.(string)
		switch o.Name {
		case "id":
			cmd.ID = strings.ToLower(strings.TrimSpace(v))
		case "reason":
			cmd.Reason = strings.TrimSpace(v)
		}
	}
	if cmd.ID != "" && !gate.ValidID(cmd.ID) {
		return privateReply(chatops.TextNotFound)
	}
	a := c.command(ctx, ops, i.ChannelID, actor, cmd, "")
	c.log.Info("command answered", "command", string(cmd.Verb), "actor", actor.ID, "decided", a.Decided())
	return privateReply(a.Text)
}

// command runs a typed command through chatops, which acts only on requests whose card
// went to this chat (so per-channel approvers cannot reach other channels' requests).
func (c *Channel) command(ctx context.Context, ops *chatops.Ops, chat string, actor chatops.Actor, cmd chatops.Command, replyTo string) chatops.Answer {
	return ops.Command(ctx, chat, actor, cmd, replyTo)
}
