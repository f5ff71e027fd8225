package approval

import "time"

// AuditQuery selects a page of audit entries. Every non-empty field must match.
type AuditQuery struct {
	RequestID string
	Session   string
	Agent     string
	Tool      string
	Outcome   Outcome
	// Source matches the entry's source by name; a name no entry carries matches nothing.
	Source Source
	// Since and Until bound the entry's time: Since <= Time < Until (zero: unbounded).
	Since time.Time
	Until time.Time
	// Before is the cursor: when not zero, only entries older than the one with this Seq
	// are returned. Pass the previous page's NextBefore to page backwards.
	Before uint64
	// Limit caps the page (default 100, at most 10000); the page holds the newest matching
	// entries before the cursor.
	Limit int
}

// AuditPage is one page of the trail, oldest entry first.
type AuditPage struct {
	Entries []AuditEntry
	// NextBefore is the cursor of the next, older page: pass it as AuditQuery.Before. It is
	// 0 when the walk reached the oldest entry in range, so there is nothing older. A page
	// can hold fewer than Limit entries and still have a NextBefore: one query examines a
	// bounded number of entries, and the next page continues where it stopped.
	NextBefore uint64
	// Damaged are entries in range that could not be read: skipped, the page complete but
	// for them.
	Damaged []DamagedRecord
}

// HourCount is how many decisions the trail holds for one hour, by outcome.
type HourCount struct {
	// Hour is the start of the hour, UTC.
	Hour time.Time
	// Outcomes counts the decision entries of that hour by outcome; never empty.
	Outcomes map[Outcome]int
}

// KnownOutcome reports whether o is one of the outcomes a decision can have.
func KnownOutcome(o Outcome) bool {
	switch o {
	case OutcomeAllowOnce, OutcomeAllowSession, OutcomeAllowAlways, OutcomeDeny, OutcomeTimeout, OutcomeCancelled:
		return true
	}
	return false
}
