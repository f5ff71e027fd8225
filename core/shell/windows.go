package shell

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// cmdExe handles cmd /c STRING: the string is a cmd.exe command line the floor reads.
func (w *walker) cmdExe(args []Arg) {
	w.emit(args, KindCommand)
	for i := 1; i < len(args); i++ {
		v := strings.ToLower(args[i].Raw)
		if v == "/c" || v == "/k" || v == "/r" {
			rest := args[i+1:]
			if len(rest) == 1 {
				// cmd /c "a & b": the quotes were the POSIX shell's; cmd reads the text.
				w.windowsScript(rest[0].Raw, "cmd /c")
			} else {
				w.windowsScript(joinRaw(rest), "cmd /c")
			}
			return
		}
		if len(v) > 2 && (strings.HasPrefix(v, "/c") || strings.HasPrefix(v, "/k")) && !strings.HasPrefix(v, "/c:") {
			w.windowsScript(args[i].Raw[2:]+" "+joinRaw(args[i+1:]), "cmd /c")
			return
		}
	}
}

func joinRaw(args []Arg) string {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		r := a.Raw
		if r == "" {
			r = a.Value
		}
		if strings.ContainsAny(r, " \t") {
			b.WriteByte('"')
			b.WriteString(r)
			b.WriteByte('"')
		} else {
			b.WriteString(r)
		}
	}
	return b.String()
}

// powershell handles powershell and pwsh command lines.
func (w *walker) powershell(args []Arg) {
	w.emit(args, KindCommand)
	toks := make([]string, 0, len(args)-1)
	for _, a := range args[1:] {
		r := a.Raw
		if r == "" {
			r = a.Value
		}
		toks = append(toks, r)
	}
	w.powershellArgs(toks, true)
}

// powershellArgs reads powershell's own options: -EncodedCommand is decoded, -Command and a
// bare command are read as PowerShell.
func (w *walker) powershellArgs(toks []string, judged bool) {
	for i := 0; i < len(toks); i++ {
		t := toks[i]
		if len(t) > 1 && (t[0] == '-' || t[0] == '/') {
			name := strings.ToLower(strings.TrimLeft(t, "-/"))
			name, attached, hasAttached := strings.Cut(name, ":")
			value := func() (string, bool) {
				if hasAttached {
					return attached, true
				}
				if i+1 < len(toks) {
					i++
					return toks[i], true
				}
				return "", false
			}
			switch {
			case encodedFlag(name):
				v, ok := value()
				if !ok {
					if judged {
						w.problem("powershell -EncodedCommand without a value")
					}
					return
				}
				text, ok := decodePowerShell(v)
				if !ok {
					w.problem("cannot decode the PowerShell -EncodedCommand")
					return
				}
				w.windowsScript(text, "powershell -EncodedCommand")
				return
			case name != "" && strings.HasPrefix("command", name):
				rest := strings.Join(toks[i+1:], " ")
				if hasAttached {
					rest = attached + " " + rest
				}
				w.windowsScript(rest, "powershell -Command")
				return
			case name != "" && strings.HasPrefix("file", name):
				return
			case psValueFlag(name):
				if !hasAttached {
					i++
				}
			}
			continue
		}
		w.windowsScript(strings.Join(toks[i:], " "), "powershell")
		return
	}
}

// encodedFlag matches -EncodedCommand and the abbreviations PowerShell accepts (-e, -ec,
// -en, -enc, …).
func encodedFlag(name string) bool {
	return name == "e" || name == "ec" || len(name) >= 2 && strings.HasPrefix("encodedcommand", name) ||
		strings.HasPrefix(name, "encodeda")
}

func psValueFlag(name string) bool {
	if name == "" {
		return false
	}
	for _, full := range [...]string{"executionpolicy", "windowstyle", "version", "psconsolefile", "inputformat",
		"outputformat", "configurationname", "workingdirectory", "custompipename", "settingsfile"} {
		if len(name) >= 2 && strings.HasPrefix(full, name) {
			return true
		}
	}
	switch name {
	case "ep", "ex", "w", "wd", "v", "if", "of", "o":
		return true
	}
	return false
}

