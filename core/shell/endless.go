package shell

import (
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Unbounded process creation. A fork bomb is work started in the background without limit:
// a loop that never ends on its own (while :, until false, until [[ 0 -eq 1 ]], for ((;;)),
// for ((i=1; i>0; i++)), while read … fed by yes) whose body starts anything in the
// background — directly, through eval, bash -c, a function or a detaching tool (screen -dm,
// setsid -f, …); a function that calls itself (literally, through $FUNCNAME, eval or another
// function) after or while starting work in the background; and xargs -P 0 or parallel -j 0
// fed an input that never ends. What starts work is found by walking the body the way it runs,
// so that it does not matter how the background job is spelled.

// maxLoopSim is how many iterations of a C-style for loop are simulated: a loop still running
// after as many iterations as a default pid_max creates processes without practical limit.
const maxLoopSim = 1 << 15

// forkBomb records unbounded process creation.
func (w *walker) forkBomb(what string) {
	for _, f := range w.an.ForkBombs {
		if f == what {
			return
		}
	}
	w.an.ForkBombs = append(w.an.ForkBombs, what)
}

// spawned counts work started in the background (a job, a coprocess, a detached session). A
// remote shell's jobs run elsewhere and are not counted.
func (w *walker) spawned() {
	if w.home != remoteHome {
		w.sh.bg++
	}
}

// leavesLoop reports a loop body that can leave the loop (break, exit, return), outside the
// function declarations in it.
func leavesLoop(stmts []*syntax.Stmt) bool {
	leaves := false
	for _, st := range stmts {
		syntax.Walk(st, func(n syntax.Node) bool {
			switch n := n.(type) {
			case *syntax.FuncDecl:
				return false
			case *syntax.CallExpr:
				if len(n.Args) > 0 {
					if v, ok := fastLiteral(n.Args[0]); ok && (v.Value == "break" || v.Value == "exit" || v.Value == "return") {
						leaves = true
					}
				}
			}
			return !leaves
		})
	}
	return leaves
}

// endless reports a loop condition that never ends the loop on its own: its last statement
// always succeeds (while) or always fails (until), as far as literal text shows.
func endless(cond []*syntax.Stmt, until bool) bool {
	if len(cond) == 0 {
		return false
	}
	v, ok := stmtStatus(cond[len(cond)-1])
	return ok && v != until
}

// stmtStatus is the exit status of a statement that follows from its literal text alone (true:
// success).
func stmtStatus(s *syntax.Stmt) (bool, bool) {
	if s == nil || len(s.Redirs) > 0 || s.Background {
		return false, false
	}
	v, ok := cmdStatus(s.Cmd)
	if !ok {
		return false, false
	}
	return v != s.Negated, true
}

func cmdStatus(c syntax.Command) (bool, bool) {
	switch c := c.(type) {
	case *syntax.CallExpr:
		if len(c.Assigns) > 0 || len(c.Args) == 0 {
			return false, false
		}
		argv := make([]string, 0, len(c.Args))
		for _, a := range c.Args {
			v, ok := staticWord(a)
			if !ok {
				return false, false
			}
			argv = append(argv, v)
		}
		switch argv[0] {
		case ":", "true":
			return true, true
		case "false":
			return false, true
		case "[", "test":
			ops := argv[1:]
			if argv[0] == "[" {
				if len(ops) == 0 || ops[len(ops)-1] != "]" {
					return false, false
				}
				ops = ops[:len(ops)-1]
			}
			return testStatus(ops)
		}
	case *syntax.ArithmCmd:
		if v, ok := constArith(c.X); ok {
			return v != 0, true
		}
	case *syntax.TestClause:
		return testExprStatus(c.X)
	case *syntax.BinaryCmd:
		x, ok1 := stmtStatus(c.X)
		y, ok2 := stmtStatus(c.Y)
		switch c.Op {
		case syntax.AndStmt:
			if ok1 && !x {
				return false, true
			}
			if ok1 && ok2 {
				return y, true
			}
		case syntax.OrStmt:
			if ok1 && x {
				return true, true
			}
			if ok1 && ok2 {
				return y, true
			}
		}
	case *syntax.Block:
		if len(c.Stmts) > 0 {
			return stmtStatus(c.Stmts[len(c.Stmts)-1])
		}
	case *syntax.Subshell:
		if len(c.Stmts) > 0 {
			return stmtStatus(c.Stmts[len(c.Stmts)-1])
		}
	}
	return false, false
}

// testStatus evaluates the operands of test / [ when they are literal.
func testStatus(ops []string) (bool, bool) {
	if len(ops) > 0 && ops[0] == "!" {
		v, ok := testStatus(ops[1:])
		return !v, ok
	}
	switch len(ops) {
	case 0:
		return false, true
	case 1:
		return ops[0] != "", true
	case 2:
		switch ops[0] {
		case "-n":
			return ops[1] != "", true
		case "-z":
			return ops[1] == "", true
		}
	case 3:
		return binaryTest(ops[1], ops[0], ops[2], false)
	}
	return false, false
}

// binaryTest evaluates a comparison of two literal operands.
func binaryTest(op, a, b string, pattern bool) (bool, bool) {
	switch op {
	case "=", "==":
		if pattern {
			return Match(b, a), true
		}
		return a == b, true
	case "!=":
		if pattern {
			return !Match(b, a), true
		}
		return a != b, true
	case "-eq", "-ne", "-lt", "-le", "-gt", "-ge":
		x, err1 := strconv.ParseInt(strings.TrimSpace(a), 10, 64)
		y, err2 := strconv.ParseInt(strings.TrimSpace(b), 10, 64)
		if err1 != nil || err2 != nil {
			return false, false
		}
		switch op {
		case "-eq":
			return x == y, true
		case "-ne":
			return x != y, true
		case "-lt":
			return x < y, true
		case "-le":
			return x <= y, true
		case "-gt":
			return x > y, true
		}
		return x >= y, true
	}
	return false, false
}

// testExprStatus evaluates [[ … ]] when every operand is literal.
func testExprStatus(x syntax.TestExpr) (bool, bool) {
	switch x := x.(type) {
	case *syntax.Word:
		v, ok := staticWord(x)
		return v != "", ok
	case *syntax.ParenTest:
		return testExprStatus(x.X)
	case *syntax.UnaryTest:
		switch x.Op {
		case syntax.TsNot:
			v, ok := testExprStatus(x.X)
			return !v, ok
		case syntax.TsNempStr, syntax.TsEmpStr:
			word, ok := x.X.(*syntax.Word)
			if !ok {
				return false, false
			}
			v, ok := staticWord(word)
			return (v != "") == (x.Op == syntax.TsNempStr), ok
		}
	case *syntax.BinaryTest:
		switch x.Op {
		case syntax.AndTest, syntax.OrTest:
			a, ok1 := testExprStatus(x.X)
			b, ok2 := testExprStatus(x.Y)
			if x.Op == syntax.AndTest {
				if ok1 && !a || ok2 && !b {
					return false, true
				}
				return true, ok1 && ok2
			}
			if ok1 && a || ok2 && b {
				return true, true
			}
			return false, ok1 && ok2
		}
		l, ok1 := x.X.(*syntax.Word)
		r, ok2 := x.Y.(*syntax.Word)
		if !ok1 || !ok2 {
			return false, false
		}
		a, ok1 := staticWord(l)
		b, ok2 := staticWord(r)
		if !ok1 || !ok2 {
			return false, false
		}
		return binaryTest(x.Op.String(), a, b, true)
	}
	return false, false
}

// endlessCFor reports a C-style for loop that does not end on its own: no condition, a
// condition that is a nonzero constant, or a condition that still holds after maxLoopSim
// iterations of its initialisation and step (for ((i=1; i>0; i++))). A loop whose body assigns
// a variable of its condition is not judged endless unless the condition is constant.
func endlessCFor(loop *syntax.CStyleLoop, body []*syntax.Stmt) bool {
	if loop.Cond == nil {
		return true
	}
	if v, ok := constArith(loop.Cond); ok {
		return v != 0
	}
	names := arithNames(loop.Cond)
	if len(names) == 0 || assignsAny(body, names) {
		return false
	}
	vars := map[string]int64{}
	if loop.Init != nil {
		if _, ok := simArith(loop.Init, vars); !ok {
			return false
		}
	}
	for _, n := range names {
		if _, ok := vars[n]; !ok {
			return false // a value from the environment
		}
	}
	for range maxLoopSim {
		c, ok := simArith(loop.Cond, vars)
		if !ok || c == 0 {
			return false
		}
		if loop.Post != nil {
			if _, ok := simArith(loop.Post, vars); !ok {
				return false
			}
		}
	}
	return true
}

// arithNames lists the variable names an arithmetic expression reads.
func arithNames(x syntax.ArithmExpr) []string {
	var out []string
	syntax.Walk(x, func(n syntax.Node) bool {
		if word, ok := n.(*syntax.Word); ok {
			if v, ok := fastLiteral(word); ok && isName(v.Value) && !hasName(out, v.Value) {
				out = append(out, v.Value)
			}
			return false
		}
		return true
	})
	return out
}

// assignsAny reports statements that may assign one of names (an assignment, arithmetic, read,
// let, declare and friends naming it).
func assignsAny(stmts []*syntax.Stmt, names []string) bool {
	found := false
	for _, st := range stmts {
		syntax.Walk(st, func(n syntax.Node) bool {
			switch n := n.(type) {
			case *syntax.Assign:
				if n.Name != nil && hasName(names, n.Name.Value) {
					found = true
				}
			case *syntax.Word:
				if v, ok := fastLiteral(n); ok && hasName(names, v.Value) {
					found = true // a name handed to a builtin (read i, let i=…) or arithmetic
				}
			}
			return !found
		})
	}
	return found
}

// simArith evaluates arithmetic over literal numbers and the variables in vars, assignments
// included.
func simArith(x syntax.ArithmExpr, vars map[string]int64) (int64, bool) {
	switch x := x.(type) {
	case nil:
		return 0, true
	case *syntax.Word:
		v, ok := fastLiteral(x)
		if !ok || v.Value == "" {
			return 0, false
		}
		if n, ok := arithNumber(v.Value); ok {
			return n, true
		}
		if isName(v.Value) {
			n, ok := vars[v.Value]
			return n, ok
		}
		return 0, false
	case *syntax.ParenArithm:
		return simArith(x.X, vars)
	case *syntax.UnaryArithm:
		if x.Op == syntax.Inc || x.Op == syntax.Dec {
			name, ok := arithName(x.X)
			if !ok {
				return 0, false
			}
			old, ok := vars[name]
			if !ok {
				return 0, false
			}
			nv := old + 1
			if x.Op == syntax.Dec {
				nv = old - 1
			}
			vars[name] = nv
			if x.Post {
				return old, true
			}
			return nv, true
		}
		v, ok := simArith(x.X, vars)
		switch x.Op {
		case syntax.Not:
			return b2i(v == 0), ok
		case syntax.BitNegation:
			return ^v, ok
		case syntax.Minus:
			return -v, ok
		}
		return v, ok
	case *syntax.BinaryArithm:
		switch x.Op {
		case syntax.Assgn, syntax.AddAssgn, syntax.SubAssgn, syntax.MulAssgn, syntax.QuoAssgn,
			syntax.RemAssgn, syntax.AndAssgn, syntax.OrAssgn, syntax.XorAssgn, syntax.ShlAssgn,
			syntax.ShrAssgn, syntax.PowAssgn:
			name, ok := arithName(x.X)
			if !ok {
				return 0, false
			}
			y, ok := simArith(x.Y, vars)
			if !ok {
				return 0, false
			}
			if x.Op != syntax.Assgn {
				old, ok := vars[name]
				if !ok {
					return 0, false
				}
				if y, ok = arithOp(assignOp(x.Op), old, y); !ok {
					return 0, false
				}
			}
			vars[name] = y
			return y, true
		case syntax.Comma:
			if _, ok := simArith(x.X, vars); !ok {
				return 0, false
			}
			return simArith(x.Y, vars)
		case syntax.TernQuest:
			c, ok := simArith(x.X, vars)
			colon, isColon := x.Y.(*syntax.BinaryArithm)
			if !ok || !isColon || colon.Op != syntax.TernColon {
				return 0, false
			}
			if c != 0 {
				return simArith(colon.X, vars)
			}
			return simArith(colon.Y, vars)
		}
		a, ok1 := simArith(x.X, vars)
		b, ok2 := simArith(x.Y, vars)
		if !ok1 || !ok2 {
			return 0, false
		}
		return arithOp(x.Op, a, b)
	}
	return 0, false
}

// endlessDevice names the files whose reading never ends.
func endlessDevice(p string) bool {
	switch p {
	case "/dev/zero", "/dev/urandom", "/dev/random", "/dev/full":
		return true
	}
	return false
}

// endlessProducer reports a command whose output never ends: yes, cat of an endless device,
// seq to infinity, dd from an endless device without a count, od/xxd/base64/tr reading one.
func endlessProducer(argv []string) bool {
	if len(argv) == 0 {
		return false
	}
	switch Base(argv[0]) {
	case "yes":
		return true
	case "seq", "jot":
		for _, a := range argv[1:] {
			if l := strings.ToLower(strings.TrimLeft(a, "+")); l == "inf" || l == "infinity" {
				return true
			}
		}
	case "dd":
		in, count := false, false
		for _, a := range argv[1:] {
			if v, ok := strings.CutPrefix(a, "if="); ok && endlessDevice(v) {
				in = true
			}
			if strings.HasPrefix(a, "count=") {
				count = true
			}
		}
		return in && !count
	case "cat", "tac", "od", "hexdump", "xxd", "base64", "base32", "tr", "strings", "cut", "fold", "sed", "grep", "tee":
		for _, a := range argv[1:] {
			if endlessDevice(a) {
				return true
			}
		}
	}
	return false
}

// passesEndless reports a filter that keeps printing while its input does not end.
func passesEndless(argv []string) bool {
	if len(argv) == 0 {
		return false
	}
	switch Base(argv[0]) {
	case "cat", "tr", "cut", "fold", "rev", "tee", "stdbuf", "nl", "base64", "od", "xxd", "hexdump", "awk", "mawk", "gawk":
		return true
	case "grep", "sed":
		for _, a := range argv[1:] {
			if strings.HasPrefix(a, "-m") || strings.HasPrefix(a, "--max-count") || strings.Contains(a, "q") && Base(argv[0]) == "sed" {
				return false
			}
		}
		return true
	}
	return false
}

// stmtArgv is the literal argv of a simple command, or of the endless loop a statement is.
func stmtArgv(s *syntax.Stmt) ([]string, bool) {
	call, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 {
		return nil, false
	}
	argv := make([]string, 0, len(call.Args))
	for _, a := range call.Args {
		v, ok := staticWord(a)
		if !ok {
			return nil, false
		}
		argv = append(argv, v)
	}
	return argv, true
}

// endlessOutput reports a statement whose output never ends.
func endlessOutput(s *syntax.Stmt) (endlessOut, passes bool) {
	for _, r := range s.Redirs {
		if r.Op == syntax.RdrIn && (r.N == nil || r.N.Value == "0") {
			if t, ok := staticWord(r.Word); ok && endlessDevice(t) {
				return true, false
			}
		}
	}
	switch c := s.Cmd.(type) {
	case *syntax.WhileClause:
		return endless(c.Cond, c.Until) && !leavesLoop(c.Do), false
	case *syntax.ForClause:
		if cl, ok := c.Loop.(*syntax.CStyleLoop); ok {
			return endlessCFor(cl, c.Do) && !leavesLoop(c.Do), false
		}
		return false, false
	}
	argv, ok := stmtArgv(s)
	if !ok {
		return false, false
	}
	return endlessProducer(argv), passesEndless(argv)
}

// endlessPipe reports the pipeline elements before a command printing without end.
func endlessPipe(elems []*syntax.Stmt) bool {
	for i := len(elems) - 1; i >= 0; i-- {
		e, p := endlessOutput(elems[i])
		if e {
			return true
		}
		if !p {
			return false
		}
	}
	return false
}

// endlessFast is endlessPipe for the commands of a line read by the fast path.
func endlessFast(cmds []fastCmd) bool {
	for i := len(cmds) - 1; i >= 0; i-- {
		argv := make([]string, len(cmds[i].args))
		for k, a := range cmds[i].args {
			argv[k] = a.Value
		}
		if endlessProducer(argv) {
			return true
		}
		if !passesEndless(argv) {
			return false
		}
	}
	return false
}

// readsInput reports a loop condition that is read (reading the loop's standard input).
func readsInput(cond []*syntax.Stmt) bool {
	if len(cond) == 0 {
		return false
	}
	call, ok := cond[len(cond)-1].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 || len(cond[len(cond)-1].Redirs) > 0 {
		return false
	}
	v, ok := fastLiteral(call.Args[0])
	return ok && v.Value == "read"
}

// selfCall reports a command word that names the function being run: its name, $FUNCNAME,
// ${FUNCNAME}, ${FUNCNAME[0]}.
func selfCall(word *syntax.Word, self string) bool {
	if v, ok := fastLiteral(word); ok {
		return v.Value == self
	}
	parts := word.Parts
	if len(parts) == 1 {
		if dq, ok := parts[0].(*syntax.DblQuoted); ok {
			parts = dq.Parts
		}
	}
	if len(parts) != 1 {
		return false
	}
	pe, ok := parts[0].(*syntax.ParamExp)
	if !ok || pe.Param == nil || pe.Param.Value != "FUNCNAME" || pe.Excl || pe.Length || pe.Exp != nil || pe.Slice != nil || pe.Repl != nil {
		return false
	}
	if pe.Index == nil {
		return true
	}
	n, ok := constArith(pe.Index)
	return ok && n == 0
}

// stdinEndless reports a standard input that never ends: an endless device, or a pipe from a
// command whose output never ends.
func (w *walker) stdinEndless() bool {
	st := w.stdin
	switch {
	case st.endless:
		return true
	case st.src != nil:
		return endlessPipe(st.src)
	case st.fsrc != nil:
		return endlessFast(st.fsrc)
	}
	return false
}
