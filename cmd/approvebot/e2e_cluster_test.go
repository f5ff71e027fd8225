package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/approvebot/approvebot/channels/telegram/telegramtest"
	"github.com/approvebot/approvebot/internal/etcdtest"
	"github.com/approvebot/approvebot/internal/tcpproxy"
	"github.com/approvebot/approvebot/internal/testserver"
)

// The cluster suites run approvebot replicas on a 3-member etcd cluster on loopback (with
// APPROVEBOT_INTEGRATION=1), each replica reaching every member through its own TCP proxy
// so that a test can cut it off. A fleet is the test's load balancer: it sends each call to
// a live replica and, when one does not answer, to another.

// fleetLeaseTTL is the replicas' lease: short, so takeovers fit in a test, and still 3
// keep-alives per lease on a loaded machine.
const fleetLeaseTTL = 3 * time.Second

type replica struct {
	name    string
	proxies []*tcpproxy.Proxy
	opts    testserver.Options
	srv     *testserver.Server
	down    bool
}

type fleet struct {
	t    *testing.T
	etcd *etcdtest.Cluster
	mu   sync.Mutex
	reps []*replica
	http *http.Client
}

// startFleet starts the etcd cluster and n replicas configured with extra (TOML).
func startFleet(t *testing.T, n int, extra string, env ...string) *fleet {
	t.Helper()
	f := &fleet{t: t, etcd: etcdtest.Start(t, 3), http: &http.Client{Timeout: 40 * time.Second}}
	prefix := fmt.Sprintf("/approvebot-e2e/%d/", time.Now().UnixNano())
	for i := 0; i < n; i++ {
		r := &replica{name: fmt.Sprintf("r%d", i)}
		var eps []string
		for _, m := range f.etcd.Members {
			p, err := tcpproxy.New(strings.TrimPrefix(m.ClientURL, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { p.Close() })
			r.proxies = append(r.proxies, p)
			eps = append(eps, fmt.Sprintf("%q", "http://"+p.Addr()))
		}
		r.opts = testserver.Options{
			Server: `approval_timeout = "120s"`,
			Config: fmt.Sprintf(`[store]
backend = "etcd"

[store.etcd]
endpoints = [%s]
prefix = %q
lease_ttl = %q

[policy.tool_permissions]
"Read" = "allow"
"Deploy" = "ask"
%s`, strings.Join(eps, ", "), prefix, fleetLeaseTTL, extra),
			Env: env,
		}
		r.srv = testserver.Start(t, r.opts)
		f.reps = append(f.reps, r)
	}
	return f
}

// live returns the URLs of the replicas that are up and connected.
func (f *fleet) live() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, r := range f.reps {
		if !r.down {
			out = append(out, r.srv.URL)
		}
	}
	return out
}

// kill ends a replica with SIGKILL; restart starts it again on the same configuration.
func (f *fleet) kill(i int) {
	f.mu.Lock()
	r := f.reps[i]
	r.down = true
	f.mu.Unlock()
	r.srv.Kill()
}

func (f *fleet) restart(i int) {
	f.mu.Lock()
	r := f.reps[i]
	opts := r.opts
	opts.Dir = r.srv.Dir
	f.mu.Unlock()
	srv := testserver.Start(f.t, opts)
	f.mu.Lock()
	r.srv, r.down = srv, false
	f.mu.Unlock()
}

// cut partitions a replica from etcd (every member); heal ends the partition. A cut
// replica stays in the rotation: an agent calling it gets refusals or nothing, as from a
// replica behind a load balancer that has not noticed yet.
func (f *fleet) cut(i int) {
	for _, p := range f.reps[i].proxies {
		p.Cut()
	}
}

func (f *fleet) heal(i int) {
	for _, p := range f.reps[i].proxies {
		p.Restore()
	}
}

// waitWaiting waits until agents are waiting in long-polls on replica i.
func (f *fleet) waitWaiting(t *testing.T, i int) {
	t.Helper()
	f.mu.Lock()
	url := f.reps[i].srv.URL
	f.mu.Unlock()
	f.waitWaitingAt(t, url)
}

