package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/approvebot/approvebot/api"
	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/ledger"
	"github.com/approvebot/approvebot/core/policy"
	"github.com/approvebot/approvebot/metrics"
	"github.com/approvebot/approvebot/store"
)

// FuzzAPI drives the real handler (auth, strict JSON, gate, bbolt store) with random
// methods, paths, bodies, tokens and headers. Invariants, whatever the input:
//   - no panic, and no 5xx except 503;
//   - every JSON answer parses; no request object is allowed:true unless its state is
//     allowed, none is explicit:true unless it is allowed, and no pending one carries a
//     decision;
//   - a shell command filed with POST /v1/requests is allowed by the policy only when the
//     policy engine allows it even at its most permissive tier, and a command the hardline
//     floor refuses is answered denied by the floor (differential check against
//     policy.Engine.Evaluate);
//   - an answer 4xx stored nothing (no request, decision, session change or audit entry).
//
// In a path, {id} stands for a fresh pending request of "agent", {id2} for one of "agent2"
// and {decided} for a request already decided. The seed corpus is in testdata/fuzz/FuzzAPI.
//
//	go test -run '^$' -fuzz FuzzAPI -fuzztime 60s ./api/
func FuzzAPI(f *testing.F) {
	fz := newFuzzServer(f)
	f.Add("POST", "/v1/requests", uint8(1), []byte(`{"tool":"bash","args":{"command":"rm -rf ./build"},"session":"s1"}`), "")
	f.Add("POST", "/v1/requests/{id}/decision", uint8(3), []byte(`{"outcome":"allow_once"}`), "")
	f.Fuzz(func(t *testing.T, method, path string, token uint8, body []byte, headers string) {
		fz.one(t, method, path, token, body, headers)
	})
}

const (
	fuzzAgent    = "fuzz-agent-token-0123456789"
	fuzzAgent2   = "fuzz-agent2-token-0123456789"
	fuzzOperator = "fuzz-operator-token-0123456789"
)

type markKey struct{}

// countingStore counts the writes made on behalf of the request under test (its context
// carries markKey); background work (timers) is not counted.
type countingStore struct {
	*store.Store
	writes atomic.Int64
}

func (c *countingStore) count(ctx context.Context, err error) {
	if err == nil && ctx.Value(markKey{}) != nil {
		c.writes.Add(1)
	}
}

func (c *countingStore) Create(ctx context.Context, r *approval.Request, a approval.AuditEntry) error {
	err := c.Store.Create(ctx, r, a)
	c.count(ctx, err)
	return err
}

func (c *countingStore) Resolve(ctx context.Context, id string, res approval.Resolution, eff ledger.Effects) (approval.Request, bool, error) {
	r, won, err := c.Store.Resolve(ctx, id, res, eff)
	if won {
		c.count(ctx, err)
	}
	return r, won, err
}

func (c *countingStore) AddCard(ctx context.Context, id string, ref approval.CardRef) (approval.Request, error) {
	r, err := c.Store.AddCard(ctx, id, ref)
	c.count(ctx, err)
	return r, err
}

func (c *countingStore) LinkParent(ctx context.Context, agent, session, parent string) error {
	err := c.Store.LinkParent(ctx, agent, session, parent)
	c.count(ctx, err)
	return err
}

func (c *countingStore) UpdateSession(ctx context.Context, agent, name string, set ledger.Settings, a approval.AuditEntry) (ledger.Records, error) {
	r, err := c.Store.UpdateSession(ctx, agent, name, set, a)
	c.count(ctx, err)
	return r, err
}

func (c *countingStore) Unpause(ctx context.Context, agent, name string, a approval.AuditEntry) (ledger.Records, error) {
	r, err := c.Store.Unpause(ctx, agent, name, a)
	c.count(ctx, err)
	return r, err
}

func (c *countingStore) AppendAudit(ctx context.Context, e approval.AuditEntry) error {
	err := c.Store.AppendAudit(ctx, e)
	c.count(ctx, err)
	return err
}

