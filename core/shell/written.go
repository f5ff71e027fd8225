package shell

import (
	"path"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// A script written and then run in the same command line is seen by the floor: the files a
// command line writes through redirections and tee are remembered with their content when it
// can be worked out, and running one of them (bash FILE, source FILE, ./FILE, python FILE)
// hands that content to the floor and makes the analysis not-ok.

// writtenText is what the command line wrote to a file.
type writtenText struct {
	text  string
	known bool
}

// writtenKey is the key a written file is remembered by: its absolute path, or the path as
// written when the working directory is not known.
func (w *walker) writtenKey(p string) string {
	if path.IsAbs(p) {
		return path.Clean(p)
	}
	if w.cwd == "" {
		return "?/" + path.Clean(p)
	}
	return path.Join(w.cwd, p)
}

func (w *walker) remember(p, text string, known, appendTo bool) {
	if w.sh.written == nil {
		w.sh.written = map[string]writtenText{}
	}
	k := w.writtenKey(p)
	if old, ok := w.sh.written[k]; ok && appendTo {
		text, known = old.text+text, old.known && known
	}
	if len(text) > maxValue {
		text, known = text[:maxValue], false
	}
	w.sh.written[k] = writtenText{text: text, known: known}
}

// writtenFile returns what the command line wrote to p before: the text, whether it is
// known, and whether p was written at all.
func (w *walker) writtenFile(p string) (string, bool, bool) {
	t, ok := w.sh.written[w.writtenKey(p)]
	return t.text, t.known, ok
}

// recordWritten remembers the files a statement writes its standard output to.
func (w *walker) recordWritten(s *syntax.Stmt) {
	var inputs []*syntax.Redirect
	type out struct {
		target string
		app    bool
	}
	var outs []out
	for _, r := range s.Redirs {
		fd := ""
		if r.N != nil {
			fd = r.N.Value
		}
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll:
			if fd != "" && fd != "1" {
				continue
			}
			t, ok := w.wordString(r.Word)
			if !ok || harmlessWrite(path.Clean(t)) || isNetwork(path.Clean(t)) {
				continue
			}
			outs = append(outs, out{t, r.Op == syntax.AppOut || r.Op == syntax.AppAll})
		case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc, syntax.RdrIn:
			inputs = append(inputs, r)
		}
	}
	if len(outs) == 0 {
		return
	}
	bare := *s
	bare.Redirs = inputs
	c := w.sub()
	c.judged = false // the evaluation only computes; the walk reports
	text, known := c.evalStmt(&bare, w.stdin)
	for _, o := range outs {
		w.remember(o.target, text, known, o.app)
	}
}

// teeWrites remembers the files tee writes its input to.
func (w *walker) teeWrites(args []Arg) {
	app := false
	var files []Arg
	for _, a := range args[1:] {
		switch {
		case a.Value == "-a" || a.Value == "--append":
			app = true
		case len(a.Value) > 1 && a.Value[0] == '-':
		default:
			files = append(files, a)
		}
	}
	if len(files) == 0 {
		return
	}
	text, kind := w.stdinText()
	for _, f := range files {
		if f.Known && f.Pattern == "" {
			w.remember(f.Value, text, kind == stdinKnown, app)
		}
	}
}

// runsWritten looks at a file run as a script: when the command line wrote it, the floor
// reads what was written, and the analysis is not-ok. lang is the interpreter ("" for a
// shell). It reports whether the file was written by the command line.
func (w *walker) runsWritten(label, file, lang string, pos []string) bool {
	text, known, ok := w.writtenFile(file)
	if !ok {
		return false
	}
	if !known {
		w.problem("%s runs %s, written by the same command line with content that is not known", label, file)
		return true
	}
	w.problem("%s runs %s, written by the same command line", label, file)
	c := w.floorOnly(label + " " + file)
	if lang != "" {
		c.interpCode(lang, text, 0)
		return true
	}
	if d := c.deeper(label); d != nil {
		d.inlineScript(label, text, pos, true, true)
	}
	return true
}

