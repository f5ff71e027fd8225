package hooks

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Claude Code's hook protocol (code.claude.com/docs/en/hooks): PreToolUse answers
// hookSpecificOutput.permissionDecision allow|deny with a reason; PermissionRequest, which
// fires when Claude Code is about to ask the person at the keyboard, answers
// hookSpecificOutput.decision {behavior allow|deny, message, updatedPermissions}. No output
// (exit 0, empty body) is "no decision": Claude Code's own permission flow applies.
type claudeCode struct{}

func (claudeCode) Name() string { return "claude-code" }

// Claude Code's events this adapter answers.
const (
	EventPreToolUse        = "PreToolUse"
	EventPermissionRequest = "PermissionRequest"
)

type claudeInput struct {
	SessionID             string          `json:"session_id"`
	Cwd                   string          `json:"cwd"`
	HookEventName         string          `json:"hook_event_name"`
	ToolName              string          `json:"tool_name"`
	ToolInput             json.RawMessage `json:"tool_input"`
	PermissionSuggestions json.RawMessage `json:"permission_suggestions"`
}

// readOnlyClaudeTools only read local files: they are asked with facts read_only and
// idempotent, so the strict tier does not send every read to a human. A tool_permissions
// entry still decides them, and the policy's sensitive paths are never auto-allowed.
var readOnlyClaudeTools = map[string]bool{
	"Read": true, "Glob": true, "Grep": true, "LS": true, "NotebookRead": true,
}

// claudeShellTools run their command line in a shell: Bash, and PowerShell on Windows.
var claudeShellTools = map[string]bool{"Bash": true, "PowerShell": true}

func (claudeCode) Parse(raw []byte) (Call, error) {
	c := Call{Event: eventOf(raw, "hook_event_name")}
	var in claudeInput
	if err := decodeInput(raw, &in); err != nil {
		return c, err
	}
	switch in.HookEventName {
	case "", EventPreToolUse:
		c.Event = EventPreToolUse
	case EventPermissionRequest:
		c.AgentAsks = true
	default:
		return c, fmt.Errorf("hook event %q: approvebot answers PreToolUse and PermissionRequest", printableName(in.HookEventName))
	}
	input, err := object(in.ToolInput, "tool_input")
	if err != nil {
		return c, err
	}
	if c.Tool, c.Args, c.Reason, c.Facts, err = ClaudeTool(in.ToolName, input); err != nil {
		return c, err
	}
	c.Session, c.Cwd = in.SessionID, in.Cwd
	if c.AgentAsks {
		c.SessionRules = exactSessionRules(in.PermissionSuggestions, c.Tool, c.Args)
	}
	return c, nil
}

// ClaudeTool maps one Claude Code tool call to what approvebot is asked: the shell tools
// with their description as the agent's reason, the read-only tools with their facts,
// every other tool's input as it is. The MCP permission tool shares it.
func ClaudeTool(tool string, input map[string]any) (name string, args map[string]any, reason string, facts Facts, err error) {
	if err := checkTool(tool); err != nil {
		return "", nil, "", Facts{}, err
	}
	if claudeShellTools[tool] {
		args, reason, err := shellArgs(tool, input)
		return tool, args, reason, Facts{}, err
	}
	if readOnlyClaudeTools[tool] {
		facts = Facts{ReadOnly: true, Idempotent: true}
	}
	return tool, input, "", facts, nil
}

// claudeRule is one permission rule of an updatedPermissions entry.
type claudeRule struct {
	ToolName    string `json:"toolName"`
	RuleContent string `json:"ruleContent,omitempty"`
}

type claudePermissionUpdate struct {
	Type        string       `json:"type"`
	Rules       []claudeRule `json:"rules"`
	Behavior    string       `json:"behavior"`
	Destination string       `json:"destination"`
}

// exactSessionRules keeps, of the "always allow" options Claude Code offered, those that
// allow exactly this shell command and nothing more — an addRules allow whose every rule
// is this tool with this very command, without a wildcard — rewritten to last only for
// the session. A prefix rule, a whole-tool rule, a mode change or added directories would
// allow calls no human saw, so none of those is ever handed back.
func exactSessionRules(raw json.RawMessage, tool string, args map[string]any) []json.RawMessage {
	if len(raw) == 0 || !claudeShellTools[tool] {
		return nil
	}
	cmd, _ := args["command"].(string)
	if cmd == "" || strings.ContainsAny(cmd, "*\n\r") {
		return nil
	}
	var offered []claudePermissionUpdate
	if json.Unmarshal(raw, &offered) != nil {
		return nil
	}
	var out []json.RawMessage
	for _, u := range offered {
		if u.Type != "addRules" || u.Behavior != "allow" || len(u.Rules) == 0 {
			continue
		}
		exact := true
		for _, r := range u.Rules {
			if r.ToolName != tool || r.RuleContent != cmd {
				exact = false
			}
		}
		if !exact {
			continue
		}
		u.Destination = "session"
		out = append(out, json.RawMessage(strings.TrimSpace(string(encode(u)))))
	}
	return out
}

type claudePreToolUseOutput struct {
	HookSpecificOutput struct {
		HookEventName            string `json:"hookEventName"`
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
	} `json:"hookSpecificOutput"`
}

type claudePermissionDecision struct {
	Behavior           string            `json:"behavior"`
	Message            string            `json:"message,omitempty"`
	UpdatedPermissions []json.RawMessage `json:"updatedPermissions,omitempty"`
}

type claudePermissionRequestOutput struct {
	HookSpecificOutput struct {
		HookEventName string                   `json:"hookEventName"`
		Decision      claudePermissionDecision `json:"decision"`
	} `json:"hookSpecificOutput"`
}

func (claudeCode) Render(c Call, v Verdict) Reply {
	if v.Kind == Defer {
		return Reply{}
	}
	if c.Event == EventPermissionRequest {
		var out claudePermissionRequestOutput
		out.HookSpecificOutput.HookEventName = EventPermissionRequest
		if v.Kind == Allow {
			out.HookSpecificOutput.Decision.Behavior = "allow"
			if v.ForSession {
				out.HookSpecificOutput.Decision.UpdatedPermissions = c.SessionRules
			}
		} else {
			out.HookSpecificOutput.Decision = claudePermissionDecision{Behavior: "deny", Message: v.Message}
		}
		return Reply{Body: encode(out)}
	}
	var out claudePreToolUseOutput
	out.HookSpecificOutput.HookEventName = EventPreToolUse
	out.HookSpecificOutput.PermissionDecision = "deny"
	if v.Kind == Allow {
		out.HookSpecificOutput.PermissionDecision = "allow"
	}
	out.HookSpecificOutput.PermissionDecisionReason = v.Message
	return Reply{Body: encode(out)}
}

// Printable shows an agent-supplied name in an error: at most 64 bytes, control characters
// as spaces.
func Printable(s string) string { return printableName(s) }

// printableName shows an agent-supplied name in an error.
func printableName(s string) string {
	if len(s) > 64 {
		s = cutBytes(s, 64) + "…"
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}
