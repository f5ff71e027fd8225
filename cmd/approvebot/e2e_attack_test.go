package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/internal/testserver"
)

// Attack tests: what a hostile agent, a stolen agent token or a hostile network client can
// try against the real binary. None may panic, allow, or lose a record.

// rawDo sends one request with exactly the headers given (key, value pairs; a key may
// repeat) and returns the status, headers and body.
func rawDo(t *testing.T, s *testserver.Server, method, path string, body io.Reader, kv ...string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		req.Header.Add(kv[i], kv[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, raw
}

func errCode(raw []byte) string {
	var m struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(raw, &m)
	return m.Error.Code
}

// auditFor returns the audit entries of one request.
func auditFor(t *testing.T, s *testserver.Server, id string) []map[string]any {
	t.Helper()
	code, m := s.JSON(t, "GET", "/v1/audit?request="+id, operator, nil)
	if code != 200 {
		t.Fatalf("audit: %d %v", code, m)
	}
	var out []map[string]any
	for _, e := range m["entries"].([]any) {
		out = append(out, e.(map[string]any))
	}
	return out
}

func decisionEntries(entries []map[string]any) int {
	n := 0
	for _, e := range entries {
		if e["event"] == "decision" {
			n++
		}
	}
	return n
}

func auditCount(t *testing.T, s *testserver.Server) int {
	t.Helper()
	code, m := s.JSON(t, "GET", "/v1/audit?limit=10000", operator, nil)
	if code != 200 {
		t.Fatalf("audit: %d %v", code, m)
	}
	return len(m["entries"].([]any))
}

// TestAttackTokensAndOwnership: agent tokens on operator endpoints, forged and malformed
// credentials, an operator deciding its own request, agents reading each other's requests
// and guessing ids.
func TestAttackTokensAndOwnership(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, testserver.Options{})
	id := pendingID(t, s, bash("att", "kubectl delete ns prod"))

	t.Run("operator endpoints", func(t *testing.T) {
		endpoints := []struct{ method, path, body string }{
			{"GET", "/v1/requests?state=pending", ""},
			{"GET", "/v1/requests", ""},
			{"POST", "/v1/requests/" + id + "/decision", `{"outcome":"allow_once"}`},
			{"PUT", "/v1/sessions/att", `{"tier":"full"}`},
			{"POST", "/v1/sessions/att/unpause", ""},
			{"GET", "/v1/audit", ""},
			{"GET", "/v1/allowlist", ""},
			{"DELETE", "/v1/allowlist?pattern=%2Fbin%2Fls", ""},
		}
		creds := []struct {
			name string
			kv   []string
			code int
		}{
			{"agent token", []string{"Authorization", "Bearer " + agent}, 403},
			{"agent2 token", []string{"Authorization", "Bearer " + agent2}, 403},
			{"agent token lower-case scheme", []string{"Authorization", "bearer " + agent}, 403},
			{"agent then operator header", []string{"Authorization", "Bearer " + agent, "Authorization", "Bearer " + operator}, 403},
			{"none", nil, 401},
			{"operator token as Basic", []string{"Authorization", "Basic " + operator}, 401},
			{"operator token without scheme", []string{"Authorization", operator}, 401},
			{"operator token truncated", []string{"Authorization", "Bearer " + operator[:len(operator)-1]}, 401},
			{"operator token extended", []string{"Authorization", "Bearer " + operator + "0"}, 401},
			{"operator token upper-cased", []string{"Authorization", "Bearer " + strings.ToUpper(operator)}, 401},
			{"operator token in a cookie", []string{"Cookie", "token=" + operator}, 401},
			{"operator token in another header", []string{"X-Api-Key", operator}, 401},
		}
		for _, e := range endpoints {
			for _, c := range creds {
				path := e.path
				if c.name == "none" {
					path += map[bool]string{true: "&", false: "?"}[strings.Contains(path, "?")] + "token=" + operator
				}
				code, hdr, raw := rawDo(t, s, e.method, path, strings.NewReader(e.body), c.kv...)
				if code != c.code {
					t.Errorf("%s %s with %s: %d %s, want %d", e.method, path, c.name, code, raw, c.code)
				}
				if code == 401 && hdr.Get("WWW-Authenticate") == "" {
					t.Errorf("%s %s: 401 without WWW-Authenticate", e.method, path)
				}
				if bytes.Contains(raw, []byte(operator)) || bytes.Contains(raw, []byte(agent)) {
					t.Errorf("%s %s: a token is echoed in the answer: %s", e.method, path, raw)
				}
			}
		}
		want(t, mustGet(t, s, id), "state", "pending")
		if n := decisionEntries(auditFor(t, s, id)); n != 0 {
			t.Fatalf("%d decision entries after refused attempts", n)
		}
	})

	t.Run("self decision", func(t *testing.T) {
		code, m := s.JSON(t, "POST", "/v1/requests", operator, bash("op-own", "terraform destroy"))
		if code != 202 {
			t.Fatalf("operator files a request: %d %v", code, m)
		}
		own := m["id"].(string)
		for _, outcome := range []string{"allow_once", "allow_session", "allow_always", "deny"} {
			code, raw := s.Do(t, "POST", "/v1/requests/"+own+"/decision", operator, map[string]any{"outcome": outcome})
			if code != 403 || errCode(raw) != "self_decision" {
				t.Errorf("operator decides its own request (%s): %d %s", outcome, code, raw)
			}
		}
		code, m = s.JSON(t, "GET", "/v1/requests/"+own, operator, nil)
		if code != 202 {
			t.Errorf("own request after refused decisions: %d", code)
		}
		want(t, m, "state", "pending")
		// An agent cannot decide its own request either: the endpoint is operator-only.
		if code, raw := s.Do(t, "POST", "/v1/requests/"+id+"/decision", agent, map[string]any{"outcome": "allow_once"}); code != 403 {
			t.Errorf("agent decides its own request: %d %s", code, raw)
		}
	})

	t.Run("other agent's request looks missing", func(t *testing.T) {
		missing := gate.NewID()
		_, _, want404 := rawDo(t, s, "GET", "/v1/requests/"+missing, nil, "Authorization", "Bearer "+agent2)
		for _, c := range []struct{ method, path string }{
			{"GET", "/v1/requests/" + id},
			{"GET", "/v1/requests/" + id + "?wait=1s"},
			{"DELETE", "/v1/requests/" + id},
		} {
			start := time.Now()
			code, _, raw := rawDo(t, s, c.method, c.path, nil, "Authorization", "Bearer "+agent2)
			if code != 404 || !bytes.Equal(raw, want404) {
				t.Errorf("agent2 %s %s: %d %s (a missing id answers %s)", c.method, c.path, code, raw, want404)
			}
			if time.Since(start) > 500*time.Millisecond {
				t.Errorf("agent2 %s %s waited on a request it does not own", c.method, c.path)
			}
		}
		want(t, mustGet(t, s, id), "state", "pending")
	})

	t.Run("id guessing", func(t *testing.T) {
		var guesses []string
		for i := 0; i < 100; i++ {
			guesses = append(guesses, gate.NewID()) // well-formed, same time prefix as real ids
		}
		alphabet := "abcdefghijklmnopqrstuvwxyz234567"
		for i := 10; i < len(id); i++ { // every id one character away in the random part
			c := alphabet[(strings.IndexByte(alphabet, id[i])+1)%len(alphabet)]
			guesses = append(guesses, id[:i]+string(c)+id[i+1:])
		}
		guesses = append(guesses, strings.ToUpper(id), id+"a", id[:len(id)-1], " "+id, id+"%00", id+"%2f", "%2e%2e", "..%2f..%2faudit",
			strings.Repeat("a", 26), strings.Repeat("7", 4096), "0", "-1", "%ff%fe")
		fivexx := 0
		for _, g := range guesses {
			for _, c := range []struct{ method, path, token string }{
				{"GET", "/v1/requests/" + g, agent},
				{"DELETE", "/v1/requests/" + g, agent},
				{"POST", "/v1/requests/" + g + "/decision", operator},
			} {
				var body io.Reader
				if c.method == "POST" {
					body = strings.NewReader(`{"outcome":"allow_once"}`)
				}
				code, _, raw := rawDo(t, s, c.method, c.path, body, "Authorization", "Bearer "+c.token)
				if code >= 500 {
					fivexx++
				}
				if code != 404 && code != 400 {
					t.Errorf("%s %q: %d %s", c.method, c.path, code, raw)
				}
			}
		}
		if fivexx > 0 {
			t.Errorf("%d guesses answered 5xx", fivexx)
		}
		want(t, mustGet(t, s, id), "state", "pending")
	})
}

// TestAttackThousandConcurrentDecisions: 1,000 operator decisions and the agent's own
// cancel race on one request; exactly one wins, everyone else learns who did, and the
// waiting agent receives the winner.
func TestAttackThousandConcurrentDecisions(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, testserver.Options{})
	id := pendingID(t, s, bash("race", "helm uninstall prod"))
	waited := make(chan map[string]any, 1)
	go func() {
		_, m := s.JSON(t, "GET", "/v1/requests/"+id+"?wait=60s", agent, nil)
		waited <- m
	}()
	const n = 1000
	hc := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: n}}
	type answer struct {
		code int
		m    map[string]any
		by   string
	}
	answers := make([]answer, n+1)
	start := make(chan struct{})
	var ready, wg sync.WaitGroup
	for i := 0; i <= n; i++ {
		ready.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			method, path, token, body := "POST", "/v1/requests/"+id+"/decision", operator, ""
			switch i % 3 {
			case 0:
				body = `{"outcome":"allow_once"}`
			case 1:
				body = `{"outcome":"deny","reason":"no"}`
			case 2:
				body = `{"outcome":"allow_session"}`
			}
			if i == n {
				method, path, token, body = "DELETE", "/v1/requests/"+id, agent, ""
			}
			req, _ := http.NewRequest(method, s.URL+path, strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+token)
			ready.Done()
			<-start
			resp, err := hc.Do(req)
			if err != nil {
				answers[i] = answer{code: -1, by: err.Error()}
				return
			}
			defer resp.Body.Close()
			var m map[string]any
			_ = json.NewDecoder(resp.Body).Decode(&m)
			answers[i] = answer{code: resp.StatusCode, m: m, by: token}
		}()
	}
	ready.Wait()
	close(start)
	wg.Wait()
	var winner map[string]any
	wins, conflicts := 0, 0
	for i, a := range answers {
		switch a.code {
		case 200:
			wins++
			winner = a.m
		case 409:
			conflicts++
			e, _ := a.m["error"].(map[string]any)
			if e["code"] != "already_decided" || e["decided_by"] == nil {
				t.Errorf("answer %d: 409 without who decided: %v", i, a.m)
			}
		default:
			t.Errorf("answer %d: %d %v %s", i, a.code, a.m, a.by)
		}
	}
	if wins != 1 || conflicts != n {
		t.Fatalf("%d wins and %d conflicts, want 1 and %d", wins, conflicts, n)
	}
	final := mustGet(t, s, id)
	for _, k := range []string{"state", "outcome", "decided_by", "decided_at"} {
		if fmt.Sprint(final[k]) != fmt.Sprint(winner[k]) {
			t.Errorf("%s: stored %v, winner was told %v", k, final[k], winner[k])
		}
	}
	select {
	case m := <-waited:
		if m["state"] != final["state"] || m["outcome"] != final["outcome"] {
			t.Errorf("the waiting agent got %v/%v, the store says %v/%v", m["state"], m["outcome"], final["state"], final["outcome"])
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the waiting agent never got the decision")
	}
	if d := decisionEntries(auditFor(t, s, id)); d != 1 {
		t.Fatalf("%d decision entries in the audit trail, want 1", d)
	}
}

