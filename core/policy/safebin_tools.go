package policy

import (
	"path"
	"strings"

	"github.com/approvebot/approvebot/core/argv"
)

// toolSpec is what approvebot knows about one program: how it reads its arguments, whether a
// call of it can be a safe bin, and what a call writes and reads recursively.
type toolSpec struct {
	// opts is the program's option grammar; parse, when set, reads the arguments instead.
	opts  *argv.Spec
	parse func(p *argv.Parsed, args []string) error
	// getopt marks opts as the program's own getopt grammar (checked against the binary).
	getopt bool
	// digits: an obsolete "-NUM" first argument (head -5, tail -20f) is read before getopt.
	digits bool
	// safe reports whether a call only reads and runs nothing else: a safe bin. nil: never.
	safe func(c *toolCall) bool
	// injectSafe: no option of the program does harm when a file name supplies it, so a glob
	// that could expand to a name starting with "-" (wc -l *.go) is fine. A file name has no
	// "/", so an injected option can only name files in the directory itself.
	injectSafe bool
	// effects adds what a call writes and which directories it reads recursively. nil: the
	// program does neither (it reads the files it names, or nothing).
	effects func(c *toolCall, e *effects)
	// text marks which arguments are text rather than paths (patterns, scripts, messages),
	// by index into args; nil: every argument may be a path. allText: all of them are.
	text    func(c *toolCall, t *argSet)
	allText bool
}

// argSet is a set of argument indexes.
type argSet struct {
	small uint64
	big   map[int]bool
}

func (a *argSet) add(i int) {
	if i < 0 {
		return
	}
	if i < 64 {
		a.small |= 1 << i
		return
	}
	if a.big == nil {
		a.big = map[int]bool{}
	}
	a.big[i] = true
}

func (a *argSet) has(i int) bool {
	if i < 64 {
		return i >= 0 && a.small&(1<<i) != 0
	}
	return a.big[i]
}

// toolCall is one call of a known program.
type toolCall struct {
	name string
	args []string // without the program name
	p    argv.Parsed
	err  error
	// off is how many leading arguments were read before the grammar (an obsolete -NUM).
	off int
	// git is the call read as git's (gitArgs), once.
	git    gitCall
	gitSet bool
}

// callInto reads a call into c, reusing c's memory.
func (ts *toolSpec) callInto(c *toolCall, name string, args []string) {
	c.name, c.args, c.err, c.off, c.gitSet = name, args, nil, 0, false
	a := args
	if ts.digits && len(a) > 0 && obsoleteCount(a[0]) {
		c.off, a = 1, a[1:]
	}
	switch {
	case ts.parse != nil:
		c.err = ts.parse(&c.p, a)
	case ts.opts != nil:
		c.err = ts.opts.ParseInto(&c.p, a)
	default:
		c.p.Reset()
		return
	}
	if c.off > 0 {
		for i := range c.p.OperandIndex {
			c.p.OperandIndex[i] += c.off
		}
		for i := range c.p.Options {
			c.p.Options[i].Index += c.off
			c.p.Options[i].ValueIndex += c.off
		}
	}
}

// obsoleteCount is head's and tail's -NUM[bcl][f] first argument.
func obsoleteCount(a string) bool {
	if len(a) < 2 || a[0] != '-' {
		return false
	}
	i := 1
	for i < len(a) && a[i] >= '0' && a[i] <= '9' {
		i++
	}
	if i == 1 {
		return false
	}
	if i < len(a) && strings.IndexByte("bcl", a[i]) >= 0 {
		i++
	}
	if i < len(a) && a[i] == 'f' {
		i++
	}
	return i == len(a)
}

// effects are what a call does to the file system beyond reading the files it names.
type effects struct {
	// writes are the files and directories the call creates, changes or removes, as written
	// (relative to the segment's cwd).
	writes []string
	// trees are the directories it reads recursively; "." for the working directory.
	trees []string
	// lists are the directories whose every name it lists recursively without reading the
	// files (ls -R, du -a, find, tree): the names under a home or a system directory say
	// which keys and credentials exist.
	lists []string
	// unknown says why what it writes or reads cannot be known (a config file, a list of
	// names read from a file): the call is then never allowed without a human.
	unknown string
	// reads are files read that are not words of the command themselves (sed's r command).
	reads []string
	// envDump says it prints the whole environment; envVars the variables it prints.
	envDump string
	envVars []string
	// selects are the patterns the call picks files by (find -name, grep --include) in the
	// directories selectIn (as written).
	selects  []selector
	selectIn []string
}

// toolSpecs are the programs approvebot knows, by name.
var toolSpecs = buildToolSpecs()

