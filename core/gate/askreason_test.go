package gate_test

import (
	"context"
	"strings"
	"testing"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/policy"
)

// A request the policy asks about carries the policy's reason from the moment it is pending
// — on the returned and the stored request, in the pending list, on the posted card and in
// the request's audit entry — masked like the summary; a human's decision keeps it; a
// request the policy decides has none.
func TestPendingRequestSaysWhyItAsks(t *testing.T) {
	const secret = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	cases := []struct {
		name string
		ask  gate.Ask
		rule string
		want []string // parts of the ask reason
	}{
		{"sensitive path", askBash("cat ~/.ssh/id_rsa", "s1"), policy.RuleSensitive, []string{"touches the sensitive path ", "/.ssh/id_rsa", "(~/.ssh)"}},
		{"write outside the project", withCwd(askBash("echo hi > /etc/motd", "s2"), "/repo"), policy.RuleEffects, []string{"writes /etc/motd, outside the project /repo"}},
		{"secret in the path", withCwd(askBash("cat /srv/"+secret+"/.env", "s3"), "/repo"), policy.RuleSensitive, []string{"touches the sensitive path /srv/ghp_", "(.env)"}},
		{"hidden command", withCwd(askBash("find . -exec rm {} +", "s4"), "/repo"), policy.RuleAllowlist, []string{"not allowlisted: rm"}},
		{"not allowlisted", askBash("make deploy", "s5"), policy.RuleAllowlist, []string{"not allowlisted: make"}},
		{"tier", gate.Ask{Tool: "delete_repo", Args: map[string]any{}, Session: "s6"}, "tier.auto", []string{"the auto tier asks a human before an irreversible tool"}},
		{"tool permission", gate.Ask{Tool: "deploy", Args: map[string]any{}, Session: "s7"}, "tool_permissions.deploy", []string{`the tool permission "deploy" asks a human`}},
	}
	tg := &fakeChannel{name: "telegram", chats: []string{"1"}}
	e := newEnv(t, policy.Config{
		ToolPermissions: map[string]string{"deploy": "ask"},
		Exec:            policy.ExecConfig{Allowlist: []policy.AllowlistEntry{{Pattern: "/usr/bin/find"}}},
	}, gate.Options{}, tg)
	ctx := context.Background()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rec, err := e.g.Submit(ctx, c.ask, gate.Caller{Name: "agent"})
			if err != nil || rec.State != approval.StatePending {
				t.Fatalf("%+v %v", rec, err)
			}
			check := func(where, reason, rule string) {
				t.Helper()
				for _, w := range c.want {
					if !strings.Contains(reason, w) {
						t.Errorf("%s: ask reason %q lacks %q", where, reason, w)
					}
				}
				if c.rule != "" && rule != c.rule {
					t.Errorf("%s: rule %q, want %q", where, rule, c.rule)
				}
				if strings.Contains(reason, secret) || strings.ContainsAny(reason, "\r\n") {
					t.Errorf("%s: not masked or hardened: %q", where, reason)
				}
			}
			check("returned", rec.AskReason, rec.Rule)
			stored, err := e.st.Get(ctx, rec.ID)
			if err != nil {
				t.Fatal(err)
			}
			check("stored", stored.AskReason, stored.Rule)
			pending, _ := e.st.Pending(ctx)
			found := false
			for _, p := range pending {
				if p.ID == rec.ID {
					found = true
					check("pending list", p.AskReason, p.Rule)
				}
			}
			if !found {
				t.Fatal("not in the pending list")
			}
			waitFor(t, "the card posted", func() bool {
				r, _ := e.st.Get(ctx, rec.ID)
				return len(r.Cards) == 1
			})
			tg.mu.Lock()
			card := tg.posts[len(tg.posts)-1]
			tg.mu.Unlock()
			if card.RequestID != rec.ID {
				t.Fatalf("last card is of %s", card.RequestID)
			}
			check("card", card.AskReason, card.Rule)
			page, err := e.st.Audit(ctx, approval.AuditQuery{RequestID: rec.ID})
			if err != nil || len(page.Entries) != 1 || page.Entries[0].Event != approval.EventRequest {
				t.Fatalf("audit %+v %v", page.Entries, err)
			}
			check("audit entry", page.Entries[0].AskReason, page.Entries[0].Rule)

			got, err := e.g.Decide(ctx, rec.ID, gate.Decision{Outcome: approval.OutcomeDeny, DecidedBy: "alice", Reason: "not now"})
			if err != nil {
				t.Fatal(err)
			}
			if got.Reason != "not now" || got.AskReason != rec.AskReason {
				t.Fatalf("decided: reason %q, ask reason %q", got.Reason, got.AskReason)
			}
		})
	}
	// What the policy decides at once was never asked about.
	for _, cmd := range []string{"ls", "rm -rf /"} {
		rec, err := e.g.Submit(ctx, askBash(cmd, "decided"), gate.Caller{Name: "agent"})
		if err != nil || rec.State == approval.StatePending || rec.AskReason != "" {
			t.Fatalf("%s: %+v %v", cmd, rec, err)
		}
	}
}

func withCwd(a gate.Ask, cwd string) gate.Ask {
	a.Cwd = cwd
	return a
}
