package main

// End-to-end tests of every agent integration: the recorded hook inputs of Claude Code,
// Codex, Gemini CLI and Cursor (internal/hooks/testdata) go through the real binary — as
// command hooks (`approvebot hook NAME`, a subprocess) and as HTTP hooks (POST
// /v1/hooks/NAME) — to a real `approvebot serve` whose cards go to the Telegram fake, where
// Alice decides like a person would. Each answer is checked in the agent's own format.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/approvebot/approvebot/channels/telegram/telegramtest"
	"github.com/approvebot/approvebot/internal/testserver"
)

// agPayload is a recorded hook input with some fields replaced; a key "a.b" sets field b
// of object a.
func agPayload(t *testing.T, agent, file string, set map[string]any) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "internal", "hooks", "testdata", agent, file))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	for k, v := range set {
		if outer, inner, ok := strings.Cut(k, "."); ok {
			m[outer].(map[string]any)[inner] = v
			continue
		}
		m[k] = v
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// agCard waits for the pending request of session and its card in the ops chat.
func agCard(t *testing.T, r *tgRig, session string) (string, string, telegramtest.Message) {
	t.Helper()
	id, summary := agPending(t, r.s, session)
	return id, summary, r.card(t, tgOps, id)
}

func agAlicePress(t *testing.T, r *tgRig, card telegramtest.Message, action string) {
	t.Helper()
	qid := r.fake.PressButton(tgOps, card.ID, tgAlice, "ab1:"+action+":")
	if a := r.answer(t, qid); a.ShowAlert {
		t.Fatalf("press answered with an alert: %+v", a)
	}
}

func agAliceDenies(t *testing.T, r *tgRig, id, reason string) {
	t.Helper()
	r.fake.Say(tgOps, &tgAlice, "/deny "+id+" "+reason, 0)
}

const agAlice = "Alice (telegram:111)"

func agByAlice(outcome string) string { return "Allowed by " + agAlice + " (" + outcome + ")." }

func agDeniedByAlice(reason string) string {
	return "Denied by " + agAlice + `. The user said: "` + reason + `". This denial is final. ` + agDoNotRetry
}

// agHookReply runs one command hook and returns stdout and the exit code.
func agHookReply(t *testing.T, env []string, agent, stdin string, extra ...string) (string, int, *agProc) {
	t.Helper()
	p := agStart(t, env, stdin, append([]string{"hook", agent}, extra...)...)
	out, code := p.wait(t)
	return out, code, p
}

// agField decodes one JSON reply and returns the value at a dotted path.
func agField(t *testing.T, out, path string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("reply %q is not JSON: %v", out, err)
	}
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("reply %s has no %s", out, path)
		}
		v = m[k]
	}
	return v
}

func agExpect(t *testing.T, got, want string, code int) {
	t.Helper()
	if code != 0 || got != want {
		t.Fatalf("exit %d, reply\n%s\nwant\n%s", code, got, want)
	}
}

// agShape is an agent's reply for a verdict, exactly as the agent reads it.
var agShape = map[string]func(event, kind, msg string) string{
	"claude-code": func(event, kind, msg string) string {
		if kind == "defer" {
			return ""
		}
		if event == "PermissionRequest" {
			if kind == "allow" {
				return `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}` + "\n"
			}
			return `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":` + agJSONString(msg) + `}}}` + "\n"
		}
		return `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"` + kind + `","permissionDecisionReason":` + agJSONString(msg) + `}}` + "\n"
	},
	"codex": func(event, kind, msg string) string {
		switch {
		case kind == "defer" || (kind == "allow" && event == "PreToolUse"):
			return ""
		case event == "PermissionRequest" && kind == "allow":
			return `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}` + "\n"
		case event == "PermissionRequest":
			return `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":` + agJSONString(msg) + `}}}` + "\n"
		}
		return `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":` + agJSONString(msg) + `}}` + "\n"
	},
	"gemini": func(_, kind, msg string) string {
		switch kind {
		case "defer":
			return ""
		case "allow":
			return `{"decision":"allow"}` + "\n"
		}
		return `{"decision":"deny","reason":` + agJSONString(msg) + `}` + "\n"
	},
	"cursor": func(_, kind, msg string) string {
		switch kind {
		case "defer":
			return `{"permission":"ask"}` + "\n"
		case "allow":
			return `{"permission":"allow"}` + "\n"
		}
		return `{"permission":"deny","user_message":` + agJSONString(msg) + `,"agent_message":` + agJSONString(msg) + `}` + "\n"
	},
}

