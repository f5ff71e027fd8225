package shell

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

type varVal struct {
	val   string
	known bool
	// lit is set when the value was written as literal text in the command line itself (not
	// taken from the environment): its expansions stay static.
	lit bool
}

// stdin kinds.
const (
	stdinInherit uint8 = iota // whatever the command line itself was given (nothing useful)
	stdinKnown                // a heredoc, here-string or a pipe whose output was worked out
	stdinPipe                 // a pipe whose output is unknown (or not yet worked out: src)
	stdinFile                 // a file or descriptor
)

type stdinState struct {
	kind uint8
	text string
	// src, when set, is the pipeline before this command, evaluated on demand.
	src   []*syntax.Stmt
	first *stdinState
}

func stdinNone() stdinState { return stdinState{} }

// shared is the state every walker of one analysis shares.
type shared struct {
	steps      int
	pipes      int
	deep       bool // the policy depth problem was reported
	background bool // a statement runs in the background (printing needs it)
	replays    int  // function bodies replayed for the floor
	slab       []Segment
	argArena   []Arg
}

// walker walks statements and records segments. Copies of a walker are cheap: nested scripts,
// subshells and wrappers each get one.
type walker struct {
	an        *Analysis
	sh        *shared
	cwd, home string
	vars      map[string]varVal
	varsOwned bool
	funcs     map[string]*syntax.Stmt
	pos       []string // $0, $1, …
	posKnown  bool
	depth     int
	judged    bool
	origin    string
	wrappers  []string
	env       []string
	stdin     stdinState
	writes    []Write
	reads     []Read
	network   []string
	pipe      int
	pipePos   int
	calls     []string // functions being replayed
	localBins string   // where npx and friends look first
	moreArgs  bool     // the command gets more arguments than written (xargs)
	unrolled  bool     // inside an unrolled for loop (loops nested in it are not unrolled)
}

func newWalker(w *walker, sh *shared, an *Analysis, opts Options) *walker {
	cwd := opts.Cwd
	if cwd != "" && !path.IsAbs(cwd) {
		cwd = ""
	}
	if cwd != "" {
		cwd = path.Clean(cwd)
	}
	*w = walker{an: an, sh: sh, cwd: cwd, home: opts.Home, judged: true, varsOwned: true}
	return w
}

// argSlice returns an empty slice with room for n arguments, carved from the analysis's
// arena while it lasts. Appending beyond n reallocates, so carved slices never overlap.
func (sh *shared) argSlice(n int) []Arg {
	if n <= len(sh.argArena) {
		s := sh.argArena[:0:n]
		sh.argArena = sh.argArena[n:]
		return s
	}
	return make([]Arg, 0, n)
}

func (w *walker) problem(format string, args ...any) {
	if w.judged {
		w.an.problem(format, args...)
	}
}

func (w *walker) step() bool {
	w.sh.steps++
	if w.sh.steps > maxSteps {
		if !w.an.Incomplete {
			w.an.Incomplete = true
			w.an.problem("the command is too complex to analyse")
		}
		return false
	}
	return true
}

// emit records a segment.
func (w *walker) emit(args []Arg, kind Kind) *Segment {
	if len(w.sh.slab) == 0 {
		w.sh.slab = make([]Segment, 4)
	}
	s := &w.sh.slab[0]
	w.sh.slab = w.sh.slab[1:]
	*s = Segment{
		Args: args, Kind: kind, Wrappers: w.wrappers, Env: w.env, Writes: w.writes, Reads: w.reads, Network: w.network,
		Cwd: w.cwd, Home: w.home, Judged: w.judged, Origin: w.origin, Pipe: w.pipe, PipePos: w.pipePos,
		LocalBins: w.localBins, MoreArgs: w.moreArgs,
	}
	for i := range args {
		if v := args[i].Value; len(v) >= 8 && strings.Contains(v, "/dev/") {
			w.argNetwork(s, v)
		}
	}
	if len(w.an.Segments) >= maxSegments {
		if !w.an.Incomplete {
			w.an.Incomplete = true
			w.an.problem("the command has more than %d segments", maxSegments)
		}
		return s
	}
	w.an.Segments = append(w.an.Segments, s)
	return s
}

