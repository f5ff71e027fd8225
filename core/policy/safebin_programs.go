package policy

import (
	"path"
	"strconv"
	"strings"

	"github.com/approvebot/approvebot/core/argv"
)

// curlGrammar is curl 7.88's options (curl --help all), with the "--no-" form of every
// boolean. curl reads unambiguous abbreviations like getopt does.
var curlGrammar = argv.MustNew("aE:K:C:b:c:d:qD:fF:P:GgIH:h:0ik46jlLMm:n:No:Z#xU:pQ:r:e:JORX:SsY:y:23t:z:1T:Bu:A:vVw:", 0,
	"abstract-unix-socket=", "alt-svc=", "anyauth", "append", "aws-sigv4=", "basic", "cacert=", "capath=", "cert=", "cert-status", "cert-type=", "ciphers=", "compressed", "compressed-ssh", "config=", "connect-timeout=", "connect-to=", "continue-at=", "cookie=", "cookie-jar=", "create-dirs", "create-file-mode=", "crlf", "crlfile=", "curves=", "data=", "data-ascii=", "data-binary=", "data-raw=", "data-urlencode=", "delegation=", "digest", "disable", "disable-eprt", "disable-epsv", "disallow-username-in-url", "dns-interface=", "dns-ipv4-addr=", "dns-ipv6-addr=", "dns-servers=", "doh-cert-status", "doh-insecure", "doh-url=", "dump-header=", "egd-file=", "engine=", "etag-compare=", "etag-save=", "expect100-timeout=", "fail", "fail-early", "fail-with-body", "false-start", "form=", "form-escape", "form-string=", "ftp-account=", "ftp-alternative-to-user=", "ftp-create-dirs", "ftp-method=", "ftp-pasv", "ftp-port=", "ftp-pret", "ftp-skip-pasv-ip", "ftp-ssl-ccc", "ftp-ssl-ccc-mode=", "ftp-ssl-control", "get", "globoff", "happy-eyeballs-timeout-ms=", "haproxy-protocol", "head", "header=", "help=", "hostpubmd5=", "hostpubsha256=", "hsts=", "http0.9", "http1.0", "http1.1", "http2", "http2-prior-knowledge", "http3", "http3-only", "ignore-content-length", "include", "insecure", "interface=", "ipv4", "ipv6", "json=", "junk-session-cookies", "keepalive-time=", "key=", "key-type=", "krb=", "libcurl=", "limit-rate=", "list-only", "local-port=", "location", "location-trusted", "login-options=", "mail-auth=", "mail-from=", "mail-rcpt=", "mail-rcpt-allowfails", "manual", "max-filesize=", "max-redirs=", "max-time=", "metalink", "negotiate", "netrc", "netrc-file=", "netrc-optional", "next", "no-alpn", "no-buffer", "no-clobber", "no-keepalive", "no-npn", "no-progress-meter", "no-sessionid", "noproxy=", "ntlm", "ntlm-wb", "oauth2-bearer=", "output=", "output-dir=", "parallel", "parallel-immediate", "parallel-max=", "pass=", "path-as-is", "pinnedpubkey=", "post301", "post302", "post303", "preproxy", "progress-bar", "proto=", "proto-default=", "proto-redir=", "proxy", "proxy-anyauth", "proxy-basic", "proxy-cacert=", "proxy-capath=", "proxy-cert=", "proxy-cert-type=", "proxy-ciphers=", "proxy-crlfile=", "proxy-digest", "proxy-header=", "proxy-insecure", "proxy-key=", "proxy-key-type=", "proxy-negotiate", "proxy-ntlm", "proxy-pass=", "proxy-pinnedpubkey=", "proxy-service-name=", "proxy-ssl-allow-beast", "proxy-ssl-auto-client-cert", "proxy-tls13-ciphers=", "proxy-tlsauthtype=", "proxy-tlspassword=", "proxy-tlsuser=", "proxy-tlsv1", "proxy-user=", "proxy1.0=", "proxytunnel", "pubkey=", "quote=", "random-file=", "range=", "rate=", "raw", "referer=", "remote-header-name", "remote-name", "remote-name-all", "remote-time", "remove-on-error", "request=", "request-target=", "resolve=", "retry=", "retry-all-errors", "retry-connrefused", "retry-delay=", "retry-max-time=", "sasl-authzid=", "sasl-ir", "service-name=", "show-error", "silent", "socks4=", "socks4a=", "socks5=", "socks5-basic", "socks5-gssapi", "socks5-gssapi-nec", "socks5-gssapi-service=", "socks5-hostname=", "speed-limit=", "speed-time=", "ssl", "ssl-allow-beast", "ssl-auto-client-cert", "ssl-no-revoke", "ssl-reqd", "ssl-revoke-best-effort", "sslv2", "sslv3", "stderr=", "styled-output", "suppress-connect-headers", "tcp-fastopen", "tcp-nodelay", "telnet-option=", "tftp-blksize=", "tftp-no-options", "time-cond=", "tls-max=", "tls13-ciphers=", "tlsauthtype=", "tlspassword=", "tlsuser=", "tlsv1", "tlsv1.0", "tlsv1.1", "tlsv1.2", "tlsv1.3", "tr-encoding", "trace=", "trace-ascii=", "trace-time", "unix-socket=", "upload-file=", "url=", "url-query=", "use-ascii", "user=", "user-agent=", "verbose", "version", "write-out=", "xattr", "no-anyauth", "no-append", "no-basic", "no-cert-status", "no-compressed", "no-compressed-ssh", "no-create-dirs", "no-crlf", "no-digest", "no-disable", "no-disable-eprt", "no-disable-epsv", "no-disallow-username-in-url", "no-doh-cert-status", "no-doh-insecure", "no-fail", "no-fail-early", "no-fail-with-body", "no-false-start", "no-form-escape", "no-ftp-create-dirs", "no-ftp-pasv", "no-ftp-pret", "no-ftp-skip-pasv-ip", "no-ftp-ssl-ccc", "no-ftp-ssl-control", "no-get", "no-globoff", "no-haproxy-protocol", "no-head", "no-http0.9", "no-http1.0", "no-http1.1", "no-http2", "no-http2-prior-knowledge", "no-http3", "no-http3-only", "no-ignore-content-length", "no-include", "no-insecure", "no-ipv4", "no-ipv6", "no-junk-session-cookies", "no-list-only", "no-location", "no-location-trusted", "no-mail-rcpt-allowfails", "no-manual", "no-metalink", "no-negotiate", "no-netrc", "no-netrc-optional", "no-next", "no-ntlm", "no-ntlm-wb", "no-parallel", "no-parallel-immediate", "no-path-as-is", "no-post301", "no-post302", "no-post303", "no-preproxy", "no-progress-bar", "no-proxy", "no-proxy-anyauth", "no-proxy-basic", "no-proxy-digest", "no-proxy-insecure", "no-proxy-negotiate", "no-proxy-ntlm", "no-proxy-ssl-allow-beast", "no-proxy-ssl-auto-client-cert", "no-proxy-tlsv1", "no-proxytunnel", "no-raw", "no-remote-header-name", "no-remote-name", "no-remote-name-all", "no-remote-time", "no-remove-on-error", "no-retry-all-errors", "no-retry-connrefused", "no-sasl-ir", "no-show-error", "no-silent", "no-socks5-basic", "no-socks5-gssapi", "no-socks5-gssapi-nec", "no-ssl", "no-ssl-allow-beast", "no-ssl-auto-client-cert", "no-ssl-no-revoke", "no-ssl-reqd", "no-ssl-revoke-best-effort", "no-sslv2", "no-sslv3", "no-styled-output", "no-suppress-connect-headers", "no-tcp-fastopen", "no-tcp-nodelay", "no-tftp-no-options", "no-tlsv1", "no-tlsv1.0", "no-tlsv1.1", "no-tlsv1.2", "no-tlsv1.3", "no-tr-encoding", "no-trace-time", "no-use-ascii", "no-verbose", "no-version", "no-xattr")

