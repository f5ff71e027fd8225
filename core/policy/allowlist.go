package policy

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/approvebot/approvebot/core/shell"
)

// Allowlist matches resolved executable paths against [[policy.exec.allowlist]] patterns:
// an exact path, "dir/*" (anything under dir) or a glob ("*" within a path element, "**"
// across elements, "?", "[class]"), optionally with an argv pattern over the words after the
// executable. The first matching entry wins. Exact paths and directory prefixes are indexed,
// so a match costs a few map lookups however many entries there are; only globs are tried
// one by one (each after a check of its literal prefix). It is immutable and safe for
// concurrent use.
type Allowlist struct {
	pats []allowPattern
	// exact maps a normalised path to the indexes of the exact entries for it, in order;
	// prefix maps "dir/" to the indexes of the "dir/*" entries.
	exact, prefix map[string][]int32
	// exactLens and prefixLens are the lengths present in exact and prefix: a path of
	// another length, or an ancestor of one, needs no lookup.
	exactLens, prefixLens lengthSet
	// globDir maps the directory part of a glob's literal prefix ("/usr/bin/" of
	// "/usr/bin/python3*") to the indexes of those globs; folded are the Windows paths,
	// matched case-insensitively, tried one by one.
	globDir     map[string][]int32
	globDirLens lengthSet
	folded      []int32
}

// lengthSet is a set of string lengths; every length from 4096 up is one member.
type lengthSet [65]uint64

func (l *lengthSet) add(n int) {
	if n > 4096 {
		n = 4096
	}
	l[n>>6] |= 1 << (n & 63)
}

func (l *lengthSet) has(n int) bool {
	if n > 4096 {
		n = 4096
	}
	return l[n>>6]&(1<<(n&63)) != 0
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
	// args is the argv pattern ("" for any arguments); argsOrNone is set when it ends in
	// " *", which also matches the words before it alone ("test *" matches "test").
	args       string
	argsOrNone bool
}

// CompileAllowlist checks and compiles entries. home expands a leading "~". An invalid
// pattern is an error naming its index, never a silent non-match.
func CompileAllowlist(entries []AllowlistEntry, home string) (*Allowlist, error) {
	a := &Allowlist{pats: make([]allowPattern, 0, len(entries))}
	for i, e := range entries {
		p, err := compileAllowPattern(e, home)
		if err != nil {
			return nil, fmt.Errorf("policy.exec.allowlist[%d].%w", i, err)
		}
		a.pats = append(a.pats, p)
	}
	a.index()
	return a, nil
}

func (a *Allowlist) index() {
	for i := range a.pats {
		p := &a.pats[i]
		switch {
		case p.fold:
			a.folded = append(a.folded, int32(i))
		case p.kind == patGlob:
			dir := p.lit[:strings.LastIndexByte(p.lit, '/')+1]
			if a.globDir == nil {
				a.globDir = map[string][]int32{}
			}
			a.globDir[dir] = append(a.globDir[dir], int32(i))
			a.globDirLens.add(len(dir))
		case p.kind == patExact:
			if a.exact == nil {
				a.exact = map[string][]int32{}
			}
			a.exact[p.norm] = append(a.exact[p.norm], int32(i))
			a.exactLens.add(len(p.norm))
		default:
			if a.prefix == nil {
				a.prefix = map[string][]int32{}
			}
			a.prefix[p.norm] = append(a.prefix[p.norm], int32(i))
			a.prefixLens.add(len(p.norm))
		}
	}
}

// Len is the number of entries.
func (a *Allowlist) Len() int { return len(a.pats) }

// Match returns the first entry allowing the executable at resolved (or at its symlink-free
// real path) for agent, whatever the arguments: entries with an argv pattern do not match.
func (a *Allowlist) Match(resolved, real, agent string) (AllowlistEntry, bool) {
	q := allowQuery{resolved: resolved, real: real, agent: agent, noArgs: true}
	if p, ok := a.first(&q); ok {
		return p.entry, true
	}
	return AllowlistEntry{}, false
}

// MatchArgs is Match for a call with these arguments (the words after the executable).
func (a *Allowlist) MatchArgs(resolved, real, agent string, args []string) (AllowlistEntry, bool) {
	q := allowQuery{resolved: resolved, real: real, agent: agent, words: args}
	if p, ok := a.first(&q); ok {
		return p.entry, true
	}
	return AllowlistEntry{}, false
}

// allowQuery is one match: the executable, the agent, and the arguments, joined on demand.
type allowQuery struct {
	resolved, real, agent string
	args                  []shell.Arg // the words after the executable, or
	words                 []string
	noArgs                bool // entries with an argv pattern never match
	anyArgs               bool // entries with an argv pattern match whatever the arguments
	joined                string
	didJoin               bool
}

