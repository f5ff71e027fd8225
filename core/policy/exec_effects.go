package policy

import (
	"path"
	"strings"
	"sync"

	"github.com/approvebot/approvebot/core/shell"
)

// Rule names for what a command touches, which nothing allows without a human.
const (
	RuleSensitive = "exec.sensitive" // a sensitive path or the environment's secrets
	RuleEffects   = "exec.effects"   // a write outside the project, a network endpoint, an unknown effect
)

// Concern kinds.
const (
	ConcernSensitive = "sensitive"   // a sensitive path, named, globbed or read recursively
	ConcernEnv       = "environment" // the whole environment, or a secret-looking variable
	ConcernWrite     = "write"       // a write outside the project (or one that cannot be placed)
	ConcernNetwork   = "network"     // bash's /dev/tcp and /dev/udp
	ConcernUnknown   = "unknown"     // what a known program writes or reads cannot be told
)

// Concern is something a command does that the allowlist, safe bins, tool permissions, the
// tier, security = "full" and ask_fallback never allow: the command goes to a human (with
// ask = "off" it is refused), and the card says why.
type Concern struct {
	Kind string `json:"kind"`
	// What is the path, variable or endpoint as the command has it (normalised where known).
	What string `json:"what"`
	// Glob is the sensitive path glob that matched.
	Glob string `json:"glob,omitempty"`
	// Reason is the sentence for the card.
	Reason string `json:"reason"`
}

func (c Concern) rule() string {
	if c.Kind == ConcernSensitive || c.Kind == ConcernEnv {
		return RuleSensitive
	}
	return RuleEffects
}

// maxConcerns bounds the concerns recorded for one command.
const maxConcerns = 16

// concernSet collects concerns, sensitive ones first, without duplicates.
type concernSet struct {
	list []Concern
}

func (cs *concernSet) add(c Concern) {
	for _, x := range cs.list {
		if x.Kind == c.Kind && x.What == c.What {
			return
		}
	}
	if len(cs.list) >= maxConcerns {
		return
	}
	cs.list = append(cs.list, c)
}

// sorted puts sensitive and environment concerns first: they are what the card should lead with.
func (cs *concernSet) sorted() []Concern {
	if len(cs.list) < 2 {
		return cs.list
	}
	out := make([]Concern, 0, len(cs.list))
	for _, c := range cs.list {
		if c.rule() == RuleSensitive {
			out = append(out, c)
		}
	}
	for _, c := range cs.list {
		if c.rule() != RuleSensitive {
			out = append(out, c)
		}
	}
	return out
}

// effectJudge works out the concerns of one analysis.
type effectJudge struct {
	j       *ExecJudge
	an      *shell.Analysis
	cs      concernSet
	project string // the request's cwd when it is a project directory, else ""
	cwd     string // the request's cwd
	// rawCwd and projHome are what cwd and project were worked out from: a pooled judge
	// keeps them (and scope) for the next judgement in the same directory.
	rawCwd, projHome string
	cwdSet           bool
	scope            sensScope
	scoped           bool
	// moreArgsPipes are the pipelines with a command taking more arguments from its input
	// (xargs): a find earlier in such a pipeline hands every file it finds to it.
	moreArgsPipes map[int]bool
	// floor is set when a tool writes a raw block device.
	floor *FloorHit
	// call, vals, text and ef are reused from segment to segment; safeCall by the safe-bin
	// checks of the same judgement.
	call     toolCall
	safeCall toolCall
	vals     []string
	text     argSet
	ef       effects
}

// concerns judges what every segment touches, with e (from effectPool) as its memory. A
// tool's write onto a raw block device is returned as the floor's refusal instead.
func (j *ExecJudge) concerns(e *effectJudge, an *shell.Analysis, in CommandInput) ([]Concern, *FloorHit) {
	e.j, e.an = j, an
	if !e.cwdSet || e.rawCwd != in.Cwd || e.projHome != j.home {
		e.cwd = cleanAbs(in.Cwd)
		e.project = projectDir(e.cwd, j.home)
		e.rawCwd, e.projHome, e.cwdSet = in.Cwd, j.home, true
	}
	for _, s := range an.Segments {
		if s.MoreArgs && s.Pipe != 0 {
			if e.moreArgsPipes == nil {
				e.moreArgsPipes = map[int]bool{}
			}
			e.moreArgsPipes[s.Pipe] = true
		}
	}

	for _, s := range an.Segments {
		e.segment(s)
		if e.floor != nil {
			h := *e.floor
			return nil, &h
		}
	}
	for _, name := range an.EnvReads {
		if SecretLookingName(name) {
			e.cs.add(Concern{Kind: ConcernEnv, What: "$" + name, Reason: "reads the secret-looking variable $" + name})
		}
	}
	for _, d := range an.EnvDumps {
		if strings.HasPrefix(d, "compgen") || strings.HasPrefix(d, "${!") {
			continue // names only
		}
		e.cs.add(Concern{Kind: ConcernEnv, What: d, Reason: "prints the whole environment (" + d + ")"})
	}
	if len(e.cs.list) == 0 {
		return nil, nil
	}
	return append([]Concern(nil), e.cs.sorted()...), nil
}