func buildToolSpecs() map[string]*toolSpec {
	g := getoptGrammars
	safeAll := func(*toolCall) bool { return true }
	m := map[string]*toolSpec{}
	add := func(name string, ts *toolSpec) {
		if ts.opts == nil && ts.parse == nil && g[name] != nil {
			ts.opts, ts.getopt = g[name], true
		}
		m[name] = ts
	}
	// Read-only programs whose every option is harmless.
	add("ls", &toolSpec{safe: safeAll, injectSafe: true, effects: func(c *toolCall, e *effects) {
		if c.p.Has("R", "recursive") {
			e.lists = append(e.lists, operandsOrDot(c)...)
		}
	}})
	for _, n := range []string{"cat", "cut", "df", "cmp", "basename", "dirname", "fold", "md5sum",
		"sha1sum", "sha256sum", "sha512sum", "od", "readlink", "realpath", "rev", "stat", "strings", "tac",
		"uname", "whoami", "id", "column"} {
		add(n, &toolSpec{safe: safeAll, injectSafe: true})
	}
	add("head", &toolSpec{safe: safeAll, injectSafe: true, digits: true})
	add("tail", &toolSpec{safe: safeAll, injectSafe: true, digits: true})
	add("wc", &toolSpec{safe: func(c *toolCall) bool { return !c.p.Has("files0-from") }, injectSafe: true,
		effects: filesFrom("files0-from")})
	add("du", &toolSpec{safe: func(c *toolCall) bool { return !c.p.Has("files0-from", "exclude-from", "X") },
		injectSafe: true, effects: func(c *toolCall, e *effects) {
			filesFrom("files0-from")(c, e)
			if c.p.Has("a", "all") {
				e.lists = append(e.lists, operandsOrDot(c)...)
			}
		}})
	add("tr", &toolSpec{safe: maxOperands(2), text: allOperands})
	add("comm", &toolSpec{safe: maxOperands(2), injectSafe: true})
	add("nl", &toolSpec{safe: maxOperands(1), injectSafe: true})
	add("base64", &toolSpec{safe: maxOperands(1), injectSafe: true})
	add("diff", &toolSpec{safe: safeAll, injectSafe: true, effects: diffEffects})
	add("file", &toolSpec{safe: func(c *toolCall) bool { return !c.p.Has("C", "compile") }, effects: func(c *toolCall, e *effects) {
		if c.p.Has("C", "compile") {
			e.writes = append(e.writes, ".") // magic.mgc files next to the sources
		}
		filesFrom("f", "files-from")(c, e)
	}})
	add("grep", &toolSpec{safe: safeAll, injectSafe: true, effects: grepEffects, text: grepText})
	add("sed", &toolSpec{safe: sedSafe, effects: sedEffects, text: sedText})
	// Safe bins may write what their effects name: the effects allow writes inside the
	// project and ask for the rest.
	add("sort", &toolSpec{safe: func(c *toolCall) bool {
		return !c.p.Has("compress-program", "files0-from")
	}, effects: sortEffects})
	add("uniq", &toolSpec{safe: maxOperands(2), injectSafe: true, effects: func(c *toolCall, e *effects) {
		if len(c.p.Operands) > 1 {
			e.writes = append(e.writes, c.p.Operands[1])
		}
	}})
	add("date", &toolSpec{safe: dateSafe, text: allOperands})
	add("tee", &toolSpec{effects: func(c *toolCall, e *effects) {
		for _, o := range c.p.Operands {
			if o != "-" {
				e.writes = append(e.writes, o)
			}
		}
	}})
	add("cp", &toolSpec{effects: copyEffects(true)})
	add("mv", &toolSpec{effects: copyEffects(false)})
	add("install", &toolSpec{effects: installEffects})
	add("ln", &toolSpec{effects: lnEffects})
	for _, n := range []string{"rm", "rmdir", "unlink", "shred", "mkfifo", "truncate"} {
		add(n, &toolSpec{effects: writesOperands(0)})
	}
	// mkdir and touch can be safe bins: they write only what they name, and the effects judge
	// where (inside the project, nothing sensitive). touch -r and -d read times, nothing else.
	for _, n := range []string{"mkdir", "touch"} {
		add(n, &toolSpec{safe: safeAll, injectSafe: true, effects: writesOperands(0)})
	}
	add("mknod", &toolSpec{effects: func(c *toolCall, e *effects) {
		if len(c.p.Operands) > 0 {
			e.writes = append(e.writes, c.p.Operands[0])
		}
	}})
	add("chown", &toolSpec{effects: ownerEffects})
	add("chgrp", &toolSpec{effects: ownerEffects})
	add("chmod", &toolSpec{parse: parseChmod, effects: ownerEffects})
	add("split", &toolSpec{effects: func(c *toolCall, e *effects) {
		prefix := "x"
		if len(c.p.Operands) > 1 {
			prefix = c.p.Operands[1]
		}
		e.writes = append(e.writes, prefix)
	}})
	add("csplit", &toolSpec{effects: func(c *toolCall, e *effects) {
		prefix := "xx"
		if v := c.p.Values("f", "prefix"); len(v) > 0 {
			prefix = v[len(v)-1]
		}
		e.writes = append(e.writes, prefix)
	}})
	add("gzip", &toolSpec{effects: compressEffects("c", "stdout", "t", "test", "l", "list")})
	// xz prints no getopt message for an unknown option, so its grammar cannot be asked.
	add("xz", &toolSpec{opts: g["xz"], effects: compressEffects("c", "stdout", "t", "test", "l", "list")})
	add("bzip2", &toolSpec{parse: parseLoose, effects: compressEffects("c", "stdout", "t", "test")})
	add("zstd", &toolSpec{parse: parseLoose, effects: func(c *toolCall, e *effects) {
		if v := c.p.Values("o"); len(v) > 0 {
			e.writes = append(e.writes, v...)
			return
		}
		compressEffects("c", "stdout", "t", "test", "l", "list")(c, e)
	}})
	add("dd", &toolSpec{effects: func(c *toolCall, e *effects) {
		for _, o := range c.args {
			if v, ok := strings.CutPrefix(o, "of="); ok {
				e.writes = append(e.writes, v)
			}
		}
	}})
	add("tar", &toolSpec{opts: g["tar"], getopt: true, parse: parseTar, effects: tarEffects})
	add("wget", &toolSpec{effects: wgetEffects})
	add("curl", &toolSpec{opts: curlGrammar, effects: curlEffects})
	add("patch", &toolSpec{effects: func(c *toolCall, e *effects) {
		if c.p.Has("dry-run") {
			return
		}
		if v := c.p.Values("o", "output"); len(v) > 0 {
			e.writes = append(e.writes, v...)
		} else if d := c.p.Values("d", "directory"); len(d) > 0 {
			e.writes = append(e.writes, d[len(d)-1]) // GNU patch refuses names with ".." and absolute names
		} else {
			e.writes = append(e.writes, ".")
		}
		e.writes = append(e.writes, c.p.Values("r", "reject-file", "B", "prefix")...)
	}})
	add("unzip", &toolSpec{parse: parseUnzip, effects: func(c *toolCall, e *effects) {
		if c.p.Has("l", "t", "p", "v", "Z") {
			return
		}
		if d := c.p.Values("d"); len(d) > 0 {
			e.writes = append(e.writes, d[len(d)-1])
		} else {
			e.writes = append(e.writes, ".")
		}
	}})
	add("zip", &toolSpec{parse: parseLoose, effects: zipEffects})
	add("scp", &toolSpec{opts: argv.MustNew("12346ABCTdfOpqRrsvD:F:J:P:S:c:i:l:o:X:", 0), effects: remoteCopyEffects})
	add("rsync", &toolSpec{parse: parseRsync, effects: remoteCopyEffects})
	add("find", &toolSpec{parse: parseFindArgs, safe: findSafe, effects: findEffects, text: findText})
	add("jq", &toolSpec{parse: parseJq, safe: jqSafe, effects: jqEffects, text: jqText})
	add("rg", &toolSpec{opts: rgGrammar, safe: rgSafe, injectSafe: false, effects: rgEffects, text: grepText})
	add("git", &toolSpec{safe: func(c *toolCall) bool { return gitSafe(c.args) }, effects: gitEffects, text: gitText})
	add("env", &toolSpec{effects: func(c *toolCall, e *effects) { e.envDump = "env" }})
	add("printenv", &toolSpec{effects: func(c *toolCall, e *effects) {
		var names []string
		for _, o := range c.args {
			if !strings.HasPrefix(o, "-") {
				names = append(names, o)
			}
		}
		if len(names) == 0 {
			e.envDump = "printenv"
		}
		e.envVars = append(e.envVars, names...)
	}})
	add("ps", &toolSpec{effects: func(c *toolCall, e *effects) {
		for _, a := range c.args {
			// BSD syntax: "ps e", "ps auxe", "ps eww" print every process's environment.
			if !strings.HasPrefix(a, "-") && strings.IndexByte(a, 'e') >= 0 && isLetters(a) {
				e.envDump = "ps " + a
			}
		}
	}})
	add("crontab", &toolSpec{effects: func(c *toolCall, e *effects) {
		for _, a := range c.args {
			if a == "-l" || a == "-V" || a == "--help" {
				return // lists or prints its version
			}
		}
		e.writes = append(e.writes, "/var/spool/cron") // installs, edits or removes a crontab
	}})
	add("xxd", &toolSpec{parse: parseXxd, safe: maxOperands(1), effects: func(c *toolCall, e *effects) {
		if len(c.p.Operands) > 1 {
			e.writes = append(e.writes, c.p.Operands[1])
		}
	}})
	add("yq", &toolSpec{parse: parseLoose, safe: func(c *toolCall) bool { return !c.p.Has("i", "inplace", "in-place") },
		effects: func(c *toolCall, e *effects) {
			if c.p.Has("i", "inplace", "in-place") {
				e.writes = append(e.writes, c.p.Operands...)
			}
		}})
	add("tree", &toolSpec{parse: parseTree, safe: func(c *toolCall) bool { return !c.p.Has("R", "fromfile") },
		effects: func(c *toolCall, e *effects) {
			e.writes = append(e.writes, c.p.Values("o")...)
			e.lists = append(e.lists, operandsOrDot(c)...)
			if c.p.Has("R") {
				// -R runs tree again in every directory with -o 00Tree.html.
				if len(c.p.Operands) == 0 {
					e.writes = append(e.writes, ".")
				}
				e.writes = append(e.writes, c.p.Operands...)
			}
		}})
	add("socat", &toolSpec{parse: parseLoose, effects: socatEffects})
	add("badblocks", &toolSpec{parse: parseBadblocks, effects: func(c *toolCall, e *effects) {
		e.writes = append(e.writes, c.p.Values("o")...)
		if c.p.Has("w") && len(c.p.Operands) > 0 {
			e.writes = append(e.writes, c.p.Operands[0]) // write-mode test: every block is overwritten
		}
	}})
	add("sgdisk", &toolSpec{parse: parseLoose, effects: sgdiskEffects})
	add("which", &toolSpec{opts: argv.MustNew("as", 0), safe: safeAll, injectSafe: true})
	add("perl", &toolSpec{effects: inPlaceEffects("perl")})
	add("awk", &toolSpec{effects: inPlaceEffects("awk")})
	add("gawk", &toolSpec{effects: inPlaceEffects("awk")})
	for _, n := range []string{"echo", "printf", "true", "false"} {
		add(n, &toolSpec{safe: safeAll, injectSafe: true, allText: true})
	}
	add("pwd", &toolSpec{safe: func(c *toolCall) bool { return len(c.args) == 0 }})
	return m
}

