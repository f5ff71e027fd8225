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

// A sensitive-path ask reaches the human with the card saying which sensitive path it
// touches: the real binary, the Telegram fake, a line of its own under the action; the
// request object and `approvebot pending` say the same; the resolved card keeps it.
func TestCardSaysWhichSensitivePathItTouches(t *testing.T) {
	t.Parallel()
	r := tgStart(t, "", "")
	code, m := r.s.JSON(t, "POST", "/v1/requests", testserver.AgentToken, map[string]any{
		"tool": "bash", "args": map[string]any{"command": "cat /home/alice/.ssh/id_ed25519"}, "session": "why", "cwd": "/srv/app",
	})
	if code != 202 {
		t.Fatalf("%d %v", code, m)
	}
	const reason = "touches the sensitive path /home/alice/.ssh/id_ed25519 (~/.ssh)"
	id := m["id"].(string)
	want(t, m, "ask_reason", reason, "rule", "exec.sensitive", "summary", "cat /home/alice/.ssh/id_ed25519")

	card := r.card(t, tgOps, id)
	lines := strings.Split(card.Plain, "\n")
	if len(lines) < 3 || lines[1] != "cat /home/alice/.ssh/id_ed25519" || lines[2] != "Why approvebot asks: "+reason+" (rule exec.sensitive)" {
		t.Fatalf("card lines:\n%s", card.Plain)
	}
	if !card.HasButtons() {
		t.Fatalf("pending card without buttons: %+v", card)
	}

	out, code2 := agRun(t, agEnv(r.s.URL, testserver.OperatorToken), "", "pending")
	if code2 != 0 || !strings.Contains(out, "WHY APPROVEBOT ASKS") || !strings.Contains(out, reason+" (rule exec.sensitive)") {
		t.Fatalf("pending: %d\n%s", code2, out)
	}
	out, _ = agRun(t, agEnv(r.s.URL, testserver.OperatorToken), "", "pending", "-json")
	if !strings.Contains(out, `"ask_reason": "`+reason+`"`) {
		t.Fatalf("pending -json:\n%s", out)
	}

	r.fake.PressButton(tgOps, card.ID, tgAlice, "ab1:deny:")
	resolved := r.resolvedCard(t, tgOps, id, "Denied")
	if !strings.Contains(resolved.Plain, "\nWhy approvebot asked: "+reason+" (rule exec.sensitive)\n") {
		t.Fatalf("resolved card:\n%s", resolved.Plain)
	}
}
