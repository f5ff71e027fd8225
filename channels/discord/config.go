package discord

import (
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/approvebot/approvebot/core/chatops"
	"github.com/approvebot/approvebot/core/policy"
	"github.com/approvebot/approvebot/internal/section"
)

// Config is [channels.discord]. Each default and limit is the named constant beside its
// field; the config package embeds this section, and a test there checks the comments,
// config.example.toml and the operations guide against the constants.
type Config struct {
	// TokenEnv names the environment variable holding the bot token (default
	// "APPROVEBOT_DISCORD_TOKEN").
	TokenEnv string `toml:"token_env"`
	// ApplicationID is the application's id; empty means the one the gateway names.
	ApplicationID string `toml:"application_id"`
	// Channels are the channel ids a card goes to when no route says otherwise.
	Channels []string `toml:"channels"`
	// Guilds, when set, are the only servers whose interactions count, and where the
	// commands are registered (otherwise globally).
	Guilds []string `toml:"guilds"`
	// Approvers are the user ids who may decide (at least one).
	Approvers []string `toml:"approvers"`
	// Mode is "gateway" (default) or "http".
	Mode string `toml:"mode"`
	// PublicKey is the application's Ed25519 public key, 64 hex characters (http mode).
	PublicKey string `toml:"public_key"`
	// APIURL replaces https://discord.com for tests and proxies; empty means Discord's.
	APIURL string `toml:"api_url"`
	// HTTPPath is where http mode is served on the API listener (default
	// "/discord/interactions").
	HTTPPath string `toml:"http_path"`
	// DenyReasonWindow is how long the Deny form waits before denying without a reason
	// (default 60s).
	DenyReasonWindow policy.Duration `toml:"deny_reason_window"`
	// ChannelApprovers narrows approvers per channel: channel id → user ids (each must also
	// be in approvers).
	ChannelApprovers map[string][]string `toml:"channel_approvers"`
	// MessageContent requests the privileged Message Content intent, which replies to a card
	// with "/approve"-style text need (default true; enable it in the developer portal).
	MessageContent *bool `toml:"message_content"`
}

// Defaults of [channels.discord], in the order of the fields.
const (
	DefaultTokenEnv         = "APPROVEBOT_DISCORD_TOKEN"
	DefaultMode             = ModeGateway
	DefaultHTTPPath         = "/discord/interactions"
	DefaultDenyReasonWindow = 60 * time.Second
	DefaultMessageContent   = true
)

// Modes.
const (
	ModeGateway = "gateway"
	ModeHTTP    = "http"
)

// Environment variables that configure the channel when approvebot runs without a config
// file (see ConfigFromEnv).
const (
	EnvToken     = DefaultTokenEnv
	EnvChannels  = "APPROVEBOT_DISCORD_CHANNELS"
	EnvApprovers = "APPROVEBOT_DISCORD_APPROVERS"
)

const key = "channels." + Name

// Defaults fills every field left empty with its default.
func (c *Config) Defaults() {
	section.Default(&c.TokenEnv, DefaultTokenEnv)
	section.Default(&c.Mode, DefaultMode)
	section.Default(&c.HTTPPath, DefaultHTTPPath)
	section.Default(&c.DenyReasonWindow, policy.Duration{Duration: DefaultDenyReasonWindow})
	if c.MessageContent == nil {
		on := DefaultMessageContent
		c.MessageContent = &on
	}
}

