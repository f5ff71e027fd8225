// Package etcd keeps approvebot's durable state in an etcd cluster, so that several
// approvebot replicas share it: the same records as the bbolt store (requests, session
// memory, the persisted allowlist, the audit trail), each compare-and-set one etcd
// transaction with revision compares, committed by the quorum before a method returns.
// On top of the store contract it gives the replicas what one process had for free: a
// feed of every change to pending requests (Follow, from watches), leader election per
// role on the replica's lease (Lead), first-seen claims of platform events (press
// deduplication), and the adoption of requests whose replica died.
//
// It is the only package that imports etcd's client. The client is v3.6 and speaks only
// the v3 API that etcd 3.4 servers have (KV, Txn, Watch, Lease; no server feature newer
// than 3.4), which the integration suites check against Debian's etcd 3.4.
package etcd

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
)

// SchemaVersion is the key layout this code reads and writes.
const SchemaVersion = 1

// Bounds of the store's own work (the configurable settings' defaults are the config's).
const (
	// DefaultWriteTimeout bounds how long one write keeps retrying while etcd has no
	// quorum before it fails with gate.ErrStoreUnavailable.
	DefaultWriteTimeout = 10 * time.Second
	// DefaultReadTimeout bounds one read.
	DefaultReadTimeout = 5 * time.Second
	// DefaultEventRetention is how long a handled platform event (a press) is remembered.
	DefaultEventRetention = 24 * time.Hour
)

// Limits are the cluster-wide pending caps, enforced in the transaction that stores a
// pending request (0: no cap).
type Limits struct {
	Total, PerAgent, PerSession int
}

// Options configures the store.
type Options struct {
	// Endpoints, Prefix, DialTimeout and LeaseTTL are required ([store.etcd]).
	Endpoints   []string
	Prefix      string
	DialTimeout time.Duration
	// CAFile, CertFile and KeyFile configure TLS: a CA file alone verifies the servers; a
	// certificate and key also authenticate this client.
	CAFile, CertFile, KeyFile string
	Username, Password        string
	LeaseTTL                  time.Duration
	WriteTimeout              time.Duration
	Limits                    Limits
	// Name identifies this replica in elections and logs (default: host name and a
	// random suffix).
	Name   string
	Logger *slog.Logger
	// Now is the clock for audit keys and claims; nil means time.Now.
	Now func() time.Time

	// wrapKV, when set, wraps the client's KV: the package's tests inject etcd's failures
	// through it (a commit whose answer is lost).
	wrapKV func(clientv3.KV) clientv3.KV
}

