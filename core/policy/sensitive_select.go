package policy

import (
	"path"
	"regexp"
	"strings"

	"github.com/approvebot/approvebot/core/shell"
)

// Programs choose the files they read or list by patterns as well as by names: find -name,
// -path and -regex, grep --include, ripgrep's -g, git's pathspecs. Such a pattern selects a
// sensitive path when it matches one of the sensitive paths the directory it applies to may
// hold, and is not merely broad: a pattern that also matches ordinary names ("*", "*.json",
// ".*") lists everything, which is no more than reading the directory (find . -type f), while
// ".env*", "*.pem" and "id_rsa" pick the secrets out. Samples stand for the sensitive paths:
// each glob of the list with its wildcards filled in ("x.pem", ".env.x", "/etc/shadow",
// "~/.ssh/x"), and decoys for ordinary names.

// selKind is how a program matches a pattern against the files it walks.
type selKind uint8

const (
	// selName: a glob over a file's name ("*" matches a leading "." too).
	selName selKind = iota
	// selPath: a glob over the path as the program prints it, "*" crossing "/" (find -path).
	selPath
	// selRelPath: selPath over the path relative to the directory, without "./" (git
	// pathspecs, ripgrep globs with a "/").
	selRelPath
	// selRegex: find's -regex, a regular expression over the whole path as find prints it.
	selRegex
)

// selector is one pattern a program selects files by.
type selector struct {
	kind selKind
	pat  string
	// regexType is find's -regextype in force ("" is emacs).
	regexType string
	// shown is the option as written, for the card ("find -name", "grep --include").
	shown string
}

// sensSample is a path standing for what a sensitive glob matches.
type sensSample struct {
	rel   string // for names matched anywhere: the relative path; else the path below the home (tilde) or root
	glob  int
	kind  uint8 // sampleAnywhere, sampleTilde or sampleRoot
	isDir bool  // a child "x" was appended: the sample is inside what the glob names
}

const (
	sampleAnywhere uint8 = iota
	sampleTilde
	sampleRoot
)

// decoyNames are ordinary names a broad pattern also matches.
var decoyNames = []string{"x", "a.b", "main.go", "readme.md", "package.json", "index.js", "makefile", "data.txt",
	"src", "lib", "docs", ".gitignore", ".github", ".x", "x.sh", "config.yaml", "settings.json", "test_x.py",
	"config", "notes", "x.txt", "go.mod", "dockerfile", "license", ".editorconfig", "tsconfig.json"}

// buildSamples fills s.samples and s.decoys.
func (s *Sensitive) buildSamples() {
	for i, g := range s.globs {
		raw := strings.TrimSpace(g.glob)
		kind := sampleAnywhere
		switch {
		case g.tilde:
			kind, raw = sampleTilde, g.rel
		case g.anchored:
			kind, raw = sampleRoot, strings.TrimPrefix(cleanGlob(raw), "/")
		default:
			raw = cleanGlob(raw)
		}
		seen := map[string]bool{}
		for _, star := range []string{"x", ""} {
			v := instantiateGlob(raw, star)
			if v == "" && kind == sampleAnywhere || seen[v] {
				continue
			}
			seen[v] = true
			s.samples = append(s.samples, sensSample{rel: v, glob: i, kind: kind})
			child := "x"
			if v != "" {
				child = v + "/x"
			}
			s.samples = append(s.samples, sensSample{rel: child, glob: i, kind: kind, isDir: true})
		}
	}
	for _, d := range decoyNames {
		if _, ok := s.namesSensitive(d); !ok {
			s.decoys = append(s.decoys, d)
		}
	}
}

// instantiateGlob fills a glob's wildcards: "*" (and "**") with star, "?" with "x", a class
// with its first character; lower-cased.
func instantiateGlob(g, star string) string {
	var b strings.Builder
	for i := 0; i < len(g); i++ {
		c := g[i]
		switch c {
		case '*':
			for i+1 < len(g) && g[i+1] == '*' {
				i++
			}
			b.WriteString(star)
		case '?':
			b.WriteByte('x')
		case '\\':
			if i+1 < len(g) {
				i++
				b.WriteByte(g[i])
			}
		case '[':
			j := i + 1
			neg := j < len(g) && (g[j] == '!' || g[j] == '^')
			if neg {
				j++
			}
			first := byte(0)
			if j < len(g) {
				first = g[j]
			}
			k := j + 1
			for k < len(g) && g[k] != ']' {
				k++
			}
			if k >= len(g) {
				b.WriteByte('[')
				continue
			}
			if neg || first == '[' || first == 0 {
				first = 'x'
			}
			b.WriteByte(first)
			i = k
		default:
			b.WriteByte(c)
		}
	}
	return strings.ToLower(b.String())
}

