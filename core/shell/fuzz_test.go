package shell

import (
	"strings"
	"testing"
)

var fuzzSeeds = []string{
	"ls -la /tmp",
	"cd /repo && git status && ls -la | grep foo ; echo done || true",
	`bash -lc "ls /tmp && cat x"`,
	"rm -rf /",
	"echo cm0gLXJmIC8= | base64 -d | sh",
	":(){ :|:& };:",
	`python3 -c 'import os; os.system("rm -rf /")'`,
	"powershell -enc UgBlAG0AbwB2AGUALQBJAHQAZQBtACAALQBSAGUAYwB1AHIAcwBlACAAQwA6AFwA",
	`cmd /c "rd /s /q C:\"`,
	"X=/; rm -rf $X",
	"rm${IFS}-rf${IFS}/",
	"{rm,-rf,/}",
	"find / -exec rm -rf {} +",
	"for d in /tmp /; do rm -rf $d; done",
	"f() { rm -rf \"$1\"; }; f /",
	"sudo env nice timeout 3 bash -c 'eval \"$X\"'",
	"cat <<EOF | sh\nrm -rf /\nEOF",
	"ssh -o ProxyCommand='nc %h %p' host 'rm -rf ~'",
	"echo / | xargs -I{} rm -rf {}",
	"a $'\\x41' ${X:-d} ${X/a/b} ${#X} ${X:1:2} $((1+2)) <(b) >(c)",
	"set -- a b; printf '%s %b\\n' \"$@\"",
	"git -c alias.x='!ls' x; PAGER=less git log",
	"awk 'BEGIN { print \"x\" | \"sh\" }'",
	"echo \"unbalanced",
	"ls \\\n-la",
	"time ls -la",
	"export a=b c",
	"%1 x,y a:b @x +y",
	"a=b=c d",
	"a  &&   b ;c|d   ||e",
	"x 'a b' \"c d\" e'f'\"g\"",
	// Issue 12.
	"ln",
	"ln -s",
	"mknod x b",
	"x='a[$(id)]'; [[ $x -eq 1 ]]; test -v 'a[$(id)]'; (( z = y + 1 ))",
	"a=(/ x); rm -rf \"${a[@]}\" ${a[0]} ${a[$(id)]} ${!a} ${!a*} ${a@P}",
	"declare -i i; i='a[$(id)]'; read -r X Y <<< '/ x'; printf -v Z %s /",
	"git -c alias.x='!id' -c core.pager=less rebase -x id --exec=id",
	"tar cfI x.tar zstd --to-com=id; rsync -avze ssh a b:; make -E 'a:;id' SHELL=sh",
	"tmux new -d id \\; send-keys id Enter; parallel 'echo {}' ::: a b",
	"sed -n '1e id' -e 's/x/y/e;w out' f; sqlite3 db .shell id",
	"while :; do x & done; for ((;;)); do y & done; f() { g & }; g() { f & }",
	"echo /* | xargs rm -rf; for d in /*; do rm -rf $d; done; rm -rf /!(x) ~/.*",
	"ln -s / r; rm -rf r/; mknod d b 8 0; dd of=d; fdisk /dev/sda <<< w",
	"cd ../..; rm -rf *; echo 'id' > x.sh; bash x.sh; source ./x.sh",
	"awk -v c=id 'BEGIN{system(c); print | c}'",
	"set -euo pipefail; shopt -s lastpipe; echo / | read X; rm -rf $X",
	// Issue 12, second pass.
	`f(){ eval 'f & f'; $FUNCNAME & }; f; yes | while read; do x & done; for ((i=1;i>0;i++)); do y & done`,
	`IFS=, read -ra a <<< 'x,/'; declare -A m=([k]=/); declare -n r=HOME; mapfile -C 'id #' -c1 b <<< x; n='a[1]'; echo ${!n} ${m[k]} $r ${a[-1]} ${x@E}`,
	`pushd /etc; pushd /tmp; cd -; popd; echo ~1 ~-1 ~- $OLDPWD ${DIRSTACK[1]}; CDPATH=/ cd usr; rm -rf "$(realpath ..)"`,
	`hash -p /bin/sh ls; ls -c id; coproc bash; echo id >&"${COPROC[1]}"; source /dev/fd/3 3<<< id`,
	`awk 'BEGIN{system(ARGV[1]); system(ENVIRON["C"])}{system($0)}' id; expect -c 'spawn sh; send "id\r"; open "|id"'`,
	`screen -dmS x id; sudo -s -- id; env 'BASH_FUNC_f%%=() { id; }' bash -c f; LESSOPEN='|id %s' less x; GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.x GIT_CONFIG_VALUE_0='!id' git x`,
	`make -f <(echo 'a:;id') RM=id; npm init x; npm config set shell id; git -c imap.tunnel=id --work-tree=/ clean -fdx`,
	`tar --remove-files -cf x /; zip -rm x.zip ~; rsync --remove-source-files a b:; xargs -a <(echo /) rm -rf`,
	`Get-ChildItem C:\ | Remove-Item -Recurse; [IO.Directory]::Delete('C:\', $true); for /d %i in (C:\*) do rd /s /q %i; :a & start %0 & goto a`,
	`dd of=$(ls /dev/sd? | head -1); find /dev -name 'sd*' -exec wipefs -a {} \;; rm -rf /$X/build /[[:alpha:]]*`,
}

