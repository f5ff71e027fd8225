// Package slack is approvebot's Slack channel: it posts Block Kit cards with chat.postMessage,
// edits them with chat.update when the request is decided, and reads presses, the Deny
// reason modal, the slash command and commands typed in a card's thread, over Socket Mode
// (the default: no public endpoint) or signed HTTP requests. Every press and command becomes
// a decision only through core/chatops and the gate's single compare-and-set; the presser
// is the Slack user id together with its workspace (team) id.
package slack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	slackgo "github.com/slack-go/slack"
	"golang.org/x/time/rate"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/chatops"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/render"
	"github.com/approvebot/approvebot/internal/retry"
	"github.com/approvebot/approvebot/internal/section"
)

// Name is the channel's config name.
const Name = "slack"

const (
	// MaxBody caps an HTTP-mode request body. Slack's interaction payloads carry the whole
	// message; a card is a few kilobytes.
	MaxBody = 256 << 10
	// ackWindow is how long Slack waits for an acknowledgement.
	ackWindow = 3 * time.Second
	// workTimeout bounds the work done after one press or command.
	workTimeout = 30 * time.Second
	// maxWorkers bounds presses and commands handled at once.
	maxWorkers = 32
	// callTimeout is the HTTP client's timeout when New is given none.
	callTimeout = 30 * time.Second
	// Backoff bounds between retries of 5xx and transport errors.
	retryBase = 250 * time.Millisecond
	retryMax  = 8 * time.Second
)

// Channel is the Slack channel. Build it with New.
type Channel struct {
	cfg       Config
	secrets   Secrets
	apiURL    string
	hc        *http.Client
	api       *slackgo.Client
	log       *slog.Logger
	approvers []approverID
	perChat   map[string][]approverID
	apiHost   string
	retry     retry.Policy
	maxBody   int64

	health healthState
	state  atomic.Pointer[runState]
	sem    chan struct{}
	work   sync.WaitGroup
	seen   *dedupe
	replay *replayCache
	badSig *rate.Limiter
}

var (
	_ gate.Channel = (*Channel)(nil)
	_ gate.Runner  = (*Channel)(nil)
)

// runState is what exists while Run runs: the resolver-bound operations.
type runState struct {
	ops      *chatops.Ops
	waits    *chatops.ReasonWaits
	resolver gate.Resolver
	// ctx is the base of background work (reason windows, handlers).
	ctx context.Context
}

type approverID struct{ team, user string }

// New builds the channel from its section (defaults applied, then validated), its
// secrets, a logger (nil discards) and the HTTP client for every Web API call (nil: one
// with a 30 s timeout). It dials nothing: Run connects.
func New(cfg Config, secrets Secrets, logger *slog.Logger, hc *http.Client) (*Channel, error) {
	cfg, err := section.Ready(cfg, secrets, Config.checkSecrets)
	if err != nil {
		return nil, err
	}
	u, err := cfg.apiURL()
	if err != nil {
		return nil, err
	}
	approvers, perChat, err := cfg.approvers()
	if err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if hc == nil {
		hc = &http.Client{Timeout: callTimeout}
	}
	c := &Channel{
		cfg: cfg, secrets: secrets, apiURL: u.String(), hc: hc, log: logger.With("channel", Name),
		approvers: approvers, perChat: perChat, apiHost: u.Host, maxBody: MaxBody,
		retry: retry.Policy{Base: retryBase, Max: retryMax},
		sem:   make(chan struct{}, maxWorkers), seen: newDedupe(4096), replay: newReplayCache(),
		badSig: rate.NewLimiter(rate.Every(time.Second), 20),
	}
	c.api = slackgo.New(secrets.BotToken, slackgo.OptionAPIURL(c.apiURL), slackgo.OptionHTTPClient(hc))
	c.health.mode = cfg.Mode
	return c, nil
}

