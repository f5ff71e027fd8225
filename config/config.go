// Package config reads approvebot's TOML configuration: strictly (an unknown key or a bad
// value is an error naming the key and line), with defaults for everything left out, and
// validation before anything starts. [server] and [log] are declared here; [policy] is
// core/policy's Config and each [channels.<name>] that channel's Config, embedded as they
// are. Secrets are never in the file: it names environment variables (token_env and
// friends) and Secret and the channels' ReadSecrets read them.
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

	"github.com/approvebot/approvebot/api"
	"github.com/approvebot/approvebot/channels/discord"
	"github.com/approvebot/approvebot/channels/slack"
	"github.com/approvebot/approvebot/channels/telegram"
	"github.com/approvebot/approvebot/core/gate"
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

// Server is [server]. Each default and limit is the named constant below, in the order of
// the fields; TestDefaultsAreDocumented checks these comments, config.example.toml and
// docs/operations.md against them.
type Server struct {
	// Listen is where the HTTP API listens (default "127.0.0.1:8470").
	Listen string `toml:"listen"`
	// Data is the bbolt database file (default "approvebot.db").
	Data string `toml:"data"`
	// ApprovalTimeout is how long a request waits for a human before it is refused
	// (default 120s, at least 1s).
	ApprovalTimeout Duration `toml:"approval_timeout"`
	// MaxBody caps request bodies, in bytes (default 1048576, at least 1024).
	MaxBody int64 `toml:"max_body"`
	// DeliveryTimeout bounds how long posting a card may take before the request falls
	// back (default 30s).
	DeliveryTimeout Duration `toml:"delivery_timeout"`
	// TokensFile keeps the tokens generated on a first start without [[agents]] (default:
	// the data file's name + ".tokens").
	TokensFile string `toml:"tokens_file"`
	// RateLimit is the sustained requests per second allowed per token (default 2000; 0
	// disables rate limiting).
	RateLimit float64 `toml:"rate_limit"`
	// RateBurst is the burst allowed per token (default 4000, at least 1 while limiting).
	RateBurst int `toml:"rate_burst"`
	// MaxPending caps the requests waiting for a human (default 50000, at least 1).
	MaxPending int `toml:"max_pending"`
	// MaxPendingPerSession caps the requests of one session waiting for a human (default
	// 200, at least 1).
	MaxPendingPerSession int `toml:"max_pending_per_session"`
	// MaxPendingPerAgent caps one agent token's requests waiting for a human, so that one
	// agent cannot take every slot from the others (default: half of max_pending, when
	// left out or 0).
	MaxPendingPerAgent int `toml:"max_pending_per_agent"`
	// ShutdownTimeout is how long a graceful shutdown waits for in-flight work (default 10s).
	ShutdownTimeout Duration `toml:"shutdown_timeout"`
	// MaxWait caps the wait an agent may ask for in one call (default 10m).
	MaxWait Duration `toml:"max_wait"`
	// AuditRetention drops audit entries (and decided requests) older than this (default
	// 0s: keep all).
	AuditRetention Duration `toml:"audit_retention"`
	// HeadlessFallback: with no chat channel configured, asks fall back at once (ask_fallback)
	// instead of waiting for an operator's decision over the API (default false).
	HeadlessFallback bool `toml:"headless_fallback"`
	// AuditMaxEntries keeps at most this many audit entries (default 0: no cap).
	AuditMaxEntries int `toml:"audit_max_entries"`
}

// Defaults and limits of [server], in the order of the fields. Those the gate and the API
// also fall back to when given zero are theirs, named here, so each lives in one place.
const (
	DefaultListen               = "127.0.0.1:8470"
	DefaultData                 = "approvebot.db"
	DefaultApprovalTimeout      = gate.DefaultApprovalTimeout
	MinApprovalTimeout          = time.Second
	DefaultMaxBody              = api.DefaultMaxBody
	MinMaxBody                  = 1024
	DefaultDeliveryTimeout      = gate.DefaultDeliveryTimeout
	TokensFileSuffix            = ".tokens"
	DefaultRateLimit            = 2000
	DefaultRateBurst            = 4000
	MinRateBurst                = 1
	DefaultMaxPending           = gate.DefaultMaxPendingTotal
	MinMaxPending               = 1
	DefaultMaxPendingPerSession = gate.DefaultMaxPendingPerSession
	MinMaxPendingPerSession     = 1
	DefaultShutdownTimeout      = 10 * time.Second
	DefaultMaxWait              = api.DefaultMaxWait
)

// Agent is one [[agents]] token.
type Agent struct {
	Name     string `toml:"name"`
	TokenEnv string `toml:"token_env"`
	// Role is "agent" (default) or "operator".
	Role string `toml:"role"`
}

// Agent roles.
const (
	RoleAgent    = "agent"
	RoleOperator = "operator"
	DefaultRole  = RoleAgent
)

// Log is [log].
type Log struct {
	// Level is debug, info, warn or error (default "info").
	Level string `toml:"level"`
	// Format is text or json (default "text").
	Format string `toml:"format"`
}

// Defaults of [log].
const (
	DefaultLevel  = "info"
	DefaultFormat = "text"
)

// Channels is [channels]: each platform owns its section. A nil section means the channel
// is not configured.
type Channels struct {
	Telegram *telegram.Config `toml:"telegram"`
	Slack    *slack.Config    `toml:"slack"`
	Discord  *discord.Config  `toml:"discord"`
}

