package render

import (
	"path"
	"strings"
)

// Secrets that only the shape of a command line gives away — no name, no vendor prefix:
//
//   - what is fed to a command that reads a secret from its standard input: the echo, printf
//     or here-document before `| docker login --password-stdin`, `| chpasswd`, `| gh secret
//     set NAME`, the here-string after `vault login - <<<`;
//   - the values a secret-setting command takes: `gh secret set NAME --body V`, `vault kv put
//     PATH k=V`, `aws ssm put-parameter --value V`, `kubectl create secret … --from-literal=k=V`;
//   - the whole of a shell word assigned to a secret-sounding name, punctuation included
//     (`--from-literal=password=p@ss,w0rd}`), where the text rules stop at the first comma or
//     brace because outside a shell those end a value.
//
// The command line is split into words and pipelines the way a POSIX shell would (quotes,
// escapes, here-documents), well enough to find these; nothing here decides what runs.

// shWord is one word of a command line.
type shWord struct {
	start, end int    // the word as written
	value      string // as the shell reads it: quotes removed, escapes resolved
	expanded   bool   // it holds an expansion ($VAR, $(…), `…`): not a literal
	redirect   bool   // the target of a redirection, not an argument
}

// shSegment is one simple command: its words, whether its standard input is the previous
// command's output (a pipe), and the here-strings and here-documents it reads.
type shSegment struct {
	words []shWord
	piped bool
	data  [][2]int
	// group is, for the empty segment that follows a closing ")" or "}", 1 + the index of
	// the first segment inside the group: a pipe after the group reads the output of all
	// of them ((echo pw) | docker login --password-stdin).
	group int
}

type pendingHeredoc struct {
	delim string
	strip bool // <<- strips leading tabs
	seg   int
}

// maxShellText bounds the text split into words; longer texts are cut there (the cut is
// long past what a card shows).
const maxShellText = 64 << 10

// shellSegments splits a command line into simple commands.
func shellSegments(s string) []shSegment {
	if len(s) > maxShellText {
		s = s[:maxShellText]
	}
	var segs []shSegment
	var cur shSegment
	var pending []pendingHeredoc
	flush := func(piped bool) {
		segs = append(segs, cur)
		cur = shSegment{piped: piped}
	}
	redirect, hereString, heredoc, strip := false, false, false, false
	var groups []int // the first segment of each open group
	for i := 0; i < len(s); {
		c := s[i]
		switch c {
		case ' ', '\t', '\r':
			i++
		case '\\':
			if i+1 < len(s) && s[i+1] == '\n' { // a line continuation between words
				i += 2
				continue
			}
			w, next := readShellWord(s, i)
			i = next
			cur.words = append(cur.words, w)
		case '\n':
			flush(false)
			i++
			for _, h := range pending {
				i = readHeredoc(s, i, h, segs)
			}
			pending = pending[:0]
		case '#':
			if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
				i += j
			} else {
				i = len(s)
			}
		case '|':
			i++
			if i < len(s) && s[i] == '|' {
				i++
				flush(false)
			} else {
				if i < len(s) && s[i] == '&' {
					i++
				}
				flush(true)
			}
		case '&':
			i++
			if i < len(s) && s[i] == '>' {
				redirect = true
				i++
				continue
			}
			if i < len(s) && s[i] == '&' {
				i++
			}
			flush(false)
		case ';':
			i++
			flush(false)
		case '(', '{':
			i++
			flush(false)
			groups = append(groups, len(segs))
		case ')', '}':
			i++
			flush(false)
			if n := len(groups); n > 0 {
				cur.group = groups[n-1] + 1
				groups = groups[:n-1]
			}
		case '<', '>':
			switch {
			case strings.HasPrefix(s[i:], "<<<"):
				hereString = true
				i += 3
			case strings.HasPrefix(s[i:], "<<-"):
				heredoc, strip = true, true
				i += 3
			case strings.HasPrefix(s[i:], "<<"):
				heredoc, strip = true, false
				i += 2
			default:
				redirect = true
				i++
				for i < len(s) && (s[i] == '>' || s[i] == '&' || s[i] == '|') {
					i++
				}
			}
			// A file descriptor number right before the operator belongs to it.
			if n := len(cur.words); n > 0 && cur.words[n-1].end == i-1 && isDigits(cur.words[n-1].value) {
				cur.words[n-1].redirect = true
			}
		default:
			w, next := readShellWord(s, i)
			i = next
			switch {
			case hereString:
				hereString = false
				a, b := innerSpan(s, w.start, w.end)
				cur.data = append(cur.data, [2]int{a, b})
			case heredoc:
				heredoc = false
				pending = append(pending, pendingHeredoc{delim: w.value, strip: strip, seg: len(segs)})
			default:
				w.redirect = redirect
				redirect = false
				cur.words = append(cur.words, w)
			}
		}
	}
	flush(false)
	for _, h := range pending {
		readHeredoc(s, len(s), h, segs) // a here-document never started: nothing to read
	}
	return segs
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// readHeredoc records the body of a here-document that starts at i as data of its
// segment, and returns where the text after its delimiter line begins.
func readHeredoc(s string, i int, h pendingHeredoc, segs []shSegment) int {
	start := i
	for i < len(s) {
		eol := strings.IndexByte(s[i:], '\n')
		line := s[i:]
		next := len(s)
		if eol >= 0 {
			line, next = s[i:i+eol], i+eol+1
		}
		cmp := strings.TrimSuffix(line, "\r")
		if h.strip {
			cmp = strings.TrimLeft(cmp, "\t")
		}
		if cmp == h.delim {
			if i > start && h.seg < len(segs) {
				segs[h.seg].data = append(segs[h.seg].data, [2]int{start, i - 1})
			}
			return next
		}
		i = next
	}
	if i > start && h.seg < len(segs) {
		segs[h.seg].data = append(segs[h.seg].data, [2]int{start, i})
	}
	return i
}

