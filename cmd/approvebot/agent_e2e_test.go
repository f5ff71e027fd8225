package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/approvebot/approvebot/internal/testserver"
)

// End-to-end tests of the agent side: the hook, the MCP server, ask and exec run as
// subprocesses of the real binary against a real `approvebot serve` (or a server that
// answers garbage), and the exact JSON or exit code is asserted.

const agTimeout = "3s" // the server's approval_timeout in these tests

var agServerOpts = testserver.Options{Server: `approval_timeout = "` + agTimeout + `"`}

// Messages the server writes for the model (core/gate/messages.go).
const (
	agDoNotRetry     = "Do not retry it, rewrite it, or achieve the same result another way."
	agAllowedPolicy  = "Allowed by policy (tier.auto)."
	agAllowedSafe    = "Allowed by policy (exec.allowlist)."
	agAllowedOnce    = "Allowed by operator (allow_once)."
	agAllowedGrant   = "Allowed: a human allowed this exact call for this session."
	agTimedOut       = "Refused: no human answered within " + agTimeout + ". Treat this as a refusal."
	agUnattendedText = "Refused at once: this run is unattended, so no human is attached to approve this call. Do not wait for approval and do not retry it; continue without it or report that it needs a human."
)

func agDenied(reason string) string {
	return `Denied by operator. The user said: "` + reason + `". This denial is final. ` + agDoNotRetry
}

func agPaused(session string) string {
	return fmt.Sprintf("Refused: session %q is paused after repeated denials; every call is refused until an operator unpauses it. %s", session, agDoNotRetry)
}

// agFailure is the client's refusal when it could not get a decision.
func agFailure(why string) string {
	return "Refused: approvebot could not decide on this call (" + why + "), so it is not allowed. Treat this as a refusal; do not try to achieve the same result another way."
}

func agJSONString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// agHookOut is the exact line the hook must print.
func agHookOut(decision, reason string) string {
	return `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"` + decision +
		`","permissionDecisionReason":` + agJSONString(reason) + "}}\n"
}

func agHookIn(session, tool string, input any) string {
	raw, err := json.Marshal(map[string]any{
		"session_id": session, "transcript_path": "/tmp/t.jsonl", "cwd": "/work/project", "permission_mode": "default",
		"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": input, "tool_use_id": "toolu_01",
	})
	if err != nil {
		panic(err)
	}
	return string(raw)
}

func agBash(command, description string) map[string]any {
	return map[string]any{"command": command, "description": description}
}

// agEnv is the environment of an agent-side subprocess: no APPROVEBOT_* from the caller.
func agEnv(url, token string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "APPROVEBOT_") {
			env = append(env, kv)
		}
	}
	env = append(env, "APPROVEBOT_URL="+url)
	if token != "" {
		env = append(env, "APPROVEBOT_TOKEN="+token)
	}
	return append(env, extra...)
}

type agLockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *agLockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *agLockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// agProc is one running subprocess of the binary.
type agProc struct {
	cmd            *exec.Cmd
	stdout, stderr agLockedBuffer
	done           chan struct{}
}

func agStart(t *testing.T, env []string, stdin string, args ...string) *agProc {
	t.Helper()
	p := &agProc{cmd: exec.Command(testserver.Binary(t), args...), done: make(chan struct{})}
	p.cmd.Env = env
	p.cmd.Dir = t.TempDir()
	p.cmd.Stdin = strings.NewReader(stdin)
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// wait returns stdout and the exit code.
func (p *agProc) wait(t *testing.T) (string, int) {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(60 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
		t.Fatalf("%v did not finish; stderr: %s", p.cmd.Args, p.stderr.String())
	}
	return p.stdout.String(), p.cmd.ProcessState.ExitCode()
}

func agRun(t *testing.T, env []string, stdin string, args ...string) (string, int) {
	t.Helper()
	return agStart(t, env, stdin, args...).wait(t)
}

// agPending waits until the session has a pending request and returns its id and summary.
func agPending(t *testing.T, s *testserver.Server, session string) (string, string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		code, m := s.JSON(t, "GET", "/v1/requests?state=pending", testserver.OperatorToken, nil)
		if code == 200 {
			list, _ := m["requests"].([]any)
			for _, it := range list {
				r := it.(map[string]any)
				if r["session"] == session {
					return r["id"].(string), r["summary"].(string)
				}
			}
		}
		time.Sleep(30 * time.Millisecond)
	}
	t.Fatalf("no pending request for session %q", session)
	return "", ""
}

