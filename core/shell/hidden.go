package shell

import (
	"path"
	"strings"
)

// Commands hidden in arguments, option values and configuration: git -c alias.x='!…', find
// -exec, make SHELL=…, tar --to-command, rsync -e, vim -c '!…', tmux new-session 'cmd', …
// They are segments of their own, marked Hidden: the allowlist entry of the outer command
// never covers them, and the floor always sees them. Options are read the way each tool reads
// them (clustered short options, --opt=value and --opt value, unambiguous abbreviations of
// long options); what cannot be resolved makes the analysis not-ok.

// hiddenScript walks a command line hidden in another command (run through a shell).
func (w *walker) hiddenScript(label, text string, known bool) {
	c := w.deeper(label)
	if c == nil {
		return
	}
	c.hide(label)
	c.inlineScript(label, text, nil, true, known)
}

// hiddenArgv walks a program and its arguments hidden in another command.
func (w *walker) hiddenArgv(label string, args []Arg) {
	if len(args) == 0 {
		return
	}
	c := w.deeper(label)
	if c == nil {
		return
	}
	c.hide(label)
	c.command(args)
}

// hide marks the walker's commands as hidden in label.
func (w *walker) hide(label string) {
	w.hidden = true
	if w.origin == "" {
		w.origin = label
	}
	w.stdin = stdinNone()
	w.pipe, w.pipePos = 0, 0
	w.writes, w.reads, w.network = nil, nil, nil
	w.env = nil
}

// floorScript hands a command line to the floor only (it runs elsewhere, or later, or the
// analysis already asks for it).
func (w *walker) floorScript(label, text string) {
	c := w.floorOnly(label)
	if d := c.deeper(label); d != nil {
		d.hide(label)
		d.inlineScript(label, text, nil, true, true)
	}
}

// joinValues joins argument values with spaces, and reports whether all are known.
func joinValues(args []Arg) (string, bool) {
	var b strings.Builder
	known := true
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(a.Value)
		known = known && a.Known
	}
	return b.String(), known
}

// shortCluster walks a cluster of short options ("-avze"): for each letter it calls f with
// the letter and, for letters in withArg, the option's value (the rest of the cluster or the
// next argument). It returns the index of the last argument used.
func shortCluster(args []Arg, i int, withArg string, f func(c byte, val string, known bool)) int {
	v := args[i].Value
	for j := 1; j < len(v); j++ {
		c := v[j]
		if strings.IndexByte(withArg, c) >= 0 {
			if rest := v[j+1:]; rest != "" {
				f(c, rest, args[i].Known)
			} else if i+1 < len(args) {
				i++
				f(c, args[i].Value, args[i].Known)
			} else {
				f(c, "", false)
			}
			return i
		}
		f(c, "", true)
	}
	return i
}

// longValue reads --name=value or --name value for a long option that takes a value.
func longValue(args []Arg, i int, hasVal bool, val string) (string, bool, int) {
	if hasVal {
		return val, args[i].Known, i
	}
	if i+1 < len(args) {
		return args[i+1].Value, args[i+1].Known, i + 1
	}
	return "", false, i
}

// --- git ---

var gitGlobalLong = []string{"bare", "no-pager", "paginate", "literal-pathspecs", "glob-pathspecs",
	"noglob-pathspecs", "icase-pathspecs", "no-optional-locks", "no-replace-objects", "no-lazy-fetch",
	"no-advice", "html-path", "man-path", "info-path", "version", "help", "exec-path"}
var gitGlobalLongArg = []string{"git-dir", "work-tree", "namespace", "config-env", "super-prefix", "list-cmds", "attr-source"}

