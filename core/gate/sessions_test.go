package gate_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/policy"
)

// Session memory belongs to an agent: agent B naming agent A's session gets none of A's
// grants, denials, pause or parent links, and cannot pause or link A's session.
func TestSessionsBelongToTheAgent(t *testing.T) {
	e := newEnv(t, policy.Config{DenialsBeforePause: 2}, gate.Options{OperatorOnly: true})
	ctx := context.Background()
	alice, bob := gate.Caller{Name: "alice"}, gate.Caller{Name: "bob"}
	submit := func(t *testing.T, a gate.Ask, c gate.Caller) approval.Request {
		t.Helper()
		r, err := e.g.Submit(ctx, a, c)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	decide := func(t *testing.T, r approval.Request, o approval.Outcome) {
		t.Helper()
		if r.State != approval.StatePending {
			t.Fatalf("not pending: %+v", r)
		}
		if _, err := e.g.Decide(ctx, r.ID, gate.Decision{Outcome: o, DecidedBy: "op"}); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("grant", func(t *testing.T) {
		decide(t, submit(t, askBash("deploy prod", "work"), alice), approval.OutcomeAllowSession)
		if r := submit(t, askBash("deploy prod", "work"), alice); r.Source != approval.SourceGrant || !r.Allowed {
			t.Fatalf("alice's own grant: %+v", r)
		}
		r := submit(t, askBash("deploy prod", "work"), bob)
		if r.State != approval.StatePending || r.Allowed {
			t.Fatalf("bob used alice's grant: %+v", r)
		}
		e.g.Cancel(ctx, r.ID, "bob")
	})
	t.Run("ledger", func(t *testing.T) {
		decide(t, submit(t, askBash("drop tables", "work"), alice), approval.OutcomeDeny)
		if r := submit(t, askBash("drop tables", "work"), alice); r.Source != approval.SourceLedger {
			t.Fatalf("alice's own ledger: %+v", r)
		}
		r := submit(t, askBash("drop tables", "work"), bob)
		if r.State != approval.StatePending {
			t.Fatalf("alice's denial answered bob: %+v", r)
		}
		e.g.Cancel(ctx, r.ID, "bob")
	})
	t.Run("pause", func(t *testing.T) {
		// Bob collects two denials under alice's session name: only bob's session pauses.
		decide(t, submit(t, askBash("bob one", "work"), bob), approval.OutcomeDeny)
		decide(t, submit(t, askBash("bob two", "work"), bob), approval.OutcomeDeny)
		if r := submit(t, askBash("anything", "work"), bob); r.Source != approval.SourcePaused {
			t.Fatalf("bob not paused: %+v", r)
		}
		r := submit(t, askBash("anything", "work"), alice)
		if r.Source == approval.SourcePaused {
			t.Fatalf("bob paused alice's session: %+v", r)
		}
		e.g.Cancel(ctx, r.ID, "alice")
	})
	t.Run("parent link", func(t *testing.T) {
		// Bob's paused "work" as the parent of alice's "child" session name: bob's link
		// binds bob's "child", not alice's.
		if r := submit(t, gate.Ask{Tool: "bash", Args: map[string]any{"command": "x"}, Session: "child", ParentSession: "work"}, bob); r.Source != approval.SourcePaused {
			t.Fatalf("bob's child of his paused session: %+v", r)
		}
		if r := submit(t, askBash("y", "child"), bob); r.Source != approval.SourcePaused {
			t.Fatalf("bob's recorded link not followed: %+v", r)
		}
		r := submit(t, askBash("y", "child"), alice)
		if r.Source == approval.SourcePaused {
			t.Fatalf("alice adopted bob's link: %+v", r)
		}
		e.g.Cancel(ctx, r.ID, "alice")
		// And alice naming bob's paused session as her parent reaches her own "work".
		r = submit(t, gate.Ask{Tool: "bash", Args: map[string]any{"command": "z"}, Session: "child2", ParentSession: "work"}, alice)
		if r.Source == approval.SourcePaused {
			t.Fatalf("alice's parent resolved to bob's session: %+v", r)
		}
		e.g.Cancel(ctx, r.ID, "alice")
	})
	t.Run("unpause one agent", func(t *testing.T) {
		st, err := e.g.Unpause(ctx, "work", "bob", "op")
		if err != nil || st.Agent != "bob" || st.Effective.Paused || st.Effective.Denials != 0 {
			t.Fatalf("%+v %v", st, err)
		}
	})
	t.Run("nameless caller", func(t *testing.T) {
		if _, err := e.g.Submit(ctx, askBash("ls", "work"), gate.Caller{}); !errors.Is(err, gate.ErrInvalid) {
			t.Fatalf("err = %v", err)
		}
	})
}

// A recorded parent keeps restricting a child that names another parent.
func TestRecordedParentCannotBeSwapped(t *testing.T) {
	e := newEnv(t, policy.Config{}, gate.Options{OperatorOnly: true})
	ctx := context.Background()
	a := gate.Caller{Name: "a"}
	yes := true
	if _, err := e.g.UpdateSession(ctx, "headless", gate.SessionUpdate{Agent: "a", Unattended: &yes}, "op"); err != nil {
		t.Fatal(err)
	}
	first, err := e.g.Submit(ctx, gate.Ask{Tool: "bash", Args: map[string]any{"command": "deploy 1"}, Session: "worker", ParentSession: "headless"}, a)
	if err != nil || first.Source != approval.SourceUnattended {
		t.Fatalf("%+v %v", first, err)
	}
	r, err := e.g.Submit(ctx, gate.Ask{Tool: "bash", Args: map[string]any{"command": "deploy 2"}, Session: "worker", ParentSession: "attended"}, a)
	if err != nil || r.Source != approval.SourceUnattended {
		t.Fatalf("naming another parent escaped the recorded one: %+v %v", r, err)
	}
}

// Operator settings name one agent's session, or the session name for every agent
// (including agents that come later); the newest for-everyone setting wins over older
// per-agent ones.
func TestUpdateSessionScope(t *testing.T) {
	e := newEnv(t, policy.Config{}, gate.Options{OperatorOnly: true})
	ctx := context.Background()
	yes, no := true, false
	unattended := func(agent string) bool {
		t.Helper()
		r, err := e.g.Submit(ctx, askBash(fmt.Sprint("deploy ", agent, e.st.CommitStats().Writes), "job"), gate.Caller{Name: agent})
		if err != nil {
			t.Fatal(err)
		}
		if r.State == approval.StatePending {
			e.g.Cancel(ctx, r.ID, agent)
		}
		return r.Source == approval.SourceUnattended
	}
	st, err := e.g.UpdateSession(ctx, "job", gate.SessionUpdate{Agent: "alice", Unattended: &yes}, "op")
	if err != nil || st.Agent != "alice" || !st.Effective.Unattended {
		t.Fatalf("%+v %v", st, err)
	}
	if !unattended("alice") || unattended("bob") {
		t.Fatal("a setting for alice is not alice's alone")
	}
	st, err = e.g.UpdateSession(ctx, "job", gate.SessionUpdate{Unattended: &yes}, "op")
	if err != nil || st.Agent != "" || !st.Effective.Unattended || len(st.Agents) != 1 || st.Agents[0].Agent != "alice" {
		t.Fatalf("%+v %v", st, err)
	}
	if !unattended("bob") || !unattended("carol") {
		t.Fatal("a setting for every agent missed one")
	}
	if _, err := e.g.UpdateSession(ctx, "job", gate.SessionUpdate{Unattended: &no}, "op"); err != nil {
		t.Fatal(err)
	}
	if unattended("alice") {
		t.Fatal("alice's older own setting outlived the newer one for every agent")
	}
	if _, err := e.g.UpdateSession(ctx, "job", gate.SessionUpdate{Agent: "has space"}, "op"); !errors.Is(err, gate.ErrInvalid) {
		t.Fatalf("bad agent name: %v", err)
	}
}

// One agent cannot fill another's session with pending requests.
func TestPendingCapPerAgentSession(t *testing.T) {
	e := newEnv(t, policy.Config{}, gate.Options{OperatorOnly: true, MaxPendingPerSession: 2})
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		if _, err := e.g.Submit(ctx, askBash(fmt.Sprint("flood ", i), "victim"), gate.Caller{Name: "mallory"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.g.Submit(ctx, askBash("flood 3", "victim"), gate.Caller{Name: "mallory"}); !errors.Is(err, gate.ErrTooManyPending) {
		t.Fatalf("mallory's cap: %v", err)
	}
	if _, err := e.g.Submit(ctx, askBash("real work", "victim"), gate.Caller{Name: "alice"}); err != nil {
		t.Fatalf("alice blocked by mallory's requests: %v", err)
	}
}
