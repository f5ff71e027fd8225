package policy

import (
	"path"
	"strings"

	"github.com/approvebot/approvebot/core/shell"
)

// gitCall is a git command line read the way git reads it: its global options, then the
// subcommand and the subcommand's arguments.
type gitCall struct {
	dirs      []string    // -C values, in order
	gitDir    string      // --git-dir
	workTree  string      // --work-tree
	configs   [][2]string // -c KEY=VALUE, the key lower-cased
	configEnv []string    // --config-env values
	sub       string
	subIndex  int // the subcommand's index in the arguments; -1 when there is none
	rest      []string
}

// parseGit reads git's global options (git.c's handle_options).
func parseGit(args []string) gitCall {
	g := gitCall{subIndex: -1}
	for i := 0; i < len(args); i++ {
		a := args[i]
		next := func() string {
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		switch {
		case a == "-C":
			g.dirs = append(g.dirs, next())
		case a == "-c":
			k, v, _ := strings.Cut(next(), "=")
			g.configs = append(g.configs, [2]string{strings.ToLower(k), v})
		case a == "--git-dir":
			g.gitDir = next()
		case strings.HasPrefix(a, "--git-dir="):
			g.gitDir = a[len("--git-dir="):]
		case a == "--work-tree":
			g.workTree = next()
		case strings.HasPrefix(a, "--work-tree="):
			g.workTree = a[len("--work-tree="):]
		case strings.HasPrefix(a, "--config-env="):
			g.configEnv = append(g.configEnv, a[len("--config-env="):])
		case a == "--namespace" || a == "--attr-source" || a == "--super-prefix":
			next()
		case strings.HasPrefix(a, "-"):
			// --bare, -p, -P, --no-pager, --exec-path[=…], --literal-pathspecs, … (an unknown
			// option is git's own error).
		default:
			g.sub, g.subIndex, g.rest = a, i, args[i+1:]
			return g
		}
	}
	return g
}

// under is p taken below the -C directories (relative to where git was started).
func (g *gitCall) under(p string) string {
	if p == "" || path.IsAbs(p) || strings.HasPrefix(p, "~") {
		return p
	}
	dir := ""
	for _, d := range g.dirs {
		switch {
		case d == "":
		case path.IsAbs(d) || strings.HasPrefix(d, "~"):
			dir = d
		default:
			dir = joinRel(dir, d)
		}
	}
	return joinRel(dir, p)
}

// gitArgs is the call read as git reads it, parsed once per call.
func (c *toolCall) gitArgs() *gitCall {
	if !c.gitSet {
		c.git, c.gitSet = parseGit(c.args), true
	}
	return &c.git
}

// config returns the last -c value of a key (lower-cased), and whether it is set.
func (g *gitCall) config(key string) (string, bool) {
	v, ok := "", false
	for _, kv := range g.configs {
		if kv[0] == key {
			v, ok = kv[1], true
		}
	}
	return v, ok
}

// gitValued are the subcommand options that take the next word as their value when it is not
// attached: the value is not an operand.
var gitValued = map[string]bool{
	"-m": true, "--message": true, "-F": true, "--file": true, "-S": true, "-G": true, "--grep": true,
	"--author": true, "--committer": true, "-e": true, "-f": true, "--format": true, "--pretty": true,
	"-b": true, "-B": true, "--branch": true, "-o": true, "--origin": true, "--depth": true, "--reference": true,
	"--template": true, "--separate-git-dir": true, "-u": true, "--upload-pack": true, "--filter": true,
	"--shallow-since": true, "--shallow-exclude": true, "-j": true, "--jobs": true,
	"--max-depth": true, "--threads": true, "--max-count": true, "--since": true, "--until": true,
	"--output": true, "--output-directory": true, "-X": true, "--strategy-option": true, "-s": true,
	"--strategy": true, "--exec": true, "-x": true, "--onto": true, "--date": true, "--object-format": true,
	"--ref-format": true, "--config": true, "--bundle-uri": true, "--server-option": true, "--prefix": true,
	"--remote": true, "--points-at": true, "--contains": true, "--sort": true,
}

// gitGrepValued are git grep's options that take the next word as their value.
var gitGrepValued = map[string]bool{
	"-e": true, "-f": true, "-A": true, "-B": true, "-C": true, "-m": true, "--max-count": true, "--max-depth": true,
	"--threads": true, "--context": true, "--after-context": true, "--before-context": true,
}

// gitTextOptions are the options whose value is text (a message, a search string, a format),
// never a path.
var gitTextOptions = map[string]bool{
	"-m": true, "--message": true, "-S": true, "-G": true, "--grep": true, "--author": true,
	"--committer": true, "-e": true, "--format": true, "--pretty": true, "--date": true, "--since": true,
	"--until": true,
}

// gitText marks the arguments git reads as text: messages, search strings and formats, and the
// pattern of git grep.
func gitText(c *toolCall, t *argSet) {
	g := c.gitArgs()
	if g.subIndex < 0 {
		return
	}
	base := g.subIndex + 1
	patternGiven := false
	for k := 0; k < len(g.rest); k++ {
		a := g.rest[k]
		if a == "--" {
			break
		}
		name, _, attached := strings.Cut(a, "=")
		if !attached && len(a) > 2 && a[0] == '-' && a[1] != '-' && strings.IndexByte("mSGe", a[1]) >= 0 {
			name, attached = a[:2], true // -mMESSAGE, -Sneedle
		}
		if gitTextOptions[name] {
			if name == "-e" {
				patternGiven = true
			}
			if attached {
				t.add(base + k)
			} else if k+1 < len(g.rest) {
				t.add(base + k + 1)
				k++
			}
			continue
		}
		valued := gitValued
		if g.sub == "grep" {
			valued = gitGrepValued
			if name == "-f" || name == "--file" {
				patternGiven = true
			}
		}
		if valued[name] && !attached {
			k++
			continue
		}
		if g.sub == "grep" && !patternGiven && !strings.HasPrefix(a, "-") {
			t.add(base + k) // git grep's pattern
			patternGiven = true
		}
	}
}

// gitConfigWrites reports whether git config's arguments change the configuration: an action
// that sets, adds, unsets, renames, removes or edits, or a key with a value (git config KEY
// VALUE). git config KEY, --get*, --list and the get and list subcommands only read.
func gitConfigWrites(rest []string) bool {
	n := 0
	for k := 0; k < len(rest); k++ {
		a := rest[k]
		name, _, attached := strings.Cut(a, "=")
		switch {
		case k == 0 && (a == "get" || a == "list"):
			return false
		case k == 0 && (a == "set" || a == "unset" || a == "rename-section" || a == "remove-section" || a == "edit"):
			return true
		case name == "--get" || name == "--get-all" || name == "--get-regexp" || name == "--get-urlmatch" ||
			name == "--list" || a == "-l" || name == "--get-color" || name == "--get-colorbool" || name == "--show-origin" && n == 0:
			if name == "--show-origin" {
				continue
			}
			return false
		case name == "--add" || name == "--replace-all" || name == "--unset" || name == "--unset-all" ||
			name == "--rename-section" || name == "--remove-section" || name == "--edit" || a == "-e":
			return true
		case name == "--file" || a == "-f" || name == "--blob" || name == "--type" || name == "--default" ||
			name == "--comment":
			if !attached {
				k++
			}
		case strings.HasPrefix(a, "-"):
		default:
			n++
		}
	}
	return n >= 2 // KEY VALUE [VALUE-PATTERN]
}

// gitEffects: what a git call writes besides the repository's own files: --output files,
// clone, init and worktree destinations, the configuration files git config changes, trace
// targets. Where it runs and which work tree it reads are the segment's business (gitSegment).
func gitEffects(c *toolCall, e *effects) {
	g := c.gitArgs()
	from := len(e.writes)
	gitWrites(g, e)
	// Relative paths are taken where git runs: below the -C directories.
	for i := from; i < len(e.writes) && len(g.dirs) > 0; i++ {
		e.writes[i] = g.under(e.writes[i])
	}
}

func gitWrites(g *gitCall, e *effects) {
	for _, kv := range g.configs {
		if strings.HasSuffix(kv[0], "target") && strings.HasPrefix(kv[0], "trace2.") {
			gitTraceTarget(kv[1], "git -c "+kv[0], e)
		}
	}
	if g.subIndex < 0 {
		return
	}
	sub, rest := g.sub, g.rest
	for k := 0; k < len(rest); k++ {
		a := rest[k]
		switch {
		case strings.HasPrefix(a, "--output=") || strings.HasPrefix(a, "--output-directory="):
			_, v, _ := strings.Cut(a, "=")
			e.writes = append(e.writes, v)
		case (a == "--output" || a == "--output-directory" || a == "-o" && (sub == "format-patch" || sub == "archive")) && k+1 < len(rest):
			e.writes = append(e.writes, rest[k+1])
			k++
		case strings.HasPrefix(a, "--separate-git-dir="):
			e.writes = append(e.writes, a[len("--separate-git-dir="):])
		case a == "--separate-git-dir" && k+1 < len(rest):
			e.writes = append(e.writes, rest[k+1])
			k++
		}
	}
	var ops []string
	for k := 0; k < len(rest); k++ {
		a := rest[k]
		if a == "--" {
			ops = append(ops, rest[k+1:]...)
			break
		}
		if strings.HasPrefix(a, "-") {
			if gitValued[a] {
				k++
			}
			continue
		}
		ops = append(ops, a)
	}
	switch sub {
	case "clone":
		switch {
		case len(ops) >= 2:
			e.writes = append(e.writes, ops[1])
		case len(ops) == 1:
			e.writes = append(e.writes, cloneDir(ops[0]))
		default:
			e.writes = append(e.writes, ".")
		}
	case "init":
		if len(ops) >= 1 {
			e.writes = append(e.writes, ops[0])
		} else {
			e.writes = append(e.writes, ".")
		}
	case "worktree":
		if len(ops) >= 2 && ops[0] == "add" {
			e.writes = append(e.writes, ops[1])
		}
	case "bundle":
		if len(ops) >= 2 && ops[0] == "create" {
			e.writes = append(e.writes, ops[1])
		}
	case "clean":
		if !gitHasFlag(rest, "n", "--dry-run") && (gitHasFlag(rest, "x", "") || gitHasFlag(rest, "X", "")) {
			e.unknown = "git clean -x deletes the ignored files too (.env, local keys and settings), which cannot be listed"
		}
	case "instaweb", "daemon":
		e.unknown = "git " + sub + " serves the repository over the network"
	case "web--browse":
		e.unknown = "git web--browse starts a web browser"
	case "help":
		if gitHasFlag(rest, "w", "--web") {
			e.unknown = "git help --web starts a web browser"
		}
	case "config":
		if !gitConfigWrites(rest) {
			return
		}
		local := true
		for k, a := range rest {
			switch {
			case a == "--global":
				local = false
				e.writes = append(e.writes, "~/.gitconfig")
			case a == "--system":
				local = false
				e.writes = append(e.writes, "/etc/gitconfig")
			case (a == "--file" || a == "-f") && k+1 < len(rest):
				local = false
				e.writes = append(e.writes, rest[k+1])
			case strings.HasPrefix(a, "--file="):
				local = false
				e.writes = append(e.writes, a[len("--file="):])
			}
		}
		if local {
			// The repository's own configuration: core.hooksPath, aliases and pagers run programs.
			e.writes = append(e.writes, ".git/config")
		}
	}
}

// gitHasFlag reports a short flag (alone or in a cluster: -fdx) or a long one before "--".
func gitHasFlag(rest []string, short, long string) bool {
	for _, a := range rest {
		switch {
		case a == "--":
			return false
		case long != "" && a == long:
			return true
		case short != "" && len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.Contains(a[1:], short):
			return true
		}
	}
	return false
}

// cloneDir is the directory git clone makes for a repository URL: its last element without
// ".git".
func cloneDir(url string) string {
	u := strings.TrimRight(url, "/")
	if i := strings.LastIndexAny(u, "/:"); i >= 0 {
		u = u[i+1:]
	}
	u = strings.TrimSuffix(u, ".git")
	if u == "" || u == "." || u == ".." {
		return "."
	}
	return u
}

// gitTraceTarget reads a GIT_TRACE* or trace2.*Target value: a path is a file written; 1, 2,
// true or a descriptor number is standard error or a descriptor; af_unix: is a socket.
func gitTraceTarget(v, shown string, e *effects) {
	switch {
	case v == "":
	case strings.HasPrefix(strings.ToLower(v), "af_unix:"):
		e.unknown = shown + " sends git's trace to the socket " + v
	case strings.ContainsAny(v, "/~"):
		e.writes = append(e.writes, v)
	}
}

// gitSegment judges where a git call runs and what it reaches besides its arguments: the
// repository (-C, --git-dir, GIT_DIR, GIT_COMMON_DIR) and its configuration and hooks, the
// work tree (--work-tree, core.worktree, GIT_WORK_TREE), the paths of its arguments taken in
// those directories, pathspecs that pick out sensitive files, the credential helpers, and the
// index, object store, templates and traces its environment names.
func (e *effectJudge) gitSegment(s *shell.Segment, sc *sensScope, c *toolCall, t *argSet) {
	g := c.gitArgs()
	env := func(name string) (string, bool) {
		v, ok := "", false
		for _, kv := range s.Env {
			if k, val, found := strings.Cut(kv, "="); found && k == name {
				v, ok = val, true
			}
		}
		return v, ok
	}
	cwd := s.Cwd
	abs := func(base, p string) string {
		p = expandTilde(p, s.Home)
		switch {
		case p == "":
			return base
		case path.IsAbs(p):
			return path.Clean(p)
		case base == "":
			return ""
		}
		return path.Clean(base + "/" + p)
	}
	runDir := cwd
	moved := false
	for _, d := range g.dirs {
		if d != "" {
			runDir, moved = abs(runDir, d), true
		}
	}
	// The repository: its configuration and hooks run programs.
	var repos []string
	if moved || cwd != e.cwd {
		repos = append(repos, runDir)
	}
	if g.gitDir != "" {
		repos = append(repos, abs(runDir, g.gitDir))
	}
	for _, n := range []string{"GIT_DIR", "GIT_COMMON_DIR"} {
		if v, ok := env(n); ok && v != "" {
			repos = append(repos, abs(runDir, v))
		}
	}
	creates := g.sub == "clone" || g.sub == "init"
	if g.subIndex >= 0 && !gitSubSafe(g.sub, g.rest) && s.Judged {
		// A subcommand that changes the repository writes where it is.
		if moved && !creates {
			e.write(s, runDir)
		}
		if g.gitDir != "" {
			e.write(s, abs(runDir, g.gitDir))
		}
	}
	switch g.sub {
	case "", "version", "help":
	default:
		for _, r := range repos {
			if creates && r == runDir {
				continue // the repository it makes (its destination is a write)
			}
			if !e.insideRequest(r) {
				shown := r
				if shown == "" {
					shown = "a directory that is not known"
				}
				e.cs.add(Concern{Kind: ConcernUnknown, What: shown,
					Reason: "runs git with the configuration and hooks of the repository at " + shown + ", outside the working directory"})
				break
			}
		}
	}
	// The work tree.
	work := ""
	if g.workTree != "" {
		work = abs(runDir, g.workTree)
	}
	if v, ok := g.config("core.worktree"); ok {
		work = abs(runDir, v)
	}
	if v, ok := env("GIT_WORK_TREE"); ok && v != "" {
		work = abs(runDir, v)
	}
	_, worktreeConfig := g.config("core.worktree")
	_, worktreeEnv := env("GIT_WORK_TREE")
	switch {
	case !(g.workTree != "" || worktreeConfig || worktreeEnv):
	case work == "":
		e.cs.add(Concern{Kind: ConcernUnknown, What: "work tree", Reason: "git's work tree is a directory that is not known"})
	case !e.insideRequest(work):
		e.tree(sc, work)
		if g.subIndex >= 0 && !gitSubSafe(g.sub, g.rest) && s.Judged {
			e.write(s, work)
		}
	}
	// The index, the object store, templates and traces the environment names.
	for _, n := range []string{"GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY"} {
		if v, ok := env(n); ok && v != "" && s.Judged {
			e.write(s, abs(runDir, v))
		}
	}
	for _, kv := range s.Env {
		// The files GIT_TRACE* name are written like any other such variable's (segment).
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "GIT_TRACE") && strings.HasPrefix(strings.ToLower(v), "af_unix:") {
			e.cs.add(Concern{Kind: ConcernUnknown, What: k, Reason: k + " sends git's trace to the socket " + v})
		}
	}
	for _, n := range []string{"GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM"} {
		if v, ok := env(n); ok && v != "" && v != "/dev/null" {
			e.cs.add(Concern{Kind: ConcernUnknown, What: n, Reason: n + "=" + v + " makes git read its configuration, which can run programs, from " + v})
		}
	}
	if _, ok := env("GIT_CONFIG_PARAMETERS"); ok {
		e.cs.add(Concern{Kind: ConcernUnknown, What: "GIT_CONFIG_PARAMETERS", Reason: "GIT_CONFIG_PARAMETERS sets git configuration, which can run programs"})
	}
	if _, ok := env("GIT_CONFIG_COUNT"); ok {
		e.cs.add(Concern{Kind: ConcernUnknown, What: "GIT_CONFIG_COUNT", Reason: "GIT_CONFIG_COUNT sets git configuration, which can run programs"})
	}
	for _, kv := range g.configs {
		if kv[0] == "include.path" || strings.HasPrefix(kv[0], "includeif.") && strings.HasSuffix(kv[0], ".path") {
			e.cs.add(Concern{Kind: ConcernUnknown, What: kv[1], Reason: "git -c " + kv[0] + " reads git configuration, which can run programs, from " + kv[1]})
		}
	}
	if len(g.configEnv) > 0 {
		e.cs.add(Concern{Kind: ConcernUnknown, What: "--config-env", Reason: "git --config-env sets configuration from the environment, which can run programs"})
	}
	// Templates are copied into the new repository's .git/hooks.
	template := ""
	if v, ok := env("GIT_TEMPLATE_DIR"); ok {
		template = v
	}
	if v, ok := g.config("init.templatedir"); ok {
		template = v
	}
	if creates {
		for k, a := range g.rest {
			switch {
			case strings.HasPrefix(a, "--template="):
				template = a[len("--template="):]
			case a == "--template" && k+1 < len(g.rest):
				template = g.rest[k+1]
			}
		}
	}
	if template != "" && (creates || g.sub == "") {
		e.cs.add(Concern{Kind: ConcernSensitive, What: ".git/hooks", Glob: ".git/hooks",
			Reason: "copies the templates in " + template + " into the repository's .git/hooks, which run programs"})
	}
	// The credential helpers hand out stored passwords and tokens (and store them).
	if g.sub == "credential" || strings.HasPrefix(g.sub, "credential-") {
		e.cs.add(Concern{Kind: ConcernSensitive, What: "git " + g.sub, Glob: "git credentials",
			Reason: "git " + g.sub + " reads or changes the stored git credentials"})
	}
	if g.subIndex < 0 {
		return
	}
	// The arguments as paths in the directories git takes them in.
	bases := make([]string, 0, 3)
	if runDir != cwd && runDir != "" {
		bases = append(bases, runDir)
	}
	if work != "" && work != runDir {
		bases = append(bases, work)
	}
	var roots []string // the directories the top of the repository may be, worked out when needed
	rootsOf := func() []string {
		if roots == nil {
			roots = ancestors(runDir, 8)
			if work != "" {
				roots = append(roots, ancestors(work, 8)...)
			}
		}
		return roots
	}
	dash := false
	for k := 0; k < len(g.rest); k++ {
		a := g.rest[k]
		idx := g.subIndex + 1 + k
		if !dash {
			if a == "--" {
				dash = true
				continue
			}
			if strings.HasPrefix(a, "-") {
				continue
			}
		}
		if t.has(idx) || a == "" {
			continue
		}
		p, top, exclude := gitPathspec(a)
		if exclude {
			continue
		}
		if rev, inRepo, ok := gitRevPath(a, dash); ok && rev {
			// REV:PATH is relative to the top of the repository, which may be any directory
			// above where git runs; REV:./PATH to where it runs.
			if strings.HasPrefix(inRepo, "./") || strings.HasPrefix(inRepo, "../") {
				for _, b := range append([]string{cwd}, bases...) {
					e.gitPath(sc, b, inRepo)
				}
			} else {
				for _, r := range rootsOf() {
					e.gitPath(sc, r, inRepo)
				}
			}
			continue
		}
		if top {
			for _, r := range rootsOf() {
				e.gitPath(sc, r, p)
			}
		} else {
			for _, b := range bases {
				e.gitPath(sc, b, p)
			}
		}
		if strings.ContainsAny(p, "*?[") {
			sel := selector{kind: selRelPath, pat: p, shown: "the git pathspec " + a}
			dirs := bases
			if top {
				dirs = rootsOf()
			}
			if cwd != "" {
				dirs = append(dirs, cwd)
			}
			for _, d := range dirs {
				if gl, ok, _ := sc.selected(d, sel); ok {
					e.cs.add(Concern{Kind: ConcernSensitive, What: a, Glob: gl, Reason: sel.shown + " picks out files matching the sensitive path " + gl})
					break
				}
			}
		}
	}
}

