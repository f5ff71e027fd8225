// Package policy decides what may run without a human: the tool-permission lattice of seed
// 000 (explicit entries, the configured default tightened by the exec tier) and, for shell
// tools, the command policy and hardline floor of seed 003 on top. It never lowers a verdict.
package policy

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/approvebot/approvebot/core/approval"
)

// Verdict is allow < ask < deny.
type Verdict int

const (
	Allow Verdict = iota
	Ask
	Deny
)

func (v Verdict) String() string {
	switch v {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	}
	return "deny"
}

// ParseVerdict reads "allow", "ask" or "deny".
func ParseVerdict(s string) (Verdict, error) {
	switch s {
	case "allow":
		return Allow, nil
	case "ask":
		return Ask, nil
	case "deny":
		return Deny, nil
	}
	return Deny, fmt.Errorf("want \"allow\", \"ask\" or \"deny\", got %q", s)
}

// Tighter returns the more restrictive verdict.
func Tighter(a, b Verdict) Verdict {
	if a > b {
		return a
	}
	return b
}

// Tier is the exec tier: how much is asked about. Full < Auto < Ask in strictness.
type Tier int

const (
	TierFull Tier = iota
	TierAuto
	TierAsk
)

func (t Tier) String() string {
	switch t {
	case TierFull:
		return "full"
	case TierAuto:
		return "auto"
	}
	return "ask"
}

// ParseTier reads "ask", "auto" or "full".
func ParseTier(s string) (Tier, error) {
	switch s {
	case "ask":
		return TierAsk, nil
	case "auto":
		return TierAuto, nil
	case "full":
		return TierFull, nil
	}
	return TierAsk, fmt.Errorf("want \"ask\", \"auto\" or \"full\", got %q", s)
}

// StricterTier returns the stricter of two tiers.
func StricterTier(a, b Tier) Tier {
	if a > b {
		return a
	}
	return b
}

// Permissions is the [policy.tool_permissions] table, split into exact names and globs.
type Permissions struct {
	exact map[string]Verdict
	globs []globPermission
}

type globPermission struct {
	pattern string
	verdict Verdict
}

// NewPermissions parses the table. Globs are tried most specific (longest) first.
func NewPermissions(table map[string]string) (Permissions, error) {
	p := Permissions{exact: map[string]Verdict{}}
	for name, v := range table {
		verdict, err := ParseVerdict(v)
		if err != nil {
			return p, fmt.Errorf("tool_permissions.%q: %w", name, err)
		}
		if strings.ContainsAny(name, "*?[") {
			if _, err := path.Match(name, ""); err != nil {
				return p, fmt.Errorf("tool_permissions.%q: %w", name, err)
			}
			p.globs = append(p.globs, globPermission{name, verdict})
		} else {
			p.exact[name] = verdict
		}
	}
	sort.Slice(p.globs, func(i, j int) bool {
		a, b := p.globs[i].pattern, p.globs[j].pattern
		if len(a) != len(b) {
			return len(a) > len(b)
		}
		return a < b
	})
	return p, nil
}

// Lookup finds the explicit entry for a tool: an exact name beats any glob. An entry that
// asks or denies also holds for the tool's name in another case (a deny of "Write" is a deny
// of "write" and "WRITE"), and wins over an allow that matched exactly: a spelling is no way
// around a refusal. An allow holds only for the name as written.
func (p Permissions) Lookup(tool string) (Verdict, string, bool) {
	v, pattern, ok := p.lookupExact(tool)
	if fv, fpattern, fok := p.lookupFolded(tool); fok && (!ok || fv > v) {
		return fv, fpattern, true
	}
	return v, pattern, ok
}

func (p Permissions) lookupExact(tool string) (Verdict, string, bool) {
	if v, ok := p.exact[tool]; ok {
		return v, tool, true
	}
	for _, g := range p.globs {
		if ok, _ := path.Match(g.pattern, tool); ok {
			return g.verdict, g.pattern, true
		}
	}
	return Deny, "", false
}

// lookupFolded finds the strictest ask or deny entry that matches the tool's name without
// regard to case.
func (p Permissions) lookupFolded(tool string) (Verdict, string, bool) {
	low := strings.ToLower(tool)
	best, pattern, found := Allow, "", false
	consider := func(v Verdict, pat string) {
		if v != Allow && (!found || v > best) {
			best, pattern, found = v, pat, true
		}
	}
	for name, v := range p.exact {
		if v != Allow && strings.EqualFold(name, tool) {
			consider(v, name)
		}
	}
	for _, g := range p.globs {
		if g.verdict == Allow {
			continue
		}
		if ok, _ := path.Match(strings.ToLower(g.pattern), low); ok {
			consider(g.verdict, g.pattern)
		}
	}
	return best, pattern, found
}

// TierVerdict is what the tier alone asks for a tool. Ask: every tool that is not declared
// read-only or idempotent (unknown tools are mutating). Auto: the irreversible tail. Full:
// nothing.
func TierVerdict(tier Tier, tool string, args map[string]any, facts approval.Facts) Verdict {
	switch tier {
	case TierFull:
		return Allow
	case TierAuto:
		if Irreversible(tool, args, facts) {
			return Ask
		}
		return Allow
	}
	if Irreversible(tool, args, facts) {
		return Ask
	}
	if (facts.ReadOnly || facts.Idempotent) && !mutatingDespiteFacts(tool, args) {
		return Allow
	}
	return Ask
}

// Irreversible reports the auto tier's tail: a destructive hint, a tool whose name has an
// irreversible word in any case style (delete_repository, deleteRepository, github__delete_repo,
// rm-file, PurgeCache, truncate_table, VaultRead, team_disband, deleterepository: see
// irreversibleName), and file_ops deleting or moving or doing what cannot be read (its
// operation read the same way, "operation" or "op").
func Irreversible(tool string, args map[string]any, facts approval.Facts) bool {
	if facts.Destructive {
		return true
	}
	words := ToolWords(tool)
	if irreversibleName(words) {
		return true
	}
	if isFileOps(words) {
		// An operation that cannot be read could be a delete.
		op := fileOpOf(args)
		return op >= fileOpMove || op == fileOpUnknown
	}
	return false
}

// Effective is the one place the lattice lives: an explicit tool permission wins; otherwise
// the configured default tightened by the tier's verdict. It returns the verdict and the
// tool_permissions entry that decided it ("" when none did).
func Effective(perms Permissions, def Verdict, tier Tier, tool string, args map[string]any, facts approval.Facts) (Verdict, string) {
	if v, pattern, ok := perms.Lookup(tool); ok {
		return v, "tool_permissions." + pattern
	}
	return Tighter(def, TierVerdict(tier, tool, args, facts)), ""
}