// argNetwork records a /dev/tcp or /dev/udp endpoint named in an argument (also as the value
// of an option: --file=/dev/tcp/…).
func (w *walker) argNetwork(s *Segment, v string) {
	for off := 0; off < len(v); {
		i := strings.Index(v[off:], "/dev/")
		if i < 0 {
			return
		}
		i += off
		end := strings.IndexAny(v[i:], ",; \t\n'\"")
		p := v[i:]
		if end >= 0 {
			p = v[i : i+end]
		}
		if p = path.Clean(p); isNetwork(p) {
			s.Network = append(s.Network[:len(s.Network):len(s.Network)], p)
		}
		off = i + 5
	}
}

// sub returns a walker for a subshell: its assignments and cd do not leak out.
func (w *walker) sub() *walker {
	c := *w
	c.varsOwned = false
	c.env = nil
	return &c
}

// deeper returns a walker one wrapper deeper, or nil when the nesting is too deep to follow.
func (w *walker) deeper(label string) *walker {
	if w.depth+1 > maxDepth {
		if !w.an.Incomplete {
			w.an.Incomplete = true
			w.an.problem("wrappers and nested scripts are more than %d deep", maxDepth)
		}
		return nil
	}
	if w.depth+1 > MaxPolicyDepth && w.judged && !w.sh.deep {
		w.sh.deep = true
		w.problem("wrappers nested deeper than %d", MaxPolicyDepth)
	}
	c := *w
	c.depth++
	c.varsOwned = false
	c.wrappers = append(w.wrappers[:len(w.wrappers):len(w.wrappers)], label)
	return &c
}

// floorOnly returns a walker whose segments only the floor and deny rules see.
func (w *walker) floorOnly(origin string) *walker {
	c := *w
	c.judged = false
	c.varsOwned = false
	if c.origin == "" {
		c.origin = origin
	}
	return &c
}

func (w *walker) setVar(name string, v varVal) {
	if !w.varsOwned {
		m := make(map[string]varVal, len(w.vars)+1)
		for k, x := range w.vars {
			m[k] = x
		}
		w.vars = m
		w.varsOwned = true
	} else if w.vars == nil {
		w.vars = map[string]varVal{}
	}
	w.vars[name] = v
}

func (w *walker) walkStmts(stmts []*syntax.Stmt) {
	for _, s := range stmts {
		w.walkStmt(s)
	}
}

func (w *walker) walkStmt(s *syntax.Stmt) {
	if s == nil || !w.step() {
		return
	}
	if s.Background || s.Coprocess || s.Disown {
		w.sh.background = true
	}
	savedWrites, savedReads, savedNet, savedStdin := w.writes, w.reads, w.network, w.stdin
	defer func() { w.writes, w.reads, w.network, w.stdin = savedWrites, savedReads, savedNet, savedStdin }()
	ownWrites := false
	for _, r := range s.Redirs {
		if w.redirect(r) {
			ownWrites = true
		}
	}
	switch cmd := s.Cmd.(type) {
	case nil:
		if len(s.Redirs) > 0 {
			w.emit(nil, KindRedirect)
		}
	case *syntax.CallExpr:
		w.walkCall(cmd, ownWrites)
	case *syntax.BinaryCmd:
		switch cmd.Op {
		case syntax.Pipe, syntax.PipeAll:
			w.walkPipeline(cmd)
		default:
			w.walkStmt(cmd.X)
			w.walkStmt(cmd.Y)
		}
	case *syntax.Subshell:
		w.sub().walkStmts(cmd.Stmts)
	case *syntax.Block:
		w.walkStmts(cmd.Stmts)
	case *syntax.IfClause:
		for c := cmd; c != nil; c = c.Else {
			w.walkStmts(c.Cond)
			w.walkStmts(c.Then)
		}
	case *syntax.WhileClause:
		w.walkStmts(cmd.Cond)
		w.walkStmts(cmd.Do)
	case *syntax.ForClause:
		w.walkFor(cmd)
	case *syntax.CaseClause:
		w.walkSubsts(cmd.Word)
		for _, it := range cmd.Items {
			for _, p := range it.Patterns {
				w.walkSubsts(p)
			}
			w.walkStmts(it.Stmts)
		}
	case *syntax.FuncDecl:
		w.walkFunc(cmd)
	case *syntax.ArithmCmd:
		w.walkSubstsNode(cmd.X)
		w.arithAssigns(cmd.X)
	case *syntax.TestClause:
		w.walkSubstsNode(cmd.X)
	case *syntax.DeclClause:
		w.walkDecl(cmd)
	case *syntax.LetClause:
		for _, x := range cmd.Exprs {
			w.walkSubstsNode(x)
			w.arithAssigns(x)
		}
		w.emit([]Arg{lit("let")}, KindBuiltin).Benign = true
	case *syntax.TimeClause:
		w.walkStmt(cmd.Stmt)
	case *syntax.CoprocClause:
		w.walkStmt(cmd.Stmt)
	case *syntax.TestDecl:
		w.walkStmt(cmd.Body)
	default:
		w.problem("unsupported shell construct")
	}
}

