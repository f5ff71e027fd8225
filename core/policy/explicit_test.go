package policy

import (
	"testing"

	"github.com/approvebot/approvebot/core/approval"
)

// Explicit marks the allows an integration may pass on to its agent as "allow": those the
// operator configured or the analysis proved, never the tier's or the default's leniency.
func TestEvaluationExplicit(t *testing.T) {
	env := newTestEnv(t)
	exec := ExecConfig{Path: env.bin, TrustedDirs: []string{env.bin}, Allowlist: []AllowlistEntry{{Pattern: env.bin + "/make"}}}
	base := Config{Exec: exec, ToolPermissions: map[string]string{"read_file": "allow", "mcp__github__*": "allow", "deploy": "ask"}}
	engine := func(t *testing.T, mutate func(*Config)) *Engine {
		t.Helper()
		cfg := base
		cfg.Exec.Allowlist = append([]AllowlistEntry(nil), exec.Allowlist...)
		if mutate != nil {
			mutate(&cfg)
		}
		e, err := NewEngine(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	bash := func(cmd string) (string, map[string]any) { return "Bash", map[string]any{"command": cmd} }
	tool := func(name string) (string, map[string]any) { return name, map[string]any{"path": "notes.txt"} }
	cases := []struct {
		name     string
		mutate   func(*Config)
		tier     Tier
		call     func() (string, map[string]any)
		facts    approval.Facts
		verdict  Verdict
		explicit bool
	}{
		{"tool permission allow", nil, TierAuto, func() (string, map[string]any) { return tool("read_file") }, approval.Facts{}, Allow, true},
		{"tool permission glob allow", nil, TierAsk, func() (string, map[string]any) { return tool("mcp__github__list_issues") }, approval.Facts{}, Allow, true},
		{"tool permission ask", nil, TierFull, func() (string, map[string]any) { return tool("deploy") }, approval.Facts{}, Ask, false},
		{"auto tier lets a mutating tool through", nil, TierAuto, func() (string, map[string]any) { return tool("write_file") }, approval.Facts{}, Allow, false},
		{"full tier lets anything through", nil, TierFull, func() (string, map[string]any) { return tool("anything") }, approval.Facts{}, Allow, false},
		{"ask tier lets a read-only tool through", nil, TierAsk, func() (string, map[string]any) { return tool("search") }, approval.Facts{ReadOnly: true}, Allow, false},
		{"configured default allow", func(c *Config) { c.Default = "allow" }, TierFull, func() (string, map[string]any) { return tool("x") }, approval.Facts{}, Allow, false},
		{"safe bins and an inert builtin", nil, TierAuto, func() (string, map[string]any) { return bash("cd src && ls") }, approval.Facts{}, Allow, true},
		{"test builtin", nil, TierAuto, func() (string, map[string]any) { return bash("[ -f x ]") }, approval.Facts{}, Allow, true},
		{"allowlisted executable", nil, TierAuto, func() (string, map[string]any) { return bash("make test") }, approval.Facts{}, Allow, true},
		{"allowlisted under the full tier", nil, TierFull, func() (string, map[string]any) { return bash("make test") }, approval.Facts{}, Allow, true},
		{"not allowlisted", nil, TierFull, func() (string, map[string]any) { return bash("curl example.com") }, approval.Facts{}, Ask, false},
		{"security full is not explicit", func(c *Config) { c.Exec.Security = "full" }, TierAuto, func() (string, map[string]any) { return bash("curl example.com") }, approval.Facts{}, Allow, false},
		{"ask always", func(c *Config) { c.Exec.Ask = "always" }, TierAuto, func() (string, map[string]any) { return bash("ls") }, approval.Facts{}, Ask, false},
		{"ask tier asks even for a safe bin", nil, TierAsk, func() (string, map[string]any) { return bash("ls") }, approval.Facts{}, Ask, false},
		{"unparseable", nil, TierAuto, func() (string, map[string]any) { return bash("ls 'x") }, approval.Facts{}, Ask, false},
		{"floor", func(c *Config) { c.ToolPermissions = map[string]string{"Bash": "allow"} }, TierFull, func() (string, map[string]any) { return bash("rm -rf /") }, approval.Facts{}, Deny, false},
		{"floor in a renamed shell tool with a permission", func(c *Config) { c.ToolPermissions = map[string]string{"runner": "allow"} }, TierFull,
			func() (string, map[string]any) { return "runner", map[string]any{"cmd": "rm -rf /"} }, approval.Facts{}, Deny, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := engine(t, c.mutate)
			name, args := c.call()
			ev := e.Evaluate(Input{Tool: name, Args: args, Cwd: env.root, Tier: c.tier, Facts: c.facts})
			if ev.Verdict != c.verdict || ev.Explicit != c.explicit {
				t.Fatalf("got %v explicit=%v (rule %s: %s), want %v explicit=%v", ev.Verdict, ev.Explicit, ev.Rule, ev.Reason, c.verdict, c.explicit)
			}
		})
	}
}
