package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// commands is the table of subcommands; each lives in its own file.
func commands() map[string]command {
	return map[string]command{
		"serve":          {"run the approval service", cmdServe},
		"check":          {"evaluate the policy offline for one call (no server)", cmdCheck},
		"example-config": {"print the example configuration (every option, commented)", cmdExampleConfig},
		"ask":            {"ask a running server about a command and wait (exit 0 only when allowed)", cmdAsk},
		"exec":           {"ask, then run the program only when allowed", cmdExec},
		"hook":           {"answer one hook event of Claude Code, Codex, Gemini CLI or Cursor (stdin JSON → decision JSON)", cmdHook},
		"mcp":            {"stdio MCP server with the approval_prompt tool (--permission-prompt-tool)", cmdMCP},
		"pending":        {"operator: list pending requests", cmdPending},
		"decide":         {"operator: decide a pending request (allow|allow-session|allow-always|deny)", cmdDecide},
		"audit":          {"operator: read the decision trail", cmdAudit},
		"allowlist":      {"operator: list or revoke persisted allow-always entries", cmdAllowlist},
		"compact":        {"offline, server stopped: give the space of pruned data back to the disk", cmdCompact},
		"session":        {"operator: set a session's tier/unattended mark, or unpause it", cmdSession},
		"backup":         {"operator: write a consistent copy of the running server's database to FILE", cmdBackup},
		"verify":         {"check a database file completely, with approvebot stopped (exit 1 when damaged)", cmdVerify},
		"token":          {"print a new random API token for [[agents]] token_env", cmdToken},
		"version":        {"print the version", cmdVersion},
	}
}

// newFlagSet is a subcommand's flag set. Its -h prints "usage: approvebot USAGE", what the
// command does and its flags (each default once, by the flag package), and nothing else.
func newFlagSet(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintln(w, "usage: approvebot "+usage)
		if c, ok := commands()[name]; ok {
			fmt.Fprintln(w, c.summary)
		}
		fs.PrintDefaults()
	}
	return fs
}

// parseError is how a subcommand ends when its flags do not parse: exit 0 after -h (the
// usage was printed), the usage code otherwise.
func parseError(err error, usageCode int) error {
	if errors.Is(err, flag.ErrHelp) {
		return &exitError{code: 0}
	}
	return &exitError{code: usageCode}
}
