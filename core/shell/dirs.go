package shell

import (
	"path"
	"strconv"
	"strings"
)

// The working directory as the shell keeps it: cd and pushd remember the previous directory
// ($OLDPWD, ~-, cd -), pushd and popd keep a stack (~1, ~+1, ~-1, dirs, popd), CDPATH is
// searched for a relative name. A request without a working directory has an unknown one;
// $PWD, $(pwd) and ~+ then stand for UnknownCwd, a made-up absolute path deep enough that the
// floor can tell how far "$PWD/../.." climbs from it (see UnknownCwdRel).

// unknownCwdElem is one level of UnknownCwd.
const unknownCwdElem = "\x01cwd"

// unknownCwdDepth is how many levels UnknownCwd has.
const unknownCwdDepth = 8

// UnknownCwd is what $PWD expands to when the request has no working directory.
var UnknownCwd = strings.Repeat("/"+unknownCwdElem, unknownCwdDepth)

// UnknownCwdRel turns a path made from UnknownCwd ("$PWD/../x" without a cwd) back into a
// path relative to the unknown working directory ("../x"); ok is false for any other path.
func UnknownCwdRel(p string) (string, bool) {
	if !strings.HasPrefix(p, "/"+unknownCwdElem) {
		return "", false
	}
	p = path.Clean(p)
	elems := strings.Split(strings.TrimPrefix(p, "/"), "/")
	k := 0
	for k < len(elems) && k < unknownCwdDepth && elems[k] == unknownCwdElem {
		k++
	}
	if k == 0 {
		return "", false
	}
	rel := strings.Repeat("../", unknownCwdDepth-k) + strings.Join(elems[k:], "/")
	rel = strings.TrimSuffix(rel, "/")
	if rel == "" {
		rel = "."
	}
	return rel, true
}

// dirStack is the previous directory and pushd's stack.
type dirStack struct {
	old      string // $OLDPWD ("" unknown)
	oldExact bool   // old is a directory the request told, not one under UnknownCwd
	stack    []string
	lost     bool // the stack is not known (popd of an unknown entry, an unknown pushd)
}

// pwd is the working directory: the request's cwd (exact), or a path under UnknownCwd when
// only its place relative to the start is known, or "".
func (w *walker) pwd() (string, bool) {
	switch {
	case w.cwd != "":
		return w.cwd, !strings.HasPrefix(w.cwd, "/"+unknownCwdElem)
	case w.cwdRel != "":
		return path.Join(UnknownCwd, w.cwdRel), false
	}
	return "", false
}

// pwdExpansion is $PWD, $(pwd) or ~+: the working directory, with the problem reported when
// the request did not tell it.
func (w *walker) pwdExpansion(what string) (string, bool) {
	p, exact := w.pwd()
	if p == "" {
		return "", false
	}
	if !exact {
		w.problem("%s names a working directory the request does not give", what)
	}
	return p, true
}

// cdInto changes to dir the way cd does: $OLDPWD becomes the directory left.
func (w *walker) cdInto(dir string) {
	old, exact := w.pwd()
	w.chdir(dir)
	w.dirs.old, w.dirs.oldExact = old, exact
	w.cwdVars()
}

// fullStack is dirs: the working directory, then pushd's stack.
func (w *walker) fullStack() ([]string, bool) {
	p, _ := w.pwd()
	if p == "" || w.dirs.lost {
		return nil, false
	}
	return append([]string{p}, w.dirs.stack...), true
}

// stackEntry is dirs +N (~N, ~+N) or dirs -N (~-N).
func (w *walker) stackEntry(spec string) (string, bool) {
	full, ok := w.fullStack()
	if !ok || spec == "" {
		return "", false
	}
	fromEnd := spec[0] == '-'
	n, err := strconv.Atoi(strings.TrimLeft(spec, "+-"))
	if err != nil || n < 0 || n >= len(full) {
		return "", false
	}
	if fromEnd {
		n = len(full) - 1 - n
	}
	return full[n], true
}

// cd is cd and pushd.
func (w *walker) cd(name string, args []Arg) {
	for i := 1; i < len(args); i++ {
		a := args[i]
		v := a.Value
		if !a.Known {
			w.unknownCwd()
			return
		}
		if v == "--" {
			if i+1 < len(args) {
				w.cdArg(name, args[i+1])
			} else {
				w.cdNoArg(name)
			}
			return
		}
		if len(v) > 1 && v[0] == '-' && strings.Trim(v[1:], "LPe@n") == "" {
			continue
		}
		if name == "pushd" && len(v) > 1 && (v[0] == '+' || v[0] == '-') && isDigits(v[1:]) {
			w.rotate(v)
			return
		}
		w.cdArg(name, a)
		return
	}
	w.cdNoArg(name)
}