func agDecide(t *testing.T, s *testserver.Server, id, outcome, reason string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		code, m := s.JSON(t, "POST", "/v1/requests/"+id+"/decision", testserver.OperatorToken, map[string]any{"outcome": outcome, "reason": reason})
		if code == 200 {
			return
		}
		// The pending list can show a request a moment before its record is stored (the
		// gate registers it first), when a decision answers 404; try again shortly.
		if code != 404 || time.Now().After(deadline) {
			t.Fatalf("decide %s: %d %v", id, code, m)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// agDenyInSession gets one human denial into session (a pending bash call, denied).
func agDenyInSession(t *testing.T, s *testserver.Server, session, command string) {
	t.Helper()
	code, m := s.JSON(t, "POST", "/v1/requests", testserver.AgentToken,
		map[string]any{"tool": "bash", "args": map[string]any{"command": command}, "session": session})
	if code != 202 {
		t.Fatalf("want pending: %d %v", code, m)
	}
	agDecide(t, s, m["id"].(string), "deny", "no")
}

func agClosedURL(t *testing.T) (string, string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr, addr
}

// agGarbageServers are servers that answer anything but the API, with the reason each
// refusal must carry.
func agGarbageServers(t *testing.T) []struct{ name, url, why string } {
	mk := func(h http.HandlerFunc) string {
		s := httptest.NewServer(h)
		t.Cleanup(s.Close)
		return s.URL
	}
	allowing := mk(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"id":"x","state":"allowed","allowed":true,"outcome":"allow_once"}`)
	})
	return []struct{ name, url, why string }{
		{"html 200", mk(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html><body>allowed</body></html>")
		}), "bad answer from approvebot (HTTP 200): not a JSON request object: invalid character '<' looking for beginning of value"},
		{"junk bytes", mk(func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte{0xff, 0xfe, 0x00, 'x'})
		}), "bad answer from approvebot (HTTP 200): not a JSON request object: invalid UTF-8"},
		{"500", mk(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "boom", 500)
		}), "unexpected answer HTTP 500"},
		{"500 json", mk(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(500)
			io.WriteString(w, `{"error":{"code":"internal","message":"internal error; the request was not allowed"}}`)
		}), "internal error; the request was not allowed (HTTP 500 internal)"},
		{"allowed without id and state", mk(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"allowed":true}`)
		}), `bad answer from approvebot (HTTP 200): request object without "id"`},
		{"allowed while pending", mk(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(202)
			io.WriteString(w, `{"id":"x","state":"pending","allowed":true,"outcome":null}`)
		}), "bad answer from approvebot (HTTP 202): allowed:true on a pending request"},
		{"duplicate allowed", mk(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, `{"id":"x","state":"allowed","allowed":false,"allowed":true,"outcome":"allow_once"}`)
		}), `bad answer from approvebot (HTTP 200): not a JSON request object: duplicate key "allowed"`},
		{"redirect to an allowing server", mk(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, allowing+"/v1/requests", http.StatusTemporaryRedirect)
		}), "unexpected answer HTTP 307"},
		{"hangs up", mk(func(w http.ResponseWriter, r *http.Request) {
			c, _, _ := w.(http.Hijacker).Hijack()
			c.Close()
		}), "POST /v1/requests: EOF"},
	}
}

