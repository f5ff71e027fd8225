package shell

import (
	"regexp"
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
// segments, following nested cmd /c, powershell, Invoke-Expression, Start-Process and cmd's for
// loops, and hands the floor what pipelines and .NET calls delete (Get-ChildItem C:\ |
// Remove-Item, [IO.Directory]::Delete(…)) and the loops that start processes without end.
func (w *walker) windowsScript(text, origin string) {
	c := w.floorOnly(origin)
	d := c.deeper(origin)
	if d == nil || !d.step() {
		return
	}
	if what := windowsForkBomb(text); what != "" {
		w.forkBomb(what)
	}
	d.windowsLoops(text, origin)
	d.dotnetDeletes(text, origin)
	var lister *winList
	for _, st := range windowsStatements(text) {
		toks := st.toks
		args := make([]Arg, len(toks))
		for i, t := range toks {
			args[i] = lit(t)
		}
		s := d.emit(args, KindCommand)
		s.Windows = true
		s.Origin = origin
		if st.sep != '|' && !st.braced {
			lister = nil
		}
		base := Base(toks[0])
		switch {
		case winLister(base):
			if st.next == '|' {
				lister = listed(toks)
			}
		case lister != nil && winDeleter(base) && (st.sep == '|' || refersToItem(toks)):
			// What the pipeline lists is what is deleted.
			del := []Arg{lit("Remove-Item"), lit("-Force")}
			if lister.recurse || hasRecurse(toks) {
				del = append(del, lit("-Recurse"))
			}
			del = append(del, lit(strings.TrimRight(lister.path, `\/`)+`\*`))
			ds := d.emit(del, KindCommand)
			ds.Windows, ds.Origin = true, origin+" pipeline"
		}
		switch base {
		case "cmd":
			for i := 1; i < len(toks); i++ {
				if v := strings.ToLower(toks[i]); v == "/c" || v == "/k" || v == "/r" {
					d.windowsScript(strings.Join(toks[i+1:], " "), "cmd /c")
					break
				}
			}
		case "powershell", "pwsh":
			d.powershellArgs(toks[1:], false)
		case "iex", "invoke-expression":
			if len(toks) > 1 {
				d.windowsScript(strings.Join(toks[1:], " "), "Invoke-Expression")
			}
		case "start-process", "saps", "start":
			if cmd := startProcess(toks); cmd != "" {
				d.windowsScript(cmd, "Start-Process")
			}
		case "forfiles":
			if cmd := forfiles(toks); cmd != "" {
				d.windowsScript(cmd, "forfiles")
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

// winList is what a listing cmdlet in a pipeline hands on.
type winList struct {
	path    string
	recurse bool
}

// winLister names the commands that list a directory's items into a pipeline.
func winLister(base string) bool {
	switch base {
	case "get-childitem", "gci", "dir", "ls", "get-item", "gi", "childitem":
		return true
	}
	return false
}

// winDeleter names the commands that delete the items they are handed.
func winDeleter(base string) bool {
	switch base {
	case "remove-item", "ri", "rm", "del", "erase", "rd", "rmdir", "rni":
		return true
	}
	return false
}

// listed reads the path (and -Recurse) of a listing cmdlet.
func listed(toks []string) *winList {
	l := &winList{path: "."}
	positional := false
	for i := 1; i < len(toks); i++ {
		t := toks[i]
		lt := strings.ToLower(t)
		switch {
		case strings.HasPrefix(lt, "-r") && strings.HasPrefix("-recurse", lt):
			l.recurse = true
		case lt == "-path" || lt == "-literalpath" || lt == "-lp" || lt == "-pspath":
			if i+1 < len(toks) {
				i++
				l.path = toks[i]
			}
		case strings.HasPrefix(lt, "-path:") || strings.HasPrefix(lt, "-literalpath:"):
			_, l.path, _ = strings.Cut(t, ":")
		case strings.HasPrefix(lt, "-filter") || strings.HasPrefix(lt, "-include") || strings.HasPrefix(lt, "-exclude") || lt == "-depth":
			i++
		case strings.HasPrefix(t, "-"):
		case !positional:
			l.path, positional = t, true
		}
	}
	return l
}

// refersToItem reports a statement that works on the pipeline's current item ($_, $PSItem).
func refersToItem(toks []string) bool {
	for _, t := range toks[1:] {
		lt := strings.ToLower(t)
		if strings.HasPrefix(lt, "$_") || strings.HasPrefix(lt, "$psitem") {
			return true
		}
	}
	return false
}

func hasRecurse(toks []string) bool {
	for _, t := range toks[1:] {
		lt := strings.ToLower(t)
		if len(lt) > 1 && lt[0] == '-' && strings.HasPrefix("-recurse", lt) || lt == "/s" {
			return true
		}
	}
	return false
}

// startProcess is the command line Start-Process (or cmd's start) runs: the program and its
// -ArgumentList.
func startProcess(toks []string) string {
	prog, argList := "", ""
	positional := 0
	for i := 1; i < len(toks); i++ {
		t := toks[i]
		lt := strings.ToLower(t)
		switch {
		case lt == "-filepath" || lt == "-file":
			if i+1 < len(toks) {
				i++
				prog = toks[i]
			}
		case lt == "-argumentlist" || lt == "-args" || lt == "-arguments":
			if i+1 < len(toks) {
				i++
				argList = toks[i]
			}
		case strings.HasPrefix(lt, "-") || strings.HasPrefix(lt, "/") && toks[0] == "start":
			if lt == "-verb" || lt == "-workingdirectory" || lt == "-windowstyle" || lt == "-redirectstandardoutput" ||
				lt == "-redirectstandardinput" || lt == "-redirectstandarderror" || lt == "-credential" {
				i++
			}
		default:
			positional++
			switch positional {
			case 1:
				prog = t
			case 2:
				if toks[0] == "start" || strings.EqualFold(toks[0], "start") {
					argList = strings.Join(toks[i:], " ")
					i = len(toks)
				} else {
					argList = t
				}
			}
		}
	}
	if prog == "" {
		return ""
	}
	return prog + " " + strings.ReplaceAll(argList, ",", " ")
}

// forfiles runs its /c command for every file under /p (with /s, recursively): the floor reads
// it with @path standing for every item there.
func forfiles(toks []string) string {
	dir, cmd, recurse := ".", "", false
	for i := 1; i < len(toks); i++ {
		lt := strings.ToLower(toks[i])
		switch {
		case lt == "/p" && i+1 < len(toks):
			i++
			dir = toks[i]
		case strings.HasPrefix(lt, "/p") && len(lt) > 2:
			dir = toks[i][2:]
		case lt == "/c" && i+1 < len(toks):
			i++
			cmd = toks[i]
		case lt == "/s":
			recurse = true
		case lt == "/m" || lt == "/d":
			i++
		}
	}
	if cmd == "" {
		return ""
	}
	item := strings.TrimRight(dir, `\/`) + `\*`
	for _, v := range []string{"@path", "@file", "@fname", "@relpath"} {
		cmd = replaceFold(cmd, v, item)
	}
	if recurse {
		cmd += " /s"
	}
	return cmd
}

// replaceFold replaces old (lower case) in s, ignoring ASCII case.
func replaceFold(s, old, repl string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if i+len(old) <= len(s) && strings.EqualFold(s[i:i+len(old)], old) {
			b.WriteString(repl)
			i += len(old)
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// cmd's for loops: for /d %i in (SET) do CMD, for /r DIR %i in (SET) do CMD, for %%i in … — the
// floor reads CMD with the loop variable standing for each item of the set.
var cmdForRE = regexp.MustCompile(`(?i)\bfor\s+(?:/([dlrf])\s+(?:("[^"]*"|[^\s%"]+)\s+)?)?%%?([a-z])\s+in\s*\(([^)]*)\)\s*do\s+(.+)`)

func (w *walker) windowsLoops(text, origin string) {
	for _, m := range cmdForRE.FindAllStringSubmatch(text, 8) {
		kind, root, v, set, body := strings.ToLower(m[1]), strings.Trim(m[2], `"`), m[3], m[4], m[5]
		if kind == "l" || kind == "f" {
			continue // numbers and file contents
		}
		for _, item := range strings.FieldsFunc(set, func(r rune) bool { return r == ' ' || r == ',' || r == ';' }) {
			item = strings.Trim(item, `"`)
			if kind == "r" && root != "" && !strings.Contains(item, `:`) {
				item = strings.TrimRight(root, `\/`) + `\` + item
			}
			cmd := body
			for _, ref := range []string{"%%" + v, "%" + v} {
				cmd = replaceFold(cmd, strings.ToLower(ref), item)
			}
			w.windowsScript(cmd, "for")
		}
	}
}

// [System.IO.Directory]::Delete('C:\', $true) and friends: a recursive delete.
var dotnetDeleteRE = regexp.MustCompile(`(?i)\[(?:system\.)?io\.directory\]::delete\(\s*['"]([^'"]+)['"]\s*(,\s*\$?true)?|` +
	`\[microsoft\.visualbasic\.fileio\.filesystem\]::deletedirectory\(\s*['"]([^'"]+)['"]|` +
	`\(\s*(?:get-item|gi)\s+['"]?([^'")\s]+)['"]?\s*\)\.delete\(\s*\$?true`)

func (w *walker) dotnetDeletes(text, origin string) {
	for _, m := range dotnetDeleteRE.FindAllStringSubmatch(text, 8) {
		p := m[1]
		if p == "" {
			p = m[3]
		}
		if p == "" {
			p = m[4]
		}
		if p == "" {
			continue
		}
		del := []Arg{lit("Remove-Item"), lit("-Force"), lit(p)}
		if m[2] != "" || m[3] != "" || m[4] != "" {
			del = []Arg{lit("Remove-Item"), lit("-Recurse"), lit("-Force"), lit(p)}
		}
		s := w.emit(del, KindCommand)
		s.Windows, s.Origin = true, origin+" .NET delete"
	}
}

// PowerShell's endless loops (while ($true), for (;;), do {…} while (1)) and cmd's label
// loops (:a … goto a) that start processes.
var (
	psEndlessRE = regexp.MustCompile(`(?is)\b(?:while\s*\(\s*(?:\$true|1|!\s*\$false)\s*\)|for\s*\(\s*[^;)]*;\s*;[^)]*\)|do\s*\{.*\}\s*(?:while\s*\(\s*(?:\$true|1)\s*\)|until\s*\(\s*(?:\$false|0)\s*\)))`)
	psSpawnRE   = regexp.MustCompile(`(?i)\b(?:start-process|saps|start-job|sajb|start-threadjob|invoke-command\b[^|;]*-asjob|start)\b`)
	cmdLabelRE  = regexp.MustCompile(`(?im)(?:^|[&\n])\s*:([a-z0-9_]+)\b`)
)

func windowsForkBomb(text string) string {
	if loc := psEndlessRE.FindStringIndex(text); loc != nil && psSpawnRE.MatchString(text[loc[0]:]) {
		return "an endless PowerShell loop starts processes"
	}
	for _, m := range cmdLabelRE.FindAllStringSubmatchIndex(text, 8) {
		label := text[m[2]:m[3]]
		rest := text[m[1]:]
		g := regexp.MustCompile(`(?i)\bgoto\s+:?` + regexp.QuoteMeta(label) + `\b`).FindStringIndex(rest)
		if g != nil && regexp.MustCompile(`(?i)\bstart\b`).MatchString(rest[:g[0]]) {
			return "a cmd loop (goto " + label + ") starts processes"
		}
	}
	return ""
}

// windowsStmt is one statement of a cmd.exe or PowerShell line: its tokens, the separator
// before and after it, and whether it is inside braces (a script block).
type windowsStmt struct {
	toks      []string
	sep, next byte
	braced    bool
}

// windowsStatements splits a cmd.exe or PowerShell command line into statements of tokens.
// Quotes group, ^ and ` escape; ; | & newlines and braces separate statements.
func windowsStatements(s string) []windowsStmt {
	var out []windowsStmt
	var cur []string
	var tok []byte
	in := false
	depth := 0
	var sep byte
	endTok := func() {
		if in {
			cur = append(cur, string(tok))
			tok = tok[:0]
			in = false
		}
	}
	endStmt := func(c byte) {
		endTok()
		if len(cur) > 0 {
			out = append(out, windowsStmt{toks: cur, sep: sep, next: c, braced: depth > 0})
			cur = nil
		}
		if len(cur) == 0 {
			sep = c
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
			endStmt(c)
			switch c {
			case '{':
				depth++
			case '}':
				if depth > 0 {
					depth--
				}
			}
		default:
			tok = append(tok, c)
			in = true
		}
	}
	endStmt(0)
	return out
}

// looksWindows reports a command line with the marks of cmd.exe or PowerShell: a backslash,
// %VARIABLE% or %0, goto, a drive path (C:/, c:\\), $env:, a .NET call ([IO.File]::), a Verb-Noun
// cmdlet (Remove-Item) or a PowerShell parameter (-Recurse). A line bash reads has them only in
// Windows agents' shell tools, where the floor also reads it the Windows way. A short option in
// capitals (git log -S, grep -E) is not such a mark.
func looksWindows(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\', '%':
			return true
		case 'g', 'G':
			if hasFoldASCIIAt(s, i, "goto") {
				return true
			}
		case '$':
			if hasFoldASCIIAt(s, i, "$env:") {
				return true
			}
		case ']':
			if strings.HasPrefix(s[i:], "]::") {
				return true // [IO.File]::Delete
			}
		case ':':
			// A drive at the start of a word: C:/ or c:\.
			if i > 0 && i+1 < len(s) && (s[i+1] == '/' || s[i+1] == '\\') && isASCIILetter(s[i-1]) &&
				(i == 1 || strings.IndexByte(" \t\n'\"(=;&|,", s[i-2]) >= 0) {
				return true
			}
		case '-':
			// Remove-Item, -Recurse: a capital after the dash, then a small letter.
			if i+2 < len(s) && 'A' <= s[i+1] && s[i+1] <= 'Z' && 'a' <= s[i+2] && s[i+2] <= 'z' {
				return true
			}
		}
	}
	return false
}

// hasFoldASCIIAt reports whether s holds the lower-case ASCII word sub at i, ignoring case.
func hasFoldASCIIAt(s string, i int, sub string) bool {
	if len(s)-i < len(sub) {
		return false
	}
	for j := 0; j < len(sub); j++ {
		c := s[i+j]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != sub[j] {
			return false
		}
	}
	return true
}

func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
