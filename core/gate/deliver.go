package gate

import (
	"context"
	"errors"
	"sync"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/render"
)

func (g *Gate) editAll(rec approval.Request, refs []approval.CardRef) {
	if len(refs) == 0 {
		return
	}
	card := render.CardFor(&rec)
	for _, ref := range refs {
		ch := g.byName[ref.Channel]
		if ch == nil {
			continue
		}
		if !g.startJob() {
			return
		}
		go func() {
			defer g.jobs.Done()
			ctx, cancel := context.WithTimeout(g.bg, g.opts.EditTimeout)
			defer cancel()
			err := ch.Edit(ctx, ref, card)
			if err != nil {
				g.log.Warn("editing card failed", "request_id", rec.ID, "channel", ref.Channel, "err", err)
			}
			g.events.publish(Event{Kind: EventCardEdited, Request: rec, Card: ref, Err: err})
		}()
	}
}

func (g *Gate) startJob() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.jobs.Add(1)
	return true
}

// deliver posts the card to each of targets in the background. When no card reached a chat
// (none was recorded before and none of these posts succeeded) the request falls back at
// once (deny unless ask_fallback = "allowlist" covers it).
func (g *Gate) deliver(rec approval.Request, targets []approval.Target, fallbackAllows bool) {
	if !g.startJob() {
		return
	}
	go func() {
		defer g.jobs.Done()
		deadline := rec.ExpiresAt
		if d := g.now().Add(g.opts.DeliveryTimeout); d.Before(deadline) {
			deadline = d
		}
		ctx, cancel := context.WithDeadline(g.bg, deadline)
		defer cancel()
		card := render.CardFor(&rec)
		var wg sync.WaitGroup
		var mu sync.Mutex
		delivered := len(rec.Cards)
		for _, t := range targets {
			ch := g.byName[t.Channel]
			if ch == nil {
				continue
			}
			wg.Add(1)
			g.mu.Lock()
			g.posting[t]++
			g.mu.Unlock()
			go func() {
				defer wg.Done()
				defer func() {
					g.mu.Lock()
					if g.posting[t]--; g.posting[t] <= 0 {
						delete(g.posting, t)
					}
					close(g.posted)
					g.posted = make(chan struct{})
					g.mu.Unlock()
				}()
				post, handled := g.claimPost(ctx, rec.ID, t)
				if !post {
					if handled {
						mu.Lock()
						delivered++
						mu.Unlock()
					}
					return
				}
				ref, err := ch.Post(ctx, t.Chat, card)
				g.metrics.Delivery(t.Channel, err)
				if err != nil {
					g.log.Warn("posting card failed", "request_id", rec.ID, "channel", t.Channel, "err", err)
					g.postFailed(rec.ID, t)
					return
				}
				mu.Lock()
				delivered++
				mu.Unlock()
				g.recordCard(rec.ID, ref)
			}()
		}
		wg.Wait()
		if delivered == 0 && ctx.Err() != context.Canceled {
			g.fallback(rec.ID, fallbackAllows)
		}
	}()
}

// claimPost decides whether this replica posts request id's card to t: on a PostClaimer
// store only under the cluster-wide claim, and once per process (a request this replica
// adopts back while its own post is in flight, or after, is not posted again). handled is
// true when the card is not posted here because it needs no post from this replica
// (posted or being posted, recorded, or the request decided or owned by another).
func (g *Gate) claimPost(ctx context.Context, id string, t approval.Target) (post, handled bool) {
	if pc := g.postClaimer(); pc != nil {
		claim, err := pc.ClaimPost(ctx, id, t)
		if err != nil {
			g.log.Warn("claiming a card's post failed; the card is not posted", "request_id", id, "channel", t.Channel, "chat", t.Chat, "err", err)
			return false, false
		}
		if !claim.Post {
			g.log.Debug("not posting a card", "request_id", id, "channel", t.Channel, "chat", t.Chat, "because", claim.Skip)
			return false, true
		}
		if claim.Previous != "" {
			g.log.Warn("posting a card again: the replica that claimed its post lost the request before recording it, so the chat may show this request's card twice",
				"request_id", id, "channel", t.Channel, "chat", t.Chat, "claimed_by", claim.Previous)
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	w := g.live[id]
	if w == nil {
		return true, false
	}
	if w.posts[t] {
		return false, true
	}
	if w.posts == nil {
		w.posts = map[approval.Target]bool{}
	}
	w.posts[t] = true
	return true, false
}

// postFailed forgets that this process posts request id's card to t: a later adoption of
// the request here may try again.
func (g *Gate) postFailed(id string, t approval.Target) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if w := g.live[id]; w != nil {
		delete(w.posts, t)
	}
}

func (g *Gate) recordCard(id string, ref approval.CardRef) {
	cur, err := g.store.AddCard(g.bg, id, ref)
	if err != nil {
		g.log.Error("recording posted card failed", "request_id", id, "err", err)
		return
	}
	if cur.State != approval.StatePending {
		// Decided while the card was in flight: this card was not in the decision's list.
		g.editAll(cur, []approval.CardRef{ref})
		return
	}
	g.mu.Lock()
	if _, live := g.live[id]; live {
		g.cards[ref] = id
	}
	g.mu.Unlock()
	g.events.publish(Event{Kind: EventCardPosted, Request: cur, Card: ref})
}

func (g *Gate) fallback(id string, allows bool) {
	if _, err := g.resolve(g.bg, id, fallbackResolution(allows)); err != nil {
		var lost *AlreadyDecidedError
		if !errors.As(err, &lost) {
			g.log.Error("fallback decision failed", "request_id", id, "err", err)
		}
	}
}
