package web

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/render"
	"github.com/approvebot/approvebot/store"
)

// listLimit bounds the grants, ledger entries and paused sessions one page shows.
const listLimit = 500

func (s *Server) render(w http.ResponseWriter, status int, name string, p page) {
	t := s.pages[name]
	if t == nil {
		s.log.Error("panel: no such template", "template", name)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", p); err != nil {
		s.log.Error("panel: rendering failed", "template", name, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

type errorBody struct {
	Message  string
	SignedIn bool
}

func (s *Server) errorPage(w http.ResponseWriter, r *http.Request, status int, msg string) {
	sess, ok := s.current(r)
	var p page
	if ok {
		p = s.newPage(sess, "", http.StatusText(status))
	} else {
		p = page{Title: http.StatusText(status), Asset: s.assetVer}
	}
	p.Body = errorBody{Message: msg, SignedIn: ok}
	s.render(w, status, "error", p)
}

type signinBody struct {
	CSRF, Next, Error string
}

// signinPage shows the sign-in form with a fresh CSRF token in its cookie (kept when the
// browser already has one, so two tabs both work).
func (s *Server) signinPage(w http.ResponseWriter, r *http.Request, status int, next, msg string) {
	tok := cookieValue(r, signinCookie)
	if len(tok) != len(randomToken()) {
		tok = randomToken()
	}
	setCookie(w, r, signinCookie, tok, DefaultSessionTTL)
	p := page{Title: "Sign in", Asset: s.assetVer, Body: signinBody{CSRF: tok, Next: next, Error: msg}}
	s.render(w, status, "signin", p)
}

type pendingBody struct {
	Requests []requestView
	// Total is how many requests wait; More how many older ones are not shown.
	Total, More int
}

// pendingShown bounds the requests the pending page shows (the newest); the rest are
// counted. Each shown request is read from the store, for its cards.
const pendingShown = 200

// pendingPage is /ui/: the sign-in form when signed out, else what waits for a human,
// newest first.
func (s *Server) pendingPage(w http.ResponseWriter, r *http.Request) {
	sess, ok := s.current(r)
	if !ok {
		s.signinPage(w, r, http.StatusOK, safeNext(r.URL.Query().Get("next")), "")
		return
	}
	// The stream position is taken before the list is read, so the page's stream replays
	// whatever changes after (or while) it is read.
	p := s.withEvents(s.newPage(sess, "pending", "Pending"))
	list := s.gate.LivePending("", "")
	slices.Reverse(list)
	body := pendingBody{Total: len(list)}
	if len(list) > pendingShown {
		body.More = len(list) - pendingShown
		list = list[:pendingShown]
	}
	for i := range list {
		rec := list[i]
		// The live list is what waits; the store has the cards posted since.
		if stored, err := s.gate.Get(r.Context(), rec.ID); err == nil {
			if stored.State != approval.StatePending {
				continue
			}
			rec = stored
		}
		body.Requests = append(body.Requests, s.requestView(&rec, sess))
	}
	p.Body = body
	s.render(w, http.StatusOK, "pending", p)
}

type requestBody struct {
	Request requestView
	Audit   []auditView
}

func (s *Server) requestPage(w http.ResponseWriter, r *http.Request, sess session) {
	id := r.PathValue("id")
	p := s.withEvents(s.newPage(sess, "", "Request"))
	rec, err := s.gate.Get(r.Context(), id)
	if err != nil {
		if errors.Is(err, approval.ErrNotFound) {
			s.errorPage(w, r, http.StatusNotFound, "There is no request with that id (retention may have removed it).")
			return
		}
		s.fail(w, r, "reading a request", err)
		return
	}
	body := requestBody{Request: s.requestView(&rec, sess)}
	trail, err := s.store.Audit(r.Context(), approval.AuditQuery{RequestID: rec.ID, Limit: 200})
	if err != nil {
		s.fail(w, r, "reading the audit trail", err)
		return
	}
	for i := range trail.Entries {
		body.Audit = append(body.Audit, auditViewOf(&trail.Entries[i]))
	}
	p.Body = body
	p.Title = "Request " + body.Request.ID
	s.render(w, http.StatusOK, "request", p)
}

func (s *Server) fail(w http.ResponseWriter, r *http.Request, what string, err error) {
	s.log.Error("panel: "+what+" failed", "err", err)
	s.errorPage(w, r, http.StatusInternalServerError, "Something went wrong while "+what+". Nothing was changed or allowed.")
}

func (s *Server) flash(sess session, isErr bool, text string) {
	s.sessions.addFlash(sess.key, flash{Error: isErr, Text: text})
}

// back is where a form returns to: the request's page when it was sent from there.
func back(r *http.Request, id string) string {
	if r.PostForm.Get("return") == "request" {
		if h := requestHref(id); h != "" {
			return h
		}
	}
	return Prefix
}

var decidedText = map[approval.Outcome]string{
	approval.OutcomeAllowOnce:    "Allowed once",
	approval.OutcomeAllowSession: "Allowed for this session",
	approval.OutcomeAllowAlways:  "Allowed always",
	approval.OutcomeDeny:         "Denied",
}

// decide is the panel's decision: the same gate call as a button in a chat or the
// operator API, so the cards are edited and a second decision loses.
func (s *Server) decide(w http.ResponseWriter, r *http.Request, sess session) {
	id := r.PathValue("id")
	to := back(r, id)
	defer http.Redirect(w, r, to, http.StatusSeeOther)
	outcome, ok := approval.ParseDecisionOutcome(r.PostForm.Get("outcome"))
	if !ok {
		s.flash(sess, true, "Choose Allow once, Allow for session, Allow always or Deny.")
		return
	}
	rec, err := s.gate.Get(r.Context(), id)
	if err != nil {
		if errors.Is(err, approval.ErrNotFound) {
			s.flash(sess, true, "There is no request with that id.")
		} else {
			s.log.Error("panel: reading a request failed", "request_id", id, "err", err)
			s.flash(sess, true, "The request could not be read, so nothing was decided.")
		}
		return
	}
	if rec.Agent == sess.operator {
		s.flash(sess, true, "You made this request with the same token, so another operator must decide it.")
		return
	}
	var reason string
	if outcome == approval.OutcomeDeny {
		reason = r.PostForm.Get("reason")
	}
	got, err := s.gate.Decide(r.Context(), id, gate.Decision{Outcome: outcome, Reason: reason, DecidedBy: sess.operator, Channel: "web"})
	summary := render.CardFor(&rec).Summary
	var lost *gate.AlreadyDecidedError
	switch {
	case err == nil:
		text := decidedText[got.Outcome] + ": " + summary
		if got.Reason != "" && got.Outcome == approval.OutcomeDeny {
			text += ` (reason: "` + got.Reason + `")`
		}
		s.flash(sess, false, text)
	case errors.As(err, &lost):
		s.flash(sess, true, upperFirst(lost.Error())+": "+summary)
	case errors.Is(err, gate.ErrExpired):
		s.flash(sess, true, "This request expired before your decision, so it was refused: "+summary)
	case errors.Is(err, gate.ErrInvalid):
		s.flash(sess, true, strings.TrimPrefix(err.Error(), "invalid: "))
	default:
		s.log.Error("panel: decision failed", "request_id", id, "err", err)
		s.flash(sess, true, "The decision could not be recorded, so nothing was allowed. Try again.")
	}
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

type ledgerView struct {
	Agent, Session, Fingerprint, At, AtISO string
	Tool, Summary, DecidedBy, Reason, Href string
}

func ledgerViews(items []store.LedgerItem) []ledgerView {
	out := make([]ledgerView, 0, len(items))
	for _, it := range items {
		out = append(out, ledgerView{
			Agent: clean(it.Agent, maxName), Session: clean(it.Session, maxName), Fingerprint: clean(it.Fingerprint, maxFingerprint),
			At: fmtTime(it.At), AtISO: isoTime(it.At), Tool: clean(it.Tool, 64), Summary: clean(it.Summary, render.MaxSummary),
			DecidedBy: clean(it.DecidedBy, maxName), Reason: clean(it.Reason, maxReason), Href: requestHref(it.RequestID),
		})
	}
	return out
}

type ledgerBody struct {
	Items []ledgerView
	Total int
}

func (s *Server) ledgerList(w http.ResponseWriter, r *http.Request, sess session, nav, title string, list func(context.Context, int) ([]store.LedgerItem, int, error)) {
	items, total, err := list(r.Context(), listLimit)
	if err != nil {
		s.fail(w, r, "reading "+strings.ToLower(title), err)
		return
	}
	p := s.newPage(sess, nav, title)
	p.Body = ledgerBody{Items: ledgerViews(items), Total: total}
	s.render(w, http.StatusOK, nav, p)
}

func (s *Server) grantsPage(w http.ResponseWriter, r *http.Request, sess session) {
	s.ledgerList(w, r, sess, "grants", "Session grants", s.store.Grants)
}

func (s *Server) ledgerPage(w http.ResponseWriter, r *http.Request, sess session) {
	s.ledgerList(w, r, sess, "ledger", "Denial ledger", s.store.Denials)
}

type allowlistView struct {
	Pattern, Agent, Args, AddedBy, Added, AddedISO, Href string
	// The entry exactly as stored, sent back by the Revoke form to name that one entry.
	RawPattern, RawAgent, RawArgs string
}

type allowlistBody struct {
	Items []allowlistView
	CSRF  string
}

func (s *Server) allowlistPage(w http.ResponseWriter, r *http.Request, sess session) {
	items, err := s.store.ListAllowlist(r.Context())
	if err != nil {
		s.fail(w, r, "reading the allowlist", err)
		return
	}
	body := allowlistBody{CSRF: sess.csrf}
	for _, it := range items {
		body.Items = append(body.Items, allowlistView{
			Pattern: clean(it.Pattern, maxPattern), Agent: clean(it.Agent, maxName), Args: clean(it.Args, maxPattern),
			AddedBy: clean(it.AddedBy, maxName), Added: fmtTime(it.AddedAt), AddedISO: isoTime(it.AddedAt), Href: requestHref(it.RequestID),
			RawPattern: it.Pattern, RawAgent: it.Agent, RawArgs: it.Args,
		})
	}
	p := s.newPage(sess, "allowlist", "Allowlist")
	p.Body = body
	s.render(w, http.StatusOK, "allowlist", p)
}

// revoke removes the allowlist entry its form names by pattern, agent and args; a form
// without the agent or args field matches every value of it, as the API does.
func (s *Server) revoke(w http.ResponseWriter, r *http.Request, sess session) {
	defer http.Redirect(w, r, Prefix+"allowlist", http.StatusSeeOther)
	sel := store.AllowlistSelector{Pattern: r.PostForm.Get("pattern")}
	if v, ok := r.PostForm["agent"]; ok {
		sel.Agent = &v[0]
	}
	if v, ok := r.PostForm["args"]; ok {
		sel.Args = &v[0]
	}
	shown := clean(sel.Pattern, maxPattern)
	if sel.Agent != nil {
		shown += clean(forAgent(*sel.Agent), maxName)
	}
	if sel.Pattern == "" {
		s.flash(sess, true, "Choose an entry to revoke.")
		return
	}
	revoked, err := s.store.RevokeAllowlist(r.Context(), sel,
		approval.AuditEntry{Time: s.now().UTC(), Event: approval.EventAllowlist, Actor: sess.operator, Channel: "web"})
	switch {
	case err != nil:
		s.log.Error("panel: revoking an allowlist entry failed", "err", err)
		s.flash(sess, true, "The entry could not be revoked. Try again.")
	case len(revoked) == 0:
		s.flash(sess, true, "There is no allowlist entry "+shown+" (already revoked?).")
	default:
		s.log.Info("allowlist entries revoked", "pattern", shown, "entries", len(revoked), "operator", sess.operator, "channel", "web")
		s.flash(sess, false, "Revoked "+shown+": it no longer allows anything.")
	}
}

func forAgent(agent string) string {
	if agent == "" {
		return " for every agent"
	}
	return " for agent " + agent
}

type sessionView struct {
	Name, Agent, Tier, PausedAt, PausedISO, Parent string
	Denials                                        int
	Unattended                                     bool
	// The record exactly as stored, sent back by the Unpause form.
	RawName, RawAgent string
}

type sessionsBody struct {
	Items []sessionView
	Total int
	CSRF  string
}

func (s *Server) sessionsPage(w http.ResponseWriter, r *http.Request, sess session) {
	list, total, err := s.store.PausedSessions(r.Context(), listLimit)
	if err != nil {
		s.fail(w, r, "reading paused sessions", err)
		return
	}
	body := sessionsBody{Total: total, CSRF: sess.csrf}
	for _, ps := range list {
		body.Items = append(body.Items, sessionView{
			Name: clean(ps.Name, maxName), Agent: clean(ps.Agent, maxName), Tier: clean(ps.Tier, 16),
			PausedAt: fmtTime(ps.PausedAt), PausedISO: isoTime(ps.PausedAt), Parent: clean(ps.Parent, maxName),
			Denials: ps.Denials, Unattended: ps.Unattended, RawName: ps.Name, RawAgent: ps.Agent,
		})
	}
	p := s.newPage(sess, "sessions", "Paused sessions")
	p.Body = body
	s.render(w, http.StatusOK, "sessions", p)
}

func (s *Server) unpause(w http.ResponseWriter, r *http.Request, sess session) {
	defer http.Redirect(w, r, Prefix+"sessions", http.StatusSeeOther)
	name, agent := r.PostForm.Get("session"), r.PostForm.Get("agent")
	shown := clean(name, maxName) + clean(forAgent(agent), maxName)
	_, err := s.gate.Unpause(r.Context(), name, agent, sess.operator)
	switch {
	case errors.Is(err, gate.ErrInvalid):
		s.flash(sess, true, strings.TrimPrefix(err.Error(), "invalid: "))
	case err != nil:
		s.log.Error("panel: unpausing failed", "err", err)
		s.flash(sess, true, "The session could not be unpaused. Try again.")
	default:
		s.log.Info("session unpaused", "session", shown, "operator", sess.operator, "channel", "web")
		s.flash(sess, false, "Unpaused "+shown+": its denial count starts again from zero.")
	}
}
