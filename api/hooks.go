package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/internal/hooks"
)

// hookWaitMargin is how long after a request's own deadline a hook endpoint still waits
// for the gate's timeout decision before it refuses on its own.
const hookWaitMargin = 5 * time.Second

// hookRoute is the pattern of the agents' HTTP hook endpoints.
const hookRoute = "POST /v1/hooks/{agent}"

// hookEndpoint answers one hook event of a coding agent, POSTed as the agent's own hook
// input JSON with the agent's bearer token (Claude Code's `type: "http"` hooks, or a curl
// wrapper for the others), with the agent's own hook output JSON — the same adapters and
// rule as `approvebot hook NAME`. Agents read a non-2xx answer as a hook that failed and go
// on with the call, so every answer the endpoint can give in the agent's format is a 200:
// a missing or wrong token, a rate limit, an oversized or malformed body are refusals in
// that format. An empty 200 body is "no decision". It waits for a human as long as the
// request may be pending; if the agent hangs up first, the request is cancelled.
func (s *Server) hookEndpoint(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	var reply hooks.Reply
	if adapter, ok := hooks.Lookup(r.PathValue("agent")); ok {
		reply = s.hookReply(w, r, adapter)
	} else {
		// A mistyped hook URL must not be a hook that silently lets every call through:
		// agents read a 404 as a failed hook and go on. It is refused in the format of
		// Claude Code, the agent whose HTTP hooks post here natively (Codex's PreToolUse and
		// PermissionRequest outputs have the same shape).
		reply = s.unknownHookReply(w, r)
	}
	if len(reply.Body) > 0 {
		w.Header().Set("Content-Type", "application/json")
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(reply.Body)
	s.hookMetric(http.StatusOK, start)
}

func (s *Server) hookMetric(code int, start time.Time) {
	if s.opts.Metrics != nil {
		s.opts.Metrics.HTTP(hookRoute, code, time.Since(start))
	}
}

// unknownHookReply refuses a call posted to a hook endpoint no adapter serves.
func (s *Server) unknownHookReply(w http.ResponseWriter, r *http.Request) hooks.Reply {
	claude, _ := hooks.Lookup("claude-code")
	body, _ := s.readBody(w, r)
	c, _ := claude.Parse(body) // only for the event, so the refusal has its shape
	return hooks.Refuse(claude, c, fmt.Errorf("no hook adapter for %s (approvebot answers /v1/hooks/%s)",
		strconv.Quote(hooks.Printable(r.PathValue("agent"))), strings.Join(hooks.Names(), "|")))
}

// hookReply never fails: every failure is a refusal in the agent's format.
func (s *Server) hookReply(w http.ResponseWriter, r *http.Request, adapter hooks.Adapter) (reply hooks.Reply) {
	var body []byte
	refuse := func(err error) hooks.Reply {
		c, _ := adapter.Parse(body) // only for the event, so the refusal has its shape
		return hooks.Refuse(adapter, c, err)
	}
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("hook handler panic", "agent", adapter.Name(), "panic", fmt.Sprint(p))
			reply = hooks.Refuse(adapter, hooks.Call{}, errors.New("internal error"))
		}
	}()
	body, e := s.readBody(w, r)
	if e != nil {
		return refuse(errors.New(e.Message))
	}
	c, ok := s.authenticate(r)
	if !ok {
		return refuse(errors.New(errUnauthorized.Message))
	}
	if !s.allow(w, c) {
		return refuse(errors.New("too many requests for this token"))
	}
	if e := checkJSON(body); e != nil {
		return refuse(errors.New(e.Message))
	}
	unattended := false
	if v := r.URL.Query().Get("unattended"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return refuse(fmt.Errorf("unattended=%q is not a boolean", v))
		}
		unattended = b
	}
	return hooks.Answer(r.Context(), adapter, body, hooks.Options{}, s.hookAsker(c, unattended))
}

// hookAsker asks the gate directly and waits for the decision.
func (s *Server) hookAsker(c caller, unattended bool) hooks.Asker {
	return func(ctx context.Context, a hooks.Ask) hooks.Outcome {
		// The arguments pass the same JSON rules as POST /v1/requests, also those that an
		// agent sent inside a string (Cursor's MCP tool_input).
		canonical, err := gate.Canonical(a.Args)
		if err != nil {
			return hooks.Outcome{Message: hooks.FailureMessage(fmt.Errorf("args: %w", err))}
		}
		if e := checkJSON(canonical); e != nil {
			return hooks.Outcome{Message: hooks.FailureMessage(errors.New(e.Message))}
		}
		ask := gate.Ask{Tool: a.Tool, Args: a.Args, CanonicalArgs: canonical, Session: a.Session, Cwd: a.Cwd, Reason: a.Reason, Tier: a.Tier, Unattended: unattended}
		if a.Facts != nil {
			ask.Facts = approval.Facts{ReadOnly: a.Facts.ReadOnly, Idempotent: a.Facts.Idempotent, Destructive: a.Facts.Destructive}
		}
		rec, err := s.gate.Submit(ctx, ask, gate.Caller{Name: c.name, Operator: c.role == RoleOperator})
		if err != nil {
			return hooks.Outcome{Message: hooks.FailureMessage(errors.New(s.gateError(err).Message))}
		}
		if rec.State == approval.StatePending {
			if rec, err = s.hookWait(ctx, rec, c); err != nil {
				return hooks.Outcome{Message: hooks.FailureMessage(err)}
			}
		}
		o := hooks.Outcome{Message: rec.Message}
		if rec.State == approval.StateAllowed && rec.Allowed {
			o.Allowed, o.Explicit = true, rec.Explicit
			o.ForSession = rec.Outcome == approval.OutcomeAllowSession
		}
		return o
	}
}

// hookWait waits for a pending request's decision. If the agent hangs up, the request is
// cancelled: an orphan must never be approved.
func (s *Server) hookWait(ctx context.Context, rec approval.Request, c caller) (approval.Request, error) {
	d := time.Until(rec.ExpiresAt) + hookWaitMargin
	if rec.ExpiresAt.IsZero() || d > s.opts.MaxWait {
		d = s.opts.MaxWait
	}
	got, err := s.gate.Wait(ctx, rec.ID, d)
	if ctx.Err() != nil {
		if _, cerr := s.gate.Cancel(context.WithoutCancel(ctx), rec.ID, c.name); cerr != nil {
			var lost *gate.AlreadyDecidedError
			if !errors.As(cerr, &lost) {
				s.log.Warn("cancelling an abandoned hook request failed", "request_id", rec.ID, "err", cerr)
			}
		}
		return rec, errors.New("the agent stopped waiting")
	}
	if err != nil {
		return rec, errors.New(s.gateError(err).Message)
	}
	if got.State == approval.StatePending {
		return got, errors.New("no decision arrived (approvebot is shutting down, or the request outlived its deadline)")
	}
	return got, nil
}
