package policy

import (
	"strings"
	"testing"

	"github.com/approvebot/approvebot/core/approval"
)

// Every ask names its reason, the lattice's asks too (the card's "why" line shows it).
func TestEveryAskSaysWhy(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		in   Input
		want string
	}{
		{"tool permission", Config{ToolPermissions: map[string]string{"deploy*": "ask"}}, Input{Tool: "deploy_prod", Tier: TierAuto},
			`the tool permission "deploy*" asks a human for this tool`},
		{"auto tier, irreversible", Config{}, Input{Tool: "delete_repository", Tier: TierAuto},
			"the auto tier asks a human before an irreversible tool"},
		{"auto tier, destructive hint", Config{}, Input{Tool: "run", Tier: TierAuto, Facts: approval.Facts{Destructive: true}},
			"the auto tier asks a human before an irreversible tool"},
		{"ask tier", Config{}, Input{Tool: "deploy", Tier: TierAsk}, "the ask tier asks a human for every tool not declared read-only or idempotent"},
		{"default", Config{Default: "ask"}, Input{Tool: "deploy", Tier: TierFull}, `the policy's default is "ask"`},
		{"sensitive argument", Config{}, Input{Tool: "Read", Args: map[string]any{"file_path": "/home/a/.ssh/id_rsa"}, Tier: TierFull},
			"an argument names the sensitive path /home/a/.ssh/id_rsa"},
		{"shell", Config{}, Input{Tool: "bash", Args: map[string]any{"command": "cat /home/a/.aws/credentials"}, Tier: TierAuto},
			"touches the sensitive path /home/a/.aws/credentials (~/.aws)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, err := NewEngine(c.cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			if c.in.Args == nil {
				c.in.Args = map[string]any{}
			}
			ev := e.Evaluate(c.in)
			if ev.Verdict != Ask || !strings.HasPrefix(ev.Reason, c.want) {
				t.Fatalf("verdict %v, reason %q, want %q", ev.Verdict, ev.Reason, c.want)
			}
		})
	}
	// An allow keeps its reason (often none): the fallback is for asks only.
	e, _ := NewEngine(Config{}, nil)
	if ev := e.Evaluate(Input{Tool: "read", Args: map[string]any{}, Tier: TierAuto}); ev.Verdict != Allow || ev.Reason != "" {
		t.Fatalf("%+v", ev)
	}
}