// cdNoArg is cd alone (to $HOME) and pushd alone (swap the two top directories).
func (w *walker) cdNoArg(name string) {
	if name == "pushd" {
		if w.dirs.lost || len(w.dirs.stack) == 0 {
			w.unknownCwd()
			w.problem("pushd exchanges directories that are not known")
			return
		}
		cur, _ := w.pwd()
		top := w.dirs.stack[0]
		w.dirs.stack = append([]string{cur}, w.dirs.stack[1:]...)
		w.cdInto(top)
		return
	}
	h, ok := w.envPrefix("HOME")
	if !ok {
		h, ok = w.lookup("HOME")
	}
	if ok && h != "" {
		w.cdInto(h)
		return
	}
	w.unknownCwd()
	w.problem("cd to a home directory that is not known")
}

// cdArg is cd DIR and pushd DIR.
func (w *walker) cdArg(name string, a Arg) {
	switch {
	case a.Value == "-":
		if w.dirs.old == "" {
			w.unknownCwd()
			w.problem("cd - returns to a directory that is not known")
			return
		}
		if !w.dirs.oldExact {
			w.problem("cd - returns to a directory the request does not give")
		}
		w.push(name)
		w.cdInto(w.dirs.old)
	case a.Pattern != "":
		w.unknownCwd()
		w.problem("cd to a glob")
	case a.Value == "":
		// bash: cd "" stays where it is.
	default:
		dir := a.Value
		if cdpath, ok := w.cdPath(); ok && !path.IsAbs(dir) && dir != "." && dir != ".." &&
			!strings.HasPrefix(dir, "./") && !strings.HasPrefix(dir, "../") {
			// bash tries each CDPATH entry before the working directory; the first is the
			// likely one (the floor reads it so), but which exists is not known.
			w.problem("cd %s with CDPATH set", dir)
			first, _, _ := strings.Cut(cdpath, ":")
			if first == "" {
				first = "."
			}
			dir = path.Join(first, dir)
		}
		w.push(name)
		w.cdInto(dir)
	}
}

// cdPath is $CDPATH, from a prefix assignment or the line.
func (w *walker) cdPath() (string, bool) {
	if v, ok := w.envPrefix("CDPATH"); ok {
		return v, v != ""
	}
	if v, ok := w.vars["CDPATH"]; ok {
		if !v.known {
			return ".", true // an unknown CDPATH: the directory is not known either
		}
		return v.val, v.val != ""
	}
	return "", false
}

// push puts the working directory on pushd's stack before pushd changes it.
func (w *walker) push(name string) {
	if name != "pushd" {
		return
	}
	cur, _ := w.pwd()
	if cur == "" {
		w.dirs.lost = true
		return
	}
	w.dirs.stack = append([]string{cur}, w.dirs.stack...)
}

// rotate is pushd +N / -N: the Nth directory comes to the top.
func (w *walker) rotate(spec string) {
	full, ok := w.fullStack()
	n, err := strconv.Atoi(spec[1:])
	if !ok || err != nil || n >= len(full) {
		w.unknownCwd()
		w.dirs.lost = true
		w.problem("pushd %s rotates a directory stack that is not known", spec)
		return
	}
	if spec[0] == '-' {
		n = len(full) - 1 - n
	}
	rot := append(append([]string(nil), full[n:]...), full[:n]...)
	w.dirs.stack = rot[1:]
	w.cdInto(rot[0])
}

// popd drops the top of the stack (or entry ±N) and changes to the new top.
func (w *walker) popd(args []Arg) {
	full, ok := w.fullStack()
	spec := ""
	for _, a := range args[1:] {
		if a.Value == "-n" {
			continue
		}
		if !a.Known {
			ok = false
		}
		spec = a.Value
	}
	if !ok || len(full) < 2 {
		w.unknownCwd()
		w.dirs.lost = true
		w.problem("popd returns to a directory that is not known")
		return
	}
	if spec != "" {
		n, err := strconv.Atoi(strings.TrimLeft(spec, "+-"))
		if err != nil || n >= len(full) {
			w.dirs.lost = true
			w.problem("popd %s of a directory stack entry that is not known", spec)
			return
		}
		if spec[0] == '-' {
			n = len(full) - 1 - n
		}
		if n > 0 {
			w.dirs.stack = append(append([]string(nil), full[1:n]...), full[n+1:]...)
			return
		}
	}
	w.dirs.stack = full[2:]
	w.cdInto(full[1])
}