// rgGrammar is ripgrep's options (13 and 14). ripgrep's parser takes no abbreviations.
var rgGrammar = argv.MustNew("A:B:C:E:M:T:abcd:e:f:g:hij:lm:noqr:st:uvwxzFHILNPSUV0", argv.NoAbbrev,
	"after-context=", "before-context=", "context=", "regexp=", "file=", "glob=", "iglob=", "max-count=", "max-columns=", "replace=", "type=", "type-not=", "threads=", "encoding=", "max-depth=", "maxdepth=", "max-filesize=", "color=", "colors=", "context-separator=", "field-context-separator=", "field-match-separator=", "path-separator=", "dfa-size-limit=", "regex-size-limit=", "engine=", "ignore-file=", "pre=", "pre-glob=", "hostname-bin=", "hyperlink-format=", "sort=", "sortr=", "type-add=", "type-clear=", "generate=", "text", "byte-offset", "count", "count-matches", "fixed-strings", "with-filename", "no-filename", "heading", "no-heading", "ignore-case", "case-sensitive", "smart-case", "files-with-matches", "files-without-match", "follow", "line-number", "no-line-number", "only-matching", "pretty", "pcre2", "quiet", "unrestricted", "multiline", "multiline-dotall", "invert-match", "version", "word-regexp", "line-regexp", "search-zip", "null", "null-data", "hidden", "no-hidden", "no-ignore", "no-ignore-dot", "no-ignore-exclude", "no-ignore-files", "no-ignore-global", "no-ignore-parent", "no-ignore-vcs", "no-messages", "no-config", "json", "no-json", "stats", "no-stats", "trim", "no-trim", "vimgrep", "column", "no-column", "files", "type-list", "debug", "trace", "crlf", "no-crlf", "binary", "no-binary", "block-buffered", "line-buffered", "no-block-buffered", "no-line-buffered", "auto-hybrid-regex", "no-auto-hybrid-regex", "no-pcre2-unicode", "no-unicode", "unicode", "one-file-system", "no-one-file-system", "passthru", "passthrough", "glob-case-insensitive", "no-glob-case-insensitive", "ignore-file-case-insensitive", "no-ignore-file-case-insensitive", "include-zero", "no-include-zero", "mmap", "no-mmap", "no-follow", "no-text", "no-search-zip", "no-fixed-strings", "no-invert-match", "no-pcre2", "no-multiline", "no-multiline-dotall", "no-require-git", "sort-files", "no-sort-files", "no-ignore-messages", "no-context-separator", "max-columns-preview", "no-max-columns-preview", "help", "no-pre", "no-encoding", "ignore", "no-unrestricted")