var effectPool = sync.Pool{New: func() any { return new(effectJudge) }}

// release returns e to the pool, keeping its buffers and what it worked out of the last
// directory (cwd, project, scope): they depend only on the directory, the home and the
// sensitive list, which scopeFor and concerns compare before reuse.
func (e *effectJudge) release() {
	e.j, e.an, e.floor = nil, nil, nil
	e.cs.list = e.cs.list[:0]
	e.vals = e.vals[:0]
	e.call.args, e.call.err = nil, nil
	e.safeCall.args, e.safeCall.err = nil, nil
	if e.moreArgsPipes != nil {
		clear(e.moreArgsPipes)
	}
	effectPool.Put(e)
}

func cleanAbs(p string) string {
	if p == "" || !path.IsAbs(p) {
		return ""
	}
	return path.Clean(p)
}

// projectDir is cwd when writes inside it can be allowed: never "/", a home directory or a
// system directory.
func projectDir(cwd, home string) string {
	if cwd == "" || cwd == "/" {
		return ""
	}
	if home != "" && cwd == path.Clean(home) || coveredHome(cwd) || cwd == "/home" || cwd == "/Users" {
		return ""
	}
	if notProjectDirs[cwd] {
		return ""
	}
	first, _, _ := strings.Cut(cwd[1:], "/")
	if !notProjectFirst[first] {
		return cwd
	}
	for _, d := range notProjectTrees {
		if strings.HasPrefix(cwd, d) && (len(cwd) == len(d) || cwd[len(d)] == '/') {
			return ""
		}
	}
	return cwd
}

// notProjectFirst are the first path elements of notProjectTrees.
var notProjectFirst = func() map[string]bool {
	m := map[string]bool{}
	for _, d := range notProjectTrees {
		first, _, _ := strings.Cut(d[1:], "/")
		m[first] = true
	}
	return m
}()

// notProjectDirs are directories that are never a project themselves (their subdirectories may be).
var notProjectDirs = map[string]bool{
	"/usr": true, "/usr/local": true, "/usr/src": true, "/var": true, "/var/tmp": true, "/opt": true, "/srv": true,
	"/tmp": true, "/mnt": true, "/media": true, "/Applications": true, "/private": true, "/private/tmp": true,
	"/private/var": true, "/nix": true, "/Volumes": true, "/Users/Shared": true, "/home/linuxbrew": true,
}

// notProjectTrees are directories no directory inside of which is a project.
var notProjectTrees = []string{
	"/etc", "/proc", "/sys", "/dev", "/boot", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
	"/usr/bin", "/usr/sbin", "/usr/lib", "/usr/lib32", "/usr/lib64", "/usr/libexec", "/usr/share",
	"/usr/include", "/usr/local/bin", "/usr/local/sbin", "/usr/local/lib", "/usr/local/share", "/usr/local/etc",
	"/var/lib", "/var/log", "/var/spool", "/var/cache", "/var/run", "/var/mail", "/var/backups", "/run",
	"/System", "/Library", "/private/etc", "/snap", "/nix/store", "/Windows", "/Program Files",
	"/Program Files (x86)", "/ProgramData",
}

// scopeFor returns the sensitive-path scope of a segment's cwd and home, reusing the last one.
func (e *effectJudge) scopeFor(s *shell.Segment) *sensScope {
	if !e.scoped || e.scope.s != e.j.sensitive || e.scope.rawCwd != s.Cwd || e.scope.rawHome != s.Home {
		e.scope.s = e.j.sensitive
		e.scope.reset(s.Cwd, s.Home)
		e.scoped = true
	}
	return &e.scope
}