// agIntegration is one agent's recorded inputs for each situation.
type agIntegration struct {
	agent, event string
	// shell is a payload that carries a shell command at cmdKey, and session at sessKey.
	shellFile, cmdKey, sessKey string
	// tierDefaultFile is a payload approvebot allows only by the tier's default (with
	// tierDefaultSet applied).
	tierDefaultFile string
	tierDefaultSet  map[string]any
}

var agIntegrations = []agIntegration{
	{agent: "claude-code", event: "PreToolUse", shellFile: "pretooluse-bash.json", cmdKey: "tool_input.command", sessKey: "session_id", tierDefaultFile: "pretooluse-write.json"},
	{agent: "codex", event: "PreToolUse", shellFile: "pretooluse-bash.json", cmdKey: "tool_input.command", sessKey: "session_id", tierDefaultFile: "pretooluse-mcp.json",
		tierDefaultSet: map[string]any{"tool_name": "mcp__notes__add_note", "tool_input": map[string]any{"text": "remember the milk"}}},
	{agent: "gemini", event: "BeforeTool", shellFile: "beforetool-shell.json", cmdKey: "tool_input.command", sessKey: "session_id", tierDefaultFile: "beforetool-write.json"},
	{agent: "cursor", event: "beforeShellExecution", shellFile: "beforeshell.json", cmdKey: "command", sessKey: "conversation_id", tierDefaultFile: "beforemcp-object.json"},
}

func (ig agIntegration) tierDefault(session string) map[string]any {
	set := map[string]any{ig.sessKey: session}
	for k, v := range ig.tierDefaultSet {
		set[k] = v
	}
	return set
}