// sections are the configured channels' sections.
func (ch Channels) sections() []interface{ Validate() error } {
	var out []interface{ Validate() error }
	if ch.Telegram != nil {
		out = append(out, ch.Telegram)
	}
	if ch.Slack != nil {
		out = append(out, ch.Slack)
	}
	if ch.Discord != nil {
		out = append(out, ch.Discord)
	}
	return out
}

// Route is one [[routes]] entry.
type Route struct {
	Agent   string   `toml:"agent"`
	Session string   `toml:"session"`
	Tool    string   `toml:"tool"`
	Channel string   `toml:"channel"`
	Chats   []string `toml:"chats"`
}

// empty is a configuration before any file is read: [server] and [log] hold their
// defaults, so a key a file leaves out keeps its default and a key it sets, even to 0,
// is what it says (rate_limit = 0 disables limiting).
func empty() Config {
	return Config{
		Server: Server{
			Listen: DefaultListen, Data: DefaultData, ApprovalTimeout: Duration{Duration: DefaultApprovalTimeout},
			MaxBody: DefaultMaxBody, DeliveryTimeout: Duration{Duration: DefaultDeliveryTimeout},
			RateLimit: DefaultRateLimit, RateBurst: DefaultRateBurst, MaxPending: DefaultMaxPending,
			MaxPendingPerSession: DefaultMaxPendingPerSession, ShutdownTimeout: Duration{Duration: DefaultShutdownTimeout},
			MaxWait: Duration{Duration: DefaultMaxWait},
		},
		Log: Log{Level: DefaultLevel, Format: DefaultFormat},
		Store: Store{Backend: DefaultBackend, Etcd: StoreEtcd{Prefix: DefaultPrefix,
			DialTimeout: Duration{Duration: DefaultDialTimeout}, LeaseTTL: Duration{Duration: DefaultLeaseTTL}}},
	}
}

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
	c := empty()
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

// defaults fills what the file left empty and what derives from other keys.
func (c *Config) defaults() {
	if c.Server.TokensFile == "" {
		c.Server.TokensFile = c.Server.Data + TokensFileSuffix
	}
	if c.Server.MaxPendingPerAgent == 0 {
		c.Server.MaxPendingPerAgent = gate.DefaultMaxPendingPerAgent(c.Server.MaxPending)
	}
	for i := range c.Agents {
		if c.Agents[i].Role == "" {
			c.Agents[i].Role = DefaultRole
		}
	}
	c.Policy.Defaults()
	if t := c.Channels.Telegram; t != nil {
		t.Defaults()
	}
	if sl := c.Channels.Slack; sl != nil {
		sl.Defaults()
	}
	if d := c.Channels.Discord; d != nil {
		d.Defaults()
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
	if s.Data == "" {
		return errors.New("server.data: required (the database file)")
	}
	if s.ApprovalTimeout.Duration < MinApprovalTimeout {
		return fmt.Errorf("server.approval_timeout: must be at least %s, got %s", MinApprovalTimeout, s.ApprovalTimeout.Duration)
	}
	if s.MaxBody < MinMaxBody {
		return fmt.Errorf("server.max_body: must be at least %d bytes, got %d", MinMaxBody, s.MaxBody)
	}
	for _, d := range []struct {
		key string
		v   time.Duration
	}{{"delivery_timeout", s.DeliveryTimeout.Duration}, {"shutdown_timeout", s.ShutdownTimeout.Duration}, {"max_wait", s.MaxWait.Duration}} {
		if d.v <= 0 {
			return fmt.Errorf("server.%s: must be positive, got %s", d.key, d.v)
		}
	}
	if s.AuditRetention.Duration < 0 {
		return fmt.Errorf("server.audit_retention: must not be negative, got %s", s.AuditRetention.Duration)
	}
	if s.RateLimit < 0 {
		return fmt.Errorf("server.rate_limit: must not be negative (0 disables rate limiting), got %v", s.RateLimit)
	}
	if s.RateLimit > 0 && s.RateBurst < MinRateBurst {
		return fmt.Errorf("server.rate_burst: must be at least %d while rate_limit is on, got %d", MinRateBurst, s.RateBurst)
	}
	if s.MaxPending < MinMaxPending {
		return fmt.Errorf("server.max_pending: must be at least %d, got %d", MinMaxPending, s.MaxPending)
	}
	if s.MaxPendingPerSession < MinMaxPendingPerSession {
		return fmt.Errorf("server.max_pending_per_session: must be at least %d, got %d", MinMaxPendingPerSession, s.MaxPendingPerSession)
	}
	if s.AuditMaxEntries < 0 {
		return fmt.Errorf("server.audit_max_entries: must not be negative (0: no cap), got %d", s.AuditMaxEntries)
	}
	if s.MaxPendingPerAgent < 0 {
		return fmt.Errorf("server.max_pending_per_agent: must not be negative (0: half of max_pending), got %d", s.MaxPendingPerAgent)
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
		if a.Role != RoleAgent && a.Role != RoleOperator {
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
	for _, section := range c.Channels.sections() {
		if err := section.Validate(); err != nil {
			return err
		}
	}
	for i, r := range c.Routes {
		key := fmt.Sprintf("routes[%d]", i)
		switch r.Channel {
		case telegram.Name, slack.Name, discord.Name:
		default:
			return fmt.Errorf("%s.channel: want telegram, slack or discord, got %q", key, r.Channel)
		}
		for _, chat := range r.Chats {
			if r.Channel == slack.Name && !slack.ValidChannelID(chat) {
				return fmt.Errorf("%s.chats: %q is not a Slack channel id (C…, G…)", key, chat)
			}
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
