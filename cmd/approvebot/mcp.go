package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/approvebot/approvebot/client"
	"github.com/approvebot/approvebot/internal/hooks"
)

// mcpToolName is the one tool the MCP server exposes; Claude Code names it
// mcp__<server name>__approval_prompt.
const mcpToolName = "approval_prompt"

const mcpInputSchema = `{
  "type": "object",
  "properties": {
    "tool_name": {"type": "string", "description": "the tool Claude Code wants to run"},
    "input": {"type": "object", "description": "that tool's input"},
    "tool_use_id": {"type": "string"}
  },
  "required": ["tool_name", "input"]
}`

func cmdMCP(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("mcp", "mcp [flags]   (JSON-RPC on stdin and stdout; claude --permission-prompt-tool mcp__approvebot__approval_prompt)", stderr)
	var af agentFlags
	af.register(fs, "session (default $"+client.EnvSession+", else Claude Code's $"+envClaudeSession+", else one generated for this process)")
	cwd := fs.String("cwd", "", "working directory reported with each call (default: this directory)")
	if err := fs.Parse(args); err != nil {
		return parseError(err, exitUsage)
	}
	if fs.NArg() > 0 {
		return &exitError{code: exitUsage, msg: fmt.Sprintf("unexpected arguments: %q", fs.Args())}
	}
	session := mcpSession(af.session)
	dir, err := workDir(*cwd)
	if err != nil {
		return &exitError{code: exitUsage, msg: err.Error()}
	}
	if _, err := af.getClient(); err != nil {
		// Keep serving: every call is refused with this reason, which the user sees.
		fmt.Fprintln(stderr, "approvebot mcp:", err, "(every call will be refused)")
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "approvebot", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{
		Name: mcpToolName,
		Description: "Asks a human, through approvebot, whether Claude Code may run a tool call. " +
			"Answers {\"behavior\":\"allow\",\"updatedInput\":…} or {\"behavior\":\"deny\",\"message\":…}.",
		InputSchema: json.RawMessage(mcpInputSchema),
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var raw json.RawMessage
		if req != nil && req.Params != nil {
			raw = req.Params.Arguments
		}
		text := mcpDecide(ctx, &af, session, dir, raw, stderr)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
	})
	err = srv.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(stdin), Writer: nopWriteCloser{stdout}})
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) || ctx.Err() != nil {
		return nil
	}
	return err
}

// mcpDecide answers one approval_prompt call with the JSON text Claude Code expects.
// Claude Code calls the tool exactly when it would ask a person, so approvebot answers for
// that person (hooks.Decide with AgentAsks): an explicit allow is an allow, a refusal a
// deny, and anything else goes to a human. The tool has no "no decision": what is left
// undecided is a deny. Every failure is a deny.
func mcpDecide(ctx context.Context, af *agentFlags, session, cwd string, raw json.RawMessage, stderr io.Writer) (text string) {
	deny := func(err error) string {
		fmt.Fprintln(stderr, "approvebot mcp:", err)
		return permissionJSON(false, nil, client.FailureMessage(err))
	}
	defer func() {
		if p := recover(); p != nil {
			text = deny(fmt.Errorf("internal error: %v", p))
		}
	}()
	if _, err := client.StrictObject(raw); err != nil {
		return deny(fmt.Errorf("arguments are not a JSON object: %v", err))
	}
	var in struct {
		ToolName  string          `json:"tool_name"`
		Input     json.RawMessage `json:"input"`
		ToolUseID string          `json:"tool_use_id"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return deny(fmt.Errorf("arguments: %v", err))
	}
	input, err := client.StrictObject(in.Input)
	if err != nil {
		return deny(fmt.Errorf("input is not a JSON object: %v", err))
	}
	call := hooks.Call{Session: session, Cwd: cwd, AgentAsks: true}
	if call.Tool, call.Args, call.Reason, call.Facts, err = hooks.ClaudeTool(in.ToolName, input); err != nil {
		return deny(err)
	}
	v := hooks.Decide(ctx, call, af.hookAsker(stderr))
	switch v.Kind {
	case hooks.Allow:
		return permissionJSON(true, in.Input, "")
	case hooks.Defer:
		return permissionJSON(false, nil, "Refused: nothing in approvebot's policy allows this call and no human was asked, so it is not allowed. Treat this as a refusal.")
	}
	return permissionJSON(false, nil, v.Message)
}

// permissionJSON is the permission-prompt answer. updatedInput is required on allow: it
// is the input exactly as asked about (compacted), never changed.
func permissionJSON(allow bool, input json.RawMessage, message string) string {
	var v any
	if allow {
		var buf bytes.Buffer
		if err := json.Compact(&buf, input); err != nil {
			return permissionJSON(false, nil, client.FailureMessage(err))
		}
		v = struct {
			Behavior     string          `json:"behavior"`
			UpdatedInput json.RawMessage `json:"updatedInput"`
		}{"allow", buf.Bytes()}
	} else {
		v = struct {
			Behavior string `json:"behavior"`
			Message  string `json:"message"`
		}{"deny", message}
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return `{"behavior":"deny","message":"Refused: approvebot could not encode its answer."}`
	}
	return string(bytes.TrimRight(out.Bytes(), "\n"))
}

// envClaudeSession is the session id Claude Code gives the stdio MCP servers it starts (the
// session_id its hooks see), so a grant made through the hook holds here too.
const envClaudeSession = "CLAUDE_CODE_SESSION_ID"

// mcpSession is the session of the permission tool: -session, else $APPROVEBOT_SESSION,
// else Claude Code's session id, else one for this process.
func mcpSession(flagValue string) string {
	for _, s := range []string{flagValue, os.Getenv(client.EnvSession), os.Getenv(envClaudeSession)} {
		if s != "" {
			return s
		}
	}
	return "mcp-" + randomHex(8)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return hex.EncodeToString(b)
}
