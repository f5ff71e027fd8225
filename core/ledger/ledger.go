// Package ledger holds the session memory of approvebot: grants by fingerprint (allow for
// session), the denial ledger keyed on the fingerprint, and the sticky pause after N human
// denials in a session. It defines the rules and the store interface; the store applies them
// inside the same transaction as the decision they follow from.
//
// A session belongs to an agent: every grant, denial, pause and parent link is keyed by the
// agent (its token name) and the session name, so one agent naming another's session gets
// none of its grants and cannot pause it. The one record shared by every agent of a session
// name (Agent "") holds what an operator set without naming an agent, and entries from
// before sessions had owners whose agent could not be told; it can only restrict.
package ledger

import (
	"context"
	"time"

	"github.com/approvebot/approvebot/core/approval"
)

// Session is what approvebot remembers of one agent session.
type Session struct {
	Name string `json:"name"`
	// Agent is the token name the session belongs to; "" is the record every agent of this
	// session name shares (see Merge).
	Agent string `json:"agent,omitempty"`
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

// Merge is the one place an agent's own session record and the record every agent of that
// session name shares combine into what applies to the agent: the agent's own tier and
// parent win over the shared ones; an unattended mark or a pause in either holds; the
// denial count is the agent's own.
func Merge(own, shared Session) Session {
	out := own
	if out.Tier == "" {
		out.Tier = shared.Tier
	}
	if out.Parent == "" {
		out.Parent = shared.Parent
	}
	out.Unattended = own.Unattended || shared.Unattended
	if !own.Paused && shared.Paused {
		out.Paused, out.PausedAt = true, shared.PausedAt
	}
	return out
}

// Settings are what an operator changes on a session; nil fields stay as they are.
type Settings struct {
	Tier       *string
	Unattended *bool
}

// Apply writes the settings into a record.
func (set Settings) Apply(s *Session) {
	if set.Tier != nil {
		s.Tier = *set.Tier
	}
	if set.Unattended != nil {
		s.Unattended = *set.Unattended
	}
}

// Yield clears an agent's own values of the settings a change for every agent makes, so
// that the newest operator instruction for every agent applies to each of them.
func (set Settings) Yield(s *Session) {
	if set.Tier != nil {
		s.Tier = ""
	}
	if set.Unattended != nil {
		s.Unattended = false
	}
}

// Records are one session name's records as an operator's change left them.
type Records struct {
	// Shared is the record every agent of the session name shares.
	Shared Session
	// Agents are agents' own records: the named agent's, or, for a change to every agent,
	// each agent's that has one, in agent order.
	Agents []Session
}

// Store is the memory the ledger reads, always for one agent's session. The store package
// implements it on bbolt.
type Store interface {
	// Session is the agent's session as it applies to the agent (Merge of its own record
	// and the shared one).
	Session(ctx context.Context, agent, name string) (Session, error)
	HasGrant(ctx context.Context, agent, session, fingerprint string) (bool, error)
	IsDenied(ctx context.Context, agent, session, fingerprint string) (bool, error)
}

// Lookup is the ledger's view of one ask: everything the gate needs in one read.
type Lookup struct {
	Session Session
	Granted bool
	Denied  bool
}

// Item is one live session grant or one ledgered denial, with what the decision's
// audit entry says about it while that entry is still in the trail (retention may have
// pruned it; then only the key fields and the time are known).
type Item struct {
	Agent       string    `json:"agent,omitempty"`
	Session     string    `json:"session"`
	Fingerprint string    `json:"fingerprint"`
	At          time.Time `json:"at"`
	RequestID   string    `json:"request_id,omitempty"`
	Tool        string    `json:"tool,omitempty"`
	Summary     string    `json:"summary,omitempty"`
	DecidedBy   string    `json:"decided_by,omitempty"`
	Reason      string    `json:"reason,omitempty"`
}
