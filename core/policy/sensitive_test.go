package policy

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/approvebot/approvebot/internal/sandbox"
)

func defaultSensitive(tb testing.TB) *Sensitive {
	tb.Helper()
	s, err := CompileSensitive(DefaultSensitivePaths)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

const (
	sensHome = "/home/u"
	sensProj = "/home/u/proj"
)

func TestSensitiveMatch(t *testing.T) {
	s := defaultSensitive(t)
	cases := []struct {
		path, cwd, home string
		want            string // the glob, "" for no match
	}{
		// Homes: ~, $HOME, /root, /home/*, /Users/* and the home given.
		{"~/.ssh/id_rsa", sensProj, sensHome, "~/.ssh"},
		{"~/.ssh", sensProj, sensHome, "~/.ssh"},
		{"~/.ssh/", sensProj, sensHome, "~/.ssh"},
		{"~", sensProj, sensHome, ""},
		{"/home/bob/.ssh/authorized_keys", sensProj, sensHome, "~/.ssh"},
		{"/Users/alice/.aws/credentials", sensProj, sensHome, "~/.aws"},
		{"/root/.kube/config", sensProj, "", "~/.kube"},
		{"$HOME/.netrc", sensProj, sensHome, "~/.netrc"},
		{"${HOME}/.netrc", sensProj, sensHome, "~/.netrc"},
		{"$HOMEX/.netrc", sensProj, sensHome, ""},
		{"~bob/.ssh/config", sensProj, sensHome, "~/.ssh"},
		{"~root/.bashrc", sensProj, sensHome, "~/.bashrc"},
		{"~/.ssh/id_rsa", sensProj, "", "~/.ssh"},
		{"/var/lib/jenkins/.ssh/id_rsa", "/var/lib/jenkins/ws", "/var/lib/jenkins", "~/.ssh"},
		{"~/.docker/config.json", "/srv/app", "/srv/home/ci", "~/.docker"},
		{"/srv/home/ci/.docker/config.json", "/srv/app", "/srv/home/ci", "~/.docker"},
		{"/srv/home/ci/.docker/config.json", "/srv/app", "", ""},
		{"/home/u/sub/.ssh/id", sensProj, sensHome, ""},
		{"/home/u/.sshx", sensProj, sensHome, ""},
		// Relative paths and "..", against the cwd, else the home directory.
		{"../.ssh/id_ed25519", sensProj, sensHome, "~/.ssh"},
		{"../../../../../etc/shadow", sensProj, sensHome, "/etc/shadow*"},
		{"./../.././../etc/sudoers.d/90-agent", sensProj, sensHome, "/etc/sudoers*"},
		{"config", "/home/u/.aws", sensHome, "~/.aws"},
		{"credentials", "/Users/a/.aws", "", "~/.aws"},
		{".aws/credentials", "", sensHome, "~/.aws"},
		{".aws/credentials", "relative/cwd", sensHome, "~/.aws"},
		{"config", "", sensHome, ""},
		{"x/../.bashrc", "/root", "", "~/.bashrc"},
		{"~+/.env", sensProj, sensHome, ".env"},
		// Names matched anywhere.
		{".env", sensProj, sensHome, ".env"},
		{"config/.env.production", sensProj, sensHome, ".env.*"},
		{".envrc", sensProj, sensHome, ".envrc"},
		{".env.example", sensProj, sensHome, ".env.*"},
		{".environment", sensProj, sensHome, ""},
		{"server.pem", sensProj, sensHome, "*.pem"},
		{"/tmp/x/KEY.PEM", sensProj, sensHome, "*.pem"},
		{"certs/tls.key", sensProj, sensHome, "*.key"},
		{"id_rsa", "/tmp", sensHome, "id_rsa*"},
		{"deploy/id_ed25519.pub", sensProj, sensHome, "id_ed25519*"},
		{"id_test.go", sensProj, sensHome, ""},
		{".git/hooks/pre-commit", sensProj, sensHome, ".git/hooks"},
		{"/other/repo/.git/config", sensProj, sensHome, ".git/config"},
		{".git/HEAD", sensProj, sensHome, ""},
		{"hooks/useAuth.ts", sensProj, sensHome, ""},
		{"pre-commit", "/home/u/proj/.git/hooks", sensHome, ".git/hooks"},
		{".claude/settings.local.json", sensProj, sensHome, ".claude/settings*.json"},
		{"approvebot.db.tokens", "/srv", sensHome, "*.tokens"},
		// Case does not matter (macOS, Windows).
		{"/home/u/.SSH/ID_RSA", sensProj, sensHome, "~/.ssh"},
		{"/ETC/Shadow", sensProj, sensHome, "/etc/shadow*"},
		{".ENV", sensProj, sensHome, ".env"},
		// Windows paths.
		{`C:\Users\bob\.ssh\id_rsa`, sensProj, sensHome, "~/.ssh"},
		{`c:/Users/bob/.aws/config`, sensProj, sensHome, "~/.aws"},
		// System locations.
		{"/proc/self/environ", sensProj, sensHome, "/proc/*/environ"},
		{"/proc/1234/task/1235/mem", sensProj, sensHome, "/proc/*/task/*/mem"},
		{"/proc/self/status", sensProj, sensHome, ""},
		{"/etc/sudoers", sensProj, sensHome, "/etc/sudoers*"},
		{"/etc/cron.d/job", sensProj, sensHome, "/etc/cron*"},
		{"/etc/crontab", sensProj, sensHome, "/etc/cron*"},
		{"/var/spool/cron/crontabs/root", sensProj, sensHome, "/var/spool/cron"},
		{"/etc/systemd/system/evil.service", sensProj, sensHome, "/etc/systemd"},
		{"~/.config/systemd/user/x.service", sensProj, sensHome, "~/.config/systemd"},
		{"/var/run/secrets/kubernetes.io/serviceaccount/token", sensProj, sensHome, "/var/run/secrets"},
		{"/dev/sda", sensProj, sensHome, "/dev/sd*"},
		{"/dev/nvme0n1p1", sensProj, sensHome, "/dev/nvme*"},
		{"/etc/ssh/ssh_host_ed25519_key", sensProj, sensHome, "/etc/ssh/ssh_host_*"},
		{"/etc/ssh/sshd_config", sensProj, sensHome, ""},
		// Not sensitive.
		{"src/main.go", sensProj, sensHome, ""},
		{"README.md", sensProj, sensHome, ""},
		{"/etc/hosts", sensProj, sensHome, ""},
		{"/etc/passwd", sensProj, sensHome, ""},
		{"/tmp/x", sensProj, sensHome, ""},
		{"/dev/null", sensProj, sensHome, ""},
		{"/dev/stdout", sensProj, sensHome, ""},
		{"src", sensProj, sensHome, ""},
		{"sdk/x", sensProj, sensHome, ""},
		{"/usr/lib/x86_64-linux-gnu/libc.so.6", sensProj, sensHome, ""},
		{"/home/u/projects/ssh/notes", sensProj, sensHome, ""},
		{"-la", sensProj, sensHome, ""},
		{"status", sensProj, sensHome, ""},
	}
	for _, c := range cases {
		t.Run(c.path+"@"+c.cwd, func(t *testing.T) {
			got, ok := s.Match(c.path, c.cwd, c.home)
			if got != c.want || ok != (c.want != "") {
				t.Fatalf("Match(%q, cwd %q, home %q) = %q, %v; want %q", c.path, c.cwd, c.home, got, ok, c.want)
			}
		})
	}
}

func TestSensitiveMatchGlob(t *testing.T) {
	s := defaultSensitive(t)
	cases := []struct {
		pattern, cwd string
		want         bool
	}{
		{"~/.ss?/id_*", sensProj, true},
		{"~/.s*/*", sensProj, true},
		{"/home/*/.ssh/*", sensProj, true},
		{"/*/*/.aws/credentials", sensProj, true},
		{"/*/*/.a[v-x]s/c*", sensProj, true},
		{"../.[a-z]sh/id_rsa", sensProj, true},
		{"../*", sensProj, false}, // no leading dot: not ~/.ssh
		{"../.*", sensProj, true},
		{"*.go", sensProj, false},
		{"*", sensProj, false},
		{"*/*", sensProj, false},
		{".*", sensProj, true}, // .env
		{"*.pem", sensProj, true},
		{"certs/*.PEM", sensProj, true},
		{"/etc/sh*", sensProj, true},
		{"/etc/host*", sensProj, false},
		{"/etc/*", sensProj, true},
		{"/proc/[0-9]*/environ", sensProj, true},
		{"/proc/[0-9]*/status", sensProj, false},
		{"/proc/*/status", sensProj, true}, // /proc/kcore/status, for all a glob knows
		{"@(.env|x)", sensProj, true},
		{"*(.)env", sensProj, true},
		{"[.]env", sensProj, false}, // bash: a class never matches a leading "."
		{"/dev/sd?", sensProj, true},
		{"/dev/tty*", sensProj, false},
		{"src/**/*.ts", sensProj, false},
		{"**/.env", sensProj, true},
		{"/etc/cron.*/*", sensProj, true},
		{"~/.@(ssh|aws)/*", sensProj, true},
		{"~/.[[:alpha:]]sh/x", sensProj, true},
		{"[[:alpha:]]*.go", sensProj, false},
		{`\*.go`, sensProj, false},
		{`~/\.ssh/id_*`, sensProj, true},
		{"id_*", sensProj, true},
		{"i?_test*", sensProj, false}, // id_rsa* needs "rsa" after "id_"
		{"i?_r*", sensProj, true},
		{"test_*.py", sensProj, false},
		{"/var/lib/jenk*/.ssh/*", "/srv", false},
	}
	for _, c := range cases {
		t.Run(c.pattern, func(t *testing.T) {
			got, ok := s.MatchGlob(c.pattern, c.cwd, sensHome)
			if ok != c.want {
				t.Fatalf("MatchGlob(%q) = %q, %v; want %v", c.pattern, got, ok, c.want)
			}
		})
	}
	t.Run("home given", func(t *testing.T) {
		if _, ok := s.MatchGlob("/var/lib/jenk*/.ssh/*", "/srv", "/var/lib/jenkins"); !ok {
			t.Fatal("the request's home directory is a home")
		}
	})
}

func TestSensitiveMatchTree(t *testing.T) {
	s := defaultSensitive(t)
	cases := []struct {
		dir, cwd, home string
		want           bool
	}{
		{"~", sensProj, sensHome, true},
		{"/", sensProj, sensHome, true},
		{"//", sensProj, sensHome, true},
		{"/home", sensProj, sensHome, true},
		{"/home/u", sensProj, sensHome, true},
		{"/Users", sensProj, sensHome, true},
		{"/etc", sensProj, sensHome, true},
		{"/var", sensProj, sensHome, true},
		{"/proc", sensProj, sensHome, true},
		{"/proc/self", sensProj, sensHome, true},
		{"/dev", sensProj, sensHome, true},
		{".", "/home/u", sensHome, true},
		{"..", sensProj, sensHome, true},
		{"~/.config", sensProj, sensHome, true},
		{"/var/lib/jenkins", "/srv", "/var/lib/jenkins", true},
		{"/var/lib", "/srv", "/var/lib/jenkins", true},
		{".git", sensProj, sensHome, true},
		{".git/hooks", sensProj, sensHome, true},
		{"~/.ssh", sensProj, sensHome, true},
		{".", sensProj, sensHome, false},
		{"src", sensProj, sensHome, false},
		{"/tmp", sensProj, sensHome, false},
		{"/usr/share", sensProj, sensHome, false},
		{"/home/u/proj/src", sensProj, sensHome, false},
		{"/var/lib/jenkins/ws", "/srv", "/var/lib/jenkins", false},
		{"/opt", sensProj, sensHome, false},
	}
	for _, c := range cases {
		t.Run(c.dir+"@"+c.cwd, func(t *testing.T) {
			got, ok := s.MatchTree(c.dir, c.cwd, c.home)
			if ok != c.want {
				t.Fatalf("MatchTree(%q, cwd %q, home %q) = %q, %v; want %v", c.dir, c.cwd, c.home, got, ok, c.want)
			}
		})
	}
	globs := []struct {
		pattern string
		want    bool
	}{
		{"/h*", true},
		{"/us*", true}, // /usr/lib/systemd
		{"~/*", true},  // ~/Library/Keychains
		{"~/proj/*", false},
		{"src/*", false},
		{".g*", true}, // .git
		{"/tm?", false},
	}
	for _, c := range globs {
		t.Run("glob "+c.pattern, func(t *testing.T) {
			got, ok := s.MatchGlobTree(c.pattern, sensProj, sensHome)
			if ok != c.want {
				t.Fatalf("MatchGlobTree(%q) = %q, %v; want %v", c.pattern, got, ok, c.want)
			}
		})
	}
}

func TestCompileSensitiveErrors(t *testing.T) {
	for _, g := range []string{"", "  ", "[abc", `a\`, "~bob/.ssh", "..", "../x", "a\x00b"} {
		t.Run(fmt.Sprintf("%q", g), func(t *testing.T) {
			if _, err := CompileSensitive([]string{"/ok", g}); err == nil || !strings.HasPrefix(err.Error(), "[1]") {
				t.Fatalf("got %v, want an error naming index 1", err)
			}
		})
	}
	t.Run("too long", func(t *testing.T) {
		if _, err := CompileSensitive([]string{"/" + strings.Repeat("a", maxGlobStates)}); err == nil {
			t.Fatal("a pattern of more states than a state set holds must be refused")
		}
	})
}

func TestSensitiveConfig(t *testing.T) {
	t.Run("default list", func(t *testing.T) {
		e, err := NewEngine(Config{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := e.Sensitive().Match("~/.ssh/id_rsa", "/tmp", ""); !ok {
			t.Fatal("default list must hold ~/.ssh")
		}
	})
	t.Run("extra adds", func(t *testing.T) {
		e, err := NewEngine(Config{ExtraSensitivePaths: []string{"/srv/vault/**/*.json"}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if g, ok := e.Sensitive().Match("/srv/vault/a/b/c.json", "/tmp", ""); !ok || g != "/srv/vault/**/*.json" {
			t.Fatalf("got %q %v", g, ok)
		}
		if _, ok := e.Sensitive().Match("~/.ssh/id_rsa", "/tmp", ""); !ok {
			t.Fatal("extra must keep the default list")
		}
		if _, ok := e.Sensitive().Match("/srv/vault.json", "/tmp", ""); ok {
			t.Fatal("/srv/vault/**/*.json must not match /srv/vault.json")
		}
	})
	t.Run("sensitive_paths replaces", func(t *testing.T) {
		e, err := NewEngine(Config{SensitivePaths: []string{"~/.aws"}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := e.Sensitive().Match("~/.ssh/id_rsa", "/tmp", ""); ok {
			t.Fatal("a replaced list must not hold ~/.ssh")
		}
		if _, ok := e.Sensitive().Match("/home/x/.aws/config", "/tmp", ""); !ok {
			t.Fatal("~/.aws")
		}
	})
	t.Run("empty list turns it off", func(t *testing.T) {
		e, err := NewEngine(Config{SensitivePaths: []string{}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if g, ok := e.Sensitive().Match("~/.ssh/id_rsa", "/tmp", ""); ok {
			t.Fatalf("matched %q", g)
		}
	})
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{SensitivePaths: []string{"/ok", "[x"}}, `policy.sensitive_paths[1] "[x"`},
		{Config{ExtraSensitivePaths: []string{"~bob"}}, `policy.extra_sensitive_paths[0] "~bob"`},
	} {
		t.Run("error "+c.want, func(t *testing.T) {
			c.cfg.Defaults()
			err := c.cfg.Validate()
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("got %v, want %s…", err, c.want)
			}
		})
	}
}

func TestSecretLookingName(t *testing.T) {
	for name, want := range map[string]bool{
		"GITHUB_TOKEN": true, "AWS_SECRET_ACCESS_KEY": true, "AWS_ACCESS_KEY_ID": true, "API_KEY": true,
		"OPENAI_API_KEY": true, "PGPASSWORD": true, "MYSQL_PWD": true, "DB_PASS": true, "NPM_AUTH": true,
		"GOOGLE_APPLICATION_CREDENTIALS": true, "SSH_PRIVATE": true, "SESSION_COOKIE": true, "DATABASE_URL": true,
		"gh_token": true, "Stripe_Secret": true, "VAULT_TOKEN": true, "SENTRY_DSN": true, "APIKEY": true,
		"HOME": false, "PATH": false, "PWD": false, "OLDPWD": false, "KEYBOARD": false, "MONKEY": false,
		"GIT_AUTHOR_NAME": false, "USER": false, "LANG": false, "TERM": false, "PASSAGE": false, "SHELL": false,
	} {
		if got := SecretLookingName(name); got != want {
			t.Errorf("SecretLookingName(%q) = %v, want %v", name, got, want)
		}
	}
}

// bruteMatch is Match without the key index: every glob is tried.
func bruteMatch(s *Sensitive, p, cwd, home string) bool {
	c := s.scope(cwd, home)
	full := c.resolve(p)
	for i, g := range s.globs {
		for _, n := range g.nfas {
			if n.matches(full) {
				return true
			}
		}
		if g.tilde && c.homeNFAs != nil && c.homeNFAs[i] != nil && c.homeNFAs[i].matches(full) {
			return true
		}
	}
	return false
}

// The key index must never hide a match: random paths built from the globs' own words, tried
// against every glob.
func TestSensitiveIndexIsSound(t *testing.T) {
	s := defaultSensitive(t)
	words := []string{"", ".", "..", "~", "$HOME", "home", "u", "Users", "root", "etc", "proc", "self", "1", "dev", "var",
		"run", "secrets", ".ssh", ".SSH", "id_rsa", "ID_RSA.pub", "x.pem", ".env", ".env.local", ".git", "hooks", "config",
		".aws", "credentials", "shadow", "shadow-", "sudoers.d", "cron.d", "sda", "src", "main.go", "environ", "mem", "task",
		".config", "gcloud", "systemd", "spool", "cron", "Library", "LaunchAgents", "a.tokens", ".claude", "settings.json",
		"lib", "usr", "ssh", "ssh_host_rsa_key", `C:`, "jenkins"}
	cwds := []string{"", sensProj, sensHome, "/", "/home/u/.ssh", "/etc", "/home/u/proj/.git", "/var/lib/jenkins"}
	homes := []string{"", sensHome, "/var/lib/jenkins", "/root"}
	r := rand.New(rand.NewSource(1))
	for n := 0; n < 20000; n++ {
		var b strings.Builder
		if r.Intn(2) == 0 {
			b.WriteByte('/')
		}
		k := 1 + r.Intn(5)
		for i := 0; i < k; i++ {
			if i > 0 {
				b.WriteString([]string{"/", "/", "/", `\`, "//"}[r.Intn(5)])
			}
			b.WriteString(words[r.Intn(len(words))])
		}
		p, cwd, home := b.String(), cwds[r.Intn(len(cwds))], homes[r.Intn(len(homes))]
		if p == "" {
			continue
		}
		_, got := s.Match(p, cwd, home)
		if want := bruteMatch(s, p, cwd, home); got != want {
			t.Fatalf("Match(%q, cwd %q, home %q) = %v, brute force says %v", p, cwd, home, got, want)
		}
	}
}

// A literal pattern means the same as the path; MatchGlob and Match must agree on it.
func TestSensitiveGlobAgreesWithMatch(t *testing.T) {
	s := defaultSensitive(t)
	for _, p := range []string{"~/.ssh/id_rsa", "/etc/shadow", "src/main.go", ".env", "/proc/1/environ", "/tmp/x",
		"../../etc/sudoers", "x.pem", "/home/bob/.aws/credentials", "README.md", "/dev/sda1", "hooks/x"} {
		_, m := s.Match(p, sensProj, sensHome)
		_, g := s.MatchGlob(p, sensProj, sensHome)
		if m != g {
			t.Errorf("%q: Match %v, MatchGlob %v", p, m, g)
		}
	}
}

// The automaton against a reference: every string over a small alphabet up to length 5,
// matched by compileGlob's automaton and by a direct recursive matcher.
func TestGlobNFAAgainstReference(t *testing.T) {
	alphabet := []byte{'a', '.', '/'}
	var all []string
	var gen func(prefix string, n int)
	gen = func(prefix string, n int) {
		all = append(all, prefix)
		if n == 0 {
			return
		}
		for _, c := range alphabet {
			gen(prefix+string(c), n-1)
		}
	}
	gen("", 5)
	patterns := []string{"a", "*", "a*", "*a", "a/*", "**", "a/**", "**/a", "a/**/a", "?", "a?a", "*/*", "[a.]", "[!a]*",
		".*", "*.a", "/**/a", "a/*/a", `\*`, "a**a"}
	for _, p := range patterns {
		for _, mode := range []globMode{globConfig, globShell} {
			n, err := compileGlob(p, mode, false, maxWordGlobStates)
			if err != nil {
				t.Fatalf("%q: %v", p, err)
			}
			for _, s := range all {
				want := refGlob(p, s, mode, true)
				if got := n.matches(s); got != want {
					t.Fatalf("mode %d: %q against %q: automaton %v, reference %v", mode, p, s, got, want)
				}
			}
		}
	}
}

// refGlob matches s against p directly: "*" within an element, "**" across ("**/" may match
// nothing), and in shell mode no wildcard matches a leading ".".
func refGlob(p, s string, mode globMode, atElem bool) bool {
	if p == "" {
		return s == ""
	}
	if mode == globShell && atElem && s != "" && s[0] == '.' && p[0] != '.' && !strings.HasPrefix(p, `\.`) && !strings.HasPrefix(p, "**") {
		return false // only a literal "." starting the element matches a leading "."
	}
	switch p[0] {
	case '*':
		if len(p) > 1 && p[1] == '*' {
			rest := strings.TrimLeft(p, "*")
			if atElem && strings.HasPrefix(rest, "/") && refGlob(rest[1:], s, mode, true) {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if refGlob(rest, s[i:], mode, i > 0 && s[i-1] == '/' || i == 0 && atElem) {
					return true
				}
			}
			return false
		}
		for i := 0; i <= len(s); i++ {
			if i > 0 && s[i-1] == '/' {
				break
			}
			if refGlob(p[1:], s[i:], mode, false) {
				return true
			}
		}
		return false
	case '?':
		if s == "" || s[0] == '/' {
			return false
		}
		return refGlob(p[1:], s[1:], mode, false)
	case '[':
		end := strings.IndexByte(p[2:], ']') + 2
		class := p[1:end]
		if s == "" || s[0] == '/' {
			return false
		}
		neg := strings.HasPrefix(class, "!")
		in := strings.IndexByte(strings.TrimPrefix(class, "!"), s[0]) >= 0
		if in == neg {
			return false
		}
		return refGlob(p[end+1:], s[1:], mode, false)
	case '\\':
		return s != "" && s[0] == p[1] && refGlob(p[2:], s[1:], mode, p[1] == '/')
	}
	return s != "" && s[0] == p[0] && refGlob(p[1:], s[1:], mode, p[0] == '/')
}

// intersects against brute force: when some short string matches both globs, intersects must
// say so; when it says so, a witness must exist (found by the automata within the bound, or
// the pair is one where only longer strings match both).
func TestGlobIntersectsAgainstBruteForce(t *testing.T) {
	alphabet := []byte{'a', 'A', 'b', '.', '/'}
	var all []string
	var gen func(prefix string, n int)
	gen = func(prefix string, n int) {
		all = append(all, prefix)
		if n == 0 {
			return
		}
		for _, c := range alphabet {
			gen(prefix+string(c), n-1)
		}
	}
	gen("", 6)
	pats := []string{"a", "b", "*", "a*", "*b", "?", "**", "/**/a", "a/**", ".*", "*.b", "a/*", "[ab]", "[!a]", "a?b", "/a/b", "**/.b", "*/*"}
	for _, x := range pats {
		for _, y := range pats {
			a, _ := compileGlob(x, globShell, false, maxWordGlobStates)
			b, _ := compileGlob(y, globConfig, true, maxGlobStates)
			witness := false
			for _, s := range all {
				if a.matches(s) && b.matches(s) {
					witness = true
					break
				}
			}
			got := intersects(a, b, false, false)
			if got && !witness {
				// Only a longer string may match both: look further for this pair.
				for n := 7; n <= 8 && !witness; n++ {
					witness = anyString(alphabet, n, func(s string) bool { return a.matches(s) && b.matches(s) })
				}
			}
			if got != witness {
				t.Errorf("intersects(%q, %q) = %v, brute force %v", x, y, got, witness)
			}
		}
	}
}

// anyString reports whether f holds for some string of length n over alphabet.
func anyString(alphabet []byte, n int, f func(string) bool) bool {
	buf := make([]byte, n)
	var rec func(i int) bool
	rec = func(i int) bool {
		if i == n {
			return f(string(buf))
		}
		for _, c := range alphabet {
			buf[i] = c
			if rec(i + 1) {
				return true
			}
		}
		return false
	}
	return rec(0)
}

func BenchmarkSensitiveMatch(b *testing.B) {
	s := defaultSensitive(b)
	c := s.scope(sensProj, sensHome)
	words := []string{"-la", "/tmp", "src/main.go", "status", "README.md"}
	b.ReportAllocs()
	for b.Loop() {
		for _, w := range words {
			if _, ok := c.match(w); ok {
				b.Fatal(w)
			}
		}
	}
}

func BenchmarkCompileSensitive(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := CompileSensitive(DefaultSensitivePaths); err != nil {
			b.Fatal(err)
		}
	}
}

// The shell reading of globs against bash itself, in a sandbox: for each pattern, the names
// bash expands it to in a directory holding them must be exactly the names the automaton
// matches.
func TestGlobShellModeAgainstBash(t *testing.T) {
	if err := sandbox.Available(); err != nil {
		t.Skip(err)
	}
	names := []string{".env", ".env.local", ".bashrc", "x.pem", "id_rsa", "a.go", "b.md", "env", "Xenv", "-rf", "a.b.c"}
	patterns := []string{"*", ".*", "*.go", "?env", ".e*", "[.]*", "[!x]*", "*.p*", "@(.env|x)", ".[a-z]*", "*env*",
		"i?_*", "[[:alpha:]]*", "[[:punct:]]*", "[[:upper:]]*", "[[:digit:][:lower:]]*", "[![:alnum:]]*", "*(.)env",
		"+([a-z.])", "!(a.go)", "?", "*.*", "\\.env", "[-]*", "[[:space:]x]*"}
	dir := t.TempDir()
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var script strings.Builder
	script.WriteString("shopt -s nullglob extglob\n")
	for i, p := range patterns {
		fmt.Fprintf(&script, "for f in %s; do printf '%d\\t%%s\\n' \"$f\"; done\n", p, i)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := sandbox.Run(ctx, dir, "/bin/bash", "--norc", "-c", script.String())
	if err != nil || res.Code != 0 {
		t.Fatalf("bash: %v %+v", err, res)
	}
	got := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(res.Stdout), "\n") {
		got[line] = true
	}
	for i, p := range patterns {
		n, err := compileGlob(sandbox.Dir+"/"+p, globShell, false, maxWordGlobStates)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range names {
			bash := got[fmt.Sprintf("%d\t%s", i, name)]
			ours := n.matches(sandbox.Dir + "/" + name)
			// Extglob groups are read as "anything within the element": more, never less.
			if strings.Contains(p, "(") && ours && !bash {
				continue
			}
			if ours != bash {
				t.Errorf("%q against %q: automaton %v, bash %v", p, name, ours, bash)
			}
		}
	}
}

// FuzzSensitive: the key index never hides a match, and no path, glob or directory makes a
// matcher panic.
func FuzzSensitive(f *testing.F) {
	for _, seed := range [][3]string{
		{"~/.ssh/id_rsa", sensProj, sensHome}, {"../../etc/shadow", sensProj, ""}, {"C:\\Users\\x\\.aws\\c", "", ""},
		{"$HOME/.netrc", "/", "/root"}, {"~bob/.kube/config", "rel", "/var/lib/x"}, {"/proc/1/environ", "", ""},
		{"~/.ss?/id_*", sensProj, sensHome}, {"@(a|.env)", sensProj, ""}, {"[[:alpha:]]*", "/", ""}, {"x/**/y", "", ""},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	s := defaultSensitive(f)
	f.Fuzz(func(t *testing.T, p, cwd, home string) {
		if len(p) > 300 || len(cwd) > 300 || len(home) > 300 {
			return
		}
		_, got := s.Match(p, cwd, home)
		if want := bruteMatch(s, p, cwd, home); got != want {
			t.Fatalf("Match(%q, %q, %q) = %v, brute force %v", p, cwd, home, got, want)
		}
		s.MatchGlob(p, cwd, home)
		s.MatchTree(p, cwd, home)
		s.MatchGlobTree(p, cwd, home)
	})
}