// rgSafe refuses the options that run programs: --pre, --hostname-bin and -z/--search-zip
// (decompressors found on the PATH).
func rgSafe(c *toolCall) bool {
	return !c.p.Has("pre", "pre-glob", "hostname-bin", "z", "search-zip", "ignore-file")
}

// rgEffects: ripgrep reads its paths (or ".") recursively; it reads standard input instead
// when it has no path and sits after a pipe (the judge passes that case as no tree).
func rgEffects(c *toolCall, e *effects) {
	files := c.p.Operands
	if grepPatternIndex(c) >= 0 && !c.p.Has("files", "type-list") {
		files = files[1:]
	}
	if len(files) == 0 {
		e.trees = append(e.trees, ".")
	}
	e.trees = append(e.trees, files...)
	for _, o := range c.p.Options {
		switch o.Name {
		case "g", "glob", "iglob", "type-add", "pre-glob":
			v := o.Value
			if o.Name == "type-add" {
				_, v, _ = strings.Cut(v, ":") // NAME:GLOB
				if strings.HasPrefix(v, "include:") {
					continue
				}
			}
			if strings.HasPrefix(v, "!") {
				continue // excludes
			}
			kind := selName
			if strings.Contains(strings.TrimSuffix(v, "/"), "/") {
				kind, v = selRelPath, strings.TrimPrefix(v, "/")
			}
			e.selects = append(e.selects, selector{kind: kind, pat: v, shown: "rg --" + o.Name + " " + o.Value})
		}
	}
	e.selectIn = append(e.selectIn, e.trees...)
}

// sedScripts returns sed's scripts and the index of a script given as the first operand (or -1).
func sedScripts(c *toolCall) ([]string, int) {
	if s := c.p.Values("e", "expression"); len(s) > 0 || c.p.Has("f", "file") {
		return s, -1
	}
	if len(c.p.Operands) > 0 {
		return c.p.Operands[:1], c.p.OperandIndex[0]
	}
	return nil, -1
}

// sedSafe accepts sed without script files or scripts that run programs (e, s///e), unless
// --sandbox, under which GNU sed refuses those itself. What it writes (-i, w, W, s///w) are its
// effects, judged like any other write.
func sedSafe(c *toolCall) bool {
	if c.p.Has("f", "file") || c.p.Has("follow-symlinks") && c.p.Has("i", "in-place") {
		return false // a script from a file; in-place edits of what a link points to
	}
	scripts, _ := sedScripts(c)
	if c.p.Has("sandbox") {
		return true
	}
	for _, s := range scripts {
		sc := scanSed(s)
		if !sc.ok || sc.exec {
			return false
		}
	}
	return true
}

// sedEffects: -i rewrites the files (and writes their backups: -i.bak is FILE.bak, a "*" in
// the suffix is the file's name, and the suffix may name another directory); w, W and s///w
// write files; r and R read them.
func sedEffects(c *toolCall, e *effects) {
	scripts, si := sedScripts(c)
	if c.p.Has("i", "in-place") {
		suffix := ""
		for _, o := range c.p.Options {
			if (o.Name == "i" || o.Name == "in-place") && o.HasValue {
				suffix = o.Value
			}
		}
		for k, o := range c.p.Operands {
			if c.p.OperandIndex[k] == si {
				continue
			}
			e.writes = append(e.writes, o)
			if suffix != "" {
				dir, base := path.Split(o)
				name := base + suffix
				if strings.Contains(suffix, "*") {
					name = strings.ReplaceAll(suffix, "*", base)
				}
				e.writes = append(e.writes, dir+name)
			}
		}
	}
	if c.p.Has("sandbox") {
		return
	}
	for _, s := range scripts {
		sc := scanSed(s)
		if !sc.ok {
			e.unknown = "cannot read the sed script " + s
		}
		e.writes = append(e.writes, sc.writes...)
		e.reads = append(e.reads, sc.reads...)
	}
}

