package policy

import (
	"os"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/approvebot/approvebot/core/shell"
)

// The hardline floor refuses, in every mode and tier and whatever a human says, the handful of
// commands that destroy a machine: fork bombs, recursive deletes of / , ~ and the system
// directories, recursive chmod/chown of /, writes to raw block devices and formatting them, and
// their Windows counterparts. It reads the analysis of core/shell, so it sees through wrappers,
// substitutions, pipes into sh, eval, interpreter strings and ssh. Mentioning a command
// (echo "rm -rf /") or working inside a project (rm -rf ./build) is not refused.

// Floor rule names, reported as the decision's rule.
const (
	FloorForkBomb    = "floor.fork_bomb"
	FloorRmRoot      = "floor.rm_root"
	FloorRmHome      = "floor.rm_home"
	FloorRmSystem    = "floor.rm_system"
	FloorChmodRoot   = "floor.chmod_root"
	FloorChownRoot   = "floor.chown_root"
	FloorBlockWrite  = "floor.block_device_write"
	FloorBlockFormat = "floor.block_device_format"
	FloorWinFormat   = "floor.windows_format"
	FloorWinDelete   = "floor.windows_drive_delete"
	FloorWinRegistry = "floor.windows_registry_delete"
	FloorWinShadow   = "floor.windows_shadow_delete"
	FloorTooComplex  = "floor.too_complex"
)

const floorReasonPrefixes = "refused by the hardline floor: "

// FloorRules lists every floor rule name.
var FloorRules = []string{FloorForkBomb, FloorRmRoot, FloorRmHome, FloorRmSystem, FloorChmodRoot,
	FloorChownRoot, FloorBlockWrite, FloorBlockFormat, FloorWinFormat, FloorWinDelete, FloorWinRegistry,
	FloorWinShadow, FloorTooComplex}

// FloorHit is a floor refusal.
type FloorHit struct {
	Rule   string
	Reason string
}

// CheckFloor runs the floor over an analysis.
func CheckFloor(an *shell.Analysis) (FloorHit, bool) {
	if an.Incomplete {
		return FloorHit{FloorTooComplex, floorReasonPrefixes + "the command is too large or too deeply nested to check"}, true
	}
	if len(an.ForkBombs) > 0 {
		return FloorHit{FloorForkBomb, floorReasonPrefixes + "fork bomb (" + an.ForkBombs[0] + ")"}, true
	}
	if strings.Contains(an.Normalized, "%0|%0") || strings.Contains(an.Normalized, "%0 | %0") {
		return FloorHit{FloorForkBomb, floorReasonPrefixes + "fork bomb (%0|%0)"}, true
	}
	f := floorCtx{an: an}
	for _, s := range an.Segments {
		if h, ok := f.segment(s); ok {
			return h, true
		}
	}
	if h, ok := f.shadowAcross(); ok {
		return h, true
	}
	return FloorHit{}, false
}

type floorCtx struct {
	an *shell.Analysis
}

// resolve follows the links the command line made (ln -s / x; rm -rf x/): a path through one
// leads to its target. follow says whether the path itself is followed when it is a link
// (dd of=LINK writes the target; rm -rf LINK removes only the link).
func (f *floorCtx) resolve(p string, follow bool) string {
	for range 8 {
		changed := false
		for _, l := range f.an.Links {
			switch {
			case p == l.Path && follow:
				p, changed = l.Target, true
			case strings.HasPrefix(p, l.Path+"/"):
				p, changed = path.Clean(l.Target+p[len(l.Path):]), true
			}
		}
		if !changed {
			break
		}
	}
	return p
}

// abs makes p absolute for segment s, through the links of the command line. With the working
// directory unknown, a path that climbs out of it with ".." may be anywhere up to /: it is
// read as if the start were one level below /.
func (f *floorCtx) abs(p string, s *shell.Segment, follow bool) string {
	if p == "" {
		return ""
	}
	trailing := strings.HasSuffix(p, "/") || strings.HasSuffix(p, "/.")
	cwd, cwdRel := s.Cwd, s.CwdRel
	if rel, ok := shell.UnknownCwdRel(cwd); ok {
		cwd, cwdRel = "", rel
	}
	if rel, ok := shell.UnknownCwdRel(p); ok {
		// "$PWD/.." of a request without a cwd: relative to where the line started.
		p, cwd, cwdRel = rel, "", "."
	}
	if !path.IsAbs(p) {
		switch {
		case cwd != "":
			p = cwd + "/" + p
		case cwdRel != "":
			rel := path.Join(cwdRel, p)
			if rel != ".." && !strings.HasPrefix(rel, "../") {
				return ""
			}
			for rel == ".." || strings.HasPrefix(rel, "../") {
				rel = strings.TrimPrefix(strings.TrimPrefix(rel, ".."), "/")
			}
			p = "/" + rel
		default:
			return ""
		}
	}
	p = procRoot(path.Clean(p))
	return f.resolve(p, follow || trailing)
}

func hit(rule, what string, s *shell.Segment) (FloorHit, bool) {
	return FloorHit{Rule: rule, Reason: floorReasonPrefixes + what + " (" + showSegment(s) + ")"}, true
}

// showSegment renders a segment for a reason, cut to 100 bytes.
func showSegment(s *shell.Segment) string {
	var b strings.Builder
	for i, a := range s.Args {
		if i > 0 {
			b.WriteByte(' ')
		}
		v := a.Value
		if s.Windows || v == "" {
			v = a.Raw
		}
		if rel, ok := shell.UnknownCwdRel(v); ok {
			v = "$PWD/" + rel // the request has no cwd
		}
		b.WriteString(v)
		if b.Len() > 100 {
			break
		}
	}
	out := b.String()
	if len(out) > 100 {
		out = out[:97] + "..."
	}
	if s.Origin != "" {
		out += ", via " + s.Origin
	} else if len(s.Wrappers) > 0 {
		out += ", via " + strings.Join(s.Wrappers, " > ")
	}
	return out
}

