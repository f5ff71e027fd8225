package shell

import (
	"encoding/base64"
	"encoding/hex"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// evalStmts works out what a list of statements writes to stdout, for the few commands whose
// output follows from their arguments (echo, printf, cat of a heredoc, base64 -d, rev, tr, xxd
// -r, pwd, dirname, basename). It never runs anything; ok is false when the output is unknown.
func (w *walker) evalStmts(stmts []*syntax.Stmt, stdin stdinState) (string, bool) {
	var out strings.Builder
	for _, s := range stmts {
		o, ok := w.evalStmt(s, stdin)
		if !ok {
			return "", false
		}
		out.WriteString(o)
		if out.Len() > maxValue {
			return "", false
		}
	}
	return out.String(), true
}

// digitsOutput reports a command substitution that can print nothing but a number (nproc, id
// -u, date +%s): its value is not known, but it cannot be anything that matters
// (make -j$(nproc)).
func (w *walker) digitsOutput(stmts []*syntax.Stmt) bool {
	if len(stmts) != 1 || len(stmts[0].Redirs) > 0 {
		return false
	}
	call, ok := stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) > 0 || len(call.Args) == 0 {
		return false
	}
	var argv []string
	for _, word := range call.Args {
		a, ok := fastLiteral(word)
		if !ok {
			return false
		}
		argv = append(argv, a.Value)
	}
	switch strings.Join(argv, " ") {
	case "nproc", "nproc --all", "id -u", "id -g", "id -ru", "id -rg", "date +%s", "getconf _NPROCESSORS_ONLN",
		"getconf NPROCESSORS_ONLN", "sysctl -n hw.ncpu", "sysctl -n hw.logicalcpu":
		return true
	}
	return false
}

// evalSub works out the output of a command or process substitution: a subshell, whose
// assignments and cd stay inside.
func (w *walker) evalSub(stmts []*syntax.Stmt) (string, bool) {
	c := w.sub()
	return c.evalStmts(stmts, stdinNone())
}

func (w *walker) evalPipe(elems []*syntax.Stmt, stdin stdinState) (string, bool) {
	in := stdin
	var out string
	for _, s := range elems {
		o, ok := w.evalStmt(s, in)
		if !ok {
			return "", false
		}
		out = o
		in = stdinState{kind: stdinKnown, text: o}
	}
	return out, true
}

func (w *walker) evalStmt(s *syntax.Stmt, stdin stdinState) (string, bool) {
	if s == nil || !w.step() {
		return "", false
	}
	for _, r := range s.Redirs {
		fd := ""
		if r.N != nil {
			fd = r.N.Value
		}
		switch r.Op {
		case syntax.Hdoc, syntax.DashHdoc:
			if fd == "" || fd == "0" {
				stdin = w.heredoc(r)
			}
		case syntax.WordHdoc:
			if fd == "" || fd == "0" {
				t, ok := w.wordString(r.Word)
				if !ok {
					return "", false
				}
				stdin = stdinState{kind: stdinKnown, text: t + "\n"}
			}
		case syntax.RdrIn:
			if fd == "" || fd == "0" {
				return "", false
			}
		case syntax.RdrOut, syntax.AppOut, syntax.RdrAll, syntax.AppAll, syntax.RdrClob:
			if fd == "" || fd == "1" || r.Op == syntax.RdrAll || r.Op == syntax.AppAll {
				return "", false
			}
		}
	}
	switch c := s.Cmd.(type) {
	case *syntax.CallExpr:
		return w.evalCall(c, stdin)
	case *syntax.BinaryCmd:
		switch c.Op {
		case syntax.Pipe, syntax.PipeAll:
			o, ok := w.evalStmt(c.X, stdin)
			if !ok {
				return "", false
			}
			return w.evalStmt(c.Y, stdinState{kind: stdinKnown, text: o})
		default:
			x, ok := w.evalStmt(c.X, stdin)
			if !ok {
				return "", false
			}
			y, ok := w.evalStmt(c.Y, stdin)
			return x + y, ok
		}
	case *syntax.Subshell:
		return w.evalStmts(c.Stmts, stdin)
	case *syntax.Block:
		return w.evalStmts(c.Stmts, stdin)
	}
	return "", false
}

