package shell

import (
	"strings"
)

// maybeInterpreter is a cheap first check for interpreter.
func maybeInterpreter(base string) bool {
	if base == "" {
		return false
	}
	switch base[0] {
	case 'p', 'r', 'j', 'n', 'd', 'l', 'a', 'g', 'm', 'o':
		return true
	}
	return false
}

// interpreter names the language of an interpreter command ("" when base is not one).
func interpreter(base string, args []Arg) string {
	switch {
	case versioned(base, "python") || versioned(base, "pypy") || versioned(base, "pypy3"):
		return "python"
	case versioned(base, "perl"):
		return "perl"
	case versioned(base, "ruby") || base == "jruby":
		return "ruby"
	case base == "node" || base == "nodejs":
		return "javascript"
	case base == "deno":
		if len(args) > 1 && args[1].Value == "eval" {
			return "javascript"
		}
		if args == nil {
			return "javascript"
		}
	case versioned(base, "php"):
		return "php"
	case versioned(base, "lua") || base == "luajit":
		return "lua"
	case base == "awk" || base == "gawk" || base == "mawk" || base == "nawk":
		return "awk"
	case base == "rscript":
		return "r"
	case base == "osascript":
		return "applescript"
	case base == "julia":
		return "julia"
	}
	return ""
}

// versioned matches name, name3, name3.12, name-3.12.
func versioned(base, name string) bool {
	if !strings.HasPrefix(base, name) {
		return false
	}
	rest := strings.TrimPrefix(base[len(name):], "-")
	for i := 0; i < len(rest); i++ {
		if !(rest[i] >= '0' && rest[i] <= '9' || rest[i] == '.') {
			return false
		}
	}
	return true
}

// interpreter records an interpreter command and looks inside its inline program for the
// shell commands and recursive deletes it would run.
func (w *walker) interpreter(lang string, args []Arg) {
	code, hasCode, hasFile := extractCode(lang, args)
	if !hasCode && !hasFile {
		text, kind := w.stdinText()
		switch kind {
		case stdinKnown:
			code, hasCode = text, true
		case stdinPipe:
			w.problem("%s runs a program piped in from a command whose output is unknown", Base(args[0].Value))
			for _, words := range w.pipeGuesses() {
				for _, a := range words {
					w.floorOnly(lang).interpCode(lang, a.Value, 0)
				}
			}
		}
	}
	s := w.emit(args, KindCommand)
	if hasFile {
		for _, a := range args[1:] {
			if !strings.HasPrefix(a.Value, "-") && w.runsWritten(Base(args[0].Value), a.Value, lang, nil) {
				break
			}
		}
	}
	if !hasCode {
		return
	}
	s.Lang, s.Code = lang, code
	if codeForkBomb(code) {
		w.an.ForkBombs = append(w.an.ForkBombs, "an endless loop in "+lang+" code forks")
	}
	var vars map[string]string
	if lang == "awk" {
		vars = awkVars(args)
	}
	w.interpCodeVars(lang, code, 0, vars)
}

// awkVars are the variables awk's -v and --assign options and NAME=value operands set.
func awkVars(args []Arg) map[string]string {
	vars := map[string]string{}
	set := func(kv string) {
		if k, v, ok := strings.Cut(kv, "="); ok && isName(k) {
			vars[k] = v
		}
	}
	for i := 1; i < len(args); i++ {
		v := args[i].Value
		switch {
		case v == "-v" || v == "--assign":
			if i+1 < len(args) {
				i++
				set(args[i].Value)
			}
		case strings.HasPrefix(v, "-v"):
			set(v[2:])
		case strings.HasPrefix(v, "--assign="):
			set(v[len("--assign="):])
		case !strings.HasPrefix(v, "-") && isAssignment(v):
			set(v)
		}
	}
	return vars
}

