package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/approvebot/approvebot/api"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/policy"
	"github.com/approvebot/approvebot/store"
)

const benchToken = "bench-agent-token-0123456789"

func newHandler(tb testing.TB) http.Handler {
	tb.Helper()
	st, err := store.Open(filepath.Join(tb.TempDir(), "b.db"), store.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	eng, err := policy.NewEngine(policy.Config{}, st)
	if err != nil {
		tb.Fatal(err)
	}
	g, err := gate.New(gate.Options{}, st, eng, nil, nil)
	if err != nil {
		tb.Fatal(err)
	}
	srv, err := api.New(api.Options{Gate: g, Audit: st, Tokens: []api.Token{{Name: "agent", Role: api.RoleAgent, Value: benchToken}}})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { g.Close(context.Background()); st.Close() })
	return srv.Handler()
}

// BenchmarkHTTPPolicyDecided measures one policy-decided request through the HTTP handler
// (auth, strict JSON, gate, durable store and audit), 128 callers at once.
func BenchmarkHTTPPolicyDecided(b *testing.B) {
	h := newHandler(b)
	body := `{"tool":"read_file","args":{"path":"/etc/hosts"},"session":"bench","facts":{"read_only":true}}`
	b.ReportAllocs()
	b.SetParallelism(64)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req := httptest.NewRequest("POST", "/v1/requests", strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+benchToken)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != 200 || !strings.Contains(w.Body.String(), `"allowed":true`) {
				b.Fatalf("%d %s", w.Code, w.Body.String())
			}
		}
	})
}
