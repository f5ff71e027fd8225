package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	slackgo "github.com/slack-go/slack"

	"github.com/approvebot/approvebot/core/render"
	"github.com/approvebot/approvebot/internal/retry"
)

// Error codes that mean the token or the app is unusable: the channel stops, loudly,
// instead of retrying (https://api.slack.com/methods/apps.connections.open#errors).
var fatalCodes = map[string]bool{
	"invalid_auth":            true,
	"not_authed":              true,
	"account_inactive":        true,
	"token_revoked":           true,
	"token_expired":           true,
	"missing_scope":           true,
	"not_allowed_token_type":  true,
	"no_permission":           true,
	"team_access_not_granted": true,
	"app_uninstalled":         true,
	"org_login_required":      true,
	"ekm_access_denied":       true,
}

// Error codes that concern one message or one trigger, not the channel's health.
var messageCodes = map[string]bool{
	"message_not_found":   true,
	"cant_update_message": true,
	"edit_window_closed":  true,
	"expired_trigger_id":  true,
	"invalid_trigger_id":  true,
	"user_not_in_channel": true,
	"user_not_found":      true,
}

// retryable is the retry policy, apart from the backoff loop: whether err is worth another
// attempt, and the wait the platform asked for (0: use the backoff).
func retryable(err error) (wait time.Duration, retry bool) {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return 0, false
	}
	var rl *slackgo.RateLimitedError
	if errors.As(err, &rl) {
		return rl.RetryAfter, true
	}
	var sc slackgo.StatusCodeError
	if errors.As(err, &sc) {
		return 0, sc.Code == 429 || sc.Code >= 500
	}
	var se slackgo.SlackErrorResponse
	if errors.As(err, &se) {
		switch se.Err {
		case "ratelimited", "rate_limited", "internal_error", "fatal_error", "service_unavailable", "request_timeout":
			return 0, true
		}
		return 0, false
	}
	var ue *url.Error
	var ne net.Error
	if errors.As(err, &ue) || errors.As(err, &ne) {
		return 0, true
	}
	return 0, false
}

// slackCode is the Slack error code of err ("" when it is not a Slack error answer).
func slackCode(err error) string {
	var se slackgo.SlackErrorResponse
	if errors.As(err, &se) {
		return se.Err
	}
	return ""
}

// isFatal reports whether err means the credentials or the app are unusable.
func isFatal(err error) bool {
	if err == nil {
		return false
	}
	if fatalCodes[slackCode(err)] {
		return true
	}
	// The socketmode package compares error strings itself; so do we for its plain errors.
	return fatalCodes[strings.TrimSpace(err.Error())]
}

// CallError is a Web API call that gave up. Its message never contains a secret.
type CallError struct {
	Method string
	// Code is Slack's error code ("" for HTTP and transport errors).
	Code string
	msg  string
	err  error
}

func (e *CallError) Error() string { return "slack " + e.Method + ": " + e.msg }

// Unwrap gives the underlying error, for errors.Is and errors.As.
func (e *CallError) Unwrap() error { return e.err }

// call runs f until it succeeds, fails for good, or ctx ends (internal/retry): 429 waits
// what Retry-After says; 5xx and transport errors back off. A wait that would pass ctx's
// deadline gives up at once, so the gate can fall back instead of waiting in vain.
func (c *Channel) call(ctx context.Context, method string, f func(context.Context) error) error {
	p := c.retry
	p.OnRetry = func(attempt int, err error, wait time.Duration) {
		c.log.Debug("slack call will be retried", "method", method, "attempt", attempt, "wait", wait, "err", c.scrub(err.Error()))
	}
	err := p.Do(ctx, f, func(err error) retry.Verdict {
		wait, again := retryable(err)
		return retry.Verdict{Retry: again, After: wait}
	})
	if err == nil {
		c.health.ok()
		return nil
	}
	var g *retry.Error
	if !errors.As(err, &g) {
		return c.giveUp(method, err, "")
	}
	last, msg := g.Last, ""
	switch g.Reason {
	case retry.Ended:
		if last == nil {
			last = g.Ctx
		}
		msg = fmt.Sprintf("gave up after %d attempt(s): %v", g.Attempts, g.Ctx)
	case retry.Deadline:
		msg = fmt.Sprintf("%s; retrying in %s would pass the deadline", c.scrub(last.Error()), g.Wait.Round(time.Millisecond))
	}
	return c.giveUp(method, last, msg)
}

func (c *Channel) giveUp(method string, err error, msg string) error {
	if msg == "" {
		msg = c.scrub(err.Error())
	}
	code := slackCode(err)
	e := &CallError{Method: method, Code: code, msg: msg, err: err}
	unhealthy := !messageCodes[code] && !errors.Is(err, context.Canceled)
	c.health.failed(e.Error(), unhealthy)
	if isFatal(err) {
		c.log.Error("slack rejected the credentials", "method", method, "code", code)
	}
	return e
}

// scrub removes every secret from s.
func (c *Channel) scrub(s string) string {
	for _, secret := range []string{c.secrets.BotToken, c.secrets.AppToken, c.secrets.SigningSecret} {
		if len(secret) >= 8 {
			s = strings.ReplaceAll(s, secret, "[redacted]")
		}
	}
	return s
}

// toBlocks carries render's Block Kit JSON into slack-go's block types, so the blocks sent
// are the ones `approvebot check -json` shows.
func toBlocks(bs []render.SlackBlock) ([]slackgo.Block, error) {
	raw, err := json.Marshal(bs)
	if err != nil {
		return nil, err
	}
	var out slackgo.Blocks
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	return out.BlockSet, nil
}