func (w *walker) evalCall(c *syntax.CallExpr, stdin stdinState) (string, bool) {
	if len(c.Args) == 0 {
		for _, a := range c.Assigns {
			if a.Name == nil || a.Array != nil || a.Index != nil {
				return "", false
			}
			v, ok := w.wordString(a.Value)
			if a.Append {
				old, known := w.lookup(a.Name.Value)
				v, ok = old+v, ok && known
			}
			w.setVar(a.Name.Value, varVal{val: v, known: ok})
		}
		return "", len(c.Assigns) > 0
	}
	return w.evalArgs(w.expandWords(c.Args, nil), stdin)
}

// approx reports an output worked out only approximately: good enough for the floor, not a
// proof.
func (w *walker) approx(what string) {
	w.problem("the output of %s is approximated", what)
}

// evalArgs works out the output of one simple command from its expanded arguments.
func (w *walker) evalArgs(args []Arg, stdin stdinState) (string, bool) {
	if len(args) == 0 {
		return "", false
	}
	for _, a := range args {
		if !a.Known || a.Pattern != "" {
			return "", false
		}
	}
	argv := make([]string, len(args))
	for i, a := range args {
		argv[i] = a.Value
	}
	in := func() (string, bool) {
		if stdin.kind == stdinKnown {
			return stdin.text, true
		}
		return "", false
	}
	switch Base(argv[0]) {
	case "echo":
		out, exact := evalEcho(argv[1:])
		if !exact {
			w.approx("echo")
		}
		return out, true
	case "printf":
		if len(argv) < 2 {
			return "", false
		}
		a := argv[1:]
		if a[0] == "--" {
			a = a[1:]
		}
		if len(a) == 0 || a[0] == "-v" {
			return "", false
		}
		out, exact := evalPrintf(a[0], a[1:])
		if !exact {
			w.approx("printf")
		}
		return out, true
	case "cat":
		var out strings.Builder
		files := false
		for _, a := range argv[1:] {
			if a == "-u" {
				continue
			}
			if a == "-" {
				s, ok := in()
				if !ok {
					return "", false
				}
				out.WriteString(s)
				files = true
				continue
			}
			// A file the same command line wrote, with known content.
			text, known, ok := w.writtenFile(a)
			if strings.HasPrefix(a, "-") || !ok || !known {
				return "", false
			}
			out.WriteString(text)
			files = true
		}
		if !files {
			return in()
		}
		return out.String(), true
	case "base64":
		dec := false
		for _, a := range argv[1:] {
			switch {
			case a == "-d" || a == "--decode" || a == "-D" || a == "-di" || a == "-id":
				dec = true
			case a == "-i" || a == "--ignore-garbage" || strings.HasPrefix(a, "-w") || strings.HasPrefix(a, "--wrap"):
			case a == "-":
			default:
				if !isDigits(a) {
					return "", false
				}
			}
		}
		s, ok := in()
		if !ok {
			return "", false
		}
		if !dec {
			enc := base64.StdEncoding.EncodeToString([]byte(s))
			var b strings.Builder
			for len(enc) > 76 {
				b.WriteString(enc[:76])
				b.WriteByte('\n')
				enc = enc[76:]
			}
			b.WriteString(enc)
			b.WriteByte('\n')
			return b.String(), true
		}
		out, exact, ok := decodeBase64(s)
		if ok && !exact {
			w.approx("base64 -d")
		}
		return out, ok
	case "openssl":
		if len(argv) >= 3 && (argv[1] == "base64" || argv[1] == "enc") && contains(argv[2:], "-d") {
			s, ok := in()
			if !ok {
				return "", false
			}
			out, _, ok := decodeBase64(s)
			if ok {
				w.approx("openssl base64")
			}
			return out, ok
		}
	case "rev":
		if len(argv) > 1 {
			return "", false
		}
		s, ok := in()
		if !ok {
			return "", false
		}
		return revLines(s), true
	case "tr":
		s, ok := in()
		if !ok {
			return "", false
		}
		return evalTr(argv[1:], s)
	case "xxd":
		rev, plain := false, false
		for _, a := range argv[1:] {
			switch a {
			case "-r", "-revert":
				rev = true
			case "-p", "-ps", "-plain", "-postscript":
				plain = true
			case "-rp", "-pr", "-r-p":
				rev, plain = true, true
			default:
				return "", false
			}
		}
		s, ok := in()
		if !ok || !rev || !plain {
			return "", false
		}
		b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
		if err != nil {
			return "", false
		}
		return string(b), true
	case "pwd":
		if len(argv) > 1 && argv[1] != "-L" && argv[1] != "-P" {
			return "", false
		}
		p, ok := w.pwdExpansion("pwd")
		if !ok {
			return "", false
		}
		if len(argv) > 1 && argv[1] == "-P" {
			w.approx("pwd -P")
		}
		return p + "\n", true
	case "cd":
		// Inside $(…): the directory pwd prints afterwards.
		if len(argv) > 1 && argv[1] == "--" {
			argv = append(argv[:1:1], argv[2:]...)
		}
		switch {
		case len(argv) == 1:
			h, ok := w.lookup("HOME")
			w.cwd, w.cwdRel = h, ""
			return "", ok
		case len(argv) != 2 || argv[1] == "-" || strings.HasPrefix(argv[1], "-"):
			return "", false
		}
		if _, ok := w.cdPath(); ok && !path.IsAbs(argv[1]) && !strings.HasPrefix(argv[1], ".") {
			return "", false
		}
		w.chdir(argv[1])
		return "", w.cwd != "" || w.cwdRel != ""
	case "realpath", "readlink", "grealpath", "greadlink":
		return w.evalRealpath(argv)
	case "dirname":
		if len(argv) != 2 || strings.HasPrefix(argv[1], "-") {
			return "", false
		}
		return dirname(argv[1]) + "\n", true
	case "basename":
		if len(argv) < 2 || len(argv) > 3 || strings.HasPrefix(argv[1], "-") {
			return "", false
		}
		b := basename(argv[1])
		if len(argv) == 3 && b != argv[2] {
			b = strings.TrimSuffix(b, argv[2])
		}
		return b + "\n", true
	case "true", ":":
		return "", true
	case "tee":
		// What tee passes on; the files it writes are recorded by the walk.
		return in()
	case "head", "tail":
		n, ok := lineCount(argv[1:])
		if !ok {
			return "", false
		}
		s, ok := in()
		if !ok {
			return "", false
		}
		lines := strings.SplitAfter(s, "\n")
		if len(lines) > 0 && lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		if n > len(lines) {
			n = len(lines)
		}
		if Base(argv[0]) == "head" {
			return strings.Join(lines[:n], ""), true
		}
		return strings.Join(lines[len(lines)-n:], ""), true
	case "yes":
		line := "y"
		if len(argv) > 1 {
			line = strings.Join(argv[1:], " ")
		}
		// yes never stops; a hundred lines stand for what a reader takes.
		w.approx("yes")
		return strings.Repeat(line+"\n", 100), true
	}
	return "", false
}