// forkCall names the calls of scripting languages that start a process and return at once.
func forkCall(name string) bool {
	if i := strings.LastIndexAny(name, ".:"); i >= 0 {
		name = name[i+1:]
	}
	switch name {
	case "fork", "forkpty", "pcntl_fork", "spawn", "Popen", "posix_spawn", "posix_spawnp",
		"create_subprocess_exec", "create_subprocess_shell", "fork_exec":
		return true
	}
	return false
}

// codeForkBomb spots the fork bombs of scripting languages: a fork in a loop that never ends
// on its own (perl 'fork while fork', python 'while True: os.fork()', ruby 'loop { fork }',
// node 'for(;;) child_process.fork(…)'). Code that merely mentions fork and while is not one.
func codeForkBomb(code string) bool {
	if !strings.Contains(code, "fork") && !strings.Contains(code, "spawn") && !strings.Contains(code, "Popen") {
		return false
	}
	toks := tokenizeCode(code)
	hasFork := func(ts []codeTok) bool {
		fork := false
		for _, t := range ts {
			if t.kind != 'i' {
				continue
			}
			switch t.s {
			case "break", "return", "exit", "last", "die", "raise", "throw", "sys.exit", "os._exit", "process.exit":
				return false // the loop ends
			}
			if forkCall(t.s) {
				fork = true
			}
		}
		return fork
	}
	always := func(cond []codeTok, until bool) bool {
		if hasFork(cond) {
			return !until
		}
		n := 0
		for _, t := range cond {
			if t.kind == 'p' && (t.s == "(" || t.s == ")") {
				continue
			}
			n++
			switch t.s {
			case "true", "True", "TRUE", "1":
				if until {
					return false
				}
			case "false", "False", "FALSE", "0", "nil", "None":
				if !until {
					return false
				}
			default:
				return false
			}
		}
		return n > 0
	}
	// matching returns the index just after the bracket closing the one at i.
	matching := func(i int) int {
		open := toks[i].s
		closeTok := map[string]string{"(": ")", "{": "}", "[": "]"}[open]
		depth := 0
		for j := i; j < len(toks); j++ {
			if toks[j].kind != 'p' {
				continue
			}
			switch toks[j].s {
			case open:
				depth++
			case closeTok:
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(toks)
	}
	// body reads the statement or block from i.
	body := func(i int) []codeTok {
		if i >= len(toks) {
			return nil
		}
		if toks[i].kind == 'p' && toks[i].s == "{" {
			return toks[i:matching(i)]
		}
		if toks[i].kind == 'i' && toks[i].s == "do" {
			for j := i; j < len(toks); j++ {
				if toks[j].kind == 'i' && toks[j].s == "end" {
					return toks[i:j]
				}
			}
			return toks[i:]
		}
		if toks[i].kind == 'p' && toks[i].s == ":" {
			return toks[i:] // python: the indented block, as far as a one-liner goes
		}
		j := i
		for j < len(toks) && !(toks[j].kind == 'p' && toks[j].s == ";") {
			j++
		}
		return toks[i:j]
	}
	for i, t := range toks {
		if t.kind != 'i' {
			continue
		}
		switch t.s {
		case "while", "until":
			until := t.s == "until"
			// A statement modifier: STMT while COND.
			start := i
			for start > 0 && !(toks[start-1].kind == 'p' && (toks[start-1].s == ";" || toks[start-1].s == "{" || toks[start-1].s == "}")) {
				start--
			}
			end := i + 1
			for end < len(toks) && !(toks[end].kind == 'p' && (toks[end].s == ";" || toks[end].s == "}")) {
				end++
			}
			if start < i && hasFork(toks[start:i]) && always(toks[i+1:end], until) {
				return true
			}
			// A loop: while (COND) BODY, while COND: BODY, while COND do BODY end.
			var cond []codeTok
			j := i + 1
			if j < len(toks) && toks[j].kind == 'p' && toks[j].s == "(" {
				k := matching(j)
				cond, j = toks[j:k], k
			} else {
				k := j
				for k < len(toks) && !(toks[k].kind == 'p' && (toks[k].s == ":" || toks[k].s == "{" || toks[k].s == ";")) &&
					!(toks[k].kind == 'i' && toks[k].s == "do") {
					k++
				}
				cond, j = toks[j:k], k
			}
			if always(cond, until) && hasFork(body(j)) {
				return true
			}
		case "loop":
			if hasFork(body(i + 1)) {
				return true
			}
		case "for":
			j := i + 1
			if j < len(toks) && toks[j].kind == 'p' && toks[j].s == "(" {
				k := matching(j)
				inner := toks[j+1 : max(k-1, j+1)]
				semis, condToks := 0, 0
				for _, x := range inner {
					if x.kind == 'p' && x.s == ";" {
						semis++
					} else if semis == 1 {
						condToks++
					}
				}
				if semis == 2 && condToks == 0 && hasFork(body(k)) {
					return true
				}
			}
		}
	}
	return false
}

// extractCode finds the inline program of an interpreter command line.
func extractCode(lang string, args []Arg) (code string, hasCode, hasFile bool) {
	var codes []string
	add := func(s string) { codes = append(codes, s) }
	// flagsWithArg take an argument (attached or the next word); codeFlags introduce code.
	var flagsWithArg, codeFlags string
	var longCode []string
	switch lang {
	case "python":
		flagsWithArg, codeFlags = "WXm", "c"
	case "perl":
		flagsWithArg, codeFlags = "IMmxilF0Cd", "eE"
	case "ruby":
		flagsWithArg, codeFlags = "rICEFiKxW0T", "e"
	case "javascript":
		flagsWithArg, codeFlags = "r", "ep"
		longCode = []string{"--eval", "--print"}
		if len(args) > 1 && args[1].Value == "eval" {
			// deno eval [options] CODE
			for _, a := range args[2:] {
				if !strings.HasPrefix(a.Value, "-") {
					return a.Value, true, false
				}
			}
			return "", false, false
		}
	case "php":
		flagsWithArg, codeFlags = "dcfzt", "rBRE"
	case "lua":
		flagsWithArg, codeFlags = "l", "e"
	case "r", "applescript":
		flagsWithArg, codeFlags = "l", "e"
	case "julia":
		flagsWithArg, codeFlags = "LJp", "eE"
	case "awk":
		return awkProgram(args)
	}
	for i := 1; i < len(args); i++ {
		v := args[i].Value
		if v == "--" || v == "-" {
			break
		}
		if strings.HasPrefix(v, "--") {
			name, val, hasVal := strings.Cut(v, "=")
			if hasName(longCode, name) {
				if hasVal {
					add(val)
				} else if i+1 < len(args) {
					i++
					add(args[i].Value)
				}
			}
			if name == "--require" || name == "--import" || name == "--input-type" && !hasVal {
				i++
			}
			continue
		}
		if !strings.HasPrefix(v, "-") || len(v) < 2 {
			if len(codes) == 0 {
				hasFile = true
			}
			break
		}
		if lang == "python" && v == "-m" {
			hasFile = true
			break
		}
	cluster:
		for j := 1; j < len(v); j++ {
			c := v[j]
			switch {
			case strings.IndexByte(codeFlags, c) >= 0:
				if rest := v[j+1:]; rest != "" {
					add(rest)
				} else if i+1 < len(args) {
					i++
					add(args[i].Value)
				}
				break cluster
			case lang == "perl" && (c == 'l' || c == '0' || c == 'C'):
				// Optional attached digits, then more flags (-le, -0777ne).
				for j+1 < len(v) && v[j+1] >= '0' && v[j+1] <= '9' {
					j++
				}
			case strings.IndexByte(flagsWithArg, c) >= 0:
				if j+1 == len(v) && (lang == "python" || lang == "javascript" || lang == "lua" || lang == "php" || c == 'I' || c == 'r') {
					i++
				}
				if lang == "python" && c == 'm' {
					hasFile = true
				}
				break cluster
			}
		}
		if hasFile {
			break
		}
	}
	if len(codes) == 0 {
		return "", false, hasFile
	}
	return strings.Join(codes, "\n"), true, false
}

func awkProgram(args []Arg) (string, bool, bool) {
	for i := 1; i < len(args); i++ {
		v := args[i].Value
		switch {
		case v == "--":
			if i+1 < len(args) {
				return args[i+1].Value, true, false
			}
			return "", false, false
		case v == "-f" || strings.HasPrefix(v, "--file"):
			return "", false, true
		case v == "-e" || v == "--source":
			if i+1 < len(args) {
				return args[i+1].Value, true, false
			}
		case strings.HasPrefix(v, "--source="):
			return v[len("--source="):], true, false
		case v == "-F" || v == "-v" || v == "--field-separator" || v == "--assign":
			i++
		case strings.HasPrefix(v, "-") && len(v) > 1:
		default:
			return v, true, false
		}
	}
	return "", false, false
}

// Calls in interpreter code that run a shell command line or an argv.
func execCall(name string) bool {
	switch name {
	case "system", "popen", "popen2", "popen3", "popen4", "exec", "execl", "execle", "execlp", "execlpe",
		"execv", "execve", "execvp", "execvpe", "spawn", "spawnl", "spawnlp", "spawnv", "spawnvp", "spawnSync",
		"execSync", "execFile", "execFileSync", "run", "call", "check_call", "check_output", "getoutput",
		"getstatusoutput", "Popen", "shell_exec", "passthru", "proc_open", "capture2", "capture2e", "capture3",
		"pipeline", "execute", "system2", "posix_spawn", "posix_spawnp", "create_subprocess_shell",
		"create_subprocess_exec", "spawn_sync", "execa", "execaSync", "execaCommand", "execaCommandSync", "sh", "bash":
		return true
	}
	return false
}

// argvCall reports the calls that take a program and its arguments, not a command line.
func argvCall(name string) bool {
	return strings.HasPrefix(name, "execl") || strings.HasPrefix(name, "execv") || strings.HasPrefix(name, "execFile") ||
		strings.HasPrefix(name, "posix_spawn") || name == "spawnl" || name == "spawnlp" || name == "spawnv" ||
		name == "spawnvp" || name == "create_subprocess_exec"
}

// Calls that delete a directory tree.
func deleteCall(name string) bool {
	switch name {
	case "rmtree", "rm_rf", "rm_r", "remove_tree", "rmSync", "rmdirSync", "rimraf", "removeSync",
		"remove_dir", "remove_entry", "remove_entry_secure", "rm", "rmdir", "emptyDirSync", "remove":
		return true
	}
	return false
}

// Calls whose argument is code of the same language.
func codeEvalCall(lang, name string, dotted bool) bool {
	if dotted {
		return false
	}
	switch name {
	case "eval", "instance_eval", "class_eval":
		return true
	case "exec", "compile":
		return lang == "python"
	}
	return false
}

type codeTok struct {
	kind byte // 'i' identifier (dotted), 's' string, 'b' command string (backticks, qx, %x), 'p' punctuation
	s    string
}

// tokenizeCode splits a one-liner of a C-like scripting language into identifiers, strings and
// punctuation. It is deliberately forgiving: the goal is to find string literals handed to
// system()-like calls, not to parse the language.
func tokenizeCode(code string) []codeTok {
	var toks []codeTok
	for i := 0; i < len(code) && len(toks) < 4096; {
		c := code[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == '\n':
			toks = append(toks, codeTok{'p', ";"})
			i++
		case c == '"' || c == '\'':
			if strings.HasPrefix(code[i:], `"""`) || strings.HasPrefix(code[i:], `'''`) {
				end := strings.Index(code[i+3:], code[i:i+3])
				if end < 0 {
					toks = append(toks, codeTok{'s', code[i+3:]})
					i = len(code)
					continue
				}
				toks = append(toks, codeTok{'s', code[i+3 : i+3+end]})
				i += 6 + end
				continue
			}
			s, n := readQuoted(code[i:], c)
			toks = append(toks, codeTok{'s', s})
			i += n
		case c == '`':
			s, n := readQuoted(code[i:], '`')
			toks = append(toks, codeTok{'b', s})
			i += n
		case c == '%' && i+2 < len(code) && code[i+1] == 'x' && strings.IndexByte("({[</|!", code[i+2]) >= 0:
			s, n := readDelimited(code[i+2:])
			toks = append(toks, codeTok{'b', s})
			i += 2 + n
		case c == '_' || c == '$' || c == '.' || c == '@' || c == ':' && i+1 < len(code) && code[i+1] == ':' ||
			c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < len(code) {
				d := code[j]
				if d == '_' || d == '$' || d == '.' || d == '@' || d >= 'a' && d <= 'z' || d >= 'A' && d <= 'Z' || d >= '0' && d <= '9' {
					j++
					continue
				}
				if d == ':' && j+1 < len(code) && code[j+1] == ':' {
					j += 2
					continue
				}
				break
			}
			if j == i {
				j = i + 1
			}
			id := code[i:j]
			if id == "qx" && j < len(code) && strings.IndexByte("({[</|!", code[j]) >= 0 {
				s, n := readDelimited(code[j:])
				toks = append(toks, codeTok{'b', s})
				i = j + n
				continue
			}
			toks = append(toks, codeTok{'i', id})
			i = j
		default:
			toks = append(toks, codeTok{'p', code[i : i+1]})
			i++
		}
	}
	return toks
}

// readQuoted reads a quoted string starting at s[0] == q, decoding common escapes.
func readQuoted(s string, q byte) (string, int) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		if c == q {
			return b.String(), i + 1
		}
		if c == '\\' && i+1 < len(s) {
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'x':
				if v, n := parseBase(s[i+1:], 16, 2); n == 2 {
					b.WriteByte(byte(v))
					i += 2
					continue
				}
				b.WriteString(`\x`)
			default:
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(c)
	}
	return b.String(), len(s)
}

// readDelimited reads qx{…}, %x(…) and friends starting at the opening delimiter.
func readDelimited(s string) (string, int) {
	open := s[0]
	closeCh := open
	switch open {
	case '(':
		closeCh = ')'
	case '{':
		closeCh = '}'
	case '[':
		closeCh = ']'
	case '<':
		closeCh = '>'
	}
	depth := 1
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case closeCh:
			depth--
			if depth == 0 {
				return s[1:i], i + 1
			}
		case open:
			if open != closeCh {
				depth++
			}
		}
	}
	return s[1:], len(s)
}

