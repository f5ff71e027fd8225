// Package gate is approvebot's one chokepoint: every request goes from validation through the
// policy, the ledger and (when a human must decide) the channels to one decision, and every
// path to a decision — button, command, operator, timeout, cancel, restart recovery, fallback
// — goes through Decide and the store's single compare-and-set.
package gate

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"fmt"
	"log/slog"
	"path"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/ledger"
	"github.com/approvebot/approvebot/core/policy"
	"github.com/approvebot/approvebot/core/render"
)

// Store is everything the gate keeps durably. Every write is committed (fsync) before the
// method returns.
type Store interface {
	ledger.Store
	// Lookup reads the agent's session and the fingerprint's grant and denial in it, in one
	// transaction.
	Lookup(ctx context.Context, agent, session, fingerprint string) (ledger.Lookup, error)
	// Create stores a new request (pending or already decided) with its audit entry.
	Create(ctx context.Context, r *approval.Request, audit approval.AuditEntry) error
	// Resolve decides a pending request (compare-and-set) and applies the effects in the
	// same transaction. won is false when it was no longer pending; the returned request
	// is then the earlier decision.
	Resolve(ctx context.Context, id string, res approval.Resolution, eff ledger.Effects) (r approval.Request, won bool, err error)
	Get(ctx context.Context, id string) (approval.Request, error)
	Pending(ctx context.Context) ([]approval.Request, error)
	// AddCard records a posted card and returns the request as it is after that write.
	AddCard(ctx context.Context, id string, ref approval.CardRef) (approval.Request, error)
	// Rearm records a pending request's deadline and wait clock re-read at start after the
	// wall clock stepped (never later than its window allows: the gate computes them). It
	// changes nothing on a request no longer pending and returns the request as stored.
	Rearm(ctx context.Context, id string, expiresAt time.Time, wait *approval.WaitClock) (approval.Request, error)
	// LinkParent records parent as the parent of the agent's session unless it has one.
	LinkParent(ctx context.Context, agent, session, parent string) error
	// UpdateSession applies an operator's settings to the agent's session, or with agent ""
	// to the session name for every agent.
	UpdateSession(ctx context.Context, agent, name string, set ledger.Settings, audit approval.AuditEntry) (ledger.Records, error)
	// Unpause lifts the pause and resets the denial count of the agent's session, or with
	// agent "" of every agent's session of that name.
	Unpause(ctx context.Context, agent, name string, audit approval.AuditEntry) (ledger.Records, error)
	AppendAudit(ctx context.Context, e approval.AuditEntry) error
}

// Metrics receives what the gate measures. Nil methods are not allowed: use NopMetrics.
type Metrics interface {
	Decided(outcome approval.Outcome, source approval.Source, latency time.Duration)
	Pending(delta int)
	Delivery(channel string, err error)
}

// NopMetrics discards everything.
type NopMetrics struct{}

func (NopMetrics) Decided(approval.Outcome, approval.Source, time.Duration) {}
func (NopMetrics) Pending(int)                                              {}
func (NopMetrics) Delivery(string, error)                                   {}

// Route sends matching requests to specific chats of one channel. Empty match fields
// match everything; Tool, Agent and Session are globs.
type Route struct {
	Agent   string
	Session string
	Tool    string
	Channel string
	// Chats overrides the channel's chats; empty means the channel's own.
	Chats []string
}

// Options configures the gate. A field left zero takes its default below.
type Options struct {
	// ApprovalTimeout is how long a request waits for a human (DefaultApprovalTimeout).
	ApprovalTimeout time.Duration
	// DeliveryTimeout bounds how long posting a card may take before the request falls back
	// (DefaultDeliveryTimeout).
	DeliveryTimeout time.Duration
	// EditTimeout bounds editing a resolved card (DefaultEditTimeout).
	EditTimeout time.Duration
	// MaxPendingTotal and MaxPendingPerSession cap the requests waiting for a human, in all
	// and per agent's session (DefaultMaxPendingTotal, DefaultMaxPendingPerSession).
	MaxPendingTotal      int
	MaxPendingPerSession int
	// MaxPendingPerAgent caps one agent token's waiting requests, so that one agent cannot
	// take the whole of MaxPendingTotal (default: half of it).
	MaxPendingPerAgent int
	// OperatorOnly keeps asks pending for the operator API when no chat channel is
	// configured at all (instead of falling back at once). Silence still times out.
	OperatorOnly bool
	Logger       *slog.Logger
	Metrics      Metrics
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Uptime, when set, is the clock that measures a request's wait across a restart
	// whatever the wall clock did (see Uptime).
	Uptime Uptime
	// LastAlive is the store's clock checkpoint at start: approvebot ran at least until
	// then, so a pending request's wait is counted from no earlier (zero: unknown).
	LastAlive time.Time
}

