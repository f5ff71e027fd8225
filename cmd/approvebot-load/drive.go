package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The four kinds of request an agent sends.
type kind int

const (
	kindAllowed kind = iota // read_file with facts read_only: the policy allows
	kindDenied              // a tool with a tool_permissions deny entry
	kindFloor               // bash `rm -rf /`: the hardline floor refuses
	kindHuman               // a bash command the policy asks about: the simulated approver decides
	numKinds
)

var kindNames = [numKinds]string{"allowed", "denied", "floor", "human"}

// deniedTool has a tool_permissions deny entry in the config the tool writes.
const deniedTool = "drop_database"

// humanPrefix starts every command the simulated approver decides; it decides nothing else.
const humanPrefix = "deploy --service load-"

// mix is the share of each kind, as weights.
type mix [numKinds]int

func parseMix(s string) (mix, error) {
	var m mix
	for _, part := range strings.Split(s, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return m, fmt.Errorf("-mix %q: want kind=weight,… (kinds: allowed, denied, floor, human)", s)
		}
		n, err := strconv.Atoi(val)
		if err != nil || n < 0 {
			return m, fmt.Errorf("-mix: weight of %s must be a non-negative integer", name)
		}
		found := false
		for k, kn := range kindNames {
			if kn == name {
				m[k], found = n, true
			}
		}
		if !found {
			return m, fmt.Errorf("-mix: unknown kind %q (kinds: allowed, denied, floor, human)", name)
		}
	}
	if m.total() == 0 {
		return m, fmt.Errorf("-mix %q: all weights are zero", s)
	}
	return m, nil
}

func (m mix) total() int {
	t := 0
	for _, w := range m {
		t += w
	}
	return t
}

func (m mix) pick(rng *rand.Rand) kind {
	n := rng.IntN(m.total())
	for k, w := range m {
		if n < w {
			return kind(k)
		}
		n -= w
	}
	return kindAllowed
}

func (m mix) String() string {
	parts := make([]string, 0, numKinds)
	for k, w := range m {
		parts = append(parts, fmt.Sprintf("%s=%d", kindNames[k], w))
	}
	return strings.Join(parts, ",")
}

// loadOptions is one mixed-load run.
type loadOptions struct {
	agents      int
	duration    time.Duration
	maxRequests int64
	mix         mix
	approvers   int
	think       time.Duration // how long a request waits before the approver "presses"
	listEvery   time.Duration // how often the approver lists pending requests
	verify      int           // decided requests to re-read from the store and audit trail
	rawClient   bool          // policy-decided requests over rawConn instead of net/http
	sizeEvery   time.Duration // sample the bbolt file's size this often (0: never)
}

// humanSeen is an agent learning the decision on a human-decided request.
type humanSeen struct {
	id    string
	start time.Time // the agent filed the request
	seen  time.Time // the agent's long-poll returned the decision
}

// press is the simulated approver deciding one request over the operator API.
type press struct {
	id   string
	sent time.Time // the decision POST was sent (the press)
	ret  time.Time // the decision POST returned
	code int
}

type agentStats struct {
	lat     [numKinds][]time.Duration
	errs    errCounts
	human   []humanSeen
	decided []string // a sample of decided ids to verify
	// sampleAt is where each kind's three samples are in decided.
	sampleAt [numKinds][3]int
}

// driver runs agents and the approver against a target.
type driver struct {
	t      *target
	api    *apiClient
	opts   loadOptions
	issued atomic.Int64
	// callTimeout bounds every single HTTP call.
	callTimeout time.Duration

	mu      sync.Mutex
	presses map[string]press
	apErrs  errCounts
	// notes count oddities that are not errors.
	notes errCounts
}

const pollWait = "30s"

