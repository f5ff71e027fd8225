package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/approvebot/approvebot/internal/testserver"
)

// The crash test: SIGKILL the server in the middle of mixed load, restart it on the same
// file, and check that every decision any client received is in the store and in the audit
// trail exactly once, that no request was decided twice, and that bbolt's consistency check
// passes on the file the crash left behind.

var crashOpts = testserver.Options{
	Server: `approval_timeout = "2s"
rate_limit = 1e9
rate_burst = 1000000000`,
	Config: `[policy.tool_permissions]
"drop_database" = "deny"`,
}

// seen is one decision a client received: an agent's answer, a poll, a cancel or an
// operator's decision.
type seen struct {
	by, state, outcome, source string
}

type decisionLog struct {
	mu  sync.Mutex
	got map[string][]seen
}

func (l *decisionLog) add(id string, s seen) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got[id] = append(l.got[id], s)
}

func (l *decisionLog) byReceiver() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]int{}
	for _, v := range l.got {
		for _, s := range v {
			out[s.by+"/"+s.source]++
		}
	}
	return out
}

func (l *decisionLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.got)
}

// loadClient talks to the server without failing the test on transport errors: the server
// is killed under it.
type loadClient struct {
	url string
	hc  *http.Client
}

func (c *loadClient) do(ctx context.Context, method, path, token string, body any) (int, map[string]any, error) {
	var r io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		r = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.url+path, r)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		// A cut answer is not an answer: the client never learned the decision.
		return 0, nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return resp.StatusCode, nil, fmt.Errorf("answer %d is not JSON: %q", resp.StatusCode, raw)
	}
	return resp.StatusCode, m, nil
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func record(log *decisionLog, by string, m map[string]any) bool {
	if m == nil || str(m, "id") == "" || str(m, "state") == "" || str(m, "state") == "pending" {
		return false
	}
	log.add(str(m, "id"), seen{by: by, state: str(m, "state"), outcome: str(m, "outcome"), source: str(m, "source")})
	return true
}

