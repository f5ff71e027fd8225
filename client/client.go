// Package client is the Go client of approvebot's HTTP API (v1), for agents and operators.
//
// The agent entry point is [Client.Ask]: it files a request, long-polls it until a human or
// the policy decides, and answers a [Result]. It fails closed: a transport error, an answer
// that is not the request object, a status code it does not expect, an inconsistent object
// (allowed:true while pending, a missing "allowed" field, duplicate keys…), the caller's
// deadline or cancellation — every one is a refusal. Only an answer that says, consistently,
// that this request was allowed is an allow.
//
// Retries are limited to what is safe: filing a request (POST /v1/requests is not
// idempotent) is retried only when it surely did not reach the server (connection refused,
// 429, 503 shutting_down); reading it (GET /v1/requests/{id}) is retried across transport
// errors and a server restart until the request's own deadline has passed.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// DefaultURL is the server address when none is configured.
const DefaultURL = "http://127.0.0.1:8470"

// Environment variables the command-line tools read.
const (
	EnvURL     = "APPROVEBOT_URL"
	EnvToken   = "APPROVEBOT_TOKEN"
	EnvSession = "APPROVEBOT_SESSION"
)

// Options tune a Client. Zero values take the defaults.
type Options struct {
	// HTTPClient sends the requests (default: a dedicated client without an overall
	// timeout; every call sets its own deadline). Redirects are never followed.
	HTTPClient *http.Client
	// CreateWait is the wait sent with POST /v1/requests (default 2s). It is short on
	// purpose: if the connection drops while the server holds the POST, the server cancels
	// the request (we never learned its id, so nobody could use the decision); the long
	// wait happens in GET polls, which are safe to repeat.
	CreateWait time.Duration
	// PollWait is the wait of one GET long-poll (default 30s).
	PollWait time.Duration
	// CreateRetry bounds how long filing a request is retried while the server refuses
	// connections or answers 429/503 shutting_down (default 5s).
	CreateRetry time.Duration
	// Margin is how long after the request's own deadline polling goes on, to learn the
	// server's timeout decision across a restart (default 30s).
	Margin time.Duration
	// MaxWait caps the wait when the server states no deadline (default 10m).
	MaxWait time.Duration
	// UserAgent is sent with every request (default "approvebot-client").
	UserAgent string
}

// Client talks to one approvebot server with one bearer token.
type Client struct {
	base  *url.URL
	token string
	hc    *http.Client
	o     Options
}

