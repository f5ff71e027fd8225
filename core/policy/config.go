package policy

import (
	"fmt"
	"path"
	"sort"
	"strings"
	"time"
)

// Config is the [policy] section. The config package embeds it, so the TOML names live here.
type Config struct {
	ExecTier           string            `toml:"exec_tier"`
	Default            string            `toml:"default"`
	DenialsBeforePause int               `toml:"denials_before_pause"`
	AllowAlways        string            `toml:"allow_always"`
	AskFallback        string            `toml:"ask_fallback"`
	ToolPermissions    map[string]string `toml:"tool_permissions"`
	// SensitivePaths replaces DefaultSensitivePaths when set ([] turns the list off);
	// ExtraSensitivePaths adds to whichever list is in force.
	SensitivePaths      []string   `toml:"sensitive_paths"`
	ExtraSensitivePaths []string   `toml:"extra_sensitive_paths"`
	Exec                ExecConfig `toml:"exec"`
}

// SensitiveGlobs is the sensitive path list in force: sensitive_paths (or the built-in list)
// followed by extra_sensitive_paths.
func (c *Config) SensitiveGlobs() []string {
	base := c.SensitivePaths
	if base == nil {
		base = DefaultSensitivePaths
	}
	out := make([]string, 0, len(base)+len(c.ExtraSensitivePaths))
	out = append(out, base...)
	return append(out, c.ExtraSensitivePaths...)
}

// compileSensitive compiles the sensitive path list; errors name the key.
func (c *Config) compileSensitive() (*Sensitive, error) {
	if _, err := CompileSensitive(c.ExtraSensitivePaths); err != nil {
		return nil, fmt.Errorf("policy.extra_sensitive_paths%w", err)
	}
	if c.SensitivePaths != nil {
		if _, err := CompileSensitive(c.SensitivePaths); err != nil {
			return nil, fmt.Errorf("policy.sensitive_paths%w", err)
		}
	}
	return CompileSensitive(c.SensitiveGlobs())
}

// ExecConfig is [policy.exec]: the shell-command policy of seed 003.
type ExecConfig struct {
	// ShellTools maps a tool name to the argument carrying its shell command line.
	ShellTools      map[string]string `toml:"shell_tools"`
	Security        string            `toml:"security"`
	Ask             string            `toml:"ask"`
	SafeBins        []string          `toml:"safe_bins"`
	TrustedDirs     []string          `toml:"trusted_dirs"`
	Path            string            `toml:"path"`
	AutoAllowSkills bool              `toml:"auto_allow_skills"`
	SkillBins       []string          `toml:"skill_bins"`
	// ResolveCacheTTL bounds how long an executable's resolved path is trusted.
	ResolveCacheTTL Duration         `toml:"resolve_cache_ttl"`
	Allowlist       []AllowlistEntry `toml:"allowlist"`
	Rules           []Rule           `toml:"rules"`
}

// AllowlistEntry allows an executable by resolved path: exact, "dir/*" or a glob. It trusts
// whatever the program does with its arguments and runs from files (a Makefile, package.json
// scripts); Args narrows it to calls whose words after the executable, joined by single
// spaces, match a glob ("test" is exactly `npm test`; "test *" is `npm test` with or without
// more words; "*" spans spaces). Commands hidden in the arguments are judged on their own
// whatever the entry says.
type AllowlistEntry struct {
	Pattern string `toml:"pattern" json:"pattern"`
	// Agent limits the entry to one agent name; empty means every agent.
	Agent string `toml:"agent" json:"agent,omitempty"`
	// Args is the argv pattern; empty means any arguments.
	Args string `toml:"args" json:"args,omitempty"`
}

// Rule matches an executable and an argv pattern and denies or forces an ask.
type Rule struct {
	Name       string `toml:"name"`
	Executable string `toml:"executable"`
	Args       string `toml:"args"`
	Action     string `toml:"action"`
	Message    string `toml:"message"`
}

// Duration is a time.Duration written as a Go duration string ("120s") in TOML.
type Duration struct{ time.Duration }