func (c *countingStore) ListAllowlistJSON(ctx context.Context) (any, error) {
	items, err := c.Store.ListAllowlist(ctx)
	if items == nil {
		items = []store.AllowlistItem{}
	}
	return items, err
}

func (c *countingStore) RevokeAllowlist(ctx context.Context, sel api.AllowlistSelector, a approval.AuditEntry) (any, int, error) {
	revoked, err := c.Store.RevokeAllowlist(ctx, store.AllowlistSelector(sel), a)
	if len(revoked) > 0 {
		c.count(ctx, err)
	}
	return revoked, len(revoked), err
}

type fuzzServer struct {
	h       http.Handler
	eng     *policy.Engine
	st      *countingStore
	shell   map[string]bool
	decided string
}

func newFuzzServer(tb testing.TB) *fuzzServer {
	st, err := store.Open(filepath.Join(tb.TempDir(), "fuzz.db"), store.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	cs := &countingStore{Store: st}
	cfg := policy.Config{ToolPermissions: map[string]string{"drop_database": "deny"}}
	eng, err := policy.NewEngine(cfg, st)
	if err != nil {
		tb.Fatal(err)
	}
	g, err := gate.New(gate.Options{ApprovalTimeout: time.Hour, OperatorOnly: true}, cs, eng, nil, nil)
	if err != nil {
		tb.Fatal(err)
	}
	srv, err := api.New(api.Options{
		Gate: g, Audit: st, Allowlist: cs, MaxBody: 64 << 10, MaxWait: time.Millisecond,
		Metrics: metrics.New(nil, nil),
		Tokens: []api.Token{
			{Name: "agent", Role: api.RoleAgent, Value: fuzzAgent},
			{Name: "agent2", Role: api.RoleAgent, Value: fuzzAgent2},
			{Name: "operator", Role: api.RoleOperator, Value: fuzzOperator},
		},
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		g.Close(context.Background())
		if err := st.Check(); err != nil {
			tb.Errorf("bbolt check: %v", err)
		}
		st.Close()
	})
	fz := &fuzzServer{h: srv.Handler(), eng: eng, st: cs, shell: map[string]bool{}}
	for tool := range eng.Config().Exec.ShellTools {
		fz.shell[tool] = true
	}
	fz.decided = fz.create(tb, fuzzAgent, `{"tool":"drop_database","args":{},"session":"fuzz-setup"}`, 200)
	return fz
}

// create files a request outside the fuzzed call and returns its id.
func (fz *fuzzServer) create(tb testing.TB, token, body string, want int) string {
	req := httptest.NewRequest("POST", "/v1/requests", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	w := httptest.NewRecorder()
	fz.h.ServeHTTP(w, req)
	var v struct {
		ID string `json:"id"`
	}
	if w.Code != want || json.Unmarshal(w.Body.Bytes(), &v) != nil || v.ID == "" {
		tb.Fatalf("setup request: %d %s", w.Code, w.Body.String())
	}
	return v.ID
}

var fuzzSeq atomic.Int64

func (fz *fuzzServer) pending(tb testing.TB, token string) string {
	// A fresh command in a fresh session: no grant, denial or pause applies to it.
	n := strconv.FormatInt(fuzzSeq.Add(1), 10)
	return fz.create(tb, token, `{"tool":"bash","args":{"command":"deploy fuzz-`+n+`"},"session":"fuzz-pending-`+n+`"}`, 202)
}

func (fz *fuzzServer) one(t *testing.T, method, path string, token uint8, body []byte, headers string) {
	if strings.Contains(path, "{id}") {
		path = strings.ReplaceAll(path, "{id}", fz.pending(t, fuzzAgent))
	}
	if strings.Contains(path, "{id2}") {
		path = strings.ReplaceAll(path, "{id2}", fz.pending(t, fuzzAgent2))
	}
	path = strings.ReplaceAll(path, "{decided}", fz.decided)
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	req, err := http.NewRequest(method, "http://approvebot.test"+path, bytes.NewReader(body))
	if err != nil {
		return // not an HTTP request a server could receive
	}
	switch token % 6 {
	case 1:
		req.Header.Set("Authorization", "Bearer "+fuzzAgent)
	case 2:
		req.Header.Set("Authorization", "Bearer "+fuzzAgent2)
	case 3:
		req.Header.Set("Authorization", "Bearer "+fuzzOperator)
	case 4:
		req.Header.Set("Authorization", "Bearer "+fuzzOperator[:len(fuzzOperator)-1]+"X")
	case 5:
		req.Header.Set("Authorization", "bearer   "+fuzzAgent+" ")
	}
	for _, line := range strings.Split(headers, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && k != "" {
			req.Header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
		}
	}
	req = req.WithContext(context.WithValue(req.Context(), markKey{}, true))
	before := fz.st.writes.Load()
	w := httptest.NewRecorder()
	fz.h.ServeHTTP(w, req)
	writes := fz.st.writes.Load() - before

	if w.Code >= 500 && w.Code != http.StatusServiceUnavailable {
		t.Fatalf("%s %s: status %d: %s", method, path, w.Code, w.Body.String())
	}
	if w.Code >= 400 && w.Code < 500 && writes != 0 {
		t.Fatalf("%s %s: status %d but %d writes were stored: %s", method, path, w.Code, writes, w.Body.String())
	}
	if !strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
		return
	}
	var v any
	if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
		t.Fatalf("%s %s: status %d: answer is not JSON: %q", method, path, w.Code, w.Body.String())
	}
	checkObjects(t, v)
	if req.Method == "POST" && req.URL.Path == "/v1/requests" && (w.Code == 200 || w.Code == 202) {
		fz.checkVerdict(t, body, v.(map[string]any))
	}
}