// gitPath checks p (a path git reads relative to base) as an absolute path.
func (e *effectJudge) gitPath(sc *sensScope, base, p string) {
	if base == "" || p == "" || path.IsAbs(p) || strings.HasPrefix(p, "~") {
		return
	}
	full := path.Clean(base + "/" + p)
	e.word(sc, full, "", true, len(full), false)
}

// insideRequest reports whether an absolute directory is the request's working directory or
// below it. Without a working directory nothing is.
func (e *effectJudge) insideRequest(dir string) bool {
	if e.cwd == "" || dir == "" {
		return false
	}
	return dir == e.cwd || e.cwd == "/" || strings.HasPrefix(dir, e.cwd+"/")
}

// ancestors are dir and the directories above it, at most n.
func ancestors(dir string, n int) []string {
	if dir == "" {
		return nil
	}
	var out []string
	for d := dir; len(out) < n; d = path.Dir(d) {
		out = append(out, d)
		if d == "/" || d == "." {
			break
		}
	}
	return out
}

// gitPathspec strips a pathspec's magic: ":/x" and ":(top)x" are taken from the top of the
// repository; ":!x", ":^x" and ":(exclude)x" exclude.
func gitPathspec(a string) (p string, top, exclude bool) {
	if !strings.HasPrefix(a, ":") || len(a) < 2 {
		return a, false, false
	}
	if a[1] == '(' {
		end := strings.IndexByte(a, ')')
		if end < 0 {
			return a, false, false
		}
		for _, m := range strings.Split(a[2:end], ",") {
			switch strings.TrimSpace(m) {
			case "top":
				top = true
			case "exclude":
				exclude = true
			}
		}
		return a[end+1:], top, exclude
	}
	i := 1
	for i < len(a) && strings.IndexByte("/!^", a[i]) >= 0 {
		switch a[i] {
		case '/':
			top = true
		case '!', '^':
			exclude = true
		}
		i++
	}
	if i == 1 {
		return a, false, false // ":N:path" or ":path": an index entry, see gitRevPath
	}
	return a[i:], top, exclude
}

// gitRevPath reads REV:PATH (and :N:PATH, :PATH, the index): the path in the repository. After
// "--" a word is a pathspec, never a revision.
func gitRevPath(a string, afterDash bool) (rev bool, p string, ok bool) {
	if afterDash || strings.HasPrefix(a, "-") || strings.Contains(a, "://") {
		return false, "", false
	}
	i := strings.IndexByte(a, ':')
	if i < 0 {
		return false, "", false
	}
	p = a[i+1:]
	if i == 0 && len(p) >= 2 && p[0] >= '0' && p[0] <= '3' && p[1] == ':' {
		p = p[2:]
	}
	if i == 0 && (strings.HasPrefix(p, "/") || strings.HasPrefix(p, "(") || strings.HasPrefix(p, "!") || strings.HasPrefix(p, "^")) {
		return false, "", false // pathspec magic
	}
	return true, strings.TrimPrefix(p, "/"), true
}
