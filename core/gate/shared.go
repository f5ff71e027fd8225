package gate

import (
	"context"
	"time"

	"github.com/approvebot/approvebot/core/approval"
)

// Shared is implemented by a store that several approvebot replicas use at once (the etcd
// backend). The gate then keeps, on every replica, a mirror of the cluster's pending
// requests, fed by the store:
//
//   - an agent waiting on any replica is woken by a decision made on any other;
//   - every replica times out every pending request (the creator at the deadline, the
//     others a little later, in case the creator is gone); the store's compare-and-set
//     makes exactly one timeout win;
//   - the channel leader finds the request of any card (LivePending, ByCard);
//   - the caps count the cluster's pending requests (the store enforces them exactly).
//
// Only the replica whose decision won edits the cards; only the request's owner delivers
// them — its creator, or the maintenance leader after the creator died (Adopt) — and, on a
// store that is a PostClaimer, only after claiming the post of each card.
type Shared interface {
	// Follow hands fn every pending request, returns, and then hands it every later
	// change to a pending request made by any replica (created, a card recorded,
	// decided), in commit order, until ctx ends. fn must not block.
	Follow(ctx context.Context, fn func(approval.Request)) error
}

// mirrorTimeoutDelay is how long after a request's deadline a replica that did not create
// it tries to time it out: the creator's own timer normally wins first, and its decision
// reaches the others before theirs fire.
const mirrorTimeoutDelay = time.Second

// shared returns the store's Shared side, or nil for a store of one process.
func (g *Gate) shared() Shared {
	sh, _ := g.store.(Shared)
	return sh
}

// recoverShared starts the mirror: every pending request of the cluster becomes live here
// and is armed; nothing is delivered (its creator does that, or the maintenance leader
// through Adopt).
func (g *Gate) recoverShared(ctx context.Context, sh Shared) (expired, rearmed int, err error) {
	n := 0
	err = sh.Follow(g.bg, func(rec approval.Request) {
		if g.mirror(rec) {
			n++
		}
	})
	return 0, n, err
}

// mirror applies one change the store reported. It reports whether a request became live.
func (g *Gate) mirror(rec approval.Request) bool {
	if rec.State != approval.StatePending {
		g.release(rec)
		return false
	}
	_, added := g.mirrorPending(rec)
	return added
}

// mirrorPending makes a pending request live here (or merges its cards into the live
// one) and returns its waiter; added is true when it was not live yet.
func (g *Gate) mirrorPending(rec approval.Request) (w *waiter, added bool) {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return nil, false
	}
	if w = g.live[rec.ID]; w != nil {
		added := false
		for _, c := range rec.Cards {
			if !hasCard(w.rec.Cards, c) {
				w.rec.Cards = append(w.rec.Cards, c)
				added = true
			}
			g.cards[c] = rec.ID
		}
		if added {
			g.wakeByCardLocked()
		}
		g.mu.Unlock()
		return w, false
	}
	w = &waiter{done: make(chan struct{}), rec: rec, stored: true}
	g.addLive(w)
	for _, c := range rec.Cards {
		g.cards[c] = rec.ID
	}
	if len(rec.Cards) > 0 {
		g.wakeByCardLocked()
	}
	g.mu.Unlock()
	g.arm(w, rec.ExpiresAt.Sub(g.now())+mirrorTimeoutDelay)
	g.metrics.Pending(1)
	// The panel on this replica shows requests filed on any.
	g.events.publish(Event{Kind: EventCreated, Request: rec})
	return w, true
}

// wakeByCardLocked wakes ByCard: a card another replica posted is known here now. g.mu
// is held.
func (g *Gate) wakeByCardLocked() {
	close(g.posted)
	g.posted = make(chan struct{})
}

func hasCard(cards []approval.CardRef, c approval.CardRef) bool {
	for _, o := range cards {
		if o == c {
			return true
		}
	}
	return false
}

// release ends a live request another replica decided: waiters and watchers wake with
// the decision, the timer stops. Cards are the winner's to edit.
func (g *Gate) release(rec approval.Request) {
	if w := g.wake(rec); w != nil {
		g.metrics.Pending(-1)
		g.events.publish(Event{Kind: EventDecided, Request: rec})
	}
}