// git records git, and the commands hidden in its -c options, configuration changes and the
// subcommands that run commands.
func (w *walker) git(args []Arg) {
	w.emit(args, KindCommand)
	dir, dirKnown := w.cwd, w.cwd != ""
	if dir == "" && w.cwdRel != "" {
		dir, dirKnown = w.cwdRel, true // where the line started, wherever that is
	}
	gitDir, workTree := "", ""
	if v, ok := w.envPrefix("GIT_WORK_TREE"); ok {
		workTree = v
	}
	w.gitEnvConfig()
	i := 1
	for ; i < len(args); i++ {
		a := args[i]
		v := a.Value
		if !a.Known {
			w.problem("git with an option that is not known")
			return
		}
		if v == "-c" {
			if i+1 < len(args) {
				i++
				w.gitConfig("git -c", args[i].Value, args[i].Known)
				if k, val, _ := strings.Cut(args[i].Value, "="); strings.EqualFold(k, "core.worktree") {
					workTree = val
				}
			}
			continue
		}
		if strings.HasPrefix(v, "-c") && len(v) > 2 {
			w.gitConfig("git -c", v[2:], a.Known)
			if k, val, _ := strings.Cut(v[2:], "="); strings.EqualFold(k, "core.worktree") {
				workTree = val
			}
			continue
		}
		if v == "-C" || strings.HasPrefix(v, "-C") && len(v) > 2 {
			d := v[2:]
			if d == "" && i+1 < len(args) {
				i++
				d = args[i].Value
				dirKnown = dirKnown && args[i].Known
			}
			dir = joinCwd(dir, d)
			continue
		}
		if strings.HasPrefix(v, "--") {
			name, val, hasVal := strings.Cut(v[2:], "=")
			full, ok := resolveLong(name, gitGlobalLong, gitGlobalLongArg)
			if !ok {
				w.problem("git option %s is not known", v)
				return
			}
			if hasName(gitGlobalLongArg, full) && !hasVal && i+1 < len(args) {
				i++
				val = args[i].Value
			}
			switch full {
			case "exec-path":
				if hasVal {
					w.problem("git --exec-path runs git's programs from %s", val)
				}
			case "config-env":
				w.problem("git --config-env takes a configuration value from the environment")
			case "git-dir":
				gitDir = val
			case "work-tree":
				workTree = val
			}
			continue
		}
		if strings.HasPrefix(v, "-") && len(v) > 1 {
			if strings.Trim(v[1:], "pPhv") != "" {
				w.problem("git option %s is not known", v)
				return
			}
			continue
		}
		break
	}
	for _, a := range args[1:] {
		if strings.HasPrefix(a.Value, "ext::") {
			w.problem("an ext:: remote runs a command")
			argv := extArgv(a.Value[len("ext::"):])
			c := w.floorOnly("git ext::")
			if d := c.deeper("git ext::"); d != nil && len(argv) > 0 {
				d.hide("git ext::")
				d.dispatch(argv)
			}
		}
	}
	sub := ""
	if i < len(args) {
		sub = args[i].Value
	}
	// The repository git reads its configuration and hooks from (core.pager, core.fsmonitor,
	// hooks run by commit, …) must be the project's.
	switch sub {
	case "clone", "ls-remote", "version", "help", "":
	default:
		repo := dir
		if gitDir != "" {
			repo = joinCwd(dir, gitDir)
		}
		if !dirKnown || !w.inProjectDir(repo) {
			w.problem("git runs in %s, outside the project: that repository's configuration and hooks run", displayDir(repo))
		}
		if workTree != "" && !w.inProjectDir(joinCwd(dir, workTree)) {
			w.problem("git works on the tree %s, outside the project", workTree)
		}
	}
	if i >= len(args) {
		return
	}
	rest := args[i+1:]
	if workTree != "" {
		w.gitTreeDeletes(sub, rest, joinCwd(dir, workTree))
	}
	switch sub {
	case "submodule":
		for k := 0; k < len(rest); k++ {
			if rest[k].Value == "foreach" {
				cmd := rest[k+1:]
				for len(cmd) > 0 && (cmd[0].Value == "--recursive" || cmd[0].Value == "-q" || cmd[0].Value == "--quiet") {
					cmd = cmd[1:]
				}
				text, known := joinValues(cmd)
				w.hiddenScript("git submodule foreach", text, known)
				return
			}
		}
	case "rebase":
		w.gitOptionCommands("git rebase", rest, "xsXC", map[string]string{"exec": "script"},
			[]string{"abort", "apply", "autosquash", "autostash", "committer-date-is-author-date", "continue",
				"edit-todo", "empty", "exec", "force-rebase", "fork-point", "gpg-sign", "ignore-whitespace",
				"interactive", "keep-base", "merge", "no-ff", "no-stat", "no-verify", "onto", "quiet", "quit",
				"reapply-cherry-picks", "rebase-merges", "rerere-autoupdate", "reschedule-failed-exec",
				"reset-author-date", "root", "show-current-patch", "signoff", "skip", "strategy",
				"strategy-option", "update-refs", "verbose", "whitespace", "stat", "no-autosquash",
				"no-autostash", "no-rebase-merges", "no-update-refs", "no-reschedule-failed-exec", "keep-empty",
				"no-keep-empty", "no-fork-point", "no-gpg-sign", "no-verify", "context", "trailer"})
	case "bisect":
		if len(rest) > 0 && rest[0].Value == "run" {
			w.hiddenArgv("git bisect run", rest[1:])
		}
	case "filter-branch":
		filters := map[string]string{"tree-filter": "script", "index-filter": "script", "msg-filter": "script",
			"env-filter": "script", "commit-filter": "script", "parent-filter": "script", "tag-name-filter": "script",
			"setup": "script"}
		w.gitOptionCommands("git filter-branch", rest, "d", filters,
			[]string{"tree-filter", "index-filter", "msg-filter", "env-filter", "commit-filter", "parent-filter",
				"tag-name-filter", "setup", "subdirectory-filter", "prune-empty", "original", "force",
				"state-branch", "directory"})
	case "difftool":
		w.gitOptionCommands("git difftool", rest, "xt", map[string]string{"extcmd": "script"},
			[]string{"dir-diff", "extcmd", "gui", "no-index", "no-prompt", "prompt", "symlinks", "no-symlinks",
				"tool", "tool-help", "trust-exit-code", "no-trust-exit-code", "no-gui", "cached", "staged"})
	case "fetch", "pull", "clone", "ls-remote", "fetch-pack", "push", "send-pack", "archive", "remote", "submodule--helper", "init":
		w.gitTransport(sub, rest)
	case "config":
		w.gitConfigCommand(rest)
	case "grep":
		for k := 0; k < len(rest); k++ {
			v := rest[k].Value
			switch {
			case v == "--":
				return
			case strings.HasPrefix(v, "-O") && len(v) > 2:
				w.hiddenScript("git grep -O", v[2:], rest[k].Known)
			case strings.HasPrefix(v, "--open-files-in-pager="):
				w.hiddenScript("git grep -O", strings.TrimPrefix(v, "--open-files-in-pager="), rest[k].Known)
			case strings.HasPrefix(v, "--o") && strings.HasPrefix("--open-files-in-pager", strings.SplitN(v, "=", 2)[0]) && strings.Contains(v, "="):
				w.hiddenScript("git grep -O", strings.SplitN(v, "=", 2)[1], rest[k].Known)
			}
		}
	case "send-email":
		for k := 0; k < len(rest); k++ {
			name, val, hasVal := strings.Cut(strings.TrimPrefix(rest[k].Value, "--"), "=")
			if !strings.HasPrefix(rest[k].Value, "--") {
				continue
			}
			switch name {
			case "to-cmd", "cc-cmd", "header-cmd", "sendmail-cmd":
				val, known, j := longValue(rest, k, hasVal, val)
				k = j
				w.hiddenScript("git send-email --"+name, val, known)
			case "smtp-server":
				val, known, j := longValue(rest, k, hasVal, val)
				k = j
				if strings.HasPrefix(val, "/") {
					w.hiddenScript("git send-email --smtp-server", val, known)
				}
			}
		}
	case "daemon", "instaweb", "web--browse", "help":
		for k := 0; k < len(rest); k++ {
			name, val, hasVal := strings.Cut(strings.TrimPrefix(rest[k].Value, "--"), "=")
			switch name {
			case "access-hook", "httpd", "browser":
				if !strings.HasPrefix(rest[k].Value, "--") {
					continue
				}
				val, known, j := longValue(rest, k, hasVal, val)
				k = j
				w.hiddenScript("git "+sub+" --"+name, val, known)
			}
		}
	}
}

