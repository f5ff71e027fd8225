package shell

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/approvebot/approvebot/internal/sandbox"
)

// bashResult is what one script printed in the sandbox, and whether it ran the marker.
type bashResult struct {
	stdout string
	marked bool
}

// realBash runs each script in bash inside one sandbox, each in a directory of its own, with a
// stub command "mark" on the PATH that records that the script ran it, and returns what each
// printed. (One sandbox for all keeps the suite fast.)
func realBash(t *testing.T, scripts []string) []bashResult {
	t.Helper()
	if os.Getenv("APPROVEBOT_INTEGRATION") != "1" {
		t.Skip("runs real bash in a sandbox: set APPROVEBOT_INTEGRATION=1 to run it")
	}
	if err := sandbox.Available(); err != nil {
		t.Skip(err)
	}
	scratch := t.TempDir()
	bin := filepath.Join(scratch, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	stub := "#!/bin/sh\necho \"$MARKID\" >> " + sandbox.Dir + "/ran\n"
	if err := os.WriteFile(filepath.Join(bin, "mark"), []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	var driver strings.Builder
	driver.WriteString("PATH=" + sandbox.Dir + "/bin:$PATH\n")
	for i, sc := range scripts {
		name := "case" + strconv.Itoa(i)
		if err := os.WriteFile(filepath.Join(scratch, name+".sh"), []byte(sc+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&driver, "mkdir -p %[1]s/d%[2]d && cd %[1]s/d%[2]d && MARKID=%[2]d timeout 10 bash %[1]s/%[3]s.sh > %[1]s/%[3]s.out 2>/dev/null; cd %[1]s\n",
			sandbox.Dir, i, name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	if _, err := sandbox.Run(ctx, scratch, "/bin/bash", "-c", driver.String()); err != nil {
		t.Fatal(err)
	}
	out := make([]bashResult, len(scripts))
	for i := range scripts {
		b, err := os.ReadFile(filepath.Join(scratch, "case"+strconv.Itoa(i)+".out"))
		if err != nil {
			t.Fatal(err)
		}
		out[i].stdout = string(b)
	}
	ran, err := os.ReadFile(filepath.Join(scratch, "ran"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, id := range strings.Fields(string(ran)) {
		if i, err := strconv.Atoi(id); err == nil && i < len(out) {
			out[i].marked = true
		}
	}
	return out
}

// floorSees reports whether a segment runs mark: the floor judges the command text found.
func floorSees(an *Analysis) bool {
	for _, s := range an.Segments {
		if s.Base() == "mark" {
			return true
		}
	}
	return false
}

// Bash runs code where it looks like data. For each spelling, real bash (in a sandbox) runs
// the marker, the analysis is not-ok, and the floor sees the command.
func TestCodeInDataRealBash(t *testing.T) {
	cmds := []string{
		`x='a[$(mark 1)]'; [[ $x -eq 1 ]]`,
		`[[ 'a[$(mark 1)]' -lt 1 ]]`,
		`test -v 'a[$(mark 1)]'`,
		`[ -v 'a[$(mark 1)]' ]`,
		`w='a[$(mark 1)]'; [[ -v $w ]]`,
		`read 'a[$(mark 1)]' <<< x`,
		`printf -v 'a[$(mark 1)]' x`,
		`declare 'a[$(mark 1)]=1'`,
		`typeset 'a[$(mark 1)]=1'`,
		`f(){ local 'a[$(mark 1)]=1'; }; f`,
		`a=(1); unset 'a[$(mark 1)]'`,
		`declare -i i; i='a[$(mark 1)]'`,
		`x='$(mark 1)'; echo "${x@P}" >/dev/null`,
		`let 'a[$(mark 1)]'`,
		`let 'x=a[$(mark 1)]'`,
		`z='a[$(mark 1)]'; echo $(( z )) >/dev/null`,
		`z='a[$(mark 1)]'; (( z + 1 ))`,
		`y='a[$(mark 1)]'; z=y; echo $(( z )) >/dev/null`,
		`x='a[$(mark 1)]'; s=abc; echo "${s:x:1}" >/dev/null`,
		`echo "${a[$(mark 1)]}" >/dev/null`,
		`compgen -W '$(mark 1)' >/dev/null`,
		`for ((i=0; i<'a[$(mark 1)]'; i++)); do :; done`,
		`PS4='$(mark 1)'; set -x; :`,
	}
	results := realBash(t, cmds)
	for i, cmd := range cmds {
		t.Run(cmd, func(t *testing.T) {
			if !results[i].marked {
				t.Fatalf("bash did not run the marker: the spelling does not attack anything")
			}
			an := Analyze(cmd, Options{Cwd: sandbox.Dir, Home: sandbox.Dir})
			if an.OK {
				t.Errorf("analysis OK")
			}
			if !floorSees(an) {
				t.Errorf("the floor does not see the marker: %v", judged(an))
			}
		})
	}
}

// What the analysis calls inert really is: bash runs nothing, and the analysis is OK.
func TestInertDataRealBash(t *testing.T) {
	cmds := []string{
		`x='a[$(mark 1)]'; [ "$x" -eq 1 ]`,
		`x='a[$(mark 1)]'; test "$x" -gt 1`,
		`x='a[$(mark 1)]'; printf '%d' "$x" >/dev/null`,
		`x='a[$(mark 1)]'; (exit "$x")`,
		`x='$(mark 1)'; echo "$x" >/dev/null`,
		`x='$(mark 1)'; echo $x >/dev/null`,
		"cat <<'EOF' >/dev/null\n$(mark 1)\nEOF",
		`x='$(mark 1)'; [[ $x == a ]]`,
		`x='a[$(mark 1)]'; [[ -n $x ]]`,
		`echo '$(( a[$(mark 1)] ))' >/dev/null`,
	}
	results := realBash(t, cmds)
	for i, cmd := range cmds {
		t.Run(cmd, func(t *testing.T) {
			if results[i].marked {
				t.Fatalf("bash ran the marker")
			}
			if an := Analyze(cmd, Options{Cwd: sandbox.Dir, Home: sandbox.Dir}); !an.OK {
				t.Errorf("not OK: %q", an.Problems)
			}
		})
	}
}

// Commands hidden in other commands' options really run: for each spelling, real tools (in a
// sandbox, skipped when the tool is not installed) run the marker, and the analysis has a
// segment for it.
func TestHiddenCommandsRealTools(t *testing.T) {
	cases := []struct{ tool, cmd string }{
		{"git", "git init -q r && cd r && git -c alias.x='!mark 1' x"},
		{"git", "git init -q r && cd r && echo a > f && git add f && git -c user.name=a -c user.email=a@b commit -qm x && echo b > f && git -c diff.external='mark 1' diff"},
		{"git", "git init -q r && cd r && git -c user.name=a -c user.email=a@b commit -q --allow-empty -m x && git -c user.name=a -c user.email=a@b rebase -q --exec='mark 1' --root"},
		{"git", "git init -q r && cd r && git -c user.name=a -c user.email=a@b commit -q --allow-empty -m x && git -c user.name=a -c user.email=a@b rebase -q --exe 'mark 1' --root"},
		{"tar", "touch f && tar -cf x.tar f && tar -xf x.tar --to-command='mark 1'"},
		{"tar", "touch f && tar -cf x.tar f && tar -xf x.tar --to-com='mark 1'"},
		{"tar", "touch f && tar -cf x.tar --checkpoint=1 --checkpoint-action=exec='mark 1' f"},
		{"tar", "touch f && tar -I 'mark 1' -cf x.tar f; true"},
		{"tar", "touch f && tar cfI x.tar 'mark 1' f; true"},
		{"tar", "touch f && tar --use-compress-prog='mark 1' -cf x.tar f; true"},
		{"find", "touch f && find . -name f -exec mark 1 {} \\;"},
		{"find", "touch f && find . -name f -execdir mark 1 \\;"},
		{"make", "make -f /dev/null SHELL=/tmp/w/bin/mark --eval='x:;@1' x; true"},
		{"make", "make --eval='x:;@mark 1' x"},
		{"make", "printf 'all:\\n\\tmark 1\\n' | make -f -"},
		{"sed", "echo x | sed -n '1e mark 1'"},
		{"sed", "echo x | sed 's/.*/mark 1/e'"},
		{"sed", "echo x | sed --expression='1e mark 1'"},
		{"awk", "awk -v c='mark 1' 'BEGIN{system(c)}'"},
		{"awk", "awk 'BEGIN{c=\"mark 1\"; system(c)}'"},
		{"awk", "awk 'BEGIN{print \"x\" | \"mark 1\"}'"},
		{"zip", "touch f && zip -q x.zip f -T -TT 'mark 1'; true"},
		{"sqlite3", "sqlite3 :memory: '.shell mark 1'"},
		{"sqlite3", "sqlite3 -cmd '.system mark 1' :memory: .quit"},
		{"gdb", "gdb -batch -ex 'shell mark 1' 2>/dev/null"},
		{"vim", "vim -es -c '!mark 1' -c 'q!' 2>/dev/null; true"},
		{"ed", "printf '!mark 1\\nq\\n' | ed -s"},
		{"xargs", "echo 1 | xargs mark"},
		{"env", "env -S 'mark 1'"},
	}
	// The slow starters run only in integration runs.
	slow := map[string]bool{"gdb": true, "vim": true}
	integration := os.Getenv("APPROVEBOT_INTEGRATION") == "1"
	scripts := make([]string, len(cases))
	for i, tc := range cases {
		scripts[i] = tc.cmd
		if slow[tc.tool] && !integration {
			scripts[i] = "true"
		}
	}
	results := realBash(t, scripts)
	for i, tc := range cases {
		t.Run(tc.cmd, func(t *testing.T) {
			if _, err := exec.LookPath(tc.tool); err != nil {
				t.Skipf("%s is not installed", tc.tool)
			}
			if slow[tc.tool] && !integration {
				t.Skipf("%s starts slowly: set APPROVEBOT_INTEGRATION=1 to run it", tc.tool)
			}
			if !results[i].marked {
				t.Fatalf("%s did not run the marker: the spelling does not attack anything", tc.tool)
			}
			an := Analyze(tc.cmd, Options{Cwd: sandbox.Dir, Home: sandbox.Dir})
			if !floorSees(an) {
				t.Errorf("no segment runs the marker: %v", judged(an))
			}
		})
	}
}

// The values the analysis works out are the values bash expands: each line ends with a printf
// whose arguments the analysis knows, and bash (in a sandbox) prints the same.
func TestExpansionMatchesBash(t *testing.T) {
	cmds := []string{
		`printf '<%s>' a 'b c' "d e" f'g'"h" $'i\tj'`,
		`X=/; printf '<%s>' $X "$X" ${X} "${X}x"`,
		`X='a b'; printf '<%s>' $X "$X"`,
		`printf '<%s>' ${HOME::1} ${HOME:0:4} "${HOME%/*}" "${HOME##*/}" ${#HOME}`,
		`printf '<%s>' "$PWD" ~ ~/x ~+`,
		`unset P; printf '<%s>' ${P:-d} ${P-e} "${P:+f}"`,
		`printf '<%s>' ${p:=/} "$p"`,
		`read X <<< /; printf '<%s>' "$X"`,
		`read -r X Y <<< 'a b c'; printf '<%s>' "$X" "$Y"`,
		`printf -v X '%s-%s' a b; printf '<%s>' "$X"`,
		`a=(x '/ y' z); printf '<%s>' "${a[@]}" "${a[1]}" ${a[0]} "${#a}"`,
		`printf '<%s>' "$(cd / && pwd)" "$(cd /tmp && pwd)"`,
		`printf '<%s>' $(echo a b) "$(echo a b)" $(printf '%s' x)`,
		`printf '<%s>' "$(echo cm0gLXJmIC8= | base64 -d)"`,
		`printf '<%s>' "$(echo '726d202d7266202f' | xxd -r -p)"`,
		`printf '<%s>' "$(rev <<< 'fr- mr')" "$(echo abc | tr a-c x-z)"`,
		`printf '<%s>' {a,b}{1,2} x{1..3}`,
		`set -- p 'q r'; printf '<%s>' "$@" $# "$1"`,
		`set -- a b c; shift; printf '<%s>' "$1" "$#"; shift 2; printf '<%s>' "$#"`,
		`set -- a; shift 3; printf '<%s>' "$1"`,
		`IFS=:; X=a:b; printf '<%s>' $X`,
		`X=abc; printf '<%s>' ${X^^} ${X^} ${X/b/z} ${X//b/q} ${X#a} ${X%c}`,
		`x=5; printf '<%s>' $((x*2)) $(( (x+1) % 4 )) $((1<<3)) $((x>2?1:0))`,
		`x=5; (( x++ )); let y=x*2; printf '<%s>' $x $y`,
		`printf '<%s>' "$(basename /a/b/)" "$(dirname /a/b/)" "$(dirname a)" "$(basename x.go .go)"`,
		`printf '<%s>' "$(echo -e 'a\tb')" "$(echo -n x)" "$(printf '%b' 'c\nd')"`,
		`printf '<%s>' "$(printf 'a\nb\nc\n' | head -n 2)" "$(printf 'a\nb\nc\n' | tail -n1)"`,
		`f() { printf '<%s>' "$1" "$#"; }; f 'x y' z`,
		`for d in a 'b c'; do printf '<%s>' "$d"; done`,
		`X=1; X+=2; printf '<%s>' "$X"`,
		`declare -r R=1; export E=2; printf '<%s>' $R $E`,
		"cat <<EOF | while read l; do :; done\nx\nEOF\nprintf '<%s>' \"$(cat <<'EOF'\nhi $X\nEOF\n)\"",
	}
	results := realBash(t, cmds)
	for i, cmd := range cmds {
		t.Run(cmd, func(t *testing.T) {
			an := Analyze(cmd, Options{Cwd: sandbox.Dir + "/d" + strconv.Itoa(i), Home: sandbox.Dir})
			var want strings.Builder
			var last *Segment
			for _, s := range an.Segments {
				if s.Name() == "printf" && !s.Windows {
					last = s
				}
			}
			if last == nil {
				t.Fatal("no printf segment")
			}
			// A loop's body is judged once per item: every printf of it counts.
			for _, s := range an.Segments {
				if s.Name() != "printf" || !s.Judged || s.Args[1].Value != "<%s>" {
					continue
				}
				for _, a := range s.Args[2:] {
					if !a.Known {
						t.Fatalf("the analysis does not know %q", a.Raw)
					}
					want.WriteString("<" + a.Value + ">")
				}
			}
			if results[i].stdout != want.String() {
				t.Errorf("bash prints %q, the analysis %q", results[i].stdout, want.String())
			}
		})
	}
}

// Tildes in assignments and in arguments that look like assignments.
func TestTildeMatchesBash(t *testing.T) {
	cmds := []string{
		`printf '<%s>' a=~/x --file=~/y b:~/z c=x:~/w ~`,
		`X=a:~/q; Y=~; Z=~/r:~; printf '<%s>' "$X" "$Y" "$Z"`,
	}
	results := realBash(t, cmds)
	for i, cmd := range cmds {
		t.Run(cmd, func(t *testing.T) {
			an := Analyze(cmd, Options{Cwd: sandbox.Dir, Home: sandbox.Dir})
			var want strings.Builder
			for _, s := range an.Segments {
				if s.Name() == "printf" && !s.Windows {
					for _, a := range s.Args[2:] {
						want.WriteString("<" + a.Value + ">")
					}
				}
			}
			if results[i].stdout != want.String() {
				t.Errorf("bash prints %q, the analysis %q", results[i].stdout, want.String())
			}
		})
	}
}

// What the analysis claims to know exactly about a command's output is what bash prints:
// whenever the analysis is OK, its value of $(…) equals bash's.
func TestEvalExactMatchesBash(t *testing.T) {
	subs := []string{
		`echo a b`, `echo -n a`, `echo -e 'a\tb\x41\0101\c-ignored'`, `echo -E 'a\tb'`, `echo -ne 'x\n'`,
		`echo -- -n`, `echo -nx a`, `echo '-e' 'a\nb'`, `echo -e '\u00e9\U0001F600'`,
		`printf '%s-%s' a b c`, `printf '%d %i %u' 5 +6 ' 7'`, `printf '%x %X %o' 255 255 8`,
		`printf '%5s|' a`, `printf '%-3d|' 4`, `printf '%.2s' abcd`, `printf '%q' 'a b'`,
		`printf '%d' 0x10`, `printf '%d' ''`, `printf '%d' abc`, `printf 'a\0101b'`, `printf 'a\101b'`,
		`printf 'x\cy'`, `printf '%b' 'a\0101b' 'c\cd'`, `printf '%c' hello`, `printf '%%'`,
		`printf 'a\n\t\\b'`, `printf '%s'`, `printf -- '%s' x`, `printf '%s %s\n' a`,
		`printf '\x41\x4a\x4b1'`, `printf '\e[0m' | xxd -p`,
		`echo aGVsbG8= | base64 -d`, `echo aGVsbG8 | base64 -d`, `echo 'aGVs bG8=' | base64 -d`,
		`echo aGVsbG8_ | base64 -d`, `echo hi | base64`, `printf %s x | base64`,
		`echo abc | tr a-c A-C`, `echo abc | tr -d b`, `echo 'a b' | tr ' ' _`, `echo abc | tr ab x`,
		`echo abc | tr '[:lower:]' '[:upper:]'`, `echo hello | rev`, `printf 'ab\ncd\n' | rev`,
		`echo 6869 | xxd -r -p`, `echo '68 69' | xxd -r -p`,
		`basename /a/b/c`, `basename /a/b/`, `basename /`, `basename ''`, `basename a.txt .txt`,
		`basename .txt .txt`, `dirname /a/b/c`, `dirname /a/b/`, `dirname a`, `dirname /`, `dirname //a`,
		`dirname a/b//`, `pwd`, `cd /tmp && pwd`, `cd / && cd tmp && pwd`,
		`printf 'a\nb\nc\n' | head -n 2`, `printf 'a\nb\nc' | tail -n 1`, `printf 'a\nb\n' | head -1`,
		`seq 3 | head -n 2`, `yes x | head -n 3`, `cat <<'EOF'` + "\nline $X\nEOF",
		`echo a; echo b`, `echo a && echo b`, `{ echo a; echo b; }`, `(echo a)`, `true`, `:`,
	}
	cmds := make([]string, len(subs))
	for i, sub := range subs {
		cmds[i] = `printf '<%s>' "$(` + sub + `)"`
	}
	results := realBash(t, cmds)
	for i, cmd := range cmds {
		t.Run(subs[i], func(t *testing.T) {
			an := Analyze(cmd, Options{Cwd: sandbox.Dir + "/d" + strconv.Itoa(i), Home: sandbox.Dir})
			if !an.OK {
				return // the analysis does not claim to know it
			}
			var got string
			for _, s := range an.Segments {
				if s.Name() == "printf" && !s.Windows && len(s.Args) == 3 && s.Args[1].Value == "<%s>" && s.Args[2].Known {
					got = "<" + s.Args[2].Value + ">"
				}
			}
			if results[i].stdout != got {
				t.Errorf("bash prints %q, the analysis claims %q", results[i].stdout, got)
			}
		})
	}
}