// waitWaitingAt waits until agents are waiting in long-polls on the replica at url.
func (f *fleet) waitWaitingAt(t *testing.T, url string) {
	t.Helper()
	re := regexp.MustCompile(`(?m)^approvebot_waiting_agents (\d+)`)
	deadline := time.Now().Add(answerDeadline)
	for {
		req, _ := http.NewRequest("GET", url+"/metrics", nil)
		req.Header.Set("Authorization", "Bearer "+testserver.OperatorToken)
		if resp, err := f.http.Do(req); err == nil {
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if m := re.FindSubmatch(raw); m != nil && string(m[1]) != "0" {
				t.Logf("%s agents waiting on %s", m[1], url)
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no agent waiting on %s", url)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// call sends one request to url and decodes the JSON answer.
func (f *fleet) call(ctx context.Context, method, url, token string, body any) (int, map[string]any, error) {
	var r io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		r = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := f.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, nil, err
	}
	var m map[string]any
	if len(raw) > 0 && json.Unmarshal(raw, &m) != nil {
		return resp.StatusCode, nil, fmt.Errorf("%s %s: %d %s", method, url, resp.StatusCode, raw)
	}
	return resp.StatusCode, m, nil
}

// callAny tries live replicas (random first) until one answers with a status ok accepts,
// or ctx ends. It returns the answer and the replica that gave it.
func (f *fleet) callAny(ctx context.Context, method, path, token string, body any, ok func(int) bool) (int, map[string]any, error) {
	for {
		urls := f.live()
		rand.Shuffle(len(urls), func(i, j int) { urls[i], urls[j] = urls[j], urls[i] })
		for _, u := range urls {
			cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			code, m, err := f.call(cctx, method, u+path, token, body)
			cancel()
			if err == nil && ok(code) {
				return code, m, nil
			}
			if ctx.Err() != nil {
				return 0, nil, ctx.Err()
			}
		}
		select {
		case <-ctx.Done():
			return 0, nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func is2xx(code int) bool { return code >= 200 && code < 300 }

// outcome is one request's fate as the test saw it.
type outcome struct {
	id       string
	human    bool
	pressed  string // what the human decided ("" for policy requests)
	received string // the outcome the agent got
	state    string
}

// workload runs policy-decided and human-decided agents against the fleet until stop,
// and returns every request each one filed with what its agent received.
type workload struct {
	f       *fleet
	mu      sync.Mutex
	results []outcome
	failed  []string
	wg      sync.WaitGroup
	stop    chan struct{}
	done    atomic.Int64
}

func (f *fleet) runWorkload(policyAgents, humanAgents int) *workload {
	w := &workload{f: f, stop: make(chan struct{})}
	for i := 0; i < policyAgents; i++ {
		w.wg.Add(1)
		go w.policyAgent(i)
	}
	for i := 0; i < humanAgents; i++ {
		w.wg.Add(1)
		go w.humanAgent(i)
	}
	return w
}

func (w *workload) stopped() bool {
	select {
	case <-w.stop:
		return true
	default:
		return false
	}
}

func (w *workload) fail(format string, a ...any) {
	w.mu.Lock()
	w.failed = append(w.failed, fmt.Sprintf(format, a...))
	w.mu.Unlock()
}

func (w *workload) record(o outcome) {
	w.mu.Lock()
	w.results = append(w.results, o)
	w.mu.Unlock()
	w.done.Add(1)
}

// answerDeadline bounds how long one agent may go without its answer, whatever fault is
// running: every waiting agent must get one.
const answerDeadline = 90 * time.Second

func (w *workload) policyAgent(n int) {
	defer w.wg.Done()
	for i := 0; !w.stopped(); i++ {
		ctx, cancel := context.WithTimeout(context.Background(), answerDeadline)
		body := map[string]any{"tool": "Read", "args": map[string]any{"path": fmt.Sprintf("/p/%d/%d", n, i)}, "session": fmt.Sprint("policy-", n)}
		_, m, err := w.f.callAny(ctx, "POST", "/v1/requests", testserver.AgentToken, body, is2xx)
		cancel()
		if err != nil {
			w.fail("policy agent %d: no replica answered: %v", n, err)
			return
		}
		w.record(outcome{id: str(m, "id"), received: str(m, "outcome"), state: str(m, "state")})
		time.Sleep(20 * time.Millisecond)
	}
}

func (w *workload) humanAgent(n int) {
	defer w.wg.Done()
	for i := 0; !w.stopped(); i++ {
		ctx, cancel := context.WithTimeout(context.Background(), answerDeadline)
		o, err := w.oneHumanRequest(ctx, n, i)
		cancel()
		if err != nil {
			w.fail("human agent %d request %d: %v", n, i, err)
			return
		}
		w.record(o)
	}
}

func (w *workload) oneHumanRequest(ctx context.Context, n, i int) (outcome, error) {
	body := map[string]any{"tool": "Deploy", "args": map[string]any{"target": fmt.Sprintf("svc-%d-%d", n, i)}, "session": fmt.Sprintf("human-%d-%d", n, i)}
	_, m, err := w.f.callAny(ctx, "POST", "/v1/requests", testserver.AgentToken, body, is2xx)
	if err != nil {
		return outcome{}, fmt.Errorf("filing: %w", err)
	}
	id := str(m, "id")
	if str(m, "state") != "pending" {
		return outcome{}, fmt.Errorf("request %s not pending: %v", id, m)
	}
	o := outcome{id: id, human: true, pressed: "allow_once"}
	if rand.IntN(2) == 0 {
		o.pressed = "deny"
	}
	// The human decides on any replica, once; a retry after a replica died mid-call may
	// find the decision already made (409): it was this one.
	go func() {
		time.Sleep(time.Duration(50+rand.IntN(200)) * time.Millisecond)
		w.f.callAny(ctx, "POST", "/v1/requests/"+id+"/decision", testserver.OperatorToken,
			map[string]any{"outcome": o.pressed, "reason": "e2e"}, func(c int) bool { return is2xx(c) || c == 409 })
	}()
	// The agent long-polls any replica until it has its answer.
	for {
		_, m, err := w.f.callAny(ctx, "GET", "/v1/requests/"+id+"?wait=10s", testserver.AgentToken, nil, is2xx)
		if err != nil {
			return outcome{}, fmt.Errorf("waiting for %s: %w", id, err)
		}
		if st := str(m, "state"); st != "pending" {
			o.received, o.state = str(m, "outcome"), st
			return o, nil
		}
	}
}

// finish stops the agents and waits for each one's last answer.
func (w *workload) finish(t *testing.T) []outcome {
	close(w.stop)
	w.wg.Wait()
	for _, f := range w.failed {
		t.Error(f)
	}
	return w.results
}

// waitProgress waits until the agents got n more answers (the fleet is serving).
func (w *workload) waitProgress(t *testing.T, what string, n int64) {
	t.Helper()
	start := w.done.Load()
	deadline := time.Now().Add(answerDeadline)
	for w.done.Load() < start+n {
		if time.Now().After(deadline) {
			t.Fatalf("%s: only %d answers in %s", what, w.done.Load()-start, answerDeadline)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// verify checks every outcome against the store, through a live replica: each decision an
// agent received is stored, once, as received; each human request got the human's press.
func (f *fleet) verify(t *testing.T, results []outcome) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	humans, policies := 0, 0
	for _, o := range results {
		if o.state == "" || o.state == "pending" {
			t.Errorf("request %s: the agent got no decision (%+v)", o.id, o)
			continue
		}
		_, got, err := f.callAny(ctx, "GET", "/v1/requests/"+o.id, testserver.OperatorToken, nil, is2xx)
		if err != nil {
			t.Fatalf("reading %s: %v", o.id, err)
		}
		if str(got, "outcome") != o.received || str(got, "state") != o.state {
			t.Errorf("request %s: the agent got %s/%s, the store holds %s/%s", o.id, o.state, o.received, got["state"], got["outcome"])
		}
		_, audit, err := f.callAny(ctx, "GET", "/v1/audit?request="+o.id, testserver.OperatorToken, nil, is2xx)
		if err != nil {
			t.Fatalf("audit of %s: %v", o.id, err)
		}
		decisions := 0
		entries, _ := audit["entries"].([]any)
		for _, e := range entries {
			if m, _ := e.(map[string]any); str(m, "event") == "decision" {
				decisions++
			}
		}
		if decisions != 1 {
			t.Errorf("request %s: %d decision entries in the trail, want one: %v", o.id, decisions, entries)
		}
		if o.human {
			humans++
			if o.received != o.pressed {
				t.Errorf("request %s: the human pressed %s, the agent got %s", o.id, o.pressed, o.received)
			}
		} else {
			policies++
			if o.received != "allow_once" {
				t.Errorf("policy request %s: %s", o.id, o.received)
			}
		}
	}
	t.Logf("verified %d policy-decided and %d human-decided requests", policies, humans)
	if humans == 0 {
		t.Fatal("the workload ran no human-decided request")
	}
}

// TestClusterSurvivesFaultsUnderLoad: under a steady mix of policy- and human-decided
// requests, an etcd member is killed and restarted, a replica with agents waiting on it is
// killed and restarted, and a replica is cut off from etcd and healed. Every agent gets its
// answer from some replica, every answer is the stored decision, stored once.
func TestClusterSurvivesFaultsUnderLoad(t *testing.T) {
	etcdtest.Require(t)
	start := time.Now()
	f := startFleet(t, 3, "")
	w := f.runWorkload(3, 6)

	w.waitProgress(t, "before any fault", 30)

	t.Log("fault: an etcd member is killed")
	f.etcd.Members[0].Kill()
	w.waitProgress(t, "with an etcd member down", 30)
	if err := f.etcd.Members[0].Restart(); err != nil {
		t.Fatal(err)
	}

	t.Log("fault: a replica with agents waiting is killed")
	f.waitWaiting(t, 1)
	f.kill(1)
	w.waitProgress(t, "with a replica killed", 30)
	f.restart(1)

	t.Log("fault: a replica is cut off from etcd")
	f.cut(2)
	time.Sleep(2 * fleetLeaseTTL) // long enough to lose its lease and its leaderships
	w.waitProgress(t, "with a replica cut off", 30)
	f.heal(2)
	w.waitProgress(t, "after the partition healed", 30)

	results := w.finish(t)
	f.verify(t, results)
	policies := 0
	for _, o := range results {
		if !o.human {
			policies++
		}
	}
	if policies == 0 {
		t.Error("the workload ran no policy-decided request")
	}
	t.Logf("cluster fault suite: %d requests in %s", len(results), time.Since(start).Round(time.Second))
}

// tgLeader returns the replica that reads Telegram's updates now (the others say standby
// in /healthz), or -1.
func (f *fleet) tgLeader() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	found := -1
	for i, r := range f.reps {
		if r.down {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, m, err := f.call(ctx, "GET", r.srv.URL+"/healthz", "", nil)
		cancel()
		if err != nil {
			continue
		}
		chans, _ := m["channels"].(map[string]any)
		tg, _ := chans["telegram"].(map[string]any)
		if tg != nil && !strings.HasPrefix(str(tg, "detail"), "standby") {
			if found >= 0 {
				return -2 // two replicas reading at once
			}
			found = i
		}
	}
	return found
}

// TestClusterTelegramLeaderTakeover: three replicas share one Telegram bot; only the leader
// reads updates. Under a steady stream of requests decided by presses, the leader is killed:
// another replica takes over within seconds, the presses made meanwhile are handled by it,
// once each, every card is posted once, and every agent gets the decision pressed.
func TestClusterTelegramLeaderTakeover(t *testing.T) {
	etcdtest.Require(t)
	fake := telegramtest.Start(t, telegramtest.Options{Token: tgToken})
	fake.AddChat(telegramtest.Chat{ID: tgOps, Type: "supergroup", Title: "ops"})
	f := startFleet(t, 3, fmt.Sprintf(`
[channels.telegram]
token_env = "TEST_TELEGRAM_TOKEN"
api_url = %q
chats = [%d]
approvers = [%d]
poll_timeout = "3s"
`, fake.URL, tgOps, tgAlice.ID), "TEST_TELEGRAM_TOKEN="+tgToken)
	fake.WaitFor(t, 60*time.Second, "a replica to poll getUpdates", fake.Polling)

	var (
		mu      sync.Mutex
		results []outcome
		queries []string
		failed  []string
	)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var answered atomic.Int64
	for n := 0; n < 4; n++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				o, qid, err := pressOne(f, fake, n, i)
				mu.Lock()
				if err != nil {
					failed = append(failed, err.Error())
					mu.Unlock()
					return
				}
				results, queries = append(results, o), append(queries, qid)
				mu.Unlock()
				answered.Add(1)
				time.Sleep(100 * time.Millisecond) // a human's pace, roughly
			}
		}()
	}
	progress := func(what string, n int64) {
		t.Helper()
		start := answered.Load()
		deadline := time.Now().Add(answerDeadline)
		for answered.Load() < start+n {
			if time.Now().After(deadline) {
				t.Fatalf("%s: only %d presses answered", what, answered.Load()-start)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	progress("before the takeover", 8)

	leader := -1
	for deadline := time.Now().Add(30 * time.Second); leader < 0; {
		if leader = f.tgLeader(); leader == -2 {
			t.Fatal("two replicas read Telegram updates at once")
		}
		if time.Now().After(deadline) {
			t.Fatal("no replica says it leads Telegram")
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("killing the Telegram leader, replica %d", leader)
	dead := f.reps[leader].srv
	killed := time.Now()
	f.kill(leader)
	// The takeover is the first getUpdates after the kill (the dead leader's connection
	// is closed by the kernel, so every later call is another replica's).
	var took time.Duration
	for deadline := time.Now().Add(30 * time.Second); took == 0; {
		for _, c := range fake.Calls("getUpdates") {
			if c.At.After(killed) {
				took = c.At.Sub(killed)
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no replica polled Telegram within 30s of the leader's death")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if l := f.tgLeader(); l == leader || l == -2 {
		t.Fatalf("after the takeover the leader is %d", l)
	}
	t.Logf("another replica polls Telegram %s after the leader was killed (lease %s)", took.Round(10*time.Millisecond), fleetLeaseTTL)
	progress("after the takeover", 8)
	f.restart(leader)
	progress("with the old leader back", 4)
	close(stop)
	wg.Wait()
	for _, m := range failed {
		t.Error(m)
	}
	f.verify(t, results)

	// Every press answered once: a press handled twice would be answered twice.
	count := map[string]int{}
	for _, a := range fake.Answers() {
		count[a.QueryID]++
	}
	for _, q := range queries {
		if count[q] != 1 {
			t.Errorf("press %s answered %d times", q, count[q])
		}
	}
	if u := fake.Unanswered(); len(u) != 0 {
		t.Errorf("presses never answered: %v", u)
	}
	// Every card posted once, but in the one case nothing can rule out (docs/operations.md,
	// "A card posted twice"): the killed replica's post reached Telegram and it died before
	// it learned the message, so the heir posted the card again, and said so.
	cards := map[string]int{}
	for _, m := range fake.BotMessages(tgOps) {
		if i := strings.Index(m.Plain, "Request: "); i >= 0 {
			cards[strings.Fields(m.Plain[i+len("Request: "):])[0]]++
		}
	}
	reposted := 0
	for _, o := range results {
		switch n := cards[o.id]; {
		case n == 1:
		case n == 2 && f.postedAgainAfterDeath(t, fake, dead, killed, o.id):
			reposted++
		default:
			t.Errorf("request %s: %d cards posted", o.id, n)
		}
	}
	// Each agent has one request in flight at a time: the dead replica was posting at most
	// one card per agent when it died.
	if reposted > 4 {
		t.Errorf("%d cards posted again, more than the killed replica can have been posting", reposted)
	}
	t.Logf("%d presses across the takeover; cards posted again after their poster died: %d", len(results), reposted)
}

// postedAgainAfterDeath reports whether request id's two cards are the one case a card is
// posted twice: the dead replica's sendMessage reached Telegram before it was killed, the
// other after, by a replica that logged taking over the dead replica's claim of that post.
func (f *fleet) postedAgainAfterDeath(t *testing.T, fake *telegramtest.Server, dead *testserver.Server, killed time.Time, id string) bool {
	t.Helper()
	names := regexp.MustCompile(`msg=leading role=channel/telegram replica=(\S+)`).FindAllStringSubmatch(dead.Logs(), -1)
	if len(names) == 0 {
		t.Errorf("request %s: 2 cards, and the killed replica's name is not in its log", id)
		return false
	}
	deadName := names[len(names)-1][1]
	var before, after int
	for _, c := range fake.Calls("sendMessage") {
		if c.Status != http.StatusOK || !strings.Contains(c.Params["text"], id) {
			continue
		}
		if c.At.Before(killed) {
			before++
		} else {
			after++
		}
	}
	if before != 1 || after != 1 {
		t.Errorf("request %s: 2 cards, posted %d times before the kill and %d after", id, before, after)
		return false
	}
	said := regexp.MustCompile(`msg="posting a card again[^"]*" request_id=` + id + ` channel=telegram chat=` +
		fmt.Sprint(tgOps) + ` claimed_by=` + regexp.QuoteMeta(deadName) + `(\s|$)`)
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.reps {
		if r.srv != dead && said.MatchString(r.srv.Logs()) {
			t.Logf("request %s: its card was posted again by %s after %s died posting it", id, r.name, deadName)
			return true
		}
	}
	t.Errorf("request %s: 2 cards, and no replica says it took over the post %s claimed", id, deadName)
	return false
}

// pressOne files a request, presses its card in Telegram once and waits for the agent's
// answer on any replica.
func pressOne(f *fleet, fake *telegramtest.Server, n, i int) (outcome, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), answerDeadline)
	defer cancel()
	body := map[string]any{"tool": "Deploy", "args": map[string]any{"target": fmt.Sprintf("tg-%d-%d", n, i)}, "session": fmt.Sprintf("tg-%d-%d", n, i)}
	_, m, err := f.callAny(ctx, "POST", "/v1/requests", testserver.AgentToken, body, is2xx)
	if err != nil {
		return outcome{}, "", fmt.Errorf("filing: %w", err)
	}
	id := str(m, "id")
	var card telegramtest.Message
	for found := false; !found; {
		for _, msg := range fake.BotMessages(tgOps) {
			if strings.Contains(msg.Plain, "Request: "+id) {
				card, found = msg, true
			}
		}
		if ctx.Err() != nil {
			return outcome{}, "", fmt.Errorf("no card for %s", id)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Allow presses decide at once; a Deny press first waits deny_reason_window for a
	// typed reason (covered by the API suite and the single-replica suites).
	o := outcome{id: id, human: true, pressed: "allow_once"}
	data := "ab1:once:"
	if (n+i)%2 == 1 {
		o.pressed, data = "allow_session", "ab1:session:"
	}
	btn, ok := card.ButtonData(data)
	if !ok {
		return outcome{}, "", fmt.Errorf("card of %s has no %s button", id, data)
	}
	qid := fake.Press(tgOps, card.ID, tgAlice, btn)
	for {
		_, m, err := f.callAny(ctx, "GET", "/v1/requests/"+id+"?wait=10s", testserver.AgentToken, nil, is2xx)
		if err != nil {
			return outcome{}, "", fmt.Errorf("waiting for %s: %w", id, err)
		}
		if st := str(m, "state"); st != "pending" {
			o.received, o.state = str(m, "outcome"), st
			return o, qid, nil
		}
	}
}

// answerHold stands between the replicas and the Telegram fake: while armed, the fake
// handles the next sendMessage (the message is in the chat) and its answer is held until
// release, as when the poster dies before the answer reaches it.
type answerHold struct {
	URL     string
	mu      sync.Mutex
	armed   bool
	held    chan struct{}
	release chan struct{}
}

func newAnswerHold(t *testing.T, upstream string) *answerHold {
	target, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	h := &answerHold{held: make(chan struct{}), release: make(chan struct{})}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		hold := h.armed && strings.HasSuffix(r.URL.Path, "/sendMessage")
		if hold {
			h.armed = false
		}
		h.mu.Unlock()
		if !hold {
			proxy.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		proxy.ServeHTTP(rec, r)
		close(h.held)
		select {
		case <-h.release:
		case <-r.Context().Done():
			return
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(func() {
		h.mu.Lock()
		select {
		case <-h.release:
		default:
			close(h.release)
		}
		h.mu.Unlock()
		srv.Close()
	})
	h.URL = srv.URL
	return h
}

func (h *answerHold) arm() {
	h.mu.Lock()
	h.armed = true
	h.mu.Unlock()
}

// cardsOf returns the bot's messages in chat that are request id's cards.
func cardsOf(fake *telegramtest.Server, chat int64, id string) []telegramtest.Message {
	var out []telegramtest.Message
	for _, m := range fake.BotMessages(chat) {
		if strings.Contains(m.Plain, "Request: "+id) {
			out = append(out, m)
		}
	}
	return out
}

// TestClusterCardPosterDiesBeforeRecordingIt is the one case a card is posted twice
// (docs/operations.md, "A card posted twice"): the replica posting a request's card dies
// after Telegram took the message and before it learned the message's id. No replica can
// find that message, so the heir posts the card again and says so. Its card is the
// request's: a press on it decides and it is edited; a press on the lost one after the
// decision changes nothing.
func TestClusterCardPosterDiesBeforeRecordingIt(t *testing.T) {
	etcdtest.Require(t)
	fake := telegramtest.Start(t, telegramtest.Options{Token: tgToken})
	fake.AddChat(telegramtest.Chat{ID: tgOps, Type: "supergroup", Title: "ops"})
	hold := newAnswerHold(t, fake.URL)
	f := startFleet(t, 2, fmt.Sprintf(`
[channels.telegram]
token_env = "TEST_TELEGRAM_TOKEN"
api_url = %q
chats = [%d]
approvers = [%d]
poll_timeout = "3s"
`, hold.URL, tgOps, tgAlice.ID), "TEST_TELEGRAM_TOKEN="+tgToken)
	fake.WaitFor(t, 60*time.Second, "a replica to poll getUpdates", fake.Polling)
	// The poster is the Telegram leader: its name is in its log ("leading").
	poster := -1
	for deadline := time.Now().Add(30 * time.Second); poster < 0; {
		if poster = f.tgLeader(); poster == -2 {
			t.Fatal("two replicas read Telegram updates at once")
		}
		if time.Now().After(deadline) {
			t.Fatal("no replica says it leads Telegram")
		}
		time.Sleep(100 * time.Millisecond)
	}
	heir := 1 - poster
	ctx, cancel := context.WithTimeout(context.Background(), answerDeadline)
	defer cancel()
	hold.arm()
	body := map[string]any{"tool": "Deploy", "args": map[string]any{"target": "prod"}, "session": "lost-card"}
	code, m, err := f.call(ctx, "POST", f.reps[poster].srv.URL+"/v1/requests", testserver.AgentToken, body)
	if err != nil || !is2xx(code) {
		t.Fatalf("filing: %d %v %v", code, m, err)
	}
	id := str(m, "id")
	select {
	case <-hold.held:
	case <-ctx.Done():
		t.Fatal("the card was never sent")
	}
	dead := f.reps[poster].srv
	killed := time.Now()
	f.kill(poster)
	close(hold.release)

	var cards []telegramtest.Message
	for cards = cardsOf(fake, tgOps, id); len(cards) < 2; cards = cardsOf(fake, tgOps, id) {
		if ctx.Err() != nil {
			t.Fatalf("the heir did not post the card again: %d cards", len(cards))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !f.postedAgainAfterDeath(t, fake, dead, killed, id) {
		t.FailNow()
	}
	lost, posted := cards[0], cards[1]
	// The heir's card is the request's card: it is what the press finds.
	btn, ok := posted.ButtonData("ab1:once:")
	if !ok {
		t.Fatalf("the heir's card has no allow-once button: %+v", posted)
	}
	fake.Press(tgOps, posted.ID, tgAlice, btn)
	for {
		_, m, err := f.call(ctx, "GET", f.reps[heir].srv.URL+"/v1/requests/"+id+"?wait=10s", testserver.AgentToken, nil)
		if err != nil {
			t.Fatal(err)
		}
		if st := str(m, "state"); st != "pending" {
			if st != "allowed" || str(m, "outcome") != "allow_once" {
				t.Fatalf("decided %s/%s, want the press's allow_once", st, str(m, "outcome"))
			}
			break
		}
	}
	testserver.Eventually(t, 30*time.Second, "the heir's card edited", func() bool {
		msg, ok := fake.Message(tgOps, posted.ID)
		return ok && msg.Edits > 0 && !msg.HasButtons()
	})
	// The lost card still has its buttons (nothing knows it); a press on it is answered
	// as decided and changes nothing.
	btn, _ = lost.ButtonData("ab1:deny:")
	if btn == "" {
		btn, _ = lost.ButtonData("ab1:once:")
	}
	qid := fake.Press(tgOps, lost.ID, tgAlice, btn)
	testserver.Eventually(t, 30*time.Second, "the press on the lost card answered", func() bool {
		_, ok := fake.AnswerTo(qid)
		return ok
	})
	_, m, err = f.call(ctx, "GET", f.reps[heir].srv.URL+"/v1/requests/"+id, testserver.AgentToken, nil)
	if err != nil || str(m, "state") != "allowed" || str(m, "outcome") != "allow_once" {
		t.Fatalf("after a press on the lost card: %v %v", m, err)
	}
	if n := len(cardsOf(fake, tgOps, id)); n != 2 {
		t.Fatalf("%d cards, want the lost one and the heir's", n)
	}
}
