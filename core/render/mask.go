package render

import (
	"math"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaskMark replaces the secret part of a match. When the kept part ends inside a token (a
// vendor prefix such as "ghp_"), Ellipsis comes first: "ghp_…[masked]".
const MaskMark = "[masked]"

// secretRule is one entry of the catalog in secrets.go. The regular expression finds a
// candidate; the submatch named "s" (or "s2", "s3" for alternatives) is the part replaced,
// so whatever precedes it in the match — a vendor prefix, a header name, "password=" — stays
// visible. The submatch named "n", when present, is the name a value was assigned to.
type secretRule struct {
	id   string
	kind string
	// keywords are literals one of which appears in every match; the expression only runs
	// when the text contains one. They are lower-case for (?i) expressions (searched in the
	// ASCII-lower-cased text) and exact otherwise.
	keywords []string
	// pre, when set, is a cheaper test than the expression that every matching text passes.
	pre func(s string) bool
	// back and fwd bound where a match may start before and end after a keyword: the
	// expression only runs on windows around keyword occurrences (defaults
	// defaultBack and defaultFwd; a match that reaches the end of its window is retried on
	// a longer one, so long secrets such as PEM blocks are still caught whole).
	back, fwd int
	// names, when set, makes this a name rule: see nameRule.
	names *nameRule
	re    *regexp.Regexp
	// valid, when set, decides on a candidate from its name and secret value.
	valid func(name, value string) bool
	// generic rules find secrets by context (a name, a header, a flag) rather than by a
	// vendor's format. Where a generic value starts with a vendor token, the vendor's
	// prefix stays visible: GITHUB_TOKEN=ghp_…[masked], not GITHUB_TOKEN=[masked].
	generic bool
}

const (
	defaultBack = 64
	defaultFwd  = 512
)

// nameRule finds assignments to secret-sounding names without a costly leading wildcard:
// each keyword occurrence is widened to the whole name around it, and the expression
// (anchored with ^) matches what follows the name: separator and value.
type nameRule struct {
	// flag: the name is a command-line flag: it starts with '-' and has no '.'.
	flag bool
	// scheme: the keyword is "://" and the name is the URL scheme before it.
	scheme bool
	// after, when set, lists the bytes one of which must precede the name (start of text
	// for flags).
	after string
}

// shortValueWindow is how far after a name a value is first looked for; a match reaching
// it (or an open quote) is retried up to the end of the line — for at most maxLongValues
// names of one rule in one text.
const (
	shortValueWindow = 128
	maxLongValues    = 8
)

type compiledRule struct {
	secretRule
	fold bool  // the expression ignores case: keywords are searched in lower-cased text
	sIdx []int // indexes of the s, s2, s3 groups
	nIdx int   // index of the n group, or -1
}

func compileRules(rules []secretRule) []compiledRule {
	out := make([]compiledRule, 0, len(rules))
	for _, r := range rules {
		c := compiledRule{secretRule: r, nIdx: r.re.SubexpIndex("n"), fold: strings.HasPrefix(r.re.String(), "(?i)") || r.names != nil}
		for _, name := range []string{"s", "s2", "s3"} {
			if i := r.re.SubexpIndex(name); i >= 0 {
				c.sIdx = append(c.sIdx, i)
			}
		}
		if len(c.sIdx) == 0 {
			panic("render: secret rule " + r.id + " has no (?P<s>…) group")
		}
		if r.names != nil && !strings.HasPrefix(r.re.String(), "^") {
			panic("render: name rule " + r.id + " must be anchored with ^")
		}
		out = append(out, c)
	}
	return out
}

// candidate is one match of a rule: the secret text[a:b], the name it was assigned to, and
// where the kept part of the match begins.
type candidate struct {
	a, b int
	name string
	keep int
	// forced candidates are masked without the rule's validator (see nameCandidates).
	forced bool
}

// span is one secret to hide: text[start:end]. keep is where the kept part of its match
// begins (the vendor prefix), for specific rules.
type span struct {
	start, end int
	keep       int
	generic    bool
	rule       string
}

// asciiLower lower-cases ASCII letters only, so byte offsets stay those of s.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// byteSet records which bytes occur in a text: a keyword with a byte not in it cannot
// occur, which spares most substring searches on short texts.
type byteSet [256]bool

func bytesOf(s string) *byteSet {
	var b byteSet
	for i := 0; i < len(s); i++ {
		b[s[i]] = true
	}
	return &b
}

// candidates returns the rule's matches in s. exact and folded are the byte sets of s and
// lower (nil: not known).
func (r *compiledRule) candidates(s, lower string, sets ...*byteSet) []candidate {
	hay := s
	var set *byteSet
	if len(sets) == 2 {
		set = sets[0]
		if r.fold {
			set = sets[1]
		}
	}
	if r.fold {
		hay = lower
	}
	if len(r.keywords) > 0 && !containsAny(hay, r.keywords, set) || r.pre != nil && !r.pre(s) {
		return nil
	}
	switch {
	case r.names != nil:
		return r.nameCandidates(s, lower)
	case len(r.keywords) > 0:
		return r.windowCandidates(s, hay)
	}
	return r.fromMatches(s, 0, r.re.FindAllStringSubmatchIndex(s, -1), "")
}

func (r *compiledRule) fromMatches(s string, off int, ms [][]int, name string) []candidate {
	var out []candidate
	for _, m := range ms {
		a, b := -1, -1
		for _, g := range r.sIdx {
			if m[2*g] >= 0 && m[2*g+1] > m[2*g] {
				a, b = off+m[2*g], off+m[2*g+1]
				break
			}
		}
		if a < 0 {
			continue
		}
		c := candidate{a: a, b: b, name: name, keep: off + m[0]}
		if r.nIdx >= 0 && m[2*r.nIdx] >= 0 {
			c.name = s[off+m[2*r.nIdx] : off+m[2*r.nIdx+1]]
			c.keep = off + m[2*r.nIdx]
		} else if ch, size := utf8.DecodeRuneInString(s[c.keep:]); c.keep < a && ch != '-' && !unicode.IsLetter(ch) && !unicode.IsDigit(ch) {
			c.keep += size // a boundary character before the token
		}
		out = append(out, c)
	}
	return out
}

func (r *compiledRule) windowCandidates(s, hay string) []candidate {
	back, fwd := r.back, r.fwd
	if back == 0 {
		back = defaultBack
	}
	if fwd == 0 {
		fwd = defaultFwd
	}
	var wins [][2]int
	for _, kw := range r.keywords {
		for off := 0; ; {
			i := strings.Index(hay[off:], kw)
			if i < 0 {
				break
			}
			p := off + i
			wins = append(wins, [2]int{max(0, p-back), min(len(s), p+len(kw)+fwd)})
			off = p + len(kw)
		}
	}
	if len(r.keywords) > 1 {
		sort.Slice(wins, func(i, j int) bool { return wins[i][0] < wins[j][0] })
	}
	merged := wins[:0]
	for _, w := range wins {
		if n := len(merged); n > 0 && w[0] <= merged[n-1][1] {
			merged[n-1][1] = max(merged[n-1][1], w[1])
		} else {
			merged = append(merged, w)
		}
	}
	var out []candidate
	for _, w := range merged {
		for {
			ms := r.re.FindAllStringSubmatchIndex(s[w[0]:w[1]], -1)
			if w[1] < len(s) && len(ms) > 0 && ms[len(ms)-1][1] == w[1]-w[0] {
				w[1] = min(len(s), w[1]+4*(w[1]-w[0]))
				continue
			}
			out = append(out, r.fromMatches(s, w[0], ms, "")...)
			break
		}
	}
	return out
}

func isASCIILetterByte(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func isSchemeByte(c byte) bool {
	return isASCIILetterByte(c) || '0' <= c && c <= '9' || c == '+' || c == '.' || c == '-'
}

func isNameByte(c byte, flag bool) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' ||
		!flag && c == '.'
}

func (r *compiledRule) nameCandidates(s, lower string) []candidate {
	flag := r.names.flag
	var out []candidate
	seen := map[int]bool{}
	long := 0 // values searched to the end of their line
	for _, kw := range r.keywords {
		eol := -1 // the end of the line of the last name, while names stay on it
		for off := 0; ; {
			i := strings.Index(lower[off:], kw)
			if i < 0 {
				break
			}
			p := off + i
			off = p + len(kw)
			start, end := p, p+len(kw)
			if r.names.scheme {
				for start > 0 && isSchemeByte(s[start-1]) {
					start--
				}
				if start == p || !isASCIILetterByte(s[start]) {
					continue
				}
			} else {
				for start > 0 && isNameByte(s[start-1], flag) {
					start--
				}
				for end < len(s) && isNameByte(s[end], flag) {
					end++
				}
			}
			off = max(off, end) // the rest of this name holds no other name
			if seen[start] {
				continue
			}
			seen[start] = true
			if flag && s[start] != '-' {
				continue
			}
			if r.names.after != "" {
				if start == 0 && !flag || start > 0 && strings.IndexByte(r.names.after, s[start-1]) < 0 {
					continue
				}
			}
			// A value never spans lines: look for it up to the end of the line, first in a
			// short window (the expression's cost grows with its input).
			if end > eol {
				eol = len(s)
				if i := strings.IndexByte(s[end:], '\n'); i >= 0 {
					eol = end + i
				}
			}
			limit := min(eol, end+shortValueWindow)
			m := r.re.FindStringSubmatchIndex(s[end:limit])
			if limit < eol && (m != nil && m[1] == limit-end || m == nil && strings.ContainsAny(s[end:min(limit, end+16)], `"'`)) {
				if long == maxLongValues {
					// A line with this many long values is not an honest command: rather
					// than search the rest of the line again for each name (quadratic), mask
					// it all (fail closed).
					out = append(out, candidate{a: end, b: eol, name: s[start:end], keep: start, forced: true})
					off = max(off, eol)
					continue
				}
				long++
				m = r.re.FindStringSubmatchIndex(s[end:eol])
			}
			if m == nil {
				continue
			}
			for _, c := range r.fromMatches(s, end, [][]int{m}, s[start:end]) {
				c.keep = start
				out = append(out, c)
				// Names inside a secret's value are masked with it: searching them again
				// would make "password=password=…" quadratic.
				if r.valid == nil || r.valid(c.name, s[c.a:c.b]) {
					off = max(off, c.b)
				}
			}
		}
	}
	return out
}

// findSecrets returns the secret spans of s, sorted and merged where they overlap: those of
// the text as written and those of its folded views (mask_fold.go), mapped back.
func findSecrets(s string) []span {
	if s == "" {
		return nil
	}
	spans := rawSpans(s, true)
	for _, v := range foldedViews(s) {
		if v.text == "" {
			continue
		}
		// The command-line rules read continuations themselves, and a separator inside a
		// word does not change what a command does with it: the catalog alone here.
		for _, sp := range rawSpans(v.text, false) {
			spans = append(spans, v.span(sp))
		}
	}
	if len(spans) == 0 {
		return nil
	}
	sort.Slice(spans, func(i, j int) bool {
		if spans[i].start != spans[j].start {
			return spans[i].start < spans[j].start
		}
		return spans[i].end > spans[j].end
	})
	merged := spans[:1]
	for _, sp := range spans[1:] {
		last := &merged[len(merged)-1]
		if sp.start < last.end {
			if sp.end > last.end {
				last.end = sp.end
			}
			continue
		}
		merged = append(merged, sp)
	}
	return merged
}

// rawSpans returns the secret spans the catalog and, with shell, the command-line rules
// (mask_shell.go) find in s, unsorted and unmerged.
func rawSpans(s string, shell bool) []span {
	lower := asciiLower(s)
	exact, folded := bytesOf(s), bytesOf(lower)
	var spans []span
	for i := range catalog {
		r := &catalog[i]
		for _, c := range r.candidates(s, lower, exact, folded) {
			value := s[c.a:c.b]
			if alreadyMasked(value) || strings.HasPrefix(s[c.b:], Ellipsis+MaskMark) || strings.HasPrefix(s[c.b:], MaskMark) {
				continue
			}
			if r.valid != nil && !c.forced && !r.valid(c.name, value) {
				continue
			}
			spans = append(spans, span{start: c.a, end: c.b, keep: c.keep, generic: r.generic, rule: r.id})
		}
	}
	if shell && containsAny(lower, shellTriggers, folded) {
		spans = append(spans, shellSecretSpans(s)...)
	}
	if len(spans) == 0 {
		return nil
	}
	// A generic span that begins where a vendor token's kept prefix begins starts after
	// that prefix instead, so the kind stays recognisable.
	prefixEnd := map[int]int{}
	for _, sp := range spans {
		if !sp.generic {
			if e, ok := prefixEnd[sp.keep]; !ok || sp.start > e {
				prefixEnd[sp.keep] = sp.start
			}
		}
	}
	for i := range spans {
		sp := &spans[i]
		if !sp.generic {
			continue
		}
		// The vendor token may sit behind a quote or "Bearer " inside the generic value.
		for j := sp.start; j < sp.end && j < sp.start+16; j++ {
			if e, ok := prefixEnd[j]; ok && e < sp.end && isVendorLead(s[sp.start:j]) {
				sp.start = e
				break
			}
		}
	}
	return spans
}

// hasDiscordShape: a Discord bot token has two dots seven bytes apart.
func hasDiscordShape(s string) bool {
	for i := strings.IndexByte(s, '.'); i >= 0 && i+7 < len(s); {
		if s[i+7] == '.' {
			return true
		}
		j := strings.IndexByte(s[i+1:], '.')
		if j < 0 {
			return false
		}
		i += 1 + j
	}
	return false
}

// isVendorLead reports whether what precedes a vendor token inside a generic value is only
// quoting or an auth scheme, which say nothing secret.
func isVendorLead(s string) bool {
	s = strings.TrimLeft(s, `"' `)
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "bearer", "token", "basic", "bot":
		return true
	}
	return false
}

func containsAny(s string, words []string, set *byteSet) bool {
	for _, w := range words {
		if set != nil {
			possible := true
			for i := 0; i < len(w); i++ {
				if !set[w[i]] {
					possible = false
					break
				}
			}
			if !possible {
				continue
			}
		}
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// alreadyMasked keeps masking idempotent: a value that is our own mark is left alone.
func alreadyMasked(v string) bool {
	return strings.Contains(v, MaskMark[:len(MaskMark)-1]) || strings.HasPrefix(strings.TrimLeft(v, `"'`), Ellipsis)
}

// maskSecrets replaces every secret of the catalog with MaskMark, keeping the part of the
// match that names its kind and never any of the secret's tail.
func maskSecrets(s string) string {
	spans := findSecrets(s)
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	prev := 0
	for _, sp := range spans {
		b.WriteString(s[prev:sp.start])
		if sp.start > 0 {
			r, _ := utf8.DecodeLastRuneInString(s[:sp.start])
			if isTokenRune(r) {
				b.WriteString(Ellipsis)
			}
		}
		b.WriteString(MaskMark)
		prev = sp.end
	}
	b.WriteString(s[prev:])
	return b.String()
}

func isTokenRune(r rune) bool {
	return r == '_' || r == '-' || r == '.' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// ---- validators -------------------------------------------------------------------------

// nameWords splits an identifier into lower-case words: "AWS_SECRET_ACCESS_KEY" →
// aws secret access key; "clientSecret" → client secret; "--api-key" → api key.
func nameWords(name string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(name)
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			continue
		}
		if unicode.IsUpper(r) && len(cur) > 0 {
			prevLower := unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1])
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if prevLower || (unicode.IsUpper(rs[i-1]) && nextLower) {
				flush()
			}
		}
		cur = append(cur, r)
	}
	flush()
	return words
}

