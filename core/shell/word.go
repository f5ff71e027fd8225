package shell

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// expandWords appends the fields every word expands to.
func (w *walker) expandWords(words []*syntax.Word, dst []Arg) []Arg {
	for _, word := range words {
		dst = w.expandWord(word, dst)
	}
	return dst
}

// expandWord appends the fields word expands to: brace expansion, tilde, parameters and
// command substitutions it can evaluate, field splitting of unquoted expansions. Globs are not
// expanded; they are kept as Arg.Pattern.
func (w *walker) expandWord(word *syntax.Word, dst []Arg) []Arg {
	if a, ok := fastLiteral(word); ok {
		return append(dst, a)
	}
	if hasBraces(word) {
		if out, ok := w.expandBraces(word, dst); ok {
			return out
		}
	}
	return w.expandFields(word, dst)
}

// expandBraces expands {a,b} and {1..3}; ok is false when the word has no brace expansion.
// (A function of its own: the iterator's closure would otherwise move dst to the heap on every
// call.)
func (w *walker) expandBraces(word *syntax.Word, dst []Arg) ([]Arg, bool) {
	cp := &syntax.Word{Parts: append([]syntax.WordPart(nil), word.Parts...)}
	if !syntax.SplitBraces(cp) {
		return dst, false
	}
	n := 0
	for bw, err := range expand.BracesSeq(nil, cp) {
		if err != nil || n >= maxBraces {
			w.an.problem("brace expansion too large")
			w.an.Incomplete = true
			break
		}
		n++
		start := len(dst)
		dst = w.expandFields(bw, dst)
		for i := start; i < len(dst); i++ {
			dst[i].Static = false
		}
	}
	return dst, true
}

// fastLiteral handles the common word that needs no expansion at all.
func fastLiteral(word *syntax.Word) (Arg, bool) {
	if len(word.Parts) != 1 {
		return Arg{}, false
	}
	var v string
	switch p := word.Parts[0].(type) {
	case *syntax.Lit:
		v = p.Value
		if strings.ContainsAny(v, "\\*?[{~") {
			return Arg{}, false
		}
	case *syntax.SglQuoted:
		if p.Dollar {
			return Arg{}, false
		}
		v = p.Value
	case *syntax.DblQuoted:
		if p.Dollar || len(p.Parts) > 1 {
			return Arg{}, false
		}
		if len(p.Parts) == 1 {
			lit, ok := p.Parts[0].(*syntax.Lit)
			if !ok || strings.IndexByte(lit.Value, '\\') >= 0 {
				return Arg{}, false
			}
			v = lit.Value
		}
	default:
		return Arg{}, false
	}
	return Arg{Value: v, Raw: v, Static: true, Known: true, Prefix: len(v)}, true
}

func hasBraces(word *syntax.Word) bool {
	for _, p := range word.Parts {
		if lit, ok := p.(*syntax.Lit); ok && strings.IndexByte(lit.Value, '{') >= 0 {
			return true
		}
	}
	return false
}

// fields accumulates the fields of one word.
type fields struct {
	out           []Arg
	val, raw, pat []byte
	glob          bool // current field has an active glob character
	static, known bool
	prefix        int // -1 until an unknown expansion is met
	suffixAt      int // the length of val at the last unknown expansion
	started       bool
	noSplit       bool // assignment-like context: expansions are neither split nor globbed
	assign        bool // an assignment value, or an argument that looks like one: ~ after = and :
	sawEq         bool // the = of an assignment-like argument has been read
}

func (f *fields) reset() {
	f.val, f.raw, f.pat = f.val[:0], f.raw[:0], f.pat[:0]
	f.glob, f.started = false, false
	f.prefix = -1
}

// quoted appends text that is not subject to globbing.
func (f *fields) quoted(s string) {
	f.started = true
	f.val = append(f.val, s...)
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', '\\':
			f.pat = append(f.pat, '\\')
		}
		f.pat = append(f.pat, s[i])
	}
}

// unquoted appends one character that globbing sees as-is.
func (f *fields) active(c byte) {
	f.started = true
	f.val = append(f.val, c)
	f.pat = append(f.pat, c)
	if c == '*' || c == '?' || c == '[' {
		f.glob = true
	}
}

func (f *fields) unknown() {
	f.started = true
	f.known = false
	if f.prefix < 0 {
		f.prefix = len(f.val)
	}
	f.suffixAt = len(f.val)
}

