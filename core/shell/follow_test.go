package shell

import (
	"strings"
	"testing"
)

// allSegments renders every segment, judged or floor-only, as its argv.
func allSegments(an *Analysis) []string {
	var out []string
	for _, s := range an.Segments {
		if s.Windows {
			var raw []string
			for _, a := range s.Args {
				raw = append(raw, a.Raw)
			}
			out = append(out, "win:"+strings.Join(raw, " "))
			continue
		}
		out = append(out, strings.Join(s.Argv(), " "))
	}
	return out
}

// sees reports whether some segment, judged or floor-only, renders as want.
func sees(an *Analysis, want string) bool {
	for _, s := range allSegments(an) {
		if s == want {
			return true
		}
	}
	return false
}

// Unbounded process creation, however the background job is spelled, and the shapes that only
// look like it.
func TestForkBombsAsTheyRun(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		bomb bool
	}{
		{`f(){ eval 'f & f'; }; f`, true},
		{`f(){ builtin eval "f & f"; }; f`, true},
		{`f(){ command eval 'f & f'; }; f`, true},
		{`f(){ eval f '&'; f; }; f`, true},
		{`f(){ $FUNCNAME & $FUNCNAME; }; f`, true},
		{`f(){ "${FUNCNAME[0]}" | "${FUNCNAME[0]}" & }; f`, true},
		{`f(){ bash -c ':' & f; }; f`, true},
		{`g(){ f & }; f(){ g; }; f`, true},
		{`while :; do eval 'sleep 9 &'; done`, true},
		{`while true; do sh -c 'sleep 9 &'; done`, true},
		{`until false; do bash -c 'x &'; done`, true},
		{`until [[ 0 -eq 1 ]]; do x & done`, true},
		{`while [ 1 = 1 ]; do x & done`, true},
		{`while (( 2 > 1 )); do x & done`, true},
		{`while ! false; do x & done`, true},
		{`while true && :; do x & done`, true},
		{`for ((;;)); do eval 'x &'; done`, true},
		{`for ((i=1; i>0; i++)); do x & done`, true},
		{`for ((i=0; ; i++)); do x & done`, true},
		{`g(){ x & }; while :; do g; done`, true},
		{`while :; do setsid -f x; done`, true},
		{`while :; do screen -dm x; done`, true},
		{`yes | while read; do x & done`, true},
		{`cat /dev/zero | while read -n1; do x & done`, true},
		{`while read l; do x & done < /dev/urandom`, true},
		{`seq inf | while read i; do x & done`, true},
		{`yes | cat | while read; do x & done`, true},
		{`yes 9 | xargs -P0 -n1 sleep`, true},
		{`yes | xargs --max-procs=0 -n1 sleep`, true},
		{`seq inf | xargs -P 0 -I{} x`, true},
		{`yes | parallel -j0 x`, true},
		{`while ($true) { Start-Process powershell }`, true},
		{`for (;;) { Start-Job { 1 } }`, true},
		{`:a & start %0 & goto a`, true},
		// Bounded, waited for, or only spelled.
		{`for ((i=0; i<3; i++)); do x & done`, false},
		{`for ((i=1; i>0; i++)); do i=-1; x & done`, false},
		{`while :; do x & break; done`, false},
		{`f(){ x & wait; f; }; f`, false},
		{`f(){ f; x & }; f`, false},
		{`f(){ echo hi; }; f & f`, false},
		{`while read l; do x & done < data.txt`, false},
		{`yes | head -5 | xargs -P0 -n1 echo`, false},
		{`seq 5 | xargs -P0 -n1 sleep`, false},
		{`yes | xargs -P 4 -n1 sleep`, false},
		{`while sleep 1; do x & done`, false},
		{`until false; do sleep 1; done`, false},
		{`while :; do ssh host 'x &'; done`, false},
		{`echo 'while true; do x & done' > loop.sh`, false},
		{`while ($i -lt 5) { Start-Process notepad; $i++ }`, false},
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			an := Analyze(tc.cmd, testOpts)
			if got := len(an.ForkBombs) > 0; got != tc.bomb {
				t.Errorf("fork bomb = %v (%q), want %v", got, an.ForkBombs, tc.bomb)
			}
		})
	}
}