// lineCount reads head's and tail's -n N, -N and --lines=N (10 by default).
func lineCount(args []string) (int, bool) {
	n := 10
	for i := 0; i < len(args); i++ {
		a := args[i]
		v := ""
		switch {
		case a == "-n" || a == "--lines":
			if i+1 >= len(args) {
				return 0, false
			}
			i++
			v = args[i]
		case strings.HasPrefix(a, "--lines="):
			v = a[len("--lines="):]
		case strings.HasPrefix(a, "-n"):
			v = a[2:]
		case len(a) > 1 && a[0] == '-' && isDigits(a[1:]):
			v = a[1:]
		default:
			return 0, false
		}
		if !isDigits(v) {
			return 0, false
		}
		n, _ = strconv.Atoi(v)
	}
	return n, true
}

// dirname is GNU dirname of one name.
func dirname(p string) string {
	t := strings.TrimRight(p, "/")
	if t == "" {
		if p == "" {
			return "."
		}
		return "/"
	}
	i := strings.LastIndexByte(t, '/')
	if i < 0 {
		return "."
	}
	d := strings.TrimRight(t[:i], "/")
	if d == "" {
		return "/"
	}
	return d
}

// basename is GNU basename of one name.
func basename(p string) string {
	t := strings.TrimRight(p, "/")
	if t == "" {
		if p == "" {
			return ""
		}
		return "/"
	}
	if i := strings.LastIndexByte(t, '/'); i >= 0 {
		return t[i+1:]
	}
	return t
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// decodeBase64 decodes what base64 -d reads; exact is false when GNU base64 would not
// accept it as it stands (other alphabets, missing padding).
func decodeBase64(s string) (out string, exact, ok bool) {
	clean := strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, s)
	if b, err := base64.StdEncoding.DecodeString(clean); err == nil {
		return string(b), true, true
	}
	clean = strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' {
			return -1
		}
		return r
	}, clean)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(clean); err == nil {
			return string(b), false, true
		}
	}
	return "", false, false
}

