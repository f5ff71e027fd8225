package telegram

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/approvebot/approvebot/core/chatops"
	"github.com/approvebot/approvebot/core/policy"
	"github.com/approvebot/approvebot/internal/section"
)

// Config is [channels.telegram]. Each default and limit is the named constant beside its
// field; the config package embeds this section, and a test there checks the comments,
// config.example.toml and the operations guide against the constants.
type Config struct {
	// TokenEnv names the environment variable holding the bot token (default
	// "APPROVEBOT_TELEGRAM_TOKEN").
	TokenEnv string `toml:"token_env"`
	// APIURL points the bot at a self-hosted Bot API server; empty means Telegram's.
	APIURL string `toml:"api_url"`
	// Chats are the chat ids a card goes to when no route says otherwise.
	Chats []int64 `toml:"chats"`
	// Approvers are the numeric user ids who may decide (at least one).
	Approvers []int64 `toml:"approvers"`
	// ChatApprovers narrows approvers per chat: chat id (as a string key) → user ids, each
	// of them also in Approvers.
	ChatApprovers map[string][]int64 `toml:"chat_approvers"`
	// Mode is "polling" (default) or "webhook".
	Mode string `toml:"mode"`
	// WebhookSecretEnv names the variable holding the webhook's secret token (webhook mode).
	WebhookSecretEnv string `toml:"webhook_secret_env"`
	// WebhookPath is where the webhook is served on the API listener (default
	// "/telegram/webhook").
	WebhookPath string `toml:"webhook_path"`
	// WebhookURL is the public URL registered with setWebhook (webhook mode).
	WebhookURL string `toml:"webhook_url"`
	// DenyReasonWindow is how long a Deny press waits for a typed reason (default 60s).
	DenyReasonWindow policy.Duration `toml:"deny_reason_window"`
	// PollTimeout is how long one getUpdates long-poll is held open (default 30s, at
	// least 2s).
	PollTimeout policy.Duration `toml:"poll_timeout"`
}

// Defaults and limits of [channels.telegram], in the order of the fields.
const (
	DefaultTokenEnv         = "APPROVEBOT_TELEGRAM_TOKEN"
	DefaultAPIURL           = "https://api.telegram.org"
	DefaultMode             = ModePolling
	DefaultWebhookPath      = "/telegram/webhook"
	DefaultDenyReasonWindow = 60 * time.Second
	DefaultPollTimeout      = 30 * time.Second
	MinPollTimeout          = 2 * time.Second
)

// Modes.
const (
	ModePolling = "polling"
	ModeWebhook = "webhook"
)

// Environment variables that configure the channel when approvebot runs without a config
// file (see ConfigFromEnv).
const (
	EnvToken     = DefaultTokenEnv
	EnvChats     = "APPROVEBOT_TELEGRAM_CHATS"
	EnvApprovers = "APPROVEBOT_TELEGRAM_APPROVERS"
)

const key = "channels." + Name

// Defaults fills every field left empty with its default.
func (c *Config) Defaults() {
	section.Default(&c.TokenEnv, DefaultTokenEnv)
	section.Default(&c.Mode, DefaultMode)
	section.Default(&c.WebhookPath, DefaultWebhookPath)
	section.Default(&c.DenyReasonWindow, policy.Duration{Duration: DefaultDenyReasonWindow})
	section.Default(&c.PollTimeout, policy.Duration{Duration: DefaultPollTimeout})
}