func (q *allowQuery) argv() string {
	if !q.didJoin {
		q.didJoin = true
		if q.args != nil {
			q.joined = joinArgs(q.args)
		} else {
			q.joined = strings.Join(q.words, " ")
		}
	}
	return q.joined
}

// accepts reports whether the entry applies to the query's agent and arguments.
func (q *allowQuery) accepts(p *allowPattern) bool {
	if p.entry.Agent != "" && p.entry.Agent != q.agent {
		return false
	}
	if p.args == "" || q.anyArgs {
		return true
	}
	if q.noArgs {
		return false
	}
	v := q.argv()
	return shell.Match(p.args, v) || p.argsOrNone && shell.Match(p.args[:len(p.args)-2], v)
}

// first returns the first entry (in configuration order) matching the query.
func (a *Allowlist) first(q *allowQuery) (*allowPattern, bool) {
	if a == nil || q.resolved == "" {
		return nil, false
	}
	best := int32(len(a.pats))
	paths := [2]string{q.resolved, q.real}
	n := 1
	if q.real != "" && q.real != q.resolved {
		n = 2
	}
	for _, s := range paths[:n] {
		if a.exact != nil && a.exactLens.has(len(s)) {
			best = a.try(a.exact[s], best, q, "")
		}
		if a.prefix == nil && a.globDir == nil {
			continue
		}
		// Every ancestor "dir/" of s, with a length some entry has.
		for i := len(s) - 1; i >= 0; i-- {
			if s[i] != '/' {
				continue
			}
			d := s[:i+1]
			if a.prefix != nil && a.prefixLens.has(i+1) && i+1 < len(s) {
				best = a.try(a.prefix[d], best, q, "")
			}
			if a.globDir != nil && a.globDirLens.has(i+1) {
				best = a.try(a.globDir[d], best, q, s)
			}
		}
	}
	for _, i := range a.folded {
		if i >= best {
			break
		}
		p := &a.pats[i]
		if (p.match(q.resolved) || n == 2 && p.match(q.real)) && q.accepts(p) {
			best = i
			break
		}
	}
	if best == int32(len(a.pats)) {
		return nil, false
	}
	return &a.pats[best], true
}

// try returns the first index of idxs (ascending) below best whose entry accepts the query
// (and, for globs, matches s), or best.
func (a *Allowlist) try(idxs []int32, best int32, q *allowQuery, s string) int32 {
	for _, i := range idxs {
		if i >= best {
			break
		}
		p := &a.pats[i]
		if (s == "" || p.match(s)) && q.accepts(p) {
			return i
		}
	}
	return best
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
	p, err := compilePathPattern(e, home)
	if err != nil {
		return p, fmt.Errorf("pattern: %w", err)
	}
	if args := strings.TrimSpace(e.Args); args != "" {
		if strings.IndexByte(args, 0) >= 0 {
			return p, errors.New("args: contains a NUL byte")
		}
		if err := checkGlob(args); err != nil {
			return p, fmt.Errorf("args: %q: %w", e.Args, err)
		}
		p.args = strings.Join(strings.Fields(args), " ")
		p.argsOrNone = strings.HasSuffix(p.args, " *")
	}
	return p, nil
}

func compilePathPattern(e AllowlistEntry, home string) (allowPattern, error) {
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

// persistedCache keeps the run-time ("allow always") entries compiled: the store hands out
// the same slice until the entries change (PersistedAllowlist), so a judgement recompiles
// nothing while they stay the same, and only new entries when they change.
type persistedCache struct {
	cur  atomic.Pointer[persistedList]
	mu   sync.Mutex
	pats map[AllowlistEntry]*allowPattern // nil value: invalid, skipped
	home string
}

// persistedList is one compiled generation of the persisted entries.
type persistedList struct {
	data *AllowlistEntry // the slice it was compiled from
	n    int
	list *Allowlist
}

// maxPersistedPatterns bounds the compiled patterns remembered across generations.
const maxPersistedPatterns = 1 << 16

func newPersistedCache(home string) *persistedCache {
	return &persistedCache{pats: map[AllowlistEntry]*allowPattern{}, home: home}
}

// compile returns the entries compiled, in order, invalid ones skipped.
func (c *persistedCache) compile(entries []AllowlistEntry) *Allowlist {
	if len(entries) == 0 {
		return nil
	}
	data := &entries[0]
	if cur := c.cur.Load(); cur != nil && cur.data == data && cur.n == len(entries) {
		return cur.list
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.pats) > maxPersistedPatterns {
		c.pats = map[AllowlistEntry]*allowPattern{}
	}
	a := &Allowlist{pats: make([]allowPattern, 0, len(entries))}
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
			a.pats = append(a.pats, *p)
		}
	}
	a.index()
	c.cur.Store(&persistedList{data: data, n: len(entries), list: a})
	return a
}