// strongWords name values that are secrets whatever they look like.
var strongWords = map[string]bool{
	"password": true, "passwd": true, "passphrase": true, "pass": true, "pwd": true, "pw": true,
	"secret": true, "secrets": true, "apikey": true, "cookie": true, "sig": true,
	"credential": true, "credentials": true, "creds": true, "privatekey": true,
	"passcode": true, "pin": true,
}

// strongPairs are two consecutive words that together name a secret.
var strongPairs = map[[2]string]bool{
	{"api", "key"}: true, {"access", "key"}: true, {"private", "key"}: true, {"secret", "key"}: true,
	{"auth", "token"}: true, {"access", "token"}: true, {"refresh", "token"}: true,
	{"session", "token"}: true, {"id", "token"}: true, {"bearer", "token"}: true,
	{"client", "secret"}: true, {"signing", "key"}: true, {"encryption", "key"}: true,
	{"master", "key"}: true, {"account", "key"}: true, {"shared", "key"}: true,
	{"app", "key"}: true, {"license", "key"}: true, {"webhook", "secret"}: true,
	{"bot", "token"}: true, {"api", "token"}: true, {"personal", "token"}: true,
}

// weakWords name values that are secrets only when the value looks random.
var weakWords = map[string]bool{
	"token": true, "auth": true, "key": true, "signature": true, "salt": true, "jwt": true,
	"bearer": true, "hmac": true, "nonce": true, "otp": true, "totp": true, "session": true,
}