func (d *driver) agent(issue, calls context.Context, i int, st *agentStats) {
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(i)))
	token := d.t.agents[i%len(d.t.agents)]
	session := "load-" + strconv.Itoa(i)
	bodies := [numKinds][]byte{
		kindAllowed: mustJSON(map[string]any{"tool": "read_file", "args": map[string]any{"path": "/srv/app/README.md"},
			"session": session, "facts": map[string]any{"read_only": true}}),
		kindDenied: mustJSON(map[string]any{"tool": deniedTool, "args": map[string]any{"name": "prod"}, "session": session}),
		kindFloor:  mustJSON(map[string]any{"tool": "bash", "args": map[string]any{"command": "rm -rf /"}, "session": session}),
	}
	want := [numKinds]struct{ state, source string }{
		kindAllowed: {"allowed", "policy"}, kindDenied: {"denied", "policy"}, kindFloor: {"denied", "floor"},
	}
	sampled := [numKinds]int{}
	var raw *rawConn
	var rawReqs [numKinds][]byte
	if d.opts.rawClient {
		var err error
		if raw, err = newRawConn(d.t.url, d.callTimeout); err != nil {
			st.errs.add("raw_client")
			return
		}
		defer raw.close()
		for k := range rawReqs {
			if bodies[k] != nil {
				rawReqs[k] = rawRequest(raw.addr, "POST", "/v1/requests", token, bodies[k])
			}
		}
	}
	for n := 0; issue.Err() == nil; n++ {
		if d.issued.Add(1) > d.opts.maxRequests {
			return
		}
		k := d.opts.mix.pick(rng)
		if k == kindHuman {
			d.human(calls, token, session, i, n, st)
			continue
		}
		start := time.Now()
		var code int
		var answer []byte
		var err error
		if raw != nil {
			code, answer, err = raw.do(rawReqs[k])
		} else {
			ctx, cancel := context.WithTimeout(calls, d.callTimeout)
			code, answer, err = d.api.do(ctx, "POST", "/v1/requests", token, bodies[k])
			cancel()
		}
		lat := time.Since(start)
		if err != nil || code != 200 {
			if code == 202 && k == kindFloor {
				// Not refused by the floor: withdraw it so it cannot pile up, and say so.
				st.errs.add("floor_not_enforced")
				if v, derr := decodeView(answer); derr == nil {
					d.cancel(calls, token, v.ID)
				}
				continue
			}
			st.errs.add(errName(kindNames[k], code, answer, err))
			continue
		}
		v, err := decodeDecided(answer)
		if err != nil || v.State != want[k].state || v.source() != want[k].source || v.Allowed != (want[k].state == "allowed") {
			st.errs.add(kindNames[k] + "_unexpected_" + v.State + "_" + v.source())
			continue
		}
		st.lat[k] = append(st.lat[k], lat)
		// Keep the last three of each kind: with retention on, the first ones are gone.
		if i := sampled[k]; i < 3 {
			st.decided = append(st.decided, v.ID)
			sampled[k]++
			st.sampleAt[k][i] = len(st.decided) - 1
		} else {
			st.decided[st.sampleAt[k][n%3]] = v.ID
		}
	}
}

func (d *driver) cancel(calls context.Context, token, id string) {
	if id == "" {
		return
	}
	ctx, cancel := context.WithTimeout(calls, d.callTimeout)
	defer cancel()
	_, _, _ = d.api.do(ctx, "DELETE", "/v1/requests/"+url.PathEscape(id), token, nil)
}

