package policy

import (
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/approvebot/approvebot/core/shell"
)

// DefaultSensitivePaths are the paths whose contents are secrets or whose change is persistence,
// used when [policy] sensitive_paths is not set. Syntax: the allowlist's globs ("*" within a
// path element, "**" across elements, "?", "[class]", "\" escapes), matched without regard to
// case (macOS and Windows file systems ignore it). A glob starting with "~/" names a path in
// any home directory: ~, $HOME, /root, /home/* and /Users/*. A glob with no leading "/" or "~/"
// is a name matched anywhere (".env" is every .env file, ".git/hooks" every repository's hooks).
// A glob covers everything below what it matches: "~/.ssh" is the directory and every file in it.
var DefaultSensitivePaths = []string{
	// Private keys and their directories. Not "id_*": that would be id_test.go too.
	"~/.ssh", "*.pem", "*.key", "*.p12", "*.pfx", "*.ppk", "*.keytab", "*.kdbx",
	"id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", "id_xmss*",
	"/etc/ssh/ssh_host_*", "/etc/ssl/private",
	// Cloud, registry and tool credentials.
	"~/.aws", "~/.config/gcloud", "~/.azure", "~/.kube", "~/.docker", "~/.netrc", "~/.git-credentials",
	"~/.npmrc", "~/.yarnrc", "~/.pypirc", "~/.pgpass", "~/.my.cnf", "~/.config/gh", "~/.config/hub", "~/.gnupg",
	"~/.terraform.d", "~/.vault-token", "~/.cargo/credentials*", "~/.gem/credentials", "~/.boto", "~/.s3cfg",
	"~/.oci", "~/.config/doctl", "~/.password-store", "~/.local/share/keyrings", "~/Library/Keychains",
	"~/.config/op", "~/.mozilla", "~/.config/google-chrome", "~/.config/chromium",
	// Agents' own settings and credentials: changing them widens what the agent may do.
	"~/.claude", "~/.claude.json", ".claude/settings*.json", "~/.codex", "~/.gemini", "~/.cursor",
	// approvebot's own token file (tokens_file defaults to the data file + ".tokens").
	"*.tokens",
	// Environment files, anywhere.
	".env", ".env.*", ".envrc",
	// Shell startup and history files; git's global configuration runs programs too.
	"~/.bashrc", "~/.bash_profile", "~/.bash_login", "~/.bash_logout", "~/.profile", "~/.bash_history",
	"~/.zshrc", "~/.zshenv", "~/.zprofile", "~/.zlogin", "~/.zlogout", "~/.zsh_history", "~/.history",
	"~/.sh_history", "~/.config/fish", "~/.python_history", "~/.node_repl_history", "~/.psql_history",
	"~/.mysql_history", "~/.inputrc", "~/.xprofile", "~/.xinitrc", "~/.gitconfig", "~/.config/git",
	"/etc/profile", "/etc/profile.d", "/etc/bash.bashrc", "/etc/bashrc", "/etc/zsh", "/etc/zshrc",
	"/etc/environment",
	// Accounts, privileges and the loader.
	"/etc/shadow*", "/etc/gshadow*", "/etc/security/opasswd", "/etc/sudoers*", "/etc/pam.d",
	"/etc/ld.so.preload", "/etc/ld.so.conf*",
	// Scheduled jobs and services (persistence).
	"/etc/cron*", "/etc/anacrontab", "/var/spool/cron", "/var/spool/anacron", "/var/spool/at",
	"/etc/systemd", "/lib/systemd", "/usr/lib/systemd", "/run/systemd", "/etc/init.d", "/etc/init",
	"/etc/rc.local", "/etc/xdg/autostart", "~/.config/systemd", "~/.config/autostart",
	"/Library/LaunchDaemons", "/Library/LaunchAgents", "~/Library/LaunchAgents",
	// Repository hooks and configuration (core.hooksPath, core.fsmonitor and friends run programs).
	".git/hooks", ".git/config",
	// Other processes' secrets and memory.
	"/proc/*/environ", "/proc/*/mem", "/proc/*/task/*/environ", "/proc/*/task/*/mem", "/proc/kcore",
	"/dev/mem", "/dev/kmem", "/dev/port",
	// Mounted secrets and the container runtime's socket (root on the host).
	"/var/run/secrets", "/run/secrets", "/var/run/docker.sock", "/run/docker.sock",
	// Raw block devices.
	"/dev/sd*", "/dev/hd*", "/dev/vd*", "/dev/xvd*", "/dev/nvme*", "/dev/mmcblk*", "/dev/loop*",
	"/dev/dm-*", "/dev/md*", "/dev/nbd*", "/dev/sr*", "/dev/mapper", "/dev/disk*", "/dev/rdisk*",
}

// homeRoots are where "~/" globs look besides the home directory a request names.
var homeRoots = []string{"/root", "/home/*", "/Users/*"}