func (e *effectJudge) segment(s *shell.Segment) {
	if len(e.cs.list) >= maxConcerns {
		return
	}
	sc := e.scopeFor(s)
	name := s.Base()
	var spec *toolSpec
	var call *toolCall
	text := &e.text
	*text = argSet{}
	if len(s.Args) > 0 && !s.Windows {
		switch s.Kind {
		case shell.KindCommand, shell.KindFunction, shell.KindBuiltin:
			spec = toolSpecs[name]
		}
		if spec != nil && (spec.effects != nil || spec.text != nil) {
			e.vals = e.vals[:0]
			for k := 1; k < len(s.Args); k++ {
				e.vals = append(e.vals, s.Args[k].Value)
			}
			call = &e.call
			spec.callInto(call, name, e.vals)
			if spec.text != nil && call.err == nil {
				spec.text(call, text)
			}
		}
	}
	// Every word that may be a path: arguments, their compound parts, assignments.
	readsTrees := spec == nil && !listsOnly[name] && s.Kind == shell.KindCommand && !s.Windows
	for k := range s.Args {
		a := &s.Args[k]
		if k > 0 && (text.has(k-1) || spec != nil && spec.allText && a.Pattern == "" && !strings.Contains(a.Value, "/")) {
			// Text, not a path. What echo and printf print counts when it is a path with a
			// directory or a glob (echo ~/.ssh/id_rsa names the key; echo .env >> .gitignore is a word).
			continue
		}
		e.word(sc, a.Value, a.Pattern, a.Known, a.Prefix, readsTrees && k > 0)
		if !a.Known && a.Pattern == "" && a.Suffix > 0 && a.Suffix <= len(a.Value) {
			// What follows the last unknown expansion may end a sensitive path anywhere:
			// ${HOME/#/}/.aws/credentials.
			suffix := a.Value[len(a.Value)-a.Suffix:]
			p := "/**/*" + escapeGlob(suffix)
			if strings.HasPrefix(suffix, "/") {
				p = "/**" + escapeGlob(suffix)
			}
			e.glob(sc, "…"+suffix, p, false)
		}
	}
	for _, env := range s.Env {
		if k, v, ok := strings.Cut(env, "="); ok && v != "" {
			e.word(sc, v, "", true, len(v), false)
			if s.Judged && envNamesWrittenFile(k) && strings.ContainsAny(v, "/~") {
				e.write(s, expandTilde(v, s.Home)) // GIT_TRACE=/tmp/x, SSLKEYLOGFILE=…: a file the program writes
			}
		}
	}
	for _, r := range s.Reads {
		e.word(sc, r.Target, r.Pattern, r.Known, len(r.Target), false)
	}
	for _, n := range s.Network {
		e.cs.add(Concern{Kind: ConcernNetwork, What: n, Reason: "opens a network connection through " + n})
	}
	lang, code := s.Lang, s.Code
	if code == "" && len(s.Args) > 1 && s.Kind == shell.KindCommand {
		if l := interpreterLang(name); l != "" && stdinProgram(s) {
			switch s.Input {
			case shell.InputText:
				lang, code = l, s.InputText
			case shell.InputUnknown:
				e.cs.add(Concern{Kind: ConcernUnknown, What: name, Reason: name + " runs a program read from its input, whose text is not known"})
			}
		}
	}
	if code != "" {
		for _, lit := range codeReadings(lang, code) {
			e.codeLiteral(sc, lit)
		}
		if what := codeBuildsAtRunTime(lang, code); what != "" && s.Judged {
			e.cs.add(Concern{Kind: ConcernUnknown, What: what,
				Reason: "inline " + lang + " code builds text at run time (" + what + ") and what it opens or runs cannot be read"})
		}
		dump, names := codeEnvReads(lang, code)
		if dump != "" {
			e.cs.add(Concern{Kind: ConcernEnv, What: dump, Reason: "inline " + lang + " code reads the whole environment (" + dump + ")"})
		}
		for _, n := range names {
			if SecretLookingName(n) {
				e.cs.add(Concern{Kind: ConcernEnv, What: "$" + n, Reason: "inline " + lang + " code reads the secret-looking variable " + n})
			}
		}
	}
	if s.MoreArgs && s.Judged && !moreArgsHarmless[name] && !findFeeds(e.an, s) {
		e.cs.add(Concern{Kind: ConcernUnknown, What: name,
			Reason: "runs " + name + " on names read from its input, which may be sensitive paths or outside the project"})
	}
	for _, w := range s.Writes {
		target := w.Target
		if !w.Known {
			e.cs.add(Concern{Kind: ConcernWrite, What: w.Target, Reason: "writes a file it cannot name (" + w.Op + " " + w.Target + ")"})
			continue
		}
		e.word(sc, target, w.Pattern, true, len(target), false)
		if s.Judged {
			e.write(s, target)
		}
	}
	if s.Kind == shell.KindCommand && !s.Windows && len(s.Args) > 0 {
		switch name {
		case "make", "gmake":
			e.makeSegment(s)
		case "npm", "pnpm", "yarn":
			e.npmSegment(s)
		}
	}
	if spec == nil || call == nil {
		return
	}
	if call.err != nil {
		if spec.effects != nil && s.Judged {
			e.cs.add(Concern{Kind: ConcernUnknown, What: name, Reason: "cannot read the options of " + name + " (" + call.err.Error() + "), so what it writes cannot be told"})
		}
		return
	}
	if spec.effects == nil {
		return
	}
	ef := &e.ef
	*ef = effects{writes: ef.writes[:0], trees: ef.trees[:0], lists: ef.lists[:0], reads: ef.reads[:0], envVars: ef.envVars[:0],
		selects: ef.selects[:0], selectIn: ef.selectIn[:0]}
	spec.effects(call, ef)
	if name == "rg" && s.PipePos > 0 && len(ef.trees) == 1 && ef.trees[0] == "." {
		ef.trees = nil // no path after a pipe: ripgrep searches its input
	}
	if name == "find" && s.Pipe != 0 && e.moreArgsPipes[s.Pipe] {
		points := call.p.Operands
		if len(points) == 0 {
			points = []string{"."}
		}
		ef.trees = append(ef.trees, points...)
	}
	for _, w := range ef.writes {
		w = expandTilde(w, s.Home)
		if !nonDataWriters[name] {
			if full, ok := e.resolveWrite(s, w); ok && isBlockDevice(full) {
				h, _ := hit(FloorBlockWrite, name+" writes the raw block device "+full, s)
				e.floor = &h
				return
			}
		}
		e.word(sc, w, "", true, len(w), false)
		if s.Judged {
			e.write(s, w)
		}
	}
	for _, r := range ef.reads {
		e.word(sc, r, "", true, len(r), false)
	}
	for _, t := range ef.trees {
		e.tree(sc, t)
	}
	for _, d := range ef.lists {
		if g, ok := sc.matchListing(expandTilde(d, s.Home)); ok {
			e.cs.add(Concern{Kind: ConcernSensitive, What: d, Glob: g,
				Reason: name + " lists every name under " + d + ", which holds the sensitive path " + g})
		}
	}
	for _, sel := range ef.selects {
		for _, d := range ef.selectIn {
			if g, ok, bad := sc.selected(d, sel); ok {
				e.cs.add(Concern{Kind: ConcernSensitive, What: sel.shown, Glob: g,
					Reason: sel.shown + " picks out files matching the sensitive path " + g})
				break
			} else if bad {
				e.cs.add(Concern{Kind: ConcernUnknown, What: sel.shown, Reason: "cannot read the pattern of " + sel.shown + ", so what it selects cannot be told"})
				break
			}
		}
	}
	if name == "git" {
		e.gitSegment(s, sc, call, text)
	}
	if ef.unknown != "" && s.Judged {
		e.cs.add(Concern{Kind: ConcernUnknown, What: name, Reason: ef.unknown})
	}
	if ef.envDump != "" {
		e.cs.add(Concern{Kind: ConcernEnv, What: ef.envDump, Reason: "prints the whole environment (" + ef.envDump + ")"})
	}
	for _, v := range ef.envVars {
		if SecretLookingName(v) {
			e.cs.add(Concern{Kind: ConcernEnv, What: "$" + v, Reason: "prints the secret-looking variable " + v})
		}
	}
}

