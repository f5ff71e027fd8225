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
		w.popd(args)
	case "dirs":
		for _, a := range args[1:] {
			if a.Value == "-c" {
				w.dirs.stack, w.dirs.lost = nil, false
			}
		}
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
		w.mapfile(name, args)
	case "wait":
		w.sh.waited = w.sh.bg
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
		for i := 1; i < len(args); i++ {
			v := args[i].Value
			if strings.HasPrefix(v, "-") && strings.ContainsRune(v, 'p') {
				w.problem("hash -p changes what a command name runs")
				// hash -p PATH NAME…: NAME runs PATH from now on.
				if i+2 < len(args) {
					for _, n := range args[i+2:] {
						w.hash(n.Value, args[i+1].Value)
					}
				}
				break
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
	if a.proc != nil || fdPath(a.Value) >= 0 {
		// source <(…), source /dev/stdin <<< …: the script is on the command line.
		out, ok, found := w.fileText(a)
		if ok {
			w.shared(name, out, true)
			return
		}
		if found {
			w.problem("%s of a script from an input whose content is unknown", name)
			w.guessScripts(name)
			w.emit(args, KindBuiltin)
			return
		}
	}
	s := w.emit(args, KindBuiltin)
	s.Reads = append(s.Reads[:len(s.Reads):len(s.Reads)], Read{Target: a.Value, Known: a.Known, Pattern: a.Pattern, Op: "source"})
	// Whatever the file sets (variables, functions, the directory) is not known afterwards.
	w.sh.opaque = true
	switch {
	case !a.Known || a.Pattern != "":
		w.problem("%s of a file that is not known", name)
	case w.runsWritten(name, a.Value, "", nil):
		// A script the line wrote (bash finds a name without / in the working directory
		// when the PATH does not have it).
	case !strings.ContainsRune(a.Value, '/'):
		w.problem("%s %s looks the file up on the PATH", name, a.Value)
	default:
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
	case "nullglob", "failglob", "globstar", "nocaseglob", "nocasematch", "extglob",
		"inherit_errexit", "lastpipe", "checkwinsize", "globasciiranges", "cmdhist", "lithist", "histappend":
		return true
	}
	return false
}

func (w *walker) shopt(args []Arg) {
	set, opt, enable := false, false, false
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
			enable = enable || strings.ContainsRune(v, 's')
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
		switch {
		case v == "dotglob":
			if enable {
				w.an.GlobsMatchHidden = true
				w.problem("shopt -s dotglob makes globs match hidden files (keys, .env, configuration)")
			}
		case !harmlessShopt(v):
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
			w.quotedCompound(variant, val)
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
	arrName := ""
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
						if w.plainName("read -a", arg, true) {
							w.assigned(arg)
							arrName = arg
						}
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
	if len(names) == 0 && arrName == "" {
		names = []string{"REPLY"}
	}
	text, kind := w.stdinText()
	if kind != stdinKnown || fromFd {
		for _, n := range names {
			w.setVar(n, varVal{})
		}
		if arrName != "" {
			w.fillArray(arrName, nil, false)
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
	isSep := func(r rune) bool { return strings.ContainsRune(ifs, r) }
	if arrName != "" {
		w.fillArray(arrName, strings.FieldsFunc(line, isSep), true)
		return
	}
	blanks := ""
	for _, c := range " \t\n" {
		if strings.ContainsRune(ifs, c) {
			blanks += string(c)
		}
	}
	if len(names) == 1 {
		w.setVar(names[0], varVal{val: strings.Trim(line, blanks), known: true})
		if names[0] == "REPLY" {
			w.setVar("REPLY", varVal{val: line, known: true})
		}
		return
	}
	fields := strings.FieldsFunc(line, isSep)
	for i, n := range names {
		val := ""
		switch {
		case i == len(names)-1 && i < len(fields):
			// The last name gets the rest of the line, after the separator that ends the
			// field before it.
			rest := line
			for k := 0; k < i; k++ {
				rest = strings.TrimLeft(rest, blanks)
				if j := strings.IndexAny(rest, ifs); j >= 0 {
					rest = strings.TrimLeft(rest[j:], blanks)
					if rest != "" && strings.IndexByte(ifs, rest[0]) >= 0 {
						rest = rest[1:]
					}
				}
			}
			val = strings.Trim(rest, blanks)
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

// mapfile fills an array with the lines of its input, and runs its -C callback (through eval,
// with the index and the line appended) every -c lines: the floor reads the callback.
func (w *walker) mapfile(name string, args []Arg) {
	delim := "\n"
	trim := false
	callback, quantum := "", 5000
	hasCallback, fromFd := false, false
	arr := "MAPFILE"
	for i := 1; i < len(args); i++ {
		v := args[i].Value
		if !strings.HasPrefix(v, "-") || len(v) < 2 {
			if strings.ContainsRune(v, '[') {
				w.codeInData(name, v)
			}
			if w.plainName(name, v, args[i].Known) {
				arr = v
			}
			continue
		}
		for j := 1; j < len(v); j++ {
			c := v[j]
			if c == 't' {
				trim = true
				continue
			}
			if strings.IndexByte("dnOscuC", c) < 0 {
				w.problem("%s -%c is not known", name, c)
				continue
			}
			val := v[j+1:]
			if val == "" && i+1 < len(args) {
				i++
				val = args[i].Value
			}
			switch c {
			case 'd':
				delim = val
				if delim == "" {
					delim = "\x00"
				}
				delim = delim[:1]
			case 'C':
				callback, hasCallback = val, true
			case 'c':
				if n, err := strconv.Atoi(val); err == nil && n > 0 {
					quantum = n
				}
			case 'u':
				fromFd = true
			}
			break
		}
	}
	text, kind := w.stdinText()
	known := kind == stdinKnown && !fromFd
	var lines []string
	if known && text != "" {
		lines = strings.SplitAfter(text, delim)
		if lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		if trim {
			for i, l := range lines {
				lines[i] = strings.TrimSuffix(l, delim)
			}
		}
	}
	w.assigned(arr)
	w.fillArray(arr, lines, known)
	if !hasCallback {
		return
	}
	// The callback runs as eval "CALLBACK INDEX LINE": whatever it holds runs.
	calls := 0
	for i := quantum - 1; i < len(lines) && calls < maxLoopItems; i += quantum {
		w.floorScript(name+" -C", callback+" "+strconv.Itoa(i)+" "+quote(lines[i]))
		calls++
	}
	if calls == 0 {
		w.floorScript(name+" -C", callback)
	}
}

// hash makes name run file (hash -p, BASH_CMDS[name]=file).
func (w *walker) hash(name, file string) {
	m := make(map[string]string, len(w.hashed)+1)
	for k, v := range w.hashed {
		m[k] = v
	}
	m[name] = file
	w.hashed = m
}
