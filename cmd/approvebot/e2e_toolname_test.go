package main

import (
	"testing"

	"github.com/approvebot/approvebot/internal/testserver"
)

// A shell command must not slip past the command policy or the floor by the tool's spelling.
func TestToolNameSpellingsCannotBypassThePolicy(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, testserver.Options{})
	floor := map[string]string{
		"BASH": "command", "Shell": "command", "EXEC": "command", "sh": "command", "zsh": "command",
		"powershell": "command", "run_shell_command": "command", "run": "command",
		"mcp__box__execute": "cmd", "deploy_helper": "script",
	}
	for tool, arg := range floor {
		t.Run(tool, func(t *testing.T) {
			code, m := ask(t, s, map[string]any{"tool": tool, "args": map[string]any{arg: "rm -rf /"}, "session": "names"})
			if code != 200 {
				t.Fatalf("%d %v", code, m)
			}
			want(t, m, "allowed", false, "state", "denied", "source", "floor")
		})
	}
	// A case variant of a shell tool gets the whole command policy, not just the floor.
	code, m := ask(t, s, map[string]any{"tool": "BASH", "args": map[string]any{"command": "touch ./x"}, "session": "names"})
	if code != 202 {
		t.Fatalf("BASH touch was not asked: %d %v", code, m)
	}
	for _, tool := range []string{"bash ", " bash", "bash\u0000", "ba\u200bsh", "bash\n", "bash\u202e"} {
		code, raw := s.Do(t, "POST", "/v1/requests", agent, map[string]any{"tool": tool, "args": map[string]any{"command": "rm -rf /"}, "session": "names"})
		if code != 400 {
			t.Errorf("tool %q: %d %s", tool, code, raw)
		}
	}
}
