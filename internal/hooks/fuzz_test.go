package hooks

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzAnswerNeverWidens feeds every adapter arbitrary hook inputs while approvebot answers
// with an allow that is only the tier's default: whatever the input, no reply may be an
// allow, every non-empty reply is one JSON object, and a reply that is not a decision
// (exit 2) says why on stderr.
func FuzzAnswerNeverWidens(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*", "*.json"))
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err == nil {
			f.Add(filepath.Base(filepath.Dir(file)), raw)
		}
	}
	f.Add("claude-code", []byte(`{"session_id":"s","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"ls"},"permission_suggestions":[{"type":"setMode","mode":"bypassPermissions","destination":"session"}]}`))
	f.Add("cursor", []byte(`{"conversation_id":"c","hook_event_name":"beforeMCPExecution","tool_name":"x","tool_input":"{}"}`))
	f.Add("codex", []byte(`{"session_id":"s","hook_event_name":"PreToolUse","cwd":"/r","tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n*** Move to: /etc/passwd\n*** End Patch"}}`))
	tierOnly := func(context.Context, Ask) Outcome {
		return Outcome{Allowed: true, Message: "Allowed by policy (tier.auto)."}
	}
	f.Fuzz(func(t *testing.T, agent string, raw []byte) {
		a, ok := Lookup(agent)
		if !ok {
			return
		}
		r := Answer(context.Background(), a, raw, Options{}, tierOnly)
		if r.Exit != 0 && (r.Exit != 2 || r.Stderr == "") {
			t.Fatalf("exit %d stderr %q", r.Exit, r.Stderr)
		}
		if len(r.Body) == 0 {
			return
		}
		var v map[string]any
		if err := json.Unmarshal(r.Body, &v); err != nil {
			t.Fatalf("reply %q is not one JSON object: %v", r.Body, err)
		}
		body := string(r.Body)
		for _, allow := range []string{`"permissionDecision":"allow"`, `"behavior":"allow"`, `"decision":"allow"`, `"permission":"allow"`} {
			if strings.Contains(body, allow) {
				t.Fatalf("a tier-default allow became %s for %s: %s", allow, agent, raw)
			}
		}
	})
}