func lit(s string) Arg { return Arg{Value: s, Raw: s, Static: true, Known: true, Prefix: len(s)} }

// redirect records a redirection's effect; it reports whether it opens a file.
func (w *walker) redirect(r *syntax.Redirect) bool {
	if r.Word != nil {
		w.walkSubsts(r.Word)
	}
	if r.Hdoc != nil {
		w.walkSubsts(r.Hdoc)
	}
	fd := ""
	if r.N != nil {
		fd = r.N.Value
	}
	onStdin := fd == "" || fd == "0"
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrInOut, syntax.RdrClob, syntax.AppClob,
		syntax.RdrAll, syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob:
		t, ok, pat := w.target(r.Word)
		if r.Op == syntax.RdrInOut {
			w.addRead(Read{Target: t, Known: ok, Pattern: pat, Op: "<>"})
			if onStdin {
				w.stdin = stdinState{kind: stdinFile}
			}
		}
		return w.addWrite(Write{Target: t, Known: ok, Pattern: pat, Op: r.Op.String()})
	case syntax.DplOut:
		t, ok, pat := w.target(r.Word)
		if ok && (t == "-" || isDigits(t)) {
			return false
		}
		if !ok && fd != "" {
			w.problem("a descriptor duplicated from an unknown word")
			return false
		}
		return w.addWrite(Write{Target: t, Known: ok, Pattern: pat, Op: ">&"})
	case syntax.DplIn:
		t, ok, pat := w.target(r.Word)
		if ok && (t == "-" || isDigits(t)) {
			if onStdin {
				w.stdin = stdinState{kind: stdinFile}
			}
			return false
		}
		w.addRead(Read{Target: t, Known: ok, Pattern: pat, Op: "<&"})
		if onStdin {
			w.stdin = stdinState{kind: stdinFile}
		}
		return true
	case syntax.RdrIn:
		if ps := procSubstOf(r.Word); ps != nil {
			if !onStdin {
				return false
			}
			if out, ok := w.evalStmts(ps.Stmts, stdinNone()); ok {
				w.stdin = stdinState{kind: stdinKnown, text: out}
				return false
			}
			w.stdin = stdinState{kind: stdinPipe}
			return false
		}
		t, ok, pat := w.target(r.Word)
		net := w.addRead(Read{Target: t, Known: ok, Pattern: pat, Op: "<"})
		if !onStdin {
			return false
		}
		if !ok || net {
			w.stdin = stdinState{kind: stdinPipe} // the network, or unknown
			return false
		}
		if harmlessRead(path.Clean(t)) && t != "/dev/stdin" && t != "/dev/fd/0" {
			w.stdin = stdinState{kind: stdinKnown} // an empty input
			return false
		}
		if t == "/dev/stdin" || t == "/dev/fd/0" {
			return false
		}
		w.stdin = stdinState{kind: stdinFile}
	case syntax.Hdoc, syntax.DashHdoc:
		if !onStdin {
			return false
		}
		w.stdin = w.heredoc(r)
	case syntax.WordHdoc:
		if !onStdin {
			return false
		}
		t, ok := w.wordString(r.Word)
		if ok {
			w.stdin = stdinState{kind: stdinKnown, text: t + "\n"}
		} else {
			w.stdin = stdinState{kind: stdinPipe}
		}
	}
	return false
}

