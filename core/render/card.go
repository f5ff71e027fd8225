package render

import (
	"time"

	"github.com/approvebot/approvebot/core/approval"
)

// Action is what a button on a card does.
type Action string

const (
	ActionAllowOnce    Action = "once"
	ActionAllowSession Action = "session"
	ActionAllowAlways  Action = "always"
	ActionDeny         Action = "deny"
	// ActionDetails asks for the full redacted action when the summary was cut.
	ActionDetails Action = "details"
)

// Outcome maps a button action to the decision outcome it requests.
func (a Action) Outcome() (approval.Outcome, bool) {
	switch a {
	case ActionAllowOnce:
		return approval.OutcomeAllowOnce, true
	case ActionAllowSession:
		return approval.OutcomeAllowSession, true
	case ActionAllowAlways:
		return approval.OutcomeAllowAlways, true
	case ActionDeny:
		return approval.OutcomeDeny, true
	}
	return "", false
}

// Card is the channel-neutral view of a request that every platform renders. All strings
// in it are already masked and hardened by this package; platforms still escape them for
// their markup.
type Card struct {
	RequestID   string
	Tool        string
	Summary     string
	Truncated   bool
	Agent       string
	Session     string
	Cwd         string
	AgentReason string
	// AskReason is why the policy asks a human, and Rule the rule that asked; shown on a
	// line of their own, never in the action.
	AskReason string
	Rule      string
	CreatedAt time.Time
	ExpiresAt time.Time
	// AllowAlways shows the "Allow always" button (only when the policy persists it).
	AllowAlways bool
	// Resolution is nil while the request is pending.
	Resolution *Resolution

	// safe records the strings as the last sanitize left them (see layout.go).
	safe *cardStrings
}

// Resolution is how a card ended: shown on the edited card, which has no buttons.
type Resolution struct {
	State     approval.State
	Outcome   approval.Outcome
	Source    approval.Source
	DecidedBy string
	Reason    string
	DecidedAt time.Time
}

// CardFor builds the card of a stored request. A decided request yields a resolved card.
// Every string is masked and hardened here, and again by each platform builder.
func CardFor(r *approval.Request) Card {
	c := Card{
		RequestID:   r.ID,
		Tool:        r.Tool,
		Summary:     r.Summary,
		Truncated:   r.Truncated,
		Agent:       r.Agent,
		Session:     r.Session,
		Cwd:         r.Cwd,
		AgentReason: r.AgentReason,
		AskReason:   r.AskReason,
		Rule:        r.Rule,
		CreatedAt:   r.CreatedAt,
		ExpiresAt:   r.ExpiresAt,
		AllowAlways: r.ShowAllowAlways,
	}
	if r.State != approval.StatePending {
		c.Resolution = &Resolution{
			State:     r.State,
			Outcome:   r.Outcome,
			Source:    r.Source,
			DecidedBy: r.DecidedBy,
			Reason:    r.Reason,
			DecidedAt: r.DecidedAt,
		}
	}
	return c.sanitize()
}

// Pending reports whether the card still waits for a decision (and so has buttons).
func (c Card) Pending() bool { return c.Resolution == nil }