// notSecretLast: a name ending in one of these holds something about a secret, not the
// secret (TOKEN_FILE, PASSWORD_PATH, KEY_ID, --password-stdin, max_tokens…).
var notSecretLast = map[string]bool{
	"file": true, "files": true, "path": true, "dir": true, "url": true, "uri": true, "name": true,
	"id": true, "ids": true, "type": true, "length": true, "len": true, "size": true, "count": true,
	"env": true, "stdin": true, "fd": true, "cmd": true, "command": true, "helper": true,
	"mode": true, "method": true, "format": true, "field": true, "header": true, "prefix": true,
	"policy": true, "endpoint": true, "host": true, "port": true, "ttl": true, "expiry": true,
	"expires": true, "expiration": true, "timeout": true, "duration": true, "limit": true,
	"hint": true, "label": true, "kind": true, "version": true, "provider": true, "location": true,
	"enabled": true, "required": true, "prompt": true, "reset": true, "rotation": true,
	"algorithm": true, "alg": true, "scheme": true, "source": true, "store": true, "manager": true,
	"user": true, "username": true, "login": true, "strength": true, "min": true, "max": true,
	"tokens": true, "keys": true, "secrets_dir": true, "ref": true, "arn": true, "vault": true,
	"usage": true, "used": true, "budget": true, "index": true, "mapping": true, "map": true,
}

