package gate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/ledger"
	"github.com/approvebot/approvebot/core/render"
)

func (g *Gate) arm(w *waiter, d time.Duration) {
	id := w.rec.ID
	if d < 0 {
		d = 0
	}
	g.mu.Lock()
	w.timer = time.AfterFunc(d, func() { g.expire(id) })
	g.mu.Unlock()
}

// Bounds of the delay before timing a request out is tried again when the store could not
// write it (disk full…). Meanwhile no decision can win: the request's timer has fired.
const (
	expireRetryMin = time.Second
	expireRetryMax = 30 * time.Second
)

func (g *Gate) expire(id string) {
	g.mu.Lock()
	w := g.live[id]
	if w != nil {
		w.timedOut = true
	}
	g.mu.Unlock()
	_, err := g.resolve(g.bg, id, g.timeoutResolution("no human answered in time"))
	var lost *AlreadyDecidedError
	if err == nil || errors.As(err, &lost) || errors.Is(err, context.Canceled) {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if w == nil || g.closed || g.live[id] != w {
		g.log.Error("timing out request failed", "request_id", id, "err", err)
		return
	}
	level := slog.LevelDebug // the store's own log says it cannot write; once per request here
	if w.retry == 0 {
		level = slog.LevelError
	}
	w.retry = min(max(2*w.retry, expireRetryMin), expireRetryMax)
	g.log.Log(g.bg, level, "timing out request failed; no decision can win it meanwhile, trying again", "request_id", id, "err", err, "retry_in", w.retry)
	w.timer = time.AfterFunc(w.retry, func() { g.expire(id) })
}

// decideNow stores an immediate decision and returns it.
func (g *Gate) decideNow(ctx context.Context, rec *approval.Request, outcome approval.Outcome, source approval.Source, reason, msg string, explicit bool) (approval.Request, error) {
	rec.Outcome, rec.Source, rec.Reason, rec.Message = outcome, source, reason, msg
	rec.Allowed = outcome.Allows()
	rec.Explicit = rec.Allowed && explicit
	rec.State = approval.StateDenied
	if rec.Allowed {
		rec.State = approval.StateAllowed
	}
	rec.DecidedAt = rec.CreatedAt
	rec.DecidedBy = "approvebot"
	rec.Routes = nil
	if err := g.store.Create(ctx, rec, g.auditOf(rec, approval.EventDecision)); err != nil {
		return approval.Request{}, fmt.Errorf("storing decision: %w", err)
	}
	g.metrics.Decided(outcome, source, 0)
	// Immediate decisions are the hot path and all in the audit trail: debug level only.
	g.log.Debug("request decided", "request_id", rec.ID, "session", rec.Session, "outcome", outcome, "source", source, "rule", rec.Rule, "summary", rec.Summary)
	return *rec, nil
}

func (g *Gate) fallbackNow(ctx context.Context, rec *approval.Request, allows bool) (approval.Request, error) {
	res := fallbackResolution(allows)
	// Never explicit, even an allow: the policy wanted a human, and the agent's own flow
	// may still ask one.
	return g.decideNow(ctx, rec, res.Outcome, res.Source, res.Reason, res.Message, false)
}

// timeoutResolution refuses a request nobody decided before its deadline; reason says
// why it is being timed out now.
func (g *Gate) timeoutResolution(reason string) approval.Resolution {
	return approval.Resolution{
		State: approval.StateDenied, Outcome: approval.OutcomeTimeout, Source: approval.SourceTimeout,
		DecidedBy: "approvebot", Reason: reason, Message: msgTimeout(g.opts.ApprovalTimeout),
	}
}

// fallbackResolution decides a request no channel could deliver: a deny, or an allow once
// when ask_fallback = "allowlist" and the allowlist covers it (allows).
func fallbackResolution(allows bool) approval.Resolution {
	if allows {
		return approval.Resolution{
			State: approval.StateAllowed, Outcome: approval.OutcomeAllowOnce, Source: approval.SourceFallback,
			DecidedBy: "approvebot", Reason: "no channel could deliver; allowlist satisfied", Message: msgAllowedFallback(),
		}
	}
	return approval.Resolution{
		State: approval.StateDenied, Outcome: approval.OutcomeDeny, Source: approval.SourceFallback,
		DecidedBy: "approvebot", Reason: "no channel could deliver the card", Message: msgFallback(),
	}
}

func (g *Gate) auditOf(r *approval.Request, event string) approval.AuditEntry {
	return approval.AuditEntry{
		Time: g.now().UTC(), Event: event, RequestID: r.ID, Session: r.Session, Agent: r.Agent, Tool: r.Tool,
		State: r.State, Outcome: r.Outcome, Source: r.Source, DecidedBy: r.DecidedBy, Reason: r.Reason,
		Summary: r.Summary, Fingerprint: r.Fingerprint, Rule: r.Rule, AskReason: r.AskReason,
	}
}

// Decide applies a human's or operator's decision through the single compare-and-set.
func (g *Gate) Decide(ctx context.Context, id string, d Decision) (approval.Request, error) {
	outcome := d.Outcome
	switch outcome {
	case approval.OutcomeAllowOnce, approval.OutcomeAllowSession, approval.OutcomeDeny:
	case approval.OutcomeAllowAlways:
		// Clamped to a session grant unless the policy persists it for a shell command.
		if g.engine.Config().AllowAlways != "persist" {
			outcome = approval.OutcomeAllowSession
		}
	default:
		return approval.Request{}, invalid("outcome must be allow_once, allow_session, allow_always or deny")
	}
	if d.DecidedBy == "" {
		return approval.Request{}, invalid("decided_by is required")
	}
	reason := render.Redact(d.Reason, maxReasonLen)
	res := approval.Resolution{
		Outcome: outcome, Source: approval.SourceHuman, DecidedBy: d.DecidedBy, Reason: reason,
		RequireLive: true, TimeoutMessage: msgTimeout(g.opts.ApprovalTimeout),
	}
	if outcome == approval.OutcomeDeny {
		res.State = approval.StateDenied
		res.Message = msgDeniedHuman(d.DecidedBy, reason)
	} else {
		res.State = approval.StateAllowed
		res.Explicit = true
		res.Message = msgAllowedHuman(d.DecidedBy, string(outcome))
	}
	res.Audit.Channel = d.Channel
	return g.resolve(ctx, id, res)
}

// Cancel is the agent withdrawing its request: it can never be approved afterwards.
func (g *Gate) Cancel(ctx context.Context, id, by string) (approval.Request, error) {
	res := approval.Resolution{
		State: approval.StateDenied, Outcome: approval.OutcomeCancelled, Source: approval.SourceAgent,
		DecidedBy: by, Reason: "cancelled by the agent", Message: msgCancelled(by),
	}
	return g.resolve(ctx, id, res)
}

// resolve is the single path every decision on a pending request takes.
func (g *Gate) resolve(ctx context.Context, id string, res approval.Resolution) (approval.Request, error) {
	res.DecidedAt = g.now().UTC()
	res.Audit.Time = res.DecidedAt
	var eff ledger.Effects
	g.mu.Lock()
	w := g.live[id]
	timedOut := w != nil && w.timedOut
	var patterns []string
	if w != nil {
		patterns = w.rec.AlwaysPatterns // finish replaces w.rec under g.mu
	}
	g.mu.Unlock()
	if res.RequireLive && timedOut {
		// The request's own timer fired: it is expired whatever the wall clock says.
		res = approval.Resolution{
			State: approval.StateDenied, Outcome: approval.OutcomeTimeout, Source: approval.SourceTimeout,
			DecidedBy: "approvebot", Reason: "no human answered in time", Message: res.TimeoutMessage,
			DecidedAt: res.DecidedAt, Audit: approval.AuditEntry{Time: res.DecidedAt}, RequireLive: true,
		}
	}
	if w != nil && res.Outcome == approval.OutcomeAllowAlways && len(patterns) == 0 {
		res.Outcome = approval.OutcomeAllowSession
	}
	pauseAfter := g.engine.Config().DenialsBeforePause
	if w != nil {
		eff = ledger.EffectsOf(res.Outcome, res.Source, pauseAfter, patterns)
	} else {
		eff = ledger.EffectsOf(res.Outcome, res.Source, pauseAfter, nil)
		if res.Outcome == approval.OutcomeAllowAlways {
			// Without the live record (restart) the patterns come from the store.
			if r, err := g.store.Get(ctx, id); err == nil {
				eff.Allowlist = r.AlwaysPatterns
				if len(eff.Allowlist) == 0 {
					res.Outcome = approval.OutcomeAllowSession
				}
			}
		}
	}
	rec, won, err := g.store.Resolve(ctx, id, res, eff)
	if err != nil {
		return approval.Request{}, err
	}
	if won && res.RequireLive && res.Outcome == approval.OutcomeTimeout {
		g.finish(rec, true)
		return rec, ErrExpired
	}
	if !won {
		if rec.Source == approval.SourceStore {
			// The store found the record damaged and denied it: release its waiters.
			g.finish(rec, false)
		}
		if rec.State == approval.StatePending {
			return rec, fmt.Errorf("internal: request %s still pending after a lost decision", id)
		}
		if res.RequireLive && rec.Outcome == approval.OutcomeTimeout && rec.DecidedAt.Equal(res.DecidedAt) {
			// The store timed it out in this very transaction: the deadline had passed.
			g.finish(rec, true)
			return rec, ErrExpired
		}
		if g.shared() != nil {
			// Decided on another replica: its change may not have reached this one yet.
			g.release(rec)
		}
		return rec, &AlreadyDecidedError{Request: rec}
	}
	g.finish(rec, true)
	return rec, nil
}

// wake ends the live request of rec, if this replica holds it: the timer stops, waiters
// and watchers get rec, its cards are forgotten. It returns the waiter it ended (nil when
// none was live).
func (g *Gate) wake(rec approval.Request) *waiter {
	g.mu.Lock()
	w := g.dropLive(rec.ID)
	var watchers []*watch
	if w != nil {
		if w.timer != nil {
			w.timer.Stop()
		}
		w.rec = rec
		w.resolved = true
		close(w.done)
		watchers, w.watchers = w.watchers, nil
	}
	for _, c := range rec.Cards {
		delete(g.cards, c)
	}
	g.mu.Unlock()
	for _, wt := range watchers {
		wt.fn(rec)
	}
	return w
}

// finish wakes waiters and watchers, stops the timer, records metrics and edits every
// posted card. Only the decision's winner (won) does all of it; anyone else only releases
// a waiter still live.
func (g *Gate) finish(rec approval.Request, won bool) {
	if w := g.wake(rec); w != nil {
		g.metrics.Pending(-1)
	} else if !won {
		return
	}
	g.metrics.Decided(rec.Outcome, rec.Source, rec.DecidedAt.Sub(rec.CreatedAt))
	g.log.Info("request decided", "request_id", rec.ID, "session", rec.Session, "outcome", rec.Outcome, "source", rec.Source, "decided_by", rec.DecidedBy)
	g.events.publish(Event{Kind: EventDecided, Request: rec})
	g.editAll(rec, rec.Cards)
}
