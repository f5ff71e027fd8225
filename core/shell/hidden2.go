package shell

import (
	"regexp"
	"strings"
)

// --- editors and debuggers: ex commands, ed scripts, gdb commands ---

// exCommands hands the floor the shell commands in vim/ex commands (:!cmd, :r !cmd, :w !cmd,
// system("cmd"), :terminal cmd).
func (w *walker) exCommands(label, text string) { w.exCommandsDepth(label, text, 0) }

// exModifiers are the ex command modifiers that run the command after them.
var exModifiers = []string{"silent!", "silent", "sil!", "sil", "unsilent", "uns", "noautocmd", "noa", "keepalt",
	"keepa", "keepjumps", "keepj", "keepmarks", "kee", "keeppatterns", "keepp", "lockmarks", "loc", "vertical", "vert",
	"topleft", "to", "botright", "bo", "aboveleft", "abo", "belowright", "bel", "tab", "confirm", "conf", "hide",
	"hid", "sandbox", "san", "legacy", "leg", "vim9cmd", "vim9", "browse", "bro", "noswapfile", "nos", "filter"}

func (w *walker) exCommandsDepth(label, text string, depth int) {
	if depth > 4 || !w.step() {
		return
	}
	for _, line := range strings.Split(text, "\n") {
		for _, cmd := range strings.Split(line, "|") {
			c := strings.TrimLeft(strings.TrimSpace(cmd), ":")
			// A range before the command (%!sort, 1,5!cmd).
			c = strings.TrimLeft(c, "0123456789,.$%'<>+- ")
			for stripped := true; stripped; {
				stripped = false
				for _, m := range exModifiers {
					if rest, ok := strings.CutPrefix(c, m); ok && (rest == "" || rest[0] == ' ' || rest[0] == '!' && !strings.HasSuffix(m, "!")) {
						c = strings.TrimLeft(rest, " :")
						stripped = true
						break
					}
				}
			}
			if word, rest, _ := strings.Cut(c, " "); word == "exe" || word == "exec" || word == "execute" || word == "exe!" {
				// :execute "expr": the strings it joins are an ex command.
				var b strings.Builder
				for _, t := range tokenizeCode(rest) {
					if t.kind == 's' {
						b.WriteString(t.s)
					}
				}
				w.exCommandsDepth(label, b.String(), depth+1)
				continue
			}
			switch {
			case strings.HasPrefix(c, "!"):
				w.floorScript(label, c[1:])
			case strings.HasPrefix(c, "r !") || strings.HasPrefix(c, "r!") || strings.HasPrefix(c, "read !") ||
				strings.HasPrefix(c, "w !") || strings.HasPrefix(c, "write !") || strings.HasPrefix(c, "e !"):
				w.floorScript(label, c[strings.IndexByte(c, '!')+1:])
			case strings.HasPrefix(c, "term ") || strings.HasPrefix(c, "terminal "):
				w.floorScript(label, c[strings.IndexByte(c, ' ')+1:])
			}
			// :py3 os.system(…), :lua os.execute(…), :perl system(…), :ruby system(…)
			if word, rest, ok := strings.Cut(c, " "); ok {
				lang := ""
				switch strings.TrimSuffix(word, "!") {
				case "py", "py3", "python", "python3", "pyx", "pythonx", "pydo", "py3do":
					lang = "python"
				case "lua", "luado":
					lang = "lua"
				case "perl", "perldo":
					lang = "perl"
				case "ruby", "rubydo":
					lang = "ruby"
				}
				if lang != "" {
					w.floorOnly(label).interpCode(lang, rest, 0)
				}
			}
			for _, fn := range []string{"system(", "systemlist(", "jobstart(", "termopen("} {
				if i := strings.Index(c, fn); i >= 0 {
					for _, t := range tokenizeCode(c[i:]) {
						if t.kind == 's' {
							w.floorScript(label, t.s)
						}
					}
				}
			}
		}
		// A whole line where | is not a separator (:!a | b).
		if c := strings.TrimLeft(strings.TrimSpace(line), ":"); strings.HasPrefix(c, "!") {
			w.floorScript(label, c[1:])
		}
	}
}

func (w *walker) vim(base string, args []Arg) {
	w.emit(args, KindCommand)
	exMode := base == "ex" || base == "vimdiff" && false
	for i := 1; i < len(args); i++ {
		a := args[i]
		v := a.Value
		switch {
		case v == "--":
			i = len(args)
		case v == "-c" || v == "--cmd":
			if i+1 < len(args) {
				i++
				w.problem("%s %s runs an editor command", base, v)
				w.exCommands(base+" "+v, args[i].Value)
			}
		case strings.HasPrefix(v, "+") && len(v) > 1:
			rest := v[1:]
			if isDigits(rest) || strings.HasPrefix(rest, "/") {
				continue
			}
			w.problem("%s +… runs an editor command", base)
			w.exCommands(base+" +", rest)
		case v == "-s" && exMode:
			// -s after -e/-E is Ex's silent mode, not a script of typed keys.
		case v == "-S" || v == "-u" || v == "-U" || v == "-s" || v == "-w" || v == "-W" || v == "-i" || v == "-T" || v == "-r" || v == "-t" || v == "-q":
			if v == "-s" && i+1 < len(args) {
				w.problem("%s -s types keys from a file", base)
			}
			if v == "-w" || v == "-W" {
				w.problem("%s %s records typed keys into a file", base, v)
			}
			if v != "-r" {
				i++
			}
		case v == "-e" || v == "-E" || v == "-es" || v == "-Es":
			exMode = true
		case strings.HasPrefix(v, "--remote-send") || strings.HasPrefix(v, "--remote-expr") || strings.HasPrefix(v, "--servername"):
			w.problem("%s %s talks to another editor", base, v)
			if i+1 < len(args) && !strings.Contains(v, "=") {
				i++
				w.exCommands(base+" "+v, args[i].Value)
			}
		}
	}
	if exMode {
		w.editorStdin(base, true)
	}
}

// editorStdin reads editor commands from the standard input (ex, vim -e, ed).
func (w *walker) editorStdin(label string, ex bool) {
	text, kind := w.stdinText()
	switch kind {
	case stdinKnown:
		if ex {
			w.exCommands(label, text)
		} else {
			w.edScript(label, text)
		}
		w.problem("%s runs editor commands from its input", label)
	case stdinPipe, stdinFile:
		w.problem("%s reads editor commands from an input that is not known", label)
	}
}

// edScript hands the floor the shell commands of an ed script (!cmd, r !cmd, w !cmd, e !cmd).
func (w *walker) edScript(label, text string) {
	for _, line := range strings.Split(text, "\n") {
		l := strings.TrimLeft(line, "0123456789,.$;'+- /")
		if i := strings.IndexByte(l, '!'); i >= 0 && i <= 2 {
			w.floorScript(label, l[i+1:])
		}
	}
}

func (w *walker) ed(base string, args []Arg) {
	w.emit(args, KindCommand)
	if base == "red" {
		return // restricted: no shell commands
	}
	for _, a := range args[1:] {
		if strings.HasPrefix(a.Value, "!") {
			w.problem("ed reads a file from a command")
			w.floorScript("ed !", a.Value[1:])
		}
	}
	w.editorStdin("ed", false)
}

