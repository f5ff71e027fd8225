// Package api is approvebot's HTTP surface for agents and operators: routing, bearer-token
// auth (constant time, 401 vs 403), strict JSON with stable error codes, body caps, per-token
// rate limits, and the wire form of the request object. Every decision goes through the gate.
package api

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/time/rate"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/ledger"
)

// Role is what a token may do.
type Role string

const (
	RoleAgent    Role = "agent"
	RoleOperator Role = "operator"
)

// Token is one configured bearer token.
type Token struct {
	Name  string
	Role  Role
	Value string
}

// AllowlistStore lists and revokes persisted "allow always" entries.
type AllowlistStore interface {
	ListAllowlistJSON(ctx context.Context) (any, error)
	// RevokeAllowlist removes the entries the selector picks and returns them (a JSON
	// array) and how many there were.
	RevokeAllowlist(ctx context.Context, sel AllowlistSelector, audit approval.AuditEntry) (revoked any, n int, err error)
}

// AllowlistSelector picks persisted allowlist entries of one pattern: a nil Agent or Args
// matches every value, a set one exactly that value ("" is the entry for every agent, or
// for any arguments).
type AllowlistSelector struct {
	Pattern string
	Agent   *string
	Args    *string
}

// Backuper streams a consistent copy of the live database (GET /v1/backup). size is told
// the copy's exact length before the first byte is written.
type Backuper interface {
	Backup(ctx context.Context, w io.Writer, size func(int64)) (int64, error)
}

// StoreHealth is the store's part of /healthz.
type StoreHealth struct {
	// Readable is false when a read transaction fails; Writable when writes fail (disk
	// full, EPERM, read-only, EIO, the file deleted or replaced).
	Readable bool
	Writable bool
	// Error says why not, for the operator ("" when both hold).
	Error string
}

// Metrics is what the API reports.
type Metrics interface {
	HTTP(route string, code int, d time.Duration)
	RateLimited()
	Handler() http.Handler
}

// Options configures the server.
type Options struct {
	Gate      *gate.Gate
	Audit     AuditSource
	Allowlist AllowlistStore
	Tokens    []Token
	// MaxBody caps request bodies, in bytes (DefaultMaxBody); MaxWait caps the wait one
	// call may ask for (DefaultMaxWait).
	MaxBody int64
	MaxWait time.Duration
	// RateLimit (per second) and RateBurst apply per token; RateLimit 0 disables limiting.
	RateLimit float64
	RateBurst int
	Metrics   Metrics
	Logger    *slog.Logger
	// Health reports the store's and channels' health for /healthz.
	Health func(ctx context.Context) (StoreHealth, map[string]gate.Health)
	// Backup serves GET /v1/backup (operator only); nil answers 501.
	Backup Backuper
	// Extra mounts more handlers (channel webhooks), path → handler. They do their own auth.
	Extra map[string]http.Handler
}

// Defaults of Options, one place for each: New takes them for a field left zero, and
// config's [server] max_body and max_wait defaults are these constants.
const (
	DefaultMaxBody = 1 << 20
	DefaultMaxWait = 10 * time.Minute
)

// Server serves the API.
type Server struct {
	opts     Options
	gate     *gate.Gate
	log      *slog.Logger
	tokens   []hashedToken
	mux      *http.ServeMux
	limiters sync.Map // token name → *rate.Limiter
	// waiting counts agents waiting in a long-poll now; parked tracks the ones answered
	// without a goroutine (see longpoll.go) so Drain can wait for their answers.
	waiting atomic.Int64
	parked  sync.WaitGroup
}

type hashedToken struct {
	name string
	role Role
	sum  [32]byte
}

type caller struct {
	name string
	role Role
}

