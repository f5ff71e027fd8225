package web

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/approvebot/approvebot/core/approval"
)

// historyPageSize is how many audit entries one history page shows.
const historyPageSize = 100

// The chart shows at most a week of hours; without a time filter, the last day.
const (
	chartDefaultSpan = 24 * time.Hour
	chartMaxHours    = 7 * 24
)

var outcomeChoices = []approval.Outcome{
	approval.OutcomeAllowOnce, approval.OutcomeAllowSession, approval.OutcomeAllowAlways,
	approval.OutcomeDeny, approval.OutcomeTimeout, approval.OutcomeCancelled,
}

var sourceChoices = []approval.Source{
	approval.SourceHuman, approval.SourcePolicy, approval.SourceRule, approval.SourceFloor, approval.SourceGrant,
	approval.SourceLedger, approval.SourceUnattended, approval.SourcePaused, approval.SourceFallback,
	approval.SourceTimeout, approval.SourceAgent,
}

type choice struct {
	Value    string
	Selected bool
}

type historyFilter struct {
	Session, Agent, Tool, Outcome, Source, Since, Until string
	Outcomes, Sources                                   []choice
}

type historyBody struct {
	Filter  historyFilter
	Entries []auditView
	Errors  []string
	// Older links to the next, older page ("" when there is none); Newest to the first
	// page when this is not it.
	Older, Newest string
	Chart         chartView
}

// parseWhen reads a time filter: RFC 3339, a UTC date and time as a datetime-local field
// sends it ("2025-01-31T09:00"), a UTC date, or a duration ago ("1h", "36h").
func parseWhen(s string, now time.Time) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, true
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, true
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), true
	}
	return time.Time{}, false
}

func (s *Server) historyPage(w http.ResponseWriter, r *http.Request, sess session) {
	qs := r.URL.Query()
	now := s.now().UTC()
	f := historyFilter{
		Session: qs.Get("session"), Agent: qs.Get("agent"), Tool: qs.Get("tool"), Outcome: qs.Get("outcome"),
		Source: qs.Get("source"), Since: qs.Get("since"), Until: qs.Get("until"),
	}
	body := historyBody{}
	q := approval.AuditQuery{Session: f.Session, Agent: f.Agent, Tool: f.Tool, Limit: historyPageSize}
	if f.Outcome != "" {
		if !approval.KnownOutcome(approval.Outcome(f.Outcome)) {
			body.Errors = append(body.Errors, "Choose an outcome from the list.")
		}
		q.Outcome = approval.Outcome(f.Outcome)
	}
	q.Source = approval.Source(f.Source)
	var ok bool
	if q.Since, ok = parseWhen(f.Since, now); !ok {
		body.Errors = append(body.Errors, "From must be a UTC time such as 2025-01-31 09:00, or how long ago, such as 24h.")
	}
	if q.Until, ok = parseWhen(f.Until, now); !ok {
		body.Errors = append(body.Errors, "Until must be a UTC time such as 2025-01-31 18:00, or how long ago, such as 1h.")
	}
	if v := qs.Get("before"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n == 0 {
			body.Errors = append(body.Errors, "That page of the history does not exist; start from the newest.")
		}
		q.Before = n
	}
	for _, o := range outcomeChoices {
		f.Outcomes = append(f.Outcomes, choice{Value: string(o), Selected: string(o) == f.Outcome})
	}
	for _, src := range sourceChoices {
		f.Sources = append(f.Sources, choice{Value: string(src), Selected: string(src) == f.Source})
	}
	body.Filter = f
	if len(body.Errors) == 0 {
		page, err := s.store.Audit(r.Context(), q)
		if err != nil {
			s.fail(w, r, "reading the audit trail", err)
			return
		}
		for i := len(page.Entries) - 1; i >= 0; i-- {
			body.Entries = append(body.Entries, auditViewOf(&page.Entries[i]))
		}
		keep := url.Values{}
		for _, k := range []string{"session", "agent", "tool", "outcome", "source", "since", "until"} {
			if v := qs.Get(k); v != "" {
				keep.Set(k, v)
			}
		}
		if page.NextBefore != 0 {
			older := url.Values{}
			for k, v := range keep {
				older[k] = v
			}
			older.Set("before", strconv.FormatUint(page.NextBefore, 10))
			body.Older = Prefix + "history?" + older.Encode()
		}
		if q.Before != 0 {
			body.Newest = Prefix + "history"
			if len(keep) > 0 {
				body.Newest += "?" + keep.Encode()
			}
		}
		chart, err := s.chart(r, q.Since, q.Until, now)
		if err != nil {
			s.fail(w, r, "counting decisions", err)
			return
		}
		body.Chart = chart
	}
	p := s.newPage(sess, "history", "History")
	p.Body = body
	status := http.StatusOK
	if len(body.Errors) > 0 {
		status = http.StatusBadRequest
	}
	s.render(w, status, "history", p)
}

// The chart: decisions per hour, stacked by what they came to.

type segment struct {
	Y, H  float64
	Class string
}

type bar struct {
	X, W  float64
	Segs  []segment
	Label string
}

type tick struct {
	Pos   float64
	Label string
}

type hourRow struct {
	Hour                            string
	Allowed, Denied, Expired, Other int
}

