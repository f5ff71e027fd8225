package shell

import "strings"

// Match matches s against a glob where "*" matches any run of characters (spaces and
// slashes included), "?" any one character, "[…]" a class and "\" escapes. It runs in
// O(len(p)·len(s)) whatever the pattern.
func Match(p, s string) bool {
	pi, si := 0, 0
	starP, starS := -1, 0
	for si < len(s) {
		if pi < len(p) {
			switch p[pi] {
			case '*':
				starP, starS = pi, si
				pi++
				continue
			case '?':
				pi++
				si++
				continue
			case '[':
				if ok, n := MatchClass(p[pi:], s[si]); n > 0 && ok {
					pi += n
					si++
					continue
				}
			case '\\':
				if pi+1 < len(p) && p[pi+1] == s[si] {
					pi += 2
					si++
					continue
				}
			default:
				if p[pi] == s[si] {
					pi++
					si++
					continue
				}
			}
		}
		if starP >= 0 {
			starS++
			pi, si = starP+1, starS
			continue
		}
		return false
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}

// MatchClass matches c against the class at the start of p and returns the class length.
func MatchClass(p string, c byte) (bool, int) {
	i := 1
	neg := false
	if i < len(p) && (p[i] == '!' || p[i] == '^') {
		neg = true
		i++
	}
	matched := false
	first := true
	for i < len(p) && (p[i] != ']' || first) {
		first = false
		if p[i] == '[' && i+1 < len(p) && p[i+1] == ':' {
			// A POSIX class: [:alpha:], [:digit:], …
			if end := strings.Index(p[i+2:], ":]"); end >= 0 {
				if posixClass(p[i+2:i+2+end], c) {
					matched = true
				}
				i += 2 + end + 2
				continue
			}
		}
		lo := p[i]
		hi := lo
		if i+2 < len(p) && p[i+1] == '-' && p[i+2] != ']' {
			hi = p[i+2]
			i += 2
		}
		if lo <= c && c <= hi {
			matched = true
		}
		i++
	}
	if i >= len(p) {
		return false, 0
	}
	return matched != neg, i + 1
}

// posixClass reports whether c is in the POSIX character class name (C locale).
func posixClass(name string, c byte) bool {
	lower, upper, digit := c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9'
	switch name {
	case "alpha":
		return lower || upper
	case "digit":
		return digit
	case "alnum":
		return lower || upper || digit
	case "upper":
		return upper
	case "lower":
		return lower
	case "space":
		return c == ' ' || c >= '\t' && c <= '\r'
	case "blank":
		return c == ' ' || c == '\t'
	case "punct":
		return c > ' ' && c < 0x7f && !lower && !upper && !digit
	case "print":
		return c >= ' ' && c < 0x7f
	case "graph":
		return c > ' ' && c < 0x7f
	case "cntrl":
		return c < ' ' || c == 0x7f
	case "xdigit":
		return digit || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
	case "word":
		return lower || upper || digit || c == '_'
	}
	return false
}
