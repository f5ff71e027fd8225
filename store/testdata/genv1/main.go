// genv1 writes store/testdata/schema1-trail.bolt (gzip it) with the store code of schema version 1.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/ledger"
	"github.com/approvebot/approvebot/store"
)

func main() {
	path := os.Args[1]
	os.Remove(path)
	base := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	clock := base
	now := func() time.Time { return clock }
	s, err := store.Open(path, store.Options{Now: now})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	sessions := []string{"s0", "s1", "a", "ab", "a\x00b"}
	agents := []string{"agent-1", "agent-10"}
	tools := []string{"bash", "read_file"}
	must := func(err error) {
		if err != nil {
			panic(err)
		}
	}
	for i := 0; i < 120; i++ {
		clock = base.Add(time.Duration(i) * 7 * time.Minute)
		id := fmt.Sprintf("req-%03d", i)
		r := &approval.Request{ID: id, CreatedAt: clock, Session: sessions[i%len(sessions)], Agent: agents[i%2], Tool: tools[i%2],
			Fingerprint: fmt.Sprintf("fp%d", i), Summary: fmt.Sprintf("cmd %d", i)}
		a := approval.AuditEntry{Time: clock, RequestID: id, Session: r.Session, Agent: r.Agent, Tool: r.Tool, Summary: r.Summary}
		switch i % 4 {
		case 0, 1: // policy-decided at once
			r.State, r.Allowed, r.Outcome, r.Source, r.DecidedAt, r.DecidedBy = approval.StateAllowed, true, approval.OutcomeAllowOnce, approval.SourcePolicy, clock, "approvebot"
			if i%4 == 1 {
				r.State, r.Allowed, r.Outcome = approval.StateDenied, false, approval.OutcomeDeny
			}
			a.Event, a.State, a.Outcome, a.Source = approval.EventDecision, r.State, r.Outcome, r.Source
			must(s.Create(ctx, r, a))
		default: // a human decides, the last few stay pending
			r.State, r.ExpiresAt = approval.StatePending, clock.Add(time.Hour*24*365*10)
			a.Event = approval.EventRequest
			must(s.Create(ctx, r, a))
			if i >= 110 {
				continue
			}
			// Decided a little "earlier" than the last entry: v1 kept such times out of order.
			at := clock.Add(-30 * time.Second)
			res := approval.Resolution{State: approval.StateDenied, Outcome: approval.OutcomeDeny, Source: approval.SourceHuman, DecidedBy: "alice", DecidedAt: at, Reason: "no"}
			if i%4 == 2 {
				res.State, res.Outcome = approval.StateAllowed, approval.OutcomeAllowSession
			}
			_, _, err := s.Resolve(ctx, id, res, ledger.Effects{})
			must(err)
			if i%8 == 3 {
				clock = clock.Add(time.Minute)
				must(s.AppendAudit(ctx, approval.AuditEntry{Event: approval.EventUnauthorized, RequestID: id, Channel: "telegram", Actor: "mallory"}))
			}
		}
	}
	clock = base.Add(-time.Hour)
	must(s.AppendAudit(ctx, approval.AuditEntry{Event: approval.EventSession, Session: "s0", Actor: "op"}))
	// audit_max_entries as v1 applied it: entries pruned, their requests kept.
	a, r, err := s.Prune(ctx, time.Time{}, 150)
	must(err)
	fmt.Println("pruned", a, "entries", r, "requests")
	must(s.Close())
}
