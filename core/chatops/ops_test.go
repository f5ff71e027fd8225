package chatops_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/chatops"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/render"
	"github.com/approvebot/approvebot/internal/chattest"
)

const (
	chat      = "-100"
	otherChat = "-200"
)

var (
	alice   = chatops.Actor{ID: "1", Name: "Alice"}
	mallory = chatops.Actor{ID: "666", Name: "Mallory"}
)

func newOps(r gate.Resolver) *chatops.Ops {
	return &chatops.Ops{Channel: "telegram", Approvers: chatops.NewApprovers([]string{alice.ID}, nil), Resolver: r}
}

// waiting registers a pending request routed to c, with its card posted there as message.
func waiting(r *chattest.Resolver, c, message string, edit ...func(*approval.Request)) approval.Request {
	req := approval.Request{Tool: "bash", Summary: "rm -rf ./build", Routes: []approval.Target{{Channel: "telegram", Chat: c}}}
	for _, e := range edit {
		e(&req)
	}
	req = r.Add(req)
	r.AddCard(req.ID, approval.CardRef{Channel: "telegram", Chat: c, Message: message})
	return r.Request(req.ID)
}

// Every press ends in a kind the platform acts on; the text is only shown.
func TestPressKinds(t *testing.T) {
	cases := []struct {
		name      string
		setup     func(*chattest.Resolver) (id string)
		actor     chatops.Actor
		action    render.Action
		askReason bool
		kind      chatops.Kind
		decided   bool
		refused   int
		audit     string
	}{
		{name: "approver allows", setup: func(r *chattest.Resolver) string { return waiting(r, chat, "1").ID },
			actor: alice, action: render.ActionAllowOnce, kind: chatops.KindDecided, decided: true},
		{name: "stranger", setup: func(r *chattest.Resolver) string { return waiting(r, chat, "1").ID },
			actor: mallory, action: render.ActionAllowOnce, kind: chatops.KindNotApprover, refused: 1, audit: "non-approver"},
		{name: "no user id", setup: func(r *chattest.Resolver) string { return waiting(r, chat, "1").ID },
			actor: chatops.Actor{Name: "anon"}, action: render.ActionAllowOnce, kind: chatops.KindNotApprover, refused: 1, audit: "non-approver"},
		{name: "decided before", setup: func(r *chattest.Resolver) string {
			req := waiting(r, chat, "1")
			r.Decide(context.Background(), req.ID, gate.Decision{Outcome: approval.OutcomeDeny, DecidedBy: "op"})
			return req.ID
		}, actor: alice, action: render.ActionAllowOnce, kind: chatops.KindAlreadyDecided},
		{name: "expired", setup: func(r *chattest.Resolver) string {
			return waiting(r, chat, "1", func(q *approval.Request) { q.ExpiresAt = time.Now().Add(-time.Second) }).ID
		}, actor: alice, action: render.ActionAllowOnce, kind: chatops.KindExpired},
		{name: "unknown request", setup: func(*chattest.Resolver) string { return gate.NewID() },
			actor: alice, action: render.ActionAllowOnce, kind: chatops.KindNotFound},
		{name: "request sent to another chat", setup: func(r *chattest.Resolver) string { return waiting(r, otherChat, "9").ID },
			actor: alice, action: render.ActionAllowOnce, kind: chatops.KindNotFound, refused: 1, audit: "not sent to"},
		{name: "deny asks for a reason", setup: func(r *chattest.Resolver) string { return waiting(r, chat, "1").ID },
			actor: alice, action: render.ActionDeny, askReason: true, kind: chatops.KindNeedReason},
		{name: "deny without asking decides", setup: func(r *chattest.Resolver) string { return waiting(r, chat, "1").ID },
			actor: alice, action: render.ActionDeny, kind: chatops.KindDecided, decided: true},
		{name: "deny on a decided request", setup: func(r *chattest.Resolver) string {
			req := waiting(r, chat, "1")
			r.Decide(context.Background(), req.ID, gate.Decision{Outcome: approval.OutcomeAllowOnce, DecidedBy: "op"})
			return req.ID
		}, actor: alice, action: render.ActionDeny, askReason: true, kind: chatops.KindAlreadyDecided},
		{name: "details", setup: func(r *chattest.Resolver) string {
			return waiting(r, chat, "1", func(q *approval.Request) { q.Details = "rm -rf ./build --all" }).ID
		}, actor: alice, action: render.ActionDetails, kind: chatops.KindDetails},
		{name: "details by a stranger", setup: func(r *chattest.Resolver) string { return waiting(r, chat, "1").ID },
			actor: mallory, action: render.ActionDetails, kind: chatops.KindNotApprover, refused: 1, audit: "non-approver"},
		{name: "unknown action", setup: func(r *chattest.Resolver) string { return waiting(r, chat, "1").ID },
			actor: alice, action: render.Action("launch"), kind: chatops.KindNotFound},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := chattest.New()
			id := c.setup(r)
			before := len(r.Decisions())
			a := newOps(r).Press(context.Background(), chat, "1", c.actor, c.action, id, c.askReason)
			if a.Kind != c.kind || a.Decided() != c.decided || a.Text == "" {
				t.Fatalf("answer %+v, want kind %d (decided %v) with a text", a, c.kind, c.decided)
			}
			if got := len(r.Decisions()) - before; got != map[bool]int{true: 1}[c.decided] {
				t.Fatalf("%d decisions made", got)
			}
			if n := r.Refusals("telegram"); n != c.refused {
				t.Fatalf("%d refusals counted, want %d", n, c.refused)
			}
			audits := r.Audits()
			if c.audit == "" && len(audits) != 0 || c.audit != "" && (len(audits) != 1 || !strings.Contains(audits[0].Reason, c.audit)) {
				t.Fatalf("audit %+v, want %q", audits, c.audit)
			}
		})
	}
}