// envNamesWrittenFile reports a variable whose value is a file the program writes: traces,
// logs, histories, key logs.
func envNamesWrittenFile(k string) bool {
	switch k {
	case "SSLKEYLOGFILE", "HISTFILE", "LESSHISTFILE", "NODE_REPL_HISTORY", "PYTHON_HISTORY", "SQLITE_HISTORY",
		"MYSQL_HISTFILE", "PSQL_HISTORY", "COVERAGE_FILE", "CURL_TRACE", "NODE_DEBUG_FILE":
		return true
	}
	return strings.HasPrefix(k, "GIT_TRACE") || strings.HasSuffix(k, "_LOGFILE") || strings.HasSuffix(k, "_LOG_FILE") ||
		strings.HasSuffix(k, "_TRACE_FILE") || strings.HasSuffix(k, "_HISTFILE")
}

// nonDataWriters change names, links, modes or times, not what a file holds: their "write" of
// a device node is no write onto the disk.
var nonDataWriters = map[string]bool{
	"rm": true, "rmdir": true, "unlink": true, "mkdir": true, "touch": true, "chmod": true, "chown": true,
	"chgrp": true, "ln": true, "mknod": true, "mkfifo": true, "mv": true, "truncate": true, "split": true,
	"csplit": true, "crontab": true,
}

