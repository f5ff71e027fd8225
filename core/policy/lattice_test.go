package policy

import (
	"testing"

	"github.com/approvebot/approvebot/core/approval"
)

func TestEffectiveLattice(t *testing.T) {
	perms, err := NewPermissions(map[string]string{
		"deploy_prod":   "deny",
		"deploy_*":      "ask",
		"github__*":     "allow",
		"github__del*":  "ask",
		"read_file":     "allow",
		"vault_read":    "allow",
		"mcp__safe__ls": "allow",
	})
	if err != nil {
		t.Fatal(err)
	}
	none := approval.Facts{}
	ro := approval.Facts{ReadOnly: true}
	idem := approval.Facts{Idempotent: true}
	destr := approval.Facts{Destructive: true, ReadOnly: true}
	cases := []struct {
		name  string
		def   Verdict
		tier  Tier
		tool  string
		args  map[string]any
		facts approval.Facts
		want  Verdict
		entry string
	}{
		{"exact beats glob", Allow, TierFull, "deploy_prod", nil, none, Deny, "tool_permissions.deploy_prod"},
		{"glob", Allow, TierFull, "deploy_staging", nil, none, Ask, "tool_permissions.deploy_*"},
		{"longer glob first", Allow, TierFull, "github__delete_repo", nil, none, Ask, "tool_permissions.github__del*"},
		{"shorter glob", Allow, TierAsk, "github__list_repos", nil, none, Allow, "tool_permissions.github__*"},
		{"explicit allow beats tier ask", Allow, TierAsk, "read_file", nil, none, Allow, "tool_permissions.read_file"},
		{"explicit allow beats auto tail", Allow, TierAuto, "vault_read", nil, none, Allow, "tool_permissions.vault_read"},
		{"full allows unknown", Allow, TierFull, "anything", nil, none, Allow, ""},
		{"full allows destructive", Allow, TierFull, "x_delete", nil, destr, Allow, ""},
		{"auto allows unknown", Allow, TierAuto, "write_file", nil, none, Allow, ""},
		{"auto asks _delete", Allow, TierAuto, "file_delete", nil, idem, Ask, ""},
		{"auto asks mcp delete", Allow, TierAuto, "gitlab__delete_project", nil, ro, Ask, ""},
		{"auto asks vault_", Allow, TierAuto, "vault_write", nil, none, Ask, ""},
		{"auto asks team_disband", Allow, TierAuto, "team_disband", nil, none, Ask, ""},
		{"auto asks destructive hint", Allow, TierAuto, "mcp__x__wipe", nil, destr, Ask, ""},
		{"auto asks file_ops delete", Allow, TierAuto, "file_ops", map[string]any{"operation": "delete"}, none, Ask, ""},
		{"auto asks file_ops move", Allow, TierAuto, "file_ops", map[string]any{"operation": "move"}, none, Ask, ""},
		{"auto allows file_ops list", Allow, TierAuto, "file_ops", map[string]any{"operation": "list"}, none, Allow, ""},
		{"ask gates unknown (fail closed)", Allow, TierAsk, "never_heard_of", nil, none, Ask, ""},
		{"ask allows read-only", Allow, TierAsk, "search", nil, ro, Allow, ""},
		{"ask allows idempotent", Allow, TierAsk, "get_status", nil, idem, Allow, ""},
		{"ask still asks destructive read-only", Allow, TierAsk, "purge", nil, destr, Ask, ""},
		{"default deny wins over full", Deny, TierFull, "anything", nil, ro, Deny, ""},
		{"default ask tightens auto", Ask, TierAuto, "read", nil, ro, Ask, ""},
		{"default allow is tightened, never widened", Allow, TierAsk, "x", nil, none, Ask, ""},
		{"deleted is not delete", Allow, TierAuto, "list_deleted_items", nil, none, Allow, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, entry := Effective(perms, c.def, c.tier, c.tool, c.args, c.facts)
			if got != c.want || entry != c.entry {
				t.Fatalf("Effective = %s (%q), want %s (%q)", got, entry, c.want, c.entry)
			}
		})
	}
}

func TestTierOrder(t *testing.T) {
	if StricterTier(TierFull, TierAsk) != TierAsk || StricterTier(TierAuto, TierFull) != TierAuto {
		t.Fatal("StricterTier must pick the tier that asks more")
	}
	if Tighter(Allow, Deny) != Deny || Tighter(Ask, Allow) != Ask {
		t.Fatal("Tighter must pick the stricter verdict")
	}
}

func TestPermissionsRejectBadValues(t *testing.T) {
	if _, err := NewPermissions(map[string]string{"x": "maybe"}); err == nil {
		t.Fatal("accepted verdict \"maybe\"")
	}
	if _, err := NewPermissions(map[string]string{"x[": "allow"}); err == nil {
		t.Fatal("accepted a broken glob")
	}
}

func TestConfigValidate(t *testing.T) {
	for _, c := range []struct {
		name string
		mod  func(*Config)
	}{
		{"tier", func(c *Config) { c.ExecTier = "yolo" }},
		{"default", func(c *Config) { c.Default = "sure" }},
		{"pause", func(c *Config) { c.DenialsBeforePause = -1 }},
		{"allow_always", func(c *Config) { c.AllowAlways = "forever" }},
		{"ask_fallback full is not allowed", func(c *Config) { c.AskFallback = "full" }},
		{"security", func(c *Config) { c.Exec.Security = "open" }},
		{"ask", func(c *Config) { c.Exec.Ask = "sometimes" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			var cfg Config
			cfg.Defaults()
			c.mod(&cfg)
			if err := cfg.Validate(); err == nil {
				t.Fatal("invalid config accepted")
			}
		})
	}
	var cfg Config
	cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		t.Fatalf("defaults invalid: %v", err)
	}
	if cfg.ExecTier != "auto" || cfg.Exec.Security != "allowlist" || cfg.Exec.Ask != "on-miss" || cfg.AskFallback != "deny" || cfg.AllowAlways != "session" || cfg.DenialsBeforePause != 3 {
		t.Fatalf("defaults differ from DESIGN.md: %+v", cfg)
	}
}
