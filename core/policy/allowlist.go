package policy

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"

	"github.com/approvebot/approvebot/core/shell"
)

// Allowlist matches resolved executable paths against [[policy.exec.allowlist]] patterns:
// an exact path, "dir/*" (anything under dir) or a glob ("*" within a path element, "**"
// across elements, "?", "[class]"). The first matching entry wins. It is immutable and safe for
// concurrent use.
type Allowlist struct {
	pats []allowPattern
}

type patternKind uint8

const (
	patExact patternKind = iota
	patPrefix
	patGlob
)

type allowPattern struct {
	entry AllowlistEntry
	kind  patternKind
	// norm is the normalised pattern; for patPrefix, the directory with a trailing slash.
	norm string
	// lit is the literal prefix of a glob, checked before the glob itself.
	lit string
	// fold is set for Windows drive paths, matched case-insensitively.
	fold bool
}

// CompileAllowlist checks and compiles entries. home expands a leading "~". An invalid
// pattern is an error naming its index, never a silent non-match.
func CompileAllowlist(entries []AllowlistEntry, home string) (*Allowlist, error) {
	a := &Allowlist{pats: make([]allowPattern, 0, len(entries))}
	for i, e := range entries {
		p, err := compileAllowPattern(e, home)
		if err != nil {
			return nil, fmt.Errorf("policy.exec.allowlist[%d].pattern: %w", i, err)
		}
		a.pats = append(a.pats, p)
	}
	return a, nil
}

// Len is the number of entries.
func (a *Allowlist) Len() int { return len(a.pats) }

// Match returns the first entry allowing the executable at resolved (or at its symlink-free
// real path) for agent.
func (a *Allowlist) Match(resolved, real, agent string) (AllowlistEntry, bool) {
	if a == nil {
		return AllowlistEntry{}, false
	}
	if p, ok := matchPatterns(a.pats, resolved, real, agent); ok {
		return p.entry, true
	}
	return AllowlistEntry{}, false
}

func matchPatterns(pats []allowPattern, resolved, real, agent string) (*allowPattern, bool) {
	if resolved == "" {
		return nil, false
	}
	for i := range pats {
		p := &pats[i]
		if p.entry.Agent != "" && p.entry.Agent != agent {
			continue
		}
		if p.match(resolved) || real != "" && real != resolved && p.match(real) {
			return p, true
		}
	}
	return nil, false
}

func (p *allowPattern) match(s string) bool {
	if p.fold {
		s = normalizeWindowsPath(s)
	}
	switch p.kind {
	case patExact:
		return s == p.norm
	case patPrefix:
		return len(s) > len(p.norm) && s[:len(p.norm)] == p.norm
	}
	return strings.HasPrefix(s, p.lit) && globMatch(p.norm, s)
}

var errRelativePattern = errors.New("must be an absolute path (\"/usr/bin/git\", \"/opt/tools/*\") or start with ~/")