func (o *Options) withDefaults() error {
	if len(o.Endpoints) == 0 {
		return errors.New("etcd: no endpoints")
	}
	if o.Prefix == "" || o.DialTimeout <= 0 {
		return errors.New("etcd: a prefix and a dial timeout are required")
	}
	if !strings.HasSuffix(o.Prefix, "/") {
		o.Prefix += "/"
	}
	if o.LeaseTTL < 2*time.Second {
		return fmt.Errorf("etcd: lease TTL %s is below 2s", o.LeaseTTL)
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Name == "" {
		host, _ := os.Hostname()
		var b [3]byte
		rand.Read(b[:])
		o.Name = fmt.Sprintf("%s-%x", host, b)
	}
	return nil
}

func (o *Options) tls() (*tls.Config, error) {
	if o.CAFile == "" && o.CertFile == "" && o.KeyFile == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, fmt.Errorf("etcd: reading ca_file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("etcd: ca_file %s holds no PEM certificate", o.CAFile)
		}
		cfg.RootCAs = pool
	}
	if (o.CertFile == "") != (o.KeyFile == "") {
		return nil, errors.New("etcd: cert_file and key_file go together")
	}
	if o.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("etcd: loading cert_file/key_file: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// Store is the etcd-backed store. It implements gate.Store.
type Store struct {
	opts Options
	cli  *clientv3.Client
	log  *slog.Logger
	now  func() time.Time
	k    keys

	mu      sync.RWMutex // guards closed and sends on ops
	closed  bool
	ops     chan *op
	writers sync.WaitGroup

	lease *leaseKeeper
	// bg ends with Close: the lease, watches and elections.
	bg       context.Context
	bgCancel context.CancelFunc
	bgJobs   sync.WaitGroup

	allow atomic.Pointer[allowSnapshot]
	// allowMu serialises reloads of the allowlist.
	allowMu sync.Mutex

	seq    seqGen
	own    *ownWrites
	events eventLease

	writes, commits, conflicts, commitNanos atomic.Uint64

	h health
	// damagedSeen and quarantining hold the damaged records met (each logged once) and
	// those being quarantined in the background.
	damagedSeen, quarantining sync.Map
}

var _ gate.Store = (*Store)(nil)

// ErrClosed is returned after Close.
var ErrClosed = errors.New("store is closed")

// Open connects to the cluster, checks the schema and starts the writer and the lease.
func Open(ctx context.Context, opts Options) (*Store, error) {
	if err := opts.withDefaults(); err != nil {
		return nil, err
	}
	tlsCfg, err := opts.tls()
	if err != nil {
		return nil, err
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   opts.Endpoints,
		DialTimeout: opts.DialTimeout,
		// Keep-alives on the connection find a member that went silent (a partition
		// drops packets, nothing resets) within a few seconds, so the client moves on.
		DialKeepAliveTime:    2 * time.Second,
		DialKeepAliveTimeout: 2 * time.Second,
		PermitWithoutStream:  true,
		TLS:                  tlsCfg,
		Username:             opts.Username,
		Password:             opts.Password,
		Logger:               zap.NewNop(),
		// Without this the client would retry a failed unary call on another member for
		// ever; approvebot bounds each call itself.
		MaxUnaryRetries: 2,
	})
	if err != nil {
		return nil, fmt.Errorf("etcd: connecting to %s: %w", strings.Join(opts.Endpoints, ","), err)
	}
	if opts.wrapKV != nil {
		cli.KV = opts.wrapKV(cli.KV)
	}
	s := &Store{
		opts: opts, cli: cli, log: opts.Logger, now: opts.Now, k: keys{p: opts.Prefix},
		ops: make(chan *op, 4096),
		own: newOwnWrites(),
	}
	s.seq.node = randomNode()
	s.bg, s.bgCancel = context.WithCancel(context.Background())
	if err := s.initSchema(ctx); err != nil {
		cli.Close()
		return nil, err
	}
	s.lease, err = startLease(s.bg, cli, opts.LeaseTTL, s.log)
	if err != nil {
		cli.Close()
		return nil, fmt.Errorf("etcd: granting the replica lease: %w", err)
	}
	if err := s.reloadAllowlist(ctx, 0); err != nil {
		s.bgCancel()
		cli.Close()
		return nil, err
	}
	for i := 0; i < writers; i++ {
		s.writers.Add(1)
		go s.writer(i)
	}
	s.bgJobs.Add(1)
	go s.probe()
	return s, nil
}

func (s *Store) initSchema(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.DialTimeout+DefaultReadTimeout)
	defer cancel()
	var v [4]byte
	binary.BigEndian.PutUint32(v[:], SchemaVersion)
	key := s.k.schema()
	resp, err := s.cli.Txn(ctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, string(v[:]))).
		Else(clientv3.OpGet(key)).Commit()
	if err != nil {
		return fmt.Errorf("etcd: reaching the cluster at %s: %w", strings.Join(s.opts.Endpoints, ","), err)
	}
	if resp.Succeeded {
		return nil
	}
	kvs := resp.Responses[0].GetResponseRange().Kvs
	if len(kvs) == 1 && len(kvs[0].Value) == 4 {
		if got := binary.BigEndian.Uint32(kvs[0].Value); got != SchemaVersion {
			return fmt.Errorf("etcd: prefix %q holds schema version %d, this approvebot reads version %d", s.opts.Prefix, got, SchemaVersion)
		}
		return nil
	}
	return fmt.Errorf("etcd: prefix %q holds a schema key that is not approvebot's", s.opts.Prefix)
}

// Name is this replica's name in elections.
func (s *Store) Name() string { return s.opts.Name }

// Close stops the writer after the queued writes, resigns every leadership, revokes the
// lease (its requests are adopted at once) and disconnects.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.ops)
	s.mu.Unlock()
	s.writers.Wait()
	s.bgCancel()
	s.bgJobs.Wait()
	s.lease.revoke(s.cli)
	return s.cli.Close()
}

// Ping reports whether the cluster answers a linearizable read (for /healthz): a replica
// cut off from the quorum is unhealthy, so a load balancer stops sending agents to it.
func (s *Store) Ping() error {
	s.mu.RLock()
	closed := s.closed
	s.mu.RUnlock()
	if closed {
		return ErrClosed
	}
	ctx, cancel := context.WithTimeout(s.bg, 2*time.Second)
	defer cancel()
	if _, err := s.cli.Get(ctx, s.k.schema(), clientv3.WithCountOnly()); err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	if !s.lease.alive() {
		return errors.New("etcd: the replica's lease is not being kept alive")
	}
	return nil
}

// CommitStats counts the writer's transactions since Open.
type CommitStats struct {
	Writes, Commits, Conflicts uint64
	Time                       time.Duration
}

// CommitStats reports the group-commit counters.
func (s *Store) CommitStats() CommitStats {
	return CommitStats{Writes: s.writes.Load(), Commits: s.commits.Load(), Conflicts: s.conflicts.Load(), Time: time.Duration(s.commitNanos.Load())}
}

func (s *Store) readCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, DefaultReadTimeout)
}

// unavailable wraps an etcd error as the store's state (no quorum, unreachable), not the
// request's fault: it matches gate.ErrStoreUnavailable, which the API answers with 503.
func unavailable(what string, err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	return fmt.Errorf("etcd: %s: %w (%w)", what, gate.ErrStoreUnavailable, err)
}

// keys is the one place the key layout lives. Names chosen by agents or operators
// (sessions, agents, patterns) are hex-encoded, so none can reach into another's keys.
type keys struct{ p string }