// notSecretNames are whole names that look secret-sounding but are not.
var notSecretNames = map[string]bool{
	"pwd": true, "oldpwd": true, "ssh_auth_sock": true, "gpg_agent_info": true,
	"keyboard": true, "keymap": true, "sort_key": true, "primary_key": true, "foreign_key": true,
	"partition_key": true, "cache_key": true, "public_key": true, "publickey": true,
	"pubkey": true, "key_name": true, "max_tokens": true, "token_type": true,
}

// hasStrongSuffix catches names written as one word: PGPASSWORD, MYSQL_PWD's cousins,
// dbpassword, appsecret, openaiapikey.
func hasStrongSuffix(w string) bool {
	for _, s := range []string{"password", "passwd", "passphrase", "secret", "apikey", "credentials", "credential"} {
		if strings.HasSuffix(w, s) || strings.HasPrefix(w, "password") || strings.HasPrefix(w, "passwd") {
			return true
		}
	}
	return false
}

type nameClass int

const (
	nameNone nameClass = iota
	nameWeak
	nameStrong
)

func classifyName(name string) nameClass {
	trimmed := strings.ToLower(strings.Trim(name, `-"' `))
	trimmed = strings.TrimPrefix(strings.TrimPrefix(trimmed, "$env:"), "export ")
	if notSecretNames[trimmed] {
		return nameNone
	}
	w := nameWords(name)
	if len(w) == 0 {
		return nameNone
	}
	if notSecretLast[w[len(w)-1]] && len(w) > 1 {
		return nameNone
	}
	for _, x := range w {
		if x == "public" || x == "pub" || x == "no" {
			return nameNone
		}
	}
	class := nameNone
	for i, x := range w {
		if strongWords[x] || hasStrongSuffix(x) {
			return nameStrong
		}
		if i+1 < len(w) && strongPairs[[2]string{x, w[i+1]}] {
			return nameStrong
		}
		if weakWords[x] || strings.HasSuffix(x, "token") || strings.HasSuffix(x, "key") {
			class = nameWeak
		}
	}
	return class
}