type chartView struct {
	Title, Desc  string
	Bars         []bar
	YTicks       []tick
	XTicks       []tick
	Rows         []hourRow
	Total        int
	Width        float64
	Height       float64
	PlotX, PlotY float64
	PlotW, PlotH float64
	Baseline     float64
}

// Chart geometry in SVG user units; the SVG scales to the page width.
const (
	chartW      = 720.0
	chartH      = 180.0
	chartLeft   = 36.0
	chartRight  = 8.0
	chartTop    = 8.0
	chartBottom = 22.0
)

func group(o approval.Outcome) string {
	switch o {
	case approval.OutcomeAllowOnce, approval.OutcomeAllowSession, approval.OutcomeAllowAlways:
		return "allowed"
	case approval.OutcomeDeny:
		return "denied"
	case approval.OutcomeTimeout:
		return "expired"
	}
	return "other"
}

func (s *Server) chart(r *http.Request, since, until, now time.Time) (chartView, error) {
	end := until
	if end.IsZero() || end.After(now) {
		end = now
	}
	if t := end.Truncate(time.Hour); t.Before(end) {
		end = t.Add(time.Hour) // through the hour in progress
	}
	start := since
	if start.IsZero() {
		start = end.Add(-chartDefaultSpan)
	}
	start = start.Truncate(time.Hour)
	if end.Sub(start) > chartMaxHours*time.Hour {
		start = end.Add(-chartMaxHours * time.Hour)
	}
	if !start.Before(end) {
		start = end.Add(-time.Hour)
	}
	counts, err := s.store.AuditCounts(r.Context(), start, end)
	if err != nil {
		return chartView{}, err
	}
	n := int(end.Sub(start) / time.Hour)
	rows := make([]hourRow, n)
	for i := range rows {
		rows[i].Hour = start.Add(time.Duration(i) * time.Hour).Format("2006-01-02 15:00")
	}
	for _, hc := range counts {
		i := int(hc.Hour.Sub(start) / time.Hour)
		if i < 0 || i >= n {
			continue
		}
		for o, c := range hc.Outcomes {
			switch group(o) {
			case "allowed":
				rows[i].Allowed += c
			case "denied":
				rows[i].Denied += c
			case "expired":
				rows[i].Expired += c
			default:
				rows[i].Other += c
			}
		}
	}
	v := chartView{
		Width: chartW, Height: chartH, PlotX: chartLeft, PlotY: chartTop,
		PlotW: chartW - chartLeft - chartRight, PlotH: chartH - chartTop - chartBottom,
	}
	v.Baseline = v.PlotY + v.PlotH
	maxTotal, totals := 0, [4]int{}
	for _, row := range rows {
		t := row.Allowed + row.Denied + row.Expired + row.Other
		maxTotal = max(maxTotal, t)
		totals[0] += row.Allowed
		totals[1] += row.Denied
		totals[2] += row.Expired
		totals[3] += row.Other
		v.Total += t
	}
	top := niceCeil(maxTotal)
	bw := v.PlotW / float64(n)
	for i, row := range rows {
		b := bar{X: v.PlotX + float64(i)*bw + bw*0.1, W: bw * 0.8}
		y := v.Baseline
		for _, part := range []struct {
			n     int
			class string
		}{{row.Allowed, "bar-allowed"}, {row.Denied, "bar-denied"}, {row.Expired, "bar-expired"}, {row.Other, "bar-other"}} {
			if part.n == 0 {
				continue
			}
			h := float64(part.n) / float64(top) * v.PlotH
			y -= h
			b.Segs = append(b.Segs, segment{Y: y, H: h, Class: part.class})
		}
		b.Label = fmt.Sprintf("%s UTC: %d allowed, %d denied, %d expired, %d other", row.Hour, row.Allowed, row.Denied, row.Expired, row.Other)
		v.Bars = append(v.Bars, b)
	}
	yticks := []int{0, top / 2, top}
	if top < 2 {
		yticks = []int{0, top}
	}
	for _, y := range yticks {
		v.YTicks = append(v.YTicks, tick{Pos: v.Baseline - float64(y)/float64(top)*v.PlotH, Label: strconv.Itoa(y)})
	}
	step := max(1, (n+7)/8)
	for i := 0; i < n; i += step {
		h := start.Add(time.Duration(i) * time.Hour)
		label := h.Format("15:00")
		if h.Hour() == 0 || i == 0 {
			label = h.Format("Jan 2 15:00")
		}
		v.XTicks = append(v.XTicks, tick{Pos: v.PlotX + float64(i)*bw + bw/2, Label: label})
	}
	for _, row := range rows {
		if row.Allowed+row.Denied+row.Expired+row.Other > 0 {
			v.Rows = append(v.Rows, row)
		}
	}
	v.Title = fmt.Sprintf("Decisions per hour, %s to %s UTC (all agents and sessions)", start.Format("Jan 2 15:00"), end.Format("Jan 2 15:00"))
	v.Desc = fmt.Sprintf("%d decisions: %d allowed, %d denied, %d expired, %d cancelled.", v.Total, totals[0], totals[1], totals[2], totals[3])
	return v, nil
}

// niceCeil rounds n up to 1, 2 or 5 times a power of ten (at least 1), for the y axis.
func niceCeil(n int) int {
	if n <= 1 {
		return 1
	}
	for p := 1; ; p *= 10 {
		for _, m := range []int{1, 2, 5} {
			if m*p >= n {
				return m * p
			}
		}
	}
}
