package telegram

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
)

// stubResolver is an in-memory gate.Resolver with the gate's compare-and-set semantics.
type stubResolver struct {
	mu       sync.Mutex
	reqs     map[string]*approval.Request
	cards    map[approval.CardRef]string
	audit    []approval.AuditEntry
	decided  []gate.Decision
	decideCh chan gate.Decision
}

func newStub() *stubResolver {
	return &stubResolver{reqs: map[string]*approval.Request{}, cards: map[approval.CardRef]string{}, decideCh: make(chan gate.Decision, 100)}
}

func (s *stubResolver) add(r approval.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.State == "" {
		r.State = approval.StatePending
	}
	if r.CreatedAt.IsZero() {
		r.CreatedAt = time.Now()
	}
	if r.ExpiresAt.IsZero() {
		r.ExpiresAt = time.Now().Add(time.Minute)
	}
	s.reqs[r.ID] = &r
}

func (s *stubResolver) addCard(id string, ref approval.CardRef) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cards[ref] = id
	s.reqs[id].Cards = append(s.reqs[id].Cards, ref)
}

func (s *stubResolver) Decide(_ context.Context, id string, d gate.Decision) (approval.Request, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.reqs[id]
	if !ok {
		return approval.Request{}, approval.ErrNotFound
	}
	if r.State != approval.StatePending {
		return *r, &gate.AlreadyDecidedError{Request: *r}
	}
	if !time.Now().Before(r.ExpiresAt) {
		r.State, r.Outcome, r.Source, r.DecidedAt = approval.StateDenied, approval.OutcomeTimeout, approval.SourceTimeout, time.Now()
		return *r, gate.ErrExpired
	}
	r.Outcome, r.Reason, r.DecidedBy, r.DecidedAt, r.Source = d.Outcome, d.Reason, d.DecidedBy, time.Now(), approval.SourceHuman
	r.State = approval.StateDenied
	if d.Outcome.Allows() {
		r.State, r.Allowed = approval.StateAllowed, true
	}
	s.decided = append(s.decided, d)
	s.decideCh <- d
	return *r, nil
}

func (s *stubResolver) Get(_ context.Context, id string) (approval.Request, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.reqs[id]; ok {
		return *r, nil
	}
	return approval.Request{}, approval.ErrNotFound
}

func (s *stubResolver) LivePending(channel, chat string) []approval.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []approval.Request
	for _, r := range s.reqs {
		if !r.Live(time.Now()) {
			continue
		}
		for _, t := range r.Routes {
			if t.Channel == channel && t.Chat == chat {
				out = append(out, *r)
				break
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out
}

func (s *stubResolver) ByCard(channel, chat, message string) (approval.Request, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id, ok := s.cards[approval.CardRef{Channel: channel, Chat: chat, Message: message}]
	if !ok || s.reqs[id].State != approval.StatePending {
		return approval.Request{}, false
	}
	return *s.reqs[id], true
}

func (s *stubResolver) Audit(_ context.Context, e approval.AuditEntry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.audit = append(s.audit, e)
}

func (s *stubResolver) Details(_ context.Context, id string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.reqs[id]; ok {
		return r.Details, nil
	}
	return "", approval.ErrNotFound
}

func (s *stubResolver) audits() []approval.AuditEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]approval.AuditEntry(nil), s.audit...)
}

func (s *stubResolver) request(id string) approval.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return *s.reqs[id]
}

func (s *stubResolver) decisions() []gate.Decision {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]gate.Decision(nil), s.decided...)
}