func (f *fields) end() {
	if !f.started {
		return
	}
	a := Arg{Value: string(f.val), Raw: string(f.raw), Static: f.static, Known: f.known, Prefix: len(f.val)}
	if f.prefix >= 0 {
		a.Prefix = f.prefix
		a.Suffix = len(f.val) - f.suffixAt
	}
	if f.glob && validGlob(f.pat) {
		a.Pattern = string(f.pat)
	}
	f.out = append(f.out, a)
	f.reset()
}

// validGlob reports whether a pattern has a glob bash expands: * or ?, or a bracket
// expression closed by "]" (a lone "[" is literal text, as in "[ -f x ]").
func validGlob(p []byte) bool {
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '*', '?':
			return true
		case '@', '!', '+':
			if i+1 < len(p) && p[i+1] == '(' {
				return true // an extended glob
			}
		case '[':
			j := i + 1
			if j < len(p) && (p[j] == '!' || p[j] == '^') {
				j++
			}
			if j < len(p) && p[j] == ']' {
				j++
			}
			for ; j < len(p); j++ {
				if p[j] == ']' {
					return true
				}
				if p[j] == '\\' {
					j++
				}
			}
		}
	}
	return false
}

// split appends an unquoted expansion's value: split into fields on IFS, globs active.
func (f *fields) split(v, ifs string) {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if strings.IndexByte(ifs, c) >= 0 {
			if f.started {
				f.end()
			}
			continue
		}
		f.active(c)
	}
}

func (w *walker) expandFields(word *syntax.Word, dst []Arg) []Arg {
	f := &fields{out: dst, static: true, known: true, prefix: -1}
	w.wordParts(f, word.Parts, false, true)
	if ps := procSubstOf(word); ps != nil && f.started {
		f.end()
		f.out[len(f.out)-1].proc = ps
		return f.out
	}
	f.raw = appendRaw(f.raw[:0], word.Parts)
	f.end()
	if ps := lastProcSubst(word); ps != nil && len(f.out) == len(dst)+1 {
		// --file=<(…): the option's value is the process substitution.
		f.out[len(f.out)-1].proc = ps
	}
	// Every expanded field shares the static/known facts of the whole word.
	for i := len(dst); i < len(f.out); i++ {
		if !f.static {
			f.out[i].Static = false
		}
		if !f.known {
			f.out[i].Known = false
		}
		if f.out[i].Raw == "" {
			f.out[i].Raw = f.out[i].Value
		}
	}
	return f.out
}

func appendRaw(b []byte, parts []syntax.WordPart) []byte {
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b = append(b, p.Value...)
		case *syntax.SglQuoted:
			b = append(b, p.Value...)
		case *syntax.DblQuoted:
			b = appendRaw(b, p.Parts)
		case *syntax.ParamExp:
			if p.Param != nil {
				if p.Short {
					b = append(b, '$')
					b = append(b, p.Param.Value...)
				} else {
					b = append(b, "${"...)
					b = append(b, p.Param.Value...)
					b = append(b, '}')
				}
			}
		case *syntax.CmdSubst:
			b = append(b, "$(…)"...)
		case *syntax.ArithmExp:
			b = append(b, "$((…))"...)
		case *syntax.ProcSubst:
			b = append(b, "<(…)"...)
		}
	}
	return b
}

func (w *walker) ifs() string {
	if v, ok := w.envPrefix("IFS"); ok {
		return v
	}
	if v, ok := w.vars["IFS"]; ok && v.known {
		return v.val
	}
	return " \t\n"
}

