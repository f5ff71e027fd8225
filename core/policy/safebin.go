package policy

import (
	"path/filepath"
	"strings"
)

// DefaultSafeBins are the safe bins enabled when [policy.exec] safe_bins is not set: read-only
// tools whose argv profile rules out writing files and running other programs.
var DefaultSafeBins = []string{
	"basename", "cat", "cmp", "column", "comm", "cut", "date", "df", "diff", "dirname", "du", "file",
	"find", "fold", "grep", "head", "id", "jq", "ls", "md5sum", "nl", "od", "readlink", "realpath",
	"rev", "rg", "sed", "sha1sum", "sha256sum", "sha512sum", "sort", "stat", "strings", "tac", "tail",
	"tr", "tree", "uname", "uniq", "wc", "which", "whoami", "base64",
}

// DefaultTrustedDirs are where a safe bin must live (after resolving symlinks) when
// [policy.exec] trusted_dirs is not set.
var DefaultTrustedDirs = []string{"/bin", "/usr/bin"}

// binProfile says which arguments keep a safe bin safe.
type binProfile struct {
	// denyShort are short options that write, execute or otherwise escape (checked inside
	// clusters like -ni).
	denyShort string
	// shortArg are short options that take an argument: the rest of the cluster or the next
	// word is their value, not more options.
	shortArg string
	// denyLong are long options refused, also when abbreviated (GNU getopt accepts any unique
	// prefix: --out= is --output=).
	denyLong []string
	// maxOperands caps the non-option arguments (uniq IN OUT writes OUT); -1: no cap.
	maxOperands int
	// deny refuses these exact arguments anywhere (find -exec).
	deny []string
	// check, when set, decides on the arguments after the profile's own checks.
	check func(args []string) bool
}

