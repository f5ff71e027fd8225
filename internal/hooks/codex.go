package hooks

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// OpenAI Codex CLI's hook protocol (developers.openai.com/codex/hooks; codex-rs/hooks):
// PreToolUse can only block — permissionDecision "deny" with a non-empty reason; Codex
// rejects "allow" without updatedInput and "ask" as invalid output and goes on with its own
// approval flow, so an allow here is no output. PermissionRequest fires when Codex is about
// to ask for approval and answers decision {behavior allow|deny, message}. Codex decodes
// hook output with deny_unknown_fields: only the fields below are ever written.
type codex struct{}

func (codex) Name() string { return "codex" }

type codexInput struct {
	SessionID     string          `json:"session_id"`
	Cwd           string          `json:"cwd"`
	HookEventName string          `json:"hook_event_name"`
	ToolName      string          `json:"tool_name"`
	ToolInput     json.RawMessage `json:"tool_input"`
}

func (codex) Parse(raw []byte) (Call, error) {
	c := Call{Event: eventOf(raw, "hook_event_name")}
	var in codexInput
	if err := decodeInput(raw, &in); err != nil {
		return c, err
	}
	switch in.HookEventName {
	case EventPreToolUse:
	case EventPermissionRequest:
		c.AgentAsks = true
	default:
		return c, fmt.Errorf("hook event %q: approvebot answers PreToolUse and PermissionRequest", printableName(in.HookEventName))
	}
	if err := checkTool(in.ToolName); err != nil {
		return c, err
	}
	input, err := object(in.ToolInput, "tool_input")
	if err != nil {
		return c, err
	}
	c.Tool, c.Session, c.Cwd = in.ToolName, in.SessionID, in.Cwd
	switch in.ToolName {
	case "Bash":
		// Shell commands, unified exec and network approvals all arrive as Bash; a
		// PermissionRequest's description is Codex's justification, for the card.
		c.Args, c.Reason, err = shellArgs(in.ToolName, input)
	case "apply_patch":
		c.Args, c.Facts, err = applyPatchArgs(input, in.Cwd)
	default:
		// MCP tools (mcp__server__tool) and any tool Codex adds: their input as it is.
		c.Args = input
	}
	return c, err
}

// applyPatchArgs reads an apply_patch call as the files it writes and deletes, so the
// policy and the card see them: files_written and files_deleted (absolute, against the
// cwd; a move deletes its source and writes its destination) beside the patch itself. A
// patch that deletes or moves anything is declared destructive.
func applyPatchArgs(input map[string]any, cwd string) (map[string]any, Facts, error) {
	patch, ok := input["command"].(string)
	if !ok {
		patch, ok = input["input"].(string)
	}
	if !ok || strings.TrimSpace(patch) == "" {
		return nil, Facts{}, errors.New("apply_patch call without the patch text")
	}
	p, err := ParsePatch(patch)
	if err != nil {
		return nil, Facts{}, err
	}
	written, err := absAll(p.Written, cwd)
	if err != nil {
		return nil, Facts{}, err
	}
	deleted, err := absAll(p.Deleted, cwd)
	if err != nil {
		return nil, Facts{}, err
	}
	args := map[string]any{"files_written": written, "files_deleted": deleted, "patch": patch}
	return args, Facts{Destructive: len(deleted) > 0}, nil
}

func absAll(paths []string, cwd string) ([]any, error) {
	out := make([]any, 0, len(paths))
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			if !filepath.IsAbs(cwd) {
				return nil, fmt.Errorf("apply_patch: relative path %q without an absolute cwd", printableName(p))
			}
			p = filepath.Join(cwd, p)
		}
		out = append(out, filepath.Clean(p))
	}
	return out, nil
}

// Patch is what an apply_patch envelope touches.
type Patch struct {
	// Written are the files the patch adds, updates or moves to, in order of appearance.
	Written []string
	// Deleted are the files it deletes, and the sources of its moves.
	Deleted []string
}

// Codex's apply_patch envelope markers.
const (
	patchBegin  = "*** Begin Patch"
	patchEnd    = "*** End Patch"
	patchAdd    = "*** Add File: "
	patchDelete = "*** Delete File: "
	patchUpdate = "*** Update File: "
	patchMove   = "*** Move to: "
	patchEOF    = "*** End of File"
)

