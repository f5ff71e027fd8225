package main

import (
	"strings"
	"testing"

	"github.com/approvebot/approvebot/internal/testserver"
)

// What the operator sees: the request's directory and the agent's stated reason reach the
// request object, `approvebot pending` and the card, masked like the summary, on lines of
// their own (the reason marked as the agent's words), never inside the action line.
func TestOperatorSeesCwdAndAgentReason(t *testing.T) {
	const secret = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	r := tgStart(t, "", "")
	code, m := r.s.JSON(t, "POST", "/v1/requests", testserver.AgentToken, map[string]any{
		"tool": "bash", "args": map[string]any{"command": "rm -rf ./build"}, "session": "ctx",
		"cwd": "/srv/app", "reason": "clean before the release, token " + secret,
	})
	if code != 202 {
		t.Fatalf("%d %v", code, m)
	}
	id := m["id"].(string)
	reason, _ := m["agent_reason"].(string)
	want(t, m, "cwd", "/srv/app", "summary", "rm -rf ./build")
	if !strings.HasPrefix(reason, "clean before the release, token ghp_") || strings.Contains(reason, secret) {
		t.Fatalf("agent_reason %q", reason)
	}

	card := r.card(t, tgOps, id)
	lines := strings.Split(card.Plain, "\n")
	var action, dir, why string
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "Directory: "):
			dir = l
		case strings.HasPrefix(l, "Agent's reason (its own words, unverified): "):
			why = l
		case i == 1:
			action = l
		}
	}
	if action != "rm -rf ./build" || dir != "Directory: /srv/app" || !strings.HasSuffix(why, reason) {
		t.Fatalf("card lines: action %q, dir %q, reason %q\n%s", action, dir, why, card.Plain)
	}
	if strings.Contains(card.Plain, secret) {
		t.Fatalf("the secret reached the card:\n%s", card.Plain)
	}

	out, code2 := agRun(t, agEnv(r.s.URL, testserver.OperatorToken), "", "pending")
	if code2 != 0 || !strings.Contains(out, "CWD") || !strings.Contains(out, "/srv/app") ||
		!strings.Contains(out, "AGENT'S REASON (ITS OWN WORDS)") || !strings.Contains(out, "clean before the release") || strings.Contains(out, secret) {
		t.Fatalf("pending: %d\n%s", code2, out)
	}
	out, _ = agRun(t, agEnv(r.s.URL, testserver.OperatorToken), "", "pending", "-json")
	if !strings.Contains(out, `"cwd": "/srv/app"`) || !strings.Contains(out, `"agent_reason": "clean before the release`) {
		t.Fatalf("pending -json:\n%s", out)
	}
}
