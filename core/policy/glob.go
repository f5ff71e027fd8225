package policy

import (
	"errors"
	"math/bits"
)

// globNFA is a path glob compiled to a nondeterministic automaton over bytes. The sensitive-path
// matcher needs more than "does this string match": whether a glob written in a command could
// match a sensitive path (the intersection of two globs), and whether a directory is an
// ancestor of one (a prefix of a match). Automata answer all three the same way.
type globNFA struct {
	edges [][]nfaEdge
	// closure[i] is every state reachable from i through epsilon moves, i included.
	closure [][]int32
	accept  int32
	n       int // number of states
}

type nfaEdge struct {
	set byteSet
	to  int32
	// lit marks a literal character other than "/" (not a wildcard or class).
	lit bool
	// free marks the runs of "**" and extglob groups, which the leading-dot rule does not bind.
	free bool
	// lead marks a literal that is the first character of a pattern element: only it may
	// match the leading "." of a name.
	lead bool
}

// byteSet is a set of bytes.
type byteSet [4]uint64

func (b *byteSet) add(c byte)      { b[c>>6] |= 1 << (c & 63) }
func (b *byteSet) del(c byte)      { b[c>>6] &^= 1 << (c & 63) }
func (b *byteSet) has(c byte) bool { return b[c>>6]&(1<<(c&63)) != 0 }
func (b *byteSet) meets(o *byteSet) bool {
	return b[0]&o[0]|b[1]&o[1]|b[2]&o[2]|b[3]&o[3] != 0
}

func setOf(c byte) byteSet {
	var b byteSet
	b.add(c)
	return b
}

var (
	setAll      = byteSet{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}
	setNotSlash = func() byteSet { b := setAll; b.del('/'); return b }()
)

// maxGlobStates bounds a compiled glob; stateSet holds this many states without allocating.
const maxGlobStates = 512

// maxWordGlobStates bounds a glob found in a command; a bigger one is taken to match anything.
const maxWordGlobStates = 4096

var errGlobTooLong = errors.New("pattern is too long")

type globMode uint8

const (
	// globConfig is the configuration's syntax: "*" within an element, "**" across elements
	// ("a/**/b" matches "a/b" too), "?", "[class]", "\" escapes; matched without regard to case.
	globConfig globMode = iota
	// globShell reads a glob the way bash expands it: "*", "?" and classes do not match a leading "."
	// of an element, "[[:alpha:]]" classes, extglob "@(…)" and friends (taken as "*"), an
	// unclosed "[" is literal. "**" is taken to cross directories (globstar may be on).
	globShell
)

type nfaBuilder struct {
	edges [][]nfaEdge
	eps   [][]int32
	fold  bool
	limit int
	err   error
}

func (b *nfaBuilder) state() int32 {
	if len(b.edges) >= b.limit {
		b.err = errGlobTooLong
		return 0
	}
	b.edges = append(b.edges, nil)
	b.eps = append(b.eps, nil)
	return int32(len(b.edges) - 1)
}

func (b *nfaBuilder) edge(from int32, set byteSet, to int32) {
	if b.fold {
		set = foldSet(set)
	}
	b.edges[from] = append(b.edges[from], nfaEdge{set: set, to: to})
}

func (b *nfaBuilder) literal(from int32, c byte, to int32, lead bool) {
	b.edge(from, setOf(c), to)
	e := &b.edges[from][len(b.edges[from])-1]
	e.lit, e.lead = c != '/', lead
}

func (b *nfaBuilder) epsilon(from, to int32) { b.eps[from] = append(b.eps[from], to) }

// foldSet adds the other case of every ASCII letter in s.
func foldSet(s byteSet) byteSet {
	for c := 'A'; c <= 'Z'; c++ {
		u, l := byte(c), byte(c)+'a'-'A'
		if s.has(u) || s.has(l) {
			s.add(u)
			s.add(l)
		}
	}
	return s
}

func (b *nfaBuilder) finish(accept int32) *globNFA {
	n := &globNFA{edges: b.edges, accept: accept, n: len(b.edges), closure: make([][]int32, len(b.edges))}
	seen := make([]int32, len(b.edges))
	stack := make([]int32, 0, 16)
	all := make([]int32, 0, 2*len(b.edges)) // every closure, back to back
	for i := range b.edges {
		mark := int32(i + 1)
		stack = append(stack[:0], int32(i))
		seen[i] = mark
		start := len(all)
		for len(stack) > 0 {
			s := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			all = append(all, s)
			for _, t := range b.eps[s] {
				if seen[t] != mark {
					seen[t] = mark
					stack = append(stack, t)
				}
			}
		}
		n.closure[i] = all[start:len(all):len(all)]
	}
	return n
}

