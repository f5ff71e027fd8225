// Package discord is approvebot's Discord channel: it posts approval cards with buttons to
// Discord channels over the REST API, edits them when the request is resolved, and reads
// button presses, the Deny reason modal, the /approve, /deny and /pending application
// commands and "/approve"-style replies to a card from the gateway (or, optionally, from an
// HTTP interactions endpoint verified with Ed25519). Every decision goes through
// core/chatops and the gate's single compare-and-set; nothing here decides on its own.
package discord

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/chatops"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/render"
	"github.com/approvebot/approvebot/internal/retry"
	"github.com/approvebot/approvebot/internal/section"
)

// Name is the channel's config name.
const Name = "discord"

var (
	_ gate.Channel = (*Channel)(nil)
	_ gate.Runner  = (*Channel)(nil)
)

// Channel is the Discord channel. Build it with New.
type Channel struct {
	cfg       Config
	log       *slog.Logger
	token     string // "Bot …", as discordgo sends it
	bare      string // without the prefix, for scrubbing
	session   *discordgo.Session
	closed    atomic.Bool
	publicKey ed25519.PublicKey
	approvers chatops.Approvers
	guilds    map[string]bool
	listen    map[string]bool
	now       func() time.Time
	retry     retry.Policy
	// ackBudget is ackBudget, shorter in tests of the deferred answer.
	ackBudget time.Duration

	ops     atomic.Pointer[chatops.Ops]
	waits   atomic.Pointer[chatops.ReasonWaits]
	running atomic.Bool

	idMu  sync.Mutex
	appID string
	botID string

	registered atomic.Bool

	hmu    sync.Mutex
	health healthState

	sigMu        sync.Mutex
	sigLastAudit time.Time
	sigSkipped   int
}

type healthState struct {
	connected bool
	failing   bool
	lastErr   string
	lastOK    time.Time
}

// Backoff of REST calls and gateway connects: 250 ms doubling to 5 s, with jitter.
const (
	backoffMin = 250 * time.Millisecond
	backoffMax = 5 * time.Second
	// maxAttemptsNoDeadline bounds retries when the context has no deadline.
	maxAttemptsNoDeadline = 8
	// rateLimitPad is added to Discord's retry_after.
	rateLimitPad = 25 * time.Millisecond
)

// New builds the channel from its section (defaults applied, then validated), its
// secrets, a logger (nil discards) and the HTTP client whose transport and timeout REST
// calls use (nil: defaults). It builds the discordgo session but connects nothing: Run does.
func New(cfg Config, secrets Secrets, logger *slog.Logger, hc *http.Client) (*Channel, error) {
	cfg, err := section.Ready(cfg, secrets, Config.checkSecrets)
	if err != nil {
		return nil, err
	}
	bare, _ := secrets.bare()
	publicKey, _ := cfg.publicKey()
	apiURL, _ := cfg.apiURL()
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	c := &Channel{
		cfg: cfg, log: logger.With("channel", Name), token: "Bot " + bare, bare: bare, now: time.Now,
		publicKey: publicKey, approvers: chatops.NewApprovers(cfg.Approvers, cfg.ChannelApprovers),
		guilds: set(cfg.Guilds), listen: set(cfg.Channels), appID: cfg.ApplicationID,
		retry:     retry.Policy{Base: backoffMin, Max: backoffMax, MaxAttempts: maxAttemptsNoDeadline, Pad: rateLimitPad},
		ackBudget: ackBudget,
	}
	s, err := discordgo.New(c.token)
	if err != nil {
		return nil, errors.New(key + ": building the session failed")
	}
	s.Client = newHTTPClient(apiURL, hc, &c.closed)
	s.Dialer = newDialer(&c.closed)
	// discordgo logs through the standard logger and, at debug level, prints the identify
	// packet with the token: keep it silent; the channel logs what matters itself.
	s.LogLevel = -1
	s.Compress = false
	s.StateEnabled = false
	s.ShouldRetryOnRateLimit = false
	s.MaxRestRetries = 0
	s.Identify.Intents = discordgo.IntentsGuildMessages | discordgo.IntentsDirectMessages
	if *cfg.MessageContent {
		s.Identify.Intents |= discordgo.IntentMessageContent
	}
	c.session = s
	return c, nil
}

// Name implements gate.Channel.
func (c *Channel) Name() string { return Name }