// Validate checks every value of a section with its defaults applied; errors name the key.
func (c Config) Validate() error {
	if c.Mode != ModeGateway && c.Mode != ModeHTTP {
		return fmt.Errorf("%s.mode: want %q or %q, got %q", key, ModeGateway, ModeHTTP, c.Mode)
	}
	if len(c.Approvers) == 0 {
		return fmt.Errorf("%s.approvers: at least one approver user id is required", key)
	}
	for _, field := range []struct {
		name string
		ids  []string
	}{{"channels", c.Channels}, {"approvers", c.Approvers}, {"guilds", c.Guilds}} {
		for _, id := range field.ids {
			if !snowflake(id) {
				return fmt.Errorf("%s.%s: %q is not a Discord id (digits only)", key, field.name, id)
			}
		}
	}
	if c.ApplicationID != "" && !snowflake(c.ApplicationID) {
		return fmt.Errorf("%s.application_id: %q is not a Discord id", key, c.ApplicationID)
	}
	approvers := set(c.Approvers)
	for ch, list := range c.ChannelApprovers {
		if !snowflake(ch) {
			return fmt.Errorf("%s.channel_approvers: %q is not a channel id", key, ch)
		}
		for _, id := range list {
			if !snowflake(id) {
				return fmt.Errorf("%s.channel_approvers.%s: %q is not a user id", key, ch, id)
			}
			if !approvers[id] {
				return fmt.Errorf("%s.channel_approvers.%s: %s is not in %s.approvers (a per-channel list only narrows it)", key, ch, id, key)
			}
		}
	}
	if _, err := c.publicKey(); err != nil {
		return err
	}
	if c.Mode == ModeHTTP && c.PublicKey == "" {
		return fmt.Errorf("%s.public_key: required in http mode", key)
	}
	if _, err := c.apiURL(); err != nil {
		return err
	}
	if !strings.HasPrefix(c.HTTPPath, "/") {
		return fmt.Errorf("%s.http_path: %q must start with /", key, c.HTTPPath)
	}
	if c.DenyReasonWindow.Duration <= 0 {
		return fmt.Errorf("%s.deny_reason_window: must be positive, got %s", key, c.DenyReasonWindow.Duration)
	}
	return nil
}

// publicKey decodes public_key (nil when empty).
func (c Config) publicKey() (ed25519.PublicKey, error) {
	if c.PublicKey == "" {
		return nil, nil
	}
	k, err := hex.DecodeString(strings.TrimSpace(c.PublicKey))
	if err != nil || len(k) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("%s.public_key: want the application's public key, 64 hex characters", key)
	}
	return ed25519.PublicKey(k), nil
}

// apiURL parses api_url (nil when empty: Discord's own).
func (c Config) apiURL() (*url.URL, error) {
	if c.APIURL == "" {
		return nil, nil
	}
	u, err := url.Parse(c.APIURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%s.api_url: %q is not an http(s) URL", key, c.APIURL)
	}
	return u, nil
}

// Secrets are the values the section names environment variables for. They never reach
// a log or an error.
type Secrets struct {
	// Token is the bot token, with or without the "Bot " prefix.
	Token string
}

// ReadSecrets reads the bot token from the environment (getenv is os.Getenv outside tests).
func (c Config) ReadSecrets(getenv func(string) string) (Secrets, error) {
	s := Secrets{Token: getenv(c.TokenEnv)}
	if s.Token == "" {
		return s, fmt.Errorf("%s: the bot token environment variable %s is not set", key, c.TokenEnv)
	}
	return s, nil
}

// checkSecrets checks the token's shape.
func (Config) checkSecrets(s Secrets) error {
	_, err := s.bare()
	return err
}

// bare is the token without its "Bot " prefix.
func (s Secrets) bare() (string, error) {
	tok := strings.TrimSpace(s.Token)
	if tok == "" {
		return "", errors.New(key + ": the bot token is empty")
	}
	bare := strings.TrimPrefix(tok, "Bot ")
	if bare == "" || strings.ContainsAny(bare, " \t\r\n") {
		return "", errors.New(key + ": the bot token is malformed")
	}
	return bare, nil
}

// ConfigFromEnv is the section approvebot runs with when there is no config file: nil
// unless EnvToken is set, else the channels and approvers from EnvChannels and
// EnvApprovers (comma-separated ids), with every default.
func ConfigFromEnv(getenv func(string) string) (*Config, error) {
	if getenv(EnvToken) == "" {
		return nil, nil
	}
	c := &Config{Channels: chatops.IDList(getenv(EnvChannels)), Approvers: chatops.IDList(getenv(EnvApprovers))}
	if len(c.Approvers) == 0 {
		return nil, fmt.Errorf("%s is set but %s is empty: name at least one approver's Discord user id", EnvToken, EnvApprovers)
	}
	c.Defaults()
	return c, nil
}

func set(ids []string) map[string]bool {
	m := make(map[string]bool, len(ids))
	for _, id := range ids {
		m[id] = true
	}
	return m
}

// snowflake reports whether s looks like a Discord id: 1 to 20 digits.
func snowflake(s string) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
