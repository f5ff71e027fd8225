package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/approvebot/approvebot/client"
)

// maxHookInput caps what the hook reads from stdin. The server's body cap (1 MiB by
// default) refuses larger calls anyway.
const maxHookInput = 16 << 20

// stdinTimeout bounds the wait for Claude Code to finish writing the event: a hook that
// hangs until Claude Code kills it would not be a deny.
const stdinTimeout = 10 * time.Second

// hookInput is what Claude Code sends a PreToolUse command hook on stdin.
type hookInput struct {
	SessionID      string          `json:"session_id"`
	TranscriptPath string          `json:"transcript_path"`
	Cwd            string          `json:"cwd"`
	PermissionMode string          `json:"permission_mode"`
	HookEventName  string          `json:"hook_event_name"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	ToolUseID      string          `json:"tool_use_id"`
}

// hookOutput is the decision Claude Code reads from stdout.
type hookOutput struct {
	HookSpecificOutput hookDecision `json:"hookSpecificOutput"`
}

type hookDecision struct {
	HookEventName            string `json:"hookEventName"`
	PermissionDecision       string `json:"permissionDecision"`
	PermissionDecisionReason string `json:"permissionDecisionReason"`
}

func cmdHook(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "claude-code" {
		fmt.Fprintln(stderr, "usage: approvebot hook claude-code [flags]   (a Claude Code PreToolUse command hook)")
		// Exit 2 blocks the tool call in Claude Code, and stdout still says deny.
		writeHookDecision(stdout, false, "approvebot hook: unknown hook kind; the call is refused.")
		return &exitError{code: 2}
	}
	hookClaudeCode(ctx, args[1:], stdin, stdout, stderr)
	return nil
}

// hookClaudeCode answers one PreToolUse event. It always prints exactly one decision and
// never fails: Claude Code treats exit codes other than 0 and 2 as non-blocking, so every
// error — flags, input, server, deadline, even a panic — is printed as a deny, exit 0.
func hookClaudeCode(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) {
	written := false
	decide := func(allow bool, reason string) {
		if written {
			return
		}
		written = true
		writeHookDecision(stdout, allow, reason)
	}
	deny := func(err error) {
		fmt.Fprintln(stderr, "approvebot:", err)
		decide(false, client.FailureMessage(err))
	}
	defer func() {
		if p := recover(); p != nil {
			deny(fmt.Errorf("internal error: %v", p))
		}
		if !written {
			deny(errors.New("internal error: no decision"))
		}
	}()

	fs := flag.NewFlagSet("hook claude-code", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var af agentFlags
	af.register(fs, "session (default: Claude Code's session_id)")
	if err := fs.Parse(args); err != nil {
		deny(fmt.Errorf("bad hook flags: %v", err))
		return
	}
	if fs.NArg() > 0 {
		deny(fmt.Errorf("unexpected arguments: %q", fs.Args()))
		return
	}
	raw, err := readInput(stdin, maxHookInput, stdinTimeout)
	if err != nil {
		deny(fmt.Errorf("reading the hook input: %v", err))
		return
	}
	if len(raw) > maxHookInput {
		deny(fmt.Errorf("hook input larger than %d bytes", maxHookInput))
		return
	}
	in, err := parseHookInput(raw)
	if err != nil {
		deny(err)
		return
	}
	input, err := client.StrictObject(in.ToolInput)
	if err != nil {
		deny(fmt.Errorf("tool_input is not a JSON object: %v", err))
		return
	}
	a, err := claudeAsk(in.ToolName, input)
	if err != nil {
		deny(err)
		return
	}
	// The Claude Code session is approvebot's session, so "allow for session" and the
	// denial pause follow it. -session overrides.
	a.Session = af.session
	if a.Session == "" {
		a.Session = in.SessionID
	}
	if a.Session == "" {
		deny(errors.New("hook input has no session_id (give -session)"))
		return
	}
	a.Cwd = in.Cwd
	res := af.ask(ctx, a)
	if !res.Allowed() && res.Err != nil {
		fmt.Fprintln(stderr, "approvebot:", res.Err)
	}
	decide(res.Allowed(), res.Message)
}

// readInput reads all of r (at most max+1 bytes) within d.
func readInput(r io.Reader, max int64, d time.Duration) ([]byte, error) {
	type result struct {
		raw []byte
		err error
	}
	ch := make(chan result, 1)
	go func() {
		raw, err := io.ReadAll(io.LimitReader(r, max+1))
		ch <- result{raw, err}
	}()
	select {
	case res := <-ch:
		return res.raw, res.err
	case <-time.After(d):
		return nil, fmt.Errorf("stdin not closed within %s", d)
	}
}

func parseHookInput(raw []byte) (hookInput, error) {
	var in hookInput
	if len(strings.TrimSpace(string(raw))) == 0 {
		return in, errors.New("empty hook input on stdin")
	}
	if _, err := client.StrictObject(raw); err != nil {
		return in, fmt.Errorf("hook input is not a JSON object: %v", err)
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return in, fmt.Errorf("hook input: %v", err)
	}
	if in.HookEventName != "" && in.HookEventName != "PreToolUse" {
		return in, fmt.Errorf("hook event %q: approvebot answers PreToolUse only", in.HookEventName)
	}
	if in.ToolName == "" {
		return in, errors.New("hook input has no tool_name")
	}
	if len(in.ToolInput) == 0 {
		return in, errors.New("hook input has no tool_input")
	}
	return in, nil
}

func writeHookDecision(w io.Writer, allow bool, reason string) {
	d := "deny"
	if allow {
		d = "allow"
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(hookOutput{HookSpecificOutput: hookDecision{HookEventName: "PreToolUse", PermissionDecision: d, PermissionDecisionReason: reason}})
}

// readOnlyClaudeTools are Claude Code's built-in tools that only read local files; they
// are asked with facts read_only and idempotent, so a strict tier (`ask`) does not send
// every file read to a human. A tool_permissions entry still overrides this.
var readOnlyClaudeTools = map[string]bool{
	"Read": true, "Glob": true, "Grep": true, "LS": true, "NotebookRead": true,
}

// maxAgentReason matches the server's cap on reason (bytes).
const maxAgentReason = 2000

// claudeAsk maps one Claude Code tool call to an approvebot ask (without session and cwd).
// Bash is asked as the shell tool "Bash" with only its command (and the sandbox escape, if
// set): the model's description goes to the card as the agent's reason and is kept out of
// the fingerprint, so rewording it neither escapes the denial ledger nor breaks a session
// grant. Every other tool is asked with its input as it is.
func claudeAsk(tool string, input map[string]any) (client.Ask, error) {
	if err := checkToolName(tool); err != nil {
		return client.Ask{}, err
	}
	a := client.Ask{Tool: tool, Args: input}
	switch tool {
	case "Bash":
		cmd, ok := input["command"].(string)
		if !ok || strings.TrimSpace(cmd) == "" {
			//lint:ignore ST1005 the message starts with the tool's name, shown to the model as is
			return client.Ask{}, errors.New("Bash call without a command string")
		}
		a.Args = map[string]any{"command": cmd}
		if v, ok := input["dangerouslyDisableSandbox"]; ok && v != false {
			a.Args["dangerouslyDisableSandbox"] = v
		}
		if d, ok := input["description"].(string); ok {
			a.Reason = cutBytes(d, maxAgentReason)
		}
	default:
		if readOnlyClaudeTools[tool] {
			a.Facts = &client.Facts{ReadOnly: true, Idempotent: true}
		}
	}
	return a, nil
}

func checkToolName(tool string) error {
	if tool == "" || len(tool) > 256 || !utf8.ValidString(tool) {
		return errors.New("invalid tool_name")
	}
	return nil
}

// cutBytes cuts s to at most n bytes on a rune boundary.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}
