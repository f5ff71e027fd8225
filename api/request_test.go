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

const (
	testAgent    = "test-agent-token-0123456789"
	testAgent2   = "test-agent2-token-0123456789"
	testOperator = "test-operator-token-0123456789"
)

// testServer is the real handler on a bbolt store, behind httptest.
type testServer struct {
	url string
	st  *store.Store
}

func newTestServer(t *testing.T, cfg policy.Config) *testServer {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "api.db"), store.Options{})
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
	srv, err := api.New(api.Options{Gate: g, Audit: st, Tokens: []api.Token{
		{Name: "agent", Role: api.RoleAgent, Value: testAgent},
		{Name: "agent2", Role: api.RoleAgent, Value: testAgent2},
		{Name: "operator", Role: api.RoleOperator, Value: testOperator},
	}})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		hs.Close()
		g.Close(context.Background())
		if err := st.Check(); err != nil {
			t.Errorf("bbolt check: %v", err)
		}
		st.Close()
	})
	return &testServer{url: hs.URL, st: st}
}

// call sends one request and decodes the JSON answer into a map.
func (s *testServer) call(t *testing.T, token, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s %s: %d %q is not JSON", method, path, resp.StatusCode, raw)
	}
	return resp.StatusCode, v
}

// The request object always carries "explicit": true only for an allow by a tool
// permission, the allowlist, a safe bin, a grant or a human.
func TestRequestObjectExplicit(t *testing.T) {
	s := newTestServer(t, policy.Config{ToolPermissions: map[string]string{"read_file": "allow"}})
	explicit := func(t *testing.T, v map[string]any, want bool) {
		t.Helper()
		got, present := v["explicit"].(bool)
		if !present || got != want {
			t.Fatalf("explicit = %v (present %v), want %v: %v", v["explicit"], present, want, v)
		}
	}
	t.Run("tool permission", func(t *testing.T) {
		code, v := s.call(t, testAgent, "POST", "/v1/requests", `{"tool":"read_file","args":{"path":"a"},"session":"s"}`)
		if code != 200 || v["allowed"] != true {
			t.Fatalf("%d %v", code, v)
		}
		explicit(t, v, true)
	})
	t.Run("tier default", func(t *testing.T) {
		code, v := s.call(t, testAgent, "POST", "/v1/requests", `{"tool":"write_file","args":{"path":"a"},"session":"s"}`)
		if code != 200 || v["allowed"] != true {
			t.Fatalf("%d %v", code, v)
		}
		explicit(t, v, false)
	})
	t.Run("human", func(t *testing.T) {
		code, v := s.call(t, testAgent, "POST", "/v1/requests", `{"tool":"deploy","args":{},"session":"s","tier":"ask"}`)
		if code != 202 {
			t.Fatalf("%d %v", code, v)
		}
		explicit(t, v, false)
		id := v["id"].(string)
		code, v = s.call(t, testOperator, "POST", "/v1/requests/"+id+"/decision", `{"outcome":"allow_session"}`)
		if code != 200 {
			t.Fatalf("%d %v", code, v)
		}
		explicit(t, v, true)
		_, v = s.call(t, testAgent, "GET", "/v1/requests/"+id, "")
		explicit(t, v, true)
		// The grant answers the repeat, explicitly.
		code, v = s.call(t, testAgent, "POST", "/v1/requests", `{"tool":"deploy","args":{},"session":"s","tier":"ask"}`)
		if code != 200 || v["source"] != "grant" {
			t.Fatalf("%d %v", code, v)
		}
		explicit(t, v, true)
	})
	t.Run("denied", func(t *testing.T) {
		_, v := s.call(t, testAgent, "POST", "/v1/requests", `{"tool":"bash","args":{"command":"rm -rf /"},"session":"s"}`)
		if v["source"] != "floor" {
			t.Fatalf("%v", v)
		}
		explicit(t, v, false)
	})
}

