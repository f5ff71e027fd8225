package gate_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/policy"
	"github.com/approvebot/approvebot/store"
)

// claimingStore is a store whose card-post claims the test answers, as the etcd backend
// would for the replica running the gate.
type claimingStore struct {
	*store.Store
	mu     sync.Mutex
	answer func(to approval.Target) (gate.PostClaim, error)
	asked  []approval.Target
}

func (c *claimingStore) ClaimPost(ctx context.Context, id string, to approval.Target) (gate.PostClaim, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.asked = append(c.asked, to)
	return c.answer(to)
}

func (c *claimingStore) setAnswer(f func(to approval.Target) (gate.PostClaim, error)) {
	c.mu.Lock()
	c.answer = f
	c.mu.Unlock()
}

type syncLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newClaimingEnv(t *testing.T, chans ...*fakeChannel) (*gate.Gate, *claimingStore, *syncLog) {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "g.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cs := &claimingStore{Store: st, answer: func(approval.Target) (gate.PostClaim, error) { return gate.PostClaim{Post: true}, nil }}
	eng, err := policy.NewEngine(policy.Config{}, st)
	if err != nil {
		t.Fatal(err)
	}
	var channels []gate.Channel
	for _, c := range chans {
		channels = append(channels, c)
	}
	logs := &syncLog{}
	g, err := gate.New(gate.Options{Logger: slog.New(slog.NewTextHandler(logs, nil))}, cs, eng, channels, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		g.Close(context.Background())
		st.Close()
	})
	return g, cs, logs
}

func TestCardPostFollowsTheClaim(t *testing.T) {
	tests := []struct {
		name      string
		claim     gate.PostClaim
		err       error
		posted    int
		wantState approval.State
		wantLog   string
	}{
		{"claimed", gate.PostClaim{Post: true}, nil, 1, approval.StatePending, ""},
		{"taken over from a replica that lost the request", gate.PostClaim{Post: true, Previous: "r0"}, nil, 1, approval.StatePending,
			"posting a card again"},
		{"recorded already", gate.PostClaim{Skip: gate.SkipRecorded}, nil, 0, approval.StatePending, ""},
		{"owned by another replica", gate.PostClaim{Skip: gate.SkipNotOwner}, nil, 0, approval.StatePending, ""},
		// Nothing reached a chat and nothing else will post it: the request falls back.
		{"the claim cannot be made", gate.PostClaim{}, fmt.Errorf("etcd: %w", gate.ErrStoreUnavailable), 0, approval.StateDenied,
			"claiming a card's post failed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tg := &fakeChannel{name: "telegram", chats: []string{"1"}}
			g, cs, logs := newClaimingEnv(t, tg)
			cs.setAnswer(func(approval.Target) (gate.PostClaim, error) { return tc.claim, tc.err })
			ctx := context.Background()
			rec, err := g.Submit(ctx, askBash("make deploy", "s"), gate.Caller{Name: "agent"})
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantState != approval.StatePending {
				got, err := g.Wait(ctx, rec.ID, 10*time.Second)
				if err != nil || got.State != tc.wantState {
					t.Fatalf("%+v %v, want %s", got, err, tc.wantState)
				}
			}
			g.Close(ctx) // every delivery has ended
			tg.mu.Lock()
			posted := len(tg.posts)
			tg.mu.Unlock()
			if posted != tc.posted {
				t.Fatalf("posted %d cards, want %d", posted, tc.posted)
			}
			got, err := cs.Get(ctx, rec.ID)
			if err != nil || got.State != tc.wantState || len(got.Cards) != tc.posted {
				t.Fatalf("stored %+v %v, want %s with %d cards", got, err, tc.wantState, tc.posted)
			}
			if l := logs.String(); tc.wantLog != "" && !strings.Contains(l, tc.wantLog) {
				t.Fatalf("the log does not say %q:\n%s", tc.wantLog, l)
			}
			if tc.claim.Previous != "" && !strings.Contains(logs.String(), "claimed_by="+tc.claim.Previous) {
				t.Fatal("the warning does not name the replica whose claim was taken over")
			}
		})
	}
}

// TestAdoptPostsToTheChatsWithoutACardOnce: an adopted request gets its card in every
// routed chat where none is recorded, once however often it is handed over.
func TestAdoptPostsToTheChatsWithoutACardOnce(t *testing.T) {
	tg := &fakeChannel{name: "telegram", chats: []string{"1", "2"}}
	g, cs, _ := newClaimingEnv(t, tg)
	ctx := context.Background()
	// Filed while another replica owned it: no card here.
	cs.setAnswer(func(approval.Target) (gate.PostClaim, error) { return gate.PostClaim{Skip: gate.SkipNotOwner}, nil })
	rec, err := g.Submit(ctx, askBash("make deploy", "s"), gate.Caller{Name: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	// That replica recorded chat 1's card and died; this one adopts the request.
	if _, err := cs.AddCard(ctx, rec.ID, approval.CardRef{Channel: "telegram", Chat: "1", Message: "99"}); err != nil {
		t.Fatal(err)
	}
	cs.setAnswer(func(approval.Target) (gate.PostClaim, error) { return gate.PostClaim{Post: true}, nil })
	stored, err := cs.Get(ctx, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	g.Adopt(stored)
	waitFor(t, "chat 2's card", func() bool {
		r, _ := cs.Get(ctx, rec.ID)
		return len(r.Cards) == 2
	})
	g.Adopt(stored) // handed over again (a watch replayed): nothing more to post
	g.Close(ctx)
	tg.mu.Lock()
	posted := len(tg.posts)
	tg.mu.Unlock()
	if posted != 1 {
		t.Fatalf("posted %d cards, want chat 2's only", posted)
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	// Submit asked for both chats; the adoptions only for chat 2.
	if len(cs.asked) != 4 {
		t.Fatalf("claims asked %v, want both chats at Submit and chat 2 at each adoption", cs.asked)
	}
	for _, to := range cs.asked[2:] {
		if to.Chat != "2" {
			t.Fatalf("claims asked %v: the adoption asked for chat 1, which has its card", cs.asked)
		}
	}
}