// human files a request a human must decide, and waits for it like the real client: a
// short wait on the POST, then GET long-polls.
func (d *driver) human(calls context.Context, token, session string, i, n int, st *agentStats) {
	body := mustJSON(map[string]any{"tool": "bash", "args": map[string]any{"command": fmt.Sprintf("%s%d-%d", humanPrefix, i, n)},
		"session": session, "wait": "2s"})
	start := time.Now()
	ctx, cancel := context.WithTimeout(calls, d.callTimeout)
	code, raw, err := d.api.do(ctx, "POST", "/v1/requests", token, body)
	cancel()
	if err != nil || (code != 200 && code != 202) {
		st.errs.add(errName("human_create", code, raw, err))
		return
	}
	v, err := decodeView(raw)
	if err != nil || v.ID == "" {
		st.errs.add("human_create_bad_answer")
		return
	}
	for v.State == "pending" {
		if calls.Err() != nil {
			st.errs.add("human_undecided_at_end")
			return
		}
		ctx, cancel := context.WithTimeout(calls, d.callTimeout+30*time.Second)
		code, raw, err = d.api.do(ctx, "GET", "/v1/requests/"+v.ID+"?wait="+pollWait, token, nil)
		cancel()
		if err != nil || (code != 200 && code != 202) {
			st.errs.add(errName("human_poll", code, raw, err))
			return
		}
		if v, err = decodeView(raw); err != nil {
			st.errs.add("human_poll_bad_answer")
			return
		}
	}
	seen := time.Now()
	if v.State != "allowed" || !v.Allowed || v.source() != "human" {
		st.errs.add("human_unexpected_" + v.State + "_" + v.outcome())
		return
	}
	st.lat[kindHuman] = append(st.lat[kindHuman], seen.Sub(start))
	st.human = append(st.human, humanSeen{id: v.ID, start: start, seen: seen})
	if len(st.decided) < 12 {
		st.decided = append(st.decided, v.ID)
	}
}

// approver is the simulated human: it lists pending requests over the operator API and
// decides each of the load's human requests once it has waited `think`. It lists until ctx
// ends; decisions already sent finish under calls (an agent may learn a decision before
// the approver reads its answer).
func (d *driver) approver(ctx, calls context.Context) {
	work := make(chan string, 1024)
	var wg sync.WaitGroup
	for w := 0; w < d.opts.approvers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range work {
				d.decide(calls, id, "allow_once")
			}
		}()
	}
	defer func() { close(work); wg.Wait() }()
	dispatched := map[string]bool{}
	for ctx.Err() == nil {
		list, err := d.pending(ctx)
		if err != nil {
			if ctx.Err() == nil {
				d.apError("approver_list")
				time.Sleep(10 * time.Millisecond)
			}
			continue
		}
		now := time.Now()
		for _, r := range list {
			if dispatched[r.ID] || r.Tool != "bash" || !strings.HasPrefix(r.Summary, humanPrefix) {
				continue
			}
			if now.Sub(r.CreatedAt) < d.opts.think {
				continue
			}
			dispatched[r.ID] = true
			select {
			case work <- r.ID:
			case <-ctx.Done():
				return
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(d.opts.listEvery):
		}
	}
}

