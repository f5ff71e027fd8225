package shell

import (
	"path"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

type varVal struct {
	val   string
	known bool
	// lit is set when the value was written as literal text in the command line itself (not
	// taken from the environment): its expansions stay static.
	lit bool
	// glob is set on a loop variable over a glob: val is the pattern its values match.
	glob bool
	// unset is set on a variable the command line unset.
	unset bool
	// arr holds the elements of an array with known elements, keys their subscripts (nil:
	// 0, 1, …); assoc is set on an associative array.
	arr, keys []string
	assoc     bool
	// ref is the variable a name reference (declare -n) stands for.
	ref string
	// tainted is set on a value assigned from something not known (x=$(cmd), x=${UNSET:-/}):
	// val is the best guess, for the floor, and every use reports it.
	tainted bool
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
	fsrc  []fastCmd // the same for a line read by the fast path
	first *stdinState
	tried bool // the source was evaluated and its output is unknown
	// endless is set on an input redirected from a device that never ends (< /dev/zero).
	endless bool
}

func stdinNone() stdinState { return stdinState{} }

// shared is the state every walker of one analysis shares.
type shared struct {
	steps       int
	pipes       int
	deep        bool // the policy depth problem was reported
	background  bool // a statement runs in the background (printing needs it)
	replays     int  // function bodies replayed for the floor
	slab        []Segment
	argArena    []Arg
	fastBuf     [8]fastCmd
	wslab       []walker
	stdinSlab   []stdinState
	fastBufUsed bool
	lastpipe    bool                   // shopt -s lastpipe: a pipeline's last command runs in this shell
	opaque      bool                   // a file was sourced: what it set is not known
	expanded    int                    // bytes produced by expansions so far
	written     map[string]writtenText // files the command line writes, by absolute path
	bg          int                    // work started in the background so far
	coprocs     map[string]string      // the descriptors of coprocesses that run what they read
	exported    map[string]bool        // the variables the line exports
	project     string                 // the request's project directory ("" when there is none)
	winCwd      string                 // the request's working directory when it is a Windows path
	waited      int                    // bg when the line last waited for its jobs
	unknowns    int                    // unknown values met while lenient
	integer     map[string]bool        // variables with the integer attribute
	noFast      bool                   // the fast path is off (tests compare it with the parser)
}

// walker walks statements and records segments. Copies of a walker are cheap: nested scripts,
// subshells and wrappers each get one.
type walker struct {
	an        *Analysis
	sh        *shared
	cwd, home string
	cwdRel    string // with cwd unknown: where it is relative to the start ("" unknown)
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
	calls     []callFrame       // functions being replayed
	dirs      dirStack          // the previous directory and pushd's stack
	hashed    map[string]string // command names hash -p made run another file
	fds       []fdInput         // here-documents on descriptors other than 0 (3<<< …)
	async     int               // background jobs and pipelines the walk is inside
	lenient   bool              // expanding echo\'s arguments or an assignment (see unknownValue)
	localBins string            // where npx and friends look first
	moreArgs  bool              // the command gets more arguments than written (xargs)
	unrolled  bool              // inside an unrolled for loop (loops nested in it are not unrolled)
	hidden    bool              // the commands found are hidden in another command's arguments
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
	if cwd == "" {
		w.cwdRel = "."
		if isWindowsPath(opts.Cwd) {
			sh.winCwd = opts.Cwd
		}
	}
	return w
}

// isWindowsPath reports an absolute Windows path (C:\x, C:/x).
func isWindowsPath(p string) bool {
	return len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/') && (p[0] >= 'a' && p[0] <= 'z' || p[0] >= 'A' && p[0] <= 'Z')
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
		Cwd: w.cwd, Home: w.home, CwdRel: w.cwdRel, Judged: w.judged, Origin: w.origin, Pipe: w.pipe, PipePos: w.pipePos,
		LocalBins: w.localBins, MoreArgs: w.moreArgs, Hidden: w.hidden, WinCwd: w.sh.winCwd,
	}
	for i := range args {
		if v := args[i].Value; len(v) >= 8 && strings.Contains(v, "/dev/") {
			w.argNetwork(s, v)
		}
	}
	switch w.stdin.kind {
	case stdinKnown:
		s.Input, s.InputText = InputText, w.stdin.text
	case stdinFile:
		s.Input = InputFile
	case stdinPipe:
		s.Input = InputUnknown
		if text, kind := w.stdinText(); kind == stdinKnown {
			s.Input, s.InputText = InputText, text
		}
	}
	if w.sh.opaque && w.judged {
		w.problem("commands after source of a file run with variables and functions the analysis cannot see")
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
	c := w.sh.newWalker()
	*c = *w
	c.varsOwned = false
	c.env = nil
	return c
}

// newWalker returns room for a walker, carved from the analysis's slab while it lasts (the
// walkers of one analysis live as long as it does).
func (sh *shared) newWalker() *walker {
	if len(sh.wslab) == 0 {
		sh.wslab = make([]walker, 8)
	}
	c := &sh.wslab[0]
	sh.wslab = sh.wslab[1:]
	return c
}

// saveStdin keeps a copy of a standard input that later pipe elements refer to.
func (sh *shared) saveStdin(st stdinState) *stdinState {
	if len(sh.stdinSlab) == 0 {
		sh.stdinSlab = make([]stdinState, 4)
	}
	p := &sh.stdinSlab[0]
	sh.stdinSlab = sh.stdinSlab[1:]
	*p = st
	return p
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
	c := w.sh.newWalker()
	*c = *w
	c.depth++
	c.varsOwned = false
	c.wrappers = append(w.wrappers[:len(w.wrappers):len(w.wrappers)], label)
	return c
}

// floorOnly returns a walker whose segments only the floor and deny rules see.
func (w *walker) floorOnly(origin string) *walker {
	c := w.sh.newWalker()
	*c = *w
	c.judged = false
	c.varsOwned = false
	if c.origin == "" {
		c.origin = origin
	}
	return c
}

// unsetVar forgets a variable the walk set itself (not an unset of the shell).
func (w *walker) unsetVar(name string) {
	if _, ok := w.vars[name]; !ok {
		return
	}
	m := make(map[string]varVal, len(w.vars))
	for k, x := range w.vars {
		if k != name {
			m[k] = x
		}
	}
	w.vars, w.varsOwned = m, true
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
		w.spawned()
		w.async++
		defer func() { w.async-- }()
	}
	if s.Coprocess || s.Disown {
		w.problem("a ksh coprocess or zsh disown")
	}
	savedWrites, savedReads, savedNet, savedStdin, savedFds := w.writes, w.reads, w.network, w.stdin, w.fds
	defer func() {
		w.writes, w.reads, w.network, w.stdin, w.fds = savedWrites, savedReads, savedNet, savedStdin, savedFds
	}()
	ownWrites := false
	for _, r := range s.Redirs {
		if w.redirect(r) {
			ownWrites = true
		}
	}
	if ownWrites && s.Cmd != nil {
		w.recordWritten(s)
	}
	if len(w.sh.coprocs) > 0 {
		w.intoCoproc(s)
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
		kw := "while"
		if cmd.Until {
			kw = "until"
		}
		w.problem("%s loops are not analysed (they may never end)", kw)
		forever := endless(cmd.Cond, cmd.Until) || !cmd.Until && readsInput(cmd.Cond) && w.stdinEndless()
		bg := w.sh.bg
		w.walkStmts(cmd.Cond)
		w.walkStmts(cmd.Do)
		if forever && w.sh.bg > bg && !leavesLoop(cmd.Do) {
			w.forkBomb("an endless " + kw + " loop starts commands in the background")
		}
	case *syntax.ForClause:
		w.walkFor(cmd)
	case *syntax.CaseClause:
		w.walkSubsts(cmd.Word)
		w.wordString(cmd.Word)
		for _, it := range cmd.Items {
			for _, p := range it.Patterns {
				w.walkSubsts(p)
				w.wordString(p)
			}
			w.walkStmts(it.Stmts)
		}
	case *syntax.FuncDecl:
		w.walkFunc(cmd)
	case *syntax.ArithmCmd:
		w.walkSubstsNode(cmd.X)
		if cmd.Unsigned {
			w.problem("an mksh arithmetic form")
		}
		w.arith(cmd.X)
		w.emit([]Arg{lit("((")}, KindBuiltin).Benign = true
	case *syntax.TestClause:
		w.walkSubstsNode(cmd.X)
		args := []Arg{lit("[[")}
		w.walkTest(cmd.X, &args)
		w.emit(append(args, lit("]]")), KindBuiltin).Benign = true
	case *syntax.DeclClause:
		w.walkDecl(cmd)
	case *syntax.LetClause:
		for _, x := range cmd.Exprs {
			w.walkSubstsNode(x)
			w.arith(x)
		}
		w.emit([]Arg{lit("let")}, KindBuiltin).Benign = true
	case *syntax.TimeClause:
		w.walkStmt(cmd.Stmt)
	case *syntax.CoprocClause:
		w.problem("coproc")
		w.spawned()
		w.async++
		w.walkStmt(cmd.Stmt)
		w.async--
		w.coproc(cmd)
	case *syntax.TestDecl:
		w.problem("a bats test declaration")
		w.walkStmt(cmd.Body)
	default:
		w.problem("unsupported shell construct")
	}
}

