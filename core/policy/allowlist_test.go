package policy

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/approvebot/approvebot/core/shell"
)

func TestAllowlistMatch(t *testing.T) {
	cases := []struct {
		pattern, path, agent, entryAgent string
		want                             bool
	}{
		{"/usr/bin/ls", "/usr/bin/ls", "", "", true},
		{"/usr/bin/ls", "/usr/bin/lsblk", "", "", false},
		{"/usr/bin/ls", "/usr/bin", "", "", false},
		{"/usr/bin//ls", "/usr/bin/ls", "", "", true},
		{"/usr/bin/./ls", "/usr/bin/ls", "", "", true},
		{"/usr/local/*", "/usr/local/bin/node", "", "", true},
		{"/usr/local/*", "/usr/local", "", "", false},
		{"/usr/local/*", "/usr/localx/bin", "", "", false},
		{"/usr/local/bin/*", "/usr/local/bin/node", "", "", true},
		{"/usr/bin/python3*", "/usr/bin/python3.12", "", "", true},
		{"/usr/bin/python3*", "/usr/bin/python3/x", "", "", false},
		{"/home/*/.cargo/bin/cargo", "/home/ann/.cargo/bin/cargo", "", "", true},
		{"/home/*/.cargo/bin/cargo", "/home/ann/x/.cargo/bin/cargo", "", "", false},
		{"/nix/store/**/bin/node", "/nix/store/abc-node-20/bin/node", "", "", true},
		{"/nix/store/**/bin/node", "/nix/store/a/b/c/bin/node", "", "", true},
		{"/nix/store/**", "/nix/store/a/b", "", "", true},
		{"/opt/tool-?/bin/t", "/opt/tool-1/bin/t", "", "", true},
		{"/opt/tool-?/bin/t", "/opt/tool-12/bin/t", "", "", false},
		{"/opt/v[0-9]/bin/*", "/opt/v3/bin/x", "", "", true},
		{"/opt/v[!0-9]/bin/*", "/opt/v3/bin/x", "", "", false},
		{`/opt/we\*rd/tool`, "/opt/we*rd/tool", "", "", true},
		{`/opt/we\*rd/tool`, "/opt/weXrd/tool", "", "", false},
		{"~/bin/*", "/home/agent/bin/tool", "", "", true},
		{`C:\Tools\*`, `c:/tools/x.exe`, "", "", true},
		{`C:\Tools\git.exe`, `C:\TOOLS\GIT.EXE`, "", "", true},
		{"/usr/bin/kubectl", "/usr/bin/kubectl", "ops", "ops", true},
		{"/usr/bin/kubectl", "/usr/bin/kubectl", "dev", "ops", false},
		{"/usr/bin/kubectl", "/usr/bin/kubectl", "", "ops", false},
	}
	for _, tc := range cases {
		t.Run(tc.pattern+" "+tc.path, func(t *testing.T) {
			a, err := CompileAllowlist([]AllowlistEntry{{Pattern: tc.pattern, Agent: tc.entryAgent}}, "/home/agent")
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := a.Match(tc.path, "", tc.agent); ok != tc.want {
				t.Fatalf("match = %v, want %v", ok, tc.want)
			}
		})
	}
}

