package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/approvebot/approvebot/api"
	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/policy"
	"github.com/approvebot/approvebot/store"
)

const (
	faultAgent    = "fault-agent-token-0123456789"
	faultOperator = "fault-operator-token-0123456789"
)

type faultRig struct {
	url  string
	srv  *api.Server
	g    *gate.Gate
	st   *store.Store
	path string
}

func newFaultRig(t *testing.T, probe time.Duration) *faultRig {
	t.Helper()
	path := filepath.Join(t.TempDir(), "data", "f.db")
	st, err := store.Open(path, store.Options{ProbeInterval: probe})
	if err != nil {
		t.Fatal(err)
	}
	eng, _ := policy.NewEngine(policy.Config{}, st)
	g, _ := gate.New(gate.Options{OperatorOnly: true}, st, eng, nil, nil)
	srv, err := api.New(api.Options{
		Gate: g, Audit: st, Backup: st,
		Tokens: []api.Token{{Name: "agent", Role: api.RoleAgent, Value: faultAgent}, {Name: "op", Role: api.RoleOperator, Value: faultOperator}},
		Health: func(context.Context) (api.StoreHealth, map[string]gate.Health) {
			h := st.Health()
			return api.StoreHealth{Readable: st.Ping() == nil, Writable: h.Writable, Error: h.Error}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		g.Close(context.Background())
		srv.Drain(context.Background())
		hs.Close()
		st.Close()
	})
	return &faultRig{url: hs.URL, srv: srv, g: g, st: st, path: path}
}

func (r *faultRig) do(t *testing.T, method, path, token, body string) (int, http.Header, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, r.url+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, resp.Header, m
}

func (r *faultRig) pending(t *testing.T, cmd string) string {
	t.Helper()
	code, _, m := r.do(t, "POST", "/v1/requests", faultAgent, `{"tool":"bash","args":{"command":"`+cmd+`"},"session":"s"}`)
	if code != 202 {
		t.Fatalf("want pending: %d %v", code, m)
	}
	return m["id"].(string)
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestParkedLongPoll: a long-poll waits without a goroutine of net/http's and ends with the
// decision, with the end of its wait, or when the gate closes.
func TestParkedLongPoll(t *testing.T) {
	t.Run("the decision", func(t *testing.T) {
		r := newFaultRig(t, -1)
		id := r.pending(t, "deploy a")
		type answer struct {
			code int
			m    map[string]any
		}
		got := make(chan answer, 1)
		go func() {
			code, _, m := r.do(t, "GET", "/v1/requests/"+id+"?wait=30s", faultAgent, "")
			got <- answer{code, m}
		}()
		waitUntil(t, "the agent waiting", func() bool { return r.srv.Waiting() == 1 })
		if code, _, m := r.do(t, "POST", "/v1/requests/"+id+"/decision", faultOperator, `{"outcome":"allow_once"}`); code != 200 {
			t.Fatalf("decide: %d %v", code, m)
		}
		a := <-got
		if a.code != 200 || a.m["allowed"] != true || a.m["state"] != "allowed" {
			t.Fatalf("the waiting agent got %d %v", a.code, a.m)
		}
		waitUntil(t, "the waiter count back to 0", func() bool { return r.srv.Waiting() == 0 })
	})
	t.Run("the end of the wait", func(t *testing.T) {
		r := newFaultRig(t, -1)
		id := r.pending(t, "deploy b")
		code, _, m := r.do(t, "GET", "/v1/requests/"+id+"?wait=100ms", faultAgent, "")
		if code != 202 || m["state"] != "pending" {
			t.Fatalf("after the wait: %d %v", code, m)
		}
	})
	t.Run("the gate closing", func(t *testing.T) {
		r := newFaultRig(t, -1)
		id := r.pending(t, "deploy c")
		got := make(chan int, 1)
		go func() {
			code, _, _ := r.do(t, "GET", "/v1/requests/"+id+"?wait=30s", faultAgent, "")
			got <- code
		}()
		waitUntil(t, "the agent waiting", func() bool { return r.srv.Waiting() == 1 })
		r.g.Close(context.Background())
		if code := <-got; code != 202 {
			t.Fatalf("released by the close: %d", code)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := r.srv.Drain(ctx); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("an agent that goes away cancels its request", func(t *testing.T) {
		r := newFaultRig(t, -1)
		conn, err := net.Dial("tcp", strings.TrimPrefix(r.url, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		body := `{"tool":"bash","args":{"command":"deploy d"},"session":"s","wait":"30s"}`
		req := "POST /v1/requests HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + faultAgent +
			"\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
		conn.Write([]byte(req))
		waitUntil(t, "the agent waiting", func() bool { return r.srv.Waiting() == 1 })
		conn.Close()
		waitUntil(t, "the request cancelled", func() bool {
			list := r.g.LivePending("", "")
			return len(list) == 0 && r.srv.Waiting() == 0
		})
		page, _ := r.st.Audit(context.Background(), approval.AuditQuery{})
		last := page.Entries[len(page.Entries)-1]
		if last.Outcome != approval.OutcomeCancelled {
			t.Fatalf("the abandoned request ended as %+v", last)
		}
	})
}

// TestStoreThatCannotWrite: with the database file gone, /healthz says unhealthy and every
// request that needs a write is 503 store_unavailable with Retry-After, never a 500.
func TestStoreThatCannotWrite(t *testing.T) {
	r := newFaultRig(t, 10*time.Millisecond)
	if code, _, m := r.do(t, "GET", "/healthz", "", ""); code != 200 || m["status"] != "ok" || m["store_writable"] != true {
		t.Fatalf("healthy: %d %v", code, m)
	}
	id := r.pending(t, "deploy e")
	os.RemoveAll(filepath.Dir(r.path))
	waitUntil(t, "the store to notice", func() bool { return r.st.Health().Lost })
	code, _, m := r.do(t, "GET", "/healthz", "", "")
	if code != 503 || m["status"] != "unhealthy" || m["store_writable"] != false || !strings.Contains(m["store_error"].(string), "deleted") {
		t.Fatalf("healthz: %d %v", code, m)
	}
	for _, c := range []struct{ method, path, token, body string }{
		{"POST", "/v1/requests", faultAgent, `{"tool":"bash","args":{"command":"deploy f"},"session":"s"}`},
		{"POST", "/v1/requests", faultAgent, `{"tool":"read_file","args":{},"session":"s"}`},
		{"POST", "/v1/requests/" + id + "/decision", faultOperator, `{"outcome":"allow_once"}`},
		{"DELETE", "/v1/requests/" + id, faultAgent, ""},
		{"POST", "/v1/sessions/s/unpause", faultOperator, ""},
		{"PUT", "/v1/sessions/s", faultOperator, `{"tier":"ask"}`},
	} {
		code, hdr, m := r.do(t, c.method, c.path, c.token, c.body)
		e, _ := m["error"].(map[string]any)
		if code != 503 || e["code"] != "store_unavailable" || hdr.Get("Retry-After") == "" || strings.Contains(e["message"].(string), r.path) {
			t.Errorf("%s %s: %d %v (Retry-After %q)", c.method, c.path, code, m, hdr.Get("Retry-After"))
		}
	}
	if code, _, m := r.do(t, "GET", "/v1/requests/"+id, faultAgent, ""); code != 202 || m["allowed"] != false {
		t.Fatalf("reads go on: %d %v", code, m)
	}
}

func TestBackupEndpoint(t *testing.T) {
	r := newFaultRig(t, -1)
	id := r.pending(t, "deploy g")
	if code, _, _ := r.do(t, "GET", "/v1/backup", faultAgent, ""); code != 403 {
		t.Fatalf("an agent took a backup: %d", code)
	}
	req, _ := http.NewRequest("GET", r.url+"/v1/backup", nil)
	req.Header.Set("Authorization", "Bearer "+faultOperator)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || resp.ContentLength != int64(len(raw)) || resp.Header.Get("Content-Type") != "application/octet-stream" {
		t.Fatalf("backup: %d, %d of %d bytes, %q", resp.StatusCode, len(raw), resp.ContentLength, resp.Header.Get("Content-Type"))
	}
	copyPath := filepath.Join(t.TempDir(), "copy.db")
	os.WriteFile(copyPath, raw, 0o600)
	rep, err := store.Verify(copyPath)
	if err != nil || !rep.OK() {
		t.Fatalf("the copy does not verify: %+v %v", rep, err)
	}
	c, err := store.Open(copyPath, store.Options{ProbeInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, err := c.Get(context.Background(), id); err != nil || got.State != approval.StatePending {
		t.Fatalf("the copy lacks the pending request: %+v %v", got, err)
	}
	if !bytes.HasPrefix(raw[16:20], []byte{0xed, 0xda, 0x0c, 0xed}) {
		t.Fatalf("not a bbolt file: % x", raw[16:20])
	}
}