// target expands a redirection word: its value, whether it is known, and the glob pattern
// when it has active glob characters.
func (w *walker) target(word *syntax.Word) (string, bool, string) {
	if word == nil {
		return "", false, ""
	}
	if a, ok := fastLiteral(word); ok {
		return a.Value, true, ""
	}
	f := &fields{static: true, known: true, prefix: -1, noSplit: true}
	w.wordParts(f, word.Parts, false, true)
	pat := ""
	if f.glob {
		pat = string(f.pat)
	}
	if !f.known {
		w.problem("the file of a redirection is not known: %s", string(appendRaw(nil, word.Parts)))
	}
	return string(f.val), f.known, pat
}

// addWrite records a file write of the statement being walked; it reports whether anything
// was recorded (the harmless devices are not writes, the network is not a file).
func (w *walker) addWrite(wr Write) bool {
	if wr.Known {
		c := path.Clean(wr.Target)
		if harmlessWrite(c) {
			return false
		}
		if isNetwork(c) {
			w.network = append(w.network[:len(w.network):len(w.network)], c)
			return true
		}
	}
	w.writes = append(w.writes[:len(w.writes):len(w.writes)], wr)
	return true
}

// addRead records a file read of the statement being walked; it reports whether the file is
// a network endpoint.
func (w *walker) addRead(rd Read) bool {
	if rd.Known {
		c := path.Clean(rd.Target)
		if isNetwork(c) {
			w.network = append(w.network[:len(w.network):len(w.network)], c)
			return true
		}
		if harmlessRead(c) {
			return false
		}
	}
	w.reads = append(w.reads[:len(w.reads):len(w.reads)], rd)
	return false
}

// isNetwork reports bash's network pseudo-files (a cleaned path).
func isNetwork(p string) bool {
	return strings.HasPrefix(p, "/dev/tcp/") || strings.HasPrefix(p, "/dev/udp/") || p == "/dev/tcp" || p == "/dev/udp"
}

func harmlessRead(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdin", "/dev/tty", "/dev/fd/0", "/dev/zero", "/dev/random", "/dev/urandom":
		return true
	}
	return false
}

func (w *walker) heredoc(r *syntax.Redirect) stdinState {
	if r.Hdoc == nil {
		return stdinState{kind: stdinKnown}
	}
	if hasQuotesWord(r.Word) {
		// A quoted delimiter: the body is literal.
		var b []byte
		b = appendRaw(b, r.Hdoc.Parts)
		return stdinState{kind: stdinKnown, text: string(b)}
	}
	t, ok := w.docString(r.Hdoc)
	if !ok {
		return stdinState{kind: stdinPipe}
	}
	return stdinState{kind: stdinKnown, text: t}
}

func hasQuotesWord(word *syntax.Word) bool {
	if word == nil {
		return false
	}
	for _, p := range word.Parts {
		switch p := p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			return true
		case *syntax.Lit:
			if strings.IndexByte(p.Value, '\\') >= 0 {
				return true
			}
		}
	}
	return false
}

