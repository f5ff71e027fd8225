package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

const testToken = "test-token-0123456789abcdef"

const testID = "abcdefghijklmnopqrstuvwxyz"

// object renders a request object; fields are raw JSON fragments.
func object(id, state, allowed, outcome string) string {
	created := time.Now().UTC()
	return fmt.Sprintf(`{"id":%q,"state":%q,"allowed":%s,"outcome":%s,"source":"human","reason":"","message":"msg %s","summary":"ls","fingerprint":"f","decided_by":null,"created_at":%q,"expires_at":%q,"decided_at":null,"tool":"bash","session":"s"}`,
		id, state, allowed, outcome, state, created.Format(time.RFC3339Nano), created.Add(time.Minute).Format(time.RFC3339Nano))
}

var (
	pendingObj = object(testID, "pending", "false", "null")
	allowedObj = object(testID, "allowed", "true", `"allow_once"`)
	deniedObj  = object(testID, "denied", "false", `"deny"`)
)

func testAsk() Ask {
	return Ask{Tool: "bash", Args: map[string]any{"command": "rm -rf ./build"}, Session: "s1"}
}

func newTestClient(t *testing.T, url string, o Options) *Client {
	t.Helper()
	if o.CreateRetry == 0 {
		o.CreateRetry = 300 * time.Millisecond
	}
	if o.Margin == 0 {
		o.Margin = 200 * time.Millisecond
	}
	c, err := New(url, testToken, o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func write(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// hangup closes the connection without any answer.
func hangup(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("no hijacker")
	}
	c, _, err := hj.Hijack()
	if err == nil {
		c.Close()
	}
}

// fake is an API server whose POST and GET answers a test chooses.
type fake struct {
	*httptest.Server
	create, get         http.HandlerFunc
	creates, gets, dels atomic.Int32
}

func newFake(t *testing.T, create, get http.HandlerFunc) *fake {
	f := &fake{create: create, get: get}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+testToken {
			write(w, 401, `{"error":{"code":"unauthorized","message":"missing or invalid bearer token"}}`)
			return
		}
		switch {
		case r.Method == "POST" && r.URL.Path == "/v1/requests":
			f.creates.Add(1)
			f.create(w, r)
		case r.Method == "GET" && strings.HasPrefix(r.URL.Path, "/v1/requests/"):
			f.gets.Add(1)
			if f.get == nil {
				write(w, 202, pendingObj)
				return
			}
			f.get(w, r)
		case r.Method == "DELETE" && strings.HasPrefix(r.URL.Path, "/v1/requests/"):
			f.dels.Add(1)
			write(w, 200, object(testID, "denied", "false", `"cancelled"`))
		default:
			write(w, 404, `{"error":{"code":"no_route","message":"no"}}`)
		}
	}))
	t.Cleanup(f.Close)
	return f
}

// dialWatch makes HTTP clients whose dials it watches: waitRefused returns once a dial
// failed (the server was down when the client tried), so a test brings a server up after
// the client met it down without guessing how long that takes.
type dialWatch struct {
	refused chan struct{}
	once    sync.Once
}

func newDialWatch() *dialWatch { return &dialWatch{refused: make(chan struct{})} }

func (d *dialWatch) client() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	var nd net.Dialer
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := nd.DialContext(ctx, network, addr)
		if err != nil {
			d.once.Do(func() { close(d.refused) })
		}
		return c, err
	}
	return &http.Client{Transport: tr}
}

// waitRefused reports whether a dial failed within 10 s.
func (d *dialWatch) waitRefused() bool {
	select {
	case <-d.refused:
		return true
	case <-time.After(10 * time.Second):
		return false
	}
}

func answer(status int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { write(w, status, body) }
}

func closedURL(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr
}

