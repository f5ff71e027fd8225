package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/approvebot/approvebot/internal/testserver"
)

const (
	agent    = testserver.AgentToken
	agent2   = testserver.Agent2Token
	operator = testserver.OperatorToken
)

func ask(t *testing.T, s *testserver.Server, body map[string]any) (int, map[string]any) {
	t.Helper()
	return s.JSON(t, "POST", "/v1/requests", agent, body)
}

func bash(session, command string) map[string]any {
	return map[string]any{"tool": "bash", "args": map[string]any{"command": command}, "session": session}
}

func decide(t *testing.T, s *testserver.Server, id, outcome, reason string) (int, map[string]any) {
	t.Helper()
	return s.JSON(t, "POST", "/v1/requests/"+id+"/decision", operator, map[string]any{"outcome": outcome, "reason": reason})
}

func poll(t *testing.T, s *testserver.Server, id string) map[string]any {
	t.Helper()
	code, m := s.JSON(t, "GET", "/v1/requests/"+id+"?wait=20s", agent, nil)
	if code != 200 {
		t.Fatalf("poll %s: %d %v", id, code, m)
	}
	return m
}

func want(t *testing.T, m map[string]any, kv ...any) {
	t.Helper()
	for i := 0; i < len(kv); i += 2 {
		k := kv[i].(string)
		if got := m[k]; fmt.Sprint(got) != fmt.Sprint(kv[i+1]) {
			t.Errorf("%s = %v, want %v (object %v)", k, got, kv[i+1], m)
		}
	}
}

func pendingID(t *testing.T, s *testserver.Server, body map[string]any) string {
	t.Helper()
	code, m := ask(t, s, body)
	if code != 202 || m["state"] != "pending" {
		t.Fatalf("want a pending request (202), got %d %v", code, m)
	}
	return m["id"].(string)
}

func TestSpineAllowOnceReachesWaitingAgent(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, testserver.Options{})
	id := pendingID(t, s, bash("s1", "rm -rf ./build"))
	got := make(chan map[string]any, 1)
	go func() { got <- poll(t, s, id) }()
	time.Sleep(100 * time.Millisecond)
	code, m := decide(t, s, id, "allow_once", "")
	if code != 200 {
		t.Fatalf("decide: %d %v", code, m)
	}
	r := <-got
	want(t, r, "state", "allowed", "allowed", true, "outcome", "allow_once", "source", "human", "decided_by", "operator", "summary", "rm -rf ./build")
	// allow_once grants nothing: the same call asks again.
	pendingID(t, s, bash("s1", "rm -rf ./build"))
}

func TestSpineAllowSessionGrantsExactFingerprint(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, testserver.Options{})
	body := bash("s1", "make deploy")
	body["cwd"] = "/repo"
	id := pendingID(t, s, body)
	if code, m := decide(t, s, id, "allow_session", ""); code != 200 {
		t.Fatalf("decide: %d %v", code, m)
	}
	code, m := ask(t, s, body)
	if code != 200 {
		t.Fatalf("repeat: %d %v", code, m)
	}
	want(t, m, "state", "allowed", "allowed", true, "outcome", "allow_session", "source", "grant")

	otherCwd := bash("s1", "make deploy")
	otherCwd["cwd"] = "/elsewhere"
	pendingID(t, s, otherCwd)
	otherArgs := bash("s1", "make deploy-prod")
	otherArgs["cwd"] = "/repo"
	pendingID(t, s, otherArgs)
	otherSession := bash("s2", "make deploy")
	otherSession["cwd"] = "/repo"
	pendingID(t, s, otherSession)
}

