// Package shell analyses a shell command line the way a shell would execute it, on the parser of
// mvdan.cc/sh/v3/syntax: it finds every command that runs (chains, pipes, subshells, command and
// process substitutions, heredocs, function bodies), unwraps shell wrappers (bash -c …), dispatch
// wrappers (sudo, env, xargs, npx, …), the commands hidden in other commands' arguments,
// options, configuration and environment (git -c alias.x='!…', find -exec, make SHELL=, tar
// --to-command, GIT_SSH_COMMAND=, …) and the literal scripts handed to eval, pipes into sh,
// remote shells and interpreters, and reports each command as a Segment with its effects
// (files read and written, network endpoints, standard input).
//
// The analysis never executes anything. Values it can work out (literal assignments, $(echo
// …), base64 -d, $HOME, the cd chain, read <<<, printf -v, arrays, files written earlier in the
// line) are used so that the hardline floor sees through the usual obfuscations.
//
// # Allow only on proof
//
// Analysis.OK is true only when the command line stays inside the subset of bash below, where
// every effect is visible to the analysis; everything outside it is not-ok, so a human is
// asked (the floor still judges every command text it can read). The subset:
//
//   - Statements: simple commands; lists and pipelines (;, newline, &, &&, ||, |, |&, !);
//     subshells ( … ) and groups { …; }; if/elif/else; case; time; function definitions
//     that do not call themselves; for NAME in WORDS over at most 16 known words or globs
//     (a glob variable stands for each file it matches), not nested in another loop.
//   - Words: literal text, quotes ('…', "…", $'…'), brace expansion, globs (*, ?, […]), ~
//     and ~/… with a known home, ~+ with a known cwd, and expansions whose value is known:
//     $PWD and $HOME (the request's cwd and the agent's home), variables the line assigns
//     known values, the loop variable of such a for loop, the positional parameters of a
//     script whose arguments are known, and the digit-only specials ($?, $$, $!, $#, $-,
//     $RANDOM, $LINENO, $SECONDS, $BASHPID, $PPID, $UID, $EUID). Parameter forms ${X},
//     ${X-w}, ${X:-w}, ${X=w}, ${X:=w}, ${X+w}, ${X:+w}, ${X?w}, ${X:?w}, ${X#p}, ${X##p},
//     ${X%p}, ${X%%p}, ${X/lit/w}, ${X//lit/w}, ${#X}, ${X^}, ${X^^}, ${X,}, ${X,,} and
//     ${X:off:len} with inert offsets. $(…) and `…` whose output the analysis works out
//     exactly (echo, printf without widths, cat of a here-document, base64 -d, pwd, cd,
//     basename, dirname, head, tail, tr, rev, xxd -r -p). <(…) and >(…). Indexed arrays the
//     line builds from known words (a=(…), a[0]=…, declare -a), read with subscripts whose
//     value is known (${a[1]}, ${a[$i]}, ${a[@]}, ${#a[@]}).
//   - A value that is not known (the output of a command, a variable the line assigned one)
//     only where it is printed by echo or assigned to a variable used the same way: never
//     as a command, a path, an option, a redirection target or printf's argument.
//   - Arithmetic ($((…)), ((…)), let, ${x:off:len}, [[ a -eq b ]]) whose every leaf is a
//     number or a variable whose known value is itself inert; assignments to plain names.
//   - Redirections of every form to known targets; here-documents and here-strings.
//   - Builtins: cd and pushd to a known directory, echo, printf (printf -v to a plain name),
//     test, [ and [[ … ]] (-v only of a plain name), true, false, :, pwd, exit, return, shift,
//     break, continue, wait, jobs, type, command (not exec -a), builtin, exec, eval and trap
//     of known text (walked like the rest), read into plain names, unset of plain names,
//     export, declare, typeset, local and readonly of plain names (not -n, -i, -a, -A, -l,
//     -u, -c, export -f), set with the options that keep the shell's reading unchanged
//     (-e, -u, -x, -o pipefail, …; not -k, +B, -o posix), shopt of the glob options other
//     than dotglob (nullglob, failglob, globstar, nocaseglob; extglob, though extended globs
//     themselves stay outside),
//     source and . of a literal file inside the working directory, kill, umask, ulimit.
//   - Wrappers and hidden commands whose options are all understood (the way the tool reads
//     them: clusters, --opt=value, --opt value, unambiguous abbreviations), with the hidden
//     command resolved.
//
// Outside it, and so never auto-allowed: variables from the environment or unset ones, a
// value that is not known anywhere but echo and assignments, while/until/select and C-style
// for loops, nested loops, recursive functions, coproc, associative arrays, read -a,
// mapfile, subscripts that are not known (a[$(…)]=…, ${a[$x]} with $x unknown), name
// references (declare -n), shopt -s dotglob and GLOBIGNORE, ${!x}, ${!prefix*},
// ${x@…}, $"…", ~user, extended globs, arithmetic that names an unknown variable or text
// with a subscript or expansion, test -v of a subscript, source of anything else, alias,
// hash -p, enable, bind, fc, compgen, getopts, exec -a, variables that change what runs
// (PATH, LD_*, BASH_ENV, PYTHONPATH, NODE_OPTIONS, GIT_DIR, npm_config_*, …), makefile text
// on the command line, editor and debugger commands (vim -c, gdb -ex, ed scripts), and every
// wrapper or hidden command that cannot be resolved.
package shell

