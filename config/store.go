package config

import (
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Store is [store]: where approvebot keeps its state. Each default is the named constant
// below.
type Store struct {
	// Backend is "bbolt" (one file, [server] data, for one approvebot process) or "etcd"
	// (a cluster that several approvebot replicas share, [store.etcd]) (default "bbolt").
	Backend string `toml:"backend"`
	// Etcd is [store.etcd], used with backend = "etcd".
	Etcd StoreEtcd `toml:"etcd"`
}

// StoreEtcd is [store.etcd].
type StoreEtcd struct {
	// Endpoints are the etcd members' client URLs (http:// or https://); required with
	// backend = "etcd".
	Endpoints []string `toml:"endpoints"`
	// Prefix is the key prefix approvebot keeps everything under; replicas that share it
	// are one approvebot (default "/approvebot/").
	Prefix string `toml:"prefix"`
	// DialTimeout bounds connecting to the cluster at start (default 5s).
	DialTimeout Duration `toml:"dial_timeout"`
	// LeaseTTL is the replica's lease: a replica that dies loses its leaderships (the
	// channel connections, retention) and its undelivered requests after this long
	// (default 5s, at least 2s).
	LeaseTTL Duration `toml:"lease_ttl"`
	// CAFile verifies the members' TLS certificates; CertFile and KeyFile authenticate
	// approvebot to them (TLS client certificates).
	CAFile   string `toml:"ca_file"`
	CertFile string `toml:"cert_file"`
	KeyFile  string `toml:"key_file"`
	// Username and PasswordEnv (the environment variable holding the password) log in to
	// an etcd cluster with authentication enabled.
	Username    string `toml:"username"`
	PasswordEnv string `toml:"password_env"`
}

// Store backends.
const (
	BackendBbolt = "bbolt"
	BackendEtcd  = "etcd"
)

// Defaults of [store] and [store.etcd].
const (
	DefaultBackend     = BackendBbolt
	DefaultPrefix      = "/approvebot/"
	DefaultDialTimeout = 5 * time.Second
	DefaultLeaseTTL    = 5 * time.Second
)

// Validate checks [store]; errors name the key.
func (s *Store) Validate() error {
	switch s.Backend {
	case BackendBbolt:
		return nil
	case BackendEtcd:
	default:
		return fmt.Errorf("store.backend: want %q or %q, got %q", BackendBbolt, BackendEtcd, s.Backend)
	}
	e := s.Etcd
	if len(e.Endpoints) == 0 {
		return fmt.Errorf("store.etcd.endpoints: required with backend = %q", BackendEtcd)
	}
	for i, ep := range e.Endpoints {
		u, err := url.Parse(ep)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
			return fmt.Errorf("store.etcd.endpoints[%d]: %q is not an http:// or https:// URL of a member", i, ep)
		}
	}
	if !strings.HasPrefix(e.Prefix, "/") || strings.ContainsAny(e.Prefix, "\x00") {
		return fmt.Errorf("store.etcd.prefix: must start with \"/\", got %q", e.Prefix)
	}
	if e.DialTimeout.Duration <= 0 {
		return fmt.Errorf("store.etcd.dial_timeout: must be positive, got %s", e.DialTimeout.Duration)
	}
	if e.LeaseTTL.Duration < 2*time.Second {
		return fmt.Errorf("store.etcd.lease_ttl: must be at least 2s, got %s", e.LeaseTTL.Duration)
	}
	if (e.CertFile == "") != (e.KeyFile == "") {
		return fmt.Errorf("store.etcd.cert_file and key_file go together")
	}
	if e.Username == "" && e.PasswordEnv != "" {
		return fmt.Errorf("store.etcd.password_env: needs store.etcd.username")
	}
	if e.Username != "" && e.PasswordEnv == "" {
		return fmt.Errorf("store.etcd.username: needs store.etcd.password_env (the variable holding the password)")
	}
	return nil
}
