package config

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestStoreDefaultsAreBboltAndTheEtcdSettings(t *testing.T) {
	c, err := Parse(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	e := c.Store.Etcd
	if c.Store.Backend != BackendBbolt || e.Prefix != DefaultPrefix || e.DialTimeout.Duration != DefaultDialTimeout || e.LeaseTTL.Duration != DefaultLeaseTTL {
		t.Fatalf("defaults %+v", c.Store)
	}
}

func TestStoreValidation(t *testing.T) {
	const ok = `endpoints = ["http://127.0.0.1:2379", "https://etcd-2.internal:2379"]`
	tests := []struct {
		name, toml, err string
	}{
		{"bbolt needs nothing", "[store]\nbackend = \"bbolt\"\n", ""},
		{"etcd", "[store]\nbackend = \"etcd\"\n[store.etcd]\n" + ok + "\n", ""},
		{"etcd with TLS and auth", "[store]\nbackend = \"etcd\"\n[store.etcd]\n" + ok +
			"\nca_file = \"ca.pem\"\ncert_file = \"c.pem\"\nkey_file = \"k.pem\"\nusername = \"ab\"\npassword_env = \"P\"\nlease_ttl = \"10s\"\n", ""},
		{"unknown backend", "[store]\nbackend = \"redis\"\n", `store.backend: want "bbolt" or "etcd", got "redis"`},
		{"backend spelled in capitals", "[store]\nbackend = \"ETCD\"\n", `store.backend`},
		{"etcd without endpoints", "[store]\nbackend = \"etcd\"\n", "store.etcd.endpoints: required"},
		{"endpoint without a scheme", "[store]\nbackend = \"etcd\"\n[store.etcd]\nendpoints = [\"127.0.0.1:2379\"]\n", "store.etcd.endpoints[0]"},
		{"endpoint of another scheme", "[store]\nbackend = \"etcd\"\n[store.etcd]\nendpoints = [\"unix:///run/etcd.sock\"]\n", "store.etcd.endpoints[0]"},
		{"endpoint with a path", "[store]\nbackend = \"etcd\"\n[store.etcd]\nendpoints = [\"http://a:2379/v3\"]\n", "store.etcd.endpoints[0]"},
		{"relative prefix", "[store]\nbackend = \"etcd\"\n[store.etcd]\n" + ok + "\nprefix = \"approvebot\"\n", "store.etcd.prefix"},
		{"short lease", "[store]\nbackend = \"etcd\"\n[store.etcd]\n" + ok + "\nlease_ttl = \"1s\"\n", "store.etcd.lease_ttl: must be at least 2s"},
		{"negative dial timeout", "[store]\nbackend = \"etcd\"\n[store.etcd]\n" + ok + "\ndial_timeout = \"-1s\"\n", "store.etcd.dial_timeout"},
		{"certificate without key", "[store]\nbackend = \"etcd\"\n[store.etcd]\n" + ok + "\ncert_file = \"c.pem\"\n", "cert_file and key_file go together"},
		{"user without password", "[store]\nbackend = \"etcd\"\n[store.etcd]\n" + ok + "\nusername = \"ab\"\n", "needs store.etcd.password_env"},
		{"password without user", "[store]\nbackend = \"etcd\"\n[store.etcd]\n" + ok + "\npassword_env = \"P\"\n", "needs store.etcd.username"},
		{"a password in the file", "[store]\nbackend = \"etcd\"\n[store.etcd]\n" + ok + "\npassword = \"hunter2\"\n", `unknown key "store.etcd.password"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(tc.toml), "t.toml")
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				if c.Store.Etcd.LeaseTTL.Duration < 2*time.Second {
					t.Fatalf("lease %s", c.Store.Etcd.LeaseTTL.Duration)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("err = %v, want %q", err, tc.err)
			}
		})
	}
}

// The README's "Running more than one" config is a valid one.
func TestReadmeClusterConfigParses(t *testing.T) {
	raw, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	section := string(raw)
	i := strings.Index(section, "## Running more than one")
	if i < 0 {
		t.Fatal("README has no section Running more than one")
	}
	section = section[i:]
	start := strings.Index(section, "```toml\n")
	end := strings.Index(section[start+8:], "```")
	if start < 0 || end < 0 {
		t.Fatal("no TOML block in the section")
	}
	c, err := Parse([]byte(section[start+8:start+8+end]), "README.md")
	if err != nil {
		t.Fatal(err)
	}
	if c.Store.Backend != BackendEtcd || len(c.Store.Etcd.Endpoints) != 3 || c.Store.Etcd.PasswordEnv == "" {
		t.Fatalf("parsed %+v", c.Store)
	}
}
