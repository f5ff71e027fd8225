package telegram

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-telegram/bot"

	"github.com/approvebot/approvebot/internal/retry"
)

// APIError is a failed Bot API call, safe to log: it never holds the bot token (which is
// part of every API URL) and never wraps the library's error, whose text could.
type APIError struct {
	Method string
	// Code is the API's error_code (or HTTP status); 0 for a transport failure.
	Code int
	// Description is the API's description or the transport error, token removed.
	Description string
	// RetryAfter is parameters.retry_after of a 429.
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	if e.Code == 0 {
		return fmt.Sprintf("telegram %s: %s", e.Method, e.Description)
	}
	return fmt.Sprintf("telegram %s: %d %s", e.Method, e.Code, e.Description)
}

// Temporary reports whether trying again later may succeed: 429, 5xx and transport
// failures. Any other 4xx is the request's own fault and is not retried.
func (e *APIError) Temporary() bool {
	return e.Code == 0 || e.Code == http.StatusTooManyRequests || e.Code >= 500
}

// NotModified is Telegram's answer to an edit that changes nothing: the card already
// shows what it should.
func (e *APIError) NotModified() bool {
	return e.Code == http.StatusBadRequest && strings.Contains(e.Description, "message is not modified")
}

var errorCodeRe = regexp.MustCompile(`error response from telegram for method \w+, (\d{3}) `)

// apiError turns a library error into an APIError with the token scrubbed from its text.
func (c *Channel) apiError(method string, err error) *APIError {
	e := &APIError{Method: method, Description: c.scrub(err.Error())}
	var tooMany *bot.TooManyRequestsError
	var migrate *bot.MigrateError
	switch {
	case errors.As(err, &tooMany):
		e.Code = http.StatusTooManyRequests
		e.RetryAfter = time.Duration(tooMany.RetryAfter) * time.Second
	case errors.As(err, &migrate):
		e.Code = http.StatusBadRequest
		e.Description = c.scrub(fmt.Sprintf("%s (the group became a supergroup: put chat id %d in channels.telegram.chats)", migrate.Message, migrate.MigrateToChatID))
	case errors.Is(err, bot.ErrorBadRequest):
		e.Code = http.StatusBadRequest
	case errors.Is(err, bot.ErrorUnauthorized):
		e.Code = http.StatusUnauthorized
		e.Description = "unauthorized: the bot token was rejected"
	case errors.Is(err, bot.ErrorForbidden):
		e.Code = http.StatusForbidden
	case errors.Is(err, bot.ErrorNotFound):
		e.Code = http.StatusNotFound
	case errors.Is(err, bot.ErrorConflict):
		e.Code = http.StatusConflict
	default:
		if m := errorCodeRe.FindStringSubmatch(err.Error()); m != nil {
			e.Code, _ = strconv.Atoi(m[1])
		}
		// Otherwise a transport failure or an answer that is not the API's JSON (a proxy's
		// error page): Code 0, temporary.
	}
	return e
}

// scrub removes the bot token from a text.
func (c *Channel) scrub(s string) string {
	if c.token == "" {
		return s
	}
	s = strings.ReplaceAll(s, c.token, "<token>")
	if esc := url.PathEscape(c.token); esc != c.token {
		s = strings.ReplaceAll(s, esc, "<token>")
	}
	return s
}

// Backoff bounds between attempts when the API gives no retry_after.
const (
	backoffMin = 200 * time.Millisecond
	backoffMax = 5 * time.Second
)

// call runs fn until it succeeds, fails for good, or ctx ends (internal/retry): a 429 waits
// retry_after (giving up at once when that would pass ctx's deadline); 5xx and transport
// failures back off. The error is always an *APIError, wrapped with why it gave up when
// it did, or ctx's error.
func (c *Channel) call(ctx context.Context, method string, fn func(context.Context) error) error {
	p := c.retry
	p.OnRetry = func(_ int, err error, wait time.Duration) {
		c.log.Debug("telegram call failed, retrying", "method", method, "err", err, "wait", wait)
	}
	err := p.Do(ctx, func(ctx context.Context) error {
		if err := fn(ctx); err != nil {
			return c.apiError(method, err)
		}
		return nil
	}, func(err error) retry.Verdict {
		ae := err.(*APIError)
		return retry.Verdict{Retry: ae.Temporary(), After: ae.RetryAfter}
	})
	var gaveUp *retry.Error
	if !errors.As(err, &gaveUp) {
		return err
	}
	switch {
	case gaveUp.Last == nil:
		return gaveUp.Ctx
	case gaveUp.Reason == retry.Failed:
		return gaveUp.Last
	}
	return gaveUp
}

// observedClient is the library's HTTP client: it records each round trip for Health and
// removes the token from transport errors.
type observedClient struct {
	http *http.Client
	ch   *Channel
}

func (o *observedClient) Do(req *http.Request) (*http.Response, error) {
	method := req.URL.Path[strings.LastIndexByte(req.URL.Path, '/')+1:]
	resp, err := o.http.Do(req)
	if err != nil {
		if req.Context().Err() == nil {
			o.ch.health.failed(method, o.ch.scrub(err.Error()))
		}
		inner := errors.New(o.ch.scrub(err.Error()))
		var ue *url.Error
		if errors.As(err, &ue) {
			inner = errors.New(o.ch.scrub(ue.Err.Error()))
		}
		// Keep a cancelled or expired context recognisable (errors.Is) to the library.
		if ctxErr := req.Context().Err(); ctxErr != nil {
			inner = ctxErr
		}
		return nil, &url.Error{Op: req.Method, URL: "<telegram api>/" + method, Err: inner}
	}
	switch {
	case resp.StatusCode == http.StatusOK, resp.StatusCode == http.StatusBadRequest:
		// 400 is about one request (an unknown message, a not-modified edit): the API is up.
		o.ch.health.ok(method)
	default:
		o.ch.health.failed(method, fmt.Sprintf("telegram %s: HTTP %d", method, resp.StatusCode))
	}
	return resp, nil
}

// health tracks whether the Bot API answered lately.
type health struct {
	mu        sync.Mutex
	detail    string
	lastOK    time.Time
	lastFail  time.Time
	lastError string
	now       func() time.Time
}

func (h *health) ok(string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lastOK = h.now()
}

func (h *health) failed(method, msg string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lastFail = h.now()
	h.lastError = msg
}

func (h *health) setDetail(d string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.detail = d
}
