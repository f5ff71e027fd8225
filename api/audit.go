package api

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/approvebot/approvebot/core/approval"
)

// AuditSource reads the trail: pages of entries and per-hour decision counts.
type AuditSource interface {
	Audit(ctx context.Context, q approval.AuditQuery) (approval.AuditPage, error)
	AuditCounts(ctx context.Context, since, until time.Time) ([]approval.HourCount, error)
}

// auditPageView is the answer of GET /v1/audit.
type auditPageView struct {
	Entries []approval.AuditEntry `json:"entries"`
	// NextBefore is the before= of the next, older page; 0 when there is nothing older.
	NextBefore uint64 `json:"next_before"`
	// Damaged names entries that could not be read: the page is complete but for them.
	Damaged []approval.DamagedRecord `json:"damaged,omitempty"`
}

type hourCountView struct {
	Hour     time.Time                `json:"hour"`
	Outcomes map[approval.Outcome]int `json:"outcomes"`
}

// auditQuery reads GET /v1/audit's parameters: request, session, agent, tool, outcome,
// source, since, until (RFC 3339 or a duration ago such as 1h), before (a seq) and limit.
func auditQuery(v url.Values, now time.Time) (approval.AuditQuery, *apiError) {
	for k, vals := range v {
		switch k {
		case "request", "session", "agent", "tool", "outcome", "source", "since", "until", "before", "limit":
		default:
			return approval.AuditQuery{}, newError(400, "unknown_parameter", "unknown audit parameter "+strconv.Quote(k)+
				"; known: request, session, agent, tool, outcome, source, since, until, before, limit")
		}
		if len(vals) > 1 {
			return approval.AuditQuery{}, newError(400, "duplicate_parameter", "audit parameter "+strconv.Quote(k)+" given more than once")
		}
	}
	q := approval.AuditQuery{
		RequestID: v.Get("request"), Session: v.Get("session"), Agent: v.Get("agent"), Tool: v.Get("tool"),
		Outcome: approval.Outcome(v.Get("outcome")), Source: approval.Source(v.Get("source")),
	}
	if q.Outcome != "" && !approval.KnownOutcome(q.Outcome) {
		return q, newError(400, "invalid_outcome", "outcome must be allow_once, allow_session, allow_always, deny, timeout or cancelled")
	}
	var e *apiError
	if q.Since, e = auditTime(v.Get("since"), "since", now); e != nil {
		return q, e
	}
	if q.Until, e = auditTime(v.Get("until"), "until", now); e != nil {
		return q, e
	}
	if s := v.Get("before"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil || n == 0 {
			return q, newError(400, "invalid_before", "before must be a positive entry seq (a page's next_before)")
		}
		q.Before = n
	}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return q, newError(400, "invalid_limit", "limit must be a positive integer")
		}
		q.Limit = n
	}
	return q, nil
}

// auditTime parses an RFC 3339 time or a duration before now ("1h").
func auditTime(s, name string, now time.Time) (time.Time, *apiError) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, newError(400, "invalid_"+name, name+" must be an RFC 3339 time or a duration ago such as 1h")
}

func (s *Server) audit(w http.ResponseWriter, r *http.Request, c caller) *apiError {
	if s.opts.Audit == nil {
		return newError(501, "not_available", "no audit source")
	}
	q, e := auditQuery(r.URL.Query(), time.Now())
	if e != nil {
		return e
	}
	page, err := s.opts.Audit.Audit(r.Context(), q)
	if err != nil {
		return s.gateError(err)
	}
	if page.Entries == nil {
		page.Entries = []approval.AuditEntry{}
	}
	if len(page.Damaged) > 0 {
		s.log.Warn("audit query skipped damaged entries", "damaged", len(page.Damaged))
	}
	writeJSON(w, 200, auditPageView{Entries: page.Entries, NextBefore: page.NextBefore, Damaged: page.Damaged})
	return nil
}

// auditCounts answers GET /v1/audit/counts?since=&until=: decisions per hour by outcome.
func (s *Server) auditCounts(w http.ResponseWriter, r *http.Request, c caller) *apiError {
	if s.opts.Audit == nil {
		return newError(501, "not_available", "no audit source")
	}
	v := r.URL.Query()
	for k := range v {
		if k != "since" && k != "until" {
			return newError(400, "unknown_parameter", "unknown parameter "+strconv.Quote(k)+"; known: since, until")
		}
	}
	now := time.Now()
	since, e := auditTime(v.Get("since"), "since", now)
	if e != nil {
		return e
	}
	until, e := auditTime(v.Get("until"), "until", now)
	if e != nil {
		return e
	}
	counts, err := s.opts.Audit.AuditCounts(r.Context(), since, until)
	if err != nil {
		return s.gateError(err)
	}
	out := make([]hourCountView, 0, len(counts))
	for _, h := range counts {
		out = append(out, hourCountView{Hour: h.Hour, Outcomes: h.Outcomes})
	}
	writeJSON(w, 200, map[string]any{"hours": out})
	return nil
}