func TestSpineDenyQuotesHumanAndIsTerminal(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, testserver.Options{})
	id := pendingID(t, s, bash("s1", "rm -rf /srv/data"))
	if code, m := decide(t, s, id, "deny", "wrong directory, use /tmp"); code != 200 {
		t.Fatalf("decide: %d %v", code, m)
	}
	r := poll(t, s, id)
	want(t, r, "state", "denied", "allowed", false, "outcome", "deny", "source", "human", "reason", "wrong directory, use /tmp")
	msg := r["message"].(string)
	for _, part := range []string{`The user said: "wrong directory, use /tmp"`, "do not retry it, rewrite it, or achieve the same result another way"} {
		if !strings.Contains(strings.ToLower(msg), strings.ToLower(part)) {
			t.Errorf("message %q lacks %q", msg, part)
		}
	}
	code, m := ask(t, s, bash("s1", "rm -rf /srv/data"))
	if code != 200 {
		t.Fatalf("repeat: %d %v", code, m)
	}
	want(t, m, "state", "denied", "allowed", false, "outcome", "deny", "source", "ledger")
}

func TestSpineThreeDenialsPauseUntilUnpause(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, testserver.Options{})
	for i := 0; i < 3; i++ {
		id := pendingID(t, s, bash("p1", fmt.Sprintf("rm -rf /data/%d", i)))
		if code, m := decide(t, s, id, "deny", "no"); code != 200 {
			t.Fatalf("deny %d: %d %v", i, code, m)
		}
	}
	code, m := ask(t, s, bash("p1", "touch /new-thing"))
	if code != 200 {
		t.Fatalf("paused ask: %d %v", code, m)
	}
	want(t, m, "state", "denied", "source", "paused", "outcome", "deny")
	// Another session is not affected.
	pendingID(t, s, bash("p2", "touch /new-thing"))

	if code, m := s.JSON(t, "POST", "/v1/sessions/p1/unpause", agent, nil); code != 403 {
		t.Fatalf("agent unpause: %d %v", code, m)
	}
	code, m = s.JSON(t, "POST", "/v1/sessions/p1/unpause", operator, nil)
	if code != 200 {
		t.Fatalf("unpause: %d %v", code, m)
	}
	want(t, m, "paused", false, "denials", 0)
	pendingID(t, s, bash("p1", "touch /new-thing"))
	// A denied fingerprint stays denied after the unpause.
	code, m = ask(t, s, bash("p1", "rm -rf /data/0"))
	if code != 200 {
		t.Fatalf("denied fingerprint after unpause: %d %v", code, m)
	}
	want(t, m, "source", "ledger")
	// The count was reset: two more denials do not pause.
	for i := 0; i < 2; i++ {
		id := pendingID(t, s, bash("p1", fmt.Sprintf("rm -rf /other/%d", i)))
		decide(t, s, id, "deny", "")
	}
	pendingID(t, s, bash("p1", "touch /still-asks"))
}

func TestSpineUnattendedRefusedAtOnce(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, testserver.Options{})
	body := bash("cron-1", "rm -rf ./cache")
	body["unattended"] = true
	start := time.Now()
	code, m := ask(t, s, body)
	if code != 200 {
		t.Fatalf("%d %v", code, m)
	}
	want(t, m, "state", "denied", "allowed", false, "source", "unattended", "outcome", "deny")
	if !strings.Contains(m["message"].(string), "no human is attached") {
		t.Errorf("message %q does not say no human is attached", m["message"])
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("unattended refusal took %s", time.Since(start))
	}

	// An operator marks a session unattended; its children inherit, and cannot demote it.
	if code, m := s.JSON(t, "PUT", "/v1/sessions/headless", operator, map[string]any{"unattended": true}); code != 200 {
		t.Fatalf("put session: %d %v", code, m)
	}
	child := bash("child-1", "rm -rf ./x")
	child["parent_session"] = "headless"
	child["unattended"] = false
	_, m = ask(t, s, child)
	want(t, m, "source", "unattended")
	// The link is remembered: a later request of the child without parent_session too.
	_, m = ask(t, s, bash("child-1", "rm -rf ./y"))
	want(t, m, "source", "unattended")
	grandchild := bash("grandchild-1", "rm -rf ./z")
	grandchild["parent_session"] = "child-1"
	_, m = ask(t, s, grandchild)
	want(t, m, "source", "unattended")
	// Policy-allowed calls still run unattended.
	_, m = ask(t, s, map[string]any{"tool": "read_file", "args": map[string]any{"path": "a"}, "session": "child-1"})
	want(t, m, "allowed", true, "source", "policy")
	// An agent cannot change session settings.
	if code, _ := s.JSON(t, "PUT", "/v1/sessions/headless", agent, map[string]any{"unattended": false}); code != 403 {
		t.Fatalf("agent PUT session: %d", code)
	}
}