// evalEcho is bash's echo builtin (xpg_echo off); exact is false when its output depends on
// the locale (\u escapes).
func evalEcho(args []string) (string, bool) {
	newline, escapes := true, false
	for len(args) > 0 {
		a := args[0]
		if len(a) < 2 || a[0] != '-' || strings.Trim(a[1:], "neE") != "" {
			break
		}
		for _, c := range a[1:] {
			switch c {
			case 'n':
				newline = false
			case 'e':
				escapes = true
			case 'E':
				escapes = false
			}
		}
		args = args[1:]
	}
	s := strings.Join(args, " ")
	exact := true
	if escapes {
		var stop bool
		s, stop, exact = backslashEscapes(s, escEcho)
		if stop {
			return s, exact
		}
	}
	if newline {
		s += "\n"
	}
	return s, exact
}

// The three dialects of backslash escapes in bash (checked against bash in a sandbox): echo -e
// knows \0NNN but not \NNN; printf's %b knows both; printf's format knows \NNN (the 0
// counts as a digit) and \", and \c is no escape there.
const (
	escEcho = iota
	escPercentB
	escFormat
)

// backslashEscapes interprets escapes of one dialect; stop is true at \c (echo, %b), exact is
// false for \u and \U, whose output depends on the locale.
func backslashEscapes(s string, dialect int) (out string, stop, exact bool) {
	if strings.IndexByte(s, '\\') < 0 {
		return s, false, true
	}
	exact = true
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		c := s[i]
		switch {
		case c == 'c' && dialect != escFormat:
			return b.String(), true, exact
		case c == '0' && dialect != escFormat:
			v, n := parseBase(s[i+1:], 8, 3)
			b.WriteByte(byte(v))
			i += n
		case c >= '0' && c <= '7' && dialect != escEcho:
			v, n := parseBase(s[i:], 8, 3)
			b.WriteByte(byte(v))
			i += n - 1
		case c == 'x':
			v, n := parseBase(s[i+1:], 16, 2)
			if n == 0 {
				b.WriteString("\\x")
				continue
			}
			b.WriteByte(byte(v))
			i += n
		case c == 'u' || c == 'U':
			exact = false
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '"' && dialect == escFormat:
			b.WriteByte('"')
		default:
			if e := simpleEscape(c); e != 0 {
				b.WriteByte(e)
				continue
			}
			b.WriteByte('\\')
			b.WriteByte(c)
		}
	}
	return b.String(), false, exact
}

// simpleEscape is the byte of a one-letter escape (\n, \t, …), or 0.
func simpleEscape(c byte) byte {
	switch c {
	case 'a':
		return 7
	case 'b':
		return 8
	case 'e', 'E':
		return 27
	case 'f':
		return 12
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'v':
		return 11
	case '\\':
		return '\\'
	}
	return 0
}

// escapeLen is how many bytes after a backslash one escape sequence of tr uses.
func escapeLen(s string) int {
	if s == "" {
		return 0
	}
	switch s[0] {
	case 'a', 'b', 'e', 'E', 'f', 'n', 'r', 't', 'v', '\\':
		return 1
	case '0', '1', '2', '3', '4', '5', '6', '7':
		_, n := parseBase(s, 8, 3)
		return n
	}
	return 0
}

