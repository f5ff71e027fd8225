package shell

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func writeExe(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestResolve(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	writeExe(t, filepath.Join(b, "tool"))
	writeExe(t, filepath.Join(a, "other"))
	if err := os.WriteFile(filepath.Join(a, "notexec"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(a, "dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeExe(t, filepath.Join(root, "proj", "node_modules", ".bin", "eslint"))
	writeExe(t, filepath.Join(root, "proj", "scripts", "build.sh"))
	r := NewResolver(a+string(os.PathListSeparator)+"relative"+string(os.PathListSeparator)+b, 0)
	if len(r.Dirs()) != 2 {
		t.Fatalf("relative PATH entries must be ignored: %q", r.Dirs())
	}
	cases := []struct{ name, cwd, local, want string }{
		{"tool", "", "", filepath.Join(b, "tool")},
		{"other", "", "", filepath.Join(a, "other")},
		{"notexec", "", "", ""},
		{"dir", "", "", ""},
		{"missing", "", "", ""},
		{"eslint", filepath.Join(root, "proj", "src"), "node_modules/.bin", filepath.Join(root, "proj", "node_modules", ".bin", "eslint")},
		{"eslint", filepath.Join(root, "proj"), "", ""},
		{"./scripts/build.sh", filepath.Join(root, "proj"), "", filepath.Join(root, "proj", "scripts", "build.sh")},
		{"scripts/../scripts/build.sh", filepath.Join(root, "proj"), "", filepath.Join(root, "proj", "scripts", "build.sh")},
		{"./scripts/build.sh", "", "", ""},
		{filepath.Join(b, "tool"), "", "", filepath.Join(b, "tool")},
		{"", "", "", ""},
	}
	for _, tc := range cases {
		if got := r.Resolve(tc.name, tc.cwd, tc.local).Path; got != tc.want {
			t.Errorf("Resolve(%q, %q, %q) = %q, want %q", tc.name, tc.cwd, tc.local, got, tc.want)
		}
	}
}

func TestResolveCacheExpiresAndInvalidates(t *testing.T) {
	dir := t.TempDir()
	r := NewResolver(dir, time.Minute)
	now := time.Unix(1000, 0)
	r.SetClock(func() time.Time { return now })
	tool := filepath.Join(dir, "tool")
	if got := r.Resolve("tool", "", "").Path; got != "" {
		t.Fatalf("before creation: %q", got)
	}
	writeExe(t, tool)
	if got := r.Resolve("tool", "", "").Path; got != "" {
		t.Fatalf("negative answer should be cached: %q", got)
	}
	now = now.Add(2 * time.Minute)
	if got := r.Resolve("tool", "", "").Path; got != tool {
		t.Fatalf("after expiry: %q", got)
	}
	if err := os.Remove(tool); err != nil {
		t.Fatal(err)
	}
	if got := r.Resolve("tool", "", "").Path; got != tool {
		t.Fatalf("positive answer should be cached: %q", got)
	}
	r.Invalidate()
	if got := r.Resolve("tool", "", "").Path; got != "" {
		t.Fatalf("after Invalidate: %q", got)
	}
	// Symlinks: Real is the target.
	target := filepath.Join(dir, "real-tool")
	writeExe(t, target)
	if err := os.Symlink(target, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	res := r.Resolve("link", "", "")
	if res.Path != filepath.Join(dir, "link") || res.Real != target {
		t.Fatalf("symlink: %+v", res)
	}
}