// moreArgsHarmless are programs that may take file names from their input (xargs) without
// revealing or changing the files: they count, list or hash them.
var moreArgsHarmless = map[string]bool{
	"wc": true, "ls": true, "stat": true, "du": true, "file": true, "md5sum": true, "sha1sum": true,
	"sha256sum": true, "sha512sum": true, "echo": true, "printf": true, "basename": true, "dirname": true,
	"realpath": true, "readlink": true, "test": true, "[": true, "true": true,
}

func expandTilde(p, home string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home == "" {
			home = "/root"
		}
		return home + p[1:]
	}
	return p
}

// word checks one word that may be a path, and its compound parts (--opt=VALUE, KEY=VALUE,
// REV:PATH, a,b lists, @FILE, -fFILE). tree also checks it as a directory read recursively.
func (e *effectJudge) word(sc *sensScope, w, pattern string, known bool, prefix int, tree bool) {
	if w == "" && pattern == "" {
		return
	}
	if pattern != "" {
		if e.an != nil && e.an.GlobsMatchHidden {
			// The line turned dotglob on: the glob also matches .env, keys and configuration.
			e.cs.add(Concern{Kind: ConcernSensitive, What: w, Glob: "hidden files",
				Reason: "the glob " + w + " also matches hidden files (.env, keys, configuration): the line turns dotglob on"})
			return
		}
		e.glob(sc, w, pattern, tree)
		eachCompoundPart(pattern, func(part string) { e.glob(sc, part, part, tree) })
		return
	}
	if !known {
		// The value is known up to the first expansion that is not: anything may follow.
		if prefix > 0 && prefix <= len(w) {
			p := escapeGlob(w[:prefix]) + "*"
			e.glob(sc, w[:prefix]+"…", p, tree)
		}
		return
	}
	e.path(sc, w, tree)
	eachCompoundPart(w, func(part string) { e.path(sc, part, tree) })
}

func (e *effectJudge) path(sc *sensScope, p string, tree bool) {
	if p == "" {
		return
	}
	if g, ok := sc.match(p); ok {
		e.cs.add(Concern{Kind: ConcernSensitive, What: p, Glob: g, Reason: "touches the sensitive path " + p + " (" + g + ")"})
		return
	}
	if q := respelled(p); q != "" {
		// The same file in another system's spelling: /private/etc, %USERPROFILE%\…, /c/Users.
		if g, ok := sc.match(q); ok {
			e.cs.add(Concern{Kind: ConcernSensitive, What: p, Glob: g, Reason: "touches the sensitive path " + p + " (" + g + ")"})
			return
		}
		p = q
	}
	if tree && e.mayHoldSensitive(sc, p) {
		if g, ok := sc.matchTree(p); ok {
			e.cs.add(Concern{Kind: ConcernSensitive, What: p, Glob: g,
				Reason: "hands " + p + " to a program that may read it recursively, and it holds the sensitive path " + g})
		}
	}
}

// respelled is p in the plain spelling the sensitive paths are written in, when it is written
// another way a program reads as the same file (see rewritePath; a drive mounted at /c, /mnt/c
// or /cygdrive/c is that drive), or "" when it is not. Most words fail the first test.
func respelled(p string) string {
	if len(p) < 3 {
		return ""
	}
	switch {
	case p[0] == '%' || p[0] == '$' || p[0] == '\\' || p[0] == 'f' || p[0] == 'F' || strings.IndexByte(p, '\\') >= 0:
	case p[0] == '/' && (p[1] == '/' || p[2] == '/' || strings.HasPrefix(p, "/private/") || strings.HasPrefix(p, "/var/root") ||
		strings.HasPrefix(p, "/mnt/") || strings.HasPrefix(p, "/cygdrive/")):
	default:
		return ""
	}
	q := rewritePath(p, "")
	rest := q
	switch {
	case strings.HasPrefix(rest, "/mnt/"):
		rest = rest[len("/mnt"):]
	case strings.HasPrefix(rest, "/cygdrive/"):
		rest = rest[len("/cygdrive"):]
	}
	if len(rest) >= 3 && rest[0] == '/' && isASCIILetterByte(rest[1]) && rest[2] == '/' {
		q = rest[1:2] + ":" + rest[2:] // /c/Users/x: Git Bash, WSL and Cygwin's C:
	}
	if q == p {
		return ""
	}
	return q
}