// listsOnly are programs that read directories only to list or measure them: a directory
// above a sensitive path in their arguments is no read of it.
var listsOnly = map[string]bool{
	"ls": true, "du": true, "df": true, "stat": true, "file": true, "tree": true, "find": true, "realpath": true,
	"readlink": true, "basename": true, "dirname": true, "mkdir": true, "touch": true, "pwd": true, "echo": true,
	"printf": true, "test": true, "[": true, "cd": true, "pushd": true, "popd": true, "wc": true, "cat": true,
	"head": true, "tail": true, "which": true, "true": true, "false": true, "id": true, "date": true,
}

// operandsOrDot are the call's operands, or the working directory when it names none.
func operandsOrDot(c *toolCall) []string {
	if len(c.p.Operands) == 0 {
		return []string{"."}
	}
	return c.p.Operands
}

func maxOperands(n int) func(c *toolCall) bool {
	return func(c *toolCall) bool { return len(c.p.Operands) <= n }
}

func allOperands(c *toolCall, t *argSet) {
	for _, i := range c.p.OperandIndex {
		t.add(i)
	}
}

func isLetters(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !(s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z') {
			return false
		}
	}
	return true
}

// filesFrom marks options that read a list of file names from a file: what is read is not on
// the command line.
func filesFrom(names ...string) func(c *toolCall, e *effects) {
	return func(c *toolCall, e *effects) {
		for _, n := range names {
			if v := c.p.Values(n); len(v) > 0 {
				e.unknown = "reads the names of the files it reads from " + v[0]
			}
		}
	}
}