// gdbCommands hands the floor the shell commands of gdb and lldb commands.
func (w *walker) gdbCommands(label, cmd string) {
	c := strings.TrimSpace(cmd)
	for _, p := range []string{"shell ", "!", "platform shell ", "pipe ", "| "} {
		if rest, ok := strings.CutPrefix(c, p); ok {
			if p == "pipe " || p == "| " {
				if i := strings.LastIndexByte(rest, '|'); i >= 0 {
					rest = rest[i+1:]
				}
			}
			w.floorScript(label, rest)
			return
		}
	}
	for _, p := range []string{"python ", "python-interactive ", "pi ", "py ", "script "} {
		if rest, ok := strings.CutPrefix(c, p); ok {
			w.floorOnly(label).interpCode("python", rest, 0)
			return
		}
	}
}

func (w *walker) gdb(base string, args []Arg) {
	w.emit(args, KindCommand)
	runs := false
	prog := -1
	for i := 1; i < len(args); i++ {
		v := args[i].Value
		name, val, hasVal := strings.Cut(strings.TrimLeft(v, "-"), "=")
		switch {
		case v == "--args" && base == "gdb":
			w.hiddenArgv("gdb --args", args[i+1:])
			return
		case v == "--" && base == "lldb":
			w.hiddenArgv("lldb --", args[i+1:])
			return
		case strings.HasPrefix(v, "-") && (name == "ex" || name == "iex" || name == "eval-command" || name == "init-eval-command" ||
			base == "lldb" && (name == "o" || name == "one-line" || name == "O" || name == "one-line-before-file" || name == "k" || name == "one-line-on-crash")):
			val, _, j := longValue(args, i, hasVal, val)
			i = j
			w.problem("%s -%s runs a debugger command", base, name)
			w.gdbCommands(base+" -"+name, val)
			if c := strings.TrimSpace(val); c == "run" || c == "r" || c == "start" || strings.HasPrefix(c, "run ") || strings.HasPrefix(c, "process launch") {
				runs = true
			}
		case strings.HasPrefix(v, "-") && (name == "x" || name == "ix" || name == "command" || name == "init-command" || base == "lldb" && (name == "s" || name == "source" || name == "S")):
			if !hasVal {
				i++
			}
			w.problem("%s -%s runs debugger commands from a file", base, name)
		case strings.HasPrefix(v, "-") && (name == "p" || name == "pid" || name == "cd" || name == "d" || name == "directory" || name == "s" || name == "symbols" || name == "e" || name == "exec" || name == "se" || name == "c" || name == "core" || name == "tty" || name == "D" || name == "data-directory"):
			if !hasVal {
				i++
			}
		case !strings.HasPrefix(v, "-") && prog < 0:
			prog = i
		}
	}
	if runs && prog > 0 {
		w.hiddenArgv(base+" run", args[prog:prog+1])
	}
}

// --- pagers and documentation ---

var manLong = []string{"all", "apropos", "ascii", "catman", "config-file", "debug", "default", "ditroff", "encoding",
	"extension", "global-apropos", "gxditview", "help", "html", "ignore-case", "local-file", "locale", "location",
	"location-cat", "manpath", "match-case", "names-only", "nh", "nj", "no-hyphenation", "no-justification",
	"no-subpages", "pager", "path", "preprocessor", "prompt", "recode", "regex", "sections", "systems", "troff",
	"troff-device", "update", "usage", "version", "warnings", "whatis", "where", "where-cat", "wildcard"}

func (w *walker) man(args []Arg) {
	w.emit(args, KindCommand)
	for i := 1; i < len(args); i++ {
		a := args[i]
		v := a.Value
		if v == "--" {
			return
		}
		if strings.HasPrefix(v, "--") {
			name, val, hasVal := strings.Cut(v[2:], "=")
			full, ok := resolveLong(name, manLong)
			if !ok {
				continue
			}
			switch full {
			case "pager":
				val, known, j := longValue(args, i, hasVal, val)
				i = j
				w.hiddenScript("man --pager", val, known)
			case "html":
				if hasVal {
					w.hiddenScript("man --html", val, a.Known)
				}
			case "config-file", "encoding", "extension", "locale", "manpath", "preprocessor", "prompt", "recode", "sections", "systems", "troff-device":
				if !hasVal {
					i++
				}
			}
			continue
		}
		if len(v) > 1 && v[0] == '-' {
			i = shortCluster(args, i, "PCELmMpRrSse", func(c byte, val string, known bool) {
				if c == 'P' {
					w.hiddenScript("man -P", val, known)
				}
			})
			if strings.HasPrefix(v, "-H") && len(v) > 2 {
				w.hiddenScript("man -H", v[2:], a.Known)
			}
		}
	}
}

func (w *walker) less(args []Arg) {
	w.emit(args, KindCommand)
	for _, a := range args[1:] {
		v := a.Value
		if strings.HasPrefix(v, "+") || strings.HasPrefix(v, "-+") {
			if i := strings.IndexAny(v, "!|"); i >= 0 {
				w.problem("less runs a command from an initial command")
				w.floorScript("less +!", v[i+1:])
			}
		}
	}
}

// --- terminal multiplexers ---

// tmux commands that run a shell command, with the short options that take a value.
var tmuxShellCommands = map[string]string{
	"new-session": "cenFsStxyf", "new": "cenFsStxyf", "new-window": "centF", "neww": "centF",
	"split-window": "celtF", "splitw": "celtF", "respawn-pane": "cet", "respawnp": "cet",
	"respawn-window": "cet", "respawnw": "cet", "run-shell": "cdt", "run": "cdt", "if-shell": "t", "if": "t",
	"pipe-pane": "t", "pipep": "t", "display-popup": "cdehsStTwxyb", "popup": "cdehsStTwxyb",
}

func (w *walker) tmux(args []Arg) {
	w.emit(args, KindCommand)
	i := 1
	for ; i < len(args); i++ {
		v := args[i].Value
		if !strings.HasPrefix(v, "-") || len(v) < 2 {
			break
		}
		stop := false
		i = shortCluster(args, i, "cfLST", func(c byte, val string, known bool) {
			if c == 'c' {
				w.hiddenScript("tmux -c", val, known)
				stop = true
			}
		})
		if stop {
			return
		}
	}
	for i < len(args) {
		// One tmux command, up to a ";" argument.
		j := i
		for j < len(args) && args[j].Value != ";" && args[j].Value != `\;` {
			j++
		}
		w.tmuxCommand(args[i:j])
		i = j + 1
	}
}