var varRef = regexp.MustCompile(`^\$(?:\{[A-Za-z_][A-Za-z0-9_]*(?::?[-=?+][^}]*)?\}|[A-Za-z_][A-Za-z0-9_]*)$`)

// placeholder values say nothing secret and keep commands readable.
func isPlaceholder(v string) bool {
	v = strings.TrimSpace(v)
	switch strings.ToLower(v) {
	case "", "null", "none", "nil", "true", "false", "undefined", "***", "****", "*****",
		"bearer", "basic", "token", "digest", "stdin", "-", "[redacted]", "redacted", "<redacted>":
		return true
	}
	return varRef.MatchString(v) || strings.Trim(v, "*xX.") == ""
}

// looksRandom reports whether v has the shape of a generated credential: long enough,
// more than one class of character, and high Shannon entropy.
func looksRandom(v string) bool {
	if utf8.RuneCountInString(v) < 12 || strings.ContainsAny(v, " \t") {
		return false
	}
	if strings.HasPrefix(v, "/") || strings.HasPrefix(v, "./") || strings.HasPrefix(v, "~/") || strings.HasPrefix(v, "../") {
		return false
	}
	var lower, upper, digit, other bool
	for _, r := range v {
		switch {
		case unicode.IsLower(r):
			lower = true
		case unicode.IsUpper(r):
			upper = true
		case unicode.IsDigit(r):
			digit = true
		default:
			other = true
		}
	}
	classes := 0
	for _, c := range []bool{lower, upper, digit, other} {
		if c {
			classes++
		}
	}
	if classes < 2 || !digit && !(lower && upper) {
		return false
	}
	return shannon(v) >= 3.0
}