func writesOperands(skip int) func(c *toolCall, e *effects) {
	return func(c *toolCall, e *effects) {
		if len(c.p.Operands) > skip {
			e.writes = append(e.writes, c.p.Operands[skip:]...)
		}
	}
}

func ownerEffects(c *toolCall, e *effects) {
	skip := 1 // the owner or mode
	if c.p.Has("reference") {
		skip = 0
	}
	if len(c.p.Operands) > skip {
		e.writes = append(e.writes, c.p.Operands[skip:]...)
	}
}

// copyEffects: cp and mv write the destination (the last operand or -t DIR); mv also removes
// its sources; cp -r, -R and -a read the sources recursively.
func copyEffects(isCopy bool) func(c *toolCall, e *effects) {
	return func(c *toolCall, e *effects) {
		srcs := c.p.Operands
		if t := c.p.Values("t", "target-directory"); len(t) > 0 {
			e.writes = append(e.writes, t...)
		} else if len(srcs) > 0 {
			e.writes = append(e.writes, srcs[len(srcs)-1])
			srcs = srcs[:len(srcs)-1]
		}
		if !isCopy {
			e.writes = append(e.writes, srcs...)
			return
		}
		if c.p.Has("r", "R", "recursive", "a", "archive") {
			e.trees = append(e.trees, srcs...)
		}
	}
}

func installEffects(c *toolCall, e *effects) {
	if c.p.Has("d", "directory") {
		e.writes = append(e.writes, c.p.Operands...)
		return
	}
	if t := c.p.Values("t", "target-directory"); len(t) > 0 {
		e.writes = append(e.writes, t...)
	} else if n := len(c.p.Operands); n > 0 {
		e.writes = append(e.writes, c.p.Operands[n-1])
	}
}

func lnEffects(c *toolCall, e *effects) {
	ops := c.p.Operands
	switch t := c.p.Values("t", "target-directory"); {
	case len(t) > 0:
		e.writes = append(e.writes, t...)
	case len(ops) == 1:
		e.writes = append(e.writes, path.Base(ops[0])) // a link of that name here
	case len(ops) > 1:
		e.writes = append(e.writes, ops[len(ops)-1])
	}
}

func compressEffects(noWrite ...string) func(c *toolCall, e *effects) {
	return func(c *toolCall, e *effects) {
		if c.p.Has(noWrite...) {
			return
		}
		for _, o := range c.p.Operands {
			if o != "-" {
				e.writes = append(e.writes, o)
			}
		}
	}
}

func diffEffects(c *toolCall, e *effects) {
	if c.p.Has("r", "recursive") {
		e.trees = append(e.trees, c.p.Operands...)
	}
}

// sortEffects: -o writes, -T puts temporary files in a directory, --files0-from reads names.
func sortEffects(c *toolCall, e *effects) {
	e.writes = append(e.writes, c.p.Values("o", "output")...)
	e.writes = append(e.writes, c.p.Values("T", "temporary-directory")...)
	filesFrom("files0-from")(c, e)
}