// New builds the server.
func New(opts Options) (*Server, error) {
	if opts.Gate == nil {
		return nil, errors.New("api: gate is required")
	}
	if opts.MaxBody <= 0 {
		opts.MaxBody = DefaultMaxBody
	}
	if opts.MaxWait <= 0 {
		opts.MaxWait = DefaultMaxWait
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{opts: opts, gate: opts.Gate, log: opts.Logger, mux: http.NewServeMux()}
	owner := map[[sha256.Size]byte]string{}
	for _, t := range opts.Tokens {
		if len(t.Value) < 16 {
			return nil, fmt.Errorf("token of %q is shorter than 16 characters", t.Name)
		}
		sum := sha256.Sum256([]byte(t.Value))
		// One token for two names would make them one caller: the sessions, grants and
		// pauses of both, and the operator's rights if either is an operator.
		if other, dup := owner[sum]; dup {
			return nil, fmt.Errorf("%q and %q have the same token: each name needs its own", other, t.Name)
		}
		owner[sum] = t.Name
		s.tokens = append(s.tokens, hashedToken{name: t.Name, role: t.Role, sum: sum})
	}
	s.route("POST /v1/requests", RoleAgent, s.createRequest)
	s.route("GET /v1/requests/{id}", RoleAgent, s.getRequest)
	s.route("DELETE /v1/requests/{id}", RoleAgent, s.cancelRequest)
	s.route("GET /v1/requests", RoleOperator, s.listRequests)
	s.route("POST /v1/requests/{id}/decision", RoleOperator, s.decide)
	s.route("PUT /v1/sessions/{session}", RoleOperator, s.putSession)
	s.route("POST /v1/sessions/{session}/unpause", RoleOperator, s.unpause)
	s.route("GET /v1/audit", RoleOperator, s.audit)
	s.route("GET /v1/audit/counts", RoleOperator, s.auditCounts)
	s.route("GET /v1/allowlist", RoleOperator, s.listAllowlist)
	s.route("DELETE /v1/allowlist", RoleOperator, s.revokeAllowlist)
	s.route("GET /v1/backup", RoleOperator, s.backup)
	s.mux.HandleFunc(hookRoute, s.hookEndpoint)
	s.mux.HandleFunc("GET /healthz", s.healthz)
	if opts.Metrics != nil {
		s.mux.Handle("GET /metrics", opts.Metrics.Handler())
	}
	for p, h := range opts.Extra {
		s.mux.Handle(p, h)
	}
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, newError(404, "no_route", "no such endpoint: "+r.Method+" "+r.URL.Path))
	})
	return s, nil
}

// Handler is the root handler.
func (s *Server) Handler() http.Handler { return s.mux }

type handler func(w http.ResponseWriter, r *http.Request, c caller) *apiError

func (s *Server) route(pattern string, need Role, h handler) {
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, code: 200}
		e := s.serve(sw, r, need, h)
		if e == errAnsweredLater {
			return // a parked long-poll: answered (and measured) when it ends
		}
		if e != nil {
			writeError(sw, e)
		}
		if s.opts.Metrics != nil {
			s.opts.Metrics.HTTP(pattern, sw.code, time.Since(start))
		}
	})
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request, need Role, h handler) (e *apiError) {
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p) // a stream cut on purpose (a failed backup): net/http drops the connection
			}
			s.log.Error("handler panic", "path", r.URL.Path, "panic", fmt.Sprint(p))
			e = errInternal
		}
	}()
	c, ok := s.authenticate(r)
	if !ok {
		return errUnauthorized
	}
	if need == RoleOperator && c.role != RoleOperator {
		return errForbidden
	}
	if !s.allow(w, c) {
		return newError(429, "rate_limited", "too many requests for this token; retry after the Retry-After delay")
	}
	return h(w, r, c)
}

func (s *Server) authenticate(r *http.Request) (caller, bool) {
	h := r.Header.Get("Authorization")
	const prefix = "Bearer "
	if len(h) <= len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return caller{}, false
	}
	name, role, ok := s.Authenticate(h[len(prefix):])
	return caller{name: name, role: role}, ok
}

// Authenticate checks a bearer token (surrounding spaces ignored) against the configured
// ones in constant time and returns its name and role. The operator panel signs in with it.
func (s *Server) Authenticate(token string) (name string, role Role, ok bool) {
	sum := sha256.Sum256([]byte(strings.TrimSpace(token)))
	found := -1
	// Compare against every token so timing says nothing about which one matched.
	for i := range s.tokens {
		if subtle.ConstantTimeCompare(sum[:], s.tokens[i].sum[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return "", "", false
	}
	return s.tokens[found].name, s.tokens[found].role, true
}

// Mount serves h under pattern on the API's listener (the operator panel at "/ui/"). h
// does its own authentication.
func (s *Server) Mount(pattern string, h http.Handler) { s.mux.Handle(pattern, h) }

func (s *Server) allow(w http.ResponseWriter, c caller) bool {
	if s.opts.RateLimit <= 0 {
		return true
	}
	v, ok := s.limiters.Load(c.name)
	if !ok {
		burst := s.opts.RateBurst
		if burst <= 0 {
			burst = int(math.Ceil(s.opts.RateLimit))
		}
		v, _ = s.limiters.LoadOrStore(c.name, rate.NewLimiter(rate.Limit(s.opts.RateLimit), burst))
	}
	lim := v.(*rate.Limiter)
	res := lim.Reserve()
	if d := res.Delay(); d > 0 {
		res.Cancel()
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(d.Seconds()))))
		if s.opts.Metrics != nil {
			s.opts.Metrics.RateLimited()
		}
		return false
	}
	return true
}

