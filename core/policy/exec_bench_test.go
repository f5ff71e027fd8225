package policy

import (
	"fmt"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// benchAllowlist is ten patterns of the three kinds; the benchmark path matches the last.
var benchAllowlist = []AllowlistEntry{
	{Pattern: "/usr/bin/git"},
	{Pattern: "/usr/bin/make"},
	{Pattern: "/opt/homebrew/bin/*"},
	{Pattern: "/usr/local/go/bin/*"},
	{Pattern: "/home/*/.cargo/bin/cargo"},
	{Pattern: "/usr/bin/python3*"},
	{Pattern: "/nix/store/**/bin/node"},
	{Pattern: "/usr/bin/kubectl", Agent: "ops"},
	{Pattern: "/usr/sbin/*"},
	{Pattern: "/usr/bin/ls"},
}

// BenchmarkAllowlistMatch matches a resolved path against ten patterns (seed 003: 5.5 µs p50;
// target 0.25 µs).
func BenchmarkAllowlistMatch(b *testing.B) {
	a, err := CompileAllowlist(benchAllowlist, "/home/agent")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := a.Match("/usr/bin/ls", "/usr/bin/ls", "agent"); !ok {
			b.Fatal("no match")
		}
	}
}

// BenchmarkAllowlistMatchLarge is BenchmarkAllowlistMatch against 1,000 and 10,000 entries
// (exact paths, as "allow always" persists them, directory prefixes and globs, with the
// benchmark's ten among them), the match again the last entry: the index keeps it within 2×
// of ten entries.
func BenchmarkAllowlistMatchLarge(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		entries := make([]AllowlistEntry, 0, n)
		for i := 0; len(entries) < n-len(benchAllowlist); i++ {
			switch i % 10 {
			case 0:
				entries = append(entries, AllowlistEntry{Pattern: fmt.Sprintf("/opt/pkg-%d/*", i)})
			case 1:
				entries = append(entries, AllowlistEntry{Pattern: fmt.Sprintf("/opt/tools/t%d-*", i)})
			case 2:
				entries = append(entries, AllowlistEntry{Pattern: fmt.Sprintf("/usr/bin/tool-%d", i), Agent: "ops"})
			default:
				entries = append(entries, AllowlistEntry{Pattern: fmt.Sprintf("/home/agent/.local/bin/t%d", i)})
			}
		}
		entries = append(entries, benchAllowlist...)
		a, err := CompileAllowlist(entries, "/home/agent")
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if e, ok := a.Match("/usr/bin/ls", "/usr/bin/ls", "agent"); !ok || e.Pattern != "/usr/bin/ls" {
					b.Fatal("no match")
				}
			}
		})
	}
}

// BenchmarkCheck is the full check of a command line: parse, analysis, resolution (cached),
// floor, rules, allowlist and safe bins. Seed 003's reference: 63 µs, 270 µs and 174 µs p50;
// the targets are 3 µs, 13 µs and 9 µs.
func BenchmarkCheck(b *testing.B) {
	env := newTestEnv(b)
	j := env.judge(b, ExecConfig{
		Allowlist: append([]AllowlistEntry{{Pattern: env.bin + "/git"}}, benchAllowlist...),
		Rules: []Rule{
			{Name: "no-force-push", Executable: "git", Args: "push --force*", Action: "deny"},
			{Name: "kubectl-delete", Executable: "kubectl", Args: "delete *", Action: "ask"},
		},
	})
	for _, bc := range []struct{ name, cmd string }{
		{"simple", "ls -la /tmp"},
		{"chain5", "cd /repo && git status && ls -la | grep foo ; echo done || true"},
		{"wrapped", `bash -lc "ls /tmp && cat x"`},
	} {
		in := CommandInput{Command: bc.cmd, Cwd: "/repo", Agent: "agent"}
		if got := j.Judge(in); got.Verdict != Allow {
			b.Fatalf("%s: %v %s %s", bc.name, got.Verdict, got.Rule, got.Reason)
		}
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				j.Judge(in)
			}
		})
	}
}

// BenchmarkParseBaseline is what mvdan.cc/sh alone costs for the BenchmarkCheck commands
// (parse and walk), to read BenchmarkCheck against on a busy machine.
func BenchmarkParseBaseline(b *testing.B) {
	for _, bc := range []struct{ name, cmd string }{
		{"simple", "ls -la /tmp"},
		{"chain5", "cd /repo && git status && ls -la | grep foo ; echo done || true"},
		{"wrapped", `bash -lc "ls /tmp && cat x"`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			p := syntax.NewParser()
			for b.Loop() {
				f, err := p.Parse(strings.NewReader(bc.cmd), "")
				if err != nil {
					b.Fatal(err)
				}
				syntax.Walk(f, func(syntax.Node) bool { return true })
			}
		})
	}
}