// toolWrites remembers the files curl, wget, cp, mv and install write: their content is not
// known (cp of a file the command line wrote copies what it wrote).
func (w *walker) toolWrites(base string, args []Arg) {
	var ops []Arg
	for i := 1; i < len(args); i++ {
		a := args[i]
		v := a.Value
		switch {
		case (base == "curl" && (v == "-o" || v == "--output")) || (base == "wget" && (v == "-O" || v == "--output-document")):
			if i+1 < len(args) && args[i+1].Known {
				i++
				w.remember(args[i].Value, "", false, false)
			}
		case base == "curl" && strings.HasPrefix(v, "--output="), base == "wget" && strings.HasPrefix(v, "--output-document="):
			_, f, _ := strings.Cut(v, "=")
			w.remember(f, "", false, false)
		case base == "curl" && strings.HasPrefix(v, "-o") && len(v) > 2:
			w.remember(v[2:], "", false, false)
		case strings.HasPrefix(v, "-"):
			if base != "curl" && base != "wget" && (v == "-t" || v == "--target-directory" || v == "-S" || v == "--suffix" || v == "-m" || v == "-o" || v == "-g") {
				i++
			}
		default:
			ops = append(ops, a)
		}
	}
	if base == "curl" || base == "wget" || len(ops) < 2 {
		return
	}
	dst := ops[len(ops)-1]
	if !dst.Known || dst.Pattern != "" {
		return
	}
	if base == "ln" {
		return // links are the floor's business
	}
	text, known, _ := w.writtenFile(ops[0].Value)
	if len(ops) == 2 {
		w.remember(dst.Value, text, known, false)
		if _, _, ok := w.writtenFile(ops[0].Value); ok {
			w.remember(path.Join(dst.Value, path.Base(ops[0].Value)), text, known, false)
		}
	}
}

// links records the symbolic links, hard links and device nodes ln, cp -s and mknod make.
func (w *walker) links(base string, args []Arg) {
	abs := func(p string) string {
		if path.IsAbs(p) {
			return path.Clean(p)
		}
		if w.cwd == "" {
			return ""
		}
		return path.Join(w.cwd, p)
	}
	add := func(link, target string) {
		if link != "" && target != "" && len(w.an.Links) < 64 {
			w.an.Links = append(w.an.Links, Link{Path: link, Target: target})
		}
	}
	if base == "mknod" {
		// mknod NAME b MAJOR MINOR: a block device under another name.
		var ops []Arg
		for i := 1; i < len(args); i++ {
			v := args[i].Value
			if v == "-m" || v == "--mode" || v == "-Z" || v == "--context" {
				i++
				continue
			}
			if !strings.HasPrefix(v, "-") {
				ops = append(ops, args[i])
			}
		}
		if len(ops) == 4 && (ops[1].Value == "b" || ops[1].Value == "c" || ops[1].Value == "u") {
			kind := "block"
			if ops[1].Value != "b" {
				kind = "char"
			}
			add(abs(ops[0].Value), "/dev/"+kind+"/"+ops[2].Value+":"+ops[3].Value)
		}
		return
	}
	symbolic := false
	dir := ""
	noTargetDir := false
	var ops []Arg
	for i := 1; i < len(args); i++ {
		a := args[i]
		v := a.Value
		switch {
		case v == "--":
			ops = append(ops, args[i+1:]...)
			i = len(args)
		case v == "-t" || v == "--target-directory":
			if i+1 < len(args) {
				i++
				dir = args[i].Value
			}
		case strings.HasPrefix(v, "--target-directory="):
			dir = v[len("--target-directory="):]
		case v == "-T" || v == "--no-target-directory":
			noTargetDir = true
		case v == "--symbolic" || v == "--symbolic-link":
			symbolic = true
		case v == "-S" || v == "--suffix":
			i++
		case strings.HasPrefix(v, "--"):
		case strings.HasPrefix(v, "-") && len(v) > 1:
			if strings.ContainsRune(v, 's') {
				symbolic = true
			}
		default:
			ops = append(ops, a)
		}
	}
	if base == "cp" && !symbolic {
		return
	}
	if len(ops) == 0 {
		return
	}
	for _, o := range ops {
		if !o.Known || o.Pattern != "" {
			return
		}
	}
	linkTo := func(target, link string) {
		l := abs(link)
		if l == "" {
			return
		}
		t := target
		if !path.IsAbs(t) {
			if symbolic && base == "ln" {
				t = path.Join(path.Dir(l), t) // a relative symlink is relative to its directory
			} else {
				t = abs(t)
			}
		}
		add(l, path.Clean(t))
	}
	switch {
	case dir != "":
		for _, o := range ops {
			linkTo(o.Value, path.Join(dir, path.Base(o.Value)))
		}
	case len(ops) == 1:
		linkTo(ops[0].Value, path.Base(ops[0].Value))
	case len(ops) == 2 && (noTargetDir || !strings.HasSuffix(ops[1].Value, "/")):
		linkTo(ops[0].Value, ops[1].Value)
		// ln -s T DIR makes DIR/T when DIR exists; either may be what happens.
		linkTo(ops[0].Value, path.Join(ops[1].Value, path.Base(ops[0].Value)))
	default:
		last := ops[len(ops)-1].Value
		for _, o := range ops[:len(ops)-1] {
			linkTo(o.Value, path.Join(last, path.Base(o.Value)))
		}
	}
}

