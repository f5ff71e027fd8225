package shell

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Base returns the command name without directory, lower-cased, without a Windows executable
// extension: what wrapper and floor tables are keyed by.
func Base(name string) string {
	plain := true
	for i := 0; i < len(name); i++ {
		if c := name[i]; c == '/' || c == '\\' || c == '.' || c >= 'A' && c <= 'Z' {
			plain = false
			break
		}
	}
	if plain {
		return name
	}
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c >= 'A' && c <= 'Z' {
			name = strings.ToLower(name)
			break
		}
	}
	for _, ext := range [...]string{".exe", ".com", ".cmd", ".bat"} {
		if len(name) > len(ext) && strings.HasSuffix(name, ext) {
			return name[:len(name)-len(ext)]
		}
	}
	return name
}

// builtins maps every builtin handled to 1 (benign) or 2 (not benign).
var builtins = func() map[string]uint8 {
	m := make(map[string]uint8, len(benignBuiltins)+len(otherBuiltins))
	for k := range benignBuiltins {
		m[k] = 1
	}
	for k := range otherBuiltins {
		m[k] = 2
	}
	return m
}()

// Builtins that only touch the shell's own state.
var benignBuiltins = map[string]bool{
	":": true, "true": true, "false": true, "cd": true, "pushd": true, "popd": true, "dirs": true,
	"pwd": true, "export": true, "declare": true, "typeset": true, "local": true, "readonly": true,
	"unset": true, "set": true, "shopt": true, "shift": true, "exit": true, "return": true,
	"break": true, "continue": true, "wait": true, "test": true, "[": true, "echo": true,
	"printf": true, "read": true, "let": true, "getopts": true, "umask": true, "type": true,
	"jobs": true, "times": true, "ulimit": true, "caller": true, "help": true, "logout": true,
	"disown": true, "fg": true, "bg": true, "unalias": true,
}

// Builtins that can run or redirect code, and so are never satisfied on their own.
var otherBuiltins = map[string]bool{
	"source": true, ".": true, "alias": true, "hash": true, "enable": true, "mapfile": true,
	"readarray": true, "complete": true, "compgen": true, "compopt": true, "bind": true, "fc": true,
	"history": true, "kill": true, "suspend": true,
}

// Environment variables that change what a command runs or loads, or where it reads its
// options from: setting one makes the analysis not-ok, since what runs is no longer what the
// command line says.
func dangerousEnv(name string) bool {
	switch name {
	case "PATH", "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "NODE_OPTIONS", "NODE_PATH", "PERL5OPT",
		"PERL5LIB", "PERLLIB", "RUBYOPT", "RUBYLIB", "PYTHONSTARTUP", "PYTHONPATH", "PYTHONHOME", "PYTHONINSPECT",
		"PYTHONUSERBASE", "GIT_EXEC_PATH", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG", "GIT_CONFIG_GLOBAL",
		"GIT_CONFIG_SYSTEM", "GIT_CONFIG_COUNT", "GIT_DIR", "GIT_TEMPLATE_DIR", "GIT_ALLOW_PROTOCOL",
		"GIT_PROTOCOL_FROM_USER", "ZDOTDIR", "BASH_CMDS", "BASH_ALIASES", "EXECIGNORE", "BASH_LOADABLES_PATH",
		"PS0", "PS1", "PS2", "PS4", "HOME", "XDG_CONFIG_HOME", "GLOBIGNORE", "CDPATH", "BASH_COMPAT",
		"TAR_OPTIONS", "MAKEFLAGS", "MFLAGS", "GNUMAKEFLAGS", "MAKEFILES", "GOFLAGS", "GOENV", "GOTOOLCHAIN",
		"RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS",
		"CLASSPATH", "DOTNET_STARTUP_HOOKS", "GCONV_PATH", "HOSTALIASES", "NLSPATH", "MANOPT", "VIMINIT",
		"EXINIT", "MYVIMRC", "GVIMINIT", "WGETRC", "CURL_HOME", "PIP_CONFIG_FILE", "LESSKEY", "INPUTRC",
		"ERL_AFLAGS", "ERL_FLAGS", "PHPRC", "PHP_INI_SCAN_DIR", "R_PROFILE", "R_PROFILE_USER", "LUA_PATH",
		"LUA_CPATH", "TCLLIBPATH", "GEM_PATH", "GEM_HOME", "BUNDLE_GEMFILE", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL":
		return true
	}
	if strings.HasPrefix(name, "npm_config_") || strings.HasPrefix(name, "NPM_CONFIG_") {
		return !npmCommandConfig(strings.ToLower(name[len("npm_config_"):]))
	}
	return strings.HasPrefix(name, "LD_") || strings.HasPrefix(name, "DYLD_") ||
		strings.HasPrefix(name, "GIT_") && !harmlessGitEnv(name) ||
		strings.HasPrefix(name, "PYTHON") && !harmlessPythonEnv(name) ||
		strings.HasPrefix(name, "BASH_FUNC_") || strings.HasPrefix(name, "LUA_INIT")
}

// harmlessGitEnv are the GIT_* variables that only change names, dates, messages and
// output: every other one changes which repository, index, objects, configuration or
// programs git uses, or what it writes where.
func harmlessGitEnv(name string) bool {
	switch name {
	case "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
		"GIT_COMMITTER_DATE", "GIT_TERMINAL_PROMPT", "GIT_OPTIONAL_LOCKS", "GIT_FLUSH", "GIT_MERGE_AUTOEDIT",
		"GIT_MERGE_VERBOSITY", "GIT_LITERAL_PATHSPECS", "GIT_GLOB_PATHSPECS", "GIT_NOGLOB_PATHSPECS",
		"GIT_ICASE_PATHSPECS", "GIT_ADVICE", "GIT_PROGRESS_DELAY", "GIT_REDACT_COOKIES", "GIT_HTTP_USER_AGENT",
		"GIT_DIFF_OPTS", "GIT_NO_LAZY_FETCH":
		return true
	}
	return false
}

// harmlessPythonEnv are the PYTHON* variables that only tune the interpreter: every other
// one changes what it imports or runs (PYTHONPATH, PYTHONSTARTUP, PYTHONPLATLIBDIR,
// PYTHONBREAKPOINT, PYTHONWARNINGS, …).
func harmlessPythonEnv(name string) bool {
	switch name {
	case "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "PYTHONIOENCODING", "PYTHONHASHSEED", "PYTHONUTF8",
		"PYTHONNOUSERSITE", "PYTHONFAULTHANDLER", "PYTHONOPTIMIZE", "PYTHONDEVMODE", "PYTHONSAFEPATH",
		"PYTHONCOERCECLOCALE", "PYTHONINTMAXSTRDIGITS", "PYTHONTRACEMALLOC", "PYTHONASYNCIODEBUG", "PYTHONMALLOC",
		"PYTHONNODEBUGRANGES", "PYTHONLEGACYWINDOWSSTDIO", "PYTHON_COLORS", "PYTHON_BASIC_REPL", "PYTHONVERBOSE",
		"PYTHONDEBUG", "PYTHONINSPECT_OFF":
		return true
	}
	return false
}

// npmCommandConfig names the npm settings whose value is a command.
func npmCommandConfig(key string) bool {
	switch strings.ReplaceAll(key, "-", "_") {
	case "script_shell", "shell", "editor", "browser", "git", "viewer":
		return true
	}
	return false
}

// Environment variables whose value is a command line that a program runs.
func commandEnv(name string) bool {
	switch name {
	case "PAGER", "MANPAGER", "EDITOR", "VISUAL", "GIT_SSH_COMMAND", "GIT_SSH", "GIT_PROXY_COMMAND",
		"GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS", "LESSOPEN", "LESSCLOSE", "BROWSER",
		"PROMPT_COMMAND", "RSYNC_RSH", "RSYNC_CONNECT_PROG", "CVS_RSH", "SVN_SSH", "SHELL", "TERMINAL", "FCEDIT",
		"CC", "CXX", "CPP", "LD", "AR", "AS", "FC", "NM", "RANLIB", "STRIP", "OBJCOPY", "OBJDUMP", "RUSTC",
		"RUSTC_WRAPPER", "RUSTDOC", "RUSTC_WORKSPACE_WRAPPER", "CARGO_BUILD_RUSTC_WRAPPER", "CARGO_BUILD_RUSTC",
		"SUDO_EDITOR", "DIFFPROG", "MAKE":
		return true
	}
	if strings.HasPrefix(name, "npm_config_") || strings.HasPrefix(name, "NPM_CONFIG_") {
		return npmCommandConfig(strings.ToLower(name[len("npm_config_"):]))
	}
	if strings.HasPrefix(name, "CARGO_TARGET_") && (strings.HasSuffix(name, "_RUNNER") || strings.HasSuffix(name, "_LINKER")) {
		return true
	}
	return strings.HasSuffix(name, "_PAGER") || strings.HasSuffix(name, "_EDITOR") || strings.HasSuffix(name, "_BROWSER")
}