// readShellWord reads the word that starts at s[i].
func readShellWord(s string, i int) (shWord, int) {
	w := shWord{start: i}
	// A plain word (no quoting, escape or expansion) is its own value: no copy.
	j := i
	for j < len(s) && !specialWordByte(s[j]) {
		j++
	}
	if j == len(s) || wordEndByte(s[j]) {
		w.end, w.value = j, s[i:j]
		return w, j
	}
	var b strings.Builder
	b.WriteString(s[i:j])
	i = j
	for i < len(s) {
		c := s[i]
		switch c {
		case ' ', '\t', '\n', '\r', '|', '&', ';', '<', '>', '(', ')':
			w.end, w.value = i, b.String()
			return w, i
		case '\\':
			if i+1 < len(s) {
				if s[i+1] != '\n' {
					b.WriteByte(s[i+1])
				}
				i += 2
			} else {
				i++
			}
		case '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				b.WriteString(s[i+1:])
				i = len(s)
			} else {
				b.WriteString(s[i+1 : i+1+j])
				i += j + 2
			}
		case '"':
			i++
			for i < len(s) && s[i] != '"' {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`\n", s[i+1]) >= 0 {
					if s[i+1] != '\n' {
						b.WriteByte(s[i+1])
					}
					i += 2
					continue
				}
				if s[i] == '$' || s[i] == '`' {
					w.expanded = true
				}
				b.WriteByte(s[i])
				i++
			}
			i++
		case '$':
			w.expanded = true
			if i+1 < len(s) && (s[i+1] == '(' || s[i+1] == '{') {
				j := closing(s, i+1)
				b.WriteString(s[i:j])
				i = j
				continue
			}
			b.WriteByte(c)
			i++
		case '`':
			w.expanded = true
			j := strings.IndexByte(s[i+1:], '`')
			if j < 0 {
				j = len(s) - i - 1
			}
			b.WriteString(s[i : i+j+1])
			i += j + 2
		default:
			b.WriteByte(c)
			i++
		}
	}
	w.end, w.value = min(i, len(s)), b.String()
	return w, w.end
}

func wordEndByte(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '|', '&', ';', '<', '>', '(', ')':
		return true
	}
	return false
}

