package shell

import (
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Arrays. An indexed array whose elements are known and whose subscripts are inert arithmetic
// (a literal number, a variable holding one) is inside the subset: arr=(a b c), a[5]=x,
// a+=(d), ${a[1]}, "${a[@]}", ${#a[@]}. Associative arrays (declare -A), arrays filled from
// input (read -a, mapfile) and names references (declare -n) are outside it, but their values
// are followed all the same, so that the floor sees through them.

// elem returns the element with subscript key ("" when the array has none).
func (v *varVal) elem(key string) (string, bool) {
	if v.keys == nil {
		i, err := strconv.Atoi(key)
		if err != nil || i < 0 || i >= len(v.arr) {
			return "", false
		}
		return v.arr[i], true
	}
	for i, k := range v.keys {
		if k == key {
			return v.arr[i], true
		}
	}
	return "", false
}

// elements returns the elements in subscript order, with a scalar read as an array of one.
func (v *varVal) elements() []string {
	if v.arr == nil && v.keys == nil {
		if v.unset {
			return nil
		}
		return []string{v.val}
	}
	return v.arr
}

// subscripts returns the subscripts in order (${!a[@]}).
func (v *varVal) subscripts() []string {
	if v.keys != nil {
		return v.keys
	}
	n := len(v.elements())
	out := make([]string, n)
	for i := range out {
		out[i] = strconv.Itoa(i)
	}
	return out
}

// withElem returns a copy of the array with the element key set (the slices are never shared
// with the original).
func (v varVal) withElem(key, val string) varVal {
	elems := append([]string(nil), v.elements()...)
	keys := v.keys
	if keys == nil && !v.assoc {
		i, err := strconv.Atoi(key)
		if err == nil && i >= 0 && i <= len(elems) {
			if i == len(elems) {
				elems = append(elems, val)
			} else {
				elems[i] = val
			}
			return v.array(elems, nil)
		}
		keys = v.subscripts()
	}
	keys = append([]string(nil), keys...)
	for i, k := range keys {
		if k == key {
			elems[i] = val
			return v.array(elems, keys)
		}
	}
	// Keep numeric subscripts in order; an associative array keeps insertion order.
	at := len(keys)
	if !v.assoc {
		n, _ := strconv.Atoi(key)
		for i, k := range keys {
			if m, _ := strconv.Atoi(k); m > n {
				at = i
				break
			}
		}
	}
	keys = append(keys[:at], append([]string{key}, keys[at:]...)...)
	elems = append(elems[:at], append([]string{val}, elems[at:]...)...)
	return v.array(elems, keys)
}

// array returns v holding elems (with subscripts keys, nil for 0..n-1).
func (v varVal) array(elems, keys []string) varVal {
	out := varVal{known: true, assoc: v.assoc, arr: elems, keys: keys}
	if out.arr == nil {
		out.arr = []string{}
	}
	if e, ok := out.elem("0"); ok {
		out.val = e
	}
	return out
}

// nextIndex is the subscript bash gives an element appended to an indexed array.
func (v *varVal) nextIndex() int {
	if v.keys == nil {
		return len(v.elements())
	}
	n := 0
	for _, k := range v.keys {
		if m, err := strconv.Atoi(k); err == nil && m >= n {
			n = m + 1
		}
	}
	return n
}

// subscript works out the subscript of a[…]: the text for an associative array, the value of
// the arithmetic for an indexed one.
func (w *walker) subscript(name string, x syntax.ArithmExpr) (string, bool) {
	if v, ok := w.vars[name]; ok && v.assoc || name == "BASH_CMDS" || name == "BASH_ALIASES" {
		word, isWord := x.(*syntax.Word)
		if !isWord {
			w.problem("an associative array subscript that is not a word")
			return "", false
		}
		return w.wordString(word)
	}
	n, ok := w.arith(x)
	if !ok {
		return "", false
	}
	i, _ := strconv.Atoi(n)
	if i < 0 {
		if v, ok := w.vars[name]; ok {
			i += v.nextIndex()
		}
	}
	return strconv.Itoa(i), true
}

// arrayAssign records name=(…), name+=(…), name[i]=v and name[i]+=v: the elements when they
// are known.
func (w *walker) arrayAssign(a *syntax.Assign) {
	name := a.Name.Value
	old, _ := w.vars[name]
	if old.ref != "" {
		w.problem("an assignment through a name reference")
		w.setVar(name, varVal{ref: old.ref})
		return
	}
	unknown := func() {
		w.setVar(name, varVal{assoc: old.assoc})
	}
	if a.Index != nil {
		key, ok := w.subscript(name, a.Index)
		v, vok := w.wordString(a.Value)
		if name == "BASH_CMDS" && ok && vok {
			w.hash(key, v) // the command hash table itself
		}
		if !ok || !vok || !old.known && (old.arr != nil || old.val != "") {
			unknown()
			return
		}
		if a.Append {
			prev, _ := old.elem(key)
			v = prev + v
		}
		if !old.known {
			old = varVal{assoc: old.assoc, unset: true, known: true}
		}
		w.setVar(name, old.withElem(key, v))
		return
	}
	if a.Array == nil {
		unknown()
		return
	}
	cur := varVal{assoc: old.assoc, known: true, unset: true}
	if a.Append {
		if !old.known {
			unknown()
			return
		}
		cur = old
	}
	next := cur.nextIndex()
	for _, e := range a.Array.Elems {
		if e.Value == nil {
			continue
		}
		if e.Index != nil {
			key, ok := w.subscript(name, e.Index)
			v, vok := w.wordString(e.Value)
			if !ok || !vok {
				unknown()
				return
			}
			cur = cur.withElem(key, v)
			if n, err := strconv.Atoi(key); err == nil {
				next = n + 1
			}
			continue
		}
		if cur.assoc {
			w.problem("an associative array element without a key")
			unknown()
			return
		}
		for _, f := range w.expandWord(e.Value, nil) {
			if !f.Known || f.Pattern != "" {
				if f.Pattern != "" {
					w.problem("an array element from a glob")
				}
				unknown()
				return
			}
			cur = cur.withElem(strconv.Itoa(next), f.Value)
			next++
		}
	}
	if cur.arr == nil {
		cur = cur.array(nil, nil)
	}
	w.setVar(name, cur)
}

// fillArray sets name to elems (read -a, mapfile), known or not.
func (w *walker) fillArray(name string, elems []string, known bool) {
	if !known {
		w.setVar(name, varVal{})
		return
	}
	w.setVar(name, varVal{known: true}.array(elems, nil))
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
	if _, all := arrayIndexAll(p.Index); all {
		if !ok {
			return varVal{}, false
		}
		return varVal{val: strings.Join(v.elements(), " "), known: true}, true
	}
	key, kok := w.subscript(p.Param.Value, p.Index)
	if !ok || !kok {
		return varVal{}, false
	}
	e, _ := v.elem(key)
	if v.arr == nil && v.keys == nil && key == "0" && !v.unset {
		e = v.val
	}
	return varVal{val: e, known: true}, true
}

// arrayAll is "${a[@]}": every element as a field of its own (and "${!a[@]}" every subscript).
func (w *walker) arrayAll(p *syntax.ParamExp) ([]string, bool) {
	if p.Param == nil || p.Index == nil || p.Length || p.Exp != nil || p.Slice != nil || p.Repl != nil {
		return nil, false
	}
	if sub, all := arrayIndexAll(p.Index); !all || sub != "@" {
		return nil, false
	}
	v, ok := w.lookupVar(p.Param.Value)
	if !ok {
		return nil, false
	}
	if p.Excl {
		return v.subscripts(), true
	}
	return v.elements(), true
}
