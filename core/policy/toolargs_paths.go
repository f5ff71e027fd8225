package policy

import (
	"net/url"
	"path"
	"sort"
	"strings"
	"unicode"
)

// Path-like arguments of tools other than the shell tools, read in every spelling a tool or
// the file system reads them: with the home written any way a shell, PowerShell or cmd.exe
// writes it, as a file: URL, as a Windows long, UNC or WSL path, through /proc/self/root or
// macOS's /private, after a NUL (where C stops reading), without invisible characters or
// surrounding blanks, as the value of --opt=value, as a glob, and as the files a patch
// envelope or diff names. Each spelling is checked against the sensitive paths.

// pathArgWords are the words of argument names that carry file paths, in any tool.
var pathArgWords = map[string]bool{
	"path": true, "paths": true, "file": true, "files": true, "filename": true, "filenames": true,
	"filepath": true, "pathname": true, "pathspec": true, "dir": true, "dirs": true, "directory": true,
	"directories": true, "folder": true, "folders": true, "source": true, "sources": true, "src": true,
	"destination": true, "dest": true, "dst": true, "target": true, "targets": true, "notebook": true,
	"uri": true, "uris": true, "url": true, "urls": true, "cwd": true, "workdir": true, "wd": true,
	"location": true, "root": true, "from": true, "to": true, "output": true, "out": true,
	"outfile": true, "infile": true, "mount": true, "mounts": true, "volume": true, "volumes": true,
	"attachment": true, "attachments": true, "resource": true, "glob": true, "include": true,
	"includes": true, "image": true,
}

// fileToolWords are the words of a tool name that make it a file tool: there every
// argument whose value looks like a path is checked, whatever its name.
var fileToolWords = map[string]bool{
	"file": true, "files": true, "fs": true, "filesystem": true, "read": true, "write": true,
	"edit": true, "notebook": true, "dir": true, "directory": true, "folder": true, "ls": true,
	"glob": true, "grep": true, "cat": true, "patch": true, "editor": true, "replace": true,
	"path": true, "upload": true, "download": true, "copy": true, "move": true, "mkdir": true,
	"tree": true, "search": true, "diff": true, "apply": true, "attach": true, "open": true,
	"view": true, "save": true, "rename": true, "delete": true, "remove": true,
}

// treeToolWords make a tool a recursive reader: a directory it is given is read below.
var treeToolWords = map[string]bool{
	"grep": true, "rg": true, "ripgrep": true, "search": true, "tree": true, "many": true, "recursive": true,
	"archive": true, "zip": true, "tar": true, "sync": true, "backup": true, "upload": true,
}

// contentArgWords are the words of argument names whose values are contents, not paths.
var contentArgWords = map[string]bool{
	"content": true, "contents": true, "text": true, "body": true, "data": true, "string": true,
	"message": true, "description": true, "prompt": true, "pattern": true, "query": true,
	"regex": true, "comment": true, "title": true, "note": true, "summary": true,
}

// maxPathArg bounds a path-like value the policy reads; a longer one cannot be checked.
const maxPathArg = 4096

