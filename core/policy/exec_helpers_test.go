package policy

import (
	"os"
	"path/filepath"
	"testing"
)

// testEnv is a hermetic PATH: fake executables in a temporary bin directory, trusted for safe
// bins, so that tests do not depend on the machine's /usr/bin.
type testEnv struct {
	root string
	bin  string
}

var testBins = []string{
	"ls", "cat", "grep", "git", "sh", "bash", "zsh", "rm", "sudo", "env", "python3", "sed", "find",
	"sort", "base64", "rg", "uniq", "head", "tail", "wc", "cut", "tr", "jq", "echo", "true", "curl",
	"kubectl", "terraform", "npm", "npx", "xargs", "nice", "timeout", "cp", "dd", "tee", "date", "tree",
	"ssh", "make", "node", "awk", "diff", "file", "stat", "yq", "xxd", "uname",
}

func newTestEnv(tb testing.TB) *testEnv {
	tb.Helper()
	root := tb.TempDir()
	e := &testEnv{root: root, bin: filepath.Join(root, "bin")}
	if err := os.MkdirAll(e.bin, 0o755); err != nil {
		tb.Fatal(err)
	}
	for _, b := range testBins {
		e.exe(tb, filepath.Join(e.bin, b))
	}
	return e
}

// exe creates an executable file.
func (e *testEnv) exe(tb testing.TB, p string) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
		tb.Fatal(err)
	}
}

// judge builds a judge on the test PATH; the bin directory is the only trusted one unless cfg
// says otherwise.
func (e *testEnv) judge(tb testing.TB, cfg ExecConfig) *ExecJudge {
	tb.Helper()
	if cfg.Path == "" {
		cfg.Path = e.bin
	}
	if cfg.TrustedDirs == nil {
		cfg.TrustedDirs = []string{e.bin}
	}
	j, err := NewExecJudge(cfg, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return j
}

// fakePersisted is a run-time allowlist whose entries can change between judgements.
type fakePersisted struct{ entries []AllowlistEntry }

func (f *fakePersisted) AllowlistEntries() []AllowlistEntry { return f.entries }
