package etcd

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/policy"
	"github.com/approvebot/approvebot/core/render"
)

// countingChannel is a chat platform that records every post and edit, shared by the
// replicas as one real platform would be.
type countingChannel struct {
	mu    sync.Mutex
	n     int
	posts map[string]int // card message -> times posted
	edits map[string]int // message -> times edited
	// block holds posts until closed (a replica that dies while posting).
	block chan struct{}
}

func newCountingChannel() *countingChannel {
	return &countingChannel{posts: map[string]int{}, edits: map[string]int{}}
}

func (c *countingChannel) Name() string    { return "telegram" }
func (c *countingChannel) Chats() []string { return []string{"100"} }
func (c *countingChannel) Health() gate.Health {
	return gate.Health{OK: true}
}

func (c *countingChannel) Post(ctx context.Context, chat string, card render.Card) (approval.CardRef, error) {
	c.mu.Lock()
	block := c.block
	c.mu.Unlock()
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return approval.CardRef{}, ctx.Err()
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	msg := fmt.Sprint(c.n)
	c.posts[card.RequestID]++
	return approval.CardRef{Channel: "telegram", Chat: chat, Message: msg}, nil
}

func (c *countingChannel) Edit(ctx context.Context, ref approval.CardRef, card render.Card) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.edits[ref.Message]++
	return nil
}

func (c *countingChannel) counts(id string) (posts int, edits map[string]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for k, v := range c.edits {
		out[k] = v
	}
	return c.posts[id], out
}

type replica struct {
	st *Store
	g  *gate.Gate
}

// gates starts n replicas, each a gate on its own store on one prefix, with ch as their
// one chat platform (nil: operator-only).
func gates(t *testing.T, n int, ch gate.Channel, timeout time.Duration) []replica {
	t.Helper()
	stores := replicas(t, n, nil)
	out := make([]replica, n)
	for i, st := range stores {
		eng, err := policy.NewEngine(policy.Config{}, st)
		if err != nil {
			t.Fatal(err)
		}
		var chans []gate.Channel
		if ch != nil {
			chans = append(chans, ch)
		}
		g, err := gate.New(gate.Options{ApprovalTimeout: timeout, OperatorOnly: true, Logger: testLogger(t)}, st, eng, chans, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := g.Recover(context.Background()); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.Close(context.Background()) })
		out[i] = replica{st: st, g: g}
	}
	return out
}

func ask(cmd string) gate.Ask {
	return gate.Ask{Tool: "bash", Args: map[string]any{"command": cmd}, Session: "s"}
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestAWaitOnOneReplicaIsWokenByADecisionOnAnother(t *testing.T) {
	rs := gates(t, 2, nil, time.Minute)
	ctx := context.Background()
	rec, err := rs[0].g.Submit(ctx, ask("make deploy"), gate.Caller{Name: "agent"})
	if err != nil || rec.State != approval.StatePending {
		t.Fatalf("%+v %v", rec, err)
	}
	// The wait starts at once, before the mirror may have the request.
	got := make(chan approval.Request, 1)
	go func() {
		r, err := rs[1].g.Wait(ctx, rec.ID, 30*time.Second)
		if err != nil {
			t.Error(err)
		}
		got <- r
	}()
	eventually(t, "the mirror on the second replica", func() bool { return len(rs[1].g.LivePending("", "")) == 1 })
	start := time.Now()
	if _, err := rs[0].g.Decide(ctx, rec.ID, gate.Decision{Outcome: approval.OutcomeAllowOnce, DecidedBy: "op", Channel: "api"}); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-got:
		if r.State != approval.StateAllowed || r.DecidedBy != "op" {
			t.Fatalf("woken with %+v", r)
		}
		t.Logf("decision on one replica to the agent on the other: %s", time.Since(start).Round(time.Microsecond))
	case <-time.After(10 * time.Second):
		t.Fatal("the waiting agent was not woken")
	}
	if n := len(rs[1].g.LivePending("", "")); n != 0 {
		t.Fatalf("%d still live on the second replica", n)
	}
}