// staticWord is the text of a word made only of literal parts (glob characters kept).
func staticWord(word *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, p := range word.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if strings.IndexByte(p.Value, '\\') >= 0 {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok || strings.IndexByte(lit.Value, '\\') >= 0 {
					return "", false
				}
				b.WriteString(lit.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// constArith evaluates an arithmetic expression of literal numbers only.
func constArith(x syntax.ArithmExpr) (int64, bool) {
	switch x := x.(type) {
	case *syntax.Word:
		if v, ok := fastLiteral(x); ok && v.Value != "" {
			return arithNumber(v.Value)
		}
	case *syntax.ParenArithm:
		return constArith(x.X)
	case *syntax.UnaryArithm:
		if v, ok := constArith(x.X); ok && x.Op == syntax.Not {
			return b2i(v == 0), true
		}
	case *syntax.BinaryArithm:
		a, ok1 := constArith(x.X)
		b, ok2 := constArith(x.Y)
		if ok1 && ok2 {
			return arithOp(x.Op, a, b)
		}
	}
	return 0, false
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
		if strings.HasPrefix(fd, "{") && strings.HasSuffix(fd, "}") {
			// {name}>file: bash picks a descriptor and stores its number in name.
			w.assigned(fd[1 : len(fd)-1])
			w.setVar(fd[1:len(fd)-1], varVal{})
		}
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
			if out, ok := w.evalSub(ps.Stmts); ok {
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
			w.stdin = stdinState{kind: stdinKnown, endless: endlessDevice(path.Clean(t))} // an empty input
			return false
		}
		if t == "/dev/stdin" || t == "/dev/fd/0" {
			return false
		}
		w.stdin = stdinState{kind: stdinFile}
	case syntax.Hdoc, syntax.DashHdoc:
		st := w.heredoc(r)
		if !onStdin {
			w.fdText(fd, st)
			return false
		}
		w.stdin = st
	case syntax.WordHdoc:
		t, ok := w.wordString(r.Word)
		st := stdinState{kind: stdinPipe}
		if ok {
			st = stdinState{kind: stdinKnown, text: t + "\n"}
		}
		if !onStdin {
			w.fdText(fd, st)
			return false
		}
		w.stdin = st
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
	if f.glob && validGlob(f.pat) {
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
			c.lenient = false
			c.stdin = stdinNone()
			c.pipe, c.pipePos = 0, 0
			c.writes, c.reads, c.network = nil, nil, nil
			if x.TempFile || x.ReplyVar {
				// ${ …; } and ${| …; } (bash 5.3, mksh) run in the current shell: the
				// directory, variables and functions they change carry over.
				w.problem("${ …; } runs its commands in the current shell")
				c.varsOwned = w.varsOwned
				c.walkStmts(x.Stmts)
				w.cwd, w.vars, w.funcs = c.cwd, c.vars, c.funcs
				w.varsOwned = c.varsOwned
				return false
			}
			c.walkStmts(x.Stmts)
			return false
		case *syntax.ProcSubst:
			c := w.sub()
			c.lenient = false
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
	first := w.sh.saveStdin(w.stdin)
	for i, st := range elems {
		c := w.sub()
		c.pipe, c.pipePos = id, i
		c.async++
		if i > 0 {
			c.stdin = stdinState{kind: stdinPipe, src: elems[:i], first: first}
		}
		c.walkStmt(st)
		if i == len(elems)-1 {
			w.lastInPipe(c)
		}
	}
}

// chdir moves the walker to dir: absolute, relative to a known directory, or relative to an
// unknown one (then cwdRel keeps track).
func (w *walker) chdir(dir string) {
	switch {
	case path.IsAbs(dir):
		w.cwd, w.cwdRel = path.Clean(dir), ""
	case w.cwd != "":
		w.cwd = path.Join(w.cwd, dir)
	case w.cwdRel != "":
		w.cwdRel = path.Join(w.cwdRel, dir)
	}
	w.cwdVars()
}

// unknownCwd forgets the working directory.
func (w *walker) unknownCwd() {
	w.cwd, w.cwdRel = "", ""
	w.cwdVars()
}

// cwdVars keeps $PWD and $OLDPWD right after cd when the line had assigned them.
func (w *walker) cwdVars() {
	if _, ok := w.vars["PWD"]; ok {
		p, _ := w.pwd()
		w.setVar("PWD", varVal{val: p, known: p != ""})
	}
	if _, ok := w.vars["OLDPWD"]; ok {
		w.setVar("OLDPWD", varVal{val: w.dirs.old, known: w.dirs.old != ""})
	}
}

// lastInPipe keeps what the last command of a pipeline did to the shell's variables when it
// runs in this shell (shopt -s lastpipe).
func (w *walker) lastInPipe(c *walker) {
	if w.sh.lastpipe {
		w.vars, w.varsOwned, w.funcs, w.cwd = c.vars, c.varsOwned, c.funcs, c.cwd
	}
}

// stdinText resolves the command's standard input when it can be worked out.
func (w *walker) stdinText() (string, uint8) {
	st := w.stdin
	if st.kind == stdinPipe && (st.src != nil || st.fsrc != nil) && !st.tried {
		in := stdinNone()
		if st.first != nil {
			in = *st.first
		}
		var out string
		var ok bool
		if st.src != nil {
			out, ok = w.evalPipe(st.src, in)
		} else {
			out, ok = w.evalFastPipe(st.fsrc, in)
		}
		if ok {
			w.stdin = stdinState{kind: stdinKnown, text: out, endless: w.stdinEndless()}
		} else {
			w.stdin.tried = true // the source stays for the floor's guesses
		}
		st = w.stdin
	}
	return st.text, st.kind
}

func (w *walker) walkFor(fc *syntax.ForClause) {
	if fc.Select {
		w.problem("select (it reads its choice from the terminal)")
	}
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
			w.problem("for without a list loops over positional parameters that are not known")
			allKnown = false
		}
		for _, it := range items {
			if !it.Known {
				allKnown = false
			}
		}
		value := func(it Arg) varVal {
			if it.Pattern != "" {
				return varVal{val: it.Pattern, known: true, glob: true}
			}
			return varVal{val: it.Value, known: true, lit: it.Static}
		}
		if allKnown && len(items) > 0 && len(items) <= maxLoopItems && !w.unrolled {
			// A short loop over known words runs its body once per word: judge each (a
			// glob stands for every file it matches).
			w.unrolled = true
			for _, it := range items {
				w.setVar(name, value(it))
				w.walkStmts(fc.Do)
			}
			w.unrolled = false
			return
		}
		if allKnown && len(items) > maxLoopItems {
			w.problem("a for loop over more than %d words", maxLoopItems)
		}
		if allKnown && len(items) > 0 && w.unrolled {
			w.problem("a for loop nested in another")
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
				c.setVar(name, value(it))
				c.walkStmts(fc.Do)
			}
		}
	case *syntax.CStyleLoop:
		w.problem("a C-style for loop (it may never end)")
		w.walkSubstsNode(loop.Init)
		w.walkSubstsNode(loop.Cond)
		w.walkSubstsNode(loop.Post)
		w.arith(loop.Init)
		w.arith(loop.Cond)
		w.arith(loop.Post)
		bg := w.sh.bg
		w.walkStmts(fc.Do)
		if w.sh.bg > bg && !leavesLoop(fc.Do) && endlessCFor(loop, fc.Do) {
			w.forkBomb("an endless for loop starts commands in the background")
		}
	default:
		w.problem("unsupported loop")
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
	}
	for _, n := range names {
		switch cycle, async := callCycle(n, w.funcs); {
		case cycle != "" && async:
			w.forkBomb("function " + cycle + " calls itself in the background or through a pipe")
		case cycle != "":
			w.problem("the function %s calls itself (it may never end)", cycle)
		}
	}
	// The body runs where the function is called: it is judged there, with the call's
	// arguments. The floor also sees it as declared, whatever calls it.
	label := "function"
	if len(names) > 0 {
		label += " " + names[0]
	}
	c := w.floorOnly(label)
	c.posKnown = false
	if len(names) > 0 {
		c.setVar("FUNCNAME", varVal{val: names[0], known: true, arr: []string{names[0]}})
	}
	c.walkStmt(fd.Body)
}

// callFrame is a function being replayed: its name, and how many background jobs and
// pipelines the walk was inside and had started when it was called.
type callFrame struct {
	name      string
	async, bg int
}

// callEdge is a call from one function's body to a command name.
type callEdge struct {
	name  string
	async bool // in the background or in a pipeline
}

// calls lists the command names a function body calls: literal names, $FUNCNAME for the
// function itself (self), and the calls in literal eval text. A call is async when it runs in
// the background or in a pipeline, or after the body started work in the background.
func calls(body *syntax.Stmt, self string) []callEdge {
	var out []callEdge
	bgSeen := false
	var walk func(n syntax.Node, async bool, depth int)
	walk = func(n syntax.Node, async bool, depth int) {
		syntax.Walk(n, func(x syntax.Node) bool {
			switch x := x.(type) {
			case *syntax.FuncDecl:
				return false
			case *syntax.Stmt:
				if (x.Background || x.Coprocess) && x.Cmd != nil {
					walk(x.Cmd, true, depth)
					for _, r := range x.Redirs {
						walk(r, true, depth)
					}
					bgSeen = true
					return false
				}
			case *syntax.CoprocClause:
				walk(x.Stmt, true, depth)
				bgSeen = true
				return false
			case *syntax.BinaryCmd:
				if x.Op == syntax.Pipe || x.Op == syntax.PipeAll {
					walk(x.X, true, depth)
					walk(x.Y, true, depth)
					return false
				}
			case *syntax.CallExpr:
				if len(x.Args) == 0 {
					return true
				}
				if selfCall(x.Args[0], self) {
					out = append(out, callEdge{self, async || bgSeen})
					return true
				}
				v, ok := fastLiteral(x.Args[0])
				if !ok {
					return true
				}
				args := x.Args[1:]
				if (v.Value == "builtin" || v.Value == "command") && len(args) > 0 {
					if a, ok := fastLiteral(args[0]); ok && a.Value == "eval" {
						v, args = a, args[1:]
					}
				}
				if v.Value == "eval" && depth < 4 {
					var b strings.Builder
					for i, a := range args {
						t, ok := staticWord(a)
						if !ok {
							break
						}
						if i > 0 {
							b.WriteByte(' ')
						}
						b.WriteString(t)
					}
					if f, err := parse(b.String()); err == nil {
						for _, st := range f.Stmts {
							walk(st, async, depth+1)
						}
					}
					return true
				}
				if v.Value == "wait" {
					bgSeen = false // the jobs started so far have ended
				}
				out = append(out, callEdge{v.Value, async || bgSeen})
			}
			return true
		})
	}
	walk(body, false, 0)
	return out
}

// callCycle finds a chain of calls from the function name back to itself among the functions
// declared so far: the chain, and whether a call on it is in the background or a pipeline.
func callCycle(name string, funcs map[string]*syntax.Stmt) (string, bool) {
	type node struct {
		fn    string
		path  string
		async bool
	}
	seen := map[string]bool{}
	queue := []node{{name, name, false}}
	foundPath, foundAsync := "", false
	for len(queue) > 0 && len(seen) < 64 {
		n := queue[0]
		queue = queue[1:]
		body := funcs[n.fn]
		if body == nil {
			continue
		}
		for _, e := range calls(body, n.fn) {
			async := n.async || e.async
			if e.name == name {
				if async {
					return n.path, true
				}
				if foundPath == "" {
					foundPath = n.path
				}
				continue
			}
			if _, ok := funcs[e.name]; ok && !seen[e.name+boolKey(async)] {
				seen[e.name+boolKey(async)] = true
				queue = append(queue, node{e.name, n.path + " > " + e.name, async})
			}
		}
	}
	return foundPath, foundAsync
}

func boolKey(b bool) string {
	if b {
		return "&"
	}
	return ""
}

// walkTest checks the operands of [[ … ]]: known values, plain names for -v, and inert
// integers where bash evaluates arithmetic (-eq and friends).
// The operand words are appended to args, for the segment that stands for the test.
func (w *walker) walkTest(x syntax.TestExpr, args *[]Arg) {
	switch x := x.(type) {
	case *syntax.Word:
		v, known := w.wordString(x)
		*args = append(*args, Arg{Value: v, Raw: string(appendRaw(nil, x.Parts)), Known: known, Prefix: len(v)})
	case *syntax.ParenTest:
		w.walkTest(x.X, args)
	case *syntax.UnaryTest:
		*args = append(*args, lit(x.Op.String()))
		if x.Op == syntax.TsVarSet || x.Op == syntax.TsRefVar {
			if word, ok := x.X.(*syntax.Word); ok {
				v, known := w.wordString(word)
				w.plainName("[[ -v ]]", v, known)
				*args = append(*args, Arg{Value: v, Raw: v, Known: known, Prefix: len(v)})
				return
			}
		}
		w.walkTest(x.X, args)
	case *syntax.BinaryTest:
		switch x.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			for i, side := range []syntax.TestExpr{x.X, x.Y} {
				if i == 1 {
					*args = append(*args, lit(x.Op.String()))
				}
				if word, ok := side.(*syntax.Word); ok {
					w.arithWord(word, 0)
					v, known := w.wordString(word)
					*args = append(*args, Arg{Value: v, Raw: v, Known: known, Prefix: len(v)})
				} else {
					w.walkTest(side, args)
				}
			}
		default:
			w.walkTest(x.X, args)
			*args = append(*args, lit(x.Op.String()))
			w.walkTest(x.Y, args)
		}
	}
}

