package shell

import (
	"slices"
	"testing"
)

// The policy decides per program which exported names matter: the names are listed, and "*"
// stands for exports it cannot name.
func TestEnvExportedNames(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		want []string
	}{
		{"ls", nil},
		{"export FOO=bar; ls", []string{"FOO"}},
		{"FOO=1; export FOO; ls", []string{"FOO"}},
		{"export A=1 B=2; ls", []string{"A", "B"}},
		{"declare -x TMPDIR=/tmp; sort x", []string{"TMPDIR"}},
		{"export LC_ALL=C; ls", nil},
		{"set -a; X=1; ls", []string{"*"}},
		{"set -o allexport; X=1; ls", []string{"*"}},
		{"f(){ :; }; export -f f; ls", []string{"*", "f"}},
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			an := Analyze(tc.cmd, Options{Cwd: "/repo", Home: "/home/u"})
			if !slices.Equal(an.EnvExportedNames, tc.want) {
				t.Errorf("EnvExportedNames = %q, want %q", an.EnvExportedNames, tc.want)
			}
			if an.EnvExported != (len(tc.want) > 0) {
				t.Errorf("EnvExported = %v with names %q", an.EnvExported, tc.want)
			}
		})
	}
}

// xargs -a FILE reads its words from FILE: the command it runs is said to read that file.
func TestXargsArgFileIsRead(t *testing.T) {
	for _, tc := range []struct{ cmd, want string }{
		{"xargs -a list.txt echo", "list.txt"},
		{"xargs --arg-file=/home/u/.netrc echo", "/home/u/.netrc"},
		{"xargs --arg-file ~/.ssh/id_rsa cat", "/home/u/.ssh/id_rsa"},
		{"find . | xargs -0 -a names wc -l", "names"},
		{"find . | xargs wc -l", ""},
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			an := Analyze(tc.cmd, Options{Cwd: "/repo", Home: "/home/u"})
			got := ""
			for _, s := range an.Segments {
				for _, r := range s.Reads {
					if r.Op == "xargs -a" && s.MoreArgs {
						got = r.Target
					}
				}
			}
			if got != tc.want {
				t.Errorf("xargs -a read %q, want %q", got, tc.want)
			}
		})
	}
}
