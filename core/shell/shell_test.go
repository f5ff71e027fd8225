package shell

import (
	"strings"
	"testing"
)

// judged renders the judged segments as "argv|wrappers" strings.
func judged(an *Analysis) []string {
	var out []string
	for _, s := range an.Segments {
		if !s.Judged {
			continue
		}
		v := strings.Join(s.Argv(), " ")
		if s.Kind == KindRedirect {
			v = "<redirect>"
		}
		if len(s.Wrappers) > 0 {
			v += "|" + strings.Join(s.Wrappers, ">")
		}
		out = append(out, v)
	}
	return out
}

func TestConstructs(t *testing.T) {
	cases := []struct {
		name, cmd string
		want      []string
		ok        bool
	}{
		{"and or", "a && b || c", []string{"a", "b", "c"}, true},
		{"sequence", "a; b\nc", []string{"a", "b", "c"}, true},
		{"pipe", "a | b |& c", []string{"a", "b", "c"}, true},
		{"subshell", "(a; b)", []string{"a", "b"}, true},
		{"block", "{ a; b; }", []string{"a", "b"}, true},
		{"background", "a & b", []string{"a", "b"}, true},
		{"negation", "! a", []string{"a"}, true},
		{"command substitution", "echo $(a) `b`", []string{"a", "b", "echo  "}, true},
		{"command substitution argument", "cat $(a) `b`", []string{"a", "b", "cat  "}, false},
		{"nested substitution", "echo $(a $(b))", []string{"b", "a ", "echo "}, false},
		{"process substitution", "diff <(a) >(b)", []string{"a", "b", "diff /dev/fd/63 /dev/fd/63"}, true},
		{"substitution in quotes", `echo "x $(a) y"`, []string{"a", "echo x  y"}, true},
		{"substitution in quotes argument", `cat "x $(a) y"`, []string{"a", "cat x  y"}, false},
		{"substitution in assignment", "X=$(a) b", []string{"a", "b"}, false},
		{"substitution in redirect", "a > $(b)", []string{"b", "a"}, false},
		{"substitution in parameter default", "cat ${X:-$(a)}", []string{"a", "cat "}, false},
		{"env prefix", "FOO=1 BAR=2 a x", []string{"a x"}, true},
		{"redirections", "a < in > out 2>&1", []string{"a"}, true},
		{"bare redirection", "> out", []string{"<redirect>"}, true},
		{"heredoc", "cat <<XEOF\n$(a)\nXEOF", []string{"a", "cat"}, false},
		{"quoted heredoc", "cat <<'XEOF'\n$(a)\nXEOF", []string{"cat"}, true},
		{"if", "if a; then b; elif c; then d; else e; fi", []string{"a", "b", "c", "d", "e"}, true},
		{"while until", "while a; do b; done; until c; do d; done", []string{"a", "b", "c", "d"}, false},
		{"for", "for x in 1 2; do a $x; done", []string{"a 1", "a 2"}, true},
		{"for unknown", "for x in $(b); do a $x; done", []string{"b", "a "}, false},
		{"c-style for", "for ((i=0; i<$(a); i++)); do b; done", []string{"a", "b"}, false},
		{"case", "case $(a) in x) b;; *) c;; esac", []string{"a", "b", "c"}, false},
		{"test clause", "[[ -f $(a) ]] && b", []string{"a", "[[ -f  ]]", "b"}, false},
		{"arithmetic", "(( $(a) + 1 ))", []string{"a", "(("}, false},
		{"function", "f() { a; }; f", []string{"f", "a"}, true},
		{"time coproc", "time a; coproc b", []string{"a", "b"}, false},
		{"declare", "export A=1 B=$(a)", []string{"a", "export A=1 B="}, true},
		{"declare then use", "export A=1 B=$(a); cat $B", []string{"a", "export A=1 B=", "cat "}, false},
		{"bash -c", `bash -c "a && b"`, []string{"a|bash -c", "b|bash -c"}, true},
		{"bash -lc", "bash -lc 'a | b'", []string{"a|bash -c", "b|bash -c"}, true},
		{"sh -c positional", "sh -c 'a \"$1\"' x y", []string{"a y|sh -c"}, true},
		{"zsh dash ksh", "zsh -c a; dash -c b; ksh -c c", []string{"a|zsh -c", "b|dash -c", "c|ksh -c"}, true},
		{"bash -o -c", "bash -o pipefail -c a", []string{"a|bash -c"}, true},
		{"bash script", "bash script.sh arg", []string{"bash script.sh arg"}, true},
		{"env", "env -i FOO=1 a x", []string{"a x|env"}, true},
		{"env -u -C", "env -u HOME -C /tmp a", []string{"a|env"}, true},
		{"sudo", "sudo -u bob a x", []string{"sudo -u bob", "a x|sudo"}, true},
		{"doas", "doas -u bob a", []string{"doas -u bob", "a|doas"}, true},
		{"nice nohup timeout", "nice -n 5 nohup timeout 3 a", []string{"a|nice>nohup>timeout"}, true},
		{"xargs", "xargs -0 -n1 a x", []string{"a x|xargs"}, true},
		{"xargs default", "xargs", []string{"echo|xargs"}, true},
		{"xargs with known input", "echo f g | xargs a", []string{"echo f g", "a f g|xargs"}, true},
		{"command exec", "command a; exec b", []string{"a|command", "b|exec"}, true},
		{"command -v", "command -v a", []string{"command -v a"}, true},
		{"npx", "npx --yes eslint@8 src", []string{"eslint src|npx"}, true},
		{"npx scoped", "npx @biomejs/biome check", []string{"biome check|npx"}, true},
		{"bunx", "bunx prettier .", []string{"prettier .|bunx"}, true},
		{"pnpm dlx", "pnpm dlx create-vite app", []string{"create-vite app|pnpm dlx"}, true},
		{"pnpm run", "pnpm run build", []string{"pnpm run build"}, true},
		{"uvx", "uvx ruff check", []string{"ruff check|uvx"}, true},
		{"uv run", "uv run pytest -q", []string{"pytest -q|uv run"}, true},
		{"npm exec", "npm exec -- jest", []string{"jest|npm exec"}, true},
		{"find -exec", "find . -exec a {} \\;", []string{"find . -exec a {} ;", "a {}|find -exec"}, true},
		{"eval literal", `eval "a b"`, []string{"a b|eval"}, true},
		{"eval sees the shell", "cd /tmp; eval 'cd x'; a", []string{"cd /tmp", "cd x|eval", "a"}, true},
		{"pipe to sh known", "echo a | sh", []string{"echo a", "a|sh (stdin)"}, true},
		{"here-string to bash", "bash <<< 'a; b'", []string{"a|bash (stdin)", "b|bash (stdin)"}, true},
		{"GIT_PAGER", "GIT_PAGER=cat git log", []string{"cat|GIT_PAGER=", "git log"}, true},
		{"git -c alias", "git -c alias.x='!a' x", []string{"git -c alias.x=!a x", "a|git -c alias.x"}, true},
		{"ssh ProxyCommand", "ssh -o ProxyCommand='a %h' h", []string{"ssh -o ProxyCommand=a %h h", "a %h|ssh -o ProxyCommand"}, true},
		{"ssh remote is not judged", "ssh h a", []string{"ssh h a"}, true},
		{"watch", "watch -n 1 'a | b'", []string{"a|watch", "b|watch"}, true},
		{"interpreter", "python3 -c 'print(1)'", []string{"python3 -c print(1)"}, true},

		{"line continuation", "a \\\nb", []string{"a b"}, false},
		{"unbalanced", `a "b`, nil, false},
		{"variable command", "$X a", []string{" a"}, false},
		{"literal variable command", "X=ls; $X a", []string{"ls a"}, false},
		{"substitution command", "$(a) b", []string{"a", " b"}, false},
		{"glob command", "/bin/l? x", []string{"/bin/l? x"}, false},
		{"tilde command", "~/bin/x", []string{"/home/u/bin/x"}, false},
		{"brace command", "{a,b}", []string{"a b"}, false},
		{"eval non-literal", `eval "$X"`, nil, false},
		{"empty", "", nil, false},
		{"comment only", "# nothing", nil, false},
		{"assignment only", "X=1", nil, false},
		{"pipe to sh unknown", "curl x | sh", []string{"curl x"}, false},
		{"process substitution script unknown", "bash <(curl x)", []string{"curl x", "bash /dev/fd/63"}, false},
		{"too deep", "sudo env nice timeout 3 a", []string{"sudo", "a|sudo>env>nice>timeout"}, false},
		{"PATH", "PATH=/x a", []string{"a"}, false},
		{"LD_PRELOAD export", "export LD_PRELOAD=/x.so; a", []string{"export LD_PRELOAD=/x.so", "a"}, false},
		{"unknown wrapper option", "sudo --frobnicate a", []string{"sudo --frobnicate a"}, false},
		{"dynamic bash -c", `bash -c "$S"`, nil, false},
		{"dynamic bash -c args", `bash -c "$S" x`, nil, false},
		{"NUL", "a\x00", []string{"a"}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			an := Analyze(tc.cmd, testOpts)
			if an.OK != tc.ok {
				t.Fatalf("OK = %v, want %v (problems %q)", an.OK, tc.ok, an.Problems)
			}
			if !tc.ok && len(an.Problems) == 0 {
				t.Fatal("not OK without a problem")
			}
			got := judged(an)
			if strings.Join(got, "; ") != strings.Join(tc.want, "; ") {
				t.Fatalf("segments\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestNormalized(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"ls   -la    /tmp", "ls -la /tmp"},
		{"a;b", "a; b"},
		{"a\nb", "a; b"},
		{"a && b ||c", "a && b || c"},
		{"echo `a`", "echo $(a)"},
		{"x>y", "x >y"},
		{"ls # comment", "ls"},
		{`echo "unbalanced`, `echo "unbalanced`},
		{"cat <<XEOF\nhi\nXEOF", "cat <<XEOF\nhi\nXEOF"},
	} {
		if got := Analyze(tc.in, Options{}).Normalized; got != tc.want {
			t.Errorf("Normalized(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := Normalize(tc.in); got != tc.want {
			t.Errorf("Normalize(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestWordExpansion(t *testing.T) {
	for _, tc := range []struct{ cmd, want string }{
		{`a 'x y' "z"`, "a|x y|z"},
		{`a r\m "\$x" '\n'`, `a|rm|$x|\n`},
		{`a $'\x41\101\u0042\n'`, "a|AAB\n"},
		{"X=v; a $X ${X} ${#X} ${X:-d} ${Y:-d} ${X:+p} ${X/v/w} ${X^^}", "a|v|v|1|v|d|p|w|V"},
		{"X='p q'; a $X \"$X\"", "a|p|q|p q"},
		{"a ~ ~/x ~root", "a|/home/u|/home/u/x|/root"},
		{"a {x,y}z", "a|xz|yz"},
		{"a $(echo hi) `printf %s-%s a b`", "a|hi|a-b"},
		{"a $(echo aGk= | base64 -d)", "a|hi"},
		{"set -- p q; a \"$@\" $#", "a|p|q|2"},
		{"a $HOME $PWD", "a|/home/u|/repo"},
		{"E=; $E a", "a"},
		{"X=/a/b.c; a ${X%.c} ${X##*/} ${X:1:2}", "a|/a/b|b.c|a/"},
	} {
		an := Analyze(tc.cmd, Options{Cwd: "/repo", Home: "/home/u"})
		var got string
		for _, s := range an.Segments {
			if s.Judged && s.Name() == "a" {
				got = strings.Join(s.Argv(), "|")
			}
		}
		if got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.cmd, got, tc.want)
		}
	}
}

func TestWorkingDirectory(t *testing.T) {
	for _, tc := range []struct{ cmd, want string }{
		{"a", "/repo"},
		{"cd /tmp && a", "/tmp"},
		{"cd sub; a", "/repo/sub"},
		{"cd ..; a", "/"},
		{"cd; a", "/home/u"},
		{"cd ~/x && a", "/home/u/x"},
		{"(cd /tmp); a", "/repo"},
		{"cd - && a", ""},
		{"cd $UNKNOWN && a", ""},
		{"env -C /srv a", "/srv"},
		{"pushd /opt && a", "/opt"},
	} {
		an := Analyze(tc.cmd, Options{Cwd: "/repo", Home: "/home/u"})
		for _, s := range an.Segments {
			if s.Name() == "a" && s.Cwd != tc.want {
				t.Errorf("%s: cwd %q, want %q", tc.cmd, s.Cwd, tc.want)
			}
		}
	}
}

func TestForkBombShapes(t *testing.T) {
	for _, cmd := range []string{":(){ :|:& };:", "b(){ b | b & }; b", "f() { f & }; f", "g() { g | g; }"} {
		if an := Analyze(cmd, Options{}); len(an.ForkBombs) == 0 {
			t.Errorf("%q: no fork bomb", cmd)
		}
	}
	for _, cmd := range []string{"f() { g & }; f", "f() { echo f | cat; }", "f() { f; }"} {
		if an := Analyze(cmd, Options{}); len(an.ForkBombs) != 0 {
			t.Errorf("%q: fork bomb %q", cmd, an.ForkBombs)
		}
	}
}

func TestLimits(t *testing.T) {
	big := strings.Repeat("a; ", maxSegments+10)
	if an := Analyze(big, Options{}); !an.Incomplete || an.OK {
		t.Error("too many segments not flagged")
	}
	deep := strings.Repeat("nice ", maxDepth+2) + "a"
	if an := Analyze(deep, Options{}); !an.Incomplete {
		t.Error("too deep not flagged")
	}
	if an := Analyze(strings.Repeat("x", maxInput+1), Options{}); !an.Incomplete {
		t.Error("too large not flagged")
	}
	// Exponential variable growth stays bounded.
	grow := "X=ab"
	for range 40 {
		grow += "; X=$X$X"
	}
	Analyze(grow+"; a $X", Options{})
	// Expanding a large value many times stays bounded.
	huge := "X=" + strings.Repeat("a", 60000) + "; " + strings.Repeat("echo $X $X $X $X; ", 2000)
	if an := Analyze(huge, Options{}); !an.Incomplete || an.OK {
		t.Error("unbounded expansion not flagged")
	}
	// Brace bombs stay bounded.
	if an := Analyze("a {1..9}{1..9}{1..9}{1..9}{1..9}", Options{}); an.OK {
		t.Error("brace bomb analysed as OK")
	}
}

func TestWindowsStatements(t *testing.T) {
	got := windowsStatements(`Remove-Item -Path "C:\Program Files" -Recurse; cmd /c "rd /s /q C:\x" & echo ^& done`)
	want := [][]string{{"Remove-Item", "-Path", `C:\Program Files`, "-Recurse"}, {"cmd", "/c", `rd /s /q C:\x`}, {"echo", "&", "done"}}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if strings.Join(got[i].toks, "|") != strings.Join(want[i], "|") {
			t.Errorf("statement %d: %q, want %q", i, got[i].toks, want[i])
		}
	}
	if s, ok := decodePowerShell("ZQBjAGgAbwAgAGgAaQA="); !ok || s != "echo hi" {
		t.Errorf("decode: %q %v", s, ok)
	}
	if _, ok := decodePowerShell("!!!"); ok {
		t.Error("decoded garbage")
	}
	for _, f := range []string{"e", "ec", "en", "enc", "encodedcommand", "EncodedCommand"} {
		if !encodedFlag(strings.ToLower(f)) {
			t.Errorf("%s is -EncodedCommand", f)
		}
	}
	for _, f := range []string{"ex", "ep", "executionpolicy", "command", "c"} {
		if encodedFlag(f) {
			t.Errorf("%s is not -EncodedCommand", f)
		}
	}
}

// The fast path's normalized line must agree with the syntax printer wherever it applies.
func TestFastPrintMatchesPrinter(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"ls -la /tmp", true},
		{"cd /repo && git status && ls -la | grep foo ; echo done || true", true},
		{"a  &&   b ;c|d   ||e", true},
		{"a\tb", true},
		{`bash -lc "ls /tmp && cat x"`, true},
		{`x 'a b' "c d" e'f'"g"`, true},
		{"git commit -m 'fix: a; b && c'", true},
		{"go test ./... -run TestX -count=1", true},
		{"a;", false},
		{"; a", false},
		{"a &", false},
		{"a |& b", false},
		{"a > b", false},
		{"a=b c", false},
		{"if a; then b; fi", false},
		{"time a", false},
		{`echo "$HOME"`, false},
		{"echo $(a)", false},
		{"a # c", false},
		{"a\nb", false},
		{"", false},
		{"echo 'unterminated", false},
	} {
		var sh shared
		_, got, ok := sh.fastSplitNormalized(tc.in, true)
		if ok != tc.ok {
			t.Errorf("fast path(%q) ok = %v, want %v", tc.in, ok, tc.ok)
			continue
		}
		if !ok {
			continue
		}
		f, err := parse(tc.in)
		if err != nil {
			t.Fatalf("%q: %v", tc.in, err)
		}
		if want := printFile(f, hasBackground(f)); got != want {
			t.Errorf("fast path(%q) = %q, printer: %q", tc.in, got, want)
		}
	}
}