// interpCode looks at interpreter code for shell commands and recursive deletes, and hands
// them to the floor.
func (w *walker) interpCode(lang, code string, depth int) { w.interpCodeVars(lang, code, depth, nil) }

// interpCodeVars is interpCode with variables known before the code runs (awk -v c=…). The
// code's own simple assignments of strings (c = "…") are followed too.
func (w *walker) interpCodeVars(lang, code string, depth int, vars map[string]string) {
	if depth > 3 || code == "" || !w.step() {
		return
	}
	toks := tokenizeCode(code)
	c := w.floorOnly(lang)
	if vars == nil {
		vars = map[string]string{}
	}
	toks = resolveGetattr(toks, vars)
	if lang == "awk" {
		toks = awkTokens(toks)
	}
	for i := 0; i+2 < len(toks); i++ {
		if toks[i].kind == 'i' && toks[i+1].kind == 'p' && toks[i+1].s == "=" && !(toks[i+2].kind == 'p' && toks[i+2].s == "=") {
			j := i + 2
			for j < len(toks) && !(toks[j].kind == 'p' && (toks[j].s == ";" || toks[j].s == ",")) {
				j++
			}
			if v, ok := argValue(toks[i+2:j], vars); ok {
				vars[toks[i].s] = v
			}
		}
	}
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		switch t.kind {
		case 'b':
			c.script(lang+" `…`", t.s, nil, true)
			continue
		case 's':
			// awk: print | "cmd", "cmd" | getline; AppleScript: do shell script "cmd".
			if lang == "awk" && (i > 0 && toks[i-1].s == "|" || i+1 < len(toks) && toks[i+1].s == "|") {
				c.script("awk pipe", t.s, nil, true)
			}
			if lang == "applescript" && i >= 1 && toks[i-1].kind == 'i' && strings.HasSuffix(toks[i-1].s, "script") {
				c.script("do shell script", t.s, nil, true)
			}
			continue
		case 'i':
			if lang == "awk" && (i > 0 && toks[i-1].s == "|" || i+1 < len(toks) && toks[i+1].s == "|" && !(i+2 < len(toks) && toks[i+2].s == "|")) &&
				t.s != "getline" && t.s != "print" && t.s != "printf" {
				if v, ok := vars[t.s]; ok {
					c.script("awk pipe", v, nil, true)
				} else {
					w.problem("awk pipes into a command held in %s, which is not known", t.s)
				}
				continue
			}
		default:
			continue
		}
		name := t.s
		dotted := strings.ContainsAny(name, ".:")
		if k := strings.LastIndexAny(name, ".:"); k >= 0 {
			name = name[k+1:]
		}
		if name == "" || i+1 >= len(toks) || !execCall(name) && !deleteCall(name) && !codeEvalCall(lang, name, dotted) {
			continue
		}
		var callArgs [][]codeTok
		next := toks[i+1]
		switch {
		case next.kind == 'p' && next.s == "(":
			var end int
			callArgs, end = splitCallArgs(toks, i+1)
			i = end
		case next.kind == 's' || next.kind == 'b':
			// Perl and Ruby calls without parentheses: system "rm", "-rf", "/".
			j := i + 1
			var cur []codeTok
			for ; j < len(toks); j++ {
				if toks[j].kind == 'p' && (toks[j].s == ";" || toks[j].s == "}") {
					break
				}
				if toks[j].kind == 'p' && toks[j].s == "," {
					callArgs = append(callArgs, cur)
					cur = nil
					continue
				}
				cur = append(cur, toks[j])
			}
			callArgs = append(callArgs, cur)
			i = j - 1
		default:
			continue
		}
		if len(callArgs) == 0 {
			continue
		}
		switch {
		case codeEvalCall(lang, name, dotted):
			if s, ok := argValue(callArgs[0], vars); ok {
				w.interpCodeVars(lang, s, depth+1, vars)
			}
		case deleteCall(name):
			if (name == "rm" || name == "remove" || name == "rmdir") && !hasIdent(callArgs, "recursive") && !hasIdent(callArgs, "rf") {
				continue
			}
			if p, ok := argValue(callArgs[0], vars); ok && p != "" {
				if (p == "~" || strings.HasPrefix(p, "~/")) && c.home != "" {
					p = c.home + p[1:]
				}
				c.emit([]Arg{lit("rm"), lit("-r"), {Value: p, Raw: p, Known: true, Prefix: len(p)}}, KindCommand).Origin = lang + " " + name
			}
		case execCall(name):
			if lang == "python" && name == "exec" && !dotted {
				continue
			}
			if list, ok := argList(callArgs[0]); ok {
				c.argv(lang+" "+name, list)
				continue
			}
			var strs []string
			for _, a := range callArgs {
				if l, ok := argList(a); ok {
					strs = append(strs, l...)
				} else if s, ok := argValue(a, vars); ok {
					strs = append(strs, s)
				}
			}
			if len(strs) == 0 {
				if lang == "awk" && name == "system" {
					w.problem("awk runs a command built from a value that is not known")
				}
				continue
			}
			shellForm := len(strs) == 1 && !argvCall(name)
			if shellForm {
				c.script(lang+" "+name, strs[0], nil, true)
				if len(strs) > 1 && (name == "spawn" || name == "execFile" || name == "execFileSync" || name == "spawnSync") {
					c.argv(lang+" "+name, strs)
				}
			} else {
				c.argv(lang+" "+name, strs)
			}
		}
	}
}

