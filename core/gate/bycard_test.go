package gate_test

import (
	"context"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/policy"
	"github.com/approvebot/approvebot/core/render"
	"github.com/approvebot/approvebot/store"
)

// heldChannel is a channel whose posts block until the test releases them, so a reply can
// reach ByCard while the card that it replies to is still being recorded.
type heldChannel struct {
	fakeChannel
	entered chan struct{}
	release chan struct{}
}

func (h *heldChannel) Post(ctx context.Context, chat string, c render.Card) (approval.CardRef, error) {
	h.entered <- struct{}{}
	select {
	case <-h.release:
	case <-ctx.Done():
		return approval.CardRef{}, ctx.Err()
	}
	return h.fakeChannel.Post(ctx, chat, c)
}

func TestByCardWaitsForPostsInFlight(t *testing.T) {
	cases := []struct {
		name string
		// release lets the post finish; otherwise it hangs past ByCard's wait.
		release bool
		want    bool
	}{
		{"post finishes", true, true},
		{"post hangs", false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ch := &heldChannel{fakeChannel: fakeChannel{name: "telegram", chats: []string{"1"}},
					entered: make(chan struct{}, 1), release: make(chan struct{})}
				g := newGate(t, gate.Options{DeliveryTimeout: time.Minute}, ch)
				rec, err := g.Submit(context.Background(), askBash("make deploy", "s"), gate.Caller{Name: "agent"})
				if err != nil {
					t.Fatal(err)
				}
				<-ch.entered // the post is in flight: its message exists, its reference does not yet

				type found struct {
					rec approval.Request
					ok  bool
				}
				got := make(chan found, 1)
				start := time.Now()
				go func() {
					r, ok := g.ByCard("telegram", "1", "1")
					got <- found{r, ok}
				}()
				synctest.Wait()
				select {
				case f := <-got:
					t.Fatalf("ByCard answered %v before the post finished", f.ok)
				default:
				}
				if c.release {
					close(ch.release)
				}
				f := <-got
				if f.ok != c.want || (c.want && f.rec.ID != rec.ID) {
					t.Fatalf("ByCard = %v %q, want %v %q", f.ok, f.rec.ID, c.want, rec.ID)
				}
				if waited := time.Since(start); !c.release && waited != 2*time.Second {
					t.Fatalf("ByCard gave up after %s, want 2s", waited)
				}
				if !c.release {
					close(ch.release)
				}
			})
		})
	}
}

// newGate builds a gate on a fresh store around any channels.
func newGate(t *testing.T, opts gate.Options, chans ...gate.Channel) *gate.Gate {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "g.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := policy.NewEngine(policy.Config{}, st)
	if err != nil {
		t.Fatal(err)
	}
	g, err := gate.New(opts, st, eng, chans, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		g.Close(context.Background())
		st.Close()
	})
	return g
}

func TestByCardWithoutPostsInFlightAnswersAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, policy.Config{}, gate.Options{}, &fakeChannel{name: "telegram", chats: []string{"1"}})
		start := time.Now()
		if _, ok := e.g.ByCard("telegram", "1", "42"); ok {
			t.Fatal("an unknown message was found")
		}
		if time.Since(start) != 0 {
			t.Fatalf("ByCard waited %s with nothing in flight", time.Since(start))
		}
	})
}
