package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/approvebot/approvebot/internal/retry"
)

// Verdict is how an ask ended for the agent. The zero value is VerdictError, so a Result
// nobody filled in refuses.
type Verdict int

const (
	// VerdictError: no decision could be obtained (unreachable server, bad answer, bad
	// token, the caller went away…). A refusal.
	VerdictError Verdict = iota
	// VerdictDenied: refused by a human, the policy, the floor, the ledger, a pause, the
	// unattended rule, the fallback or a cancel.
	VerdictDenied
	// VerdictTimeout: nobody decided in time (the server's approval timeout, or the
	// caller's own deadline). A refusal.
	VerdictTimeout
	// VerdictAllowed: the server answered, consistently, that this call may run.
	VerdictAllowed
)

func (v Verdict) String() string {
	switch v {
	case VerdictDenied:
		return "denied"
	case VerdictTimeout:
		return "timeout"
	case VerdictAllowed:
		return "allowed"
	}
	return "error"
}

// Result is the outcome of [Client.Ask].
type Result struct {
	Verdict Verdict
	// Message is for the model: the server's message, or one written here for a failure.
	// It is never empty.
	Message string
	// Request is the last request object the server sent, if any.
	Request *Request
	// Err says why, for VerdictError (and for a timeout of the caller's own deadline).
	Err error
}

// Allowed reports whether the call may run. Only VerdictAllowed with a request object
// that says so is an allow.
func (r Result) Allowed() bool {
	return r.Verdict == VerdictAllowed && r.Err == nil && r.Request != nil &&
		r.Request.Allowed && r.Request.State == StateAllowed
}

// ExplicitlyAllowed reports whether the call may run on an explicit allow (a tool
// permission, the allowlist, a safe bin, a proven-inert builtin, a grant or a human): an
// integration answers its agent "allow" only then, and otherwise leaves the decision to the
// agent's own permission flow.
func (r Result) ExplicitlyAllowed() bool {
	return r.Allowed() && r.Request.Explicit
}

// Ask files the call and waits for the decision, answering a Result that allows only when
// the server said so. It never returns an allow on any failure. When ctx ends or the
// request's own deadline (plus Options.Margin) passes while it is still pending, the
// request is cancelled on the server (best effort) so that no late approval can apply to a
// call nobody will run, and the Result is a refusal.
func (c *Client) Ask(ctx context.Context, a Ask) (res Result) {
	defer func() {
		// A panic anywhere below is a refusal too.
		if p := recover(); p != nil {
			res = failure(fmt.Errorf("internal error: %v", p), nil)
		}
		if res.Verdict == VerdictAllowed && !res.Allowed() {
			res = failure(errors.New("inconsistent allow"), res.Request)
		}
	}()
	if strings.TrimSpace(a.Tool) == "" {
		return failure(errors.New("no tool name"), nil)
	}
	if a.Session == "" {
		return failure(errors.New("no session"), nil)
	}
	start := time.Now()
	req, err := c.createRetrying(ctx, a)
	if err != nil {
		return c.fromError(ctx, err, nil)
	}
	deadline := c.deadline(req, start)
	for {
		switch req.State {
		case StateAllowed:
			if ctx.Err() != nil {
				// The caller gave up: a decision it can no longer act on is not used.
				return c.fromError(ctx, ctx.Err(), req)
			}
			return Result{Verdict: VerdictAllowed, Message: messageOr(req, "Allowed by approvebot."), Request: req}
		case StateDenied:
			v := VerdictDenied
			if req.Outcome == "timeout" {
				v = VerdictTimeout
			}
			return Result{Verdict: v, Message: messageOr(req, deniedMessage(req)), Request: req}
		case StatePending:
		default:
			return failure(&ProtocolError{What: "unknown state"}, req)
		}
		next, err := c.pollRetrying(ctx, req.ID, deadline)
		if err != nil {
			return c.fromError(ctx, err, req)
		}
		req = next
	}
}

// deadline is when the client stops waiting: the request's own approval window (measured
// on the server's clock, applied to ours) plus the margin.
func (c *Client) deadline(r *Request, start time.Time) time.Time {
	window := c.o.MaxWait
	if !r.ExpiresAt.IsZero() && !r.CreatedAt.IsZero() {
		if w := r.ExpiresAt.Sub(r.CreatedAt); w >= 0 && w < window {
			window = w
		}
	}
	return start.Add(window + c.o.Margin)
}

