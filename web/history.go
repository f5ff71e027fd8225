package web

import (
	"net/http"
	"time"

	"github.com/approvebot/approvebot/core/approval"
)

// historyPageSize is how many audit entries one history page shows.
const historyPageSize = 100

type historyFilter struct {
	Session, Agent, Tool, Outcome, Source, Since, Until string
}

type historyBody struct {
	Filter  historyFilter
	Entries []auditView
	Error   string
}

func (s *Server) historyPage(w http.ResponseWriter, r *http.Request, sess session) {
	q := r.URL.Query()
	f := historyFilter{Session: q.Get("session"), Since: q.Get("since")}
	aq := approval.AuditQuery{Session: f.Session, Limit: historyPageSize}
	body := historyBody{Filter: f}
	if f.Since != "" {
		t, err := time.Parse(time.RFC3339, f.Since)
		if err != nil {
			body.Error = "From must be a time such as 2025-01-31T09:00:00Z."
		}
		aq.Since = t
	}
	if body.Error == "" {
		entries, err := s.store.Audit(r.Context(), aq)
		if err != nil {
			s.fail(w, r, "reading the audit trail", err)
			return
		}
		for i := len(entries) - 1; i >= 0; i-- {
			body.Entries = append(body.Entries, auditViewOf(&entries[i]))
		}
	}
	p := s.newPage(sess, "history", "History")
	p.Body = body
	s.render(w, http.StatusOK, "history", p)
}
