package hooks

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func recorded(t *testing.T, agent, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", agent, name))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func mustAdapter(t *testing.T, name string) Adapter {
	t.Helper()
	a, ok := Lookup(name)
	if !ok {
		t.Fatalf("no adapter %q", name)
	}
	return a
}

// jsonArgs normalises args for comparison (json.Number vs float, []any vs []string).
func jsonArgs(t *testing.T, m map[string]any) string {
	t.Helper()
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

func TestParseRecordedPayloads(t *testing.T) {
	cases := []struct {
		agent, file string
		want        Call
		args        string
	}{
		{"claude-code", "pretooluse-bash.json", Call{Event: "PreToolUse", Tool: "Bash", Session: "abc123", Cwd: "/home/user/my-project", Reason: "Run test suite"},
			`{"command":"npm test","run_in_background":false,"timeout":120000}`},
		{"claude-code", "pretooluse-powershell.json", Call{Event: "PreToolUse", Tool: "PowerShell", Session: "abc123", Cwd: `C:\project`, Reason: "List files recursively"},
			`{"command":"Get-ChildItem -Recurse","run_in_background":false,"timeout":120000}`},
		{"claude-code", "pretooluse-write.json", Call{Event: "PreToolUse", Tool: "Write", Session: "abc123", Cwd: "/home/user/my-project"},
			`{"content":"file content","file_path":"/home/user/my-project/notes.txt"}`},
		{"claude-code", "pretooluse-read.json", Call{Event: "PreToolUse", Tool: "Read", Session: "abc123", Cwd: "/home/user/my-project", Facts: Facts{ReadOnly: true, Idempotent: true}},
			`{"file_path":"/home/user/my-project/README.md","limit":50,"offset":10}`},
		{"claude-code", "pretooluse-mcp.json", Call{Event: "PreToolUse", Tool: "mcp__github__delete_repository", Session: "abc123", Cwd: "/home/user/my-project"},
			`{"owner":"acme","repo":"website"}`},
		{"claude-code", "permissionrequest-bash.json", Call{Event: "PermissionRequest", Tool: "Bash", Session: "abc123", Cwd: "/Users/user/my-project", Reason: "Remove node_modules directory", AgentAsks: true},
			`{"command":"rm -rf node_modules"}`},
		{"codex", "pretooluse-bash.json", Call{Event: "PreToolUse", Tool: "Bash", Session: "b5f6c1c2-1111-2222-3333-444455556666", Cwd: "/Users/example/project"},
			`{"command":"cargo test"}`},
		{"codex", "pretooluse-apply-patch.json", Call{Event: "PreToolUse", Tool: "apply_patch", Session: "b5f6c1c2-1111-2222-3333-444455556666", Cwd: "/Users/example/project", Facts: Facts{Destructive: true}},
			`{"files_deleted":["/Users/example/project/src/old.rs"],"files_written":["/Users/example/project/docs/notes.md","/Users/example/project/src/main.rs"],"patch":"*** Begin Patch\n*** Add File: docs/notes.md\n+# Notes\n*** Update File: src/main.rs\n@@ fn main() {\n-    println!(\"hi\");\n+    println!(\"hello\");\n*** Delete File: src/old.rs\n*** End Patch\n"}`},
		{"codex", "pretooluse-mcp.json", Call{Event: "PreToolUse", Tool: "mcp__github__delete_repository", Session: "b5f6c1c2-1111-2222-3333-444455556666", Cwd: "/Users/example/project"},
			`{"owner":"acme","repo":"website"}`},
		{"codex", "permissionrequest-bash.json", Call{Event: "PermissionRequest", Tool: "Bash", Session: "b5f6c1c2-1111-2222-3333-444455556666", Cwd: "/Users/example/project", Reason: "Remove the stale build log outside the sandbox", AgentAsks: true},
			`{"command":"rm -f build.log"}`},
		{"gemini", "beforetool-shell.json", Call{Event: "BeforeTool", Tool: "run_shell_command", Session: "7f3c2a10-5d1e-4b8a-9c3f-2e6d1a0b4c55", Cwd: "/home/user/project/web", Reason: "Run the linter"},
			`{"command":"npm run lint"}`},
		{"gemini", "beforetool-write.json", Call{Event: "BeforeTool", Tool: "write_file", Session: "7f3c2a10-5d1e-4b8a-9c3f-2e6d1a0b4c55", Cwd: "/home/user/project"},
			`{"content":"hello","file_path":"/home/user/project/notes.txt"}`},
		{"gemini", "beforetool-read.json", Call{Event: "BeforeTool", Tool: "read_file", Session: "7f3c2a10-5d1e-4b8a-9c3f-2e6d1a0b4c55", Cwd: "/home/user/project", Facts: Facts{ReadOnly: true, Idempotent: true}},
			`{"file_path":"/home/user/project/README.md"}`},
		{"gemini", "beforetool-mcp.json", Call{Event: "BeforeTool", Tool: "mcp__github__delete_repository", Session: "7f3c2a10-5d1e-4b8a-9c3f-2e6d1a0b4c55", Cwd: "/home/user/project"},
			`{"owner":"acme","repo":"website"}`},
		{"cursor", "beforeshell.json", Call{Event: "beforeShellExecution", Tool: "run_terminal_cmd", Session: "668320d2-2fd8-4888-b33c-2a466fec86e7", Cwd: "/Users/user/project"},
			`{"command":"npm install express"}`},
		{"cursor", "beforemcp.json", Call{Event: "beforeMCPExecution", Tool: "mcp__delete_repository", Session: "668320d2-2fd8-4888-b33c-2a466fec86e7", Cwd: "/Users/user/project"},
			`{"__mcp_server":"npx -y @modelcontextprotocol/server-github","owner":"acme","repo":"website"}`},
		{"cursor", "beforemcp-object.json", Call{Event: "beforeMCPExecution", Tool: "mcp__database_query", Session: "668320d2-2fd8-4888-b33c-2a466fec86e7", Cwd: "/Users/user/project"},
			`{"__mcp_server":"http://localhost:3000","query":"SELECT * FROM users"}`},
	}
	for _, c := range cases {
		t.Run(c.agent+"/"+c.file, func(t *testing.T) {
			got, err := mustAdapter(t, c.agent).Parse(recorded(t, c.agent, c.file))
			if err != nil {
				t.Fatal(err)
			}
			if a := jsonArgs(t, got.Args); a != c.args {
				t.Errorf("args %s\nwant %s", a, c.args)
			}
			got.Args, got.SessionRules = nil, nil
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("call %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestRenderExactReplies(t *testing.T) {
	const msg = `Denied by alice. The user said: "not <now>".`
	type out struct {
		kind Kind
		body string
	}
	call := func(agent, file string) Call {
		c, err := mustAdapter(t, agent).Parse(recorded(t, agent, file))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	cases := []struct {
		name, agent string
		call        Call
		outs        []out
	}{
		{"claude PreToolUse", "claude-code", call("claude-code", "pretooluse-bash.json"), []out{
			{Allow, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"` + "ok" + `"}}`},
			{Deny, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"Denied by alice. The user said: \"not <now>\"."}}`},
			{Defer, ``},
		}},
		{"claude PermissionRequest", "claude-code", call("claude-code", "permissionrequest-bash.json"), []out{
			{Allow, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`},
			{Deny, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"Denied by alice. The user said: \"not <now>\"."}}}`},
			{Defer, ``},
		}},
		{"codex PreToolUse", "codex", call("codex", "pretooluse-bash.json"), []out{
			{Allow, ``},
			{Deny, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"Denied by alice. The user said: \"not <now>\"."}}`},
			{Defer, ``},
		}},
		{"codex PermissionRequest", "codex", call("codex", "permissionrequest-bash.json"), []out{
			{Allow, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow"}}}`},
			{Deny, `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"deny","message":"Denied by alice. The user said: \"not <now>\"."}}}`},
			{Defer, ``},
		}},
		{"gemini BeforeTool", "gemini", call("gemini", "beforetool-shell.json"), []out{
			{Allow, `{"decision":"allow"}`},
			{Deny, `{"decision":"deny","reason":"Denied by alice. The user said: \"not <now>\"."}`},
			{Defer, ``},
		}},
		{"cursor beforeShellExecution", "cursor", call("cursor", "beforeshell.json"), []out{
			{Allow, `{"permission":"allow"}`},
			{Deny, `{"permission":"deny","user_message":"Denied by alice. The user said: \"not <now>\".","agent_message":"Denied by alice. The user said: \"not <now>\"."}`},
			{Defer, `{"permission":"ask"}`},
		}},
	}
	for _, c := range cases {
		for _, o := range c.outs {
			t.Run(c.name+"/"+o.kind.String(), func(t *testing.T) {
				m := msg
				if o.kind == Allow {
					m = "ok"
				}
				r := mustAdapter(t, c.agent).Render(c.call, Verdict{Kind: o.kind, Message: m})
				if got := strings.TrimSuffix(string(r.Body), "\n"); got != o.body {
					t.Fatalf("body %s\nwant %s", got, o.body)
				}
				if r.Exit != 0 || r.Stderr != "" {
					t.Fatalf("exit %d stderr %q", r.Exit, r.Stderr)
				}
			})
		}
	}
}

// fakeAsker answers a scripted Outcome per tier and records the questions.
type fakeAsker struct {
	byTier map[string]Outcome
	asked  []Ask
}

func (f *fakeAsker) ask(_ context.Context, a Ask) Outcome {
	f.asked = append(f.asked, a)
	return f.byTier[a.Tier]
}

func TestDecideNeverWidens(t *testing.T) {
	explicit := Outcome{Allowed: true, Explicit: true, Message: "Allowed by policy (tool_permissions.Bash)."}
	tierDefault := Outcome{Allowed: true, Message: "Allowed by policy (tier.auto)."}
	denied := Outcome{Message: "Denied by policy (floor)."}
	human := Outcome{Allowed: true, Explicit: true, ForSession: true, Message: "Allowed by alice (allow_session)."}
	cases := []struct {
		name      string
		agentAsks bool
		byTier    map[string]Outcome
		want      Verdict
		asks      int
	}{
		{"explicit allow", false, map[string]Outcome{"": explicit}, Verdict{Kind: Allow, Message: explicit.Message}, 1},
		{"tier default gives no decision", false, map[string]Outcome{"": tierDefault}, Verdict{Kind: Defer, Message: tierDefault.Message}, 1},
		{"refusal", false, map[string]Outcome{"": denied}, Verdict{Kind: Deny, Message: denied.Message}, 1},
		{"zero outcome refuses", false, map[string]Outcome{}, Verdict{Kind: Deny, Message: "Refused by approvebot."}, 1},
		{"agent asks: explicit allow at once", true, map[string]Outcome{"": explicit}, Verdict{Kind: Allow, Message: explicit.Message}, 1},
		{"agent asks: tier default asks a human", true, map[string]Outcome{"": tierDefault, "ask": human}, Verdict{Kind: Allow, Message: human.Message, ForSession: true}, 2},
		{"agent asks: the human refuses", true, map[string]Outcome{"": tierDefault, "ask": denied}, Verdict{Kind: Deny, Message: denied.Message}, 2},
		{"agent asks: still only the tier", true, map[string]Outcome{"": tierDefault, "ask": tierDefault}, Verdict{Kind: Defer, Message: tierDefault.Message}, 2},
		{"agent asks: refusal at once", true, map[string]Outcome{"": denied}, Verdict{Kind: Deny, Message: denied.Message}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeAsker{byTier: c.byTier}
			call := Call{Tool: "Read", Args: map[string]any{"file_path": "/x"}, Session: "s", Cwd: "/", Facts: Facts{ReadOnly: true}, AgentAsks: c.agentAsks}
			got := Decide(context.Background(), call, f.ask)
			if got != c.want {
				t.Fatalf("verdict %+v, want %+v", got, c.want)
			}
			if len(f.asked) != c.asks {
				t.Fatalf("asked %d times: %+v", len(f.asked), f.asked)
			}
			if f.asked[0].Facts == nil || !f.asked[0].Facts.ReadOnly {
				t.Fatalf("first question lost the facts: %+v", f.asked[0])
			}
			if c.asks == 2 && (f.asked[1].Tier != "ask" || f.asked[1].Facts != nil) {
				t.Fatalf("second question must be at tier ask without facts: %+v", f.asked[1])
			}
		})
	}
	t.Run("a panicking asker refuses", func(t *testing.T) {
		got := Decide(context.Background(), Call{Tool: "x", Session: "s"}, func(context.Context, Ask) Outcome { panic("boom") })
		if got.Kind != Deny || !strings.Contains(got.Message, "internal error: boom") {
			t.Fatalf("%+v", got)
		}
	})
}

// Inputs an adapter cannot use are refused in the agent's format, with exit code 2 and the
// reason on stderr, which every agent reads as a refusal too.
func TestMalformedInputIsRefusedInTheAgentsFormat(t *testing.T) {
	ask := func(context.Context, Ask) Outcome {
		t.Fatal("a malformed input was asked about")
		return Outcome{}
	}
	cases := []struct {
		agent, name, input, why, shape string
	}{
		{"claude-code", "garbage", "garbage", "hook input is not a JSON object: invalid character 'g' looking for beginning of value", `"permissionDecision":"deny"`},
		{"claude-code", "empty", "", "empty hook input", `"permissionDecision":"deny"`},
		{"claude-code", "array", `[{"tool_name":"Bash"}]`, "hook input is not a JSON object: not a JSON object", `"permissionDecision":"deny"`},
		{"claude-code", "duplicate command", `{"session_id":"x","tool_name":"Bash","tool_input":{"command":"ls","command":"rm -rf ~"}}`, `hook input is not a JSON object: duplicate key "command"`, `"permissionDecision":"deny"`},
		{"claude-code", "no tool_input", `{"session_id":"x","tool_name":"Bash"}`, "hook input has no tool_input", `"permissionDecision":"deny"`},
		{"claude-code", "Bash command an array", `{"session_id":"x","tool_name":"Bash","tool_input":{"command":["rm","-rf"]}}`, "Bash call without a command string", `"permissionDecision":"deny"`},
		{"claude-code", "PowerShell without command", `{"session_id":"x","tool_name":"PowerShell","tool_input":{"description":"x"}}`, "PowerShell call without a command string", `"permissionDecision":"deny"`},
		{"claude-code", "PermissionRequest malformed", `{"session_id":"x","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":"rm"}`, "tool_input is not a JSON object: not a JSON object", `"hookEventName":"PermissionRequest","decision":{"behavior":"deny"`},
		{"claude-code", "another event", `{"session_id":"x","hook_event_name":"PostToolUse","tool_name":"Read","tool_input":{}}`, `hook event "PostToolUse": approvebot answers PreToolUse and PermissionRequest`, `"permissionDecision":"deny"`},
		{"claude-code", "no session", `{"tool_name":"Read","tool_input":{"file_path":"/x"}}`, "hook input has no session id", `"permissionDecision":"deny"`},
		{"claude-code", "invalid utf-8", "{\"session_id\":\"x\",\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"ls \xff\"}}", "hook input is not a JSON object: invalid UTF-8", `"permissionDecision":"deny"`},
		{"codex", "garbage", "{", "hook input is not a JSON object: truncated JSON", `"permissionDecision":"deny"`},
		{"codex", "no event", `{"session_id":"x","tool_name":"Bash","tool_input":{"command":"ls"}}`, `hook event "": approvebot answers PreToolUse and PermissionRequest`, `"permissionDecision":"deny"`},
		{"codex", "PermissionRequest without command", `{"session_id":"x","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{}}`, "Bash call without a command string", `"hookEventName":"PermissionRequest","decision":{"behavior":"deny"`},
		{"codex", "patch without envelope", `{"session_id":"x","hook_event_name":"PreToolUse","cwd":"/r","tool_name":"apply_patch","tool_input":{"command":"rm -rf /"}}`, `apply_patch: no "*** Begin Patch" envelope`, `"permissionDecision":"deny"`},
		{"gemini", "garbage", "nope", "hook input is not a JSON object: invalid character 'o' in literal null (expecting 'u')", `"decision":"deny"`},
		{"gemini", "AfterTool", `{"session_id":"x","hook_event_name":"AfterTool","tool_name":"read_file","tool_input":{}}`, `hook event "AfterTool": approvebot answers BeforeTool`, `"decision":"deny"`},
		{"gemini", "shell dir_path a number", `{"session_id":"x","hook_event_name":"BeforeTool","cwd":"/r","tool_name":"run_shell_command","tool_input":{"command":"ls","dir_path":7}}`, "run_shell_command: dir_path is not a string", `"decision":"deny"`},
		{"cursor", "garbage", "[]", "hook input is not a JSON object: not a JSON object", `"permission":"deny"`},
		{"cursor", "shell without command", `{"conversation_id":"x","hook_event_name":"beforeShellExecution","command":"  "}`, "beforeShellExecution without a command", `"permission":"deny"`},
		{"cursor", "mcp input not an object", `{"conversation_id":"x","hook_event_name":"beforeMCPExecution","tool_name":"q","tool_input":"[1]"}`, "tool_input is not a JSON object: not a JSON object", `"permission":"deny"`},
		{"cursor", "mcp input string with duplicate keys", `{"conversation_id":"x","hook_event_name":"beforeMCPExecution","tool_name":"q","tool_input":"{\"a\":1,\"a\":2}"}`, `tool_input is not a JSON object: duplicate key "a"`, `"permission":"deny"`},
		{"cursor", "mcp input shadows the server", `{"conversation_id":"x","hook_event_name":"beforeMCPExecution","tool_name":"q","tool_input":{"__mcp_server":"trusted"},"url":"http://evil"}`, "tool_input has an argument named __mcp_server", `"permission":"deny"`},
		{"cursor", "beforeReadFile", `{"conversation_id":"x","hook_event_name":"beforeReadFile","file_path":"/etc/passwd"}`, `hook event "beforeReadFile": approvebot answers beforeShellExecution and beforeMCPExecution`, `"permission":"deny"`},
	}
	for _, c := range cases {
		t.Run(c.agent+"/"+c.name, func(t *testing.T) {
			r := Answer(context.Background(), mustAdapter(t, c.agent), []byte(c.input), Options{}, ask)
			want := FailureMessage(errorString(c.why))
			if r.Exit != 2 || r.Stderr != want {
				t.Fatalf("exit %d stderr %q\nwant stderr %q", r.Exit, r.Stderr, want)
			}
			if !strings.Contains(string(r.Body), c.shape) || !strings.Contains(string(r.Body), jsonString(want)) {
				t.Fatalf("body %s lacks %s and the reason", r.Body, c.shape)
			}
		})
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }

func jsonString(s string) string {
	raw := encode(s)
	return strings.TrimSuffix(strings.Trim(string(raw), "\n"), `"`)[1:]
}

func TestSessionOverride(t *testing.T) {
	var got Ask
	ask := func(_ context.Context, a Ask) Outcome { got = a; return Outcome{Message: "no"} }
	Answer(context.Background(), mustAdapter(t, "claude-code"), recorded(t, "claude-code", "pretooluse-bash.json"), Options{Session: "mine"}, ask)
	if got.Session != "mine" {
		t.Fatalf("session %q", got.Session)
	}
}

// "Allow for session" hands back only the offered rules that allow exactly this call.
func TestExactSessionRules(t *testing.T) {
	rule := func(tool, content, behavior, typ string) string {
		return `{"type":"` + typ + `","rules":[{"toolName":"` + tool + `","ruleContent":"` + content + `"}],"behavior":"` + behavior + `","destination":"localSettings"}`
	}
	cases := []struct {
		name, command, offered string
		want                   []string
	}{
		{"exact rule kept, made session-only", "rm -rf node_modules", `[` + rule("Bash", "rm -rf node_modules", "allow", "addRules") + `]`,
			[]string{`{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"rm -rf node_modules"}],"behavior":"allow","destination":"session"}`}},
		{"prefix rule dropped", "npm run build", `[` + rule("Bash", "npm run:*", "allow", "addRules") + `]`, nil},
		{"wildcard rule dropped", "npm run build", `[` + rule("Bash", "npm *", "allow", "addRules") + `]`, nil},
		{"whole-tool rule dropped", "ls", `[{"type":"addRules","rules":[{"toolName":"Bash"}],"behavior":"allow","destination":"localSettings"}]`, nil},
		{"another tool dropped", "ls", `[` + rule("Write", "ls", "allow", "addRules") + `]`, nil},
		{"deny rule dropped", "ls", `[` + rule("Bash", "ls", "deny", "addRules") + `]`, nil},
		{"mode change dropped", "ls", `[{"type":"setMode","mode":"bypassPermissions","destination":"session"}]`, nil},
		{"directories dropped", "ls", `[{"type":"addDirectories","directories":["/"],"destination":"session"}]`, nil},
		{"a command with a star has no exact rule", "rm *.o", `[` + rule("Bash", "rm *.o", "allow", "addRules") + `]`, nil},
		{"one exact and one wider rule in an entry", "ls", `[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"ls"},{"toolName":"Bash","ruleContent":"rm:*"}],"behavior":"allow","destination":"localSettings"}]`, nil},
		{"garbage", "ls", `{"x":1}`, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := exactSessionRules(json.RawMessage(c.offered), "Bash", map[string]any{"command": c.command})
			var gs []string
			for _, g := range got {
				gs = append(gs, string(g))
			}
			if !reflect.DeepEqual(gs, c.want) {
				t.Fatalf("got %v\nwant %v", gs, c.want)
			}
		})
	}
	t.Run("rendered on an allow for session only", func(t *testing.T) {
		a := mustAdapter(t, "claude-code")
		c, err := a.Parse(recorded(t, "claude-code", "permissionrequest-bash.json"))
		if err != nil {
			t.Fatal(err)
		}
		want := `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedPermissions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"rm -rf node_modules"}],"behavior":"allow","destination":"session"}]}}}` + "\n"
		if got := string(a.Render(c, Verdict{Kind: Allow, ForSession: true}).Body); got != want {
			t.Fatalf("%s\nwant %s", got, want)
		}
		if got := string(a.Render(c, Verdict{Kind: Allow}).Body); strings.Contains(got, "updatedPermissions") {
			t.Fatalf("allow once handed back rules: %s", got)
		}
	})
}

func TestParsePatch(t *testing.T) {
	cases := []struct {
		name, patch      string
		written, deleted []string
		err              string
	}{
		{"add update delete", "*** Begin Patch\n*** Add File: a\n+x\n*** Update File: b\n@@\n-1\n+2\n*** Delete File: c\n*** End Patch", []string{"a", "b"}, []string{"c"}, ""},
		{"move", "*** Begin Patch\n*** Update File: src/x.go\n*** Move to: ../../.ssh/authorized_keys\n@@\n-a\n+b\n*** End Patch\n", []string{"../../.ssh/authorized_keys"}, []string{"src/x.go"}, ""},
		{"heredoc around it", "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: a\n+x\n*** End Patch\nEOF\n", []string{"a"}, nil, ""},
		{"crlf", "*** Begin Patch\r\n*** Delete File: a\r\n*** End Patch\r\n", nil, []string{"a"}, ""},
		{"end of file marker", "*** Begin Patch\n*** Update File: a\n@@\n+x\n*** End of File\n*** End Patch", []string{"a"}, nil, ""},
		{"content lines that look like headers are content", "*** Begin Patch\n*** Add File: a\n+*** Delete File: /etc/passwd\n*** End Patch", []string{"a"}, nil, ""},
		// Codex reads hunk headers with blanks around them, and ends a patch only at its last
		// line: what it would write, the policy sees.
		{"a header with blanks after an added file", "*** Begin Patch\n*** Add File: a\n+x\n  *** Add File: ../../.ssh/authorized_keys\n+k\n*** End Patch", []string{"a", "../../.ssh/authorized_keys"}, nil, ""},
		{"a tab before a delete", "*** Begin Patch\n*** Add File: a\n+x\n\t*** Delete File: .env\n*** End Patch", []string{"a"}, []string{".env"}, ""},
		{"the end marker as a context line", "*** Begin Patch\n*** Update File: a\n@@\n *** End Patch\n*** Add File: /root/.ssh/authorized_keys\n+k\n*** End Patch", []string{"a", "/root/.ssh/authorized_keys"}, nil, ""},
		{"a context line that starts with ***", "*** Begin Patch\n*** Update File: a\n@@\n *** a heading\n+x\n*** End Patch", []string{"a"}, nil, ""},
		{"no envelope", "*** Add File: a\n+x\n", nil, nil, `apply_patch: no "*** Begin Patch" envelope`},
		{"not ended", "*** Begin Patch\n*** Add File: a\n+x\n", nil, nil, `apply_patch: no "*** End Patch"`},
		{"unknown header", "*** Begin Patch\n*** Rename File: a\n*** End Patch", nil, nil, `apply_patch: unknown header "*** Rename File: a"`},
		{"empty path", "*** Begin Patch\n*** Delete File:   \n*** End Patch", nil, nil, `apply_patch: "*** Delete File:" without a path`},
		{"move without update", "*** Begin Patch\n*** Add File: a\n*** Move to: b\n*** End Patch", nil, nil, `apply_patch: "*** Move to:" without the file it moves`},
		{"touches nothing", "*** Begin Patch\n*** End Patch", nil, nil, "apply_patch: the patch touches no file"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := ParsePatch(c.patch)
			if c.err != "" {
				if err == nil || err.Error() != c.err {
					t.Fatalf("err %v, want %s", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(p.Written, c.written) || !reflect.DeepEqual(p.Deleted, c.deleted) {
				t.Fatalf("written %v deleted %v", p.Written, p.Deleted)
			}
		})
	}
	t.Run("paths resolved against the cwd", func(t *testing.T) {
		args, facts, err := applyPatchArgs(map[string]any{"command": "*** Begin Patch\n*** Update File: src/x.go\n*** Move to: ../../.ssh/authorized_keys\n*** End Patch"}, "/home/u/repo/sub")
		if err != nil {
			t.Fatal(err)
		}
		if got := jsonArgs(t, args); !strings.Contains(got, `"files_written":["/home/u/.ssh/authorized_keys"]`) || !strings.Contains(got, `"files_deleted":["/home/u/repo/sub/src/x.go"]`) {
			t.Fatalf("%s", got)
		}
		if !facts.Destructive {
			t.Fatal("a move is not destructive")
		}
	})
	t.Run("relative path without a cwd", func(t *testing.T) {
		if _, _, err := applyPatchArgs(map[string]any{"command": "*** Begin Patch\n*** Add File: a\n*** End Patch"}, ""); err == nil {
			t.Fatal("accepted")
		}
	})
}

func TestLookupNames(t *testing.T) {
	if got := strings.Join(Names(), ","); got != "claude-code,codex,cursor,gemini" {
		t.Fatal(got)
	}
	if _, ok := Lookup("Claude-Code"); ok {
		t.Fatal("lookup folds case")
	}
}
