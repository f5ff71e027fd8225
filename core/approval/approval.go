// Package approval holds the data types every part of approvebot shares: the request record an
// agent reads, its states, outcomes and sources, the posted-card references and audit entries.
// It has no behaviour beyond small helpers, so that store, gate, api and channels can all speak it.
package approval

import (
	"errors"
	"time"
)

// State is where a request is in its life.
type State string

const (
	StatePending State = "pending"
	StateAllowed State = "allowed"
	StateDenied  State = "denied"
)

// Outcome is how a request ended. The empty outcome is serialised as null while pending.
type Outcome string

const (
	OutcomeNone         Outcome = ""
	OutcomeAllowOnce    Outcome = "allow_once"
	OutcomeAllowSession Outcome = "allow_session"
	// OutcomeAllowAlways is only recorded when allow_always = "persist" stored allowlist
	// entries; otherwise a human's "allow always" is clamped to OutcomeAllowSession.
	OutcomeAllowAlways Outcome = "allow_always"
	OutcomeDeny        Outcome = "deny"
	OutcomeTimeout     Outcome = "timeout"
	OutcomeCancelled   Outcome = "cancelled"
)

// Allows reports whether the outcome lets the action run.
func (o Outcome) Allows() bool {
	return o == OutcomeAllowOnce || o == OutcomeAllowSession || o == OutcomeAllowAlways
}

// ParseDecisionOutcome accepts the outcomes a human or operator may choose.
func ParseDecisionOutcome(s string) (Outcome, bool) {
	switch Outcome(s) {
	case OutcomeAllowOnce, OutcomeAllowSession, OutcomeAllowAlways, OutcomeDeny:
		return Outcome(s), true
	}
	return "", false
}

// Source names who or what decided.
type Source string

const (
	SourcePolicy     Source = "policy"
	SourceRule       Source = "rule"
	SourceFloor      Source = "floor"
	SourceGrant      Source = "grant"
	SourceLedger     Source = "ledger"
	SourceHuman      Source = "human"
	SourceUnattended Source = "unattended"
	SourcePaused     Source = "paused"
	SourceFallback   Source = "fallback"
	SourceTimeout    Source = "timeout"
	SourceAgent      Source = "agent"
	// SourceStore marks a request whose stored record was damaged: quarantined and denied.
	SourceStore Source = "store"
)

// Facts are what the calling agent declares about its tool. A tool that declares nothing is
// treated as mutating.
type Facts struct {
	ReadOnly    bool `json:"read_only,omitempty"`
	Idempotent  bool `json:"idempotent,omitempty"`
	Destructive bool `json:"destructive,omitempty"`
}

// CardRef records one posted card so it can be edited later, even after a restart.
type CardRef struct {
	Channel string `json:"channel"`
	Chat    string `json:"chat"`
	Message string `json:"message"`
}