func hasIdent(args [][]codeTok, id string) bool {
	for _, a := range args {
		for _, t := range a {
			if (t.kind == 'i' || t.kind == 's') && strings.Contains(t.s, id) {
				return true
			}
		}
	}
	return false
}

// argv dispatches a literal argv found in interpreter code.
func (w *walker) argv(label string, list []string) {
	if len(list) == 0 {
		return
	}
	args := make([]Arg, len(list))
	for i, s := range list {
		args[i] = lit(s)
	}
	if c := w.deeper(label); c != nil {
		c.dispatch(args)
	}
}

// splitCallArgs splits the arguments of the call whose "(" is at toks[open]; it returns them
// and the index of the closing ")".
func splitCallArgs(toks []codeTok, open int) ([][]codeTok, int) {
	var out [][]codeTok
	var cur []codeTok
	depth := 0
	for i := open; i < len(toks); i++ {
		t := toks[i]
		if t.kind == 'p' {
			switch t.s {
			case "(", "[", "{":
				depth++
				if depth == 1 {
					continue
				}
			case ")", "]", "}":
				depth--
				if depth == 0 {
					return append(out, cur), i
				}
			case ",":
				if depth == 1 {
					out = append(out, cur)
					cur = nil
					continue
				}
			}
		}
		cur = append(cur, t)
	}
	return append(out, cur), len(toks) - 1
}