// evalPrintf implements the common printf directives; exact is false when the output is only
// an approximation of bash's (widths, precisions, %q, %x of a non-number, dates, floats…).
func evalPrintf(format string, args []string) (string, bool) {
	var b strings.Builder
	exact := true
	for round := 0; ; round++ {
		if round >= 64 {
			exact = false
			break
		}
		used := 0
		next := func() string {
			if used < len(args) {
				used++
				return args[used-1]
			}
			return ""
		}
		stop := false
		for i := 0; i < len(format) && !stop; i++ {
			c := format[i]
			if c == '\\' && i+1 < len(format) {
				// One escape of the format dialect: find where it ends.
				j := i + 2
				switch d := format[i+1]; {
				case d >= '0' && d <= '7':
					_, n := parseBase(format[i+1:], 8, 3)
					j = i + 1 + n
				case d == 'x':
					_, n := parseBase(format[i+2:], 16, 2)
					j = i + 2 + n
				case d == 'u' || d == 'U':
					exact = false
				}
				e, _, ex := backslashEscapes(format[i:j], escFormat)
				exact = exact && ex
				b.WriteString(e)
				i = j - 1
				continue
			}
			if c != '%' || i+1 >= len(format) {
				b.WriteByte(c)
				continue
			}
			j := i + 1
			for j < len(format) && strings.IndexByte("-+ #0123456789.*", format[j]) >= 0 {
				j++
			}
			if j > i+1 {
				exact = false // widths and flags
			}
			if j >= len(format) {
				b.WriteString(format[i:])
				exact = false
				break
			}
			switch format[j] {
			case '%':
				b.WriteByte('%')
			case 's':
				b.WriteString(next())
			case 'b':
				s, st, ex := backslashEscapes(next(), escPercentB)
				b.WriteString(s)
				exact = exact && ex
				if st {
					stop = true
				}
			case 'c':
				if s := next(); s != "" {
					_, n := utf8.DecodeRuneInString(s)
					b.WriteString(s[:n])
				}
			case 'd', 'i', 'u', 'x', 'X', 'o':
				a := strings.TrimSpace(next())
				n, err := strconv.ParseInt(a, 10, 64)
				if err != nil && a != "" {
					exact = false
				}
				base := 10
				switch format[j] {
				case 'x', 'X':
					base = 16
				case 'o':
					base = 8
				}
				s := strconv.FormatInt(n, base)
				if format[j] == 'X' {
					s = strings.ToUpper(s)
				}
				b.WriteString(s)
			default:
				exact = false
				b.WriteString(format[i : j+1])
				next()
			}
			i = j
		}
		if stop || used == 0 || used >= len(args) {
			break
		}
		args = args[used:]
		if b.Len() > maxValue {
			exact = false
			break
		}
	}
	return b.String(), exact
}

