package gate_test

import (
	"context"
	"testing"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/policy"
)

func shellFP(t *testing.T, tool string, args map[string]any, cwd string) string {
	t.Helper()
	fp, err := gate.ShellFingerprint(tool, args, cwd)
	if err != nil {
		t.Fatal(err)
	}
	return fp
}

// A shell tool's fingerprint covers what runs — command, cwd, anything that changes how it
// runs — and not the agent's metadata about it.
func TestShellFingerprintCoversWhatRuns(t *testing.T) {
	base := map[string]any{"command": "rm -rf ./build"}
	want := shellFP(t, "Bash", base, "/repo")
	same := []struct {
		name string
		args map[string]any
	}{
		{"description", map[string]any{"command": "rm -rf ./build", "description": "Clean the build"}},
		{"reworded description", map[string]any{"command": "rm -rf ./build", "description": "Tidy up"}},
		{"timeout", map[string]any{"command": "rm -rf ./build", "timeout": 120000}},
		{"run_in_background", map[string]any{"command": "rm -rf ./build", "run_in_background": true}},
		{"gemini metadata", map[string]any{"command": "rm -rf ./build", "is_background": false, "delay_ms": 10}},
		{"all of them", map[string]any{"command": "rm -rf ./build", "description": "x", "timeout": 1, "run_in_background": false}},
	}
	for _, c := range same {
		t.Run("same/"+c.name, func(t *testing.T) {
			if got := shellFP(t, "Bash", c.args, "/repo"); got != want {
				t.Fatalf("metadata %s changed the fingerprint", c.name)
			}
		})
	}
	differ := []struct {
		name, tool, cwd string
		args            map[string]any
	}{
		{"command", "Bash", "/repo", map[string]any{"command": "rm -rf ./dist"}},
		{"cwd", "Bash", "/", base},
		{"tool", "PowerShell", "/repo", base},
		{"sandbox escape", "Bash", "/repo", map[string]any{"command": "rm -rf ./build", "dangerouslyDisableSandbox": true}},
		{"unknown argument", "Bash", "/repo", map[string]any{"command": "rm -rf ./build", "env": map[string]any{"X": "1"}}},
		{"metadata key in other case", "Bash", "/repo", map[string]any{"command": "rm -rf ./build", "Description": "x"}},
	}
	for _, c := range differ {
		t.Run("differs/"+c.name, func(t *testing.T) {
			if got := shellFP(t, c.tool, c.args, c.cwd); got == want {
				t.Fatalf("%s is not in the fingerprint", c.name)
			}
		})
	}
	t.Run("not the encoding of a non-shell call", func(t *testing.T) {
		canon, _ := gate.Canonical(base)
		if gate.Fingerprint("Bash", canon, "/repo") == want {
			t.Fatal("a shell fingerprint equals the old encoding: stored fingerprints would keep matching")
		}
	})
	t.Run("non-shell tools keep every argument", func(t *testing.T) {
		a := map[string]any{"file_path": "/x", "description": "one"}
		b := map[string]any{"file_path": "/x", "description": "two"}
		ca, _ := gate.Canonical(a)
		cb, _ := gate.Canonical(b)
		fa, _ := gate.CallFingerprint("Write", a, ca, "/", false)
		fb, _ := gate.CallFingerprint("Write", b, cb, "/", false)
		if fa == fb {
			t.Fatal("a non-shell tool's description left the fingerprint")
		}
	})
}

// Through the gate: a human's denial of a Bash call is the ledger's answer to the same
// command described differently, and a session grant survives rewording — for Bash and
// PowerShell alike; another cwd is another call.
func TestGateShellFingerprintLedgerAndGrant(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, policy.Config{ExecTier: "ask"}, gate.Options{OperatorOnly: true})
	caller := gate.Caller{Name: "agent"}
	ask := func(tool, cmd, desc, cwd string) approval.Request {
		t.Helper()
		a := gate.Ask{Tool: tool, Args: map[string]any{"command": cmd, "description": desc, "timeout": 1000}, Session: "s", Cwd: cwd}
		rec, err := e.g.Submit(ctx, a, caller)
		if err != nil {
			t.Fatal(err)
		}
		return rec
	}
	decide := func(id string, o approval.Outcome) {
		t.Helper()
		if _, err := e.g.Decide(ctx, id, gate.Decision{Outcome: o, DecidedBy: "op", Reason: "no"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tool := range []string{"Bash", "PowerShell"} {
		t.Run(tool, func(t *testing.T) {
			r := ask(tool, "make deploy", "Deploy", "/repo")
			if r.State != approval.StatePending {
				t.Fatalf("want pending: %+v", r)
			}
			decide(r.ID, approval.OutcomeDeny)
			again := ask(tool, "make deploy", "Ship it, it is fine", "/repo")
			if again.State != approval.StateDenied || again.Source != approval.SourceLedger {
				t.Fatalf("reworded repeat of a denied call: %+v", again)
			}
			if other := ask(tool, "make deploy", "Deploy", "/elsewhere"); other.State != approval.StatePending {
				t.Fatalf("another cwd is another call: %+v", other)
			}
			g := ask(tool, "make release", "Release", "/repo")
			decide(g.ID, approval.OutcomeAllowSession)
			granted := ask(tool, "make release", "Cut the release again", "/repo")
			if !granted.Allowed || granted.Source != approval.SourceGrant {
				t.Fatalf("session grant did not survive rewording: %+v", granted)
			}
		})
	}
}