func (d *driver) pending(ctx context.Context) ([]view, error) {
	cctx, cancel := context.WithTimeout(ctx, d.callTimeout)
	defer cancel()
	code, raw, err := d.api.do(cctx, "GET", "/v1/requests?state=pending", d.t.operator, nil)
	if err != nil {
		return nil, err
	}
	if code != 200 {
		return nil, fmt.Errorf("list pending: %d", code)
	}
	var out struct {
		Requests []view `json:"requests"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	return out.Requests, nil
}

func (d *driver) decide(ctx context.Context, id, outcome string) {
	cctx, cancel := context.WithTimeout(ctx, d.callTimeout)
	defer cancel()
	body := []byte(`{"outcome":"` + outcome + `"}`)
	var (
		sent, ret time.Time
		code      int
		raw       []byte
		err       error
	)
	for try := 0; ; try++ {
		sent = time.Now()
		code, raw, err = d.api.do(cctx, "POST", "/v1/requests/"+id+"/decision", d.t.operator, body)
		ret = time.Now()
		// The pending list can show a request whose first write is still being committed;
		// deciding it then answers 404. Try again briefly, and say how often it happened.
		if err != nil || code != 404 || try == 100 {
			break
		}
		d.note("decision_404_before_stored")
		time.Sleep(2 * time.Millisecond)
	}
	if err != nil || code != 200 {
		d.apError(errName("decision", code, raw, err))
		return
	}
	d.mu.Lock()
	d.presses[id] = press{id: id, sent: sent, ret: ret, code: code}
	d.mu.Unlock()
}

func (d *driver) note(name string) {
	d.mu.Lock()
	d.notes.add(name)
	d.mu.Unlock()
}

func (d *driver) apError(name string) {
	d.mu.Lock()
	d.apErrs.add(name)
	d.mu.Unlock()
}

// KindReport is one kind's figures.
type KindReport struct {
	Count  int     `json:"count"`
	RPS    float64 `json:"rps"`
	Errors int     `json:"errors"`
	Dist
}

// LoadReport is a mixed-load run's figures.
type LoadReport struct {
	Agents           int                    `json:"agents"`
	Mix              string                 `json:"mix"`
	Elapsed          float64                `json:"elapsed_s"`
	Kinds            map[string]*KindReport `json:"kinds"`
	PolicyDecided    int                    `json:"policy_decided"`
	PolicyDecidedRPS float64                `json:"policy_decided_rps"`
	TotalRPS         float64                `json:"total_rps"`
	// PressToAgent is from the decision POST being sent to the agent's long-poll returning
	// (includes the durable commit of the decision); DecidedToAgent is from the decision
	// POST returning (negative when the agent learned first).
	PressToAgent   Dist           `json:"press_to_agent"`
	DecidedToAgent Dist           `json:"decided_to_agent"`
	Errors         map[string]int `json:"errors"`
	ErrorCount     int            `json:"error_count"`
	Notes          map[string]int `json:"notes,omitempty"`
	Verified       int            `json:"verified"`
	// ServerCPU is the server's CPU time during the run; CPUPerRequest its cost per request.
	ServerCPU     float64 `json:"server_cpu_s"`
	CPUPerRequest float64 `json:"server_cpu_us_per_request"`
	// ClientCPU is this tool's own CPU time during the run (it shares the machine).
	ClientCPU float64 `json:"client_cpu_s"`
	// DBSizes samples the bbolt file's size every -size-every (with retention on it
	// levels off); DBMax is the largest sample.
	DBSizes []int64 `json:"db_sizes,omitempty"`
	DBMax   int64   `json:"db_max_bytes,omitempty"`
}

func (d *driver) run(ctx context.Context) (*LoadReport, error) {
	d.presses = map[string]press{}
	d.apErrs = errCounts{}
	d.notes = errCounts{}
	issue, stopIssue := context.WithTimeout(ctx, d.opts.duration)
	defer stopIssue()
	// Calls in flight when issuing stops may finish within a bounded grace.
	calls, stopCalls := context.WithTimeout(ctx, d.opts.duration+time.Minute)
	defer stopCalls()
	appCtx, stopApprover := context.WithCancel(calls)
	var apDone sync.WaitGroup
	if d.opts.mix[kindHuman] > 0 {
		apDone.Add(1)
		go func() { defer apDone.Done(); d.approver(appCtx, calls) }()
	}
	var sizes []int64
	sizesDone := make(chan struct{})
	if d.opts.sizeEvery > 0 && d.t.db != "" {
		go func() {
			defer close(sizesDone)
			tick := time.NewTicker(d.opts.sizeEvery)
			defer tick.Stop()
			for {
				select {
				case <-issue.Done():
					return
				case <-tick.C:
					sizes = append(sizes, fileSize(d.t.db))
				}
			}
		}()
	} else {
		close(sizesDone)
	}
	cpu0, _ := procCPU(d.t.pid)
	self0 := selfCPU()
	stats := make([]*agentStats, d.opts.agents)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range stats {
		stats[i] = &agentStats{errs: errCounts{}}
		wg.Add(1)
		go func() { defer wg.Done(); d.agent(issue, calls, i, stats[i]) }()
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu1, _ := procCPU(d.t.pid)
	self1 := selfCPU()
	stopApprover()
	apDone.Wait()

	<-sizesDone
	rep := &LoadReport{Agents: d.opts.agents, Mix: d.opts.mix.String(), Elapsed: elapsed.Seconds(), Kinds: map[string]*KindReport{}, DBSizes: sizes}
	for _, n := range sizes {
		rep.DBMax = max(rep.DBMax, n)
	}
	errs := errCounts{}
	errs.merge(d.apErrs)
	var lat [numKinds][]time.Duration
	var seen []humanSeen
	var sample []string
	for _, st := range stats {
		errs.merge(st.errs)
		for k := range lat {
			lat[k] = append(lat[k], st.lat[k]...)
		}
		seen = append(seen, st.human...)
		sample = append(sample, st.decided...)
	}
	total := 0
	for k := range lat {
		kr := &KindReport{Count: len(lat[k]), Dist: distOf(lat[k])}
		kr.RPS = float64(kr.Count) / elapsed.Seconds()
		for name, n := range errs {
			if strings.HasPrefix(name, kindNames[k]) {
				kr.Errors += n
			}
		}
		rep.Kinds[kindNames[k]] = kr
		total += kr.Count
		if kind(k) != kindHuman {
			rep.PolicyDecided += kr.Count
		}
	}
	rep.PolicyDecidedRPS = float64(rep.PolicyDecided) / elapsed.Seconds()
	rep.TotalRPS = float64(total) / elapsed.Seconds()
	var p2a, d2a []time.Duration
	for _, h := range seen {
		p, ok := d.presses[h.id]
		if !ok {
			continue
		}
		p2a = append(p2a, h.seen.Sub(p.sent))
		d2a = append(d2a, h.seen.Sub(p.ret))
	}
	rep.PressToAgent, rep.DecidedToAgent = distOf(p2a), distOf(d2a)
	if cpu1 > cpu0 {
		rep.ServerCPU = (cpu1 - cpu0).Seconds()
		if total > 0 {
			rep.CPUPerRequest = rep.ServerCPU * 1e6 / float64(total)
		}
	}
	rep.ClientCPU = (self1 - self0).Seconds()
	if d.opts.verify > 0 {
		rep.Verified = d.verify(ctx, sample, d.opts.verify, errs)
	}
	rep.Errors = errs
	rep.ErrorCount = errs.total()
	rep.Notes = d.notes
	return rep, nil
}

// verify re-reads decided requests: each must be decided in the store and have exactly one
// decision entry in the audit trail.
func (d *driver) verify(ctx context.Context, ids []string, n int, errs errCounts) int {
	if len(ids) > n {
		rand.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
		ids = ids[:n]
	}
	ok := 0
	for _, id := range ids {
		if err := d.verifyOne(ctx, id); err != nil {
			errs.add("verify_" + err.Error())
			continue
		}
		ok++
	}
	return ok
}

func (d *driver) verifyOne(ctx context.Context, id string) error {
	cctx, cancel := context.WithTimeout(ctx, d.callTimeout)
	defer cancel()
	code, raw, err := d.api.do(cctx, "GET", "/v1/requests/"+id, d.t.operator, nil)
	if err != nil || code != 200 {
		return fmt.Errorf("get_%d", code)
	}
	if v, err := decodeView(raw); err != nil || v.State == "pending" {
		return fmt.Errorf("not_decided")
	}
	code, raw, err = d.api.do(cctx, "GET", "/v1/audit?request="+id, d.t.operator, nil)
	if err != nil || code != 200 {
		return fmt.Errorf("audit_%d", code)
	}
	var out struct {
		Entries []struct {
			Event string `json:"event"`
		} `json:"entries"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return fmt.Errorf("audit_bad_json")
	}
	n := 0
	for _, e := range out.Entries {
		if e.Event == "decision" {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("audit_%d_decisions", n)
	}
	return nil
}

func mustJSON(v any) []byte {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return raw
}
