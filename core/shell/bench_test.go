package shell

import "testing"

// BenchmarkAnalyze is the analysis alone for the commands of policy's BenchmarkCheck.
func BenchmarkAnalyze(b *testing.B) {
	for _, bc := range []struct{ name, cmd string }{
		{"simple", "ls -la /tmp"},
		{"chain5", "cd /repo && git status && ls -la | grep foo ; echo done || true"},
		{"wrapped", `bash -lc "ls /tmp && cat x"`},
		{"parsed", `for f in *.go; do wc -l "$f"; done`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Analyze(bc.cmd, Options{Cwd: "/repo", Home: "/home/u"}).Release()
			}
		})
	}
}