// The request object carries cwd and agent_reason (the API's "reason"), masked, and always
// present.
func TestRequestObjectCwdAndAgentReason(t *testing.T) {
	s := newTestServer(t, policy.Config{})
	_, v := s.call(t, testAgent, "POST", "/v1/requests", `{"tool":"deploy","args":{},"session":"s","tier":"ask","cwd":"/srv/app","reason":"release, password=hunter2hunter2"}`)
	if v["cwd"] != "/srv/app" || v["agent_reason"] != "release, password=[masked]" {
		t.Fatalf("%v", v)
	}
	_, v = s.call(t, testOperator, "GET", "/v1/requests?state=pending", "")
	list := v["requests"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["cwd"] != "/srv/app" {
		t.Fatalf("%v", v)
	}
	_, v = s.call(t, testAgent, "POST", "/v1/requests", `{"tool":"read","args":{},"session":"s","facts":{"read_only":true}}`)
	for _, k := range []string{"cwd", "agent_reason"} {
		if got, ok := v[k]; !ok || got != "" {
			t.Fatalf("%s = %v (present %v)", k, got, ok)
		}
	}
}

// The request object says why the policy asks (ask_reason, with rule), masked, from the
// moment it is pending: in the answer, the long-poll and the operator's pending list. It is
// always present, "" for a request the policy decided.
func TestRequestObjectAskReason(t *testing.T) {
	s := newTestServer(t, policy.Config{})
	code, v := s.call(t, testAgent, "POST", "/v1/requests", `{"tool":"bash","args":{"command":"cat ~/.ssh/id_rsa /srv/ghp_abcdefghijklmnopqrstuvwxyz0123456789/.env"},"session":"s","cwd":"/repo"}`)
	why, _ := v["ask_reason"].(string)
	if code != 202 || v["rule"] != policy.RuleSensitive || !strings.HasPrefix(why, "touches the sensitive path /root/.ssh/id_rsa (~/.ssh) (and 1 more)") {
		t.Fatalf("%d %v", code, v)
	}
	id := v["id"].(string)
	_, v = s.call(t, testAgent, "GET", "/v1/requests/"+id, "")
	if v["ask_reason"] != why {
		t.Fatalf("long-poll: %v", v)
	}
	_, v = s.call(t, testOperator, "GET", "/v1/requests?state=pending", "")
	list := v["requests"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["ask_reason"] != why {
		t.Fatalf("pending list: %v", v)
	}
	code, v = s.call(t, testAgent, "POST", "/v1/requests", `{"tool":"bash","args":{"command":"cat /srv/ghp_abcdefghijklmnopqrstuvwxyz0123456789/.env"},"session":"s","cwd":"/repo"}`)
	why, _ = v["ask_reason"].(string)
	if code != 202 || !strings.HasPrefix(why, "touches the sensitive path /srv/ghp_") || strings.Contains(why, "ghp_abcdefghijklmnopqrstuvwxyz0123456789") {
		t.Fatalf("not masked: %d %v", code, v)
	}
	for _, cmd := range []string{"ls", "rm -rf /"} {
		_, v = s.call(t, testAgent, "POST", "/v1/requests", `{"tool":"bash","args":{"command":"`+cmd+`"},"session":"d","cwd":"/repo"}`)
		if got, ok := v["ask_reason"]; !ok || got != "" || v["state"] == "pending" {
			t.Fatalf("%s: ask_reason = %v (present %v): %v", cmd, got, ok, v)
		}
	}
}

// Tools other than shell tools through the API: a sensitive path in a file tool's argument
// waits for a human even with a tool permission; an executor's code meets the floor.
func TestToolArgumentsOverHTTP(t *testing.T) {
	s := newTestServer(t, policy.Config{ToolPermissions: map[string]string{"Read": "allow"}})
	code, v := s.call(t, testAgent, "POST", "/v1/requests", `{"tool":"Read","args":{"file_path":"~/.ssh/id_rsa"},"session":"t"}`)
	if code != 202 || v["rule"] != "tool.sensitive" {
		t.Fatalf("%d %v", code, v)
	}
	code, v = s.call(t, testAgent, "POST", "/v1/requests", `{"tool":"Read","args":{"file_path":"/repo/a.go"},"session":"t","cwd":"/repo"}`)
	if code != 200 || v["allowed"] != true || v["explicit"] != true {
		t.Fatalf("%d %v", code, v)
	}
	code, v = s.call(t, testAgent, "POST", "/v1/requests", `{"tool":"run_code","args":{"code":"import os; os.system('rm -rf /')"},"session":"t"}`)
	if code != 200 || v["source"] != "floor" {
		t.Fatalf("%d %v", code, v)
	}
	code, v = s.call(t, testAgent, "POST", "/v1/requests", `{"tool":"deleteRepository","args":{"repo":"o/r"},"session":"t"}`)
	if code != 202 {
		t.Fatalf("%d %v", code, v)
	}
}