// compileGlob compiles a glob over a whole path. tree appends "and anything under it": the
// glob then also matches every path inside a directory it matches.
func compileGlob(p string, mode globMode, tree bool, limit int) (*globNFA, error) {
	b := &nfaBuilder{fold: mode == globConfig, limit: limit,
		edges: make([][]nfaEdge, 0, len(p)+4), eps: make([][]int32, 0, len(p)+4)}
	if mode == globShell {
		// The leading-dot rule doubles the states (see hideDots).
		b.limit = limit / 2
	}
	cur := b.state()
	atElem := true // at the start of a path element
	for i := 0; i < len(p) && b.err == nil; {
		c := p[i]
		if mode == globShell && i+1 < len(p) && p[i+1] == '(' && (c == '@' || c == '!' || c == '+' || c == '*' || c == '?') {
			// An extglob group: whatever it matches stays within one element.
			depth, j := 0, i+1
			for ; j < len(p); j++ {
				if p[j] == '\\' {
					j++
					continue
				}
				if p[j] == '(' {
					depth++
				} else if p[j] == ')' {
					depth--
					if depth == 0 {
						break
					}
				}
			}
			if j < len(p) {
				// Taken as a run of anything, which may spell any name and may start with
				// ".": "@(.env|x)" names .env.
				loop := b.state()
				b.epsilon(cur, loop)
				b.edges[loop] = append(b.edges[loop], nfaEdge{set: setNotSlash, to: loop, lit: true, free: true})
				cur, i, atElem = loop, j+1, false
				continue
			}
		}
		switch c {
		case '*':
			j := i
			for j < len(p) && p[j] == '*' {
				j++
			}
			loop := b.state()
			b.epsilon(cur, loop)
			if j-i >= 2 {
				b.edges[loop] = append(b.edges[loop], nfaEdge{set: setAll, to: loop, free: true})
				if atElem && j < len(p) && p[j] == '/' {
					// "**/" also matches nothing at all: a/**/b matches a/b.
					after := b.state()
					b.edges[loop] = append(b.edges[loop], nfaEdge{set: setOf('/'), to: after, free: true})
					b.epsilon(cur, after)
					cur, i = after, j+1
					continue
				}
			} else {
				b.edge(loop, setNotSlash, loop)
			}
			cur, i, atElem = loop, j, false
		case '?':
			n := b.state()
			b.edge(cur, setNotSlash, n)
			cur, i, atElem = n, i+1, false
		case '[':
			set, n, ok := parseClass(p[i:], mode)
			if !ok {
				if mode == globConfig {
					return nil, errors.New("unclosed [ in pattern")
				}
				set, n = setOf('['), 1
			}
			next := b.state()
			b.edge(cur, set, next)
			cur, i, atElem = next, i+n, false
		case '\\':
			if i+1 >= len(p) {
				if mode == globConfig {
					return nil, errors.New("pattern ends with a backslash")
				}
				i++
				continue
			}
			next := b.state()
			b.literal(cur, p[i+1], next, atElem)
			cur, i = next, i+2
			atElem = p[i-1] == '/'
		default:
			next := b.state()
			b.literal(cur, c, next, atElem)
			cur, i, atElem = next, i+1, c == '/'
		}
	}
	if tree && b.err == nil {
		under, end := b.state(), b.state()
		b.edge(cur, setOf('/'), under)
		b.edges[under] = append(b.edges[under], nfaEdge{set: setAll, to: under, free: true})
		b.epsilon(cur, end)
		b.epsilon(under, end)
		cur = end
	}
	if b.err != nil {
		return nil, b.err
	}
	if mode == globShell {
		return b.hideDots(cur), nil
	}
	return b.finish(cur), nil
}