// TestAskFailsClosed drives every failure the client can meet and asserts each is a
// refusal with a message for the model — never an allow.
func TestAskFailsClosed(t *testing.T) {
	other := httptest.NewServer(answer(200, allowedObj))
	defer other.Close()
	pending := answer(202, pendingObj)
	cases := []struct {
		name   string
		create http.HandlerFunc
		get    http.HandlerFunc
		url    string // instead of the fake
		ctx    time.Duration
		opts   Options
		want   Verdict
	}{
		{name: "connection refused", url: "closed", want: VerdictError},
		{name: "hang up on create", create: func(w http.ResponseWriter, r *http.Request) { hangup(w) }, want: VerdictError},
		{name: "200 garbage", create: answer(200, "garbage"), want: VerdictError},
		{name: "200 html", create: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(200)
			io.WriteString(w, `<html><body>"allowed":true</body></html>`)
		}, want: VerdictError},
		{name: "200 empty", create: answer(200, ""), want: VerdictError},
		{name: "200 null", create: answer(200, "null"), want: VerdictError},
		{name: "200 array", create: answer(200, "["+allowedObj+"]"), want: VerdictError},
		{name: "200 string", create: answer(200, `"allowed"`), want: VerdictError},
		{name: "200 truncated", create: answer(200, allowedObj[:len(allowedObj)-5]), want: VerdictError},
		{name: "trailing data", create: answer(200, allowedObj+`{"x":1}`), want: VerdictError},
		{name: "invalid utf-8", create: answer(200, strings.Replace(allowedObj, `"ls"`, "\"l\xffs\"", 1)), want: VerdictError},
		{name: "missing allowed", create: answer(200, `{"id":"`+testID+`","state":"allowed","outcome":"allow_once"}`), want: VerdictError},
		{name: "allowed is a string", create: answer(200, `{"id":"`+testID+`","state":"allowed","allowed":"true","outcome":"allow_once"}`), want: VerdictError},
		{name: "allowed is 1", create: answer(200, `{"id":"`+testID+`","state":"allowed","allowed":1,"outcome":"allow_once"}`), want: VerdictError},
		{name: "allowed is null", create: answer(200, `{"id":"`+testID+`","state":"allowed","allowed":null,"outcome":"allow_once"}`), want: VerdictError},
		{name: "missing id", create: answer(200, `{"state":"allowed","allowed":true,"outcome":"allow_once"}`), want: VerdictError},
		{name: "missing state", create: answer(200, `{"id":"`+testID+`","allowed":true,"outcome":"allow_once"}`), want: VerdictError},
		{name: "allowed only", create: answer(200, `{"allowed":true}`), want: VerdictError},
		{name: "allowed true while pending 202", create: answer(202, object(testID, "pending", "true", "null")), want: VerdictError},
		{name: "allowed true while pending 200", create: answer(200, object(testID, "pending", "true", "null")), want: VerdictError},
		{name: "allowed true state denied", create: answer(200, object(testID, "denied", "true", `"allow_once"`)), want: VerdictError},
		{name: "explicit true state denied", create: answer(200, strings.Replace(deniedObj, `"allowed":false`, `"allowed":false,"explicit":true`, 1)), want: VerdictError},
		{name: "explicit true while pending", create: answer(202, strings.Replace(pendingObj, `"allowed":false`, `"allowed":false,"explicit":true`, 1)), want: VerdictError},
		{name: "state allowed allowed false", create: answer(200, object(testID, "allowed", "false", `"allow_once"`)), want: VerdictError},
		{name: "state allowed outcome deny", create: answer(200, object(testID, "allowed", "true", `"deny"`)), want: VerdictError},
		{name: "state allowed outcome timeout", create: answer(200, object(testID, "allowed", "true", `"timeout"`)), want: VerdictError},
		{name: "state allowed outcome null", create: answer(200, object(testID, "allowed", "true", "null")), want: VerdictError},
		{name: "unknown state", create: answer(200, object(testID, "approved", "true", `"allow_once"`)), want: VerdictError},
		{name: "duplicate allowed key", create: answer(200, `{"id":"`+testID+`","allowed":false,"state":"allowed","allowed":true,"outcome":"allow_once"}`), want: VerdictError},
		{name: "duplicate state key", create: answer(200, `{"id":"`+testID+`","state":"denied","state":"allowed","allowed":true,"outcome":"allow_once"}`), want: VerdictError},
		{name: "deeply nested", create: answer(200, `{"id":"`+testID+`","state":"allowed","allowed":true,"outcome":"allow_once","x":`+strings.Repeat("[", 100)+strings.Repeat("]", 100)+`}`), want: VerdictError},
		{name: "oversized", create: answer(200, strings.Replace(allowedObj, `"ls"`, `"`+strings.Repeat("a", 2<<20)+`"`, 1)), want: VerdictError},
		{name: "202 with an allowed object", create: answer(202, allowedObj), want: VerdictError},
		{name: "200 with a pending object", create: answer(200, pendingObj), want: VerdictError},
		{name: "201 with an allowed object", create: answer(201, allowedObj), want: VerdictError},
		{name: "204", create: answer(204, ""), want: VerdictError},
		{name: "redirect to an allowing server", create: func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other.URL+"/v1/requests", http.StatusTemporaryRedirect)
		}, want: VerdictError},
		{name: "400", create: answer(400, `{"error":{"code":"invalid_json","message":"bad"}}`), want: VerdictError},
		{name: "401", create: answer(401, `{"error":{"code":"unauthorized","message":"missing or invalid bearer token"}}`), want: VerdictError},
		{name: "403", create: answer(403, `{"error":{"code":"forbidden","message":"no"}}`), want: VerdictError},
		{name: "404", create: answer(404, `{"error":{"code":"no_route","message":"no"}}`), want: VerdictError},
		{name: "409 carrying an allowed object", create: answer(409, `{"error":{"code":"already_decided","message":"x","request":`+allowedObj+`}}`), want: VerdictError},
		{name: "413", create: answer(413, `{"error":{"code":"body_too_large","message":"big"}}`), want: VerdictError},
		{name: "418 with allowed object", create: answer(418, allowedObj), want: VerdictError},
		{name: "429 until the retry budget ends", create: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "0")
			write(w, 429, `{"error":{"code":"rate_limited","message":"slow down"}}`)
		}, want: VerdictError},
		{name: "500 json", create: answer(500, `{"error":{"code":"internal","message":"internal error; the request was not allowed"}}`), want: VerdictError},
		{name: "500 html", create: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(500)
			io.WriteString(w, "<h1>oops</h1>")
		}, want: VerdictError},
		{name: "500 with an allowed object", create: answer(500, allowedObj), want: VerdictError},
		{name: "502", create: answer(502, "bad gateway"), want: VerdictError},
		{name: "503 generic", create: answer(503, "unavailable"), want: VerdictError},
		{name: "503 shutting down until the retry budget ends", create: answer(503, `{"error":{"code":"shutting_down","message":"bye"}}`), want: VerdictError},
		{name: "server hangs", create: func(w http.ResponseWriter, r *http.Request) {
			io.ReadAll(r.Body) // so that the server notices the client hanging up
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
		}, ctx: 300 * time.Millisecond, want: VerdictTimeout},
		{name: "pending then GET garbage", create: pending, get: answer(200, "<html>"), want: VerdictError},
		{name: "pending then GET 401", get: answer(401, `{"error":{"code":"unauthorized","message":"missing or invalid bearer token"}}`), create: pending, want: VerdictError},
		{name: "pending then GET 404", create: pending, get: answer(404, `{"error":{"code":"not_found","message":"no such request"}}`), want: VerdictError},
		{name: "pending then GET another request allowed", create: pending, get: answer(200, object("zzzzzzzzzzzzzzzzzzzzzzzzzz", "allowed", "true", `"allow_once"`)), want: VerdictError},
		{name: "pending then GET allowed true while pending", create: pending, get: answer(202, object(testID, "pending", "true", "null")), want: VerdictError},
		{name: "pending then GET 200 pending", create: pending, get: answer(200, pendingObj), want: VerdictError},
		{name: "pending then GET missing allowed", create: pending, get: answer(200, `{"id":"`+testID+`","state":"allowed","outcome":"allow_once"}`), want: VerdictError},
		{name: "pending then GET 500 until the deadline", create: pending, get: answer(500, "x"),
			opts: Options{MaxWait: 300 * time.Millisecond, Margin: time.Millisecond}, want: VerdictTimeout},
		{name: "pending then GET hangs up until the deadline", create: pending, get: func(w http.ResponseWriter, r *http.Request) { hangup(w) },
			opts: Options{MaxWait: 300 * time.Millisecond, Margin: time.Millisecond}, want: VerdictTimeout},
		{name: "pending past the request deadline", create: answer(202, strings.Replace(pendingObj, `"expires_at":"`, `"expires_at_x":"`, 1)),
			opts: Options{MaxWait: 300 * time.Millisecond, Margin: time.Millisecond}, want: VerdictTimeout},
		{name: "pending until the caller's deadline", create: pending, ctx: 400 * time.Millisecond, want: VerdictTimeout},
		{name: "denied", create: answer(200, deniedObj), want: VerdictDenied},
		{name: "timed out", create: answer(200, object(testID, "denied", "false", `"timeout"`)), want: VerdictTimeout},
		{name: "cancelled", create: answer(200, object(testID, "denied", "false", `"cancelled"`)), want: VerdictDenied},
		{name: "pending then denied", create: pending, get: answer(200, deniedObj), want: VerdictDenied},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			url := tc.url
			var f *fake
			if url == "closed" {
				url = closedURL(t)
			} else {
				f = newFake(t, tc.create, tc.get)
				url = f.URL
			}
			c := newTestClient(t, url, tc.opts)
			ctx := context.Background()
			if tc.ctx > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.ctx)
				defer cancel()
			}
			res := c.Ask(ctx, testAsk())
			t.Logf("%v: %v", res.Verdict, res.Err)
			if res.Allowed() {
				t.Fatalf("allowed: %+v", res)
			}
			if res.Verdict != tc.want {
				t.Errorf("verdict %v, want %v (err %v)", res.Verdict, tc.want, res.Err)
			}
			if res.Verdict == VerdictError && res.Err == nil {
				t.Errorf("error verdict without an error")
			}
			if strings.TrimSpace(res.Message) == "" {
				t.Errorf("empty message")
			}
			if f != nil && res.Request != nil && res.Request.State == StatePending && f.dels.Load() == 0 {
				t.Errorf("gave up on a pending request without cancelling it")
			}
		})
	}
}

