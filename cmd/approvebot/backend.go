package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/approvebot/approvebot/api"
	"github.com/approvebot/approvebot/config"
	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/ledger"
	"github.com/approvebot/approvebot/core/policy"
	"github.com/approvebot/approvebot/store"
	"github.com/approvebot/approvebot/store/etcd"
)

// backend is the store serve runs on ([store] backend): the gate's contract, and what the
// API, the metrics and retention read of it.
type backend interface {
	gate.Store
	policy.PersistedAllowlist
	Audit(ctx context.Context, q approval.AuditQuery) (approval.AuditPage, error)
	AuditCounts(ctx context.Context, since, until time.Time) ([]approval.HourCount, error)
	Grants(ctx context.Context, limit int) ([]ledger.Item, int, error)
	Denials(ctx context.Context, limit int) ([]ledger.Item, int, error)
	PausedSessions(ctx context.Context, limit int) ([]ledger.Session, int, error)
	ListAllowlist(ctx context.Context) ([]approval.AllowlistItem, error)
	RevokeAllowlist(ctx context.Context, sel approval.AllowlistSelector, audit approval.AuditEntry) ([]approval.AllowlistItem, error)
	Prune(ctx context.Context, before time.Time, maxEntries int) (audit, requests int, err error)
	// backup is what GET /v1/backup streams (nil: the backend is backed up by its own
	// tools, as etcd with etcdctl snapshot save).
	backup() api.Backuper
	Ping() error
	LastAlive() time.Time
	Close() error
	// health and commits are the store's state for /healthz and the metrics.
	health() storeHealth
	commits() (writes, commits uint64, seconds float64)
}

// storeHealth is what every backend reports of its health.
type storeHealth struct {
	Writable             bool
	Error                string
	WriteErrors, Damaged uint64
}

// cluster is a backend several replicas share: only one of them leads each role.
type cluster interface {
	// Lead runs fn while this replica leads role, until ctx ends.
	Lead(ctx context.Context, role string, fn func(ctx context.Context))
	// Adopt hands fn every pending request whose replica is gone, until ctx ends.
	Adopt(ctx context.Context, fn func(approval.Request)) error
	Name() string
}

// Roles replicas elect a leader for: one per channel that holds a connection or polls,
// and one for retention and the adoption of a dead replica's requests.
const (
	roleMaintenance   = "maintenance"
	roleChannelPrefix = "channel/"
)

// openBackend opens the store [store] names.
func openBackend(ctx context.Context, cfg *config.Config, log *slog.Logger, now func() time.Time) (backend, error) {
	switch cfg.Store.Backend {
	case config.BackendEtcd:
		e := cfg.Store.Etcd
		var password string
		if e.PasswordEnv != "" {
			if password = config.Secret(e.PasswordEnv); password == "" {
				return nil, fmt.Errorf("store.etcd: the password environment variable %s is not set", e.PasswordEnv)
			}
		}
		st, err := etcd.Open(ctx, etcd.Options{
			Endpoints: e.Endpoints, Prefix: e.Prefix, DialTimeout: e.DialTimeout.Duration, LeaseTTL: e.LeaseTTL.Duration,
			CAFile: e.CAFile, CertFile: e.CertFile, KeyFile: e.KeyFile, Username: e.Username, Password: password,
			Limits: etcd.Limits{Total: cfg.Server.MaxPending, PerSession: cfg.Server.MaxPendingPerSession, PerAgent: maxPerAgent(cfg)},
			Logger: log, Now: now,
		})
		if err != nil {
			return nil, err
		}
		return etcdBackend{st}, nil
	default:
		st, err := store.Open(cfg.Server.Data, store.Options{Logger: log, Now: now,
			Retention: store.Retention{MaxEntries: cfg.Server.AuditMaxEntries, Age: cfg.Server.AuditRetention.Duration}})
		if err != nil {
			return nil, err
		}
		return boltBackend{st}, nil
	}
}

// maxPerAgent is the per-agent cap as the gate applies it (its default: half the total).
func maxPerAgent(cfg *config.Config) int {
	if cfg.Server.MaxPendingPerAgent > 0 {
		return cfg.Server.MaxPendingPerAgent
	}
	return gate.DefaultMaxPendingPerAgent(cfg.Server.MaxPending)
}

type boltBackend struct{ *store.Store }

func (b boltBackend) health() storeHealth {
	h := b.Health()
	return storeHealth{Writable: h.Writable, Error: h.Error, WriteErrors: h.WriteErrors, Damaged: h.Damaged}
}

func (b boltBackend) commits() (uint64, uint64, float64) {
	cs := b.CommitStats()
	return cs.Writes, cs.Commits, cs.Time.Seconds()
}

func (b boltBackend) backup() api.Backuper { return b.Store }

type etcdBackend struct{ *etcd.Store }

func (b etcdBackend) health() storeHealth {
	h := b.Health()
	return storeHealth{Writable: h.Writable, Error: h.Error, WriteErrors: h.WriteErrors, Damaged: h.Damaged}
}

func (b etcdBackend) commits() (uint64, uint64, float64) {
	cs := b.CommitStats()
	return cs.Writes, cs.Commits, cs.Time.Seconds()
}

func (b etcdBackend) backup() api.Backuper { return nil }

// lead runs fn for role: on a cluster only while this replica leads it, else at once.
func lead(ctx context.Context, st backend, role string, fn func(ctx context.Context)) {
	if c, ok := st.(cluster); ok {
		c.Lead(ctx, role, fn)
		return
	}
	fn(ctx)
}