func compileAllowPattern(e AllowlistEntry, home string) (allowPattern, error) {
	pat := strings.TrimSpace(e.Pattern)
	if pat == "" {
		return allowPattern{}, errors.New("empty pattern")
	}
	if strings.IndexByte(pat, 0) >= 0 {
		return allowPattern{}, errors.New("pattern contains a NUL byte")
	}
	fold := false
	switch {
	case pat == "~" || strings.HasPrefix(pat, "~/"):
		if home == "" || !path.IsAbs(home) {
			return allowPattern{}, errors.New("pattern starts with ~ but the home directory is unknown")
		}
		pat = home + pat[1:]
	case isWindowsPath(pat):
		pat = normalizeWindowsPath(pat)
		fold = true
	case !strings.HasPrefix(pat, "/"):
		return allowPattern{}, fmt.Errorf("%q %w", e.Pattern, errRelativePattern)
	}
	if !fold {
		trailingStar := strings.HasSuffix(pat, "/*")
		pat = path.Clean(pat)
		if trailingStar && !strings.HasSuffix(pat, "/*") {
			pat += "/*"
		}
	}
	if err := checkGlob(pat); err != nil {
		return allowPattern{}, fmt.Errorf("%q: %w", e.Pattern, err)
	}
	p := allowPattern{entry: e, fold: fold}
	meta := strings.IndexAny(pat, `*?[\`)
	switch {
	case meta < 0:
		p.kind, p.norm = patExact, pat
	case strings.HasSuffix(pat, "/*") && meta == len(pat)-1:
		p.kind, p.norm = patPrefix, pat[:len(pat)-1]
	default:
		p.kind, p.norm, p.lit = patGlob, pat, pat[:meta]
	}
	return p, nil
}

// isWindowsPath reports a drive-letter path (C:\…, C:/…) or a UNC path.
func isWindowsPath(s string) bool {
	if len(s) >= 2 && s[1] == ':' && (s[0]|0x20 >= 'a' && s[0]|0x20 <= 'z') {
		return true
	}
	return strings.HasPrefix(s, `\\`)
}

func normalizeWindowsPath(s string) string {
	return strings.ToLower(strings.ReplaceAll(s, `\`, "/"))
}

// checkGlob validates bracket classes and trailing escapes.
func checkGlob(p string) error {
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			if i+1 >= len(p) {
				return errors.New("pattern ends with a backslash")
			}
			i++
		case '[':
			j := i + 1
			if j < len(p) && (p[j] == '!' || p[j] == '^') {
				j++
			}
			if j < len(p) && p[j] == ']' {
				j++
			}
			for j < len(p) && p[j] != ']' {
				j++
			}
			if j >= len(p) {
				return errors.New("unclosed [ in pattern")
			}
			i = j
		}
	}
	return nil
}

// globMatch matches s against a pattern where "*" matches within a path element, "**" across
// elements, "?" one character other than "/", "[…]" a class and "\" escapes.
func globMatch(p, s string) bool {
	for len(p) > 0 {
		switch p[0] {
		case '*':
			if len(p) > 1 && p[1] == '*' {
				rest := strings.TrimLeft(p, "*")
				if rest == "" {
					return true
				}
				for i := 0; i <= len(s); i++ {
					if globMatch(rest, s[i:]) {
						return true
					}
				}
				return false
			}
			rest := p[1:]
			if rest == "" {
				return strings.IndexByte(s, '/') < 0
			}
			for i := 0; i <= len(s); i++ {
				if globMatch(rest, s[i:]) {
					return true
				}
				if i < len(s) && s[i] == '/' {
					return false
				}
			}
			return false
		case '?':
			if len(s) == 0 || s[0] == '/' {
				return false
			}
			p, s = p[1:], s[1:]
		case '[':
			if len(s) == 0 || s[0] == '/' {
				return false
			}
			ok, n := shell.MatchClass(p, s[0])
			if n == 0 || !ok {
				return false
			}
			p, s = p[n:], s[1:]
		case '\\':
			if len(p) < 2 || len(s) == 0 || s[0] != p[1] {
				return false
			}
			p, s = p[2:], s[1:]
		default:
			if len(s) == 0 || s[0] != p[0] {
				return false
			}
			p, s = p[1:], s[1:]
		}
	}
	return len(s) == 0
}

// persistedCache compiles the run-time ("allow always") entries once per distinct entry.
type persistedCache struct {
	mu    sync.Mutex
	pats  map[AllowlistEntry]*allowPattern // nil value: invalid, skipped
	home  string
	limit int
}

func newPersistedCache(home string) *persistedCache {
	return &persistedCache{pats: map[AllowlistEntry]*allowPattern{}, home: home, limit: 8192}
}

// compile returns the compiled patterns for entries, in order, skipping invalid ones.
func (c *persistedCache) compile(entries []AllowlistEntry) []allowPattern {
	if len(entries) == 0 {
		return nil
	}
	out := make([]allowPattern, 0, len(entries))
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.pats) > c.limit {
		c.pats = map[AllowlistEntry]*allowPattern{}
	}
	for _, e := range entries {
		p, ok := c.pats[e]
		if !ok {
			cp, err := compileAllowPattern(e, c.home)
			if err == nil {
				p = &cp
			}
			c.pats[e] = p
		}
		if p != nil {
			out = append(out, *p)
		}
	}
	return out
}
