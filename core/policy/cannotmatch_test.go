package policy

import (
	"strings"
	"testing"
)

// cannotMatchLists are the sensitive lists the shortcut is held to: the defaults, a list with
// keyless globs (whose candidates every path has), and a list of prefix and suffix keys only.
var cannotMatchLists = [][]string{
	DefaultSensitivePaths,
	{"*", "/srv/**"},
	{"/data/secret*", "*.key", "tok?n", "/opt/[ab]c/x"},
}

// cannotMatchWords are words of commands and the names the lists key on, in several cases and
// shapes: plain words, options, dotfiles, names that hit prefix or suffix keys, relative paths,
// homes, variables, drives, separators and long names.
var cannotMatchWords = []string{
	"", ".", "..", "ls", "-la", "-l", "status", "foo", "main.go", "README.md", "a", "x", "--", "-",
	".env", ".ENV", ".env.local", "env", ".ssh", ".SSH", "ssh", "id_rsa", "ID_RSA", "id_ed25519.pub", "x.pem", "X.PEM",
	".pem", "pem", "credentials", ".aws", ".netrc", ".git", "hooks", "config", "shadow", "sudoers", "sudoers.d",
	"secret", "secrets", "secret1", "SECRET", "a.key", "key", ".key", "token", "tokan", "tok", "ab", "sda", "sd",
	"environ", "mem", "cron.d", "authorized_keys", "known_hosts", ".bash_history", ".zshrc", ".profile",
	"src/.env", "a/b", "~", "~/x", "~root", "$HOME", "$HOME/x", "${HOME}", "$X", "C:", `C:\x`, `a\b`, "a:b", "k=v",
	"--file=.env", "-f.env", "x,y", "@f", "<x>", "é", ".é", "\x00", strings.Repeat("a", 64), strings.Repeat("a", 65),
	strings.Repeat("a", 63) + ".pem", strings.Repeat("b", 70) + ".env",
}

var cannotMatchScopes = [][2]string{
	{"/repo", "/root"}, {"/repo", ""}, {"/", ""}, {"", ""}, {"", "/home/alice"}, {"relative", "/Users/bob"},
	{"/home/u/.ssh", "/home/u"}, {"/home/u/proj", "/home/u"}, {"/srv/app", "/opt/home"}, {"/srv/app/.git", ""},
	{"/data", "/root"}, {"/etc", "/root"}, {`C:\work`, `C:\Users\x`}, {"/opt/ac", ""}, {"/var/lib/jenkins", "/var/lib/jenkins"},
}

// TestCannotMatchAgreesWithTheMatcher: wherever the shortcut says a word cannot match, the
// full candidate collection and the brute force over every glob find nothing either — and
// it does take the shortcut for the plain words of everyday commands.
func TestCannotMatchAgreesWithTheMatcher(t *testing.T) {
	skipped := 0
	for li, list := range cannotMatchLists {
		s, err := CompileSensitive(list)
		if err != nil {
			t.Fatal(err)
		}
		for _, sc := range cannotMatchScopes {
			scope := s.scope(sc[0], sc[1])
			for _, w := range cannotMatchWords {
				for _, word := range []string{w, strings.ToUpper(w), "x" + w, w + "x"} {
					if !scope.cannotMatch(word) {
						continue
					}
					skipped++
					if g, ok := scope.matchCandidates(word); ok {
						t.Errorf("list %d, scope %q: %q skipped but matches %s", li, sc, word, g)
					}
					if bruteMatch(s, word, sc[0], sc[1]) {
						t.Errorf("list %d, scope %q: %q skipped but a glob matches it", li, sc, word)
					}
				}
			}
		}
	}
	if skipped < 200 {
		t.Fatalf("the shortcut was taken only %d times", skipped)
	}
	s := defaultSensitive(t)
	scope := s.scope("/repo", "/root")
	for _, w := range []string{"ls", "-la", "status", "foo", "main.go", "done", "true", "grep"} {
		if !scope.cannotMatch(w) {
			t.Errorf("%q in /repo is not decided by the shortcut", w)
		}
	}
	for _, w := range []string{".env", "id_rsa", "x.pem", "~/.ssh", "/etc/shadow", "$HOME", ".ssh"} {
		if scope.cannotMatch(w) {
			t.Errorf("%q decided by the shortcut", w)
		}
	}
	// Below a sensitive directory every relative word may be sensitive.
	if s.scope("/home/u/.ssh", "/home/u").cannotMatch("foo") {
		t.Error("foo in ~/.ssh decided by the shortcut")
	}
}

// FuzzCannotMatch: for any word, directory and home, a word the shortcut skips matches no
// glob of the default list or of a list with prefix, suffix and keyless globs.
func FuzzCannotMatch(f *testing.F) {
	for i, w := range cannotMatchWords {
		sc := cannotMatchScopes[i%len(cannotMatchScopes)]
		f.Add(w, sc[0], sc[1])
	}
	var lists []*Sensitive
	for _, l := range cannotMatchLists {
		s, err := CompileSensitive(l)
		if err != nil {
			f.Fatal(err)
		}
		lists = append(lists, s)
	}
	f.Fuzz(func(t *testing.T, w, cwd, home string) {
		if len(w) > 200 || len(cwd) > 300 || len(home) > 300 {
			return
		}
		for li, s := range lists {
			scope := s.scope(cwd, home)
			if !scope.cannotMatch(w) {
				continue
			}
			if g, ok := scope.matchCandidates(w); ok {
				t.Fatalf("list %d: %q in %q (home %q) skipped but matches %s", li, w, cwd, home, g)
			}
			if bruteMatch(s, w, cwd, home) {
				t.Fatalf("list %d: %q in %q (home %q) skipped but a glob matches it", li, w, cwd, home)
			}
		}
	})
}
