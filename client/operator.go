package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Operator endpoints. They need an operator token and are not retried.

// Pending lists the requests waiting for a decision, oldest first.
func (c *Client) Pending(ctx context.Context) ([]Request, error) {
	var out struct {
		Requests []json.RawMessage `json:"requests"`
	}
	if err := c.call(ctx, http.MethodGet, "/v1/requests", url.Values{"state": {"pending"}}, nil, &out); err != nil {
		return nil, err
	}
	list := make([]Request, 0, len(out.Requests))
	for _, raw := range out.Requests {
		r, err := decodeRequest(http.StatusOK, raw, false)
		if err != nil {
			return nil, err
		}
		list = append(list, *r)
	}
	return list, nil
}

// Decision outcomes an operator may choose.
const (
	OutcomeAllowOnce    = "allow_once"
	OutcomeAllowSession = "allow_session"
	OutcomeAllowAlways  = "allow_always"
	OutcomeDeny         = "deny"
)

// Decide decides a pending request. A request already decided is an *APIError with status
// 409 whose Request, DecidedBy and DecidedAt say by whom.
func (c *Client) Decide(ctx context.Context, id, outcome, reason string) (*Request, error) {
	body := map[string]string{"outcome": outcome}
	if reason != "" {
		body["reason"] = reason
	}
	var raw json.RawMessage
	if err := c.call(ctx, http.MethodPost, "/v1/requests/"+url.PathEscape(id)+"/decision", nil, body, &raw); err != nil {
		return nil, err
	}
	return decodeRequest(http.StatusOK, raw, false)
}

// AuditEntry is one line of the decision trail.
type AuditEntry struct {
	Seq         uint64    `json:"seq"`
	Time        time.Time `json:"time"`
	Event       string    `json:"event"`
	RequestID   string    `json:"request_id,omitempty"`
	Session     string    `json:"session,omitempty"`
	Agent       string    `json:"agent,omitempty"`
	Tool        string    `json:"tool,omitempty"`
	State       string    `json:"state,omitempty"`
	Outcome     string    `json:"outcome,omitempty"`
	Source      string    `json:"source,omitempty"`
	DecidedBy   string    `json:"decided_by,omitempty"`
	Reason      string    `json:"reason,omitempty"`
	Summary     string    `json:"summary,omitempty"`
	Fingerprint string    `json:"fingerprint,omitempty"`
	Rule        string    `json:"rule,omitempty"`
	AskReason   string    `json:"ask_reason,omitempty"`
	Channel     string    `json:"channel,omitempty"`
	Actor       string    `json:"actor,omitempty"`
}

// AuditQuery selects audit entries; every non-empty field must match. Since and Until are
// RFC 3339 times or durations ago such as "1h". Before is a page's NextBefore.
type AuditQuery struct {
	RequestID string
	Session   string
	Agent     string
	Tool      string
	Outcome   string
	Source    string
	Since     string
	Until     string
	Before    uint64
	Limit     int
}

// AuditPage is one page of the trail, oldest first. NextBefore, when not zero, is the
// Before of the next, older page.
type AuditPage struct {
	Entries    []AuditEntry `json:"entries"`
	NextBefore uint64       `json:"next_before"`
}

