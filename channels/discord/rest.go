package discord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"

	"github.com/approvebot/approvebot/internal/retry"
)

// discordHost is the host every discordgo REST endpoint is built on (its Endpoint* variables
// are computed at package init and cannot be changed).
const discordHost = "discord.com"

// rewriteTransport sends every discord.com request to the configured api_url instead, which
// is how approvebot honours api_url: discordgo has no base-URL option.
type rewriteTransport struct {
	base *url.URL
	next http.RoundTripper
	// closed refuses the gateway lookup after the channel stopped, so discordgo's own
	// reconnect loop (which has no context) cannot connect again.
	closed *atomic.Bool
}

func (t *rewriteTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if t.closed.Load() && strings.HasSuffix(r.URL.Path, "/gateway") {
		// Only the gateway lookup is refused: card edits still go out during shutdown.
		if r.Body != nil {
			r.Body.Close()
		}
		return nil, errStopped
	}
	if t.base == nil || r.URL.Host != discordHost {
		return t.next.RoundTrip(r)
	}
	r2 := r.Clone(r.Context())
	u := *r.URL
	u.Scheme = t.base.Scheme
	u.Host = t.base.Host
	u.Path = joinPath(t.base.Path, r.URL.Path)
	u.RawPath = ""
	r2.URL = &u
	r2.Host = ""
	return t.next.RoundTrip(r2)
}

func joinPath(a, b string) string {
	a = strings.TrimSuffix(a, "/")
	if !strings.HasPrefix(b, "/") {
		b = "/" + b
	}
	return a + b
}

var errStopped = errors.New("discord channel stopped")

// newHTTPClient builds the session's client: api_url (u, nil for Discord's) honoured, a
// request timeout, and no request after the channel stopped.
func newHTTPClient(u *url.URL, base *http.Client, closed *atomic.Bool) *http.Client {
	next := http.RoundTripper(http.DefaultTransport.(*http.Transport).Clone())
	timeout := 20 * time.Second
	if base != nil {
		if base.Transport != nil {
			next = base.Transport
		}
		if base.Timeout > 0 {
			timeout = base.Timeout
		}
	}
	return &http.Client{
		Transport: &rewriteTransport{base: u, next: next, closed: closed},
		Timeout:   timeout,
	}
}

// newDialer is the gateway's websocket dialer (gorilla): a private one, never the shared
// websocket.DefaultDialer, refusing to dial after the channel stopped.
func newDialer(closed *atomic.Bool) *websocket.Dialer {
	d := &net.Dialer{Timeout: 15 * time.Second, KeepAlive: 30 * time.Second}
	return &websocket.Dialer{
		Proxy:            http.ProxyFromEnvironment,
		HandshakeTimeout: 15 * time.Second,
		NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if closed.Load() {
				return nil, errStopped
			}
			return d.DialContext(ctx, network, addr)
		},
	}
}

// apiError is an error from Discord safe to log: the operation, the HTTP status and
// Discord's error code and message, never a URL (interaction tokens are in URL paths) and
// never the bot token.
type apiError struct {
	op         string
	status     int
	code       int
	message    string
	retryAfter time.Duration
	rateLimit  bool
	cause      error // transport or context error, already stripped of URLs
}

func (e *apiError) Error() string {
	var b strings.Builder
	b.WriteString("discord " + e.op + ": ")
	switch {
	case e.rateLimit:
		fmt.Fprintf(&b, "rate limited (retry after %s)", e.retryAfter)
	case e.status != 0:
		fmt.Fprintf(&b, "HTTP %d", e.status)
		if e.code != 0 || e.message != "" {
			fmt.Fprintf(&b, " (code %d: %s)", e.code, e.message)
		}
	case e.cause != nil:
		b.WriteString(e.cause.Error())
	default:
		b.WriteString("failed")
	}
	return b.String()
}

func (e *apiError) Unwrap() error { return e.cause }

