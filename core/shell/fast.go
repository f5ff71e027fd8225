package shell

import "strings"

// The fast path reads, without the parser, the command lines that are nothing but simple
// commands of plain words joined by &&, ||, | and ;. Most commands agents run are of that
// shape, and for them mvdan.cc/sh's parser costs more than the whole analysis (it allocates
// fixed batches of nodes on every parse). The fast path gives the walker exactly what the
// parser would (TestFastPathMatchesParser and FuzzAnalyze check it against the parser), and
// declines everything else: expansions, globs, backslashes, redirections, assignments,
// reserved words, newlines, comments, background jobs.

// fastCmd is one simple command of a line read by the fast path, and the operator after it.
type fastCmd struct {
	args []Arg
	op   byte // the operator after the command: 0 at the end, ';', '&' (&&), 'o' (||), '|'
}

// maxFast bounds the lines the fast path reads; longer ones go to the parser.
const maxFast = 4096

// plainBytes are the characters that stand for themselves in a bash word wherever they
// appear (outside quotes, and not first in a command word for '=').
var plainBytes = func() (t [256]bool) {
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for _, c := range "-_./,:+@%=" {
		t[c] = true
	}
	return t
}()

func plainByte(c byte) bool { return plainBytes[c] }

// fastSplit splits s into its simple commands when the fast path can read it.
func (sh *shared) fastSplit(s string) ([]fastCmd, bool) {
	cmds, _, ok := sh.fastSplitNormalized(s, false)
	return cmds, ok
}

// fastSplitNormalized is fastSplit that also returns the line as the syntax printer would
// print it (single spaces between words, "a && b", "a | b", "a; b") when normalize is set;
// TestFastPathMatchesParser and FuzzAnalyze check it against the printer.
func (sh *shared) fastSplitNormalized(s string, normalize bool) ([]fastCmd, string, bool) {
	if s == "" || len(s) > maxFast || sh.noFast {
		return nil, "", false
	}
	var out []byte // nil while the normalized line equals a prefix of s
	n := 0         // length of the normalized line so far
	emit := func(t string) {
		if !normalize {
			return
		}
		if out == nil {
			if n+len(t) <= len(s) && s[n:n+len(t)] == t {
				n += len(t)
				return
			}
			out = make([]byte, n, len(s)+16)
			copy(out, s[:n])
		}
		out = append(out, t...)
		n += len(t)
	}
	var cmds []fastCmd
	if !sh.fastBufUsed {
		// The outermost line uses the buffer; scripts nested in it (bash -c) allocate.
		sh.fastBufUsed = true
		cmds = sh.fastBuf[:0]
	}
	args := sh.argArena[:0]
	start := 0 // index in args of the current command's first word
	var buf []byte
	i := 0
	for {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i == len(s) {
			return nil, "", false // empty, or ends with an operator
		}
		c := s[i]
		if c == '&' || c == '|' || c == ';' {
			return nil, "", false // an operator with no command before it
		}
		// The words of one command.
		for i < len(s) {
			c = s[i]
			if c == ' ' || c == '\t' {
				i++
				continue
			}
			if c == '&' || c == '|' || c == ';' {
				break
			}
			j := i
			quoted := false
			for j < len(s) {
				d := s[j]
				if d == '\'' || d == '"' {
					k := strings.IndexByte(s[j+1:], d)
					if k < 0 {
						return nil, "", false
					}
					for _, q := range []byte(s[j+1 : j+1+k]) {
						if q < ' ' || q > '~' || d == '"' && (q == '$' || q == '`' || q == '\\' || q == '!') {
							return nil, "", false
						}
					}
					quoted = true
					j += k + 2
					continue
				}
				if plainByte(d) {
					j++
					continue
				}
				if d == ' ' || d == '\t' || d == '&' || d == '|' || d == ';' {
					break
				}
				return nil, "", false
			}
			raw := s[i:j]
			if len(args) == start && (reservedWord(raw) || raw[0] == '#') {
				return nil, "", false
			}
			if len(args) > start {
				emit(" ")
			}
			emit(raw)
			v := raw
			if quoted {
				buf = buf[:0]
				for k := 0; k < len(raw); k++ {
					if q := raw[k]; q == '\'' || q == '"' {
						e := k + 1 + strings.IndexByte(raw[k+1:], q)
						buf = append(buf, raw[k+1:e]...)
						k = e
						continue
					}
					buf = append(buf, raw[k])
				}
				v = string(buf)
			}
			args = append(args, Arg{Value: v, Raw: v, Static: true, Known: true, Prefix: len(v)})
			i = j
		}
		fc := fastCmd{args: args[start:len(args):len(args)]}
		start = len(args)
		if i == len(s) {
			cmds = append(cmds, fc)
			break
		}
		switch {
		case s[i] == ';':
			fc.op = ';'
			i++
			emit("; ")
		case s[i] == '&' && i+1 < len(s) && s[i+1] == '&':
			fc.op = '&'
			i += 2
			emit(" && ")
		case s[i] == '|' && i+1 < len(s) && s[i+1] == '|':
			fc.op = 'o'
			i += 2
			emit(" || ")
		case s[i] == '|' && (i+1 >= len(s) || s[i+1] != '&'):
			fc.op = '|'
			i++
			emit(" | ")
		default:
			return nil, "", false // a background job or |&
		}
		cmds = append(cmds, fc)
	}
	sh.argArena = args[len(args):]
	norm := ""
	switch {
	case normalize && out != nil:
		norm = string(out)
	case normalize:
		norm = s[:n]
	}
	return cmds, norm, true
}