func parseApprovers(key string, list []string) ([]approverID, error) {
	var out []approverID
	for _, raw := range list {
		s := strings.TrimSpace(raw)
		if s == "" {
			continue
		}
		team, user, found := strings.Cut(s, ":")
		if !found {
			team, user = "", s
		}
		if !userIDRe.MatchString(user) || (found && !teamIDRe.MatchString(team)) {
			return nil, fmt.Errorf("%s: %q is not a Slack user id (U…, or T…:U… to pin the workspace); usernames are never accepted", key, raw)
		}
		out = append(out, approverID{team: team, user: user})
	}
	return out, nil
}

func containsApprover(list []approverID, id approverID) bool {
	for _, a := range list {
		if a == id {
			return true
		}
	}
	return false
}

// approverKeys turns the configured approvers into chatops ids "TEAM:USER"; bare ids belong
// to team (the configured one, else the bot's own workspace).
func approverKeys(list []approverID, team string) []string {
	var out []string
	for _, a := range list {
		t := a.team
		if t == "" {
			t = team
		}
		if t == "" {
			continue // no workspace known: the id matches nobody (fail closed)
		}
		out = append(out, t+":"+a.user)
	}
	return out
}

// Name is "slack".
func (c *Channel) Name() string { return Name }

// Chats are the configured channel ids.
func (c *Channel) Chats() []string { return append([]string(nil), c.cfg.Channels...) }

// HTTPHandler is what the channel serves on the API listener: in HTTP mode, Slack's
// interactivity, slash commands and events at http_path (a bad or stale signature is
// answered 401); in Socket Mode nothing ("", nil).
func (c *Channel) HTTPHandler() (string, http.Handler) {
	if c.cfg.Mode != ModeHTTP {
		return "", nil
	}
	return c.cfg.HTTPPath, http.HandlerFunc(c.serveHTTP)
}

// Post sends the pending card to channel chat and returns its reference: the channel id
// and the message ts, which chat.update needs.
func (c *Channel) Post(ctx context.Context, chat string, card render.Card) (approval.CardRef, error) {
	if err := c.health.fatalErr(); err != nil {
		// Nobody could press this card: let the gate route elsewhere or fall back now.
		return approval.CardRef{}, fmt.Errorf("slack channel stopped (%v): card not posted", err)
	}
	msg := render.SlackPending(card, chat)
	blocks, err := toBlocks(msg.Blocks)
	if err != nil {
		return approval.CardRef{}, fmt.Errorf("slack: building the card: %w", err)
	}
	var channel, ts string
	err = c.call(ctx, "chat.postMessage", func(ctx context.Context) error {
		var err error
		channel, ts, err = c.api.PostMessageContext(ctx, chat,
			slackgo.MsgOptionText(msg.Text, false),
			slackgo.MsgOptionBlocks(blocks...),
			slackgo.MsgOptionParse(false),
			slackgo.MsgOptionLinkNames(false),
			slackgo.MsgOptionDisableLinkUnfurl(),
			slackgo.MsgOptionDisableMediaUnfurl(),
		)
		return err
	})
	if err != nil {
		return approval.CardRef{}, err
	}
	if channel == "" {
		channel = chat
	}
	if ts == "" {
		return approval.CardRef{}, errors.New("slack chat.postMessage: the answer carried no ts")
	}
	return approval.CardRef{Channel: Name, Chat: channel, Message: ts}, nil
}

// Edit replaces a posted card with its resolved form, without buttons.
func (c *Channel) Edit(ctx context.Context, ref approval.CardRef, card render.Card) error {
	up := render.SlackResolved(card, ref.Chat, ref.Message)
	blocks, err := toBlocks(up.Blocks)
	if err != nil {
		return fmt.Errorf("slack: building the resolved card: %w", err)
	}
	return c.call(ctx, "chat.update", func(ctx context.Context) error {
		_, _, _, err := c.api.UpdateMessageContext(ctx, ref.Chat, ref.Message,
			slackgo.MsgOptionText(up.Text, false),
			slackgo.MsgOptionBlocks(blocks...),
			slackgo.MsgOptionParse(false),
			slackgo.MsgOptionLinkNames(false),
		)
		return err
	})
}

// Health reports whether cards can be delivered and presses read now.
func (c *Channel) Health() gate.Health { return c.health.get() }