// selected reports whether the selector, applied to the directory dir (as written), picks a
// sensitive path out: the glob, or ok false. bad reports a pattern that cannot be read (a
// regular expression Go cannot compile): what it selects cannot be told. A path pattern
// selects what its last element selects as a name ("config/**/.env" picks .env files), and
// otherwise what it matches as a whole ("*/.ssh/*").
func (c *sensScope) selected(dir string, sel selector) (glob string, ok, bad bool) {
	if sel.kind == selPath || sel.kind == selRelPath {
		if i := strings.LastIndexByte(sel.pat, '/'); i >= 0 && i < len(sel.pat)-1 && !strings.Contains(sel.pat[i+1:], "**") {
			if g, ok, _ := c.selected(dir, selector{kind: selName, pat: sel.pat[i+1:]}); ok {
				return g, true, false
			}
		}
	}
	m, err := compileSelector(sel)
	if err != nil {
		return "", false, true
	}
	dirAbs := strings.ToLower(c.resolve(dir))
	written := strings.ToLower(strings.TrimSuffix(dir, "/"))
	if dir == "/" {
		written = ""
	}
	render := func(rel string) string { // rel starts with "/"
		switch sel.kind {
		case selName:
			return path.Base(rel)
		case selRelPath:
			return rel[1:]
		}
		return written + rel
	}
	for _, d := range c.s.decoys {
		if m(render("/"+d)) || sel.kind != selName && m(render("/x/"+d)) {
			return "", false, false // broad: it matches ordinary names too
		}
	}
	under := func(abs string) (string, bool) {
		switch {
		case dirAbs == "/":
			return abs, true
		case strings.HasPrefix(abs, dirAbs+"/"):
			return abs[len(dirAbs):], true
		}
		return "", false
	}
	roots := [...]string{strings.ToLower(c.tildeHome), "/root", "/home/x", "/users/x"}
	for _, smp := range c.s.samples {
		switch smp.kind {
		case sampleAnywhere:
			if sel.kind == selName && strings.Contains(smp.rel, "/") {
				continue // .git/hooks: a name pattern alone does not single it out
			}
			if m(render("/"+smp.rel)) || m(render("/x/"+smp.rel)) {
				return c.s.globs[smp.glob].glob, true, false
			}
		default:
			for k, root := range roots {
				if smp.kind == sampleRoot && k > 0 {
					break
				}
				abs := "/" + smp.rel
				if smp.kind == sampleTilde {
					abs = root + abs
					if smp.rel == "" {
						abs = root
					}
				}
				rel, in := under(abs)
				if !in {
					continue
				}
				if m(render(rel)) {
					return c.s.globs[smp.glob].glob, true, false
				}
			}
		}
	}
	return "", false, false
}

// compileSelector returns the matcher of a selector (over lower-cased names and paths).
func compileSelector(sel selector) (func(string) bool, error) {
	if sel.kind == selRegex {
		re, err := regexp.Compile("(?is)^(?:" + findRegexToGo(sel.pat, sel.regexType) + ")$")
		if err != nil {
			return nil, err
		}
		return re.MatchString, nil
	}
	alts := expandBraces(strings.ToLower(sel.pat), 16)
	return func(s string) bool {
		for _, a := range alts {
			if shell.Match(a, s) {
				return true
			}
		}
		return false
	}, nil
}

// expandBraces expands "{a,b}" alternatives (ripgrep's globs have them), up to max results;
// beyond that the pattern is taken as "*" (it could match anything).
func expandBraces(p string, max int) []string {
	out := []string{p}
	for round := 0; round < 8; round++ {
		var next []string
		changed := false
		for _, s := range out {
			open := -1
			depth := 0
			close := -1
			for i := 0; i < len(s); i++ {
				switch s[i] {
				case '\\':
					i++
				case '{':
					if depth == 0 {
						open = i
					}
					depth++
				case '}':
					if depth > 0 {
						depth--
						if depth == 0 && close < 0 && open >= 0 {
							close = i
						}
					}
				}
				if close >= 0 {
					break
				}
			}
			if open < 0 || close < 0 {
				next = append(next, s)
				continue
			}
			changed = true
			for _, part := range splitTopCommas(s[open+1 : close]) {
				next = append(next, s[:open]+part+s[close+1:])
			}
		}
		if len(next) > max {
			return []string{"*"}
		}
		out = next
		if !changed {
			break
		}
	}
	return out
}

func splitTopCommas(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

// findRegexToGo rewrites a find regular expression of the given -regextype as Go's syntax.
// The GNU basic flavours (emacs, the default, posix-basic, grep, sed, ed) spell groups,
// alternation and intervals with a backslash; the extended ones are taken as they are.
func findRegexToGo(re, typ string) string {
	basic := false
	gnuPlus := true // "+" and "?" are operators
	switch typ {
	case "", "emacs", "findutils-default":
		basic = true
	case "posix-basic", "grep", "sed", "ed", "posix-minimal-basic":
		basic, gnuPlus = true, false
	}
	if !basic {
		return re
	}
	var b strings.Builder
	for i := 0; i < len(re); i++ {
		c := re[i]
		switch {
		case c == '[':
			// A bracket expression, copied as it is ("]" first is a member).
			j := i + 1
			if j < len(re) && re[j] == '^' {
				j++
			}
			if j < len(re) && re[j] == ']' {
				j++
			}
			for j < len(re) && re[j] != ']' {
				if re[j] == '[' && j+1 < len(re) && (re[j+1] == ':' || re[j+1] == '.' || re[j+1] == '=') {
					if k := strings.Index(re[j+2:], string(re[j+1])+"]"); k >= 0 {
						j += k + 4
						continue
					}
				}
				j++
			}
			if j >= len(re) {
				b.WriteString(`\[`)
				continue
			}
			b.WriteString(re[i : j+1])
			i = j
		case c == '\\' && i+1 < len(re):
			i++
			switch d := re[i]; d {
			case '(', ')', '|', '{', '}':
				b.WriteByte(d)
			case '+', '?':
				if gnuPlus {
					b.WriteString(`\` + string(d))
				} else {
					b.WriteByte(d)
				}
			case '<', '>':
				b.WriteString(`\b`)
			case '`':
				b.WriteString(`\A`)
			case '\'':
				b.WriteString(`\z`)
			default:
				b.WriteByte('\\')
				b.WriteByte(d)
			}
		case c == '(' || c == ')' || c == '|' || c == '{' || c == '}':
			b.WriteByte('\\')
			b.WriteByte(c)
		case (c == '+' || c == '?') && !gnuPlus:
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