// HarmlessEnv reports environment variables that cannot change what a read-only tool does
// (locale, time zone, terminal and colour settings).
func HarmlessEnv(name string) bool {
	switch name {
	case "LANG", "LANGUAGE", "TZ", "COLUMNS", "LINES", "TERM", "NO_COLOR", "CLICOLOR", "CLICOLOR_FORCE",
		"FORCE_COLOR", "POSIXLY_CORRECT", "IFS", "OPTIND", "OPTARG", "REPLY":
		return true
	}
	return strings.HasPrefix(name, "LC_")
}

// assigned checks a variable set by a construct whose value is unknown (for, read, printf -v,
// getopts, arithmetic).
func (w *walker) assigned(name string) {
	if name == "GLOBIGNORE" {
		w.an.GlobsMatchHidden = true
	}
	if dangerousEnv(name) || commandEnv(name) {
		w.problem("sets %s, which changes what runs", name)
	}
}

// checkEnv looks at an assignment made for or by the command.
func (w *walker) checkEnv(name, value string, known bool) {
	switch name {
	case "PS0", "PS1", "PS2", "PS3", "PS4", "PROMPT_COMMAND":
		// Prompt strings expand their $(…) when they are printed (PS4 under set -x).
		w.codeInData(name+"=", value)
	}
	switch {
	case strings.HasPrefix(name, "BASH_FUNC_"):
		// An exported function: bash defines it from the environment.
		w.problem("sets %s, which defines a function for the bash it runs", name)
		fn := strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(name, "BASH_FUNC_"), "%%"), "()")
		if v := strings.TrimSpace(value); strings.HasPrefix(v, "()") && isName(fn) {
			w.floorScript(name+"=", fn+" "+v)
		}
		return
	case name == "LESS":
		// less reads its options from $LESS: an initial command +!cmd runs cmd.
		for _, f := range strings.Fields(value) {
			if cmd, ok := lessCommand(f); ok {
				w.problem("LESS holds a command less runs")
				w.hiddenScript("LESS=", cmd+value[strings.Index(value, f)+len(f):], known)
				break
			}
		}
		return
	case name == "LESSOPEN" || name == "LESSCLOSE":
		// |cmd %s, ||cmd %s, -cmd %s: a preprocessor less runs on every file.
		value = strings.ReplaceAll(strings.TrimLeft(strings.TrimSpace(value), "|-"), "%s", "FILE")
	case name == "GIT_CONFIG_PARAMETERS":
		w.problem("sets %s, which changes what runs", name)
		for _, kv := range gitConfigParameters(value) {
			w.gitConfig(name, kv, known)
		}
		return
	case name == "GLOBIGNORE" || name == "BASHOPTS" && (!known || strings.Contains(value, "dotglob")):
		// A GLOBIGNORE that is set turns dotglob on; a bash started with BASHOPTS=dotglob has it on.
		w.an.GlobsMatchHidden = true
	case name == "IFS" && !known:
		w.problem("IFS is set to a value that is not known (words split where it says)")
	}
	if commandEnv(name) && value != "" {
		if !known {
			w.problem("%s is set to a command that is not a literal", name)
		}
		w.hiddenScript(name+"=", value, known)
		return
	}
	if dangerousEnv(name) {
		w.problem("sets %s, which changes what runs", name)
	}
}

// lessCommand reads a less option word: +!cmd and +|cmd (an initial command that runs a shell
// command), also after other initial commands (+G!cmd).
func lessCommand(f string) (string, bool) {
	if !strings.HasPrefix(f, "+") && !strings.HasPrefix(f, "-+") {
		return "", false
	}
	f = strings.TrimLeft(f, "-+")
	if i := strings.IndexAny(f, "!|"); i >= 0 && i <= 2 {
		return f[i+1:], true
	}
	return "", false
}

// gitConfigParameters splits $GIT_CONFIG_PARAMETERS: 'key'='value' or 'key=value' entries,
// single-quoted, separated by blanks.
func gitConfigParameters(s string) []string {
	var out []string
	for _, w := range xargsWords(strings.ReplaceAll(s, "'='", "=")) {
		if w != "" {
			out = append(out, w)
		}
	}
	return out
}

