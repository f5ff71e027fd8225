package shell

import (
	"strconv"
	"strings"
)

// awk's program sees its command line and its input: ARGV[n] are the operands, ENVIRON["X"]
// the environment, $0 and $1… each input record. A command it builds from them
// (system(ARGV[1]), system($0), print | ENVIRON["C"]) is read with their values when the
// command line gives them.

// awkLine is an awk command line: its program and where the rest of it comes from.
type awkLine struct {
	code     string
	hasCode  bool
	files    []Arg // -f and -i files holding the program
	operands []Arg // ARGV[1…]: files to read and NAME=value assignments
}

func parseAwk(args []Arg) awkLine {
	var al awkLine
	i := 1
	withArg := func(name string) bool {
		switch name {
		case "-F", "-v", "-f", "-e", "-i", "-l", "-W", "--field-separator", "--assign", "--file", "--source",
			"--include", "--load", "--exec", "-E":
			return true
		}
		return false
	}
options:
	for ; i < len(args); i++ {
		v := args[i].Value
		switch {
		case v == "--":
			i++
			break options
		case v == "-" || !strings.HasPrefix(v, "-"):
			break options
		}
		name, val, hasVal := strings.Cut(v, "=")
		if !strings.HasPrefix(v, "--") && len(v) > 2 {
			name, val, hasVal = v[:2], v[2:], true
		}
		arg := func() Arg {
			if hasVal {
				return Arg{Value: val, Raw: val, Known: args[i].Known, proc: args[i].proc}
			}
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return Arg{}
		}
		if !withArg(name) {
			continue
		}
		a := arg()
		switch name {
		case "-f", "--file", "-i", "--include", "-E", "--exec":
			al.files = append(al.files, a)
		case "-e", "--source":
			al.code += a.Value + "\n"
			al.hasCode = true
		}
	}
	if !al.hasCode && len(al.files) == 0 && i < len(args) {
		al.code, al.hasCode = args[i].Value, true
		i++
	}
	if i < len(args) {
		al.operands = args[i:]
	}
	return al
}

// awk records an awk command and hands the floor the commands its program runs.
func (w *walker) awk(args []Arg) {
	al := parseAwk(args)
	code, hasCode := al.code, al.hasCode
	for _, f := range al.files {
		if f.Value == "-" {
			f.Value = "/dev/stdin"
		}
		text, known, found := w.fileText(f)
		switch {
		case found && known:
			code, hasCode = code+text+"\n", true
		case found:
			w.problem("awk runs a program read from an input that is not known")
		}
	}
	if !hasCode && len(al.files) == 0 {
		w.interpreter("awk", args) // the program on the standard input
		return
	}
	s := w.emit(args, KindCommand)
	if !hasCode {
		return
	}
	s.Lang, s.Code = "awk", code
	vars := awkVars(args)
	vars["ARGV[0]"] = Base(args[0].Value)
	var inputs []Arg
	for n, a := range al.operands {
		vars["ARGV["+strconv.Itoa(n+1)+"]"] = a.Value
		if !isAssignment(a.Value) {
			inputs = append(inputs, a)
		}
	}
	for _, e := range w.env {
		if k, v, ok := strings.Cut(e, "="); ok {
			vars["ENVIRON["+k+"]"] = v
		}
	}
	for k := range w.sh.exported {
		if v, ok := w.lookup(k); ok {
			if _, set := vars["ENVIRON["+k+"]"]; !set {
				vars["ENVIRON["+k+"]"] = v
			}
		}
	}
	if v := w.home; v != "" {
		if _, set := vars["ENVIRON[HOME]"]; !set {
			vars["ENVIRON[HOME]"] = v
		}
	}
	w.interpCodeVars("awk", code, 0, vars)
	if !strings.Contains(code, "$") {
		return
	}
	// The records of its input, each in turn.
	var text string
	known := false
	if len(inputs) == 0 {
		t, kind := w.stdinText()
		text, known = t, kind == stdinKnown
	} else {
		var b strings.Builder
		known = true
		for _, in := range inputs {
			t, k, found := w.fileText(in)
			if !found {
				known = false
				break
			}
			b.WriteString(t)
			known = known && k
		}
		text = b.String()
	}
	if !known {
		return
	}
	fs := vars["FS"]
	for n, rec := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if n >= maxLoopItems || !w.step() {
			break
		}
		rv := make(map[string]string, len(vars)+8)
		for k, v := range vars {
			rv[k] = v
		}
		rv["$0"] = rec
		var fields []string
		if fs == "" || fs == " " {
			fields = strings.Fields(rec)
		} else {
			fields = strings.Split(rec, fs)
		}
		for k, f := range fields {
			rv["$"+strconv.Itoa(k+1)] = f
		}
		if len(fields) > 0 {
			rv["$NF"] = fields[len(fields)-1]
		}
		w.interpCodeVars("awk", code, 0, rv)
	}
}

// awkTokens joins ARGV[1] and ENVIRON["X"] into single names, the way the variables above are
// keyed.
func awkTokens(toks []codeTok) []codeTok {
	out := toks[:0:0]
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if t.kind == 'i' && (t.s == "ARGV" || t.s == "ENVIRON") && i+1 < len(toks) && toks[i+1].s == "[" {
			j := i + 2
			var key strings.Builder
			for j < len(toks) && toks[j].s != "]" {
				if toks[j].kind == 's' || toks[j].kind == 'p' || toks[j].kind == 'i' {
					key.WriteString(toks[j].s)
				}
				j++
			}
			if j < len(toks) {
				out = append(out, codeTok{'i', t.s + "[" + key.String() + "]"})
				i = j
				continue
			}
		}
		out = append(out, t)
	}
	return out
}