func sedText(c *toolCall, t *argSet) {
	if _, si := sedScripts(c); si >= 0 {
		t.add(si)
	}
	for _, o := range c.p.Options {
		if o.Name == "e" || o.Name == "expression" {
			t.add(o.ValueIndex)
		}
	}
}

// sedScan is what a sed script does besides editing its input.
type sedScan struct {
	writes, reads []string
	exec          bool
	ok            bool // the script was understood
}

// scanSed reads a sed script's commands.
func scanSed(s string) sedScan {
	var sc sedScan
	i := 0
	n := len(s)
	skipSpace := func() {
		for i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == ';' || s[i] == '\n') {
			i++
		}
	}
	// readDelim skips a delimited part (regex or replacement) starting after its delimiter.
	readDelim := func(d byte) bool {
		for i < n {
			if s[i] == '\\' {
				i += 2
				continue
			}
			if s[i] == d {
				i++
				return true
			}
			if s[i] == '\n' {
				return false
			}
			i++
		}
		return false
	}
	address := func() bool {
		for i < n {
			switch c := s[i]; {
			case c >= '0' && c <= '9' || c == '$' || c == ',' || c == '~' || c == '+' || c == '!' || c == ' ':
				i++
			case c == '/':
				i++
				if !readDelim('/') {
					return false
				}
				for i < n && (s[i] == 'I' || s[i] == 'M') {
					i++
				}
			case c == '\\':
				if i+1 >= n {
					return false
				}
				d := s[i+1]
				i += 2
				if !readDelim(d) {
					return false
				}
			default:
				return true
			}
		}
		return true
	}
	restOfLine := func() {
		for i < n && s[i] != '\n' && s[i] != ';' {
			i++
		}
	}
	fileName := func() string {
		for i < n && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		start := i
		for i < n && s[i] != '\n' {
			i++
		}
		return s[start:i]
	}
	for {
		skipSpace()
		if i >= n {
			sc.ok = true
			return sc
		}
		if !address() {
			return sc
		}
		skipSpace()
		if i >= n {
			sc.ok = true
			return sc
		}
		c := s[i]
		i++
		switch c {
		case '{', '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'l', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case 'q', 'Q', 'L':
			for i < n && (s[i] >= '0' && s[i] <= '9' || s[i] == ' ') {
				i++
			}
		case 'b', 't', 'T', ':':
			restOfLine()
		case 'a', 'i', 'c':
			// Text to the end of the line (GNU one-liner form).
			for i < n && s[i] != '\n' {
				if s[i] == '\\' {
					i++
				}
				i++
			}
		case 'r', 'R':
			sc.reads = append(sc.reads, fileName())
		case 'w', 'W':
			sc.writes = append(sc.writes, fileName())
		case 'e':
			sc.exec = true
			restOfLine()
		case 's':
			if i >= n {
				return sc
			}
			d := s[i]
			if d == '\\' || d == '\n' {
				return sc
			}
			i++
			// The pattern, then the replacement.
			for section := 0; section < 2; section++ {
				if !readDelim(d) {
					return sc
				}
			}
			for i < n && s[i] != ';' && s[i] != '\n' && s[i] != '}' {
				switch s[i] {
				case 'w':
					i++
					sc.writes = append(sc.writes, fileName())
					continue
				case 'e':
					sc.exec = true
				case 'g', 'p', 'i', 'I', 'm', 'M', ' ':
				default:
					if s[i] < '0' || s[i] > '9' {
						return sc
					}
				}
				i++
			}
		case 'y':
			if i >= n {
				return sc
			}
			d := s[i]
			i++
			for section := 0; section < 2; section++ {
				if !readDelim(d) {
					return sc
				}
			}
		default:
			return sc
		}
	}
}

// socatEffects: an address that is a file (a path, or OPEN:, GOPEN:, CREATE:, CREAT:, FILE:,
// PIPE:) may be written: socat copies both ways, unless -u (first to second) or -U (second to
// first).
func socatEffects(c *toolCall, e *effects) {
	for k, a := range c.p.Operands {
		if k == 0 && c.p.Has("u") || k == 1 && c.p.Has("U") {
			continue // only read
		}
		addr, _, _ := strings.Cut(a, ",") // options follow the first comma
		kind, rest, typed := strings.Cut(addr, ":")
		switch {
		case !typed && (strings.HasPrefix(addr, "/") || strings.HasPrefix(addr, ".") || strings.HasPrefix(addr, "~")):
			e.writes = append(e.writes, addr)
		case typed:
			switch strings.ToUpper(kind) {
			case "OPEN", "GOPEN", "CREATE", "CREAT", "FILE", "PIPE", "NAMEDPIPE":
				e.writes = append(e.writes, rest)
			}
		}
	}
	if v := c.p.Values("lf"); len(v) > 0 {
		e.writes = append(e.writes, v...)
	}
}