// resolveGetattr rewrites getattr(obj, "sys" + "tem")(…) into system(…), so that a call named
// by a string is seen as the call it names.
func resolveGetattr(toks []codeTok, vars map[string]string) []codeTok {
	for i := 0; i+1 < len(toks); i++ {
		if toks[i].kind != 'i' || !strings.HasSuffix(toks[i].s, "getattr") || toks[i+1].s != "(" {
			continue
		}
		args, end := splitCallArgs(toks, i+1)
		if len(args) < 2 || end+1 >= len(toks) || toks[end+1].s != "(" {
			continue
		}
		name, ok := argValue(args[1], vars)
		if !ok || !execCall(name) && !deleteCall(name) {
			continue
		}
		out := append(append(append([]codeTok(nil), toks[:i]...), codeTok{'i', name}), toks[end+1:]...)
		return resolveGetattr(out, vars)
	}
	return toks
}

// argValue is argString that also reads the variables the code assigned strings to.
func argValue(arg []codeTok, vars map[string]string) (string, bool) {
	var b strings.Builder
	ok := false
	for _, t := range arg {
		switch t.kind {
		case 's', 'b':
			b.WriteString(t.s)
			ok = true
		case 'i':
			if v, found := vars[t.s]; found {
				b.WriteString(v)
				ok = true
			}
		}
	}
	return b.String(), ok
}

// argList returns the strings of a list or tuple argument (["rm", "-rf", "/"]).
func argList(arg []codeTok) ([]string, bool) {
	if len(arg) == 0 || arg[0].kind != 'p' || (arg[0].s != "[" && arg[0].s != "(") {
		return nil, false
	}
	var out []string
	for _, t := range arg[1:] {
		if t.kind == 's' {
			out = append(out, t.s)
		}
	}
	return out, len(out) > 0
}