// Chats are the configured channel ids.
func (c *Channel) Chats() []string { return append([]string(nil), c.cfg.Channels...) }

// Health implements gate.Channel.
func (c *Channel) Health() gate.Health {
	c.hmu.Lock()
	defer c.hmu.Unlock()
	h := gate.Health{LastError: c.health.lastErr, LastOK: c.health.lastOK}
	switch {
	case c.health.failing:
		h.Detail = "Discord API calls are failing"
	case c.cfg.Mode == ModeGateway && !c.health.connected:
		h.Detail = "gateway not connected"
	case c.cfg.Mode == ModeGateway:
		h.OK, h.Detail = true, "gateway connected"
	default:
		h.OK, h.Detail = true, "http interactions"
	}
	return h
}

func (c *Channel) succeeded() {
	c.hmu.Lock()
	c.health.failing = false
	c.health.lastOK = c.now().UTC()
	c.hmu.Unlock()
}

// failed records a given-up call. Rejections of one payload (4xx other than 401/403) are
// reported but do not make the channel unhealthy.
func (c *Channel) failed(e *apiError) error {
	c.hmu.Lock()
	c.health.lastErr = e.Error()
	if e.rateLimit || e.status >= 500 || e.status == 401 || e.status == 403 || (e.status == 0 && e.cause != nil && !isContextErr(e.cause)) {
		c.health.failing = true
	}
	c.hmu.Unlock()
	return e
}

func (c *Channel) setConnected(on bool) {
	c.hmu.Lock()
	c.health.connected = on
	if on {
		c.health.lastOK = c.now().UTC()
	}
	c.hmu.Unlock()
}

// postBody is a card's Create Message body plus a nonce Discord enforces, so a retry after
// a lost answer (or a re-delivery after a restart) never posts the card twice.
type postBody struct {
	render.DiscordMessage
	Nonce        string `json:"nonce"`
	EnforceNonce bool   `json:"enforce_nonce"`
}

// nonce is stable per (request, chat) and within Discord's 25-character limit.
func nonce(requestID, chat string) string {
	sum := sha256.Sum256([]byte(requestID + "/" + chat))
	return hex.EncodeToString(sum[:])[:25]
}

// Post implements gate.Channel: it sends the pending card to one channel.
func (c *Channel) Post(ctx context.Context, chat string, card render.Card) (approval.CardRef, error) {
	if !snowflake(chat) {
		return approval.CardRef{}, fmt.Errorf("discord: %q is not a channel id", chat)
	}
	body := postBody{DiscordMessage: render.DiscordPending(card), Nonce: nonce(card.RequestID, chat), EnforceNonce: true}
	ep := discordgo.EndpointChannelMessages(chat)
	raw, err := c.request(ctx, "create message", http.MethodPost, ep, ep, body)
	if err != nil {
		return approval.CardRef{}, err
	}
	var m struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(raw, &m); err != nil || !snowflake(m.ID) {
		return approval.CardRef{}, c.failed(&apiError{op: "create message", cause: errors.New("answer without a message id")})
	}
	return approval.CardRef{Channel: Name, Chat: chat, Message: m.ID}, nil
}

// Edit implements gate.Channel: it turns a posted card into its resolved form, no buttons.
func (c *Channel) Edit(ctx context.Context, ref approval.CardRef, card render.Card) error {
	if !snowflake(ref.Chat) || !snowflake(ref.Message) {
		return fmt.Errorf("discord: card reference %q/%q is not a Discord message", ref.Chat, ref.Message)
	}
	_, err := c.request(ctx, "edit message", http.MethodPatch, discordgo.EndpointChannelMessage(ref.Chat, ref.Message),
		discordgo.EndpointChannelMessage(ref.Chat, ""), render.DiscordResolved(card))
	return err
}

