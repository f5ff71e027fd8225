// Package telegram is approvebot's Telegram channel, on github.com/go-telegram/bot: it posts
// a request's card to the configured chats (HTML parse mode, inline buttons), edits every
// card when the request is decided, and turns button presses, /approve, /deny and /pending
// into decisions through core/chatops and the gate's single compare-and-set. Updates come by
// long polling (the default; approvebot's own getUpdates loop on the library's types, so an
// update the library cannot decode is skipped instead of stalling the rest) or by webhook,
// whose secret header approvebot checks itself.
package telegram

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/chatops"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/render"
	"github.com/approvebot/approvebot/internal/retry"
	"github.com/approvebot/approvebot/internal/section"
)

// Name is the channel's config name.
const Name = "telegram"

// Timeouts of the channel's own calls (Post and Edit run under the gate's context).
const (
	handleTimeout = 20 * time.Second // one update, decision included
	answerTimeout = 8 * time.Second  // answerCallbackQuery
	replyTimeout  = 15 * time.Second // a reply, a reason prompt, a details message
	setupTimeout  = 30 * time.Second // getMe, setWebhook, deleteWebhook (each attempt)
	drainTimeout  = 5 * time.Second  // waiting for replies in flight at shutdown
	// maxWebhookBody caps one webhook update; real updates are a few KiB.
	maxWebhookBody = 1 << 20
	// refusalEvery throttles chat replies to one non-approver's commands.
	refusalEvery = 30 * time.Second
)

// Channel is the Telegram channel. Build it with New; the gate calls Post, Edit and Run.
type Channel struct {
	cfg       Config
	token     string
	secret    string
	apiURL    string
	log       *slog.Logger
	bot       *bot.Bot
	http      *observedClient
	botID     int64
	chats     []string
	approvers chatops.Approvers
	now       func() time.Time
	retry     retry.Policy
	health    health

	mu       sync.Mutex
	username string
	ops      *chatops.Ops
	waits    *chatops.ReasonWaits
	prompts  map[promptRef]prompt
	refusals map[string]time.Time
	badAuth  time.Time
	jobs     sync.WaitGroup
}

var (
	_ gate.Channel = (*Channel)(nil)
	_ gate.Runner  = (*Channel)(nil)
)

// New builds the channel from its section (defaults applied, then validated), its
// secrets, a logger (nil discards) and the HTTP client for every API call (nil: one with
// timeouts that fit the long poll). It does not contact Telegram: Run does.
func New(cfg Config, secrets Secrets, logger *slog.Logger, hc *http.Client) (*Channel, error) {
	cfg, err := section.Ready(cfg, secrets, Config.checkSecrets)
	if err != nil {
		return nil, err
	}
	apiURL := strings.TrimRight(cfg.APIURL, "/")
	if apiURL == "" {
		apiURL = DefaultAPIURL
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if hc == nil {
		hc = &http.Client{Timeout: cfg.PollTimeout.Duration + 30*time.Second}
	}
	c := &Channel{
		cfg: cfg, token: secrets.Token, secret: secrets.WebhookSecret, apiURL: apiURL, log: logger.With("channel", Name),
		now: time.Now, prompts: map[promptRef]prompt{}, refusals: map[string]time.Time{},
		retry: retry.Policy{Base: backoffMin, Max: backoffMax},
	}
	c.http = &observedClient{http: hc, ch: c}
	c.health.now = time.Now
	c.health.detail = "not connected yet"
	c.botID, _ = strconv.ParseInt(strings.SplitN(secrets.Token, ":", 2)[0], 10, 64)
	for _, id := range cfg.Chats {
		c.chats = append(c.chats, strconv.FormatInt(id, 10))
	}
	perChat := map[string][]string{}
	for chat, ids := range cfg.ChatApprovers {
		perChat[chat] = int64s(ids)
	}
	c.approvers = chatops.NewApprovers(int64s(cfg.Approvers), perChat)
	b, err := bot.New(secrets.Token,
		bot.WithServerURL(apiURL),
		bot.WithSkipGetMe(),
		bot.WithHTTPClient(cfg.PollTimeout.Duration, c.http),
		bot.WithErrorsHandler(c.loopError),
	)
	if err != nil {
		return nil, errors.New("telegram: " + c.scrub(err.Error()))
	}
	c.bot = b
	return c, nil
}

func int64s(ids []int64) []string {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		out = append(out, strconv.FormatInt(id, 10))
	}
	return out
}