// The values the floor reads through dataflow the line makes: read, arrays, name references,
// indirection, transformations, the directory stack, CDPATH, realpath, $PWD without a cwd.
func TestValuesFollowed(t *testing.T) {
	for _, tc := range []struct {
		cmd, cwd, want string
	}{
		{`IFS= read -r d <<< "/"; rm -rf "$d"`, "", "rm -rf /"},
		{`IFS=, read -r a b <<< "x,/"; rm -rf "$b"`, "", "rm -rf /"},
		{`read -ra c <<< 'rm -rf /'; "${c[@]}"`, "", "rm -rf /"},
		{`a[5]=/; rm -rf ${a[5]}`, "", "rm -rf /"},
		{`a=(x /); rm -rf "${a[-1]}"`, "", "rm -rf /"},
		{`a=(x); a+=(/); rm -rf "${a[@]}"`, "", "rm -rf x /"},
		{`a=(x y z); echo ${#a[@]} ${!a[@]}`, "", "echo 3 0 1 2"},
		{`declare -A m=([k]=/); rm -rf "${m[k]}"`, "", "rm -rf /"},
		{`declare -A m; m[k]=/; rm -rf ${m[k]}`, "", "rm -rf /"},
		{`mapfile -t a <<< /; rm -rf "${a[@]}"`, "", "rm -rf /"},
		{`declare -n r=HOME; rm -rf "$r"`, "", "rm -rf /home/u"},
		{`declare -n r=x; r=/; rm -rf $x`, "", "rm -rf /"},
		{`x=HOME; rm -rf ${!x}`, "", "rm -rf /home/u"},
		{`x='$(id)'; eval "${x@E}"`, "", "id"},
		{`x=/; rm -rf ${x@Q}`, "", "rm -rf /"},
		{`cd /etc; cd /tmp; cat $OLDPWD/shadow`, "", "cat /etc/shadow"},
		{`cd /etc; cd /tmp; cat ~-/shadow`, "", "cat /etc/shadow"},
		{`cd /etc && cd - >/dev/null && cat shadow`, "", "cat shadow"},
		{`pushd /etc; pushd /tmp; cat ~1/shadow ~-1/group ~+/x`, "", "cat /etc/shadow /etc/group /tmp/x"},
		{`pushd /etc; pushd /tmp; popd; cat shadow`, "", "cat shadow"},
		{`pushd / >/dev/null; pushd /tmp >/dev/null; pushd +1 >/dev/null; echo $PWD`, "", "echo /"},
		{`pushd ~; pushd /tmp; echo "${DIRSTACK[1]}"`, "", "echo /home/u"},
		{`CDPATH=/ cd etc; echo $PWD`, "", "echo /etc"},
		{`CDPATH=/:. cd etc; echo $PWD`, "", "echo /etc"},
		{`rm -rf "$(realpath ..)" "$(readlink -f ../..)"`, "", "rm -rf /x /"},
		{`x=$(cd / && pwd); rm -rf $x`, "", "rm -rf /"},
		{`x=${U:-/}; rm -rf $x`, "", "rm -rf /"},
		{`rm -rf "$PWD/../.."`, "<none>", "rm -rf " + UnknownCwd + "/../.."},
		{`rm -rf ${PWD%/*}`, "<none>", "rm -rf " + strings.TrimSuffix(UnknownCwd, "/"+unknownCwdElem)},
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			opts := testOpts
			if tc.cwd == "<none>" {
				opts = Options{Home: "/home/u"}
			}
			if tc.cmd == `rm -rf "$(realpath ..)" "$(readlink -f ../..)"` {
				opts = Options{Cwd: "/x/y", Home: "/home/u"}
			}
			an := Analyze(tc.cmd, opts)
			if !sees(an, tc.want) {
				t.Errorf("no segment %q in %q (problems %q)", tc.want, allSegments(an), an.Problems)
			}
		})
	}
}