// follow makes a request that is pending in the store but not live here yet (created on
// another replica a moment ago, its change not yet arrived) live, so that a wait on it is
// woken: the request is made live first and read again after, so a decision is either
// seen by that read or arrives through the store's feed to find it live.
func (g *Gate) follow(ctx context.Context, id string) {
	if g.shared() == nil {
		return
	}
	g.mu.Lock()
	_, live := g.live[id]
	closed := g.closed
	g.mu.Unlock()
	if live || closed {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), followReadTimeout)
	defer cancel()
	rec, err := g.store.Get(ctx, id)
	if err != nil || rec.State != approval.StatePending {
		return
	}
	if _, added := g.mirrorPending(rec); !added {
		return
	}
	if again, err := g.store.Get(ctx, id); err == nil && again.State != approval.StatePending {
		g.release(again)
	}
}

// followReadTimeout bounds the store reads of follow.
const followReadTimeout = 5 * time.Second

// PostClaimer is implemented by a Shared store, so that each card is posted once per chat
// across the replicas: a replica posts a card only after claiming its post, and records
// the posted message (AddCard) after.
type PostClaimer interface {
	// ClaimPost claims posting request id's card to one chat for this replica. It claims
	// only for the request's owner (its creator, or the replica that adopted it), only
	// while the request is pending and no card is recorded for that chat. A claim another
	// replica made and left without a recorded card is taken over: that replica lost the
	// request (it died, or lost its lease) between claiming and recording, so it may have
	// posted a card whose message nobody knows (PostClaim.Previous).
	ClaimPost(ctx context.Context, id string, to approval.Target) (PostClaim, error)
}

// PostClaim is what ClaimPost decided.
type PostClaim struct {
	// Post is true when this replica holds the claim now and posts the card.
	Post bool
	// Previous names the replica whose claim this one took over ("" when there was none).
	// It claimed the post and lost the request before recording a card: when its post
	// reached the chat, the chat shows this request's card twice.
	Previous string
	// Skip says why not to post when Post is false: the request is decided, its card in
	// that chat is recorded, or another replica owns the request and posts it.
	Skip string
}

// The reasons of PostClaim.Skip.
const (
	SkipDecided  = "decided"
	SkipRecorded = "card recorded"
	SkipNotOwner = "another replica owns the request"
)

// Adopt takes over delivery of a pending request whose replica died (the maintenance
// leader calls it for each request the store hands over): it is made live here and its
// card delivered to every routed chat where none is recorded. A recorded card stays the
// request's card (the decision's winner edits it); a chat whose card's post was claimed
// but not recorded gets it again (see PostClaimer).
func (g *Gate) Adopt(rec approval.Request) {
	if rec.State != approval.StatePending {
		return
	}
	g.mirrorPending(rec)
	var missing []approval.Target
	for _, t := range rec.Routes {
		if !hasCardIn(rec.Cards, t) {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		g.log.Info("delivering a request whose replica is gone", "request_id", rec.ID, "chats", len(missing), "cards", len(rec.Cards))
		g.deliver(rec, missing, false)
	}
}

// hasCardIn reports whether a card is recorded for the chat t.
func hasCardIn(cards []approval.CardRef, t approval.Target) bool {
	for _, c := range cards {
		if c.Channel == t.Channel && c.Chat == t.Chat {
			return true
		}
	}
	return false
}

// postClaimer returns the store's PostClaimer side, or nil.
func (g *Gate) postClaimer() PostClaimer {
	pc, _ := g.store.(PostClaimer)
	return pc
}

// Claimer is what a channel asks before handling a platform event (a Telegram update, a
// Slack or Discord interaction) when its resolver offers it: an event delivered twice — to
// a new channel leader after a takeover, or a webhook retried on another replica — is
// handled once. first is false for an event some replica handled or is handling; a first
// claim's done must be called after handling (done(false) lets a redelivery be handled
// again).
type Claimer interface {
	Claim(ctx context.Context, channel, id string) (first bool, done func(handled bool))
}

// EventStore is implemented by stores that remember handled platform events (the etcd
// backend); without it every event is a first (one process reads each event once).
type EventStore interface {
	ClaimEvent(ctx context.Context, channel, id string) (first bool, done func(handled bool), err error)
}

var _ Claimer = (*Gate)(nil)

// Claim claims a platform event for this replica. When the store cannot be reached the
// event is handled anyway: handling it needs the store too, and its decision is the
// compare-and-set, so a second handling can never decide twice.
func (g *Gate) Claim(ctx context.Context, channel, id string) (bool, func(bool)) {
	es, ok := g.store.(EventStore)
	if !ok {
		return true, func(bool) {}
	}
	first, done, err := es.ClaimEvent(ctx, channel, id)
	if err != nil {
		g.log.Warn("claiming a platform event failed; handling it anyway", "channel", channel, "event", id, "err", err)
		return true, func(bool) {}
	}
	return first, done
}