// parseBadblocks reads badblocks' options: clustered letters, -b, -c, -d, -e, -i, -o, -p and
// -t taking a value (attached or the next word).
func parseBadblocks(p *argv.Parsed, args []string) error {
	p.Reset()
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(a) < 2 || a[0] != '-' {
			p.Operands = append(p.Operands, a)
			p.OperandIndex = append(p.OperandIndex, i)
			continue
		}
		for j := 1; j < len(a); j++ {
			n := a[j : j+1]
			if strings.IndexByte("bcdeiopt", a[j]) >= 0 {
				o := argv.Option{Name: n, HasValue: true, Index: i, ValueIndex: i, Value: a[j+1:]}
				if o.Value == "" && i+1 < len(args) {
					i++
					o.Value, o.ValueIndex = args[i], i
				}
				p.Options = append(p.Options, o)
				break
			}
			p.Options = append(p.Options, argv.Option{Name: n, Index: i, ValueIndex: i})
		}
	}
	return nil
}

// sgdiskEffects: any option but the ones that print, verify or only pretend rewrites the
// partition table of the device named (and -R/--replicate writes the table of its device).
func sgdiskEffects(c *toolCall, e *effects) {
	readOnly := map[string]bool{"p": true, "print": true, "i": true, "info": true, "v": true, "verify": true,
		"L": true, "list-types": true, "O": true, "print-mbr": true, "b": true, "backup": true, "h": true,
		"help": true, "V": true, "version": true, "D": true, "display-alignment": true, "E": true,
		"end-of-largest": true, "f": true, "first-in-largest": true, "F": true, "first-aligned-in-largest": true,
		"usage": true, "?": true}
	if c.p.Has("P", "pretend") {
		return
	}
	changes := false
	for _, o := range c.p.Options {
		if !readOnly[o.Name] {
			changes = true
		}
	}
	if !changes {
		return
	}
	// The device operand, and the device -R (--replicate) copies the table onto.
	for k, a := range c.args {
		v, replicate := strings.CutPrefix(a, "--replicate=")
		switch {
		case replicate:
			e.writes = append(e.writes, v)
		case k > 0 && (c.args[k-1] == "-R" || c.args[k-1] == "--replicate"):
			e.writes = append(e.writes, a)
		case !strings.HasPrefix(a, "-") && strings.HasPrefix(path.Clean(a), "/dev/"):
			e.writes = append(e.writes, a)
		}
	}
}

// findArgs are how many arguments each find predicate takes (-1: a command up to ";" or "+").
var findArgs = map[string]int{
	"-depth": 0, "-d": 0, "-follow": 0, "-help": 0, "--help": 0, "-ignore_readdir_race": 0, "-mount": 0,
	"-noignore_readdir_race": 0, "-noleaf": 0, "-version": 0, "--version": 0, "-xdev": 0, "-daystart": 0,
	"-warn": 0, "-nowarn": 0, "-empty": 0, "-executable": 0, "-false": 0, "-nogroup": 0, "-nouser": 0,
	"-readable": 0, "-true": 0, "-writable": 0, "-delete": 0, "-ls": 0, "-print": 0, "-print0": 0, "-prune": 0,
	"-quit": 0, "-not": 0, "!": 0, "-a": 0, "-and": 0, "-o": 0, "-or": 0, "(": 0, ")": 0, ",": 0,
	"-maxdepth": 1, "-mindepth": 1, "-regextype": 1, "-amin": 1, "-anewer": 1, "-atime": 1, "-cmin": 1,
	"-cnewer": 1, "-ctime": 1, "-fstype": 1, "-gid": 1, "-group": 1, "-ilname": 1, "-iname": 1, "-inum": 1,
	"-ipath": 1, "-iregex": 1, "-iwholename": 1, "-links": 1, "-lname": 1, "-mmin": 1, "-mtime": 1,
	"-name": 1, "-newer": 1, "-path": 1, "-perm": 1, "-regex": 1, "-samefile": 1, "-size": 1, "-type": 1,
	"-uid": 1, "-used": 1, "-user": 1, "-wholename": 1, "-xtype": 1, "-context": 1, "-fls": 1, "-fprint": 1,
	"-fprint0": 1, "-printf": 1, "-files0-from": 1, "-fprintf": 2,
	"-exec": -1, "-execdir": -1, "-ok": -1, "-okdir": -1,
}

