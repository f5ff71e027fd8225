package policy

import (
	"path"
	"strings"

	"github.com/approvebot/approvebot/core/shell"
)

// The links of /proc that lead somewhere else. /proc/PID/root (and /proc/PID/task/TID/root)
// is the root directory as that process sees it: /proc/self/root/etc/shadow is /etc/shadow.
// /proc/PID/cwd, an open directory at /proc/PID/fd/N (/dev/fd/N) and /proc/PID/map_files
// lead into directories the command line does not name, and another process's open file
// (/proc/1/fd/3) is a file it does not name: a path through them could be anything, so it
// counts as sensitive under these pseudo globs.
const (
	procCwdGlob      = "/proc/*/cwd"
	procFdGlob       = "/proc/*/fd"
	procMapFilesGlob = "/proc/*/map_files"
)

// mayHaveProcLink is the cheap test before cleanProc: an element starting "proc" or "fd".
func mayHaveProcLink(p string) bool {
	for i := 0; i < len(p); i++ {
		if i > 0 && p[i-1] != '/' {
			continue
		}
		switch p[i] {
		case 'p':
			if strings.HasPrefix(p[i:], "proc") {
				return true
			}
		case 'f':
			if strings.HasPrefix(p[i:], "fd") {
				return true
			}
		}
	}
	return false
}

// cleanProc cleans an absolute path like path.Clean, reading /proc/PID/root as the root it
// aliases. through is the pseudo glob of a link the path goes through into a directory it
// does not name; at reports that the path ends on such a link (a recursive read of it reads
// that unknown directory) other than one of the command's own descriptors (a process
// substitution is no directory). /dev/fd is read as the directory it is on macOS; on Linux
// it is a link to /proc/self/fd, which linuxDevFd spells out.
func cleanProc(p string) (clean, through string, at bool) {
	if !mayHaveProcLink(p) {
		return path.Clean(p), "", false
	}
	var stack [64]string
	elems := stack[:0]
	link := ""       // the pseudo glob of the link the path is on, if any
	linkOwn := false // the link is a descriptor of the command itself (a process substitution)
	rest := p
	for rest != "" {
		var e string
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			e, rest = rest[:i], rest[i+1:]
		} else {
			e, rest = rest, ""
		}
		if e == "" || e == "." {
			continue
		}
		if link != "" {
			// Anything after the link, ".." included, is inside the unknown directory.
			return path.Clean(p), link, false
		}
		if e == ".." {
			if len(elems) > 0 {
				elems = elems[:len(elems)-1]
			}
			continue
		}
		elems = append(elems, e)
		if len(elems) == 3 && elems[0] == "dev" && elems[1] == "fd" && !stdFd(e) {
			linkOwn = true // a descriptor of the command itself: a directory only if opened so
			link = procFdGlob
			continue
		}
		if len(elems) < 3 || elems[0] != "proc" {
			continue
		}
		// /proc/PID/x or /proc/PID/task/TID/x
		k := 2
		if len(elems) >= 5 && elems[2] == "task" {
			k = 4
		}
		if len(elems) == k+1 {
			switch elems[k] {
			case "root":
				elems = elems[:0]
			case "cwd":
				link = procCwdGlob
			case "map_files":
				link = procMapFilesGlob
			}
			continue
		}
		if len(elems) == k+2 && elems[k] == "fd" {
			self := ownFds(elems[1])
			if !self || !stdFd(elems[k+1]) {
				if !self {
					// Another process's open file: what it is cannot be told.
					return path.Clean(p), procFdGlob, false
				}
				link, linkOwn = procFdGlob, true
			}
		}
	}
	if len(elems) == 0 {
		return "/", "", false
	}
	return "/" + strings.Join(elems, "/"), "", link != "" && !linkOwn
}

func stdFd(n string) bool { return n == "0" || n == "1" || n == "2" }

// linuxDevFd is p with a leading /dev/fd read as Linux's link to /proc/self/fd, when ".."
// follows it (/dev/fd/../root/etc/shadow is /etc/shadow there), or "".
func linuxDevFd(p string) string {
	i := strings.Index(p, "/dev/fd/..")
	if i < 0 {
		return ""
	}
	return p[:i] + "/proc/self/fd" + p[i+len("/dev/fd"):]
}

// procGlobAlternatives reads a shell glob (absolute, cleaned) through the /proc links: the
// globs it also stands for (/proc/[0-9]*/root/etc/shadow is /etc/shadow too), and the pseudo
// glob of a link it may go through into a directory it does not name.
func procGlobAlternatives(p string) (alts []string, through string) {
	first, _, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/")
	if first != "proc" && first != "dev" && !strings.ContainsAny(first, `*?[\@!+(`) {
		return nil, ""
	}
	todo := []string{p}
	for len(todo) > 0 && len(alts) < 8 {
		cur := todo[0]
		todo = todo[1:]
		elems := strings.Split(strings.TrimPrefix(cur, "/"), "/")
		could := func(i int, name string) bool { return i < len(elems) && globCouldBe(elems[i], name) }
		if could(0, "dev") && could(1, "fd") && len(elems) > 3 {
			through = procFdGlob // a directory opened on a descriptor
		}
		if !could(0, "proc") || len(elems) < 3 {
			continue
		}
		for _, k := range []int{2, 4} {
			if k == 4 && !could(2, "task") {
				continue
			}
			if could(k, "root") && len(elems) > k {
				alt := "/" + strings.Join(elems[k+1:], "/")
				if len(elems) == k+1 {
					alt = "/"
				}
				alts = append(alts, alt)
				todo = append(todo, alt)
			}
			switch {
			case could(k, "cwd") && len(elems) > k+1:
				through = procCwdGlob
			case could(k, "map_files") && len(elems) > k+1:
				through = procMapFilesGlob
			case could(k, "fd") && len(elems) > k+1 && (!ownFds(elems[1]) || !stdFd(elems[k+1]) || len(elems) > k+2):
				through = procFdGlob
			}
		}
	}
	return alts, through
}

// globCouldBe reports whether the glob element e could match name (case is ignored, like
// every sensitive match).
func globCouldBe(e, name string) bool {
	if !strings.ContainsAny(e, `*?[\`) && !strings.ContainsAny(e, "@!+(") {
		return strings.EqualFold(e, name)
	}
	if strings.ContainsAny(e, "@!+(") && strings.Contains(e, "(") {
		return true // extglob: anything
	}
	return shell.Match(strings.ToLower(e), name)
}

// ownFds reports the /proc element of the process itself.
func ownFds(e string) bool { return e == "self" || e == "thread-self" }

// procLinkGlob names the link a cleaned path ends on.
func procLinkGlob(full string) string {
	switch {
	case strings.HasSuffix(full, "/cwd"):
		return procCwdGlob
	case strings.HasSuffix(full, "/map_files"):
		return procMapFilesGlob
	}
	return procFdGlob
}