// extArgv splits the command of an ext:: remote: spaces separate arguments, "% " is a
// space, "%%" a percent sign, %s, %S and %G stand for the service and host.
func extArgv(s string) []Arg {
	var out []Arg
	var cur []byte
	in := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+1 < len(s):
			i++
			switch s[i] {
			case ' ', '%':
				cur = append(cur, s[i])
			case 's', 'S':
				cur = append(cur, "git-upload-pack"...)
			case 'G':
				cur = append(cur, "host"...)
			}
			in = true
		case c == ' ':
			if in {
				out = append(out, lit(string(cur)))
				cur, in = cur[:0], false
			}
		default:
			cur = append(cur, c)
			in = true
		}
	}
	if in {
		out = append(out, lit(string(cur)))
	}
	return out
}

// gitOptionCommands finds the options of a git subcommand whose value is a command (kinds:
// "script"). Long options match by unambiguous abbreviation of longs; short letters in
// shortArg take a value, and -x is the command of rebase and difftool.
func (w *walker) gitOptionCommands(label string, args []Arg, shortArg string, commands map[string]string, longs []string) {
	for k := 0; k < len(args); k++ {
		a := args[k]
		v := a.Value
		if v == "--" {
			return
		}
		if strings.HasPrefix(v, "--") {
			name, val, hasVal := strings.Cut(v[2:], "=")
			full, ok := resolveLong(name, longs)
			if !ok {
				// An unknown or ambiguous option makes git refuse; one that could name a
				// command is read as that command.
				for c := range commands {
					if strings.HasPrefix(c, name) {
						full, ok = c, true
					}
				}
				if !ok {
					continue
				}
			}
			if _, isCmd := commands[full]; isCmd {
				val, known, j := longValue(args, k, hasVal, val)
				k = j
				w.hiddenScript(label+" --"+full, val, known)
			}
			continue
		}
		if len(v) > 1 && v[0] == '-' {
			k = shortCluster(args, k, shortArg, func(c byte, val string, known bool) {
				if c == 'x' && strings.IndexByte(shortArg, 'x') >= 0 {
					w.hiddenScript(label+" -x", val, known)
				}
			})
		}
	}
}