// grepPatternIndex is the index in args of grep's pattern operand, or -1 when -e or -f give it.
func grepPatternIndex(c *toolCall) int {
	if c.p.Has("e", "regexp", "f", "file") || len(c.p.OperandIndex) == 0 {
		return -1
	}
	return c.p.OperandIndex[0]
}

func grepText(c *toolCall, t *argSet) {
	t.add(grepPatternIndex(c))
	for _, o := range c.p.Options {
		switch o.Name {
		case "e", "regexp", "include", "exclude", "exclude-dir", "label", "group-separator", "g", "glob",
			"iglob", "type", "t", "T", "type-not", "replace", "r", "context-separator", "field-match-separator",
			"field-context-separator", "path-separator", "colors":
			if o.HasValue {
				t.add(o.ValueIndex)
			}
		}
	}
}

// grepEffects: -r, -R and --directories=recurse read the operands (or ".") recursively.
func grepEffects(c *toolCall, e *effects) {
	rec := c.p.Has("r", "R", "recursive", "dereference-recursive")
	for _, v := range c.p.Values("d", "directories") {
		if v == "recurse" || strings.HasPrefix("recurse", v) && len(v) >= 3 {
			rec = true
		}
	}
	filesFrom("exclude-from")(c, e)
	e.unknown = "" // excluding is no read of other files
	if !rec {
		return
	}
	files := c.p.Operands
	if grepPatternIndex(c) >= 0 {
		files = files[1:]
	}
	if len(files) == 0 {
		e.trees = append(e.trees, ".")
	}
	e.trees = append(e.trees, files...)
	for _, v := range c.p.Values("include") {
		e.selects = append(e.selects, selector{kind: selName, pat: v, shown: "grep --include=" + v})
	}
	e.selectIn = append(e.selectIn, e.trees...)
}

// dateSafe: an operand other than +FORMAT sets the clock, and so do -s and --set.
func dateSafe(c *toolCall) bool {
	if c.p.Has("s", "set") {
		return false
	}
	for _, o := range c.p.Operands {
		if !strings.HasPrefix(o, "+") {
			return false
		}
	}
	return len(c.p.Operands) <= 1
}

// parseLoose reads clustered single-letter options and --long[=value] options without knowing
// which take values: for programs with their own parsers (zip, bzip2, zstd, yq) whose only
// effects that matter are a few flags and the operands. A flag's value is never taken from the
// next word, so an operand is never missed.
func parseLoose(p *argv.Parsed, args []string) error {
	p.Reset()
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			p.DashDash = i
			for j := i + 1; j < len(args); j++ {
				p.Operands = append(p.Operands, args[j])
				p.OperandIndex = append(p.OperandIndex, j)
			}
			return nil
		case strings.HasPrefix(a, "--"):
			name, val, has := strings.Cut(a[2:], "=")
			p.Options = append(p.Options, argv.Option{Name: name, Long: true, Value: val, HasValue: has, Index: i, ValueIndex: i})
		case len(a) > 1 && a[0] == '-':
			if a[1] == 'o' && len(a) == 2 && i+1 < len(args) { // zstd -o FILE, zip -O FILE
				p.Options = append(p.Options, argv.Option{Name: "o", Value: args[i+1], HasValue: true, Index: i, ValueIndex: i + 1})
				i++
				continue
			}
			if a[1] == 'O' && len(a) == 2 && i+1 < len(args) {
				p.Options = append(p.Options, argv.Option{Name: "O", Value: args[i+1], HasValue: true, Index: i, ValueIndex: i + 1})
				i++
				continue
			}
			for j := 1; j < len(a); j++ {
				p.Options = append(p.Options, argv.Option{Name: a[j : j+1], Index: i, ValueIndex: i})
			}
		default:
			p.Operands = append(p.Operands, a)
			p.OperandIndex = append(p.OperandIndex, i)
		}
	}
	return nil
}

// parseChmod reads chmod, whose modes look like options (chmod -w file, chmod -R a-x dir).
func parseChmod(p *argv.Parsed, args []string) error {
	p.Reset()
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			for j := i + 1; j < len(args); j++ {
				p.Operands = append(p.Operands, args[j])
				p.OperandIndex = append(p.OperandIndex, j)
			}
			return nil
		case strings.HasPrefix(a, "--reference="):
			p.Options = append(p.Options, argv.Option{Name: "reference", Long: true, Value: a[len("--reference="):], HasValue: true, Index: i, ValueIndex: i})
		case a == "--reference" && i+1 < len(args):
			p.Options = append(p.Options, argv.Option{Name: "reference", Long: true, Value: args[i+1], HasValue: true, Index: i, ValueIndex: i + 1})
			i++
		case strings.HasPrefix(a, "--"):
			p.Options = append(p.Options, argv.Option{Name: strings.TrimPrefix(a, "--"), Long: true, Index: i, ValueIndex: i})
		case len(a) > 1 && a[0] == '-' && strings.Trim(a[1:], "Rcfv") == "":
			for j := 1; j < len(a); j++ {
				p.Options = append(p.Options, argv.Option{Name: a[j : j+1], Index: i, ValueIndex: i})
			}
		default:
			p.Operands = append(p.Operands, a)
			p.OperandIndex = append(p.OperandIndex, i)
		}
	}
	return nil
}