// $PWD, $(pwd) and ~+ of a request without a cwd are UnknownCwd, which the floor turns back
// into a path relative to where the line started.
func TestUnknownCwdRel(t *testing.T) {
	for _, tc := range []struct{ p, rel string }{
		{UnknownCwd, "."},
		{UnknownCwd + "/build", "build"},
		{UnknownCwd + "/..", ".."},
		{UnknownCwd + "/../../x", "../../x"},
		{UnknownCwd + "/../../../../../../..", strings.TrimSuffix(strings.Repeat("../", unknownCwdDepth-1), "/")},
	} {
		if rel, ok := UnknownCwdRel(tc.p); !ok || rel != tc.rel {
			t.Errorf("UnknownCwdRel(%q) = %q, %v; want %q", tc.p, rel, ok, tc.rel)
		}
	}
	// Climbing out of all of it is /, which the floor reads as /.
	for _, p := range []string{"/", "/etc", "/home/u/x", "relative", UnknownCwd + "/../../../../../../../.."} {
		if rel, ok := UnknownCwdRel(p); ok {
			t.Errorf("UnknownCwdRel(%q) = %q, want none", p, rel)
		}
	}
	if an := Analyze(`cat "$PWD/x"`, Options{Home: "/home/u"}); an.OK {
		t.Error("$PWD without a cwd is OK")
	}
}