// gitTransport finds the programs the transport subcommands run (--upload-pack, --exec, -u)
// and clone's configuration options.
func (w *walker) gitTransport(sub string, args []Arg) {
	for k := 0; k < len(args); k++ {
		a := args[k]
		v := a.Value
		if v == "--" {
			return
		}
		if strings.HasPrefix(v, "--") {
			name, val, hasVal := strings.Cut(v[2:], "=")
			switch {
			case name != "" && (strings.HasPrefix("upload-pack", name) && len(name) >= 2 || strings.HasPrefix("receive-pack", name) && len(name) >= 3 || name == "exec"):
				val, known, j := longValue(args, k, hasVal, val)
				k = j
				w.hiddenScript("git "+sub+" --"+name, val, known)
			case name == "config" && (sub == "clone" || sub == "submodule--helper"):
				val, known, j := longValue(args, k, hasVal, val)
				k = j
				w.gitConfig("git clone --config", val, known)
			case name == "template" || strings.HasPrefix("template", name) && len(name) >= 3:
				val, _, j := longValue(args, k, hasVal, val)
				k = j
				if sub != "init" || !w.inProjectDir(joinCwd(w.cwd, val)) {
					w.problem("git %s --template installs hooks from %s", sub, val)
				}
			}
			continue
		}
		if len(v) > 1 && v[0] == '-' {
			withArg := ""
			switch sub {
			case "clone":
				withArg = "uocbj"
			case "fetch", "pull":
				withArg = "j"
			case "archive":
				withArg = "o"
			}
			k = shortCluster(args, k, withArg, func(c byte, val string, known bool) {
				switch {
				case c == 'u' && sub == "clone":
					w.hiddenScript("git clone -u", val, known)
				case c == 'c' && sub == "clone":
					w.gitConfig("git clone -c", val, known)
				}
			})
		}
	}
}

// gitConfigCommand looks at git config setting a key that names a program: it is stored for
// later, so the analysis asks, and the floor reads the command now.
func (w *walker) gitConfigCommand(args []Arg) {
	var ops []Arg
	for k := 0; k < len(args); k++ {
		v := args[k].Value
		switch {
		case v == "-f" || v == "--file" || v == "--blob" || v == "--type" || v == "--default" || v == "--comment" || v == "--value":
			k++
		case strings.HasPrefix(v, "-"):
		default:
			ops = append(ops, args[k])
		}
	}
	if len(ops) > 0 {
		switch ops[0].Value {
		case "set", "add", "replace-all":
			ops = ops[1:]
		case "get", "list", "unset", "rename-section", "remove-section", "edit", "get-regexp", "get-all", "get-urlmatch":
			return
		}
	}
	if len(ops) < 2 {
		return
	}
	key := strings.ToLower(ops[0].Value)
	val := ops[1].Value
	if kind := gitKeyKind(key, val); kind != "" {
		w.problem("git config stores %s in %s", kind, key)
		val = strings.TrimPrefix(val, "!")
		if kind == "a command" {
			w.floorScript("git config "+key, val)
		}
	}
}

// gitKeyKind says what a git configuration key holds when it is more than data: "a command",
// or what else makes it unsafe ("" for plain data).
func gitKeyKind(key, val string) string {
	section, rest, _ := strings.Cut(key, ".")
	last := key
	if i := strings.LastIndexByte(key, '.'); i >= 0 {
		last = key[i+1:]
	}
	switch {
	case section == "alias":
		return "a command"
	case key == "core.hookspath" || key == "init.templatedir":
		return "a hooks directory"
	case section == "include" || section == "includeif":
		return "an included configuration file"
	case section == "protocol" && last == "allow", key == "protocol.allow":
		return "a transport permission"
	case section == "trace2":
		return "a trace target"
	case key == "core.fsmonitor" && (val == "true" || val == "false"):
		return ""
	case section == "pager" && (val == "true" || val == "false" || val == ""):
		return ""
	case section == "url" && strings.HasPrefix(val, "ext::"):
		return "an ext:: remote"
	case section == "submodule" && last == "update" && strings.HasPrefix(val, "!"):
		return "a command"
	case section == "credential" && last == "helper":
		return "a command"
	case section == "pager", section == "hook" && last == "command":
		return "a command"
	case section == "man" && (last == "cmd" || last == "path" || last == "viewer"),
		section == "browser" && (last == "cmd" || last == "path"):
		return "a command"
	}
	switch last {
	case "cmd", "command", "program", "driver", "textconv", "process", "clean", "smudge", "editor", "pager",
		"sshcommand", "askpass", "gitproxy", "uploadpack", "receivepack", "packobjectshook",
		"alternaterefscommand", "fsmonitor", "browser", "difffilter", "smtpserver", "tocmd", "cccmd",
		"headercmd", "sendmailcmd", "httpd", "external", "helper", "hook", "tunnel", "defaultkeycommand":
		return "a command"
	case "vcs":
		return "a remote helper (git-remote-<vcs> runs)"
	}
	if harmlessGitKey(section, rest) {
		return ""
	}
	return "a setting that is not known to be harmless"
}