func TestSpineTierResolution(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, testserver.Options{})
	readTool := map[string]any{"tool": "mcp__db__query", "args": map[string]any{"sql": "select 1"}, "session": "t1"}
	// auto (global default): an undeclared, non-destructive tool is allowed.
	_, m := ask(t, s, readTool)
	want(t, m, "allowed", true, "source", "policy")
	// An agent can tighten per request: ask tier gates an undeclared (mutating) tool.
	req := copyMap(readTool)
	req["tier"] = "ask"
	code, m := ask(t, s, req)
	if code != 202 {
		t.Fatalf("request tier ask: %d %v", code, m)
	}
	// A tool declaring read_only stays allowed under ask.
	req["facts"] = map[string]any{"read_only": true}
	_, m = ask(t, s, req)
	want(t, m, "allowed", true)
	// Session tier ask; an agent cannot raise it back to full.
	s.JSON(t, "PUT", "/v1/sessions/t1", operator, map[string]any{"tier": "ask"})
	code, _ = ask(t, s, readTool)
	if code != 202 {
		t.Fatalf("session tier ask did not gate: %d", code)
	}
	raise := copyMap(readTool)
	raise["tier"] = "full"
	code, _ = ask(t, s, raise)
	if code != 202 {
		t.Fatalf("agent raised the tier: %d", code)
	}
	// The auto tier's irreversible tail asks even for a declared-idempotent tool.
	del := map[string]any{"tool": "github__delete_repo", "args": map[string]any{"repo": "x"}, "session": "t2", "facts": map[string]any{"idempotent": true}}
	code, _ = ask(t, s, del)
	if code != 202 {
		t.Fatalf("github__delete_repo under auto: %d", code)
	}
	fileOps := map[string]any{"tool": "file_ops", "args": map[string]any{"operation": "delete", "path": "a"}, "session": "t2"}
	code, _ = ask(t, s, fileOps)
	if code != 202 {
		t.Fatalf("file_ops delete under auto: %d", code)
	}
	fileOps["args"] = map[string]any{"operation": "list", "path": "a"}
	_, m = ask(t, s, fileOps)
	want(t, m, "allowed", true)
}

func copyMap(m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	return out
}

func TestSpineTimeoutIsRefusal(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, testserver.Options{Server: `approval_timeout = "1s"`})
	body := bash("s1", "rm -rf ./tmp")
	body["wait"] = "10s"
	code, m := ask(t, s, body)
	if code != 200 {
		t.Fatalf("%d %v", code, m)
	}
	want(t, m, "state", "denied", "allowed", false, "outcome", "timeout", "source", "timeout")
	// A timeout is not ledgered: the same call asks again.
	pendingID(t, s, bash("s1", "rm -rf ./tmp"))
	// And a late decision loses.
	if code, m := decide(t, s, m["id"].(string), "allow_once", ""); code != 409 {
		t.Fatalf("late decision: %d %v", code, m)
	}
}

