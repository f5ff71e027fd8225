package web

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"sort"
	"strings"
	"time"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/render"
)

// Every string that came from an agent, a human or a chat platform reaches a template
// through one of the views below, masked and hardened by core/render (line breaks,
// controls, bidi and invisible characters made visible, look-alikes flagged) and cut;
// html/template then escapes it for its context. Nothing in a view is template.HTML, and
// the only links built from data are to request pages of well-formed ids.

// Field limits in characters for strings the cards do not carry.
const (
	maxRule        = 200
	maxName        = 128
	maxReason      = 500
	maxPattern     = 300
	maxFlash       = 600
	maxFingerprint = 64
)

// clean is the one way an untrusted string reaches a view.
func clean(s string, max int) string { return render.Redact(s, max) }

// timeLayout matches the cards: UTC, to the second.
const timeLayout = "2006-01-02 15:04:05 UTC"

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(timeLayout)
}

func isoTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// fmtLeft says how long a request may still wait, in words.
func fmtLeft(d time.Duration) string {
	if d <= 0 {
		return "expired"
	}
	d = d.Round(time.Second)
	m, sec := int(d/time.Minute), int(d%time.Minute/time.Second)
	if m >= 60 {
		return fmt.Sprintf("%dh %02dm left", m/60, m%60)
	}
	if m > 0 {
		return fmt.Sprintf("%dm %02ds left", m, sec)
	}
	return fmt.Sprintf("%ds left", sec)
}

// requestHref links to a request's page, for well-formed ids only.
func requestHref(id string) string {
	if !gate.ValidID(id) {
		return ""
	}
	return Prefix + "requests/" + id
}

type cardView struct {
	Channel, Chat string
}

type requestView struct {
	ID          string
	Href        string
	Tool        string
	Summary     string
	Truncated   bool
	Details     string
	Agent       string
	Session     string
	Cwd         string
	AgentReason string
	// AskReason is why the policy asks (or asked) a human.
	AskReason   string
	Rule        string
	Fingerprint string
	Created     string
	CreatedISO  string

	Pending    bool
	Expires    string
	ExpiresISO string
	Left       string
	// CanDecide is false for the signed-in token's own requests (nobody approves their own).
	CanDecide   bool
	AllowAlways bool

	State     string
	Title     string
	Outcome   string
	Source    string
	DecidedBy string
	Reason    string
	Decided   string
	Message   string

	Cards []cardView
	CSRF  string
}

func outcomeTitle(r *approval.Request) string {
	switch r.Outcome {
	case approval.OutcomeAllowOnce:
		return "Allowed once"
	case approval.OutcomeAllowSession:
		return "Allowed for this session"
	case approval.OutcomeAllowAlways:
		return "Allowed always"
	case approval.OutcomeDeny:
		return "Denied"
	case approval.OutcomeTimeout:
		return "Expired: nobody answered in time, so it was refused"
	case approval.OutcomeCancelled:
		return "Cancelled: the agent withdrew the request"
	}
	if r.State == approval.StatePending {
		return "Waiting for a decision"
	}
	return "Closed"
}

func (s *Server) requestView(r *approval.Request, sess session) requestView {
	c := render.CardFor(r)
	now := s.now()
	v := requestView{
		ID: c.RequestID, Href: requestHref(r.ID), Tool: c.Tool, Summary: c.Summary, Truncated: c.Truncated,
		Agent: c.Agent, Session: c.Session, Cwd: c.Cwd, AgentReason: c.AgentReason, AskReason: c.AskReason,
		Rule: clean(r.Rule, maxRule), Fingerprint: clean(r.Fingerprint, maxFingerprint),
		Created: fmtTime(r.CreatedAt), CreatedISO: isoTime(r.CreatedAt),
		Pending: r.Live(now), State: string(r.State), Title: outcomeTitle(r), CSRF: sess.csrf,
		CanDecide: r.Agent != sess.operator, AllowAlways: c.AllowAlways,
	}
	if r.Truncated {
		// What a card's Details button gives: the whole redacted action.
		v.Details = render.Clean(r.Details, render.MaxDetails+64)
	}
	if v.Pending {
		v.Expires, v.ExpiresISO = fmtTime(r.ExpiresAt), isoTime(r.ExpiresAt)
		if !r.ExpiresAt.IsZero() {
			v.Left = fmtLeft(r.ExpiresAt.Sub(now))
		}
	} else if r.State == approval.StatePending {
		v.Title = "Expired: nobody answered in time, so it was refused"
	}
	if c.Resolution != nil {
		v.Outcome, v.Source = string(r.Outcome), string(r.Source)
		v.DecidedBy, v.Reason = c.Resolution.DecidedBy, c.Resolution.Reason
		v.Decided = fmtTime(r.DecidedAt)
		v.Message = clean(r.Message, 1000)
	}
	for _, ref := range r.Cards {
		v.Cards = append(v.Cards, cardView{Channel: clean(ref.Channel, 32), Chat: clean(ref.Chat, 64)})
	}
	return v
}

