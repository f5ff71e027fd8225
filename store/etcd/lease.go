package etcd

import (
	"context"
	"log/slog"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// leaseKeeper holds this replica's lease: its leaderships and the ownership of the
// requests it delivers live on it. It is kept alive every third of its TTL; when etcd
// stops answering, the replica considers the lease lost at 60% of the TTL since the last
// answer, before etcd (which counts from the keep-alive it received, earlier) expires it,
// so that a replica cut off stops leading before another can be elected. A lost lease is
// replaced by a new one.
type leaseKeeper struct {
	cli *clientv3.Client
	ttl time.Duration
	log *slog.Logger

	mu      sync.Mutex
	cur     clientv3.LeaseID
	lastAck time.Time
	// lost is closed when the current lease is considered lost.
	lost chan struct{}
	// changed is closed (and replaced) when a new lease is granted.
	changed chan struct{}
	done    chan struct{}
}

func startLease(ctx context.Context, cli *clientv3.Client, ttl time.Duration, log *slog.Logger) (*leaseKeeper, error) {
	l := &leaseKeeper{cli: cli, ttl: ttl, log: log, changed: make(chan struct{}), done: make(chan struct{})}
	if err := l.grant(ctx); err != nil {
		return nil, err
	}
	go l.run(ctx)
	return l, nil
}

func (l *leaseKeeper) grant(ctx context.Context) error {
	gctx, cancel := context.WithTimeout(ctx, l.ttl)
	defer cancel()
	resp, err := l.cli.Grant(gctx, int64((l.ttl+time.Second-1)/time.Second))
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.cur, l.lastAck, l.lost = resp.ID, time.Now(), make(chan struct{})
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()
	return nil
}

// id is the current lease.
func (l *leaseKeeper) id() clientv3.LeaseID {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cur
}

// current returns the lease, a channel closed when it is lost, and one closed when a
// new lease replaces it.
func (l *leaseKeeper) current() (clientv3.LeaseID, <-chan struct{}, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cur, l.lost, l.changed
}

// alive reports whether the lease was acknowledged recently enough to be relied on.
func (l *leaseKeeper) alive() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return time.Since(l.lastAck) < l.fence()
}

func (l *leaseKeeper) fence() time.Duration { return l.ttl * 6 / 10 }

func (l *leaseKeeper) run(ctx context.Context) {
	defer close(l.done)
	for ctx.Err() == nil {
		l.keep(ctx)
		if ctx.Err() != nil {
			return
		}
		// Lost: a new lease, as soon as etcd answers again.
		backoff := 100 * time.Millisecond
		for ctx.Err() == nil {
			if err := l.grant(ctx); err == nil {
				l.log.Warn("etcd: the replica lease was lost and replaced; leaderships are campaigned for again")
				break
			}
			if !sleepCtx(ctx, backoff) {
				return
			}
			backoff = min(backoff*2, 2*time.Second)
		}
	}
}

// keep refreshes the current lease until it is lost or ctx ends.
func (l *leaseKeeper) keep(ctx context.Context) {
	l.mu.Lock()
	id, lost := l.cur, l.lost
	l.mu.Unlock()
	kctx, cancel := context.WithCancel(ctx)
	defer cancel()
	acks, err := l.cli.KeepAlive(kctx, id)
	fence := time.NewTimer(l.fence())
	defer fence.Stop()
	markLost := func() {
		l.mu.Lock()
		select {
		case <-lost:
		default:
			close(lost)
		}
		l.mu.Unlock()
	}
	if err != nil {
		markLost()
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case resp, ok := <-acks:
			if !ok || resp == nil {
				markLost()
				return
			}
			l.mu.Lock()
			l.lastAck = time.Now()
			l.mu.Unlock()
			fence.Reset(l.fence())
		case <-fence.C:
			// No answer for too long: act as if lost now, before etcd expires it.
			markLost()
			rctx, rcancel := context.WithTimeout(context.Background(), time.Second)
			l.cli.Revoke(rctx, id)
			rcancel()
			return
		}
	}
}

// revoke ends the lease at once (a clean shutdown): its keys go now, not after the TTL.
func (l *leaseKeeper) revoke(cli *clientv3.Client) {
	<-l.done
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	cli.Revoke(ctx, l.id())
}