// findTextPreds take a pattern or format, not a path.
var findTextPreds = map[string]bool{
	"-name": true, "-iname": true, "-path": true, "-ipath": true, "-regex": true, "-iregex": true,
	"-wholename": true, "-iwholename": true, "-lname": true, "-ilname": true, "-printf": true, "-type": true,
	"-xtype": true, "-perm": true, "-size": true, "-user": true, "-group": true, "-regextype": true,
	"-fstype": true, "-context": true,
}

// parseFindArgs reads GNU find: -H/-L/-P/-D/-O first, the start points, then the expression, each
// predicate an Option named as written, with its arguments joined by NUL in Value. An unknown
// predicate is an error.
func parseFindArgs(p *argv.Parsed, args []string) error {
	p.Reset()
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-H" || a == "-L" || a == "-P":
			p.Options = append(p.Options, argv.Option{Name: a, Index: i, ValueIndex: i})
		case a == "-D" && i+1 < len(args):
			p.Options = append(p.Options, argv.Option{Name: a, Value: args[i+1], HasValue: true, Index: i, ValueIndex: i + 1})
			i++
		case strings.HasPrefix(a, "-O") && len(a) > 2:
			p.Options = append(p.Options, argv.Option{Name: "-O", Value: a[2:], HasValue: true, Index: i, ValueIndex: i})
		default:
			goto points
		}
	}
points:
	for ; i < len(args); i++ {
		a := args[i]
		if strings.HasPrefix(a, "-") && a != "-" || a == "(" || a == ")" || a == "!" || a == "," {
			break
		}
		p.Operands = append(p.Operands, a)
		p.OperandIndex = append(p.OperandIndex, i)
	}
	for ; i < len(args); i++ {
		a := args[i]
		n, ok := findArgs[a]
		if !ok && strings.HasPrefix(a, "-newer") && len(a) == 8 {
			n, ok = 1, strings.IndexByte("amcBt", a[6]) >= 0 && strings.IndexByte("amcBt", a[7]) >= 0
		}
		if !ok {
			return &argv.Error{Arg: a, Index: i, Reason: "unknown predicate"}
		}
		o := argv.Option{Name: a, Index: i, ValueIndex: i + 1}
		switch {
		case n < 0:
			j := i + 1
			for j < len(args) && args[j] != ";" && args[j] != "+" {
				j++
			}
			if j >= len(args) {
				return &argv.Error{Arg: a, Index: i, Reason: "missing ; or + after the command"}
			}
			o.Value, o.HasValue = strings.Join(args[i+1:j], "\x00"), true
			i = j
		case n > 0:
			if i+n >= len(args) {
				return &argv.Error{Arg: a, Index: i, Reason: "option requires an argument"}
			}
			o.Value, o.HasValue = strings.Join(args[i+1:i+1+n], "\x00"), true
			i += n
		}
		p.Options = append(p.Options, o)
	}
	return nil
}

func findSafe(c *toolCall) bool {
	return !c.p.Has("-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls", "-files0-from")
}

// findEffects: -fprint, -fprint0, -fls and -fprintf write their file; -delete removes below the
// start points; a command run by -exec and friends reads every file below them.
func findEffects(c *toolCall, e *effects) {
	points := operandsOrDot(c)
	regexType := ""
	for _, o := range c.p.Options {
		switch o.Name {
		case "-regextype":
			regexType = o.Value
		case "-name", "-iname":
			e.selects = append(e.selects, selector{kind: selName, pat: o.Value, shown: "find " + o.Name + " " + o.Value})
		case "-path", "-ipath", "-wholename", "-iwholename":
			e.selects = append(e.selects, selector{kind: selPath, pat: o.Value, shown: "find " + o.Name + " " + o.Value})
		case "-regex", "-iregex":
			e.selects = append(e.selects, selector{kind: selRegex, pat: o.Value, regexType: regexType, shown: "find " + o.Name + " " + o.Value})
		}
		switch o.Name {
		case "-fprint", "-fprint0", "-fls":
			e.writes = append(e.writes, o.Value)
		case "-fprintf":
			f, _, _ := strings.Cut(o.Value, "\x00")
			e.writes = append(e.writes, f)
		case "-delete":
			e.writes = append(e.writes, points...)
		case "-exec", "-execdir", "-ok", "-okdir":
			e.trees = append(e.trees, points...)
		case "-files0-from":
			e.unknown = "find -files0-from reads its start points from " + o.Value
		}
	}
	if len(e.selects) > 0 {
		e.selectIn = append(e.selectIn, points...)
	}
	// find prints the names its tests let through: a name test that only a file of one kind
	// passes (-name '*.go', -name Makefile), joined to the rest by "and" (no -o, !, -not or
	// ","), lists no key or credential; the selectors above judge the tests that could. A
	// depth of at most 1 is a plain listing of the start points.
	narrowed, depth := false, -1
	for _, o := range c.p.Options {
		switch o.Name {
		case "-name", "-iname":
			narrowed = narrowed || namesOneKind(o.Value)
		case "-path", "-ipath", "-wholename", "-iwholename":
			narrowed = narrowed || namesOneKind(o.Value[strings.LastIndexByte(o.Value, '/')+1:])
		case "-maxdepth":
			if n, err := strconv.Atoi(o.Value); err == nil && n >= 0 {
				depth = n
			}
		}
	}
	for _, o := range c.p.Options {
		switch o.Name {
		case "-o", "-or", "!", "-not", ",":
			narrowed = false
		}
	}
	if !narrowed && (depth < 0 || depth > 1) {
		e.lists = append(e.lists, points...)
	}
}

