package shell

import (
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
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

// arrayIndexAll reports the subscript @ or * (every element).
func arrayIndexAll(x syntax.ArithmExpr) (string, bool) {
	word, ok := x.(*syntax.Word)
	if !ok || len(word.Parts) != 1 {
		return "", false
	}
	lit, ok := word.Parts[0].(*syntax.Lit)
	if !ok || lit.Value != "@" && lit.Value != "*" {
		return "", false
	}
	return lit.Value, true
}

// arrayElem is ${a[i]}: the element when the array and the subscript are known.
func (w *walker) arrayElem(p *syntax.ParamExp) (varVal, bool) {
	v, ok := w.lookupVar(p.Param.Value)
	if !ok {
		if _, all := arrayIndexAll(p.Index); !all {
			w.arith(p.Index)
		}
		return varVal{}, false
	}
	elems := v.arr
	if elems == nil && !v.unset {
		elems = []string{v.val}
	}
	if _, all := arrayIndexAll(p.Index); all {
		return varVal{val: strings.Join(elems, " "), known: true}, true
	}
	idx, iok := w.arith(p.Index)
	if !iok {
		return varVal{}, false
	}
	i, _ := strconv.Atoi(idx)
	if i < 0 {
		i += len(elems)
	}
	if i < 0 || i >= len(elems) {
		return varVal{val: "", known: true}, true
	}
	return varVal{val: elems[i], known: true}, true
}

// arrayAll is "${a[@]}": every element as a field of its own.
func (w *walker) arrayAll(p *syntax.ParamExp) ([]string, bool) {
	if p.Param == nil || p.Index == nil || p.Excl || p.Length || p.Exp != nil || p.Slice != nil || p.Repl != nil {
		return nil, false
	}
	if sub, all := arrayIndexAll(p.Index); !all || sub != "@" {
		return nil, false
	}
	v, ok := w.vars[p.Param.Value]
	if !ok || !v.known || v.arr == nil {
		return nil, false
	}
	return v.arr, true
}
