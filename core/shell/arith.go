package shell

import (
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Bash evaluates arithmetic in more places than $(( )): (( )), let, for ((…)), the offsets of
// ${x:off:len}, the operands of [[ a -eq b ]], array subscripts (test -v 'a[…]', read, printf
// -v, declare, unset), and the value of every variable an expression names — recursively,
// and a subscript inside any of them runs its $(…) even when it came from single quotes. An
// arithmetic expression is proven inert only when every leaf is a number or a variable whose
// value is known and itself inert; anything else makes the analysis not-ok, and command text
// found in it goes to the floor.

// maxArithDepth bounds the variables followed through their values.
const maxArithDepth = 8

// arith evaluates x; ok is false when the value is not known. Problems are reported for
// whatever is not proven inert.
func (w *walker) arith(x syntax.ArithmExpr) (string, bool) {
	// A value arithmetic reads is evaluated, not printed: unknown is never harmless here.
	was := w.lenient
	w.lenient = false
	defer func() { w.lenient = was }()
	v, ok := w.arithEval(x, 0)
	if !ok {
		return "", false
	}
	return strconv.FormatInt(v, 10), true
}

func (w *walker) arithEval(x syntax.ArithmExpr, depth int) (int64, bool) {
	if depth > maxArithDepth || !w.step() {
		w.problem("arithmetic nested too deeply")
		return 0, false
	}
	switch x := x.(type) {
	case nil:
		return 0, true
	case *syntax.Word:
		return w.arithWord(x, depth)
	case *syntax.ParenArithm:
		return w.arithEval(x.X, depth)
	case *syntax.UnaryArithm:
		if x.Op == syntax.Inc || x.Op == syntax.Dec {
			name, ok := arithName(x.X)
			if !ok {
				w.problem("arithmetic increments something other than a plain variable")
				w.arithEval(x.X, depth+1)
				return 0, false
			}
			old, known := w.arithVar(name, depth)
			nv := old + 1
			if x.Op == syntax.Dec {
				nv = old - 1
			}
			w.arithAssign(name, nv, known)
			if x.Post {
				return old, known
			}
			return nv, known
		}
		v, ok := w.arithEval(x.X, depth)
		switch x.Op {
		case syntax.Not:
			if v == 0 {
				return 1, ok
			}
			return 0, ok
		case syntax.BitNegation:
			return ^v, ok
		case syntax.Minus:
			return -v, ok
		}
		return v, ok
	case *syntax.BinaryArithm:
		return w.arithBinary(x, depth)
	}
	w.problem("unsupported arithmetic")
	return 0, false
}

// arithName returns the variable a plain name word stands for.
func arithName(x syntax.ArithmExpr) (string, bool) {
	word, ok := x.(*syntax.Word)
	if !ok || len(word.Parts) != 1 {
		return "", false
	}
	lit, ok := word.Parts[0].(*syntax.Lit)
	if !ok || !isName(lit.Value) {
		return "", false
	}
	return lit.Value, true
}

func (w *walker) arithBinary(x *syntax.BinaryArithm, depth int) (int64, bool) {
	switch x.Op {
	case syntax.Assgn, syntax.AddAssgn, syntax.SubAssgn, syntax.MulAssgn, syntax.QuoAssgn,
		syntax.RemAssgn, syntax.AndAssgn, syntax.OrAssgn, syntax.XorAssgn, syntax.ShlAssgn,
		syntax.ShrAssgn, syntax.AndBoolAssgn, syntax.OrBoolAssgn, syntax.XorBoolAssgn, syntax.PowAssgn:
		name, ok := arithName(x.X)
		y, yok := w.arithEval(x.Y, depth)
		if !ok {
			w.problem("arithmetic assigns to something other than a plain variable")
			w.arithEval(x.X, depth+1)
			return 0, false
		}
		if x.Op == syntax.Assgn {
			w.arithAssign(name, y, yok)
			return y, yok
		}
		old, known := w.arithVar(name, depth)
		v, vok := arithOp(assignOp(x.Op), old, y)
		known = known && yok && vok
		w.arithAssign(name, v, known)
		return v, known
	case syntax.AndArit, syntax.OrArit:
		a, aok := w.arithEval(x.X, depth)
		b, bok := w.arithEval(x.Y, depth) // bash may skip it; both are judged
		if x.Op == syntax.AndArit {
			return b2i(a != 0 && b != 0), aok && bok
		}
		return b2i(a != 0 || b != 0), aok && bok
	case syntax.TernQuest:
		c, cok := w.arithEval(x.X, depth)
		colon, ok := x.Y.(*syntax.BinaryArithm)
		if !ok || colon.Op != syntax.TernColon {
			w.problem("malformed arithmetic conditional")
			return 0, false
		}
		a, aok := w.arithEval(colon.X, depth)
		b, bok := w.arithEval(colon.Y, depth)
		if !cok {
			return 0, false
		}
		if c != 0 {
			return a, aok && bok
		}
		return b, aok && bok
	case syntax.Comma:
		_, aok := w.arithEval(x.X, depth)
		b, bok := w.arithEval(x.Y, depth)
		return b, aok && bok
	}
	a, aok := w.arithEval(x.X, depth)
	b, bok := w.arithEval(x.Y, depth)
	v, ok := arithOp(x.Op, a, b)
	return v, aok && bok && ok
}

func assignOp(op syntax.BinAritOperator) syntax.BinAritOperator {
	switch op {
	case syntax.AddAssgn:
		return syntax.Add
	case syntax.SubAssgn:
		return syntax.Sub
	case syntax.MulAssgn:
		return syntax.Mul
	case syntax.QuoAssgn:
		return syntax.Quo
	case syntax.RemAssgn:
		return syntax.Rem
	case syntax.AndAssgn:
		return syntax.And
	case syntax.OrAssgn:
		return syntax.Or
	case syntax.XorAssgn:
		return syntax.Xor
	case syntax.ShlAssgn:
		return syntax.Shl
	case syntax.ShrAssgn:
		return syntax.Shr
	case syntax.AndBoolAssgn:
		return syntax.AndArit
	case syntax.OrBoolAssgn:
		return syntax.OrArit
	case syntax.XorBoolAssgn:
		return syntax.XorBool
	case syntax.PowAssgn:
		return syntax.Pow
	}
	return op
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// arithOp applies a binary operator; ok is false where bash fails (division by zero).
func arithOp(op syntax.BinAritOperator, a, b int64) (int64, bool) {
	switch op {
	case syntax.Add:
		return a + b, true
	case syntax.Sub:
		return a - b, true
	case syntax.Mul:
		return a * b, true
	case syntax.Quo, syntax.Rem:
		if b == 0 || a == -1<<63 && b == -1 {
			return 0, false
		}
		if op == syntax.Quo {
			return a / b, true
		}
		return a % b, true
	case syntax.Pow:
		if b < 0 {
			return 0, false
		}
		r := int64(1)
		for i := int64(0); i < b && i < 64; i++ {
			r *= a
		}
		return r, true
	case syntax.Eql:
		return b2i(a == b), true
	case syntax.Neq:
		return b2i(a != b), true
	case syntax.Lss:
		return b2i(a < b), true
	case syntax.Leq:
		return b2i(a <= b), true
	case syntax.Gtr:
		return b2i(a > b), true
	case syntax.Geq:
		return b2i(a >= b), true
	case syntax.And:
		return a & b, true
	case syntax.Or:
		return a | b, true
	case syntax.Xor:
		return a ^ b, true
	case syntax.Shl:
		return a << (uint64(b) & 63), true
	case syntax.Shr:
		return a >> (uint64(b) & 63), true
	case syntax.AndArit:
		return b2i(a != 0 && b != 0), true
	case syntax.OrArit:
		return b2i(a != 0 || b != 0), true
	case syntax.XorBool:
		return b2i((a != 0) != (b != 0)), true
	}
	return 0, false
}

// arithWord evaluates one word of an arithmetic expression: a number, a variable name, or
// text made by expansions, which bash then reads as an expression of its own.
func (w *walker) arithWord(word *syntax.Word, depth int) (int64, bool) {
	if len(word.Parts) == 1 {
		if lit, ok := word.Parts[0].(*syntax.Lit); ok {
			return w.arithText(lit.Value, depth)
		}
		if pe, ok := word.Parts[0].(*syntax.ParamExp); ok && pe.Index != nil && !pe.Dollar.IsValid() {
			// a[i] without a $: an array element.
			w.problem("an array subscript in arithmetic: %s[…]", pe.Param.Value)
			w.arithEval(pe.Index, depth+1)
			return 0, false
		}
	}
	s, ok := w.wordString(word)
	if !ok {
		return 0, false // the expansion reported why
	}
	return w.arithText(s, depth)
}

// arithText evaluates text as bash reads it in arithmetic: a number, a variable name whose
// value is evaluated in turn, or an expression.
func (w *walker) arithText(s string, depth int) (int64, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, true
	}
	if v, ok := arithNumber(s); ok {
		return v, true
	}
	if isName(s) {
		return w.arithVar(s, depth)
	}
	if !inertArithText(s) {
		w.problem("arithmetic on text that can run code: %q", clip(s))
		w.codeInData("arithmetic", s)
		return 0, false
	}
	x, ok := parseArith(s)
	if !ok {
		w.problem("arithmetic that does not parse: %q", clip(s))
		return 0, false
	}
	return w.arithEval(x, depth+1)
}

// arithVar is the value of a variable named in arithmetic.
func (w *walker) arithVar(name string, depth int) (int64, bool) {
	w.envRead(name)
	if inertSpecial(name) {
		return 0, false
	}
	v, ok := w.lookupVar(name)
	if !ok {
		w.problem("arithmetic on $%s, whose value is not known", name)
		return 0, false
	}
	if v.glob {
		w.problem("arithmetic on a file name")
		return 0, false
	}
	return w.arithText(v.val, depth+1)
}

func (w *walker) arithAssign(name string, v int64, known bool) {
	w.assigned(name)
	if known {
		w.setVar(name, varVal{val: strconv.FormatInt(v, 10), known: true, lit: true})
	} else {
		w.setVar(name, varVal{})
	}
}

// inertArithText reports text bash can read as arithmetic without expanding anything: no
// subscript, expansion, quote or escape.
func inertArithText(s string) bool {
	return !strings.ContainsAny(s, "[]$`\\'\"")
}

// arithNumber reads the integer constants of bash arithmetic: decimal, 0x hex, 0 octal and
// BASE#DIGITS.
func arithNumber(s string) (int64, bool) {
	neg := false
	t := s
	if t[0] == '-' || t[0] == '+' {
		neg = t[0] == '-'
		t = t[1:]
	}
	if t == "" || t[0] < '0' || t[0] > '9' {
		return 0, false
	}
	base := 10
	digits := t
	switch {
	case strings.Contains(t, "#"):
		b, rest, _ := strings.Cut(t, "#")
		n, err := strconv.Atoi(b)
		if err != nil || n < 2 || n > 64 || rest == "" {
			return 0, false
		}
		if n > 36 {
			return 0, false // bash's 37-64 digits (@, _) are not worth modelling
		}
		base, digits = n, rest
	case len(t) > 2 && (t[:2] == "0x" || t[:2] == "0X"):
		base, digits = 16, t[2:]
	case len(t) > 1 && t[0] == '0':
		base, digits = 8, t[1:]
	}
	v, err := strconv.ParseUint(digits, base, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		return -int64(v), true
	}
	return int64(v), true
}

// parseArith parses the text of an arithmetic expression.
func parseArith(s string) (syntax.ArithmExpr, bool) {
	f, err := parse("((" + s + "))")
	if err != nil || len(f.Stmts) != 1 {
		return nil, false
	}
	ac, ok := f.Stmts[0].Cmd.(*syntax.ArithmCmd)
	if !ok {
		return nil, false
	}
	return ac.X, true
}

// inertSpecial lists the variables bash sets itself to digits (or option letters): their
// value is not known, but it can be nothing but that.
func inertSpecial(name string) bool {
	switch name {
	case "?", "$", "!", "-", "#", "RANDOM", "SRANDOM", "LINENO", "SECONDS", "EPOCHSECONDS", "BASHPID",
		"PPID", "UID", "EUID":
		return true
	}
	return false
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}
