package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/approvebot/approvebot/internal/testserver"
)

// readmeSnippets are the README's agent configurations, each marked
// "<!-- tested: NAME -->" before its JSON block.
func readmeSnippets(t *testing.T) map[string]map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("(?s)<!-- tested: ([a-z-]+) -->\n```json\n(.*?)\n```")
	out := map[string]map[string]any{}
	for _, m := range re.FindAllStringSubmatch(string(raw), -1) {
		var v map[string]any
		if err := json.Unmarshal([]byte(m[2]), &v); err != nil {
			t.Fatalf("README snippet %s is not JSON: %v", m[1], err)
		}
		if _, dup := out[m[1]]; dup {
			t.Fatalf("README snippet %s twice", m[1])
		}
		out[m[1]] = v
	}
	return out
}

// readmeHook is one hook entry of a snippet with the event it is installed on.
type readmeHook struct {
	event string
	entry map[string]any
}

// readmeHooks finds every hook entry (an object with "command" or "url") under "hooks".
func readmeHooks(v map[string]any) []readmeHook {
	var out []readmeHook
	var walk func(event string, x any)
	walk = func(event string, x any) {
		switch x := x.(type) {
		case map[string]any:
			if _, ok := x["command"]; ok {
				out = append(out, readmeHook{event, x})
				return
			}
			if _, ok := x["url"]; ok {
				out = append(out, readmeHook{event, x})
				return
			}
			for _, y := range x {
				walk(event, y)
			}
		case []any:
			for _, y := range x {
				walk(event, y)
			}
		}
	}
	hooks, _ := v["hooks"].(map[string]any)
	for event, groups := range hooks {
		walk(event, groups)
	}
	return out
}

// A floor payload for each agent and event: what the README's configuration must refuse.
func readmeFloorInput(t *testing.T, agent, event string) string {
	t.Helper()
	switch agent + "/" + event {
	case "claude-code/PreToolUse":
		return agPayload(t, agent, "pretooluse-bash.json", map[string]any{"session_id": "readme-cc", "tool_input.command": "rm -rf /"})
	case "claude-code/PermissionRequest":
		return agPayload(t, agent, "permissionrequest-bash.json", map[string]any{"session_id": "readme-cc", "tool_input.command": "rm -rf /"})
	case "codex/PreToolUse":
		return agPayload(t, agent, "pretooluse-bash.json", map[string]any{"session_id": "readme-codex", "tool_input.command": "rm -rf /"})
	case "codex/PermissionRequest":
		return agPayload(t, agent, "permissionrequest-bash.json", map[string]any{"session_id": "readme-codex", "tool_input.command": "rm -rf /"})
	case "gemini/BeforeTool":
		return agPayload(t, agent, "beforetool-shell.json", map[string]any{"session_id": "readme-gemini", "tool_input.command": "rm -rf /"})
	case "cursor/beforeShellExecution":
		return agPayload(t, agent, "beforeshell.json", map[string]any{"conversation_id": "readme-cursor", "command": "rm -rf /"})
	case "cursor/beforeMCPExecution":
		return agPayload(t, agent, "beforemcp-object.json", map[string]any{"conversation_id": "readme-cursor", "tool_input": map[string]any{"command": "rm -rf /"}})
	}
	t.Fatalf("the README installs %s on %s, which approvebot does not answer", agent, event)
	return ""
}

// readmeRefused reports whether a reply is a refusal in the agent's format.
func readmeRefused(t *testing.T, agent, event, out string) bool {
	t.Helper()
	switch {
	case agent == "gemini":
		return agField(t, out, "decision") == "deny"
	case agent == "cursor":
		return agField(t, out, "permission") == "deny"
	case event == "PermissionRequest":
		return agField(t, out, "hookSpecificOutput.decision.behavior") == "deny"
	}
	return agField(t, out, "hookSpecificOutput.permissionDecision") == "deny"
}

