package telegram

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"html"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/chatops"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/render"
	"github.com/approvebot/approvebot/internal/inbound"
)

// Private answers that only Telegram needs.
const (
	textNoSender     = "Commands must come from your own account (not anonymously or as a channel). Nothing was changed."
	textInlineButton = "This button cannot be used here. Nothing was changed."
	textBadButton    = "This button is not valid. Nothing was changed."
	textDetailsSent  = "The full action is posted below the card."
	textNoReasonWait = "No deny is waiting for your reason here (it was decided, or the window passed). Nothing was changed."
)

// promptRef is a ForceReply prompt asking for a deny reason.
type promptRef struct {
	chat int64
	msg  int
}

type prompt struct {
	key     string // ReasonWaits key: chat, presser and request
	request string
}

func reasonKey(chat, user, request string) string { return chat + "|" + user + "|" + request }

func (c *Channel) handleUpdate(ctx context.Context, u *models.Update) {
	if u == nil {
		return
	}
	ops, waits := c.current()
	if ops == nil {
		return
	}
	// A decision under way completes even when shutdown begins.
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), handleTimeout)
	defer cancel()
	defer func() {
		if p := recover(); p != nil {
			c.log.Error("telegram update handler panic", "panic", fmt.Sprint(p))
		}
	}()
	if cl, ok := ops.Resolver.(gate.Claimer); ok {
		// An update can come twice: to a new leader that polls before the old one
		// confirmed it, or a webhook retried on another replica. It is handled once.
		first, done := cl.Claim(hctx, Name, strconv.FormatInt(u.ID, 10))
		if !first {
			c.log.Debug("telegram update already handled", "update_id", u.ID)
			return
		}
		defer done(true)
	}
	switch {
	case u.CallbackQuery != nil:
		c.handlePress(hctx, ops, waits, u.CallbackQuery)
	case u.Message != nil:
		c.handleMessage(hctx, ops, waits, u.Message)
	}
}

func actorOf(u *models.User) chatops.Actor {
	if u == nil || u.ID == 0 || u.IsBot {
		return chatops.Actor{}
	}
	name := strings.TrimSpace(u.FirstName + " " + u.LastName)
	if name == "" {
		name = u.Username
	}
	return chatops.Actor{ID: strconv.FormatInt(u.ID, 10), Name: name}
}

// handlePress answers every callback query: privately, with an alert for a refusal.
func (c *Channel) handlePress(ctx context.Context, ops *chatops.Ops, waits *chatops.ReasonWaits, q *models.CallbackQuery) {
	answered := false
	answer := func(text string, alert bool) {
		answered = true
		c.answer(ctx, q.ID, text, alert)
	}
	defer func() {
		// Even a panic below leaves no press unanswered (the client would spin).
		if !answered {
			c.answer(ctx, q.ID, chatops.TextFailed, true)
		}
	}()
	var chatID int64
	var msgID int
	switch {
	case q.Message.Message != nil:
		chatID, msgID = q.Message.Message.Chat.ID, q.Message.Message.ID
	case q.Message.InaccessibleMessage != nil:
		chatID, msgID = q.Message.InaccessibleMessage.Chat.ID, q.Message.InaccessibleMessage.MessageID
	}
	actor := actorOf(&q.From)
	if chatID == 0 || msgID == 0 {
		// An inline-mode message or none at all: not one of our cards.
		answer(textInlineButton, true)
		return
	}
	chat, msg := strconv.FormatInt(chatID, 10), strconv.Itoa(msgID)
	action, id, valid := render.ParseCallback(q.Data)
	if !valid {
		// Ops refuses (and audits) a stranger; an approver's malformed data is audited here.
		a := ops.Press(ctx, chat, msg, actor, render.Action(""), "", false)
		if a.Kind != chatops.KindNotApprover {
			ops.Resolver.Audit(ctx, approval.AuditEntry{
				Event: approval.EventUnauthorized, Channel: Name, Actor: Name + ":" + actor.ID + " chat " + chat,
				Reason: "button press with malformed data",
			})
			chatops.CounterOf(ops.Resolver).Refused(Name)
			a.Text = textBadButton
		}
		answer(a.Text, true)
		return
	}
	a := ops.Press(ctx, chat, msg, actor, action, id, true)
	switch {
	case a.Kind == chatops.KindNeedReason:
		key := reasonKey(chat, actor.ID, id)
		waits.Start(ctx, key, chat, actor, id, func(chatops.Answer) { c.forgetPrompt(key) })
		answer(a.Text, false)
		c.askReason(ctx, chatID, msgID, actor, key, id)
	case a.Kind == chatops.KindDetails && a.Details != "":
		answer(textDetailsSent, false)
		details := a.Details
		c.spawn(func() {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*replyTimeout)
			defer cancel()
			for _, m := range render.TelegramDetails(chat, id, details, int64(msgID)) {
				if err := c.send(ctx, m); err != nil {
					c.log.Warn("telegram details message failed", "request_id", id, "err", err)
					return
				}
			}
		})
	case a.Decided():
		answer(a.Text, false)
	case a.Kind == chatops.KindDetails:
		answer("Nothing more to show: the card has the whole action.", false)
	default:
		answer(a.Text, true)
	}
}

