package store

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/approvebot/approvebot/core/approval"
)

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkCreateDecided stores policy-decided requests with their audit entry the way
// the gate does, from 64 concurrent callers over 1999 sessions and 8 agents, and reports
// the CPU per request (cpu-µs/op: less sensitive than ns/op to a shared machine) and how
// many writes share a commit. freelist=persisted is what Open does; freelist=walked is
// the layout before it (faster commits, slow opens), to measure the trade-off:
//
//	go test -run '^$' -bench CreateDecided -benchtime 40000x -count 6 ./store/
func BenchmarkCreateDecided(b *testing.B) {
	for _, fl := range []struct {
		name     string
		unsynced bool
	}{{"persisted", false}, {"walked", true}} {
		b.Run("freelist="+fl.name, func(b *testing.B) {
			s, err := Open(filepath.Join(b.TempDir(), "b.db"), Options{unsyncedFreelist: fl.unsynced})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			const workers = 64
			per := b.N/workers + 1
			var wg sync.WaitGroup
			b.ResetTimer()
			cpu := processCPU()
			for w := 0; w < workers; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < per; i++ {
						n := w*per + i
						now := time.Now().UTC()
						id := fmt.Sprintf("%013d-%08d", now.UnixMilli(), n)
						r := &approval.Request{ID: id, State: approval.StateAllowed, Allowed: true, Outcome: approval.OutcomeAllowOnce,
							Source: approval.SourcePolicy, CreatedAt: now, DecidedAt: now, Session: fmt.Sprint("load-", n%1999),
							Agent: fmt.Sprint("load-agent-", n%8), Tool: "read_file", Summary: "read_file /srv/app/README.md",
							Fingerprint: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", DecidedBy: "approvebot",
							Message: "Allowed by policy (tier.auto).", Reason: "read-only tool"}
						a := approval.AuditEntry{Time: now, Event: approval.EventDecision, RequestID: id, Session: r.Session, Agent: r.Agent,
							Tool: r.Tool, State: r.State, Outcome: r.Outcome, Source: r.Source, DecidedBy: r.DecidedBy, Reason: r.Reason,
							Summary: r.Summary, Fingerprint: r.Fingerprint}
						if err := s.Create(ctx, r, a); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(processCPU()-cpu)/float64(per*workers)/1000, "cpu-µs/op")
			cs := s.CommitStats()
			b.ReportMetric(float64(cs.Writes)/float64(cs.Commits), "writes/commit")
		})
	}
}