func (w *walker) tmuxCommand(cmd []Arg) {
	if len(cmd) == 0 {
		return
	}
	name := cmd[0].Value
	if name == "send-keys" || name == "send" {
		var keys []string
		for k := 1; k < len(cmd); k++ {
			v := cmd[k].Value
			if v == "-t" || v == "-N" {
				k++
				continue
			}
			if strings.HasPrefix(v, "-") && len(v) > 1 {
				continue
			}
			switch v {
			case "Enter", "C-m", "KPEnter", "C-j":
				v = "\n"
			}
			keys = append(keys, v)
		}
		w.problem("tmux send-keys types into a terminal")
		w.floorScript("tmux send-keys", strings.Join(keys, " "))
		return
	}
	opts, ok := tmuxShellCommands[name]
	if !ok {
		if name == "source-file" || name == "source" || name == "command-prompt" || name == "confirm-before" || name == "bind-key" || name == "bind" {
			w.problem("tmux %s runs tmux commands that are not analysed", name)
		}
		return
	}
	k := 1
	for ; k < len(cmd); k++ {
		v := cmd[k].Value
		if v == "--" {
			k++
			break
		}
		if !strings.HasPrefix(v, "-") || len(v) < 2 {
			break
		}
		k = shortCluster(cmd, k, opts, func(byte, string, bool) {})
	}
	if k >= len(cmd) {
		return // the default shell
	}
	if name != "if-shell" && name != "if" && name != "run-shell" && name != "run" || hasFlagIn(cmd[1:k], 'b') {
		w.spawned() // the command runs in the tmux server, beside the line
	}
	if name == "if-shell" || name == "if" {
		w.hiddenScript("tmux if-shell", cmd[k].Value, cmd[k].Known)
		if k+1 < len(cmd) {
			w.problem("tmux if-shell runs tmux commands")
		}
		return
	}
	text, known := joinValues(cmd[k:])
	w.hiddenScript("tmux "+name, text, known)
}

// screen's options: the letters that take a value, and the long spellings it knows.
const screenArgLetters = "cehpsStT"

func (w *walker) screen(args []Arg) {
	w.emit(args, KindCommand)
	detached, newSession, attach := false, false, false
	for i := 1; i < len(args); i++ {
		v := args[i].Value
		switch v {
		case "-X":
			w.problem("screen -X sends a command to a session")
			if i+1 < len(args) {
				text, _ := joinValues(args[i+1:])
				if rest, ok := strings.CutPrefix(text, "stuff "); ok {
					w.floorScript("screen stuff", strings.ReplaceAll(rest, "^M", "\n"))
				} else if rest, ok := strings.CutPrefix(text, "exec "); ok {
					w.floorScript("screen exec", rest)
				}
			}
			return
		case "-ls", "-list", "-wipe", "-v", "-version", "--version", "-help", "--help":
			return
		case "-Logfile", "-logfile":
			i++
			continue
		case "-fn", "-fa", "-ln":
			continue
		}
		if !strings.HasPrefix(v, "-") || len(v) < 2 {
			if attach && !newSession {
				return // the session to attach to
			}
			if detached && newSession {
				w.spawned() // a detached session runs the command and returns at once
			}
			w.hiddenArgv("screen", args[i:])
			return
		}
		// A cluster of letters (-dmS name): the first letter that takes a value ends it.
		for j := 1; j < len(v); j++ {
			c := v[j]
			switch c {
			case 'd', 'D':
				detached = true
			case 'm':
				newSession = true
			case 'r', 'R', 'x':
				attach = true
			}
			if strings.IndexByte(screenArgLetters, c) < 0 {
				continue
			}
			val := v[j+1:]
			if val == "" && i+1 < len(args) {
				i++
				val = args[i].Value
			}
			if c == 's' {
				w.hiddenArgv("screen -s", []Arg{{Value: val, Raw: val, Known: args[i].Known, Prefix: len(val)}})
			}
			if c == 'c' {
				w.problem("screen -c reads its configuration from a file")
			}
			break
		}
	}
}

// --- GNU parallel ---

var parallelFlags = []string{"-k", "--keep-order", "-v", "--verbose", "--dry-run", "--tag", "--eta", "--bar",
	"--progress", "-u", "--ungroup", "--group", "--line-buffer", "--lb", "-0", "--null", "-r", "--no-run-if-empty",
	"--will-cite", "--no-notice", "--halt-on-error", "-X", "-m", "--xargs", "-q", "--quote", "--plain", "--shuf",
	"--files", "--fg", "--bg", "--citation"}
var parallelWithArg = []string{"-j", "--jobs", "-P", "--max-procs", "-n", "--max-args", "-N", "-L", "--max-lines",
	"-d", "--delimiter", "-E", "--colsep", "-C", "--halt", "--joblog", "--results", "--res", "--timeout",
	"--retries", "--delay", "--tagstring", "--nice", "--memfree", "--load", "--tmpdir", "--header", "--id",
	"-s", "--max-chars", "--block", "--recstart", "--recend", "--resume-failed", "--resume"}

func (w *walker) parallel(args []Arg) {
	w.emit(args, KindCommand)
	i := 1
	quote := false
	jobs := ""
	defer func() {
		if strings.TrimRight(strings.TrimLeft(jobs, "0"), "%") == "" && jobs != "" && w.stdinEndless() {
			w.forkBomb("parallel -j 0 starts commands without limit from an input that never ends")
		}
	}()
	for ; i < len(args); i++ {
		a := args[i]
		v := a.Value
		if !a.Known {
			w.problem("parallel with an option that is not known")
			return
		}
		if v == "--" {
			i++
			break
		}
		if !strings.HasPrefix(v, "-") || v == ":::" || v == "::::" {
			break
		}
		name, val, hasVal := strings.Cut(v, "=")
		switch {
		case hasName(parallelFlags, name):
			if name == "-q" || name == "--quote" {
				quote = true
			}
		case hasName(parallelWithArg, name):
			if !hasVal && i+1 < len(args) {
				val = args[i+1].Value
				i++
			}
			if name == "-j" || name == "--jobs" || name == "-P" || name == "--max-procs" {
				jobs = val
			}
		case len(v) > 2 && hasName(parallelWithArg, v[:2]):
			if v[:2] == "-j" || v[:2] == "-P" {
				jobs = v[2:]
			}
		default:
			w.cannotUnwrapArgs("parallel", args, "unknown option "+v)
			return
		}
	}
	var tmpl []Arg
	for i < len(args) && !strings.HasPrefix(args[i].Value, ":::") {
		tmpl = append(tmpl, args[i])
		i++
	}
	var inputs []string
	known := true
	switch {
	case i < len(args) && args[i].Value == ":::":
		for _, a := range args[i+1:] {
			if strings.HasPrefix(a.Value, ":::") {
				w.problem("parallel with more than one input source")
				break
			}
			inputs = append(inputs, a.Value)
			known = known && a.Known
		}
	case i < len(args):
		w.problem("parallel reads its arguments from a file")
		known = false
	default:
		if text, kind := w.stdinText(); kind == stdinKnown {
			inputs = strings.Split(strings.TrimRight(text, "\n"), "\n")
		} else {
			known = false
		}
	}
	if !known {
		w.problem("parallel runs commands built from an input that is not known")
	}
	t, tknown := joinValues(tmpl)
	if quote {
		var b []string
		for _, a := range tmpl {
			b = append(b, quote2(a.Value))
		}
		t = strings.Join(b, " ")
	}
	if len(inputs) == 0 {
		if t != "" {
			w.hiddenScript("parallel", t, tknown)
		}
		return
	}
	for n, in := range inputs {
		cmd := parallelCommand(t, in)
		if n == 0 {
			w.hiddenScript("parallel", cmd, tknown)
		} else {
			w.floorScript("parallel", cmd)
		}
		if n >= maxLoopItems {
			break
		}
	}
}