// sensitiveArg finds a path-like argument that names a sensitive path: the value of every
// argument named like a path (file_path, path, paths, source, destination, uri…), at any
// depth and also inside a string that holds JSON, every value written like a path in any
// tool, in a file tool also every value that merely could be one, and the files of a patch.
// Strings under content arguments (content, text, body…) are contents, not paths; objects
// under them are still read by their own names. Paths are taken against the request's cwd
// and any user's home. In a recursive reader (grep, search, tree) a directory counts when a
// sensitive path lies below it. A path-like value too long to check, or arguments nested too
// deep to read, count as sensitive (glob "").
func (e *Engine) sensitiveArg(in Input, toolWords []string) (p, glob string, ok bool) {
	s := e.sensitive
	if s == nil {
		return "", "", false
	}
	fileTool := anyWord(toolWords, fileToolWords)
	patchTool := anyWord(toolWords, map[string]bool{"patch": true, "diff": true, "apply": true})
	tree := anyWord(toolWords, treeToolWords)
	if r, ok := in.Args["recursive"].(bool); ok && r {
		tree = true
	}
	check := func(v string, named bool) bool {
		if len(v) > maxPathArg {
			if named && !strings.Contains(v, "\n") || strongPath(cleanPathValue(v[:64])) {
				p, glob = printablePath(v), ""
				return true
			}
			return false
		}
		for _, cand := range pathSpellings(v, in.Cwd) {
			if g, ok := matchPathSpelling(s, cand, in.Cwd, tree); ok {
				p, glob = printablePath(v), g
				return true
			}
		}
		return false
	}
	checkPatch := func(v string) bool {
		for _, f := range patchFiles(v) {
			if check(f, true) {
				return true
			}
		}
		return false
	}
	var walk func(v any, named, content bool, depth int) bool
	walk = func(v any, named, content bool, depth int) bool {
		if depth > maxArgDepth {
			p, glob = "(arguments nested too deep)", ""
			return true
		}
		switch x := v.(type) {
		case string:
			if content {
				return patchTool && checkPatch(x)
			}
			if (named || looksLikePath(x, fileTool)) && check(x, named) {
				return true
			}
			if checkPatch(x) {
				return true
			}
			if decoded, ok := decodeJSONString(x); ok {
				return walk(decoded, named, false, depth+1)
			}
		case []any:
			for _, el := range x {
				if walk(el, named, content, depth+1) {
					return true
				}
			}
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				kw := ToolWords(k)
				isPath := anyWord(kw, pathArgWords)
				if walk(x[k], isPath, !isPath && anyWord(kw, contentArgWords), depth+1) {
					return true
				}
			}
		}
		return false
	}
	if walk(in.Args, false, false, 0) {
		return p, glob, true
	}
	// A recursive reader given no directory reads the one it runs in (Grep without a path).
	if tree && path.IsAbs(in.Cwd) && !hasPathArg(in.Args) {
		if g, ok := s.MatchTree(in.Cwd, in.Cwd, ""); ok {
			return in.Cwd + " (the working directory it searches)", g, true
		}
	}
	return "", "", false
}

// hasPathArg reports a top-level argument named like a path.
func hasPathArg(args map[string]any) bool {
	for k, v := range args {
		if s, ok := v.(string); ok && s == "" {
			continue
		}
		if anyWord(ToolWords(k), pathArgWords) {
			return true
		}
	}
	return false
}

// printablePath shortens a value for a reason.
func printablePath(v string) string {
	if len(v) > 200 {
		v = cutRunes(v, 200) + "…"
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return '?'
		}
		return r
	}, v)
}

func cutRunes(s string, n int) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

// matchPathSpelling checks one spelling: as a literal path, as a glob when it has glob
// characters, and as a tree for a recursive reader.
func matchPathSpelling(s *Sensitive, p, cwd string, tree bool) (string, bool) {
	if g, ok := s.Match(p, cwd, ""); ok {
		return g, true
	}
	if tree {
		if g, ok := s.MatchTree(p, cwd, ""); ok {
			return g, true
		}
	}
	if strings.ContainsAny(p, "*?[") {
		if g, ok := s.MatchGlob(p, cwd, ""); ok {
			return g, true
		}
		if tree {
			if g, ok := s.MatchGlobTree(p, cwd, ""); ok {
				return g, true
			}
		}
	}
	return "", false
}

// cleanPathValue drops what a path cannot hold or a tool trims: control and invisible
// format characters (NUL, newlines, zero-width spaces and joiners, soft hyphens, bidi
// controls) and blanks at either end.
func cleanPathValue(v string) string {
	v = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u00ad' || r == '\u034f' ||
			r >= '\ufe00' && r <= '\ufe0f' || r == '\u3164' || r == '\u115f' || r == '\u1160' {
			return -1
		}
		return r
	}, v)
	return strings.TrimFunc(v, unicode.IsSpace)
}