// pipeGuesses are what an upstream command whose output is unknown may well print, for the
// floor only: the words it was given (echo /* prints the names a glob matches, printf its
// arguments), their join, and the string literals of an interpreter's program (python -c
// 'print("…")'). Generated text piped into a shell or xargs is then seen by the floor.
func (w *walker) pipeGuesses() [][]Arg {
	st := w.stdin
	if st.kind != stdinPipe {
		return nil
	}
	c := w.floorOnly("pipe")
	var out [][]Arg
	add := func(args []Arg) {
		if len(args) < 2 || len(out) >= 8 {
			return
		}
		lang := interpreter(Base(args[0].Value), args)
		switch Base(args[0].Value) {
		case "echo", "printf", "yes", "ls", "print":
		default:
			if lang == "" {
				return // only the commands that print what they are given
			}
		}
		var words []Arg
		for _, a := range args[1:] {
			if a.Known && !strings.HasPrefix(a.Value, "-") {
				words = append(words, a)
			}
		}
		if len(words) > 0 && lang == "" {
			out = append(out, words)
		}
		if lang != "" {
			if code, ok, _ := extractCode(lang, args); ok {
				for _, t := range tokenizeCode(code) {
					if t.kind == 's' && t.s != "" && len(out) < 8 {
						out = append(out, []Arg{lit(t.s)})
					}
				}
			}
		}
	}
	for _, fc := range st.fsrc {
		if !w.step() {
			return out
		}
		add(fc.args)
	}
	for _, s := range st.src {
		if !w.step() {
			return out
		}
		syntax.Walk(s, func(n syntax.Node) bool {
			if call, ok := n.(*syntax.CallExpr); ok && len(call.Args) > 0 {
				add(c.expandWords(call.Args, nil))
			}
			return len(out) < 8
		})
	}
	return out
}

// guessScripts hands the floor what a shell reading an unknown pipe may be running.
func (w *walker) guessScripts(label string) {
	for _, words := range w.pipeGuesses() {
		var b strings.Builder
		for i, a := range words {
			if i > 0 {
				b.WriteByte(' ')
			}
			if a.Pattern != "" {
				b.WriteString(a.Pattern)
			} else {
				b.WriteString(a.Value)
			}
		}
		w.floorScript(label+" (guessed input)", b.String())
	}
}