// The commands hidden in awk's, Tcl's, vim's and other tools' inputs, options and environment,
// as the floor sees them.
func TestHiddenCommandsFollowed(t *testing.T) {
	for _, tc := range []struct{ cmd, want string }{
		{`awk 'BEGIN{system(ARGV[1])}' 'rm -rf /'`, "rm -rf /"},
		{`awk 'BEGIN { system(ARGV[2]) }' x 'id -u'`, "id -u"},
		{`awk '{system($0)}' <<< 'rm -rf /'`, "rm -rf /"},
		{`echo 'rm -rf /' | awk '{system($0)}'`, "rm -rf /"},
		{`awk '{system($1" "$2)}' <<< 'rm -r'`, "rm -r"},
		{`C='rm -rf /' awk 'BEGIN{system(ENVIRON["C"])}'`, "rm -rf /"},
		{`export C='rm -rf /'; awk 'BEGIN{system(ENVIRON["C"])}'`, "rm -rf /"},
		{`awk -f - <<< 'BEGIN{system("rm -rf /")}'`, "rm -rf /"},
		{`awk -f <(echo 'BEGIN{system("rm -rf /")}')`, "rm -rf /"},
		{`expect -c 'open "|rm -rf /"'`, "rm -rf /"},
		{`expect -c 'spawn sh; send "rm -rf /\r"; expect eof'`, "rm -rf /"},
		{`expect -c "set c {rm -rf /}; exec sh -c \$c"`, "rm -rf /"},
		{`echo 'spawn rm -rf /' | expect`, "rm -rf /"},
		{`expect -f - <<< 'spawn rm -rf /'`, "rm -rf /"},
		{`tclsh <<< 'exec rm -rf /'`, "rm -rf /"},
		{`vim -es -c 'exe "!rm -rf /"'`, "rm -rf /"},
		{`vim -c 'exe "!" . "rm -rf /"'`, "rm -rf /"},
		{`vim -es -c 'silent !rm -rf /' -c 'q!'`, "rm -rf /"},
		{`vim -E -s -c 'sil! exec "r !rm -rf /"'`, "rm -rf /"},
		{`screen -dmS x bash -c 'rm -rf /'`, "rm -rf /"},
		{`screen -AdmS x rm -rf /`, "rm -rf /"},
		{`sudo -s -- 'rm -rf /'`, "rm -rf /"},
		{`sudo PAGER='rm -rf /' git log`, "rm -rf /"},
		{`env 'BASH_FUNC_echo%%=() { rm -rf /; }' bash -c 'echo hi'`, "rm -rf /"},
		{`LESSOPEN='|rm -rf / %s' git log`, "rm -rf / FILE"},
		{`LESS='+!rm -rf /' git log`, "rm -rf /"},
		{`GIT_CONFIG_PARAMETERS="'alias.x'='!rm -rf /'" git x`, "rm -rf /"},
		{`GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0='rm -rf /' git log`, "rm -rf /"},
		{`git -c imap.tunnel='rm -rf /' imap-send`, "rm -rf /"},
		{`git filter-branch -f --tree-filter 'rm -rf /' HEAD`, "rm -rf /"},
		{`git --work-tree=/ clean -fdx`, "rm -rf /"},
		{`git -c core.worktree=/ stash -u`, "rm -rf /"},
		{`make -f <(echo 'all:;rm -rf /')`, "rm -rf /"},
		{`make --file=<(echo 'all:;rm -rf /')`, "rm -rf /"},
		{`make -f /dev/fd/3 3<<< 'all:;rm -rf /'`, "rm -rf /"},
		{`make RM='rm -rf /' clean`, "rm -rf /"},
		{`RM='rm -rf /' make clean`, "rm -rf /"},
		{`npm explore x -- sh -c 'rm -rf /'`, "rm -rf /"},
		{`xargs -a <(echo /) rm -rf`, "rm -rf /"},
		{`machinectl shell root@ /bin/sh -c 'rm -rf /'`, "rm -rf /"},
		{`tar --remove-files -cf /dev/null /`, "rm -rf -- /"},
		{`tar -C / -cf x.tar --remove-files etc`, "rm -rf -- /etc"},
		{`zip -rm x.zip /`, "rm -rf -- /"},
		{`zip -m x.zip /etc/*`, "rm -f -- /etc/*"},
		{`rsync -a --remove-source-files / host:x`, "rm -rf -- /"},
		{`hash -p /bin/sh ls; ls -c 'rm -rf /'`, "rm -rf /"},
		{`coproc bash; echo 'rm -rf /' >&"${COPROC[1]}"`, "rm -rf /"},
		{`mapfile -C 'rm -rf / #' -c 1 a <<< x`, "rm -rf /"},
		{`source /dev/stdin <<< 'rm -rf /'`, "rm -rf /"},
		{`. /dev/fd/3 3<<< 'rm -rf /'`, "rm -rf /"},
		{`echo 'rm -rf /' > x.sh; source x.sh`, "rm -rf /"},
		{`n='a[$(rm -rf /)]'; echo "${!n}"`, "rm -rf /"},
		{`dd if=/dev/zero of=$(ls /dev/sd? | head -1)`, "dd if=/dev/zero of=/dev/sd?"},
		{`find /dev -name 'sd*' -exec wipefs -a {} \;`, "wipefs -a /dev/sd*"},
		{`Get-ChildItem C:\ | Remove-Item -Recurse -Force`, `win:Remove-Item -Force -Recurse C:\*`},
		{`gci C:\ -Force | % { ri $_.FullName -Force }`, `win:Remove-Item -Force C:\*`},
		{`[System.IO.Directory]::Delete('C:\', $true)`, `win:Remove-Item -Recurse -Force C:\`},
		{`Start-Process cmd -ArgumentList '/c rd /s /q C:\'`, `win:rd /s /q C:\`},
		{`forfiles /p C:\ /s /c "cmd /c del @path"`, `win:del C:\* /s`},
		{`for /d %i in (C:\*) do rd /s /q "%i"`, `win:rd /s /q C:\*`},
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			an := Analyze(tc.cmd, testOpts)
			if !sees(an, tc.want) {
				t.Errorf("no segment %q in %q", tc.want, allSegments(an))
			}
		})
	}
}

// What configuration or code a tool runs from a directory is the project's only inside it.
func TestProjectDirectories(t *testing.T) {
	for _, tc := range []struct {
		cmd string
		ok  bool
	}{
		{"git status", true},
		{"git -C src log", true},
		{"cd src && git status", true},
		{"git --git-dir=.git log -1", true},
		{"git --version", true},
		{"git clone https://x/y z", true},
		{"make -C src", true},
		{"make -f build/x.mk", true},
		{"make -p -f /dev/null", true},
		{"npm --prefix ./web test", true},
		{"git -C /tmp/evil log", false},
		{"git -C .. status", false},
		{"cd /tmp/evil && git status", false},
		{"(cd /tmp/evil; git status)", false},
		{"git --git-dir=/tmp/evil/.git log", false},
		{"git --work-tree=/ status", false},
		{"make -C /tmp/evil", false},
		{"cd /tmp/evil && make", false},
		{"make -f /tmp/evil.mk", false},
		{"npm --prefix /tmp/evil test", false},
		{"git init --template=/tmp/evil", false},
		{"git init --template=./templates", true},
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			if an := Analyze(tc.cmd, testOpts); an.OK != tc.ok {
				t.Errorf("OK = %v, want %v (%q)", an.OK, tc.ok, an.Problems)
			}
		})
	}
	// Without a project (a cwd that is /, a home), git and make trust nothing they read.
	if an := Analyze("git status", Options{Cwd: "/home/u", Home: "/home/u"}); an.OK {
		t.Error("git status in a home directory is OK")
	}
}