// New returns a client for the server at baseURL (http or https) using token.
func New(baseURL, token string, o Options) (*Client, error) {
	if baseURL == "" {
		baseURL = DefaultURL
	}
	u, err := url.Parse(strings.TrimRight(baseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("server URL %q is not an http(s) URL", baseURL)
	}
	if u.User != nil {
		return nil, errors.New("server URL must not carry credentials; use the bearer token")
	}
	token = strings.TrimSpace(token)
	if token == "" {
		return nil, errors.New("no API token: set " + EnvToken + " (or the variable -token-env names)")
	}
	if strings.ContainsAny(token, "\r\n") {
		return nil, errors.New("the API token contains a line break")
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	// The API never redirects. Following one would re-send the call (and ask a server
	// nobody configured); a 3xx is answered as the unexpected status it is.
	hc := *o.HTTPClient
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	o.HTTPClient = &hc
	if o.CreateWait <= 0 {
		o.CreateWait = 2 * time.Second
	}
	if o.PollWait <= 0 {
		o.PollWait = 30 * time.Second
	}
	if o.CreateRetry <= 0 {
		o.CreateRetry = 5 * time.Second
	}
	if o.Margin <= 0 {
		o.Margin = 30 * time.Second
	}
	if o.MaxWait <= 0 {
		o.MaxWait = 10 * time.Minute
	}
	if o.UserAgent == "" {
		o.UserAgent = "approvebot-client"
	}
	return &Client{base: u, token: token, hc: o.HTTPClient, o: o}, nil
}

// Facts are what the agent declares about its tool. A tool that declares nothing is
// treated as mutating.
type Facts struct {
	ReadOnly    bool `json:"read_only,omitempty"`
	Idempotent  bool `json:"idempotent,omitempty"`
	Destructive bool `json:"destructive,omitempty"`
}

// Ask is one call an agent wants to make.
type Ask struct {
	Tool          string         `json:"tool"`
	Args          map[string]any `json:"args"`
	Session       string         `json:"session"`
	ParentSession string         `json:"parent_session,omitempty"`
	Cwd           string         `json:"cwd,omitempty"`
	Reason        string         `json:"reason,omitempty"`
	Facts         *Facts         `json:"facts,omitempty"`
	Unattended    bool           `json:"unattended,omitempty"`
	Tier          string         `json:"tier,omitempty"`
}

// Request is the request object of the API.
type Request struct {
	ID      string `json:"id"`
	State   string `json:"state"`
	Allowed bool   `json:"allowed"`
	// Explicit is true for an allow by a tool permission, the allowlist, a safe bin, a
	// proven-inert builtin, a session grant or a human, and false for an allow that is only
	// the tier's default. An integration answers its agent "allow" only when it is true.
	Explicit    bool      `json:"explicit,omitempty"`
	Outcome     string    `json:"outcome,omitempty"`
	Source      string    `json:"source,omitempty"`
	Reason      string    `json:"reason,omitempty"`
	Message     string    `json:"message,omitempty"`
	Summary     string    `json:"summary,omitempty"`
	Truncated   bool      `json:"truncated,omitempty"`
	Fingerprint string    `json:"fingerprint,omitempty"`
	DecidedBy   string    `json:"decided_by,omitempty"`
	CreatedAt   time.Time `json:"created_at,omitzero"`
	ExpiresAt   time.Time `json:"expires_at,omitzero"`
	DecidedAt   time.Time `json:"decided_at,omitzero"`
	Tool        string    `json:"tool,omitempty"`
	Session     string    `json:"session,omitempty"`
	Agent       string    `json:"agent,omitempty"`
	Rule        string    `json:"rule,omitempty"`
	// Cwd and AgentReason are the request's directory and the agent's stated reason, as
	// the server shows them (masked).
	Cwd         string `json:"cwd,omitempty"`
	AgentReason string `json:"agent_reason,omitempty"`
	// AskReason is why the policy asks a human (Rule names the rule), as the server shows
	// it (masked); "" when the policy did not ask.
	AskReason string `json:"ask_reason,omitempty"`
}

// Request states.
const (
	StatePending = "pending"
	StateAllowed = "allowed"
	StateDenied  = "denied"
)

// APIError is an error answer of the server: {"error":{"code","message"}}.
type APIError struct {
	Status  int
	Code    string
	Message string
	// DecidedBy, DecidedAt and Request come with a 409 already_decided.
	DecidedBy  string
	DecidedAt  string
	Request    *Request
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	if e.Code == "" {
		return fmt.Sprintf("unexpected answer HTTP %d", e.Status)
	}
	return fmt.Sprintf("%s (HTTP %d %s)", e.Message, e.Status, e.Code)
}

// ProtocolError is an answer that is not what the API promises: not JSON, the wrong shape,
// an unexpected status, an inconsistent request object.
type ProtocolError struct {
	Status int
	What   string
}

func (e *ProtocolError) Error() string {
	if e.Status == 0 {
		return "bad answer from approvebot: " + e.What
	}
	return fmt.Sprintf("bad answer from approvebot (HTTP %d): %s", e.Status, e.What)
}

// TransportError is a failure to talk to the server at all.
type TransportError struct {
	Op  string
	Err error
	// NotSent is true when the request surely never reached the server (the connection
	// could not be opened).
	NotSent bool
}

func (e *TransportError) Error() string { return e.Op + ": " + e.Err.Error() }
func (e *TransportError) Unwrap() error { return e.Err }

const (
	maxObject = 1 << 20  // a request object or an error
	maxList   = 64 << 20 // pending lists and audit pages
	// slack is added to a long-poll's wait for the HTTP round trip.
	slack = 15 * time.Second
)

// do sends one request and returns the status, headers and body (at most limit bytes).
func (c *Client) do(ctx context.Context, method, path string, query url.Values, body any, limit int64) (int, http.Header, []byte, error) {
	u := *c.base
	u.Path = c.base.Path + path
	if query != nil {
		u.RawQuery = query.Encode()
	}
	var rd io.Reader
	if body != nil {
		raw, err := marshal(body)
		if err != nil {
			return 0, nil, nil, fmt.Errorf("encoding the request: %w", err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("building the request: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.o.UserAgent)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, nil, nil, &TransportError{Op: method + " " + path, Err: unwrapURL(err), NotSent: notSent(err)}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return resp.StatusCode, resp.Header, nil, &TransportError{Op: "reading the answer to " + method + " " + path, Err: unwrapURL(err)}
	}
	if int64(len(raw)) > limit {
		return resp.StatusCode, resp.Header, nil, &ProtocolError{Status: resp.StatusCode, What: fmt.Sprintf("answer larger than %d bytes", limit)}
	}
	return resp.StatusCode, resp.Header, raw, nil
}

func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// unwrapURL drops the *url.Error wrapper, whose text repeats the URL.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// notSent reports whether a transport error happened before the request could be sent:
// the TCP connection (or the proxy's) was never established.
func notSent(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns)
}

// apiError builds the error for a non-success answer.
func apiError(status int, h http.Header, raw []byte) error {
	e := &APIError{Status: status}
	if v := h.Get("Retry-After"); v != "" {
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 {
			e.RetryAfter = time.Duration(n) * time.Second
		}
	}
	var wire struct {
		Error *struct {
			Code      string          `json:"code"`
			Message   string          `json:"message"`
			DecidedBy string          `json:"decided_by"`
			DecidedAt string          `json:"decided_at"`
			Request   json.RawMessage `json:"request"`
		} `json:"error"`
	}
	if len(raw) > 0 && json.Unmarshal(raw, &wire) == nil && wire.Error != nil {
		e.Code = clean(wire.Error.Code, 64)
		e.Message = clean(wire.Error.Message, 500)
		e.DecidedBy = clean(wire.Error.DecidedBy, 200)
		e.DecidedAt = clean(wire.Error.DecidedAt, 64)
		if len(wire.Error.Request) > 0 && string(wire.Error.Request) != "null" {
			if r, err := decodeRequest(status, wire.Error.Request, false); err == nil {
				e.Request = r
			}
		}
	}
	return e
}

// clean makes server-supplied text safe to print: control characters become spaces and
// the text is cut to max runes.
func clean(s string, max int) string {
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n >= max {
			b.WriteString("…")
			break
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == '\u2028' || r == '\u2029' || r == '\ufeff' || (r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069') {
			r = ' '
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// decodeRequest parses a request object strictly: a JSON object without duplicate keys,
// with "id", "state" and a boolean "allowed". When checkStatus is set, the HTTP status must
// match the state (200 decided, 202 pending).
func decodeRequest(status int, raw []byte, checkStatus bool) (*Request, error) {
	if err := checkStrict(raw); err != nil {
		return nil, &ProtocolError{Status: status, What: "not a JSON request object: " + err.Error()}
	}
	var presence struct {
		ID      *string `json:"id"`
		State   *string `json:"state"`
		Allowed *bool   `json:"allowed"`
	}
	if err := json.Unmarshal(raw, &presence); err != nil {
		return nil, &ProtocolError{Status: status, What: "malformed request object: " + err.Error()}
	}
	switch {
	case presence.ID == nil || *presence.ID == "":
		return nil, &ProtocolError{Status: status, What: `request object without "id"`}
	case presence.State == nil:
		return nil, &ProtocolError{Status: status, What: `request object without "state"`}
	case presence.Allowed == nil:
		return nil, &ProtocolError{Status: status, What: `request object without a boolean "allowed"`}
	}
	var r Request
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, &ProtocolError{Status: status, What: "malformed request object: " + err.Error()}
	}
	if err := consistent(&r); err != nil {
		return nil, &ProtocolError{Status: status, What: err.Error()}
	}
	if checkStatus {
		switch {
		case status == http.StatusOK && r.State == StatePending:
			return nil, &ProtocolError{Status: status, What: "HTTP 200 with a pending request"}
		case status == http.StatusAccepted && r.State != StatePending:
			return nil, &ProtocolError{Status: status, What: "HTTP 202 with a decided request"}
		case status != http.StatusOK && status != http.StatusAccepted:
			return nil, &ProtocolError{Status: status, What: "unexpected status for a request object"}
		}
	}
	return &r, nil
}

// consistent checks that state, allowed and outcome agree.
func consistent(r *Request) error {
	switch r.State {
	case StatePending:
		if r.Allowed {
			return errors.New("allowed:true on a pending request")
		}
		if r.Explicit {
			return errors.New("explicit:true on a pending request")
		}
		if r.Outcome != "" {
			return fmt.Errorf("outcome %q on a pending request", r.Outcome)
		}
	case StateAllowed:
		if !r.Allowed {
			return errors.New("state allowed with allowed:false")
		}
		switch r.Outcome {
		case "allow_once", "allow_session", "allow_always":
		default:
			return fmt.Errorf("state allowed with outcome %q", r.Outcome)
		}
	case StateDenied:
		if r.Allowed {
			return errors.New("state denied with allowed:true")
		}
		if r.Explicit {
			return errors.New("state denied with explicit:true")
		}
	default:
		return fmt.Errorf("unknown state %q", clean(r.State, 40))
	}
	return nil
}

// Create files a request. wait (0 for none) is how long the server may hold the answer.
// It is not retried: see [Client.Ask] for the safe sequence.
func (c *Client) Create(ctx context.Context, a Ask, wait time.Duration) (*Request, error) {
	body := struct {
		Ask
		Wait string `json:"wait,omitempty"`
	}{Ask: a}
	if a.Args == nil {
		body.Args = map[string]any{}
	}
	if wait > 0 {
		body.Wait = durationString(wait)
	}
	ctx, cancel := context.WithTimeout(ctx, wait+slack)
	defer cancel()
	status, h, raw, err := c.do(ctx, http.MethodPost, "/v1/requests", nil, body, maxObject)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK && status != http.StatusAccepted {
		return nil, apiError(status, h, raw)
	}
	return decodeRequest(status, raw, true)
}

// Get reads a request, holding the answer up to wait while it is pending.
func (c *Client) Get(ctx context.Context, id string, wait time.Duration) (*Request, error) {
	var q url.Values
	if wait > 0 {
		q = url.Values{"wait": {durationString(wait)}}
	}
	ctx, cancel := context.WithTimeout(ctx, wait+slack)
	defer cancel()
	status, h, raw, err := c.do(ctx, http.MethodGet, "/v1/requests/"+url.PathEscape(id), q, nil, maxObject)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK && status != http.StatusAccepted {
		return nil, apiError(status, h, raw)
	}
	r, err := decodeRequest(status, raw, true)
	if err != nil {
		return nil, err
	}
	if r.ID != id {
		return nil, &ProtocolError{Status: status, What: "answer is about another request"}
	}
	return r, nil
}

// Cancel withdraws a pending request (DELETE /v1/requests/{id}). On a 409 the error is an
// *APIError whose Request is the decided request.
func (c *Client) Cancel(ctx context.Context, id string) (*Request, error) {
	status, h, raw, err := c.do(ctx, http.MethodDelete, "/v1/requests/"+url.PathEscape(id), nil, nil, maxObject)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, apiError(status, h, raw)
	}
	return decodeRequest(status, raw, false)
}

func durationString(d time.Duration) string {
	// Whole milliseconds at least; the server parses Go durations.
	if d < time.Millisecond {
		d = time.Millisecond
	}
	return d.Round(time.Millisecond).String()
}

// Printable makes server-supplied text safe for a terminal: control and bidi characters
// become spaces and the text is cut to max runes.
func Printable(s string, max int) string { return clean(s, max) }