// parseUnzip finds unzip's -d DIR (attached or not, anywhere) and its listing flags.
func parseUnzip(p *argv.Parsed, args []string) error {
	p.Reset()
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(a) > 1 && a[0] == '-' {
			for j := 1; j < len(a); j++ {
				if a[j] == 'd' {
					v, vi := a[j+1:], i
					if v == "" && i+1 < len(args) {
						i++
						v, vi = args[i], i
					}
					p.Options = append(p.Options, argv.Option{Name: "d", Value: v, HasValue: true, Index: i, ValueIndex: vi})
					break
				}
				if a[j] == 'x' { // the rest are names to exclude
					i = len(args)
					break
				}
				p.Options = append(p.Options, argv.Option{Name: a[j : j+1], Index: i, ValueIndex: i})
			}
			continue
		}
		p.Operands = append(p.Operands, a)
		p.OperandIndex = append(p.OperandIndex, i)
	}
	return nil
}

// zipEffects: zip writes its archive (the first operand, or -O FILE) and reads -r operands
// recursively; -@ reads names from standard input.
func zipEffects(c *toolCall, e *effects) {
	ops := c.p.Operands
	if v := c.p.Values("O", "output-file"); len(v) > 0 {
		e.writes = append(e.writes, v...)
	} else if len(ops) > 0 {
		e.writes = append(e.writes, ops[0])
	}
	if len(ops) > 0 {
		ops = ops[1:]
	}
	if c.p.Has("r", "recurse-paths", "R", "recurse-patterns") {
		e.trees = append(e.trees, ops...)
	}
	if c.p.Has("@", "names-stdin") {
		e.unknown = "zip -@ reads the names of the files to archive from its input"
	}
}

// parseRsync reads rsync's options loosely; values of the options that take one are skipped
// by name, so the operands are right.
func parseRsync(p *argv.Parsed, args []string) error {
	withValue := map[string]bool{"e": true, "f": true, "B": true, "T": true, "M": true}
	p.Reset()
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			for j := i + 1; j < len(args); j++ {
				p.Operands = append(p.Operands, args[j])
				p.OperandIndex = append(p.OperandIndex, j)
			}
			return nil
		case strings.HasPrefix(a, "--"):
			name, val, has := strings.Cut(a[2:], "=")
			p.Options = append(p.Options, argv.Option{Name: name, Long: true, Value: val, HasValue: has, Index: i, ValueIndex: i})
		case len(a) > 1 && a[0] == '-':
			for j := 1; j < len(a); j++ {
				n := a[j : j+1]
				p.Options = append(p.Options, argv.Option{Name: n, Index: i, ValueIndex: i})
				if withValue[n] {
					if j+1 == len(a) {
						i++
					}
					break
				}
			}
		default:
			p.Operands = append(p.Operands, a)
			p.OperandIndex = append(p.OperandIndex, i)
		}
	}
	return nil
}

// remoteCopyEffects: scp and rsync write their last operand when it is local and read the
// others recursively with -r (or rsync -a).
func remoteCopyEffects(c *toolCall, e *effects) {
	ops := c.p.Operands
	if len(ops) == 0 {
		return
	}
	dst := ops[len(ops)-1]
	if !remoteSpec(dst) {
		e.writes = append(e.writes, dst)
	}
	if c.p.Has("r", "a", "recursive", "archive") {
		for _, s := range ops[:len(ops)-1] {
			if !remoteSpec(s) {
				e.trees = append(e.trees, s)
			}
		}
	}
}

// remoteSpec reports host:path and user@host:path (not a local path with a colon after a slash).
func remoteSpec(s string) bool {
	i := strings.IndexByte(s, ':')
	return i > 0 && !strings.Contains(s[:i], "/")
}

// inPlaceEffects: perl -i and gawk -i inplace rewrite the files they are given.
func inPlaceEffects(lang string) func(c *toolCall, e *effects) {
	return func(c *toolCall, e *effects) {
		args := c.args
		inPlace, codeGiven := false, false
		i := 0
		for ; i < len(args); i++ {
			a := args[i]
			if a == "--" {
				i++
				break
			}
			if len(a) < 2 || a[0] != '-' {
				break
			}
			switch lang {
			case "perl":
				for j := 1; j < len(a); j++ {
					switch a[j] {
					case 'i':
						inPlace = true
						j = len(a) // the rest is the backup extension
					case 'e', 'E':
						codeGiven = true
						if j == len(a)-1 {
							i++
						}
						j = len(a)
					case 'I', 'M', 'm', 'x', 'l', 'F', '0', 'C', 'd', 'D':
						j = len(a) // the rest is the switch's value
					}
				}
			case "awk":
				switch {
				case a == "-i" || a == "--include":
					if i+1 < len(args) && (args[i+1] == "inplace" || args[i+1] == "inplace.awk") {
						inPlace = true
					}
					i++
				case a == "-iinplace" || a == "--include=inplace":
					inPlace = true
				case a == "-f" || a == "-v" || a == "-F" || a == "-E" || a == "--file" || a == "--assign" || a == "--field-separator":
					if a == "-f" || a == "-E" || a == "--file" {
						codeGiven = true
					}
					i++
				case strings.HasPrefix(a, "-f") || strings.HasPrefix(a, "-E"):
					codeGiven = true
				}
			}
		}
		if !inPlace {
			return
		}
		if !codeGiven && i < len(args) {
			i++ // the program (awk) or script file (perl)
		}
		for ; i < len(args); i++ {
			if lang == "awk" && strings.Contains(args[i], "=") && !strings.Contains(args[i], "/") {
				continue // awk var=value operands
			}
			e.writes = append(e.writes, args[i])
		}
	}
}

