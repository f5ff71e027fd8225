package gate

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/ledger"
	"github.com/approvebot/approvebot/core/policy"
	"github.com/approvebot/approvebot/core/render"
)

// Get returns a request by id.
func (g *Gate) Get(ctx context.Context, id string) (approval.Request, error) {
	if !ValidID(id) {
		return approval.Request{}, approval.ErrNotFound
	}
	return g.store.Get(ctx, id)
}

// Details returns the full redacted action of a request.
func (g *Gate) Details(ctx context.Context, id string) (string, error) {
	r, err := g.Get(ctx, id)
	if err != nil {
		return "", err
	}
	return r.Details, nil
}

// Wait blocks until the request is decided, d passes, ctx ends or the gate closes, and
// returns the request as it is then.
func (g *Gate) Wait(ctx context.Context, id string, d time.Duration) (approval.Request, error) {
	if !ValidID(id) {
		return approval.Request{}, approval.ErrNotFound
	}
	if d > 0 {
		g.follow(ctx, id)
	}
	g.mu.Lock()
	w := g.live[id]
	g.mu.Unlock()
	if w != nil && d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-w.done:
			return w.rec, nil
		case <-t.C:
		case <-ctx.Done():
		case <-g.closing:
		}
	}
	return g.store.Get(context.WithoutCancel(ctx), id)
}

type watch struct {
	fn func(approval.Request)
}

// Watch calls fn once, when the live request id is decided (with the decided request) or
// when the gate closes (with the request still pending). It reports false when id is not a
// live request (decided, unknown, not stored yet): read the store instead. fn must not
// block: it runs in the goroutine that decided. stop cancels the watch and reports whether
// it did (false: fn was called or is being called). It costs no goroutine, so an agent's
// long-poll can wait on it without holding one.
func (g *Gate) Watch(id string, fn func(approval.Request)) (stop func() bool, ok bool) {
	g.follow(g.bg, id)
	g.mu.Lock()
	defer g.mu.Unlock()
	w := g.live[id]
	if w == nil || !w.stored || w.resolved || g.closed {
		return nil, false
	}
	wt := &watch{fn: fn}
	w.watchers = append(w.watchers, wt)
	return func() bool {
		g.mu.Lock()
		defer g.mu.Unlock()
		for i, o := range w.watchers {
			if o == wt {
				w.watchers = append(w.watchers[:i], w.watchers[i+1:]...)
				return true
			}
		}
		return false
	}, true
}

