package main

// commands is the table of subcommands; each lives in its own file.
func commands() map[string]command {
	return map[string]command{
		"serve":          {"run the approval service", cmdServe},
		"check":          {"evaluate the policy offline for one call (no server)", cmdCheck},
		"example-config": {"print the example configuration (every option, commented)", cmdExampleConfig},
		"ask":            {"ask a running server about a command and wait (exit 0 only when allowed)", cmdAsk},
		"exec":           {"ask, then run the program only when allowed", cmdExec},
		"hook":           {"Claude Code PreToolUse hook: hook claude-code (stdin JSON → decision JSON)", cmdHook},
		"mcp":            {"stdio MCP server with the approval_prompt tool (--permission-prompt-tool)", cmdMCP},
		"pending":        {"operator: list pending requests", cmdPending},
		"decide":         {"operator: decide a pending request (allow|allow-session|allow-always|deny)", cmdDecide},
		"audit":          {"operator: read the decision trail", cmdAudit},
		"allowlist":      {"operator: list or revoke persisted allow-always entries", cmdAllowlist},
		"session":        {"operator: set a session's tier/unattended mark, or unpause it", cmdSession},
		"backup":         {"operator: write a consistent copy of the running server's database to FILE", cmdBackup},
		"verify":         {"check a database file completely, with approvebot stopped (exit 1 when damaged)", cmdVerify},
	}
}