// tarEffects: creating or changing an archive writes it (-f, or standard output); extracting
// writes into -C DIR (or "."), and with -P anywhere the archive says; creating reads the
// operands recursively (from -C DIR) unless --no-recursion; -T reads names from a file.
func tarEffects(c *toolCall, e *effects) {
	create := c.p.Has("c", "create", "r", "append", "u", "update", "A", "catenate", "concatenate", "delete")
	extract := c.p.Has("x", "extract", "get")
	archives := c.p.Values("f", "file")
	if create {
		for _, a := range archives {
			if a != "-" && !remoteSpec(a) {
				e.writes = append(e.writes, a)
			}
		}
	}
	base := ""
	for _, o := range c.p.Options {
		if o.Name == "C" || o.Name == "directory" {
			base = o.Value
		}
	}
	if extract {
		if c.p.Has("P", "absolute-names") {
			e.unknown = "tar -P extracts to the absolute paths the archive holds"
		}
		if c.p.Has("to-stdout", "O") {
			return
		}
		if base == "" {
			base = "."
		}
		e.writes = append(e.writes, base)
		return
	}
	if v := c.p.Values("T", "files-from"); len(v) > 0 {
		e.unknown = "tar -T reads the names of the files to archive from " + v[0]
	}
	if !create || c.p.Has("no-recursion") {
		return
	}
	// Operands are relative to the -C in force where they stand.
	dir := ""
	oi := 0
	for _, o := range c.p.Options {
		for oi < len(c.p.Operands) && c.p.OperandIndex[oi] < o.Index {
			e.trees = append(e.trees, joinRel(dir, c.p.Operands[oi]))
			oi++
		}
		if o.Name == "C" || o.Name == "directory" {
			dir = o.Value
		}
	}
	for ; oi < len(c.p.Operands); oi++ {
		e.trees = append(e.trees, joinRel(dir, c.p.Operands[oi]))
	}
}

func joinRel(dir, p string) string {
	if dir == "" || path.IsAbs(p) {
		return p
	}
	return dir + "/" + p
}

// parseTar turns tar's old-style first argument ("czf x.tgz": letters, their values taken from
// the following words in order) into options, then reads the rest with tar's grammar.
func parseTar(p *argv.Parsed, args []string) error {
	g := getoptGrammars["tar"]
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return g.ParseInto(p, args)
	}
	letters := args[0]
	rest := args[1:]
	var words []string
	var index []int
	for k := 0; k < len(letters); k++ {
		c := letters[k]
		kind, ok := g.ShortKind(c)
		if !ok {
			p.Reset()
			return &argv.Error{Arg: args[0], Option: string(c), Reason: "unrecognized option"}
		}
		if kind == argv.RequiredArg {
			if len(rest) == 0 {
				p.Reset()
				return &argv.Error{Arg: args[0], Option: string(c), Reason: "option requires an argument"}
			}
			words = append(words, "-"+string(c), rest[0])
			index = append(index, 0, len(args)-len(rest))
			rest = rest[1:]
			continue
		}
		words = append(words, "-"+string(c))
		index = append(index, 0)
	}
	words = append(words, rest...)
	for k := range rest {
		index = append(index, len(args)-len(rest)+k)
	}
	if err := g.ParseInto(p, words); err != nil {
		return err
	}
	// Indexes back into the caller's arguments.
	for i := range p.Options {
		p.Options[i].Index = index[p.Options[i].Index]
		p.Options[i].ValueIndex = index[p.Options[i].ValueIndex]
	}
	for i := range p.OperandIndex {
		p.OperandIndex[i] = index[p.OperandIndex[i]]
	}
	return nil
}

// wgetEffects: -O, -o, -a, -P and the cookie, WARC and log files are writes; without -O the
// download lands in the directory prefix (or "."); -e and --config can set any of those.
func wgetEffects(c *toolCall, e *effects) {
	out := c.p.Values("O", "output-document")
	e.writes = append(e.writes, out...)
	for _, n := range []string{"o", "output-file", "a", "append-output", "save-cookies", "warc-file", "rejected-log", "hsts-file", "warc-tempdir"} {
		e.writes = append(e.writes, c.p.Values(n)...)
	}
	if len(out) == 0 {
		if p := c.p.Values("P", "directory-prefix"); len(p) > 0 {
			e.writes = append(e.writes, p[len(p)-1])
		} else if !c.p.Has("spider") {
			e.writes = append(e.writes, ".")
		}
	}
	if v := c.p.Values("e", "execute"); len(v) > 0 {
		e.unknown = "wget -e " + v[0] + " runs a .wgetrc command"
	}
	if v := c.p.Values("config"); len(v) > 0 {
		e.unknown = "wget reads options from " + v[0]
	}
}