// harmlessGitKey reports the configuration keys that only change names, formats, colours,
// defaults of the porcelain and housekeeping: nothing that runs, loads, trusts or writes
// elsewhere.
func harmlessGitKey(section, rest string) bool {
	sub, name, threePart := strings.Cut(rest, ".")
	if threePart {
		sub = name
	}
	switch section {
	case "user", "author", "committer", "color", "column", "advice", "log", "format", "pretty", "status", "blame",
		"rerere", "help", "i18n", "grep", "apply", "am", "pull", "push", "fetch", "rebase", "commit", "tag", "gc",
		"maintenance", "branch", "pack", "index", "feature", "checkout", "stash", "versionsort", "interactive",
		"notes", "reset", "revert", "sequence", "showbranch", "transfer", "worktree", "clone":
		return true // (their command keys, sequence.editor and the like, were judged above)
	case "init":
		return sub == "defaultbranch"
	case "diff", "merge", "mergetool", "difftool":
		switch sub {
		case "tool", "guitool", "external", "path", "cmd", "command", "driver", "textconv":
			return false
		}
		return !threePart
	case "core":
		switch sub {
		case "quotepath", "autocrlf", "safecrlf", "eol", "filemode", "ignorecase", "precomposeunicode", "abbrev",
			"whitespace", "commentchar", "commentstring", "untrackedcache", "preloadindex", "checkstat", "trustctime",
			"longpaths", "compression", "loosecompression", "bigfilethreshold", "logallrefupdates",
			"warnambiguousrefs", "multipackindex", "splitindex", "fsync", "fsyncmethod", "packedgitlimit",
			"packedgitwindowsize", "deltabasecachelimit", "autocrlf.input", "symlinks", "protectntfs", "protecthfs",
			"notesref", "sparsecheckout", "sparsecheckoutcone", "filesreflocktimeout", "packedrefstimeout":
			return true
		}
	case "protocol":
		return sub == "version"
	case "submodule":
		return !threePart && (sub == "recurse" || sub == "fetchjobs" || sub == "propagatebranches")
	case "credential":
		return false
	case "http", "https":
		return !threePart && (sub == "lowspeedlimit" || sub == "lowspeedtime" || sub == "postbuffer" || sub == "version")
	}
	return false
}

// gitConfig judges one -c KEY=VALUE of git.
func (w *walker) gitConfig(label, kv string, known bool) {
	key, val, _ := strings.Cut(kv, "=")
	key = strings.ToLower(key)
	kind := gitKeyKind(key, val)
	switch kind {
	case "":
		return
	case "a command":
	default:
		w.problem("%s %s sets %s", label, key, kind)
		return
	}
	if !known {
		w.problem("%s %s is not a literal", label, key)
	}
	section, _, _ := strings.Cut(key, ".")
	switch {
	case val == "":
		return
	case section == "alias" && !strings.HasPrefix(val, "!"):
		// An alias to git arguments: git runs with them.
		words := xargsWords(val)
		argv := []Arg{lit("git")}
		for _, wd := range words {
			argv = append(argv, lit(wd))
		}
		w.hiddenArgv(label+" "+key, argv)
		return
	case strings.HasPrefix(val, "!"):
		val = val[1:]
	case section == "credential" && !strings.ContainsAny(val, "/ "):
		// credential.helper=store runs git credential-store.
		w.hiddenArgv(label+" "+key, []Arg{lit("git"), lit("credential-" + val)})
		return
	}
	w.hiddenScript(label+" "+key, val, known)
}

// --- make ---

var makeLong = []string{"always-make", "assume-new", "assume-old", "check-symlink-times", "debug", "directory",
	"dry-run", "environment-overrides", "eval", "file", "help", "ignore-errors", "include-dir", "jobs",
	"just-print", "keep-going", "load-average", "makefile", "max-load", "new-file", "no-builtin-rules",
	"no-builtin-variables", "no-keep-going", "no-print-directory", "no-silent", "old-file", "output-sync",
	"print-data-base", "print-directory", "question", "quiet", "recon", "silent", "stop", "touch", "trace",
	"version", "warn-undefined-variables", "what-if", "shuffle", "jobserver-style", "jobserver-auth"}

// Variables of make whose value changes what runs.
func makeRunVar(name string) bool {
	switch name {
	case "SHELL", "MAKESHELL", ".SHELLFLAGS", "MAKEFLAGS", "MFLAGS", "GNUMAKEFLAGS", "MAKEFILES", "MAKEOVERRIDES",
		".RECIPEPREFIX", "MAKE", ".DEFAULT_GOAL", ".ONESHELL":
		return true
	}
	return false
}

