package hooks

import (
	"encoding/json"
	"fmt"
	"path/filepath"
)

// Gemini CLI's hook protocol (google-gemini/gemini-cli docs/hooks/reference.md,
// packages/core/src/hooks): a BeforeTool hook answers {"decision": "deny", "reason": …} to
// block a call. Gemini CLI's "allow" does not skip its own policy and confirmation — it is
// the same as no decision — so an explicit allow is {"decision":"allow"} and a tier-default
// allow is no output; Gemini's own rules and prompts apply to both.
type gemini struct{}

func (gemini) Name() string { return "gemini" }

// EventBeforeTool is the Gemini CLI event this adapter answers.
const EventBeforeTool = "BeforeTool"

type geminiInput struct {
	SessionID     string          `json:"session_id"`
	Cwd           string          `json:"cwd"`
	HookEventName string          `json:"hook_event_name"`
	ToolName      string          `json:"tool_name"`
	ToolInput     json.RawMessage `json:"tool_input"`
	MCPContext    *struct {
		ServerName string `json:"server_name"`
		ToolName   string `json:"tool_name"`
	} `json:"mcp_context"`
}

// geminiShellTool is Gemini CLI's shell tool (a shell tool in approvebot's defaults).
const geminiShellTool = "run_shell_command"

// readOnlyGeminiTools only read local files or list them.
var readOnlyGeminiTools = map[string]bool{
	"read_file": true, "read_many_files": true, "list_directory": true, "glob": true,
	"grep_search": true, "search_file_content": true,
}

func (gemini) Parse(raw []byte) (Call, error) {
	c := Call{Event: eventOf(raw, "hook_event_name")}
	var in geminiInput
	if err := decodeInput(raw, &in); err != nil {
		return c, err
	}
	if in.HookEventName != EventBeforeTool {
		return c, fmt.Errorf("hook event %q: approvebot answers BeforeTool", printableName(in.HookEventName))
	}
	if err := checkTool(in.ToolName); err != nil {
		return c, err
	}
	input, err := object(in.ToolInput, "tool_input")
	if err != nil {
		return c, err
	}
	c.Tool, c.Session, c.Cwd, c.Args = in.ToolName, in.SessionID, in.Cwd, input
	switch {
	case in.ToolName == geminiShellTool:
		if c.Args, c.Reason, err = shellArgs(in.ToolName, input); err != nil {
			return c, err
		}
		// dir_path is where the command runs: it is the call's cwd, so the policy judges
		// relative paths against it and the fingerprint covers it.
		if d, ok := c.Args["dir_path"]; ok {
			dir, ok := d.(string)
			if !ok {
				return c, fmt.Errorf("%s: dir_path is not a string", geminiShellTool)
			}
			if dir != "" {
				if !filepath.IsAbs(dir) {
					dir = filepath.Join(in.Cwd, dir)
				}
				c.Cwd = filepath.Clean(dir)
			}
			delete(c.Args, "dir_path")
		}
	case in.MCPContext != nil && in.MCPContext.ServerName != "" && in.MCPContext.ToolName != "":
		// MCP tools (mcp_<server>_<tool> in Gemini CLI) are named as everywhere else in
		// approvebot, so one tool_permissions entry covers every agent.
		c.Tool = "mcp__" + in.MCPContext.ServerName + "__" + in.MCPContext.ToolName
		if err := checkTool(c.Tool); err != nil {
			return c, err
		}
	case readOnlyGeminiTools[in.ToolName]:
		c.Facts = Facts{ReadOnly: true, Idempotent: true}
	}
	return c, nil
}

type geminiOutput struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason,omitempty"`
}

func (gemini) Render(c Call, v Verdict) Reply {
	switch v.Kind {
	case Defer:
		return Reply{}
	case Allow:
		return Reply{Body: encode(geminiOutput{Decision: "allow"})}
	}
	return Reply{Body: encode(geminiOutput{Decision: "deny", Reason: v.Message})}
}