func TestHookClaudeCode(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, agServerOpts)
	env := agEnv(s.URL, testserver.AgentToken)
	hook := func(t *testing.T, stdin string, extra ...string) string {
		t.Helper()
		out, code := agRun(t, env, stdin, append([]string{"hook", "claude-code"}, extra...)...)
		if code != 0 {
			t.Fatalf("hook exit %d, want 0; stdout %q", code, out)
		}
		return out
	}
	check := func(t *testing.T, got, want string) {
		t.Helper()
		if got != want {
			t.Fatalf("hook printed\n%s\nwant\n%s", got, want)
		}
	}

	// Input the hook cannot use: a denial, and exit code 2 with the reason on stderr, which
	// Claude Code (and every other agent) also reads as a refusal.
	refused := func(t *testing.T, stdin, why string, extra ...string) {
		t.Helper()
		p := agStart(t, env, stdin, append([]string{"hook", "claude-code"}, extra...)...)
		out, code := p.wait(t)
		if code != 2 || strings.TrimSpace(p.stderr.String()) != agFailure(why) {
			t.Fatalf("exit %d, stderr %q", code, p.stderr.String())
		}
		check(t, out, agHookOut("deny", agFailure(why)))
	}
	t.Run("explicit allow by the policy", func(t *testing.T) {
		t.Parallel()
		check(t, hook(t, agHookIn("cc-ls", "Bash", agBash("ls -la", "List"))), agHookOut("allow", agAllowedSafe))
	})
	t.Run("tier default gives no decision", func(t *testing.T) {
		t.Parallel()
		// Read is read-only and allowed by the tier alone: Claude Code's own rules decide.
		check(t, hook(t, agHookIn("cc-read", "Read", map[string]any{"file_path": "/etc/hosts"})), "")
		check(t, hook(t, agHookIn("cc-write", "Write", map[string]any{"file_path": "/work/project/x", "content": "y"})), "")
	})
	t.Run("allow by a human", func(t *testing.T) {
		t.Parallel()
		p := agStart(t, env, agHookIn("cc-allow", "Bash", agBash("rm -rf ./build", "Clean the build")), "hook", "claude-code")
		id, summary := agPending(t, s, "cc-allow")
		if summary != "rm -rf ./build" {
			t.Errorf("summary %q", summary)
		}
		agDecide(t, s, id, "allow_once", "")
		out, code := p.wait(t)
		if code != 0 {
			t.Fatalf("exit %d", code)
		}
		check(t, out, agHookOut("allow", agAllowedOnce))
	})
	t.Run("deny with reason", func(t *testing.T) {
		t.Parallel()
		p := agStart(t, env, agHookIn("cc-deny", "Bash", agBash("git push --force", "Push")), "hook", "claude-code")
		id, _ := agPending(t, s, "cc-deny")
		agDecide(t, s, id, "deny", "not on a Friday")
		out, code := p.wait(t)
		if code != 0 {
			t.Fatalf("exit %d", code)
		}
		check(t, out, agHookOut("deny", agDenied("not on a Friday")))
	})
	t.Run("timeout", func(t *testing.T) {
		t.Parallel()
		check(t, hook(t, agHookIn("cc-timeout", "Bash", agBash("make deploy", ""))), agHookOut("deny", agTimedOut))
	})
	t.Run("unattended", func(t *testing.T) {
		t.Parallel()
		check(t, hook(t, agHookIn("cc-unattended", "Bash", agBash("make deploy", "")), "-unattended"), agHookOut("deny", agUnattendedText))
	})
	t.Run("paused after three denials", func(t *testing.T) {
		t.Parallel()
		const sess = "cc-paused"
		for i := range 3 {
			p := agStart(t, env, agHookIn(sess, "Bash", agBash(fmt.Sprintf("rm -rf ./dir%d", i), "")), "hook", "claude-code")
			id, _ := agPending(t, s, sess)
			agDecide(t, s, id, "deny", "no")
			out, _ := p.wait(t)
			check(t, out, agHookOut("deny", agDenied("no")))
		}
		// Paused: even a call the policy would allow is refused.
		check(t, hook(t, agHookIn(sess, "Read", map[string]any{"file_path": "/etc/hosts"})), agHookOut("deny", agPaused(sess)))
		// The operator command unpauses it.
		out, code := agRun(t, agEnv(s.URL, testserver.OperatorToken), "", "session", "unpause", sess)
		if code != 0 || !strings.Contains(out, "paused false, denials 0") {
			t.Fatalf("session unpause: %d %q", code, out)
		}
		check(t, hook(t, agHookIn(sess, "Read", map[string]any{"file_path": "/etc/hosts"})), "")
	})
	t.Run("session mapping", func(t *testing.T) {
		t.Parallel()
		// Allow for session in cc-map-a: the same command (described differently) is then
		// allowed there by the grant, while cc-map-b is asked again.
		p := agStart(t, env, agHookIn("cc-map-a", "Bash", agBash("make release", "Release")), "hook", "claude-code")
		id, _ := agPending(t, s, "cc-map-a")
		agDecide(t, s, id, "allow_session", "")
		out, _ := p.wait(t)
		check(t, out, agHookOut("allow", "Allowed by operator (allow_session)."))
		check(t, hook(t, agHookIn("cc-map-a", "Bash", agBash("make release", "Cut the release again"))), agHookOut("allow", agAllowedGrant))
		p = agStart(t, env, agHookIn("cc-map-b", "Bash", agBash("make release", "Release")), "hook", "claude-code")
		id, _ = agPending(t, s, "cc-map-b")
		agDecide(t, s, id, "deny", "not here")
		out, _ = p.wait(t)
		check(t, out, agHookOut("deny", agDenied("not here")))
		// -session overrides the Claude Code session id.
		check(t, hook(t, agHookIn("cc-other", "Bash", agBash("make release", "")), "-session", "cc-map-a"), agHookOut("allow", agAllowedGrant))
	})
	t.Run("server down", func(t *testing.T) {
		t.Parallel()
		url, addr := agClosedURL(t)
		out, code := agRun(t, agEnv(url, testserver.AgentToken), agHookIn("cc-down", "Bash", agBash("ls", "")), "hook", "claude-code", "-connect-timeout", "300ms")
		if code != 0 {
			t.Fatalf("exit %d", code)
		}
		check(t, out, agHookOut("deny", agFailure("POST /v1/requests: dial tcp "+addr+": connect: connection refused")))
	})
	t.Run("no token", func(t *testing.T) {
		t.Parallel()
		check(t, func() string {
			out, _ := agRun(t, agEnv(s.URL, ""), agHookIn("cc-notoken", "Read", map[string]any{"file_path": "/x"}), "hook", "claude-code")
			return out
		}(), agHookOut("deny", agFailure("no API token: environment variable APPROVEBOT_TOKEN is not set")))
	})
	t.Run("wrong token", func(t *testing.T) {
		t.Parallel()
		out, _ := agRun(t, agEnv(s.URL, "wrong-token-0123456789abcdef"), agHookIn("cc-badtoken", "Read", map[string]any{"file_path": "/x"}), "hook", "claude-code")
		check(t, out, agHookOut("deny", agFailure("missing or invalid bearer token (HTTP 401 unauthorized)")))
	})
	t.Run("bad flag", func(t *testing.T) {
		t.Parallel()
		refused(t, agHookIn("cc-flag", "Read", map[string]any{}), "bad hook flags: flag provided but not defined: -nope", "-nope")
	})

	garbage := []struct{ name, stdin, why string }{
		{"text", "garbage", "hook input is not a JSON object: invalid character 'g' looking for beginning of value"},
		{"empty", "", "empty hook input"},
		{"array", `[{"tool_name":"Bash"}]`, "hook input is not a JSON object: not a JSON object"},
		{"truncated", `{"session_id":"x","tool_name":"Ba`, "hook input is not a JSON object: unexpected EOF"},
		{"empty object", `{}`, "hook input has no tool_input"},
		{"no tool_name", `{"session_id":"x","tool_input":{}}`, "hook input has no tool name"},
		{"no tool_input", `{"session_id":"x","tool_name":"Bash"}`, "hook input has no tool_input"},
		{"tool_input a string", `{"session_id":"x","tool_name":"Bash","tool_input":"rm -rf /"}`, "tool_input is not a JSON object: not a JSON object"},
		{"tool_input null", `{"session_id":"x","tool_name":"Bash","tool_input":null}`, "tool_input is not a JSON object: not a JSON object"},
		{"Bash without command", `{"session_id":"x","tool_name":"Bash","tool_input":{"description":"x"}}`, "Bash call without a command string"},
		{"Bash command not a string", `{"session_id":"x","tool_name":"Bash","tool_input":{"command":["rm","-rf"]}}`, "Bash call without a command string"},
		{"duplicate command", `{"session_id":"x","tool_name":"Bash","tool_input":{"command":"ls","command":"rm -rf ~"}}`, `hook input is not a JSON object: duplicate key "command"`},
		{"session_id a number", `{"session_id":7,"tool_name":"Bash","tool_input":{"command":"ls"}}`, "hook input: json: cannot unmarshal number into Go struct field claudeInput.session_id of type string"},
		{"no session", `{"tool_name":"Read","tool_input":{"file_path":"/x"}}`, "hook input has no session id"},
		{"another event", `{"session_id":"x","hook_event_name":"PostToolUse","tool_name":"Read","tool_input":{}}`, `hook event "PostToolUse": approvebot answers PreToolUse and PermissionRequest`},
		{"invalid utf-8", "{\"session_id\":\"x\",\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"ls \xff\"}}", "hook input is not a JSON object: invalid UTF-8"},
	}
	for _, g := range garbage {
		t.Run("garbage on stdin/"+g.name, func(t *testing.T) {
			t.Parallel()
			refused(t, g.stdin, g.why)
		})
	}
	for _, g := range agGarbageServers(t) {
		t.Run("server answers garbage/"+g.name, func(t *testing.T) {
			t.Parallel()
			out, code := agRun(t, agEnv(g.url, testserver.AgentToken), agHookIn("cc-garbage", "Bash", agBash("ls", "")), "hook", "claude-code")
			if code != 0 {
				t.Fatalf("exit %d", code)
			}
			check(t, out, agHookOut("deny", agFailure(g.why)))
		})
	}
	t.Run("unknown agent blocks", func(t *testing.T) {
		t.Parallel()
		p := agStart(t, env, agHookIn("cc-kind", "Read", map[string]any{}), "hook", "claude")
		out, code := p.wait(t)
		if code != 2 || out != "" || !strings.Contains(p.stderr.String(), `unknown agent "claude": the call is refused`) {
			t.Fatalf("exit %d, %q, stderr %q", code, out, p.stderr.String())
		}
	})
}

