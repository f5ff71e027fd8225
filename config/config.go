// Package config reads approvebot's TOML configuration: strictly (an unknown key or a bad
// value is an error naming the key and line), with defaults for everything left out, and
// validation before anything starts. Secrets are never in the file: it names environment
// variables (token_env and friends) and Secrets reads them.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"path"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/approvebot/approvebot/core/policy"
)

// Duration is a Go duration string in TOML ("120s").
type Duration = policy.Duration

// Config is the whole file.
type Config struct {
	Server   Server        `toml:"server"`
	Agents   []Agent       `toml:"agents"`
	Policy   policy.Config `toml:"policy"`
	Channels Channels      `toml:"channels"`
	Routes   []Route       `toml:"routes"`
	Log      Log           `toml:"log"`
	Store    Store         `toml:"store"`
}

// Server is [server].
type Server struct {
	Listen          string   `toml:"listen"`
	Data            string   `toml:"data"`
	ApprovalTimeout Duration `toml:"approval_timeout"`
	// MaxBody caps request bodies, in bytes.
	MaxBody int64 `toml:"max_body"`
	// DeliveryTimeout bounds how long posting a card may take before the request falls back.
	DeliveryTimeout Duration `toml:"delivery_timeout"`
	// TokensFile keeps the tokens generated on a first start without [[agents]].
	TokensFile string `toml:"tokens_file"`
	// RateLimit is the sustained requests per second allowed per token (0: default 200).
	RateLimit float64 `toml:"rate_limit"`
	// RateBurst is the burst allowed per token (0: default 400).
	RateBurst            int `toml:"rate_burst"`
	MaxPending           int `toml:"max_pending"`
	MaxPendingPerSession int `toml:"max_pending_per_session"`
	// MaxPendingPerAgent caps one agent token's waiting requests (0: half of max_pending).
	MaxPendingPerAgent int      `toml:"max_pending_per_agent"`
	ShutdownTimeout    Duration `toml:"shutdown_timeout"`
	// MaxWait caps the wait an agent may ask for in one call.
	MaxWait Duration `toml:"max_wait"`
	// AuditRetention drops audit entries (and decided requests) older than this; 0 keeps all.
	AuditRetention Duration `toml:"audit_retention"`
	// HeadlessFallback: with no chat channel configured, asks fall back at once (ask_fallback)
	// instead of waiting for an operator's decision over the API.
	HeadlessFallback bool `toml:"headless_fallback"`
	// AuditMaxEntries keeps at most this many audit entries; 0 means no cap.
	AuditMaxEntries int `toml:"audit_max_entries"`
}

// Agent is one [[agents]] token.
type Agent struct {
	Name     string `toml:"name"`
	TokenEnv string `toml:"token_env"`
	Role     string `toml:"role"`
}

// Log is [log].
type Log struct {
	Level  string `toml:"level"`
	Format string `toml:"format"`
}

// Channels is [channels]. A nil section means the channel is not configured.
type Channels struct {
	Telegram *Telegram `toml:"telegram"`
	Slack    *Slack    `toml:"slack"`
	Discord  *Discord  `toml:"discord"`
}

// Telegram is [channels.telegram].
type Telegram struct {
	TokenEnv string `toml:"token_env"`
	// APIURL points the bot at a self-hosted Bot API server; empty means Telegram's.
	APIURL    string  `toml:"api_url"`
	Chats     []int64 `toml:"chats"`
	Approvers []int64 `toml:"approvers"`
	// ChatApprovers narrows approvers per chat: chat id (as a string key) → user ids.
	ChatApprovers    map[string][]int64 `toml:"chat_approvers"`
	Mode             string             `toml:"mode"`
	WebhookSecretEnv string             `toml:"webhook_secret_env"`
	// WebhookPath is where the webhook is served on the API listener.
	WebhookPath string `toml:"webhook_path"`
	// WebhookURL is the public URL registered with setWebhook (webhook mode).
	WebhookURL string `toml:"webhook_url"`
	// DenyReasonWindow is how long a Deny press waits for a typed reason.
	DenyReasonWindow Duration `toml:"deny_reason_window"`
	PollTimeout      Duration `toml:"poll_timeout"`
}

