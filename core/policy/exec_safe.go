package policy

import (
	"strings"

	"github.com/approvebot/approvebot/core/shell"
)

// What a safe bin reads from its environment. A program stays a safe bin when the command line
// exports or assigns only names it does not read with an effect: FOO=bar changes nothing for
// ls, TMPDIR moves sort's temporary files, RIPGREP_CONFIG_PATH hands ripgrep any option.

// safeBinEnv are the variables that change what any safe bin does or loads: option parsing
// (POSIXLY_CORRECT, _POSIX2_VERSION), the loader and the C library (LD_*, GCONV_PATH, LOCPATH,
// NLSPATH, GLIBC_TUNABLES, HOSTALIASES), where programs and files are found (PATH, HOME,
// XDG_CONFIG_HOME, TMPDIR) and the shell they may start (SHELL, BASH_ENV, ENV).
var safeBinEnv = map[string]bool{
	"POSIXLY_CORRECT": true, "_POSIX2_VERSION": true, "GCONV_PATH": true, "LOCPATH": true, "NLSPATH": true,
	"GLIBC_TUNABLES": true, "HOSTALIASES": true, "RES_OPTIONS": true, "LOCALDOMAIN": true, "PATH": true,
	"HOME": true, "XDG_CONFIG_HOME": true, "XDG_DATA_HOME": true, "TMPDIR": true, "TMP": true, "TEMP": true,
	"SHELL": true, "BASH_ENV": true, "ENV": true, "MALLOC_CONF": true, "TERMINFO": true, "TERMINFO_DIRS": true,
	"TZDIR": true,
}

// safeBinToolEnv are the variables one safe bin reads besides: a configuration file, options,
// or code it loads.
var safeBinToolEnv = map[string][]string{
	"rg":   {"RIPGREP_CONFIG_PATH"},
	"grep": {"GREP_OPTIONS"},
	"file": {"MAGIC"},
	"jq":   {"JQ_LIBRARY_PATH", "JQ_LIB_DIR", "JQ_PATH"},
	"tree": {"TREE_CHARSET"},
}

// envHarmlessFor reports whether a variable exported or assigned for the command line leaves
// the program name a safe bin. "*" is a name that is not known (set -a).
func envHarmlessFor(name, tool string) bool {
	switch {
	case name == "*" || name == "":
		return false
	case safeBinEnv[name]:
		return false
	case shell.HarmlessEnv(name):
		return true
	case shell.Reconfigures(name):
		return false
	case strings.HasPrefix(name, "LD_") || strings.HasPrefix(name, "DYLD_"):
		return false
	case tool == "git" || tool == "yq":
		// git reads dozens of GIT_* variables, its pager and editor settings, ssh's: only the
		// locale and the terminal are known to be harmless.
		return false
	}
	for _, n := range safeBinToolEnv[tool] {
		if n == name {
			return false
		}
	}
	return true
}

// safeExports reports whether what the command line exports leaves the program name a safe
// bin.
func safeExports(an *shell.Analysis, name string) bool {
	if !an.EnvExported {
		return true
	}
	if len(an.EnvExportedNames) == 0 {
		return false // exported, and the names are not known
	}
	for _, n := range an.EnvExportedNames {
		if !envHarmlessFor(n, name) {
			return false
		}
	}
	return true
}

// findFeeds reports whether the words xargs hands to s are the names find prints: find sits
// right before it in the same pipeline, alone, and prints nothing but the paths it finds
// (-print, -print0). Such words are paths below find's start points, which the effects judge
// as read recursively; they can start with "-" only when a name in the tree has a blank or a
// newline followed by "-" (without -print0 and xargs -0), which a tree under the project's own
// control does not.
func findFeeds(an *shell.Analysis, s *shell.Segment) bool {
	if s.Pipe == 0 || s.PipePos == 0 {
		return false
	}
	for _, r := range s.Reads {
		if r.Op == "xargs -a" {
			return false // the words come from a file
		}
	}
	var feeder *shell.Segment
	for _, o := range an.Segments {
		if o.Pipe != s.Pipe || o.PipePos != s.PipePos-1 || o == s {
			continue
		}
		if feeder != nil || !o.Judged {
			return false
		}
		feeder = o
	}
	if feeder == nil || feeder.Kind != shell.KindCommand || feeder.Base() != "find" || feeder.MoreArgs ||
		len(feeder.Wrappers) > 0 {
		return false
	}
	args := make([]string, 0, len(feeder.Args))
	for i, a := range feeder.Args {
		if !a.Known {
			return false
		}
		if i > 0 {
			args = append(args, a.Value)
		}
	}
	var c toolCall
	toolSpecs["find"].callInto(&c, "find", args)
	if c.err != nil {
		return false
	}
	for _, o := range c.p.Options {
		switch o.Name {
		case "-printf", "-fprintf", "-ls", "-fls", "-exec", "-execdir", "-ok", "-okdir", "-files0-from":
			return false // output other than the names, or names from elsewhere
		}
	}
	return true
}