type auditView struct {
	Time, TimeISO                                            string
	Event, Outcome, Source, Tool, Agent, Session, Summary    string
	DecidedBy, Reason, Rule, Channel, Actor, RequestID, Href string
	Allowed                                                  bool
}

func auditViewOf(e *approval.AuditEntry) auditView {
	return auditView{
		Time: fmtTime(e.Time), TimeISO: isoTime(e.Time), Event: clean(e.Event, 32),
		Outcome: clean(string(e.Outcome), 32), Source: clean(string(e.Source), 32), Tool: clean(e.Tool, 64),
		Agent: clean(e.Agent, maxName), Session: clean(e.Session, maxName), Summary: clean(e.Summary, render.MaxSummary),
		DecidedBy: clean(e.DecidedBy, maxName), Reason: clean(e.Reason, maxReason), Rule: clean(e.Rule, maxRule),
		Channel: clean(e.Channel, 32), Actor: clean(e.Actor, maxName), RequestID: clean(e.RequestID, 32),
		Href: requestHref(e.RequestID), Allowed: e.Outcome.Allows(),
	}
}

// page is what every full page gets.
type page struct {
	Title    string
	Nav      string
	Operator string
	CSRF     string
	Flashes  []flash
	Asset    string
	// EventsURL is where the page's live updates come from (empty: none).
	EventsURL string
	Body      any
}

func (s *Server) newPage(sess session, nav, title string) page {
	p := page{Title: title, Nav: nav, Operator: clean(sess.operator, maxName), CSRF: sess.csrf, Asset: s.assetVer}
	for _, f := range s.sessions.takeFlashes(sess.key) {
		p.Flashes = append(p.Flashes, flash{Error: f.Error, Text: clean(f.Text, maxFlash)})
	}
	return p
}

func (s *Server) withEvents(p page) page {
	p.EventsURL = Prefix + "events?after=" + fmt.Sprint(s.hub.seq())
	return p
}

func (s *Server) parseTemplates() error {
	shared := []string{"templates/layout.html", "templates/fragments.html"}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return err
	}
	s.pages = map[string]*template.Template{}
	for _, n := range names {
		base := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if base == "layout" || base == "fragments" {
			continue
		}
		t, err := template.New(base).ParseFS(templateFS, append(shared, n)...)
		if err != nil {
			return fmt.Errorf("template %s: %w", n, err)
		}
		s.pages[base] = t
	}
	s.frag, err = template.New("fragments").ParseFS(templateFS, "templates/fragments.html")
	if err != nil {
		return fmt.Errorf("fragments: %w", err)
	}
	return nil
}

// assetVersion is a hash of the embedded assets, appended to their URLs so a new binary's
// files are never taken from an old cache.
func assetVersion(static fs.FS) (string, error) {
	h := sha256.New()
	var names []string
	err := fs.WalkDir(static, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, p)
		}
		return err
	})
	if err != nil {
		return "", err
	}
	sort.Strings(names)
	for _, n := range names {
		b, err := fs.ReadFile(static, n)
		if err != nil {
			return "", err
		}
		h.Write([]byte(n))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:12], nil
}