func procSubstOf(word *syntax.Word) *syntax.ProcSubst {
	if word == nil || len(word.Parts) != 1 {
		return nil
	}
	ps, _ := word.Parts[0].(*syntax.ProcSubst)
	return ps
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// walkSubsts walks the command and process substitutions inside a word.
func (w *walker) walkSubsts(word *syntax.Word) {
	if word == nil || !mayHaveSubst(word.Parts) {
		return
	}
	w.walkSubstsNode(word)
}

func mayHaveSubst(parts []syntax.WordPart) bool {
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit, *syntax.SglQuoted:
		case *syntax.DblQuoted:
			if mayHaveSubst(p.Parts) {
				return true
			}
		default:
			return true
		}
	}
	return false
}

func (w *walker) walkSubstsNode(n syntax.Node) {
	if n == nil {
		return
	}
	syntax.Walk(n, func(node syntax.Node) bool {
		switch x := node.(type) {
		case *syntax.CmdSubst:
			c := w.sub()
			c.stdin = stdinNone()
			c.pipe, c.pipePos = 0, 0
			c.writes, c.reads, c.network = nil, nil, nil
			c.walkStmts(x.Stmts)
			return false
		case *syntax.ProcSubst:
			c := w.sub()
			c.pipe, c.pipePos = 0, 0
			c.writes, c.reads, c.network = nil, nil, nil
			if x.Op == syntax.CmdOut {
				// >(cmd) reads what the outer command writes: unknown input.
				c.stdin = stdinState{kind: stdinPipe}
			} else {
				c.stdin = stdinNone()
			}
			c.walkStmts(x.Stmts)
			return false
		}
		return true
	})
}

func (w *walker) walkPipeline(b *syntax.BinaryCmd) {
	var elems []*syntax.Stmt
	var flatten func(s *syntax.Stmt)
	flatten = func(s *syntax.Stmt) {
		if bc, ok := s.Cmd.(*syntax.BinaryCmd); ok && (bc.Op == syntax.Pipe || bc.Op == syntax.PipeAll) &&
			len(s.Redirs) == 0 && !s.Negated && !s.Background {
			flatten(bc.X)
			flatten(bc.Y)
			return
		}
		elems = append(elems, s)
	}
	flatten(b.X)
	flatten(b.Y)
	w.sh.pipes++
	id := w.sh.pipes
	first := w.stdin
	for i, st := range elems {
		c := w.sub()
		c.pipe, c.pipePos = id, i
		if i > 0 {
			c.stdin = stdinState{kind: stdinPipe, src: elems[:i], first: &first}
		}
		c.walkStmt(st)
	}
}

// stdinText resolves the command's standard input when it can be worked out.
func (w *walker) stdinText() (string, uint8) {
	st := w.stdin
	if st.kind == stdinPipe && st.src != nil {
		in := stdinNone()
		if st.first != nil {
			in = *st.first
		}
		out, ok := w.evalPipe(st.src, in)
		if ok {
			w.stdin = stdinState{kind: stdinKnown, text: out}
		} else {
			w.stdin = stdinState{kind: stdinPipe}
		}
		st = w.stdin
	}
	return st.text, st.kind
}

func (w *walker) walkFor(fc *syntax.ForClause) {
	switch loop := fc.Loop.(type) {
	case *syntax.WordIter:
		for _, it := range loop.Items {
			w.walkSubsts(it)
		}
		name := loop.Name.Value
		w.assigned(name)
		var items []Arg
		allKnown := true
		if loop.InPos.IsValid() {
			items = w.expandWords(loop.Items, nil)
		} else if w.posKnown && len(w.pos) > 1 {
			for _, p := range w.pos[1:] {
				items = append(items, lit(p))
			}
		} else {
			allKnown = false
		}
		for _, it := range items {
			if !it.Known || it.Pattern != "" {
				allKnown = false
			}
		}
		if allKnown && len(items) > 0 && len(items) <= maxLoopItems && !w.unrolled {
			// A short loop over known words runs its body once per word: judge each.
			w.unrolled = true
			for _, it := range items {
				w.setVar(name, varVal{val: it.Value, known: true, lit: it.Static})
				w.walkStmts(fc.Do)
			}
			w.unrolled = false
			return
		}
		w.setVar(name, varVal{})
		w.walkStmts(fc.Do)
		if allKnown && len(items) <= maxLoopItems {
			// Nested loops are judged once, with the variable unknown; the floor still sees
			// each value, within the replay budget.
			for _, it := range items {
				if w.sh.replays >= maxReplays {
					break
				}
				w.sh.replays++
				c := w.floorOnly("for loop")
				c.setVar(name, varVal{val: it.Value, known: true})
				c.walkStmts(fc.Do)
			}
		}
	case *syntax.CStyleLoop:
		w.walkSubstsNode(loop.Init)
		w.walkSubstsNode(loop.Cond)
		w.walkSubstsNode(loop.Post)
		w.walkStmts(fc.Do)
	default:
		w.walkStmts(fc.Do)
	}
}