// Slack is [channels.slack].
type Slack struct {
	BotTokenEnv      string   `toml:"bot_token_env"`
	AppTokenEnv      string   `toml:"app_token_env"`
	SigningSecretEnv string   `toml:"signing_secret_env"`
	APIURL           string   `toml:"api_url"`
	Mode             string   `toml:"mode"`
	Channels         []string `toml:"channels"`
	// Approvers are Slack user ids, optionally "TEAM:USER" to pin the workspace.
	Approvers []string `toml:"approvers"`
	// Team restricts every approver to one workspace id.
	Team             string   `toml:"team"`
	HTTPPath         string   `toml:"http_path"`
	DenyReasonWindow Duration `toml:"deny_reason_window"`
	// SlashCommand is the command name registered in the app ("/approvebot").
	SlashCommand string `toml:"slash_command"`
	// ChannelApprovers narrows approvers per channel: channel id → user ids (each must also
	// be in approvers).
	ChannelApprovers map[string][]string `toml:"channel_approvers"`
}

// Discord is [channels.discord].
type Discord struct {
	TokenEnv      string   `toml:"token_env"`
	ApplicationID string   `toml:"application_id"`
	Channels      []string `toml:"channels"`
	Guilds        []string `toml:"guilds"`
	Approvers     []string `toml:"approvers"`
	Mode          string   `toml:"mode"`
	PublicKey     string   `toml:"public_key"`
	// APIURL replaces https://discord.com for tests and proxies; empty means Discord's.
	APIURL           string   `toml:"api_url"`
	HTTPPath         string   `toml:"http_path"`
	DenyReasonWindow Duration `toml:"deny_reason_window"`
	// ChannelApprovers narrows approvers per channel: channel id → user ids (each must also
	// be in approvers).
	ChannelApprovers map[string][]string `toml:"channel_approvers"`
	// MessageContent requests the privileged Message Content intent, which replies to a card
	// with "/approve"-style text need (default true; enable it in the developer portal).
	MessageContent *bool `toml:"message_content"`
}

// Route is one [[routes]] entry.
type Route struct {
	Agent   string   `toml:"agent"`
	Session string   `toml:"session"`
	Tool    string   `toml:"tool"`
	Channel string   `toml:"channel"`
	Chats   []string `toml:"chats"`
}

// Default values.
const (
	DefaultListen          = "127.0.0.1:8470"
	DefaultData            = "approvebot.db"
	DefaultApprovalTimeout = 120 * time.Second
	DefaultMaxBody         = 1 << 20
)

// Load reads and validates a file. An empty path means the embedded defaults (Defaults).
func Load(file string) (*Config, error) {
	if file == "" {
		return Defaults()
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	return Parse(data, file)
}

// Parse decodes TOML strictly, applies defaults and validates. name is used in errors.
func Parse(data []byte, name string) (*Config, error) {
	var c Config
	if len(data) > 0 {
		dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return nil, describe(name, err)
		}
	}
	c.defaults()
	if err := c.Validate(); err != nil {
		if name != "" {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return nil, err
	}
	return &c, nil
}

func describe(name string, err error) error {
	prefix := "config"
	if name != "" {
		prefix = name
	}
	var strict *toml.StrictMissingError
	if errors.As(err, &strict) {
		var parts []string
		for _, e := range strict.Errors {
			row, col := e.Position()
			parts = append(parts, fmt.Sprintf("%s:%d:%d: unknown key %q", prefix, row, col, strings.Join(e.Key(), ".")))
		}
		return errors.New(strings.Join(parts, "\n"))
	}
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, col := de.Position()
		key := strings.Join(de.Key(), ".")
		if key != "" {
			return fmt.Errorf("%s:%d:%d: key %q: %s", prefix, row, col, key, de.Error())
		}
		return fmt.Errorf("%s:%d:%d: %s", prefix, row, col, de.Error())
	}
	return fmt.Errorf("%s: %w", prefix, err)
}