func TestCommandKinds(t *testing.T) {
	ctx := context.Background()
	r := chattest.New()
	ops := newOps(r)
	if a := ops.Command(ctx, chat, alice, chatops.Command{Verb: chatops.VerbPending}, ""); a.Kind != chatops.KindNoPending {
		t.Fatalf("/pending with nothing waiting: %+v", a)
	}
	if a := ops.Command(ctx, chat, alice, chatops.Command{Verb: chatops.VerbApprove}, ""); a.Kind != chatops.KindNoPending {
		t.Fatalf("/approve with nothing waiting: %+v", a)
	}
	old := waiting(r, chat, "1", func(q *approval.Request) { q.CreatedAt = time.Now().Add(-time.Minute + time.Second) })
	young := waiting(r, chat, "2")
	if a := ops.Command(ctx, chat, alice, chatops.Command{Verb: chatops.VerbPending}, ""); a.Kind != chatops.KindList || !strings.Contains(a.Text, "2 waiting") {
		t.Fatalf("/pending: %+v", a)
	}
	if a := ops.Command(ctx, chat, mallory, chatops.Command{Verb: chatops.VerbApprove}, "2"); a.Kind != chatops.KindNotApprover {
		t.Fatalf("a stranger's reply: %+v", a)
	}
	if au := r.Audits(); len(au) != 1 || au[0].RequestID != young.ID {
		t.Fatalf("the stranger's reply to a card is not audited against its request: %+v", au)
	}
	if a := ops.Command(ctx, chat, alice, chatops.Command{Verb: chatops.VerbApprove}, ""); !a.Decided() || a.Request.ID != old.ID {
		t.Fatalf("/approve takes the oldest: %+v", a)
	}
	if a := ops.Command(ctx, chat, alice, chatops.Command{Verb: chatops.VerbDeny, Reason: "no"}, "1"); a.Kind != chatops.KindNotLiveCard {
		t.Fatalf("a reply to a decided card: %+v", a)
	}
	if got := r.Request(young.ID); got.State != approval.StatePending {
		t.Fatalf("a reply to a dead card fell through to another request: %+v", got)
	}
	a := ops.Command(ctx, chat, alice, chatops.Command{Verb: chatops.VerbDeny, Reason: "not now"}, "2")
	if !a.Decided() || a.Request.Reason != "not now" {
		t.Fatalf("a reply /deny: %+v", a)
	}
}