// curlEffects: -o, --output-dir, -O (into "."), and the header, cookie, trace and log files are
// writes; -K reads options from a file.
func curlEffects(c *toolCall, e *effects) {
	e.writes = append(e.writes, c.p.Values("o", "output")...)
	dir := c.p.Values("output-dir")
	e.writes = append(e.writes, dir...)
	if len(dir) == 0 && c.p.Has("O", "remote-name", "remote-name-all", "J", "remote-header-name") {
		e.writes = append(e.writes, ".")
	}
	for _, n := range []string{"D", "dump-header", "c", "cookie-jar", "trace", "trace-ascii", "stderr", "libcurl", "etag-save", "hsts", "alt-svc"} {
		e.writes = append(e.writes, c.p.Values(n)...)
	}
	if v := c.p.Values("K", "config"); len(v) > 0 {
		e.unknown = "curl reads options from " + v[0]
	}
}

// parseXxd reads xxd's single-dash options: -c, -g, -l, -n, -o, -s, -R take a value (attached
// or the next word); anything it does not know is refused.
func parseXxd(p *argv.Parsed, args []string) error {
	p.Reset()
	flags := map[string]bool{"-a": true, "-autoskip": true, "-b": true, "-bits": true, "-C": true, "-capitalize": true,
		"-e": true, "-E": true, "-EBCDIC": true, "-h": true, "-help": true, "-i": true, "-include": true, "-p": true, "-ps": true,
		"-postscript": true, "-plain": true, "-u": true, "-d": true, "-v": true, "-version": true, "-r": true, "-revert": true}
	valued := "cglnosR"
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			for j := i + 1; j < len(args); j++ {
				p.Operands = append(p.Operands, args[j])
				p.OperandIndex = append(p.OperandIndex, j)
			}
			return nil
		case a == "-" || !strings.HasPrefix(a, "-"):
			p.Operands = append(p.Operands, a)
			p.OperandIndex = append(p.OperandIndex, i)
		case flags[a]:
			p.Options = append(p.Options, argv.Option{Name: a[1:], Index: i, ValueIndex: i})
		case len(a) >= 2 && strings.IndexByte(valued, a[1]) >= 0:
			o := argv.Option{Name: a[1:2], Index: i, ValueIndex: i, HasValue: true}
			if len(a) > 2 && (a[2] >= '0' && a[2] <= '9' || a[2] == '-' || a[2] == '+') {
				o.Value = a[2:]
			} else if i+1 < len(args) {
				i++
				o.Value, o.ValueIndex = args[i], i
			} else {
				return &argv.Error{Arg: a, Index: i, Reason: "option requires an argument"}
			}
			p.Options = append(p.Options, o)
		default:
			return &argv.Error{Arg: a, Index: i, Reason: "unrecognized option"}
		}
	}
	return nil
}

// parseTree reads tree's options: single letters (clustered), -L/-P/-I/-H/-T/-o and friends
// taking the next word, and a known set of --long options.
func parseTree(p *argv.Parsed, args []string) error {
	p.Reset()
	valued := "LPIHTo"
	longValued := map[string]bool{"charset": true, "filelimit": true, "timefmt": true, "sort": true, "fromfile": false, "gitfile": true, "infofile": true, "hintro": true, "houtro": true}
	longFlags := map[string]bool{"help": true, "version": true, "inodes": true, "device": true, "noreport": true, "nolinks": true,
		"dirsfirst": true, "filesfirst": true, "du": true, "si": true, "prune": true, "matchdirs": true, "ignore-case": true,
		"gitignore": true, "info": true, "metafirst": true, "fromfile": true, "fromtabfile": true, "fflinks": true}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			for j := i + 1; j < len(args); j++ {
				p.Operands = append(p.Operands, args[j])
				p.OperandIndex = append(p.OperandIndex, j)
			}
			return nil
		case strings.HasPrefix(a, "--"):
			name, val, has := strings.Cut(a[2:], "=")
			switch {
			case longValued[name]:
				if !has {
					if i+1 >= len(args) {
						return &argv.Error{Arg: a, Index: i, Reason: "option requires an argument"}
					}
					i++
					val = args[i]
				}
				p.Options = append(p.Options, argv.Option{Name: name, Long: true, Value: val, HasValue: true, Index: i, ValueIndex: i})
			case longFlags[name] && !has:
				p.Options = append(p.Options, argv.Option{Name: name, Long: true, Index: i, ValueIndex: i})
			default:
				return &argv.Error{Arg: a, Index: i, Reason: "unrecognized option"}
			}
		case len(a) > 1 && a[0] == '-':
			for j := 1; j < len(a); j++ {
				n := a[j : j+1]
				if strings.IndexByte("adlfxpsughDFqNQrtcvUiACSnJXR", a[j]) < 0 && strings.IndexByte(valued, a[j]) < 0 {
					return &argv.Error{Arg: a, Index: i, Option: n, Reason: "unrecognized option"}
				}
				o := argv.Option{Name: n, Index: i, ValueIndex: i}
				if strings.IndexByte(valued, a[j]) >= 0 {
					if i+1 >= len(args) {
						return &argv.Error{Arg: a, Index: i, Reason: "option requires an argument"}
					}
					i++
					o.Value, o.HasValue, o.ValueIndex = args[i], true, i
					p.Options = append(p.Options, o)
					break
				}
				p.Options = append(p.Options, o)
			}
		default:
			p.Operands = append(p.Operands, a)
			p.OperandIndex = append(p.OperandIndex, i)
		}
	}
	return nil
}
