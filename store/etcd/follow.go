package etcd

import (
	"context"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/approvebot/approvebot/core/approval"
)

// Follow hands fn every pending request of the cluster, returns, and from then on hands
// it every change to a pending request that any replica commits, in commit order, from a
// watch on the pending keys: a new or updated pending request (a card recorded), and a
// decided request when its pending key goes. A watch that breaks resumes at the last
// revision it delivered; when etcd has compacted that history, the pending list is read
// again and every request that left it meanwhile is handed over decided, so no decision
// is ever missed. It stops when ctx ends or the store closes.
func (s *Store) Follow(ctx context.Context, fn func(approval.Request)) error {
	s.own.start(s.k.pendingPrefix())
	list, rev, err := s.pendingAt(ctx)
	if err != nil {
		return err
	}
	known := make(map[string]bool, len(list))
	for _, r := range list {
		known[r.ID] = true
		fn(r)
	}
	s.own.forget(rev)
	s.bgJobs.Add(1)
	go func() {
		defer s.bgJobs.Done()
		fctx, cancel := context.WithCancel(ctx)
		defer cancel()
		stop := context.AfterFunc(s.bg, cancel)
		defer stop()
		s.follow(fctx, fn, rev, known)
	}()
	return nil
}

func (s *Store) follow(ctx context.Context, fn func(approval.Request), rev int64, known map[string]bool) {
	prefix := s.k.pendingPrefix()
	backoff := 50 * time.Millisecond
	for ctx.Err() == nil {
		wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
		wch := s.cli.Watch(wctx, prefix, clientv3.WithPrefix(), clientv3.WithRev(rev+1))
		compacted := false
		for wr := range wch {
			if wr.CompactRevision != 0 {
				compacted = true
				break
			}
			if wr.Err() != nil {
				break
			}
			backoff = 50 * time.Millisecond
			for _, ev := range wr.Events {
				key := string(ev.Kv.Key)
				id := strings.TrimPrefix(key, prefix)
				rev = ev.Kv.ModRevision
				if s.own.stale(key, rev) {
					continue
				}
				switch ev.Type {
				case mvccpb.PUT:
					r, err := decodeRequest(key, id, ev.Kv.Value)
					if re := asRecordError(err); re != nil {
						// Its quarantine deletes the pending key: that event hands over
						// the stand-in, denied.
						s.quarantineLater(re)
						continue
					}
					known[id] = true
					fn(r)
				case mvccpb.DELETE:
					delete(known, id)
					if r, ok := s.decidedRecord(ctx, id); ok {
						fn(r)
					}
				}
			}
		}
		cancel()
		if ctx.Err() != nil {
			return
		}
		if compacted {
			var ok bool
			if rev, ok = s.resync(ctx, fn, known); !ok {
				return
			}
			continue
		}
		// The watch broke (the member lost its leader, or the connection): resume at
		// the last revision delivered, on whichever member answers.
		if !sleepCtx(ctx, backoff) {
			return
		}
		backoff = min(backoff*2, 2*time.Second)
	}
}

// resync reads the pending list again after the history the watch needed was compacted.
func (s *Store) resync(ctx context.Context, fn func(approval.Request), known map[string]bool) (int64, bool) {
	backoff := 100 * time.Millisecond
	for {
		list, rev, err := s.pendingAt(ctx)
		if err == nil {
			now := make(map[string]bool, len(list))
			for _, r := range list {
				now[r.ID] = true
			}
			for id := range known {
				if !now[id] {
					if r, ok := s.decidedRecord(ctx, id); ok {
						fn(r)
					}
				}
			}
			for _, r := range list {
				fn(r)
			}
			clear(known)
			for id := range now {
				known[id] = true
			}
			s.own.forget(rev)
			s.log.Warn("etcd: the watch of pending requests was resynchronised", "pending", len(list), "revision", rev)
			return rev, true
		}
		s.log.Warn("etcd: resynchronising the pending requests failed; retrying", "err", err)
		if !sleepCtx(ctx, backoff) {
			return 0, false
		}
		backoff = min(backoff*2, 2*time.Second)
	}
}

// decidedRecord reads a request whose pending key went, retrying while etcd cannot be
// read: a decision is never dropped on the way to a waiter.
func (s *Store) decidedRecord(ctx context.Context, id string) (approval.Request, bool) {
	backoff := 50 * time.Millisecond
	for {
		r, err := s.Get(ctx, id)
		if err == nil {
			return r, r.State != approval.StatePending
		}
		if err == approval.ErrNotFound || ctx.Err() != nil {
			return approval.Request{}, false
		}
		if !sleepCtx(ctx, backoff) {
			return approval.Request{}, false
		}
		backoff = min(backoff*2, 2*time.Second)
	}
}