// The README's agent configurations are what runs: every hook command, HTTP hook and MCP
// server in them is started as written (with this server's address) on the events they are
// installed on, refuses a floor command in the agent's format, and has timeouts that nest.
func TestReadmeAgentSnippets(t *testing.T) {
	t.Parallel()
	snippets := readmeSnippets(t)
	want := []string{"claude-code-command", "claude-code-http", "claude-code-mcp", "codex", "gemini", "cursor"}
	if len(snippets) != len(want) {
		t.Fatalf("README has snippets %v, want %v", keys(snippets), want)
	}
	s := testserver.Start(t, testserver.Options{})
	env := agEnv(s.URL, testserver.AgentToken)
	const approvalTimeout, clientMargin, endpointMargin = 120 * time.Second, 30 * time.Second, 5 * time.Second

	for _, name := range []string{"claude-code-command", "codex", "gemini", "cursor"} {
		agent := strings.TrimSuffix(name, "-command")
		t.Run(name, func(t *testing.T) {
			hooks := readmeHooks(snippets[name])
			if len(hooks) == 0 {
				t.Fatal("no hooks")
			}
			for _, h := range hooks {
				argv := strings.Fields(h.entry["command"].(string))
				if len(argv) < 3 || argv[0] != "approvebot" || argv[1] != "hook" || argv[2] != agent {
					t.Fatalf("%s hook command %q", h.event, argv)
				}
				hookTimeout := approvalTimeout + clientMargin
				for i, a := range argv {
					if a == "-timeout" && i+1 < len(argv) {
						d, err := time.ParseDuration(argv[i+1])
						if err != nil {
							t.Fatal(err)
						}
						hookTimeout = d
					}
				}
				unit := time.Second
				if agent == "gemini" {
					unit = time.Millisecond
				}
				agentTimeout := time.Duration(h.entry["timeout"].(float64)) * unit
				if hookTimeout <= approvalTimeout+clientMargin || agentTimeout <= hookTimeout {
					t.Fatalf("%s: timeouts do not nest: approval %s + %s < hook %s < agent %s", h.event, approvalTimeout, clientMargin, hookTimeout, agentTimeout)
				}
				out, code, _ := agHookReply(t, env, agent, readmeFloorInput(t, agent, h.event), argv[3:]...)
				if code != 0 || !readmeRefused(t, agent, h.event, out) {
					t.Fatalf("%s: exit %d, %q", h.event, code, out)
				}
			}
		})
	}
	t.Run("claude-code-http", func(t *testing.T) {
		hooks := readmeHooks(snippets["claude-code-http"])
		if len(hooks) != 2 {
			t.Fatalf("%d hooks", len(hooks))
		}
		for _, h := range hooks {
			if h.entry["type"] != "http" {
				t.Fatalf("%v", h.entry)
			}
			u, err := url.Parse(h.entry["url"].(string))
			if err != nil || u.Path != "/v1/hooks/claude-code" {
				t.Fatalf("url %v", h.entry["url"])
			}
			if timeout := time.Duration(h.entry["timeout"].(float64)) * time.Second; timeout <= approvalTimeout+endpointMargin {
				t.Fatalf("timeout %s does not outlast the approval timeout", timeout)
			}
			allowed := map[string]string{}
			for _, v := range h.entry["allowedEnvVars"].([]any) {
				allowed[v.(string)] = map[string]string{"APPROVEBOT_TOKEN": testserver.AgentToken}[v.(string)]
			}
			req, _ := http.NewRequest("POST", s.URL+u.Path, strings.NewReader(readmeFloorInput(t, "claude-code", h.event)))
			req.Header.Set("Content-Type", "application/json")
			for k, v := range h.entry["headers"].(map[string]any) {
				// As Claude Code does: only variables allowedEnvVars lists are filled in.
				req.Header.Set(k, os.Expand(v.(string), func(name string) string { return allowed[name] }))
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !readmeRefused(t, "claude-code", h.event, string(raw)) || strings.Contains(string(raw), "bearer token") {
				t.Fatalf("%s: %d %s", h.event, resp.StatusCode, raw)
			}
		}
	})
	t.Run("claude-code-mcp", func(t *testing.T) {
		server := snippets["claude-code-mcp"]["mcpServers"].(map[string]any)["approvebot"].(map[string]any)
		args := server["args"].([]any)
		if server["command"] != "approvebot" || len(args) != 1 || args[0] != "mcp" {
			t.Fatalf("%v", server)
		}
		mcpEnv := agEnv("", "")
		for k, v := range server["env"].(map[string]any) {
			val := os.Expand(v.(string), func(name string) string {
				return map[string]string{"APPROVEBOT_TOKEN": testserver.AgentToken}[name]
			})
			if k == "APPROVEBOT_URL" {
				val = s.URL // the snippet's address, on this test's port
			}
			mcpEnv = append(mcpEnv, k+"="+val)
		}
		m := agMCPStart(t, mcpEnv, "-session", "readme-mcp")
		if out := m.approve(agPrompt("Bash", agBash("rm -rf /", ""))); !strings.HasPrefix(out, `{"behavior":"deny","message":"Refused by the hardline floor`) {
			t.Fatalf("%s", out)
		}
	})
}

func keys[M ~map[string]V, V any](m M) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