// Request is the record of one ask, persisted in the store; the API answers a public view of
// it. Raw arguments are never part of it: only the redacted summary and the fingerprint.
type Request struct {
	ID      string `json:"id"`
	State   State  `json:"state"`
	Allowed bool   `json:"allowed"`
	// Explicit is true for an allow by a tool permission, the allowlist, a safe bin, a
	// proven-inert builtin, a session grant or a human; false for an allow that is only the
	// tier's default (and for every refusal). Integrations answer "allow" to their agent only
	// when it is true; otherwise they leave the decision to the agent's own permission flow.
	Explicit    bool      `json:"explicit,omitempty"`
	Outcome     Outcome   `json:"outcome"`
	Source      Source    `json:"source,omitempty"`
	Reason      string    `json:"reason"`
	Message     string    `json:"message"`
	Summary     string    `json:"summary"`
	Truncated   bool      `json:"truncated,omitempty"`
	Fingerprint string    `json:"fingerprint"`
	DecidedBy   string    `json:"decided_by"`
	Rule        string    `json:"rule,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	ExpiresAt   time.Time `json:"expires_at,omitzero"`
	DecidedAt   time.Time `json:"decided_at,omitzero"`

	Tool          string `json:"tool"`
	Session       string `json:"session"`
	ParentSession string `json:"parent_session,omitempty"`
	Agent         string `json:"agent,omitempty"`
	Cwd           string `json:"cwd,omitempty"`
	AgentReason   string `json:"agent_reason,omitempty"`
	// AskReason is why the policy asks a human (the sensitive path it touches, the write
	// outside the project, the hidden command, …), masked and hardened like the summary; ""
	// when the policy did not ask. Rule names the rule that asked.
	AskReason string `json:"ask_reason,omitempty"`
	// Details is the full redacted action (flattened, not cut), shown on demand.
	Details string `json:"details,omitempty"`
	// AlwaysPatterns are the allowlist patterns an "allow always" would persist.
	AlwaysPatterns []string `json:"always_patterns,omitempty"`
	// Routes are the channel targets the card goes to, fixed when the request is created.
	Routes []Target  `json:"routes,omitempty"`
	Cards  []CardRef `json:"cards,omitempty"`
	// ShowAllowAlways is true when the policy persists "allow always".
	ShowAllowAlways bool `json:"show_allow_always,omitempty"`
	// Wait measures a pending request's approval window in a way a wall-clock step across
	// a restart cannot stretch (nil on records from before it existed).
	Wait *WaitClock `json:"wait,omitempty"`
}

// WaitClock is how long a pending request may still wait, as of one reading of the clocks.
type WaitClock struct {
	// Window is the whole approval window; Waited how much of it had passed at the reading.
	Window time.Duration `json:"window"`
	Waited time.Duration `json:"waited"`
	// At is the wall-clock time of the reading.
	At time.Time `json:"at"`
	// Boot and Uptime are the system's boot id and time since boot at the reading: within
	// one boot they measure the time since exactly, whatever the wall clock did.
	Boot   string        `json:"boot,omitempty"`
	Uptime time.Duration `json:"uptime,omitempty"`
}

// AllowlistItem is a persisted "allow always" entry with its provenance, as every store
// keeps it. An entry is identified by its pattern, its agent ("" for every agent) and its
// args glob ("" for any arguments): the same pattern may be persisted for several agents.
type AllowlistItem struct {
	Pattern   string    `json:"pattern"`
	Agent     string    `json:"agent,omitempty"`
	Args      string    `json:"args,omitempty"`
	AddedBy   string    `json:"added_by"`
	RequestID string    `json:"request_id"`
	AddedAt   time.Time `json:"added_at"`
}

// Unrestricted reports whether the entry applies to any arguments: one restricted to
// some arguments is left out of the policy until the policy can match arguments
// (dropping the restriction would make it wider than what the human allowed).
func (r AllowlistItem) Unrestricted() bool { return r.Args == "" }

// RevokeReason is the audit reason of the entry's revocation.
func (r AllowlistItem) RevokeReason() string {
	who := "every agent"
	if r.Agent != "" {
		who = "agent " + r.Agent
	}
	args := ""
	if r.Args != "" {
		args = " args " + r.Args
	}
	return "revoked " + r.Pattern + args + " for " + who
}

// AllowlistSelector picks persisted entries of one pattern: a nil Agent or Args matches
// every value, a set one only that value ("" being every agent, or any arguments).
type AllowlistSelector struct {
	Pattern string
	Agent   *string
	Args    *string
}

// Matches reports whether the selector picks r.
func (sel AllowlistSelector) Matches(r AllowlistItem) bool {
	return r.Pattern == sel.Pattern && (sel.Agent == nil || *sel.Agent == r.Agent) && (sel.Args == nil || *sel.Args == r.Args)
}

// Target is one chat of one channel a card is sent to.
type Target struct {
	Channel string `json:"channel"`
	Chat    string `json:"chat"`
}

// Live reports whether the request still waits for a decision at time now.
func (r *Request) Live(now time.Time) bool {
	return r.State == StatePending && (r.ExpiresAt.IsZero() || now.Before(r.ExpiresAt))
}

// AuditEntry is one line of the append-only trail.
type AuditEntry struct {
	Seq         uint64    `json:"seq"`
	Time        time.Time `json:"time"`
	Event       string    `json:"event"`
	RequestID   string    `json:"request_id,omitempty"`
	Session     string    `json:"session,omitempty"`
	Agent       string    `json:"agent,omitempty"`
	Tool        string    `json:"tool,omitempty"`
	State       State     `json:"state,omitempty"`
	Outcome     Outcome   `json:"outcome,omitempty"`
	Source      Source    `json:"source,omitempty"`
	DecidedBy   string    `json:"decided_by,omitempty"`
	Reason      string    `json:"reason,omitempty"`
	Summary     string    `json:"summary,omitempty"`
	Fingerprint string    `json:"fingerprint,omitempty"`
	Rule        string    `json:"rule,omitempty"`
	// AskReason is why the policy asked a human, on the entry of a request it asked about.
	AskReason string `json:"ask_reason,omitempty"`
	Channel   string `json:"channel,omitempty"`
	Actor     string `json:"actor,omitempty"`
}

// Audit event names.
const (
	EventRequest      = "request"
	EventDecision     = "decision"
	EventUnauthorized = "unauthorized"
	EventUnpause      = "unpause"
	EventSession      = "session"
	EventAllowlist    = "allowlist"
	EventChannel      = "channel"
	EventMigration    = "migration"
	// EventQuarantine records a damaged record moved aside (its request denied, its
	// session paused, its allowlist entry dropped).
	EventQuarantine = "quarantine"
)

// Resolution is a decision as the store applies it: the new state of a pending request.
type Resolution struct {
	State     State
	Outcome   Outcome
	Source    Source
	DecidedBy string
	Reason    string
	Message   string
	DecidedAt time.Time
	// Explicit marks an allow a human gave (see Request.Explicit).
	Explicit bool
	// RequireLive refuses the decision when the request's deadline has passed: the store
	// then times the request out instead, in the same transaction.
	RequireLive bool
	// TimeoutMessage is the agent message used when RequireLive turns it into a timeout.
	TimeoutMessage string
	// Audit is the entry appended with the decision.
	Audit AuditEntry
}

// Sentinel errors shared by store and gate.
var (
	ErrNotFound = errors.New("request not found")
)

// DamagedRecord is a stored record a query could not read and skipped.
type DamagedRecord struct {
	Bucket string `json:"bucket"`
	Key    string `json:"key"`
	Error  string `json:"error"`
}