// LivePending lists live requests routed to (channel, chat), oldest first. An empty channel
// lists every live request.
func (g *Gate) LivePending(channel, chat string) []approval.Request {
	now := g.now()
	g.mu.Lock()
	var out []approval.Request
	for _, w := range g.live {
		if !w.stored || w.resolved || !w.rec.Live(now) {
			continue
		}
		if channel != "" && !routedTo(w.rec.Routes, channel, chat) {
			continue
		}
		out = append(out, w.rec)
	}
	g.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

func routedTo(routes []approval.Target, channel, chat string) bool {
	for _, t := range routes {
		if t.Channel == channel && t.Chat == chat {
			return true
		}
	}
	return false
}

// cardPostWait bounds how long ByCard waits for card posts in flight.
const cardPostWait = 2 * time.Second

// ByCard finds the live request a posted message belongs to. A reply can reach a channel
// before the post that created the card has been recorded; while posts to that chat are in
// flight, ByCard waits for them to finish (up to cardPostWait).
func (g *Gate) ByCard(channel, chat, message string) (approval.Request, bool) {
	ref := approval.CardRef{Channel: channel, Chat: chat, Message: message}
	target := approval.Target{Channel: channel, Chat: chat}
	var timeout <-chan time.Time
	for {
		g.mu.Lock()
		rec, ok := g.cardLocked(ref)
		inFlight := g.posting[target] > 0 || (g.shared() != nil && g.awaitingCardLocked(channel, chat))
		posted := g.posted
		g.mu.Unlock()
		if ok {
			return rec, true
		}
		if !inFlight {
			return approval.Request{}, false
		}
		if timeout == nil {
			t := time.NewTimer(cardPostWait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-posted:
		case <-timeout:
			return approval.Request{}, false
		}
	}
}

// cardLocked is the live request a card belongs to. g.mu must be held.
func (g *Gate) cardLocked(ref approval.CardRef) (approval.Request, bool) {
	id, ok := g.cards[ref]
	if !ok {
		return approval.Request{}, false
	}
	w := g.live[id]
	if w == nil {
		return approval.Request{}, false
	}
	return w.rec, true
}

// awaitingCardLocked reports whether a live request routed to (channel, chat) has no card
// there yet: on a shared store its post may be in flight on another replica. g.mu is held.
func (g *Gate) awaitingCardLocked(channel, chat string) bool {
	for _, w := range g.live {
		if !w.stored || w.resolved || !routedTo(w.rec.Routes, channel, chat) {
			continue
		}
		carded := false
		for _, c := range w.rec.Cards {
			if c.Channel == channel && c.Chat == chat {
				carded = true
				break
			}
		}
		if !carded {
			return true
		}
	}
	return false
}

// Audit appends an entry to the trail, logging a failure.
func (g *Gate) Audit(ctx context.Context, e approval.AuditEntry) {
	if e.Time.IsZero() {
		e.Time = g.now().UTC()
	}
	e.Summary = render.Clean(render.Mask(e.Summary), render.MaxSummary)
	e.Reason = render.Clean(render.Mask(e.Reason), 500)
	if err := g.store.AppendAudit(ctx, e); err != nil {
		g.log.Error("audit append failed", "event", e.Event, "err", err)
	}
}

// SessionUpdate is an operator's change to a session.
type SessionUpdate struct {
	// Agent names the agent whose session changes; "" changes the session name for every
	// agent (also those that use it later).
	Agent      string
	Tier       *string
	Unattended *bool
}

// SessionState is a session as an operator's change left it.
type SessionState struct {
	Name string
	// Agent is the agent whose session it is; "" when the change applied to every agent.
	Agent string
	// Effective is what applies to Agent's session; with Agent "" it is the record every
	// agent of the name shares.
	Effective ledger.Session
	// Agents are, for a change to every agent, what applies to each agent that has its own
	// record of the name, in agent order.
	Agents []ledger.Session
}

func stateOf(name, agent string, recs ledger.Records) SessionState {
	st := SessionState{Name: name, Agent: agent}
	if agent != "" && len(recs.Agents) == 1 {
		st.Effective = ledger.Merge(recs.Agents[0], recs.Shared)
		return st
	}
	st.Effective = recs.Shared
	for _, own := range recs.Agents {
		st.Agents = append(st.Agents, ledger.Merge(own, recs.Shared))
	}
	return st
}

func validSessionTarget(name, agent string) error {
	if name == "" || len(name) > maxSessionLen {
		return invalid("session name must be 1 to %d bytes", maxSessionLen)
	}
	if len(agent) > maxToolLen || strings.IndexFunc(agent, invisibleInName) >= 0 {
		return invalid("agent must be a token name of at most %d bytes without spaces or invisible characters", maxToolLen)
	}
	return nil
}

func scopeNote(agent string) string {
	if agent == "" {
		return " for every agent"
	}
	return " for agent " + agent
}

// UpdateSession changes a session's tier or unattended mark (operator only): one agent's
// session, or with no agent the session name for every agent.
func (g *Gate) UpdateSession(ctx context.Context, name string, u SessionUpdate, by string) (SessionState, error) {
	if err := validSessionTarget(name, u.Agent); err != nil {
		return SessionState{}, err
	}
	if u.Tier != nil && *u.Tier != "" {
		if _, err := policy.ParseTier(*u.Tier); err != nil {
			return SessionState{}, invalid("tier: %v", err)
		}
	}
	var what []string
	if u.Tier != nil {
		what = append(what, fmt.Sprintf("tier=%q", *u.Tier))
	}
	if u.Unattended != nil {
		what = append(what, fmt.Sprintf("unattended=%t", *u.Unattended))
	}
	e := approval.AuditEntry{Time: g.now().UTC(), Event: approval.EventSession, Session: name, Agent: u.Agent, Actor: by,
		Reason: strings.Join(what, " ") + scopeNote(u.Agent)}
	recs, err := g.store.UpdateSession(ctx, u.Agent, name, ledger.Settings{Tier: u.Tier, Unattended: u.Unattended}, e)
	if err != nil {
		return SessionState{}, err
	}
	return stateOf(name, u.Agent, recs), nil
}

// Unpause lifts a session's sticky pause and resets its denial count: one agent's session,
// or with agent "" every agent's session of that name.
func (g *Gate) Unpause(ctx context.Context, name, agent, by string) (SessionState, error) {
	if err := validSessionTarget(name, agent); err != nil {
		return SessionState{}, err
	}
	e := approval.AuditEntry{Time: g.now().UTC(), Event: approval.EventUnpause, Session: name, Agent: agent, Actor: by,
		Reason: "unpaused" + scopeNote(agent)}
	recs, err := g.store.Unpause(ctx, agent, name, e)
	if err != nil {
		return SessionState{}, err
	}
	return stateOf(name, agent, recs), nil
}