// retryable reports whether another attempt may succeed: rate limits, 5xx and transport
// errors; never a 4xx.
func (e *apiError) retryable() bool {
	switch {
	case e.rateLimit:
		return true
	case e.status >= 500:
		return true
	case e.status != 0:
		return false
	}
	return e.cause != nil && !errors.Is(e.cause, context.Canceled) && !errors.Is(e.cause, context.DeadlineExceeded) && !errors.Is(e.cause, errStopped)
}

// classify turns whatever discordgo returned into an *apiError, dropping URLs and the
// request (which carries the token in its header).
func classify(op string, err error, secrets ...string) *apiError {
	e := &apiError{op: op}
	var rest *discordgo.RESTError
	var rl *discordgo.RateLimitError
	var ue *url.Error
	switch {
	case errors.As(err, &rl):
		e.rateLimit = true
		if rl.RateLimit != nil && rl.TooManyRequests != nil {
			e.retryAfter = rl.RetryAfter
		}
	case errors.As(err, &rest):
		if rest.Response != nil {
			e.status = rest.Response.StatusCode
		}
		if rest.Message != nil {
			e.code = rest.Message.Code
			e.message = clip(rest.Message.Message, 200)
		} else {
			var m struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			}
			if json.Unmarshal(rest.ResponseBody, &m) == nil {
				e.code, e.message = m.Code, clip(m.Message, 200)
			}
		}
	case errors.As(err, &ue):
		e.cause = ue.Err
	case errors.Is(err, discordgo.ErrJSONUnmarshal):
		e.cause = errors.New("unreadable answer")
	default:
		e.cause = err
	}
	e.message = scrub(e.message, secrets...)
	if e.cause != nil {
		if msg := scrub(e.cause.Error(), secrets...); msg != e.cause.Error() {
			e.cause = errors.New(msg)
		}
	}
	return e
}

// scrub removes secrets from a message that came from elsewhere.
func scrub(s string, secrets ...string) string {
	for _, sec := range secrets {
		if len(sec) >= 8 {
			s = strings.ReplaceAll(s, sec, "[redacted]")
		}
	}
	return s
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// call runs one REST call with retries (internal/retry): 429 waits exactly retry_after, 5xx
// and transport errors back off, and nothing waits past ctx. discordgo's own rate-limit
// sleep and retry are off (they ignore the context); the call itself runs aside so that a
// bucket sleep inside discordgo cannot hold the caller past ctx either.
func (c *Channel) call(ctx context.Context, op string, fn func(opts ...discordgo.RequestOption) ([]byte, error)) ([]byte, error) {
	var body []byte
	err := c.retry.Do(ctx, func(ctx context.Context) error {
		b, err := c.once(ctx, fn)
		if err != nil {
			return classify(op, err, c.token, c.bare)
		}
		body = b
		return nil
	}, func(err error) retry.Verdict {
		e := err.(*apiError)
		v := retry.Verdict{Retry: e.retryable()}
		if e.rateLimit {
			v.After = e.retryAfter
		}
		return v
	})
	if err == nil {
		c.succeeded()
		return body, nil
	}
	var g *retry.Error
	if errors.As(err, &g) && g.Last == nil {
		return nil, &apiError{op: op, cause: g.Ctx}
	}
	var last *apiError
	errors.As(err, &last)
	return nil, c.failed(last)
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

func (c *Channel) once(ctx context.Context, fn func(opts ...discordgo.RequestOption) ([]byte, error)) ([]byte, error) {
	type result struct {
		body []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		b, err := fn(discordgo.WithContext(ctx), discordgo.WithRetryOnRatelimit(false), discordgo.WithRestRetries(0))
		done <- result{b, err}
	}()
	select {
	case r := <-done:
		return r.body, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// request sends one JSON body to a Discord endpoint through the session, with retries.
// bucket groups calls for discordgo's rate limiter (the route without its message id).
func (c *Channel) request(ctx context.Context, op, method, endpoint, bucket string, body any) ([]byte, error) {
	return c.call(ctx, op, func(opts ...discordgo.RequestOption) ([]byte, error) {
		return c.session.RequestWithBucketID(method, endpoint, body, bucket, opts...)
	})
}