func TestSpineCancelledCannotBeApproved(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, testserver.Options{})
	id := pendingID(t, s, bash("s1", "terraform apply"))
	if code, m := s.JSON(t, "DELETE", "/v1/requests/"+id, agent2, nil); code != 404 {
		t.Fatalf("another agent cancelled: %d %v", code, m)
	}
	code, m := s.JSON(t, "DELETE", "/v1/requests/"+id, agent, nil)
	if code != 200 {
		t.Fatalf("cancel: %d %v", code, m)
	}
	want(t, m, "state", "denied", "outcome", "cancelled", "source", "agent", "allowed", false)
	code, m = decide(t, s, id, "allow_once", "")
	if code != 409 {
		t.Fatalf("approve after cancel: %d %v", code, m)
	}
	e := m["error"].(map[string]any)
	want(t, e, "code", "already_decided", "decided_by", "agent")
	want(t, poll(t, s, id), "state", "denied", "outcome", "cancelled")
	// Not in the pending list.
	_, list := s.JSON(t, "GET", "/v1/requests?state=pending", operator, nil)
	if n := len(list["requests"].([]any)); n != 0 {
		t.Fatalf("%d pending after cancel", n)
	}
}

func TestSpineDisconnectCancels(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, testserver.Options{})
	body, _ := json.Marshal(map[string]any{"tool": "bash", "args": map[string]any{"command": "deploy"}, "session": "dc", "wait": "30s"})
	req, _ := http.NewRequest("POST", s.URL+"/v1/requests", strings.NewReader(string(body)))
	req.Header.Set("Authorization", "Bearer "+agent)
	client := &http.Client{Timeout: 500 * time.Millisecond}
	if _, err := client.Do(req); err == nil {
		t.Fatal("expected the client to time out")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, m := s.JSON(t, "GET", "/v1/audit?session=dc", operator, nil)
		entries := m["entries"].([]any)
		if len(entries) == 2 {
			last := entries[1].(map[string]any)
			want(t, last, "outcome", "cancelled", "source", "agent")
			id := last["request_id"].(string)
			if code, _ := decide(t, s, id, "allow_once", ""); code != 409 {
				t.Fatalf("orphan was approvable: %d", code)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("request not cancelled after disconnect: %v", entries)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestSpineConcurrentDecisionsOneWins(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, testserver.Options{})
	id := pendingID(t, s, bash("s1", "kubectl delete ns prod"))
	const n = 50
	var wg sync.WaitGroup
	codes := make([]int, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outcome := "allow_once"
			if i%2 == 1 {
				outcome = "deny"
			}
			codes[i], _ = s.Do(t, "POST", "/v1/requests/"+id+"/decision", operator, map[string]any{"outcome": outcome})
		}()
	}
	wg.Wait()
	wins := 0
	for _, c := range codes {
		switch c {
		case 200:
			wins++
		case 409:
		default:
			t.Errorf("unexpected status %d", c)
		}
	}
	if wins != 1 {
		t.Fatalf("%d decisions won, want exactly 1", wins)
	}
	_, m := s.JSON(t, "GET", "/v1/audit?request="+id, operator, nil)
	decisions := 0
	for _, e := range m["entries"].([]any) {
		if e.(map[string]any)["event"] == "decision" {
			decisions++
		}
	}
	if decisions != 1 {
		t.Fatalf("%d decision entries in the audit trail", decisions)
	}
}

func TestSpineRestartKeepsEverything(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, testserver.Options{Server: `approval_timeout = "3s"`})
	granted := bash("r1", "make release")
	id := pendingID(t, s, granted)
	decide(t, s, id, "allow_session", "")
	deniedID := pendingID(t, s, bash("r1", "rm -rf /var/lib/app"))
	decide(t, s, deniedID, "deny", "never")
	live := pendingID(t, s, bash("r1", "make live"))
	expiring := pendingID(t, s, bash("r1", "make expiring"))

	// Long-poll across the restart: the agent keeps asking the same id.
	s.Kill()
	// The second server's own timeout is short: it applies only to the stale request below.
	s2 := testserver.Start(t, testserver.Options{Server: `approval_timeout = "1s"`, Dir: s.Dir})
	want(t, mustGet(t, s2, id), "state", "allowed", "outcome", "allow_session")
	want(t, mustGet(t, s2, deniedID), "state", "denied", "reason", "never")
	_, m := ask(t, s2, granted)
	want(t, m, "source", "grant", "allowed", true)
	_, m = ask(t, s2, bash("r1", "rm -rf /var/lib/app"))
	want(t, m, "source", "ledger")
	// The live request was re-armed and can still be decided.
	if code, m := decide(t, s2, live, "allow_once", ""); code != 200 {
		t.Fatalf("decide re-armed: %d %v", code, m)
	}
	// The other one times out on the new server's timer (deadline from the first start).
	r := poll(t, s2, expiring)
	want(t, r, "state", "denied", "outcome", "timeout")

	// Pending requests whose deadline passed while the server was down time out at start.
	stale := pendingID(t, s2, bash("r1", "make stale"))
	deadline := s2.ExpiresAt(t, stale)
	s2.Kill()
	testserver.SleepUntil(deadline) // the deadline passes while approvebot is down
	s3 := testserver.Start(t, testserver.Options{Server: `approval_timeout = "3s"`, Dir: s.Dir})
	want(t, mustGet(t, s3, stale), "state", "denied", "outcome", "timeout", "source", "timeout")
}

