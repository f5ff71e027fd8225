package policy

import (
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
