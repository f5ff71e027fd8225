package gate_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/policy"
)

// A paused session's descendants are refused as paused too, without the pause being copied
// onto their own records: unpausing the parent frees them again.
func TestPausedParentPausesItsDescendants(t *testing.T) {
	e := newEnv(t, policy.Config{}, gate.Options{OperatorOnly: true})
	ctx := context.Background()
	// Three human denials pause the parent.
	for i := range 3 {
		r, err := e.g.Submit(ctx, askBash(fmt.Sprint("make step", i), "parent"), gate.Caller{Name: "agent"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.g.Decide(ctx, r.ID, gate.Decision{Outcome: approval.OutcomeDeny, DecidedBy: "op"}); err != nil {
			t.Fatal(err)
		}
	}
	if s, _ := e.st.Session(ctx, "agent", "parent"); !s.Paused {
		t.Fatalf("three denials did not pause the parent: %+v", s)
	}
	ask := func(session, parent string) approval.Request {
		t.Helper()
		a := askBash("make deploy", session)
		a.ParentSession = parent
		r, err := e.g.Submit(ctx, a, gate.Caller{Name: "agent"})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	cases := []struct {
		name, session, parent string
	}{
		{"child naming the parent", "child", "parent"},
		{"child through its recorded link", "child", ""},
		{"grandchild", "grandchild", "child"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := ask(c.session, c.parent)
			if r.State != approval.StateDenied || r.Source != approval.SourcePaused || r.Allowed {
				t.Fatalf("%s under a paused parent: %+v", c.session, r)
			}
			s, err := e.st.Session(ctx, "agent", c.session)
			if err != nil {
				t.Fatal(err)
			}
			if s.Paused {
				t.Fatalf("the parent's pause was written onto %s", c.session)
			}
		})
	}
	if _, err := e.g.Unpause(ctx, "parent", "agent", "op"); err != nil {
		t.Fatal(err)
	}
	if r := ask("grandchild", ""); r.State != approval.StatePending {
		t.Fatalf("after the parent's unpause the grandchild is still refused: %+v", r)
	}
}
