package main

import (
	"net/url"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/approvebot/approvebot/internal/testserver"
)

// With allow_always = "persist", a human's "allow always" stores the command's resolved
// executables in the allowlist: later calls of that executable are allowed by policy, in
// any session, until an operator revokes the entry.
func TestAllowAlwaysPersistsAndRevokes(t *testing.T) {
	t.Parallel()
	mkfifo, err := exec.LookPath("mkfifo")
	if err != nil {
		t.Skip("no mkfifo on PATH")
	}
	mkfifo, _ = filepath.EvalSymlinks(mkfifo)
	s := testserver.Start(t, testserver.Options{Config: "[policy]\nallow_always = \"persist\"\n"})
	// The entry covers running mkfifo (not a safe bin); what it makes must stay in the project
	// (the cwd).
	inProject := func(session, command string) map[string]any {
		m := bash(session, command)
		m["cwd"] = "/srv/project"
		return m
	}
	id := pendingID(t, s, inProject("p1", "mkfifo persist-a"))
	code, m := decide(t, s, id, "allow_always", "")
	if code != 200 {
		t.Fatalf("decide: %d %v", code, m)
	}
	want(t, m, "outcome", "allow_always", "allowed", true, "source", "human")

	_, list := s.JSON(t, "GET", "/v1/allowlist", operator, nil)
	entries := list["entries"].([]any)
	if len(entries) != 1 {
		t.Fatalf("allowlist: %v", list)
	}
	pattern := entries[0].(map[string]any)["pattern"].(string)
	if pattern != mkfifo && filepath.Base(pattern) != "mkfifo" {
		t.Fatalf("persisted pattern %q, want the resolved mkfifo (%s)", pattern, mkfifo)
	}
	// Another file, another session: allowed by the persisted entry.
	_, m = ask(t, s, inProject("p2", "mkfifo persist-b"))
	want(t, m, "allowed", true, "source", "policy")
	// Outside the project, the entry does not cover the effect.
	pendingID(t, s, inProject("p2", "mkfifo /tmp/approvebot-persist-b"))
	// Another executable still asks.
	pendingID(t, s, inProject("p2", "ln -s a persist-c"))
	// The entry survives a restart.
	s2 := s.Restart(t)
	_, m = ask(t, s2, inProject("p3", "mkfifo persist-d"))
	want(t, m, "allowed", true, "source", "policy")

	if code, m := s2.JSON(t, "DELETE", "/v1/allowlist?pattern="+url.QueryEscape(pattern), agent, nil); code != 403 {
		t.Fatalf("agent revoked: %d %v", code, m)
	}
	if code, m := s2.JSON(t, "DELETE", "/v1/allowlist?pattern="+url.QueryEscape(pattern), operator, nil); code != 200 {
		t.Fatalf("revoke: %d %v", code, m)
	}
	pendingID(t, s2, inProject("p3", "mkfifo persist-e"))
}
