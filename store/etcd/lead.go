package etcd

import (
	"context"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"

	"github.com/approvebot/approvebot/core/approval"
)

// Lead runs fn while this replica leads role (one leader per role across the cluster:
// concurrency.Election on the replica's lease), and campaigns again whenever the
// leadership ends, until ctx ends. fn's context ends when the leadership does: the lease
// is lost (etcd unreachable for 60% of its TTL), or the store closes. A replica that
// dies loses its leaderships when its lease expires; one that stops resigns at once.
func (s *Store) Lead(ctx context.Context, role string, fn func(ctx context.Context)) {
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil && s.bg.Err() == nil {
		id, lost, changed := s.lease.current()
		select {
		case <-lost:
			// Wait for the replacement lease.
			select {
			case <-changed:
			case <-ctx.Done():
				return
			case <-s.bg.Done():
				return
			}
			continue
		default:
		}
		if !s.leadOnce(ctx, role, id, lost, fn) {
			if !sleepCtx(ctx, backoff) {
				return
			}
			backoff = min(backoff*2, 2*time.Second)
			continue
		}
		backoff = 100 * time.Millisecond
	}
}

// leadOnce campaigns on the given lease and runs fn while leading. It reports whether it
// led at all.
func (s *Store) leadOnce(ctx context.Context, role string, id clientv3.LeaseID, lost <-chan struct{}, fn func(ctx context.Context)) bool {
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stopBg := context.AfterFunc(s.bg, cancel)
	defer stopBg()
	go func() {
		select {
		case <-lost:
			cancel()
		case <-lctx.Done():
		}
	}()
	// The session only wraps the replica's lease: orphaned, never closed, since closing
	// would revoke the lease the replica's other roles and requests live on.
	sess, err := concurrency.NewSession(s.cli, concurrency.WithLease(id), concurrency.WithContext(lctx))
	if err != nil {
		return false
	}
	defer sess.Orphan()
	go func() {
		select {
		case <-sess.Done():
			cancel()
		case <-lctx.Done():
		}
	}()
	e := concurrency.NewElection(sess, s.k.election(role))
	if err := e.Campaign(lctx, s.opts.Name); err != nil {
		if lctx.Err() == nil {
			s.log.Warn("etcd: campaign failed", "role", role, "err", err)
		}
		return false
	}
	s.log.Info("leading", "role", role, "replica", s.opts.Name)
	fn(lctx)
	rctx, rcancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer rcancel()
	if err := e.Resign(rctx); err != nil {
		s.log.Warn("etcd: resigning failed (the lease ends it)", "role", role, "err", err)
	}
	s.log.Info("no longer leading", "role", role, "replica", s.opts.Name)
	return true
}

// Leader returns the name of role's leader ("" when there is none).
func (s *Store) Leader(ctx context.Context, role string) (string, error) {
	ctx, cancel := s.readCtx(ctx)
	defer cancel()
	resp, err := s.cli.Get(ctx, s.k.election(role)+"/", clientv3.WithFirstCreate()...)
	if err != nil {
		return "", unavailable("reading the leader", err)
	}
	if len(resp.Kvs) == 0 {
		return "", nil
	}
	return string(resp.Kvs[0].Value), nil
}

// Adopt hands fn every pending request whose replica is gone (its lease expired or was
// revoked) after taking it over on this replica's lease: at once for those already
// orphaned, then as their owners go, until ctx ends. Run it on one replica only (the
// maintenance leader): fn delivers the request's cards when none was recorded.
func (s *Store) Adopt(ctx context.Context, fn func(approval.Request)) error {
	for ctx.Err() == nil {
		rev, err := s.adoptOrphans(ctx, fn)
		if err != nil {
			if !sleepCtx(ctx, time.Second) {
				return nil
			}
			continue
		}
		wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
		wch := s.cli.Watch(wctx, s.k.ownerPrefix(), clientv3.WithPrefix(), clientv3.WithRev(rev+1), clientv3.WithFilterPut())
		for wr := range wch {
			if wr.Err() != nil {
				break
			}
			for _, ev := range wr.Events {
				id := string(ev.Kv.Key)[len(s.k.ownerPrefix()):]
				s.adoptOne(ctx, id, fn)
			}
		}
		cancel()
		if !sleepCtx(ctx, 100*time.Millisecond) {
			return nil
		}
	}
	return nil
}

// adoptOrphans takes over every pending request without an owner and returns the
// revision it read at.
func (s *Store) adoptOrphans(ctx context.Context, fn func(approval.Request)) (int64, error) {
	list, rev, err := s.pendingAt(ctx)
	if err != nil {
		return 0, err
	}
	rctx, cancel := s.readCtx(ctx)
	defer cancel()
	resp, err := s.cli.Get(rctx, s.k.ownerPrefix(), clientv3.WithPrefix(), clientv3.WithKeysOnly(), clientv3.WithRev(rev))
	if err != nil {
		return 0, unavailable("listing request owners", err)
	}
	owned := make(map[string]bool, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		owned[string(kv.Key)[len(s.k.ownerPrefix()):]] = true
	}
	for _, r := range list {
		if !owned[r.ID] {
			s.adoptOne(ctx, r.ID, fn)
		}
	}
	return rev, nil
}

// adoptOne takes one orphan over. A failure etcd may outlast is tried again while this
// replica leads (ctx): an orphan left behind would get no card until it times out. A
// take-over whose answer was lost and that did commit is found on the next round as this
// replica's (its name on its lease).
func (s *Store) adoptOne(ctx context.Context, id string, fn func(approval.Request)) {
	ok := s.k.owner(id)
	pk := s.k.pending(id)
	backoff := 50 * time.Millisecond
	var resp *clientv3.TxnResponse
	for unknown := false; ; unknown = true {
		lease := s.lease.id()
		wctx, cancel := context.WithTimeout(ctx, s.opts.WriteTimeout)
		var err error
		resp, err = s.cli.Txn(wctx).
			If(clientv3.Compare(clientv3.CreateRevision(ok), "=", 0), clientv3.Compare(clientv3.CreateRevision(pk), ">", 0)).
			Then(clientv3.OpPut(ok, s.opts.Name, clientv3.WithLease(lease)), clientv3.OpGet(pk)).
			Else(clientv3.OpGet(ok), clientv3.OpGet(pk)).
			Commit()
		cancel()
		if err == nil {
			if !resp.Succeeded {
				o := onlyKV(resp, 0)
				if !unknown || o == nil || string(o.Value) != s.opts.Name || o.Lease != int64(lease) {
					return // decided, or another replica took it
				}
				// Ours: an earlier round committed.
			}
			break
		}
		s.log.Warn("etcd: adopting an orphaned request failed", "request_id", id, "err", err)
		if ctx.Err() != nil || !isTransient(err) || !sleepCtx(ctx, backoff) {
			return
		}
		backoff = min(backoff*2, time.Second)
	}
	kvs := resp.Responses[1].GetResponseRange().Kvs
	if len(kvs) != 1 {
		return
	}
	r, err := decodeRequest(pk, id, kvs[0].Value)
	if re := asRecordError(err); re != nil {
		s.quarantineLater(re)
		return
	}
	s.log.Info("adopted a request whose replica is gone", "request_id", id)
	fn(r)
}
