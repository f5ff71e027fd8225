package store

import (
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/approvebot/approvebot/store/storetest"
)

func TestContract(t *testing.T) {
	storetest.Run(t, storetest.Backend{
		ErrClosed: ErrClosed,
		Damage: func(t *testing.T, st storetest.Store, id string) {
			s := st.(*Store)
			if err := s.db.Update(func(tx *bolt.Tx) error {
				return tx.Bucket(bucketRequests).Put([]byte(id), []byte(`{"id":"`+id+`","session":"s","state":"pend`))
			}); err != nil {
				t.Fatal(err)
			}
		},
		Open: func(t *testing.T) (storetest.Store, func(t *testing.T) storetest.Store) {
			path := filepath.Join(t.TempDir(), "contract.db")
			openAt := func(t *testing.T) storetest.Store {
				s, err := Open(path, Options{LockTimeout: time.Second})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() {
					s.mu.RLock()
					closed := s.closed
					s.mu.RUnlock()
					if closed {
						return
					}
					if err := s.Check(); err != nil {
						t.Errorf("consistency check: %v", err)
					}
					s.Close()
				})
				return s
			}
			return openAt(t), openAt
		},
	})
}
