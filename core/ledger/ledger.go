// Package ledger holds the session memory of approvebot: grants by fingerprint (allow for
// session), the denial ledger keyed on the fingerprint, and the sticky pause after N human
// denials in a session. It defines the rules and the store interface; the store applies them
// inside the same transaction as the decision they follow from.
package ledger

import (
	"context"
	"time"

	"github.com/approvebot/approvebot/core/approval"
)

// Session is what approvebot remembers of one agent session.
type Session struct {
	Name string `json:"name"`
	// Tier is the session's exec tier ("" follows the global one).
	Tier string `json:"tier,omitempty"`
	// Unattended marks a headless run: its asks are refused at once.
	Unattended bool `json:"unattended,omitempty"`
	// Parent is the session that spawned this one, if any.
	Parent string `json:"parent,omitempty"`
	// Denials counts human denials since the last unpause.
	Denials  int       `json:"denials"`
	Paused   bool      `json:"paused"`
	PausedAt time.Time `json:"paused_at,omitzero"`
}

// Effects is what a decision changes besides the request itself, applied atomically with it.
type Effects struct {
	// Grant stores a session grant for the request's fingerprint.
	Grant bool
	// Denial ledgers the fingerprint and counts a human denial for the session.
	Denial bool
	// PauseAfter pauses the session when its denial count reaches this number.
	PauseAfter int
	// Allowlist persists these executable patterns ("allow always" with persist).
	Allowlist []string
}

// EffectsOf is the one place the ledger's rules live: allow-for-session grants the
// fingerprint, a human denial is ledgered and counts toward the pause, a timeout or cancel
// changes nothing (an expired card is not a decision).
func EffectsOf(outcome approval.Outcome, source approval.Source, pauseAfter int, alwaysPatterns []string) Effects {
	switch outcome {
	case approval.OutcomeAllowSession:
		return Effects{Grant: true}
	case approval.OutcomeAllowAlways:
		return Effects{Grant: true, Allowlist: alwaysPatterns}
	case approval.OutcomeDeny:
		if source == approval.SourceHuman {
			return Effects{Denial: true, PauseAfter: pauseAfter}
		}
	}
	return Effects{}
}

// Store is the memory the ledger reads. The store package implements it on bbolt.
type Store interface {
	Session(ctx context.Context, name string) (Session, error)
	HasGrant(ctx context.Context, session, fingerprint string) (bool, error)
	IsDenied(ctx context.Context, session, fingerprint string) (bool, error)
}

// Lookup is the ledger's view of one ask: everything the gate needs in one read.
type Lookup struct {
	Session Session
	Granted bool
	Denied  bool
}