func (w *walker) walkFunc(fd *syntax.FuncDecl) {
	var names []string
	if fd.Name != nil {
		names = append(names, fd.Name.Value)
	}
	for _, n := range fd.Names {
		names = append(names, n.Value)
	}
	if w.funcs == nil {
		w.funcs = map[string]*syntax.Stmt{}
	} else {
		m := make(map[string]*syntax.Stmt, len(w.funcs)+1)
		for k, v := range w.funcs {
			m[k] = v
		}
		w.funcs = m
	}
	for _, n := range names {
		w.funcs[n] = fd.Body
		if forkBomb(n, fd.Body) {
			w.an.ForkBombs = append(w.an.ForkBombs, "function "+n+" calls itself in the background or through a pipe")
		}
	}
	// The body is judged where it is declared: whatever it runs must pass the policy.
	c := w.sub()
	c.posKnown = false
	c.walkStmt(fd.Body)
}

// forkBomb reports whether body calls name in the background or through a pipe.
func forkBomb(name string, body *syntax.Stmt) bool {
	found := false
	calls := func(n syntax.Node) bool {
		hit := false
		syntax.Walk(n, func(x syntax.Node) bool {
			if ce, ok := x.(*syntax.CallExpr); ok && len(ce.Args) > 0 {
				if v, ok := fastLiteral(ce.Args[0]); ok && v.Value == name {
					hit = true
				}
			}
			return !hit
		})
		return hit
	}
	syntax.Walk(body, func(x syntax.Node) bool {
		if found {
			return false
		}
		switch x := x.(type) {
		case *syntax.Stmt:
			if x.Background && x.Cmd != nil && calls(x.Cmd) {
				found = true
			}
		case *syntax.BinaryCmd:
			if (x.Op == syntax.Pipe || x.Op == syntax.PipeAll) && (calls(x.X) || calls(x.Y)) {
				found = true
			}
		}
		return !found
	})
	return found
}

// arithAssigns checks the variables an arithmetic expression assigns.
func (w *walker) arithAssigns(x syntax.ArithmExpr) {
	if x == nil {
		return
	}
	syntax.Walk(x, func(n syntax.Node) bool {
		var target syntax.ArithmExpr
		switch n := n.(type) {
		case *syntax.BinaryArithm:
			switch n.Op {
			case syntax.Assgn, syntax.AddAssgn, syntax.SubAssgn, syntax.MulAssgn, syntax.QuoAssgn,
				syntax.RemAssgn, syntax.AndAssgn, syntax.OrAssgn, syntax.XorAssgn, syntax.ShlAssgn,
				syntax.ShrAssgn, syntax.AndBoolAssgn, syntax.OrBoolAssgn, syntax.XorBoolAssgn, syntax.PowAssgn:
				target = n.X
			}
		case *syntax.UnaryArithm:
			if n.Op == syntax.Inc || n.Op == syntax.Dec {
				target = n.X
			}
		}
		if word, ok := target.(*syntax.Word); ok {
			if v, ok := fastLiteral(word); ok {
				w.assigned(v.Value)
			} else if len(word.Parts) == 1 {
				if pe, ok := word.Parts[0].(*syntax.ParamExp); ok && pe.Param != nil {
					w.assigned(pe.Param.Value)
				}
			}
		}
		return true
	})
}