func quote2(s string) string { return quote(s) }

// parallelCommand builds one command of parallel: the replacement strings are the input,
// quoted for the shell; without one, the input is appended.
func parallelCommand(tmpl, in string) string {
	if tmpl == "" {
		return in // the inputs are the commands
	}
	q := quote(in)
	base := in
	if i := strings.LastIndexByte(in, '/'); i >= 0 {
		base = in[i+1:]
	}
	noExt := func(s string) string {
		if i := strings.LastIndexByte(s, '.'); i > 0 {
			return s[:i]
		}
		return s
	}
	r := strings.NewReplacer("{}", q, "{.}", quote(noExt(in)), "{/}", quote(base), "{//}", quote(dirname(in)),
		"{/.}", quote(noExt(base)), "{#}", "1", "{%}", "1")
	out := r.Replace(tmpl)
	if out == tmpl {
		return tmpl + " " + q
	}
	return out
}

// --- expect, crontab, sg ---

// tclCommands hands the floor the programs a Tcl script (expect, tclsh) starts: spawn, exec,
// open "|…", system, and what send types into a spawned program.
func (w *walker) tclCommands(label, text string) {
	w.tclScript(label, text, map[string]string{}, 0)
}

func (w *walker) tclScript(label, text string, vars map[string]string, depth int) {
	if depth > 4 || !w.step() {
		return
	}
	spawned := false
	for _, cmd := range tclSplit(text) {
		words := tclWords(cmd, vars, func(sub string) { w.tclScript(label, sub, vars, depth+1) })
		spawned = w.tclCommand(label, words, vars, spawned, depth) || spawned
	}
}

// tclCommand judges one Tcl command; it reports whether it spawned a program.
func (w *walker) tclCommand(label string, words []string, vars map[string]string, spawned bool, depth int) bool {
	if len(words) < 2 {
		return false
	}
	argvOf := func(rest []string) []Arg {
		for len(rest) > 0 && strings.HasPrefix(rest[0], "-") {
			if rest[0] == "--" {
				rest = rest[1:]
				break
			}
			rest = rest[1:]
		}
		args := make([]Arg, 0, len(rest))
		for _, s := range rest {
			if s == "|" || strings.HasPrefix(s, ">") || strings.HasPrefix(s, "<") || strings.HasPrefix(s, "2>") {
				break // exec's pipes and redirections
			}
			args = append(args, lit(s))
		}
		return args
	}
	run := func(kind string, args []Arg) {
		c := w.floorOnly(label)
		if d := c.deeper(label + " " + kind); d != nil && len(args) > 0 {
			d.hide(label)
			d.dispatch(args)
		}
	}
	switch words[0] {
	case "spawn", "exp_spawn":
		run(words[0], argvOf(words[1:]))
		return true
	case "exec":
		run("exec", argvOf(words[1:]))
	case "open":
		if p := strings.TrimSpace(words[1]); strings.HasPrefix(p, "|") {
			run("open |", argvOf(tclWords(strings.TrimPrefix(p, "|"), vars, nil)))
		}
	case "system", "exp_system":
		w.floorScript(label+" system", strings.Join(words[1:], " "))
	case "send", "exp_send", "send_spawn":
		rest := words[1:]
		for len(rest) > 1 && strings.HasPrefix(rest[0], "-") {
			if rest[0] == "-i" {
				rest = rest[1:]
			}
			rest = rest[1:]
		}
		if spawned && len(rest) > 0 {
			w.floorScript(label+" send", strings.ReplaceAll(strings.Join(rest, " "), `\r`, "\n"))
		}
	case "set":
		if len(words) == 3 {
			vars[words[1]] = words[2]
		}
	case "eval", "uplevel", "catch", "if", "while", "for", "foreach", "proc", "after":
		// Bodies and scripts handed to other commands.
		for _, body := range words[1:] {
			if strings.ContainsAny(body, " \t\n") {
				w.tclScript(label, body, vars, depth+1)
			}
		}
		if words[0] == "eval" || words[0] == "uplevel" {
			return w.tclCommand(label, words[1:], vars, spawned, depth+1)
		}
	}
	return false
}

// tclSplit splits a Tcl script into commands: newlines and semicolons outside braces, quotes
// and brackets.
func tclSplit(s string) []string {
	var out []string
	depth, bracket := 0, 0
	inQ := false
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\':
			i++
		case inQ:
			if c == '"' {
				inQ = false
			} else if c == '[' {
				bracket++
			} else if c == ']' && bracket > 0 {
				bracket--
			}
		case c == '{':
			depth++
		case c == '}':
			if depth > 0 {
				depth--
			}
		case depth > 0:
		case c == '[':
			bracket++
		case c == ']':
			if bracket > 0 {
				bracket--
			}
		case c == '"':
			inQ = true
		case (c == '\n' || c == ';') && bracket == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// tclWords splits a Tcl command into words: braces quote literally, double quotes group with
// backslash, variable and command substitution ($x from vars, [cmd] handed to sub).
func tclWords(s string, vars map[string]string, sub func(string)) []string {
	var out []string
	var cur []byte
	in := false
	i := 0
	subst := func(j int) int {
		// s[j] is '$' or '['; it returns the index after the substitution.
		if s[j] == '[' {
			depth := 1
			k := j + 1
			for ; k < len(s) && depth > 0; k++ {
				switch s[k] {
				case '[':
					depth++
				case ']':
					depth--
				}
			}
			if sub != nil {
				sub(s[j+1 : k-1])
			}
			return k
		}
		k := j + 1
		brace := k < len(s) && s[k] == '{'
		if brace {
			k++
		}
		e := k
		for e < len(s) && (s[e] == '_' || s[e] >= 'a' && s[e] <= 'z' || s[e] >= 'A' && s[e] <= 'Z' || s[e] >= '0' && s[e] <= '9' || s[e] == ':') {
			e++
		}
		name := s[k:e]
		if brace && e < len(s) && s[e] == '}' {
			e++
		}
		if v, ok := vars[name]; ok {
			cur = append(cur, v...)
		} else {
			cur = append(cur, s[j:e]...)
		}
		return e
	}
	escape := func(j int) int {
		// s[j] is a backslash.
		if j+1 >= len(s) {
			return j + 1
		}
		switch c := s[j+1]; c {
		case 'n':
			cur = append(cur, '\n')
		case 'r':
			cur = append(cur, '\\', 'r') // kept for send, which turns it into Enter
		case 't':
			cur = append(cur, '\t')
		case '\n':
			cur = append(cur, ' ')
		default:
			cur = append(cur, c)
		}
		return j + 2
	}
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				out = append(out, string(cur))
				cur, in = cur[:0], false
			}
			i++
		case c == '{' && !in:
			depth := 1
			j := i + 1
			for ; j < len(s) && depth > 0; j++ {
				switch s[j] {
				case '{':
					depth++
				case '}':
					depth--
				case '\\':
					j++
				}
			}
			end := j - 1
			if end < i+1 {
				end = i + 1
			}
			cur = append(cur, s[i+1:min(end, len(s))]...)
			in = true
			i = j
		case c == '"' && !in:
			in = true
			j := i + 1
			for j < len(s) && s[j] != '"' {
				switch s[j] {
				case '\\':
					j = escape(j)
				case '$', '[':
					j = subst(j)
				default:
					cur = append(cur, s[j])
					j++
				}
			}
			i = j + 1
		case c == '\\':
			i = escape(i)
			in = true
		case c == '$' || c == '[':
			i = subst(i)
			in = true
		default:
			cur = append(cur, c)
			in = true
			i++
		}
	}
	if in {
		out = append(out, string(cur))
	}
	return out
}