// The settings that name programs or change what runs, in git -c, the environment, npm and
// make, are outside the subset; the short lists of harmless ones are inside it.
func TestSettingsOutsideSubset(t *testing.T) {
	for _, tc := range []struct {
		cmd string
		ok  bool
	}{
		{"git -c user.email=a@b commit -m x", true},
		{"git -c color.ui=always -c core.quotepath=off log", true},
		{"git -c core.autocrlf=input status", true},
		{"git -c core.pager=cat log", true},
		{"GIT_AUTHOR_NAME=x GIT_COMMITTER_DATE=now git commit -m y", true},
		{"PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1 python3 x.py", true},
		{"make V=1 DESTDIR=./out CFLAGS=-O2 install", true},
		{"npm config set save-exact true", true},
		{"npm config get registry", true},
		{"npm init -y", true},
		{"git -c core.worktree=/ status", false},
		{"git -c remote.origin.vcs=x fetch", false},
		{"git -c safe.directory=* status", false},
		{"git -c http.proxy=http://x fetch", false},
		{"GIT_INDEX_FILE=/tmp/x git add -A", false},
		{"GIT_DIR=.git git log", false},
		{"GIT_TRACE2_EVENT=/tmp/x git status", false},
		{"PYTHONPLATLIBDIR=/tmp python3 x.py", false},
		{"PYTHONBREAKPOINT=os.system python3 x.py", false},
		{"LESS='+!id' git log", false},
		{"npm config set script-shell /tmp/x", false},
		{"npm config delete ignore-scripts", false},
		{"npm config edit", false},
		{"shopt -s dotglob; ls", false},
		{"shopt -u dotglob; ls", true},
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			if an := Analyze(tc.cmd, testOpts); an.OK != tc.ok {
				t.Errorf("OK = %v, want %v (%q)", an.OK, tc.ok, an.Problems)
			}
		})
	}
	// make VAR=value and npm init PKG are hidden commands the allowlist of make or npm does
	// not cover.
	for _, tc := range []struct{ cmd, hidden string }{
		{"make CC=gcc", "gcc"},
		{"make RM='nc x 9' clean", "nc x 9"},
		{"MAKE=/tmp/evil make", "/tmp/evil"},
		{"npm init evil", "create-evil"},
		{"npm create @evil/app", "create-app"},
		{"npm init @evil", "create"},
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			an := Analyze(tc.cmd, testOpts)
			if got := strings.Join(hiddenSegments(an), "; "); !strings.Contains(got, tc.hidden) {
				t.Errorf("hidden segments %q do not hold %q", got, tc.hidden)
			}
		})
	}
}

// Only what the tools read as options, configuration or programs reconfigures them: the
// policy leaves a safe bin safe under an export of any other name (EnvExportedNames).
func TestReconfigures(t *testing.T) {
	for _, tc := range []struct {
		name string
		want bool
	}{
		{"FOO", false},
		{"NODE_ENV", false},
		{"BUILD_ID", false},
		{"LC_ALL", false},
		{"GREP_OPTIONS", true},
		{"TAR_OPTIONS", true},
		{"LD_PRELOAD", true},
		{"PAGER", true},
		{"RIPGREP_CONFIG_PATH", true},
		{"MY_FLAGS", true},
		{"TMPDIR", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Reconfigures(tc.name); got != tc.want {
				t.Errorf("Reconfigures(%q) = %v, want %v", tc.name, got, tc.want)
			}
		})
	}
}
