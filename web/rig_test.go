package web_test

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/approvebot/approvebot/api"
	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/policy"
	"github.com/approvebot/approvebot/core/render"
	"github.com/approvebot/approvebot/store"
	"github.com/approvebot/approvebot/web"
)

const (
	agentToken    = "panel-agent-token-0123456789abcdef"
	operatorToken = "panel-operator-token-0123456789abcdef"
	otherOpToken  = "panel-other-operator-token-0123456789"
)

// chatFake is a chat channel that records the cards posted and edited.
type chatFake struct {
	mu    sync.Mutex
	n     int
	edits map[approval.CardRef]render.Card
}

func (c *chatFake) Name() string        { return "telegram" }
func (c *chatFake) Chats() []string     { return []string{"-100"} }
func (c *chatFake) Health() gate.Health { return gate.Health{OK: true} }

func (c *chatFake) Post(_ context.Context, chat string, _ render.Card) (approval.CardRef, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	return approval.CardRef{Channel: "telegram", Chat: chat, Message: fmt.Sprint(c.n)}, nil
}

func (c *chatFake) Edit(_ context.Context, ref approval.CardRef, card render.Card) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.edits == nil {
		c.edits = map[approval.CardRef]render.Card{}
	}
	c.edits[ref] = card
	return nil
}

func (c *chatFake) edited() []render.Card {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []render.Card
	for _, e := range c.edits {
		out = append(out, e)
	}
	return out
}

type rig struct {
	t    *testing.T
	st   *store.Store
	g    *gate.Gate
	chat *chatFake
	srv  *httptest.Server
}

// newRig runs the panel as serve mounts it: on the API's handler, with a real gate and
// store, and a chat channel that records its cards.
func newRig(t *testing.T, pcfg policy.Config) *rig {
	t.Helper()
	return newRigWith(t, pcfg, nil)
}

// newRigWith is newRig with the panel's options changed by opt (a clock, a TTL).
func newRigWith(t *testing.T, pcfg policy.Config, opt func(*web.Options)) *rig {
	t.Helper()
	st, err := store.Open(filepath.Join(t.TempDir(), "p.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := policy.NewEngine(pcfg, st)
	if err != nil {
		t.Fatal(err)
	}
	chat := &chatFake{}
	g, err := gate.New(gate.Options{ApprovalTimeout: time.Minute}, st, eng, []gate.Channel{chat}, nil)
	if err != nil {
		t.Fatal(err)
	}
	srvAPI, err := api.New(api.Options{Gate: g, Audit: st, Tokens: []api.Token{
		{Name: "agent", Role: api.RoleAgent, Value: agentToken},
		{Name: "operator", Role: api.RoleOperator, Value: operatorToken},
		{Name: "bob", Role: api.RoleOperator, Value: otherOpToken},
	}})
	if err != nil {
		t.Fatal(err)
	}
	wo := web.Options{Gate: g, Store: st, Auth: srvAPI.Authenticate}
	if opt != nil {
		opt(&wo)
	}
	panel, err := web.New(wo)
	if err != nil {
		t.Fatal(err)
	}
	srvAPI.Mount(web.Prefix, panel)
	srv := httptest.NewServer(srvAPI.Handler())
	t.Cleanup(func() {
		srv.CloseClientConnections()
		g.Close(context.Background())
		srv.Close()
		if err := st.Check(); err != nil {
			t.Errorf("store check: %v", err)
		}
		st.Close()
	})
	return &rig{t: t, st: st, g: g, chat: chat, srv: srv}
}

// ask files a request a human must decide, as the agent, and returns it pending.
func (r *rig) ask(session string, args map[string]any, reason string) approval.Request {
	r.t.Helper()
	rec, err := r.g.Submit(context.Background(), gate.Ask{Tool: "bash", Args: args, Session: session, Cwd: "/srv/app", Reason: reason},
		gate.Caller{Name: "agent"})
	if err != nil || rec.State != approval.StatePending {
		r.t.Fatalf("ask: %+v %v", rec, err)
	}
	return rec
}

func (r *rig) askCmd(session, cmd string) approval.Request {
	r.t.Helper()
	return r.ask(session, map[string]any{"command": cmd}, "")
}

func (r *rig) get(id string) approval.Request {
	r.t.Helper()
	rec, err := r.g.Get(context.Background(), id)
	if err != nil {
		r.t.Fatal(err)
	}
	return rec
}

// browser is an HTTP client with a cookie jar that does not follow redirects, so every
// answer can be checked; follow does.
type browser struct {
	t    *testing.T
	base string
	c    *http.Client
	// csrf is the last CSRF token seen in a page.
	csrf string
}

func (r *rig) browser() *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: r.t, base: r.srv.URL, c: &http.Client{
		Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

type answer struct {
	status int
	header http.Header
	body   string
}

var csrfRe = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func (b *browser) do(req *http.Request) answer {
	b.t.Helper()
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, header: resp.Header, body: string(raw)}
	if m := csrfRe.FindStringSubmatch(a.body); m != nil {
		b.csrf = m[1]
	}
	return a
}

func (b *browser) get(path string) answer {
	b.t.Helper()
	req, _ := http.NewRequest("GET", b.base+path, nil)
	return b.do(req)
}

// post sends a form as a browser would from one of our pages (same origin).
func (b *browser) post(path string, form url.Values, header ...string) answer {
	b.t.Helper()
	req, _ := http.NewRequest("POST", b.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", b.base)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return b.do(req)
}

// follow gets the page a redirect points to.
func (b *browser) follow(a answer) answer {
	b.t.Helper()
	if a.status != http.StatusSeeOther {
		b.t.Fatalf("want a 303, got %d: %s", a.status, a.body)
	}
	return b.get(a.header.Get("Location"))
}

// signIn signs in with token and returns the answer to the form.
func (b *browser) signIn(token string) answer {
	b.t.Helper()
	b.get("/ui/")
	return b.post("/ui/signin", url.Values{"csrf": {b.csrf}, "token": {token}, "next": {"/ui/"}})
}

func (b *browser) mustSignIn() {
	b.t.Helper()
	if a := b.signIn(operatorToken); a.status != http.StatusSeeOther {
		b.t.Fatalf("sign-in: %d %s", a.status, a.body)
	}
	b.get("/ui/")
}

// decide presses a decision button in the panel.
func (b *browser) decide(id, outcome, reason string) answer {
	b.t.Helper()
	return b.post("/ui/requests/"+id+"/decision", url.Values{"csrf": {b.csrf}, "outcome": {outcome}, "reason": {reason}})
}

// text is the page's text roughly as a reader sees it: entities decoded, tags kept.
func text(body string) string { return html.UnescapeString(body) }

func wantIn(t *testing.T, body string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(body, w) {
			t.Errorf("page lacks %q", w)
		}
	}
	if t.Failed() {
		t.Logf("page:\n%s", body)
		t.FailNow()
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func askOf(session, cmd string) gate.Ask {
	return gate.Ask{Tool: "bash", Args: map[string]any{"command": cmd}, Session: session, Cwd: "/srv/app"}
}

// callerOperator is the panel's operator asking through the API with its own token.
var callerOperator = gate.Caller{Name: "operator", Operator: true}

// clock is a settable clock for the panel.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}
