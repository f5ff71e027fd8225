package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/approvebot/approvebot/api"
	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/policy"
	"github.com/approvebot/approvebot/store"
)

const auditOperator = "audit-operator-token-0123456789"

func newAuditServer(t *testing.T) (*store.Store, func(path string) (int, map[string]any)) {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "a.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := policy.NewEngine(policy.Config{}, st)
	if err != nil {
		t.Fatal(err)
	}
	g, err := gate.New(gate.Options{}, st, eng, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := api.New(api.Options{Gate: g, Audit: st, Tokens: []api.Token{{Name: "op", Role: api.RoleOperator, Value: auditOperator}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close(context.Background()); st.Close() })
	get := func(path string) (int, map[string]any) {
		t.Helper()
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("Authorization", "Bearer "+auditOperator)
		w := httptest.NewRecorder()
		srv.Handler().ServeHTTP(w, req)
		var m map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil {
			t.Fatalf("%s: %d %q", path, w.Code, w.Body.String())
		}
		return w.Code, m
	}
	return st, get
}

func TestAuditEndpointFiltersAndPages(t *testing.T) {
	st, get := newAuditServer(t)
	ctx := context.Background()
	base := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for i := 0; i < 30; i++ {
		e := approval.AuditEntry{
			Time: base.Add(time.Duration(i) * time.Minute), Event: approval.EventDecision, RequestID: fmt.Sprintf("r%d", i%3),
			Session: fmt.Sprintf("s%d", i%2), Agent: "a", Tool: []string{"bash", "read_file"}[i%2],
			Outcome: []approval.Outcome{approval.OutcomeAllowOnce, approval.OutcomeDeny}[i%2], Source: approval.SourcePolicy,
		}
		if err := st.AppendAudit(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	count := func(m map[string]any) int { return len(m["entries"].([]any)) }
	tests := []struct {
		query string
		want  int
	}{
		{"", 30},
		{"request=r1", 10},
		{"session=s0&tool=bash", 15},
		{"session=s0&tool=read_file", 0},
		{"agent=a&outcome=deny", 15},
		{"source=policy", 30},
		{"source=human", 0},
		{"since=" + url.QueryEscape(base.Add(20*time.Minute).Format(time.RFC3339)), 10},
		{"until=" + url.QueryEscape(base.Add(5*time.Minute).Format(time.RFC3339)), 5},
		{"since=" + base.Format(time.RFC3339) + "&until=" + base.Add(2*time.Minute).Format(time.RFC3339), 2},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			code, m := get("/v1/audit?" + tt.query)
			if code != 200 || count(m) != tt.want {
				t.Fatalf("%d: %d entries, want %d: %v", code, count(m), tt.want, m)
			}
			if nb, ok := m["next_before"].(float64); !ok || nb != 0 {
				t.Fatalf("next_before = %v, want 0 on a complete answer", m["next_before"])
			}
		})
	}

	// Page backwards four entries at a time: every entry once, newest pages first.
	seen := map[float64]bool{}
	before := ""
	for pages := 0; pages < 20; pages++ {
		code, m := get("/v1/audit?limit=4" + before)
		if code != 200 {
			t.Fatalf("%d %v", code, m)
		}
		for _, e := range m["entries"].([]any) {
			seq := e.(map[string]any)["seq"].(float64)
			if seen[seq] {
				t.Fatalf("entry %v on two pages", seq)
			}
			seen[seq] = true
		}
		nb := m["next_before"].(float64)
		if nb == 0 {
			break
		}
		before = fmt.Sprintf("&before=%d", int64(nb))
	}
	if len(seen) != 30 {
		t.Fatalf("pages held %d entries, want 30", len(seen))
	}
}

func TestAuditEndpointRefusesBadParameters(t *testing.T) {
	_, get := newAuditServer(t)
	tests := []struct{ query, code string }{
		{"limit=0", "invalid_limit"},
		{"limit=-1", "invalid_limit"},
		{"limit=x", "invalid_limit"},
		{"before=0", "invalid_before"},
		{"before=-5", "invalid_before"},
		{"before=18446744073709551616", "invalid_before"},
		{"since=yesterday", "invalid_since"},
		{"until=-1h", "invalid_until"},
		{"outcome=denied", "invalid_outcome"},
		{"outcome=ALLOW_ONCE", "invalid_outcome"},
		{"sesion=s1", "unknown_parameter"},
		{"session=a&session=b", "duplicate_parameter"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			code, m := get("/v1/audit?" + tt.query)
			e, _ := m["error"].(map[string]any)
			if code != 400 || e["code"] != tt.code {
				t.Fatalf("%d %v, want 400 %s", code, m, tt.code)
			}
		})
	}
}

func TestAuditCountsEndpoint(t *testing.T) {
	st, get := newAuditServer(t)
	ctx := context.Background()
	base := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for i, o := range []approval.Outcome{approval.OutcomeAllowOnce, approval.OutcomeAllowOnce, approval.OutcomeDeny} {
		st.AppendAudit(ctx, approval.AuditEntry{Time: base.Add(time.Duration(i) * 50 * time.Minute), Event: approval.EventDecision, Outcome: o})
	}
	code, m := get("/v1/audit/counts?since=" + base.Format(time.RFC3339))
	want := `[map[hour:2026-03-01T10:00:00Z outcomes:map[allow_once:2]] map[hour:2026-03-01T11:00:00Z outcomes:map[deny:1]]]`
	if code != 200 || fmt.Sprint(m["hours"]) != want {
		t.Fatalf("%d %v\nwant hours %s", code, m, want)
	}
	if code, m := get("/v1/audit/counts?until=soon"); code != 400 || !strings.Contains(fmt.Sprint(m), "invalid_until") {
		t.Fatalf("%d %v", code, m)
	}
	if code, m := get("/v1/audit/counts?session=x"); code != 400 || !strings.Contains(fmt.Sprint(m), "unknown_parameter") {
		t.Fatalf("%d %v", code, m)
	}
}