// strongPath reports a value written as a path in any tool: from the root, a home (in any
// shell's spelling), the current or parent directory, a drive, a UNC share, or a file: URL.
func strongPath(v string) bool {
	if v == "" {
		return false
	}
	switch v[0] {
	case '/', '~', '%':
		return true
	case '.':
		return strings.HasPrefix(v, "./") || strings.HasPrefix(v, "../") || strings.HasPrefix(v, `.\`) || strings.HasPrefix(v, `..\`)
	case '\\':
		return strings.HasPrefix(v, `\\`)
	case '$':
		return len(v) > 1
	}
	if len(v) >= 3 && v[1] == ':' && (v[2] == '\\' || v[2] == '/') && unicode.IsLetter(rune(v[0])) {
		return true
	}
	return len(v) >= 5 && strings.EqualFold(v[:5], "file:")
}

// looksLikePath reports a value that may be a path: written as one (strongPath) in any tool;
// in a file tool also a relative path with a directory separator and no blank, or a
// dotfile's name.
func looksLikePath(v string, fileTool bool) bool {
	if v == "" || len(v) > maxPathArg && !strongPath(cleanPathValue(v[:64])) {
		return false
	}
	c := cleanPathValue(v)
	if strongPath(c) {
		return true
	}
	if !fileTool || strings.ContainsAny(c, " \t\n") {
		return false
	}
	return strings.ContainsAny(c, `/\`) || strings.HasPrefix(c, ".") && len(c) > 1
}

// pathSpellings are the paths a value may be read as (see the file comment).
func pathSpellings(v, cwd string) []string {
	var out []string
	add := func(s string) {
		if s == "" {
			return
		}
		for _, o := range out {
			if o == s {
				return
			}
		}
		out = append(out, s)
	}
	bases := []string{strings.TrimFunc(v, unicode.IsSpace)}
	if i := strings.IndexByte(v, 0); i >= 0 {
		bases = append(bases, cleanPathValue(v[:i]))
	}
	bases = append(bases, cleanPathValue(v))
	for _, b := range bases {
		if b == "" {
			continue
		}
		add(b)
		if isWindowsPath(cwd) && strings.ContainsRune(b, '\\') && !isWindowsPath(b) {
			add(strings.ReplaceAll(b, `\`, "/")) // ..\.ssh\id_rsa below a Windows cwd
		}
		r := rewritePath(b, cwd)
		add(r)
		// --file=/root/.ssh/id_rsa, key=~/.aws/credentials
		for _, x := range []string{b, r} {
			if i := strings.IndexByte(x, '='); i > 0 && !strings.ContainsAny(x[:i], `/\`) {
				val := strings.Trim(x[i+1:], `"'`)
				add(val)
				add(rewritePath(val, cwd))
			}
		}
	}
	return out
}

// rewritePath rewrites one spelling of a path into the plain one the sensitive paths are
// written in: a file: URL into its path, a Windows long, UNC or WSL path into a drive or POSIX
// path, a home written by PowerShell or cmd.exe into "~", /proc/self/root and macOS's
// /private into what they lead to.
func rewritePath(p, cwd string) string {
	for range 4 { // the rewrites compose (file:///C:/Users → C:/Users → …); a few passes suffice
		q := p
		q = fileURLPath(q)
		q = windowsLongPath(q)
		q = homeVariable(q)
		q = procRootPath(q, cwd)
		q = macPrivate(q)
		if q == p {
			break
		}
		p = q
	}
	return p
}

// fileURLPath reads a file: URL (any case; file:/p, file:///p, file://host/p) as its path,
// percent-decoded; a drive path keeps its drive (file:///C:/x is C:/x).
func fileURLPath(p string) string {
	if len(p) < 5 || !strings.EqualFold(p[:5], "file:") {
		return p
	}
	rest := p[5:]
	if strings.HasPrefix(rest, "//") {
		rest = rest[2:]
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			rest = rest[i:] // the host (localhost, or a UNC host) is dropped
		} else {
			rest = "/"
		}
	}
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		rest = rest[:i]
	}
	if d, err := url.PathUnescape(rest); err == nil {
		rest = d
	}
	if len(rest) >= 3 && rest[0] == '/' && rest[2] == ':' && unicode.IsLetter(rune(rest[1])) {
		rest = rest[1:]
	}
	return rest
}

