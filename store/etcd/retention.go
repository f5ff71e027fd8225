package etcd

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// pruneChunk bounds the keys one prune transaction deletes.
const pruneChunk = 2000

// Prune applies audit retention: audit entries older than before (zero: no age limit) and
// beyond the newest maxEntries (0: no cap) are deleted, and so are decided requests created
// before `before`, and the index keys of the entries gone. Pending requests, grants,
// denials and sessions are never pruned. Run it on one replica (the maintenance leader).
func (s *Store) Prune(ctx context.Context, before time.Time, maxEntries int) (audit, requests int, err error) {
	auditP := s.k.auditPrefix()
	if !before.IsZero() {
		n, err := s.pruneRange(ctx, auditP, fmt.Sprintf("%s%016x", auditP, seqOf(before)), -1)
		audit += n
		if err != nil {
			return audit, 0, err
		}
	}
	if maxEntries > 0 {
		cctx, cancel := s.readCtx(ctx)
		resp, err := s.cli.Get(cctx, auditP, clientv3.WithPrefix(), clientv3.WithCountOnly())
		cancel()
		if err != nil {
			return audit, 0, unavailable("counting the audit trail", err)
		}
		if excess := int(resp.Count) - maxEntries; excess > 0 {
			n, err := s.pruneRange(ctx, auditP, clientv3.GetPrefixRangeEnd(auditP), excess)
			audit += n
			if err != nil {
				return audit, 0, err
			}
		}
	}
	if audit > 0 {
		if err := s.pruneIndexes(ctx); err != nil {
			return audit, 0, err
		}
	}
	if !before.IsZero() {
		reqP := s.k.decidedPrefix()
		n, err := s.pruneRange(ctx, reqP, reqP+idBefore(before), -1)
		requests += n
		if err != nil {
			return audit, requests, err
		}
	}
	return audit, requests, nil
}

// pruneRange deletes the first limit keys of [from, to) (limit < 0: all of them), a chunk
// per transaction.
func (s *Store) pruneRange(ctx context.Context, from, to string, limit int) (int, error) {
	removed := 0
	for limit < 0 || removed < limit {
		n := pruneChunk
		if limit >= 0 {
			n = min(n, limit-removed)
		}
		cctx, cancel := s.readCtx(ctx)
		resp, err := s.cli.Get(cctx, from, clientv3.WithRange(to), clientv3.WithKeysOnly(), clientv3.WithLimit(int64(n)))
		cancel()
		if err != nil {
			return removed, unavailable("reading keys to prune", err)
		}
		if len(resp.Kvs) == 0 {
			return removed, nil
		}
		end := string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
		if err := s.write(ctx, func(t *txn) error { t.delRange(from, end); return nil }); err != nil {
			return removed, err
		}
		removed += len(resp.Kvs)
		if len(resp.Kvs) < n {
			return removed, nil
		}
	}
	return removed, nil
}

// pruneIndexes deletes the index keys older than the oldest audit entry left: the keys
// of one name are contiguous and in seq order, so those are one range per name.
func (s *Store) pruneIndexes(ctx context.Context) error {
	cctx, cancel := s.readCtx(ctx)
	resp, err := s.cli.Get(cctx, s.k.auditPrefix(), append(clientv3.WithFirstKey(), clientv3.WithPrefix())...)
	cancel()
	if err != nil {
		return unavailable("reading the oldest audit entry", err)
	}
	cutoff := uint64(1<<64 - 1)
	if len(resp.Kvs) == 1 {
		k := string(resp.Kvs[0].Key)
		if cutoff, err = strconv.ParseUint(k[len(s.k.auditPrefix()):], 16, 64); err != nil {
			return fmt.Errorf("etcd: corrupt audit key %q", k)
		}
	}
	p := s.k.auditIndexPrefix()
	from, end := p, clientv3.GetPrefixRangeEnd(p)
	for {
		cctx, cancel := s.readCtx(ctx)
		resp, err := s.cli.Get(cctx, from, clientv3.WithRange(end), clientv3.WithKeysOnly(), clientv3.WithLimit(pruneChunk))
		cancel()
		if err != nil {
			return unavailable("reading the audit indexes", err)
		}
		if len(resp.Kvs) == 0 {
			return nil
		}
		// Each name's prefix whose first key is older than the cutoff loses that range.
		var ranges [][2]string
		seen := map[string]bool{}
		for _, kv := range resp.Kvs {
			k := string(kv.Key)
			i := strings.LastIndexByte(k, '/')
			name := k[:i+1]
			if seen[name] {
				continue
			}
			seen[name] = true
			if seq, err := strconv.ParseUint(k[i+1:], 16, 64); err == nil && seq < cutoff {
				ranges = append(ranges, [2]string{name, fmt.Sprintf("%s%016x", name, cutoff)})
			}
		}
		for len(ranges) > 0 {
			chunk := ranges[:min(len(ranges), maxTxnOps)]
			ranges = ranges[len(chunk):]
			if err := s.write(ctx, func(t *txn) error {
				for _, r := range chunk {
					t.delRange(r[0], r[1])
				}
				return nil
			}); err != nil {
				return err
			}
		}
		if !resp.More {
			return nil
		}
		// Go on after the last name seen (its remaining keys are newer than the cutoff).
		last := string(resp.Kvs[len(resp.Kvs)-1].Key)
		from = clientv3.GetPrefixRangeEnd(last[:strings.LastIndexByte(last, '/')+1])
	}
}