func TestWatchOnAReplicaThatHasNotSeenTheRequestYet(t *testing.T) {
	rs := gates(t, 2, nil, time.Minute)
	ctx := context.Background()
	rec, err := rs[0].g.Submit(ctx, ask("make a"), gate.Caller{Name: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan approval.Request, 1)
	if _, ok := rs[1].g.Watch(rec.ID, func(r approval.Request) { got <- r }); !ok {
		t.Fatal("a request pending in the cluster cannot be watched on another replica")
	}
	if _, err := rs[0].g.Decide(ctx, rec.ID, gate.Decision{Outcome: approval.OutcomeDeny, DecidedBy: "op"}); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-got:
		if r.State != approval.StateDenied {
			t.Fatalf("watch got %+v", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the watch was not called")
	}
}

func TestTimeoutFiresOnceAcrossReplicas(t *testing.T) {
	rs := gates(t, 3, nil, 300*time.Millisecond)
	ctx := context.Background()
	rec, err := rs[1].g.Submit(ctx, ask("make slow"), gate.Caller{Name: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rs {
		got, err := r.g.Wait(ctx, rec.ID, 20*time.Second)
		if err != nil || got.Outcome != approval.OutcomeTimeout {
			t.Fatalf("replica %d: %+v %v", i, got, err)
		}
	}
	page, err := rs[0].st.Audit(ctx, approval.AuditQuery{RequestID: rec.ID})
	if err != nil {
		t.Fatal(err)
	}
	decisions := 0
	for _, e := range page.Entries {
		if e.Event == approval.EventDecision {
			decisions++
		}
	}
	if decisions != 1 {
		t.Fatalf("%d decisions in the trail, want one timeout: %+v", decisions, page.Entries)
	}
}

func TestTimeoutOfADeadCreatorsRequest(t *testing.T) {
	rs := gates(t, 2, nil, 500*time.Millisecond)
	ctx := context.Background()
	rec, err := rs[0].g.Submit(ctx, ask("make orphan"), gate.Caller{Name: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the mirror", func() bool { return len(rs[1].g.LivePending("", "")) == 1 })
	rs[0].g.Close(ctx) // its timers stop with it
	got, err := rs[1].g.Wait(ctx, rec.ID, 20*time.Second)
	if err != nil || got.Outcome != approval.OutcomeTimeout {
		t.Fatalf("%+v %v", got, err)
	}
}

func TestCardPostedOnceEditedOnceAndPressedOnAnotherReplica(t *testing.T) {
	ch := newCountingChannel()
	rs := gates(t, 2, ch, time.Minute)
	ctx := context.Background()
	rec, err := rs[0].g.Submit(ctx, ask("make release"), gate.Caller{Name: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	var ref approval.CardRef
	eventually(t, "the card in the other replica's mirror", func() bool {
		live := rs[1].g.LivePending("telegram", "100")
		if len(live) == 1 && len(live[0].Cards) == 1 {
			ref = live[0].Cards[0]
			return true
		}
		return false
	})
	// The channel leader (here replica 1) finds the card's request and decides.
	found, ok := rs[1].g.ByCard("telegram", ref.Chat, ref.Message)
	if !ok || found.ID != rec.ID {
		t.Fatalf("ByCard on the other replica: %+v %v", found, ok)
	}
	if _, err := rs[1].g.Decide(ctx, rec.ID, gate.Decision{Outcome: approval.OutcomeDeny, DecidedBy: "alice", Channel: "telegram"}); err != nil {
		t.Fatal(err)
	}
	// A second press, on the creator, loses.
	_, err = rs[0].g.Decide(ctx, rec.ID, gate.Decision{Outcome: approval.OutcomeAllowOnce, DecidedBy: "bob", Channel: "telegram"})
	var lost *gate.AlreadyDecidedError
	if !errors.As(err, &lost) {
		t.Fatalf("second press: %v", err)
	}
	eventually(t, "the card's edit", func() bool { _, e := ch.counts(rec.ID); return e[ref.Message] >= 1 })
	rs[0].g.Close(ctx)
	rs[1].g.Close(ctx)
	posts, edits := ch.counts(rec.ID)
	if posts != 1 || edits[ref.Message] != 1 {
		t.Fatalf("posted %d times, edited %d times; want once each", posts, edits[ref.Message])
	}
}

func TestMaintenanceLeaderDeliversTheRequestOfADeadCreator(t *testing.T) {
	ch := newCountingChannel()
	ch.block = make(chan struct{}) // the creator dies while posting
	rs := gates(t, 2, ch, time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec, err := rs[0].g.Submit(ctx, ask("make stuck"), gate.Caller{Name: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the mirror", func() bool { return len(rs[1].g.LivePending("", "")) == 1 })
	go rs[1].st.Adopt(ctx, rs[1].g.Adopt)
	// The creator goes (its lease with it) with its post still hanging.
	cctx, ccancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	rs[0].g.Close(cctx) // its post in flight is abandoned
	ccancel()
	rs[0].st.Close()
	ch.mu.Lock()
	close(ch.block)
	ch.block = nil
	ch.mu.Unlock()
	eventually(t, "the heir's card", func() bool {
		live := rs[1].g.LivePending("telegram", "100")
		return len(live) == 1 && len(live[0].Cards) == 1
	})
	if posts, _ := ch.counts(rec.ID); posts != 1 {
		t.Fatalf("posted %d times, want once (by the heir)", posts)
	}
}