// Sensitive is a compiled list of sensitive path globs. It answers, for a path written in any
// tool's arguments: does it refer to a sensitive path (Match), could a glob written in a command
// match one (MatchGlob), does a recursive read of a directory reach one (MatchTree,
// MatchGlobTree). Paths are normalised first: a leading "~", "~user", "$HOME" or "${HOME}" is
// the home directory given (any home when it is empty), a relative path is taken against cwd
// (against the home directory when cwd is empty or not absolute), "." and ".." are resolved,
// and a Windows drive path (C:\Users\x\.ssh) is read with forward slashes and without its drive.
// It is immutable and safe for concurrent use.
type Sensitive struct {
	globs []sensGlob
	// The key index: every path a glob matches has a path element equal to the glob's exact
	// key, or starting with its prefix key, or ending with its suffix key. A path none of whose
	// elements hits a key is not sensitive, and only the globs whose key it hits are tried.
	exact            map[string][]int
	prefixes         []sensKey
	suffixes         []sensKey
	exactSigs        byteSet        // exactSig of every exact key: most elements miss it
	prefixByFirst    [256][]sensKey // prefixes by their first byte
	suffixByLast     [256][]sensKey // suffixes by their last byte
	keyless          []int
	tildes           []int // the "~/" globs
	anchoredByFirst  map[string][]nfaRef
	anchoredWildcard []nfaRef // anchored automata whose first element is not literal
	anchoredAll      []nfaRef // every anchored automaton, by first element (for "/")
	// heads are, for names matched anywhere that have several elements (".git/hooks"), the
	// globs of their leading elements ("/**/.git"): a directory those match holds a match.
	heads     []nfaRef
	headNames map[string]bool // the last literal element of each head, lower-cased
	// samples stand for what each glob matches, decoys for ordinary names (sensitive_select.go).
	samples []sensSample
	decoys  []string
	homes   sync.Map // home directory → []*globNFA, one per "~/" glob
}

type sensGlob struct {
	glob     string
	anchored bool // names a place from the root (not a name matched anywhere)
	nfas     []*globNFA
	rel      string // for "~/" globs, the part after "~/"
	tilde    bool
}

type sensKey struct {
	key  string
	idxs []int
}

type nfaRef struct {
	glob int
	nfa  *globNFA
}

// maxHomes bounds the home directories whose automata are kept.
const maxHomes = 64

// CompileSensitive checks and compiles sensitive path globs. An invalid glob is an error
// naming its index.
func CompileSensitive(globs []string) (*Sensitive, error) {
	s := &Sensitive{exact: map[string][]int{}, anchoredByFirst: map[string][]nfaRef{}}
	prefix := map[string][]int{}
	suffix := map[string][]int{}
	for i, raw := range globs {
		g, err := compileSensGlob(raw)
		if err != nil {
			return nil, fmt.Errorf("[%d] %q: %w", i, raw, err)
		}
		idx := len(s.globs)
		s.globs = append(s.globs, g)
		if g.tilde {
			s.tildes = append(s.tildes, idx)
		}
		kind, key := globKey(g)
		switch kind {
		case keyExact:
			s.exact[key] = append(s.exact[key], idx)
			s.exactSigs.add(exactSig([]byte(key)))
		case keyPrefix:
			prefix[key] = append(prefix[key], idx)
		case keySuffix:
			suffix[key] = append(suffix[key], idx)
		default:
			s.keyless = append(s.keyless, idx)
		}
		if !g.anchored {
			elems := strings.Split(cleanGlob(strings.TrimSpace(raw)), "/")
			for k := 1; k < len(elems); k++ {
				n, err := compileGlob("/**/"+strings.Join(elems[:k], "/"), globConfig, false, maxGlobStates)
				if err != nil {
					return nil, fmt.Errorf("[%d] %q: %w", i, raw, err)
				}
				s.heads = append(s.heads, nfaRef{idx, n})
				if last := elems[k-1]; !strings.ContainsAny(last, globMeta) {
					if s.headNames == nil {
						s.headNames = map[string]bool{}
					}
					s.headNames[strings.ToLower(last)] = true
				} else {
					s.headNames["*"] = true
				}
			}
		}
		if g.anchored {
			for k, n := range g.nfas {
				first := firstElement(g, k)
				if first == "" {
					s.anchoredWildcard = append(s.anchoredWildcard, nfaRef{idx, n})
				} else {
					s.anchoredByFirst[first] = append(s.anchoredByFirst[first], nfaRef{idx, n})
				}
			}
		}
	}
	s.prefixes = sortedKeys(prefix)
	s.suffixes = sortedKeys(suffix)
	for _, k := range s.prefixes {
		s.prefixByFirst[k.key[0]] = append(s.prefixByFirst[k.key[0]], k)
	}
	for _, k := range s.suffixes {
		s.suffixByLast[k.key[len(k.key)-1]] = append(s.suffixByLast[k.key[len(k.key)-1]], k)
	}
	firsts := make([]string, 0, len(s.anchoredByFirst))
	for k := range s.anchoredByFirst {
		firsts = append(firsts, k)
	}
	sort.Strings(firsts)
	for _, k := range firsts {
		s.anchoredAll = append(s.anchoredAll, s.anchoredByFirst[k]...)
	}
	s.buildSamples()
	return s, nil
}

