package shell

import (
	"strings"
)

// envRead records a variable whose value the command line expands.
func (w *walker) envRead(name string) {
	if !isName(name) || w.home == remoteHome {
		return
	}
	for _, n := range w.an.EnvReads {
		if n == name {
			return
		}
	}
	w.an.EnvReads = append(w.an.EnvReads, name)
}

// envDump records a shell form that prints every variable.
func (w *walker) envDump(form string) {
	if w.home == remoteHome {
		return
	}
	for _, d := range w.an.EnvDumps {
		if d == form {
			return
		}
	}
	w.an.EnvDumps = append(w.an.EnvDumps, form)
}

// codeInData hands the floor the command text bash would run out of a value it evaluates as
// data (an array subscript, a prompt string): the $(…), `…` and ${…} in it, expanded as in a
// here-document.
func (w *walker) codeInData(label, s string) {
	if !strings.Contains(s, "$(") && !strings.Contains(s, "`") && !strings.Contains(s, "${") || !w.step() {
		return
	}
	delim := "APPROVEBOT_EOF"
	for strings.Contains(s, delim) {
		delim += "_"
	}
	f, err := parse(": <<" + delim + "\n" + s + "\n" + delim + "\n")
	if err != nil {
		return
	}
	c := w.floorOnly(label)
	if d := c.deeper(label); d != nil {
		d.walkStmts(f.Stmts)
	}
}