// expect records expect and reads its Tcl program: -c, -f FILE, a script file the line
// provides, or the standard input when it is given no script.
func (w *walker) expect(args []Arg) {
	w.emit(args, KindCommand)
	script := false
	for i := 1; i < len(args); i++ {
		v := args[i].Value
		switch {
		case v == "-c":
			if i+1 < len(args) {
				i++
				w.problem("expect -c runs a Tcl program")
				w.tclCommands("expect -c", args[i].Value)
			}
			script = true
		case v == "-f" || v == "-D" || v == "-b":
			if i+1 < len(args) {
				i++
				if v != "-D" {
					w.tclFile("expect", args[i])
					return
				}
			}
		case v == "-" || v == "-i":
			w.tclFile("expect", Arg{Value: "/dev/stdin", Raw: "/dev/stdin", Known: true})
			return
		case v == "--":
			if i+1 < len(args) {
				w.tclFile("expect", args[i+1])
			}
			return
		case strings.HasPrefix(v, "-"):
		default:
			w.tclFile("expect", args[i])
			return
		}
	}
	if !script {
		w.tclFile("expect", Arg{Value: "/dev/stdin", Raw: "/dev/stdin", Known: true})
	}
}

// tclFile reads a Tcl script file when the command line provides it (the standard input, a
// here-document, a process substitution, a file it wrote).
func (w *walker) tclFile(label string, a Arg) {
	if a.Value == "-" {
		a.Value = "/dev/stdin"
	}
	text, known, found := w.fileText(a)
	if !found {
		return
	}
	w.problem("%s runs a Tcl program given on the command line", label)
	if known {
		w.tclCommands(label, text)
	}
}

// tclsh runs a Tcl script file, or its standard input.
func (w *walker) tclsh(args []Arg) {
	w.emit(args, KindCommand)
	for i := 1; i < len(args); i++ {
		v := args[i].Value
		if v == "-encoding" {
			i++
			continue
		}
		if strings.HasPrefix(v, "-") && v != "-" {
			continue
		}
		if v == "-" {
			v = "/dev/stdin"
		}
		w.tclFile(Base(args[0].Value), Arg{Value: v, Raw: v, Known: args[i].Known, proc: args[i].proc})
		return
	}
	w.tclFile(Base(args[0].Value), Arg{Value: "/dev/stdin", Raw: "/dev/stdin", Known: true})
}

// crontab installs commands that run later: the analysis asks, and the floor reads them.
func (w *walker) crontab(args []Arg) {
	w.emit(args, KindCommand)
	file := ""
	for i := 1; i < len(args); i++ {
		v := args[i].Value
		switch v {
		case "-l", "-r", "-i", "-e", "-V", "-T":
			if v == "-e" {
				w.problem("crontab -e edits the crontab in an editor")
			}
			if v != "-i" {
				return
			}
		case "-u", "-c", "-s":
			i++
		default:
			file = v
		}
	}
	w.problem("crontab installs commands that run later")
	text, known := "", false
	switch {
	case file == "" || file == "-":
		t, kind := w.stdinText()
		text, known = t, kind == stdinKnown
	default:
		text, known, _ = w.writtenFile(file)
	}
	if !known {
		return
	}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || isAssignment(line) {
			continue
		}
		f := strings.Fields(line)
		var cmd string
		switch {
		case strings.HasPrefix(f[0], "@"):
			cmd = strings.TrimSpace(strings.TrimPrefix(line, f[0]))
		case len(f) > 5:
			rest := line
			for k := 0; k < 5; k++ {
				rest = strings.TrimLeft(rest, " \t")
				rest = rest[strings.IndexAny(rest+" ", " \t"):]
			}
			cmd = strings.TrimSpace(rest)
		default:
			continue
		}
		if i := strings.IndexByte(cmd, '%'); i >= 0 {
			cmd = cmd[:i]
		}
		w.floorScript("crontab", cmd)
	}
}

func (w *walker) sg(base string, args []Arg) {
	w.emit(args, KindCommand)
	rest := args[1:]
	if len(rest) > 0 && rest[0].Value == "-" {
		rest = rest[1:]
	}
	if base == "newgrp" || len(rest) < 2 {
		w.stdinScript(base, args, len(args))
		return
	}
	rest = rest[1:] // the group
	if rest[0].Value == "-c" {
		rest = rest[1:]
	}
	text, known := joinValues(rest)
	w.hiddenScript(base, text, known)
}

// --- sed ---

// sed reads the scripts of sed for the commands that run programs (e, s///e) and the files
// they write (w, W, s///w) and read (r, R).
func (w *walker) sed(args []Arg) {
	var scripts []Arg
	hasScript := false
	sandbox := false
	i := 1
	for ; i < len(args); i++ {
		a := args[i]
		v := a.Value
		if v == "--" {
			i++
			break
		}
		if strings.HasPrefix(v, "--") {
			name, val, hasVal := strings.Cut(v[2:], "=")
			full, ok := resolveLong(name, []string{"expression", "file", "in-place", "line-length", "null-data",
				"zero-terminated", "quiet", "silent", "regexp-extended", "separate", "sandbox", "unbuffered",
				"posix", "debug", "follow-symlinks", "binary", "help", "version"})
			if !ok {
				continue
			}
			switch full {
			case "expression":
				val, known, j := longValue(args, i, hasVal, val)
				i = j
				scripts = append(scripts, Arg{Value: val, Known: known})
				hasScript = true
			case "file":
				val, known, j := longValue(args, i, hasVal, val)
				i = j
				hasScript = true
				scripts = append(scripts, w.sedFile(val, known))
			case "line-length":
				if !hasVal {
					i++
				}
			case "sandbox":
				sandbox = true
			}
			continue
		}
		if len(v) > 1 && v[0] == '-' {
			i = shortCluster(args, i, "efl", func(c byte, val string, known bool) {
				switch c {
				case 'e':
					scripts = append(scripts, Arg{Value: val, Known: known})
					hasScript = true
				case 'f':
					hasScript = true
					scripts = append(scripts, w.sedFile(val, known))
				}
			})
			// -i takes an optional attached suffix: the cluster ends there.
			continue
		}
		if !hasScript {
			scripts = append(scripts, a)
			hasScript = true
			continue
		}
	}
	if !hasScript && i < len(args) {
		scripts = append(scripts, args[i])
	}
	s := w.emit(args, KindCommand)
	if sandbox {
		return
	}
	for _, sc := range scripts {
		if !sc.Known {
			continue
		}
		for _, e := range sedEffects(sc.Value) {
			switch e.kind {
			case 'e':
				w.problem("sed runs a command (e)")
				if e.arg != "" {
					w.floorScript("sed e", e.arg)
				}
			case 'w':
				w.recordEffect(s, Write{Target: e.arg, Known: true, Op: "sed w"})
			case 'r':
				s.Reads = append(s.Reads[:len(s.Reads):len(s.Reads)], Read{Target: e.arg, Known: true, Op: "sed r"})
			}
		}
	}
}