func (w *walker) walkDecl(dc *syntax.DeclClause) {
	args := []Arg{lit(dc.Variant.Value)}
	var opts []Arg
	for _, a := range dc.Args {
		if a.Naked && a.Name == nil && a.Value != nil {
			opts = w.expandWord(a.Value, opts)
		}
	}
	w.declOptions(dc.Variant.Value, opts)
	for _, a := range dc.Args {
		w.walkAssignSubsts(a)
		if a.Naked {
			if a.Name != nil {
				args = append(args, lit(a.Name.Value))
				if dc.Variant.Value == "export" || dc.Variant.Value == "readonly" || dc.Variant.Value == "declare" || dc.Variant.Value == "typeset" || dc.Variant.Value == "local" {
					w.exported(dc.Variant.Value, a.Name.Value, opts)
				}
			} else if a.Value != nil {
				args = w.expandWord(a.Value, args)
			}
			continue
		}
		if a.Name == nil {
			continue
		}
		v, ok, lit := w.wordStringLit(a.Value)
		if a.Array != nil || a.Index != nil {
			ok = false
		}
		w.assignVarLit(a.Name.Value, v, ok, lit)
		w.exported(dc.Variant.Value, a.Name.Value, opts)
		if a.Index != nil {
			w.assigned(a.Name.Value)
		}
		args = append(args, Arg{Value: a.Name.Value + "=" + v, Raw: a.Name.Value + "=" + v, Known: ok})
	}
	s := w.emit(args, KindBuiltin)
	s.Benign = true
}

func (w *walker) walkAssignSubsts(a *syntax.Assign) {
	if a.Value != nil {
		w.walkSubsts(a.Value)
	}
	if a.Index != nil {
		w.walkSubstsNode(a.Index)
	}
	if a.Array != nil {
		w.walkSubstsNode(a.Array)
	}
}

// assignVar records a persistent assignment.
func (w *walker) assignVar(name, v string, known bool) { w.assignVarLit(name, v, known, false) }

func (w *walker) assignVarLit(name, v string, known, lit bool) {
	w.checkEnv(name, v, known)
	if len(v) > maxValue {
		known = false
	}
	w.setVar(name, varVal{val: v, known: known, lit: lit && known})
}

func (w *walker) walkCall(call *syntax.CallExpr, ownWrites bool) {
	for _, a := range call.Assigns {
		w.walkAssignSubsts(a)
	}
	for _, word := range call.Args {
		w.walkSubsts(word)
	}
	if len(call.Args) == 0 {
		for _, a := range call.Assigns {
			if a.Name == nil {
				continue
			}
			v, ok, lit := w.wordStringLit(a.Value)
			if a.Array != nil || a.Index != nil || a.Append {
				ok = false
			}
			w.assignVarLit(a.Name.Value, v, ok, lit)
		}
		if ownWrites {
			w.emit(nil, KindRedirect)
		}
		return
	}
	args := w.expandWords(call.Args, w.sh.argSlice(len(call.Args)))
	var env []string
	for _, a := range call.Assigns {
		if a.Name == nil {
			continue
		}
		v, ok := w.wordString(a.Value)
		env = append(env, a.Name.Value+"="+v)
		w.checkEnv(a.Name.Value, v, ok && !hasExpansion(a.Value))
	}
	if len(args) == 0 {
		w.problem("the command word expands to nothing")
		return
	}
	if env != nil {
		c := *w
		c.env = env
		c.command(args)
		return
	}
	w.command(args)
}

func hasExpansion(word *syntax.Word) bool {
	if word == nil {
		return false
	}
	_, ok := fastLiteral(word)
	return !ok && mayHaveSubst(word.Parts)
}

// command checks the command word and dispatches.
func (w *walker) command(args []Arg) {
	if !args[0].Static || args[0].Pattern != "" || strings.IndexByte(args[0].Raw, '$') >= 0 || strings.HasPrefix(args[0].Raw, "~") {
		w.problem("the command name is not a literal: %s", args[0].Raw)
	}
	w.dispatch(args)
}