func isASCIILetterByte(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// mayHoldSensitive is a quick test before matchTree: a relative path below a cwd that holds no
// sensitive path cannot hold one either, unless it names one of the repository-style names
// (".git") itself.
func (e *effectJudge) mayHoldSensitive(sc *sensScope, p string) bool {
	if path.IsAbs(p) || strings.HasPrefix(p, "~") || strings.HasPrefix(p, "$") || strings.Contains(p, "..") || isWindowsPath(p) {
		return true
	}
	if sc.cwdHolds() {
		return true
	}
	return sc.s.hasHead(p)
}

func (e *effectJudge) tree(sc *sensScope, dir string) {
	if dir == "" {
		return
	}
	g, ok := sc.matchTree(dir)
	if q := respelled(dir); !ok && q != "" {
		g, ok = sc.matchTree(q)
	}
	if ok {
		shown := dir
		if dir == "." {
			shown = sc.base
		}
		e.cs.add(Concern{Kind: ConcernSensitive, What: shown, Glob: g, Reason: "reads " + shown + " recursively, which holds the sensitive path " + g})
	}
}

func (e *effectJudge) glob(sc *sensScope, shown, pattern string, tree bool) {
	if g, ok := sc.matchGlob(pattern, false); ok {
		e.cs.add(Concern{Kind: ConcernSensitive, What: shown, Glob: g, Reason: "the glob " + shown + " could match the sensitive path " + g})
		return
	}
	if tree {
		if g, ok := sc.matchGlob(pattern, true); ok {
			e.cs.add(Concern{Kind: ConcernSensitive, What: shown, Glob: g,
				Reason: "hands " + shown + " to a program that may read it recursively, and it could hold the sensitive path " + g})
		}
	}
}

// codeLiteral checks a string literal of inline interpreter code: as a path, and as a name
// that is one of the sensitive dotfiles or key names by itself (os.path.join(home, ".ssh")).
func (e *effectJudge) codeLiteral(sc *sensScope, lit string) {
	if lit == "" || len(lit) > 4096 {
		return
	}
	e.path(sc, lit, false)
	eachCompoundPart(lit, func(part string) { e.path(sc, part, false) })
	if strings.ContainsAny(lit, "*?[") {
		e.glob(sc, lit, lit, false)
	}
	// Each element by itself: os.path.join(home, ".ssh"), "#{Dir.home}/.netrc", f"{home}/.aws".
	for _, el := range strings.FieldsFunc(lit, func(r rune) bool { return r == '/' || r == '\\' }) {
		if g, ok := sc.s.namesSensitive(el); ok {
			e.cs.add(Concern{Kind: ConcernSensitive, What: lit, Glob: g, Reason: "inline code names " + el + ", part of the sensitive path " + g})
			return
		}
	}
}

// write checks a file a judged segment writes: outside the project it is never allowed
// without a human.
func (e *effectJudge) write(s *shell.Segment, target string) {
	full, ok := e.resolveWrite(s, target)
	switch {
	case !ok:
		e.cs.add(Concern{Kind: ConcernWrite, What: target, Reason: "writes " + target + " where the working directory is not known"})
	case harmlessDevice(full):
	case e.project == "":
		where := e.cwd
		if where == "" {
			where = "(no cwd)"
		}
		e.cs.add(Concern{Kind: ConcernWrite, What: full, Reason: "writes " + full + ", and " + where + " is not a project directory"})
	case full != e.project && !strings.HasPrefix(full, e.project+"/"):
		e.cs.add(Concern{Kind: ConcernWrite, What: full, Reason: "writes " + full + ", outside the project " + e.project})
	}
}

func harmlessDevice(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/1", "/dev/fd/2", "/dev/zero":
		return true
	}
	return false
}

// resolveWrite makes a written path absolute (against the segment's cwd) and follows the
// symbolic links the command line itself creates.
func (e *effectJudge) resolveWrite(s *shell.Segment, target string) (string, bool) {
	t := expandTilde(target, s.Home)
	if isWindowsPath(t) {
		return "", false
	}
	if !path.IsAbs(t) {
		if s.Cwd == "" {
			return "", false
		}
		t = s.Cwd + "/" + t
	}
	t = path.Clean(t)
	for range 8 {
		moved := false
		for _, l := range e.an.Links {
			if l.Path == "" || l.Target == "" {
				continue
			}
			if t == l.Path || strings.HasPrefix(t, l.Path+"/") {
				t = path.Clean(l.Target + t[len(l.Path):])
				moved = true
			}
		}
		if !moved {
			break
		}
	}
	return t, true
}

// compoundParts are the parts of a compound word that may be paths of their own.
func compoundParts(w string) []string {
	var out []string
	eachCompoundPart(w, func(p string) { out = append(out, p) })
	return out
}