func shannon(s string) float64 {
	counts := map[rune]int{}
	n := 0
	for _, r := range s {
		counts[r]++
		n++
	}
	var h float64
	for _, c := range counts {
		p := float64(c) / float64(n)
		h -= p * math.Log2(p)
	}
	return h
}

// validAssignment decides on `name = value` candidates: a strong name masks any value that
// is not a variable reference or placeholder; a weak name only a random-looking value.
func validAssignment(name, value string) bool {
	if isPlaceholder(value) {
		return false
	}
	switch classifyName(name) {
	case nameStrong:
		return true
	case nameWeak:
		return looksRandom(value) || tokenValue(name, value)
	}
	return false
}

// paginationWords name tokens that only say where a listing goes on (--next-token,
// pageToken), not secrets.
var paginationWords = map[string]bool{"next": true, "page": true, "starting": true, "continuation": true, "sync": true, "resume": true, "cursor": true}

// tokenValue: a name whose last word is "token" (--token, GH_TOKEN, x-token) holds the
// token itself, however short or plain it looks; only pagination tokens and numbers are
// not secrets.
func tokenValue(name, value string) bool {
	w := nameWords(name)
	n := len(w)
	if n == 0 || w[n-1] != "token" || n > 1 && paginationWords[w[n-2]] {
		return false
	}
	return len(value) >= 6 && !strings.HasPrefix(value, "$") && strings.Trim(value, "0123456789") != "" && shannon(value) >= 2
}

// validRandom masks a value only when it looks generated (used where the context already
// says "credential", such as an AWS secret next to its name).
func validRandom(_, value string) bool { return looksRandom(value) }

// tokenish masks a value after a scheme word such as "Bearer" when it looks like a token
// rather than prose: a digit in it, or at least 20 characters.
func tokenish(_, value string) bool {
	if isPlaceholder(value) {
		return false
	}
	return len(value) >= 20 || strings.ContainsAny(value, "0123456789")
}

// notPlaceholder masks any value that is not a placeholder.
func notPlaceholder(_, value string) bool { return !isPlaceholder(value) }