// plainName checks a word used as a variable name by a builtin: a subscript in it is
// evaluated as arithmetic, and runs the command substitutions in it.
func (w *walker) plainName(what, v string, known bool) bool {
	if !known {
		w.problem("%s of a name that is not known", what)
		return false
	}
	if isName(v) {
		return true
	}
	if strings.ContainsRune(v, '[') {
		w.problem("%s of an array element %q (its subscript is evaluated)", what, clip(v))
		w.codeInData(what, v)
		return false
	}
	w.problem("%s of %q, which is not a plain name", what, clip(v))
	return false
}

// declare and friends: the options that keep the analysis exact.
func (w *walker) walkDecl(dc *syntax.DeclClause) {
	variant := dc.Variant.Value
	if variant == "nameref" {
		w.problem("nameref (a name reference)")
	}
	args := []Arg{lit(variant)}
	var opts []Arg
	for _, a := range dc.Args {
		if a.Naked && a.Name == nil && a.Value != nil {
			opts = w.expandWord(a.Value, opts)
		}
	}
	flags := w.declFlags(variant, opts)
	names := 0
	for _, a := range dc.Args {
		w.walkAssignSubsts(a)
		if a.Naked {
			if a.Name != nil {
				names++
				args = append(args, lit(a.Name.Value))
				if a.Index != nil {
					w.problem("%s of an array element", variant)
				}
				w.declName(variant, flags, a.Name.Value, opts)
			} else if a.Value != nil {
				fs := w.expandWord(a.Value, nil)
				for _, f := range fs {
					v := f.Value
					if len(v) > 0 && (v[0] == '-' || v[0] == '+') && !strings.ContainsRune(v, '=') {
						continue
					}
					names++
					if n, val, ok := strings.Cut(v, "="); ok {
						w.quotedCompound(variant, val)
						if w.plainName(variant, n, f.Known) {
							w.assignVar(n, val, f.Known)
							w.exported(variant, n, opts)
						}
					} else if w.plainName(variant, v, f.Known) {
						w.declName(variant, flags, v, opts)
					}
				}
				args = append(args, fs...)
			}
			continue
		}
		if a.Name == nil {
			continue
		}
		names++
		v, ok, lit, tainted := w.lenientString(a.Value)
		if a.Array != nil || a.Index != nil {
			w.checkEnv(a.Name.Value, "", false)
			if strings.ContainsRune(flags, 'A') {
				if old, had := w.vars[a.Name.Value]; !had || !old.assoc {
					w.setVar(a.Name.Value, varVal{assoc: true, known: true, unset: true})
				}
			}
			w.arrayAssign(a)
			nv := w.vars[a.Name.Value]
			ok = nv.known
			v = "(" + strings.Join(nv.elements(), " ") + ")"
		} else {
			if a.Append {
				if old, known := w.lookup(a.Name.Value); known {
					v = old + v
				} else {
					ok = false
				}
			}
			w.markInteger(flags, a.Name.Value)
			if strings.ContainsRune(flags, 'n') && ok && isName(v) {
				w.setVar(a.Name.Value, varVal{ref: v})
			} else {
				w.assignVarLit(a.Name.Value, v, ok, lit)
				if tainted {
					w.taint(a.Name.Value)
				}
			}
		}
		w.exported(variant, a.Name.Value, opts)
		args = append(args, Arg{Value: a.Name.Value + "=" + v, Raw: a.Name.Value + "=" + v, Known: ok})
	}
	if names == 0 && !strings.ContainsAny(flags, "fF") {
		w.envDump(dumpForm(variant, flags))
	}
	s := w.emit(args, KindBuiltin)
	s.Benign = true
}