// TestAttackHostileJSON: malformed and hostile bodies are refused with a clear code and
// store nothing; hostile but valid ones are stored exactly as sent and never allowed by
// accident.
func TestAttackHostileJSON(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, testserver.Options{})
	id := pendingID(t, s, bash("hj", "deploy"))
	accepted := 1

	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	refused := []struct{ name, body, code string }{
		{"deep nesting in args", `{"tool":"bash","args":{"a":` + deep(70) + `},"session":"hj"}`, "too_deep"},
		{"a million brackets", strings.Repeat("[", 1_000_000), "too_deep"},
		{"deep objects", strings.Repeat(`{"a":`, 5000) + "1" + strings.Repeat("}", 5000), "too_deep"},
		{"huge number in a typed field", `{"tool":"bash","args":{},"session":"hj","unattended":1e400}`, "invalid_field"},
		{"huge integer as wait", `{"tool":"bash","args":{},"session":"hj","wait":` + strings.Repeat("9", 100) + `}`, "invalid_field"},
		{"number as a fact", `{"tool":"x","args":{},"session":"hj","facts":{"read_only":1}}`, "invalid_field"},
		{"duplicate tool", `{"tool":"read_file","args":{"command":"rm -rf /"},"session":"hj","tool":"bash"}`, "duplicate_key"},
		{"duplicate command", `{"tool":"bash","args":{"command":"ls","command":"rm -rf /"},"session":"hj"}`, "duplicate_key"},
		{"duplicate deep in args", `{"tool":"x","args":{"a":[{"b":{"c":1,"c":2}}]},"session":"hj"}`, "duplicate_key"},
		{"duplicate fact", `{"tool":"x","args":{},"session":"hj","facts":{"read_only":false,"read_only":true}}`, "duplicate_key"},
		{"duplicate by escape", `{"tool":"bash","args":{"command":"ls","\u0063ommand":"rm -rf /"},"session":"hj"}`, "duplicate_key"},
		{"keys differing in case", `{"tool":"bash","TOOL":"read_file","args":{"command":"rm -rf /"},"session":"hj"}`, "duplicate_key"},
		{"args keys differing in case", `{"tool":"bash","args":{"command":"ls","Command":"rm -rf /"},"session":"hj"}`, "duplicate_key"},
		{"kelvin sign key", `{"tool":"x","args":{"k":1,"\u212a":2},"session":"hj"}`, "duplicate_key"},
		{"raw NUL byte", "{\"tool\":\"bash\",\"args\":{\"command\":\"ls\x00\"},\"session\":\"hj\"}", "invalid_json"},
		{"UTF-8 BOM", "\xef\xbb\xbf{\"tool\":\"bash\",\"args\":{},\"session\":\"hj\"}", "invalid_json"},
		{"UTF-16 BOM", "\xfe\xff\x00{", "invalid_utf8"},
		{"invalid UTF-8 in a key", "{\"tool\":\"x\",\"args\":{\"\xc3\x28\":1},\"session\":\"hj\"}", "invalid_utf8"},
		{"overlong UTF-8 slash", "{\"tool\":\"x\",\"args\":{\"p\":\"\xc0\xaf\"},\"session\":\"hj\"}", "invalid_utf8"},
		{"lone surrogate", `{"tool":"bash","args":{"command":"echo \ud800"},"session":"hj"}`, "invalid_utf8"},
		{"comment", `{"tool":"bash", /* hi */ "args":{},"session":"hj"}`, "invalid_json"},
		{"single quotes", `{'tool':'bash'}`, "invalid_json"},
		{"NaN", `{"tool":"x","args":{"n":NaN},"session":"hj"}`, "invalid_json"},
		{"two values", `{"tool":"x","args":{},"session":"hj"}{"tool":"bash"}`, "invalid_json"},
		{"array at top", `[{"tool":"x","args":{},"session":"hj"}]`, "invalid_field"},
		{"empty object", `{}`, "missing_tool"},
		{"tool as number", `{"tool":1e400,"args":{},"session":"hj"}`, "invalid_field"},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			code, _, raw := rawDo(t, s, "POST", "/v1/requests", strings.NewReader(c.body), "Authorization", "Bearer "+agent)
			if code != 400 || errCode(raw) != c.code {
				t.Errorf("%d %s, want 400 %s", code, raw, c.code)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %s", d)
			}
		})
	}
	t.Run("duplicate outcome in a decision", func(t *testing.T) {
		code, _, raw := rawDo(t, s, "POST", "/v1/requests/"+id+"/decision", strings.NewReader(`{"outcome":"deny","outcome":"allow_once"}`), "Authorization", "Bearer "+operator)
		if code != 400 || errCode(raw) != "duplicate_key" {
			t.Errorf("%d %s", code, raw)
		}
		code, _, raw = rawDo(t, s, "POST", "/v1/requests/"+id+"/decision", strings.NewReader(`{"outcome":"deny","OUTCOME":"allow_once"}`), "Authorization", "Bearer "+operator)
		if code != 400 || errCode(raw) != "duplicate_key" {
			t.Errorf("case variant: %d %s", code, raw)
		}
		want(t, mustGet(t, s, id), "state", "pending")
	})

	fingerprint := func(t *testing.T, body string) map[string]any {
		t.Helper()
		code, m := s.JSON(t, "POST", "/v1/requests", agent, body)
		if code != 200 && code != 202 {
			t.Fatalf("%d %v for %s", code, m, body)
		}
		accepted++
		return m
	}
	t.Run("huge numbers are kept as written", func(t *testing.T) {
		nines := strings.Repeat("9", 100)
		fps := map[string]string{}
		for _, n := range []string{"1e400", "1E400", "1e401", nines, nines[:99] + "8", "-0", "0", "1.0", "1"} {
			m := fingerprint(t, `{"tool":"calc","args":{"n":`+n+`},"session":"hj-num"}`)
			fp := m["fingerprint"].(string)
			if prev, dup := fps[fp]; dup {
				t.Errorf("%s and %s share a fingerprint: a grant for one would cover the other", prev, n)
			}
			fps[fp] = n
		}
	})
	t.Run("escaped NUL and controls", func(t *testing.T) {
		for _, c := range []struct {
			cmd       string
			dangerous bool
		}{
			{`rm -rf /tmp/x\u0000`, true},
			{`ls\u0000; rm -rf ~`, true},
			{`ls\r\nrm -rf ~`, true},
			{`ls \u0000-la`, false},
			{`echo hi\u001b[2J\u0007`, false},
		} {
			cmd := c.cmd
			m := fingerprint(t, `{"tool":"bash","args":{"command":"`+cmd+`"},"session":"hj-nul"}`)
			if c.dangerous && m["allowed"] != false {
				t.Errorf("%s: allowed: %v", cmd, m)
			}
			if sum, _ := m["summary"].(string); strings.ContainsAny(sum, "\x00\x1b\r\n") {
				t.Errorf("%s: the summary a human sees carries control characters: %q", cmd, sum)
			}
		}
	})
	t.Run("huge string", func(t *testing.T) {
		m := fingerprint(t, `{"tool":"bash","args":{"command":"deploy `+strings.Repeat("A", 1000_000)+`"},"session":"hj-big"}`)
		if sum := m["summary"].(string); len([]rune(sum)) > 201 || m["truncated"] != true {
			t.Errorf("summary of %d runes, truncated %v", len([]rune(sum)), m["truncated"])
		}
		if m["allowed"] == true {
			t.Errorf("allowed: %v", m["state"])
		}
		code, _, raw := rawDo(t, s, "POST", "/v1/requests", strings.NewReader(`{"tool":"bash","args":{"command":"`+strings.Repeat("A", 2<<20)+`"},"session":"hj"}`),
			"Authorization", "Bearer "+agent)
		if code != 413 || errCode(raw) != "body_too_large" {
			t.Errorf("2 MiB body: %d %s", code, raw)
		}
	})
	t.Run("many keys", func(t *testing.T) {
		var b strings.Builder
		b.WriteString(`{"tool":"x","args":{`)
		for i := 0; i < 20000; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"k%d":%d`, i, i)
		}
		b.WriteString(`},"session":"hj-keys"}`)
		start := time.Now()
		fingerprint(t, b.String())
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("20,000 keys took %s", d)
		}
	})
	if n := auditCount(t, s); n != accepted {
		t.Fatalf("%d audit entries for %d accepted requests: a refused request left a record", n, accepted)
	}
}

// TestAttackRateLimit: a token over its rate gets 429 with Retry-After, stores nothing, and
// does not slow down another token.
func TestAttackRateLimit(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, testserver.Options{Server: "rate_limit = 2\nrate_burst = 4"})
	body := `{"tool":"read_file","args":{"path":"/etc/hosts"},"session":"rl","facts":{"read_only":true}}`
	ok, limited := 0, 0
	start := time.Now()
	for i := 0; i < 20; i++ {
		code, hdr, raw := rawDo(t, s, "POST", "/v1/requests", strings.NewReader(body), "Authorization", "Bearer "+agent)
		switch code {
		case 200:
			ok++
		case 429:
			limited++
			ra, err := strconv.Atoi(hdr.Get("Retry-After"))
			if err != nil || ra < 1 || ra > 60 {
				t.Errorf("429 with Retry-After %q", hdr.Get("Retry-After"))
			}
			if errCode(raw) != "rate_limited" {
				t.Errorf("429 body %s", raw)
			}
		default:
			t.Fatalf("%d %s", code, raw)
		}
	}
	// The burst of 4, plus what 2/s refilled while the loop ran (slow CI machines included).
	if most := 4 + int(2*time.Since(start).Seconds()) + 1; limited == 0 || ok < 4 || ok > most {
		t.Fatalf("%d allowed and %d limited, want the burst of 4 (at most %d with the refill) then 429s", ok, limited, most)
	}
	// Another token is not affected (the operator has its own bucket).
	if code, _ := s.JSON(t, "GET", "/v1/requests?state=pending", operator, nil); code != 200 {
		t.Fatalf("operator limited by the agent's traffic: %d", code)
	}
	if code, _ := s.JSON(t, "POST", "/v1/requests", agent2, body); code != 200 {
		t.Fatalf("agent2 limited by agent's traffic: %d", code)
	}
	ok++ // agent2's request
	if n := auditCount(t, s); n != ok {
		t.Fatalf("%d audit entries for %d accepted requests: a 429 left a record", n, ok)
	}
	time.Sleep(1100 * time.Millisecond)
	if code, raw := s.Do(t, "POST", "/v1/requests", agent, body); code != 200 {
		t.Fatalf("after Retry-After: %d %s", code, raw)
	}
	_, raw := s.Do(t, "GET", "/metrics", "", nil)
	if !bytes.Contains(raw, []byte("approvebot_rate_limited_total "+strconv.Itoa(limited))) {
		t.Errorf("metrics do not count %d rate-limited requests", limited)
	}
}

// TestAttackSlowClientsAndHeaders: a client sending its headers byte by byte, and one that
// sends nothing, are cut off by the header timeout while others are served; oversized
// headers are refused.
func TestAttackSlowClientsAndHeaders(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, testserver.Options{})
	addr := strings.TrimPrefix(s.URL, "http://")

	type cut struct {
		name  string
		after time.Duration
	}
	results := make(chan cut, 2)
	slow := func(name string, drip bool) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Error(err)
			results <- cut{name, 0}
			return
		}
		defer conn.Close()
		start := time.Now()
		closed := make(chan struct{})
		go func() {
			_, _ = io.Copy(io.Discard, conn) // returns when the server closes the connection
			close(closed)
		}()
		if drip {
			_, _ = io.WriteString(conn, "POST /v1/requests HTTP/1.1\r\nHost: x\r\n")
		}
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-closed:
				results <- cut{name, time.Since(start)}
				return
			case <-tick.C:
				if drip {
					_, _ = conn.Write([]byte("X"))
				}
				if time.Since(start) > 20*time.Second {
					results <- cut{name, -1}
					return
				}
			}
		}
	}
	go slow("header byte by byte", true)
	go slow("silent connection", false)
	// The server keeps serving everyone else meanwhile.
	for i := 0; i < 5; i++ {
		start := time.Now()
		if code, _ := s.JSON(t, "GET", "/healthz", "", nil); code != 200 {
			t.Fatalf("healthz during the slow clients: %d", code)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("healthz took %s during the slow clients", d)
		}
		time.Sleep(300 * time.Millisecond)
	}

	t.Run("header too large", func(t *testing.T) {
		code, _, _ := rawDo(t, s, "GET", "/healthz", nil, "X-Big", strings.Repeat("a", 64<<10))
		if code != 431 {
			t.Errorf("64 KiB header: %d, want 431", code)
		}
		kv := []string{}
		for i := 0; i < 2000; i++ {
			kv = append(kv, fmt.Sprintf("X-H%d", i), strings.Repeat("b", 20))
		}
		code, _, _ = rawDo(t, s, "GET", "/healthz", nil, kv...)
		if code != 431 {
			t.Errorf("2,000 headers: %d, want 431", code)
		}
		code, _, _ = rawDo(t, s, "GET", "/healthz", nil, "X-Ok", strings.Repeat("a", 8<<10))
		if code != 200 {
			t.Errorf("8 KiB header: %d, want 200", code)
		}
	})
	t.Run("request line too large", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "GET /v1/requests/%s HTTP/1.1\r\nHost: x\r\n\r\n", strings.Repeat("a", 100<<10))
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		line, _ := bufio.NewReader(conn).ReadString('\n')
		if !strings.Contains(line, "431") && !strings.Contains(line, "414") && !strings.Contains(line, "400") {
			t.Errorf("100 KiB request line: %q", line)
		}
	})

	for i := 0; i < 2; i++ {
		r := <-results
		// ReadHeaderTimeout is 5s; allow for a slow CI machine.
		if r.after < 0 || r.after > 10*time.Second {
			t.Errorf("%s: not cut off within 10s (%s)", r.name, r.after)
		} else if r.after < 4*time.Second {
			t.Errorf("%s: cut off after only %s", r.name, r.after)
		}
	}
}

// TestAttackOversizedBodies: every endpoint with a body refuses one over max_body, with or
// without a Content-Length, and stores nothing.
func TestAttackOversizedBodies(t *testing.T) {
	t.Parallel()
	s := testserver.Start(t, testserver.Options{Server: "max_body = 4096"})
	id := pendingID(t, s, bash("ob", "deploy"))
	big := `{"tool":"bash","args":{"command":"` + strings.Repeat("a", 5000) + `"},"session":"ob"}`
	for _, c := range []struct {
		name, method, path, token string
	}{
		{"create", "POST", "/v1/requests", agent},
		{"decision", "POST", "/v1/requests/" + id + "/decision", operator},
		{"session", "PUT", "/v1/sessions/ob", operator},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, raw := rawDo(t, s, c.method, c.path, strings.NewReader(big), "Authorization", "Bearer "+c.token)
			if code != 413 || errCode(raw) != "body_too_large" {
				t.Errorf("with Content-Length: %d %s", code, raw)
			}
			// io.MultiReader hides the length: the client sends the body chunked.
			code, _, raw = rawDo(t, s, c.method, c.path, io.MultiReader(strings.NewReader(big)), "Authorization", "Bearer "+c.token)
			if code != 413 || errCode(raw) != "body_too_large" {
				t.Errorf("chunked: %d %s", code, raw)
			}
		})
	}
	want(t, mustGet(t, s, id), "state", "pending")
	if n := auditCount(t, s); n != 1 {
		t.Fatalf("%d audit entries, want only the pending request's", n)
	}
}
