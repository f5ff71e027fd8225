package api_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/approvebot/approvebot/api"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/policy"
	"github.com/approvebot/approvebot/store"
)

// hookRig is the real handler, on a bbolt store, with no chat channel: asks wait for an
// operator's decision over the API.
type hookRig struct {
	url string
}

func newHookRig(t *testing.T, cfg policy.Config, maxBody int64) *hookRig {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "hooks.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := policy.NewEngine(cfg, st)
	if err != nil {
		t.Fatal(err)
	}
	g, err := gate.New(gate.Options{ApprovalTimeout: time.Minute, OperatorOnly: true}, st, eng, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := api.New(api.Options{Gate: g, Audit: st, MaxBody: maxBody, RateLimit: 50, RateBurst: 50, Tokens: []api.Token{
		{Name: "agent", Role: api.RoleAgent, Value: testAgent},
		{Name: "operator", Role: api.RoleOperator, Value: testOperator},
	}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		hs.Close()
		g.Close(context.Background())
		st.Close()
	})
	return &hookRig{url: hs.URL}
}

func (r *hookRig) post(t *testing.T, ctx context.Context, path, token, body string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "POST", r.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error(), nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw), resp.Header
}

func (r *hookRig) operator(t *testing.T, method, path, body string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(method, r.url+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+testOperator)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return m
}