// namesOneKind reports a name pattern that only names of one kind match: no wildcard at
// all, or a literal extension after the last one (*.go, *_test.go, *.tar.gz).
func namesOneKind(pat string) bool {
	last := strings.LastIndexAny(pat, "*?[]")
	if last < 0 {
		return pat != ""
	}
	rest := pat[last+1:]
	return strings.HasPrefix(rest, ".") && len(rest) > 1 || strings.HasPrefix(rest, "_") && strings.Contains(rest, ".")
}

func findText(c *toolCall, t *argSet) {
	for _, o := range c.p.Options {
		switch {
		case findTextPreds[o.Name]:
			t.add(o.ValueIndex)
		case o.Name == "-fprintf":
			t.add(o.ValueIndex + 1)
		case o.Name == "-exec" || o.Name == "-execdir" || o.Name == "-ok" || o.Name == "-okdir":
			// The command is its own segment, judged there.
			for k := o.ValueIndex; k < o.ValueIndex+strings.Count(o.Value, "\x00")+1 && k < len(c.args); k++ {
				t.add(k)
			}
		}
	}
}

// parseJq reads jq 1.6 and 1.7: clustered single letters, exact long options, and the options
// that take one or two words. The filter and the files are operands; after --args or
// --jsonargs the operands are values, not files.
func parseJq(p *argv.Parsed, args []string) error {
	letters := "nrjacsCMSeRhVLf"
	long0 := map[string]bool{"null-input": true, "raw-input": true, "slurp": true, "compact-output": true,
		"raw-output": true, "join-output": true, "ascii-output": true, "sort-keys": true, "color-output": true,
		"monochrome-output": true, "tab": true, "unbuffered": true, "stream": true, "stream-errors": true, "seq": true,
		"exit-status": true, "help": true, "version": true, "raw-output0": true, "binary": true}
	long1 := map[string]bool{"indent": true, "from-file": true, "library-path": true}
	long2 := map[string]bool{"arg": true, "argjson": true, "slurpfile": true, "rawfile": true}
	p.Reset()
	values := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case values || a == "-" || !strings.HasPrefix(a, "-"):
			p.Operands = append(p.Operands, a)
			p.OperandIndex = append(p.OperandIndex, i)
		case a == "--args" || a == "--jsonargs":
			p.Options = append(p.Options, argv.Option{Name: a[2:], Long: true, Index: i, ValueIndex: i})
			p.DashDash = i // what follows the filter are values
		case a == "--":
			values = true
		case strings.HasPrefix(a, "--"):
			name := a[2:]
			switch {
			case long0[name]:
				p.Options = append(p.Options, argv.Option{Name: name, Long: true, Index: i, ValueIndex: i})
			case long1[name] && i+1 < len(args):
				p.Options = append(p.Options, argv.Option{Name: name, Long: true, Value: args[i+1], HasValue: true, Index: i, ValueIndex: i + 1})
				i++
			case long2[name] && i+2 < len(args):
				p.Options = append(p.Options, argv.Option{Name: name, Long: true, Value: args[i+1] + "\x00" + args[i+2], HasValue: true, Index: i, ValueIndex: i + 2})
				i += 2
			default:
				return &argv.Error{Arg: a, Index: i, Reason: "unrecognized option"}
			}
		default:
			for j := 1; j < len(a); j++ {
				c := a[j]
				if strings.IndexByte(letters, c) < 0 {
					return &argv.Error{Arg: a, Index: i, Option: a[j : j+1], Reason: "unrecognized option"}
				}
				o := argv.Option{Name: a[j : j+1], Index: i, ValueIndex: i}
				if c == 'f' || c == 'L' {
					if j != len(a)-1 || i+1 >= len(args) {
						return &argv.Error{Arg: a, Index: i, Reason: "option requires an argument"}
					}
					i++
					o.Value, o.HasValue, o.ValueIndex = args[i], true, i
				}
				p.Options = append(p.Options, o)
			}
		}
	}
	return nil
}

func jqSafe(*toolCall) bool { return true }

