package etcd

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/approvebot/approvebot/internal/etcdtest"
	"github.com/approvebot/approvebot/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(etcdtest.Main(m)) }

var prefixes atomic.Int64

// freshPrefix is a prefix no other test of this process (or an earlier run) used.
func freshPrefix() string {
	return fmt.Sprintf("/approvebot-test/%d-%d/", time.Now().UnixNano(), prefixes.Add(1))
}

func openAt(t *testing.T, endpoints []string, prefix string, tune func(*Options)) *Store {
	t.Helper()
	opts := Options{Endpoints: endpoints, Prefix: prefix, DialTimeout: 5 * time.Second, LeaseTTL: 3 * time.Second, WriteTimeout: 5 * time.Second}
	if tune != nil {
		tune(&opts)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := Open(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func etcdEndpoints(t *testing.T) []string { return etcdtest.Endpoints(t) }

// hostPort is an endpoint URL's host:port.
func hostPort(endpoint string) string {
	return strings.TrimPrefix(strings.TrimPrefix(endpoint, "http://"), "https://")
}

func TestContract(t *testing.T) {
	endpoints := etcdEndpoints(t)
	storetest.Run(t, storetest.Backend{
		ErrClosed: ErrClosed,
		Damage: func(t *testing.T, st storetest.Store, id string) {
			s := st.(*Store)
			if _, err := s.cli.Put(context.Background(), s.k.pending(id), `{"id":"`+id+`","session":"s","state":"pend`); err != nil {
				t.Fatal(err)
			}
		},
		Open: func(t *testing.T) (storetest.Store, func(t *testing.T) storetest.Store) {
			prefix := freshPrefix()
			reopen := func(t *testing.T) storetest.Store { return openAt(t, endpoints, prefix, nil) }
			return reopen(t), reopen
		},
	})
}
