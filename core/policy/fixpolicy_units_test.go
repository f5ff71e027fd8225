package policy

import (
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestSelectors(t *testing.T) {
	s := defaultSensitive(t)
	for _, c := range []struct {
		dir, cwd string
		sel      selector
		want     string // the sensitive glob, "" when nothing sensitive is picked out
		bad      bool
	}{
		{".", sensProj, selector{kind: selName, pat: ".env"}, ".env", false},
		{".", sensProj, selector{kind: selName, pat: ".env*"}, ".env", false},
		{".", sensProj, selector{kind: selName, pat: ".En*"}, ".env", false},
		{".", sensProj, selector{kind: selName, pat: ".e*"}, "", false}, // .editorconfig too
		{".", sensProj, selector{kind: selName, pat: "*.pem"}, "*.pem", false},
		{".", sensProj, selector{kind: selName, pat: "*.{pem,key}"}, "*.pem", false},
		{".", sensProj, selector{kind: selName, pat: "[.]env"}, ".env", false},
		{".", sensProj, selector{kind: selName, pat: "?env"}, ".env", false},
		{".", sensProj, selector{kind: selName, pat: "id_rsa"}, "id_rsa*", false},
		{".", sensProj, selector{kind: selName, pat: "*"}, "", false},
		{".", sensProj, selector{kind: selName, pat: ".*"}, "", false},
		{".", sensProj, selector{kind: selName, pat: "*.json"}, "", false},
		{".", sensProj, selector{kind: selName, pat: "*.go"}, "", false},
		{".", sensProj, selector{kind: selName, pat: "config"}, "", false},
		{".", sensProj, selector{kind: selName, pat: "[.m]*"}, "", false}, // broad: main.go too
		{".", sensProj, selector{kind: selName, pat: ".bashrc"}, "", false},
		{"~", sensProj, selector{kind: selName, pat: ".bashrc"}, "~/.bashrc", false},
		{"/home/u", sensProj, selector{kind: selName, pat: ".ssh"}, "~/.ssh", false},
		{"/home", sensProj, selector{kind: selName, pat: ".netrc"}, "~/.netrc", false},
		{"/", sensProj, selector{kind: selName, pat: "shadow"}, "/etc/shadow*", false},
		{"/home/u", sensProj, selector{kind: selName, pat: "shadow"}, "", false},
		{"/home/u", sensProj, selector{kind: selName, pat: "*.json"}, "", false},
		{".", sensProj, selector{kind: selPath, pat: "./.git/config"}, ".git/config", false},
		{".", sensProj, selector{kind: selPath, pat: "*/.git/hooks/*"}, ".git/hooks", false},
		{".", sensProj, selector{kind: selPath, pat: "./node_modules"}, "", false},
		{"/home/u", sensProj, selector{kind: selPath, pat: "*/.ssh/*"}, "~/.ssh", false},
		{".", sensProj, selector{kind: selPath, pat: "*/.ssh/*"}, "", false},
		{".", sensProj, selector{kind: selRelPath, pat: "config/**/.env"}, ".env", false},
		{".", sensProj, selector{kind: selRelPath, pat: "src/**/*.go"}, "", false},
		{".", sensProj, selector{kind: selRegex, pat: `.*\.env`}, ".env", false},
		{".", sensProj, selector{kind: selRegex, pat: `.*\(\.pem\|\.key\)`}, "*.pem", false},
		{".", sensProj, selector{kind: selRegex, pat: `.*\.(pem|key)`, regexType: "posix-extended"}, "*.pem", false},
		{".", sensProj, selector{kind: selRegex, pat: `.*\.go`}, "", false},
		{".", sensProj, selector{kind: selRegex, pat: `.*`}, "", false},
		{".", sensProj, selector{kind: selRegex, pat: `\(a\)\1`}, "", true},
		{"/", sensProj, selector{kind: selRegex, pat: `/etc/sha.*`}, "/etc/shadow*", false},
	} {
		t.Run(c.dir+" "+c.sel.pat, func(t *testing.T) {
			got, ok, bad := s.scope(c.cwd, sensHome).selected(c.dir, c.sel)
			if bad != c.bad || ok != (c.want != "") || ok && got != c.want {
				t.Errorf("selected = %q, %v, bad %v; want %q, bad %v", got, ok, bad, c.want, c.bad)
			}
		})
	}
}

func TestInstantiateGlob(t *testing.T) {
	for _, c := range []struct{ glob, star, want string }{
		{".env.*", "x", ".env.x"},
		{"*.pem", "", ".pem"},
		{"id_rsa*", "", "id_rsa"},
		{"/proc/*/environ", "x", "/proc/x/environ"},
		{"/etc/shado[w]", "x", "/etc/shadow"},
		{"a[!b]c", "x", "axc"},
		{`a\*b`, "x", "a*b"},
		{"~/.SSH", "x", "~/.ssh"},
	} {
		if got := instantiateGlob(c.glob, c.star); got != c.want {
			t.Errorf("instantiateGlob(%q, %q) = %q, want %q", c.glob, c.star, got, c.want)
		}
	}
}

func TestExpandBraces(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"*.go", []string{"*.go"}},
		{"*.{pem,key}", []string{"*.pem", "*.key"}},
		{"{a,b}{c,d}", []string{"ac", "ad", "bc", "bd"}},
		{"x{a,{b,c}}", []string{"xa", "xb", "xc"}},
		{`\{a,b}`, []string{`\{a,b}`}},
		{"{a,b,c,d,e}{a,b,c,d,e}", []string{"*"}}, // over the bound: anything
	} {
		if got := expandBraces(c.in, 16); !slices.Equal(got, c.want) {
			t.Errorf("expandBraces(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestFindRegexToGo(t *testing.T) {
	for _, c := range []struct{ re, typ, path string }{
		{`.*\.env`, "", "./.env"},
		{`.*\(\.pem\|\.key\)`, "", "./x.key"},
		{`.*/id_rsa.?`, "", "./id_rsa2"},
		{`.*\.\(pem\)\{1\}`, "", "./x.pem"},
		{`.*\.(pem|key)`, "posix-extended", "./a.pem"},
		{`.*[[:alpha:]]\.env`, "", "./x.env"},
		{`.*/a(b)`, "", "./a(b)"},
		{`.*/a+b`, "posix-basic", "./a+b"},
	} {
		re, err := regexp.Compile("^(?:" + findRegexToGo(c.re, c.typ) + ")$")
		if err != nil {
			t.Errorf("%q: %v", c.re, err)
			continue
		}
		if !re.MatchString(c.path) {
			t.Errorf("find -regextype %q -regex %q (Go %q) does not match %q", c.typ, c.re, re, c.path)
		}
	}
}

func TestGitWords(t *testing.T) {
	for _, c := range []struct {
		in            string
		p             string
		top, excluded bool
	}{
		{"src", "src", false, false},
		{":/x", "x", true, false},
		{":(top)x", "x", true, false},
		{":(top,glob)**/*.pem", "**/*.pem", true, false},
		{":!vendor", "vendor", false, true},
		{":^vendor", "vendor", false, true},
		{":(exclude)x", "x", false, true},
		{":0:x", ":0:x", false, false},
	} {
		p, top, ex := gitPathspec(c.in)
		if p != c.p || top != c.top || ex != c.excluded {
			t.Errorf("gitPathspec(%q) = %q, %v, %v; want %q, %v, %v", c.in, p, top, ex, c.p, c.top, c.excluded)
		}
	}
	for _, c := range []struct {
		in, p string
		ok    bool
	}{
		{"HEAD:.env", ".env", true},
		{"main:config/.env", "config/.env", true},
		{":.netrc", ".netrc", true},
		{":2:.netrc", ".netrc", true},
		{"HEAD:./x", "./x", true},
		{"HEAD", "", false},
		{"https://github.com/x/y", "", false},
		{":/x", "", false},
	} {
		_, p, ok := gitRevPath(c.in, false)
		if p != c.p || ok != c.ok {
			t.Errorf("gitRevPath(%q) = %q, %v; want %q, %v", c.in, p, ok, c.p, c.ok)
		}
	}
	for _, c := range []struct {
		args   string
		writes bool
	}{
		{"user.name", false},
		{"--get user.name", false},
		{"--get-regexp ^user", false},
		{"--list", false},
		{"-l --show-origin", false},
		{"get user.name", false},
		{"list", false},
		{"--global user.name", false},
		{"user.name bot", true},
		{"--global user.name bot", true},
		{"--add core.pager less", true},
		{"--unset core.hooksPath", true},
		{"--unset-all x.y", true},
		{"--edit", true},
		{"-e", true},
		{"set core.pager less", true},
		{"unset x.y", true},
		{"--rename-section a b", true},
		{"--file x.cfg a.b", false},
		{"--file x.cfg a.b c", true},
		{"--type=bool core.bare", false},
	} {
		if got := gitConfigWrites(strings.Fields(c.args)); got != c.writes {
			t.Errorf("git config %s: writes %v, want %v", c.args, got, c.writes)
		}
	}
	for _, c := range []struct{ url, want string }{
		{"https://github.com/x/y.git", "y"},
		{"git@github.com:x/y", "y"},
		{"../repo/", "repo"},
		{"/", "."},
	} {
		if got := cloneDir(c.url); got != c.want {
			t.Errorf("cloneDir(%q) = %q, want %q", c.url, got, c.want)
		}
	}
}

func TestCodeReadings(t *testing.T) {
	has := func(list []string, s string) bool { return slices.Contains(list, s) }
	for _, c := range []struct{ lang, code, want string }{
		{"python", `open("/etc/shadow")`, "/etc/shadow"},
		{"python", `open("\x2fetc/shadow")`, "/etc/shadow"},
		{"python", `open("\057etc\057shadow")`, "/etc/shadow"},
		{"python", `open("/etc/sh\u0061dow")`, "/etc/shadow"},
		{"python", `open("/etc/sh\U00000061dow")`, "/etc/shadow"},
		{"javascript", `readFileSync("/etc/sh\u{61}dow")`, "/etc/shadow"},
		{"python", `exec("open(\"/etc/shadow\")")`, "/etc/shadow"},
		{"python", `exec("exec('open(\\'/etc/shadow\\')')")`, "/etc/shadow"},
		{"python", `open("/etc/" + "shadow")`, "/etc/shadow"},
		{"python", `open(os.path.join("/etc", "shadow"))`, "/etc/shadow"},
		{"python", `open("wodahs/cte/"[::-1])`, "/etc/shadow"},
		{"python", `open(base64.b64decode("L2V0Yy9zaGFkb3c=").decode())`, "/etc/shadow"},
		{"python", `open(bytes.fromhex("2f6574632f736861646f77").decode())`, "/etc/shadow"},
		{"python", `open(chr(47)+chr(101)+chr(116)+chr(99))`, "/etc"},
		{"javascript", `String.fromCharCode(47, 101, 116, 99)`, "/etc"},
	} {
		if got := codeReadings(c.lang, c.code); !has(got, c.want) {
			t.Errorf("codeReadings(%q) = %q, want %q among them", c.code, got, c.want)
		}
	}
}

func TestEnvHarmlessFor(t *testing.T) {
	for _, c := range []struct {
		name, tool string
		want       bool
	}{
		{"FOO", "ls", true},
		{"NODE_ENV", "cat", true},
		{"LC_ALL", "sort", true},
		{"TMPDIR", "sort", false},
		{"POSIXLY_CORRECT", "ls", false},
		{"RIPGREP_CONFIG_PATH", "rg", false},
		// A name that reconfigures one everyday tool is not proven harmless for another.
		{"RIPGREP_CONFIG_PATH", "ls", false},
		{"MY_TOOL_OPTIONS", "cat", false},
		{"BUILD_ID", "ls", true},
		{"GREP_OPTIONS", "grep", false},
		{"LD_PRELOAD", "ls", false},
		{"PATH", "which", false},
		{"HOME", "jq", false},
		{"FOO", "git", false},
		{"LANG", "git", true},
		{"*", "ls", false},
	} {
		if got := envHarmlessFor(c.name, c.tool); got != c.want {
			t.Errorf("envHarmlessFor(%q, %q) = %v, want %v", c.name, c.tool, got, c.want)
		}
	}
}