func sortedKeys(m map[string][]int) []sensKey {
	out := make([]sensKey, 0, len(m))
	for k, v := range m {
		out = append(out, sensKey{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

// Globs returns the globs, as configured.
func (s *Sensitive) Globs() []string {
	out := make([]string, len(s.globs))
	for i, g := range s.globs {
		out[i] = g.glob
	}
	return out
}

func compileSensGlob(raw string) (sensGlob, error) {
	g := sensGlob{glob: raw}
	p := strings.TrimSpace(raw)
	switch {
	case p == "":
		return g, errors.New("empty pattern")
	case strings.IndexByte(p, 0) >= 0:
		return g, errors.New("pattern contains a NUL byte")
	case p == "~" || strings.HasPrefix(p, "~/"):
		g.tilde, g.anchored = true, true
		g.rel = strings.TrimPrefix(strings.TrimPrefix(p, "~"), "/")
		if g.rel != "" {
			g.rel = cleanGlob(g.rel)
		}
		for _, root := range homeRoots {
			n, err := compileGlob(joinGlob(root, g.rel), globConfig, true, maxGlobStates)
			if err != nil {
				return g, err
			}
			g.nfas = append(g.nfas, n)
		}
		return g, nil
	case strings.HasPrefix(p, "~"):
		return g, errors.New(`"~user" is not supported: use "~/" (any home) or an absolute path`)
	case strings.HasPrefix(p, "/"):
		g.anchored = true
		p = cleanGlob(p)
	default:
		p = cleanGlob(p)
		if p == "." || p == ".." || strings.HasPrefix(p, "../") {
			return g, errors.New(`a name matched anywhere cannot start with ".."`)
		}
		p = "/**/" + p
	}
	n, err := compileGlob(p, globConfig, true, maxGlobStates)
	if err != nil {
		return g, err
	}
	g.nfas = []*globNFA{n}
	return g, nil
}

// cleanGlob cleans a glob like a path, keeping a trailing "/*" meaningful.
func cleanGlob(p string) string {
	c := path.Clean(p)
	if c == "." {
		return ""
	}
	return c
}

func joinGlob(root, rel string) string {
	if rel == "" {
		return root
	}
	return root + "/" + rel
}

type keyKind uint8

const (
	keyNone keyKind = iota
	keyExact
	keyPrefix
	keySuffix
)

const globMeta = `*?[\`

// globKey picks the key of a glob: its last literal dotfile name, else from its last element
// that has one, an exact name, else a literal prefix, else a literal suffix. Lower-cased, like
// everything matched against it.
func globKey(g sensGlob) (keyKind, string) {
	p := g.rel
	if !g.tilde {
		p = strings.TrimPrefix(g.glob, "/")
		p = strings.TrimSpace(p)
		p = strings.TrimPrefix(cleanGlob(p), "/")
	}
	elems := strings.Split(p, "/")
	// A literal dotfile name is the rarest word in a command: prefer it (".config" over
	// "git" in ~/.config/git).
	for i := len(elems) - 1; i >= 0; i-- {
		if e := elems[i]; len(e) > 1 && e[0] == '.' && e != ".." && !strings.ContainsAny(e, globMeta) {
			return keyExact, strings.ToLower(e)
		}
	}
	kind, key := keyNone, ""
	for i := len(elems) - 1; i >= 0; i-- {
		e := elems[i]
		if e == "" || e == "." || e == ".." {
			continue
		}
		m := strings.IndexAny(e, globMeta)
		if m < 0 {
			return keyExact, strings.ToLower(e)
		}
		if kind != keyNone {
			continue // a short prefix or suffix found already; an exact name before it is better
		}
		if m > 0 {
			kind, key = keyPrefix, strings.ToLower(e[:m])
		} else if last := strings.LastIndexAny(e, globMeta+"]"); last >= 0 && last < len(e)-1 {
			kind, key = keySuffix, strings.ToLower(e[last+1:])
		}
		if kind != keyNone && len(key) >= 3 {
			return kind, key
		}
	}
	return kind, key
}

// firstElement is the literal first element of an anchored glob's k-th automaton, lower-cased,
// or "" when it is a wildcard.
func firstElement(g sensGlob, k int) string {
	p := g.glob
	if g.tilde {
		p = joinGlob(homeRoots[k], g.rel)
	}
	p = strings.TrimPrefix(strings.TrimSpace(p), "/")
	e, _, _ := strings.Cut(p, "/")
	if e == "" || strings.ContainsAny(e, globMeta) {
		return ""
	}
	return strings.ToLower(e)
}

// Match reports whether the path p refers to a sensitive path (or to a file inside a sensitive
// directory), and names the glob.
func (s *Sensitive) Match(p, cwd, home string) (glob string, ok bool) {
	if s == nil || p == "" {
		return "", false
	}
	c := s.scope(cwd, home)
	return c.match(p)
}

// MatchGlob reports whether a shell glob written in a command (quoted characters escaped with
// "\", as shell.Arg.Pattern holds it) could match a sensitive path. For a name matched anywhere
// (".env", "*.pem") the glob must also spell part of the name with its own literal characters:
// "*" and "*.go" could match "x.pem" in any directory, but do not name a key; ".e*" and "*.p*"
// do. Bash's rules apply: no wildcard or class matches a leading ".".
func (s *Sensitive) MatchGlob(pattern, cwd, home string) (glob string, ok bool) {
	if s == nil || pattern == "" {
		return "", false
	}
	c := s.scope(cwd, home)
	return c.matchGlob(pattern, false)
}

// MatchTree reports whether a recursive read of the directory dir (grep -r, tar c, rsync)
// reaches a sensitive path: dir is one, or an ancestor of one. A name matched anywhere (".env",
// ".git/hooks") counts only when dir is one or its leading part (".git"): otherwise every
// directory would be an ancestor of one.
func (s *Sensitive) MatchTree(dir, cwd, home string) (glob string, ok bool) {
	if s == nil || dir == "" {
		return "", false
	}
	c := s.scope(cwd, home)
	return c.matchTree(dir)
}

// MatchGlobTree is MatchTree for a shell glob: could a recursive read of what it matches reach
// a sensitive path.
func (s *Sensitive) MatchGlobTree(pattern, cwd, home string) (glob string, ok bool) {
	if s == nil || pattern == "" {
		return "", false
	}
	c := s.scope(cwd, home)
	return c.matchGlob(pattern, true)
}

// sensScope is a Sensitive bound to one cwd and home: the keys their elements hit are worked
// out once for every path matched in that scope.
type sensScope struct {
	s         *Sensitive
	rawCwd    string // the cwd and home the scope was made for
	rawHome   string
	holds     int8   // whether base holds a sensitive path: 0 not worked out, 1 yes, -1 no
	cwd, home string // cleaned; cwd "" when unknown, home "" when unknown
	base      string // what a relative path is taken against: cwd, else home, else /root
	tildeHome string // what "~" stands for: home, else /root
	baseCand  candSet
	homeCand  candSet
	homeNFAs  []*globNFA // the "~/" globs instantiated for home, nil when a root covers it
	// baseNoKeys is true when no element of base hits a key (and no glob is keyless): a
	// relative name is then sensitive only by hitting a key itself (see cannotMatch).
	baseNoKeys bool
	baseProc   bool // base may be below a /proc link (see cleanProc)
}

func (s *Sensitive) scope(cwd, home string) *sensScope {
	c := &sensScope{s: s}
	c.reset(cwd, home)
	return c
}

func (c *sensScope) reset(cwd, home string) {
	s := c.s
	c.rawCwd, c.rawHome, c.holds = cwd, home, 0
	c.cwd, c.home = "", ""
	c.baseCand, c.homeCand = candSet{}, candSet{}
	c.homeNFAs = nil
	if home != "" {
		if isWindowsPath(home) {
			home = windowsToSlash(home)
		}
		if path.IsAbs(home) {
			home = path.Clean(home)
			if home != "/" {
				c.home = home
			}
		}
	}
	if cwd != "" {
		if isWindowsPath(cwd) {
			cwd = windowsToSlash(cwd)
		}
		if path.IsAbs(cwd) {
			c.cwd = path.Clean(cwd)
		}
	}
	c.tildeHome = c.home
	if c.tildeHome == "" {
		c.tildeHome = "/root"
	}
	c.base = c.cwd
	if c.base == "" {
		c.base = c.tildeHome
	}
	c.baseProc = mayHaveProcLink(c.base)
	s.collect(&c.baseCand, c.base)
	s.collect(&c.homeCand, c.tildeHome)
	c.baseNoKeys = c.baseCand.empty()
	if c.home != "" && !coveredHome(c.home) {
		c.homeNFAs = s.homeNFAs(c.home)
	}
}

// coveredHome reports whether a home directory is one homeRoots already stands for.
func coveredHome(h string) bool {
	if h == "/root" {
		return true
	}
	for _, r := range []string{"/home/", "/Users/"} {
		if strings.HasPrefix(h, r) && strings.IndexByte(h[len(r):], '/') < 0 && len(h) > len(r) {
			return true
		}
	}
	return false
}

// cwdHolds reports whether the directory relative paths are taken against holds (or is
// inside) a sensitive path.
func (c *sensScope) cwdHolds() bool {
	if c.holds == 0 {
		c.holds = -1
		if _, ok := c.matchTree(c.base); ok {
			c.holds = 1
		}
	}
	return c.holds > 0
}

// hasHead reports whether an element of p is the leading name of a multi-element name matched
// anywhere (".git" of ".git/hooks").
func (s *Sensitive) hasHead(p string) bool {
	if len(s.headNames) == 0 {
		return false
	}
	if s.headNames["*"] {
		return true // a head with a wildcard: any name may be one
	}
	for _, e := range strings.FieldsFunc(strings.ToLower(p), func(r rune) bool { return r == '/' || r == '\\' }) {
		if s.headNames[e] {
			return true
		}
	}
	return false
}

// namesSensitive reports whether a bare name (no "/") is, by itself, a sensitive name: a
// dotfile a glob names (".ssh", ".aws", ".env") or a name matched anywhere ("id_rsa", "x.pem").
func (s *Sensitive) namesSensitive(name string) (string, bool) {
	var buf [64]byte
	low := lowerASCII(name, buf[:0])
	if strings.HasPrefix(low, ".") && len(low) > 1 {
		if idx := s.exact[low]; len(idx) > 0 {
			return s.globs[idx[0]].glob, true
		}
	}
	var cand candSet
	s.collectElement(&cand, []byte(low))
	found := ""
	cand.each(func(i int) bool {
		g := &s.globs[i]
		if g.anchored {
			return false
		}
		for _, n := range g.nfas {
			if n.matches("/" + low) {
				found = g.glob
				return true
			}
		}
		return false
	})
	return found, found != ""
}

// homeNFAs returns the "~/" globs compiled for one home directory.
func (s *Sensitive) homeNFAs(home string) []*globNFA {
	if len(s.tildes) == 0 {
		return nil
	}
	if v, ok := s.homes.Load(home); ok {
		return v.([]*globNFA)
	}
	out := make([]*globNFA, len(s.globs))
	for _, i := range s.tildes {
		n, err := compileGlob(joinGlob(escapeGlob(home), s.globs[i].rel), globConfig, true, maxGlobStates)
		if err != nil {
			// A home too long to compile: the roots still cover /root, /home/* and /Users/*.
			continue
		}
		out[i] = n
	}
	size := 0
	s.homes.Range(func(any, any) bool { size++; return size < maxHomes })
	if size < maxHomes {
		s.homes.Store(home, out)
	}
	return out
}

// candSet is a set of glob indexes.
type candSet struct {
	small [4]uint64
	big   []uint64
}

func (c *candSet) add(i int) {
	if i < 256 && c.big == nil {
		c.small[i>>6] |= 1 << (i & 63)
		return
	}
	if c.big == nil {
		c.big = make([]uint64, 0, 8)
		c.big = append(c.big, c.small[:]...)
	}
	for len(c.big) <= i>>6 {
		c.big = append(c.big, 0)
	}
	c.big[i>>6] |= 1 << (i & 63)
}

func (c *candSet) words() []uint64 {
	if c.big != nil {
		return c.big
	}
	return c.small[:]
}

func (c *candSet) union(o *candSet) {
	ow := o.words()
	if c.big == nil && o.big == nil {
		for k := range c.small {
			c.small[k] |= o.small[k]
		}
		return
	}
	for k, w := range ow {
		for b := 0; w != 0; b++ {
			if w&1 != 0 {
				c.add(k*64 + b)
			}
			w >>= 1
		}
	}
}

func (c *candSet) empty() bool {
	for _, w := range c.words() {
		if w != 0 {
			return false
		}
	}
	return true
}

func (c *candSet) each(f func(i int) bool) bool {
	for k, w := range c.words() {
		for b := 0; w != 0; b++ {
			if w&1 != 0 && f(k*64+b) {
				return true
			}
			w >>= 1
		}
	}
	return false
}

// collect adds the globs whose key an element of the literal path p hits.
func (s *Sensitive) collect(c *candSet, p string) {
	for _, i := range s.keyless {
		c.add(i)
	}
	var buf [64]byte
	n := 0
	long := false // the element is longer than buf
	start := 0
	for i := 0; i <= len(p); i++ {
		if i == len(p) || p[i] == '/' || p[i] == '\\' {
			switch {
			case long:
				s.collectElement(c, []byte(strings.ToLower(p[start:i])))
			case n == 0, n == 1 && buf[0] == '.', n == 2 && buf[0] == '.' && buf[1] == '.':
			default:
				s.collectElement(c, buf[:n])
			}
			n, long, start = 0, false, i+1
			continue
		}
		if n == len(buf) {
			long = true
			continue
		}
		ch := p[i]
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		buf[n] = ch
		n++
	}
}

// collectElement adds the globs whose key the lower-cased element e hits.
func (s *Sensitive) collectElement(c *candSet, e []byte) {
	if len(e) == 0 {
		return
	}
	if s.exactSigs.has(exactSig(e)) {
		for _, i := range s.exact[string(e)] {
			c.add(i)
		}
	}
	for _, k := range s.prefixByFirst[e[0]] {
		if len(e) >= len(k.key) && string(e[:len(k.key)]) == k.key {
			for _, i := range k.idxs {
				c.add(i)
			}
		}
	}
	for _, k := range s.suffixByLast[e[len(e)-1]] {
		if len(e) >= len(k.key) && string(e[len(e)-len(k.key):]) == k.key {
			for _, i := range k.idxs {
				c.add(i)
			}
		}
	}
}

// exactSig is a cheap summary of a name (its length and end bytes) checked before the map.
func exactSig(e []byte) byte {
	return byte(len(e)*37) ^ e[0]*11 ^ e[len(e)-1]
}

// collectGlobElement adds the globs whose key a path element matching the shell glob e could
// hit.
func (s *Sensitive) collectGlobElement(c *candSet, e string) {
	if strings.ContainsAny(e, "[(") || strings.Contains(e, "**") {
		// Classes (case, POSIX names) and extglob: any key.
		s.all(c)
		return
	}
	e = strings.ToLower(e)
	for k, idxs := range s.exact {
		if shell.Match(e, k) {
			for _, i := range idxs {
				c.add(i)
			}
		}
	}
	m := strings.IndexAny(e, globMeta)
	if m < 0 {
		s.collectElement(c, []byte(e)) // "!" or "@" alone: a literal name
		return
	}
	lit := unescapeGlob(e[:m])
	last := strings.LastIndexAny(e, "*?")
	tail := unescapeGlob(e[last+1:])
	for _, k := range s.prefixes {
		if strings.HasPrefix(lit, k.key) || strings.HasPrefix(k.key, lit) {
			for _, i := range k.idxs {
				c.add(i)
			}
		}
	}
	for _, k := range s.suffixes {
		if strings.HasSuffix(tail, k.key) || strings.HasSuffix(k.key, tail) {
			for _, i := range k.idxs {
				c.add(i)
			}
		}
	}
}

func (s *Sensitive) all(c *candSet) {
	for i := range s.globs {
		c.add(i)
	}
}

func unescapeGlob(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// lowerASCII lower-cases ASCII letters, in buf when it fits.
func lowerASCII(s string, buf []byte) string {
	upper := false
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			upper = true
			break
		}
	}
	if !upper {
		return s
	}
	if len(s) > cap(buf) {
		return strings.ToLower(s)
	}
	b := buf[:len(s)]
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
	}
	return string(b)
}

func windowsToSlash(p string) string {
	p = strings.ReplaceAll(p, `\`, "/")
	if len(p) >= 2 && p[1] == ':' {
		p = p[2:]
	}
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	return p
}

// start classifies how a path begins: relative to the home directory (with the rest), to
// another user's home, or otherwise.
func (c *sensScope) resolveStart(p string) (prefix, rest string, homeRel bool) {
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		return c.tildeHome, p[1:], true
	case strings.HasPrefix(p, "$HOME") && (len(p) == 5 || p[5] == '/'):
		return c.tildeHome, p[5:], true
	case strings.HasPrefix(p, "${HOME}"):
		return c.tildeHome, p[7:], true
	case strings.HasPrefix(p, "~"):
		user, rest, _ := strings.Cut(p[1:], "/")
		if rest != "" || strings.HasSuffix(p, "/") {
			rest = "/" + rest
		}
		switch user {
		case "root":
			return "/root", rest, false
		case "+":
			return c.base, rest, false
		}
		return "/home/" + user, rest, false
	}
	return "", p, false
}

// resolve normalises a literal path.
func (c *sensScope) resolve(p string) string {
	full, _, _ := c.resolveProc(p)
	return full
}

// resolveProc is resolve, reading the links of /proc (see cleanProc).
func (c *sensScope) resolveProc(p string) (full, through string, at bool) {
	return cleanProc(c.joined(p))
}

// joined is p made absolute (against the home or the base), not cleaned.
func (c *sensScope) joined(p string) string {
	if isWindowsPath(p) {
		p = windowsToSlash(p)
	}
	prefix, rest, _ := c.resolveStart(p)
	switch {
	case prefix != "":
		p = prefix + rest
	case !strings.HasPrefix(p, "/"):
		p = c.base + "/" + p
	}
	return p
}

// candidates collects the globs a literal path could match.
func (c *sensScope) candidates(cand *candSet, p string) {
	prefix, rest, homeRel := c.resolveStart(p)
	switch {
	case homeRel:
		cand.union(&c.homeCand)
	case prefix != "":
		c.s.collect(cand, prefix)
	case !strings.HasPrefix(p, "/") && !isWindowsPath(p):
		cand.union(&c.baseCand)
	}
	c.s.collect(cand, rest)
}

// cannotMatch reports, cheaply, what match would find by collecting candidates: nothing. It
// holds for one plain element taken against the base directory — no "/" or "\" (a single
// element), no ":" (no drive), no leading "~" or "$" (no home to put in front) — when the
// base directory's elements hit no key (and no glob is keyless) and the element hits none
// itself. Most words of a command ("ls", "-la", "status", "foo") are such elements.
// TestCannotMatchAgreesWithTheMatcher and FuzzCannotMatch hold it to the full matcher.
func (c *sensScope) cannotMatch(p string) bool {
	if !c.baseNoKeys || c.baseProc || p == "" || len(p) > maxPlainElement || p[0] == '~' || p[0] == '$' {
		return false
	}
	var buf [maxPlainElement]byte
	for i := 0; i < len(p); i++ {
		ch := p[i]
		switch {
		case ch == '/' || ch == '\\' || ch == ':':
			return false
		case 'A' <= ch && ch <= 'Z':
			ch += 'a' - 'A'
		}
		buf[i] = ch
	}
	return !c.s.hitsKey(buf[:len(p)])
}

// maxPlainElement is the longest element cannotMatch decides (collect lower-cases elements up
// to this length in place).
const maxPlainElement = 64

// hitsKey reports whether the lower-cased element e hits a key of the index: whether
// collectElement would add any glob for it.
func (s *Sensitive) hitsKey(e []byte) bool {
	if len(e) == 0 {
		return false
	}
	if s.exactSigs.has(exactSig(e)) {
		if _, ok := s.exact[string(e)]; ok {
			return true
		}
	}
	for _, k := range s.prefixByFirst[e[0]] {
		if len(e) >= len(k.key) && string(e[:len(k.key)]) == k.key {
			return true
		}
	}
	for _, k := range s.suffixByLast[e[len(e)-1]] {
		if len(e) >= len(k.key) && string(e[len(e)-len(k.key):]) == k.key {
			return true
		}
	}
	return false
}

func (c *sensScope) match(p string) (string, bool) {
	if c.cannotMatch(p) {
		return "", false
	}
	return c.matchCandidates(p)
}

// matchCandidates is match without the cannotMatch shortcut: it collects the candidate globs
// of every element and tries them.
func (c *sensScope) matchCandidates(p string) (string, bool) {
	var cand candSet
	c.candidates(&cand, p)
	var full string
	if mayHaveProcLink(p) || c.baseProc {
		var through string
		if full, through, _ = c.resolveProc(p); through != "" {
			return through, true
		}
		if alt := linuxDevFd(c.joined(p)); alt != "" {
			var cand2 candSet
			c.s.all(&cand2)
			if clean, through, _ := cleanProc(alt); through != "" {
				return through, true
			} else if g, ok := c.matchFull(&cand2, clean); ok {
				return g, true
			}
		}
	}
	if cand.empty() {
		return "", false
	}
	if full == "" {
		full = c.resolve(p)
	}
	return c.matchFull(&cand, full)
}

// matchFull matches a resolved path against the candidate globs.
func (c *sensScope) matchFull(cand *candSet, full string) (string, bool) {
	found := ""
	cand.each(func(i int) bool {
		g := &c.s.globs[i]
		for _, n := range g.nfas {
			if n.matches(full) {
				found = g.glob
				return true
			}
		}
		if g.tilde && c.homeNFAs != nil && c.homeNFAs[i] != nil && c.homeNFAs[i].matches(full) {
			found = g.glob
			return true
		}
		return false
	})
	return found, found != ""
}

func (c *sensScope) matchTree(dir string) (string, bool) { return c.matchBelow(dir, true) }

// matchListing reports whether listing every name under dir recursively reaches a sensitive
// path that has a place of its own (a home's keys and credentials, /etc/shadow, …). Names
// matched anywhere (.env, *.pem, .git/hooks) do not count: a project's own tree may hold
// them, and listing it is everyday work.
func (c *sensScope) matchListing(dir string) (string, bool) { return c.matchBelow(dir, false) }

// matchBelow is matchTree; heads says whether the names matched anywhere count too.
func (c *sensScope) matchBelow(dir string, heads bool) (string, bool) {
	if g, ok := c.match(dir); ok {
		return g, true
	}
	full, _, at := c.resolveProc(dir)
	if at {
		return procLinkGlob(full), true
	}
	first := strings.TrimPrefix(full, "/")
	first, _, _ = strings.Cut(first, "/")
	var buf [64]byte
	first = lowerASCII(first, buf[:0])
	try := func(refs []nfaRef) (string, bool) {
		for _, r := range refs {
			if r.nfa.matchesBelow(full) {
				return c.s.globs[r.glob].glob, true
			}
		}
		return "", false
	}
	if full == "/" {
		if g, ok := try(c.s.anchoredAll); ok {
			return g, true
		}
	} else if g, ok := try(c.s.anchoredByFirst[first]); ok {
		return g, true
	}
	if g, ok := try(c.s.anchoredWildcard); ok {
		return g, true
	}
	for _, r := range c.s.heads {
		if heads && r.nfa.matches(full) {
			return c.s.globs[r.glob].glob, true
		}
	}
	if c.homeNFAs != nil {
		for _, i := range c.s.tildes {
			if n := c.homeNFAs[i]; n != nil && n.matchesBelow(full) {
				return c.s.globs[i].glob, true
			}
		}
	}
	return "", false
}

// matchGlob matches a shell glob; with tree, a recursive read of what it matches counts.
func (c *sensScope) matchGlob(pattern string, tree bool) (string, bool) {
	p := pattern
	if isWindowsPath(p) {
		p = windowsToSlash(p)
	}
	var cand candSet
	prefix, rest, homeRel := c.resolveStart(p)
	switch {
	case homeRel:
		cand.union(&c.homeCand)
		p = escapeGlob(prefix) + rest
	case prefix != "":
		c.s.collect(&cand, prefix)
		p = escapeGlob(prefix) + rest
	case !strings.HasPrefix(p, "/"):
		cand.union(&c.baseCand)
		p = escapeGlob(c.base) + "/" + p
	}
	if tree {
		c.s.all(&cand)
	} else {
		for _, e := range strings.Split(rest, "/") {
			switch {
			case e == "" || e == "." || e == "..":
			case strings.ContainsAny(e, globMeta) || strings.ContainsAny(e, "@!+("):
				c.s.collectGlobElement(&cand, e)
			default:
				c.s.collectElement(&cand, []byte(strings.ToLower(e)))
			}
		}
	}
	p = path.Clean(p)
	if alts, through := procGlobAlternatives(p); through != "" || len(alts) > 0 {
		if through != "" {
			return through, true
		}
		c.s.all(&cand) // an alias of "/" reaches every glob
		for _, alt := range alts {
			if g, ok := c.intersectGlob(alt, &cand, tree); ok {
				return g, true
			}
		}
	}
	if cand.empty() {
		return "", false
	}
	return c.intersectGlob(p, &cand, tree)
}

// intersectGlob reports whether the cleaned absolute shell glob p could match one of the
// candidate globs (with tree: reach one when read recursively).
func (c *sensScope) intersectGlob(p string, cand *candSet, tree bool) (string, bool) {
	word, err := compileGlob(p, globShell, false, maxWordGlobStates)
	if err != nil {
		// Too big to reason about: it could match anything.
		found := ""
		cand.each(func(i int) bool { found = c.s.globs[i].glob; return true })
		return found, true
	}
	found := ""
	cand.each(func(i int) bool {
		g := &c.s.globs[i]
		below := tree && g.anchored
		// A name matched anywhere must be named by the glob, not only be possible: "*" in a
		// project could be "x.pem", but "ls *" is not after keys; "*.p*" and ".e*" are.
		spelled := !g.anchored
		for _, n := range g.nfas {
			if intersects(word, n, below, spelled) {
				found = g.glob
				return true
			}
		}
		if g.tilde && c.homeNFAs != nil && c.homeNFAs[i] != nil && intersects(word, c.homeNFAs[i], below, false) {
			found = g.glob
			return true
		}
		return false
	})
	if found == "" && tree {
		for _, r := range c.s.heads {
			if intersects(word, r.nfa, false, true) {
				return c.s.globs[r.glob].glob, true
			}
		}
	}
	return found, found != ""
}

// SecretLookingName reports whether an environment variable's name looks like it holds a
// secret: TOKEN, SECRET, PASSWORD, PASSWD, PASSPHRASE, CREDENTIAL or PRIVATE anywhere in it,
// KEY, PASS, PWD, AUTH, COOKIE or CREDS as a word of it (API_KEY, not KEYBOARD), or a database
// URL or DSN.
func SecretLookingName(name string) bool {
	up := strings.ToUpper(name)
	for _, w := range []string{"TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL", "PRIVATE", "APIKEY", "ACCESSKEY"} {
		if strings.Contains(up, w) {
			return true
		}
	}
	// Whole words of the name: KEY in AWS_SECRET_ACCESS_KEY and API_KEY, not in KEYBOARD or MONKEY.
	for _, part := range strings.FieldsFunc(up, func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
		switch part {
		case "KEY", "KEYS", "PASS", "PWD", "AUTH", "COOKIE", "COOKIES", "DSN", "CREDS", "CRED":
			if up == "PWD" || up == "OLDPWD" {
				continue // the working directory
			}
			return true
		}
	}
	return strings.HasSuffix(up, "DATABASE_URL") || strings.HasSuffix(up, "_DB_URL")
}