func hx(s string) string { return hex.EncodeToString([]byte(s)) }

func unhx(s string) (string, bool) {
	b, err := hex.DecodeString(s)
	return string(b), err == nil
}

func (k keys) schema() string { return k.p + "meta/schema" }

// decided holds decided requests, keyed by the hex of the id's bytes, which begin with its
// creation time: the keys are in creation order, so retention deletes a range.
func (k keys) decided(id string) string { return k.p + "req/" + idKey(id) }
func (k keys) decidedPrefix() string    { return k.p + "req/" }

// pending holds pending requests, keyed by id; its watch is the replicas' mirror.
func (k keys) pending(id string) string { return k.p + "pend/" + id }
func (k keys) pendingPrefix() string    { return k.p + "pend/" }

// owner names the replica delivering a pending request, on that replica's lease.
func (k keys) owner(id string) string { return k.p + "own/" + id }
func (k keys) ownerPrefix() string    { return k.p + "own/" }

// post claims the post of a pending request's card to one chat (see ClaimPost); the
// request's claims are under postPrefix.
func (k keys) post(id, channel, chat string) string {
	return k.postPrefix(id) + hx(channel) + "/" + hx(chat)
}
func (k keys) postPrefix(id string) string { return k.p + "post/" + hx(id) + "/" }

// session is an agent's own record of a session name ("" the record every agent shares),
// under the name's prefix.
func (k keys) session(agent, name string) string { return k.sessionPrefix(name) + hx(agent) }
func (k keys) sessionPrefix(name string) string  { return k.p + "sess/" + hx(name) + "/" }

// grant and denial are an agent's ledger of a session: name, agent, fingerprint.
func (k keys) grant(agent, sess, fp string) string {
	return k.p + "grant/" + hx(sess) + "/" + hx(agent) + "/" + hx(fp)
}
func (k keys) denial(agent, sess, fp string) string {
	return k.p + "deny/" + hx(sess) + "/" + hx(agent) + "/" + hx(fp)
}

// allow is a persisted entry: its pattern, agent and args glob.
func (k keys) allow(pattern, agent, args string) string {
	return k.allowPattern(pattern) + hx(agent) + "/" + hx(args)
}
func (k keys) allowPattern(pattern string) string { return k.p + "allow/" + hx(pattern) + "/" }
func (k keys) allowPrefix() string                { return k.p + "allow/" }

// allowVersion changes with every allowlist change: the lookup of each ask reads it.
func (k keys) allowVersion() string { return k.p + "meta/allowlist" }

func (k keys) audit(seq uint64) string { return fmt.Sprintf("%saudit/%016x", k.p, seq) }
func (k keys) auditPrefix() string     { return k.p + "audit/" }

// auditIndex maps a request id, session or agent to the seqs of its entries.
func (k keys) auditIndex(kind, name string) string { return k.p + "ai/" + kind + "/" + hx(name) + "/" }
func (k keys) auditIndexPrefix() string            { return k.p + "ai/" }

// hour counts one replica's decisions of one hour by outcome.
func (k keys) hour(h int64, replica string, o approval.Outcome) string {
	return fmt.Sprintf("%shour/%012d/%s/%s", k.p, h, hx(replica), o)
}
func (k keys) hourPrefix() string { return k.p + "hour/" }

// count keys are the pending counters the caps compare.
func (k keys) countAll() string               { return k.p + "cnt/all" }
func (k keys) countAgent(agent string) string { return k.p + "cnt/a/" + hx(agent) }
func (k keys) countSession(agent, sess string) string {
	return k.p + "cnt/s/" + hx(agent) + "/" + hx(sess)
}

func (k keys) event(channel, id string) string { return k.p + "seen/" + hx(channel) + "/" + hx(id) }

func (k keys) election(role string) string { return k.p + "elect/" + role }

// quarantine keeps the bytes of a damaged record, keyed by the record's key.
func (k keys) quarantine(key string) string { return k.p + "quar/" + hx(key) }
func (k keys) quarantinePrefix() string     { return k.p + "quar/" }

// probe is each replica's write probe.
func (k keys) probe(replica string) string { return k.p + "probe/" + hx(replica) }

// idKey is the hex of a request id's 16 bytes (time first), or the id itself when it is
// not one (it then matches no stored request).
func idKey(id string) string {
	if !gate.ValidID(id) {
		return "x" + hx(id)
	}
	b, err := idEncoding.DecodeString(id)
	if err != nil {
		return "x" + hx(id)
	}
	return hex.EncodeToString(b)
}

// idBefore is the decided-request key of the first id created at t or later.
func idBefore(t time.Time) string {
	var b [16]byte
	ms := uint64(t.UnixMilli())
	for i := 5; i >= 0; i-- {
		b[i] = byte(ms)
		ms >>= 8
	}
	return hex.EncodeToString(b[:])
}

func randomNode() uint64 {
	var b [1]byte
	rand.Read(b[:])
	return uint64(b[0])
}
