package etcd

import (
	"context"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// eventLease is the lease handled events are kept on: one per hour, each living
// DefaultEventRetention, so a key lives between the retention and an hour more.
type eventLease struct {
	mu      sync.Mutex
	id      clientv3.LeaseID
	granted time.Time
}

// ClaimEvent reports whether this replica is the first to handle a platform event (a
// Telegram update, a Slack or Discord interaction), named by its channel and the
// platform's id for it. A first claim lives on the replica's lease while it is handled:
// done(true) then remembers the event as handled for DefaultEventRetention, done(false)
// releases it so that a redelivery is handled again, and a replica that dies before
// either releases it when its lease expires. When etcd cannot be reached the claim is
// refused with the error.
func (s *Store) ClaimEvent(ctx context.Context, channel, id string) (bool, func(handled bool), error) {
	key := s.k.event(channel, id)
	claim := "claimed " + s.opts.Name
	wctx, cancel := context.WithTimeout(ctx, s.opts.WriteTimeout)
	defer cancel()
	resp, err := s.cli.Txn(wctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, claim, clientv3.WithLease(s.lease.id()))).
		Commit()
	if err != nil {
		return false, nil, unavailable("claiming an event", err)
	}
	if !resp.Succeeded {
		return false, func(bool) {}, nil
	}
	return true, func(handled bool) { s.finishEvent(key, claim, handled) }, nil
}

func (s *Store) finishEvent(key, claim string, handled bool) {
	ctx, cancel := context.WithTimeout(s.bg, s.opts.WriteTimeout)
	defer cancel()
	var err error
	if handled {
		var lease clientv3.LeaseID
		if lease, err = s.eventLeaseID(ctx); err == nil {
			_, err = s.cli.Put(ctx, key, "handled", clientv3.WithLease(lease))
		}
	} else {
		_, err = s.cli.Txn(ctx).If(clientv3.Compare(clientv3.Value(key), "=", claim)).Then(clientv3.OpDelete(key)).Commit()
	}
	if err != nil {
		// The claim stays on the replica's lease and goes with it.
		s.log.Warn("etcd: recording a handled event failed", "key", key, "err", err)
	}
}

func (s *Store) eventLeaseID(ctx context.Context) (clientv3.LeaseID, error) {
	el := &s.events
	el.mu.Lock()
	defer el.mu.Unlock()
	if el.id != clientv3.NoLease && time.Since(el.granted) < time.Hour {
		return el.id, nil
	}
	resp, err := s.cli.Grant(ctx, int64(DefaultEventRetention/time.Second))
	if err != nil {
		return clientv3.NoLease, err
	}
	el.id, el.granted = resp.ID, time.Now()
	return el.id, nil
}
