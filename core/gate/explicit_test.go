package gate_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/policy"
)

// fakeBins makes a hermetic PATH of empty executables, trusted for safe bins.
func fakeBins(t *testing.T, names ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "bin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Explicit travels from the policy onto the request: set for a tool permission, an
// allowlist or safe-bin match, a grant and a human; never for a tier-default allow, a
// fallback allow or a refusal. The stored record says the same as the returned one.
func TestExplicitOnRequest(t *testing.T) {
	bin := fakeBins(t, "ls", "make", "deploy")
	cfg := policy.Config{
		ToolPermissions: map[string]string{"read_file": "allow"},
		Exec:            policy.ExecConfig{Path: bin, TrustedDirs: []string{bin}, Allowlist: []policy.AllowlistEntry{{Pattern: bin + "/make"}}},
	}
	e := newEnv(t, cfg, gate.Options{OperatorOnly: true})
	ctx := context.Background()
	agent := gate.Caller{Name: "agent"}
	check := func(t *testing.T, rec approval.Request, allowed, explicit bool, source approval.Source) {
		t.Helper()
		if rec.Allowed != allowed || rec.Explicit != explicit || rec.Source != source {
			t.Fatalf("allowed=%v explicit=%v source=%s, want %v %v %s (%+v)", rec.Allowed, rec.Explicit, rec.Source, allowed, explicit, source, rec)
		}
		stored, err := e.st.Get(ctx, rec.ID)
		if err != nil || stored.Explicit != rec.Explicit || stored.Allowed != rec.Allowed {
			t.Fatalf("stored %+v, returned %+v (%v)", stored, rec, err)
		}
	}
	submit := func(t *testing.T, a gate.Ask) approval.Request {
		t.Helper()
		rec, err := e.g.Submit(ctx, a, agent)
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	t.Run("tool permission", func(t *testing.T) {
		check(t, submit(t, gate.Ask{Tool: "read_file", Args: map[string]any{"path": "a"}, Session: "s"}), true, true, approval.SourcePolicy)
	})
	t.Run("tier default", func(t *testing.T) {
		check(t, submit(t, gate.Ask{Tool: "write_file", Args: map[string]any{"path": "a"}, Session: "s"}), true, false, approval.SourcePolicy)
	})
	t.Run("safe bin and builtin", func(t *testing.T) {
		check(t, submit(t, askBash("cd src && ls", "s")), true, true, approval.SourcePolicy)
	})
	t.Run("allowlist", func(t *testing.T) {
		check(t, submit(t, askBash("make test", "s")), true, true, approval.SourcePolicy)
	})
	t.Run("floor", func(t *testing.T) {
		check(t, submit(t, askBash("rm -rf /", "s")), false, false, approval.SourceFloor)
	})
	t.Run("human once", func(t *testing.T) {
		rec := submit(t, askBash("deploy once", "h"))
		if rec.State != approval.StatePending || rec.Explicit {
			t.Fatalf("%+v", rec)
		}
		got, err := e.g.Decide(ctx, rec.ID, gate.Decision{Outcome: approval.OutcomeAllowOnce, DecidedBy: "op"})
		if err != nil {
			t.Fatal(err)
		}
		check(t, got, true, true, approval.SourceHuman)
	})
	t.Run("human deny", func(t *testing.T) {
		rec := submit(t, askBash("deploy denied", "h"))
		got, err := e.g.Decide(ctx, rec.ID, gate.Decision{Outcome: approval.OutcomeDeny, DecidedBy: "op"})
		if err != nil {
			t.Fatal(err)
		}
		check(t, got, false, false, approval.SourceHuman)
	})
	t.Run("grant", func(t *testing.T) {
		rec := submit(t, askBash("deploy granted", "g"))
		got, err := e.g.Decide(ctx, rec.ID, gate.Decision{Outcome: approval.OutcomeAllowSession, DecidedBy: "op"})
		if err != nil {
			t.Fatal(err)
		}
		check(t, got, true, true, approval.SourceHuman)
		check(t, submit(t, askBash("deploy granted", "g")), true, true, approval.SourceGrant)
	})
	t.Run("timeout", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			short := newEnv(t, cfg, gate.Options{OperatorOnly: true})
			rec, err := short.g.Submit(ctx, askBash("deploy late", "t"), agent)
			if err != nil {
				t.Fatal(err)
			}
			got, err := short.g.Wait(ctx, rec.ID, 5*time.Minute)
			if err != nil || got.Outcome != approval.OutcomeTimeout || got.Explicit {
				t.Fatalf("%+v %v", got, err)
			}
		})
	})
	t.Run("fallback allow", func(t *testing.T) {
		fb := cfg
		fb.AskFallback = "allowlist"
		fb.Exec.Ask = "always"
		down := &fakeChannel{name: "telegram"} // no chats: nothing can deliver
		fe := newEnv(t, fb, gate.Options{}, down)
		got, err := fe.g.Submit(ctx, askBash("make test", "f"), agent)
		if err != nil || !got.Allowed || got.Source != approval.SourceFallback || got.Explicit {
			t.Fatalf("%+v %v", got, err)
		}
	})
}