// markInteger remembers the variables given the integer attribute.
func (w *walker) markInteger(flags, name string) {
	if strings.ContainsRune(flags, 'i') {
		if w.sh.integer == nil {
			w.sh.integer = map[string]bool{}
		}
		w.sh.integer[name] = true
	}
}

// dumpForm names the declare-family form that prints variables.
func dumpForm(variant, flags string) string {
	switch {
	case flags != "" && flags != "p":
		return variant + " -" + strings.ReplaceAll(flags, "p", "")
	case variant == "export" || variant == "readonly" || flags == "p":
		return variant + " -p"
	}
	return variant
}

// declFlags checks the options of declare, typeset, local, export and readonly and returns
// the letters set.
func (w *walker) declFlags(variant string, opts []Arg) string {
	var flags []byte
	for _, a := range opts {
		v := a.Value
		if !a.Known {
			w.problem("%s of a non-literal", variant)
			continue
		}
		if len(v) < 2 || v[0] != '-' && v[0] != '+' || strings.ContainsRune(v, '=') {
			continue
		}
		if v == "--" {
			continue
		}
		for _, c := range v[1:] {
			switch {
			case c == 'n' && variant == "export" || c == 'p' || c == 'f' && variant != "export" || c == 'F' ||
				c == 'x' || c == 'r' || c == 'g' || c == 't' || c == 'I':
			case c == 'f':
				w.problem("export -f exports a function to the programs it runs")
				w.an.EnvExported = true
				w.an.EnvExportedNames = append(w.an.EnvExportedNames, "*")
			case c == 'n':
				w.problem("%s -n (a name reference)", variant)
			case c == 'i':
				w.problem("%s -i (assignments to it are evaluated as arithmetic)", variant)
			case c == 'a':
			case c == 'A':
				w.problem("%s -A (an associative array)", variant)
			case c == 'l' || c == 'u' || c == 'c':
				w.problem("%s -%c (assignments to it change case)", variant, c)
			default:
				w.problem("%s -%c is not known", variant, c)
			}
			if v[0] == '-' {
				flags = append(flags, byte(c))
			}
		}
	}
	return string(flags)
}