func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, *apiError) {
	if r.ContentLength > s.opts.MaxBody {
		return nil, errTooLarge
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, errTooLarge
		}
		return nil, newError(400, "bad_body", "reading request body failed")
	}
	return body, nil
}

// --- agent endpoints ---

type createBody struct {
	Tool *string `json:"tool"`
	// Args is decoded in the same pass as the body (numbers as json.Number, kept as
	// written); anything but an object is refused below.
	Args          map[string]any  `json:"args"`
	Session       string          `json:"session"`
	ParentSession string          `json:"parent_session"`
	Cwd           string          `json:"cwd"`
	Reason        string          `json:"reason"`
	Facts         *approval.Facts `json:"facts"`
	Unattended    bool            `json:"unattended"`
	Tier          string          `json:"tier"`
	Wait          string          `json:"wait"`
	_             struct{}        `json:"-"`
}

func (s *Server) createRequest(w http.ResponseWriter, r *http.Request, c caller) *apiError {
	body, e := s.readBody(w, r)
	if e != nil {
		return e
	}
	var b createBody
	if e := decodeStrict(body, &b); e != nil {
		if e.Code == "invalid_field" && strings.HasPrefix(e.Message, `field "args"`) {
			return errArgsNotObject
		}
		return e
	}
	if b.Tool == nil || *b.Tool == "" {
		return newError(400, "missing_tool", "tool is required")
	}
	if b.Args == nil {
		return errArgsNotObject
	}
	args := b.Args
	wait, e := s.parseWait(b.Wait)
	if e != nil {
		return e
	}
	ask := gate.Ask{
		Tool: *b.Tool, Args: args, Session: b.Session, ParentSession: b.ParentSession, Cwd: b.Cwd,
		Reason: b.Reason, Unattended: b.Unattended, Tier: b.Tier,
	}
	if b.Facts != nil {
		ask.Facts = *b.Facts
	}
	rec, err := s.gate.Submit(r.Context(), ask, gate.Caller{Name: c.name, Operator: c.role == RoleOperator})
	if err != nil {
		return s.gateError(err)
	}
	if rec.State == approval.StatePending && wait > 0 {
		if s.park(w, rec, wait, c, true, "POST /v1/requests") {
			return errAnsweredLater
		}
		rec = s.waitOrCancel(r, rec, wait, c)
	}
	writeRequest(w, rec)
	return nil
}

// waitOrCancel blocks for the decision. If the agent goes away first, its request is
// cancelled: an orphan must never be approved.
func (s *Server) waitOrCancel(r *http.Request, rec approval.Request, wait time.Duration, c caller) approval.Request {
	s.waiting.Add(1)
	got, err := s.gate.Wait(r.Context(), rec.ID, wait)
	s.waiting.Add(-1)
	if err != nil {
		return rec
	}
	if got.State == approval.StatePending && r.Context().Err() != nil {
		if cancelled, err := s.gate.Cancel(context.WithoutCancel(r.Context()), rec.ID, c.name); err == nil {
			return cancelled
		}
		if again, err := s.gate.Get(context.WithoutCancel(r.Context()), rec.ID); err == nil {
			return again
		}
	}
	return got
}

var errArgsNotObject = newError(400, "args_not_object", "args must be a JSON object")

func (s *Server) parseWait(v string) (time.Duration, *apiError) {
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, newError(400, "invalid_wait", fmt.Sprintf("wait %q is not a duration such as \"30s\"", v))
	}
	if d > s.opts.MaxWait {
		d = s.opts.MaxWait
	}
	return d, nil
}

func (s *Server) ownRequest(r *http.Request, c caller) (approval.Request, *apiError) {
	id := r.PathValue("id")
	rec, err := s.gate.Get(r.Context(), id)
	if err != nil {
		if errors.Is(err, approval.ErrNotFound) {
			return rec, errNotFound
		}
		return rec, s.gateError(err)
	}
	// An agent sees only its own requests; a wrong owner looks exactly like a missing id.
	if c.role != RoleOperator && rec.Agent != c.name {
		return approval.Request{}, errNotFound
	}
	return rec, nil
}