// isAssignment reports whether s looks like NAME=value.
func isAssignment(s string) bool {
	i := strings.IndexByte(s, '=')
	if i <= 0 {
		return false
	}
	for j := 0; j < i; j++ {
		c := s[j]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || j > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// dispatch records args as a command, unwrapping what it can.
func (w *walker) dispatch(args []Arg) {
	name := args[0].Value
	if file, ok := w.hashed[name]; ok && !strings.ContainsAny(name, `/\`) && w.funcs[name] == nil && builtins[name] == 0 {
		// hash -p FILE NAME: NAME runs FILE.
		args = append([]Arg{{Value: file, Raw: file, Known: true, Prefix: len(file)}}, args[1:]...)
		name = file
	}
	if !strings.ContainsAny(name, `/\`) {
		if body, ok := w.funcs[name]; ok {
			w.callFunc(name, body, args)
			return
		}
		switch name {
		case "eval", "trap", "source", ".", "cd", "pushd", "popd", "alias", "exec", "command", "builtin":
			w.builtin(name, args)
			return
		}
		if builtins[name] != 0 {
			w.builtin(name, args)
			return
		}
	}
	base := Base(name)
	switch base {
	case "env":
		w.envWrapper(args)
	case "sudo", "doas", "pkexec", "run0":
		w.privileged(base, args)
	case "su", "runuser":
		w.suWrapper(base, args)
	case "chroot":
		w.chroot(args)
	case "nice", "nohup", "timeout", "time", "stdbuf", "ionice", "taskset", "chrt", "setsid":
		w.simpleWrapper(base, args)
	case "xargs":
		w.xargs(args)
	case "npx", "bunx", "pnpx", "uvx", "pnpm", "yarn", "npm", "bun", "uv", "pipx":
		w.packageRunner(base, args)
	case "busybox", "toybox":
		if len(args) > 1 && !strings.HasPrefix(args[1].Value, "-") {
			if c := w.deeper(base); c != nil {
				c.command(args[1:])
			}
			return
		}
		w.emit(args, KindCommand)
	case "watch":
		w.watch(args)
	case "flock":
		w.flock(args)
	case "script":
		w.scriptCmd(args)
	case "at", "batch":
		w.emit(args, KindCommand)
		w.stdinScript(base, args, len(args))
	case "ssh", "scp", "sftp":
		w.ssh(base, args)
	case "find":
		w.find(args)
	case "git":
		w.git(args)
	case "cmd":
		w.cmdExe(args)
	case "powershell", "pwsh":
		w.powershell(args)
	case "make", "gmake":
		w.make(args)
	case "tar", "gtar":
		w.tar(args)
	case "rsync":
		w.rsync(args)
	case "zip":
		w.zip(args)
	case "vim", "vi", "nvim", "ex", "view", "gvim", "vimdiff", "rvim", "evim", "gview":
		w.vim(base, args)
	case "ed", "red":
		w.ed(base, args)
	case "gdb", "lldb":
		w.gdb(base, args)
	case "man":
		w.man(args)
	case "less", "more", "most":
		w.less(args)
	case "tmux":
		w.tmux(args)
	case "screen":
		w.screen(args)
	case "parallel", "sem":
		w.parallel(args)
	case "expect":
		w.expect(args)
	case "tclsh", "wish", "jimsh", "tclsh8.6", "tclsh9.0":
		w.tclsh(args)
	case "crontab":
		w.crontab(args)
	case "sg", "newgrp":
		w.sg(base, args)
	case "sed", "gsed":
		w.sed(args)
	case "sqlite3", "sqlite":
		w.sqlite(args)
	case "psql", "mysql", "mariadb":
		w.sqlClient(base, args)
	case "socat":
		w.socat(args)
	case "nc", "ncat", "netcat", "nc.traditional", "nc.openbsd":
		w.netcat(base, args)
	case "apt", "apt-get", "aptitude":
		w.aptGet(base, args)
	case "go":
		w.goTool(args)
	case "hg":
		w.hg(args)
	case "cargo":
		w.cargo(args)
	case "gcc", "g++", "cc", "c++", "clang", "clang++":
		w.compiler(base, args)
	case "ansible":
		w.ansible(args)
	case "emacs", "emacsclient":
		w.emacs(args)
	case "tee":
		w.emit(args, KindCommand)
		w.teeWrites(args)
	case "curl", "wget", "cp", "mv", "install", "ln", "mknod":
		w.emit(args, KindCommand)
		if base == "wget" {
			for _, a := range args[1:] {
				if v, ok := strings.CutPrefix(a.Value, "--use-askpass="); ok {
					w.hiddenScript("wget --use-askpass", v, a.Known)
				}
			}
		}
		w.toolWrites(base, args)
		if base == "ln" || base == "cp" || base == "mknod" {
			w.links(base, args)
		}
	case "sshpass":
		r := (&optSpec{short: "ev", shortArg: "pfdP"}).parse(args, 1)
		if r.bad != "" {
			w.cannotUnwrap(base, args, "unknown option "+r.bad)
			return
		}
		w.emit(args[:r.next:r.next], KindCommand)
		w.unwrapTo(base, args, r.next, nil)
	case "strace", "ltrace", "valgrind", "firejail", "bwrap", "proot", "systemd-run",
		"unshare", "nsenter", "xvfb-run", "dbus-run-session", "dbus-launch", "faketime", "proxychains",
		"proxychains4", "torsocks", "tsocks", "catchsegv", "nix-shell", "nix", "caffeinate", "arch",
		"entr", "rlwrap", "unbuffer", "ssh-agent", "setpriv", "capsh", "prlimit", "numactl", "cgexec",
		"eatmydata", "fakeroot", "linux32", "linux64", "setarch", "chronic", "winpty", "watchexec",
		"nodemon", "reflex", "dotenv", "envchain", "with-contenv", "ip", "chpst", "schedtool", "runcon",
		"sandbox-exec", "valgrind.bin", "perf", "ltrace.bin", "uftrace", "hyperfine", "kubectl-exec", "machinectl",
		"systemd-nspawn", "toolbox", "distrobox", "distrobox-enter", "flatpak-spawn", "lxc-attach", "lxc-execute",
		"schroot", "dchroot", "daemonize", "start-stop-daemon", "please", "really", "calife", "sudo-rs", "doas-rs",
		"su-exec", "gosu", "chpst.exe", "busybox-chroot", "jexec", "zlogin", "pfexec", "ksu":
		if base == "ip" && !(len(args) > 2 && args[1].Value == "netns" && args[2].Value == "exec") {
			w.emit(args, KindCommand)
			return
		}
		if base == "nix" && !(len(args) > 1 && (args[1].Value == "run" || args[1].Value == "develop" || args[1].Value == "shell")) {
			w.emit(args, KindCommand)
			return
		}
		if base == "perf" && !(len(args) > 1 && (args[1].Value == "record" || args[1].Value == "stat" || args[1].Value == "trace")) {
			w.emit(args, KindCommand)
			return
		}
		if base == "systemd-run" && !hasAny(args[1:], "--wait", "-W", "--pty", "-t", "--pipe", "-P", "--scope", "-S", "--shell") {
			w.spawned() // a transient service runs beside the line
		}
		// These run a command of their own choosing with options not modelled here.
		w.cannotUnwrap(base, args, "it runs a command given in its arguments")
	default:
		if isShell(base) {
			w.shellWrapper(base, args)
			return
		}
		if w.subcommandRunner(base, args) {
			return
		}
		if maybeInterpreter(base) {
			if lang := interpreter(base, args); lang == "awk" {
				w.awk(args)
				return
			} else if lang != "" {
				w.interpreter(lang, args)
				return
			}
		}
		if strings.ContainsRune(name, '/') && w.runsWritten(name, name, "", nil) {
			w.emit(args, KindCommand)
			return
		}
		w.emit(args, KindCommand)
	}
}

func isShell(base string) bool {
	switch base {
	case "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "rbash", "fish", "csh", "tcsh", "ksh93", "oksh", "loksh":
		return true
	}
	return false
}

// cannotUnwrap records a wrapper the analysis cannot see through: it stays a segment of its
// own, the analysis is not-ok, and the floor still looks at every plausible inner command.
func (w *walker) cannotUnwrap(label string, args []Arg, why string) {
	w.problem("cannot see through %s: %s", label, why)
	w.emit(args, KindCommand)
	w.floorScan(args, label)
}

// floorScan hands every suffix of args that starts with a command name to the floor.
func (w *walker) floorScan(args []Arg, label string) {
	c := w.floorOnly(label)
	for i := 1; i < len(args); i++ {
		if c.depth+1 > maxDepth || len(w.an.Segments) >= maxSegments {
			return
		}
		if args[i].Known && !strings.HasPrefix(args[i].Value, "-") && args[i].Value != "" {
			if floorRelevant(Base(args[i].Value)) {
				if d := c.deeper(label); d != nil {
					d.dispatch(args[i:])
				}
			}
		}
	}
}

// floorRelevant lists command names the floor has rules for or unwraps.
func floorRelevant(b string) bool {
	switch b {
	case "rm", "find", "chmod", "chown", "chgrp", "dd", "mke2fs", "mkswap", "wipefs", "shred",
		"blkdiscard", "tee", "cp", "rsync", "format", "vssadmin", "wmic", "reg", "cmd", "powershell",
		"pwsh", "env", "sudo", "doas", "xargs", "eval", "ssh", "nice", "nohup", "timeout", "rd",
		"rmdir", "del", "erase", "remove-item", "format-volume", "sgdisk", "sfdisk", "cryptsetup",
		"ddrescue", "nvme", "badblocks", "wbadmin", "fdisk", "gdisk", "cgdisk", "parted",
		"ln", "mknod", "install", "hdparm", "mdadm", "zpool", "truncate", "git", "make", "tar",
		"sed", "parallel", "tmux", "su", "sg", "script", "watch", "flock", "busybox", "chroot":
		return true
	}
	return strings.HasPrefix(b, "mkfs") || isShell(b) || interpreter(b, nil) != ""
}

// opts is a small getopt: it walks args[from:] and stops at the first operand.
type optSpec struct {
	short     string   // flags without an argument
	shortArg  string   // flags taking an argument (attached or next word)
	long      []string // long options without an argument
	longArg   []string // long options taking an argument (=value or next word)
	permute   bool     // options may follow operands (GNU getopt)
	plusFlags bool     // +x style options
}

type optResult struct {
	next     int               // index of the first operand
	flags    map[string]string // option name ("u", "user") -> value ("" for flags)
	operands []int             // with permute: every operand index
	bad      string            // the option that is not understood
}

// resolveLong resolves a long option name the way getopt_long does: an exact name, or an
// abbreviation that is the prefix of exactly one name. ok is false for an unknown or
// ambiguous name.
func resolveLong(name string, lists ...[]string) (string, bool) {
	if name == "" {
		return "", false
	}
	found := ""
	n := 0
	for _, l := range lists {
		for _, o := range l {
			if o == name {
				return o, true
			}
			if strings.HasPrefix(o, name) && o != found {
				found = o
				n++
			}
		}
	}
	return found, n == 1
}

func hasName(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (r *optResult) set(name, val string) {
	if r.flags == nil {
		r.flags = make(map[string]string, 4)
	}
	r.flags[name] = val
}

func (spec *optSpec) parse(args []Arg, from int) optResult {
	var r optResult
	i := from
	for i < len(args) {
		a := args[i]
		v := a.Value
		if !a.Known {
			if strings.HasPrefix(v, "-") || v == "" {
				r.bad = a.Raw
				r.next = i
				return r
			}
		}
		if v == "--" {
			i++
			if spec.permute {
				for ; i < len(args); i++ {
					r.operands = append(r.operands, i)
				}
			}
			break
		}
		if strings.HasPrefix(v, "--") {
			name, val, hasVal := strings.Cut(v[2:], "=")
			if full, ok := resolveLong(name, spec.long, spec.longArg); ok {
				name = full
			}
			switch {
			case hasName(spec.long, name):
				r.set(name, "")
			case hasName(spec.longArg, name):
				if !hasVal {
					if i+1 >= len(args) {
						r.bad = v
						r.next = i
						return r
					}
					i++
					val = args[i].Value
				}
				r.set(name, val)
			default:
				r.bad = v
				r.next = i
				return r
			}
			i++
			continue
		}
		if len(v) > 1 && (v[0] == '-' || spec.plusFlags && v[0] == '+') {
			j := 1
			for j < len(v) {
				c := v[j : j+1]
				switch {
				case strings.Contains(spec.short, c):
					r.set(c, "")
					j++
				case strings.Contains(spec.shortArg, c):
					val := v[j+1:]
					if val == "" {
						if i+1 >= len(args) {
							r.bad = v
							r.next = i
							return r
						}
						i++
						val = args[i].Value
					}
					r.set(c, val)
					j = len(v)
				default:
					r.bad = v
					r.next = i
					return r
				}
			}
			i++
			continue
		}
		if spec.permute {
			r.operands = append(r.operands, i)
			i++
			continue
		}
		break
	}
	if spec.permute {
		if len(r.operands) > 0 {
			r.next = r.operands[0]
		} else {
			r.next = len(args)
		}
		return r
	}
	r.next = i
	return r
}

// unwrapTo dispatches args[inner:] as the wrapped command.
func (w *walker) unwrapTo(label string, args []Arg, inner int, mod func(c *walker)) {
	if inner >= len(args) {
		w.emit(args, KindCommand)
		return
	}
	c := w.deeper(label)
	if c == nil {
		return
	}
	if mod != nil {
		mod(c)
	}
	c.command(args[inner:])
}

func (w *walker) envWrapper(args []Arg) {
	var env []string
	cwd := ""
	split := ""
	hasSplit := false
	i := 1
loop:
	for i < len(args) {
		a := args[i]
		v := a.Value
		if !a.Known {
			w.cannotUnwrap("env", args, "an argument is not a literal")
			return
		}
		if len(env) > 0 && !isEnvAssignment(v) {
			break // options end at the first assignment
		}
		next := func() (string, bool) {
			if i+1 >= len(args) {
				return "", false
			}
			i++
			return args[i].Value, true
		}
		switch {
		case v == "--":
			i++
			break loop
		case v == "-" || v == "-i" || v == "--ignore-environment" || v == "-0" || v == "--null" ||
			v == "-v" || v == "--debug" || v == "-iv" || v == "-vi":
		case v == "-u" || v == "--unset":
			if _, ok := next(); !ok {
				w.cannotUnwrap("env", args, "-u needs a name")
				return
			}
		case v == "-C" || v == "--chdir":
			d, ok := next()
			if !ok {
				w.cannotUnwrap("env", args, "-C needs a directory")
				return
			}
			cwd = d
		case v == "-S" || v == "--split-string":
			s, ok := next()
			if !ok {
				w.cannotUnwrap("env", args, "-S needs a string")
				return
			}
			split, hasSplit = s, true
		case strings.HasPrefix(v, "--unset="):
		case strings.HasPrefix(v, "--chdir="):
			cwd = v[len("--chdir="):]
		case strings.HasPrefix(v, "--split-string="):
			split, hasSplit = v[len("--split-string="):], true
		case strings.HasPrefix(v, "--block-signal") || strings.HasPrefix(v, "--default-signal") ||
			strings.HasPrefix(v, "--ignore-signal") || v == "--list-signal-handling":
		case strings.HasPrefix(v, "-u") && len(v) > 2:
		case strings.HasPrefix(v, "-C") && len(v) > 2:
			cwd = v[2:]
		case strings.HasPrefix(v, "-S") && len(v) > 2:
			split, hasSplit = v[2:], true
		case strings.HasPrefix(v, "-") && len(v) > 1:
			w.cannotUnwrap("env", args, "unknown option "+v)
			return
		case isEnvAssignment(v):
			name, val, _ := strings.Cut(v, "=")
			w.checkEnv(name, val, a.Static)
			env = append(env, v)
		default:
			break loop
		}
		i++
	}
	if hasSplit {
		// env -S splits its string into words: read it as a command line followed by the rest.
		var b strings.Builder
		b.WriteString(split)
		for _, a := range args[i:] {
			b.WriteByte(' ')
			b.WriteString(quote(a.Value))
		}
		if c := w.deeper("env"); c != nil {
			c.env = append(c.env[:len(c.env):len(c.env)], env...)
			if cwd != "" {
				c.chdir(cwd)
			}
			c.inlineScript("env -S", b.String(), nil, false, true)
		}
		return
	}
	w.unwrapTo("env", args, i, func(c *walker) {
		c.env = append(c.env[:len(c.env):len(c.env)], env...)
		if cwd != "" {
			c.chdir(cwd)
		}
	})
}

func joinCwd(cwd, dir string) string {
	if dir == "" {
		return cwd
	}
	if path.IsAbs(dir) {
		return path.Clean(dir)
	}
	if cwd == "" {
		return ""
	}
	return path.Join(cwd, dir)
}

// quote quotes s for a POSIX shell.
func quote(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '-' || c == '.' || c == '/' || c == '=' || c == ':' || c == ',' || c == '+' || c == '@' ||
			c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

var sudoSpec = optSpec{
	short:    "AbBEeHiKklNnPSsVv",
	shortArg: "CDghpRrtTUu",
	long: []string{"askpass", "background", "bell", "edit", "help", "set-home", "login", "remove-timestamp",
		"reset-timestamp", "list", "non-interactive", "preserve-groups", "stdin", "shell", "version", "validate",
		"preserve-env"},
	longArg: []string{"close-from", "chdir", "group", "host", "prompt", "chroot", "role", "type", "command-timeout",
		"other-user", "user"},
}

var doasSpec = optSpec{short: "nsL", shortArg: "uC"}

var pkexecSpec = optSpec{long: []string{"disable-internal-agent", "keep-cwd", "help", "version"}, longArg: []string{"user"}}

var run0Spec = optSpec{
	short:    "vhV",
	shortArg: "ugD",
	long:     []string{"no-ask-password", "help", "version", "pty", "pipe", "empty"},
	longArg: []string{"user", "group", "chdir", "setenv", "property", "description", "slice", "unit", "nice",
		"machine", "background", "area"},
}

// privileged unwraps sudo-like wrappers. The wrapper itself stays a segment: running something
// as another user must be allowed in its own right.
func (w *walker) privileged(base string, args []Arg) {
	var spec *optSpec
	switch base {
	case "sudo":
		spec = &sudoSpec
	case "doas":
		spec = &doasSpec
	case "pkexec":
		spec = &pkexecSpec
	default:
		spec = &run0Spec
	}
	r := spec.parse(args, 1)
	if r.bad != "" {
		w.cannotUnwrap(base, args, "unknown option "+r.bad)
		return
	}
	if base == "sudo" {
		if _, ok := r.flags["e"]; ok {
			w.sudoedit(args, r.next)
			return
		}
		if _, ok := r.flags["edit"]; ok {
			w.sudoedit(args, r.next)
			return
		}
	}
	if r.next >= len(args) {
		w.emit(args, KindCommand)
		_, sh := r.flags["s"]
		_, login := r.flags["i"]
		_, sh2 := r.flags["shell"]
		_, login2 := r.flags["login"]
		if base == "sudo" && (sh || login || sh2 || login2) || base == "doas" && sh {
			// A shell with no command reads its commands from the standard input.
			w.stdinScript(base+" -s", args, len(args))
		}
		return
	}
	if base == "doas" {
		if _, ok := r.flags["C"]; ok {
			w.emit(args, KindCommand)
			return
		}
	}
	w.emit(args[:r.next:r.next], KindCommand)
	dir := r.flags["D"]
	if d, ok := r.flags["chdir"]; ok {
		dir = d
	}
	// sudo VAR=value cmd: assignments before the command go to its environment.
	inner := r.next
	var env []string
	for base == "sudo" && inner < len(args) && isEnvAssignment(args[inner].Value) {
		name, val, _ := strings.Cut(args[inner].Value, "=")
		w.checkEnv(name, val, args[inner].Known)
		env = append(env, args[inner].Value)
		inner++
	}
	_, sh := r.flags["s"]
	_, login := r.flags["i"]
	_, sh2 := r.flags["shell"]
	_, login2 := r.flags["login"]
	if base == "sudo" && (sh || login || sh2 || login2) && inner < len(args) {
		// sudo -s CMD runs the user's shell with -c and the words joined: the floor reads
		// them as that shell would.
		text, _ := joinValues(args[inner:])
		w.floorScript(base+" -s", text)
	}
	w.unwrapTo(base, args, inner, func(c *walker) {
		c.env = append(c.env[:len(c.env):len(c.env)], env...)
		if dir != "" {
			c.chdir(dir)
		}
	})
}

// isEnvAssignment reports NAME=value as env(1) and sudo read it: any name without '=' (even
// BASH_FUNC_f%%, which bash imports as a function).
func isEnvAssignment(s string) bool {
	i := strings.IndexByte(s, '=')
	return i > 0 && !strings.HasPrefix(s, "-")
}

// sudoedit edits files as root: a write of each.
func (w *walker) sudoedit(args []Arg, from int) {
	c := *w
	for _, a := range args[from:] {
		c.addWrite(Write{Target: a.Value, Known: a.Known, Pattern: a.Pattern, Op: "sudoedit"})
	}
	c.emit(args, KindCommand)
}

var suSpec = optSpec{
	short:    "lmpfPh",
	shortArg: "cgGsuw",
	long:     []string{"login", "preserve-environment", "pty", "help", "version", "fast"},
	longArg:  []string{"command", "session-command", "group", "supp-group", "shell", "whitelist-environment", "user"},
	permute:  true,
}

func (w *walker) suWrapper(base string, args []Arg) {
	// "su -" is --login.
	clean := args
	for i, a := range args {
		if a.Value == "-" && i > 0 {
			clean = append(append([]Arg(nil), args[:i]...), lit("--login"))
			clean = append(clean, args[i+1:]...)
			break
		}
	}
	r := suSpec.parse(clean, 1)
	if r.bad != "" {
		w.cannotUnwrap(base, args, "unknown option "+r.bad)
		return
	}
	if base == "runuser" {
		if _, ok := r.flags["u"]; ok && len(r.operands) > 0 {
			// runuser -u user -- cmd args: plain argv.
			w.emit(clean[:r.operands[0]:r.operands[0]], KindCommand)
			w.unwrapTo(base, clean, r.operands[0], nil)
			return
		}
	}
	script, ok := r.flags["c"]
	if !ok {
		script, ok = r.flags["command"]
	}
	if !ok {
		script, ok = r.flags["session-command"]
	}
	w.emit(args, KindCommand)
	if !ok {
		// A shell with no command reads its commands from the standard input.
		w.stdinScript(base, args, len(args))
		return
	}
	if c := w.deeper(base + " -c"); c != nil {
		c.hide(base + " -c")
		c.inlineScript(base+" -c", script, nil, true, allStatic(args))
	}
}

func allStatic(args []Arg) bool {
	for _, a := range args {
		if !a.Static {
			return false
		}
	}
	return true
}

var chrootSpec = optSpec{long: []string{"skip-chdir", "help", "version"}, longArg: []string{"userspec", "groups"}}

func (w *walker) chroot(args []Arg) {
	r := chrootSpec.parse(args, 1)
	if r.bad != "" {
		w.cannotUnwrap("chroot", args, "unknown option "+r.bad)
		return
	}
	if r.next+1 >= len(args) {
		w.emit(args, KindCommand)
		return
	}
	inner := r.next + 1
	w.emit(args[:inner:inner], KindCommand)
	w.unwrapTo("chroot", args, inner, func(c *walker) { c.cwd, c.cwdRel = "/", "" })
}

var wrapperSpecs = map[string]*optSpec{
	"nice":    {shortArg: "n", longArg: []string{"adjustment"}, long: []string{"help", "version"}},
	"nohup":   {long: []string{"help", "version"}},
	"timeout": {short: "v", shortArg: "ks", long: []string{"preserve-status", "foreground", "verbose", "help", "version"}, longArg: []string{"kill-after", "signal"}},
	"time":    {short: "pvaq", shortArg: "fo", long: []string{"portability", "verbose", "append", "quiet", "help", "version"}, longArg: []string{"format", "output"}},
	"stdbuf":  {shortArg: "ioe", longArg: []string{"input", "output", "error"}, long: []string{"help", "version"}},
	"ionice":  {short: "tPu", shortArg: "cnp", longArg: []string{"class", "classdata", "pid", "pgid", "uid"}, long: []string{"ignore", "help", "version"}},
	"taskset": {short: "acpV", long: []string{"all-tasks", "cpu-list", "pid", "help", "version"}},
	"chrt":    {short: "abdefimoprRvV", shortArg: "TPD", long: []string{"all-tasks", "batch", "deadline", "fifo", "idle", "max", "other", "pid", "rr", "reset-on-fork", "verbose", "help", "version"}, longArg: []string{"sched-runtime", "sched-period", "sched-deadline"}},
	"setsid":  {short: "cfw", long: []string{"ctty", "fork", "wait", "help", "version"}},
}

func (w *walker) simpleWrapper(base string, args []Arg) {
	spec := wrapperSpecs[base]
	// nice -5 / nice --10: an adjustment written as a number.
	from := 1
	if base == "nice" && len(args) > 1 && len(args[1].Value) > 1 && args[1].Value[0] == '-' && isDigits(strings.TrimLeft(args[1].Value, "-")) {
		from = 2
	}
	r := spec.parse(args, from)
	if r.bad != "" {
		w.cannotUnwrap(base, args, "unknown option "+r.bad)
		return
	}
	inner := r.next
	switch base {
	case "setsid":
		_, f := r.flags["f"]
		if _, fork := r.flags["fork"]; f || fork {
			w.spawned() // setsid -f runs the command in the background
		}
	case "timeout":
		inner++ // the duration
	case "taskset":
		if _, ok := r.flags["p"]; ok {
			w.emit(args, KindCommand)
			return
		}
		inner++ // the mask or cpu list
	case "chrt":
		if _, ok := r.flags["p"]; ok {
			w.emit(args, KindCommand)
			return
		}
		if _, ok := r.flags["m"]; ok {
			w.emit(args, KindCommand)
			return
		}
		inner++ // the priority
	case "ionice":
		if _, ok := r.flags["p"]; ok {
			w.emit(args, KindCommand)
			return
		}
		if _, ok := r.flags["P"]; ok {
			w.emit(args, KindCommand)
			return
		}
	case "time":
		out := r.flags["o"]
		if o, ok := r.flags["output"]; ok {
			out = o
		}
		if out != "" {
			c := *w
			c.addWrite(Write{Target: out, Known: true, Op: "time -o"})
			c.unwrapTo(base, args, inner, nil)
			return
		}
	}
	w.unwrapTo(base, args, inner, nil)
}

var xargsSpec = optSpec{
	short:    "0rtpxo",
	shortArg: "adEILnPs",
	long:     []string{"null", "no-run-if-empty", "verbose", "interactive", "exit", "open-tty", "help", "version", "show-limits"},
	longArg:  []string{"arg-file", "delimiter", "eof", "replace", "max-lines", "max-args", "max-procs", "max-chars", "process-slot-var"},
}

// xargs runs its command with words read from stdin appended (or substituted for -I).
func (w *walker) xargs(args []Arg) {
	// -e[eof], -i[repl] and -l[n] take optional attached arguments.
	fixed := args
	var repl string
	hasRepl := false
	for i := 1; i < len(args); i++ {
		v := args[i].Value
		if !strings.HasPrefix(v, "-") || v == "--" {
			break
		}
		if strings.HasPrefix(v, "-i") || strings.HasPrefix(v, "-e") || strings.HasPrefix(v, "-l") ||
			strings.HasPrefix(v, "--replace") {
			if strings.HasPrefix(v, "-i") || strings.HasPrefix(v, "--replace") {
				hasRepl = true
				repl = "{}"
				if rest, ok := strings.CutPrefix(v, "-i"); ok && rest != "" {
					repl = rest
				}
				if rest, ok := strings.CutPrefix(v, "--replace="); ok {
					repl = rest
				}
			}
			if fixed == nil || &fixed[0] == &args[0] {
				fixed = append([]Arg(nil), args...)
			}
			fixed[i] = lit("-r")
		}
	}
	r := xargsSpec.parse(fixed, 1)
	if r.bad != "" {
		w.cannotUnwrap("xargs", args, "unknown option "+r.bad)
		return
	}
	if v, ok := r.flags["I"]; ok {
		hasRepl, repl = true, v
	}
	file, fromFile := r.flags["a"]
	if v, ok := r.flags["arg-file"]; ok {
		file, fromFile = v, true
	}
	if fromFile {
		// The words come from that file: it is read.
		known := true
		for _, a := range args[1:r.next] {
			known = known && a.Known
		}
		w.reads = append(w.reads[:len(w.reads):len(w.reads)], Read{Target: file, Known: known, Op: "xargs -a"})
	}
	procs, ok := r.flags["P"]
	if p, ok2 := r.flags["max-procs"]; ok2 {
		procs, ok = p, true
	}
	if ok && strings.TrimLeft(procs, "0") == "" && !fromFile && w.stdinEndless() {
		w.forkBomb("xargs -P 0 starts commands without limit from an input that never ends")
	}
	inner := args[r.next:]
	if len(inner) == 0 {
		inner = []Arg{lit("echo")}
	}
	var words []string
	known := false
	var text string
	if fromFile {
		// xargs -a FILE: the words come from FILE, which the line may provide (-a <(…)).
		for k := 1; k < r.next && k < len(args); k++ {
			v := args[k].Value
			var fa Arg
			switch {
			case (v == "-a" || v == "--arg-file") && k+1 < len(args):
				fa = args[k+1]
			case strings.HasPrefix(v, "--arg-file="):
				fa = Arg{Value: v[len("--arg-file="):], Known: args[k].Known, proc: args[k].proc}
			case strings.HasPrefix(v, "-a") && len(v) > 2:
				fa = Arg{Value: v[2:], Known: args[k].Known, proc: args[k].proc}
			default:
				continue
			}
			if t, ok, _ := w.fileText(fa); ok {
				text, known = t, true
			}
		}
	} else if t, kind := w.stdinText(); kind == stdinKnown {
		text, known = t, true
	}
	if known {
		switch {
		case hasRepl:
			words = strings.Split(strings.TrimRight(text, "\n"), "\n")
		default:
			_, nul := r.flags["0"]
			if _, ok := r.flags["null"]; ok {
				nul = true
			}
			if nul {
				words = strings.Split(strings.TrimRight(text, "\x00"), "\x00")
			} else if d, ok := r.flags["d"]; ok && d != "" {
				words = strings.Split(text, d[:1])
			} else {
				words = xargsWords(text)
			}
		}
	}
	if !known {
		// The arguments xargs appends are unknown: the command is judged on what is written,
		// and it is never a safe bin. The floor also sees it with the words the upstream
		// command may print (echo /* | xargs rm -rf).
		if !fromFile {
			for _, words := range w.pipeGuesses() {
				argv := append(append([]Arg(nil), inner...), words...)
				w.floorOnly("xargs").unwrapTo("xargs", argv, 0, nil)
			}
		}
		w.unwrapTo("xargs", inner, 0, func(c *walker) { c.moreArgs = true })
		return
	}
	if len(words) > maxBraces {
		words = words[:maxBraces]
	}
	if hasRepl && repl != "" {
		for i, line := range words {
			argv := make([]Arg, len(inner))
			for j, a := range inner {
				argv[j] = a
				if strings.Contains(a.Value, repl) {
					v := strings.ReplaceAll(a.Value, repl, line)
					argv[j] = Arg{Value: v, Raw: v, Known: true, Prefix: len(v)}
				}
			}
			if i == 0 {
				w.unwrapTo("xargs", argv, 0, nil)
			} else if c := w.floorOnly("xargs"); c != nil {
				c.unwrapTo("xargs", argv, 0, nil)
			}
			if i >= maxLoopItems {
				break
			}
		}
		if len(words) == 0 {
			w.unwrapTo("xargs", inner, 0, nil)
		}
		return
	}
	argv := append([]Arg(nil), inner...)
	for _, wd := range words {
		argv = append(argv, Arg{Value: wd, Raw: wd, Known: true, Prefix: len(wd)})
	}
	w.unwrapTo("xargs", argv, 0, nil)
}

// xargsWords splits xargs input: blanks separate words, quotes and backslashes group.
func xargsWords(s string) []string {
	var out []string
	var cur []byte
	in := false
	var q byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case q != 0:
			if c == q {
				q = 0
			} else {
				cur = append(cur, c)
			}
		case c == '\'' || c == '"':
			q = c
			in = true
		case c == '\\' && i+1 < len(s):
			i++
			cur = append(cur, s[i])
			in = true
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				out = append(out, string(cur))
				cur = cur[:0]
				in = false
			}
		default:
			cur = append(cur, c)
			in = true
		}
	}
	if in {
		out = append(out, string(cur))
	}
	return out
}

// packageRunner unwraps npx and its cousins to the package binary they run.
func (w *walker) packageRunner(base string, args []Arg) {
	if base == "npm" || base == "pnpm" || base == "yarn" || base == "npx" {
		w.npmConfig(base, args)
		w.npmDirs(base, args)
		sub, at := npmSubcommand(args)
		if base == "npm" && sub == "explore" && at+1 < len(args) {
			// npm explore PKG -- CMD: CMD runs in a shell in the package's directory (npm joins
			// the words; the floor also reads them as the argv they were written as).
			w.emit(args, KindCommand)
			rest := args[at+2:]
			if len(rest) > 0 && rest[0].Value == "--" {
				rest = rest[1:]
			}
			if len(rest) > 0 {
				text, known := joinValues(rest)
				w.hiddenScript("npm explore", text, known)
				w.floorOnly("npm explore").hiddenArgv("npm explore", rest)
			}
			return
		}
		switch {
		case base == "npm" && (sub == "init" || sub == "create" || sub == "innit"),
			(base == "pnpm" || base == "yarn") && sub == "create":
			// npm init PKG runs the registry's create-PKG.
			if pkg, ok := npmInitPackage(args[at+1:]); ok {
				w.emit(args, KindCommand)
				w.hiddenArgv(base+" "+sub, []Arg{lit(createBin(pkg))})
				return
			}
		case sub == "config" || sub == "c" || sub == "set" || sub == "get" && base == "pnpm":
			w.npmConfigCommand(base, sub, args[at+1:])
		}
	}
	label := base
	from := 1
	local := ""
	switch base {
	case "npx", "pnpx", "bunx":
		local = "node_modules/.bin"
	case "uvx":
		local = ".venv/bin"
	case "pnpm", "yarn", "npm", "bun", "uv", "pipx":
		if len(args) < 2 {
			w.emit(args, KindCommand)
			return
		}
		sub := args[1].Value
		switch {
		case (base == "pnpm" || base == "yarn") && (sub == "dlx" || sub == "exec"),
			base == "npm" && (sub == "exec" || sub == "x"),
			base == "bun" && sub == "x":
			local = "node_modules/.bin"
		case base == "uv" && sub == "run":
			local = ".venv/bin"
		case base == "uv" && sub == "tool" && len(args) > 2 && args[2].Value == "run":
			local = ".venv/bin"
			from = 2
		case base == "pipx" && sub == "run":
		case base == "bun" && (sub == "-e" || sub == "--eval" || sub == "-p" || sub == "--print"):
			w.interpreter("javascript", args)
			return
		default:
			w.emit(args, KindCommand)
			return
		}
		label = base + " " + sub
		from++
	}
	i := from
	pkgGiven := false
	for i < len(args) {
		a := args[i]
		v := a.Value
		if !a.Known {
			w.cannotUnwrap(label, args, "an argument is not a literal")
			return
		}
		if v == "--" {
			i++
			break
		}
		if !strings.HasPrefix(v, "-") {
			break
		}
		name, _, hasVal := strings.Cut(v, "=")
		switch name {
		case "-y", "--yes", "--no", "-q", "--quiet", "--silent", "-s", "--ignore-existing", "--prefer-offline",
			"--prefer-online", "--offline", "--no-install", "--bun", "--isolated", "-v", "--verbose",
			"--no-project", "--frozen", "--locked", "--no-sync", "--all-extras", "--no-cache", "--refresh":
		case "-p", "--package", "--from", "--with", "--spec", "--python", "--project", "--directory",
			"--extra", "--group", "--with-requirements", "--env-file", "--index-url", "--index", "--pip-args":
			if name == "-p" || name == "--package" || name == "--spec" {
				pkgGiven = true
			}
			if name == "-p" && strings.HasPrefix(base, "uv") {
				pkgGiven = false
			}
			if !hasVal {
				i++
			}
		case "-c", "--call", "--shell-mode":
			if !hasVal {
				i++
			}
			if i >= len(args) {
				w.cannotUnwrap(label, args, "-c needs a command")
				return
			}
			_, script, _ := strings.Cut(v, "=")
			if !hasVal {
				script = args[i].Value
			}
			if c := w.deeper(label + " -c"); c != nil {
				c.inlineScript(label+" -c", script, nil, false, allStatic(args))
			}
			return
		default:
			w.cannotUnwrap(label, args, "unknown option "+v)
			return
		}
		i++
	}
	if i >= len(args) {
		w.emit(args, KindCommand)
		return
	}
	inner := append([]Arg(nil), args[i:]...)
	if !pkgGiven {
		inner[0] = lit(packageBin(inner[0].Value))
		inner[0].Static = args[i].Static
	}
	w.unwrapTo(label, inner, 0, func(c *walker) { c.localBins = local })
}

// packageBin turns a package spec ("@scope/eslint@8") into the binary it provides ("eslint").
func packageBin(spec string) string {
	s := spec
	if strings.HasPrefix(s, "@") {
		if i := strings.IndexByte(s, '/'); i >= 0 {
			s = s[i+1:]
		}
	}
	if i := strings.IndexAny(s, "@=<>~"); i > 0 {
		s = s[:i]
	}
	if s == "" {
		return spec
	}
	return s
}

var watchSpec = optSpec{
	short:    "bcCdegprtwx",
	shortArg: "nq",
	long: []string{"beep", "color", "no-color", "differences", "errexit", "chgexit", "precise", "no-rerun",
		"no-title", "no-wrap", "exec", "help", "version"},
	longArg: []string{"interval", "equexit", "shotsdir"},
}

func (w *walker) watch(args []Arg) {
	fixed := args
	for i := 1; i < len(args); i++ {
		if strings.HasPrefix(args[i].Value, "--differences=") {
			fixed = append([]Arg(nil), args...)
			fixed[i] = lit("--differences")
		}
	}
	r := watchSpec.parse(fixed, 1)
	if r.bad != "" {
		w.cannotUnwrap("watch", args, "unknown option "+r.bad)
		return
	}
	if r.next >= len(args) {
		w.emit(args, KindCommand)
		return
	}
	_, x := r.flags["x"]
	if _, ok := r.flags["exec"]; ok {
		x = true
	}
	if x {
		w.unwrapTo("watch", args, r.next, nil)
		return
	}
	w.shellString("watch", args, r.next)
}

// shellString runs args[from:] joined by spaces through sh -c (watch, ssh, …).
func (w *walker) shellString(label string, args []Arg, from int) {
	var b strings.Builder
	static := true
	for i, a := range args[from:] {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(a.Value)
		static = static && a.Static
	}
	if c := w.deeper(label); c != nil {
		c.inlineScript(label, b.String(), nil, false, static)
	}
}

var flockSpec = optSpec{
	short:    "sexunoF",
	shortArg: "wEc",
	long:     []string{"shared", "exclusive", "unlock", "nonblock", "close", "no-fork", "verbose", "help", "version"},
	longArg:  []string{"timeout", "conflict-exit-code", "command"},
	permute:  false,
}

func (w *walker) flock(args []Arg) {
	r := flockSpec.parse(args, 1)
	if r.bad != "" {
		w.cannotUnwrap("flock", args, "unknown option "+r.bad)
		return
	}
	cmd, ok := r.flags["c"]
	if !ok {
		cmd, ok = r.flags["command"]
	}
	if !ok && r.next+1 < len(args) {
		// flock FILE -c CMD: the option after the file.
		if v := args[r.next+1].Value; (v == "-c" || v == "--command") && r.next+2 < len(args) {
			cmd, ok = args[r.next+2].Value, true
		}
	}
	if ok {
		if c := w.deeper("flock -c"); c != nil {
			c.inlineScript("flock -c", cmd, nil, false, allStatic(args))
		}
		return
	}
	w.unwrapTo("flock", args, r.next+1, nil)
}

var scriptSpec = optSpec{
	short:    "aefqh",
	shortArg: "cEmoTIOBt",
	long:     []string{"append", "return", "flush", "force", "quiet", "help", "version"},
	longArg:  []string{"command", "echo", "logging-format", "output-limit", "log-timing", "log-in", "log-out", "log-io", "timing"},
}

func (w *walker) scriptCmd(args []Arg) {
	r := scriptSpec.parse(args, 1)
	if r.bad != "" {
		w.cannotUnwrap("script", args, "unknown option "+r.bad)
		return
	}
	c := *w
	out := "typescript"
	if r.next < len(args) {
		out = args[r.next].Value
	}
	c.addWrite(Write{Target: out, Known: true, Op: "script"})
	c.emit(args, KindCommand)
	cmd, ok := r.flags["c"]
	if !ok {
		cmd, ok = r.flags["command"]
	}
	if ok {
		if d := w.deeper("script -c"); d != nil {
			d.hide("script -c")
			d.inlineScript("script -c", cmd, nil, true, allStatic(args))
		}
	}
}

// stdinScript runs the command's standard input as a shell script (at, batch, sh).
func (w *walker) stdinScript(label string, args []Arg, posFrom int) bool {
	text, kind := w.stdinText()
	switch kind {
	case stdinKnown:
		var pos []string
		posKnown := true
		pos = append(pos, args[0].Value)
		if posFrom < len(args) {
			for _, a := range args[posFrom:] {
				pos = append(pos, a.Value)
				posKnown = posKnown && a.Known
			}
		}
		if c := w.deeper(label + " (stdin)"); c != nil {
			c.stdin = stdinNone()
			if !posKnown {
				pos = nil
			}
			c.inlineScript(label+" (stdin)", text, pos, true, true)
		}
		return true
	case stdinPipe:
		w.problem("%s runs a script piped in from a command whose output is unknown", label)
		w.guessScripts(label)
		return true
	}
	return false
}

// shellWrapper handles sh, bash and friends.
func (w *walker) shellWrapper(base string, args []Arg) {
	cmdMode, stdinMode := false, false
	i := 1
	for i < len(args) {
		a := args[i]
		v := a.Value
		if !a.Known {
			if cmdMode {
				break // the script
			}
			w.cannotUnwrap(base, args, "an option is not a literal")
			return
		}
		if v == "--" || v == "-" {
			i++
			break
		}
		if strings.HasPrefix(v, "--") {
			switch v {
			case "--rcfile", "--init-file", "--command":
				if v == "--command" {
					cmdMode = true
					i++
					continue
				}
				w.problem("%s %s runs a startup file", base, v)
				i += 2
			default:
				i++
			}
			continue
		}
		if len(v) > 1 && (v[0] == '-' || v[0] == '+') {
			extra := 0
			for j := 1; j < len(v); j++ {
				switch v[j] {
				case 'c':
					cmdMode = true
				case 's':
					stdinMode = true
				case 'i':
					if v[0] == '-' {
						w.problem("%s -i runs the interactive startup files", base)
					}
				case 'o', 'O':
					extra++
				}
			}
			i += 1 + extra
			continue
		}
		break
	}
	if cmdMode {
		if i >= len(args) {
			w.problem("%s -c without a command", base)
			w.emit(args, KindCommand)
			return
		}
		script := args[i]
		var pos []string
		posKnown := true
		if i+1 < len(args) {
			pos = make([]string, 0, len(args)-i-1)
			for _, a := range args[i+1:] {
				pos = append(pos, a.Value)
				posKnown = posKnown && a.Known
			}
		} else {
			pos = shellPos(base)
		}
		if !posKnown {
			pos = nil
		}
		label := shellLabel(base)
		if c := w.deeper(label); c != nil {
			c.inlineScript(label, script.Value, pos, true, script.Static)
		}
		return
	}
	if !stdinMode && i < len(args) && isStdinPath(args[i].Value) {
		stdinMode = true
		i++
	}
	if !stdinMode && i < len(args) {
		// A script file, or a process substitution whose output may be known.
		if args[i].proc != nil {
			out, ok := w.evalSub(args[i].proc.Stmts)
			if !ok {
				w.problem("%s runs a script from a process substitution whose output is unknown", base)
				w.emit(args, KindCommand)
				return
			}
			if c := w.deeper(base + " <(…)"); c != nil {
				c.inlineScript(base+" <(…)", out, nil, true, true)
			}
			return
		}
		pos := make([]string, 0, len(args)-i)
		for _, a := range args[i:] {
			pos = append(pos, a.Value)
		}
		w.runsWritten(base, args[i].Value, "", pos)
		w.emit(args, KindCommand)
		return
	}
	if w.stdinScript(base, args, i) {
		return
	}
	w.emit(args, KindCommand)
}

// Labels and $0 of the common shells, shared to save allocations (never modified).
var (
	posSh   = []string{"sh"}
	posBash = []string{"bash"}
	posZsh  = []string{"zsh"}
)

func shellLabel(base string) string {
	switch base {
	case "sh":
		return "sh -c"
	case "bash":
		return "bash -c"
	case "zsh":
		return "zsh -c"
	case "dash":
		return "dash -c"
	}
	return base + " -c"
}

func shellPos(base string) []string {
	switch base {
	case "sh":
		return posSh
	case "bash":
		return posBash
	case "zsh":
		return posZsh
	}
	return []string{base}
}

// isStdinPath names the files that are the standard input.
func isStdinPath(p string) bool {
	switch p {
	case "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0":
		return true
	}
	return false
}

// inlineScript parses and walks a script handed to a shell. fresh starts a new shell (no
// variables or functions carried over); static says whether the script text was a literal.
func (w *walker) inlineScript(label, script string, pos []string, fresh, static bool) {
	if !w.step() {
		return
	}
	if !static {
		w.problem("the script run by %s is not a literal", label)
	}
	if looksWindows(script) {
		// The floor reads a nested line the Windows way too, as it does the top-level one.
		w.floorOnly(label).windowsScript(script, label)
	}
	cmds, fast := w.sh.fastSplit(script)
	var f *syntax.File
	if !fast {
		var err error
		f, err = parse(script)
		if err != nil {
			w.problem("the script run by %s does not parse: %v", label, err)
			c := w.floorOnly(label)
			if rf := parseRecover(script); rf != nil {
				c.walkStmts(rf.Stmts)
			}
			return
		}
	}
	if fresh {
		w.vars, w.varsOwned = nil, true
		w.funcs = nil
	}
	if pos != nil {
		w.pos, w.posKnown = pos, true
	} else if fresh {
		w.pos, w.posKnown = nil, false
	}
	w.pipe, w.pipePos = 0, 0
	w.writes, w.reads, w.network = nil, nil, nil
	if fast {
		w.walkFast(cmds)
		return
	}
	w.walkStmts(f.Stmts)
}

// script runs value as a command line found in an environment variable, git config, … .
func (w *walker) script(label, value string, pos []string, fresh bool) {
	if c := w.deeper(label); c != nil {
		c.inlineScript(label, value, pos, fresh, true)
	}
}

func isName(s string) bool {
	if s == "" {
		return false
	}
	for j := 0; j < len(s); j++ {
		c := s[j]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || j > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// exported records that the command line exports a variable to the programs it runs.
func (w *walker) exported(builtin, name string, args []Arg) {
	if builtin != "export" {
		exp := false
		for _, a := range args {
			if len(a.Value) > 1 && a.Value[0] == '-' && strings.ContainsRune(a.Value, 'x') && !strings.ContainsRune(a.Value, '=') {
				exp = true
			}
		}
		if !exp {
			return
		}
	}
	if w.sh.exported == nil {
		w.sh.exported = map[string]bool{}
	}
	w.sh.exported[name] = true
	if !HarmlessEnv(name) {
		w.an.EnvExported = true
		w.an.EnvExportedNames = append(w.an.EnvExportedNames, name)
	}
}

// Reconfigures reports an environment variable that can change what a tool does: one that
// changes what runs or names a program, and the variables through which the everyday tools
// read options, configuration files and defaults (GREP_OPTIONS, TAR_OPTIONS, LS_COLORS, …).
// Any other name (FOO, NODE_ENV, BUILD_ID) is read by the programs that look for it, not by
// the safe bins.
func Reconfigures(name string) bool {
	if HarmlessEnv(name) {
		return false
	}
	if dangerousEnv(name) || commandEnv(name) {
		return true
	}
	switch name {
	case "GZIP", "BZIP", "BZIP2", "TMPDIR", "TMP", "TEMP", "TIME_STYLE", "BLOCK_SIZE", "BLOCKSIZE", "QUOTING_STYLE",
		"TABSIZE", "SIMPLE_BACKUP_SUFFIX", "VERSION_CONTROL", "MORE", "LESS", "SHELL", "USER", "LOGNAME", "PWD",
		"OLDPWD", "CDPATH", "MAIL", "MAILPATH", "TERMINFO", "TERMCAP", "SORT_BUFFER_SIZE":
		return true
	}
	for _, p := range []string{"GREP_", "RIPGREP_", "RG_", "TAR_", "XZ_", "ZSTD_", "LS_", "JQ_", "DIFF", "FIND", "SED_", "AWK",
		"LESS", "GIT_", "XDG_", "LD_", "DYLD_", "PYTHON", "NODE_OPTIONS", "NPM_", "npm_"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	for _, p := range []string{"_OPTIONS", "_OPTS", "_OPT", "_FLAGS", "_CONFIG", "_CONF", "_CONFIG_PATH", "_CONFIG_FILE", "RC",
		"PATH", "_HOME", "_DIR", "_DIRS", "_COLORS", "_COLOR", "_SIZE"} {
		if strings.HasSuffix(name, p) {
			return true
		}
	}
	return false
}

// shared runs a script in the current shell (eval, trap, source): variables, functions and the
// working directory carry over both ways.
func (w *walker) shared(label, script string, static bool) {
	c := w.deeper(label)
	if c == nil {
		return
	}
	c.varsOwned = w.varsOwned
	c.inlineScript(label, script, nil, false, static)
	w.cwd, w.vars, w.funcs = c.cwd, c.vars, c.funcs
	w.varsOwned = c.varsOwned
}

// callFunc records a call to a function declared earlier, and replays its body for the floor
// with the call's arguments as positional parameters.
func (w *walker) callFunc(name string, body *syntax.Stmt, args []Arg) {
	s := w.emit(args, KindFunction)
	s.Benign = true
	for _, fr := range w.calls {
		if fr.name != name {
			continue
		}
		// A recursive call, seen as it runs (through eval, $FUNCNAME, another function):
		// unbounded when it runs in the background or the body started work in the
		// background on the way here.
		if w.async > fr.async || w.sh.bg > max(fr.bg, w.sh.waited) {
			w.forkBomb("function " + name + " calls itself in the background or after starting work in the background")
		} else {
			w.problem("the function %s calls itself (it may never end)", name)
		}
		return
	}
	if len(w.calls) >= 4 || w.sh.replays >= maxReplays {
		w.problem("functions called too many times or too deep to judge")
		return
	}
	w.sh.replays++
	pos := make([]string, len(args))
	known := true
	for i, a := range args {
		pos[i] = a.Value
		known = known && a.Known
	}
	c := w.sub()
	c.calls = append(w.calls[:len(w.calls):len(w.calls)], callFrame{name: name, async: w.async, bg: w.sh.bg})
	c.pos, c.posKnown = pos, known
	c.varsOwned = w.varsOwned
	stack := []string{name}
	for i := len(w.calls) - 1; i >= 0; i-- {
		stack = append(stack, w.calls[i].name)
	}
	old, hadOld := w.vars["FUNCNAME"]
	c.setVar("FUNCNAME", varVal{val: name, known: true, arr: stack})
	c.walkStmt(body)
	if hadOld {
		c.setVar("FUNCNAME", old)
	} else {
		c.unsetVar("FUNCNAME")
	}
	// A function runs in this shell: its assignments and cd carry over.
	w.vars, w.varsOwned, w.funcs, w.cwd, w.cwdRel = c.vars, c.varsOwned, c.funcs, c.cwd, c.cwdRel
}

// npm settings given as options whose value is a command (--script-shell=…, --shell, …).
// npm reads an unambiguous abbreviation of any setting, so a prefix of one of them counts.
func (w *walker) npmConfig(base string, args []Arg) {
	for i := 1; i < len(args); i++ {
		v := args[i].Value
		if v == "--" {
			return
		}
		if !strings.HasPrefix(v, "--") || len(v) < 4 {
			continue
		}
		name, val, hasVal := strings.Cut(v[2:], "=")
		key := ""
		for _, k := range []string{"script-shell", "shell", "editor", "browser", "git", "viewer", "node-options",
			"userconfig", "globalconfig", "onload-script"} {
			if k == name || len(name) >= 3 && strings.HasPrefix(k, name) && name != "save" && !strings.HasPrefix(name, "no-") {
				key = k
				break
			}
		}
		if key == "" {
			continue
		}
		switch key {
		case "script-shell", "shell", "editor", "browser", "git", "viewer":
			val, known, j := longValue(args, i, hasVal, val)
			i = j
			w.hiddenScript(base+" --"+key, val, known)
		default:
			w.problem("%s --%s changes what %s loads", base, key, base)
		}
	}
}

// hasAny reports an argument equal to one of opts.
func hasAny(args []Arg, opts ...string) bool {
	for _, a := range args {
		for _, o := range opts {
			if a.Value == o {
				return true
			}
		}
	}
	return false
}

// npmSubcommand finds npm's subcommand after its options: the word and its index.
func npmSubcommand(args []Arg) (string, int) {
	for i := 1; i < len(args); i++ {
		v := args[i].Value
		if v == "--" {
			return "", len(args)
		}
		if !strings.HasPrefix(v, "-") {
			return v, i
		}
		if name, _, hasVal := strings.Cut(v, "="); !hasVal && npmValueOption(name) {
			i++
		}
	}
	return "", len(args)
}

// npmValueOption names the npm options that take a value as the next word.
func npmValueOption(name string) bool {
	switch name {
	case "--prefix", "-C", "--dir", "--cwd", "-w", "--workspace", "--registry", "--scope", "--userconfig",
		"--globalconfig", "--cache", "--loglevel", "--filter", "-F", "--location", "-L", "--tag", "--otp":
		return true
	}
	return false
}

// npmInitPackage is the package npm init / npm create runs (npm init @scope, npm init x@1), or
// ok=false when it only writes a package.json.
func npmInitPackage(rest []Arg) (string, bool) {
	for i := 0; i < len(rest); i++ {
		v := rest[i].Value
		if v == "--" {
			if i+1 < len(rest) {
				return rest[i+1].Value, true
			}
			return "", false
		}
		if strings.HasPrefix(v, "-") {
			if name, _, hasVal := strings.Cut(v, "="); !hasVal && npmValueOption(name) {
				i++
			}
			continue
		}
		return v, true
	}
	return "", false
}

// createBin is the binary npm init runs for a package: create-x for x, @scope/create for
// @scope, @scope/create-x for @scope/x.
func createBin(pkg string) string {
	if i := strings.LastIndexByte(pkg, '@'); i > 0 {
		pkg = pkg[:i]
	}
	if scope, name, ok := strings.Cut(pkg, "/"); ok && strings.HasPrefix(scope, "@") {
		return "create-" + strings.TrimPrefix(name, "create-")
	}
	if strings.HasPrefix(pkg, "@") {
		return "create"
	}
	return "create-" + strings.TrimPrefix(pkg, "create-")
}

// npmConfigCommand looks at npm config set/delete/edit (and npm set): a setting stored for
// every later npm command. Setting one that names a program hands it to the floor too.
func (w *walker) npmConfigCommand(base, sub string, rest []Arg) {
	action := sub
	if sub == "config" || sub == "c" {
		action = ""
		for _, a := range rest {
			if !strings.HasPrefix(a.Value, "-") {
				action = a.Value
				break
			}
		}
		if action != "" {
			for i, a := range rest {
				if a.Value == action {
					rest = rest[i+1:]
					break
				}
			}
		}
	}
	switch action {
	case "get", "list", "ls", "":
		return
	}
	var ops []string
	for i := 0; i < len(rest); i++ {
		v := rest[i].Value
		if strings.HasPrefix(v, "-") {
			if name, _, hasVal := strings.Cut(v, "="); !hasVal && npmValueOption(name) {
				i++
			}
			continue
		}
		ops = append(ops, v)
	}
	if action == "edit" || action == "fix" || len(ops) == 0 {
		w.problem("%s config %s changes how later %s commands run", base, action, base)
		return
	}
	for i := 0; i < len(ops); i++ {
		key, val, hasVal := strings.Cut(ops[i], "=")
		if !hasVal && i+1 < len(ops) && action != "delete" && action != "rm" {
			i++
			val = ops[i]
		}
		if !harmlessNpmSetting(key) {
			w.problem("%s config %s %s changes how later %s commands run", base, action, key, base)
		}
		if npmCommandConfig(strings.ToLower(strings.ReplaceAll(key, "-", "_"))) || strings.EqualFold(key, "scriptShell") {
			w.floorScript(base+" config "+key, val)
		}
	}
}

// harmlessNpmSetting names the npm settings that only change defaults of saving, output and
// package.json authoring: the others change what runs, where packages come from, what is
// trusted or where credentials go.
func harmlessNpmSetting(key string) bool {
	switch strings.ToLower(strings.ReplaceAll(key, "_", "-")) {
	case "save-exact", "save-prefix", "save", "save-dev", "save-optional", "save-peer", "save-bundle", "init-author-name",
		"init-author-email", "init-author-url", "init-license", "init-version", "fund", "audit", "audit-level",
		"progress", "loglevel", "color", "update-notifier", "engine-strict", "legacy-peer-deps", "strict-peer-deps",
		"package-lock", "lockfile-version", "message", "git-tag-version", "tag-version-prefix", "preid",
		"fetch-retries", "fetch-retry-mintimeout", "fetch-retry-maxtimeout", "fetch-timeout", "maxsockets",
		"prefer-online", "prefer-offline", "heading", "unicode", "long", "parseable", "json", "searchlimit", "omit",
		"include", "install-strategy", "install-links", "sign-git-commit", "commit-hooks", "fund-message", "timing":
		return true
	}
	return false
}

// npmDirs looks at the options that make npm run another directory's package.json scripts.
func (w *walker) npmDirs(base string, args []Arg) {
	for i := 1; i < len(args); i++ {
		v := args[i].Value
		if v == "--" {
			return
		}
		name, val, hasVal := strings.Cut(v, "=")
		switch name {
		case "--prefix", "-C", "--dir", "--cwd":
			if !hasVal {
				if i+1 >= len(args) {
					return
				}
				i++
				val = args[i].Value
			}
			if !w.inProjectDir(joinCwd(w.cwd, val)) {
				w.problem("%s %s %s runs the scripts of a package outside the project", base, name, val)
			}
		}
	}
}