// fdInput is a here-document or here-string given on a descriptor other than 0.
type fdInput struct {
	fd int
	in stdinState
}

// fdText records the text of a here-document on descriptor fd (3<<< …).
func (w *walker) fdText(fd string, st stdinState) {
	n, err := strconv.Atoi(fd)
	if err != nil {
		return
	}
	w.fds = append(w.fds[:len(w.fds):len(w.fds)], fdInput{fd: n, in: st})
}

// fdPath reads /dev/fd/N, /proc/self/fd/N and /dev/stdin-like names: the descriptor, or -1.
func fdPath(p string) int {
	switch {
	case isStdinPath(p):
		return 0
	case strings.HasPrefix(p, "/dev/fd/"):
		p = p[len("/dev/fd/"):]
	case strings.HasPrefix(p, "/proc/self/fd/"):
		p = p[len("/proc/self/fd/"):]
	default:
		return -1
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		return -1
	}
	return n
}

// fileText is the content of a file a command reads when the command line itself provides it:
// a process substitution (<(…)), the standard input or another descriptor given a
// here-document, or a file the line wrote. found is false for any other file; known says
// whether the content was worked out.
func (w *walker) fileText(a Arg) (text string, known, found bool) {
	if a.proc != nil {
		out, ok := w.evalSub(a.proc.Stmts)
		return out, ok, true
	}
	if !a.Known {
		return "", false, false
	}
	if n := fdPath(a.Value); n >= 0 {
		if n == 0 {
			t, kind := w.stdinText()
			return t, kind == stdinKnown, kind != stdinInherit
		}
		for i := len(w.fds) - 1; i >= 0; i-- {
			if w.fds[i].fd == n {
				return w.fds[i].in.text, w.fds[i].in.kind == stdinKnown, true
			}
		}
		return "", false, true // a descriptor the line opened on something not known
	}
	return w.writtenFile(a.Value)
}

// coproc handles coproc [NAME] CMD: NAME holds the descriptors to read CMD's output from and to
// write its input to. When CMD is a shell or an interpreter reading its standard input, what the
// line writes to it is a script (coproc bash; echo 'cmd' >&"${COPROC[1]}").
func (w *walker) coproc(c *syntax.CoprocClause) {
	name := "COPROC"
	if c.Name != nil {
		if v, ok := staticWord(c.Name); ok && isName(v) {
			name = v
		}
	}
	st := c.Stmt
	if b, ok := st.Cmd.(*syntax.Block); ok && len(b.Stmts) == 1 {
		st = b.Stmts[0]
	}
	out, in := "63", "60"
	w.assigned(name)
	w.setVar(name, varVal{known: true}.array([]string{out, in}, nil))
	argv, ok := stmtArgv(st)
	if !ok || len(argv) == 0 {
		return
	}
	base := Base(argv[0])
	reads := isShell(base) && !contains(argv[1:], "-c")
	if lang := interpreter(base, nil); lang != "" {
		reads = true
	}
	if !reads {
		return
	}
	if w.sh.coprocs == nil {
		w.sh.coprocs = map[string]string{}
	}
	w.sh.coprocs[in] = base
}

// intoCoproc hands the floor what a statement writes to a coprocess that runs it.
func (w *walker) intoCoproc(s *syntax.Stmt) {
	var label string
	for _, r := range s.Redirs {
		if r.Op != syntax.DplOut || r.N != nil && r.N.Value != "1" {
			continue
		}
		t, ok := w.wordString(r.Word)
		if l, found := w.sh.coprocs[t]; ok && found {
			label = l
		}
	}
	if label == "" || s.Cmd == nil {
		return
	}
	bare := *s
	bare.Redirs = nil
	c := w.sub()
	c.judged = false
	text, known := c.evalStmt(&bare, w.stdin)
	if !known {
		w.problem("a coprocess %s runs what the line writes to it", label)
		return
	}
	w.problem("a coprocess %s runs what the line writes to it", label)
	w.floorScript("coproc "+label, text)
}