// Validate checks every value of a section with its defaults applied; errors name the key.
func (c Config) Validate() error {
	if c.Mode != ModePolling && c.Mode != ModeWebhook {
		return fmt.Errorf("%s.mode: want %q or %q, got %q", key, ModePolling, ModeWebhook, c.Mode)
	}
	if c.Mode == ModeWebhook && c.WebhookSecretEnv == "" {
		return fmt.Errorf("%s.webhook_secret_env: required in webhook mode", key)
	}
	if c.TokenEnv == "" {
		return fmt.Errorf("%s.token_env: required (the environment variable holding the bot token)", key)
	}
	if len(c.Approvers) == 0 {
		return fmt.Errorf("%s.approvers: at least one approver user id is required", key)
	}
	approvers := map[int64]bool{}
	for _, id := range c.Approvers {
		approvers[id] = true
	}
	for chat, ids := range c.ChatApprovers {
		if _, err := strconv.ParseInt(chat, 10, 64); err != nil {
			return fmt.Errorf("%s.chat_approvers: key %q is not a numeric chat id", key, chat)
		}
		for _, id := range ids {
			if !approvers[id] {
				return fmt.Errorf("%s.chat_approvers[%q]: user %d is not in approvers (a per-chat list only narrows it)", key, chat, id)
			}
		}
	}
	if c.DenyReasonWindow.Duration <= 0 {
		return fmt.Errorf("%s.deny_reason_window: must be positive, got %s", key, c.DenyReasonWindow.Duration)
	}
	if c.PollTimeout.Duration < MinPollTimeout {
		return fmt.Errorf("%s.poll_timeout: must be at least %s, got %s", key, MinPollTimeout, c.PollTimeout.Duration)
	}
	if !strings.HasPrefix(c.WebhookPath, "/") {
		return fmt.Errorf("%s.webhook_path: %q must start with /", key, c.WebhookPath)
	}
	return nil
}

// Secrets are the values the section names environment variables for. They never reach
// a log or an error.
type Secrets struct {
	// Token is the bot token from BotFather ("<bot id>:<secret>").
	Token string
	// WebhookSecret is the secret_token Telegram sends with every webhook call.
	WebhookSecret string
}

var webhookSecretRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,256}$`)

// ReadSecrets reads the secrets from the environment (getenv is os.Getenv outside tests).
func (c Config) ReadSecrets(getenv func(string) string) (Secrets, error) {
	s := Secrets{Token: getenv(c.TokenEnv)}
	if s.Token == "" {
		return s, fmt.Errorf("%s: the bot token environment variable %s is not set", key, c.TokenEnv)
	}
	if c.Mode == ModeWebhook {
		if s.WebhookSecret = getenv(c.WebhookSecretEnv); s.WebhookSecret == "" {
			return s, fmt.Errorf("%s: webhook mode needs the secret in %s, which is not set", key, c.WebhookSecretEnv)
		}
	}
	return s, nil
}

// checkSecrets checks the secrets' shape for the section's mode.
func (c Config) checkSecrets(s Secrets) error {
	mode := c.Mode
	if strings.TrimSpace(s.Token) == "" {
		return fmt.Errorf("%s: the bot token is empty", key)
	}
	if !strings.Contains(s.Token, ":") {
		return fmt.Errorf("%s: the bot token does not look like a BotFather token (<bot id>:<secret>)", key)
	}
	if mode == ModeWebhook && !webhookSecretRe.MatchString(s.WebhookSecret) {
		return fmt.Errorf("%s: webhook mode needs a webhook secret of 1-256 characters A-Z, a-z, 0-9, _ or -", key)
	}
	return nil
}

// ConfigFromEnv is the section approvebot runs with when there is no config file: nil
// unless EnvToken is set, else the chats and approvers from EnvChats and EnvApprovers
// (comma-separated numeric ids), with every default.
func ConfigFromEnv(getenv func(string) string) (*Config, error) {
	if getenv(EnvToken) == "" {
		return nil, nil
	}
	chats, err := int64List(getenv, EnvChats)
	if err != nil {
		return nil, err
	}
	approvers, err := int64List(getenv, EnvApprovers)
	if err != nil {
		return nil, err
	}
	if len(approvers) == 0 {
		return nil, fmt.Errorf("%s is set but %s is empty: name at least one approver's numeric user id", EnvToken, EnvApprovers)
	}
	c := &Config{TokenEnv: EnvToken, Chats: chats, Approvers: approvers}
	c.Defaults()
	return c, nil
}

func int64List(getenv func(string) string, env string) ([]int64, error) {
	var out []int64
	for _, f := range chatops.IDList(getenv(env)) {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, errors.New(env + ": " + strconv.Quote(f) + " is not a numeric id")
		}
		out = append(out, n)
	}
	return out, nil
}
