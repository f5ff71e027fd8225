package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/ledger"
)

// decide files a pending request and decides it as a human at time at.
func decideAt(t *testing.T, s *Store, id, agent, session, fp, summary string, outcome approval.Outcome, at time.Time) {
	t.Helper()
	ctx := context.Background()
	r := pending(id, session, fp)
	r.Agent, r.Summary, r.Tool = agent, summary, "bash"
	r.ExpiresAt = at.Add(time.Hour)
	if err := s.Create(ctx, r, approval.AuditEntry{Time: at.Add(-time.Second), Event: approval.EventRequest, RequestID: id}); err != nil {
		t.Fatal(err)
	}
	res := human(outcome)
	res.DecidedAt, res.DecidedBy, res.Reason = at, "alice", "because "+id
	if _, won, err := s.Resolve(ctx, id, res, ledger.EffectsOf(outcome, approval.SourceHuman, 2, nil)); err != nil || !won {
		t.Fatalf("resolve %s: won=%t %v", id, won, err)
	}
}

func TestGrantsAndDenialsListedNewestFirstWithTheirDecision(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	t0 := time.Now().UTC().Add(-time.Hour)
	decideAt(t, s, "g1", "agent", "s1", "fpA", "make build", approval.OutcomeAllowSession, t0)
	decideAt(t, s, "g2", "agent2", "s2", "fpB", "make test", approval.OutcomeAllowSession, t0.Add(time.Minute))
	decideAt(t, s, "o1", "agent", "s1", "fpC", "ls", approval.OutcomeAllowOnce, t0.Add(2*time.Minute))
	decideAt(t, s, "d1", "agent", "s1", "fpD", "rm -rf build", approval.OutcomeDeny, t0.Add(3*time.Minute))
	// Two decisions in the same nanosecond: each item finds its own entry.
	decideAt(t, s, "d2", "agent2", "s3", "fpE", "curl x | sh", approval.OutcomeDeny, t0.Add(4*time.Minute))
	decideAt(t, s, "d3", "agent", "s4", "fpF", "dd of=/dev/sda", approval.OutcomeDeny, t0.Add(4*time.Minute))

	grants, total, err := s.Grants(ctx, 0)
	if err != nil || total != 2 || len(grants) != 2 {
		t.Fatalf("grants: %d of %d, %v", len(grants), total, err)
	}
	want := LedgerItem{Agent: "agent2", Session: "s2", Fingerprint: "fpB", At: t0.Add(time.Minute), RequestID: "g2", Tool: "bash", Summary: "make test", DecidedBy: "alice", Reason: "because g2"}
	if g := grants[0]; !g.At.Equal(want.At) || g.Agent != want.Agent || g.Session != want.Session || g.Fingerprint != want.Fingerprint ||
		g.RequestID != want.RequestID || g.Tool != want.Tool || g.Summary != want.Summary || g.DecidedBy != want.DecidedBy || g.Reason != want.Reason {
		t.Fatalf("newest grant = %+v, want %+v", g, want)
	}
	if grants[1].RequestID != "g1" {
		t.Fatalf("older grant = %+v", grants[1])
	}

	denials, total, err := s.Denials(ctx, 2)
	if err != nil || total != 3 || len(denials) != 2 {
		t.Fatalf("denials: %d of %d, %v", len(denials), total, err)
	}
	got := map[string]string{}
	for _, d := range denials {
		got[d.RequestID] = d.Summary
	}
	if len(got) != 2 || got["d2"] != "curl x | sh" || got["d3"] != "dd of=/dev/sda" {
		t.Fatalf("the two newest denials: %+v", denials)
	}
}

func TestLedgerItemsOutliveTheirAuditEntries(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	old := time.Now().UTC().Add(-48 * time.Hour)
	decideAt(t, s, "g1", "agent", "s1", "fpA", "make build", approval.OutcomeAllowSession, old)
	if _, _, err := s.Prune(ctx, time.Now().Add(-time.Hour), 0); err != nil {
		t.Fatal(err)
	}
	grants, total, err := s.Grants(ctx, 10)
	if err != nil || total != 1 {
		t.Fatalf("grants after prune: %+v %d %v", grants, total, err)
	}
	if g := grants[0]; g.Session != "s1" || g.Fingerprint != "fpA" || !g.At.Equal(old) || g.Summary != "" || g.RequestID != "" {
		t.Fatalf("grant after its audit entry was pruned: %+v", g)
	}
}