// Defaults of Options, one place for each: New takes them for a field left zero, and
// config's [server] defaults (approval_timeout, delivery_timeout, max_pending,
// max_pending_per_session) are these constants.
const (
	DefaultApprovalTimeout      = 120 * time.Second
	DefaultDeliveryTimeout      = 30 * time.Second
	DefaultEditTimeout          = 60 * time.Second
	DefaultMaxPendingTotal      = 50000
	DefaultMaxPendingPerSession = 200
)

// DefaultMaxPendingPerAgent is the per-agent cap when none is given (config's
// max_pending_per_agent left out or 0): half of the total cap, at least one.
func DefaultMaxPendingPerAgent(total int) int { return max(total/2, 1) }

// Ask is one request from an agent, already decoded.
type Ask struct {
	Tool string
	Args map[string]any
	// CanonicalArgs is the canonical JSON of Args (sorted keys, no whitespace).
	CanonicalArgs []byte
	Session       string
	ParentSession string
	Cwd           string
	Reason        string
	Facts         approval.Facts
	Unattended    bool
	Tier          string
}

// Caller is who asks: an agent or an operator token.
type Caller struct {
	Name     string
	Operator bool
}

// Gate is the chokepoint. Build it with New, then Recover, then serve.
type Gate struct {
	opts     Options
	store    Store
	engine   *policy.Engine
	log      *slog.Logger
	metrics  Metrics
	now      func() time.Time
	channels []Channel
	byName   map[string]Channel
	routes   []Route
	events   eventHub

	mu    sync.Mutex
	live  map[string]*waiter
	cards map[approval.CardRef]string
	// perSession and perAgent count the live requests, for the caps.
	perSession, perAgent map[string]int
	// posting counts card posts in flight per chat, so ByCard can wait for a card whose
	// message exists on the platform but whose reference is not recorded yet.
	posting map[approval.Target]int
	// posted is closed (and replaced) whenever a card post finishes, waking ByCard.
	posted  chan struct{}
	closing chan struct{}
	closed  bool
	jobs    sync.WaitGroup
	// bg is cancelled on Close to stop deliveries and edits.
	bg       context.Context
	bgCancel context.CancelFunc
}

type waiter struct {
	done     chan struct{}
	timer    *time.Timer
	rec      approval.Request
	fallback bool
	resolved bool
	// stored is false while the slot is reserved but the request not yet committed: such
	// a request is not listed anywhere, so nobody can try to decide it before it exists.
	stored bool
	// timedOut is set when the (monotonic) timer fired: from then on no decision can win,
	// whatever the wall clock says. retry is the delay before timing out is tried again
	// when the store could not write it.
	timedOut bool
	retry    time.Duration
	// watchers are called once when the request is decided or the gate closes.
	watchers []*watch
	// posts are the chats this process started posting the card to (see claimPost).
	posts map[approval.Target]bool
}

