package policy

import (
	"os"
	"path"
	"regexp"
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
		if w.Known && isBlockDevice(absPath(w.Target, s.Cwd)) {
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
		name == "hdparm" || name == "parted" || name == "mdadm":
		h, ok = f.deviceFormat(s, name)
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
	if s.Code != "" && codeForkBomb(s.Code) {
		return hit(FloorForkBomb, "fork bomb in "+s.Lang+" code", s)
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

func absPath(p, cwd string) string {
	if p == "" {
		return ""
	}
	if !path.IsAbs(p) {
		if cwd == "" {
			return ""
		}
		p = cwd + "/" + p
	}
	return procRoot(path.Clean(p))
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

func classify(p, home string) target {
	switch {
	case p == "/":
		return targetRoot
	case home != "" && p == home:
		return targetHome
	case systemDirs[p]:
		return targetSystem
	case strings.HasPrefix(p, "/lib") && strings.IndexByte(p[1:], '/') < 0:
		return targetSystem
	}
	return targetNone
}

// classifyArg says what deleting the argument would hit. Arguments whose value is only partly
// known count when their known part starts with "/" and what is left is / or a system directory
// (rm -rf /$UNSET); never for the home directory, where "$HOME/$DIR" is everyday use.
func classifyArg(a shell.Arg, cwd, home string) target {
	switch {
	case a.Known:
		if a.Pattern != "" {
			p := a.Pattern
			if !path.IsAbs(p) {
				if cwd == "" {
					return targetNone
				}
				p = cwd + "/" + p
			}
			return classifyGlob(procRoot(path.Clean(p)), home)
		}
		p := absPath(a.Value, cwd)
		if p == "" {
			return targetNone
		}
		return classify(p, home)
	case a.Prefix > 0 && strings.HasPrefix(a.Value, "/"):
		p := procRoot(path.Clean(a.Value))
		if p == home {
			return targetNone
		}
		if t := classify(p, ""); t == targetRoot || t == targetSystem {
			return t
		}
	}
	return targetNone
}

// classifyGlob matches a glob pattern (cleaned, absolute) against the protected paths: the
// pattern itself, or a prefix of it followed only by "*" elements (/*, /etc/*, ~/*, /*/*).
func classifyGlob(p, home string) target {
	elems := strings.Split(strings.TrimPrefix(p, "/"), "/")
	worst := targetNone
	consider := func(t target) {
		if t > worst {
			worst = t
		}
	}
	allStars := func(es []string) bool {
		for _, e := range es {
			if e == "" || strings.Trim(e, "*") != "" {
				return false
			}
		}
		return true
	}
	if allStars(elems) {
		return targetRoot
	}
	for k := 1; k <= len(elems); k++ {
		if !allStars(elems[k:]) {
			continue
		}
		prefix := "/" + strings.Join(elems[:k], "/")
		if !strings.ContainsAny(prefix, `*?[\`) {
			consider(classify(prefix, home))
			continue
		}
		if ok, _ := path.Match(prefix, "/"); ok {
			consider(targetRoot)
		}
		if home != "" {
			if ok, _ := path.Match(prefix, home); ok {
				consider(targetHome)
			}
		}
		for _, c := range systemCandidates {
			if ok, _ := path.Match(prefix, c); ok {
				consider(targetSystem)
				break
			}
		}
	}
	return worst
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
		return FloorHit{}, false
	}
	for _, a := range ops {
		if t := classifyArg(a, s.Cwd, s.Home); t != targetNone {
			rule, what := rmRule(t, a)
			return hit(rule, what, s)
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
}

// Predicates that make find select a subset of what is under its start paths.
var narrowingTests = map[string]bool{
	"-name": true, "-iname": true, "-path": true, "-ipath": true, "-wholename": true, "-iwholename": true,
	"-regex": true, "-iregex": true, "-lname": true, "-ilname": true, "-inum": true, "-samefile": true,
	"-user": true, "-uid": true, "-group": true, "-gid": true, "-size": true, "-empty": true, "-links": true,
	"-perm": true, "-nouser": true, "-nogroup": true,
}

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
			if i+1 < len(args) {
				switch shell.Base(args[i+1].Value) {
				case "rm", "unlink", "shred", "srm", "rmdir":
					fi.deletes = true
				}
			}
			for i+1 < len(args) && args[i+1].Value != ";" && args[i+1].Value != "+" {
				i++
			}
			i++
		case v == "-o" || v == "-or" || v == "," || v == "!" || v == "-not":
			negated = true
		case narrowingTests[v] || strings.HasPrefix(v, "-newer") || v == "-anewer" || v == "-cnewer":
			if i+1 < len(args) && (v == "-name" || v == "-iname" || v == "-path" || v == "-ipath" ||
				v == "-wholename" || v == "-iwholename" || v == "-regex" || v == "-iregex") {
				pat := args[i+1].Value
				if strings.Trim(pat, "*./") == "" || pat == ".*" || pat == "/*" {
					i++
					continue
				}
			}
			fi.narrowed = true
		}
	}
	if negated {
		fi.narrowed = false
	}
	return fi
}

func (f *floorCtx) find(s *shell.Segment) (FloorHit, bool) {
	fi := parseFind(s.Args)
	if !fi.deletes || fi.narrowed {
		return FloorHit{}, false
	}
	for _, a := range fi.starts {
		if t := classifyArg(a, s.Cwd, s.Home); t != targetNone {
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
			if classifyArg(a, p.Cwd, p.Home) != targetNone {
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
	if !reference && len(ops) > 0 {
		ops = ops[1:] // the mode or owner
	}
	rule := FloorChmodRoot
	if name != "chmod" {
		rule = FloorChownRoot
	}
	for _, a := range ops {
		if t := classifyArg(a, s.Cwd, s.Home); t == targetRoot || t == targetSystem {
			what := "recursive " + name + " of /"
			if t == targetSystem {
				what = "recursive " + name + " of a system directory " + display(a)
			}
			return hit(rule, what, s)
		}
	}
	return FloorHit{}, false
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
	if t := classifyArg(dst, s.Cwd, s.Home); t != targetNone {
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
	fi, err := os.Stat(p)
	return err == nil && fi.Mode()&os.ModeDevice != 0 && fi.Mode()&os.ModeCharDevice == 0
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
			if strings.HasPrefix(v, "of=") && isBlockDevice(absPath(v[3:], s.Cwd)) {
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
	var dests []string
	switch name {
	case "tee":
		for _, a := range ops {
			dests = append(dests, a.Value)
		}
	case "cp", "install":
		if target != "" {
			dests = append(dests, target)
		} else if len(ops) >= 2 {
			dests = append(dests, ops[len(ops)-1].Value)
		}
	case "ddrescue":
		if len(ops) >= 2 {
			dests = append(dests, ops[1].Value)
		}
	}
	for _, d := range dests {
		if isBlockDevice(absPath(d, s.Cwd)) {
			return hit(FloorBlockWrite, name+" onto the raw block device "+d, s)
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
		if has("-n", "--no-act") {
			return FloorHit{}, false
		}
	case "sgdisk":
		if !has("-Z", "--zap-all", "-z", "--zap", "-o", "--clear", "-n", "--new", "-d", "--delete", "-g", "--mbrtogpt", "-m", "--gpttombr") {
			return FloorHit{}, false
		}
	case "sfdisk":
		if has("-l", "--list", "-d", "--dump", "-s", "--show-size", "-V", "--verify", "-J", "--json", "-g", "--show-geometry") {
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
		if !has("-w") {
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
		if !has("mklabel", "mktable", "mkpart", "rm", "resizepart") {
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
		if isBlockDevice(absPath(v, s.Cwd)) {
			return hit(FloorBlockFormat, name+" on the raw block device "+v, s)
		}
	}
	return FloorHit{}, false
}

// codeForkBomb spots the one-liner fork bombs of scripting languages: a fork inside an endless
// loop (perl -e 'fork while fork', python while True: os.fork(), ruby loop { fork }).
func codeForkBomb(code string) bool {
	c := strings.ToLower(code)
	i := strings.Index(c, "fork")
	if i < 0 {
		return false
	}
	for _, m := range [...]string{"while", "loop", "for(;;)", "for (;;)", "until", "repeat", "redo", "goto"} {
		if strings.Contains(c, m) {
			return true
		}
	}
	return false
}
