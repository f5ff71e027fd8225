package shell

import (
	"path"
	"strings"
)

// The project is the directory the request works in (Options.Project: none when the cwd is /,
// a home directory or a system directory). Tools that run configuration or code from a
// directory (git's repository configuration and hooks, a Makefile, package.json scripts) are
// judged on whether that directory is inside it.

// inProjectDir reports a directory inside the project (or the project itself). A relative
// directory is inside when the request has no working directory and the path does not climb
// out of where the line started.
func (w *walker) inProjectDir(dir string) bool {
	if dir == "" {
		return false
	}
	if !path.IsAbs(dir) {
		if w.sh.project != "" || w.cwdRel == "" {
			return false
		}
		c := path.Clean(path.Join(w.cwdRel, dir))
		return c != ".." && !strings.HasPrefix(c, "../")
	}
	if rel, ok := UnknownCwdRel(dir); ok {
		c := path.Clean(rel)
		return c != ".." && !strings.HasPrefix(c, "../")
	}
	p := w.sh.project
	if p == "" {
		return false
	}
	d := path.Clean(dir)
	return d == p || strings.HasPrefix(d, p+"/")
}

// displayDir shows a directory in a problem.
func displayDir(d string) string {
	if rel, ok := UnknownCwdRel(d); ok {
		return rel
	}
	if d == "" {
		return "a directory that is not known"
	}
	return d
}

// gitEnvConfig reads the configuration git takes from its environment: GIT_CONFIG_COUNT with
// GIT_CONFIG_KEY_n and GIT_CONFIG_VALUE_n (GIT_CONFIG_PARAMETERS is read where it is set).
func (w *walker) gitEnvConfig() {
	keys := map[string]string{}
	vals := map[string]string{}
	see := func(k, v string) {
		if n, ok := strings.CutPrefix(k, "GIT_CONFIG_KEY_"); ok {
			keys[n] = v
		}
		if n, ok := strings.CutPrefix(k, "GIT_CONFIG_VALUE_"); ok {
			vals[n] = v
		}
	}
	for _, e := range w.env {
		if k, v, ok := strings.Cut(e, "="); ok {
			see(k, v)
		}
	}
	for k := range w.sh.exported {
		if v, ok := w.lookup(k); ok {
			see(k, v)
		}
	}
	for n, k := range keys {
		w.gitConfig("GIT_CONFIG_KEY_"+n, k+"="+vals[n], true)
	}
}

// gitTreeDeletes hands the floor what git clean -d and git stash -u delete: everything
// untracked in the working tree, which --work-tree (GIT_WORK_TREE, core.worktree) may have put
// anywhere.
func (w *walker) gitTreeDeletes(sub string, rest []Arg, tree string) {
	force, dirs, untracked := false, false, false
	for _, a := range rest {
		v := a.Value
		if v == "--" {
			break
		}
		switch {
		case v == "--force":
			force = true
		case v == "--include-untracked" || v == "--all":
			untracked = true
		case len(v) > 1 && v[0] == '-' && v[1] != '-':
			force = force || strings.ContainsRune(v, 'f')
			dirs = dirs || strings.ContainsRune(v, 'd')
			untracked = untracked || strings.ContainsAny(v, "ua")
		}
	}
	deletes := sub == "clean" && force && dirs || sub == "stash" && untracked
	if !deletes {
		return
	}
	c := w.floorOnly("git " + sub)
	c.emit([]Arg{lit("rm"), lit("-rf"), {Value: tree, Raw: tree, Known: true, Prefix: len(tree)}}, KindCommand)
}