func (w *walker) make(args []Arg) {
	s := w.emit(args, KindCommand)
	dir, dirKnown := w.cwd, w.cwd != ""
	if dir == "" && w.cwdRel != "" {
		dir, dirKnown = w.cwdRel, true
	}
	// Variables make takes from its environment (RM, CC, MAKE, … of the default rules).
	for _, e := range w.env {
		if name, val, ok := strings.Cut(e, "="); ok && !HarmlessEnv(name) {
			w.makeVar(name, val, true)
		}
	}
	for i := 1; i < len(args); i++ {
		a := args[i]
		v := a.Value
		if v == "--" {
			continue
		}
		if strings.HasPrefix(v, "--") {
			name, val, hasVal := strings.Cut(v[2:], "=")
			full, ok := resolveLong(name, makeLong)
			if !ok {
				w.problem("make option %s is not known", v)
				continue
			}
			switch full {
			case "eval":
				val, known, j := longValue(args, i, hasVal, val)
				i = j
				w.makeText("make --eval", val, known)
			case "file", "makefile":
				if !hasVal && i+1 < len(args) {
					i++
					w.makefile(s, args[i])
				} else {
					w.makefile(s, Arg{Value: val, Raw: val, Known: a.Known, proc: a.proc})
				}
			case "directory":
				if !hasVal && i+1 < len(args) {
					i++
					val = args[i].Value
				}
				dir = joinCwd(dir, val)
			case "include-dir", "assume-new", "assume-old", "new-file", "old-file", "what-if", "jobserver-style", "jobserver-auth":
				if !hasVal {
					i++
				}
			}
			continue
		}
		if len(v) > 1 && v[0] == '-' {
			for j := 1; j < len(v); j++ {
				c := v[j]
				if strings.IndexByte("CfIoWE", c) < 0 {
					continue
				}
				va := Arg{Value: v[j+1:], Raw: v[j+1:], Known: a.Known, proc: a.proc}
				if va.Value == "" && i+1 < len(args) {
					i++
					va = args[i]
				}
				switch c {
				case 'E':
					w.makeText("make -E", va.Value, va.Known)
				case 'f':
					w.makefile(s, va)
				case 'C':
					dir = joinCwd(dir, va.Value)
				}
				break
			}
			continue
		}
		if name, val, ok := strings.Cut(v, "="); ok && isMakeVar(strings.TrimRight(name, ":+?!")) {
			w.makeVar(strings.TrimRight(name, ":+?!"), val, a.Known)
		}
	}
	if (!dirKnown || !w.inProjectDir(dir)) && !hasAny(args[1:], "--version", "-v", "--help", "-h") {
		w.problem("make runs the makefile of %s, outside the project", displayDir(dir))
	}
}

// makeVar judges a make variable set on the command line or in make's environment: a recipe
// may run it as a program ($(RM), $(CC), $(MAKE)), so a value that can name one is a hidden
// command, and SHELL and its friends change how every recipe runs. A number, an option and
// an empty value are data (V=1, CFLAGS=-O2).
func (w *walker) makeVar(name, val string, known bool) {
	switch {
	case makeRunVar(name) && name != "SHELL" && name != "MAKESHELL" && name != "MAKE":
		w.problem("make %s= changes how make runs its recipes", name)
		w.floorScript("make "+name+"=", val)
	case name == "PATH":
		w.problem("make PATH= changes the programs its recipes run")
	case makeData(val) && name != "SHELL" && name != "MAKESHELL", makeDataName(name) && plainWord(val):
	default:
		w.hiddenScript("make "+name+"=", val, known)
	}
	if strings.Contains(val, "$(shell") || strings.Contains(val, "${shell") {
		w.makeText("make "+name+"=", name+" := "+val, known)
	}
}

// makeDataName names the make variables that hold a directory, flags or a version, not a
// program (DESTDIR, PREFIX, BINDIR, CFLAGS, VERSION, …).
func makeDataName(name string) bool {
	u := strings.ToUpper(name)
	switch u {
	case "DESTDIR", "PREFIX", "EXEC_PREFIX", "O", "V", "Q", "W", "VERBOSE", "DEBUG", "VERSION", "ARCH", "OS", "TARGET", "GOOS",
		"GOARCH", "BUILD", "BUILDTYPE", "CONFIG", "JOBS", "NAME", "TAG":
		return true
	}
	for _, sfx := range []string{"DIR", "DIRS", "FLAGS", "_PATH", "_VERSION", "_NAME", "_TAG", "FILE"} {
		if strings.HasSuffix(u, sfx) {
			return true
		}
	}
	return false
}

// plainWord reports a single word without anything a shell reads specially.
func plainWord(v string) bool {
	return v != "" && !strings.ContainsAny(v, " \t\n;|&$`()<>'\"\\*?[]{}~!#")
}

// makeData reports a make variable value that cannot name a program.
func makeData(v string) bool {
	t := strings.TrimSpace(v)
	if t == "" || strings.HasPrefix(t, "-") {
		return true
	}
	first, _, _ := strings.Cut(t, " ")
	if isDigits(first) {
		return true
	}
	switch strings.ToLower(first) {
	case "yes", "no", "on", "off", "y", "n", "release", "debug":
		return true
	}
	return false
}

func isMakeVar(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ' ' || c == '\t' || c == ':' || c == '#' || c == '=' {
			return false
		}
	}
	return true
}

// makefile looks at make -f FILE: a makefile the command line provides (the standard input, a
// here-document, a process substitution, a file it wrote) is makefile text on the command
// line; a makefile outside the project is not the project's.
func (w *walker) makefile(s *Segment, a Arg) {
	file := a.Value
	if !a.Known {
		w.problem("make -f of a file that is not known")
		return
	}
	if file == "-" {
		a.Value = "/dev/stdin"
	}
	if text, known, found := w.fileText(a); found {
		if !known {
			w.problem("make reads a makefile from an input that is not known")
			return
		}
		w.makeText("make -f "+file, text, true)
		return
	}
	s.Reads = append(s.Reads[:len(s.Reads):len(s.Reads)], Read{Target: file, Known: true, Op: "make -f"})
	if harmlessRead(path.Clean(file)) {
		return
	}
	if !w.inProjectDir(joinCwd(w.cwd, path.Dir(file))) {
		w.problem("make -f %s reads a makefile from outside the project", file)
	}
}