func (f *floorCtx) segment(s *shell.Segment) (FloorHit, bool) {
	for _, w := range s.Writes {
		if !w.Known {
			continue
		}
		if w.Pattern != "" && f.blockDevicePattern(w.Pattern, s) || isBlockDevice(f.abs(w.Target, s, true)) {
			return hit(FloorBlockWrite, "write to the raw block device "+w.Target, s)
		}
	}
	if len(s.Args) == 0 {
		return FloorHit{}, false
	}
	if s.Windows {
		return windowsFloor(s, false)
	}
	name := s.Base()
	var h FloorHit
	ok := false
	switch {
	case name == "rm":
		h, ok = f.rm(s)
	case name == "find":
		h, ok = f.find(s)
	case name == "chmod" || name == "chown" || name == "chgrp":
		h, ok = f.perm(s, name)
	case name == "rsync":
		h, ok = f.rsync(s)
	case name == "dd" || name == "tee" || name == "cp" || name == "ddrescue" || name == "install":
		h, ok = f.deviceWrite(s, name)
	case strings.HasPrefix(name, "mkfs") || name == "mke2fs" || name == "mkswap" || name == "mkntfs" ||
		name == "mkdosfs" || name == "mkexfatfs" || name == "wipefs" || name == "shred" || name == "blkdiscard" ||
		name == "sgdisk" || name == "sfdisk" || name == "cryptsetup" || name == "nvme" || name == "badblocks" ||
		name == "hdparm" || name == "parted" || name == "mdadm" || name == "fdisk" || name == "gdisk" ||
		name == "cgdisk" || name == "zpool" || name == "pvcreate" || name == "mkudffs" || strings.HasPrefix(name, "newfs") ||
		name == "sg_format" || name == "sg_sanitize" || name == "sg_unmap" || name == "sg_write_same" ||
		name == "pvremove" || name == "vgcreate" || name == "vgextend":
		h, ok = f.deviceFormat(s, name)
	case name == "diskutil":
		h, ok = diskutil(s)
	case name == "vgremove" || name == "lvremove" || name == "lvreduce":
		h, ok = lvmRemove(s, name)
	case name == "truncate" || name == "shred":
		h, ok = f.everyFile(s, name, s.Args[1:])
	}
	if !ok && name == "shred" {
		h, ok = f.everyFile(s, name, s.Args[1:])
	}
	if ok {
		return h, true
	}
	switch name {
	case "unlink", "shred", "srm", "rmdir":
		if f.fromFind(s) {
			return hit(FloorRmRoot, "deletes everything find lists under a protected directory", s)
		}
	}
	// Windows commands that reached a POSIX shell (a Windows agent's shell tool).
	return windowsFloor(s, true)
}

func argValues(args []shell.Arg) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a.Value
	}
	return out
}

// procRoot maps /proc/self/root/x (and /proc/<pid>/root/x) to /x: the same file.
func procRoot(p string) string {
	for strings.HasPrefix(p, "/proc/") {
		rest := p[len("/proc/"):]
		i := strings.IndexByte(rest, '/')
		if i <= 0 || !strings.HasPrefix(rest[i:], "/root") || len(rest) > i+5 && rest[i+5] != '/' {
			return p
		}
		p = path.Clean("/" + rest[i+5:])
	}
	return p
}

// target is how bad deleting a path would be.
type target uint8

const (
	targetNone target = iota
	targetHome
	targetSystem
	targetRoot
)

// systemDirs are the top-level system directories (and the few below /usr that are as
// vital), plus macOS's.
var systemDirs = map[string]bool{
	"/bin": true, "/boot": true, "/dev": true, "/etc": true, "/home": true, "/proc": true, "/root": true,
	"/sbin": true, "/sys": true, "/usr": true, "/var": true, "/lib": true, "/lib32": true, "/lib64": true,
	"/libx32": true, "/usr/bin": true, "/usr/sbin": true, "/usr/lib": true, "/usr/lib32": true,
	"/usr/lib64": true, "/usr/libexec": true, "/usr/include": true, "/usr/share": true,
	"/System": true, "/Library": true, "/Applications": true, "/Users": true, "/private": true,
	"/private/etc": true, "/private/var": true,
}

// systemCandidates are what globs are matched against.
var systemCandidates = func() []string {
	out := make([]string, 0, len(systemDirs))
	for d := range systemDirs {
		out = append(out, d)
	}
	return out
}()

// systemDirsFold are the system directories in lower case: on a case-insensitive file system
// (macOS, Windows) /ETC is /etc.
var systemDirsFold = func() map[string]bool {
	m := make(map[string]bool, len(systemDirs))
	for d := range systemDirs {
		m[strings.ToLower(d)] = true
	}
	return m
}()

func classify(p, home string) target {
	switch {
	case p == "/":
		return targetRoot
	case home != "" && strings.EqualFold(p, home):
		return targetHome
	}
	l := strings.ToLower(p)
	switch {
	case systemDirsFold[l], l == "/var/root", l == "/private/var/root":
		return targetSystem
	case strings.HasPrefix(l, "/lib") && strings.IndexByte(l[1:], '/') < 0:
		return targetSystem
	case otherHome(l):
		return targetHome
	}
	if _, ok := windowsMounted(p); ok {
		return targetSystem
	}
	return targetNone
}

// otherHome reports a home directory: /home/NAME or /Users/NAME (another user's as much as
// the agent's own).
func otherHome(l string) bool {
	for _, base := range []string{"/home/", "/users/"} {
		if rest, ok := strings.CutPrefix(l, base); ok && rest != "" && !strings.Contains(rest, "/") && rest != "." && rest != ".." {
			return true
		}
	}
	return false
}

