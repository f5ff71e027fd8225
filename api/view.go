package api

import (
	"net/http"
	"time"

	"github.com/approvebot/approvebot/core/approval"
)

// requestView is the request object of the API contract.
type requestView struct {
	ID          string     `json:"id"`
	State       string     `json:"state"`
	Allowed     bool       `json:"allowed"`
	Explicit    bool       `json:"explicit"`
	Outcome     *string    `json:"outcome"`
	Source      *string    `json:"source"`
	Reason      string     `json:"reason"`
	Message     string     `json:"message"`
	Summary     string     `json:"summary"`
	Truncated   bool       `json:"truncated"`
	Fingerprint string     `json:"fingerprint"`
	DecidedBy   *string    `json:"decided_by"`
	CreatedAt   time.Time  `json:"created_at"`
	ExpiresAt   *time.Time `json:"expires_at"`
	DecidedAt   *time.Time `json:"decided_at"`
	Tool        string     `json:"tool"`
	Session     string     `json:"session"`
	Agent       string     `json:"agent,omitempty"`
	Rule        string     `json:"rule,omitempty"`
	// Cwd and AgentReason are the request's working directory and the reason the agent
	// gave (its own words), masked and hardened like the summary; "" when not given.
	Cwd         string `json:"cwd"`
	AgentReason string `json:"agent_reason"`
	// AskReason is why the policy asks a human (with Rule, the rule that asked), masked
	// like the summary; "" when the policy did not ask.
	AskReason string `json:"ask_reason"`
	// Cards are the posted cards whose references are stored (operators only).
	Cards []cardView `json:"cards,omitempty"`
}

// cardView is where one card of a request was posted.
type cardView struct {
	Channel string `json:"channel"`
	Chat    string `json:"chat"`
	Message string `json:"message"`
}

func cardViews(refs []approval.CardRef) []cardView {
	out := make([]cardView, 0, len(refs))
	for _, c := range refs {
		out = append(out, cardView{Channel: c.Channel, Chat: c.Chat, Message: c.Message})
	}
	return out
}

func viewOf(r *approval.Request) requestView {
	v := requestView{
		ID: r.ID, State: string(r.State), Allowed: r.Allowed && r.State == approval.StateAllowed, Reason: r.Reason,
		Message: r.Message, Summary: r.Summary, Truncated: r.Truncated, Fingerprint: r.Fingerprint,
		CreatedAt: r.CreatedAt, Tool: r.Tool, Session: r.Session, Agent: r.Agent, Rule: r.Rule,
		Cwd: r.Cwd, AgentReason: r.AgentReason, AskReason: r.AskReason,
	}
	// Only an allow can be explicit.
	v.Explicit = v.Allowed && r.Explicit
	if r.Outcome != approval.OutcomeNone {
		o := string(r.Outcome)
		v.Outcome = &o
	}
	if r.Source != "" && r.State != approval.StatePending {
		src := string(r.Source)
		v.Source = &src
	}
	if r.DecidedBy != "" {
		v.DecidedBy = &r.DecidedBy
	}
	if !r.ExpiresAt.IsZero() {
		t := r.ExpiresAt
		v.ExpiresAt = &t
	}
	if !r.DecidedAt.IsZero() {
		t := r.DecidedAt
		v.DecidedAt = &t
	}
	return v
}

func writeRequest(w http.ResponseWriter, r approval.Request) {
	writeView(w, r, viewOf(&r))
}

func writeView(w http.ResponseWriter, r approval.Request, v requestView) {
	status := http.StatusOK
	if r.State == approval.StatePending {
		status = http.StatusAccepted
	}
	writeViewJSON(w, status, &v)
}