// New builds a gate. Channels are the configured chat platforms; routes may be empty.
func New(opts Options, store Store, engine *policy.Engine, channels []Channel, routes []Route) (*Gate, error) {
	if opts.ApprovalTimeout <= 0 {
		opts.ApprovalTimeout = DefaultApprovalTimeout
	}
	if opts.DeliveryTimeout <= 0 {
		opts.DeliveryTimeout = DefaultDeliveryTimeout
	}
	if opts.EditTimeout <= 0 {
		opts.EditTimeout = DefaultEditTimeout
	}
	if opts.MaxPendingTotal <= 0 {
		opts.MaxPendingTotal = DefaultMaxPendingTotal
	}
	if opts.MaxPendingPerSession <= 0 {
		opts.MaxPendingPerSession = DefaultMaxPendingPerSession
	}
	if opts.MaxPendingPerAgent <= 0 {
		opts.MaxPendingPerAgent = DefaultMaxPendingPerAgent(opts.MaxPendingTotal)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Metrics == nil {
		opts.Metrics = NopMetrics{}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	g := &Gate{
		opts: opts, store: store, engine: engine, log: opts.Logger, metrics: opts.Metrics, now: opts.Now,
		byName: map[string]Channel{}, live: map[string]*waiter{}, cards: map[approval.CardRef]string{},
		perSession: map[string]int{}, perAgent: map[string]int{},
		posting: map[approval.Target]int{}, posted: make(chan struct{}),
		closing: make(chan struct{}),
	}
	g.bg, g.bgCancel = context.WithCancel(context.Background())
	for _, c := range channels {
		if _, dup := g.byName[c.Name()]; dup {
			return nil, fmt.Errorf("channel %q configured twice", c.Name())
		}
		g.byName[c.Name()] = c
		g.channels = append(g.channels, c)
	}
	for i, r := range routes {
		if _, ok := g.byName[r.Channel]; !ok {
			return nil, fmt.Errorf("routes[%d]: channel %q is not configured", i, r.Channel)
		}
		for _, p := range []string{r.Agent, r.Session, r.Tool} {
			if _, err := path.Match(p, ""); err != nil {
				return nil, fmt.Errorf("routes[%d]: invalid glob %q: %w", i, p, err)
			}
		}
	}
	g.routes = routes
	return g, nil
}

// NewID returns a request id: 26 lowercase base32 characters of 48 bits of millisecond time
// and 80 random bits. The time prefix keeps store keys append-mostly (one dirty page per
// group commit, not one per request); the random part keeps ids unguessable.
func NewID() string {
	var b [16]byte
	ms := uint64(time.Now().UnixMilli())
	for i := 5; i >= 0; i-- {
		b[i] = byte(ms)
		ms >>= 8
	}
	if _, err := rand.Read(b[6:]); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return idEncoding.EncodeToString(b[:])
}

var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// ValidID reports whether s has the shape of a request id.
func ValidID(s string) bool {
	if len(s) != 26 {
		return false
	}
	_, err := idEncoding.DecodeString(s)
	return err == nil
}

const (
	maxToolLen    = 256
	maxSessionLen = 256
	maxCwdLen     = 4096
	maxReasonLen  = 2000
	// maxAskReasonLen bounds the policy's reason kept on a request: it quotes paths of the
	// command, which may be long.
	maxAskReasonLen = 1000
)

// AskReason is what a request records of why the policy asks a human: the evaluation's
// reason, masked and hardened like the summary, or "" when the verdict is not ask.
func AskReason(ev policy.Evaluation) string {
	if ev.Verdict != policy.Ask {
		return ""
	}
	return render.Redact(ev.Reason, maxAskReasonLen)
}

func invisibleInName(r rune) bool {
	return unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError
}

func validateAsk(a *Ask) error {
	switch {
	case a.Tool == "":
		return invalid("tool is required")
	case len(a.Tool) > maxToolLen || !utf8.ValidString(a.Tool):
		return invalid("tool must be valid UTF-8 of at most %d bytes", maxToolLen)
	case strings.IndexFunc(a.Tool, invisibleInName) >= 0:
		// "bash ", "bash\u0000" or "ba\u200bsh" must not pass for another tool.
		return invalid("tool must not contain spaces, control or invisible characters")
	case a.Session == "":
		return invalid("session is required")
	case len(a.Session) > maxSessionLen || len(a.ParentSession) > maxSessionLen:
		return invalid("session must be at most %d bytes", maxSessionLen)
	case len(a.Cwd) > maxCwdLen:
		return invalid("cwd must be at most %d bytes", maxCwdLen)
	case len(a.Reason) > maxReasonLen:
		return invalid("reason must be at most %d bytes", maxReasonLen)
	case a.Args == nil:
		return invalid("args must be a JSON object")
	case a.ParentSession == a.Session:
		return invalid("parent_session must differ from session")
	}
	if a.Tier != "" {
		if _, err := policy.ParseTier(a.Tier); err != nil {
			return invalid("tier: %v", err)
		}
	}
	if a.CanonicalArgs == nil {
		c, err := Canonical(a.Args)
		if err != nil {
			return invalid("args: %v", err)
		}
		a.CanonicalArgs = c
	}
	return nil
}

// Submit runs the decision for one ask. A request a human must decide is returned pending;
// anything else is returned decided, durably stored before Submit returns.
func (g *Gate) Submit(ctx context.Context, a Ask, caller Caller) (approval.Request, error) {
	if err := validateAsk(&a); err != nil {
		return approval.Request{}, err
	}
	if g.isClosed() {
		return approval.Request{}, ErrClosed
	}
	_, isShellTool := g.engine.Command(a.Tool, a.Args)
	fp, err := CallFingerprint(a.Tool, a.Args, a.CanonicalArgs, a.Cwd, isShellTool)
	if err != nil {
		return approval.Request{}, invalid("args: %v", err)
	}
	now := g.now().UTC()
	rec := approval.Request{
		ID: NewID(), State: approval.StatePending, CreatedAt: now, Tool: a.Tool, Session: a.Session,
		ParentSession: a.ParentSession, Agent: caller.Name,
		// Shown to humans and agents, so masked and hardened like the summary (never cut:
		// validateAsk bounds both). The raw cwd is what the policy and the fingerprint read.
		Cwd: render.Redact(a.Cwd, maxCwdLen), AgentReason: render.Redact(a.Reason, maxReasonLen),
		Fingerprint: fp,
	}
	if caller.Name == "" {
		// Session memory belongs to an agent; a nameless caller would write to the record
		// every agent shares.
		return approval.Request{}, invalid("the caller has no name")
	}
	look, err := g.store.Lookup(ctx, caller.Name, a.Session, rec.Fingerprint)
	if err != nil {
		return approval.Request{}, fmt.Errorf("reading session: %w", err)
	}
	scope, err := g.resolveScope(ctx, look.Session, a, caller)
	if err != nil {
		return approval.Request{}, err
	}
	ev := g.engine.Evaluate(policy.Input{Tool: a.Tool, Args: a.Args, Cwd: a.Cwd, Agent: caller.Name, Facts: a.Facts, Tier: scope.tier})
	// The policy's reason may quote the command (the floor does): stored, audited and shown,
	// it is masked like the summary.
	ev.Reason = render.Mask(ev.Reason)
	cmd, isShell := g.engine.Command(a.Tool, a.Args)
	if isShell && ev.Shell != nil && ev.Shell.Normalized != "" && ev.Shell.AnalysisOK {
		cmd = ev.Shell.Normalized
	}
	rec.Summary, rec.Truncated, rec.Details = render.Summarize(a.Tool, a.Args, cmd, isShell)
	rec.Rule = ev.Rule
	rec.AskReason = AskReason(ev)
	if ev.Shell != nil {
		rec.AlwaysPatterns = ev.Shell.AlwaysPatterns
	}

	type immediate struct {
		outcome      approval.Outcome
		source       approval.Source
		reason, text string
		explicit     bool
	}
	var decided *immediate
	switch {
	case ev.Source == approval.SourceFloor:
		decided = &immediate{approval.OutcomeDeny, approval.SourceFloor, ev.Reason, msgDeniedPolicy("floor", ev.Rule, ev.Reason), false}
	case scope.paused:
		decided = &immediate{approval.OutcomeDeny, approval.SourcePaused, "session paused", msgPaused(a.Session), false}
	case ev.Verdict == policy.Deny:
		decided = &immediate{approval.OutcomeDeny, ev.Source, ev.Reason, msgDeniedPolicy(string(ev.Source), ev.Rule, ev.Reason), false}
	case ev.Verdict == policy.Allow:
		decided = &immediate{approval.OutcomeAllowOnce, ev.Source, ev.Reason, msgAllowedPolicy(ev.Rule), ev.Explicit}
	case look.Denied:
		decided = &immediate{approval.OutcomeDeny, approval.SourceLedger, "denied earlier in this session", msgLedger(), false}
	case look.Granted:
		decided = &immediate{approval.OutcomeAllowSession, approval.SourceGrant, "", msgAllowedGrant(), true}
	case scope.unattended:
		decided = &immediate{approval.OutcomeDeny, approval.SourceUnattended, "no human is attached", msgUnattended(), false}
	}
	if decided != nil {
		if err := g.recordParent(ctx, scope); err != nil {
			return approval.Request{}, err
		}
		return g.decideNow(ctx, &rec, decided.outcome, decided.source, decided.reason, decided.text, decided.explicit)
	}

	rec.Routes = g.route(&rec)
	if len(rec.Routes) == 0 && !(len(g.channels) == 0 && g.opts.OperatorOnly) {
		if err := g.recordParent(ctx, scope); err != nil {
			return approval.Request{}, err
		}
		return g.fallbackNow(ctx, &rec, g.engine.FallbackAllows(ev))
	}
	rec.ExpiresAt = now.Add(g.opts.ApprovalTimeout)
	rec.Wait = g.waitClock(now, g.opts.ApprovalTimeout, 0)
	rec.ShowAllowAlways = g.engine.Config().AllowAlways == "persist" && len(rec.AlwaysPatterns) > 0
	w := &waiter{done: make(chan struct{}), rec: rec, fallback: g.engine.FallbackAllows(ev)}
	if err := g.admit(&rec, w); err != nil {
		return approval.Request{}, err
	}
	if err := g.recordParent(ctx, scope); err != nil {
		g.forget(rec.ID)
		return approval.Request{}, err
	}
	if err := g.store.Create(ctx, &rec, g.auditOf(&rec, approval.EventRequest)); err != nil {
		g.forget(rec.ID)
		return approval.Request{}, fmt.Errorf("storing request: %w", err)
	}
	// Published before the request can be listed or decided, so that no subscriber sees
	// its decision first.
	g.events.publish(Event{Kind: EventCreated, Request: rec})
	g.mu.Lock()
	w.stored = true
	g.mu.Unlock()
	g.arm(w, rec.ExpiresAt.Sub(g.now()))
	g.metrics.Pending(1)
	g.log.Info("request pending", "request_id", rec.ID, "session", rec.Session, "tool", rec.Tool, "summary", rec.Summary,
		"rule", rec.Rule, "ask_reason", rec.AskReason)
	if len(rec.Routes) > 0 {
		g.deliver(rec, rec.Routes, w.fallback)
	}
	return rec, nil
}

type scope struct {
	tier       policy.Tier
	unattended bool
	// paused is set when the session or one of its ancestors is paused: a paused parent's
	// children are not a way around the pause.
	paused bool
	// agent, session and link name the parent link to record when this request names a
	// parent its session has none of; it is written only once the request itself will be.
	agent, session, link string
}

func (g *Gate) recordParent(ctx context.Context, sc scope) error {
	if sc.link == "" {
		return nil
	}
	if err := g.store.LinkParent(ctx, sc.agent, sc.session, sc.link); err != nil {
		return fmt.Errorf("recording parent session: %w", err)
	}
	return nil
}

// resolveScope resolves the tier (request > session > global, an agent can only tighten),
// the unattended mark and the pause, inheriting all three from the parent chain of the
// caller's own sessions. It returns a new parent link to record, so later requests of the
// child inherit even without parent_session; s itself is left as read.
func (g *Gate) resolveScope(ctx context.Context, s ledger.Session, a Ask, caller Caller) (scope, error) {
	global := g.engine.GlobalTier()
	tier := global
	if s.Tier != "" {
		t, err := policy.ParseTier(s.Tier)
		if err != nil {
			return scope{}, fmt.Errorf("session %q has an invalid tier %q", s.Name, s.Tier)
		}
		tier = t
	}
	if a.Tier != "" {
		t, _ := policy.ParseTier(a.Tier)
		if caller.Operator {
			tier = t
		} else {
			tier = policy.StricterTier(tier, t)
		}
	}
	unattended := a.Unattended || s.Unattended
	paused := s.Paused
	sc := scope{agent: caller.Name, session: a.Session}
	if a.ParentSession != "" && s.Parent == "" {
		sc.link = a.ParentSession
	}
	// Both the recorded parent and the one this request names restrict it: naming another
	// parent is no way out of the recorded one's unattended mark, tier or pause. Parents
	// are the caller's own sessions: another agent's session of the same name is not.
	seen := map[string]bool{a.Session: true}
	for _, parent := range []string{s.Parent, a.ParentSession} {
		for depth := 0; parent != "" && !seen[parent] && depth < 16; depth++ {
			seen[parent] = true
			ps, err := g.store.Session(ctx, caller.Name, parent)
			if err != nil {
				return scope{}, fmt.Errorf("reading parent session: %w", err)
			}
			unattended = unattended || ps.Unattended
			if ps.Tier != "" {
				if t, err := policy.ParseTier(ps.Tier); err == nil {
					tier = policy.StricterTier(tier, t)
				}
			}
			paused = paused || ps.Paused
			parent = ps.Parent
		}
	}
	sc.tier, sc.unattended, sc.paused = tier, unattended, paused
	return sc, nil
}

func (g *Gate) route(r *approval.Request) []approval.Target {
	var out []approval.Target
	seen := map[approval.Target]bool{}
	add := func(ch string, chats []string) {
		for _, c := range chats {
			t := approval.Target{Channel: ch, Chat: c}
			if !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	matched := false
	for _, rt := range g.routes {
		if !globMatch(rt.Agent, r.Agent) || !globMatch(rt.Session, r.Session) || !globMatch(rt.Tool, r.Tool) {
			continue
		}
		matched = true
		chats := rt.Chats
		if len(chats) == 0 {
			chats = g.byName[rt.Channel].Chats()
		}
		add(rt.Channel, chats)
	}
	if !matched {
		for _, c := range g.channels {
			add(c.Name(), c.Chats())
		}
	}
	return out
}

func globMatch(pattern, s string) bool {
	if pattern == "" {
		return true
	}
	ok, _ := path.Match(pattern, s)
	return ok
}

func (g *Gate) admit(rec *approval.Request, w *waiter) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return ErrClosed
	}
	if len(g.live) >= g.opts.MaxPendingTotal {
		return fmt.Errorf("%w: %d requests are already waiting for a human", ErrTooManyPending, len(g.live))
	}
	if n := g.perAgent[rec.Agent]; n >= g.opts.MaxPendingPerAgent {
		return fmt.Errorf("%w: agent %q already has %d requests waiting (max_pending_per_agent)", ErrTooManyPending, rec.Agent, n)
	}
	// A session belongs to its agent: the per-session cap counts that agent's requests.
	if n := g.perSession[sessionKey(rec)]; n >= g.opts.MaxPendingPerSession {
		return fmt.Errorf("%w: session %q already has %d requests waiting", ErrTooManyPending, rec.Session, n)
	}
	g.addLive(w)
	return nil
}

// addLive and dropLive keep g.live and its counts together; g.mu is held.
func (g *Gate) addLive(w *waiter) {
	g.live[w.rec.ID] = w
	g.perSession[sessionKey(&w.rec)]++
	g.perAgent[w.rec.Agent]++
}

func sessionKey(r *approval.Request) string { return r.Agent + "\x00" + r.Session }

func (g *Gate) dropLive(id string) *waiter {
	w := g.live[id]
	if w == nil {
		return nil
	}
	delete(g.live, id)
	if k := sessionKey(&w.rec); g.perSession[k] <= 1 {
		delete(g.perSession, k)
	} else {
		g.perSession[k]--
	}
	if g.perAgent[w.rec.Agent] <= 1 {
		delete(g.perAgent, w.rec.Agent)
	} else {
		g.perAgent[w.rec.Agent]--
	}
	return w
}

func (g *Gate) forget(id string) {
	g.mu.Lock()
	g.dropLive(id)
	g.mu.Unlock()
}