// askReason sends the ForceReply prompt for a Deny press, as a reply to the card, mentioning
// the presser so only their client opens the reply field. It runs before the next update is
// handled, so a reply to it always finds it registered.
func (c *Channel) askReason(ctx context.Context, chatID int64, cardID int, actor chatops.Actor, key, request string) {
	name := render.Clean(actor.Name, 40)
	if name == "" {
		name = "approver"
	}
	text := fmt.Sprintf(`⛔ <a href="tg://user?id=%s">%s</a>, why deny request <code>%s</code>? Reply to this message with the reason. Without one it is denied in %s.`,
		actor.ID, html.EscapeString(name), html.EscapeString(request), humanDuration(c.cfg.DenyReasonWindow.Duration))
	params := &bot.SendMessageParams{
		ChatID: chatID, Text: text, ParseMode: models.ParseModeHTML,
		LinkPreviewOptions: linkPreview(render.TelegramLinkPreview{IsDisabled: true}),
		ReplyParameters:    &models.ReplyParameters{MessageID: cardID, AllowSendingWithoutReply: true},
		ReplyMarkup: &models.ForceReply{
			ForceReply: true, Selective: true, InputFieldPlaceholder: "Reason for denying",
		},
	}
	cctx, cancel := context.WithTimeout(ctx, replyTimeout)
	defer cancel()
	var sent *models.Message
	err := c.call(cctx, "sendMessage", func(ctx context.Context) error {
		var err error
		sent, err = c.bot.SendMessage(ctx, params)
		return err
	})
	if err != nil {
		// The wait still runs: a reply to the card gives the reason, or the window denies.
		c.log.Warn("telegram reason prompt failed", "request_id", request, "err", err)
		return
	}
	c.mu.Lock()
	c.prompts[promptRef{chat: chatID, msg: sent.ID}] = prompt{key: key, request: request}
	c.mu.Unlock()
}

// humanDuration says "45 seconds" or "3 minutes".
func humanDuration(d time.Duration) string {
	if sec := int(d.Round(time.Second).Seconds()); sec < 120 {
		if sec == 1 {
			return "1 second"
		}
		return strconv.Itoa(sec) + " seconds"
	}
	return strconv.Itoa(int(d.Round(time.Minute).Minutes())) + " minutes"
}

func (c *Channel) forgetPrompt(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for ref, p := range c.prompts {
		if p.key == key {
			delete(c.prompts, ref)
		}
	}
}

func (c *Channel) promptFor(chat int64, msg int) (prompt, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.prompts[promptRef{chat: chat, msg: msg}]
	return p, ok
}

// handleMessage handles typed commands, and deny reasons typed in reply to a prompt or a
// card. Other chatter is ignored.
func (c *Channel) handleMessage(ctx context.Context, ops *chatops.Ops, waits *chatops.ReasonWaits, m *models.Message) {
	text := strings.TrimSpace(m.Text)
	if text == "" {
		return
	}
	chat := strconv.FormatInt(m.Chat.ID, 10)
	person := m.From != nil && m.SenderChat == nil && !m.From.IsBot && m.From.ID != 0
	actor := chatops.Actor{}
	if person {
		actor = actorOf(m.From)
	}
	var replyTo *models.Message
	if r := m.ReplyToMessage; r != nil && r.From != nil && r.From.ID == c.botID {
		replyTo = r
	}
	cmd, isCmd := c.parseCommand(text)

	// A reply to a reason prompt: the reason (or a command about that request).
	if replyTo != nil {
		if p, ok := c.promptFor(m.Chat.ID, replyTo.ID); ok {
			if isCmd && cmd.Verb != chatops.VerbPending {
				if cmd.ID == "" {
					cmd.ID = p.request
				}
				c.runCommand(ctx, ops, m, chat, actor, cmd, "")
				return
			}
			if !isCmd {
				c.giveReason(ctx, waits, m, chat, actor, p.key, text)
				return
			}
		}
	}
	if !isCmd {
		// Plain text in reply to a card: the reason of whoever pressed Deny on it.
		if replyTo != nil && person {
			if rec, ok := ops.Resolver.ByCard(Name, chat, strconv.Itoa(replyTo.ID)); ok {
				key := reasonKey(chat, actor.ID, rec.ID)
				if a, ok := waits.Reason(ctx, key, actor, text); ok {
					c.forgetPrompt(key)
					c.reply(ctx, m, a.Text)
				}
			}
		}
		return
	}
	ref := ""
	if replyTo != nil {
		ref = strconv.Itoa(replyTo.ID)
	}
	c.runCommand(ctx, ops, m, chat, actor, cmd, ref)
}