// walkFast walks a line split by fastSplit the way walkStmts walks the parser's statements:
// ";" separates statements, && and || build a left-leaning tree of pipelines.
func (w *walker) walkFast(cmds []fastCmd) {
	for len(cmds) > 0 {
		n := 0 // commands up to and including the one ending this statement
		for n < len(cmds) {
			n++
			if cmds[n-1].op == ';' || cmds[n-1].op == 0 {
				break
			}
		}
		w.walkFastAndOr(cmds[:n])
		cmds = cmds[n:]
	}
}

// walkFastAndOr walks one statement: pipelines joined by && and ||.
func (w *walker) walkFastAndOr(cmds []fastCmd) {
	// The last pipeline starts after the last && or ||.
	last := 0
	for i := 0; i < len(cmds)-1; i++ {
		if cmds[i].op == '&' || cmds[i].op == 'o' {
			last = i + 1
		}
	}
	if last > 0 {
		if !w.step() { // the binary command
			return
		}
		w.walkFastAndOr(cmds[:last])
	}
	w.walkFastPipe(cmds[last:])
}

// walkFastPipe walks one pipeline (or a single command).
func (w *walker) walkFastPipe(cmds []fastCmd) {
	if !w.step() {
		return
	}
	if len(cmds) == 1 {
		w.command(cmds[0].args)
		return
	}
	w.sh.pipes++
	id := w.sh.pipes
	first := w.sh.saveStdin(w.stdin)
	for i := range cmds {
		c := w.sub()
		c.pipe, c.pipePos = id, i
		c.async++
		if i > 0 {
			c.stdin = stdinState{kind: stdinPipe, fsrc: cmds[:i], first: first}
		}
		if !c.step() {
			continue
		}
		c.command(cmds[i].args)
		if i == len(cmds)-1 {
			w.lastInPipe(c)
		}
	}
}

// evalFastPipe is evalPipe for the commands of a pipeline read by the fast path.
func (w *walker) evalFastPipe(cmds []fastCmd, stdin stdinState) (string, bool) {
	in := stdin
	var out string
	for _, fc := range cmds {
		if !w.step() {
			return "", false
		}
		o, ok := w.evalArgs(fc.args, in)
		if !ok {
			return "", false
		}
		out = o
		in = stdinState{kind: stdinKnown, text: o}
	}
	return out, true
}
