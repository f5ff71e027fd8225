package policy

import (
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/approvebot/approvebot/core/shell"
)

// Inline interpreter code (python -c, node -e, a program fed on standard input) names paths in
// its string literals. A literal may spell a path with escapes ("\x2fetc/shadow",
// "/etc/sh\u0061dow"), hold code with literals of its own (exec("open(\"/etc/shadow\")")), be
// one piece of a path joined at run time ("/etc/" + "shadow"), or be decoded first (base64,
// hex, reversed, chr() codes): each of those readings is checked like the literal itself.

// maxLiteralReadings bounds the strings checked for one program.
const maxLiteralReadings = 512

// codeReadings are the strings a program's literals stand for, each at most once.
func codeReadings(lang, code string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if s == "" || len(s) > 4096 || seen[s] || len(out) >= maxLiteralReadings {
			return
		}
		seen[s] = true
		out = append(out, s)
	}
	var walk func(code string, depth int)
	walk = func(code string, depth int) {
		lits := stringLiterals(code)
		decoded := make([]string, len(lits))
		for i, l := range lits {
			add(l)
			d := decodeEscapes(l)
			decoded[i] = d
			add(d)
			if depth < 3 && strings.ContainsAny(l, `'"`+"`") {
				walk(l, depth+1) // code inside the literal: exec("…"), eval('…')
				if d != l {
					walk(d, depth+1)
				}
			}
		}
		// Pieces joined at run time: "/etc/" + "shadow", os.path.join("/etc", "shadow").
		for i := range decoded {
			joined, slashed := decoded[i], decoded[i]
			for k := i + 1; k < len(decoded) && k < i+4; k++ {
				joined += decoded[k]
				slashed += "/" + decoded[k]
				add(joined)
				add(slashed)
			}
		}
		for _, d := range decoded {
			for _, r := range decodedForms(code, d) {
				add(r)
			}
		}
	}
	walk(code, 0)
	for _, r := range charCodeStrings(code) {
		add(r)
	}
	return out
}

// decodeEscapes resolves the backslash escapes the scripting languages share: \xHH, \uHHHH,
// \u{H…}, \UHHHHHHHH, octal \NNN and the one-letter ones.
func decodeEscapes(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch d := s[i]; d {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			v, _ := strconv.ParseUint(s[i:j], 8, 8)
			b.WriteByte(byte(v))
			i = j - 1
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[d]
			j := i + 1
			if d == 'u' && j < len(s) && s[j] == '{' {
				end := strings.IndexByte(s[j:], '}')
				if end > 0 {
					if v, err := strconv.ParseUint(s[j+1:j+end], 16, 32); err == nil {
						b.WriteRune(rune(v))
						i = j + end
						continue
					}
				}
			}
			if j+n <= len(s) {
				if v, err := strconv.ParseUint(s[j:j+n], 16, 32); err == nil {
					if d == 'x' {
						b.WriteByte(byte(v))
					} else if utf8.ValidRune(rune(v)) {
						b.WriteRune(rune(v))
					}
					i = j + n - 1
					continue
				}
			}
			b.WriteByte(d)
		default:
			b.WriteByte(d)
		}
	}
	return b.String()
}

// decodedForms are what a literal may be decoded into when the program decodes: base64, hex,
// or the literal reversed.
func decodedForms(code, lit string) []string {
	var out []string
	low := strings.ToLower(code)
	if len(lit) >= 4 && (strings.Contains(low, "b64") || strings.Contains(low, "base64") || strings.Contains(low, "atob") ||
		strings.Contains(low, "unpack")) {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
			if b, err := enc.DecodeString(strings.TrimSpace(lit)); err == nil {
				out = append(out, string(b))
				break
			}
		}
	}
	if len(lit) >= 4 && (strings.Contains(low, "hex") || strings.Contains(low, "unpack")) {
		if b, err := hex.DecodeString(strings.ReplaceAll(lit, " ", "")); err == nil {
			out = append(out, string(b))
		}
	}
	if strings.Contains(code, "::-1") || strings.Contains(low, "reverse") {
		r := []rune(lit)
		for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
			r[i], r[j] = r[j], r[i]
		}
		out = append(out, string(r))
	}
	return out
}

// charCodeStrings are the strings built from character codes in the program: runs of chr(N)
// (Python, Perl, PHP) joined with "+" or ".", and String.fromCharCode(N, …).
func charCodeStrings(code string) []string {
	var out []string
	if i := strings.Index(code, "fromCharCode("); i >= 0 {
		for rest := code[i:]; ; {
			j := strings.Index(rest, "fromCharCode(")
			if j < 0 {
				break
			}
			rest = rest[j+len("fromCharCode("):]
			end := strings.IndexByte(rest, ')')
			if end < 0 {
				break
			}
			var b strings.Builder
			for _, n := range strings.Split(rest[:end], ",") {
				if v, err := strconv.ParseInt(strings.TrimSpace(n), 0, 32); err == nil && v > 0 && v < 0x110000 {
					b.WriteRune(rune(v))
				}
			}
			out = append(out, b.String())
		}
	}
	if strings.Contains(code, "chr(") {
		var b strings.Builder
		flush := func() {
			if b.Len() > 0 {
				out = append(out, b.String())
				b.Reset()
			}
		}
		rest := code
		for {
			j := strings.Index(rest, "chr(")
			if j < 0 {
				break
			}
			// A run continues across "+", "." and blanks.
			if strings.Trim(rest[:j], " +.,\t") != "" {
				flush()
			}
			rest = rest[j+4:]
			end := strings.IndexByte(rest, ')')
			if end < 0 {
				break
			}
			if v, err := strconv.ParseInt(strings.TrimSpace(rest[:end]), 0, 32); err == nil && v > 0 && v < 0x110000 {
				b.WriteRune(rune(v))
			} else {
				flush()
			}
			rest = rest[end+1:]
		}
		flush()
	}
	return out
}

// interpreterLang names the language of an interpreter that reads its program from a file or
// standard input, or "".
func interpreterLang(base string) string {
	switch {
	case strings.HasPrefix(base, "python") || strings.HasPrefix(base, "pypy"):
		return "python"
	case strings.HasPrefix(base, "perl"):
		return "perl"
	case strings.HasPrefix(base, "ruby"):
		return "ruby"
	case base == "node" || base == "nodejs" || base == "deno" || base == "bun":
		return "javascript"
	case strings.HasPrefix(base, "php"):
		return "php"
	case strings.HasPrefix(base, "lua"):
		return "lua"
	case base == "Rscript" || base == "rscript":
		return "r"
	}
	return ""
}

// stdinProgram reports whether an interpreter call reads its program from standard input
// named as a file (python3 /dev/stdin, perl -, node /dev/fd/0): the first operand.
func stdinProgram(s *shell.Segment) bool {
	for _, a := range s.Args[1:] {
		v := a.Value
		switch v {
		case "-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "/proc/thread-self/fd/0":
			return true
		}
		if strings.HasPrefix(v, "-") {
			if v == "-c" || v == "-e" || v == "-E" || v == "-m" || v == "--eval" || v == "-p" || v == "--print" || v == "-r" {
				return false // inline code, a module: not standard input
			}
			continue
		}
		return false
	}
	return false
}
