package shell

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/approvebot/approvebot/internal/sandbox"
)

// realBash runs script in bash inside the sandbox, with a stub command "mark" on the PATH that
// records its argument, and returns the marks recorded.
func realBash(t *testing.T, script string) []string {
	t.Helper()
	if err := sandbox.Available(); err != nil {
		t.Skip(err)
	}
	scratch := t.TempDir()
	bin := filepath.Join(scratch, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	stub := "#!/bin/sh\necho \"$1\" >> " + sandbox.Dir + "/ran\n"
	if err := os.WriteFile(filepath.Join(bin, "mark"), []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := sandbox.Run(ctx, scratch, "/bin/bash", "-c", "PATH="+sandbox.Dir+"/bin:$PATH\n"+script); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(scratch, "ran"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

// floorSees reports whether a segment runs mark: the floor judges the command text found.
func floorSees(an *Analysis) bool {
	for _, s := range an.Segments {
		if s.Name() == "mark" {
			return true
		}
	}
	return false
}

// Bash runs code where it looks like data. For each spelling, real bash (in a sandbox) runs
// the marker, the analysis is not-ok, and the floor sees the command.
func TestCodeInDataRealBash(t *testing.T) {
	for _, cmd := range []string{
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
	} {
		t.Run(cmd, func(t *testing.T) {
			ran := realBash(t, cmd+" 2>/dev/null")
			if len(ran) == 0 {
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
	for _, cmd := range []string{
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
	} {
		t.Run(cmd, func(t *testing.T) {
			if ran := realBash(t, cmd+" 2>/dev/null"); len(ran) > 0 {
				t.Fatalf("bash ran the marker: %q", ran)
			}
			if an := Analyze(cmd, Options{Cwd: sandbox.Dir, Home: sandbox.Dir}); !an.OK {
				t.Errorf("not OK: %q", an.Problems)
			}
		})
	}
}