// agMCP is a raw JSON-RPC client of `approvebot mcp` over its stdin/stdout.
type agMCP struct {
	t      *testing.T
	p      *exec.Cmd
	stdin  io.WriteCloser
	mu     sync.Mutex
	waits  map[int]chan json.RawMessage
	nextID atomic.Int64
	stderr agLockedBuffer
	done   chan struct{}
}

func agMCPStart(t *testing.T, env []string, args ...string) *agMCP {
	t.Helper()
	m := &agMCP{t: t, waits: map[int]chan json.RawMessage{}, done: make(chan struct{})}
	m.p = exec.Command(testserver.Binary(t), append([]string{"mcp"}, args...)...)
	m.p.Env = env
	m.p.Dir = t.TempDir()
	m.p.Stderr = &m.stderr
	var err error
	if m.stdin, err = m.p.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := m.p.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := m.p.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<16), 1<<24)
		for sc.Scan() {
			var msg struct {
				ID     *int            `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			line := append([]byte(nil), sc.Bytes()...)
			if json.Unmarshal(line, &msg) != nil || msg.ID == nil {
				continue
			}
			m.mu.Lock()
			ch := m.waits[*msg.ID]
			m.mu.Unlock()
			if ch != nil {
				ch <- line
			}
		}
		m.p.Wait()
		close(m.done)
	}()
	t.Cleanup(func() {
		m.stdin.Close()
		select {
		case <-m.done:
		case <-time.After(10 * time.Second):
			m.p.Process.Kill()
			<-m.done
			t.Errorf("mcp server did not exit when its stdin closed")
		}
	})
	m.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "claude-code-test", "version": "1"}})
	m.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return m
}

func (m *agMCP) send(line string) {
	m.t.Helper()
	if _, err := io.WriteString(m.stdin, line+"\n"); err != nil {
		m.t.Fatal(err)
	}
}

// callRaw sends a request with the given params JSON and returns the whole response.
func (m *agMCP) callRaw(method, params string) map[string]any {
	m.t.Helper()
	id := int(m.nextID.Add(1))
	ch := make(chan json.RawMessage, 1)
	m.mu.Lock()
	m.waits[id] = ch
	m.mu.Unlock()
	m.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params))
	select {
	case raw := <-ch:
		var resp map[string]any
		if err := json.Unmarshal(raw, &resp); err != nil {
			m.t.Fatal(err)
		}
		return resp
	case <-time.After(60 * time.Second):
		m.t.Fatalf("no answer to %s; stderr: %s", method, m.stderr.String())
	}
	return nil
}

func (m *agMCP) call(method string, params any) map[string]any {
	m.t.Helper()
	raw, err := json.Marshal(params)
	if err != nil {
		m.t.Fatal(err)
	}
	return m.callRaw(method, string(raw))
}

// approve calls approval_prompt with raw JSON arguments and returns the text it answers.
func (m *agMCP) approve(arguments string) string {
	m.t.Helper()
	resp := m.callRaw("tools/call", `{"name":"approval_prompt","arguments":`+arguments+`}`)
	res, ok := resp["result"].(map[string]any)
	if !ok {
		m.t.Fatalf("tools/call: no result: %v", resp)
	}
	if res["isError"] == true {
		m.t.Fatalf("tools/call: isError: %v", res)
	}
	content, _ := res["content"].([]any)
	if len(content) != 1 {
		m.t.Fatalf("tools/call: content %v", res)
	}
	c := content[0].(map[string]any)
	if c["type"] != "text" {
		m.t.Fatalf("content %v", c)
	}
	return c["text"].(string)
}

func agPrompt(tool string, input any) string {
	raw, err := json.Marshal(map[string]any{"tool_name": tool, "input": input, "tool_use_id": "toolu_01"})
	if err != nil {
		panic(err)
	}
	return string(raw)
}

func agMCPDeny(message string) string {
	return `{"behavior":"deny","message":` + agJSONString(message) + `}`
}

func TestMCPApprovalPrompt(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, agServerOpts)
	env := agEnv(s.URL, testserver.AgentToken)
	check := func(t *testing.T, got, want string) {
		t.Helper()
		if got != want {
			t.Fatalf("approval_prompt answered\n%s\nwant\n%s", got, want)
		}
	}

	t.Run("tools/list", func(t *testing.T) {
		t.Parallel()
		m := agMCPStart(t, env)
		resp := m.call("tools/list", map[string]any{})
		raw, _ := json.Marshal(resp["result"])
		var res struct {
			Tools []struct {
				Name        string `json:"name"`
				InputSchema struct {
					Type     string         `json:"type"`
					Required []string       `json:"required"`
					Props    map[string]any `json:"properties"`
				} `json:"inputSchema"`
			} `json:"tools"`
		}
		if err := json.Unmarshal(raw, &res); err != nil || len(res.Tools) != 1 {
			t.Fatalf("tools/list: %s", raw)
		}
		tool := res.Tools[0]
		if tool.Name != "approval_prompt" || tool.InputSchema.Type != "object" ||
			strings.Join(tool.InputSchema.Required, ",") != "tool_name,input" || len(tool.InputSchema.Props) != 3 {
			t.Fatalf("tool %+v", tool)
		}
	})
	t.Run("explicit allow echoes the input", func(t *testing.T) {
		t.Parallel()
		m := agMCPStart(t, env, "-session", "mcp-ls")
		check(t, m.approve(`{"tool_name":"Bash","input":{"command":"ls -la","description":"List <files> & more","timeout":1.50},"tool_use_id":"t1"}`),
			`{"behavior":"allow","updatedInput":{"command":"ls -la","description":"List <files> & more","timeout":1.50}}`)
	})
	t.Run("a tier-default allow goes to a human", func(t *testing.T) {
		t.Parallel()
		// Claude Code calls the tool when it would ask a person: approvebot asks one.
		m := agMCPStart(t, env, "-session", "mcp-write")
		got := make(chan string, 1)
		go func() {
			got <- m.approve(agPrompt("Write", map[string]any{"file_path": "/work/project/a", "content": "b"}))
		}()
		id, _ := agPending(t, s, "mcp-write")
		agDecide(t, s, id, "allow_once", "")
		check(t, <-got, `{"behavior":"allow","updatedInput":{"content":"b","file_path":"/work/project/a"}}`)
	})
	t.Run("Claude Code's session id", func(t *testing.T) {
		t.Parallel()
		m := agMCPStart(t, agEnv(s.URL, testserver.AgentToken, "CLAUDE_CODE_SESSION_ID=mcp-claude-session"))
		got := make(chan string, 1)
		go func() { got <- m.approve(agPrompt("Bash", agBash("make claude-session", ""))) }()
		id, _ := agPending(t, s, "mcp-claude-session")
		agDecide(t, s, id, "deny", "no")
		check(t, <-got, agMCPDeny(agDenied("no")))
	})
	t.Run("allow by a human", func(t *testing.T) {
		t.Parallel()
		m := agMCPStart(t, env, "-session", "mcp-allow")
		got := make(chan string, 1)
		go func() {
			got <- m.approve(`{"tool_name":"Bash","input":{"command":"rm -rf ./build","description":"Clean <build> & more"},"tool_use_id":"t2"}`)
		}()
		id, _ := agPending(t, s, "mcp-allow")
		agDecide(t, s, id, "allow_once", "")
		check(t, <-got, `{"behavior":"allow","updatedInput":{"command":"rm -rf ./build","description":"Clean <build> & more"}}`)
	})
	t.Run("deny with reason", func(t *testing.T) {
		t.Parallel()
		m := agMCPStart(t, env, "-session", "mcp-deny")
		got := make(chan string, 1)
		go func() { got <- m.approve(agPrompt("Bash", agBash("git push --force", ""))) }()
		id, _ := agPending(t, s, "mcp-deny")
		agDecide(t, s, id, "deny", `use "git push" without --force`)
		check(t, <-got, agMCPDeny(agDenied(`use "git push" without --force`)))
	})
	t.Run("timeout", func(t *testing.T) {
		t.Parallel()
		m := agMCPStart(t, env, "-session", "mcp-timeout")
		check(t, m.approve(agPrompt("Bash", agBash("make deploy", ""))), agMCPDeny(agTimedOut))
	})
	t.Run("unattended", func(t *testing.T) {
		t.Parallel()
		m := agMCPStart(t, env, "-session", "mcp-unattended", "-unattended")
		check(t, m.approve(agPrompt("Bash", agBash("make deploy", ""))), agMCPDeny(agUnattendedText))
	})
	t.Run("paused", func(t *testing.T) {
		t.Parallel()
		const sess = "mcp-paused"
		for i := range 3 {
			agDenyInSession(t, s, sess, fmt.Sprintf("rm -rf ./d%d", i))
		}
		m := agMCPStart(t, env, "-session", sess)
		check(t, m.approve(agPrompt("Read", map[string]any{"file_path": "/etc/hosts"})), agMCPDeny(agPaused(sess)))
	})
	t.Run("session per process", func(t *testing.T) {
		t.Parallel()
		// Without -session and APPROVEBOT_SESSION each process has its own session, and
		// every call of one process uses it.
		m := agMCPStart(t, env)
		sessions := make(chan string, 2)
		for i := range 2 {
			command := fmt.Sprintf("make generated-session-%d", i)
			got := make(chan string, 1)
			go func() { got <- m.approve(agPrompt("Bash", agBash(command, ""))) }()
			var id, sess string
			deadline := time.Now().Add(20 * time.Second)
			for id == "" && time.Now().Before(deadline) {
				_, l := s.JSON(t, "GET", "/v1/requests?state=pending", testserver.OperatorToken, nil)
				for _, it := range l["requests"].([]any) {
					r := it.(map[string]any)
					if r["summary"] == command {
						id, sess = r["id"].(string), r["session"].(string)
					}
				}
				time.Sleep(30 * time.Millisecond)
			}
			if !strings.HasPrefix(sess, "mcp-") {
				t.Fatalf("session %q", sess)
			}
			sessions <- sess
			agDecide(t, s, id, "deny", "no")
			check(t, <-got, agMCPDeny(agDenied("no")))
		}
		if a, b := <-sessions, <-sessions; a != b {
			t.Fatalf("sessions %q and %q differ within one process", a, b)
		}
	})
	t.Run("APPROVEBOT_SESSION", func(t *testing.T) {
		t.Parallel()
		m := agMCPStart(t, agEnv(s.URL, testserver.AgentToken, "APPROVEBOT_SESSION=mcp-env"))
		got := make(chan string, 1)
		go func() { got <- m.approve(agPrompt("Bash", agBash("make env-session", ""))) }()
		id, _ := agPending(t, s, "mcp-env")
		agDecide(t, s, id, "deny", "no")
		check(t, <-got, agMCPDeny(agDenied("no")))
	})
	t.Run("server down", func(t *testing.T) {
		t.Parallel()
		url, addr := agClosedURL(t)
		m := agMCPStart(t, agEnv(url, testserver.AgentToken), "-connect-timeout", "300ms")
		check(t, m.approve(agPrompt("Bash", agBash("ls", ""))),
			agMCPDeny(agFailure("POST /v1/requests: dial tcp "+addr+": connect: connection refused")))
	})
	t.Run("no token", func(t *testing.T) {
		t.Parallel()
		m := agMCPStart(t, agEnv(s.URL, ""))
		check(t, m.approve(agPrompt("Read", map[string]any{"file_path": "/x"})),
			agMCPDeny(agFailure("no API token: environment variable APPROVEBOT_TOKEN is not set")))
	})
	t.Run("garbage arguments", func(t *testing.T) {
		t.Parallel()
		m := agMCPStart(t, env, "-session", "mcp-garbage")
		for _, g := range []struct{ args, why string }{
			{`{}`, "input is not a JSON object: empty answer"},
			{`{"input":{}}`, "hook input has no tool name"},
			{`{"tool_name":"Bash"}`, "input is not a JSON object: empty answer"},
			{`{"tool_name":"Bash","input":"rm -rf /"}`, "input is not a JSON object: not a JSON object"},
			{`{"tool_name":"Bash","input":null}`, "input is not a JSON object: not a JSON object"},
			{`{"tool_name":"Bash","input":{"command":"ls","command":"rm -rf ~"}}`, `arguments are not a JSON object: duplicate key "command"`},
			{`{"tool_name":"Bash","input":{"description":"no command"}}`, "Bash call without a command string"},
			{`{"tool_name":7,"input":{}}`, "arguments: json: cannot unmarshal number into Go struct field .tool_name of type string"},
			{`"approve"`, "arguments are not a JSON object: not a JSON object"},
		} {
			check(t, m.approve(g.args), agMCPDeny(agFailure(g.why)))
		}
		check(t, m.approve(agPrompt("Bash", map[string]any{"command": "ls"})), `{"behavior":"allow","updatedInput":{"command":"ls"}}`)
	})
	t.Run("garbage on stdin", func(t *testing.T) {
		t.Parallel()
		// A line that is not JSON-RPC ends the server (the SDK drops the connection): a
		// permission tool that is gone allows nothing, and it says why on stderr.
		m := agMCPStart(t, env, "-session", "mcp-stdin")
		m.send("garbage")
		select {
		case <-m.done:
		case <-time.After(30 * time.Second):
			t.Fatal("still running after garbage on stdin")
		}
		if code := m.p.ProcessState.ExitCode(); code == 0 {
			t.Fatalf("exit %d", code)
		}
		if !strings.Contains(m.stderr.String(), "invalid character 'g'") {
			t.Fatalf("stderr %q", m.stderr.String())
		}
	})
	for _, g := range agGarbageServers(t) {
		t.Run("server answers garbage/"+g.name, func(t *testing.T) {
			t.Parallel()
			m := agMCPStart(t, agEnv(g.url, testserver.AgentToken))
			check(t, m.approve(agPrompt("Bash", agBash("ls", ""))), agMCPDeny(agFailure(g.why)))
		})
	}
}

func TestAskAndExec(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, agServerOpts)
	env := agEnv(s.URL, testserver.AgentToken)
	opEnv := agEnv(s.URL, testserver.OperatorToken)

	t.Run("ask allowed", func(t *testing.T) {
		t.Parallel()
		out, code := agRun(t, env, "", "ask", "-session", "ask-ok", "-tool", "Read", "-args", `{"file_path":"/etc/hosts"}`)
		if code != 0 || out != agAllowedPolicy+"\n" {
			t.Fatalf("exit %d, %q", code, out)
		}
	})
	t.Run("ask denied by the operator command", func(t *testing.T) {
		t.Parallel()
		// Its own server with a long approval timeout: three operator commands run while
		// the ask waits.
		s := testserver.Start(t, testserver.Options{Server: `approval_timeout = "60s"`})
		env, opEnv := agEnv(s.URL, testserver.AgentToken), agEnv(s.URL, testserver.OperatorToken)
		p := agStart(t, env, "", "ask", "-session", "ask-deny", "-reason", "cleanup", "--", "rm", "-rf", "./build dir")
		id, summary := agPending(t, s, "ask-deny")
		if summary != "rm -rf './build dir'" {
			t.Errorf("summary %q", summary)
		}
		// The operator's pending list shows it.
		out, code := agRun(t, opEnv, "", "pending")
		if code != 0 || !strings.Contains(out, id) || !strings.Contains(out, "ask-deny") {
			t.Errorf("pending: %d %q", code, out)
		}
		d := agStart(t, opEnv, "", "decide", id, "deny", "not", "now")
		out, code = d.wait(t)
		if code != 0 || !strings.HasPrefix(out, id+": denied (deny) by operator") {
			t.Errorf("decide: %d %q %q", code, out, d.stderr.String())
		}
		out, code = p.wait(t)
		if code != exitDenied || out != agDenied("not now")+"\n" {
			t.Fatalf("exit %d, %q", code, out)
		}
		// A second decision loses and says by whom.
		p2 := agStart(t, opEnv, "", "decide", id, "allow")
		out, code = p2.wait(t)
		if code != 1 || !strings.Contains(p2.stderr.String(), "already decided (deny) by operator") {
			t.Errorf("second decide: %d %q %q", code, out, p2.stderr.String())
		}
	})
	t.Run("ask timeout", func(t *testing.T) {
		t.Parallel()
		out, code := agRun(t, env, "", "ask", "-session", "ask-timeout", "--", "make deploy")
		if code != exitTimeout || out != agTimedOut+"\n" {
			t.Fatalf("exit %d, %q", code, out)
		}
	})
	t.Run("ask own deadline", func(t *testing.T) {
		t.Parallel()
		out, code := agRun(t, env, "", "ask", "-session", "ask-own", "-timeout", "500ms", "--", "make deploy")
		if code != exitTimeout || out != "Refused: no decision arrived within this tool's own time limit. Treat this as a refusal.\n" {
			t.Fatalf("exit %d, %q", code, out)
		}
		// The request it gave up on is cancelled (by the client's DELETE, or by the server
		// when the held POST lost its caller), so no late approval can apply.
		var m map[string]any
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if _, m = s.JSON(t, "GET", "/v1/audit?session=ask-own", testserver.OperatorToken, nil); strings.Contains(fmt.Sprint(m), "outcome:cancelled") {
				return
			}
		}
		t.Errorf("not cancelled: %v", m)
	})
	t.Run("ask unattended", func(t *testing.T) {
		t.Parallel()
		out, code := agRun(t, agEnv(s.URL, testserver.AgentToken, "APPROVEBOT_UNATTENDED=1"), "", "ask", "-session", "ask-un", "--", "make deploy")
		if code != exitDenied || out != agUnattendedText+"\n" {
			t.Fatalf("exit %d, %q", code, out)
		}
	})
	t.Run("ask json", func(t *testing.T) {
		t.Parallel()
		out, code := agRun(t, env, "", "ask", "-json", "-session", "ask-json", "-tool", "Read", "-args", `{"file_path":"/x"}`)
		var m map[string]any
		if code != 0 || json.Unmarshal([]byte(out), &m) != nil || m["verdict"] != "allowed" || m["allowed"] != true {
			t.Fatalf("exit %d, %q", code, out)
		}
	})
	t.Run("ask server down", func(t *testing.T) {
		t.Parallel()
		url, addr := agClosedURL(t)
		out, code := agRun(t, agEnv(url, testserver.AgentToken), "", "ask", "-connect-timeout", "300ms", "--", "ls")
		if code != exitNoDecision || out != agFailure("POST /v1/requests: dial tcp "+addr+": connect: connection refused")+"\n" {
			t.Fatalf("exit %d, %q", code, out)
		}
	})
	t.Run("ask garbage server", func(t *testing.T) {
		t.Parallel()
		for _, g := range agGarbageServers(t) {
			out, code := agRun(t, agEnv(g.url, testserver.AgentToken), "", "ask", "--", "ls")
			if code != exitNoDecision || out != agFailure(g.why)+"\n" {
				t.Errorf("%s: exit %d, %q", g.name, code, out)
			}
		}
	})
	t.Run("ask usage", func(t *testing.T) {
		t.Parallel()
		for _, args := range [][]string{{"ask"}, {"ask", "-args", "[1]"}, {"ask", "-args", "{}", "--", "ls"}, {"ask", "-nope"}} {
			if _, code := agRun(t, env, "", args...); code != exitUsage {
				t.Errorf("%q: exit %d", args, code)
			}
		}
	})
	t.Run("exec allowed passes the exit status through", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		// sleep is no safe bin: the command asks (writes inside the cwd alone would not).
		p := agStart(t, env, "", "exec", "-session", "exec-ok", "-cwd", dir, "--", "sh", "-c", "echo ran > marker; sleep 0; echo out; exit 3")
		id, summary := agPending(t, s, "exec-ok")
		sh, _ := exec.LookPath("sh")
		sh, _ = filepath.Abs(sh)
		if summary != sh+" -c 'echo ran > marker; sleep 0; echo out; exit 3'" {
			t.Errorf("summary %q (the absolute path of what runs)", summary)
		}
		agDecide(t, s, id, "allow_once", "")
		out, code := p.wait(t)
		if code != 3 || out != "out\n" {
			t.Fatalf("exit %d, %q", code, out)
		}
		if raw, err := os.ReadFile(filepath.Join(dir, "marker")); err != nil || string(raw) != "ran\n" {
			t.Fatalf("marker: %q %v", raw, err)
		}
	})
	t.Run("exec denied does not run", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		p := agStart(t, env, "", "exec", "-session", "exec-deny", "-cwd", dir, "--", "mkfifo", "marker")
		id, _ := agPending(t, s, "exec-deny")
		agDecide(t, s, id, "deny", "no")
		out, code := p.wait(t)
		if code != exitDenied || out != "" || p.stderr.String() != agDenied("no")+"\n" {
			t.Fatalf("exit %d, %q, %q", code, out, p.stderr.String())
		}
		if _, err := os.Stat(filepath.Join(dir, "marker")); err == nil {
			t.Fatal("the program ran although denied")
		}
	})
	t.Run("exec timeout and missing program", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()
		if _, code := agRun(t, env, "", "exec", "-session", "exec-to", "-cwd", dir, "--", "mkfifo", "marker"); code != exitTimeout {
			t.Fatalf("exit %d", code)
		}
		if _, err := os.Stat(filepath.Join(dir, "marker")); err == nil {
			t.Fatal("the program ran although timed out")
		}
		if _, code := agRun(t, env, "", "exec", "--", "no-such-program-approvebot"); code != exitNotFound {
			t.Fatalf("missing program: exit %d", code)
		}
	})
	t.Run("operator commands", func(t *testing.T) {
		t.Parallel()
		out, code := agRun(t, opEnv, "", "session", "set", "op-sess", "-tier", "ask", "-unattended=true")
		if code != 0 || !strings.HasPrefix(out, "session op-sess for every agent: tier ask, unattended true\n") || !strings.Contains(out, "no agent was given") {
			t.Fatalf("session set: %d %q", code, out)
		}
		out, code = agRun(t, opEnv, "", "session", "set", "op-sess", "-agent", "agent2", "-tier", "auto")
		if code != 0 || out != "session op-sess of agent agent2: tier auto, unattended true, paused false, denials 0\n" {
			t.Fatalf("session set -agent: %d %q", code, out)
		}
		out, code = agRun(t, env, "", "ask", "-session", "op-sess", "--", "make x")
		if code != exitDenied || out != agUnattendedText+"\n" {
			t.Fatalf("ask in an unattended session: %d %q", code, out)
		}
		out, code = agRun(t, opEnv, "", "audit", "-json", "-session", "op-sess")
		var last map[string]any
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if err := json.Unmarshal([]byte(line), &last); err != nil {
				t.Fatalf("audit -json line %q: %v", line, err)
			}
		}
		if code != 0 || last["source"] != "unattended" || last["outcome"] != "deny" {
			t.Fatalf("audit: %d %q", code, out)
		}
		out, code = agRun(t, opEnv, "", "audit", "-session", "op-sess", "-limit", "1")
		if code != 0 || strings.Count(out, "\n") != 1 || !strings.Contains(out, "source=unattended") {
			t.Fatalf("audit text: %d %q", code, out)
		}
		out, code = agRun(t, opEnv, "", "audit", "-session", "op-sess", "-outcome", "deny", "-source", "unattended", "-since", "1h", "-json")
		if code != 0 || strings.Count(out, "\n") != 1 || !strings.Contains(out, `"source":"unattended"`) {
			t.Fatalf("audit filtered: %d %q", code, out)
		}
		if out, code = agRun(t, opEnv, "", "audit", "-outcome", "denied"); code != 1 || out != "" {
			t.Fatalf("audit with an unknown outcome: %d %q", code, out)
		}
		out, code = agRun(t, opEnv, "", "allowlist", "list")
		if code != 0 || out != "no persisted allowlist entries\n" {
			t.Fatalf("allowlist list: %d %q", code, out)
		}
		if _, code = agRun(t, opEnv, "", "allowlist", "revoke", "/usr/bin/nothing"); code != 1 {
			t.Fatalf("allowlist revoke of nothing: exit %d", code)
		}
		// An agent token may not use operator commands.
		if _, code = agRun(t, env, "", "pending"); code != 1 {
			t.Fatalf("pending with an agent token: exit %d", code)
		}
		for _, args := range [][]string{{"decide", "x"}, {"decide", "x", "maybe"}, {"session", "set", "x"}, {"session", "nap", "x"}, {"allowlist"}, {"audit", "extra"}} {
			if _, code := agRun(t, opEnv, "", args...); code != exitUsage {
				t.Errorf("%q: exit %d, want %d", args, code, exitUsage)
			}
		}
	})
}

// TestAskSurvivesServerRestart: the server restarts while a request is pending; the
// client re-polls across the restart (here through a proxy on a fixed address, as the
// restarted server listens on a new port) and gets the decision made afterwards.
func TestAskSurvivesServerRestart(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, testserver.Options{Server: `approval_timeout = "60s"`})
	var target atomic.Pointer[url.URL]
	u, _ := url.Parse(s.URL)
	target.Store(u)
	// held counts the client's calls in flight through the proxy: the POST the server holds
	// for its wait, then the GET long-polls.
	var held atomic.Int32
	rp := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target.Load()) },
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v1/requests") {
			held.Add(1)
			defer held.Add(-1)
		}
		rp.ServeHTTP(w, r)
	}))
	defer proxy.Close()

	p := agStart(t, agEnv(proxy.URL, testserver.AgentToken), "", "ask", "-session", "restart", "--", "make release")
	id, _ := agPending(t, s, "restart")
	// Restart while the server holds one of the client's calls (the create's wait or a
	// long-poll): the restart releases it and the client must poll again.
	deadline := time.Now().Add(20 * time.Second)
	for held.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no call of the client is in flight")
		}
		time.Sleep(10 * time.Millisecond)
	}
	s = s.Restart(t)
	u, _ = url.Parse(s.URL)
	target.Store(u)
	got := s.Logs()
	if !strings.Contains(got, "rearmed") {
		t.Logf("restart logs: %s", got)
	}
	agDecide(t, s, id, "allow_once", "")
	out, code := p.wait(t)
	if code != 0 || out != agAllowedOnce+"\n" {
		t.Fatalf("exit %d, %q; stderr %q", code, out, p.stderr.String())
	}
}

func TestShellQuoteRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"ls", "-la"}, "ls -la"},
		{[]string{"rm", "-rf", "./build dir"}, "rm -rf './build dir'"},
		{[]string{"echo", "it's", "$HOME", ""}, `echo 'it'\''s' '$HOME' ''`},
		{[]string{"a;b", "c|d", "`x`", "*"}, "'a;b' 'c|d' '`x`' '*'"},
	} {
		if got := shellQuote(tc.argv); got != tc.want {
			t.Errorf("%q: %s, want %s", tc.argv, got, tc.want)
		}
		// The shell parses it back to the same argv.
		script := `set -- ` + shellQuote(tc.argv) + `; for a in "$@"; do printf '[%s]' "$a"; done`
		raw, err := exec.Command("sh", "-c", script).Output()
		if err != nil {
			t.Fatal(err)
		}
		want := ""
		for _, a := range tc.argv {
			want += "[" + a + "]"
		}
		if string(raw) != want {
			t.Errorf("%q round-trips to %s", tc.argv, raw)
		}
	}
}