func (s *Server) getRequest(w http.ResponseWriter, r *http.Request, c caller) *apiError {
	rec, e := s.ownRequest(r, c)
	if e != nil {
		return e
	}
	wait, e := s.parseWait(r.URL.Query().Get("wait"))
	if e != nil {
		return e
	}
	if rec.State == approval.StatePending && wait > 0 {
		if s.park(w, rec, wait, c, false, "GET /v1/requests/{id}") {
			return errAnsweredLater
		}
		s.waiting.Add(1)
		got, err := s.gate.Wait(r.Context(), rec.ID, wait)
		s.waiting.Add(-1)
		if err == nil {
			rec = got
		}
	}
	v := viewOf(&rec)
	if c.role == RoleOperator {
		v.Cards = cardViews(rec.Cards)
	}
	writeView(w, rec, v)
	return nil
}

func (s *Server) cancelRequest(w http.ResponseWriter, r *http.Request, c caller) *apiError {
	rec, e := s.ownRequest(r, c)
	if e != nil {
		return e
	}
	got, err := s.gate.Cancel(r.Context(), rec.ID, c.name)
	if err != nil {
		var lost *gate.AlreadyDecidedError
		if errors.As(err, &lost) {
			return conflict(lost)
		}
		return s.gateError(err)
	}
	writeRequest(w, got)
	return nil
}

// --- operator endpoints ---

func (s *Server) listRequests(w http.ResponseWriter, r *http.Request, c caller) *apiError {
	state := r.URL.Query().Get("state")
	if state != "" && state != "pending" {
		return newError(400, "invalid_state", "only state=pending can be listed")
	}
	list := s.gate.LivePending("", "")
	out := make([]requestView, 0, len(list))
	for i := range list {
		out = append(out, viewOf(&list[i]))
	}
	writeJSON(w, 200, map[string]any{"requests": out})
	return nil
}

type decisionBody struct {
	Outcome string `json:"outcome"`
	Reason  string `json:"reason"`
}

func (s *Server) decide(w http.ResponseWriter, r *http.Request, c caller) *apiError {
	body, e := s.readBody(w, r)
	if e != nil {
		return e
	}
	var b decisionBody
	if e := decodeStrict(body, &b); e != nil {
		return e
	}
	outcome, ok := approval.ParseDecisionOutcome(b.Outcome)
	if !ok {
		return newError(400, "invalid_outcome", "outcome must be allow_once, allow_session, allow_always or deny")
	}
	id := r.PathValue("id")
	cur, err := s.gate.Get(r.Context(), id)
	if err != nil {
		if errors.Is(err, approval.ErrNotFound) {
			return errNotFound
		}
		return s.gateError(err)
	}
	if cur.Agent == c.name {
		return newError(403, "self_decision", "a token may not decide a request it made")
	}
	rec, err := s.gate.Decide(r.Context(), id, gate.Decision{Outcome: outcome, Reason: b.Reason, DecidedBy: c.name, Channel: "api"})
	if err != nil {
		var lost *gate.AlreadyDecidedError
		switch {
		case errors.As(err, &lost):
			return conflict(lost)
		case errors.Is(err, gate.ErrExpired):
			e := newError(409, "expired", "this request expired before the decision")
			v := viewOf(&rec)
			e.Request = v
			return e
		}
		return s.gateError(err)
	}
	writeRequest(w, rec)
	return nil
}

func conflict(lost *gate.AlreadyDecidedError) *apiError {
	e := newError(409, "already_decided", lost.Error())
	e.DecidedBy = lost.Request.DecidedBy
	e.DecidedAt = lost.Request.DecidedAt.UTC().Format(time.RFC3339Nano)
	v := viewOf(&lost.Request)
	e.Request = v
	return e
}

type sessionBody struct {
	Tier       *string `json:"tier"`
	Unattended *bool   `json:"unattended"`
	Agent      *string `json:"agent"`
}

type unpauseBody struct {
	Agent *string `json:"agent"`
}

