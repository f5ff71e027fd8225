package gate

import (
	"context"
	"time"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/render"
)

// Channel is one chat platform. Post and Edit retry on their own within ctx (429 and 5xx,
// honouring retry_after) and return an error only when they gave up.
type Channel interface {
	// Name is the channel's config name: "telegram", "slack" or "discord".
	Name() string
	// Chats are the chats a card goes to when no route says otherwise.
	Chats() []string
	// Post sends the pending card to one chat and returns the posted message's reference.
	Post(ctx context.Context, chat string, card render.Card) (approval.CardRef, error)
	// Edit replaces a posted card with its resolved form (no buttons).
	Edit(ctx context.Context, ref approval.CardRef, card render.Card) error
	// Health reports whether the channel can deliver now.
	Health() Health
}

// Runner is implemented by channels that read presses and commands. Run blocks until ctx
// ends, reporting decisions through r.
type Runner interface {
	Run(ctx context.Context, r Resolver) error
}

// Health is a channel's state for /healthz and metrics.
type Health struct {
	OK        bool      `json:"ok"`
	Detail    string    `json:"detail,omitempty"`
	LastError string    `json:"last_error,omitempty"`
	LastOK    time.Time `json:"last_ok,omitzero"`
}

// Decision is a human's (or operator's) choice on a request.
type Decision struct {
	Outcome   approval.Outcome
	Reason    string
	DecidedBy string
	// Channel names where the decision came from ("api" for the operator API).
	Channel string
}

// Resolver is what channels may do with the gate: decide through the single
// compare-and-set, look requests up, and audit refused attempts.
type Resolver interface {
	// Decide applies a human decision. It returns *AlreadyDecidedError when the request
	// was decided before, and ErrExpired when its deadline passed.
	Decide(ctx context.Context, id string, d Decision) (approval.Request, error)
	// Get returns a request by id (approval.ErrNotFound when unknown).
	Get(ctx context.Context, id string) (approval.Request, error)
	// LivePending lists the live requests whose card went to (channel, chat), oldest first.
	LivePending(channel, chat string) []approval.Request
	// ByCard finds the request a posted message belongs to.
	ByCard(channel, chat, message string) (approval.Request, bool)
	// Audit appends an entry (refused presses, unauthorised commands, bad signatures).
	Audit(ctx context.Context, e approval.AuditEntry)
	// Details returns the full redacted action of a request, for a "details" view.
	Details(ctx context.Context, id string) (string, error)
}

var _ Resolver = (*Gate)(nil)