// Name is "telegram".
func (c *Channel) Name() string { return Name }

// Chats are the configured chat ids.
func (c *Channel) Chats() []string { return append([]string(nil), c.chats...) }

// Health reports whether the Bot API answered the last call.
func (c *Channel) Health() gate.Health {
	h := &c.health
	h.mu.Lock()
	defer h.mu.Unlock()
	out := gate.Health{Detail: h.detail, LastOK: h.lastOK}
	out.OK = !h.lastOK.IsZero() && !h.lastFail.After(h.lastOK)
	if h.lastFail.After(h.lastOK) || !out.OK {
		out.LastError = h.lastError
	}
	return out
}

// Post sends the pending card to chat. It retries within ctx (429 after retry_after, 5xx
// with backoff) and returns the posted message's reference.
func (c *Channel) Post(ctx context.Context, chat string, card render.Card) (approval.CardRef, error) {
	p := render.TelegramPending(card, chat)
	params, err := sendParams(p)
	if err != nil {
		return approval.CardRef{}, err
	}
	var msg *models.Message
	err = c.call(ctx, "sendMessage", func(ctx context.Context) error {
		var err error
		msg, err = c.bot.SendMessage(ctx, params)
		return err
	})
	if err != nil {
		return approval.CardRef{}, err
	}
	return approval.CardRef{Channel: Name, Chat: chat, Message: strconv.Itoa(msg.ID)}, nil
}

// Edit turns a posted card into its resolved form, without buttons. An edit that changes
// nothing ("message is not modified") is a success.
func (c *Channel) Edit(ctx context.Context, ref approval.CardRef, card render.Card) error {
	msgID, err := strconv.ParseInt(ref.Message, 10, 64)
	if err != nil {
		return fmt.Errorf("telegram: card reference %q is not a message id", ref.Message)
	}
	if _, err := strconv.ParseInt(ref.Chat, 10, 64); err != nil {
		return fmt.Errorf("telegram: card reference chat %q is not a chat id", ref.Chat)
	}
	e := render.TelegramResolved(card, ref.Chat, msgID)
	params := &bot.EditMessageTextParams{
		ChatID: e.ChatID, MessageID: int(e.MessageID), Text: e.Text, ParseMode: models.ParseMode(e.ParseMode),
		LinkPreviewOptions: linkPreview(e.LinkPreviewOptions), ReplyMarkup: e.ReplyMarkup,
	}
	err = c.call(ctx, "editMessageText", func(ctx context.Context) error {
		_, err := c.bot.EditMessageText(ctx, params)
		return err
	})
	var ae *APIError
	if errors.As(err, &ae) && ae.NotModified() {
		return nil
	}
	return err
}

// sendParams turns a render payload into the library's parameters. The keyboard and the
// chat id are passed as render's own types, so the API receives exactly the JSON render
// made (`approvebot check -json` shows the same).
func sendParams(m render.TelegramMessage) (*bot.SendMessageParams, error) {
	if _, err := strconv.ParseInt(string(m.ChatID), 10, 64); err != nil {
		return nil, fmt.Errorf("telegram: chat %q is not a numeric chat id", string(m.ChatID))
	}
	p := &bot.SendMessageParams{
		ChatID: m.ChatID, Text: m.Text, ParseMode: models.ParseMode(m.ParseMode),
		LinkPreviewOptions: linkPreview(m.LinkPreviewOptions),
	}
	if m.ReplyMarkup != nil {
		p.ReplyMarkup = *m.ReplyMarkup
	}
	if m.ReplyParameters != nil {
		p.ReplyParameters = &models.ReplyParameters{
			MessageID: int(m.ReplyParameters.MessageID), AllowSendingWithoutReply: m.ReplyParameters.AllowSendingWithoutReply,
		}
	}
	return p, nil
}

func linkPreview(o render.TelegramLinkPreview) *models.LinkPreviewOptions {
	disabled := o.IsDisabled
	return &models.LinkPreviewOptions{IsDisabled: &disabled}
}