// targetAgent is the agent a session endpoint applies to: the body's or the query's
// "agent" ("" or absent: every agent). It must name a configured token, so that a typo
// cannot silently change nothing.
func (s *Server) targetAgent(r *http.Request, body *string) (string, *apiError) {
	agent := ""
	q, inQuery := r.URL.Query()["agent"]
	if inQuery {
		if len(q) != 1 {
			return "", newError(400, "invalid_agent", "give agent once")
		}
		agent = q[0]
	}
	if body != nil {
		if inQuery && *body != agent {
			return "", newError(400, "invalid_agent", "the body and the query name different agents")
		}
		agent = *body
	}
	if agent == "" {
		return "", nil
	}
	for _, t := range s.tokens {
		if t.name == agent {
			return agent, nil
		}
	}
	return "", newError(400, "unknown_agent", fmt.Sprintf("no token is named %q; give a configured agent's name, or no agent for every agent", agent))
}

func (s *Server) putSession(w http.ResponseWriter, r *http.Request, c caller) *apiError {
	body, e := s.readBody(w, r)
	if e != nil {
		return e
	}
	var b sessionBody
	if e := decodeStrict(body, &b); e != nil {
		return e
	}
	agent, e := s.targetAgent(r, b.Agent)
	if e != nil {
		return e
	}
	st, err := s.gate.UpdateSession(r.Context(), r.PathValue("session"), gate.SessionUpdate{Agent: agent, Tier: b.Tier, Unattended: b.Unattended}, c.name)
	if err != nil {
		return s.gateError(err)
	}
	writeJSON(w, 200, sessionView(st, "applied to"))
	return nil
}

func (s *Server) unpause(w http.ResponseWriter, r *http.Request, c caller) *apiError {
	body, e := s.readBody(w, r)
	if e != nil {
		return e
	}
	var b unpauseBody
	if len(bytes.TrimSpace(body)) > 0 {
		if e := decodeStrict(body, &b); e != nil {
			return e
		}
	}
	agent, e := s.targetAgent(r, b.Agent)
	if e != nil {
		return e
	}
	st, err := s.gate.Unpause(r.Context(), r.PathValue("session"), agent, c.name)
	if err != nil {
		return s.gateError(err)
	}
	writeJSON(w, 200, sessionView(st, "unpaused"))
	return nil
}

// sessionView is the answer of the session endpoints: the session as it applies to the
// agent named, or, for a change to every agent, the settings shared by every agent and what
// applies to each agent that has its own record, with a note saying so.
func sessionView(st gate.SessionState, did string) map[string]any {
	one := func(s ledger.Session) map[string]any {
		return map[string]any{"tier": s.Tier, "unattended": s.Unattended, "paused": s.Paused, "denials": s.Denials, "parent": s.Parent}
	}
	v := one(st.Effective)
	v["session"] = st.Name
	if st.Agent != "" {
		v["agent"], v["scope"] = st.Agent, "agent"
		return v
	}
	agents := make([]map[string]any, 0, len(st.Agents))
	names := make([]string, 0, len(st.Agents))
	for _, a := range st.Agents {
		m := one(a)
		m["agent"] = a.Agent
		agents = append(agents, m)
		names = append(names, a.Agent)
	}
	note := fmt.Sprintf("%s session %q for every agent (no agent was given)", did, st.Name)
	if len(names) > 0 {
		note += "; agents with their own record of it: " + strings.Join(names, ", ")
	}
	v["agent"], v["scope"], v["agents"], v["note"] = nil, "every_agent", agents, note+`; give "agent" to change one agent's session`
	return v
}

func (s *Server) listAllowlist(w http.ResponseWriter, r *http.Request, c caller) *apiError {
	if s.opts.Allowlist == nil {
		return newError(501, "not_available", "no allowlist store")
	}
	items, err := s.opts.Allowlist.ListAllowlistJSON(r.Context())
	if err != nil {
		return s.gateError(err)
	}
	writeJSON(w, 200, map[string]any{"entries": items})
	return nil
}

func (s *Server) revokeAllowlist(w http.ResponseWriter, r *http.Request, c caller) *apiError {
	if s.opts.Allowlist == nil {
		return newError(501, "not_available", "no allowlist store")
	}
	q := r.URL.Query()
	pattern := q.Get("pattern")
	if pattern == "" {
		return newError(400, "missing_pattern", "pattern query parameter is required")
	}
	sel := AllowlistSelector{Pattern: pattern}
	// Absent, agent and args match every entry of the pattern; present (even empty), only
	// the entry with that value ("" being the entry for every agent, or any arguments).
	for key, dst := range map[string]**string{"agent": &sel.Agent, "args": &sel.Args} {
		if vals, ok := q[key]; ok {
			if len(vals) != 1 {
				return newError(400, "invalid_"+key, "give "+key+" once")
			}
			v := vals[0]
			*dst = &v
		}
	}
	revoked, n, err := s.opts.Allowlist.RevokeAllowlist(r.Context(), sel, approval.AuditEntry{
		Time: time.Now().UTC(), Event: approval.EventAllowlist, Actor: c.name,
	})
	if err != nil {
		return s.gateError(err)
	}
	if n == 0 {
		return newError(404, "not_found", "no persisted allowlist entry matches that pattern, agent and args")
	}
	writeJSON(w, 200, map[string]any{"revoked": revoked})
	return nil
}