// TestCreateNotRetriedOnceSent: POST /v1/requests is not idempotent; a failure after the
// request may have reached the server is final.
func TestCreateNotRetriedOnceSent(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    http.HandlerFunc
	}{
		{"500", answer(500, `{"error":{"code":"internal","message":"x"}}`)},
		{"hang up", func(w http.ResponseWriter, r *http.Request) { hangup(w) }},
		{"garbage", answer(200, "garbage")},
		{"502", answer(502, "")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, tc.h, nil)
			c := newTestClient(t, f.URL, Options{CreateRetry: 2 * time.Second})
			if res := c.Ask(context.Background(), testAsk()); res.Allowed() {
				t.Fatal("allowed")
			}
			if n := f.creates.Load(); n != 1 {
				t.Fatalf("POST sent %d times, want 1", n)
			}
		})
	}
}

// TestCreateRetriedWhenNothingStored: connection refused, 429 and 503 shutting_down are
// retried; the ask then succeeds.
func TestCreateRetriedWhenNothingStored(t *testing.T) {
	for _, tc := range []struct {
		name  string
		first http.HandlerFunc
	}{
		{"429 rate_limited", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "0")
			write(w, 429, `{"error":{"code":"rate_limited","message":"slow"}}`)
		}},
		{"429 too_many_pending", answer(429, `{"error":{"code":"too_many_pending","message":"full"}}`)},
		{"503 shutting_down", answer(503, `{"error":{"code":"shutting_down","message":"bye"}}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var n atomic.Int32
			f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
				if n.Add(1) == 1 {
					tc.first(w, r)
					return
				}
				write(w, 200, allowedObj)
			}, nil)
			c := newTestClient(t, f.URL, Options{CreateRetry: 3 * time.Second})
			res := c.Ask(context.Background(), testAsk())
			if !res.Allowed() {
				t.Fatalf("not allowed: %+v", res)
			}
			if f.creates.Load() != 2 {
				t.Fatalf("creates = %d, want 2", f.creates.Load())
			}
		})
	}
	t.Run("connection refused then up", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		var creates atomic.Int32
		dw := newDialWatch()
		go func() {
			// Up only once the client has found it down.
			if !dw.waitRefused() {
				t.Error("the client never dialled")
				return
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				t.Error(err)
				return
			}
			srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				creates.Add(1)
				write(w, 200, allowedObj)
			})}
			t.Cleanup(func() { srv.Close() })
			srv.Serve(ln)
		}()
		c := newTestClient(t, "http://"+addr, Options{CreateRetry: 5 * time.Second, HTTPClient: dw.client()})
		res := c.Ask(context.Background(), testAsk())
		if !res.Allowed() {
			t.Fatalf("not allowed: %+v", res)
		}
		if creates.Load() != 1 {
			t.Fatalf("creates = %d", creates.Load())
		}
	})
}

func TestAskAllowed(t *testing.T) {
	var body map[string]any
	var mu sync.Mutex
	f := newFake(t, func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		mu.Lock()
		json.Unmarshal(raw, &body)
		mu.Unlock()
		write(w, 202, pendingObj)
	}, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/requests/"+testID || r.URL.Query().Get("wait") == "" {
			t.Errorf("GET %s", r.URL)
		}
		write(w, 200, allowedObj)
	})
	c := newTestClient(t, f.URL, Options{})
	a := testAsk()
	a.Cwd, a.Reason, a.Tier, a.Unattended = "/tmp", "why", "ask", true
	a.Facts = &Facts{ReadOnly: true}
	res := c.Ask(context.Background(), a)
	if !res.Allowed() || res.Verdict != VerdictAllowed || res.Message != "msg allowed" {
		t.Fatalf("%+v", res)
	}
	mu.Lock()
	defer mu.Unlock()
	want := map[string]any{"tool": "bash", "args": map[string]any{"command": "rm -rf ./build"}, "session": "s1", "cwd": "/tmp",
		"reason": "why", "tier": "ask", "unattended": true, "facts": map[string]any{"read_only": true}, "wait": "2s"}
	if fmt.Sprint(body) != fmt.Sprint(want) {
		t.Fatalf("body %v\nwant %v", body, want)
	}
}

// An allow is explicit only when the server says so; a denial never is.
func TestExplicitlyAllowed(t *testing.T) {
	explicitObj := strings.Replace(allowedObj, `"allowed":true`, `"allowed":true,"explicit":true`, 1)
	for _, c := range []struct {
		name          string
		obj           string
		allowed, expl bool
	}{
		{"tier default allow", allowedObj, true, false},
		{"explicit allow", explicitObj, true, true},
		{"explicit false", strings.Replace(allowedObj, `"allowed":true`, `"allowed":true,"explicit":false`, 1), true, false},
		{"denied", deniedObj, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t, answer(200, c.obj), answer(200, c.obj))
			res := newTestClient(t, f.URL, Options{}).Ask(context.Background(), testAsk())
			if res.Allowed() != c.allowed || res.ExplicitlyAllowed() != c.expl {
				t.Fatalf("allowed=%v explicit=%v, want %v %v (%+v)", res.Allowed(), res.ExplicitlyAllowed(), c.allowed, c.expl, res)
			}
		})
	}
	if (Result{}).ExplicitlyAllowed() {
		t.Fatal("the zero Result is explicitly allowed")
	}
}

// TestPollSurvivesRestart: the server goes away while the request is pending and comes
// back on the same address; the client re-polls and gets the decision.
func TestPollSurvivesRestart(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	var once sync.Once
	restarted := make(chan struct{})
	dw := newDialWatch()
	var a *http.Server
	a = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "POST" {
			write(w, 202, pendingObj)
			return
		}
		hangup(w)
		once.Do(func() {
			go func() {
				a.Close()
				// Back only once the client has found it gone.
				if !dw.waitRefused() {
					t.Error("the client never dialled the stopped server")
					close(restarted)
					return
				}
				ln2, err := net.Listen("tcp", addr)
				if err != nil {
					t.Error(err)
					close(restarted)
					return
				}
				b := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					write(w, 200, allowedObj)
				})}
				t.Cleanup(func() { b.Close() })
				close(restarted)
				b.Serve(ln2)
			}()
		})
	})}
	go a.Serve(ln)
	c := newTestClient(t, "http://"+addr, Options{HTTPClient: dw.client()})
	res := c.Ask(context.Background(), testAsk())
	<-restarted
	if !res.Allowed() {
		t.Fatalf("not allowed after restart: %+v", res)
	}
}

func TestCancelOnCallerGone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	// The caller goes away while the client long-polls: the poll is held until it does.
	f := newFake(t, answer(202, pendingObj), func(w http.ResponseWriter, r *http.Request) {
		cancel()
		<-r.Context().Done()
	})
	c := newTestClient(t, f.URL, Options{})
	res := c.Ask(ctx, testAsk())
	if res.Allowed() || res.Verdict != VerdictError {
		t.Fatalf("%+v", res)
	}
	if f.dels.Load() != 1 {
		t.Fatalf("DELETE sent %d times, want 1", f.dels.Load())
	}
}

func TestNewRefusesBadSettings(t *testing.T) {
	for _, tc := range []struct{ url, token string }{
		{"http://127.0.0.1:1", ""},
		{"http://127.0.0.1:1", "  "},
		{"ftp://x", testToken},
		{"http://user:pw@127.0.0.1:1", testToken},
		{"127.0.0.1:8470", testToken},
		{"http://127.0.0.1:1", "a\nb"},
	} {
		if _, err := New(tc.url, tc.token, Options{}); err == nil {
			t.Errorf("New(%q, %q) accepted", tc.url, tc.token)
		}
	}
	// A zero Result refuses.
	var r Result
	if r.Allowed() || r.Verdict != VerdictError {
		t.Fatal("zero Result allows")
	}
}

func TestStrictObject(t *testing.T) {
	good := []string{`{}`, `{"a":1,"b":{"a":2},"c":[{"a":1},{"a":1}]}`, ` {"a":"x"} `}
	bad := []string{``, `null`, `[]`, `1`, `"x"`, `{"a":1,"a":2}`, `{"a":{"b":1,"b":2}}`, `{"a":[{"b":1,"b":1}]}`, `{} {}`, `{}x`, `{"a":`, "{\"a\":\"\xff\"}"}
	for _, s := range good {
		if _, err := StrictObject([]byte(s)); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	for _, s := range bad {
		if _, err := StrictObject([]byte(s)); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
	m, _ := StrictObject([]byte(`{"n":1.50}`))
	if raw, _ := json.Marshal(m); string(raw) != `{"n":1.50}` {
		t.Errorf("numbers not kept: %s", raw)
	}
}

func TestOperatorCalls(t *testing.T) {
	var got []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.RequestURI()+" "+string(raw))
		mu.Unlock()
		switch {
		case r.URL.Path == "/v1/requests":
			write(w, 200, `{"requests":[`+pendingObj+`]}`)
		case strings.HasSuffix(r.URL.Path, "/decision"):
			write(w, 409, `{"error":{"code":"already_decided","message":"already decided (deny) by alice at 2026-01-01T00:00:00Z","decided_by":"alice","decided_at":"2026-01-01T00:00:00Z","request":`+deniedObj+`}}`)
		case r.URL.Path == "/v1/audit":
			write(w, 200, `{"entries":[{"seq":7,"time":"2026-01-01T00:00:00Z","event":"decision","outcome":"deny"}],"next_before":7}`)
		case r.URL.Path == "/v1/allowlist" && r.Method == "GET":
			write(w, 200, `{"entries":[{"pattern":"/usr/bin/git","added_by":"alice","request_id":"x","added_at":"2026-01-01T00:00:00Z"}]}`)
		case r.URL.Path == "/v1/allowlist":
			write(w, 200, `{"revoked":[{"pattern":"/usr/bin/git","agent":"ci","added_by":"alice","request_id":"x","added_at":"2026-01-01T00:00:00Z"}]}`)
		default:
			write(w, 200, `{"session":"s1","tier":"ask","unattended":true,"paused":false,"denials":0,"parent":""}`)
		}
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL, Options{})
	ctx := context.Background()
	if l, err := c.Pending(ctx); err != nil || len(l) != 1 || l[0].ID != testID {
		t.Fatalf("Pending: %v %v", l, err)
	}
	_, err := c.Decide(ctx, testID, OutcomeAllowOnce, "ok")
	ae, ok := err.(*APIError)
	if !ok || ae.Status != 409 || ae.DecidedBy != "alice" || ae.Request == nil || ae.Request.State != "denied" {
		t.Fatalf("Decide: %#v", err)
	}
	if p, err := c.Audit(ctx, AuditQuery{Session: "s 1", Since: "1h", Outcome: "deny", Before: 9, Limit: 5}); err != nil || len(p.Entries) != 1 || p.Entries[0].Outcome != "deny" || p.NextBefore != 7 {
		t.Fatalf("Audit: %+v %v", p, err)
	}
	if e, err := c.Allowlist(ctx); err != nil || len(e) != 1 || e[0].Pattern != "/usr/bin/git" {
		t.Fatalf("Allowlist: %v %v", e, err)
	}
	if r, err := c.Revoke(ctx, "/usr/bin/git", nil, nil); err != nil || len(r) != 1 || r[0].Agent != "ci" {
		t.Fatalf("Revoke: %v %v", r, err)
	}
	ci, none := "ci", ""
	if _, err := c.Revoke(ctx, "/usr/bin/git", &ci, &none); err != nil {
		t.Fatal(err)
	}
	tier, yes := "ask", true
	if s, err := c.SetSession(ctx, "s1", SessionUpdate{Tier: &tier, Unattended: &yes}); err != nil || s.Tier != "ask" {
		t.Fatalf("SetSession: %v %v", s, err)
	}
	if s, err := c.SetSession(ctx, "s1", SessionUpdate{Agent: "ci", Tier: &tier}); err != nil || s.Tier != "ask" {
		t.Fatalf("SetSession: %v %v", s, err)
	}
	if _, err := c.Unpause(ctx, "s1", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Unpause(ctx, "s1", "ci"); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"GET /v1/requests?state=pending ",
		"POST /v1/requests/" + testID + `/decision {"outcome":"allow_once","reason":"ok"}`,
		"GET /v1/audit?before=9&limit=5&outcome=deny&session=s+1&since=1h ",
		"GET /v1/allowlist ",
		"DELETE /v1/allowlist?pattern=%2Fusr%2Fbin%2Fgit ",
		"DELETE /v1/allowlist?agent=ci&args=&pattern=%2Fusr%2Fbin%2Fgit ",
		`PUT /v1/sessions/s1 {"tier":"ask","unattended":true}`,
		`PUT /v1/sessions/s1 {"agent":"ci","tier":"ask"}`,
		"POST /v1/sessions/s1/unpause ",
		`POST /v1/sessions/s1/unpause {"agent":"ci"}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
