package policy

import (
	"path/filepath"
	"strings"
)

// DefaultSafeBins are the safe bins enabled when [policy.exec] safe_bins is not set: read-only
// tools whose argv profile rules out writing files and running other programs.
var DefaultSafeBins = []string{
	"basename", "cat", "cmp", "column", "comm", "cut", "date", "df", "diff", "dirname", "du", "file",
	"find", "fold", "grep", "head", "id", "jq", "ls", "md5sum", "mkdir", "nl", "od", "readlink", "realpath",
	"rev", "rg", "sed", "sha1sum", "sha256sum", "sha512sum", "sort", "stat", "strings", "tac", "tail",
	"touch", "tr", "tree", "uname", "uniq", "wc", "which", "whoami", "base64",
}

// DefaultTrustedDirs are where a safe bin must live (after resolving symlinks) when
// [policy.exec] trusted_dirs is not set.
var DefaultTrustedDirs = []string{"/bin", "/usr/bin"}

// HasSafeBinProfile reports whether name can be a safe bin: approvebot knows how it reads its
// arguments and which calls of it only read.
func HasSafeBinProfile(name string) bool {
	ts := toolSpecs[name]
	return ts != nil && ts.safe != nil
}

// SafeBinProfiles lists the names that can be safe bins.
func SafeBinProfiles() []string {
	out := make([]string, 0, len(toolSpecs))
	for k, ts := range toolSpecs {
		if ts.safe != nil {
			out = append(out, k)
		}
	}
	return out
}

// gitSafe accepts read-only git subcommands. Global options that run programs or change
// configuration (-c, --config-env, --exec-path) are refused, as are --output and --ext-diff.
// Repository configuration (core.pager, core.fsmonitor, textconv) is trusted: a repository
// that an agent could have rewritten should not be given git as a safe bin.
func gitSafe(args []string) bool {
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--no-pager" || a == "-P" || a == "--no-optional-locks" || a == "--bare" ||
			a == "--literal-pathspecs" || a == "--no-replace-objects" || a == "--glob-pathspecs" ||
			a == "--noglob-pathspecs" || a == "--icase-pathspecs":
		case a == "-C" || a == "--git-dir" || a == "--work-tree" || a == "--namespace":
			i++
		case strings.HasPrefix(a, "--git-dir=") || strings.HasPrefix(a, "--work-tree=") || strings.HasPrefix(a, "--namespace="):
		case strings.HasPrefix(a, "-"):
			return false
		default:
			return gitSubSafe(a, args[i+1:])
		}
	}
	return false
}

func gitSubSafe(sub string, rest []string) bool {
	for _, a := range rest {
		name, _, _ := strings.Cut(a, "=")
		switch {
		case strings.HasPrefix(name, "--output"), name == "--ext-diff", name == "-O", strings.HasPrefix(name, "--open-files-in-pager"),
			name == "--exec", strings.HasPrefix(name, "--upload-pack"), strings.HasPrefix(name, "--receive-pack"):
			return false
		}
	}
	ops := func() []string {
		var out []string
		for _, a := range rest {
			if !strings.HasPrefix(a, "-") {
				out = append(out, a)
			}
		}
		return out
	}
	has := func(opts ...string) bool {
		for _, a := range rest {
			for _, o := range opts {
				if a == o {
					return true
				}
			}
		}
		return false
	}
	switch sub {
	case "status", "log", "diff", "show", "rev-parse", "ls-files", "ls-tree", "blame", "describe",
		"shortlog", "cat-file", "rev-list", "merge-base", "grep", "diff-tree", "diff-files", "diff-index",
		"name-rev", "count-objects", "var", "whatchanged", "version", "help", "check-ignore", "show-ref", "for-each-ref":
		return true
	case "branch":
		listing := has("-l", "--list")
		for _, a := range rest {
			switch {
			case a == "-a" || a == "--all" || a == "-r" || a == "--remotes" || a == "-v" || a == "-vv" ||
				a == "--verbose" || a == "-l" || a == "--list" || a == "--show-current" || a == "--no-color" ||
				a == "--merged" || a == "--no-merged" || a == "--contains" || a == "--no-contains" ||
				strings.HasPrefix(a, "--sort=") || strings.HasPrefix(a, "--format=") || strings.HasPrefix(a, "--color") ||
				strings.HasPrefix(a, "--column") || strings.HasPrefix(a, "--points-at"):
			case !strings.HasPrefix(a, "-") && listing:
			default:
				return false
			}
		}
		return true
	case "tag":
		listing := has("-l", "--list")
		for _, a := range rest {
			switch {
			case a == "-l" || a == "--list" || a == "-n" || strings.HasPrefix(a, "--sort=") ||
				strings.HasPrefix(a, "--format=") || strings.HasPrefix(a, "--contains") ||
				strings.HasPrefix(a, "--points-at") || strings.HasPrefix(a, "--column") || strings.HasPrefix(a, "--merged"):
			case !strings.HasPrefix(a, "-") && listing:
			default:
				return false
			}
		}
		return true
	case "remote":
		o := ops()
		if len(o) == 0 {
			return len(rest) == 0 || has("-v", "--verbose")
		}
		return o[0] == "get-url" || o[0] == "show" && len(rest) >= 1
	case "config":
		return !gitConfigWrites(rest) && !has("--global", "--system", "--file", "-f", "--blob")
	case "stash":
		o := ops()
		return len(o) > 0 && (o[0] == "list" || o[0] == "show")
	case "worktree":
		o := ops()
		return len(o) > 0 && o[0] == "list"
	case "reflog":
		o := ops()
		return len(o) == 0 || o[0] == "show"
	}
	return false
}

// safeBin reports whether a resolved segment is a safe bin: an enabled name with a profile
// (ts, from j.safeSpecs), living in a trusted directory, invoked with literal arguments its
// profile accepts. c is scratch memory for the parse.
func (j *ExecJudge) safeBin(name string, ts *toolSpec, resolved, real string, argv []string, c *toolCall) bool {
	if j.windows || resolved == "" || isWindowsPath(resolved) || isWindowsPath(name) || strings.ContainsRune(name, '\\') {
		return false
	}
	if ts == nil || ts.safe == nil {
		return false
	}
	if real == "" {
		real = resolved
	}
	if !j.trusted[parentDir(real)] {
		return false
	}
	// The file that runs must be the tool the profile is for (or a multi-call binary that
	// dispatches on the name it was called by).
	switch rb := filepath.Base(real); rb {
	case name, "busybox", "coreutils", "toybox":
	default:
		if filepath.Base(resolved) != name || !j.trusted[parentDir(resolved)] || !aliasOf(name, rb) {
			return false
		}
	}
	ts.callInto(c, name, argv)
	ok := c.err == nil && ts.safe(c)
	c.args, c.err = nil, nil
	return ok
}

// parentDir is filepath.Dir of a clean absolute path, without cleaning it again.
func parentDir(p string) string {
	i := strings.LastIndexByte(p, '/')
	switch {
	case i < 0:
		return "."
	case i == 0:
		return "/"
	}
	return p[:i]
}

// aliasOf accepts the usual alternative names of a safe bin (/usr/bin/sha256sum is a link to
// coreutils on some systems; /usr/bin/which to which.debianutils).
func aliasOf(name, real string) bool {
	return strings.HasPrefix(real, name+".") || strings.HasPrefix(real, name+"-") || strings.HasPrefix(real, "g"+name)
}