// hideDots applies bash's rule that a "." at the start of a file name is matched only by a
// literal "." in the pattern (no dotglob): "*", "?", classes, and "*.*" as a whole never match
// ".env". Every state is doubled: copy 1 is "at the start of an element", copy 0 is not. Edges
// marked free ("**" and extglob groups) ignore the rule, which can only make them match more.
func (b *nfaBuilder) hideDots(accept int32) *globNFA {
	n := int32(len(b.edges))
	out := &nfaBuilder{edges: make([][]nfaEdge, 2*n+1), eps: make([][]int32, 2*n+1)}
	slash := setOf('/')
	dot := setOf('.')
	for q := int32(0); q < n; q++ {
		for _, e := range b.edges[q] {
			for pending := int32(0); pending < 2; pending++ {
				from := q*2 + pending // state 2q+1 is at the start of an element, 2q is not
				set := e.set
				if pending == 1 && !e.free && !(e.lead && set == dot) {
					set.del('.')
				}
				rest := set
				rest.del('/')
				if rest != (byteSet{}) {
					out.edges[from] = append(out.edges[from], nfaEdge{set: rest, to: e.to * 2, lit: e.lit, free: e.free})
				}
				if set.has('/') {
					out.edges[from] = append(out.edges[from], nfaEdge{set: slash, to: e.to*2 + 1, lit: e.lit, free: e.free})
				}
			}
		}
		for _, t := range b.eps[q] {
			out.eps[q*2] = append(out.eps[q*2], t*2)
			out.eps[q*2+1] = append(out.eps[q*2+1], t*2+1)
		}
	}
	end := 2 * n
	out.eps[accept*2] = append(out.eps[accept*2], end)
	out.eps[accept*2+1] = append(out.eps[accept*2+1], end)
	// The start state must be state 0: swap the roles of 0 and 1 (start pending).
	swap := func(x int32) int32 {
		switch x {
		case 0:
			return 1
		case 1:
			return 0
		}
		return x
	}
	out.edges[0], out.edges[1] = out.edges[1], out.edges[0]
	out.eps[0], out.eps[1] = out.eps[1], out.eps[0]
	for q := range out.edges {
		for k := range out.edges[q] {
			out.edges[q][k].to = swap(out.edges[q][k].to)
		}
		for k := range out.eps[q] {
			out.eps[q][k] = swap(out.eps[q][k])
		}
	}
	return out.finish(end)
}

// parseClass reads the bracket expression at the start of p: its set (never "/") and length.
func parseClass(p string, mode globMode) (byteSet, int, bool) {
	var set byteSet
	i := 1
	neg := false
	if i < len(p) && (p[i] == '!' || p[i] == '^') {
		neg = true
		i++
	}
	first := true
	for i < len(p) && (p[i] != ']' || first) {
		first = false
		if mode == globShell && p[i] == '[' && i+1 < len(p) && (p[i+1] == ':' || p[i+1] == '=' || p[i+1] == '.') {
			// A POSIX class, equivalence class or collating element.
			end := indexFrom(p, i+2, string([]byte{p[i+1], ']'}))
			if end < 0 {
				return set, 0, false
			}
			posixClass(&set, p[i+1], p[i+2:end])
			i = end + 2
			continue
		}
		lo := p[i]
		if lo == '\\' && i+1 < len(p) {
			i++
			lo = p[i]
		}
		hi := lo
		if i+2 < len(p) && p[i+1] == '-' && p[i+2] != ']' {
			hi = p[i+2]
			if hi == '\\' && i+3 < len(p) {
				hi = p[i+3]
				i++
			}
			i += 2
		}
		for c := int(lo); c <= int(hi); c++ {
			set.add(byte(c))
		}
		i++
	}
	if i >= len(p) {
		return set, 0, false
	}
	if mode == globConfig {
		set = foldSet(set) // before negating: [!a] is neither a nor A
	}
	if neg {
		for k := range set {
			set[k] = ^set[k]
		}
	}
	set.del('/')
	return set, i + 1, true
}