func (c *Config) defaults() {
	c.Store.defaults()
	s := &c.Server
	if s.Listen == "" {
		s.Listen = DefaultListen
	}
	if s.Data == "" {
		s.Data = DefaultData
	}
	if s.ApprovalTimeout.Duration == 0 {
		s.ApprovalTimeout.Duration = DefaultApprovalTimeout
	}
	if s.MaxBody == 0 {
		s.MaxBody = DefaultMaxBody
	}
	if s.DeliveryTimeout.Duration == 0 {
		s.DeliveryTimeout.Duration = 30 * time.Second
	}
	if s.TokensFile == "" {
		s.TokensFile = s.Data + ".tokens"
	}
	if s.RateLimit == 0 {
		s.RateLimit = 2000
	}
	if s.RateBurst == 0 {
		s.RateBurst = 4000
	}
	if s.MaxPending == 0 {
		s.MaxPending = 50000
	}
	if s.MaxPendingPerSession == 0 {
		s.MaxPendingPerSession = 200
	}
	if s.MaxPendingPerAgent == 0 {
		s.MaxPendingPerAgent = max(s.MaxPending/2, 1)
	}
	if s.ShutdownTimeout.Duration == 0 {
		s.ShutdownTimeout.Duration = 10 * time.Second
	}
	if s.MaxWait.Duration == 0 {
		s.MaxWait.Duration = 10 * time.Minute
	}
	for i := range c.Agents {
		if c.Agents[i].Role == "" {
			c.Agents[i].Role = "agent"
		}
	}
	if c.Log.Level == "" {
		c.Log.Level = "info"
	}
	if c.Log.Format == "" {
		c.Log.Format = "text"
	}
	c.Policy.Defaults()
	if t := c.Channels.Telegram; t != nil {
		if t.TokenEnv == "" {
			t.TokenEnv = "APPROVEBOT_TELEGRAM_TOKEN"
		}
		if t.Mode == "" {
			t.Mode = "polling"
		}
		if t.WebhookPath == "" {
			t.WebhookPath = "/telegram/webhook"
		}
		if t.DenyReasonWindow.Duration == 0 {
			t.DenyReasonWindow.Duration = 60 * time.Second
		}
		if t.PollTimeout.Duration == 0 {
			t.PollTimeout.Duration = 30 * time.Second
		}
	}
	if sl := c.Channels.Slack; sl != nil {
		if sl.BotTokenEnv == "" {
			sl.BotTokenEnv = "APPROVEBOT_SLACK_BOT_TOKEN"
		}
		if sl.AppTokenEnv == "" {
			sl.AppTokenEnv = "APPROVEBOT_SLACK_APP_TOKEN"
		}
		if sl.SigningSecretEnv == "" {
			sl.SigningSecretEnv = "APPROVEBOT_SLACK_SIGNING_SECRET"
		}
		if sl.Mode == "" {
			sl.Mode = "socket"
		}
		if sl.HTTPPath == "" {
			sl.HTTPPath = "/slack/events"
		}
		if sl.DenyReasonWindow.Duration == 0 {
			sl.DenyReasonWindow.Duration = 60 * time.Second
		}
		if sl.SlashCommand == "" {
			sl.SlashCommand = "/approvebot"
		}
	}
	if d := c.Channels.Discord; d != nil {
		if d.TokenEnv == "" {
			d.TokenEnv = "APPROVEBOT_DISCORD_TOKEN"
		}
		if d.Mode == "" {
			d.Mode = "gateway"
		}
		if d.HTTPPath == "" {
			d.HTTPPath = "/discord/interactions"
		}
		if d.DenyReasonWindow.Duration == 0 {
			d.DenyReasonWindow.Duration = 60 * time.Second
		}
		if d.MessageContent == nil {
			on := true
			d.MessageContent = &on
		}
	}
}