// declName handles a name declared without a value.
func (w *walker) declName(variant, flags, name string, opts []Arg) {
	w.markInteger(flags, name)
	if strings.Contains(flags, "p") {
		w.envRead(name)
	}
	if variant == "export" || variant == "readonly" || variant == "declare" || variant == "typeset" || variant == "local" {
		w.exported(variant, name, opts)
	}
	if variant == "local" || variant == "declare" || variant == "typeset" {
		if _, ok := w.vars[name]; !ok && !strings.ContainsAny(flags, "pfFx") {
			// A new local starts empty (an associative array knows it is one).
			w.setVar(name, varVal{known: true, lit: true, unset: true, assoc: strings.ContainsRune(flags, 'A')})
		} else if old := w.vars[name]; ok && strings.ContainsRune(flags, 'A') && !old.assoc {
			old.assoc = true
			w.setVar(name, old)
		}
	}
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
	for range 8 {
		// An assignment to a name reference assigns the variable it stands for.
		old, ok := w.vars[name]
		if !ok || old.ref == "" {
			break
		}
		name = old.ref
	}
	w.checkEnv(name, v, known)
	if w.sh.integer[name] && known {
		// An integer variable evaluates what it is assigned.
		if n, ok := w.arithText(v, 0); ok {
			v = strconv.FormatInt(n, 10)
		} else {
			known = false
		}
	}
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
			if a.Array != nil || a.Index != nil {
				w.checkEnv(a.Name.Value, "", false)
				w.arrayAssign(a)
				continue
			}
			v, ok, lit, tainted := w.lenientString(a.Value)
			if a.Append {
				if old, known := w.lookup(a.Name.Value); known {
					v = old + v
				} else {
					ok = false
					w.problem("appends to $%s, whose value is not known", a.Name.Value)
				}
			}
			w.assignVarLit(a.Name.Value, v, ok, lit)
			if tainted {
				w.taint(a.Name.Value)
			}
		}
		if ownWrites {
			w.emit(nil, KindRedirect)
		}
		return
	}
	var args []Arg
	if v, ok := fastLiteral(call.Args[0]); ok && v.Value == "echo" && w.funcs["echo"] == nil && w.hashed["echo"] == "" {
		args = w.echoArgs(call.Args[1:], append(w.sh.argSlice(len(call.Args)), v))
	} else {
		args = w.expandWords(call.Args, w.sh.argSlice(len(call.Args)))
	}
	var env []string
	for _, a := range call.Assigns {
		if a.Name == nil {
			continue
		}
		if a.Array != nil || a.Index != nil {
			w.problem("an array assignment to %s", a.Name.Value)
		}
		v, ok := w.wordString(a.Value)
		env = append(env, a.Name.Value+"="+v)
		w.checkEnv(a.Name.Value, v, ok)
	}
	if len(args) == 0 {
		w.problem("the command word expands to nothing")
		return
	}
	if env != nil {
		c := *w
		c.env = env
		c.command(args)
		// The assignments were for the command alone; what a builtin or a function did to
		// the shell (read, cd, a function's assignments) stays.
		w.vars, w.varsOwned, w.funcs, w.pos, w.posKnown = c.vars, c.varsOwned, c.funcs, c.pos, c.posKnown
		w.cwd, w.cwdRel, w.dirs = c.cwd, c.cwdRel, c.dirs
		return
	}
	w.command(args)
}

// command checks the command word and dispatches.
func (w *walker) command(args []Arg) {
	if !args[0].Static || args[0].Pattern != "" || strings.IndexByte(args[0].Raw, '$') >= 0 || strings.HasPrefix(args[0].Raw, "~") {
		w.problem("the command name is not a literal: %s", args[0].Raw)
	}
	w.dispatch(args)
}

// quotedCompound looks at a value declare reads from a quoted word: 'a=(…)' is an array
// assignment bash parses again, subscripts and all.
func (w *walker) quotedCompound(variant, val string) {
	if strings.HasPrefix(val, "(") {
		w.problem("%s of a quoted array assignment (bash parses it again)", variant)
		w.codeInData(variant, val)
	}
}