// decodePowerShell decodes an -EncodedCommand value: base64 of UTF-16LE text.
func decodePowerShell(v string) (string, bool) {
	v = strings.Trim(v, `"' `)
	b, _, ok := decodeBase64(v)
	if !ok || len(b) == 0 {
		return "", false
	}
	raw := []byte(b)
	if len(raw)%2 == 0 {
		u := make([]uint16, len(raw)/2)
		for i := range u {
			u[i] = uint16(raw[2*i]) | uint16(raw[2*i+1])<<8
		}
		s := string(utf16.Decode(u))
		if utf8.ValidString(s) && !strings.ContainsRune(s, 0) {
			return s, true
		}
	}
	// Not UTF-16LE: some tools encode UTF-8; PowerShell would fail, the floor still looks.
	if utf8.Valid(raw) {
		return string(raw), true
	}
	return "", false
}

// windowsScript records the statements of a cmd.exe or PowerShell command line as floor-only
// segments, following nested cmd /c, powershell and Invoke-Expression.
func (w *walker) windowsScript(text, origin string) {
	c := w.floorOnly(origin)
	d := c.deeper(origin)
	if d == nil || !d.step() {
		return
	}
	for _, st := range windowsStatements(text) {
		args := make([]Arg, len(st))
		for i, t := range st {
			args[i] = lit(t)
		}
		s := d.emit(args, KindCommand)
		s.Windows = true
		s.Origin = origin
		switch Base(st[0]) {
		case "cmd":
			for i := 1; i < len(st); i++ {
				if v := strings.ToLower(st[i]); v == "/c" || v == "/k" || v == "/r" {
					d.windowsScript(strings.Join(st[i+1:], " "), "cmd /c")
					break
				}
			}
		case "powershell", "pwsh":
			d.powershellArgs(st[1:], false)
		case "iex", "invoke-expression":
			if len(st) > 1 {
				d.windowsScript(strings.Join(st[1:], " "), "Invoke-Expression")
			}
		case "bash", "sh":
			d.dispatch(args)
		case "wsl":
			// wsl rm -rf / runs a POSIX command.
			if len(args) > 1 {
				d.dispatch(args[1:])
			}
		}
	}
}

// windowsStatements splits a cmd.exe or PowerShell command line into statements of tokens.
// Quotes group, ^ and ` escape; ; | & newlines and braces separate statements.
func windowsStatements(s string) [][]string {
	var out [][]string
	var cur []string
	var tok []byte
	in := false
	endTok := func() {
		if in {
			cur = append(cur, string(tok))
			tok = tok[:0]
			in = false
		}
	}
	endStmt := func() {
		endTok()
		if len(cur) > 0 {
			out = append(out, cur)
			cur = nil
		}
	}
	for i := 0; i < len(s) && len(out) < 1024; i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\'':
			j := i + 1
			for j < len(s) {
				if s[j] == c {
					if j+1 < len(s) && s[j+1] == c {
						tok = append(tok, c)
						j += 2
						continue
					}
					break
				}
				if c == '"' && s[j] == '`' && j+1 < len(s) {
					tok = append(tok, s[j+1])
					j += 2
					continue
				}
				tok = append(tok, s[j])
				j++
			}
			i = j
			in = true
		case c == '^' && i+1 < len(s):
			i++
			tok = append(tok, s[i])
			in = true
		case c == '`' && i+1 < len(s):
			i++
			if s[i] != '\n' {
				tok = append(tok, s[i])
				in = true
			}
		case c == ' ' || c == '\t':
			endTok()
		case c == ';' || c == '\n' || c == '\r' || c == '|' || c == '&' || c == '{' || c == '}' || c == '(' || c == ')':
			endStmt()
		default:
			tok = append(tok, c)
			in = true
		}
	}
	endStmt()
	return out
}