func mustGet(t *testing.T, s *testserver.Server, id string) map[string]any {
	t.Helper()
	code, m := s.JSON(t, "GET", "/v1/requests/"+id, agent, nil)
	if code != 200 && code != 202 {
		t.Fatalf("get %s: %d %v", id, code, m)
	}
	return m
}

func TestSpineBadInputStoresNothing(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, testserver.Options{Server: "max_body = 4096"})
	cases := []struct {
		name, token, body string
		code              int
		errCode           string
	}{
		{"malformed json", agent, `{"tool":"bash",`, 400, "invalid_json"},
		{"args not object", agent, `{"tool":"bash","args":["rm"],"session":"b"}`, 400, "args_not_object"},
		{"args string", agent, `{"tool":"bash","args":"rm -rf /","session":"b"}`, 400, "args_not_object"},
		{"args null", agent, `{"tool":"bash","args":null,"session":"b"}`, 400, "args_not_object"},
		{"missing tool", agent, `{"args":{},"session":"b"}`, 400, "missing_tool"},
		{"empty tool", agent, `{"tool":"","args":{},"session":"b"}`, 400, "missing_tool"},
		{"missing session", agent, `{"tool":"bash","args":{"command":"ls"}}`, 400, "invalid_request"},
		{"unknown field", agent, `{"tool":"bash","args":{},"session":"b","sudo":true}`, 400, "unknown_field"},
		{"invalid utf8", agent, "{\"tool\":\"bash\",\"args\":{\"command\":\"ls \xff\"},\"session\":\"b\"}", 400, "invalid_utf8"},
		{"duplicate key", agent, `{"tool":"bash","args":{"command":"ls","command":"rm -rf /"},"session":"b"}`, 400, "duplicate_key"},
		{"trailing data", agent, `{"tool":"bash","args":{},"session":"b"} {}`, 400, "invalid_json"},
		{"wrong type", agent, `{"tool":5,"args":{},"session":"b"}`, 400, "invalid_field"},
		{"bad tier", agent, `{"tool":"bash","args":{},"session":"b","tier":"yolo"}`, 400, "invalid_request"},
		{"bad wait", agent, `{"tool":"bash","args":{},"session":"b","wait":"soon"}`, 400, "invalid_wait"},
		{"oversized", agent, `{"tool":"bash","args":{"command":"` + strings.Repeat("a", 5000) + `"},"session":"b"}`, 413, "body_too_large"},
		{"deep nesting", agent, `{"tool":"bash","args":{"a":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `},"session":"b"}`, 400, "too_deep"},
		{"no token", "", `{"tool":"bash","args":{},"session":"b"}`, 401, "unauthorized"},
		{"wrong token", "not-a-token-0123456789", `{"tool":"bash","args":{},"session":"b"}`, 401, "unauthorized"},
		{"empty body", agent, ``, 400, "invalid_json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, raw := s.Do(t, "POST", "/v1/requests", c.token, c.body)
			if code != c.code {
				t.Fatalf("status %d, want %d: %s", code, c.code, raw)
			}
			var m map[string]map[string]string
			if err := json.Unmarshal(raw, &m); err != nil {
				t.Fatalf("error body is not JSON: %s", raw)
			}
			if m["error"]["code"] != c.errCode || m["error"]["message"] == "" {
				t.Fatalf("error %v, want code %q", m["error"], c.errCode)
			}
		})
	}
	_, m := s.JSON(t, "GET", "/v1/audit?limit=1000", operator, nil)
	if n := len(m["entries"].([]any)); n != 0 {
		t.Fatalf("%d audit entries after rejected requests, want 0: %v", n, m["entries"])
	}
}

func TestSpineAuthRoles(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, testserver.Options{})
	id := pendingID(t, s, bash("a1", "deploy"))
	for _, c := range []struct{ method, path string }{
		{"GET", "/v1/requests?state=pending"},
		{"POST", "/v1/requests/" + id + "/decision"},
		{"PUT", "/v1/sessions/a1"},
		{"POST", "/v1/sessions/a1/unpause"},
		{"GET", "/v1/audit"},
	} {
		code, m := s.JSON(t, c.method, c.path, agent, map[string]any{"outcome": "allow_once"})
		if code != 403 {
			t.Errorf("agent %s %s: %d %v", c.method, c.path, code, m)
		}
		code, _ = s.JSON(t, c.method, c.path, "", map[string]any{"outcome": "allow_once"})
		if code != 401 {
			t.Errorf("anonymous %s %s: %d", c.method, c.path, code)
		}
	}
	// Another agent cannot read or cancel the request; it looks like a missing id.
	if code, _ := s.JSON(t, "GET", "/v1/requests/"+id, agent2, nil); code != 404 {
		t.Errorf("agent2 read agent's request: %d", code)
	}
	// Guessed ids are 404 (and never a 500).
	for _, guess := range []string{"aaaaaaaaaaaaaaaaaaaaaaaaaa", "1", "../../etc", strings.Repeat("z", 300)} {
		if code, _ := s.Do(t, "GET", "/v1/requests/"+guess, agent, nil); code != 404 {
			t.Errorf("guess %q: %d", guess, code)
		}
	}
	// The request is still pending and untouched.
	want(t, mustGet(t, s, id), "state", "pending")
}

func TestSpineHealthAndMetrics(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, testserver.Options{})
	code, m := s.JSON(t, "GET", "/healthz", "", nil)
	if code != 200 {
		t.Fatalf("healthz %d", code)
	}
	want(t, m, "status", "ok", "store", true)
	ask(t, s, map[string]any{"tool": "read_file", "args": map[string]any{}, "session": "m"})
	pendingID(t, s, bash("m", "deploy"))
	code, raw := s.Do(t, "GET", "/metrics", "", nil)
	if code != 200 {
		t.Fatalf("metrics %d", code)
	}
	for _, line := range []string{
		`approvebot_decisions_total{outcome="allow_once",source="policy"} 1`,
		`approvebot_pending_requests 1`,
		`approvebot_decision_latency_seconds_bucket`,
		`approvebot_store_commits_total`,
		`approvebot_store_commit_seconds_total`,
	} {
		if !strings.Contains(string(raw), line) {
			t.Errorf("metrics lack %q", line)
		}
	}
}

func TestSpineSecondInstanceRefusedWithClearError(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, testserver.Options{})
	_ = s
	dir := s.Dir
	cmd := testserver.Binary(t)
	out, err := runBinary(cmd, dir, "serve", "-config", dir+"/config.toml")
	if err == nil {
		t.Fatal("second instance started on a locked database")
	}
	if !strings.Contains(out, "is locked by another process") {
		t.Fatalf("error does not say the database is locked: %s", out)
	}
}