// ParsePatch reads the file operations of a Codex apply_patch envelope. It refuses what
// it does not understand — no envelope, an empty path, a header it does not know, a move
// that follows no update — rather than guess which files a patch touches. Codex's parser
// reads a hunk header with blanks around it (after an added file's lines or a deleted
// file's line) and ends the patch only at its last line, so here every line after "*** Begin
// Patch" that is a header once trimmed counts — also one after an "*** End Patch" that a
// patch can carry as a context line — and the patch must end with "*** End Patch".
func ParsePatch(text string) (Patch, error) {
	var p Patch
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	begin := -1
	for i, l := range lines {
		if strings.TrimSpace(l) == patchBegin {
			begin = i
			break
		}
	}
	if begin < 0 {
		return p, errors.New("apply_patch: no \"*** Begin Patch\" envelope")
	}
	ended := false
	lastUpdate := -1 // index in p.Written of the file a "Move to" would move
	for _, l := range lines[begin+1:] {
		t := strings.TrimSpace(l)
		if t == patchEnd {
			ended = true
			continue
		}
		if !strings.HasPrefix(t, "*** ") {
			continue // hunk content: context, -removed, +added, @@ markers
		}
		var kind, path string
		for _, h := range []string{patchAdd, patchDelete, patchUpdate, patchMove} {
			if strings.HasPrefix(t, strings.TrimSpace(h)) {
				kind, path = h, strings.TrimSpace(strings.TrimPrefix(t, strings.TrimSpace(h)))
			}
		}
		if kind == "" {
			if t == patchEOF || !strings.HasPrefix(l, "*** ") {
				continue // the end-of-file marker, or a context line that merely starts with ***
			}
			return p, fmt.Errorf("apply_patch: unknown header %q", printableName(l))
		}
		if path == "" {
			return p, fmt.Errorf("apply_patch: %q without a path", strings.TrimSpace(kind))
		}
		switch kind {
		case patchAdd:
			p.Written, lastUpdate = append(p.Written, path), -1
		case patchDelete:
			p.Deleted, lastUpdate = append(p.Deleted, path), -1
		case patchUpdate:
			p.Written = append(p.Written, path)
			lastUpdate = len(p.Written) - 1
		case patchMove:
			if lastUpdate < 0 {
				return p, errors.New("apply_patch: \"*** Move to:\" without the file it moves")
			}
			p.Deleted = append(p.Deleted, p.Written[lastUpdate])
			p.Written[lastUpdate] = path
			lastUpdate = -1
		}
	}
	if !ended {
		return p, errors.New("apply_patch: no \"*** End Patch\"")
	}
	if len(p.Written)+len(p.Deleted) == 0 {
		return p, errors.New("apply_patch: the patch touches no file")
	}
	return p, nil
}

type codexPreToolUseOutput struct {
	HookSpecificOutput struct {
		HookEventName            string `json:"hookEventName"`
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
	} `json:"hookSpecificOutput"`
}

type codexDecision struct {
	Behavior string `json:"behavior"`
	Message  string `json:"message,omitempty"`
}

type codexPermissionRequestOutput struct {
	HookSpecificOutput struct {
		HookEventName string        `json:"hookEventName"`
		Decision      codexDecision `json:"decision"`
	} `json:"hookSpecificOutput"`
}

func (codex) Render(c Call, v Verdict) Reply {
	if c.Event == EventPermissionRequest {
		if v.Kind == Defer {
			return Reply{}
		}
		var out codexPermissionRequestOutput
		out.HookSpecificOutput.HookEventName = EventPermissionRequest
		out.HookSpecificOutput.Decision.Behavior = "allow"
		if v.Kind == Deny {
			out.HookSpecificOutput.Decision = codexDecision{Behavior: "deny", Message: v.Message}
		}
		return Reply{Body: encode(out)}
	}
	// PreToolUse: Codex takes only a denial; anything else goes on to its own approval.
	if v.Kind != Deny {
		return Reply{}
	}
	var out codexPreToolUseOutput
	out.HookSpecificOutput.HookEventName = EventPreToolUse
	out.HookSpecificOutput.PermissionDecision = "deny"
	out.HookSpecificOutput.PermissionDecisionReason = v.Message
	return Reply{Body: encode(out)}
}
