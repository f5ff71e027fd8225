package policy

import (
	"strings"
	"testing"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/shell"
)

func FuzzFloor(f *testing.F) {
	for _, tc := range floorCases {
		f.Add(tc.cmd)
	}
	for _, cmd := range nearMisses {
		f.Add(cmd)
	}
	j, err := NewExecJudge(ExecConfig{Path: "/usr/bin:/bin", Allowlist: []AllowlistEntry{{Pattern: "/usr/bin/*"}}}, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		got := j.Judge(CommandInput{Command: cmd, Cwd: testCwd})
		switch {
		case got.Source == approval.SourceFloor && got.Verdict != Deny:
			t.Fatalf("floor without deny: %v", got.Verdict)
		case got.Verdict == Allow && (!got.AnalysisOK || !got.AllowlistSatisfied):
			t.Fatalf("allowed with ok=%v satisfied=%v", got.AnalysisOK, got.AllowlistSatisfied)
		case got.Verdict == Allow && len(got.Problems) > 0:
			t.Fatalf("allowed with problems %q", got.Problems)
		}
		an := shell.Analyze(cmd, shell.Options{Cwd: testCwd, Home: testHome})
		for _, p := range an.Problems {
			if strings.HasPrefix(p, "internal error") {
				t.Fatalf("%s", p)
			}
		}
		h, hit := CheckFloor(an)
		if !hit || h.Rule == FloorTooComplex || !an.Parsed || strings.ContainsAny(cmd, "$`\\\x00") || len(cmd) > 2000 {
			return
		}
		if t := strings.TrimLeft(cmd, " \t\n"); strings.HasPrefix(t, "-") || strings.HasPrefix(t, "+") {
			return // bash -c would read it as an option, as real bash does
		}
		// Whatever the floor refuses, it refuses when wrapped.
		for _, wrapped := range []string{
			"bash -c " + quotePosix(cmd),
			"eval " + quotePosix(cmd),
			"sh <<< " + quotePosix(cmd),
		} {
			an2 := shell.Analyze(wrapped, shell.Options{Cwd: testCwd, Home: testHome})
			if _, ok := CheckFloor(an2); !ok {
				t.Fatalf("floor refuses %q (%s) but not %q", cmd, h.Rule, wrapped)
			}
		}
	})
}

func quotePosix(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