// ephemeral shows text to one user in a channel; failures are logged, never fatal.
func (c *Channel) ephemeral(ctx context.Context, chat, user, text string) {
	if text == "" || chat == "" || user == "" {
		return
	}
	text, _ = render.Cut(text, 3000)
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	err := c.call(ctx, "chat.postEphemeral", func(ctx context.Context) error {
		_, err := c.api.PostEphemeralContext(ctx, chat, user,
			slackgo.MsgOptionText(render.SlackEscape(text), false), slackgo.MsgOptionParse(false), slackgo.MsgOptionLinkNames(false))
		return err
	})
	if err != nil {
		c.log.Warn("private answer failed", "chat", chat, "err", err)
	}
}

// ---- health

type healthState struct {
	mu        sync.Mutex
	mode      string
	connected bool
	detail    string
	lastOK    time.Time
	lastErr   string
	failing   bool
	fatal     error
}

func (h *healthState) get() gate.Health {
	h.mu.Lock()
	defer h.mu.Unlock()
	g := gate.Health{LastOK: h.lastOK, LastError: h.lastErr}
	switch {
	case h.fatal != nil:
		g.Detail = "stopped: " + h.fatal.Error()
	case h.mode == ModeSocket && !h.connected:
		g.Detail = "socket mode: " + nonEmpty(h.detail, "not connected")
	case h.mode == ModeSocket:
		g.Detail = "socket mode: connected"
	default:
		g.Detail = "http mode"
	}
	g.OK = h.fatal == nil && !h.failing && (h.mode != ModeSocket || h.connected)
	return g
}

func (h *healthState) ok() {
	h.mu.Lock()
	h.lastOK = time.Now().UTC()
	h.failing = false
	h.mu.Unlock()
}

func (h *healthState) failed(msg string, unhealthy bool) {
	h.mu.Lock()
	h.lastErr = msg
	if unhealthy {
		h.failing = true
	}
	h.mu.Unlock()
}

func (h *healthState) setConnected(ok bool, detail string) {
	h.mu.Lock()
	h.connected, h.detail = ok, detail
	h.mu.Unlock()
}

func (h *healthState) setFatal(err error) {
	h.mu.Lock()
	if h.fatal == nil {
		h.fatal = err
	}
	h.connected = false
	h.mu.Unlock()
}

func (h *healthState) fatalErr() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.fatal
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// ---- dedupe of redelivered envelopes and events

type dedupe struct {
	mu    sync.Mutex
	max   int
	order []string
	set   map[string]bool
}

func newDedupe(max int) *dedupe { return &dedupe{max: max, set: map[string]bool{}} }

// first reports whether key is seen for the first time (and remembers it).
func (d *dedupe) first(key string) bool {
	if key == "" {
		return true
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.set[key] {
		return false
	}
	d.set[key] = true
	d.order = append(d.order, key)
	if len(d.order) > d.max {
		delete(d.set, d.order[0])
		d.order = d.order[1:]
	}
	return true
}

// firstEverywhere reports whether key (an envelope or event id) is new to this replica
// and, when the resolver offers claims (approvebot on a cluster), to every replica: Slack
// sends an event again when its acknowledgement was lost, maybe to another replica. The
// caller calls done(true) once the event is taken on (acknowledged, dispatched), or
// done(false) to let a redelivery be handled.
func (c *Channel) firstEverywhere(ctx context.Context, st *runState, key string) (bool, func(taken bool)) {
	if !c.seen.first(key) {
		return false, func(bool) {}
	}
	forget := func(taken bool) {
		if !taken {
			c.seen.forget(key)
		}
	}
	cl, ok := st.resolver.(gate.Claimer)
	if !ok || key == "" {
		return true, forget
	}
	first, done := cl.Claim(ctx, Name, key)
	if !first {
		return false, func(bool) {}
	}
	return true, func(taken bool) { forget(taken); done(taken) }
}

// forget drops key, so a redelivery is handled.
func (d *dedupe) forget(key string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.set, key)
}