// Validate checks every value; errors name the key.
func (c *Config) Validate() error {
	if err := c.Store.Validate(); err != nil {
		return err
	}
	s := c.Server
	if _, _, err := net.SplitHostPort(s.Listen); err != nil {
		return fmt.Errorf("server.listen: %q is not host:port: %v", s.Listen, err)
	}
	if s.ApprovalTimeout.Duration < time.Second {
		return fmt.Errorf("server.approval_timeout: must be at least 1s, got %s", s.ApprovalTimeout.Duration)
	}
	if s.MaxBody < 1024 {
		return fmt.Errorf("server.max_body: must be at least 1024 bytes, got %d", s.MaxBody)
	}
	if s.RateLimit < 0 || s.RateBurst < 0 {
		return errors.New("server.rate_limit and server.rate_burst must not be negative")
	}
	if s.MaxPending < 0 || s.MaxPendingPerSession < 0 || s.MaxPendingPerAgent < 0 || s.AuditMaxEntries < 0 {
		return errors.New("server.max_pending, max_pending_per_session, max_pending_per_agent and audit_max_entries must not be negative")
	}
	names := map[string]bool{}
	envs := map[string]bool{}
	for i, a := range c.Agents {
		key := fmt.Sprintf("agents[%d]", i)
		if a.Name == "" {
			return fmt.Errorf("%s.name: required", key)
		}
		if names[a.Name] {
			return fmt.Errorf("%s.name: %q is used twice", key, a.Name)
		}
		names[a.Name] = true
		if a.TokenEnv == "" {
			return fmt.Errorf("%s.token_env: required (the environment variable holding the token)", key)
		}
		if envs[a.TokenEnv] {
			return fmt.Errorf("%s.token_env: %q is used by two agents", key, a.TokenEnv)
		}
		envs[a.TokenEnv] = true
		if a.Role != "agent" && a.Role != "operator" {
			return fmt.Errorf("%s.role: want \"agent\" or \"operator\", got %q", key, a.Role)
		}
	}
	switch c.Log.Level {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("log.level: want debug, info, warn or error, got %q", c.Log.Level)
	}
	if c.Log.Format != "text" && c.Log.Format != "json" {
		return fmt.Errorf("log.format: want \"text\" or \"json\", got %q", c.Log.Format)
	}
	if err := c.Policy.Validate(); err != nil {
		return err
	}
	if t := c.Channels.Telegram; t != nil {
		if t.Mode != "polling" && t.Mode != "webhook" {
			return fmt.Errorf("channels.telegram.mode: want \"polling\" or \"webhook\", got %q", t.Mode)
		}
		if t.Mode == "webhook" && t.WebhookSecretEnv == "" {
			return errors.New("channels.telegram.webhook_secret_env: required in webhook mode")
		}
		if len(t.Approvers) == 0 {
			return errors.New("channels.telegram.approvers: at least one approver user id is required")
		}
	}
	if sl := c.Channels.Slack; sl != nil {
		if sl.Mode != "socket" && sl.Mode != "http" {
			return fmt.Errorf("channels.slack.mode: want \"socket\" or \"http\", got %q", sl.Mode)
		}
		if len(sl.Approvers) == 0 {
			return errors.New("channels.slack.approvers: at least one approver user id is required")
		}
	}
	if d := c.Channels.Discord; d != nil {
		if d.Mode != "gateway" && d.Mode != "http" {
			return fmt.Errorf("channels.discord.mode: want \"gateway\" or \"http\", got %q", d.Mode)
		}
		if d.Mode == "http" && d.PublicKey == "" {
			return errors.New("channels.discord.public_key: required in http mode")
		}
		if len(d.Approvers) == 0 {
			return errors.New("channels.discord.approvers: at least one approver user id is required")
		}
	}
	for i, r := range c.Routes {
		key := fmt.Sprintf("routes[%d]", i)
		switch r.Channel {
		case "telegram", "slack", "discord":
		default:
			return fmt.Errorf("%s.channel: want telegram, slack or discord, got %q", key, r.Channel)
		}
		for _, g := range []string{r.Agent, r.Session, r.Tool} {
			if _, err := path.Match(g, ""); err != nil {
				return fmt.Errorf("%s: invalid glob %q", key, g)
			}
		}
	}
	return nil
}

// Secret reads an environment variable named by the config. It never logs the value.
func Secret(env string) string {
	if env == "" {
		return ""
	}
	return os.Getenv(env)
}