// Run implements gate.Runner: it connects the gateway (gateway mode), registers the
// application commands, and handles interactions and messages until ctx ends. Pending
// requests stay pending when it returns.
func (c *Channel) Run(ctx context.Context, r gate.Resolver) error {
	if !c.running.CompareAndSwap(false, true) {
		return errors.New("discord: Run called twice")
	}
	ops := &chatops.Ops{Channel: Name, Approvers: c.approvers, Resolver: r}
	waits := chatops.NewReasonWaits(ops, c.cfg.DenyReasonWindow.Duration)
	c.ops.Store(ops)
	c.waits.Store(waits)
	defer waits.Stop()

	if c.cfg.Mode == ModeHTTP {
		go c.registerCommands(ctx)
		<-ctx.Done()
		return ctx.Err()
	}

	s := c.session
	s.AddHandler(func(_ *discordgo.Session, e *discordgo.Ready) {
		c.idMu.Lock()
		if e.User != nil {
			c.botID = e.User.ID
		}
		if c.appID == "" && e.Application != nil && snowflake(e.Application.ID) {
			c.appID = e.Application.ID
		}
		c.idMu.Unlock()
		c.log.Info("gateway ready")
		go c.registerCommands(ctx)
	})
	s.AddHandler(func(_ *discordgo.Session, _ *discordgo.Connect) { c.setConnected(true) })
	s.AddHandler(func(_ *discordgo.Session, _ *discordgo.Disconnect) {
		c.setConnected(false)
		if ctx.Err() == nil {
			c.log.Warn("gateway disconnected; reconnecting")
		}
	})
	s.AddHandler(func(_ *discordgo.Session, _ *discordgo.Resumed) { c.log.Info("gateway resumed") })
	s.AddHandler(func(_ *discordgo.Session, e *discordgo.InteractionCreate) {
		defer c.guard("interaction")
		if e.Interaction == nil || c.closed.Load() {
			return
		}
		c.handleInteraction(ctx, e.Interaction, c.restResponder(e.Interaction))
	})
	s.AddHandler(func(_ *discordgo.Session, e *discordgo.MessageCreate) {
		defer c.guard("message")
		if e.Message != nil && !c.closed.Load() {
			c.onMessage(ctx, e.Message)
		}
	})

	connectBackoff := retry.Backoff{Base: 4 * backoffMin, Max: backoffMax}
	for {
		err := c.open(ctx)
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		e := c.failed(classify("gateway connect", err, c.token, c.bare))
		c.log.Warn("gateway connect failed", "err", e, "hint", gatewayHint(err))
		if !retry.Sleep(ctx, connectBackoff.Next()) {
			c.closed.Store(true)
			return ctx.Err()
		}
	}
	c.log.Info("gateway connected")
	<-ctx.Done()
	c.closed.Store(true)
	// discordgo's Close sends the close frame and then sleeps a second "for Discord to
	// close the connection": shutdown does not sit through that. Handlers check closed,
	// so nothing arriving meanwhile is handled after Run returned; and should the
	// connection drop before Close has it, discordgo must not reconnect (the session's
	// own lock orders this write before its reconnect's read).
	s.Lock()
	s.ShouldReconnectOnError = false
	s.Unlock()
	go s.Close()
	return ctx.Err()
}

// gatewayHint explains the gateway close codes a misconfiguration causes
// (https://discord.com/developers/docs/topics/opcodes-and-status-codes#gateway-close-event-codes).
func gatewayHint(err error) string {
	var ce *websocket.CloseError
	if !errors.As(err, &ce) {
		return ""
	}
	switch ce.Code {
	case 4004:
		return "authentication failed: check the bot token"
	case 4013, 4014:
		return "intents refused: enable the Message Content intent for the bot in the developer portal, or set channels.discord.message_content = false"
	}
	return ""
}

// open connects the gateway, giving up when ctx ends even if discordgo's Open (which has
// no context and no read deadline for HELLO) is stuck.
func (c *Channel) open(ctx context.Context) error {
	opened := make(chan error, 1)
	go func() { opened <- c.session.Open() }()
	select {
	case err := <-opened:
		return err
	case <-ctx.Done():
		c.closed.Store(true)
		go func() {
			if <-opened == nil {
				_ = c.session.Close()
			}
		}()
		return ctx.Err()
	}
}

// guard keeps a panic in an event handler from taking the process down (discordgo runs
// handlers in bare goroutines): the interaction or message is dropped, nothing decided.
func (c *Channel) guard(what string) {
	if p := recover(); p != nil {
		c.log.Error("discord handler panicked", "handler", what, "panic", fmt.Sprint(p))
	}
}

func (c *Channel) ids() (appID, botID string) {
	c.idMu.Lock()
	defer c.idMu.Unlock()
	return c.appID, c.botID
}
