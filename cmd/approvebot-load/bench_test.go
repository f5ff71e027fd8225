package main

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/approvebot/approvebot/api"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/policy"
	"github.com/approvebot/approvebot/metrics"
	"github.com/approvebot/approvebot/store"
)

// The loopback benchmarks build the server the way `approvebot serve` does (store, policy,
// gate, API, metrics, an info-level text log, http.Server with its timeouts) in this
// process and drive it over real loopback TCP, so `-cpuprofile` shows where a request's CPU
// goes on both sides:
//
//	go test -run '^$' -bench Loopback -benchtime 5s -cpuprofile /tmp/cpu.out ./cmd/approvebot-load/
//	go tool pprof -top -cum /tmp/cpu.out

const (
	benchAgent    = "bench-agent-token-0123456789"
	benchOperator = "bench-operator-token-0123456789"
)

func loopbackServer(b *testing.B) (string, *store.Store) {
	b.Helper()
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(devnull, &slog.HandlerOptions{Level: slog.LevelInfo}))
	st, err := store.Open(filepath.Join(b.TempDir(), "bench.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	eng, err := policy.NewEngine(policy.Config{ToolPermissions: map[string]string{deniedTool: "deny"}}, st)
	if err != nil {
		b.Fatal(err)
	}
	m := metrics.New(nil, nil)
	g, err := gate.New(gate.Options{OperatorOnly: true, Logger: log, Metrics: m}, st, eng, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	srv, err := api.New(api.Options{Gate: g, Audit: st, Metrics: m, Logger: log, RateLimit: 1e9, RateBurst: 1e9,
		Tokens: []api.Token{{Name: "agent", Role: api.RoleAgent, Value: benchAgent}, {Name: "operator", Role: api.RoleOperator, Value: benchOperator}}})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second,
		IdleTimeout: 120 * time.Second, MaxHeaderBytes: 32 << 10}
	go hs.Serve(ln)
	b.Cleanup(func() {
		hs.Close()
		g.Close(context.Background())
		st.Close()
		devnull.Close()
	})
	return "http://" + ln.Addr().String(), st
}

func benchPost(b *testing.B, body string, want string) {
	url, st := loopbackServer(b)
	a := newAPI(url, 256)
	defer a.close()
	var n atomic.Int64
	before := st.CommitStats()
	b.SetParallelism(32) // 64 concurrent agents on 2 CPUs
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			code, raw, err := a.do(context.Background(), "POST", "/v1/requests", benchAgent, []byte(body))
			if err != nil || code != 200 || !strings.Contains(string(raw), want) {
				b.Errorf("%d %v %s", code, err, raw)
				return
			}
			n.Add(1)
		}
	})
	b.ReportMetric(float64(n.Load())/b.Elapsed().Seconds(), "req/s")
	if after := st.CommitStats(); after.Commits > before.Commits {
		commits := float64(after.Commits - before.Commits)
		b.ReportMetric(float64(after.Writes-before.Writes)/commits, "writes/commit")
		b.ReportMetric(float64((after.Time-before.Time).Microseconds())/1000/commits, "ms/commit")
	}
}

// BenchmarkLoopbackPolicyAllowed is the policy-allowed request of the load tool.
func BenchmarkLoopbackPolicyAllowed(b *testing.B) {
	benchPost(b, `{"tool":"read_file","args":{"path":"/srv/app/README.md"},"session":"bench","facts":{"read_only":true}}`, `"allowed":true`)
}

// BenchmarkLoopbackFloor is the floor-refused request of the load tool.
func BenchmarkLoopbackFloor(b *testing.B) {
	benchPost(b, `{"tool":"bash","args":{"command":"rm -rf /"},"session":"bench"}`, `"source":"floor"`)
}