var safeBinProfiles = map[string]*binProfile{
	"basename":  {maxOperands: -1},
	"cat":       {maxOperands: -1},
	"cmp":       {maxOperands: -1, shortArg: "iIn"},
	"column":    {maxOperands: -1, shortArg: "cstonNRHWdrCE", denyLong: []string{"output"}},
	"comm":      {maxOperands: 2},
	"cut":       {maxOperands: -1, shortArg: "bcdf"},
	"date":      {maxOperands: 1, denyShort: "s", shortArg: "dfIr", denyLong: []string{"set"}},
	"df":        {maxOperands: -1, shortArg: "BtxF"},
	"diff":      {maxOperands: 2, shortArg: "CDFIUWxSLX", denyLong: []string{"output"}},
	"dirname":   {maxOperands: -1},
	"du":        {maxOperands: -1, shortArg: "BdtX", denyLong: []string{"files0-from"}},
	"file":      {maxOperands: -1, denyShort: "C", shortArg: "mfFeP", denyLong: []string{"compile"}},
	"find":      {maxOperands: -1, deny: []string{"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}},
	"fold":      {maxOperands: -1, shortArg: "w"},
	"grep":      {maxOperands: -1, shortArg: "efmABCDd"},
	"head":      {maxOperands: -1, shortArg: "cn"},
	"id":        {maxOperands: 1},
	"jq":        {maxOperands: -1, shortArg: "fL"},
	"ls":        {maxOperands: -1, shortArg: "ITw"},
	"md5sum":    {maxOperands: -1},
	"nl":        {maxOperands: 1, shortArg: "bdfhilnsvw"},
	"od":        {maxOperands: -1, shortArg: "AjNStw"},
	"readlink":  {maxOperands: -1},
	"realpath":  {maxOperands: -1},
	"rev":       {maxOperands: -1},
	"rg":        {maxOperands: -1, shortArg: "efgmABCEjMrtTd", denyLong: []string{"pre", "hostname-bin"}},
	"sed":       {maxOperands: -1, check: sedSafe},
	"sha1sum":   {maxOperands: -1},
	"sha256sum": {maxOperands: -1},
	"sha512sum": {maxOperands: -1},
	"sort":      {maxOperands: -1, denyShort: "o", shortArg: "kotST", denyLong: []string{"output", "compress-program", "files0-from"}},
	"stat":      {maxOperands: -1, shortArg: "c"},
	"strings":   {maxOperands: -1, shortArg: "nteTs"},
	"tac":       {maxOperands: -1, shortArg: "s"},
	"tail":      {maxOperands: -1, shortArg: "cns"},
	"tr":        {maxOperands: 2},
	"tree":      {maxOperands: -1, denyShort: "oR", shortArg: "LPIHT", denyLong: []string{"fromfile"}},
	"uname":     {maxOperands: 0},
	"uniq":      {maxOperands: 1, shortArg: "fsw"},
	"wc":        {maxOperands: -1, denyLong: []string{"files0-from"}},
	"which":     {maxOperands: -1},
	"whoami":    {maxOperands: 0},
	"base64":    {maxOperands: 1, denyShort: "o", shortArg: "wbi", denyLong: []string{"output"}},
	"xxd":       {maxOperands: 1, shortArg: "cglosn"},
	"yq":        {maxOperands: -1, denyShort: "i", denyLong: []string{"inplace"}},
	"git":       {maxOperands: -1, check: gitSafe},
	"echo":      {maxOperands: -1},
	"printf":    {maxOperands: -1},
	"pwd":       {maxOperands: 0},
	"true":      {maxOperands: -1},
	"false":     {maxOperands: -1},
}

// HasSafeBinProfile reports whether name can be a safe bin.
func HasSafeBinProfile(name string) bool { return safeBinProfiles[name] != nil }

// SafeBinProfiles lists the names that have an argv profile.
func SafeBinProfiles() []string {
	out := make([]string, 0, len(safeBinProfiles))
	for k := range safeBinProfiles {
		out = append(out, k)
	}
	return out
}

// allows checks argv (without the command name) against the profile.
func (p *binProfile) allows(args []string) bool {
	operands := 0
	opts := true
	for i := 0; i < len(args); i++ {
		a := args[i]
		for _, d := range p.deny {
			if a == d {
				return false
			}
		}
		if !opts || a == "-" || !strings.HasPrefix(a, "-") {
			operands++
			continue
		}
		if a == "--" {
			opts = false
			continue
		}
		if strings.HasPrefix(a, "--") {
			name, _, _ := strings.Cut(a[2:], "=")
			if name == "" {
				return false
			}
			for _, d := range p.denyLong {
				if strings.HasPrefix(d, name) {
					return false
				}
			}
			if strings.HasPrefix("output", name) && len(name) >= 3 {
				return false
			}
			continue
		}
		if p.check != nil {
			// Profiles with their own checker read options themselves.
			continue
		}
		for j := 1; j < len(a); j++ {
			c := a[j]
			if strings.IndexByte(p.denyShort, c) >= 0 {
				return false
			}
			if strings.IndexByte(p.shortArg, c) >= 0 {
				if j == len(a)-1 {
					i++ // the value is the next word
				}
				break
			}
		}
	}
	if p.maxOperands >= 0 && operands > p.maxOperands {
		return false
	}
	if p.check != nil {
		return p.check(args)
	}
	return true
}

// sedSafe accepts sed without in-place editing, script files, or scripts that write (w, W, s///w)
// or execute (e, s///e) — unless --sandbox, which makes GNU sed refuse those itself.
func sedSafe(args []string) bool {
	var scripts []string
	explicit := false
	sandbox := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--sandbox":
			sandbox = true
		case a == "-e" || a == "--expression":
			if i+1 >= len(args) {
				return false
			}
			i++
			scripts = append(scripts, args[i])
			explicit = true
		case strings.HasPrefix(a, "--expression="):
			scripts = append(scripts, a[len("--expression="):])
			explicit = true
		case a == "-f" || strings.HasPrefix(a, "--file") || strings.HasPrefix(a, "--in-place"):
			return false
		case a == "-l" || a == "--line-length":
			i++
		case a == "--":
			if !explicit && i+1 < len(args) {
				scripts = append(scripts, args[i+1])
				explicit = true
			}
			i = len(args)
		case strings.HasPrefix(a, "--"):
			if strings.HasPrefix("--in-place", strings.SplitN(a, "=", 2)[0]) {
				return false
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for j := 1; j < len(a); j++ {
				switch a[j] {
				case 'i', 'f':
					return false
				case 'e':
					rest := a[j+1:]
					if rest == "" {
						if i+1 >= len(args) {
							return false
						}
						i++
						rest = args[i]
					}
					scripts = append(scripts, rest)
					explicit = true
					j = len(a)
				case 'l':
					if j == len(a)-1 {
						i++
					}
					j = len(a)
				case 'n', 'E', 'r', 's', 'u', 'z':
				default:
					return false
				}
			}
		default:
			if !explicit {
				scripts = append(scripts, a)
				explicit = true
			}
		}
	}
	if sandbox {
		return true
	}
	for _, s := range scripts {
		if !sedScriptSafe(s) {
			return false
		}
	}
	return true
}

// sedScriptSafe scans a sed script for commands that write files or run programs.
func sedScriptSafe(s string) bool {
	i := 0
	n := len(s)
	skipSpace := func() {
		for i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == ';' || s[i] == '\n') {
			i++
		}
	}
	// readDelim skips a delimited part (regex or replacement) starting after its delimiter.
	readDelim := func(d byte) bool {
		for i < n {
			if s[i] == '\\' {
				i += 2
				continue
			}
			if s[i] == d {
				i++
				return true
			}
			if s[i] == '\n' {
				return false
			}
			i++
		}
		return false
	}
	address := func() bool {
		for i < n {
			switch c := s[i]; {
			case c >= '0' && c <= '9' || c == '$' || c == ',' || c == '~' || c == '+' || c == '!' || c == ' ':
				i++
			case c == '/':
				i++
				if !readDelim('/') {
					return false
				}
				for i < n && (s[i] == 'I' || s[i] == 'M') {
					i++
				}
			case c == '\\':
				if i+1 >= n {
					return false
				}
				d := s[i+1]
				i += 2
				if !readDelim(d) {
					return false
				}
			default:
				return true
			}
		}
		return true
	}
	restOfLine := func() {
		for i < n && s[i] != '\n' && s[i] != ';' {
			i++
		}
	}
	for {
		skipSpace()
		if i >= n {
			return true
		}
		if !address() {
			return false
		}
		skipSpace()
		if i >= n {
			return true
		}
		c := s[i]
		i++
		switch c {
		case '{', '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'l', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case 'q', 'Q', 'L':
			for i < n && (s[i] >= '0' && s[i] <= '9' || s[i] == ' ') {
				i++
			}
		case 'b', 't', 'T', ':':
			restOfLine()
		case 'a', 'i', 'c':
			// Text to the end of the line (GNU one-liner form).
			for i < n && s[i] != '\n' {
				if s[i] == '\\' {
					i++
				}
				i++
			}
		case 'r', 'R':
			// Reading a file is no worse than cat.
			for i < n && s[i] != '\n' {
				i++
			}
		case 's':
			if i >= n {
				return false
			}
			d := s[i]
			if d == '\\' || d == '\n' {
				return false
			}
			i++
			// Two delimited sections follow: the pattern (or source set), then the
			// replacement (or destination set).
			for section := 0; section < 2; section++ {
				if !readDelim(d) {
					return false
				}
			}
			for i < n && s[i] != ';' && s[i] != '\n' && s[i] != '}' {
				switch s[i] {
				case 'w', 'W', 'e':
					return false
				case 'g', 'p', 'i', 'I', 'm', 'M', ' ':
				default:
					if s[i] < '0' || s[i] > '9' {
						return false
					}
				}
				i++
			}
		case 'y':
			if i >= n {
				return false
			}
			d := s[i]
			i++
			// Two delimited sections follow: the pattern (or source set), then the
			// replacement (or destination set).
			for section := 0; section < 2; section++ {
				if !readDelim(d) {
					return false
				}
			}
		default:
			// w, W, e and anything not understood.
			return false
		}
	}
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
		return has("--get", "--get-all", "--get-regexp", "--list", "-l", "get", "list")
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

// safeBin reports whether a resolved segment is a safe bin: an enabled name with a profile,
// living in a trusted directory, invoked with literal arguments its profile accepts.
func (j *ExecJudge) safeBin(name, resolved, real string, argv []string) bool {
	if j.windows || resolved == "" || isWindowsPath(resolved) || isWindowsPath(name) || strings.ContainsRune(name, '\\') {
		return false
	}
	if !j.safe[name] {
		return false
	}
	p := safeBinProfiles[name]
	if p == nil {
		return false
	}
	if real == "" {
		real = resolved
	}
	if !j.trusted[filepath.Dir(real)] {
		return false
	}
	// The file that runs must be the tool the profile is for (or a multi-call binary that
	// dispatches on the name it was called by).
	switch rb := filepath.Base(real); rb {
	case name, "busybox", "coreutils", "toybox":
	default:
		if filepath.Base(resolved) != name || !j.trusted[filepath.Dir(resolved)] || !aliasOf(name, rb) {
			return false
		}
	}
	return p.allows(argv)
}

// aliasOf accepts the usual alternative names of a safe bin (/usr/bin/sha256sum is a link to
// coreutils on some systems; /usr/bin/which to which.debianutils).
func aliasOf(name, real string) bool {
	return strings.HasPrefix(real, name+".") || strings.HasPrefix(real, name+"-") || strings.HasPrefix(real, "g"+name)
}