// UnmarshalText parses a duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("invalid duration %q (use e.g. \"120s\", \"2m\")", string(b))
	}
	if v < 0 {
		return fmt.Errorf("negative duration %q", string(b))
	}
	d.Duration = v
	return nil
}

// MarshalText writes the duration string.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// DefaultShellTools are the tools whose "command" argument is a shell command line: DESIGN's
// bash, Bash, shell and exec, plus the shells themselves and the names other agents give
// their shell tool (Gemini CLI's run_shell_command, Cursor's run_terminal_cmd, Cline's
// execute_command). Names also match case-insensitively.
var DefaultShellTools = map[string]string{
	"bash": "command", "Bash": "command", "shell": "command", "exec": "command",
	"sh": "command", "zsh": "command", "dash": "command", "ksh": "command", "fish": "command",
	"powershell": "command", "pwsh": "command", "cmd": "command",
	"run_shell_command": "command", "run_terminal_cmd": "command", "execute_command": "command",
}

// Defaults fills what the config left empty.
func (c *Config) Defaults() {
	if c.ExecTier == "" {
		c.ExecTier = "auto"
	}
	if c.Default == "" {
		c.Default = "allow"
	}
	if c.DenialsBeforePause == 0 {
		c.DenialsBeforePause = 3
	}
	if c.AllowAlways == "" {
		c.AllowAlways = "session"
	}
	if c.AskFallback == "" {
		c.AskFallback = "deny"
	}
	if c.Exec.ShellTools == nil {
		c.Exec.ShellTools = map[string]string{}
		for k, v := range DefaultShellTools {
			c.Exec.ShellTools[k] = v
		}
	}
	if c.Exec.Security == "" {
		c.Exec.Security = "allowlist"
	}
	if c.Exec.Ask == "" {
		c.Exec.Ask = "on-miss"
	}
	if c.Exec.ResolveCacheTTL.Duration == 0 {
		c.Exec.ResolveCacheTTL.Duration = 5 * time.Second
	}
}

// Validate checks every value; errors name the key.
func (c *Config) Validate() error {
	if _, err := ParseTier(c.ExecTier); err != nil {
		return fmt.Errorf("policy.exec_tier: %w", err)
	}
	if _, err := ParseVerdict(c.Default); err != nil {
		return fmt.Errorf("policy.default: %w", err)
	}
	if c.DenialsBeforePause < 1 {
		return fmt.Errorf("policy.denials_before_pause: must be at least 1, got %d", c.DenialsBeforePause)
	}
	if c.AllowAlways != "session" && c.AllowAlways != "persist" {
		return fmt.Errorf("policy.allow_always: want \"session\" or \"persist\", got %q", c.AllowAlways)
	}
	if c.AskFallback != "deny" && c.AskFallback != "allowlist" {
		return fmt.Errorf("policy.ask_fallback: want \"deny\" or \"allowlist\", got %q", c.AskFallback)
	}
	names := make([]string, 0, len(c.ToolPermissions))
	for k := range c.ToolPermissions {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if _, err := ParseVerdict(c.ToolPermissions[k]); err != nil {
			return fmt.Errorf("policy.tool_permissions.%q: %w", k, err)
		}
		if _, err := path.Match(k, ""); err != nil {
			return fmt.Errorf("policy.tool_permissions.%q: invalid glob: %w", k, err)
		}
	}
	for k, v := range c.Exec.ShellTools {
		if strings.TrimSpace(k) == "" || strings.TrimSpace(v) == "" {
			return fmt.Errorf("policy.exec.shell_tools: tool %q needs a non-empty argument name", k)
		}
	}
	switch c.Exec.Security {
	case "deny", "allowlist", "full":
	default:
		return fmt.Errorf("policy.exec.security: want \"deny\", \"allowlist\" or \"full\", got %q", c.Exec.Security)
	}
	switch c.Exec.Ask {
	case "off", "on-miss", "always":
	default:
		return fmt.Errorf("policy.exec.ask: want \"off\", \"on-miss\" or \"always\", got %q", c.Exec.Ask)
	}
	if _, err := c.compileSensitive(); err != nil {
		return err
	}
	// Allowlist patterns, rules, safe bins, trusted dirs (exec.go).
	return c.Exec.validate()
}