// windowsMounted reports a Windows drive mounted into a POSIX tree (/c, /mnt/c, /cygdrive/c)
// or one of its system directories (/mnt/c/Windows): the Windows path it is, when the
// Windows floor protects that path.
func windowsMounted(p string) (string, bool) {
	rest := p
	switch {
	case strings.HasPrefix(rest, "/mnt/"):
		rest = rest[len("/mnt"):]
	case strings.HasPrefix(rest, "/cygdrive/"):
		rest = rest[len("/cygdrive"):]
	}
	if len(rest) < 2 || rest[0] != '/' || !(rest[1] >= 'a' && rest[1] <= 'z' || rest[1] >= 'A' && rest[1] <= 'Z') ||
		len(rest) > 2 && rest[2] != '/' {
		return "", false
	}
	win := rest[1:2] + ":" + strings.ReplaceAll(rest[2:], "/", `\`)
	if win[len(win)-1] == ':' {
		win += `\`
	}
	if _, ok := windowsTarget(win); ok {
		return win, true
	}
	return "", false
}

// classifyArg says what deleting the argument would hit. Arguments whose value is only partly
// known count when their known part starts with "/" and what is left is / or a system directory
// (rm -rf /$UNSET); never for the home directory, where "$HOME/$DIR" is everyday use.
func (f *floorCtx) classifyArg(a shell.Arg, s *shell.Segment) target {
	switch {
	case a.Known:
		if a.Pattern != "" {
			p := f.abs(a.Pattern, s, false)
			if p == "" {
				return targetNone
			}
			// The part before the first glob may run through a link.
			if i := strings.IndexAny(p, `*?[\@!+`); i > 0 {
				if j := strings.LastIndexByte(p[:i], '/'); j > 0 {
					p = f.resolve(p[:j], true) + p[j:]
				}
			}
			return classifyGlob(p, s.Home)
		}
		p := f.abs(a.Value, s, false)
		if p == "" {
			return targetNone
		}
		return classify(p, s.Home)
	case a.Prefix > 0 && strings.HasPrefix(a.Value, "/"):
		pre := a.Value[:a.Prefix]
		if sfx := a.Value[len(a.Value)-a.Suffix:]; a.Suffix > 0 && a.Suffix <= len(a.Value)-a.Prefix {
			if elems, ok := pathTail(sfx); ok {
				// /$X/build: whatever $X is, the path ends in build, which only a protected
				// directory of that name (under pre) could be.
				return unknownMiddle(procRoot(path.Clean(pre)), elems)
			}
		}
		p := procRoot(path.Clean(pre))
		if p == s.Home {
			return targetNone
		}
		if t := classify(p, ""); t == targetRoot || t == targetSystem {
			return t
		}
	}
	return targetNone
}

// pathTail returns the elements a path's known end adds ("/build" is [build]); ok is false
// when it adds none or climbs (/.., /.).
func pathTail(sfx string) ([]string, bool) {
	var out []string
	for _, e := range strings.Split(sfx, "/") {
		switch e {
		case "", ".":
			continue
		case "..":
			return nil, false
		}
		out = append(out, e)
	}
	return out, len(out) > 0
}

// unknownMiddle classifies PRE/$UNKNOWN/TAIL: the system directories under pre that end in
// tail.
func unknownMiddle(pre string, tail []string) target {
	end := "/" + strings.ToLower(strings.Join(tail, "/"))
	pre = strings.ToLower(strings.TrimSuffix(pre, "/"))
	for d := range systemDirsFold {
		if strings.HasSuffix(d, end) && strings.HasPrefix(d, pre+"/") {
			return targetSystem
		}
	}
	return targetNone
}

// globMatch matches an absolute pattern against an absolute path element by element: "*" and
// friends never cross "/", and bash's extended globs (@(…), !(…), *(…), +(…), ?(…)) are
// understood, !(…) as "anything" (it matches nearly every name).
func floorGlobMatch(pattern, name string) bool {
	pe := strings.Split(strings.TrimPrefix(pattern, "/"), "/")
	ne := strings.Split(strings.TrimPrefix(name, "/"), "/")
	if len(pe) != len(ne) {
		return false
	}
	for i := range pe {
		if !elemMatch(pe[i], ne[i]) {
			return false
		}
	}
	return true
}

// elemMatch matches one path element against a glob with extended globs.
func elemMatch(p, s string) bool {
	if !strings.Contains(p, "(") {
		return shell.Match(p, s)
	}
	re, err := regexp.Compile("^(?:" + extglobRegexp(p) + ")$")
	if err != nil {
		return true // a pattern that cannot be read matches anything, for the floor
	}
	return re.MatchString(s)
}

// extglobRegexp translates one path element of a bash glob with extended globs to a regular
// expression: *, ?, […] with POSIX classes, \ escapes, @(a|b), ?(…), *(…), +(…), and !(…)
// read as anything (it matches nearly every name).
func extglobRegexp(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		if i+1 < len(p) && p[i+1] == '(' && strings.IndexByte("@?*+!", c) >= 0 {
			end, depth := i+2, 1
			for end < len(p) && depth > 0 {
				switch p[end] {
				case '(':
					depth++
				case ')':
					depth--
				case '\\':
					end++
				}
				end++
			}
			if depth != 0 {
				b.WriteString(regexp.QuoteMeta(p[i:]))
				return b.String()
			}
			if c == '!' {
				b.WriteString(".*")
			} else {
				var alts []string
				for _, a := range splitAlts(p[i+2 : end-1]) {
					alts = append(alts, extglobRegexp(a))
				}
				b.WriteString("(?:" + strings.Join(alts, "|") + ")")
				switch c {
				case '?':
					b.WriteByte('?')
				case '*':
					b.WriteByte('*')
				case '+':
					b.WriteByte('+')
				}
			}
			i = end - 1
			continue
		}
		switch c {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteByte('.')
		case '\\':
			if i+1 < len(p) {
				i++
				b.WriteString(regexp.QuoteMeta(p[i : i+1]))
			}
		case '[':
			j := strings.IndexByte(p[i+1:], ']')
			if j < 0 {
				b.WriteString(`\[`)
				continue
			}
			if j == 0 { // []…] has ] as its first member
				if k := strings.IndexByte(p[i+2:], ']'); k >= 0 {
					j = k + 1
				}
			}
			for strings.Contains(p[i+1:i+1+j], "[:") && !strings.Contains(p[i+1:i+1+j], ":]") && i+1+j < len(p) {
				k := strings.IndexByte(p[i+2+j:], ']')
				if k < 0 {
					break
				}
				j += k + 1
			}
			class := p[i+1 : i+1+j]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += j + 1
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	return b.String()
}

// classifyGlob matches a glob pattern (cleaned, absolute) against the protected paths: the
// pattern itself, or a prefix of it followed only by "*" elements (/*, /etc/*, ~/*, /*/*), or
// the home directory's hidden files wholesale (~/.*: every configuration, key and history).
func classifyGlob(p, home string) target {
	elems := strings.Split(strings.TrimPrefix(p, "/"), "/")
	worst := targetNone
	consider := func(t target) {
		if t > worst {
			worst = t
		}
	}
	everything := func(es []string) bool {
		for _, e := range es {
			if e == "" || strings.Trim(e, "*") != "" && !(strings.HasPrefix(e, "!(") && strings.HasSuffix(e, ")")) {
				return false
			}
		}
		return true
	}
	if everything(elems) {
		return targetRoot
	}
	for k := 1; k <= len(elems); k++ {
		prefix := "/" + strings.Join(elems[:k], "/")
		if !everything(elems[k:]) {
			if home != "" && k == len(elems)-1 && dotGlobAll(elems[k]) && floorGlobMatch(prefix, home) {
				consider(targetHome)
			}
			continue
		}
		if !strings.ContainsAny(prefix, `*?[\@!+`) {
			consider(classify(prefix, home))
			continue
		}
		if floorGlobMatch(prefix, "/") {
			consider(targetRoot)
		}
		if home != "" && floorGlobMatch(prefix, home) {
			consider(targetHome)
		}
		for _, c := range systemCandidates {
			if floorGlobMatch(prefix, c) {
				consider(targetSystem)
				break
			}
		}
	}
	return worst
}

// dotGlobAll reports a pattern that matches a directory's hidden files wholesale (.*, .[!.]*,
// .??*), not a few of them (.cache*).
func dotGlobAll(e string) bool {
	if !strings.HasPrefix(e, ".") {
		return false
	}
	for _, n := range []string{".ssh", ".bashrc", ".config", ".gnupg", ".profile"} {
		if !elemMatch(e, n) {
			return false
		}
	}
	return true
}

// rmRule names the rule and says what is deleted.
func rmRule(t target, a shell.Arg) (string, string) {
	switch t {
	case targetRoot:
		return FloorRmRoot, "recursive delete of /"
	case targetHome:
		return FloorRmHome, "recursive delete of the home directory"
	}
	return FloorRmSystem, "recursive delete of the system directory " + display(a)
}

func (f *floorCtx) rm(s *shell.Segment) (FloorHit, bool) {
	recursive := false
	var ops []shell.Arg
	end := false
	for _, a := range s.Args[1:] {
		v := a.Value
		if !end && a.Known && len(v) > 1 && v[0] == '-' {
			switch {
			case v == "--":
				end = true
			case strings.HasPrefix(v, "--"):
				if name := v[2:]; strings.HasPrefix("recursive", name) {
					recursive = true
				}
			case strings.ContainsAny(v[1:], "rR"):
				recursive = true
			}
			continue
		}
		ops = append(ops, a)
	}
	if f.fromFind(s) {
		return hit(FloorRmRoot, "deletes everything find lists under a protected directory", s)
	}
	if !recursive {
		return f.everyFile(s, "rm", ops)
	}
	for _, a := range ops {
		if t := f.classifyArg(a, s); t != targetNone {
			rule, what := rmRule(t, a)
			return hit(rule, what, s)
		}
	}
	return FloorHit{}, false
}

// everyFile catches a command that destroys files one by one (rm without -r, truncate, shred)
// given a glob for every file of / or a system directory (rm /etc/*, truncate -s 0 /*/*).
func (f *floorCtx) everyFile(s *shell.Segment, name string, ops []shell.Arg) (FloorHit, bool) {
	for _, a := range ops {
		if !a.Known || a.Pattern == "" {
			continue
		}
		if t := f.classifyArg(a, s); t == targetRoot || t == targetSystem {
			return hit(FloorRmSystem, name+" of every file in "+display(a), s)
		}
	}
	return FloorHit{}, false
}

func display(a shell.Arg) string {
	if a.Value == "" {
		return a.Raw
	}
	return a.Value
}

// findInfo is what a find command starts from and does.
type findInfo struct {
	starts   []shell.Arg
	narrowed bool
	deletes  bool
	perms    string // chmod, chown or chgrp run on everything found
}

// Names, paths and owners find is matched against to tell a predicate that selects a subset
// from one that matches (nearly) everything: find / -name '*' -delete is find / -delete.
var (
	findProbeNames = []string{"etc", "bin", "usr", "lib", "passwd", "sda", "x", "readme", "libc.so.6"}
	findProbePaths = []string{"/etc/passwd", "/usr/bin/ls", "/home/u/x", "/bin", "/lib/libc.so.6"}
)

// findNarrows reports whether a find test selects a subset of what is under the start paths.
// value is its argument.
func findNarrows(test, value string) bool {
	all := func(probes []string, match func(string) bool) bool {
		for _, p := range probes {
			if !match(p) {
				return false
			}
		}
		return true
	}
	switch test {
	case "-name", "-iname":
		pat := value
		if test == "-iname" {
			pat = strings.ToLower(pat)
		}
		return !all(findProbeNames, func(n string) bool {
			if test == "-iname" {
				n = strings.ToLower(n)
			}
			return shell.Match(pat, n)
		})
	case "-path", "-ipath", "-wholename", "-iwholename":
		return !all(findProbePaths, func(p string) bool { return shell.Match(value, p) })
	case "-regex", "-iregex":
		flags := ""
		if test == "-iregex" {
			flags = "(?i)"
		}
		re, err := regexp.Compile(flags + "^(?:" + value + ")$")
		if err != nil {
			return true
		}
		return !all(findProbePaths, re.MatchString)
	case "-user", "-group", "-uid", "-gid":
		return value != "root" && value != "0" && value != "wheel"
	case "-size":
		if strings.HasPrefix(value, "-") {
			return false // everything smaller than: nearly every file
		}
		if strings.HasPrefix(value, "+") {
			return findSizeBytes(value[1:]) >= 1<<20
		}
		return true
	case "-perm":
		return strings.Trim(strings.TrimLeft(value, "-/+"), "0") != ""
	case "-links":
		return value != "+0" && value != "-1000000"
	case "-maxdepth":
		return value == "0"
	}
	return true
}

// findSizeBytes reads a find -size value (N[cwbkMG], 512-byte blocks by default) in bytes.
func findSizeBytes(v string) int64 {
	unit := int64(512)
	if v != "" {
		switch v[len(v)-1] {
		case 'c':
			unit = 1
		case 'w':
			unit = 2
		case 'b':
			unit = 512
		case 'k':
			unit = 1 << 10
		case 'M':
			unit = 1 << 20
		case 'G':
			unit = 1 << 30
		}
		if unit != 512 || v[len(v)-1] == 'b' {
			v = v[:len(v)-1]
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 1 << 62
	}
	return n * unit
}

// findTests take a value; findDeleters are the commands that destroy what find hands them.
var findTests = map[string]bool{
	"-name": true, "-iname": true, "-path": true, "-ipath": true, "-wholename": true, "-iwholename": true,
	"-regex": true, "-iregex": true, "-lname": true, "-ilname": true, "-inum": true, "-samefile": true,
	"-user": true, "-uid": true, "-group": true, "-gid": true, "-size": true, "-links": true, "-perm": true,
	"-maxdepth": true, "-newer": true, "-anewer": true, "-cnewer": true,
}

var findDeleterRE = regexp.MustCompile(`(^|[\s/;&|(])(rm|unlink|shred|srm|rmdir|truncate|wipe)(\s|$)`)

func parseFind(args []shell.Arg) findInfo {
	var fi findInfo
	i := 1
	for i < len(args) {
		v := args[i].Value
		switch {
		case v == "-H" || v == "-L" || v == "-P":
			i++
			continue
		case v == "-D":
			i += 2
			continue
		case strings.HasPrefix(v, "-O"):
			i++
			continue
		}
		break
	}
	for i < len(args) {
		v := args[i].Value
		if strings.HasPrefix(v, "-") && v != "-" || v == "(" || v == "!" || v == ")" || v == "," {
			break
		}
		fi.starts = append(fi.starts, args[i])
		i++
	}
	if len(fi.starts) == 0 {
		fi.starts = []shell.Arg{{Value: ".", Raw: ".", Known: true, Static: true, Prefix: 1}}
	}
	negated := false
	for ; i < len(args); i++ {
		v := args[i].Value
		switch {
		case v == "-delete":
			fi.deletes = true
		case v == "-exec" || v == "-execdir" || v == "-ok" || v == "-okdir":
			var words []string
			for i+1 < len(args) && args[i+1].Value != ";" && args[i+1].Value != "+" {
				i++
				words = append(words, args[i].Value)
			}
			if len(words) > 0 && findDeleterRE.MatchString(strings.Join(words, " ")) {
				fi.deletes = true
			}
			if len(words) > 0 {
				switch b := shell.Base(words[0]); b {
				case "chmod", "chown", "chgrp":
					fi.perms = b
				}
			}
			i++
		case v == "-o" || v == "-or" || v == "," || v == "!" || v == "-not":
			negated = true
		case strings.HasPrefix(v, "-newer") || v == "-empty" || v == "-nouser" || v == "-nogroup":
			fi.narrowed = true
			if strings.HasPrefix(v, "-newer") {
				i++
			}
		case findTests[v]:
			if i+1 < len(args) {
				i++
				if findNarrows(v, args[i].Value) {
					fi.narrowed = true
				}
			}
		}
	}
	if negated {
		fi.narrowed = false
	}
	return fi
}

func (f *floorCtx) find(s *shell.Segment) (FloorHit, bool) {
	fi := parseFind(s.Args)
	if fi.narrowed {
		return FloorHit{}, false
	}
	if fi.perms != "" && !fi.deletes {
		// find / -exec chmod 000 {} + is chmod -R 000 /.
		for _, a := range fi.starts {
			if t := f.classifyArg(a, s); t == targetRoot || t == targetSystem {
				rule := FloorChmodRoot
				if fi.perms != "chmod" {
					rule = FloorChownRoot
				}
				return hit(rule, "recursive "+fi.perms+" of "+display(a)+" with find", s)
			}
		}
		return FloorHit{}, false
	}
	if !fi.deletes {
		return FloorHit{}, false
	}
	for _, a := range fi.starts {
		if t := f.classifyArg(a, s); t != targetNone {
			rule, what := rmRule(t, a)
			return hit(rule, what+" with find", s)
		}
	}
	return FloorHit{}, false
}

// fromFind reports a delete command run by xargs on what an unfiltered find of a protected
// directory lists (find / | xargs rm -rf).
func (f *floorCtx) fromFind(s *shell.Segment) bool {
	if s.Pipe == 0 || s.PipePos == 0 {
		return false
	}
	viaXargs := false
	for _, w := range s.Wrappers {
		if w == "xargs" {
			viaXargs = true
		}
	}
	if !viaXargs {
		return false
	}
	for _, p := range f.an.Segments {
		if p.Pipe != s.Pipe || p.PipePos != s.PipePos-1 || len(p.Args) == 0 || p.Base() != "find" {
			continue
		}
		fi := parseFind(p.Args)
		if fi.narrowed {
			continue
		}
		for _, a := range fi.starts {
			if f.classifyArg(a, p) != targetNone {
				return true
			}
		}
	}
	return false
}

func (f *floorCtx) perm(s *shell.Segment, name string) (FloorHit, bool) {
	recursive := false
	var ops []shell.Arg
	reference := false
	end := false
	for _, a := range s.Args[1:] {
		v := a.Value
		if !end && a.Known && len(v) > 1 && v[0] == '-' && !(name == "chmod" && isModeLike(v)) {
			switch {
			case v == "--":
				end = true
			case strings.HasPrefix(v, "--"):
				n, _, _ := strings.Cut(v[2:], "=")
				if strings.HasPrefix("recursive", n) {
					recursive = true
				}
				if strings.HasPrefix(n, "reference") {
					reference = true
				}
			case strings.ContainsRune(v[1:], 'R'):
				recursive = true
			}
			continue
		}
		ops = append(ops, a)
	}
	if !recursive {
		return FloorHit{}, false
	}
	mode := ""
	if !reference && len(ops) > 0 {
		mode = ops[0].Value
		ops = ops[1:] // the mode or owner
	}
	rule := FloorChmodRoot
	if name != "chmod" {
		rule = FloorChownRoot
	}
	for _, a := range ops {
		t := f.classifyArg(a, s)
		switch {
		case t == targetRoot || t == targetSystem:
			what := "recursive " + name + " of /"
			if t == targetSystem {
				what = "recursive " + name + " of a system directory " + display(a)
			}
			return hit(rule, what, s)
		case t == targetHome && name == "chmod" && lockingMode(mode):
			// chmod -R 000 ~: every directory of the home, the keys and configuration in it,
			// locked against their owner.
			return hit(rule, "recursive chmod "+mode+" of the home directory", s)
		}
	}
	return FloorHit{}, false
}

// lockingMode reports a chmod mode that takes read or search permission from the owner of
// every directory it is applied to (000, 600, 644, u-x, a=, go+r… is not one).
func lockingMode(m string) bool {
	if m == "" {
		return false
	}
	if n, err := strconv.ParseUint(m, 8, 32); err == nil {
		owner := (n >> 6) & 7
		return owner&5 != 5
	}
	for _, clause := range strings.Split(m, ",") {
		i := 0
		for i < len(clause) && strings.IndexByte("ugoa", clause[i]) >= 0 {
			i++
		}
		who := clause[:i]
		owner := who == "" || strings.ContainsAny(who, "ua")
		for i < len(clause) {
			op := clause[i]
			j := i + 1
			for j < len(clause) && strings.IndexByte("rwxXstugo", clause[j]) >= 0 {
				j++
			}
			perms := clause[i+1 : j]
			switch {
			case !owner:
			case op == '-' && strings.ContainsAny(perms, "rxX"):
				return true
			case op == '=' && (!strings.ContainsRune(perms, 'r') || !strings.ContainsAny(perms, "xX")):
				return true
			}
			i = j
		}
	}
	return false
}

// isModeLike recognises symbolic chmod modes that start with "-" (chmod -R -x /).
func isModeLike(v string) bool {
	return len(v) > 1 && strings.Trim(v[1:], "rwxXst") == "" && !strings.ContainsRune(v, 'R')
}

func (f *floorCtx) rsync(s *shell.Segment) (FloorHit, bool) {
	del := false
	var ops []shell.Arg
	for _, a := range s.Args[1:] {
		if strings.HasPrefix(a.Value, "--del") {
			del = true
		}
		if !strings.HasPrefix(a.Value, "-") {
			ops = append(ops, a)
		}
	}
	if !del || len(ops) < 2 {
		return FloorHit{}, false
	}
	dst := ops[len(ops)-1]
	if strings.ContainsRune(dst.Value, ':') {
		return FloorHit{}, false
	}
	if t := f.classifyArg(dst, s); t != targetNone {
		rule, what := rmRule(t, dst)
		return hit(rule, what+" with rsync --delete", s)
	}
	return FloorHit{}, false
}

var blockDevRE = regexp.MustCompile(`^(?:sd[a-z]+[0-9]*|hd[a-z]+[0-9]*|vd[a-z]+[0-9]*|xvd[a-z]+[0-9]*|` +
	`nvme[0-9]+(?:n[0-9]+(?:p[0-9]+)?)?|mmcblk[0-9]+(?:p[0-9]+|boot[0-9]+|rpmb)?|md[0-9]+|md/.+|dm-[0-9]+|` +
	`loop[0-9]+|nbd[0-9]+|rbd[0-9]+|zd[0-9]+|bcache[0-9]+|drbd[0-9]+|sr[0-9]+|fd[0-9]+|ubd[a-z]*[0-9]*|` +
	`r?disk[0-9]+(?:s[0-9]+)*|pmem[0-9]+|zram[0-9]+|sg[0-9]+|mem|kmem|port|root|disk/.+|block/.+|` +
	`mapper/[^/]+|[a-z0-9_-]+vg/.+)$`)

// isBlockDevice reports a raw disk (or memory) device path.
func isBlockDevice(p string) bool {
	if !strings.HasPrefix(p, "/dev/") {
		return false
	}
	n := p[len("/dev/"):]
	switch n {
	case "null", "zero", "full", "random", "urandom", "tty", "stdin", "stdout", "stderr", "ptmx", "console",
		"kmsg", "log", "mapper/control":
		return false
	}
	if strings.HasPrefix(n, "fd/") || strings.HasPrefix(n, "pts/") || strings.HasPrefix(n, "shm/") ||
		strings.HasPrefix(n, "mqueue/") || strings.HasPrefix(n, "tty") || strings.HasPrefix(n, "hugepages/") {
		return false
	}
	if blockDevRE.MatchString(n) {
		return true
	}
	if vg, lv, ok := strings.Cut(n, "/"); ok && lv != "" && !strings.Contains(lv, "/") && !charDeviceDirs[vg] {
		return true // /dev/VG/LV: an LVM logical volume
	}
	fi, err := os.Stat(p)
	return err == nil && fi.Mode()&os.ModeDevice != 0 && fi.Mode()&os.ModeCharDevice == 0
}

// charDeviceDirs are the directories of /dev that hold no disks.
var charDeviceDirs = map[string]bool{
	"fd": true, "pts": true, "shm": true, "mqueue": true, "hugepages": true, "net": true, "snd": true, "input": true,
	"dri": true, "bus": true, "char": true, "cpu": true, "usb": true, "serial": true, "v4l": true, "vfio": true,
	"dma_heap": true, "xen": true, "tty": true, "vhost": true, "hidraw": true, "gpiochip": true, "bsg": true,
}

// deviceWrite catches dd of=, tee, cp and ddrescue onto a block device.
func (f *floorCtx) deviceWrite(s *shell.Segment, name string) (FloorHit, bool) {
	var ops []shell.Arg
	target := ""
	end := false
	for i := 1; i < len(s.Args); i++ {
		a := s.Args[i]
		v := a.Value
		if name == "dd" {
			if strings.HasPrefix(v, "of=") && f.blockDeviceArg(shell.Arg{Value: v[3:], Known: a.Known, Pattern: strings.TrimPrefix(a.Pattern, "of=")}, s) {
				return hit(FloorBlockWrite, "dd onto the raw block device "+v[3:], s)
			}
			continue
		}
		if !end && len(v) > 1 && v[0] == '-' {
			switch {
			case v == "--":
				end = true
			case v == "-t" && i+1 < len(s.Args):
				i++
				target = s.Args[i].Value
			case strings.HasPrefix(v, "--target-directory="):
				target = strings.TrimPrefix(v, "--target-directory=")
			case v == "-S" || v == "--suffix":
				i++
			}
			continue
		}
		ops = append(ops, a)
	}
	var dests []shell.Arg
	switch name {
	case "tee":
		dests = ops
	case "cp", "install":
		if target != "" {
			dests = append(dests, shell.Arg{Value: target, Known: true})
		} else if len(ops) >= 2 {
			dests = append(dests, ops[len(ops)-1])
		}
	case "ddrescue":
		if len(ops) >= 2 {
			dests = append(dests, ops[1])
		}
	}
	for _, d := range dests {
		if f.blockDeviceArg(d, s) {
			return hit(FloorBlockWrite, name+" onto the raw block device "+d.Value, s)
		}
	}
	return FloorHit{}, false
}

// deviceFormat catches mkfs, wipefs, shred, blkdiscard and friends on block devices (not on
// image files).
func (f *floorCtx) deviceFormat(s *shell.Segment, name string) (FloorHit, bool) {
	argv := argValues(s.Args)
	has := func(opts ...string) bool {
		for _, a := range argv[1:] {
			for _, o := range opts {
				if a == o || strings.HasPrefix(o, "--") && strings.HasPrefix(a, o+"=") {
					return true
				}
			}
		}
		return false
	}
	switch name {
	case "wipefs":
		if !wipefsErases(s.Args) {
			return FloorHit{}, false
		}
	case "fdisk", "gdisk", "cgdisk":
		// Interactive tools: harmful only when fed a write ("w" on a line of its own).
		if !feedsWrite(s) {
			return FloorHit{}, false
		}
	case "sgdisk":
		// Every option that is not a report writes the partition table.
		if readOnlyOptions(argv[1:], sgdiskReads, "bipOrv") || has("-P", "--pretend") {
			return FloorHit{}, false
		}
	case "sfdisk":
		reports := has("-l", "--list", "-d", "--dump", "-s", "--show-size", "-V", "--verify", "-J", "--json", "-g",
			"--show-geometry", "-F", "--list-free")
		writes := has("-r", "--reorder", "--delete", "--relocate", "--move-data", "-N", "--partno", "-a", "--append")
		if has("-n", "--no-act") || reports && !writes {
			return FloorHit{}, false
		}
	case "cryptsetup":
		if !has("luksFormat", "erase", "luksErase", "reencrypt") {
			return FloorHit{}, false
		}
	case "nvme":
		if !has("format", "sanitize", "write-zeroes") {
			return FloorHit{}, false
		}
	case "badblocks":
		if !shortFlag(s.Args, 'w', "bcdeiopt") {
			return FloorHit{}, false // the read-only test
		}
	case "sg_format":
		if !has("--format", "-F") && !shortFlag(s.Args, 'F', "cefmpPqtwxy") {
			return FloorHit{}, false
		}
	case "mkfs.ext2", "mkfs.ext3", "mkfs.ext4", "mke2fs", "mkfs":
		if shortFlag(s.Args, 'n', "bcCdDeEgGiIjJlLmMNoOrsStTUz") && (name != "mkfs" || mkfsType(argv) == "ext") {
			return FloorHit{}, false // -n: what it would do, without doing it
		}
	case "mkfs.xfs":
		if shortFlag(s.Args, 'N', "bdilLmnprsd") {
			return FloorHit{}, false
		}
	case "hdparm":
		ok := false
		for _, a := range argv[1:] {
			if strings.HasPrefix(a, "--security-erase") || a == "--write-sector" || a == "--trim-sector-ranges" {
				ok = true
			}
		}
		if !ok {
			return FloorHit{}, false
		}
	case "parted":
		if !has("mklabel", "mktable", "mkpart", "rm", "resizepart") && !(s.Input == shell.InputText &&
			containsWord(s.InputText, "mklabel", "mktable", "mkpart", "rm", "resizepart")) {
			return FloorHit{}, false
		}
	case "zpool":
		if !has("create", "destroy", "labelclear") {
			return FloorHit{}, false
		}
	case "mdadm":
		if !has("--zero-superblock", "--create", "-C") {
			return FloorHit{}, false
		}
	}
	for _, a := range s.Args[1:] {
		v := a.Value
		if strings.HasPrefix(v, "-") || !a.Known {
			continue
		}
		if f.blockDeviceArg(a, s) {
			return hit(FloorBlockFormat, name+" on the raw block device "+v, s)
		}
	}
	return FloorHit{}, false
}

// sgdiskReads are sgdisk's options that only report.
var sgdiskReads = []string{"-p", "--print", "-v", "--verify", "-i", "--info", "-L", "--list-types", "-O", "--print-mbr",
	"-b", "--backup", "-V", "--version", "-?", "--help", "--usage", "-D", "--display-alignment", "-E", "--end-of-largest",
	"-f", "--first-in-largest", "-F", "--first-aligned-in-largest", "-a", "--set-alignment"}

// readOnlyOptions reports an option list made only of the given report options (with their
// values: withArg are the short ones that take one).
func readOnlyOptions(args []string, reads []string, withArg string) bool {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, _, hasVal := strings.Cut(a, "=")
		if !hasName(reads, name) {
			return false
		}
		if !hasVal && len(name) == 2 && strings.IndexByte(withArg, name[1]) >= 0 {
			i++
		}
	}
	return true
}

func hasName(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// shortFlag reports the short option letter c in the option clusters of args (-wsv has w),
// stopping a cluster at a letter of withArg, which takes the rest as its value.
func shortFlag(args []shell.Arg, c byte, withArg string) bool {
	for _, a := range args[1:] {
		v := a.Value
		if v == "--" {
			return false
		}
		if len(v) < 2 || v[0] != '-' || v[1] == '-' {
			continue
		}
		for j := 1; j < len(v); j++ {
			if v[j] == c {
				return true
			}
			if strings.IndexByte(withArg, v[j]) >= 0 {
				break
			}
		}
	}
	return false
}

// mkfsType is the file system type mkfs -t names ("ext" for ext2, ext3 and ext4).
func mkfsType(argv []string) string {
	for i, a := range argv {
		t := ""
		switch {
		case a == "-t" && i+1 < len(argv):
			t = argv[i+1]
		case strings.HasPrefix(a, "--type="):
			t = a[len("--type="):]
		case strings.HasPrefix(a, "-t") && len(a) > 2:
			t = a[2:]
		}
		if strings.HasPrefix(t, "ext") {
			return "ext"
		}
		if t != "" {
			return t
		}
	}
	return ""
}

// diskutil's verbs that erase, zero or repartition a disk or volume: whatever they name (a
// device, a volume name, a mount point), the data is gone.
func diskutil(s *shell.Segment) (FloorHit, bool) {
	for i, a := range s.Args[1:] {
		v := strings.ToLower(a.Value)
		switch v {
		case "erasedisk", "erasevolume", "reformat", "zerodisk", "randomdisk", "secureerase", "partitiondisk",
			"splitpartition", "mergepartitions", "erasecd", "deletevolume", "deletecontainer", "deletepartition":
			return hit(FloorBlockFormat, "diskutil "+a.Value+" erases a disk", s)
		case "apfs", "cs", "corestorage", "appleraid", "ar":
			if i+2 < len(s.Args) {
				switch strings.ToLower(s.Args[i+2].Value) {
				case "deletecontainer", "deletevolume", "erasevolume", "delete", "deletelvg", "deletelv", "deletevolumegroup":
					return hit(FloorBlockFormat, "diskutil "+a.Value+" "+s.Args[i+2].Value+" erases a disk", s)
				}
			}
		}
	}
	return FloorHit{}, false
}

// lvmRemove catches vgremove, lvremove and lvreduce of any volume (not --test).
func lvmRemove(s *shell.Segment, name string) (FloorHit, bool) {
	for _, a := range s.Args[1:] {
		if a.Value == "-t" || a.Value == "--test" {
			return FloorHit{}, false
		}
	}
	for _, a := range s.Args[1:] {
		if !strings.HasPrefix(a.Value, "-") && a.Value != "" {
			return hit(FloorBlockFormat, name+" destroys the logical volumes of "+a.Value, s)
		}
	}
	return FloorHit{}, false
}

// wipefsErases reports wipefs options that erase signatures (-a, --all, -o, --offset, in
// clusters and abbreviations) without --no-act: plain wipefs only lists them.
func wipefsErases(args []shell.Arg) bool {
	erase := false
	for _, a := range args[1:] {
		v := a.Value
		if v == "--" {
			break
		}
		if strings.HasPrefix(v, "--") {
			name, _, _ := strings.Cut(v[2:], "=")
			switch {
			case name == "":
			case strings.HasPrefix("all", name):
				erase = true
			case strings.HasPrefix("offset", name) && len(name) >= 2:
				erase = true
			case strings.HasPrefix("no-act", name) && len(name) >= 2:
				return false
			}
			continue
		}
		if len(v) > 1 && v[0] == '-' {
			for _, c := range v[1:] {
				if c == 'n' {
					return false
				}
				if c == 'a' || c == 'o' {
					erase = true
				}
				if c == 'o' || c == 'O' || c == 't' || c == 'b' {
					break // the rest is the option's value
				}
			}
		}
	}
	return erase
}

// feedsWrite reports an interactive partitioning tool whose input writes the table.
func feedsWrite(s *shell.Segment) bool {
	if s.Input != shell.InputText {
		return false
	}
	for _, line := range strings.Split(s.InputText, "\n") {
		if l := strings.TrimSpace(line); l == "w" || l == "W" {
			return true
		}
	}
	return false
}

func containsWord(text string, words ...string) bool {
	for _, f := range strings.Fields(text) {
		for _, w := range words {
			if f == w {
				return true
			}
		}
	}
	return false
}

// Sample device nodes a glob over /dev is matched against.
var sampleDevices = []string{"/dev/sda", "/dev/sdb", "/dev/sda1", "/dev/hda", "/dev/vda", "/dev/xvda", "/dev/nvme0n1",
	"/dev/nvme0n1p1", "/dev/mmcblk0", "/dev/mmcblk0p1", "/dev/md0", "/dev/dm-0", "/dev/loop0", "/dev/sr0",
	"/dev/mapper/root", "/dev/disk/by-id/usb-x", "/dev/disk/by-uuid/x", "/dev/mem", "/dev/nbd0", "/dev/zd0"}

// blockDevicePattern reports a glob that matches a raw block device.
func (f *floorCtx) blockDevicePattern(pat string, s *shell.Segment) bool {
	p := pat
	if !path.IsAbs(p) {
		dir := f.abs(".", s, true)
		if dir == "" {
			return false
		}
		p = dir + "/" + p
	}
	p = path.Clean(p)
	if i := strings.IndexAny(p, `*?[\@!+`); i > 0 {
		if j := strings.LastIndexByte(p[:i], '/'); j > 0 {
			p = f.resolve(p[:j], true) + p[j:]
		}
	}
	for _, d := range sampleDevices {
		if floorGlobMatch(p, d) {
			return true
		}
	}
	return false
}

// blockDeviceArg reports an argument naming a raw block device, directly, through a link the
// command line made, or as a glob.
func (f *floorCtx) blockDeviceArg(a shell.Arg, s *shell.Segment) bool {
	if a.Pattern != "" {
		return f.blockDevicePattern(a.Pattern, s)
	}
	return a.Known && isBlockDevice(f.abs(a.Value, s, true))
}

// splitAlts splits the alternatives of an extended glob at the | outside parentheses.
func splitAlts(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
		case '|':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}
