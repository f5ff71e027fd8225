// Package chattest is the gate as a chat channel sees it, for the channels' own tests: an
// in-memory gate.Resolver with the gate's single compare-and-set (a second decision loses
// with *gate.AlreadyDecidedError; a decision after the deadline times the request out and
// returns gate.ErrExpired), the cards each request was posted as, and a record of every
// decision, audit entry, refused attempt and skipped update. Every channel tests against
// this one double, so they all meet the same gate.
package chattest

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/chatops"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/internal/fakewait"
)

// Resolver is the in-memory gate. Build it with New.
type Resolver struct {
	mu        sync.Mutex
	reqs      map[string]*approval.Request
	cards     map[approval.CardRef]string
	audits    []approval.AuditEntry
	decisions []gate.Decision
	taken     int // decisions handed out by NextDecision
	refused   map[string]int
	skipped   map[string]int
	delay     time.Duration
	changed   chan struct{}
}

var (
	_ gate.Resolver   = (*Resolver)(nil)
	_ chatops.Counter = (*Resolver)(nil)
)

// New returns an empty resolver.
func New() *Resolver {
	return &Resolver{
		reqs: map[string]*approval.Request{}, cards: map[approval.CardRef]string{},
		refused: map[string]int{}, skipped: map[string]int{}, changed: make(chan struct{}),
	}
}

// notify wakes WaitFor. r.mu must be held.
func (r *Resolver) notify() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// Add stores a request. An empty ID gets a new one; an empty state is pending; zero times
// mean created now, expiring in a minute. It returns the request as stored.
func (r *Resolver) Add(req approval.Request) approval.Request {
	if req.ID == "" {
		req.ID = gate.NewID()
	}
	if req.State == "" {
		req.State = approval.StatePending
	}
	if req.CreatedAt.IsZero() {
		req.CreatedAt = time.Now().UTC()
	}
	if req.ExpiresAt.IsZero() {
		req.ExpiresAt = req.CreatedAt.Add(time.Minute)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reqs[req.ID] = &req
	r.notify()
	return req
}

// AddCard records that request id was posted as ref.
func (r *Resolver) AddCard(id string, ref approval.CardRef) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cards[ref] = id
	r.reqs[id].Cards = append(r.reqs[id].Cards, ref)
	r.notify()
}

// SetDecideDelay makes every later Decide take d before it decides (a slow store).
func (r *Resolver) SetDecideDelay(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.delay = d
}

// Decide applies a human decision through the compare-and-set.
func (r *Resolver) Decide(_ context.Context, id string, d gate.Decision) (approval.Request, error) {
	r.mu.Lock()
	delay := r.delay
	r.mu.Unlock()
	if delay > 0 {
		time.Sleep(delay)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	req, ok := r.reqs[id]
	if !ok {
		return approval.Request{}, approval.ErrNotFound
	}
	if req.State != approval.StatePending {
		return *req, &gate.AlreadyDecidedError{Request: *req}
	}
	now := time.Now().UTC()
	if !now.Before(req.ExpiresAt) {
		req.State, req.Outcome, req.Source, req.DecidedAt = approval.StateDenied, approval.OutcomeTimeout, approval.SourceTimeout, now
		r.notify()
		return *req, gate.ErrExpired
	}
	req.Outcome, req.Reason, req.DecidedBy, req.DecidedAt, req.Source = d.Outcome, d.Reason, d.DecidedBy, now, approval.SourceHuman
	req.State, req.Allowed = approval.StateDenied, false
	if d.Outcome.Allows() {
		req.State, req.Allowed = approval.StateAllowed, true
	}
	r.decisions = append(r.decisions, d)
	r.notify()
	return *req, nil
}

// Get returns a request by id.
func (r *Resolver) Get(_ context.Context, id string) (approval.Request, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if req, ok := r.reqs[id]; ok {
		return *req, nil
	}
	return approval.Request{}, approval.ErrNotFound
}

// LivePending lists the live requests routed to (channel, chat), oldest first.
func (r *Resolver) LivePending(channel, chat string) []approval.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	var out []approval.Request
	for _, req := range r.reqs {
		if !req.Live(now) {
			continue
		}
		for _, t := range req.Routes {
			if t.Channel == channel && t.Chat == chat {
				out = append(out, *req)
				break
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// ByCard finds the pending request a posted message belongs to.
func (r *Resolver) ByCard(channel, chat, message string) (approval.Request, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id, ok := r.cards[approval.CardRef{Channel: channel, Chat: chat, Message: message}]
	if !ok || r.reqs[id].State != approval.StatePending {
		return approval.Request{}, false
	}
	return *r.reqs[id], true
}

// Audit records an entry.
func (r *Resolver) Audit(_ context.Context, e approval.AuditEntry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.audits = append(r.audits, e)
	r.notify()
}

// Details returns a request's full action.
func (r *Resolver) Details(ctx context.Context, id string) (string, error) {
	req, err := r.Get(ctx, id)
	return req.Details, err
}

// Refused counts a refused attempt (chatops.Counter).
func (r *Resolver) Refused(channel string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refused[channel]++
	r.notify()
}

// Skipped counts a skipped platform update (chatops.Counter).
func (r *Resolver) Skipped(channel string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.skipped[channel]++
	r.notify()
}

// Request returns a request as it is now (the zero request when unknown).
func (r *Resolver) Request(id string) approval.Request {
	req, _ := r.Get(context.Background(), id)
	return req
}

// Audits returns every audit entry so far.
func (r *Resolver) Audits() []approval.AuditEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]approval.AuditEntry(nil), r.audits...)
}

// Decisions returns every decision that won so far, in order.
func (r *Resolver) Decisions() []gate.Decision {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]gate.Decision(nil), r.decisions...)
}

// Refusals is how many refused attempts channel counted.
func (r *Resolver) Refusals(channel string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.refused[channel]
}

// Skips is how many updates channel skipped.
func (r *Resolver) Skips(channel string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.skipped[channel]
}

// NextDecision waits for the next winning decision not handed out yet and returns it.
func (r *Resolver) NextDecision(tb testing.TB, timeout time.Duration) gate.Decision {
	tb.Helper()
	var d gate.Decision
	r.WaitFor(tb, timeout, "a decision", func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.taken >= len(r.decisions) {
			return false
		}
		d = r.decisions[r.taken]
		r.taken++
		return true
	})
	return d
}

// WaitFor waits until cond holds, checking after every change to the resolver, and fails
// the test when timeout passes first.
func (r *Resolver) WaitFor(tb testing.TB, timeout time.Duration, what string, cond func() bool) {
	tb.Helper()
	fakewait.Until(tb, "chattest", timeout, 50*time.Millisecond, what, func() <-chan struct{} {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.changed
	}, cond)
}