// pending waits for the one pending request of session and returns its id.
func (r *hookRig) pending(t *testing.T, session string) (string, map[string]any) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		list, _ := r.operator(t, "GET", "/v1/requests?state=pending", "")["requests"].([]any)
		for _, it := range list {
			m := it.(map[string]any)
			if m["session"] == session {
				return m["id"].(string), m
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no pending request in session %s", session)
	return "", nil
}

func claudeInput(event, session, tool string, input map[string]any) string {
	raw, _ := json.Marshal(map[string]any{
		"session_id": session, "transcript_path": "/t.jsonl", "cwd": "/repo", "permission_mode": "default",
		"hook_event_name": event, "tool_name": tool, "tool_input": input, "tool_use_id": "toolu_1",
	})
	return string(raw)
}

const (
	hookDenyPrefix = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":`
	hookAllow      = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":`
)

func TestHookEndpointClaudeCode(t *testing.T) {
	r := newHookRig(t, policy.Config{ToolPermissions: map[string]string{"Read": "allow"}}, 4096)
	ctx := context.Background()
	const path = "/v1/hooks/claude-code"

	t.Run("explicit allow", func(t *testing.T) {
		code, body, h := r.post(t, ctx, path, testAgent, claudeInput("PreToolUse", "h-read", "Read", map[string]any{"file_path": "/repo/a"}))
		if code != 200 || !strings.HasPrefix(body, hookAllow) || h.Get("Content-Type") != "application/json" {
			t.Fatalf("%d %q %v", code, body, h)
		}
	})
	t.Run("tier default gives no decision", func(t *testing.T) {
		code, body, _ := r.post(t, ctx, path, testAgent, claudeInput("PreToolUse", "h-write", "Write", map[string]any{"file_path": "/repo/a", "content": "x"}))
		if code != 200 || body != "" {
			t.Fatalf("%d %q", code, body)
		}
	})
	t.Run("floor", func(t *testing.T) {
		code, body, _ := r.post(t, ctx, path, testAgent, claudeInput("PreToolUse", "h-floor", "Bash", map[string]any{"command": "rm -rf /", "description": "x"}))
		if code != 200 || !strings.HasPrefix(body, hookDenyPrefix) || !strings.Contains(body, "floor") {
			t.Fatalf("%d %q", code, body)
		}
	})
	t.Run("human decides, answered in the agent's format", func(t *testing.T) {
		done := make(chan string, 1)
		go func() {
			_, body, _ := r.post(t, ctx, path, testAgent, claudeInput("PreToolUse", "h-human", "mcp__github__delete_repository", map[string]any{"repo": "x"}))
			done <- body
		}()
		id, _ := r.pending(t, "h-human")
		r.operator(t, "POST", "/v1/requests/"+id+"/decision", `{"outcome":"deny","reason":"not today"}`)
		body := <-done
		if !strings.HasPrefix(body, hookDenyPrefix) || !strings.Contains(body, `The user said: \"not today\"`) {
			t.Fatalf("%q", body)
		}
	})
	t.Run("PermissionRequest asks a human when only the tier allows", func(t *testing.T) {
		done := make(chan string, 1)
		in := `{"session_id":"h-perm","cwd":"/repo","hook_event_name":"PermissionRequest","tool_name":"Bash",` +
			`"tool_input":{"command":"make release","description":"Release"},` +
			`"permission_suggestions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"make release"}],"behavior":"allow","destination":"localSettings"},` +
			`{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"make:*"}],"behavior":"allow","destination":"localSettings"}]}`
		go func() {
			_, body, _ := r.post(t, ctx, path, testAgent, in)
			done <- body
		}()
		id, req := r.pending(t, "h-perm")
		if req["summary"] != "make release" {
			t.Fatalf("card summary %v", req["summary"])
		}
		r.operator(t, "POST", "/v1/requests/"+id+"/decision", `{"outcome":"allow_session"}`)
		want := `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedPermissions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"make release"}],"behavior":"allow","destination":"session"}]}}}` + "\n"
		if body := <-done; body != want {
			t.Fatalf("%s\nwant %s", body, want)
		}
		// The grant now answers the same call at once, explicitly, in PreToolUse too.
		_, body, _ := r.post(t, ctx, path, testAgent, claudeInput("PreToolUse", "h-perm", "Bash", map[string]any{"command": "make release", "description": "Again, reworded"}))
		if !strings.HasPrefix(body, hookAllow) {
			t.Fatalf("grant: %q", body)
		}
	})
	t.Run("the agent hangs up: the request is cancelled", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			r.post(t, cctx, path, testAgent, claudeInput("PreToolUse", "h-gone", "Bash", map[string]any{"command": "git push --force"}))
			close(done)
		}()
		id, _ := r.pending(t, "h-gone")
		cancel()
		<-done
		deadline := time.Now().Add(10 * time.Second)
		for {
			m := r.operator(t, "GET", "/v1/requests/"+id, "")
			if m["outcome"] == "cancelled" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("abandoned request not cancelled: %v", m)
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
	refusals := []struct {
		name, path, token, body, want string
	}{
		{"no token", path, "", claudeInput("PreToolUse", "h-x", "Read", map[string]any{}), "missing or invalid bearer token"},
		{"wrong token", path, "wrong-token-0123456789abcdef", claudeInput("PreToolUse", "h-x", "Read", map[string]any{}), "missing or invalid bearer token"},
		{"garbage", path, testAgent, "garbage", "malformed JSON at byte 0"},
		{"keys that differ only in case", path, testAgent, `{"session_id":"h-x","tool_name":"Bash","tool_input":{"command":"ls","Command":"rm -rf ~"}}`, "differ only in case"},
		{"too large", path, testAgent, claudeInput("PreToolUse", "h-x", "Write", map[string]any{"content": strings.Repeat("x", 5000)}), "request body is too large"},
		{"bad unattended", path + "?unattended=maybe", testAgent, claudeInput("PreToolUse", "h-x", "Read", map[string]any{}), `unattended=\"maybe\" is not a boolean`},
		{"unattended", path + "?unattended=1", testAgent, claudeInput("PreToolUse", "h-un", "Bash", map[string]any{"command": "make deploy"}), "unattended"},
	}
	for _, c := range refusals {
		t.Run("refused/"+c.name, func(t *testing.T) {
			code, body, _ := r.post(t, ctx, c.path, c.token, c.body)
			if code != 200 || !strings.HasPrefix(body, hookDenyPrefix) || !strings.Contains(body, c.want) {
				t.Fatalf("%d %q lacks %q", code, body, c.want)
			}
		})
	}
	t.Run("a PermissionRequest refusal has its shape", func(t *testing.T) {
		_, body, _ := r.post(t, ctx, path, "", `{"session_id":"h-x","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"ls"}}`)
		if !strings.HasPrefix(body, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"Refused: approvebot could not decide on this call (missing or invalid bearer token)`) {
			t.Fatalf("%q", body)
		}
	})
	// A mistyped hook URL is a refusal in Claude Code's format, not a 404 that Claude Code
	// would read as a failed hook and go on.
	t.Run("unknown agent", func(t *testing.T) {
		for _, c := range []struct{ path, body, prefix string }{
			{"/v1/hooks/claude", claudeInput("PreToolUse", "h-x", "Bash", map[string]any{"command": "ls"}), hookDenyPrefix},
			{"/v1/hooks/Claude-Code", claudeInput("PermissionRequest", "h-x", "Bash", map[string]any{"command": "ls"}),
				`{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":`},
			{"/v1/hooks/claude-code%20", "garbage", hookDenyPrefix},
			{"/v1/hooks/x", "", hookDenyPrefix},
		} {
			code, body, _ := r.post(t, ctx, c.path, "", c.body)
			if code != 200 || !strings.HasPrefix(body, c.prefix) || !strings.Contains(body, "no hook adapter for") || !strings.Contains(body, "claude-code|codex|cursor|gemini") {
				t.Errorf("%s: %d %q", c.path, code, body)
			}
		}
	})
	t.Run("rate limited", func(t *testing.T) {
		var body string
		for range 200 {
			if _, body, _ = r.post(t, ctx, path, testAgent, claudeInput("PreToolUse", "h-rate", "Read", map[string]any{})); strings.Contains(body, "too many requests") {
				break
			}
		}
		if !strings.HasPrefix(body, hookDenyPrefix) || !strings.Contains(body, "too many requests for this token") {
			t.Fatalf("never rate limited: %q", body)
		}
	})
}

// The other agents' endpoints answer in their own formats.
func TestHookEndpointOtherAgents(t *testing.T) {
	r := newHookRig(t, policy.Config{}, 1<<20)
	ctx := context.Background()
	cases := []struct {
		agent, name, body, want string
	}{
		{"codex", "floor", `{"session_id":"c1","cwd":"/r","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"rm -rf ~"},"tool_use_id":"1","turn_id":"t","model":"m","permission_mode":"default","transcript_path":null}`,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"Refused by the hardline floor (floor.rm_home)`},
		{"codex", "tier default", `{"session_id":"c1","cwd":"/r","hook_event_name":"PreToolUse","tool_name":"mcp__notes__add","tool_input":{"text":"x"}}`, ``},
		{"gemini", "floor", `{"session_id":"g1","cwd":"/r","hook_event_name":"BeforeTool","tool_name":"run_shell_command","tool_input":{"command":"rm -rf /"}}`, `{"decision":"deny","reason":"Refused by the hardline floor (floor.rm_root)`},
		{"gemini", "tier default", `{"session_id":"g1","cwd":"/r","hook_event_name":"BeforeTool","tool_name":"write_file","tool_input":{"file_path":"/r/x","content":"y"}}`, ``},
		{"cursor", "floor", `{"conversation_id":"u1","hook_event_name":"beforeShellExecution","command":"mkfs.ext4 /dev/sda","cwd":"/r"}`, `{"permission":"deny","user_message":"Refused by the hardline floor (floor.block_device_format)`},
		{"cursor", "tier default is Cursor's ask", `{"conversation_id":"u1","hook_event_name":"beforeMCPExecution","tool_name":"add_note","tool_input":"{\"text\":\"x\"}","url":"http://localhost:1"}`, `{"permission":"ask"}`},
		{"cursor", "keys in a string that differ only in case", `{"conversation_id":"u1","hook_event_name":"beforeMCPExecution","tool_name":"run","tool_input":"{\"command\":\"ls\",\"Command\":\"rm -rf ~\"}"}`,
			`{"permission":"deny","user_message":"Refused: approvebot could not decide on this call (JSON object keys \"Command\" and \"command\" differ only in case)`},
		{"cursor", "no token", `{"conversation_id":"u1","hook_event_name":"beforeShellExecution","command":"ls","cwd":"/r"}`, `{"permission":"deny","user_message":"Refused: approvebot could not decide on this call (missing or invalid bearer token)`},
	}
	for _, c := range cases {
		t.Run(c.agent+"/"+c.name, func(t *testing.T) {
			token := testAgent
			if c.name == "no token" {
				token = ""
			}
			code, body, _ := r.post(t, ctx, "/v1/hooks/"+c.agent, token, c.body)
			if code != 200 || !strings.HasPrefix(body, c.want) || (c.want == "" && body != "") {
				t.Fatalf("%d %q, want prefix %q", code, body, c.want)
			}
		})
	}
}
