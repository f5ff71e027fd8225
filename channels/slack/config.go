package slack

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/approvebot/approvebot/core/chatops"
	"github.com/approvebot/approvebot/core/policy"
	"github.com/approvebot/approvebot/internal/section"
)

// Config is [channels.slack]. Each default and limit is the named constant beside its
// field; the config package embeds this section, and a test there checks the comments,
// config.example.toml and the operations guide against the constants.
type Config struct {
	// BotTokenEnv names the variable holding the bot token, xoxb-… (default
	// "APPROVEBOT_SLACK_BOT_TOKEN").
	BotTokenEnv string `toml:"bot_token_env"`
	// AppTokenEnv names the variable holding the app-level token, xapp-…, for Socket Mode
	// (default "APPROVEBOT_SLACK_APP_TOKEN").
	AppTokenEnv string `toml:"app_token_env"`
	// SigningSecretEnv names the variable holding the signing secret, for HTTP mode
	// (default "APPROVEBOT_SLACK_SIGNING_SECRET").
	SigningSecretEnv string `toml:"signing_secret_env"`
	// APIURL is the Web API base, ending in "/"; empty means Slack's.
	APIURL string `toml:"api_url"`
	// Mode is "socket" (default) or "http".
	Mode string `toml:"mode"`
	// Channels are channel ids (C…, G…) a card goes to when no route says otherwise.
	Channels []string `toml:"channels"`
	// Approvers are Slack user ids, optionally "TEAM:USER" to pin the workspace.
	Approvers []string `toml:"approvers"`
	// Team restricts every bare approver id to one workspace id (default: the bot's own).
	Team string `toml:"team"`
	// HTTPPath is where HTTP mode is served on the API listener (default "/slack/events").
	HTTPPath string `toml:"http_path"`
	// DenyReasonWindow is how long the Deny form waits before denying without a reason
	// (default 60s).
	DenyReasonWindow policy.Duration `toml:"deny_reason_window"`
	// SlashCommand is the command name registered in the app (default "/approvebot").
	SlashCommand string `toml:"slash_command"`
	// ChannelApprovers narrows approvers per channel: channel id → user ids (each must also
	// be in approvers).
	ChannelApprovers map[string][]string `toml:"channel_approvers"`
}

// Defaults of [channels.slack], in the order of the fields.
const (
	DefaultBotTokenEnv      = "APPROVEBOT_SLACK_BOT_TOKEN"
	DefaultAppTokenEnv      = "APPROVEBOT_SLACK_APP_TOKEN"
	DefaultSigningSecretEnv = "APPROVEBOT_SLACK_SIGNING_SECRET"
	DefaultAPIURL           = "https://slack.com/api/"
	DefaultMode             = ModeSocket
	DefaultHTTPPath         = "/slack/events"
	DefaultDenyReasonWindow = 60 * time.Second
	DefaultSlashCommand     = "/approvebot"
)

// Modes.
const (
	ModeSocket = "socket"
	ModeHTTP   = "http"
)

// Environment variables that configure the channel when approvebot runs without a config
// file (see ConfigFromEnv).
const (
	EnvBotToken  = DefaultBotTokenEnv
	EnvAppToken  = DefaultAppTokenEnv
	EnvChannels  = "APPROVEBOT_SLACK_CHANNELS"
	EnvApprovers = "APPROVEBOT_SLACK_APPROVERS"
)

const key = "channels." + Name

var (
	userIDRe    = regexp.MustCompile(`^[UW][A-Z0-9]{2,30}$`)
	teamIDRe    = regexp.MustCompile(`^[TE][A-Z0-9]{2,30}$`)
	channelIDRe = regexp.MustCompile(`^[CGD][A-Z0-9]{2,30}$`)
)

// Defaults fills every field left empty with its default.
func (c *Config) Defaults() {
	section.Default(&c.BotTokenEnv, DefaultBotTokenEnv)
	section.Default(&c.AppTokenEnv, DefaultAppTokenEnv)
	section.Default(&c.SigningSecretEnv, DefaultSigningSecretEnv)
	section.Default(&c.Mode, DefaultMode)
	section.Default(&c.HTTPPath, DefaultHTTPPath)
	section.Default(&c.DenyReasonWindow, policy.Duration{Duration: DefaultDenyReasonWindow})
	section.Default(&c.SlashCommand, DefaultSlashCommand)
}

// Validate checks every value of a section with its defaults applied; errors name the key.
func (c Config) Validate() error {
	if c.Mode != ModeSocket && c.Mode != ModeHTTP {
		return fmt.Errorf("%s.mode: want %q or %q, got %q", key, ModeSocket, ModeHTTP, c.Mode)
	}
	if _, err := c.apiURL(); err != nil {
		return err
	}
	for _, ch := range c.Channels {
		if !channelIDRe.MatchString(ch) {
			return fmt.Errorf("%s.channels: %q is not a channel id (C…, G…): open the channel's details in Slack and copy its id", key, ch)
		}
	}
	if c.Team != "" && !teamIDRe.MatchString(c.Team) {
		return fmt.Errorf("%s.team: %q is not a workspace id (T…)", key, c.Team)
	}
	if !strings.HasPrefix(c.SlashCommand, "/") {
		return fmt.Errorf("%s.slash_command: %q must start with /", key, c.SlashCommand)
	}
	if !strings.HasPrefix(c.HTTPPath, "/") {
		return fmt.Errorf("%s.http_path: %q must start with /", key, c.HTTPPath)
	}
	if c.DenyReasonWindow.Duration <= 0 {
		return fmt.Errorf("%s.deny_reason_window: must be positive, got %s", key, c.DenyReasonWindow.Duration)
	}
	_, _, err := c.approvers()
	return err
}

