package etcd

import (
	"context"
	"errors"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
)

var _ gate.PostClaimer = (*Store)(nil)

// ClaimPost claims, for this replica, posting request id's card to one chat (see
// gate.PostClaimer). The claim is the request's post key for that chat, set by one
// compare-and-set that also requires the request to be pending and owned by this replica
// on its current lease: a replica that lost the request (its lease expired, and the
// maintenance leader adopted it) can no longer claim. The key is on no lease, so it
// outlives a poster that dies: the heir finds it, and the request's card, when recorded,
// tells it whether the post was finished. The keys go with the request's decision.
func (s *Store) ClaimPost(ctx context.Context, id string, to approval.Target) (gate.PostClaim, error) {
	pk, ok, ck := s.k.pending(id), s.k.owner(id), s.k.post(id, to.Channel, to.Chat)
	me := s.opts.Name
	ctx, cancel := context.WithTimeout(ctx, s.opts.WriteTimeout)
	defer cancel()
	// previous is the claim this call tried to take over: a take-over whose answer was
	// lost and that did commit is found as this replica's claim on the next round.
	var previous string
	backoff := 20 * time.Millisecond
	retry := func(err error) bool {
		if ctx.Err() != nil || !isTransient(err) {
			return false
		}
		s.log.Warn("etcd: claiming a card's post failed; retrying", "request_id", id, "err", err)
		if !sleepCtx(ctx, backoff) {
			return false
		}
		backoff = min(backoff*2, time.Second)
		return true
	}
	for conflicts := 0; ; {
		if !s.lease.alive() {
			// The lease is about to be given up (see leaseKeeper), or an answer comes late
			// and keeps it: wait for either. Given up, its requests go to the maintenance
			// leader, and the next round finds this replica no longer their owner.
			if !sleepCtx(ctx, backoff) {
				return gate.PostClaim{}, unavailable("claiming a card's post", errors.New("the replica's lease is not being kept alive"))
			}
			backoff = min(backoff*2, time.Second)
			continue
		}
		lease := s.lease.id()
		owned := []clientv3.Cmp{
			clientv3.Compare(clientv3.Value(ok), "=", me),
			clientv3.Compare(clientv3.LeaseValue(ok), "=", int64(lease)),
		}
		resp, err := s.cli.Txn(ctx).
			If(append(owned,
				clientv3.Compare(clientv3.CreateRevision(pk), ">", 0),
				clientv3.Compare(clientv3.CreateRevision(ck), "=", 0))...).
			Then(clientv3.OpPut(ck, me)).
			Else(clientv3.OpGet(pk), clientv3.OpGet(ok), clientv3.OpGet(ck)).
			Commit()
		if err != nil {
			if retry(err) {
				continue
			}
			return gate.PostClaim{}, unavailable("claiming a card's post", err)
		}
		if resp.Succeeded {
			return gate.PostClaim{Post: true, Previous: previous}, nil
		}
		p, o, c := onlyKV(resp, 0), onlyKV(resp, 1), onlyKV(resp, 2)
		if p == nil {
			return gate.PostClaim{Skip: gate.SkipDecided}, nil
		}
		if o == nil || string(o.Value) != me || o.Lease != int64(lease) {
			return gate.PostClaim{Skip: gate.SkipNotOwner}, nil
		}
		r, err := decodeRequest(pk, id, p.Value)
		if re := asRecordError(err); re != nil {
			s.quarantineLater(re) // its stand-in is decided: denied by the store
			return gate.PostClaim{Skip: gate.SkipDecided}, nil
		}
		for _, card := range r.Cards {
			if card.Channel == to.Channel && card.Chat == to.Chat {
				return gate.PostClaim{Skip: gate.SkipRecorded}, nil
			}
		}
		switch {
		case c == nil:
			// The claim went between the compare and the read: read again.
		case string(c.Value) == me:
			// This replica's own claim: an earlier round of this call committed it and its
			// answer was lost (the gate asks once per card and process).
			return gate.PostClaim{Post: true, Previous: previous}, nil
		default:
			// The holder is not the owner any more: it lost the request after claiming and
			// before recording a card. Take the claim over, unless anything changed.
			previous = string(c.Value)
			resp, err = s.cli.Txn(ctx).
				If(append(owned,
					clientv3.Compare(clientv3.ModRevision(pk), "=", p.ModRevision),
					clientv3.Compare(clientv3.ModRevision(ck), "=", c.ModRevision))...).
				Then(clientv3.OpPut(ck, me)).
				Commit()
			if err != nil {
				if retry(err) {
					continue
				}
				return gate.PostClaim{}, unavailable("claiming a card's post", err)
			}
			if resp.Succeeded {
				return gate.PostClaim{Post: true, Previous: previous}, nil
			}
		}
		if conflicts++; conflicts > maxConflicts {
			return gate.PostClaim{}, unavailable("claiming a card's post", errConflict)
		}
	}
}

// onlyKV is the one key a range response of a transaction's branch found, or nil.
func onlyKV(resp *clientv3.TxnResponse, i int) *mvccpb.KeyValue {
	if i >= len(resp.Responses) {
		return nil
	}
	rr := resp.Responses[i].GetResponseRange()
	if rr == nil || len(rr.Kvs) != 1 {
		return nil
	}
	return rr.Kvs[0]
}
