package gate_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/policy"
)

// next returns the next event or fails after a generous deadline.
func next(t *testing.T, sub *gate.Subscription) gate.Event {
	t.Helper()
	select {
	case ev, ok := <-sub.C:
		if !ok {
			t.Fatalf("subscription closed (dropped=%t)", sub.Dropped())
		}
		return ev
	case <-time.After(5 * time.Second):
		t.Fatal("no event within 5s")
	}
	return gate.Event{}
}

func TestEventsFollowARequestThroughItsLife(t *testing.T) {
	tg := &fakeChannel{name: "telegram", chats: []string{"1"}}
	e := newEnv(t, policy.Config{}, gate.Options{}, tg)
	ctx := context.Background()
	sub := e.g.Subscribe(0)
	defer sub.Cancel()

	rec, err := e.g.Submit(ctx, askBash("make deploy", "s"), gate.Caller{Name: "agent"})
	if err != nil || rec.State != approval.StatePending {
		t.Fatalf("%+v %v", rec, err)
	}
	ev := next(t, sub)
	if ev.Kind != gate.EventCreated || ev.Request.ID != rec.ID || ev.Request.State != approval.StatePending || ev.Request.Summary != "make deploy" {
		t.Fatalf("first event: %+v", ev)
	}
	ev = next(t, sub)
	if ev.Kind != gate.EventCardPosted || ev.Card.Channel != "telegram" || len(ev.Request.Cards) != 1 {
		t.Fatalf("second event: %+v", ev)
	}
	if _, err := e.g.Decide(ctx, rec.ID, gate.Decision{Outcome: approval.OutcomeDeny, Reason: "no", DecidedBy: "alice"}); err != nil {
		t.Fatal(err)
	}
	ev = next(t, sub)
	if ev.Kind != gate.EventDecided || ev.Request.Outcome != approval.OutcomeDeny || ev.Request.DecidedBy != "alice" || ev.Request.Reason != "no" {
		t.Fatalf("third event: %+v", ev)
	}
	ev = next(t, sub)
	if ev.Kind != gate.EventCardEdited || ev.Card != ev.Request.Cards[0] || ev.Err != nil {
		t.Fatalf("fourth event: %+v", ev)
	}
	// A losing decision changes nothing and publishes nothing.
	if _, err := e.g.Decide(ctx, rec.ID, gate.Decision{Outcome: approval.OutcomeAllowOnce, DecidedBy: "bob"}); err == nil {
		t.Fatal("second decision won")
	}
	select {
	case ev := <-sub.C:
		t.Fatalf("event after a lost decision: %+v", ev)
	default:
	}
}

func TestEventsForEveryWayARequestEnds(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name    string
		opts    gate.Options
		end     func(g *gate.Gate, id string) error
		outcome approval.Outcome
	}{
		{"timeout", gate.Options{OperatorOnly: true, ApprovalTimeout: 2 * time.Second}, func(*gate.Gate, string) error { return nil }, approval.OutcomeTimeout},
		{"cancel", gate.Options{OperatorOnly: true}, func(g *gate.Gate, id string) error {
			_, err := g.Cancel(ctx, id, "agent")
			return err
		}, approval.OutcomeCancelled},
		{"operator", gate.Options{OperatorOnly: true}, func(g *gate.Gate, id string) error {
			_, err := g.Decide(ctx, id, gate.Decision{Outcome: approval.OutcomeAllowSession, DecidedBy: "op", Channel: "web"})
			return err
		}, approval.OutcomeAllowSession},
	}
	for _, c := range cases {
		// In a bubble: the timeout fires on the bubble's clock, not after a real wait.
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, policy.Config{}, c.opts)
				sub := e.g.Subscribe(8)
				defer sub.Cancel()
				rec, err := e.g.Submit(ctx, askBash("make deploy", "s"), gate.Caller{Name: "agent"})
				if err != nil {
					t.Fatal(err)
				}
				if ev := next(t, sub); ev.Kind != gate.EventCreated {
					t.Fatalf("first event %+v", ev)
				}
				if err := c.end(e.g, rec.ID); err != nil {
					t.Fatal(err)
				}
				ev := next(t, sub)
				if ev.Kind != gate.EventDecided || ev.Request.ID != rec.ID || ev.Request.Outcome != c.outcome {
					t.Fatalf("decided event %+v", ev)
				}
			})
		})
	}
}

func TestImmediateDecisionsPublishNothing(t *testing.T) {
	e := newEnv(t, policy.Config{}, gate.Options{OperatorOnly: true})
	sub := e.g.Subscribe(1)
	defer sub.Cancel()
	r, err := e.g.Submit(context.Background(), gate.Ask{Tool: "read_file", Args: map[string]any{"path": "/etc/hosts"}, Session: "s"}, gate.Caller{Name: "a"})
	if err != nil || !r.Allowed {
		t.Fatalf("%+v %v", r, err)
	}
	select {
	case ev := <-sub.C:
		t.Fatalf("policy decision published %+v", ev)
	default:
	}
}

// A subscriber that never reads must not slow the gate down: it is dropped and the
// requests go on.
func TestSlowSubscriberIsDroppedNotWaitedFor(t *testing.T) {
	e := newEnv(t, policy.Config{}, gate.Options{OperatorOnly: true})
	ctx := context.Background()
	stuck := e.g.Subscribe(2)
	live := e.g.Subscribe(64)
	defer live.Cancel()
	done := make(chan error, 1)
	go func() {
		for i := range 10 {
			rec, err := e.g.Submit(ctx, askBash(fmt.Sprint("cmd", i), "s"), gate.Caller{Name: "a"})
			if err != nil {
				done <- err
				return
			}
			if _, err := e.g.Decide(ctx, rec.ID, gate.Decision{Outcome: approval.OutcomeAllowOnce, DecidedBy: "op"}); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the gate waited for a subscriber that does not read")
	}
	n := 0
	for range stuck.C {
		n++
	}
	if n != 2 || !stuck.Dropped() {
		t.Fatalf("stuck subscriber: %d events then closed, dropped=%t; want 2, true", n, stuck.Dropped())
	}
	for i := range 20 {
		if ev := next(t, live); (i%2 == 0) != (ev.Kind == gate.EventCreated) {
			t.Fatalf("event %d of the reading subscriber: %s", i, ev.Kind)
		}
	}
	if live.Dropped() {
		t.Fatal("a subscriber that kept up was dropped")
	}
}

func TestCloseEndsSubscriptions(t *testing.T) {
	e := newEnv(t, policy.Config{}, gate.Options{OperatorOnly: true})
	sub := e.g.Subscribe(0)
	sub.Cancel()
	sub.Cancel() // twice is fine
	if _, ok := <-sub.C; ok || sub.Dropped() {
		t.Fatal("cancelled subscription still open or marked dropped")
	}
	open := e.g.Subscribe(0)
	if err := e.g.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, ok := <-open.C; ok || open.Dropped() {
		t.Fatal("subscription open after Close")
	}
	late := e.g.Subscribe(0)
	if _, ok := <-late.C; ok {
		t.Fatal("subscription after Close is open")
	}
	if _, err := e.g.Submit(context.Background(), askBash("x", "s"), gate.Caller{Name: "a"}); !errors.Is(err, gate.ErrClosed) {
		t.Fatalf("submit after close: %v", err)
	}
}