func (c *Channel) giveReason(ctx context.Context, waits *chatops.ReasonWaits, m *models.Message, chat string, actor chatops.Actor, key, text string) {
	if actor.ID == "" {
		return
	}
	a, ok := waits.Reason(ctx, key, actor, text)
	if !ok {
		c.reply(ctx, m, textNoReasonWait)
		return
	}
	c.forgetPrompt(key)
	c.reply(ctx, m, a.Text)
}

func (c *Channel) runCommand(ctx context.Context, ops *chatops.Ops, m *models.Message, chat string, actor chatops.Actor, cmd chatops.Command, replyTo string) {
	if actor.ID == "" {
		// No person to check against the approvers: refuse, audited by Ops.
		ops.Command(ctx, chat, actor, cmd, replyTo)
		c.replyRefusal(ctx, m, chat, "anon", textNoSender)
		return
	}
	a := ops.Command(ctx, chat, actor, cmd, replyTo)
	if a.Kind == chatops.KindNotApprover {
		c.replyRefusal(ctx, m, chat, actor.ID, a.Text)
		return
	}
	c.reply(ctx, m, a.Text)
}

// parseCommand reads /approve, /deny and /pending, ignoring commands addressed to another
// bot ("/approve@otherbot"), or to any bot while this bot's username is not known yet.
func (c *Channel) parseCommand(text string) (chatops.Command, bool) {
	if !strings.HasPrefix(text, "/") {
		return chatops.Command{}, false
	}
	word, _, _ := strings.Cut(text, " ")
	word, _, _ = strings.Cut(word, "\n")
	if _, target, ok := strings.Cut(word, "@"); ok {
		c.mu.Lock()
		me := c.username
		c.mu.Unlock()
		if me == "" || !strings.EqualFold(target, me) {
			return chatops.Command{}, false
		}
	}
	// Telegram clients may put the reason on the next line.
	return chatops.ParseCommand(strings.Replace(text, "\n", " ", 1))
}

// reply answers a message in its chat (there is no private answer to a typed command).
func (c *Channel) reply(ctx context.Context, m *models.Message, text string) {
	if text == "" {
		return
	}
	chatID, msgID := m.Chat.ID, m.ID
	c.spawn(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), replyTimeout)
		defer cancel()
		msg := render.TelegramMessage{
			ChatID: render.TelegramChatID(strconv.FormatInt(chatID, 10)), Text: replyHTML(text), ParseMode: render.TelegramParseMode,
			LinkPreviewOptions: render.TelegramLinkPreview{IsDisabled: true},
			ReplyParameters:    &render.TelegramReplyParameters{MessageID: int64(msgID), AllowSendingWithoutReply: true},
		}
		if err := c.send(ctx, msg); err != nil {
			c.log.Warn("telegram reply failed", "err", err)
		}
	})
}

// replyRefusal replies to a refused command at most once per refusalEvery for each typist,
// so strangers cannot make the bot flood a chat (and hit Telegram's rate limits).
func (c *Channel) replyRefusal(ctx context.Context, m *models.Message, chat, who, text string) {
	key := chat + "|" + who
	now := c.now()
	c.mu.Lock()
	last, seen := c.refusals[key]
	throttled := seen && now.Sub(last) < refusalEvery
	if !throttled {
		c.refusals[key] = now
		for k, t := range c.refusals {
			if now.Sub(t) >= refusalEvery {
				delete(c.refusals, k)
			}
		}
	}
	c.mu.Unlock()
	if throttled {
		return
	}
	c.reply(ctx, m, text)
}