// eachCompoundPart calls f for each part of a compound word that may be a path of its own:
// the value of -fFILE, of KEY=VALUE and --opt=VALUE (after the first "=" and after the last),
// and the pieces between ":", ",", "@", "<" and ">" (and their values). A part equal to the
// word or already given is skipped; at most 32 are given.
func eachCompoundPart(w string, f func(string)) {
	short := len(w) > 2 && w[0] == '-' && w[1] != '-'
	if !hasCompoundSep(w) {
		if short {
			f(w[2:]) // the only part: not empty, not w
		}
		return
	}
	var seen [32]string
	n := 0
	give := func(p string) {
		if p == "" || p == w || n == len(seen) {
			return
		}
		for _, x := range seen[:n] {
			if x == p {
				return
			}
		}
		seen[n] = p
		n++
		f(p)
	}
	if short {
		give(w[2:])
	}
	if i := strings.IndexByte(w, '='); i >= 0 {
		give(w[i+1:])
		give(w[strings.LastIndexByte(w, '=')+1:])
	}
	for _, sep := range [...]byte{':', ',', '@', '<', '>'} {
		if strings.IndexByte(w, sep) < 0 {
			continue
		}
		for rest := w; ; {
			i := strings.IndexByte(rest, sep)
			piece := rest
			if i >= 0 {
				piece = rest[:i]
			}
			give(piece)
			if j := strings.IndexByte(piece, '='); j >= 0 {
				give(piece[j+1:])
			}
			if i < 0 {
				break
			}
			rest = rest[i+1:]
		}
	}
}

// compoundSep marks the bytes that split a compound word (see eachCompoundPart).
var compoundSep = func() (t [256]bool) {
	for _, c := range "=:,@<>" {
		t[c] = true
	}
	return t
}()

func hasCompoundSep(w string) bool {
	for i := 0; i < len(w); i++ {
		if compoundSep[w[i]] {
			return true
		}
	}
	return false
}

// envAccess is how a language reads its environment: the wholesale object, and the forms that
// name one variable (the name is the first identifier after the form).
type envAccess struct {
	whole string
	named []string
}

var envAccessByLang = map[string]envAccess{
	"python":     {"os.environ", []string{"os.environ[", "os.environ.get(", "os.getenv(", "environ[", "environ.get("}},
	"javascript": {"process.env", []string{"process.env.", "process.env[", "Deno.env.get("}},
	"ruby":       {"ENV", []string{"ENV[", "ENV.fetch("}},
	"perl":       {"%ENV", []string{"$ENV{"}},
	"php":        {"$_ENV", []string{"getenv(", "$_ENV[", "$_SERVER["}},
	"awk":        {"ENVIRON", []string{"ENVIRON["}},
	"lua":        {"", []string{"os.getenv("}},
	"r":          {"Sys.getenv()", []string{"Sys.getenv("}},
}

// codeEnvReads finds, in inline interpreter code, a read of the whole environment (returned as
// written) and the names of the variables it reads one by one. A wholesale form is one not
// followed by a named access ("os.environ" alone, or os.environ.items(), dict(os.environ)).
func codeEnvReads(lang, code string) (dump string, names []string) {
	acc, ok := envAccessByLang[lang]
	if !ok {
		return "", nil
	}
	for _, form := range acc.named {
		for rest := code; ; {
			i := strings.Index(rest, form)
			if i < 0 {
				break
			}
			rest = rest[i+len(form):]
			name, literal := literalEnvKey(form, rest)
			if !literal {
				// os.environ[k], getenv('G'+'H_TOKEN'): a name built at run time may be any.
				return strings.TrimRight(form, "[({.") + " of a name built at run time", names
			}
			names = append(names, name)
		}
	}
	if lang == "python" {
		if what := pythonEnvByOtherName(code); what != "" {
			return what, names
		}
	}
	if acc.whole == "" {
		return "", names
	}
	for rest := code; ; {
		i := strings.Index(rest, acc.whole)
		if i < 0 {
			break
		}
		if i > 0 && identChar(rest, i-1) && acc.whole[0] != '%' && acc.whole[0] != '$' {
			rest = rest[i+len(acc.whole):]
			continue // part of a longer name
		}
		after := rest[i+len(acc.whole):]
		named := false
		for _, form := range acc.named {
			if strings.HasPrefix(acc.whole+after, form) || strings.HasPrefix(after, strings.TrimPrefix(form, acc.whole)) && strings.HasPrefix(form, acc.whole) {
				named = true
				break
			}
		}
		if !named && !identChar(after, 0) {
			return acc.whole, names
		}
		rest = after
	}
	return "", names
}

