package hooks

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/approvebot/approvebot/internal/strictjson"
)

// Cursor's hook protocol (cursor.com/docs/agent/hooks): beforeShellExecution and
// beforeMCPExecution answer {"permission": "allow"|"deny"|"ask", "user_message",
// "agent_message"}. "allow" runs the call without asking anyone, and Cursor has no "no
// decision", so a tier-default allow is Cursor's own "ask": the person in Cursor decides
// (in Auto-review mode Cursor's own review applies).
type cursor struct{}

func (cursor) Name() string { return "cursor" }

// Cursor's events this adapter answers.
const (
	EventBeforeShellExecution = "beforeShellExecution"
	EventBeforeMCPExecution   = "beforeMCPExecution"
)

// cursorShellTool is the name Cursor's shell commands are asked under (Cursor's terminal
// tool, a shell tool in approvebot's defaults).
const cursorShellTool = "run_terminal_cmd"

// cursorMCPServer is the argument that names the MCP server of a beforeMCPExecution call
// (its URL or its command), so the card and the fingerprint tell servers apart.
const cursorMCPServer = "__mcp_server"

type cursorInput struct {
	ConversationID string          `json:"conversation_id"`
	HookEventName  string          `json:"hook_event_name"`
	WorkspaceRoots []string        `json:"workspace_roots"`
	Command        string          `json:"command"`
	Cwd            string          `json:"cwd"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	URL            string          `json:"url"`
}

func (cursor) Parse(raw []byte) (Call, error) {
	c := Call{Event: eventOf(raw, "hook_event_name")}
	var in cursorInput
	if err := decodeInput(raw, &in); err != nil {
		return c, err
	}
	c.Session, c.Cwd = in.ConversationID, in.Cwd
	if c.Cwd == "" && len(in.WorkspaceRoots) > 0 {
		// Cursor sometimes sends an empty cwd; its commands then run in the workspace.
		c.Cwd = in.WorkspaceRoots[0]
	}
	switch in.HookEventName {
	case EventBeforeShellExecution:
		if strings.TrimSpace(in.Command) == "" {
			return c, errors.New("beforeShellExecution without a command")
		}
		c.Tool, c.Args = cursorShellTool, map[string]any{"command": in.Command}
	case EventBeforeMCPExecution:
		if err := checkTool(in.ToolName); err != nil {
			return c, err
		}
		args, err := cursorToolInput(in.ToolInput)
		if err != nil {
			return c, err
		}
		if _, taken := args[cursorMCPServer]; taken {
			return c, fmt.Errorf("tool_input has an argument named %s", cursorMCPServer)
		}
		server := in.URL
		if server == "" {
			server = in.Command
		}
		if server != "" {
			args[cursorMCPServer] = server
		}
		c.Tool, c.Args = "mcp__"+in.ToolName, args
		if err := checkTool(c.Tool); err != nil {
			return c, err
		}
	default:
		return c, fmt.Errorf("hook event %q: approvebot answers beforeShellExecution and beforeMCPExecution", printableName(in.HookEventName))
	}
	return c, nil
}

// cursorToolInput reads an MCP call's arguments: Cursor sends them as a JSON object, or
// (older releases) as a string holding one.
func cursorToolInput(raw json.RawMessage) (map[string]any, error) {
	t := strings.TrimSpace(string(raw))
	switch {
	case t == "" || t == "null" || t == `""`:
		return map[string]any{}, nil
	case strings.HasPrefix(t, `"`):
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("tool_input: %w", err)
		}
		if strings.TrimSpace(s) == "" {
			return map[string]any{}, nil
		}
		m, err := strictjson.Object([]byte(s))
		if err != nil {
			return nil, fmt.Errorf("tool_input is not a JSON object: %w", err)
		}
		return m, nil
	}
	return object(raw, "tool_input")
}

type cursorOutput struct {
	Permission   string `json:"permission"`
	UserMessage  string `json:"user_message,omitempty"`
	AgentMessage string `json:"agent_message,omitempty"`
}

func (cursor) Render(c Call, v Verdict) Reply {
	switch v.Kind {
	case Allow:
		return Reply{Body: encode(cursorOutput{Permission: "allow"})}
	case Defer:
		return Reply{Body: encode(cursorOutput{Permission: "ask"})}
	}
	return Reply{Body: encode(cursorOutput{Permission: "deny", UserMessage: v.Message, AgentMessage: v.Message})}
}