// replyHTML shows a reply inside <code> (one line) or <pre>, where Telegram detects no
// entities: a summary or a name in it cannot mention anyone or turn into a link or command.
func replyHTML(text string) string {
	text = clip(text, render.TelegramMaxText-32)
	if strings.Contains(text, "\n") {
		return "<pre>" + html.EscapeString(text) + "</pre>"
	}
	return "<code>" + html.EscapeString(text) + "</code>"
}

// clip cuts plain text to n characters (the texts here are short; this is a guard).
func clip(s string, n int) string {
	out, _ := render.Cut(s, n)
	return out
}

// send posts one message (plain text when ParseMode is empty).
func (c *Channel) send(ctx context.Context, m render.TelegramMessage) error {
	params, err := sendParams(m)
	if err != nil {
		return err
	}
	return c.call(ctx, "sendMessage", func(ctx context.Context) error {
		_, err := c.bot.SendMessage(ctx, params)
		return err
	})
}

// answer answers a callback query (every press gets one; Telegram allows 200 characters).
func (c *Channel) answer(ctx context.Context, queryID, text string, alert bool) {
	ctx, cancel := context.WithTimeout(ctx, answerTimeout)
	defer cancel()
	params := &bot.AnswerCallbackQueryParams{CallbackQueryID: queryID, Text: clip(text, 200), ShowAlert: alert}
	err := c.call(ctx, "answerCallbackQuery", func(ctx context.Context) error {
		_, err := c.bot.AnswerCallbackQuery(ctx, params)
		return err
	})
	if err != nil {
		c.log.Warn("telegram answerCallbackQuery failed", "err", err)
	}
}

// HTTPHandler is what the channel serves on the API listener: in webhook mode, Telegram's
// webhook calls at webhook_path; otherwise nothing ("", nil).
func (c *Channel) HTTPHandler() (string, http.Handler) {
	if c.cfg.Mode != ModeWebhook {
		return "", nil
	}
	return c.cfg.WebhookPath, c.webhookHandler()
}

// webhookHandler checks the X-Telegram-Bot-Api-Secret-Token header in constant time and
// answers 401 to a wrong one (the library's own handler answers 200), caps the body, and
// handles the update before answering, so a failure is retried by Telegram rather than
// lost. An update the library cannot decode is skipped (logged, counted) and answered 200:
// Telegram would otherwise send it again and hold back every update behind it.
func (c *Channel) webhookHandler() http.Handler {
	want := sha256.Sum256([]byte(c.secret))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !inbound.Post(w, r) {
			return
		}
		got := sha256.Sum256([]byte(r.Header.Get("X-Telegram-Bot-Api-Secret-Token")))
		if c.secret == "" || subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			c.badWebhookSecret(r)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		body, ok := inbound.Body(w, r, maxWebhookBody)
		if !ok {
			return
		}
		ops, _ := c.current()
		if ops == nil {
			// Not running yet (or shutting down): Telegram delivers it again later.
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		id, u, err := decodeUpdate(body)
		switch {
		case err != nil && id < 0:
			http.Error(w, "bad update", http.StatusBadRequest)
			return
		case err != nil:
			c.skipUpdate(chatops.CounterOf(ops.Resolver), id, err)
		default:
			c.handleUpdate(r.Context(), u)
		}
		w.WriteHeader(http.StatusOK)
	})
}

// badWebhookSecret counts and audits a webhook call with a wrong secret (audited at most
// once a minute, so a flood cannot grow the trail without bound). Before Run there is no
// resolver to count or audit with; the call is still refused.
func (c *Channel) badWebhookSecret(r *http.Request) {
	now := c.now()
	c.mu.Lock()
	audit := now.Sub(c.badAuth) >= time.Minute
	if audit {
		c.badAuth = now
	}
	ops := c.ops
	c.mu.Unlock()
	if ops != nil {
		chatops.CounterOf(ops.Resolver).Refused(Name)
	}
	if !audit {
		return
	}
	c.log.Warn("telegram webhook call with a wrong secret token", "remote", r.RemoteAddr)
	if ops != nil {
		ops.Resolver.Audit(r.Context(), approval.AuditEntry{
			Event: approval.EventUnauthorized, Channel: Name, Actor: "webhook " + r.RemoteAddr,
			Reason: "webhook call with a wrong secret token",
		})
	}
}