func TestAllowlistRealPathAndOrder(t *testing.T) {
	a, err := CompileAllowlist([]AllowlistEntry{
		{Pattern: "/usr/lib/node_modules/eslint/*"},
		{Pattern: "/usr/bin/*"},
		{Pattern: "/usr/bin/git"},
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	e, ok := a.Match("/usr/local/bin/eslint", "/usr/lib/node_modules/eslint/bin/eslint.js", "")
	if !ok || e.Pattern != "/usr/lib/node_modules/eslint/*" {
		t.Fatalf("real path: %v %v", e, ok)
	}
	if e, _ := a.Match("/usr/bin/git", "", ""); e.Pattern != "/usr/bin/*" {
		t.Fatalf("first match wins: %v", e)
	}
	if _, ok := a.Match("", "", ""); ok {
		t.Fatal("empty path matched")
	}
	var nilList *Allowlist
	if _, ok := nilList.Match("/usr/bin/git", "", ""); ok {
		t.Fatal("nil allowlist matched")
	}
}

func TestAllowlistInvalid(t *testing.T) {
	for _, p := range []string{"", "  ", "ls", "bin/*", "./x", "/usr/bin/[ab", `/usr/bin/x\`, "/usr/\x00bin"} {
		_, err := CompileAllowlist([]AllowlistEntry{{Pattern: "/ok"}, {Pattern: p}}, "/home/agent")
		if err == nil || !strings.Contains(err.Error(), "policy.exec.allowlist[1].pattern") {
			t.Errorf("%q: err = %v", p, err)
		}
	}
	if _, err := CompileAllowlist([]AllowlistEntry{{Pattern: "~/bin"}}, ""); err == nil {
		t.Error("~ without a home directory accepted")
	}
}

func TestGlobMatchers(t *testing.T) {
	for _, tc := range []struct {
		p, s string
		want bool
	}{
		{"push --force*", "push --force", true},
		{"push --force*", "push --force-with-lease origin main", true},
		{"push --force*", "push origin --force", false},
		{"push *--force*", "push origin --force", true},
		{"delete *", "delete pod x", true},
		{"delete *", "delete", false},
		{"a?c", "abc", true},
		{"a[bc]d", "acd", true},
		{`a\*`, "a*", true},
		{`a\*`, "ab", false},
		{"*a*a*a*a*a*b", strings.Repeat("a", 2000), false},
	} {
		if got := shell.Match(tc.p, tc.s); got != tc.want {
			t.Errorf("shell.Match(%q, %q) = %v", tc.p, tc.s, got)
		}
	}
}

func TestAllowlistArgs(t *testing.T) {
	entries := []AllowlistEntry{
		{Pattern: "/usr/bin/npm", Args: "test"},
		{Pattern: "/usr/bin/npm", Args: "run build *"},
		{Pattern: "/usr/bin/git", Args: "log *"},
		{Pattern: "/usr/bin/make", Args: "*"},
		{Pattern: "/usr/bin/go", Args: "  test   ./...  "},
	}
	a, err := CompileAllowlist(entries, "/home/agent")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		args []string
		want string // the matching entry's args, "-" for none
	}{
		{"/usr/bin/npm", []string{"test"}, "test"},
		{"/usr/bin/npm", []string{"test", "--watch"}, "-"},
		{"/usr/bin/npm", []string{"publish"}, "-"},
		{"/usr/bin/npm", nil, "-"},
		{"/usr/bin/npm", []string{"run", "build"}, "run build *"},
		{"/usr/bin/npm", []string{"run", "build", "--", "--prod"}, "run build *"},
		{"/usr/bin/npm", []string{"run", "buildx"}, "-"},
		{"/usr/bin/npm", []string{"run", "lint"}, "-"},
		{"/usr/bin/git", []string{"log"}, "log *"},
		{"/usr/bin/git", []string{"log", "--oneline", "-5"}, "log *"},
		{"/usr/bin/git", []string{"push"}, "-"},
		{"/usr/bin/make", nil, "*"},
		{"/usr/bin/make", []string{"deploy"}, "*"},
		{"/usr/bin/go", []string{"test", "./..."}, "  test   ./...  "},
	} {
		e, ok := a.MatchArgs(tc.path, "", "agent", tc.args)
		got := "-"
		if ok {
			got = e.Args
		}
		if got != tc.want {
			t.Errorf("%s %q: matched %q, want %q", tc.path, tc.args, got, tc.want)
		}
	}
	// Match (no arguments known) never uses an entry with an argv pattern.
	if _, ok := a.Match("/usr/bin/npm", "", "agent"); ok {
		t.Error("Match used an argv-pattern entry")
	}
	if _, err := CompileAllowlist([]AllowlistEntry{{Pattern: "/usr/bin/npm", Args: "[x"}}, ""); err == nil ||
		!strings.Contains(err.Error(), "policy.exec.allowlist[0].args") {
		t.Errorf("bad args glob: %v", err)
	}
}

// The judge: an entry with an argv pattern allows only the calls it names, and a command
// hidden in the arguments is still judged on its own.
func TestJudgeAllowlistArgs(t *testing.T) {
	env := newTestEnv(t)
	j := env.judge(t, ExecConfig{SafeBins: []string{}, Allowlist: []AllowlistEntry{
		{Pattern: env.bin + "/npm", Args: "test"},
		{Pattern: env.bin + "/npm", Args: "run lint *"},
		{Pattern: env.bin + "/git", Args: "status"},
		{Pattern: env.bin + "/find", Args: "*"},
	}})
	for _, tc := range []struct {
		cmd  string
		want Verdict
	}{
		{"npm test", Allow},
		{"npm publish", Ask},
		{"npm test && npm publish", Ask},
		{"npm run lint", Allow},
		{"npm run lint -- --fix", Allow},
		{"npm run deploy", Ask},
		{"git status", Allow},
		{"git -c core.pager=sh status", Ask},
		{"find . -name x", Allow},
		{"find . -exec rm -rf build \\;", Ask}, // rm is judged on its own
	} {
		got := j.Judge(CommandInput{Command: tc.cmd, Cwd: "/srv/proj"})
		if got.Verdict != tc.want {
			t.Errorf("%s: %v (%s), want %v", tc.cmd, got.Verdict, got.Reason, tc.want)
		}
	}
	got := j.Judge(CommandInput{Command: "npm publish", Cwd: "/srv/proj"})
	if !strings.Contains(got.Reason, `allowlisted only for the arguments "test"`) || got.Segments[0].ArgsOnly != "test" {
		t.Errorf("the reason should say the entry is for other arguments: %q %+v", got.Reason, got.Segments)
	}
}

// The index must answer exactly what a scan in configuration order answers: random entries
// of every kind, random paths, agents and arguments.
func TestAllowlistIndexAgreesWithScan(t *testing.T) {
	dirs := []string{"/usr/bin", "/usr/local/bin", "/opt/a", "/opt/a/b", "/home/x/.cargo/bin", "/nix/store/h-n/bin"}
	names := []string{"ls", "git", "node", "python3", "python3.12", "cargo", "x"}
	agents := []string{"", "dev", "ops"}
	argsPats := []string{"", "", "", "test", "test *", "*"}
	r := newRand(7)
	for round := 0; round < 300; round++ {
		var entries []AllowlistEntry
		for n := r.Intn(20) + 1; n > 0; n-- {
			d, nm := dirs[r.Intn(len(dirs))], names[r.Intn(len(names))]
			var p string
			switch r.Intn(5) {
			case 0, 1:
				p = d + "/" + nm
			case 2:
				p = d + "/*"
			case 3:
				p = d + "/" + nm[:1] + "*"
			default:
				p = "/**/" + nm
			}
			entries = append(entries, AllowlistEntry{Pattern: p, Agent: agents[r.Intn(len(agents))], Args: argsPats[r.Intn(len(argsPats))]})
		}
		a, err := CompileAllowlist(entries, "/home/x")
		if err != nil {
			t.Fatal(err)
		}
		for k := 0; k < 30; k++ {
			path := dirs[r.Intn(len(dirs))] + "/" + names[r.Intn(len(names))]
			real := ""
			if r.Intn(3) == 0 {
				real = dirs[r.Intn(len(dirs))] + "/" + names[r.Intn(len(names))]
			}
			agent := agents[r.Intn(len(agents))]
			words := [][]string{nil, {"test"}, {"test", "x"}, {"run"}}[r.Intn(4)]
			q := allowQuery{resolved: path, real: real, agent: agent, words: words}
			got, gok := a.first(&q)
			q2 := allowQuery{resolved: path, real: real, agent: agent, words: words}
			want, wok := -1, false
			for i := range a.pats {
				p := &a.pats[i]
				if (p.match(path) || real != "" && real != path && p.match(real)) && q2.accepts(p) {
					want, wok = i, true
					break
				}
			}
			if gok != wok || gok && got != &a.pats[want] {
				t.Fatalf("entries %+v, %s (real %s) agent %q args %q: index says %v %+v, scan says %v #%d",
					entries, path, real, agent, words, gok, got, wok, want)
			}
		}
	}
}

func newRand(seed int64) *rand.Rand { return rand.New(rand.NewSource(seed)) }