// pythonEnvByOtherName finds environ or getenv reached other than by a literal name
// (from os import environ as e, getattr(os, 'environ'), vars(os)['environ'], g = os.getenv):
// whatever the code then reads may be any variable. It returns the word as found.
func pythonEnvByOtherName(code string) string {
	for _, word := range []string{"environ", "getenv"} {
		for from := 0; ; {
			i := strings.Index(code[from:], word)
			if i < 0 {
				break
			}
			i += from
			from = i + len(word)
			if identChar(code, i-1) || identChar(code, from) {
				continue // part of a longer name (environment, myenviron)
			}
			after := code[from:]
			ok := false
			switch {
			case word == "getenv" && strings.HasPrefix(after, "("):
				_, ok = literalEnvKey("(", after[1:])
			case word == "environ" && strings.HasPrefix(after, "["):
				_, ok = literalEnvKey("[", after[1:])
			case word == "environ" && strings.HasPrefix(after, ".get("):
				_, ok = literalEnvKey("(", after[len(".get("):])
			}
			if !ok {
				return word
			}
		}
	}
	return ""
}

// literalEnvKey reads the variable name after a named environment access (rest follows
// form): process.env.NAME, $ENV{NAME}, or one quoted name closed by ], ) or a comma
// (os.environ["NAME"], getenv('NAME'), ENV.fetch("NAME", x)). Anything else — a variable,
// a concatenation, a call — is not a literal name.
func literalEnvKey(form, rest string) (string, bool) {
	ident := func(s string) int {
		n := 0
		for n < len(s) && identChar(s, n) {
			n++
		}
		return n
	}
	if strings.HasSuffix(form, ".") {
		n := ident(rest)
		return rest[:n], n > 0
	}
	r := strings.TrimLeft(rest, " \t")
	if strings.HasSuffix(form, "{") && ident(r) > 0 {
		n := ident(r)
		return r[:n], strings.HasPrefix(strings.TrimLeft(r[n:], " \t"), "}")
	}
	if r == "" || (r[0] != '\'' && r[0] != '"' && r[0] != '`') {
		return "", false
	}
	q := r[0]
	n := ident(r[1:])
	if n == 0 || 1+n >= len(r) || r[1+n] != q {
		return "", false
	}
	after := strings.TrimLeft(r[2+n:], " \t")
	return r[1 : 1+n], after != "" && strings.IndexByte("]),}", after[0]) >= 0
}

// codeBuildsAtRunTime names what in inline code makes text at run time and then runs or
// opens it (exec, eval, decoders), so that what it touches cannot be read from the
// command line; "" when nothing does.
func codeBuildsAtRunTime(lang, code string) string {
	var forms []string
	switch lang {
	case "python":
		forms = []string{"exec(", "eval(", "compile(", "fromhex(", "b64decode(", "b32decode(", "b85decode(", "a85decode(",
			"unhexlify(", "codecs.decode(", "decompress(", "marshal.loads(", "pickle.loads(", "chr("}
	case "javascript":
		forms = []string{"eval(", "Function(", "atob(", "'base64')", "\"base64\")", "'hex')", "\"hex\")", "fromCharCode("}
	case "ruby":
		forms = []string{"eval(", "eval ", "unpack", "decode64", "instance_eval", "send("}
	case "perl":
		forms = []string{"eval ", "eval(", "eval{", "pack(", "pack ", "decode_base64", "chr("}
	case "php":
		forms = []string{"eval(", "base64_decode(", "hex2bin(", "str_rot13(", "chr(", "create_function("}
	}
	for _, f := range forms {
		if i := strings.Index(code, f); i >= 0 && !identChar(code, i-1) {
			return strings.TrimRight(f, "( ")
		}
	}
	return ""
}

// stringLiterals returns the quoted strings of a program text ('…', "…", `…`), without the
// quotes, backslash escapes of the quote and the backslash resolved.
func stringLiterals(code string) []string {
	var out []string
	for i := 0; i < len(code) && len(out) < 256; i++ {
		q := code[i]
		if q != '\'' && q != '"' && q != '`' {
			continue
		}
		var b strings.Builder
		j := i + 1
		for ; j < len(code) && code[j] != q; j++ {
			if code[j] == '\\' && j+1 < len(code) && (code[j+1] == q || code[j+1] == '\\') {
				j++
			}
			b.WriteByte(code[j])
		}
		if j >= len(code) {
			break
		}
		out = append(out, b.String())
		i = j
	}
	return out
}