// windowsLongPath reads \\?\C:\x, \\.\C:\x, \\?\UNC\host\c$\x, \\host\c$\x (an administrative
// share), \\wsl$\Distro\x and \\wsl.localhost\Distro\x, with either slash, as C:\x or /x.
func windowsLongPath(p string) string {
	if len(p) < 3 || !(p[0] == '\\' || p[0] == '/') || !(p[1] == '\\' || p[1] == '/') {
		return p
	}
	slash := strings.ReplaceAll(p, `\`, "/")
	elems := strings.Split(slash[2:], "/")
	if len(elems) == 0 {
		return p
	}
	switch e := strings.ToLower(elems[0]); {
	case e == "?" || e == ".":
		if len(elems) > 1 && strings.EqualFold(elems[1], "unc") {
			return `\\` + strings.Join(elems[2:], `\`)
		}
		return strings.Join(elems[1:], `\`)
	case e == "wsl$" || e == "wsl.localhost":
		if len(elems) > 1 {
			return "/" + strings.Join(elems[2:], "/")
		}
	default:
		// \\host\c$\Users: the administrative share of drive C.
		if len(elems) > 1 && len(elems[1]) == 2 && elems[1][1] == '$' && unicode.IsLetter(rune(elems[1][0])) {
			return elems[1][:1] + `:\` + strings.Join(elems[2:], `\`)
		}
	}
	return p
}

// homeVariables are the spellings of the home directory in PowerShell, cmd.exe and POSIX
// shells, lower-cased.
var homeVariables = []string{
	"%homedrive%%homepath%", "%userprofile%", "%homepath%", "%home%",
	"${env:userprofile}", "${env:home}", "$env:userprofile", "$env:home",
	"${userprofile}", "$userprofile", "${home}", "$home",
}

// homeVariable rewrites a home written as a variable into "~/…" with forward slashes.
func homeVariable(p string) string {
	low := strings.ToLower(p)
	for _, h := range homeVariables {
		if strings.HasPrefix(low, h) {
			rest := p[len(h):]
			if rest != "" && rest[0] != '/' && rest[0] != '\\' {
				continue // $HOMEDIR, %HOME%X: another variable
			}
			return "~" + strings.ReplaceAll(rest, `\`, "/")
		}
	}
	if strings.HasPrefix(p, `~\`) {
		return strings.ReplaceAll(p, `\`, "/")
	}
	return p
}

// procRootPath reads /proc/self/root/x, /proc/thread-self/root/x and /proc/N/root/x as /x (each
// process's root, / for the agent's), and /proc/self/cwd/x as x in the cwd.
func procRootPath(p, cwd string) string {
	rest, ok := strings.CutPrefix(path.Clean(p), "/proc/")
	if !ok {
		return p
	}
	pid, rest, _ := strings.Cut(rest, "/")
	if pid != "self" && pid != "thread-self" && strings.TrimLeft(pid, "0123456789") != "" {
		return p
	}
	what, rest, _ := strings.Cut(rest, "/")
	switch what {
	case "root":
		return "/" + rest
	case "cwd":
		if (pid == "self" || pid == "thread-self") && path.IsAbs(cwd) {
			return path.Join(cwd, rest)
		}
	}
	return p
}

// macPrivate reads macOS's /private/etc, /private/var and root's home /var/root as /etc,
// /var and /root.
func macPrivate(p string) string {
	c := path.Clean(p)
	for _, m := range [][2]string{{"/private/var/root", "/root"}, {"/var/root", "/root"}, {"/private/etc", "/etc"}, {"/private/var", "/var"}, {"/private/tmp", "/tmp"}} {
		if c == m[0] || strings.HasPrefix(c, m[0]+"/") {
			return m[1] + c[len(m[0]):]
		}
	}
	return p
}

// patchFiles are the files a patch envelope (Codex's apply_patch) or a unified diff in s
// names: added, updated, deleted and moved-to files; +++/--- and diff --git headers,
// rename/copy lines. Headers are read with blanks around them, as Codex's parser reads them.
func patchFiles(s string) []string {
	if !strings.Contains(s, "\n") || !strings.Contains(s, "*** ") && !strings.Contains(s, "+++ ") && !strings.Contains(s, "diff --git ") {
		return nil
	}
	var out []string
	for _, l := range strings.Split(s, "\n") {
		t := strings.TrimSpace(l)
		for _, h := range []string{"*** Add File:", "*** Update File:", "*** Delete File:", "*** Move to:", "+++ ", "--- ", "rename from ", "rename to ", "copy from ", "copy to "} {
			if rest, ok := strings.CutPrefix(t, h); ok {
				f := strings.TrimSpace(rest)
				if h == "+++ " || h == "--- " {
					f, _, _ = strings.Cut(f, "\t") // the timestamp
					f = strings.TrimPrefix(strings.TrimPrefix(f, "a/"), "b/")
				}
				if f != "" && f != "/dev/null" {
					out = append(out, f)
				}
			}
		}
		if rest, ok := strings.CutPrefix(t, "diff --git "); ok {
			for _, f := range strings.Fields(rest) {
				out = append(out, strings.TrimPrefix(strings.TrimPrefix(f, "a/"), "b/"))
			}
		}
	}
	return out
}
