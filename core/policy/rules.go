package policy

import (
	"fmt"
	"path"
	"strings"

	"github.com/approvebot/approvebot/core/shell"
)

// execRule is a compiled [[policy.exec.rules]] entry.
type execRule struct {
	name    string
	exe     string // a glob over the command name, or over the resolved path when it has a "/"
	exePath bool
	exeLit  bool   // exe has no glob characters
	args    string // a glob over the arguments joined by spaces; "*" spans spaces
	action  Verdict
	message string
}

// compileRules checks and compiles the exec rules; errors name the key.
func compileRules(rules []Rule) ([]execRule, error) {
	out := make([]execRule, 0, len(rules))
	for i, r := range rules {
		key := fmt.Sprintf("policy.exec.rules[%d]", i)
		c := execRule{name: strings.TrimSpace(r.Name), message: strings.TrimSpace(r.Message)}
		if c.name == "" {
			c.name = key
		}
		switch strings.TrimSpace(r.Action) {
		case "deny":
			c.action = Deny
		case "ask":
			c.action = Ask
		default:
			return nil, fmt.Errorf("%s.action: want \"deny\" or \"ask\", got %q", key, r.Action)
		}
		c.exe = strings.TrimSpace(r.Executable)
		if c.exe == "" {
			return nil, fmt.Errorf("%s.executable: required (a command name like \"git\", a path, or a glob)", key)
		}
		c.exePath = strings.ContainsRune(c.exe, '/')
		if !c.exePath {
			c.exe = strings.ToLower(c.exe)
		}
		c.exeLit = !strings.ContainsAny(c.exe, `*?[\`)
		if _, err := path.Match(c.exe, ""); err != nil {
			return nil, fmt.Errorf("%s.executable: invalid glob %q: %w", key, r.Executable, err)
		}
		c.args = strings.TrimSpace(r.Args)
		if err := checkGlob(c.args); err != nil {
			return nil, fmt.Errorf("%s.args: %q: %w", key, r.Args, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// matches reports whether the rule applies to a segment.
func (r *execRule) matches(s *shell.Segment, resolved, real string) bool {
	if len(s.Args) == 0 {
		return false
	}
	if r.exePath {
		if !(resolved != "" && globMatch(r.exe, resolved) || real != "" && globMatch(r.exe, real) ||
			strings.ContainsRune(s.Name(), '/') && globMatch(r.exe, path.Clean(s.Name()))) {
			return false
		}
	} else if r.exeLit {
		if r.exe != s.Base() {
			return false
		}
	} else if ok, _ := path.Match(r.exe, s.Base()); !ok {
		return false
	}
	if r.args == "" {
		return true
	}
	return shell.Match(r.args, joinArgs(s.Args[1:]))
}

func joinArgs(args []shell.Arg) string {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(a.Value)
	}
	return b.String()
}
