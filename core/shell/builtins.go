package shell

import (
	"path"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// builtin handles the shell builtins.
func (w *walker) builtin(name string, args []Arg) {
	switch name {
	case "cd", "pushd":
		w.cd(name, args)
	case "popd":
		w.unknownCwd()
		w.problem("popd returns to a directory that is not known")
	case "eval":
		var b strings.Builder
		known := true
		for i, a := range args[1:] {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(a.Value)
			known = known && a.Known
		}
		w.shared("eval", b.String(), known)
		return
	case "trap":
		w.trap(args)
	case "source", ".":
		w.source(name, args)
		return
	case "alias":
		w.problem("alias changes what later commands run")
		for _, a := range args[1:] {
			if _, v, ok := strings.Cut(a.Value, "="); ok && v != "" {
				c := w.floorOnly("alias")
				if d := c.deeper("alias"); d != nil {
					d.inlineScript("alias", v, nil, false, true)
				}
			}
		}
	case "exec":
		r := (&optSpec{short: "cl", shortArg: "a"}).parse(args, 1)
		if r.bad != "" {
			w.cannotUnwrap("exec", args, "unknown option "+r.bad)
			return
		}
		if _, ok := r.flags["a"]; ok {
			w.problem("exec -a runs a command under another name")
		}
		if r.next < len(args) {
			w.unwrapTo("exec", args, r.next, nil)
			return
		}
		s := w.emit(args, KindBuiltin)
		s.Benign = true
		return
	case "command":
		r := (&optSpec{short: "pvV"}).parse(args, 1)
		if r.bad != "" {
			w.cannotUnwrap("command", args, "unknown option "+r.bad)
			return
		}
		_, v := r.flags["v"]
		_, vv := r.flags["V"]
		if v || vv || r.next >= len(args) {
			s := w.emit(args, KindBuiltin)
			s.Benign = true
			return
		}
		w.unwrapTo("command", args, r.next, nil)
		return
	case "builtin":
		if len(args) > 1 {
			if builtins[args[1].Value] == 0 && args[1].Value != "builtin" {
				w.problem("builtin %s is not a builtin", args[1].Value)
			}
			if c := w.deeper("builtin"); c != nil {
				c.builtin(args[1].Value, args[1:])
			}
			return
		}
	case "set":
		w.set(args)
	case "shopt":
		w.shopt(args)
	case "export", "declare", "typeset", "local", "readonly":
		w.declArgs(name, args)
	case "read":
		w.read(args)
	case "printf":
		w.printfV(args)
	case "getopts":
		w.problem("getopts")
		for _, a := range args[2:] {
			if isName(a.Value) {
				w.assigned(a.Value)
				w.setVar(a.Value, varVal{})
			}
		}
	case "mapfile", "readarray":
		w.problem("%s fills an array", name)
		for _, a := range args[1:] {
			if strings.ContainsRune(a.Value, '[') {
				w.codeInData(name, a.Value)
			}
		}
	case "wait":
		for i := 1; i+1 < len(args); i++ {
			if args[i].Value == "-p" || strings.HasPrefix(args[i].Value, "-") && strings.HasSuffix(args[i].Value, "p") {
				if w.plainName("wait -p", args[i+1].Value, args[i+1].Known) {
					w.assigned(args[i+1].Value)
					w.setVar(args[i+1].Value, varVal{})
				}
			}
		}
	case "unset":
		w.unset(args)
	case "shift":
		n := 1
		if len(args) > 1 {
			if !args[1].Known || !isDigits(args[1].Value) {
				w.posKnown = false
				w.problem("shift by a count that is not known")
				break
			}
			n, _ = strconv.Atoi(args[1].Value)
		}
		if w.posKnown && len(w.pos) > 0 {
			if n < len(w.pos) {
				w.pos = append([]string{w.pos[0]}, w.pos[1+n:]...)
			} else if n == len(w.pos)-1 {
				w.pos = w.pos[:1]
			}
			// shift beyond $# fails and changes nothing.
		}
	case "test", "[":
		ops := args[1:]
		for i := 0; i+1 < len(ops); i++ {
			if ops[i].Value == "-v" || ops[i].Value == "-R" {
				w.plainName("test -v", ops[i+1].Value, ops[i+1].Known)
			}
		}
	case "let":
		for _, a := range args[1:] {
			if a.Known {
				w.arithText(a.Value, 0)
			} else {
				w.problem("let of an expression that is not known")
			}
		}
	case "hash":
		for _, a := range args[1:] {
			if strings.HasPrefix(a.Value, "-") && strings.ContainsRune(a.Value, 'p') {
				w.problem("hash -p changes what a command name runs")
			}
		}
	case "enable":
		w.problem("enable changes which builtins exist")
	case "bind", "fc", "history", "complete", "compopt":
		w.problem("%s is not analysed", name)
	case "compgen":
		w.problem("compgen expands its arguments")
		for i, a := range args[1:] {
			v := a.Value
			if (v == "-W" || v == "-C" || v == "-X" || v == "-P" || v == "-S") && i+2 < len(args) {
				w.codeInData("compgen "+v, args[i+2].Value)
			}
			if v == "-v" || v == "-e" || (v == "-A" && i+2 < len(args) && (args[i+2].Value == "variable" || args[i+2].Value == "export")) {
				w.envDump("compgen " + v)
			}
		}
	}
	s := w.emit(args, KindBuiltin)
	s.Benign = benignBuiltins[name]
}

// cd changes the walker's working directory.
func (w *walker) cd(name string, args []Arg) {
	for i := 1; i < len(args); i++ {
		a := args[i]
		v := a.Value
		if !a.Known {
			w.unknownCwd()
			return
		}
		if v == "--" {
			if i+1 < len(args) {
				w.cdTo(args[i+1])
			} else {
				w.cdHome()
			}
			return
		}
		if len(v) > 1 && v[0] == '-' && strings.Trim(v[1:], "LPe@") == "" {
			continue
		}
		if name == "pushd" && len(v) > 1 && (v[0] == '+' || v[0] == '-') {
			w.unknownCwd()
			w.problem("pushd %s rotates a directory stack that is not known", v)
			return
		}
		w.cdTo(a)
		return
	}
	w.cdHome()
}

func (w *walker) cdHome() {
	if h, ok := w.lookup("HOME"); ok && h != "" {
		w.cwd, w.cwdRel = h, ""
		return
	}
	w.unknownCwd()
	w.problem("cd to a home directory that is not known")
}

func (w *walker) cdTo(a Arg) {
	switch {
	case a.Value == "-":
		w.unknownCwd()
		w.problem("cd - returns to a directory that is not known")
	case a.Pattern != "":
		w.unknownCwd()
		w.problem("cd to a glob")
	case a.Value == "":
		// bash: cd "" stays where it is.
	default:
		if v, ok := w.vars["CDPATH"]; ok && v.val != "" && !path.IsAbs(a.Value) && !strings.HasPrefix(a.Value, ".") {
			w.unknownCwd()
			w.problem("cd with CDPATH set")
			return
		}
		w.chdir(a.Value)
	}
}

// trap runs its action later, in this shell: the action is a hidden command.
func (w *walker) trap(args []Arg) {
	rest := args[1:]
	if len(rest) > 0 && rest[0].Value == "--" {
		rest = rest[1:]
	}
	if len(rest) < 2 {
		return // trap, trap -p, trap -l, trap SIG (reset)
	}
	act := rest[0]
	if !act.Known {
		w.problem("trap of a command that is not known")
		return
	}
	if act.Value == "-" || act.Value == "" || strings.HasPrefix(act.Value, "-") && (act.Value == "-p" || act.Value == "-l" || act.Value == "-P") {
		return
	}
	c := w.deeper("trap")
	if c == nil {
		return
	}
	c.hidden = true
	if c.origin == "" {
		c.origin = "trap"
	}
	c.varsOwned = w.varsOwned
	c.inlineScript("trap", act.Value, nil, false, true)
	w.vars, w.funcs, w.varsOwned = c.vars, c.funcs, c.varsOwned
}

// source reads a file into this shell: allowed only for a literal file of the project.
func (w *walker) source(name string, args []Arg) {
	if len(args) < 2 {
		w.problem("%s without a file", name)
		w.emit(args, KindBuiltin)
		return
	}
	a := args[1]
	if a.proc != nil {
		out, ok := w.evalSub(a.proc.Stmts)
		if ok {
			w.shared(name, out, true)
			return
		}
		w.problem("%s of a process substitution whose output is unknown", name)
		w.emit(args, KindBuiltin)
		return
	}
	s := w.emit(args, KindBuiltin)
	s.Reads = append(s.Reads[:len(s.Reads):len(s.Reads)], Read{Target: a.Value, Known: a.Known, Pattern: a.Pattern, Op: "source"})
	// Whatever the file sets (variables, functions, the directory) is not known afterwards.
	w.sh.opaque = true
	switch {
	case !a.Known || a.Pattern != "":
		w.problem("%s of a file that is not known", name)
	case !strings.ContainsRune(a.Value, '/'):
		w.problem("%s %s looks the file up on the PATH", name, a.Value)
	default:
		if w.runsWritten(name, a.Value, "", nil) {
			return
		}
		if !w.inProject(a.Value) {
			w.problem("%s of %s, a file outside the working directory", name, a.Value)
		}
	}
}

// inProject reports a path inside the working directory.
func (w *walker) inProject(p string) bool {
	if path.IsAbs(p) {
		return w.cwd != "" && w.cwd != "/" && strings.HasPrefix(path.Clean(p), w.cwd+"/")
	}
	c := path.Clean(p)
	return c != ".." && !strings.HasPrefix(c, "../")
}

// Options of set that keep the analysis exact.
func harmlessSetOption(o string) bool {
	switch o {
	case "allexport", "braceexpand", "emacs", "errexit", "errtrace", "functrace", "hashall", "histexpand",
		"history", "ignoreeof", "monitor", "noclobber", "noexec", "noglob", "nolog", "notify", "nounset",
		"onecmd", "physical", "pipefail", "verbose", "vi", "xtrace":
		return true
	}
	return false
}

func (w *walker) set(args []Arg) {
	if len(args) == 1 {
		w.envDump("set")
	}
	rest := args[1:]
	for len(rest) > 0 {
		a := rest[0]
		v := a.Value
		if !a.Known {
			w.problem("set of a value that is not known")
			rest = rest[1:]
			continue
		}
		if v == "--" || v == "-" || len(v) < 2 || v[0] != '-' && v[0] != '+' {
			break
		}
		if v[1:] == "o" {
			if len(rest) > 1 && !strings.HasPrefix(rest[1].Value, "-") && !strings.HasPrefix(rest[1].Value, "+") {
				o := rest[1].Value
				if !harmlessSetOption(o) {
					w.problem("set -o %s changes how the shell reads what follows", o)
				}
				if o == "allexport" && v[0] == '-' {
					w.an.EnvExported = true
					w.an.EnvExportedNames = append(w.an.EnvExportedNames, "*")
				}
				rest = rest[2:]
				continue
			}
			rest = rest[1:] // set -o: print the options
			continue
		}
		consumed := false
		for _, c := range v[1:] {
			switch c {
			case 'o':
				// A cluster with o (set -euo pipefail): the next word names the option.
				if len(rest) > 1 && !consumed {
					o := rest[1].Value
					if !harmlessSetOption(o) {
						w.problem("set -o %s changes how the shell reads what follows", o)
					}
					if o == "allexport" && v[0] == '-' {
						w.an.EnvExported = true
						w.an.EnvExportedNames = append(w.an.EnvExportedNames, "*")
					}
					consumed = true
				}
			case 'a':
				if v[0] == '-' {
					w.an.EnvExported = true
					w.an.EnvExportedNames = append(w.an.EnvExportedNames, "*")
				}
			case 'b', 'e', 'f', 'h', 'm', 'n', 'u', 'v', 'x', 'C', 'E', 'H', 'P', 'T', 't':
			case 'B':
				if v[0] == '+' {
					w.problem("set +B turns brace expansion off")
				}
			default:
				w.problem("set %c%c changes how the shell reads what follows", v[0], c)
			}
		}
		rest = rest[1:]
		if consumed {
			rest = rest[1:]
		}
	}
	// set -- a b c (or set a b c) replaces the positional parameters.
	if len(rest) == 0 && (len(args) < 2 || args[len(args)-1].Value != "--") {
		return
	}
	if len(rest) > 0 && (rest[0].Value == "--" || rest[0].Value == "-") {
		rest = rest[1:]
	}
	pos := []string{"sh"}
	if w.posKnown && len(w.pos) > 0 {
		pos[0] = w.pos[0]
	}
	known := true
	for _, a := range rest {
		pos = append(pos, a.Value)
		known = known && a.Known
	}
	w.pos, w.posKnown = pos, known
}

// Options of shopt that keep the analysis exact.
func harmlessShopt(o string) bool {
	switch o {
	case "nullglob", "failglob", "globstar", "nocaseglob", "nocasematch", "extglob", "dotglob",
		"inherit_errexit", "lastpipe", "checkwinsize", "globasciiranges", "cmdhist", "lithist", "histappend":
		return true
	}
	return false
}

func (w *walker) shopt(args []Arg) {
	set, opt := false, false
	for _, a := range args[1:] {
		v := a.Value
		if !a.Known {
			w.problem("shopt of a value that is not known")
			continue
		}
		if len(v) > 1 && v[0] == '-' {
			set = set || strings.ContainsAny(v, "su")
			opt = opt || strings.ContainsRune(v, 'o')
			if strings.ContainsRune(v, 's') && !strings.ContainsRune(v, 'q') {
				set = true
			}
			continue
		}
		if !set {
			continue
		}
		if opt {
			if !harmlessSetOption(v) {
				w.problem("shopt -o %s changes how the shell reads what follows", v)
			}
			continue
		}
		if !harmlessShopt(v) {
			w.problem("shopt %s changes how the shell reads what follows", v)
		}
		if v == "lastpipe" {
			w.sh.lastpipe = true
		}
	}
}

// declArgs is export, declare and friends reached as a builtin (builtin export, command
// declare): the words are already expanded.
func (w *walker) declArgs(variant string, args []Arg) {
	var opts []Arg
	for _, a := range args[1:] {
		if len(a.Value) > 1 && (a.Value[0] == '-' || a.Value[0] == '+') && !strings.ContainsRune(a.Value, '=') {
			opts = append(opts, a)
		}
	}
	flags := w.declFlags(variant, opts)
	names := 0
	for _, a := range args[1:] {
		v := a.Value
		if len(v) > 1 && (v[0] == '-' || v[0] == '+') && !strings.ContainsRune(v, '=') {
			continue
		}
		names++
		if n, val, ok := strings.Cut(v, "="); ok {
			if w.plainName(variant, n, a.Known) {
				w.assignVar(n, val, a.Known)
				w.exported(variant, n, opts)
			}
			continue
		}
		if w.plainName(variant, v, a.Known) {
			w.declName(variant, flags, v, opts)
		}
	}
	if names == 0 && !strings.ContainsAny(flags, "fF") {
		w.envDump(dumpForm(variant, flags))
	}
}

// read assigns what it reads to plain names: known when its input is.
func (w *walker) read(args []Arg) {
	raw := false
	delim := byte('\n')
	var names []string
	fromFd := false
	for i := 1; i < len(args); i++ {
		a := args[i]
		v := a.Value
		if !a.Known {
			w.problem("read with a word that is not known")
			continue
		}
		if len(names) == 0 && len(v) > 1 && v[0] == '-' && v != "--" {
			for j := 1; j < len(v); j++ {
				c := v[j]
				switch c {
				case 'r':
					raw = true
				case 's', 'e':
				case 'a', 'd', 'i', 'n', 'N', 'p', 't', 'u':
					arg := v[j+1:]
					if arg == "" && i+1 < len(args) {
						i++
						arg = args[i].Value
					}
					switch c {
					case 'a':
						w.problem("read -a fills an array")
						w.plainName("read -a", arg, true)
					case 'd':
						delim = 0
						if arg != "" {
							delim = arg[0]
						}
					case 'n', 'N':
						fromFd = true // a count of characters: not modelled
					case 'u':
						fromFd = true
					}
					j = len(v)
				default:
					w.problem("read -%c is not known", c)
				}
			}
			continue
		}
		if v == "--" && len(names) == 0 {
			continue
		}
		if w.plainName("read", v, true) {
			w.assigned(v)
			names = append(names, v)
		}
	}
	if len(names) == 0 {
		names = []string{"REPLY"}
	}
	text, kind := w.stdinText()
	if kind != stdinKnown || fromFd {
		for _, n := range names {
			w.setVar(n, varVal{})
		}
		return
	}
	line := text
	if i := strings.IndexByte(text, delim); i >= 0 {
		line = text[:i]
	}
	if !raw {
		var b strings.Builder
		for i := 0; i < len(line); i++ {
			if line[i] == '\\' && i+1 < len(line) {
				i++
			}
			b.WriteByte(line[i])
		}
		line = b.String()
	}
	ifs := w.ifs()
	if len(names) == 1 {
		w.setVar(names[0], varVal{val: strings.Trim(line, " \t\n"), known: true})
		if names[0] == "REPLY" {
			w.setVar("REPLY", varVal{val: line, known: true})
		}
		return
	}
	fields := strings.FieldsFunc(line, func(r rune) bool { return strings.ContainsRune(ifs, r) })
	for i, n := range names {
		val := ""
		switch {
		case i == len(names)-1 && i < len(fields):
			// The last name gets the rest of the line.
			rest := line
			for k := 0; k < i; k++ {
				rest = strings.TrimLeft(rest, ifs)
				if j := strings.IndexAny(rest, ifs); j >= 0 {
					rest = rest[j:]
				}
			}
			val = strings.Trim(rest, " \t\n")
		case i < len(fields):
			val = fields[i]
		}
		w.setVar(n, varVal{val: val, known: true})
	}
}

// printfV is printf -v NAME: an assignment of the formatted text.
func (w *walker) printfV(args []Arg) {
	if len(args) < 3 || args[1].Value != "-v" {
		return
	}
	name := args[2].Value
	if !w.plainName("printf -v", name, args[2].Known) {
		return
	}
	w.assigned(name)
	rest := args[3:]
	if len(rest) > 0 && rest[0].Value == "--" {
		rest = rest[1:]
	}
	known := len(rest) > 0
	for _, a := range rest {
		known = known && a.Known && a.Pattern == ""
	}
	if !known {
		w.setVar(name, varVal{})
		return
	}
	vals := make([]string, len(rest))
	for i, a := range rest {
		vals[i] = a.Value
	}
	out, exact := evalPrintf(vals[0], vals[1:])
	if !exact {
		w.problem("printf -v with a format that is not modelled exactly")
	}
	w.setVar(name, varVal{val: out, known: true})
}

func (w *walker) unset(args []Arg) {
	fn := false
	for _, a := range args[1:] {
		v := a.Value
		switch v {
		case "-f":
			fn = true
			continue
		case "-v":
			fn = false
			continue
		case "-n":
			w.problem("unset -n (a name reference)")
			continue
		case "--":
			continue
		}
		if !w.plainName("unset", v, a.Known) {
			continue
		}
		if fn {
			if _, ok := w.funcs[v]; ok {
				m := make(map[string]*syntax.Stmt, len(w.funcs))
				for k, b := range w.funcs {
					if k != v {
						m[k] = b
					}
				}
				w.funcs = m
			}
			continue
		}
		w.setVar(v, varVal{known: true, lit: true, unset: true})
	}
}