// healthz tells the truth: 503 "unhealthy" whenever the store cannot read or write (a
// request that needs a write would be refused), "degraded" while a channel is down.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	st, channels := StoreHealth{Readable: true, Writable: true}, map[string]gate.Health{}
	if s.opts.Health != nil {
		st, channels = s.opts.Health(r.Context())
	}
	status, code := "ok", 200
	if !st.Readable || !st.Writable {
		status, code = "unhealthy", 503
	} else {
		for _, h := range channels {
			if !h.OK {
				status = "degraded"
			}
		}
	}
	out := map[string]any{"status": status, "store": st.Readable, "store_writable": st.Writable, "channels": channels}
	if st.Error != "" {
		out["store_error"] = st.Error
	}
	writeJSON(w, code, out)
}

func (s *Server) gateError(err error) *apiError {
	switch {
	case errors.Is(err, gate.ErrInvalid):
		return newError(400, "invalid_request", strings.TrimPrefix(err.Error(), "invalid: "))
	case errors.Is(err, approval.ErrNotFound):
		return errNotFound
	case errors.Is(err, gate.ErrTooManyPending):
		e := newError(429, "too_many_pending", err.Error())
		e.retryAfter = retryPendingCap
		return e
	case errors.Is(err, gate.ErrClosed):
		return errClosing
	case errors.Is(err, gate.ErrStoreUnavailable):
		// The store logs when it stops and starts writing; one line per refusal would flood.
		s.log.Debug("refused: the store is unavailable", "err", err)
		return storeUnavailable(storeDetail(err))
	case errors.Is(err, context.Canceled):
		return newError(499, "cancelled", "the caller went away")
	}
	s.log.Error("request failed", "err", err)
	return errInternal
}

// storeDetail says, without paths or internals, why the store refused.
func storeDetail(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return "its disk is full"
	case errors.Is(err, syscall.EROFS):
		return "its file system is read-only"
	case errors.Is(err, syscall.EPERM), errors.Is(err, syscall.EACCES):
		return "its file cannot be written"
	case errors.Is(err, syscall.EIO), strings.Contains(err.Error(), syscall.EIO.Error()):
		return "its disk reported an I/O error"
	}
	return "it cannot write to it or read from it"
}

type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	w.code = code
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection (Hijack, write deadlines).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Waiting is how many agents are waiting in a long-poll now.
func (s *Server) Waiting() int { return int(s.waiting.Load()) }

// backupChunkTimeout bounds each write of a backup stream: a reader that stops reading
// does not hold the database's read transaction (and so its free pages) for long.
const backupChunkTimeout = time.Minute

// backup streams a consistent copy of the live database (operator only). The length is
// sent up front: a copy cut short (the connection is dropped on a failure midway) never
// passes for a whole one.
func (s *Server) backup(w http.ResponseWriter, r *http.Request, c caller) *apiError {
	if s.opts.Backup == nil {
		return newError(501, "not_available", "no backup source")
	}
	rc := http.NewResponseController(w)
	started := false
	n, err := s.opts.Backup.Backup(r.Context(), deadlineWriter{w: w, rc: rc}, func(size int64) {
		started = true
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
		w.Header().Set("Content-Disposition", `attachment; filename="approvebot-`+time.Now().UTC().Format("20060102T150405Z")+`.db"`)
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusOK)
	})
	if err == nil {
		s.log.Info("backup sent", "by", c.name, "bytes", n)
		return nil
	}
	if !started {
		return s.gateError(err)
	}
	s.log.Error("backup failed midway: the copy was cut off", "by", c.name, "bytes", n, "err", err)
	panic(http.ErrAbortHandler)
}

type deadlineWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

func (d deadlineWriter) Write(p []byte) (int, error) {
	_ = d.rc.SetWriteDeadline(time.Now().Add(backupChunkTimeout))
	return d.w.Write(p)
}