func revLines(s string) string {
	lines := strings.SplitAfter(s, "\n")
	var b strings.Builder
	for _, l := range lines {
		nl := strings.HasSuffix(l, "\n")
		l = strings.TrimSuffix(l, "\n")
		r := []rune(l)
		for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
			r[i], r[j] = r[j], r[i]
		}
		b.WriteString(string(r))
		if nl {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// evalTr implements tr SET1 SET2 and tr -d SET1 over bytes, with ranges and escapes.
func evalTr(args []string, s string) (string, bool) {
	del := false
	if len(args) > 0 && args[0] == "-d" {
		del = true
		args = args[1:]
	}
	if del && len(args) == 1 {
		set := trSet(args[0])
		if set == nil {
			return "", false
		}
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			if strings.IndexByte(string(set), s[i]) < 0 {
				b.WriteByte(s[i])
			}
		}
		return b.String(), true
	}
	if del || len(args) != 2 {
		return "", false
	}
	from, to := trSet(args[0]), trSet(args[1])
	if from == nil || to == nil || len(to) == 0 {
		return "", false
	}
	var m [256]int
	for i := range m {
		m[i] = -1
	}
	for i, c := range from {
		j := i
		if j >= len(to) {
			j = len(to) - 1
		}
		m[c] = int(to[j])
	}
	out := []byte(s)
	for i, c := range out {
		if m[c] >= 0 {
			out[i] = byte(m[c])
		}
	}
	return string(out), true
}

func trSet(spec string) []byte {
	if strings.Contains(spec, "[:") || strings.Contains(spec, "[=") || strings.Contains(spec, "*") {
		return nil
	}
	var raw []byte
	for i := 0; i < len(spec); i++ {
		if spec[i] == '\\' && i+1 < len(spec) {
			n := escapeLen(spec[i+1:])
			if n > 0 {
				raw = append(raw, ansiC(spec[i:i+1+n])...)
				i += n
				continue
			}
			i++
		}
		raw = append(raw, spec[i])
	}
	var out []byte
	for i := 0; i < len(raw); i++ {
		if i+2 < len(raw) && raw[i+1] == '-' && raw[i] <= raw[i+2] {
			for c := int(raw[i]); c <= int(raw[i+2]); c++ {
				out = append(out, byte(c))
			}
			i += 2
			continue
		}
		out = append(out, raw[i])
	}
	return out
}

// evalRealpath is realpath FILE… and readlink -f FILE…: the absolute, cleaned names, worked
// out without looking at the file system (a symbolic link on the way would change them, so the
// output is approximate unless -s says links are not followed).
func (w *walker) evalRealpath(argv []string) (string, bool) {
	canon := Base(argv[0]) == "realpath" || Base(argv[0]) == "grealpath"
	exact := false
	var files []string
	for _, a := range argv[1:] {
		switch {
		case a == "-f" || a == "-e" || a == "-m" || a == "--canonicalize" || a == "--canonicalize-existing" ||
			a == "--canonicalize-missing" || a == "-fn" || a == "-en" || a == "-mn":
			canon = true
		case a == "-s" || a == "--strip" || a == "--no-symlinks":
			exact = true
		case a == "-q" || a == "--quiet" || a == "-L" || a == "--logical" || a == "-P" || a == "--physical" || a == "-n" ||
			a == "--no-newline" || a == "-v" || a == "--verbose":
		case strings.HasPrefix(a, "-") && a != "-":
			return "", false
		default:
			files = append(files, a)
		}
	}
	if !canon || len(files) == 0 {
		return "", false
	}
	dir, dirExact := w.pwd()
	var b strings.Builder
	for _, f := range files {
		p := f
		if !path.IsAbs(p) {
			if dir == "" {
				return "", false
			}
			exact = exact && dirExact
			p = path.Join(dir, p)
		}
		b.WriteString(path.Clean(p))
		b.WriteByte('\n')
	}
	if !exact {
		w.approx(Base(argv[0]))
	}
	return b.String(), true
}

// globOutput is, for a substitution that prints file names matching a glob (ls /dev/sd?,
// echo /*, find /dev -name 'sd*', perhaps filtered by head, tail, sort or grep), that glob:
// its output is not known, but it is some of the names the glob matches.
func (w *walker) globOutput(stmts []*syntax.Stmt) (string, bool) {
	if len(stmts) != 1 || !w.step() {
		return "", false
	}
	var elems []*syntax.Stmt
	var flatten func(s *syntax.Stmt) bool
	flatten = func(s *syntax.Stmt) bool {
		if b, ok := s.Cmd.(*syntax.BinaryCmd); ok {
			if b.Op != syntax.Pipe && b.Op != syntax.PipeAll {
				return false
			}
			return flatten(b.X) && flatten(b.Y)
		}
		elems = append(elems, s)
		return true
	}
	if !flatten(stmts[0]) || len(elems) == 0 {
		return "", false
	}
	c := w.sub()
	c.judged = false
	argvOf := func(s *syntax.Stmt) []Arg {
		call, ok := s.Cmd.(*syntax.CallExpr)
		if !ok || len(call.Args) == 0 {
			return nil
		}
		return c.expandWords(call.Args, nil)
	}
	for _, e := range elems[1:] {
		args := argvOf(e)
		if len(args) == 0 {
			return "", false
		}
		switch Base(args[0].Value) {
		case "head", "tail", "sort", "uniq", "grep", "egrep", "fgrep", "shuf", "tac", "cat":
		default:
			return "", false
		}
	}
	args := argvOf(elems[0])
	if len(args) == 0 {
		return "", false
	}
	switch Base(args[0].Value) {
	case "ls", "echo", "printf", "compgen", "realpath", "readlink":
		for _, a := range args[1:] {
			if a.Pattern != "" {
				return a.Pattern, true
			}
		}
	case "find":
		var start, name string
		for i := 1; i < len(args); i++ {
			v := args[i].Value
			switch {
			case v == "-name" || v == "-iname":
				if i+1 < len(args) && name == "" {
					name = args[i+1].Value
				}
				i++
			case !strings.HasPrefix(v, "-") && start == "" && v != "(" && v != "!":
				start = v
			}
		}
		if start == "" {
			start = "."
		}
		if name == "" {
			name = "*"
		}
		return strings.TrimSuffix(start, "/") + "/" + name, true
	}
	return "", false
}