// checkObjects walks an answer and checks every request object in it.
func checkObjects(t *testing.T, v any) {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			checkObjects(t, e)
		}
	case map[string]any:
		if allowed, ok := x["allowed"].(bool); ok {
			state, _ := x["state"].(string)
			if allowed && state != "allowed" {
				t.Fatalf("allowed:true in state %q: %v", state, x)
			}
			if state == "pending" && (allowed || x["outcome"] != nil) {
				t.Fatalf("pending request with a decision: %v", x)
			}
			if explicit, _ := x["explicit"].(bool); explicit && !allowed {
				t.Fatalf("explicit:true on a request that is not allowed: %v", x)
			}
		}
		for _, e := range x {
			checkObjects(t, e)
		}
	}
}

// checkVerdict compares the answer to a filed shell command with the policy engine's own
// verdict at the most permissive tier.
func (fz *fuzzServer) checkVerdict(t *testing.T, body []byte, got map[string]any) {
	var in struct {
		Tool  string          `json:"tool"`
		Args  map[string]any  `json:"args"`
		Cwd   string          `json:"cwd"`
		Facts *approval.Facts `json:"facts"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&in); err != nil {
		t.Fatalf("accepted a body encoding/json cannot decode (%v): %q", err, body)
	}
	if !fz.shell[in.Tool] {
		return
	}
	var facts approval.Facts
	if in.Facts != nil {
		facts = *in.Facts
	}
	agent, _ := got["agent"].(string)
	ev := fz.eng.Evaluate(policy.Input{Tool: in.Tool, Args: in.Args, Cwd: in.Cwd, Agent: agent, Facts: facts, Tier: policy.TierFull})
	state, _ := got["state"].(string)
	source, _ := got["source"].(string)
	if ev.Source == approval.SourceFloor && (state != "denied" || source != "floor") {
		t.Fatalf("the floor refuses %q (%s) but the answer is %s by %q: %v", in.Args, ev.Rule, state, source, got)
	}
	if got["allowed"] == true && (source == "policy" || source == "rule") && ev.Verdict != policy.Allow {
		t.Fatalf("allowed by %s although the policy says %s (%s): %q", source, ev.Verdict, ev.Rule, body)
	}
}