// loopError records a failed getUpdates (or an error the library reports on its own):
// logged without the token, at most once per distinct text in a row.
func (c *Channel) loopError(err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	msg := c.scrub(err.Error())
	c.health.mu.Lock()
	repeat := c.health.lastError == msg
	c.health.lastFail = c.health.now()
	c.health.lastError = msg
	c.health.mu.Unlock()
	if !repeat {
		c.log.Warn("telegram update loop error", "err", msg)
	}
}

// Run reads updates until ctx ends: long polling, or (webhook mode) registering the
// webhook when webhook_url is set and serving HTTPHandler. Decisions go through r.
func (c *Channel) Run(ctx context.Context, r gate.Resolver) error {
	ops := &chatops.Ops{Channel: Name, Approvers: c.approvers, Resolver: r}
	waits := chatops.NewReasonWaits(ops, c.cfg.DenyReasonWindow.Duration)
	c.mu.Lock()
	c.ops, c.waits = ops, waits
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.ops, c.waits = nil, nil
		c.mu.Unlock()
		// Prompts still waiting leave their requests pending: the deadline refuses them.
		waits.Stop()
		c.drain()
	}()
	go c.identify(ctx)
	if c.cfg.Mode == ModeWebhook {
		c.health.setDetail("webhook")
		if c.cfg.WebhookURL != "" {
			c.setupWebhook(ctx)
		}
		<-ctx.Done()
		return nil
	}
	c.health.setDetail("long polling")
	// A webhook left over from an earlier setup makes getUpdates fail with 409.
	dctx, cancel := context.WithTimeout(ctx, setupTimeout)
	err := c.call(dctx, "deleteWebhook", func(ctx context.Context) error {
		_, err := c.bot.DeleteWebhook(ctx, &bot.DeleteWebhookParams{})
		return err
	})
	cancel()
	if err != nil && ctx.Err() == nil {
		c.log.Warn("telegram deleteWebhook failed; polling anyway", "err", err)
	}
	c.poll(ctx, chatops.CounterOf(r))
	return nil
}

// identify learns the bot's username (to tell "/approve@thisbot" from another bot's
// command), retrying until it succeeds or ctx ends.
func (c *Channel) identify(ctx context.Context) {
	err := c.call(ctx, "getMe", func(ctx context.Context) error {
		cctx, cancel := context.WithTimeout(ctx, setupTimeout)
		defer cancel()
		me, err := c.bot.GetMe(cctx)
		if err == nil {
			c.mu.Lock()
			c.username = me.Username
			c.mu.Unlock()
			mode := "long polling"
			if c.cfg.Mode == ModeWebhook {
				mode = "webhook"
			}
			c.health.setDetail(mode + " as @" + me.Username)
		}
		return err
	})
	if err != nil && ctx.Err() == nil {
		c.log.Error("telegram getMe failed: check the bot token and api_url", "err", err)
	}
}

func (c *Channel) setupWebhook(ctx context.Context) {
	err := c.call(ctx, "setWebhook", func(ctx context.Context) error {
		cctx, cancel := context.WithTimeout(ctx, setupTimeout)
		defer cancel()
		_, err := c.bot.SetWebhook(cctx, &bot.SetWebhookParams{
			URL: c.cfg.WebhookURL, SecretToken: c.secret, AllowedUpdates: []string{"message", "callback_query"},
		})
		return err
	})
	if err != nil && ctx.Err() == nil {
		c.log.Error("telegram setWebhook failed", "err", err)
	}
}

// spawn runs a reply in the background; Run waits for them (briefly) before returning.
// Once Run is over (or before it starts) it runs fn in place instead.
func (c *Channel) spawn(fn func()) {
	c.mu.Lock()
	running := c.ops != nil
	if running {
		c.jobs.Add(1)
	}
	c.mu.Unlock()
	if !running {
		fn()
		return
	}
	go func() {
		defer c.jobs.Done()
		fn()
	}()
}

func (c *Channel) drain() {
	done := make(chan struct{})
	go func() { c.jobs.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(drainTimeout):
	}
}

func (c *Channel) current() (*chatops.Ops, *chatops.ReasonWaits) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ops, c.waits
}