// jqFilter returns the filter's index in args, or -1 when -f reads it from a file.
func jqFilter(c *toolCall) int {
	if c.p.Has("f", "from-file") || len(c.p.OperandIndex) == 0 {
		return -1
	}
	return c.p.OperandIndex[0]
}

// jqEffects: env and $ENV print the environment; env.NAME and $ENV.NAME one variable.
func jqEffects(c *toolCall, e *effects) {
	if i := jqFilter(c); i >= 0 {
		whole, names := jqEnvReads(c.args[i])
		if whole {
			e.envDump = "jq " + c.args[i]
		}
		e.envVars = append(e.envVars, names...)
	}
	if c.p.Has("f", "from-file") {
		e.unknown = "jq runs a filter read from a file, which may read the environment"
	}
}

// jqEnvReads finds a jq filter's reads of the environment: whole (env, $ENV, {env}) or by
// name (env.HOME, $ENV.PATH, env["X"]). An object key ({env: 1}), a field (.env), a string
// ("env") and another variable ($environment) are not reads; an interpolation inside a string
// ("\(env.HOME)") is code like any other.
func jqEnvReads(f string) (whole bool, names []string) {
	code := jqCode(f)
	for i := 0; i < len(code); i++ {
		var after int
		switch {
		case strings.HasPrefix(code[i:], "$ENV") && !identChar(code, i+4) && !identChar(code, i-1):
			after = i + 4
		case strings.HasPrefix(code[i:], "env") && !identChar(code, i+3) && !identChar(code, i-1) &&
			(i == 0 || code[i-1] != '.' && code[i-1] != '$'):
			after = i + 3
			if prev, next := jqNeighbours(code, i, after); next == ':' && (prev == '{' || prev == ',') {
				continue // an object key
			}
		default:
			continue
		}
		if name, ok := jqNamedAccess(f, code, after); ok {
			names = append(names, name)
			continue
		}
		whole = true
	}
	return whole, names
}

// jqNeighbours are the nearest non-blank characters before i and from j on.
func jqNeighbours(code string, i, j int) (prev, next byte) {
	for k := i - 1; k >= 0; k-- {
		if c := code[k]; c != ' ' && c != '\t' && c != '\n' {
			prev = c
			break
		}
	}
	for k := j; k < len(code); k++ {
		if c := code[k]; c != ' ' && c != '\t' && c != '\n' {
			next = c
			break
		}
	}
	return prev, next
}

// jqNamedAccess reads .NAME, ["NAME"] or .["NAME"] at j (in the filter f, whose code view is
// code): the variable named.
func jqNamedAccess(f, code string, j int) (string, bool) {
	if j < len(code) && code[j] == '.' && identChar(code, j+1) {
		k := j + 1
		for k < len(code) && identChar(code, k) {
			k++
		}
		return code[j+1 : k], true
	}
	if j < len(code) && code[j] == '.' {
		j++
	}
	if j+1 < len(f) && f[j] == '[' && f[j+1] == '"' {
		end := strings.IndexByte(f[j+2:], '"')
		if end >= 0 && j+2+end+1 < len(f) && f[j+2+end+1] == ']' {
			name := f[j+2 : j+2+end]
			if !strings.ContainsAny(name, "\\(") {
				return name, true
			}
		}
	}
	return "", false
}

// jqCode is a jq filter with the text of its strings and comments blanked out, keeping the
// code of string interpolations ("\(…)") and the length.
func jqCode(f string) string {
	b := []byte(f)
	inString := false
	var depths []int // open parentheses of each interpolation being read
	depth := 0
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			switch {
			case c == '\\' && i+1 < len(b) && b[i+1] == '(':
				depths = append(depths, depth)
				depth++
				inString = false
				b[i] = ' '
				i++ // keep "(" as code
			case c == '\\' && i+1 < len(b):
				b[i], b[i+1] = ' ', ' '
				i++
			case c == '"':
			default:
				b[i] = ' '
			}
			if c == '"' {
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '#':
			for i < len(b) && b[i] != '\n' {
				b[i] = ' '
				i++
			}
		case '(':
			depth++
		case ')':
			depth--
			if n := len(depths); n > 0 && depth == depths[n-1] {
				depths = depths[:n-1]
				inString = true
			}
		}
	}
	return string(b)
}

func identChar(s string, i int) bool {
	if i < 0 || i >= len(s) {
		return false
	}
	c := s[i]
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func jqText(c *toolCall, t *argSet) {
	t.add(jqFilter(c))
	for _, o := range c.p.Options {
		switch o.Name {
		case "arg", "argjson":
			t.add(o.ValueIndex - 1)
			t.add(o.ValueIndex)
		case "slurpfile", "rawfile":
			t.add(o.ValueIndex - 1) // the name; the file is a path
		case "args", "jsonargs":
			for _, oi := range c.p.OperandIndex {
				if oi > o.Index {
					t.add(oi)
				}
			}
		}
	}
}