// recordEffect adds a tool's own file write to a segment already emitted.
func (w *walker) recordEffect(s *Segment, wr Write) {
	c := *w
	c.writes, c.network = s.Writes, s.Network
	if c.addWrite(wr) {
		s.Writes, s.Network = c.writes, c.network
	}
}

// sedFile is a sed -f script: the standard input, or a file written by the command line.
func (w *walker) sedFile(file string, known bool) Arg {
	if !known {
		return Arg{}
	}
	if file == "-" || isStdinPath(file) {
		text, kind := w.stdinText()
		return Arg{Value: text, Known: kind == stdinKnown}
	}
	if text, known, ok := w.writtenFile(file); ok {
		return Arg{Value: text, Known: known}
	}
	return Arg{}
}

type sedEffect struct {
	kind byte // 'e' runs a command, 'w' writes a file, 'r' reads one
	arg  string
}

// sedEffects scans a sed script for its e, w, W, r, R commands and the e and w flags of s.
func sedEffects(script string) []sedEffect {
	var out []sedEffect
	i := 0
	n := len(script)
	restOfLine := func() string {
		j := strings.IndexByte(script[i:], '\n')
		if j < 0 {
			j = n - i
		}
		s := script[i : i+j]
		i += j
		return strings.TrimSpace(s)
	}
	for i < n {
		c := script[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '{' || c == '}' || c == '!':
			i++
			continue
		case c == '#':
			restOfLine()
			continue
		case c >= '0' && c <= '9' || c == '$' || c == ',' || c == '~' || c == '+':
			i++
			continue
		case c == '/' || c == '\\':
			// An address regexp.
			d := byte('/')
			if c == '\\' && i+1 < n {
				i++
				d = script[i]
			}
			i = skipDelimited(script, i+1, d)
			for i < n && (script[i] == 'I' || script[i] == 'M') {
				i++
			}
			continue
		}
		i++ // the command letter
		switch c {
		case 's':
			if i >= n {
				return out
			}
			d := script[i]
			start := i + 1
			mid := skipDelimited(script, start, d)
			end := skipDelimited(script, mid, d)
			repl := ""
			if mid-1 >= start && end-1 >= mid {
				repl = script[mid : end-1]
			}
			i = end
			for i < n && strings.IndexByte("gpiImMe0123456789w", script[i]) >= 0 {
				f := script[i]
				i++
				if f == 'e' {
					out = append(out, sedEffect{'e', unescapeSed(repl)})
				}
				if f == 'w' {
					out = append(out, sedEffect{'w', restOfLine()})
				}
			}
		case 'y':
			if i >= n {
				return out
			}
			d := script[i]
			i = skipDelimited(script, skipDelimited(script, i+1, d), d)
		case 'e':
			out = append(out, sedEffect{'e', restOfLine()})
		case 'w', 'W':
			out = append(out, sedEffect{'w', restOfLine()})
		case 'r', 'R':
			out = append(out, sedEffect{'r', restOfLine()})
		case 'a', 'i', 'c', ':', 'b', 't', 'T', 'v', 'q', 'Q', 'l', 'L':
			if c == 'b' || c == 't' || c == 'T' || c == 'q' || c == 'Q' || c == 'l' || c == 'L' {
				for i < n && script[i] != ';' && script[i] != '\n' && script[i] != '}' {
					i++
				}
				continue
			}
			restOfLine()
		}
	}
	return out
}

// skipDelimited returns the index just after the next unescaped delimiter d from i.
func skipDelimited(s string, i int, d byte) int {
	for i < len(s) {
		if s[i] == '\\' {
			i += 2
			continue
		}
		if s[i] == d {
			return i + 1
		}
		i++
	}
	return len(s)
}

