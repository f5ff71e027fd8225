package store

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/approvebot/approvebot/core/approval"
)

func auditEntries(t *testing.T, s *Store, q approval.AuditQuery) []approval.AuditEntry {
	t.Helper()
	page, err := s.Audit(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	return page.Entries
}

func seqs(entries []approval.AuditEntry) []uint64 {
	out := make([]uint64, len(entries))
	for i, e := range entries {
		out[i] = e.Seq
	}
	return out
}

// fillAudit appends entries cycling through a few requests, sessions, agents, tools,
// outcomes and sources, one minute apart from base, and returns them as stored.
func fillAudit(t *testing.T, s *Store, base time.Time, n int) []approval.AuditEntry {
	t.Helper()
	outcomes := []approval.Outcome{approval.OutcomeAllowOnce, approval.OutcomeDeny, approval.OutcomeTimeout}
	sources := []approval.Source{approval.SourcePolicy, approval.SourceHuman}
	// Names chosen to trip prefix and escaping mistakes: one is a prefix of another, one
	// holds a NUL, one has characters json.Marshal escapes.
	sessions := []string{"a", "ab", "a\x00b", "<s&x>"}
	agents := []string{"agent-1", "agent-10"}
	tools := []string{"bash", "Bash", "read_file"}
	entries := make([]approval.AuditEntry, n)
	for i := range entries {
		e := approval.AuditEntry{
			Time: base.Add(time.Duration(i) * time.Minute), Event: approval.EventDecision,
			RequestID: fmt.Sprintf("req-%d", i%5), Session: sessions[i%len(sessions)], Agent: agents[i%len(agents)],
			Tool: tools[i%len(tools)], Outcome: outcomes[i%len(outcomes)], Source: sources[i%len(sources)],
			Reason: fmt.Sprint(i),
		}
		if i%7 == 6 {
			// Not a decision: no outcome, and a summary that quotes a filter's JSON.
			e.Event, e.Outcome, e.Source = approval.EventUnauthorized, "", ""
			e.Summary = `echo '"tool":"read_file"' "session":"a"`
		}
		entries[i] = e
	}
	appendAll(t, s, entries)
	all := auditEntries(t, s, approval.AuditQuery{Limit: maxAuditLimit})
	if len(all) != n {
		t.Fatalf("stored %d entries, want %d", len(all), n)
	}
	return all
}

// forEachBatch runs f on stores whose deferred indexes are written after every entry,
// every 50 entries, and at the default: queries must give the same answers whether
// entries are in the indexes or still in the tail.
func forEachBatch(t *testing.T, f func(t *testing.T, s *Store)) {
	for _, batch := range []int{1, 50, defaultDeferredBatch} {
		t.Run(fmt.Sprintf("deferred batch %d", batch), func(t *testing.T) {
			s := open(t)
			s.deferredBatch = batch
			f(t, s)
		})
	}
}

// appendAll appends entries 13 to a transaction (AppendAudit commits each).
func appendAll(t *testing.T, s *Store, entries []approval.AuditEntry) {
	t.Helper()
	for len(entries) > 0 {
		chunk := entries[:min(13, len(entries))]
		entries = entries[len(chunk):]
		err := s.write(context.Background(), false, func(tx *bolt.Tx) error {
			for _, e := range chunk {
				if err := s.appendAudit(tx, e); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func matches(q approval.AuditQuery, e approval.AuditEntry) bool {
	return (q.RequestID == "" || e.RequestID == q.RequestID) && (q.Session == "" || e.Session == q.Session) &&
		(q.Agent == "" || e.Agent == q.Agent) && (q.Tool == "" || e.Tool == q.Tool) &&
		(q.Outcome == "" || e.Outcome == q.Outcome) && (q.Source == "" || e.Source == q.Source) &&
		(q.Since.IsZero() || !e.Time.Before(q.Since)) && (q.Until.IsZero() || e.Time.Before(q.Until))
}

func TestAuditFilters(t *testing.T) {
	forEachBatch(t, func(t *testing.T, s *Store) {
		base := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
		all := fillAudit(t, s, base, 200)
		tests := []struct {
			name string
			q    approval.AuditQuery
		}{
			{"request", approval.AuditQuery{RequestID: "req-3"}},
			{"request unknown", approval.AuditQuery{RequestID: "req-"}},
			{"session a is not ab", approval.AuditQuery{Session: "a"}},
			{"session with NUL", approval.AuditQuery{Session: "a\x00b"}},
			{"session escaped in JSON", approval.AuditQuery{Session: "<s&x>"}},
			{"agent is not its prefix", approval.AuditQuery{Agent: "agent-1"}},
			{"tool is case-sensitive", approval.AuditQuery{Tool: "Bash"}},
			{"tool quoted in a summary", approval.AuditQuery{Tool: "read_file"}},
			{"outcome", approval.AuditQuery{Outcome: approval.OutcomeDeny}},
			{"source", approval.AuditQuery{Source: approval.SourceHuman}},
			{"source unknown", approval.AuditQuery{Source: "nobody"}},
			{"since", approval.AuditQuery{Since: base.Add(150 * time.Minute)}},
			{"until", approval.AuditQuery{Until: base.Add(30 * time.Minute)}},
			{"since and until", approval.AuditQuery{Since: base.Add(20 * time.Minute), Until: base.Add(40*time.Minute + time.Second)}},
			{"until before everything", approval.AuditQuery{Until: base}},
			{"since after everything", approval.AuditQuery{Since: base.Add(time.Hour * 24)}},
			{"session, tool and outcome", approval.AuditQuery{Session: "ab", Tool: "bash", Outcome: approval.OutcomeAllowOnce}},
			{"agent and source in a window", approval.AuditQuery{Agent: "agent-10", Source: approval.SourcePolicy, Since: base.Add(time.Hour), Until: base.Add(2 * time.Hour)}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				var want []uint64
				for _, e := range all {
					if matches(tt.q, e) {
						want = append(want, e.Seq)
					}
				}
				tt.q.Limit = maxAuditLimit
				page, err := s.Audit(context.Background(), tt.q)
				if err != nil {
					t.Fatal(err)
				}
				if got := seqs(page.Entries); !slices.Equal(got, want) {
					t.Fatalf("got seqs %v\nwant %v", got, want)
				}
				if page.NextBefore != 0 {
					t.Fatalf("next_before %d on a page that reached the oldest entry", page.NextBefore)
				}
			})
		}
	})
}

func TestAuditPagesWalkEveryMatchOnce(t *testing.T) {
	forEachBatch(t, func(t *testing.T, s *Store) {
		base := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
		all := fillAudit(t, s, base, 150)
		for _, query := range []approval.AuditQuery{
			{},
			{Session: "ab"},
			{Tool: "bash", Outcome: approval.OutcomeDeny},
			{RequestID: "req-1", Since: base.Add(time.Hour)},
			{Agent: "agent-1", Until: base.Add(100 * time.Minute)},
		} {
			for _, limit := range []int{1, 3, 7, 1000} {
				t.Run(fmt.Sprintf("%+v/limit=%d", query, limit), func(t *testing.T) {
					q := query
					var want []uint64
					for _, e := range all {
						if matches(q, e) {
							want = append(want, e.Seq)
						}
					}
					q.Limit = limit
					var got []uint64
					for pages := 0; ; pages++ {
						if pages > len(all)+1 {
							t.Fatal("pagination does not end")
						}
						page, err := s.Audit(context.Background(), q)
						if err != nil {
							t.Fatal(err)
						}
						if len(page.Entries) > limit {
							t.Fatalf("page of %d entries, limit %d", len(page.Entries), limit)
						}
						if !slices.IsSorted(seqs(page.Entries)) {
							t.Fatalf("page not oldest first: %v", seqs(page.Entries))
						}
						got = append(seqs(page.Entries), got...)
						if page.NextBefore == 0 {
							break
						}
						if q.Before != 0 && page.NextBefore >= q.Before {
							t.Fatalf("cursor went from %d to %d", q.Before, page.NextBefore)
						}
						q.Before = page.NextBefore
					}
					if !slices.Equal(got, want) {
						t.Fatalf("pages gave %v\nwant %v", got, want)
					}
				})
			}
		}
	})
}

func TestAuditScanBudgetResumes(t *testing.T) {
	forEachBatch(t, func(t *testing.T, s *Store) {
		base := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
		all := fillAudit(t, s, base, 120)
		s.auditScan = 10
		// A filter matching one entry in ~12: each query examines 10 entries at most, so
		// pages come back short or empty, with a cursor that resumes where the walk stopped.
		q := approval.AuditQuery{Tool: "bash", Outcome: approval.OutcomeTimeout, Limit: 5}
		var want, got []uint64
		for _, e := range all {
			if matches(q, e) {
				want = append(want, e.Seq)
			}
		}
		queries := 0
		for {
			queries++
			page, err := s.Audit(context.Background(), q)
			if err != nil {
				t.Fatal(err)
			}
			got = append(seqs(page.Entries), got...)
			if page.NextBefore == 0 {
				break
			}
			q.Before = page.NextBefore
		}
		if !slices.Equal(got, want) {
			t.Fatalf("got %v\nwant %v", got, want)
		}
		if queries < len(all)/10 {
			t.Fatalf("%d queries: the scan budget was not applied", queries)
		}
	})
}

func TestAuditTimeNeverGoesBack(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	base := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	for _, off := range []time.Duration{0, 5 * time.Second, 2 * time.Second, 5 * time.Second, -time.Hour, 6 * time.Second} {
		if err := s.AppendAudit(ctx, approval.AuditEntry{Time: base.Add(off), Event: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	got := auditEntries(t, s, approval.AuditQuery{})
	var times []time.Duration
	for i, e := range got {
		if i > 0 && e.Seq <= got[i-1].Seq {
			t.Fatalf("seq order broken: %v", seqs(got))
		}
		times = append(times, e.Time.Sub(base))
	}
	want := []time.Duration{0, 5 * time.Second, 5 * time.Second, 5 * time.Second, 5 * time.Second, 6 * time.Second}
	if !slices.Equal(times, want) {
		t.Fatalf("times %v, want %v", times, want)
	}
}

func TestAuditCounts(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	base := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	add := func(at time.Duration, event string, o approval.Outcome) {
		t.Helper()
		if err := s.AppendAudit(ctx, approval.AuditEntry{Time: base.Add(at), Event: event, Outcome: o}); err != nil {
			t.Fatal(err)
		}
	}
	add(0, approval.EventDecision, approval.OutcomeAllowOnce)
	add(time.Minute, approval.EventDecision, approval.OutcomeAllowOnce)
	add(59*time.Minute, approval.EventDecision, approval.OutcomeDeny)
	add(60*time.Minute, approval.EventRequest, "")      // not a decision
	add(61*time.Minute, approval.EventUnauthorized, "") // not a decision
	add(3*time.Hour+time.Second, approval.EventDecision, approval.OutcomeTimeout)
	add(3*time.Hour+2*time.Second, approval.EventDecision, approval.OutcomeCancelled)

	hour := func(h int) time.Time { return base.Add(time.Duration(h) * time.Hour) }
	tests := []struct {
		name         string
		since, until time.Time
		want         []approval.HourCount
	}{
		{"all", time.Time{}, time.Time{}, []approval.HourCount{
			{Hour: hour(0), Outcomes: map[approval.Outcome]int{approval.OutcomeAllowOnce: 2, approval.OutcomeDeny: 1}},
			{Hour: hour(3), Outcomes: map[approval.Outcome]int{approval.OutcomeTimeout: 1, approval.OutcomeCancelled: 1}},
		}},
		{"since inside an hour counts the whole hour", base.Add(30 * time.Minute), time.Time{}, []approval.HourCount{
			{Hour: hour(0), Outcomes: map[approval.Outcome]int{approval.OutcomeAllowOnce: 2, approval.OutcomeDeny: 1}},
			{Hour: hour(3), Outcomes: map[approval.Outcome]int{approval.OutcomeTimeout: 1, approval.OutcomeCancelled: 1}},
		}},
		{"until excludes later hours", time.Time{}, hour(3), []approval.HourCount{
			{Hour: hour(0), Outcomes: map[approval.Outcome]int{approval.OutcomeAllowOnce: 2, approval.OutcomeDeny: 1}},
		}},
		{"until inside an hour counts the whole hour", time.Time{}, hour(3).Add(time.Second), []approval.HourCount{
			{Hour: hour(0), Outcomes: map[approval.Outcome]int{approval.OutcomeAllowOnce: 2, approval.OutcomeDeny: 1}},
			{Hour: hour(3), Outcomes: map[approval.Outcome]int{approval.OutcomeTimeout: 1, approval.OutcomeCancelled: 1}},
		}},
		{"empty window", hour(1), hour(3), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.AuditCounts(ctx, tt.since, tt.until)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %+v\nwant %+v", got, tt.want)
			}
			for i := range got {
				if !got[i].Hour.Equal(tt.want[i].Hour) || fmt.Sprint(got[i].Outcomes) != fmt.Sprint(tt.want[i].Outcomes) {
					t.Fatalf("hour %d: got %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

func TestAuditCursorEdges(t *testing.T) {
	forEachBatch(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		base := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
		fillAudit(t, s, base, 20)
		if _, _, err := s.Prune(ctx, time.Time{}, 15); err != nil { // seqs 1-5 are gone
			t.Fatal(err)
		}
		tests := []struct {
			name   string
			q      approval.AuditQuery
			want   []uint64
			nextOK bool
		}{
			{"before beyond the newest", approval.AuditQuery{Before: 1 << 40, Limit: 3}, []uint64{18, 19, 20}, true},
			{"before the oldest left", approval.AuditQuery{Before: 6}, nil, false},
			{"before a pruned entry", approval.AuditQuery{Before: 3}, nil, false},
			{"before the first seq", approval.AuditQuery{Before: 1}, nil, false},
			{"before with a session index", approval.AuditQuery{Session: "a", Before: 17}, []uint64{9, 13}, false},
			{"before and until, until older", approval.AuditQuery{Before: 20, Until: base.Add(8 * time.Minute)}, []uint64{6, 7, 8}, false},
			{"before and since", approval.AuditQuery{Before: 10, Since: base.Add(7 * time.Minute)}, []uint64{8, 9}, false},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				page, err := s.Audit(ctx, tt.q)
				if err != nil {
					t.Fatal(err)
				}
				if got := seqs(page.Entries); !slices.Equal(got, tt.want) || (page.NextBefore != 0) != tt.nextOK {
					t.Fatalf("got %v next_before %d, want %v (next_before set: %v)", got, page.NextBefore, tt.want, tt.nextOK)
				}
			})
		}
	})
}

// The deferred indexes keep up: the tail after the watermark never holds more than one
// batch and one group commit's entries.
func TestDeferredIndexesKeepUp(t *testing.T) {
	s := open(t)
	s.deferredBatch = 50
	fillAudit(t, s, time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC), 500)
	s.db.View(func(tx *bolt.Tx) error {
		w := deferredWatermark(tx)
		if w == nil {
			t.Fatal("no watermark after 500 entries")
		}
		if tail := tx.Bucket(bucketAudit).Sequence() - auditKeySeq(w); tail >= 50+13 {
			t.Fatalf("%d entries in the tail, batch 50", tail)
		}
		return nil
	})
}