func TestPausedSessionsListed(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	t0 := time.Now().UTC().Add(-time.Hour)
	for i, sess := range []string{"a", "a", "b", "b", "c"} {
		decideAt(t, s, fmt.Sprint("r", i), "agent", sess, fmt.Sprint("fp", i), "x", approval.OutcomeDeny, t0.Add(time.Duration(i)*time.Minute))
	}
	paused, total, err := s.PausedSessions(ctx, 0)
	if err != nil || total != 2 || len(paused) != 2 {
		t.Fatalf("paused: %+v %d %v", paused, total, err)
	}
	if paused[0].Name != "b" || paused[1].Name != "a" || paused[0].Agent != "agent" || paused[0].Denials != 2 || !paused[0].PausedAt.Equal(t0.Add(3*time.Minute)) {
		t.Fatalf("paused sessions, most recent first: %+v", paused)
	}
	if _, err := s.Unpause(ctx, "agent", "b", approval.AuditEntry{Event: approval.EventUnpause}); err != nil {
		t.Fatal(err)
	}
	paused, total, _ = s.PausedSessions(ctx, 1)
	if total != 1 || len(paused) != 1 || paused[0].Name != "a" {
		t.Fatalf("after unpausing b: %+v %d", paused, total)
	}
}

// A grant's later uses are decisions of the same call too; only the human's decision that
// made the grant describes it.
func TestLedgerItemsAreDescribedByTheDecisionThatMadeThem(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	old := time.Now().UTC().Add(-48 * time.Hour)
	decideAt(t, s, "g1", "agent", "s1", "fpA", "make build", approval.OutcomeAllowSession, old)
	use := approval.AuditEntry{Time: old.Add(time.Second), Event: approval.EventDecision, RequestID: "use1", Session: "s1", Fingerprint: "fpA",
		Outcome: approval.OutcomeAllowSession, Source: approval.SourceGrant, DecidedBy: "approvebot", Summary: "make build"}
	if err := s.AppendAudit(ctx, use); err != nil {
		t.Fatal(err)
	}
	grants, _, _ := s.Grants(ctx, 0)
	if len(grants) != 1 || grants[0].RequestID != "g1" || grants[0].DecidedBy != "alice" {
		t.Fatalf("grant described by %+v", grants)
	}
	use.Time, use.RequestID = time.Now().UTC(), "use2"
	if err := s.AppendAudit(ctx, use); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Prune(ctx, time.Now().Add(-time.Hour), 0); err != nil {
		t.Fatal(err)
	}
	grants, _, _ = s.Grants(ctx, 0)
	if len(grants) != 1 || grants[0].RequestID != "" || grants[0].DecidedBy != "" {
		t.Fatalf("after its decision was pruned, the grant is described by a later use: %+v", grants)
	}
}

// Sessions belong to an agent: the same session name of two agents is two sessions, and
// each item says whose it is.
func TestListingsNameTheAgent(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	t0 := time.Now().UTC().Add(-time.Hour)
	decideAt(t, s, "a1", "alice-bot", "shared", "fpX", "make x", approval.OutcomeAllowSession, t0)
	decideAt(t, s, "b1", "bob-bot", "shared", "fpX", "make x", approval.OutcomeAllowSession, t0.Add(time.Minute))
	decideAt(t, s, "b2", "bob-bot", "shared", "fpY", "rm y", approval.OutcomeDeny, t0.Add(2*time.Minute))
	decideAt(t, s, "b3", "bob-bot", "shared", "fpZ", "rm z", approval.OutcomeDeny, t0.Add(3*time.Minute))
	grants, _, err := s.Grants(ctx, 0)
	if err != nil || len(grants) != 2 || grants[0].Agent != "bob-bot" || grants[0].RequestID != "b1" || grants[1].Agent != "alice-bot" || grants[1].RequestID != "a1" {
		t.Fatalf("grants: %+v %v", grants, err)
	}
	paused, _, err := s.PausedSessions(ctx, 0)
	if err != nil || len(paused) != 1 || paused[0].Agent != "bob-bot" || paused[0].Name != "shared" {
		t.Fatalf("paused: %+v %v", paused, err)
	}
	if l, _ := s.Lookup(ctx, "alice-bot", "shared", "fpX"); l.Session.Paused {
		t.Fatal("bob-bot's pause reached alice-bot")
	}
}
