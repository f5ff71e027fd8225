package gate

import (
	"sync"
	"sync/atomic"

	"github.com/approvebot/approvebot/core/approval"
)

// EventKind names what happened to a request that waits (or waited) for a human.
type EventKind string

const (
	// EventCreated: a request now waits for a human. It is published before anyone can
	// list or decide the request, so a subscriber sees it before its decision.
	EventCreated EventKind = "created"
	// EventDecided: a waiting request was decided (by anyone: a human, the operator API, a
	// timeout, a cancel, a fallback, restart recovery).
	EventDecided EventKind = "decided"
	// EventCardPosted: a card of the request reached a chat.
	EventCardPosted EventKind = "card_posted"
	// EventCardEdited: a card was edited to the request's resolved form, or the edit gave up
	// (Err is set).
	EventCardEdited EventKind = "card_edited"
)

// Event is one change to a request, with the request as it was right after the change. A
// request's created event comes before its decided event; a card event can come after the
// decision and still carry the pending record, so read the request again (Get) for its
// current state. Requests decided at once (by the policy, the floor, a grant…) never
// waited and publish no events; they are in the audit trail.
type Event struct {
	Kind    EventKind
	Request approval.Request
	// Card is the posted or edited card (card events only).
	Card approval.CardRef
	// Err is why a card edit gave up (EventCardEdited only).
	Err error
}

// DefaultEventBuffer is a subscription's buffer when Subscribe is given none.
const DefaultEventBuffer = 256

// Subscription receives the gate's events on C, in the order they happened. The gate never
// waits for a subscriber: one whose buffer is full when an event comes is dropped — C is
// closed and Dropped reports true — and must subscribe again and re-read what it shows.
// C is also closed by Cancel and when the gate closes.
type Subscription struct {
	C       <-chan Event
	ch      chan Event
	hub     *eventHub
	dropped atomic.Bool
}

// Dropped reports whether C was closed because the subscriber fell behind.
func (s *Subscription) Dropped() bool { return s.dropped.Load() }

// Cancel ends the subscription and closes C. It is safe to call more than once.
func (s *Subscription) Cancel() { s.hub.remove(s, false) }

// Subscribe starts receiving events with a buffer of that many events (DefaultEventBuffer
// when buffer <= 0).
func (g *Gate) Subscribe(buffer int) *Subscription {
	if buffer <= 0 {
		buffer = DefaultEventBuffer
	}
	ch := make(chan Event, buffer)
	s := &Subscription{C: ch, ch: ch, hub: &g.events}
	g.events.add(s)
	return s
}

// eventHub fans events out to subscribers without ever blocking the publisher.
type eventHub struct {
	mu     sync.Mutex
	subs   map[*Subscription]struct{}
	closed bool
	// n mirrors len(subs) so that publishing costs one atomic load when nobody listens.
	n atomic.Int32
}

func (h *eventHub) add(s *Subscription) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		close(s.ch)
		return
	}
	if h.subs == nil {
		h.subs = map[*Subscription]struct{}{}
	}
	h.subs[s] = struct{}{}
	h.n.Store(int32(len(h.subs)))
}

func (h *eventHub) remove(s *Subscription, dropped bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.removeLocked(s, dropped)
}

func (h *eventHub) removeLocked(s *Subscription, dropped bool) {
	if _, ok := h.subs[s]; !ok {
		return
	}
	delete(h.subs, s)
	h.n.Store(int32(len(h.subs)))
	s.dropped.Store(dropped)
	close(s.ch)
}

func (h *eventHub) publish(e Event) {
	if h.n.Load() == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		select {
		case s.ch <- e:
		default:
			h.removeLocked(s, true)
		}
	}
}

// close ends every subscription (the gate is shutting down).
func (h *eventHub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for s := range h.subs {
		h.removeLocked(s, false)
	}
}