// createRetrying files the request, retrying only while it surely did not reach the server
// or the server refused it before storing anything.
func (c *Client) createRetrying(ctx context.Context, a Ask) (*Request, error) {
	until := time.Now().Add(c.o.CreateRetry)
	backoff := 100 * time.Millisecond
	for {
		req, err := c.Create(ctx, a, c.o.CreateWait)
		if err == nil {
			return req, nil
		}
		delay, again := createRetryable(err)
		if !again || ctx.Err() != nil {
			return nil, err
		}
		if delay == 0 {
			delay = backoff
			backoff = min(backoff*2, 2*time.Second)
		}
		if time.Now().Add(delay).After(until) {
			return nil, err
		}
		if !retry.Sleep(ctx, delay) {
			return nil, err
		}
	}
}

// createRetryable: a POST is repeated only when nothing was stored by the first one.
func createRetryable(err error) (time.Duration, bool) {
	var te *TransportError
	if errors.As(err, &te) {
		return 0, te.NotSent
	}
	var ae *APIError
	if errors.As(err, &ae) {
		switch {
		case ae.Status == http.StatusTooManyRequests && (ae.Code == "rate_limited" || ae.Code == "too_many_pending"):
			return min(ae.RetryAfter, 5*time.Second), true
		case ae.Status == http.StatusServiceUnavailable && ae.Code == "shutting_down":
			return 0, true
		}
	}
	return 0, false
}

// errDeadline: the request's own deadline (plus the margin) passed while it was pending.
var errDeadline = errors.New("no decision before the request's deadline")

// pollRetrying long-polls until the request changes state or a poll window ends, retrying
// across transport errors, 429 and 5xx (a restarting server) until the deadline.
func (c *Client) pollRetrying(ctx context.Context, id string, deadline time.Time) (*Request, error) {
	backoff := 200 * time.Millisecond
	var last error
	for {
		left := time.Until(deadline)
		if left <= 0 {
			if last != nil {
				return nil, fmt.Errorf("%w (last error: %v)", errDeadline, last)
			}
			return nil, errDeadline
		}
		wait := min(c.o.PollWait, left)
		wait = max(wait, time.Second)
		req, err := c.Get(ctx, id, wait)
		if err == nil {
			return req, nil
		}
		if ctx.Err() != nil || !pollRetryable(err) {
			return nil, err
		}
		last = err
		delay := backoff
		backoff = min(backoff*2, 2*time.Second)
		var ae *APIError
		if errors.As(err, &ae) && ae.RetryAfter > 0 {
			delay = min(ae.RetryAfter, 10*time.Second)
		}
		delay = min(delay, max(time.Until(deadline), 0))
		if !retry.Sleep(ctx, delay) {
			return nil, ctx.Err()
		}
	}
}

func pollRetryable(err error) bool {
	var te *TransportError
	if errors.As(err, &te) {
		return true
	}
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Status == http.StatusTooManyRequests || ae.Status >= 500
	}
	// A per-poll timeout of our own (the server held the answer too long) is retryable;
	// it shows up as a transport error. Anything else — a malformed answer — is not.
	return false
}

// cancelQuietly withdraws a request the client gave up on, with a fresh short deadline.
func (c *Client) cancelQuietly(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = c.Cancel(ctx, id)
}

// fromError turns a failure into a refusal with a message for the model.
func (c *Client) fromError(ctx context.Context, err error, req *Request) Result {
	if req != nil && req.State == StatePending {
		c.cancelQuietly(req.ID)
	}
	switch {
	case errors.Is(err, errDeadline):
		return Result{Verdict: VerdictTimeout, Request: req, Err: err,
			Message: "Refused: approvebot gave no decision in time. Treat this as a refusal."}
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return Result{Verdict: VerdictTimeout, Request: req, Err: err,
			Message: "Refused: no decision arrived within this tool's own time limit. Treat this as a refusal."}
	}
	return failure(err, req)
}

func failure(err error, req *Request) Result {
	return Result{Verdict: VerdictError, Request: req, Err: err, Message: FailureMessage(err)}
}

// FailureMessage is the model-facing refusal for a failure to obtain a decision.
func FailureMessage(err error) string {
	why := "unknown error"
	if err != nil {
		why = clean(err.Error(), 300)
	}
	return "Refused: approvebot could not decide on this call (" + why + "), so it is not allowed. " +
		"Treat this as a refusal; do not try to achieve the same result another way."
}

func messageOr(r *Request, fallback string) string {
	if m := strings.TrimSpace(r.Message); m != "" {
		return clean(m, 4000)
	}
	return fallback
}

func deniedMessage(r *Request) string {
	var b strings.Builder
	b.WriteString("Refused by approvebot")
	if r.Source != "" {
		b.WriteString(" (" + clean(r.Source, 40) + ")")
	}
	b.WriteString(".")
	if r.Reason != "" {
		b.WriteString(" " + clean(r.Reason, 1000))
	}
	b.WriteString(" Do not retry it, rewrite it, or achieve the same result another way.")
	return b.String()
}