func unescapeSed(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == 'n' {
				b.WriteByte('\n')
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// --- database shells ---

// sqlCommands hands the floor the shell commands of sqlite3 dot-commands and psql/mysql
// meta-commands.
func (w *walker) sqlCommands(label, text string) {
	for _, line := range strings.Split(text, "\n") {
		l := strings.TrimSpace(line)
		for _, p := range []string{".shell ", ".system ", `\! `, `\!`, "system ", "! "} {
			if rest, ok := strings.CutPrefix(l, p); ok {
				w.problem("%s runs a shell command", label)
				w.floorScript(label, rest)
				break
			}
		}
		for _, p := range []string{".once |", ".output |", ".o |", ".once '|", ".output '|", `\o |`, `\g |`, `\copy `} {
			if strings.HasPrefix(l, p) {
				w.problem("%s pipes into a command", label)
				if i := strings.IndexByte(l, '|'); i >= 0 {
					w.floorScript(label, strings.Trim(l[i+1:], "'\" "))
				}
			}
		}
		if strings.HasPrefix(l, ".load ") || strings.Contains(strings.ToLower(l), "load_extension(") {
			w.problem("%s loads a library", label)
		}
		if i := strings.Index(strings.ToUpper(l), " PROGRAM "); i >= 0 {
			w.problem("%s runs a program from COPY … PROGRAM", label)
			for _, t := range tokenizeCode(l[i:]) {
				if t.kind == 's' {
					w.floorScript(label, t.s)
				}
			}
		}
	}
}

func (w *walker) sqlite(args []Arg) {
	w.emit(args, KindCommand)
	db := false
	for i := 1; i < len(args); i++ {
		v := args[i].Value
		switch {
		case v == "-cmd" || v == "--cmd":
			if i+1 < len(args) {
				i++
				w.sqlCommands("sqlite3 -cmd", args[i].Value)
			}
		case v == "-init" || v == "--init":
			i++
			w.problem("sqlite3 -init runs commands from a file")
		case strings.HasPrefix(v, "-"):
			switch strings.TrimLeft(v, "-") {
			case "separator", "newline", "nullvalue", "vfs", "heap", "lookaside", "pagecache", "mmap", "maxsize", "pcachetrace", "escape":
				i++
			}
		case !db:
			db = true
		default:
			w.sqlCommands("sqlite3", v)
		}
	}
	if text, kind := w.stdinText(); kind == stdinKnown {
		w.sqlCommands("sqlite3", text)
	}
}

func (w *walker) sqlClient(base string, args []Arg) {
	w.emit(args, KindCommand)
	for i := 1; i < len(args); i++ {
		v := args[i].Value
		name, val, hasVal := strings.Cut(v, "=")
		switch name {
		case "-c", "--command", "-e", "--execute":
			val, _, j := longValue(args, i, hasVal, val)
			i = j
			w.sqlCommands(base+" "+name, val)
		case "-f", "--file":
			if !hasVal {
				i++
			}
		default:
			if strings.HasPrefix(v, "-c") && len(v) > 2 && base == "psql" {
				w.sqlCommands(base+" -c", v[2:])
			}
			if strings.HasPrefix(v, "-e") && len(v) > 2 && base != "psql" {
				w.sqlCommands(base+" -e", v[2:])
			}
		}
	}
	if text, kind := w.stdinText(); kind == stdinKnown {
		w.sqlCommands(base, text)
	}
}

// --- network tools that run programs ---

func (w *walker) socat(args []Arg) {
	w.emit(args, KindCommand)
	for _, a := range args[1:] {
		v := a.Value
		head, rest, ok := strings.Cut(v, ":")
		if !ok {
			continue
		}
		switch strings.ToUpper(head) {
		case "EXEC":
			cmd, _, _ := strings.Cut(rest, ",")
			w.hiddenScript("socat EXEC", strings.Trim(cmd, `'"`), a.Known)
		case "SYSTEM":
			cmd, _, _ := strings.Cut(rest, ",")
			w.hiddenScript("socat SYSTEM", strings.Trim(cmd, `'"`), a.Known)
		}
	}
}

func (w *walker) netcat(base string, args []Arg) {
	w.emit(args, KindCommand)
	for i := 1; i < len(args); i++ {
		v := args[i].Value
		name, val, hasVal := strings.Cut(v, "=")
		switch name {
		case "--exec", "--sh-exec", "--lua-exec":
			val, known, j := longValue(args, i, hasVal, val)
			i = j
			if name == "--lua-exec" {
				w.problem("%s --lua-exec runs a Lua program", base)
				continue
			}
			w.hiddenScript(base+" "+name, val, known)
			continue
		}
		if len(v) > 1 && v[0] == '-' && v[1] != '-' {
			i = shortCluster(args, i, "ecpsqwWiIOPTxXbgGmM", func(c byte, val string, known bool) {
				if c == 'e' || c == 'c' {
					w.hiddenScript(base+" -"+string(c), val, known)
				}
			})
		}
	}
}

// --- package managers and build tools with commands in options ---

func (w *walker) aptGet(base string, args []Arg) {
	w.emit(args, KindCommand)
	for i := 1; i < len(args); i++ {
		v := args[i].Value
		kv := ""
		known := args[i].Known
		switch {
		case v == "-o" || v == "--option":
			if i+1 < len(args) {
				i++
				kv, known = args[i].Value, args[i].Known
			}
		case strings.HasPrefix(v, "-o") && len(v) > 2:
			kv = v[2:]
		case strings.HasPrefix(v, "--option="):
			kv = v[len("--option="):]
		case v == "-c" || v == "--config-file":
			w.problem("%s -c reads options from a file", base)
			i++
		}
		if kv == "" {
			continue
		}
		key, val, _ := strings.Cut(kv, "=")
		lk := strings.ToLower(key)
		switch {
		case strings.Contains(lk, "invoke") || strings.Contains(lk, "pre-install-pkgs") || strings.HasSuffix(lk, "::cmd"):
			w.hiddenScript(base+" -o "+key, strings.Trim(val, `"`), known)
		case strings.HasPrefix(lk, "dir::bin") || strings.HasPrefix(lk, "dpkg::options") || strings.HasPrefix(lk, "acquire::") && strings.Contains(lk, "proxy-auto-detect"):
			w.problem("%s -o %s changes the programs it runs", base, key)
		}
	}
}

func (w *walker) goTool(args []Arg) {
	w.emit(args, KindCommand)
	if len(args) < 2 {
		return
	}
	sub := args[1].Value
	for i := 2; i < len(args); i++ {
		v := args[i].Value
		if v == "--" {
			return
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(v, "-"), "=")
		if !strings.HasPrefix(v, "-") {
			if sub == "run" || sub == "test" && !strings.HasPrefix(v, "-") {
				if sub == "run" {
					return // the program's own arguments follow
				}
			}
			continue
		}
		switch name {
		case "exec", "toolexec", "vettool":
			val, known, j := longValue(args, i, hasVal, val)
			i = j
			w.hiddenScript("go "+sub+" -"+name, val, known)
		case "overlay", "modfile", "pgo":
			if !hasVal {
				i++
			}
		}
		if sub == "env" && name == "w" {
			for _, a := range args[i+1:] {
				if k, v2, ok := strings.Cut(a.Value, "="); ok && (k == "GOFLAGS" || k == "CC" || k == "CXX" || k == "GOTOOLCHAIN" || k == "GOENV" || k == "GOROOT") {
					w.problem("go env -w %s changes what later go commands run", k)
					w.floorScript("go env -w "+k, v2)
				}
			}
			return
		}
	}
}

func (w *walker) hg(args []Arg) {
	w.emit(args, KindCommand)
	for i := 1; i < len(args); i++ {
		v := args[i].Value
		kv := ""
		switch {
		case v == "--config":
			if i+1 < len(args) {
				i++
				kv = args[i].Value
			}
		case strings.HasPrefix(v, "--config="):
			kv = v[len("--config="):]
		}
		if kv == "" {
			continue
		}
		key, val, _ := strings.Cut(kv, "=")
		section, _, _ := strings.Cut(strings.ToLower(key), ".")
		switch {
		case section == "hooks", section == "alias" && strings.HasPrefix(val, "!"),
			strings.HasSuffix(strings.ToLower(key), "editor"), strings.HasSuffix(strings.ToLower(key), ".ssh"),
			strings.HasSuffix(strings.ToLower(key), "executable"), section == "pager":
			w.hiddenScript("hg --config "+key, strings.TrimPrefix(val, "!"), args[i].Known)
		case section == "extensions":
			w.problem("hg --config extensions loads Python code")
		}
	}
}

// Runners that run a command given after a subcommand (poetry run CMD, bundle exec CMD, …):
// the command is unwrapped; an option before it is not understood.
var subcommandRunners = map[string][]string{
	"poetry": {"run"}, "pipenv": {"run"}, "pdm": {"run"}, "hatch": {"run"}, "rye": {"run"}, "conda": {"run"},
	"mamba": {"run"}, "micromamba": {"run"}, "bundle": {"exec"}, "bundler": {"exec"}, "direnv": {"exec"},
	"opam": {"exec"}, "stack": {"exec"}, "cabal": {"exec"}, "mise": {"exec", "x"}, "asdf": {"exec"},
	"rbenv": {"exec"}, "pyenv": {"exec"}, "nodenv": {"exec"}, "goenv": {"exec"}, "op": {"run"},
	"aws-vault": {"exec"}, "doppler": {"run"}, "infisical": {"run"}, "chamber": {"exec"}, "devbox": {"run"},
	"dotnet": {"exec"}, "sops": {"exec-env", "exec-file"},
}

func (w *walker) subcommandRunner(base string, args []Arg) bool {
	subs, ok := subcommandRunners[base]
	if !ok || len(args) < 3 || !hasName(subs, args[1].Value) {
		return false
	}
	label := base + " " + args[1].Value
	i := 2
	skip := 0
	switch base {
	case "direnv", "sops":
		skip = 1 // the directory or file
	case "aws-vault", "chamber":
		skip = 1 // the profile or service
	}
	for ; i < len(args) && skip > 0; skip-- {
		i++
	}
	if i < len(args) {
		switch v := args[i].Value; {
		case v == "--":
			i++
		case strings.HasPrefix(v, "-"):
			w.emit(args, KindCommand)
			w.cannotUnwrapArgs(label, args, "an option before the command: "+v)
			return true
		}
	}
	if i >= len(args) {
		w.emit(args, KindCommand)
		return true
	}
	w.emit(args[:i:i], KindCommand)
	w.unwrapTo(label, args, i, nil)
	return true
}

// cannotUnwrapArgs is cannotUnwrap for the tools handled here.
func (w *walker) cannotUnwrapArgs(label string, args []Arg, why string) {
	w.problem("cannot see through %s: %s", label, why)
	w.floorScan(args, label)
}

// --- more tools with commands in their options ---

// cargo --config KEY=VALUE sets runners, linkers, wrappers and aliases on the command line.
func (w *walker) cargo(args []Arg) {
	w.emit(args, KindCommand)
	for i := 1; i < len(args); i++ {
		v := args[i].Value
		kv := ""
		switch {
		case v == "--config":
			if i+1 < len(args) {
				i++
				kv = args[i].Value
			}
		case strings.HasPrefix(v, "--config="):
			kv = v[len("--config="):]
		case v == "--":
			return
		}
		if kv == "" {
			continue
		}
		key, val, ok := strings.Cut(kv, "=")
		if !ok {
			w.problem("cargo --config reads a configuration file")
			continue
		}
		key = strings.TrimSpace(key)
		val = strings.Trim(strings.TrimSpace(val), `"'`)
		switch {
		case strings.HasPrefix(key, "alias."):
			argv := []Arg{lit("cargo")}
			for _, wd := range xargsWords(val) {
				argv = append(argv, lit(wd))
			}
			w.hiddenArgv("cargo --config "+key, argv)
		case strings.HasSuffix(key, ".runner") || strings.HasSuffix(key, ".linker") || strings.HasPrefix(key, "build.rustc") ||
			strings.HasSuffix(key, "-wrapper") || key == "build.rustdoc":
			w.hiddenScript("cargo --config "+key, val, args[i].Known)
		case strings.HasPrefix(key, "target.") && strings.HasSuffix(key, ".rustflags"), key == "build.rustflags":
			w.problem("cargo --config %s passes flags to the compiler", key)
		}
	}
}

// gcc -wrapper runs the compiler's programs under another command; -fplugin and -B load code.
func (w *walker) compiler(base string, args []Arg) {
	w.emit(args, KindCommand)
	for i := 1; i < len(args); i++ {
		v := args[i].Value
		switch {
		case v == "-wrapper" && i+1 < len(args):
			i++
			var argv []Arg
			for _, p := range strings.Split(args[i].Value, ",") {
				argv = append(argv, lit(p))
			}
			w.hiddenArgv(base+" -wrapper", argv)
		case strings.HasPrefix(v, "-fplugin") || v == "-B" || strings.HasPrefix(v, "-B") && len(v) > 2 ||
			strings.HasPrefix(v, "-specs") || strings.HasPrefix(v, "@") || strings.HasPrefix(v, "-Xclang") && i+1 < len(args) && strings.HasPrefix(args[i+1].Value, "-load"):
			w.problem("%s %s loads programs or options from elsewhere", base, v)
		}
	}
}

// ansible runs modules: shell, command, raw and script run a command (here with -c local).
func (w *walker) ansible(args []Arg) {
	w.emit(args, KindCommand)
	module := ""
	var moduleArgs []string
	for i := 1; i < len(args); i++ {
		v := args[i].Value
		name, val, hasVal := strings.Cut(v, "=")
		switch name {
		case "-m", "--module-name":
			val, _, j := longValue(args, i, hasVal, val)
			i = j
			module = val
		case "-a", "--args":
			val, _, j := longValue(args, i, hasVal, val)
			i = j
			moduleArgs = append(moduleArgs, val)
		}
	}
	switch strings.TrimPrefix(module, "ansible.builtin.") {
	case "shell", "command", "raw", "script", "":
		for _, a := range moduleArgs {
			w.problem("ansible runs a command on its hosts")
			w.floorScript("ansible -a", a)
		}
	default:
		if len(moduleArgs) > 0 {
			w.problem("ansible runs the module %s", module)
		}
	}
}

// The Lisp calls that run a shell command line, and those that run a program and arguments.
var (
	lispShellRE   = regexp.MustCompile(`\((shell-command(?:-to-string)?|async-shell-command|start-process-shell-command|call-process-shell-command)\s+(")`)
	lispProcessRE = regexp.MustCompile(`\((?:call-process|start-process|process-lines)\s`)
)

// emacs --eval runs Lisp: the floor reads the shell commands it names.
func (w *walker) emacs(args []Arg) {
	w.emit(args, KindCommand)
	for i := 1; i < len(args); i++ {
		v := args[i].Value
		name, val, hasVal := strings.Cut(v, "=")
		switch name {
		case "--eval", "-eval", "--execute", "-execute":
			val, _, j := longValue(args, i, hasVal, val)
			i = j
			w.problem("emacs --eval runs Lisp")
			for _, m := range lispShellRE.FindAllStringSubmatchIndex(val, -1) {
				text, _ := readQuoted(val[m[4]:], '"')
				w.floorScript("emacs "+val[m[2]:m[3]], text)
			}
			for _, m := range lispProcessRE.FindAllStringSubmatchIndex(val, -1) {
				var argv []string
				rest := val[m[1]:]
				for strings.HasPrefix(strings.TrimLeft(rest, " \t"), "\"") || strings.HasPrefix(strings.TrimLeft(rest, " \t"), "nil") {
					rest = strings.TrimLeft(rest, " \t")
					if strings.HasPrefix(rest, "nil") {
						rest = rest[3:]
						continue
					}
					q, n := readQuoted(rest, '"')
					argv = append(argv, q)
					rest = rest[n:]
				}
				w.floorOnly("emacs").argv("emacs call-process", argv)
			}
		case "-l", "--load", "-f", "--funcall", "--script", "-batch", "--batch", "-Q", "-q":
		}
	}
}

// hasFlagIn reports a short option letter in the clusters of args.
func hasFlagIn(args []Arg, c byte) bool {
	for _, a := range args {
		if v := a.Value; len(v) > 1 && v[0] == '-' && v[1] != '-' && strings.IndexByte(v[1:], c) >= 0 {
			return true
		}
	}
	return false
}
