package discord

import (
	"context"
	"net/http"
	"strings"
	"unicode/utf16"

	"github.com/bwmarrin/discordgo"

	"github.com/approvebot/approvebot/core/chatops"
	"github.com/approvebot/approvebot/core/render"
)

// noMentions is allowed_mentions with an explicit empty parse list: nothing pings.
func noMentions() render.DiscordAllowedMentions {
	return render.DiscordAllowedMentions{Parse: []string{}}
}

// privateMessage is an answer to one person (ephemeral where the platform allows): the
// text, escaped by core/render, in a code block where no markdown, link or mention renders,
// cut to Discord's content limit.
func privateMessage(text string) render.DiscordMessage {
	return render.DiscordMessage{
		Content:         codeBlock(text),
		Components:      []render.DiscordComponent{},
		AllowedMentions: noMentions(),
		Flags:           flagEphemeral | render.DiscordFlagSuppressEmbeds,
	}
}

func codeBlock(text string) string {
	wrap := func(s string) string { return "```\n" + render.DiscordEscape(s) + "\n```" }
	out := wrap(text)
	for n := len([]rune(text)); utf16Len(out) > render.DiscordMaxContent && n > 1; {
		n = n * 3 / 4
		cut, _ := render.Cut(text, n)
		out = wrap(cut)
	}
	return out
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// onMessage handles "/approve"-style text: a reply to a card targets that card; a command
// that replies to nothing acts in a configured channel (FIFO for /approve and /deny).
func (c *Channel) onMessage(ctx context.Context, m *discordgo.Message) {
	ops := c.ops.Load()
	if ops == nil || m.Author == nil || m.Author.Bot || m.Author.System || m.WebhookID != "" {
		return
	}
	_, bot := c.ids()
	if bot == "" || m.Author.ID == bot {
		// Until READY named the bot, a reply to a card cannot be told from a plain command.
		return
	}
	text := strings.TrimSpace(m.Content)
	if !strings.HasPrefix(text, "/") {
		return
	}
	cmd, ok := chatops.ParseCommand(text)
	if !ok {
		return
	}
	chat := m.ChannelID
	// replyTo is set only for a reply to one of the bot's own messages (a card, or not);
	// a reply to someone else's message is a plain command.
	replyTo := ""
	if ref := m.MessageReference; ref != nil && snowflake(ref.MessageID) && (ref.ChannelID == "" || ref.ChannelID == chat) {
		rm := m.ReferencedMessage
		if rm == nil || rm.Author == nil || rm.Author.ID == bot {
			replyTo = ref.MessageID
		}
		if rm != nil && rm.Author != nil && rm.Author.ID == bot && cmd.ID == "" && cmd.Verb != chatops.VerbPending {
			// The card's own buttons name its request: a reply works even before the
			// card's reference is recorded, and never reaches another request.
			cmd.ID = cardRequest(rm)
		}
	}
	if replyTo == "" && !c.listen[chat] {
		return
	}
	if !snowflake(m.Author.ID) {
		return
	}
	name := m.Author.GlobalName
	if m.Member != nil && m.Member.Nick != "" {
		name = m.Member.Nick
	}
	if name == "" {
		name = m.Author.Username
	}
	actor := chatops.Actor{ID: m.Author.ID, Name: name}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), workTimeout)
	defer cancel()

	var a chatops.Answer
	if !c.placeAllowed(m.GuildID, chat) {
		c.refuse(wctx, ops.Resolver, chat, actor, "", "command from a guild or channel not configured")
		a = chatops.NotApprover()
	} else {
		// A reply targets exactly the card it replies to; chatops never falls back to the
		// oldest request when that card is no longer waiting.
		a = c.command(wctx, ops, chat, actor, cmd, replyTo)
	}
	c.log.Info("message command answered", "command", string(cmd.Verb), "actor", actor.ID, "decided", a.Decided())
	c.replyTo(wctx, chat, m.ID, a.Text)
}

// replyTo answers a message in its channel, quietly (no notification, no mention).
func (c *Channel) replyTo(ctx context.Context, chat, messageID, text string) {
	msg := privateMessage(text)
	msg.Flags = render.DiscordFlagSuppressEmbeds | flagSuppressNotifications
	msg.MessageReference = &render.DiscordMessageReference{MessageID: messageID, FailIfNotExists: false}
	ep := discordgo.EndpointChannelMessages(chat)
	if _, err := c.request(ctx, "reply", http.MethodPost, ep, ep, msg); err != nil {
		c.log.Warn("answering a message command failed", "err", err)
	}
}

// cardRequest is the request id a card's buttons carry ("" when it has none: resolved).
func cardRequest(m *discordgo.Message) string {
	id := ""
	var walk func([]discordgo.MessageComponent)
	walk = func(cs []discordgo.MessageComponent) {
		for _, c := range cs {
			switch v := c.(type) {
			case *discordgo.ActionsRow:
				walk(v.Components)
			case *discordgo.Button:
				if _, rid, ok := render.ParseCallback(v.CustomID); ok && id == "" {
					id = rid
				}
			}
		}
	}
	walk(m.Components)
	return id
}