import (
	"fmt"
	"path"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// internalError starts the problem reported when the analysis itself fails.
const internalError = "internal error analysing the command"

// MaxPolicyDepth is how many wrappers deep a command may sit and still be judged; deeper
// nesting makes the analysis not-ok.
const MaxPolicyDepth = 3

// Limits that bound the work done on hostile input. Exceeding one sets Analysis.Incomplete.
const (
	maxDepth     = 16      // nested scripts/wrappers followed for the floor
	maxSegments  = 4096    // segments recorded
	maxSteps     = 1 << 14 // statements, evaluations and nested scripts visited
	maxValue     = 1 << 16 // bytes of an evaluated value or output
	maxBraces    = 256     // words a brace expansion may produce
	maxLoopItems = 16      // items of a for loop over known words judged one by one
	maxReplays   = 64      // function bodies replayed with their call's arguments
	maxInput     = 1 << 20 // bytes of a command line analysed
	maxExpanded  = 4 << 20 // bytes all expansions of a command line may produce
)

// Options configure one analysis.
type Options struct {
	// Cwd is the directory the command runs in; "" when unknown.
	Cwd string
	// Home is the home directory of the user the command runs as; "" when unknown.
	Home string
	// Project is the project directory the request works in ("" when it has none: a cwd that
	// is /, a home or a system directory). The repositories, makefiles and package scripts a
	// command runs from outside it are not the project's, and the analysis says so.
	Project string
}

// Analysis is the result of analysing one command line.
type Analysis struct {
	// OK is true when every executed command was found and nothing was left unresolved.
	OK bool
	// Problems say why OK is false, in the order found.
	Problems []string
	// Normalized is the command as the parser prints it (on one line where the syntax
	// allows), or the raw input when it does not parse.
	Normalized string
	// Parsed is false when the input is not valid shell syntax.
	Parsed bool
	// Incomplete is true when a limit stopped the analysis before it saw everything (the
	// input is too large or too deeply nested): nothing about it may be trusted.
	Incomplete bool
	// Segments are every command found, judged ones and floor-only ones.
	Segments []*Segment
	// ForkBombs describe self-replicating shell functions found.
	ForkBombs []string
	// EnvExported is set when the command line exports to the programs it runs (export,
	// declare -x, set -a) a variable through which tools read options, configuration or the
	// programs they run (GREP_OPTIONS, TAR_OPTIONS, LS_COLORS, PAGER, PATH, LD_*, …): no
	// command of it is then a safe bin. A name no tool reads that way (FOO, NODE_ENV) does not
	// set it.
	EnvExported bool
	// EnvExportedNames are the names exported, in the order found; "*" stands for names that
	// cannot be listed (set -a exports every later assignment, export -f a function).
	EnvExportedNames []string
	// GlobsMatchHidden is set when the line makes globs match hidden files (shopt -s dotglob,
	// a GLOBIGNORE assignment): "*" then matches .env and the keys of ~/.ssh.
	GlobsMatchHidden bool
	// EnvReads are the names of the variables whose value the command line expands anywhere
	// ($X, ${X:-…}, "$X", a here-doc body, an arithmetic expression, a name handed to
	// declare -p or printf -v's source), deduplicated, in the order found. A variable the
	// line assigns itself is listed too: the policy decides which names look like secrets.
	EnvReads []string
	// EnvDumps are the shell forms found that print every variable (or every variable's
	// name) at once: "set", "declare -p", "typeset -p", "export -p", "readonly -p",
	// "compgen -v", "${!prefix*}", …, in the order found. They read the whole environment
	// without naming a variable; the external commands that do the same (env, printenv) are
	// ordinary segments.
	EnvDumps []string
	// Links are the symbolic links and device nodes the command line creates (ln -s, mknod,
	// cp -s), in order: a later path through one of them reaches its target.
	Links []Link

	st *state // the memory this analysis came from, for Release
}

// Release gives the analysis's memory back for reuse by a later Analyze. Neither the Analysis
// nor its Segments may be used afterwards (strings and slices copied out of them may).
func (an *Analysis) Release() {
	st := an.st
	if st == nil {
		return
	}
	an.st = nil
	statePool.Put(st)
}

// Kind says what a segment runs.
type Kind uint8

const (
	// KindCommand runs an executable found by name or path.
	KindCommand Kind = iota
	// KindBuiltin runs a shell builtin (cd, export, test, …).
	KindBuiltin
	// KindFunction calls a function declared earlier in the same command line.
	KindFunction
	// KindRedirect is a redirection with no command (`> file`).
	KindRedirect
)

func (k Kind) String() string {
	switch k {
	case KindBuiltin:
		return "builtin"
	case KindFunction:
		return "function"
	case KindRedirect:
		return "redirect"
	}
	return "command"
}

// Segment is one command that runs.
type Segment struct {
	Args []Arg
	Kind Kind
	// Benign is set on builtins that only change the shell's own state (cd, export, test);
	// builtins like source, hash or alias are not benign.
	Benign bool
	// Wrappers are the wrappers unwrapped to reach this command, outermost first
	// ("sudo", "bash -c", "xargs", …).
	Wrappers []string
	// Env are the NAME=value assignments made for this command (prefix and env wrapper).
	Env []string
	// Writes are the files this command writes through redirections of every form (>, >>,
	// >|, &>, &>>, N>, <>, >&FILE) and through the few wrappers that write a file themselves
	// (script's typescript, time -o, sudoedit). /dev/null, /dev/stdout, /dev/stderr,
	// /dev/tty and /dev/fd/1 and 2 are not writes and are never listed; a network endpoint
	// is listed in Network instead. Tool options that write (sed -i, sort -o, tee) are not
	// here: they are the argument profiles' business.
	Writes []Write
	// Reads are the files this command reads through redirections (< FILE, <> FILE, <&FILE)
	// and the files source and . read. /dev/null, /dev/stdin, /dev/tty and /dev/fd/0 are
	// not listed; network endpoints are in Network.
	Reads []Read
	// Network are the network endpoints the command opens through bash's /dev/tcp/HOST/PORT
	// and /dev/udp/HOST/PORT, found in a redirection or an argument: the cleaned path, or
	// the word as written when it is not known.
	Network []string
	// Input is what the command reads on its standard input, and InputText the text when
	// Input is InputText (a here-doc, a here-string, or a pipe from a command whose output
	// the analysis works out).
	Input     Input
	InputText string
	// Cwd is the directory it runs in ("" unknown), Home the home directory it sees.
	Cwd, Home string
	// CwdRel is, when Cwd is unknown, where the command runs relative to the directory the
	// command line started in ("../.." after cd ../..; "." when it did not move), or "" when
	// that is not known either.
	CwdRel string
	// Judged is true for commands that run on this host as part of the command line. Floor-only
	// segments (Judged false) come from remote shells, interpreter strings, replays with known
	// loop values and error recovery; the floor and deny rules see them, the allowlist does not.
	Judged bool
	// Origin says where a floor-only or hidden segment was found ("ssh", "python -c",
	// "git -c alias.x", "find -exec", "GIT_SSH_COMMAND=", …).
	Origin string
	// Hidden is set on a command found inside another command's arguments, option values,
	// environment or configuration rather than in command position: git -c alias.x='!…',
	// find -exec, make SHELL=…, tar --to-command, rsync -e, GIT_SSH_COMMAND=…, a trap
	// string, … The allowlist entry (and argv pattern) of the outer command never covers it:
	// when Judged, it must be satisfied on its own, and the floor always sees it.
	Hidden bool
	// Windows marks a cmd.exe or PowerShell statement: Args hold its raw tokens. WinCwd is the
	// request's working directory when it is a Windows path (C:\Users\x\proj).
	Windows bool
	WinCwd  string
	// Lang and Code are an interpreter's inline program (python -c, perl -e, awk '…').
	Lang, Code string
	// LocalBins is a directory, relative to Cwd, the resolver looks in first (npx and
	// friends: "node_modules/.bin"; uv: ".venv/bin").
	LocalBins string
	// Pipe numbers the pipeline the segment belongs to (0: none); PipePos is its place in it.
	Pipe, PipePos int
	// MoreArgs is set when the command receives arguments that are not written in the
	// command line (xargs appending words read from an unknown input).
	MoreArgs bool

	base string // Base(Name()), computed once
}

// Arg is one argument after expansion.
type Arg struct {
	// Value is the best-effort value: expansions that could not be evaluated count as empty.
	Value string
	// Raw is the word as written with quotes removed but backslashes kept (the view cmd.exe
	// and PowerShell have of it).
	Raw string
	// Pattern is set when the word has active glob characters: Value as a pattern for
	// path.Match, with quoted metacharacters escaped.
	Pattern string
	// Static is true for plain literal text: no expansion of any kind.
	Static bool
	// Known is true when every expansion was evaluated (Value is exact).
	Known bool
	// Prefix is the length of Value before the first expansion that could not be evaluated,
	// and Suffix the length after the last one (0 when Known).
	Prefix, Suffix int

	proc *syntax.ProcSubst // the word is exactly one process substitution
}

// Write is a file written through a redirection.
type Write struct {
	// Target is the file as written (expanded where possible; relative to the segment's
	// Cwd unless absolute).
	Target string
	// Known is false when the target could not be worked out.
	Known bool
	// Pattern is set when the target has active glob characters (bash expands a
	// redirection word that matches exactly one file): Target as a pattern for Match.
	Pattern string
	// Op is how the file is written: ">", ">>", ">|", "&>", "&>>", "<>", ">&" (N>&FILE),
	// or the wrapper that writes it ("script", "time -o", "sudoedit").
	Op string
}

// Read is a file read through a redirection or by source.
type Read struct {
	// Target is the file as written (expanded where possible; relative to the segment's
	// Cwd unless absolute).
	Target string
	// Known is false when the target could not be worked out.
	Known bool
	// Pattern is set when the target has active glob characters.
	Pattern string
	// Op is how the file is read: "<", "<>", "<&" or "source".
	Op string
}

// Link is a symbolic link or device node the command line creates.
type Link struct {
	// Path is the link created, absolute and cleaned ("" parts unknown are never recorded).
	Path string
	// Target is what it points to, absolute and cleaned: the link's target, or for a block
	// device node made with mknod a canonical device path ("/dev/block/MAJOR:MINOR").
	Target string
}

// Input says what a segment reads on its standard input.
type Input uint8

const (
	// InputInherited is whatever the command line itself was given.
	InputInherited Input = iota
	// InputText is text the analysis worked out (Segment.InputText).
	InputText
	// InputUnknown is a pipe or process substitution whose output is unknown.
	InputUnknown
	// InputFile is a file or descriptor redirected to it.
	InputFile
)

// Name is the command as written (argv[0]), or "" for a bare redirection.
func (s *Segment) Name() string {
	if len(s.Args) == 0 {
		return ""
	}
	return s.Args[0].Value
}

// Base is Base(Name()): the command name without directory, lower-cased, without a Windows
// executable extension.
func (s *Segment) Base() string {
	if s.base == "" && len(s.Args) > 0 {
		s.base = Base(s.Args[0].Value)
	}
	return s.base
}

// Argv returns the argument values.
func (s *Segment) Argv() []string {
	out := make([]string, len(s.Args))
	for i := range s.Args {
		out[i] = s.Args[i].Value
	}
	return out
}

// Static reports whether every argument is plain literal text.
func (s *Segment) Static() bool {
	for i := range s.Args {
		if !s.Args[i].Static {
			return false
		}
	}
	return true
}

// WritesFiles reports whether the segment writes a file through a redirection (the harmless
// devices are never listed in Writes).
func (s *Segment) WritesFiles() bool { return len(s.Writes) > 0 }

func harmlessWrite(t string) bool {
	switch t {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/1", "/dev/fd/2":
		return true
	}
	return false
}

// state is everything one analysis allocates up front, in one allocation: the Analysis it
// returns, the walker and room for the first segments and arguments.
type state struct {
	an     Analysis
	sh     shared
	w      walker
	segs   [8]Segment
	ptrs   [8]*Segment
	args   [24]Arg
	walks  [8]walker
	stdins [2]stdinState
}

var statePool = sync.Pool{New: func() any { return new(state) }}

// Analyze parses and analyses a command line.
func Analyze(cmd string, opts Options) *Analysis { return analyze(cmd, opts, true) }

// analyze is Analyze, with the fast path for plain words allowed or not (tests compare the two).
func analyze(cmd string, opts Options, fast bool) (result *Analysis) {
	st := statePool.Get().(*state)
	// The slabs need no clearing: every slot is written before it is read.
	st.an, st.sh = Analysis{}, shared{}
	an := &st.an
	an.st = st
	st.sh.slab = st.segs[:]
	st.sh.argArena = st.args[:]
	st.sh.wslab = st.walks[:]
	st.sh.stdinSlab = st.stdins[:]
	an.Segments = st.ptrs[:0]
	if len(cmd) > maxInput {
		an.Normalized = cmd
		an.Incomplete = true
		an.problem("the command is larger than %d bytes", maxInput)
		return an
	}
	if strings.IndexByte(cmd, 0) >= 0 {
		an.problem("the command contains a NUL byte")
	}
	if hasLineContinuation(cmd) {
		an.problem("line continuation (backslash-newline)")
	}
	w := newWalker(&st.w, &st.sh, an, opts)
	if opts.Project != "" && path.IsAbs(opts.Project) {
		st.sh.project = path.Clean(opts.Project)
	}
	st.sh.noFast = !fast
	defer func() {
		// A bug must not take the service down, nor let anything through: the command asks.
		if r := recover(); r != nil {
			an.problem("%s: %v", internalError, r)
			an.OK = false
			result = an
		}
	}()
	if cmds, out, ok := st.sh.fastSplitNormalized(cmd, true); ok {
		an.Parsed = true
		w.walkFast(cmds)
		an.Normalized = out
		if looksWindows(cmd) {
			w.floorOnly("raw").windowsScript(cmd, "raw")
		}
		an.finish()
		return an
	}
	f, err := parse(cmd)
	if err != nil {
		an.Normalized = cmd
		an.problem("does not parse as shell: %v", err)
		// Bash would refuse to run it too, but cmd.exe and PowerShell would not: let the floor
		// look at what can be recovered and at the Windows reading of the text.
		w.judged = false
		w.origin = "recovered"
		if rf := parseRecover(cmd); rf != nil {
			w.walkStmts(rf.Stmts)
		}
		w.windowsScript(cmd, "raw")
	} else {
		an.Parsed = true
		w.walkStmts(f.Stmts)
		an.Normalized = printFile(f, w.sh.background || an.Incomplete)
		if looksWindows(cmd) {
			// A Windows agent's shell tool: the floor also reads the line as cmd.exe and
			// PowerShell would, here-document bodies left out.
			w.floorOnly("raw").windowsScript(withoutHeredocs(f, cmd), "raw")
		}
	}
	an.finish()
	return an
}

// finish sets OK once the walk is over.
func (an *Analysis) finish() {
	if an.Parsed {
		judged := 0
		for _, s := range an.Segments {
			if s.Judged {
				judged++
			}
		}
		if judged == 0 {
			an.problem("empty command: nothing to run")
		}
	}
	an.OK = len(an.Problems) == 0 && !an.Incomplete
}

// reservedWord lists words that start something other than a simple command.
func reservedWord(w string) bool {
	switch w {
	case "if", "then", "else", "elif", "fi", "do", "done", "case", "esac", "while", "until", "for", "in",
		"select", "function", "time", "coproc", "{", "}", "!", "[[", "]]", "declare", "export", "local",
		"readonly", "typeset", "nameref", "let":
		return true
	}
	return strings.ContainsRune(w, '=') // assignments print their own way
}

func hasLineContinuation(s string) bool {
	for i := strings.IndexByte(s, '\\'); i >= 0 && i+1 < len(s); {
		if s[i+1] == '\n' || (s[i+1] == '\r' && i+2 < len(s) && s[i+2] == '\n') {
			return true
		}
		j := strings.IndexByte(s[i+1:], '\\')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

func (an *Analysis) problem(format string, args ...any) {
	if len(an.Problems) >= 32 {
		return
	}
	p := fmt.Sprintf(format, args...)
	for _, q := range an.Problems {
		if q == p {
			return
		}
	}
	an.Problems = append(an.Problems, p)
}

// withoutHeredocs is src with the bodies of its here-documents blanked.
func withoutHeredocs(f *syntax.File, src string) string {
	var b []byte
	syntax.Walk(f, func(n syntax.Node) bool {
		r, ok := n.(*syntax.Redirect)
		if !ok || r.Hdoc == nil || !r.Hdoc.Pos().IsValid() {
			return true
		}
		start, end := int(r.Hdoc.Pos().Offset()), int(r.Hdoc.End().Offset())
		if start < 0 || end > len(src) || start >= end {
			return true
		}
		if b == nil {
			b = []byte(src)
		}
		for i := start; i < end; i++ {
			if b[i] != '\n' {
				b[i] = ' '
			}
		}
		return true
	})
	if b == nil {
		return src
	}
	return string(b)
}