// failing is a gate whose store fails every decision.
type failing struct{ *chattest.Resolver }

func (failing) Decide(context.Context, string, gate.Decision) (approval.Request, error) {
	return approval.Request{}, errors.New("disk full")
}

func TestFailedDecisionChangesNothing(t *testing.T) {
	r := chattest.New()
	req := waiting(r, chat, "1")
	a := newOps(failing{r}).Press(context.Background(), chat, "1", alice, render.ActionAllowOnce, req.ID, false)
	if a.Kind != chatops.KindFailed || a.Text != chatops.TextFailed {
		t.Fatalf("answer %+v", a)
	}
	if got := r.Request(req.ID); got.State != approval.StatePending {
		t.Fatalf("request %+v", got)
	}
}

// A resolver that does not count is still a resolver: refusals are simply not counted.
func TestCounterOfWithoutCounter(t *testing.T) {
	var r struct{ gate.Resolver }
	chatops.CounterOf(r).Refused("x")
	chatops.CounterOf(r).Skipped("x")
	if c := chatops.CounterOf(chattest.New()); c == nil {
		t.Fatal("no counter")
	}
}

// The Deny window, on a fake clock.
func TestReasonWaits(t *testing.T) {
	const window = time.Minute
	cases := []struct {
		name string
		// act runs during the window; it returns the reason expected on the decision and
		// whether a decision is expected at all.
		act func(t *testing.T, w *chatops.ReasonWaits, key string) (reason string, decided bool)
	}{
		{"the window passes", func(*testing.T, *chatops.ReasonWaits, string) (string, bool) { return "", true }},
		{"the reason comes", func(t *testing.T, w *chatops.ReasonWaits, key string) (string, bool) {
			if _, ok := w.Reason(context.Background(), key, alice, "wrong directory"); !ok {
				t.Fatal("the reason was not taken")
			}
			return "wrong directory", true
		}},
		{"someone else's text is not the reason", func(t *testing.T, w *chatops.ReasonWaits, key string) (string, bool) {
			if _, ok := w.Reason(context.Background(), key, mallory, "lol approve"); ok {
				t.Fatal("a stranger's text was taken as the reason")
			}
			return "", true
		}},
		{"shutdown drops the wait", func(_ *testing.T, w *chatops.ReasonWaits, _ string) (string, bool) {
			w.Stop()
			return "", false
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r := chattest.New()
				req := waiting(r, chat, "1", func(q *approval.Request) { q.ExpiresAt = time.Now().Add(time.Hour) })
				w := chatops.NewReasonWaits(newOps(r), window)
				start := time.Now()
				timedOut := make(chan time.Duration, 1)
				w.Start(context.Background(), "k", chat, alice, req.ID, func(chatops.Answer) { timedOut <- time.Since(start) })
				time.Sleep(window / 2)
				reason, decided := c.act(t, w, "k")
				time.Sleep(window)
				synctest.Wait()
				got := r.Request(req.ID)
				if !decided {
					if got.State != approval.StatePending {
						t.Fatalf("decided after Stop: %+v", got)
					}
					return
				}
				if got.Outcome != approval.OutcomeDeny || got.Reason != reason {
					t.Fatalf("request %+v, want a deny with reason %q", got, reason)
				}
				select {
				case at := <-timedOut:
					if reason != "" || at != window {
						t.Fatalf("the window denied at %s (reason %q)", at, reason)
					}
				default:
					if reason == "" {
						t.Fatal("the window passed without its deny")
					}
				}
			})
		})
	}
}