// makeText is makefile text on the command line: make is not modelled, so the analysis asks,
// and the floor reads the recipes and $(shell …) calls in it.
func (w *walker) makeText(label, text string, known bool) {
	w.problem("%s: makefile text on the command line is not analysed", label)
	if !known {
		return
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "\t") {
			w.floorScript(label, strings.TrimLeft(line, "\t@-+ "))
			continue
		}
		// target: prerequisites ; recipe
		if i := strings.Index(line, ";"); i >= 0 && strings.Contains(line[:i], ":") {
			w.floorScript(label, strings.TrimLeft(line[i+1:], "@-+ "))
		}
		for _, open := range []string{"$(shell ", "${shell "} {
			for off := 0; ; {
				k := strings.Index(line[off:], open)
				if k < 0 {
					break
				}
				start := off + k + len(open)
				end := matchClose(line, start, open[1])
				w.floorScript(label+" $(shell)", line[start:end])
				off = end
			}
		}
	}
}

// matchClose finds the end of a make function call that opened with ( or { before start.
func matchClose(s string, start int, open byte) int {
	closeCh := byte(')')
	if open == '{' {
		closeCh = '}'
	}
	depth := 1
	for i := start; i < len(s); i++ {
		switch s[i] {
		case open:
			depth++
		case closeCh:
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return len(s)
}

// --- tar ---

var tarLong = []string{"absolute-names", "acls", "add-file", "after-date", "anchored", "append", "atime-preserve",
	"auto-compress", "backup", "block-number", "blocking-factor", "bzip2", "catenate", "check-device", "check-links",
	"checkpoint", "checkpoint-action", "clamp-mtime", "compare", "compress", "concatenate", "confirmation", "create",
	"delay-directory-restore", "delete", "dereference", "diff", "directory", "exclude", "exclude-backups",
	"exclude-caches", "exclude-caches-all", "exclude-caches-under", "exclude-from", "exclude-ignore",
	"exclude-ignore-recursive", "exclude-tag", "exclude-tag-all", "exclude-tag-under", "exclude-vcs",
	"exclude-vcs-ignores", "extract", "file", "files-from", "force-local", "format", "full-time", "get", "group",
	"group-map", "gunzip", "gzip", "hard-dereference", "help", "hole-detection", "ignore-case",
	"ignore-command-error", "ignore-failed-read", "ignore-zeros", "incremental", "index-file", "info-script",
	"interactive", "keep-directory-symlink", "keep-newer-files", "keep-old-files", "label", "level", "list",
	"listed-incremental", "lzip", "lzma", "lzop", "mode", "mtime", "multi-volume", "new-volume-script", "newer",
	"newer-mtime", "no-acls", "no-anchored", "no-auto-compress", "no-check-device", "no-delay-directory-restore",
	"no-ignore-case", "no-ignore-command-error", "no-null", "no-overwrite-dir", "no-quote-chars", "no-recursion",
	"no-same-owner", "no-same-permissions", "no-seek", "no-selinux", "no-unquote", "no-verbatim-files-from",
	"no-wildcards", "no-wildcards-match-slash", "no-xattrs", "null", "numeric-owner", "occurrence", "old-archive",
	"one-file-system", "one-top-level", "overwrite", "overwrite-dir", "owner", "owner-map", "pax-option",
	"portability", "posix", "preserve-order", "preserve-permissions", "quote-chars", "quoting-style",
	"read-full-records", "record-size", "recursion", "recursive-unlink", "remove-files", "restrict", "rmt-command",
	"rsh-command", "same-order", "same-owner", "same-permissions", "seek", "selinux", "show-defaults",
	"show-omitted-dirs", "show-snapshot-field-ranges", "show-stored-names", "show-transformed-names",
	"skip-old-files", "sort", "sparse", "sparse-version", "starting-file", "strip-components", "suffix",
	"tape-length", "test-label", "to-command", "to-stdout", "totals", "touch", "transform", "uncompress", "ungzip",
	"unlink-first", "unquote", "update", "usage", "use-compress-program", "utc", "verbatim-files-from", "verbose",
	"verify", "version", "volno-file", "warning", "wildcards", "wildcards-match-slash", "xattrs",
	"xattrs-exclude", "xattrs-include", "xform", "xz", "zstd"}

// Short options of GNU tar that take a value.
const tarShortArg = "bBCfFgHIKLNTVX"

func (w *walker) tar(args []Arg) {
	w.emit(args, KindCommand)
	w.tarRemoves(args)
	run := func(opt, val string, known bool) {
		switch opt {
		case "I", "use-compress-program":
			w.hiddenScript("tar --use-compress-program", val, known)
		case "F", "info-script", "new-volume-script":
			w.hiddenScript("tar --"+opt, val, known)
		case "to-command", "rsh-command", "rmt-command":
			w.hiddenScript("tar --"+opt, val, known)
		case "checkpoint-action":
			if cmd, ok := strings.CutPrefix(val, "exec="); ok {
				w.hiddenScript("tar --checkpoint-action=exec", cmd, known)
			}
		}
	}
	start := 1
	if len(args) > 1 && !strings.HasPrefix(args[1].Value, "-") && args[1].Known {
		// Old-style options: a cluster of letters whose values follow in order.
		next := 2
		for _, c := range []byte(args[1].Value) {
			if strings.IndexByte(tarShortArg, c) >= 0 {
				if next < len(args) {
					run(string(c), args[next].Value, args[next].Known)
				}
				next++
			}
		}
		start = next
	}
	for i := start; i < len(args); i++ {
		a := args[i]
		v := a.Value
		if !a.Known && strings.HasPrefix(a.Raw, "-") {
			w.problem("tar with an option that is not known")
			continue
		}
		if v == "--" {
			break
		}
		if strings.HasPrefix(v, "--") {
			name, val, hasVal := strings.Cut(v[2:], "=")
			full, ok := resolveLong(name, tarLong)
			if !ok {
				w.problem("tar option %s is not known", v)
				continue
			}
			switch full {
			case "use-compress-program", "info-script", "new-volume-script", "to-command", "rsh-command",
				"rmt-command", "checkpoint-action":
				val, known, j := longValue(args, i, hasVal, val)
				i = j
				run(full, val, known)
			case "file", "directory", "exclude", "exclude-from", "files-from", "format", "group", "owner", "mode",
				"label", "mtime", "newer", "newer-mtime", "after-date", "suffix", "transform", "xform",
				"strip-components", "blocking-factor", "record-size", "tape-length", "index-file", "volno-file",
				"listed-incremental", "starting-file", "occurrence", "quoting-style", "quote-chars", "no-quote-chars",
				"pax-option", "exclude-tag", "exclude-tag-all", "exclude-tag-under", "exclude-ignore",
				"exclude-ignore-recursive", "group-map", "owner-map", "sort", "warning", "xattrs-exclude",
				"xattrs-include", "level", "sparse-version", "hole-detection", "backup", "add-file":
				if !hasVal && (full != "backup" && full != "sort" && full != "occurrence") {
					i++
				}
			}
			continue
		}
		if len(v) > 1 && v[0] == '-' {
			i = shortCluster(args, i, tarShortArg, func(c byte, val string, known bool) {
				run(string(c), val, known)
			})
		}
	}
}

// --- rsync, zip ---

var rsyncLongArg = []string{"rsh", "rsync-path", "block-size", "filter", "remote-option", "temp-dir", "modify-window",
	"backup-dir", "suffix", "chmod", "chown", "usermap", "groupmap", "exclude", "exclude-from", "include",
	"include-from", "files-from", "compare-dest", "copy-dest", "link-dest", "compress-choice", "compress-level",
	"skip-compress", "checksum-choice", "max-delete", "max-size", "min-size", "max-alloc", "partial-dir",
	"timeout", "contimeout", "address", "port", "sockopts", "out-format", "log-file", "log-file-format",
	"password-file", "bwlimit", "stop-after", "stop-at", "write-batch", "only-write-batch", "read-batch",
	"protocol", "iconv", "checksum-seed", "info", "debug", "outbuf", "config", "dparam", "copy-as", "mkpath"}

func (w *walker) rsync(args []Arg) {
	w.emit(args, KindCommand)
	w.rsyncRemoves(args)
	for i := 1; i < len(args); i++ {
		a := args[i]
		v := a.Value
		if v == "--" {
			break
		}
		if strings.HasPrefix(v, "--") {
			name, val, hasVal := strings.Cut(v[2:], "=")
			full, ok := resolveLong(name, rsyncLongArg)
			if !ok || !hasVal && !hasName(rsyncLongArg, full) {
				if strings.HasPrefix("rsh", name) && name != "" {
					w.problem("rsync option %s may name the remote shell", v)
				}
				continue
			}
			val, known, j := longValue(args, i, hasVal, val)
			i = j
			switch full {
			case "rsh":
				w.hiddenScript("rsync --rsh", val, known)
			case "rsync-path":
				w.floorScript("rsync --rsync-path", val)
			case "config", "read-batch":
				w.problem("rsync --%s reads options or commands from a file", full)
			}
			continue
		}
		if len(v) > 1 && v[0] == '-' {
			i = shortCluster(args, i, "eBfMT@", func(c byte, val string, known bool) {
				if c == 'e' {
					w.hiddenScript("rsync -e", val, known)
				}
			})
		}
	}
}

func (w *walker) zip(args []Arg) {
	w.emit(args, KindCommand)
	w.zipMoves(args)
	for i := 1; i < len(args); i++ {
		v := args[i].Value
		switch {
		case v == "-TT" || v == "--unzip-command":
			if i+1 < len(args) {
				i++
				w.hiddenScript("zip -TT", args[i].Value, args[i].Known)
			}
		case strings.HasPrefix(v, "-TT"):
			w.hiddenScript("zip -TT", v[3:], args[i].Known)
		case strings.HasPrefix(v, "--unzip-command="):
			w.hiddenScript("zip -TT", v[len("--unzip-command="):], args[i].Known)
		}
	}
}