// envPrefix is the value a NAME=value prefix of the command being walked gives name.
func (w *walker) envPrefix(name string) (string, bool) {
	for i := len(w.env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(w.env[i], "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}

// wordParts expands parts into f. first is true while at the very start of the word (for
// tilde expansion).
func (w *walker) wordParts(f *fields, parts []syntax.WordPart, inDbl, first bool) {
	for i, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit:
			w.lit(f, p.Value, inDbl, first && i == 0)
		case *syntax.SglQuoted:
			f.started = true
			if p.Dollar {
				f.static = false
				f.quoted(ansiC(p.Value))
			} else {
				f.quoted(p.Value)
			}
		case *syntax.DblQuoted:
			f.started = true
			if p.Dollar {
				f.static = false
				w.problem("a locale-translated string $\"…\" (its text comes from a message catalog)")
			}
			w.wordParts(f, p.Parts, true, false)
		case *syntax.ParamExp:
			w.paramExp(f, p, inDbl)
		case *syntax.CmdSubst:
			f.static = false
			v, ok := w.evalSub(p.Stmts)
			v = strings.TrimRight(v, "\n")
			why := ""
			if !ok && !w.digitsOutput(p.Stmts) {
				why = "the output of $(…) is not known"
			}
			if !ok {
				if pat, found := w.globOutput(p.Stmts); found {
					// $(ls /dev/sd? | head -1): one of the names the glob matches, for the floor.
					w.unknownValue("%s", why)
					w.expansion(f, pat, true, inDbl, true, "")
					continue
				}
			}
			w.expansion(f, v, ok, inDbl, false, why)
		case *syntax.ArithmExp:
			f.static = false
			if p.Bracket || p.Unsigned {
				w.problem("an old or mksh arithmetic form")
			}
			v, ok := w.arith(p.X)
			w.expansion(f, v, ok, inDbl, false, "")
		case *syntax.ProcSubst:
			f.static = false
			f.quoted("/dev/fd/63")
		case *syntax.ExtGlob:
			f.static = false
			f.glob = true
			f.started = true
			w.problem("an extended glob %s(…)", p.Op.String()[:1])
			s := p.Op.String() + p.Pattern.Value + ")"
			f.val = append(f.val, s...)
			f.pat = append(f.pat, s...)
		default:
			f.static = false
			w.problem("an unsupported word part")
			f.unknown()
		}
	}
}

// expansion appends the value of an expansion; why, when the value is not known, is the
// problem to report (none for the values bash can only set to digits).
func (w *walker) expansion(f *fields, v string, ok, inDbl, glob bool, why string) {
	if !ok {
		if why != "" {
			w.unknownValue("%s", why)
		}
		f.unknown()
		return
	}
	if len(v)+len(f.val) > maxValue {
		w.problem("an expansion longer than %d bytes", maxValue)
		f.unknown()
		return
	}
	if w.sh.expanded += len(v); w.sh.expanded > maxExpanded {
		if !w.an.Incomplete {
			w.an.Incomplete = true
			w.an.problem("the command expands to more than %d bytes", maxExpanded)
		}
		f.unknown()
		return
	}
	if glob {
		// A loop variable over a glob: one of the file names the pattern matches.
		f.started = true
		for i := 0; i < len(v); i++ {
			f.active(v[i])
		}
		return
	}
	if inDbl || f.noSplit {
		f.started = true
		f.quoted(v)
		return
	}
	f.split(v, w.ifs())
}

// lit expands a literal part: backslash escapes, glob characters and a leading tilde.
func (w *walker) lit(f *fields, s string, inDbl, atStart bool) {
	f.started = true
	if inDbl {
		for i := 0; i < len(s); i++ {
			c := s[i]
			if c == '\\' && i+1 < len(s) {
				switch s[i+1] {
				case '$', '`', '"', '\\':
					f.quoted(s[i+1 : i+2])
					i++
					continue
				case '\n':
					i++
					continue
				}
			}
			f.quoted(s[i : i+1])
		}
		return
	}
	// tildeAt expands a tilde prefix at s[i:] (it ends at "/", and in assignments at ":").
	tildeAt := func(i int) int {
		end := len(s)
		stop := "/"
		if f.assign {
			stop = "/:"
		}
		if k := strings.IndexAny(s[i:], stop); k >= 0 {
			end = i + k
		}
		if h, ok := w.tilde(s[i+1 : end]); ok {
			// Still "static" for arguments: it expands to one path, never to an option. In
			// command position it is refused (command checks the raw word).
			f.quoted(h)
		} else {
			f.unknown()
		}
		return end
	}
	i := 0
	if atStart {
		if strings.HasPrefix(s, "~") {
			i = tildeAt(0)
		} else if !f.assign && assignmentPrefix(s) > 0 {
			// An argument that looks like an assignment (a=~/x) expands its tildes like one.
			f.assign = true
		}
	}
	for ; i < len(s); i++ {
		c := s[i]
		if c == '\\' {
			if i+1 < len(s) {
				if s[i+1] != '\n' {
					f.quoted(s[i+1 : i+2])
				}
				i++
			}
			continue
		}
		f.active(c)
		if f.assign && (c == ':' || c == '=' && !f.sawEq) && i+1 < len(s) && s[i+1] == '~' {
			f.sawEq = f.sawEq || c == '='
			i = tildeAt(i+1) - 1
			continue
		}
		if c == '=' {
			f.sawEq = true
		}
	}
}

// assignmentPrefix returns the length of a leading NAME= (0 when there is none).
func assignmentPrefix(s string) int {
	i := strings.IndexByte(s, '=')
	if i <= 0 || !isName(s[:i]) {
		return 0
	}
	return i + 1
}

// tilde expands ~, ~+ and ~user.
func (w *walker) tilde(user string) (string, bool) {
	switch user {
	case "":
		if h, ok := w.lookup("HOME"); ok {
			return h, true
		}
		w.problem("~ names a home directory that is not known")
		return "", false
	case "+":
		if p, ok := w.pwdExpansion("~+"); ok {
			return p, true
		}
		w.problem("~+ names a working directory that is not known")
		return "", false
	case "-":
		if w.dirs.old != "" {
			if !w.dirs.oldExact {
				w.problem("~- names a directory the request does not give")
			}
			return w.dirs.old, true
		}
		w.problem("~- names the previous working directory, which is not known")
		return "", false
	}
	if d := strings.TrimLeft(user, "+-"); d != "" && isDigits(d) && len(user)-len(d) <= 1 {
		// ~N, ~+N, ~-N: an entry of pushd's stack.
		if p, ok := w.stackEntry(user); ok {
			return p, true
		}
		w.problem("~%s names an entry of a directory stack that is not known", user)
		return "", false
	}
	for _, r := range user {
		if !(r == '_' || r == '-' || r == '.' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return "", false
		}
	}
	// Another user's home is where it usually is, for the floor; the request does not say.
	w.problem("~%s names another user's home directory", user)
	if user == "root" {
		return "/root", true
	}
	return "/home/" + user, true
}

// quotedAt returns the positional parameters for "$@".
func (w *walker) quotedAt(p *syntax.ParamExp) ([]string, bool) {
	if !simpleParam(p) || p.Param.Value != "@" || !w.posKnown {
		return nil, false
	}
	if len(w.pos) <= 1 {
		return nil, true
	}
	return w.pos[1:], true
}

func simpleParam(p *syntax.ParamExp) bool {
	return p.Param != nil && p.Flags == nil && !p.Excl && !p.Length && !p.Width && !p.IsSet &&
		p.NestedParam == nil && p.Index == nil && len(p.Modifiers) == 0 && p.Slice == nil &&
		p.Repl == nil && p.Names == 0 && p.Exp == nil
}

// lookupVar returns a variable when its value is known, through name references.
func (w *walker) lookupVar(name string) (varVal, bool) {
	for range 8 {
		v, ok := w.vars[name]
		if !ok {
			break
		}
		if v.ref == "" {
			if v.tainted {
				w.unknownValue("the value of $%s is not known", name)
			}
			return v, v.known
		}
		name = v.ref
	}
	if v, ok := w.vars[name]; ok && v.ref != "" {
		return varVal{}, false // a loop of references
	}
	if name == "DIRSTACK" {
		full, ok := w.fullStack()
		if !ok {
			return varVal{}, false
		}
		return varVal{known: true}.array(full, nil), true
	}
	s, ok := w.lookupSpecial(name)
	return varVal{val: s, known: ok}, ok
}

// lookup returns a variable's value when known.
func (w *walker) lookup(name string) (string, bool) {
	if v, ok := w.vars[name]; ok && v.ref == "" && !v.tainted {
		return v.val, v.known
	}
	v, ok := w.lookupVar(name)
	return v.val, ok
}

// indirect is the variable ${!n} reads when n holds target: a name, or name[subscript]
// (whose subscript bash evaluates, reported by the arithmetic).
func (w *walker) indirect(target string) (varVal, bool) {
	if isName(target) || inertSpecial(target) || isDigits(target) {
		return w.lookupVar(target)
	}
	i := strings.IndexByte(target, '[')
	if i <= 0 || !strings.HasSuffix(target, "]") || !isName(target[:i]) {
		return varVal{}, false
	}
	name, sub := target[:i], target[i+1:len(target)-1]
	v, ok := w.lookupVar(name)
	if sub == "@" || sub == "*" {
		return varVal{val: strings.Join(v.elements(), " "), known: ok}, ok
	}
	key := sub
	if !v.assoc {
		was := w.lenient
		w.lenient = false
		n, nok := w.arithText(sub, 0)
		w.lenient = was
		if !nok {
			return varVal{}, false
		}
		key = strconv.FormatInt(n, 10)
	}
	if !ok {
		return varVal{}, false
	}
	e, _ := v.elem(key)
	return varVal{val: e, known: true}, true
}

// lookupSpecial knows the positional parameters, $HOME and $PWD (from the request) and IFS.
func (w *walker) lookupSpecial(name string) (string, bool) {
	if len(name) > 0 && (name[0] >= '0' && name[0] <= '9' || name == "@" || name == "*" || name == "#") {
		if !w.posKnown {
			return "", false
		}
		switch name {
		case "@", "*":
			if len(w.pos) <= 1 {
				return "", true
			}
			return strings.Join(w.pos[1:], " "), true
		case "#":
			return strconv.Itoa(max(len(w.pos)-1, 0)), true
		}
		n, err := strconv.Atoi(name)
		if err != nil {
			return "", false
		}
		if n < len(w.pos) {
			return w.pos[n], true
		}
		return "", true
	}
	switch name {
	case "HOME":
		return w.home, w.home != ""
	case "PWD":
		return w.pwdExpansion("$PWD")
	case "OLDPWD":
		if w.dirs.old == "" {
			return "", false
		}
		if !w.dirs.oldExact {
			w.problem("$OLDPWD names a directory the request does not give")
		}
		return w.dirs.old, true
	case "IFS":
		return " \t\n", true
	}
	return "", false
}

// paramExp expands one parameter expansion.
func (w *walker) paramExp(f *fields, p *syntax.ParamExp, inDbl bool) {
	if !w.litParam(p) {
		f.static = false
	}
	if p.Param != nil && p.Names == 0 {
		w.envRead(p.Param.Value)
	}
	if why := w.paramOutside(p); why != "" {
		w.problem("%s", why)
	}
	if all, ok := w.quotedAt(p); ok && inDbl {
		for j, v := range all {
			if j > 0 {
				f.end()
			}
			f.started = true
			f.quoted(v)
		}
		return
	}
	if all, ok := w.arrayAll(p); ok && inDbl {
		for j, v := range all {
			if j > 0 {
				f.end()
			}
			f.started = true
			f.quoted(v)
		}
		return
	}
	v, ok, glob := w.paramValue(p)
	w.expansion(f, v, ok, inDbl, glob, "")
}

// paramOutside says why a parameter expansion is outside what can be auto-allowed ("" when it
// is inside).
func (w *walker) paramOutside(p *syntax.ParamExp) string {
	name := ""
	if p.Param != nil {
		name = p.Param.Value
	}
	switch {
	case p.Flags != nil || p.Width || p.IsSet || p.NestedParam != nil || len(p.Modifiers) > 0 ||
		p.Split != syntax.OptUnset || p.GlobSubst != syntax.OptUnset || p.RcExpand != syntax.OptUnset || p.Param == nil:
		return "an unsupported parameter expansion"
	case p.Names != 0:
		w.envDump("${!" + name + "*}")
		return "${!" + name + "*} lists variable names"
	case p.Excl && p.Index != nil:
		if _, all := arrayIndexAll(p.Index); all {
			return "" // ${!a[@]}: the subscripts
		}
		return "an indirect expansion ${!" + name + "[…]}"
	case p.Excl:
		if v, ok := w.lookup(name); ok && strings.ContainsRune(v, '[') {
			// ${!n} with n='a[$(cmd)]': the subscript is evaluated, and runs cmd.
			w.codeInData("${!"+name+"}", v)
		} else if ok && isName(v) {
			w.envRead(v) // x=GITHUB_TOKEN; echo ${!x} reads $GITHUB_TOKEN
		} else {
			w.envDump("${!" + name + "}") // it may name any variable, the secret ones too
		}
		return "an indirect expansion ${!" + name + "} (the variable it names is not known)"
	case p.Exp != nil && p.Exp.Op == syntax.OtherParamOps:
		op := ""
		if p.Exp.Word != nil {
			op, _ = w.wordString(p.Exp.Word)
		}
		if op == "P" {
			if v, ok := w.lookup(name); ok {
				w.codeInData("${"+name+"@P}", v)
			}
		}
		return "the transformation ${" + name + "@" + op + "}"
	case p.Exp != nil && (p.Exp.Op == syntax.MatchEmpty || p.Exp.Op == syntax.ArrayExclude || p.Exp.Op == syntax.ArrayIntersect):
		return "an unsupported parameter expansion"
	}
	return ""
}

// paramBase looks up the variable of a parameter expansion, reporting it when its value is
// not known.
func (w *walker) paramBase(p *syntax.ParamExp) (varVal, bool) {
	name := p.Param.Value
	v, ok := w.lookupVar(name)
	if p.Index != nil {
		v, ok = w.arrayElem(p)
	}
	if !ok && !inertSpecial(name) && !p.Excl && p.Names == 0 {
		if _, inLine := w.vars[name]; inLine {
			w.unknownValue("the value of $%s is not known", name)
		} else {
			// From the environment (or the positional parameters): printing it is reading it.
			w.problem("the value of $%s is not known", name)
		}
	}
	return v, ok
}

// unknownValue reports a value the analysis does not know — the output of a command
// substitution, a variable the line assigned one — unless the walk is expanding the arguments
// of echo or the value of an assignment: echo only prints it (the commands that made it are
// judged on their own), and an assigned unknown value is judged where it is used. The
// suppression is counted, so that the word it was in is not taken as known. A variable from
// the environment is never lenient: printing it reads it.
func (w *walker) unknownValue(format string, args ...any) {
	if w.lenient {
		w.sh.unknowns++
		return
	}
	w.problem(format, args...)
}

// lenientString is wordStringLit for an assignment's value: an unknown value is no problem
// there; tainted says one was met, so that the variable's uses report it (its value is the
// analysis's best guess, which the floor reads).
func (w *walker) lenientString(word *syntax.Word) (v string, ok, lit, tainted bool) {
	before, was := w.sh.unknowns, w.lenient
	w.lenient = true
	v, ok, lit = w.wordStringLit(word)
	w.lenient = was
	if w.sh.unknowns != before {
		lit, tainted = false, true
	}
	return v, ok, lit, tainted
}

// taint marks a variable whose value was assigned from something not known.
func (w *walker) taint(name string) {
	if v, ok := w.vars[name]; ok {
		v.tainted, v.lit = true, false
		w.setVar(name, v)
	}
}

// echoArgs expands the arguments of echo: values that are not known are no problem there
// (echo prints them), but the fields they are in are not known either.
func (w *walker) echoArgs(words []*syntax.Word, dst []Arg) []Arg {
	was := w.lenient
	w.lenient = true
	for _, word := range words {
		before, start := w.sh.unknowns, len(dst)
		dst = w.expandWord(word, dst)
		if w.sh.unknowns != before {
			for i := start; i < len(dst); i++ {
				dst[i].Known, dst[i].Static = false, false
			}
		}
	}
	w.lenient = was
	return dst
}

// paramValue evaluates a parameter expansion when it can; glob is set for a loop variable
// over a glob pattern.
func (w *walker) paramValue(p *syntax.ParamExp) (string, bool, bool) {
	if p.Param == nil || p.Flags != nil || p.NestedParam != nil || p.Width || p.IsSet || len(p.Modifiers) > 0 || p.Names != 0 {
		return "", false, false
	}
	bv, ok := w.paramBase(p)
	base := bv.val
	if p.Excl {
		if p.Index != nil {
			if _, all := arrayIndexAll(p.Index); all {
				v, vok := w.lookupVar(p.Param.Value)
				return strings.Join(v.subscripts(), " "), vok, false
			}
		}
		if !ok {
			return "", false, false
		}
		bv, ok = w.indirect(base)
		base = bv.val
	}
	if p.Length {
		if !ok || bv.glob {
			return "", false, false
		}
		if p.Index != nil {
			if _, all := arrayIndexAll(p.Index); all {
				v, _ := w.lookupVar(p.Param.Value)
				return strconv.Itoa(len(v.elements())), true, false
			}
		}
		return strconv.Itoa(utf8.RuneCountInString(base)), true, false
	}
	if bv.glob && (p.Slice != nil || p.Repl != nil || p.Exp != nil) {
		if p.Exp != nil && (p.Exp.Op == syntax.DefaultUnset || p.Exp.Op == syntax.DefaultUnsetOrNull ||
			p.Exp.Op == syntax.AssignUnset || p.Exp.Op == syntax.AssignUnsetOrNull || p.Exp.Op == syntax.ErrorUnset ||
			p.Exp.Op == syntax.ErrorUnsetOrNull) {
			return base, true, true
		}
		w.problem("an operation on a file name from a glob")
		return "", false, false
	}
	if p.Slice != nil {
		off, ok1 := w.arith(p.Slice.Offset)
		ln, ok2 := "", true
		if p.Slice.Length != nil {
			ln, ok2 = w.arith(p.Slice.Length)
		}
		if !ok || !ok1 || !ok2 {
			return "", false, false
		}
		o, _ := strconv.Atoi(off)
		if o < 0 {
			o = max(len(base)+o, 0)
		}
		if o > len(base) {
			return "", true, false
		}
		base = base[o:]
		if p.Slice.Length != nil {
			l, _ := strconv.Atoi(ln)
			if l < 0 {
				l = max(len(base)+l, 0)
			}
			if l < len(base) {
				base = base[:l]
			}
		}
		return base, true, false
	}
	if p.Repl != nil {
		orig, ok1 := w.wordString(p.Repl.Orig)
		with, ok2 := w.wordString(p.Repl.With)
		if !ok || !ok1 || !ok2 {
			return "", false, false
		}
		if strings.ContainsAny(orig, "*?[") || orig == "" || strings.HasPrefix(orig, "#") || strings.HasPrefix(orig, "%") {
			w.problem("a pattern replacement ${x/pattern/…}")
			return "", false, false
		}
		if p.Repl.All {
			return strings.ReplaceAll(base, orig, with), true, false
		}
		return strings.Replace(base, orig, with, 1), true, false
	}
	if p.Exp == nil {
		return base, ok, bv.glob
	}
	arg := func() (string, bool) { return w.wordString(p.Exp.Word) }
	colon := p.Exp.Op == syntax.DefaultUnsetOrNull || p.Exp.Op == syntax.AssignUnsetOrNull ||
		p.Exp.Op == syntax.AlternateUnsetOrNull || p.Exp.Op == syntax.ErrorUnsetOrNull
	set := ok && !bv.unset && (!colon || base != "")
	switch p.Exp.Op {
	case syntax.DefaultUnset, syntax.AssignUnset, syntax.DefaultUnsetOrNull, syntax.AssignUnsetOrNull:
		if set {
			return base, true, bv.glob
		}
		// An unknown variable is most likely unset: its default is what the author meant
		// (for the floor; the problem was reported).
		v, vok := arg()
		if (p.Exp.Op == syntax.AssignUnset || p.Exp.Op == syntax.AssignUnsetOrNull) && isName(p.Param.Value) {
			w.assignVar(p.Param.Value, v, vok)
		}
		return v, vok, false
	case syntax.AlternateUnset, syntax.AlternateUnsetOrNull:
		if !ok {
			return "", false, false
		}
		if !set {
			return "", true, false
		}
		v, vok := arg()
		return v, vok, false
	case syntax.ErrorUnset, syntax.ErrorUnsetOrNull:
		return base, ok, bv.glob
	case syntax.RemSmallPrefix, syntax.RemLargePrefix, syntax.RemSmallSuffix, syntax.RemLargeSuffix:
		pat, ok1 := arg()
		if !ok || !ok1 {
			return "", false, false
		}
		return trimPattern(base, pat, p.Exp.Op), true, false
	case syntax.OtherParamOps:
		// ${x@Q}, ${x@E}, …: outside the subset (reported), followed for the floor.
		op, ok1 := arg()
		if !ok || !ok1 {
			return "", false, false
		}
		switch op {
		case "Q", "K", "k":
			return quote(base), true, false
		case "E":
			return ansiC(base), true, false
		case "U":
			return strings.ToUpper(base), true, false
		case "L":
			return strings.ToLower(base), true, false
		case "u":
			if base == "" {
				return "", true, false
			}
			r, n := utf8.DecodeRuneInString(base)
			return string(unicode.ToUpper(r)) + base[n:], true, false
		case "A":
			return "declare -- " + p.Param.Value + "=" + quote(base), true, false
		case "a":
			return "", true, false
		}
		return "", false, false
	case syntax.UpperFirst, syntax.UpperAll, syntax.LowerFirst, syntax.LowerAll:
		if p.Exp.Word != nil && len(p.Exp.Word.Parts) > 0 {
			w.problem("a case conversion with a pattern")
			return "", false, false
		}
		if !ok || base == "" {
			return base, ok, false
		}
		switch p.Exp.Op {
		case syntax.UpperAll:
			return strings.ToUpper(base), true, false
		case syntax.LowerAll:
			return strings.ToLower(base), true, false
		}
		r, n := utf8.DecodeRuneInString(base)
		if p.Exp.Op == syntax.UpperFirst {
			return string(unicode.ToUpper(r)) + base[n:], true, false
		}
		return string(unicode.ToLower(r)) + base[n:], true, false
	}
	return "", false, false
}

// trimPattern implements ${x#p}, ${x##p}, ${x%p} and ${x%%p}.
func trimPattern(s, pat string, op syntax.ParExpOperator) string {
	match := func(t string) bool { return Match(pat, t) }
	switch op {
	case syntax.RemSmallPrefix:
		for i := 0; i <= len(s); i++ {
			if match(s[:i]) {
				return s[i:]
			}
		}
	case syntax.RemLargePrefix:
		for i := len(s); i >= 0; i-- {
			if match(s[:i]) {
				return s[i:]
			}
		}
	case syntax.RemSmallSuffix:
		for i := len(s); i >= 0; i-- {
			if match(s[i:]) {
				return s[:i]
			}
		}
	case syntax.RemLargeSuffix:
		for i := 0; i <= len(s); i++ {
			if match(s[i:]) {
				return s[:i]
			}
		}
	}
	return s
}

// litParam reports $X or ${X} of a variable assigned literal text earlier in the same command.
func (w *walker) litParam(p *syntax.ParamExp) bool {
	if !simpleParam(p) {
		return false
	}
	v, ok := w.vars[p.Param.Value]
	return ok && v.lit
}

// wordStringLit is wordString that also reports whether the value is literal text of the
// command line.
func (w *walker) wordStringLit(word *syntax.Word) (string, bool, bool) {
	if word == nil {
		return "", true, true
	}
	if a, ok := fastLiteral(word); ok {
		return a.Value, true, true
	}
	f := &fields{static: true, known: true, prefix: -1, noSplit: true, assign: true, sawEq: true}
	w.wordParts(f, word.Parts, false, true)
	return string(f.val), f.known, f.static
}

// wordString expands a word to a single string (no field splitting), as in assignments,
// redirection targets and the arguments of parameter operators.
func (w *walker) wordString(word *syntax.Word) (string, bool) {
	if word == nil {
		return "", true
	}
	if a, ok := fastLiteral(word); ok {
		return a.Value, true
	}
	f := &fields{static: true, known: true, prefix: -1, noSplit: true}
	w.wordParts(f, word.Parts, false, true)
	return string(f.val), f.known
}

// docString expands the body of a heredoc whose delimiter is not quoted: parameters and
// substitutions expand, backslash escapes only $, `, \ and newline.
func (w *walker) docString(word *syntax.Word) (string, bool) {
	f := &fields{static: true, known: true, prefix: -1}
	w.wordParts(f, word.Parts, true, false)
	return string(f.val), f.known
}

// ansiC decodes the body of a $'…' string.
func ansiC(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 'a':
			b.WriteByte(7)
		case 'b':
			b.WriteByte(8)
		case 'e', 'E':
			b.WriteByte(27)
		case 'f':
			b.WriteByte(12)
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte(11)
		case '\\', '\'', '"', '?':
			b.WriteByte(s[i])
		case 'x':
			v, n := parseBase(s[i+1:], 16, 2)
			if n == 0 {
				b.WriteString("\\x")
				continue
			}
			b.WriteByte(byte(v))
			i += n
		case 'u', 'U':
			width := 4
			if s[i] == 'U' {
				width = 8
			}
			v, n := parseBase(s[i+1:], 16, width)
			if n == 0 {
				b.WriteByte('\\')
				b.WriteByte(s[i])
				continue
			}
			b.WriteRune(rune(v))
			i += n
		case 'c':
			if i+1 < len(s) {
				b.WriteByte(s[i+1] & 0x1f)
				i++
			}
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v, n := parseBase(s[i:], 8, 3)
			b.WriteByte(byte(v))
			i += n - 1
		default:
			b.WriteByte('\\')
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// parseBase reads up to max digits of base from s.
func parseBase(s string, base, maxDigits int) (int, int) {
	v, n := 0, 0
	for n < len(s) && n < maxDigits {
		d := digitVal(s[n])
		if d < 0 || d >= base {
			break
		}
		v = v*base + d
		n++
	}
	return v, n
}

func digitVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// lastProcSubst is the process substitution a word ends with (--file=<(…)), or nil.
func lastProcSubst(word *syntax.Word) *syntax.ProcSubst {
	if len(word.Parts) < 2 {
		return nil
	}
	ps, _ := word.Parts[len(word.Parts)-1].(*syntax.ProcSubst)
	return ps
}
