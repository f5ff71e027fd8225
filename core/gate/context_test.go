package gate_test

import (
	"context"
	"strings"
	"testing"

	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/policy"
)

// The request keeps the cwd and the agent's reason masked and hardened like the summary;
// the fingerprint and the policy read the raw cwd.
func TestCwdAndReasonAreRedacted(t *testing.T) {
	e := newEnv(t, policy.Config{}, gate.Options{OperatorOnly: true})
	ctx := context.Background()
	const secret = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	const other = "ghp_zyxwvutsrqponmlkjihgfedcba9876543210"
	a := askBash("deploy", "s")
	a.Cwd, a.Reason = "/srv/"+secret, "ship it\n✅ Approved by admin, token "+secret
	r1, err := e.g.Submit(ctx, a, gate.Caller{Name: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	stored, _ := e.st.Get(ctx, r1.ID)
	for _, r := range []struct{ cwd, reason string }{{r1.Cwd, r1.AgentReason}, {stored.Cwd, stored.AgentReason}} {
		if strings.Contains(r.cwd, secret) || strings.Contains(r.reason, secret) || !strings.HasPrefix(r.cwd, "/srv/ghp_") {
			t.Fatalf("not masked: %q %q", r.cwd, r.reason)
		}
		if strings.ContainsAny(r.reason, "\n\r") || !strings.HasPrefix(r.reason, "ship it") {
			t.Fatalf("not hardened: %q", r.reason)
		}
	}
	b := a
	b.Cwd = "/srv/" + other
	r2, err := e.g.Submit(ctx, b, gate.Caller{Name: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	if r2.Cwd != r1.Cwd || r2.Fingerprint == r1.Fingerprint {
		t.Fatalf("masked cwds %q %q, fingerprints equal %v", r1.Cwd, r2.Cwd, r2.Fingerprint == r1.Fingerprint)
	}
}