// Audit reads one page of the decision trail: the newest matching entries (at most
// Limit; the server's default is 100) before q.Before.
func (c *Client) Audit(ctx context.Context, q AuditQuery) (AuditPage, error) {
	v := url.Values{}
	for _, p := range [][2]string{
		{"request", q.RequestID}, {"session", q.Session}, {"agent", q.Agent}, {"tool", q.Tool},
		{"outcome", q.Outcome}, {"source", q.Source}, {"since", q.Since}, {"until", q.Until},
	} {
		if p[1] != "" {
			v.Set(p[0], p[1])
		}
	}
	if q.Before > 0 {
		v.Set("before", strconv.FormatUint(q.Before, 10))
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	var out AuditPage
	if err := c.call(ctx, http.MethodGet, "/v1/audit", v, nil, &out); err != nil {
		return AuditPage{}, err
	}
	return out, nil
}

// AllowlistEntry is one persisted "allow always" pattern, for one agent ("" for every
// agent) and optionally only some arguments (an argv glob, "" for any).
type AllowlistEntry struct {
	Pattern   string    `json:"pattern"`
	Agent     string    `json:"agent,omitempty"`
	Args      string    `json:"args,omitempty"`
	AddedBy   string    `json:"added_by,omitempty"`
	RequestID string    `json:"request_id,omitempty"`
	AddedAt   time.Time `json:"added_at,omitzero"`
}

// Allowlist lists the persisted allowlist entries.
func (c *Client) Allowlist(ctx context.Context) ([]AllowlistEntry, error) {
	var out struct {
		Entries []AllowlistEntry `json:"entries"`
	}
	if err := c.call(ctx, http.MethodGet, "/v1/allowlist", nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Entries, nil
}

// Revoke removes the persisted allowlist entries of a pattern and returns them. A nil
// agent or args matches every entry of the pattern; a set one only the entry with that
// value ("" being the entry for every agent, or for any arguments).
func (c *Client) Revoke(ctx context.Context, pattern string, agent, args *string) ([]AllowlistEntry, error) {
	q := url.Values{"pattern": {pattern}}
	if agent != nil {
		q.Set("agent", *agent)
	}
	if args != nil {
		q.Set("args", *args)
	}
	var out struct {
		Revoked []AllowlistEntry `json:"revoked"`
	}
	if err := c.call(ctx, http.MethodDelete, "/v1/allowlist", q, nil, &out); err != nil {
		return nil, err
	}
	return out.Revoked, nil
}

// Session is a session's state as the server reports it. Sessions belong to an agent:
// with Agent set it is that agent's session; with Scope "every_agent" the change applied
// to the session name for every agent, Note says so and Agents lists each agent that has
// its own record of it.
type Session struct {
	Session    string         `json:"session"`
	Agent      string         `json:"agent,omitempty"`
	Scope      string         `json:"scope,omitempty"`
	Note       string         `json:"note,omitempty"`
	Tier       string         `json:"tier"`
	Unattended bool           `json:"unattended"`
	Paused     bool           `json:"paused"`
	Denials    int            `json:"denials"`
	Parent     string         `json:"parent"`
	Agents     []AgentSession `json:"agents,omitempty"`
}

// AgentSession is one agent's session of a name, as it applies to that agent.
type AgentSession struct {
	Agent      string `json:"agent"`
	Tier       string `json:"tier"`
	Unattended bool   `json:"unattended"`
	Paused     bool   `json:"paused"`
	Denials    int    `json:"denials"`
	Parent     string `json:"parent"`
}

// SessionUpdate changes a session; nil fields are left alone. Agent names the agent whose
// session changes; "" changes the session name for every agent.
type SessionUpdate struct {
	Agent      string  `json:"agent,omitempty"`
	Tier       *string `json:"tier,omitempty"`
	Unattended *bool   `json:"unattended,omitempty"`
}

// SetSession changes a session's tier or unattended mark.
func (c *Client) SetSession(ctx context.Context, name string, u SessionUpdate) (*Session, error) {
	var s Session
	if err := c.call(ctx, http.MethodPut, "/v1/sessions/"+url.PathEscape(name), nil, u, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// Unpause lifts the pause of an agent's session and resets its denial count; with agent
// "" it does so for every agent's session of that name.
func (c *Client) Unpause(ctx context.Context, name, agent string) (*Session, error) {
	var s Session
	var body any
	if agent != "" {
		body = map[string]string{"agent": agent}
	}
	if err := c.call(ctx, http.MethodPost, "/v1/sessions/"+url.PathEscape(name)+"/unpause", nil, body, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// call sends one operator request expecting 200 and a JSON object.
func (c *Client) call(ctx context.Context, method, path string, q url.Values, body, out any) error {
	status, h, raw, err := c.do(ctx, method, path, q, body, maxList)
	if err != nil {
		return err
	}
	if status != http.StatusOK {
		return apiError(status, h, raw)
	}
	if err := checkStrict(raw); err != nil {
		return &ProtocolError{Status: status, What: err.Error()}
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return &ProtocolError{Status: status, What: err.Error()}
	}
	return nil
}

// Backup streams a consistent copy of the server's live database (GET /v1/backup) into w
// and returns the bytes written. A copy shorter than the length the server announced — the
// server cut it off, or the connection dropped — is an error: never keep it as a backup.
func (c *Client) Backup(ctx context.Context, w io.Writer) (int64, error) {
	u := *c.base
	u.Path = c.base.Path + "/v1/backup"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return 0, fmt.Errorf("building the request: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("User-Agent", c.o.UserAgent)
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, &TransportError{Op: "GET /v1/backup", Err: unwrapURL(err), NotSent: notSent(err)}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxObject))
		return 0, apiError(resp.StatusCode, resp.Header, raw)
	}
	if resp.ContentLength < 0 {
		return 0, &ProtocolError{Status: resp.StatusCode, What: "the backup has no Content-Length"}
	}
	n, err := io.Copy(w, resp.Body)
	if err != nil {
		return n, &TransportError{Op: "reading the backup", Err: err}
	}
	if n != resp.ContentLength {
		return n, &ProtocolError{Status: resp.StatusCode, What: fmt.Sprintf("the backup was cut off at %d of %d bytes", n, resp.ContentLength)}
	}
	return n, nil
}