func specialWordByte(c byte) bool {
	return wordEndByte(c) || c == '\\' || c == '\'' || c == '"' || c == '$' || c == '`'
}

// closing returns the index after the bracket that closes the one at s[i].
func closing(s string, i int) int {
	open, shut := s[i], byte(')')
	if open == '{' {
		shut = '}'
	}
	depth := 0
	for j := i; j < len(s); j++ {
		switch s[j] {
		case open:
			depth++
		case shut:
			depth--
			if depth == 0 {
				return j + 1
			}
		}
	}
	return len(s)
}

// innerSpan is the part of s[a:b] to mask: inside the quotes when the text is one quoted
// string, else all of it.
func innerSpan(s string, a, b int) (int, int) {
	if b-a >= 2 && (s[a] == '\'' || s[a] == '"') && s[b-1] == s[a] && !strings.ContainsRune(s[a+1:b-1], rune(s[a])) {
		return a + 1, b - 1
	}
	return a, b
}

// base is a command word's name: the file name, lower case, without ".exe".
func base(w string) string {
	plain := true
	for i := 0; i < len(w); i++ {
		if c := w[i]; c == '/' || c == '\\' || c == '.' || 'A' <= c && c <= 'Z' {
			plain = false
			break
		}
	}
	if plain {
		return w
	}
	return strings.TrimSuffix(strings.ToLower(path.Base(strings.ReplaceAll(w, `\`, "/"))), ".exe")
}

// secretCommand describes a command that takes secrets in its arguments or on its standard
// input.
type secretCommand struct {
	// words are the command and its subcommands ("gh", "secret", "set").
	words []string
	// flags take a secret value: "--body V", "--body=V", "-b V", "-bV".
	flags []string
	// literalFlags take KEY=VALUE whose VALUE is a secret ("--from-literal").
	literalFlags []string
	// assignments: the VALUE of every KEY=VALUE argument is a secret.
	assignments bool
	// positional: the n-th argument that is not a flag, and every one after it, is a secret.
	positional int
	// positionalPlain counts only arguments without '=' as positional (vault login's
	// KEY=VALUE options are not its token).
	positionalPlain bool
	// positionalIf, when set, is a short-option letter without which positional is ignored
	// (htpasswd -b).
	positionalIf byte
	// after: the argument that follows this one is a secret (mysqladmin password NEW).
	after string
	// stdin says when the command reads a secret from its standard input.
	stdin stdinWhen
	// stdinIf is the option (a long one, or a short letter of a cluster) that makes it
	// read the secret from standard input, for stdin == stdinOnFlag.
	stdinIf string
}

type stdinWhen int

const (
	stdinNever    stdinWhen = iota
	stdinAlways             // it always does (chpasswd, wrangler secret put)
	stdinNoValue            // unless a value flag gave the secret (gh secret set)
	stdinOnDash             // when an argument is "-" or a KEY=- assignment (vault login -)
	stdinOnFlag             // when stdinIf is given (passwd --stdin, sudo -S)
	stdinDataFile           // when --data-file is - or /dev/stdin (gcloud secrets)
)

// secretCommands are the commands whose arguments or input are secrets by what they do.
var secretCommands = []secretCommand{
	{words: []string{"gh", "secret", "set"}, flags: []string{"--body", "-b"}, stdin: stdinNoValue},
	{words: []string{"glab", "variable", "set"}, flags: []string{"--value", "-v"}, positional: 2, stdin: stdinNoValue},
	{words: []string{"glab", "variable", "update"}, flags: []string{"--value", "-v"}, positional: 2, stdin: stdinNoValue},
	{words: []string{"vault", "kv", "put"}, assignments: true, stdin: stdinOnDash},
	{words: []string{"vault", "kv", "patch"}, assignments: true, stdin: stdinOnDash},
	{words: []string{"vault", "write"}, assignments: true, stdin: stdinOnDash},
	{words: []string{"vault", "login"}, positional: 1, positionalPlain: true, stdin: stdinOnDash},
	{words: []string{"kubectl", "create", "secret"}, literalFlags: []string{"--from-literal"}},
	{words: []string{"oc", "create", "secret"}, literalFlags: []string{"--from-literal"}},
	{words: []string{"aws", "secretsmanager"}, flags: []string{"--secret-string", "--secret-binary"}},
	{words: []string{"aws", "ssm", "put-parameter"}, flags: []string{"--value"}},
	{words: []string{"az", "keyvault", "secret", "set"}, flags: []string{"--value"}},
	{words: []string{"gcloud", "secrets"}, stdin: stdinDataFile},
	{words: []string{"doppler", "secrets", "set"}, assignments: true, positional: 2},
	{words: []string{"fly", "secrets", "set"}, assignments: true},
	{words: []string{"flyctl", "secrets", "set"}, assignments: true},
	{words: []string{"netlify", "env:set"}, positional: 2},
	{words: []string{"wrangler", "secret", "put"}, stdin: stdinAlways},
	{words: []string{"vercel", "env", "add"}, stdin: stdinAlways},
	{words: []string{"firebase", "functions:secrets:set"}, stdin: stdinAlways},
	{words: []string{"pass", "insert"}, stdin: stdinAlways},
	{words: []string{"docker", "secret", "create"}, stdin: stdinOnDash},
	{words: []string{"podman", "secret", "create"}, stdin: stdinOnDash},
	{words: []string{"security", "add-generic-password"}, flags: []string{"-w"}},
	{words: []string{"security", "add-internet-password"}, flags: []string{"-w"}},
	{words: []string{"htpasswd"}, positional: 3, positionalIf: 'b', stdin: stdinOnFlag, stdinIf: "i"},
	{words: []string{"mysqladmin"}, after: "password"},
	{words: []string{"chpasswd"}, stdin: stdinAlways},
	{words: []string{"chgpasswd"}, stdin: stdinAlways},
	{words: []string{"passwd"}, stdin: stdinOnFlag, stdinIf: "--stdin"},
	{words: []string{"smbpasswd"}, stdin: stdinOnFlag, stdinIf: "s"},
	{words: []string{"sudo"}, stdin: stdinOnFlag, stdinIf: "S"},
}

// shellTriggers are parts, one of which (ASCII lower case) is in every command line that
// shellSecretSpans finds something in: a secret-sounding name, the name of a secret-setting
// command, or an option that reads a secret from standard input.
var shellTriggers = func() []string {
	t := append([]string{"stdin", "-fd", "file", "with-token"}, secretNameParts...)
	for _, sc := range secretCommands {
		t = append(t, sc.words[0])
	}
	return t
}()

// shellSecretSpans finds the secrets of a command line that only its shape shows.
func shellSecretSpans(s string) []span {
	if !strings.ContainsAny(s, " =") {
		return nil
	}
	segs := shellSegments(s)
	var out []span
	add := func(a, b int) {
		if b > a && !alreadyMasked(s[a:b]) {
			out = append(out, span{start: a, end: b, keep: a, generic: true, rule: "shell"})
		}
	}
	fed := make([]bool, len(segs)) // segments whose output was masked already
	for i := range segs {
		seg := &segs[i]
		assignmentSpans(s, seg, add)
		if !commandSpans(s, seg, add) {
			continue
		}
		// It reads a secret from standard input: mask what is fed to it literally.
		for _, d := range seg.data {
			add(d[0], d[1])
		}
		for j := i; j > 0 && segs[j].piped && !fed[j-1]; j-- {
			fed[j-1] = true
			feedSpans(s, &segs[j-1], add)
			// A group's output is that of every command inside it.
			if g := segs[j-1].group; g > 0 {
				for k := g - 1; k < j-1; k++ {
					if !fed[k] {
						fed[k] = true
						feedSpans(s, &segs[k], add)
					}
				}
			}
		}
	}
	return out
}

// assignmentSpans masks, in any command, the value of a word NAME=VALUE whose name says it
// holds a secret — also the KEY=VALUE inside --flag=KEY=VALUE and a quoted "NAME=VALUE" —
// to the end of the shell word, punctuation included.
func assignmentSpans(s string, seg *shSegment, add func(a, b int)) {
	for _, w := range seg.words {
		raw := s[w.start:w.end]
		if strings.IndexByte(raw, '=') < 0 {
			continue
		}
		p := 0
		for p < len(raw) && raw[p] == '-' {
			p++
		}
		for {
			if p < len(raw) && (raw[p] == '"' || raw[p] == '\'') {
				p++
			}
			q := p
			for q < len(raw) && isNameByte(raw[q], false) {
				q++
			}
			if q == p || q >= len(raw) || raw[q] != '=' {
				break
			}
			if name := raw[p:q]; mayNameSecret(name) && classifyName(name) != nameNone {
				a := w.start + q + 1
				b := formEnd(s, a, w.end)
				value := strings.Trim(s[a:b], `"'`)
				if !strings.ContainsAny(value, "$`") && validAssignment(name, value) {
					add(innerSpan(s, a, b))
				}
				break
			}
			p = q + 1
		}
	}
}

// secretNameParts are parts one of which every secret-sounding name has (classifyName
// decides); they spare its work on the many names that have none.
var secretNameParts = []string{"pass", "pw", "secret", "token", "key", "auth", "cred", "cookie", "sig", "salt", "jwt",
	"bearer", "hmac", "pin", "otp", "session", "nonce", "private"}

func mayNameSecret(name string) bool {
	lower := asciiLower(name)
	for _, p := range secretNameParts {
		if strings.Contains(lower, p) {
			return true
		}
	}
	return false
}

// formEnd is where a value that starts at s[a] ends within its word (which ends at end):
// the end of the word, or the start of a following "&name=" (form and query encoding).
func formEnd(s string, a, end int) int {
	for i := a; i < end; i++ {
		if s[i] != '&' {
			continue
		}
		j := i + 1
		for j < end && isNameByte(s[j], false) {
			j++
		}
		if j > i+1 && j < end && s[j] == '=' {
			return i
		}
	}
	return end
}

// commandSpans masks the secret arguments of a secret-setting command and reports whether
// the segment reads a secret from its standard input.
func commandSpans(s string, seg *shSegment, add func(a, b int)) (stdin bool) {
	words := seg.words
	stdin = genericStdinSecret(words)
	var done uint64 // the commands already handled in this segment (the first match counts)
	for at, w := range words {
		if w.redirect {
			continue
		}
		for _, ci := range secretCommandsByName[base(w.value)] {
			if done&(1<<ci) != 0 {
				continue
			}
			args, ok := commandAt(words, at, secretCommands[ci].words)
			if !ok {
				continue
			}
			done |= 1 << ci
			if commandArgs(s, words[args:], &secretCommands[ci], add) {
				stdin = true
			}
		}
	}
	return stdin
}

// commandAt reports whether the command cmd (its name already matched) starts at words[at],
// and where its arguments begin. Options may stand between the words (gh -R o/r secret
// set, vault -namespace=x kv put): an option without "=" may take the word after it.
func commandAt(words []shWord, at int, cmd []string) (int, bool) {
	j := at + 1
	for k := 1; k < len(cmd); k++ {
		for j < len(words) && words[j].value != cmd[k] && strings.HasPrefix(words[j].value, "-") {
			j++
			if j < len(words) && !strings.Contains(words[j-1].value, "=") && words[j].value != cmd[k] && !strings.HasPrefix(words[j].value, "-") {
				j++ // the option's value
			}
		}
		if j >= len(words) || words[j].value != cmd[k] {
			return 0, false
		}
		j++
	}
	return j, true
}

// secretCommandsByName indexes secretCommands by command name.
var secretCommandsByName = func() map[string][]int {
	if len(secretCommands) > 64 {
		panic("render: more secret commands than commandSpans tracks")
	}
	m := map[string][]int{}
	for i, sc := range secretCommands {
		m[sc.words[0]] = append(m[sc.words[0]], i)
	}
	return m
}()

// commandArgs masks the secret arguments of one secret-setting command and reports whether
// it reads a secret from its standard input.
func commandArgs(s string, args []shWord, sc *secretCommand, add func(a, b int)) (stdin bool) {
	valueGiven := false
	positional := 0
	enabled := sc.positionalIf == 0
	dash := false
	for _, a := range args {
		if a.redirect {
			continue
		}
		if sc.positionalIf != 0 && hasShortOption(a.value, sc.positionalIf) {
			enabled = true
		}
		if sc.stdin == stdinOnFlag && (a.value == sc.stdinIf || len(sc.stdinIf) == 1 && hasShortOption(a.value, sc.stdinIf[0])) {
			stdin = true
		}
		if a.value == "-" {
			dash = true
		}
	}
	for k := 0; k < len(args); k++ {
		a := args[k]
		if a.redirect {
			continue
		}
		v := a.value
		if taken, next := flagValue(s, args, k, sc.flags, add); taken {
			valueGiven = true
			k = next
			continue
		}
		if taken, next := literalValue(s, args, k, sc.literalFlags, add); taken {
			k = next
			continue
		}
		if sc.after != "" && v == sc.after && k+1 < len(args) {
			addWord(s, args[k+1], add)
			k++
			continue
		}
		if strings.HasPrefix(v, "-") && v != "-" {
			continue
		}
		if sc.assignments {
			if key, val, ok := strings.Cut(v, "="); ok && key != "" && !strings.ContainsAny(key, "/") {
				if val == "-" {
					dash = true
				} else if !strings.HasPrefix(val, "@") {
					addValueAfterEq(s, a, add)
				}
				continue
			}
		}
		if sc.positionalPlain && strings.Contains(v, "=") {
			continue
		}
		positional++
		if sc.positional > 0 && enabled && positional >= sc.positional {
			addWord(s, a, add)
		}
	}
	switch sc.stdin {
	case stdinAlways:
		stdin = true
	case stdinNoValue:
		stdin = stdin || !valueGiven
	case stdinOnDash:
		stdin = stdin || dash
	case stdinDataFile:
		for k, a := range args {
			v, ok := strings.CutPrefix(a.value, "--data-file=")
			if !ok && a.value == "--data-file" && k+1 < len(args) {
				v, ok = args[k+1].value, true
			}
			if ok && isStdinFile(v) {
				stdin = true
			}
		}
	}
	return stdin
}

// genericStdinSecret reports options, whatever the command, that make it read a secret
// from standard input: --password-stdin and its kin (--token-stdin, --with-token), a
// secret's file descriptor 0 (--passphrase-fd 0), a secret's file that is standard input
// (--password-file=/dev/stdin, --token-file -), openssl's -passin stdin.
func genericStdinSecret(words []shWord) bool {
	for k, w := range words {
		v := w.value
		if !strings.HasPrefix(v, "-") {
			continue
		}
		name, val, hasVal := strings.Cut(v, "=")
		if !hasVal && k+1 < len(words) {
			val = words[k+1].value
		}
		// In prose (an agent's reason) an option may end a clause: "--password-stdin, then".
		name = strings.TrimRight(name, ",.;:!?)")
		switch {
		case name == "--with-token":
			return true
		case strings.HasSuffix(name, "-stdin") && secretName(strings.TrimSuffix(name, "-stdin")):
			return true
		case strings.HasSuffix(name, "-fd") && secretName(strings.TrimSuffix(name, "-fd")) && val == "0":
			return true
		case (strings.HasSuffix(name, "-file") || strings.HasSuffix(name, "file")) && secretName(strings.TrimSuffix(strings.TrimSuffix(name, "file"), "-")) && isStdinFile(val):
			return true
		case (name == "-passin" || name == "-pass" || name == "-password") && (val == "stdin" || val == "fd:0"):
			return true
		}
	}
	return false
}

func secretName(name string) bool {
	return strings.Trim(name, "-") != "" && classifyName(name) != nameNone
}

func isStdinFile(v string) bool {
	switch v {
	case "-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0":
		return true
	}
	return false
}

// hasShortOption reports whether v is a cluster of short options ("-bc") holding letter.
func hasShortOption(v string, letter byte) bool {
	if len(v) < 2 || v[0] != '-' || v[1] == '-' {
		return false
	}
	return strings.IndexByte(v[1:], letter) >= 0
}

// flagValue masks the value of one of flags at args[k] ("--body V", "--body=V", "-b V",
// "-bV"). It reports whether args[k] was such a flag and the index of its last word.
func flagValue(s string, args []shWord, k int, flags []string, add func(a, b int)) (bool, int) {
	v := args[k].value
	for _, f := range flags {
		switch {
		case v == f:
			if k+1 < len(args) {
				addWord(s, args[k+1], add)
				return true, k + 1
			}
			return true, k
		case strings.HasPrefix(v, f+"="):
			addValueAfterEq(s, args[k], add)
			return true, k
		case len(f) == 2 && f[0] == '-' && f[1] != '-' && len(v) > 2 && strings.HasPrefix(v, f):
			a := args[k]
			raw := s[a.start:a.end]
			if i := strings.Index(raw, f); i >= 0 {
				add(innerSpan(s, a.start+i+2, a.end))
			}
			return true, k
		}
	}
	return false, k
}

// literalValue masks the VALUE of "--from-literal=KEY=VALUE" or "--from-literal KEY=VALUE".
func literalValue(s string, args []shWord, k int, flags []string, add func(a, b int)) (bool, int) {
	v := args[k].value
	for _, f := range flags {
		switch {
		case v == f && k+1 < len(args):
			addValueAfterEq(s, args[k+1], add)
			return true, k + 1
		case strings.HasPrefix(v, f+"="):
			w := args[k]
			raw := s[w.start:w.end]
			first := strings.IndexByte(raw, '=')
			if second := strings.IndexByte(raw[first+1:], '='); second >= 0 {
				add(innerSpan(s, w.start+first+1+second+1, w.end))
			}
			return true, k
		}
	}
	return false, k
}

// addWord masks a word given as a secret value, unless it is not literal (a variable, a
// command substitution) or a placeholder.
func addWord(s string, w shWord, add func(a, b int)) {
	if w.expanded || isPlaceholder(w.value) || w.value == "-" {
		return
	}
	add(innerSpan(s, w.start, w.end))
}

// addValueAfterEq masks what follows the first '=' of a word.
func addValueAfterEq(s string, w shWord, add func(a, b int)) {
	raw := s[w.start:w.end]
	eq := strings.IndexByte(raw, '=')
	if eq < 0 {
		return
	}
	_, value, _ := strings.Cut(w.value, "=")
	if w.expanded && strings.ContainsAny(value, "$`") || isPlaceholder(value) {
		return
	}
	add(innerSpan(s, w.start+eq+1, w.end))
}

// feedSpans masks the literal data a command writes into a pipe: echo's and printf's
// arguments (not their options, nor a format made only of directives) and the
// here-strings and here-documents it reads.
func feedSpans(s string, seg *shSegment, add func(a, b int)) {
	for _, d := range seg.data {
		add(d[0], d[1])
	}
	for i, w := range seg.words {
		switch base(w.value) {
		case "echo":
			for _, a := range seg.words[i+1:] {
				if a.redirect || isEchoOption(a.value) {
					continue
				}
				addWord(s, a, add)
			}
			return
		case "printf":
			rest := seg.words[i+1:]
			if len(rest) >= 2 && rest[0].value == "-v" {
				rest = rest[2:]
			}
			for k, a := range rest {
				if a.redirect || k == 0 && onlyDirectives(a.value) {
					continue
				}
				addWord(s, a, add)
			}
			return
		}
	}
}

func isEchoOption(v string) bool {
	if len(v) < 2 || v[0] != '-' {
		return false
	}
	return strings.Trim(v[1:], "neE") == ""
}

// onlyDirectives reports a printf format with no literal text: "%s\n", "%s".
func onlyDirectives(f string) bool {
	for i := 0; i < len(f); i++ {
		switch {
		case f[i] == '%' && i+1 < len(f):
			i++
			for i < len(f) && strings.IndexByte("-#0 +.123456789", f[i]) >= 0 {
				i++
			}
		case f[i] == '\\' && i+1 < len(f):
			i++
		case f[i] == ' ':
		default:
			return false
		}
	}
	return true
}