func FuzzAnalyze(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s, "/repo")
	}
	f.Fuzz(func(t *testing.T, cmd, cwd string) {
		an := Analyze(cmd, Options{Cwd: cwd, Home: "/home/u"})
		for _, p := range an.Problems {
			if strings.HasPrefix(p, internalError) {
				t.Fatalf("%s", p)
			}
		}
		if an.OK && (!an.Parsed || an.Incomplete || len(an.Problems) > 0) {
			t.Fatalf("OK with parsed=%v incomplete=%v problems=%q", an.Parsed, an.Incomplete, an.Problems)
		}
		if !an.OK && len(an.Problems) == 0 {
			t.Fatal("not OK without a problem")
		}
		judged := 0
		for _, s := range an.Segments {
			if s == nil {
				t.Fatal("nil segment")
			}
			if s.Judged {
				judged++
			}
			if s.Kind != KindRedirect && len(s.Args) == 0 {
				t.Fatalf("segment without args: %+v", s)
			}
			for _, a := range s.Args {
				if a.Prefix > len(a.Value) || a.Suffix > len(a.Value) {
					t.Fatalf("prefix %d or suffix %d beyond value %q", a.Prefix, a.Suffix, a.Value)
				}
			}
		}
		checkFastPath(t, cmd, Options{Cwd: cwd, Home: "/home/u"})
		if f, s := dumpAnalysis(an), dumpAnalysis(analyze(cmd, Options{Cwd: cwd, Home: "/home/u"}, false)); f != s {
			t.Fatalf("fast path and parser differ on %q:\nfast:   %s\nparser: %s", cmd, f, s)
		}
		if an.OK && judged == 0 {
			t.Fatal("OK with nothing judged")
		}
		// Known printer quirks of mvdan.cc/sh v3.14 (display only): form feeds and other
		// controls are blanks to it, "$`…`" prints as "$$(…)", and an empty ${ } or ${| }
		// prints as "${;}" (found by this fuzzer: testdata/fuzz/FuzzAnalyze/b6d50abfa9414c24).
		if an.Parsed && !strings.Contains(cmd, "$`") && !strings.Contains(an.Normalized, "${;}") && !strings.Contains(an.Normalized, "${|;}") &&
			!strings.ContainsFunc(cmd, func(r rune) bool { return r < ' ' && r != '\n' && r != '\t' }) {
			// The printed form parses again.
			if again := Analyze(an.Normalized, Options{Cwd: cwd}); !again.Parsed && len(an.Normalized) < maxInput {
				t.Fatalf("normalized form %q does not parse: %q", an.Normalized, again.Problems)
			}
		}
	})
}