// apiURL is the Web API base with its trailing slash.
func (c Config) apiURL() (*url.URL, error) {
	raw := c.APIURL
	if raw == "" {
		raw = DefaultAPIURL
	}
	if !strings.HasSuffix(raw, "/") {
		raw += "/"
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("%s.api_url: want an http(s) URL such as %s", key, DefaultAPIURL)
	}
	return u, nil
}

// approvers parses approvers and channel_approvers.
func (c Config) approvers() ([]approverID, map[string][]approverID, error) {
	all, err := parseApprovers(key+".approvers", c.Approvers)
	if err != nil {
		return nil, nil, err
	}
	if len(all) == 0 {
		return nil, nil, fmt.Errorf("%s.approvers: at least one approver user id is required", key)
	}
	perChat := map[string][]approverID{}
	for ch, list := range c.ChannelApprovers {
		if !channelIDRe.MatchString(ch) {
			return nil, nil, fmt.Errorf("%s.channel_approvers: %q is not a channel id", key, ch)
		}
		ids, err := parseApprovers(key+".channel_approvers."+ch, list)
		if err != nil {
			return nil, nil, err
		}
		for _, id := range ids {
			if !containsApprover(all, id) {
				return nil, nil, fmt.Errorf("%s.channel_approvers.%s: %s is not in %s.approvers", key, ch, id.user, key)
			}
		}
		perChat[ch] = ids
	}
	return all, perChat, nil
}

// Secrets are the values the section names environment variables for. They never reach
// a log or an error.
type Secrets struct {
	// BotToken is the bot token (xoxb-…), for every Web API call.
	BotToken string
	// AppToken is the app-level token (xapp-…) Socket Mode connects with.
	AppToken string
	// SigningSecret verifies HTTP-mode requests.
	SigningSecret string
}

// ReadSecrets reads the secrets the mode needs from the environment (getenv is os.Getenv
// outside tests).
func (c Config) ReadSecrets(getenv func(string) string) (Secrets, error) {
	s := Secrets{BotToken: getenv(c.BotTokenEnv)}
	if s.BotToken == "" {
		return s, fmt.Errorf("%s: the bot token environment variable %s is not set", key, c.BotTokenEnv)
	}
	switch c.Mode {
	case ModeHTTP:
		if s.SigningSecret = getenv(c.SigningSecretEnv); s.SigningSecret == "" {
			return s, fmt.Errorf("%s: http mode needs the signing secret in %s, which is not set", key, c.SigningSecretEnv)
		}
	default:
		if s.AppToken = getenv(c.AppTokenEnv); s.AppToken == "" {
			return s, fmt.Errorf("%s: socket mode needs the app-level token (xapp-…) in %s, which is not set", key, c.AppTokenEnv)
		}
	}
	return s, nil
}

// checkSecrets checks the secrets' shape for the section's mode.
func (c Config) checkSecrets(s Secrets) error {
	mode := c.Mode
	if !strings.HasPrefix(s.BotToken, "xoxb-") {
		return errors.New(key + ": the bot token must be a bot token (xoxb-…)")
	}
	switch mode {
	case ModeSocket:
		if !strings.HasPrefix(s.AppToken, "xapp-") {
			return errors.New(key + ": socket mode needs an app-level token (xapp-…) with the connections:write scope")
		}
	case ModeHTTP:
		if s.SigningSecret == "" {
			return errors.New(key + ": http mode needs the app's signing secret")
		}
	}
	return nil
}

// ConfigFromEnv is the section approvebot runs with when there is no config file: nil
// unless EnvBotToken is set, else the channels and approvers from EnvChannels and
// EnvApprovers (comma-separated ids), in Socket Mode, with every default.
func ConfigFromEnv(getenv func(string) string) (*Config, error) {
	if getenv(EnvBotToken) == "" {
		return nil, nil
	}
	c := &Config{Channels: chatops.IDList(getenv(EnvChannels)), Approvers: chatops.IDList(getenv(EnvApprovers))}
	if len(c.Approvers) == 0 {
		return nil, fmt.Errorf("%s is set but %s is empty: name at least one approver's Slack user id", EnvBotToken, EnvApprovers)
	}
	c.Defaults()
	return c, nil
}

// ValidChannelID reports whether s looks like a Slack conversation id (C…, G…, D…): cards
// are matched to presses and commands by id, never by a channel's name.
func ValidChannelID(s string) bool { return channelIDRe.MatchString(s) }