// posixClass adds a bracket expression's [:name:] (C locale), [=c=] or [.c.] to set; a name it
// does not know adds every character.
func posixClass(set *byteSet, kind byte, name string) {
	if kind != ':' {
		if len(name) == 1 {
			set.add(name[0])
			return
		}
		*set = setAll
		return
	}
	in := func(c byte) bool {
		if c >= 0x80 {
			// A byte of a multibyte character: a letter in some locale.
			switch name {
			case "digit", "xdigit", "space", "blank", "cntrl":
				return false
			}
			return true
		}
		switch name {
		case "alpha":
			return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		case "digit":
			return '0' <= c && c <= '9'
		case "alnum":
			return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		case "upper":
			return 'A' <= c && c <= 'Z'
		case "lower":
			return 'a' <= c && c <= 'z'
		case "space":
			return c == ' ' || '\t' <= c && c <= '\r'
		case "blank":
			return c == ' ' || c == '\t'
		case "punct":
			return '!' <= c && c <= '/' || ':' <= c && c <= '@' || '[' <= c && c <= '`' || '{' <= c && c <= '~'
		case "xdigit":
			return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
		case "word":
			return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		case "cntrl":
			return c < ' ' || c == 127
		case "print":
			return ' ' <= c && c <= '~'
		case "graph":
			return '!' <= c && c <= '~'
		}
		return true
	}
	for c := 0; c < 256; c++ {
		if in(byte(c)) {
			set.add(byte(c))
		}
	}
}

func indexFrom(s string, from int, sub string) int {
	for i := from; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

// stateSet is a set of automaton states, held inline.
type stateSet [maxGlobStates / 64]uint64

func (s *stateSet) add(n *globNFA, state int32) {
	for _, t := range n.closure[state] {
		s[t>>6] |= 1 << (t & 63)
	}
}

func (s *stateSet) has(i int32) bool { return s[i>>6]&(1<<(i&63)) != 0 }

func (s *stateSet) empty() bool {
	for _, w := range s {
		if w != 0 {
			return false
		}
	}
	return true
}

// step moves every state of cur on c into next.
func (n *globNFA) step(cur, next *stateSet, c byte) {
	*next = stateSet{}
	for wi, w := range cur {
		for w != 0 {
			i := wi*64 + bits.TrailingZeros64(w)
			w &= w - 1
			for k := range n.edges[i] {
				if e := &n.edges[i][k]; e.set.has(c) {
					next.add(n, e.to)
				}
			}
		}
	}
}

// run returns the states after reading s.
func (n *globNFA) run(s string) stateSet {
	var cur, next stateSet
	cur.add(n, 0)
	for i := 0; i < len(s); i++ {
		n.step(&cur, &next, s[i])
		cur = next
		if cur.empty() {
			break
		}
	}
	return cur
}

// matches reports whether the glob matches s.
func (n *globNFA) matches(s string) bool {
	st := n.run(s)
	return st.has(n.accept)
}

// matchesBelow reports whether the glob matches s or a path below the directory s: a
// recursive walk of s reaches a match.
func (n *globNFA) matchesBelow(s string) bool {
	st := n.run(s)
	if st.has(n.accept) {
		return true
	}
	if st.empty() {
		return false
	}
	if s != "/" {
		var next stateSet
		n.step(&st, &next, '/')
		st = next
	}
	return !st.empty()
}

// intersects reports whether some string matches both a and b. With below, it is enough that
// a string a matches names a directory holding a match of b (or is one). With spelled, the
// common string must also have at least one character that is a literal in both globs (other
// than "/"): "*" alone could match "x.pem", but does not name it, while "*.p*" does.
func intersects(a, b *globNFA, below, spelled bool) bool {
	nb := b.n
	stride := a.n * nb
	seen := make([]uint64, (2*stride+63)/64)
	type triple struct {
		x, y int32
		lit  bool
	}
	var queue []triple
	push := func(x, y int32, lit bool) {
		for _, cx := range a.closure[x] {
			for _, cy := range b.closure[y] {
				k := int(cx)*nb + int(cy)
				if lit {
					k += stride
				}
				if seen[k>>6]&(1<<(k&63)) == 0 {
					seen[k>>6] |= 1 << (k & 63)
					queue = append(queue, triple{cx, cy, lit})
				}
			}
		}
	}
	push(0, 0, !spelled)
	slash := setOf('/')
	for len(queue) > 0 {
		p := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if p.x == a.accept && p.lit {
			if p.y == b.accept {
				return true
			}
			if below {
				for _, e := range b.edges[p.y] {
					if e.set.meets(&slash) {
						return true
					}
				}
			}
		}
		for _, ea := range a.edges[p.x] {
			for _, eb := range b.edges[p.y] {
				if ea.set.meets(&eb.set) {
					push(ea.to, eb.to, p.lit || ea.lit && eb.lit)
				}
			}
		}
	}
	return false
}