func TestAgentIntegrations(t *testing.T) {
	t.Parallel()
	r := tgStart(t, `approval_timeout = "30s"`, "")
	env := agEnv(r.s.URL, testserver.AgentToken)
	for _, ig := range agIntegrations {
		shape := agShape[ig.agent]
		shell := func(t *testing.T, session, command string) string {
			return agPayload(t, ig.agent, ig.shellFile, map[string]any{ig.sessKey: session, ig.cmdKey: command})
		}
		t.Run(ig.agent+"/explicit allow", func(t *testing.T) {
			t.Parallel()
			out, code, _ := agHookReply(t, env, ig.agent, shell(t, ig.agent+"-explicit", "ls -la"))
			agExpect(t, out, shape(ig.event, "allow", agAllowedSafe), code)
		})
		t.Run(ig.agent+"/tier default gives no decision", func(t *testing.T) {
			t.Parallel()
			in := agPayload(t, ig.agent, ig.tierDefaultFile, ig.tierDefault(ig.agent+"-tier"))
			out, code, _ := agHookReply(t, env, ig.agent, in)
			agExpect(t, out, shape(ig.event, "defer", ""), code)
		})
		t.Run(ig.agent+"/floor", func(t *testing.T) {
			t.Parallel()
			out, code, _ := agHookReply(t, env, ig.agent, shell(t, ig.agent+"-floor", "rm -rf /"))
			want := "Refused by the hardline floor (floor.rm_root). refused by the hardline floor: recursive delete of / (rm -rf /). No one can approve this. " + agDoNotRetry
			agExpect(t, out, shape(ig.event, "deny", want), code)
		})
		t.Run(ig.agent+"/a human allows from Telegram", func(t *testing.T) {
			t.Parallel()
			session := ig.agent + "-human-allow"
			p := agStart(t, env, shell(t, session, "rm -rf ./build"), "hook", ig.agent)
			_, summary, card := agCard(t, r, session)
			if summary != "rm -rf ./build" || !strings.Contains(card.Plain, "rm -rf ./build") {
				t.Fatalf("summary %q, card %q", summary, card.Plain)
			}
			agAlicePress(t, r, card, "once")
			out, code := p.wait(t)
			agExpect(t, out, shape(ig.event, "allow", agByAlice("allow_once")), code)
		})
		t.Run(ig.agent+"/a human denies from Telegram", func(t *testing.T) {
			t.Parallel()
			session := ig.agent + "-human-deny"
			p := agStart(t, env, shell(t, session, "git push --force"), "hook", ig.agent)
			id, _, _ := agCard(t, r, session)
			agAliceDenies(t, r, id, "not on a Friday")
			out, code := p.wait(t)
			agExpect(t, out, shape(ig.event, "deny", agDeniedByAlice("not on a Friday")), code)
			// A repeat of the denied command — reworded, where the agent describes its
			// commands — is refused by the ledger at once.
			set := map[string]any{ig.sessKey: session, ig.cmdKey: "git push --force"}
			if ig.agent == "claude-code" || ig.agent == "gemini" {
				set["tool_input.description"] = "Publish the branch, it is fine"
			}
			out, code, _ = agHookReply(t, env, ig.agent, agPayload(t, ig.agent, ig.shellFile, set))
			agExpect(t, out, shape(ig.event, "deny", "Refused: a human already denied this exact call in this session. "+agDoNotRetry), code)
		})
		t.Run(ig.agent+"/malformed input", func(t *testing.T) {
			t.Parallel()
			bad := strings.Replace(shell(t, ig.agent+"-malformed", "ls"), `{`, `{"`+ig.sessKey+`":"dup",`, 1)
			out, code, p := agHookReply(t, env, ig.agent, bad)
			why := agFailure(`hook input is not a JSON object: duplicate key "` + ig.sessKey + `"`)
			if code != 2 || strings.TrimSpace(p.stderr.String()) != why || out != shape(ig.event, "deny", why) {
				t.Fatalf("exit %d, stderr %q, reply %q", code, p.stderr.String(), out)
			}
		})
		t.Run(ig.agent+"/server down", func(t *testing.T) {
			t.Parallel()
			url, addr := agClosedURL(t)
			out, code, _ := agHookReply(t, agEnv(url, testserver.AgentToken), ig.agent, shell(t, ig.agent+"-down", "ls"), "-connect-timeout", "300ms")
			agExpect(t, out, shape(ig.event, "deny", agFailure("POST /v1/requests: dial tcp "+addr+": connect: connection refused")), code)
		})
		t.Run(ig.agent+"/HTTP hook", func(t *testing.T) {
			t.Parallel()
			post := func(t *testing.T, body string) string {
				t.Helper()
				req, _ := http.NewRequest("POST", r.s.URL+"/v1/hooks/"+ig.agent, strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+testserver.AgentToken)
				req.Header.Set("Content-Type", "application/json")
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				raw, _ := io.ReadAll(resp.Body)
				if resp.StatusCode != 200 {
					t.Fatalf("HTTP %d %s", resp.StatusCode, raw)
				}
				return string(raw)
			}
			if got, want := post(t, shell(t, ig.agent+"-http", "ls -la")), shape(ig.event, "allow", agAllowedSafe); got != want {
				t.Fatalf("explicit allow: %q, want %q", got, want)
			}
			if got := post(t, agPayload(t, ig.agent, ig.tierDefaultFile, ig.tierDefault(ig.agent+"-http"))); got != shape(ig.event, "defer", "") {
				t.Fatalf("tier default: %q", got)
			}
			done := make(chan string, 1)
			go func() { done <- post(t, shell(t, ig.agent+"-http-human", "make deploy")) }()
			_, _, card := agCard(t, r, ig.agent+"-http-human")
			agAlicePress(t, r, card, "session")
			if got, want := <-done, shape(ig.event, "allow", agByAlice("allow_session")); got != want {
				t.Fatalf("human: %q, want %q", got, want)
			}
			if got, want := post(t, shell(t, ig.agent+"-http-human", "make deploy")), shape(ig.event, "allow", agAllowedGrant); got != want {
				t.Fatalf("grant: %q, want %q", got, want)
			}
		})
	}

	// Claude Code's and Codex's PermissionRequest fires when the agent is about to ask the
	// person at the keyboard: approvebot answers for that person.
	for _, pr := range []struct{ agent, file, cmdKey string }{
		{"claude-code", "permissionrequest-bash.json", "tool_input.command"},
		{"codex", "permissionrequest-bash.json", "tool_input.command"},
	} {
		shape := agShape[pr.agent]
		in := func(t *testing.T, session, command string) string {
			return agPayload(t, pr.agent, pr.file, map[string]any{"session_id": session, pr.cmdKey: command})
		}
		t.Run(pr.agent+"/PermissionRequest explicit allow", func(t *testing.T) {
			t.Parallel()
			out, code, _ := agHookReply(t, env, pr.agent, in(t, pr.agent+"-pr-ls", "ls -la"))
			agExpect(t, out, shape("PermissionRequest", "allow", ""), code)
		})
		t.Run(pr.agent+"/PermissionRequest floor", func(t *testing.T) {
			t.Parallel()
			out, code, _ := agHookReply(t, env, pr.agent, in(t, pr.agent+"-pr-floor", "rm -rf ~"))
			if code != 0 || agField(t, out, "hookSpecificOutput.decision.behavior") != "deny" ||
				!strings.HasPrefix(agField(t, out, "hookSpecificOutput.decision.message").(string), "Refused by the hardline floor") {
				t.Fatalf("exit %d %q", code, out)
			}
		})
		t.Run(pr.agent+"/PermissionRequest asks a human, one card", func(t *testing.T) {
			t.Parallel()
			session, command := pr.agent+"-pr-human", "make release-"+pr.agent
			p := agStart(t, env, in(t, session, command), "hook", pr.agent)
			id, summary, _ := agCard(t, r, session)
			if summary != command {
				t.Fatalf("summary %q", summary)
			}
			agAliceDenies(t, r, id, "wait for QA")
			out, code := p.wait(t)
			agExpect(t, out, shape("PermissionRequest", "deny", agDeniedByAlice("wait for QA")), code)
			if n := agCardsOf(r, command); n != 1 {
				t.Fatalf("%d cards for one call", n)
			}
		})
	}
	t.Run("claude-code/PermissionRequest: a tier-default call goes to a human; allow for session hands back the exact rule", func(t *testing.T) {
		t.Parallel()
		const session = "cc-pr-session"
		stdin := agPayload(t, "claude-code", "permissionrequest-bash.json", map[string]any{"session_id": session})
		// rm -rf node_modules is no tier default for a shell tool; the Write below is.
		p := agStart(t, env, stdin, "hook", "claude-code")
		_, _, card := agCard(t, r, session)
		agAlicePress(t, r, card, "session")
		out, code := p.wait(t)
		agExpect(t, out, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedPermissions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"rm -rf node_modules"}],"behavior":"allow","destination":"session"}]}}}`+"\n", code)

		write := `{"session_id":"cc-pr-write","cwd":"/repo","hook_event_name":"PermissionRequest","tool_name":"Write","tool_input":{"file_path":"/repo/x","content":"y"}}`
		p = agStart(t, env, write, "hook", "claude-code")
		_, _, card = agCard(t, r, "cc-pr-write")
		agAlicePress(t, r, card, "once")
		out, code = p.wait(t)
		agExpect(t, out, agShape["claude-code"]("PermissionRequest", "allow", ""), code)
	})
	t.Run("claude-code/PreToolUse then PermissionRequest: one card per call", func(t *testing.T) {
		t.Parallel()
		// approvebot asks: PreToolUse posts the card and the human's allow skips Claude
		// Code's prompt, so PermissionRequest never fires. approvebot allows by the tier
		// only: PreToolUse posts nothing, and PermissionRequest posts the one card.
		const session = "cc-one-card"
		pre := agPayload(t, "claude-code", "pretooluse-write.json", map[string]any{"session_id": session, "tool_input.file_path": "/home/user/my-project/one-card.txt"})
		out, code, _ := agHookReply(t, env, "claude-code", pre)
		agExpect(t, out, "", code)
		permission := strings.Replace(strings.Replace(pre, `"PreToolUse"`, `"PermissionRequest"`, 1), `"tool_use_id":"toolu_01WR",`, ``, 1)
		p := agStart(t, env, permission, "hook", "claude-code")
		_, _, card := agCard(t, r, session)
		agAlicePress(t, r, card, "once")
		out, code = p.wait(t)
		agExpect(t, out, agShape["claude-code"]("PermissionRequest", "allow", ""), code)
		if n := agCardsOf(r, "one-card.txt"); n != 1 {
			t.Fatalf("%d cards for one call", n)
		}
	})
	t.Run("codex/apply_patch is asked as the files it writes and deletes", func(t *testing.T) {
		t.Parallel()
		const session = "codex-patch"
		p := agStart(t, env, agPayload(t, "codex", "pretooluse-apply-patch.json", map[string]any{"session_id": session}), "hook", "codex")
		id, summary, card := agCard(t, r, session)
		for _, want := range []string{"/Users/example/project/src/old.rs", "/Users/example/project/docs/notes.md"} {
			if !strings.Contains(summary+card.Plain, want) {
				t.Fatalf("the card does not show %s: %q / %q", want, summary, card.Plain)
			}
		}
		agAliceDenies(t, r, id, "keep old.rs")
		out, code := p.wait(t)
		agExpect(t, out, agShape["codex"]("PreToolUse", "deny", agDeniedByAlice("keep old.rs")), code)
	})
	t.Run("codex/a patch that only adds a file is a tier default", func(t *testing.T) {
		t.Parallel()
		in := agPayload(t, "codex", "pretooluse-apply-patch.json", map[string]any{"session_id": "codex-patch-add",
			"tool_input.command": "*** Begin Patch\n*** Add File: docs/new.md\n+# New\n*** End Patch\n"})
		out, code, _ := agHookReply(t, env, "codex", in)
		agExpect(t, out, "", code)
	})
	t.Run("gemini/MCP tools are named as everywhere", func(t *testing.T) {
		t.Parallel()
		// mcp__github__delete_repository is in the auto tier's irreversible tail: a human.
		const session = "gemini-mcp"
		p := agStart(t, env, agPayload(t, "gemini", "beforetool-mcp.json", map[string]any{"session_id": session}), "hook", "gemini")
		id, _, _ := agCard(t, r, session)
		if m := mustGetTool(t, r.s, id); m != "mcp__github__delete_repository" {
			t.Fatalf("tool %q", m)
		}
		agAliceDenies(t, r, id, "no")
		out, code := p.wait(t)
		agExpect(t, out, agShape["gemini"]("BeforeTool", "deny", agDeniedByAlice("no")), code)
	})
}

// agCardsOf counts the bot's cards in the ops chat that show text.
func agCardsOf(r *tgRig, text string) int {
	n := 0
	for _, m := range r.fake.BotMessages(tgOps) {
		if strings.Contains(m.Plain, "Request: ") && strings.Contains(m.Plain, text) {
			n++
		}
	}
	return n
}

func mustGetTool(t *testing.T, s *testserver.Server, id string) string {
	t.Helper()
	code, m := s.JSON(t, "GET", "/v1/requests/"+id, testserver.OperatorToken, nil)
	if code != 200 && code != 202 {
		t.Fatalf("GET %s: %d %v", id, code, m)
	}
	return fmt.Sprint(m["tool"])
}