// crashLoad runs agents and an approver until ctx ends or the server goes away.
func crashLoad(ctx context.Context, url string, log *decisionLog, budget *atomic.Int64) (wait func()) {
	c := &loadClient{url: url, hc: &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	var wg sync.WaitGroup
	for a := 0; a < 8; a++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			token := agent
			if a%2 == 1 {
				token = agent2
			}
			for n := 0; ctx.Err() == nil && budget.Add(-1) >= 0; n++ {
				var body map[string]any
				switch n % 4 {
				case 0:
					body = map[string]any{"tool": "read_file", "args": map[string]any{"path": fmt.Sprint("/f", n)}, "session": "crash", "facts": map[string]any{"read_only": true}}
				case 1:
					body = map[string]any{"tool": "drop_database", "args": map[string]any{"n": n}, "session": "crash"}
				case 2:
					body = map[string]any{"tool": "bash", "args": map[string]any{"command": "rm -rf /"}, "session": "crash"}
				case 3:
					body = map[string]any{"tool": "bash", "args": map[string]any{"command": fmt.Sprintf("deploy crash-%d-%d", a, n)},
						"session": fmt.Sprintf("crash-%d-%d", a, n), "wait": "300ms"}
				}
				code, m, err := c.do(ctx, "POST", "/v1/requests", token, body)
				if err != nil {
					return // the server is gone
				}
				if code == 200 {
					record(log, "agent", m)
					continue
				}
				if code != 202 {
					continue
				}
				id := str(m, "id")
				if n%3 == 0 {
					// The agent gives up: a cancel racing the approver and the timeout.
					if code, m, err := c.do(ctx, "DELETE", "/v1/requests/"+id, token, nil); err == nil && code == 200 {
						record(log, "cancel", m)
					}
					continue
				}
				for ctx.Err() == nil {
					code, m, err := c.do(ctx, "GET", "/v1/requests/"+id+"?wait=5s", token, nil)
					if err != nil || (code != 200 && code != 202) {
						return
					}
					if record(log, "poll", m) {
						break
					}
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		outcomes := []string{"allow_once", "allow_session", "deny", ""} // "": let it time out
		dispatched := map[string]bool{}
		var dw sync.WaitGroup
		defer dw.Wait()
		for k := 0; ctx.Err() == nil; k++ {
			code, m, err := c.do(ctx, "GET", "/v1/requests?state=pending", operator, nil)
			if err != nil {
				return
			}
			if code != 200 {
				continue
			}
			list, _ := m["requests"].([]any)
			for _, r := range list {
				id := str(r.(map[string]any), "id")
				if dispatched[id] {
					continue
				}
				dispatched[id] = true
				outcome := outcomes[len(dispatched)%len(outcomes)]
				if outcome == "" {
					continue
				}
				dw.Add(1)
				go func() {
					defer dw.Done()
					if code, m, err := c.do(ctx, "POST", "/v1/requests/"+id+"/decision", operator, map[string]any{"outcome": outcome}); err == nil && code == 200 {
						record(log, "operator", m)
					}
				}()
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	return wg.Wait
}

// checkBolt opens the file read-only and runs bbolt's consistency check.
func checkBolt(t *testing.T, path string) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatalf("opening %s after the crash: %v", path, err)
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatalf("bbolt consistency check failed: %v", err)
	}
}

// verifyDecisions checks every decision a client received against the restarted server.
func verifyDecisions(t *testing.T, s *testserver.Server, log *decisionLog) {
	t.Helper()
	log.mu.Lock()
	got := make(map[string][]seen, len(log.got))
	for id, v := range log.got {
		got[id] = v
	}
	log.mu.Unlock()

	// The whole trail in one read: each request's decision entries.
	code, m := s.JSON(t, "GET", "/v1/audit?limit=10000", operator, nil)
	if code != 200 {
		t.Fatalf("audit: %d %v", code, m)
	}
	entries, _ := m["entries"].([]any)
	if len(entries) >= 10000 {
		t.Fatalf("the trail has %d entries: more than one read returns, raise the limit or lower the load", len(entries))
	}
	decisions := map[string][]map[string]any{}
	created := map[string]bool{}
	for _, e := range entries {
		e := e.(map[string]any)
		id := str(e, "request_id")
		switch str(e, "event") {
		case "decision":
			decisions[id] = append(decisions[id], e)
		case "request":
			created[id] = true
		}
	}
	for id, d := range decisions {
		if len(d) != 1 {
			t.Errorf("request %s has %d decision entries in the audit trail: %v", id, len(d), d)
		}
	}

	ids := make([]string, 0, len(got))
	for id := range got {
		ids = append(ids, id)
	}
	for id := range created {
		if _, ok := got[id]; !ok {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	var mu sync.Mutex
	var failures []string
	fail := func(format string, a ...any) {
		mu.Lock()
		failures = append(failures, fmt.Sprintf(format, a...))
		mu.Unlock()
	}
	work := make(chan string)
	var wg sync.WaitGroup
	c := &loadClient{url: s.URL, hc: &http.Client{Timeout: 30 * time.Second}}
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range work {
				code, r, err := c.do(context.Background(), "GET", "/v1/requests/"+id, operator, nil)
				if err != nil || (code != 200 && code != 202) {
					fail("request %s: %d %v %v", id, code, r, err)
					continue
				}
				received := got[id]
				if len(received) == 0 {
					// Created but no client learned a decision: whatever it is now, it has
					// exactly one decision entry once decided. (It may have timed out on the
					// restarted server since the trail was read: read its own entries again.)
					if str(r, "state") == "pending" {
						continue
					}
					n := len(decisions[id])
					if n == 0 {
						_, a, err := c.do(context.Background(), "GET", "/v1/audit?request="+id, operator, nil)
						if err != nil {
							fail("audit of %s: %v", id, err)
							continue
						}
						entries, _ := a["entries"].([]any)
						for _, e := range entries {
							if str(e.(map[string]any), "event") == "decision" {
								n++
							}
						}
					}
					if n != 1 {
						fail("request %s is %s with %d decision entries", id, str(r, "state"), n)
					}
					continue
				}
				for _, sd := range received {
					if sd.state != str(r, "state") || sd.outcome != str(r, "outcome") || sd.source != str(r, "source") {
						fail("request %s: %s received %s/%s/%s, the store says %s/%s/%s (all received: %v)", id, sd.by,
							sd.state, sd.outcome, sd.source, str(r, "state"), str(r, "outcome"), str(r, "source"), received)
					}
				}
				d := decisions[id]
				if len(d) != 1 {
					fail("request %s: received %v but the trail has %d decision entries", id, received, len(d))
					continue
				}
				if str(d[0], "outcome") != received[0].outcome || str(d[0], "state") != received[0].state {
					fail("request %s: received %v, audited %v", id, received[0], d[0])
				}
			}
		}()
	}
	for _, id := range ids {
		work <- id
	}
	close(work)
	wg.Wait()
	for i, f := range failures {
		if i == 20 {
			t.Errorf("… and %d more", len(failures)-20)
			break
		}
		t.Error(f)
	}
}

func TestCrashUnderLoadLosesNothing(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, crashOpts)
	log := &decisionLog{got: map[string][]seen{}}
	for round := 1; round <= 2; round++ {
		ctx, cancel := context.WithCancel(context.Background())
		var budget atomic.Int64
		budget.Store(1500)
		before := log.len()
		wait := crashLoad(ctx, s.URL, log, &budget)
		// Kill once the load is well under way (two hundred decisions), at the latest after 3s.
		deadline := time.Now().Add(3 * time.Second)
		for log.len()-before < 200 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		s.Kill()
		cancel()
		wait()
		t.Logf("round %d: killed after %d decisions received (so far by kind of receiver: %v)", round, log.len()-before, log.byReceiver())
		if log.len()-before < 50 {
			t.Fatalf("round %d: only %d decisions before the kill; the load did not run", round, log.len()-before)
		}
		checkBolt(t, s.DB)
		o := crashOpts
		o.Dir = s.Dir
		s = testserver.Start(t, o)
		verifyDecisions(t, s, log)
		if t.Failed() {
			return
		}
	}
	s.Stop()
	checkBolt(t, s.DB)
}
