package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/policy"
)

var rowRe = regexp.MustCompile(`(?s)<tr>\s*<td[^>]*><time.*?</tr>`)

// rows returns the history rows of a page.
func rows(body string) []string { return rowRe.FindAllString(text(body), -1) }

func TestHistoryFilters(t *testing.T) {
	r := newRig(t, policy.Config{})
	ctx := context.Background()
	b := r.browser()
	b.mustSignIn()
	denied := r.askCmd("alpha", "rm -rf ./build")
	b.follow(b.decide(denied.ID, "deny", "not today"))
	allowed := r.askCmd("beta", "make deploy")
	if _, err := r.g.Decide(ctx, allowed.ID, gate.Decision{Outcome: approval.OutcomeAllowOnce, DecidedBy: "alice (telegram:111)", Channel: "telegram"}); err != nil {
		t.Fatal(err)
	}
	// Decided by the policy at once, by another agent, another tool.
	if got, err := r.g.Submit(ctx, gate.Ask{Tool: "read_file", Args: map[string]any{"path": "/etc/hosts"}, Session: "beta"}, gate.Caller{Name: "agent2"}); err != nil || !got.Allowed {
		t.Fatalf("%+v %v", got, err)
	}

	cases := []struct {
		query string
		want  []string // one substring per expected row, newest first
	}{
		{"session=alpha", []string{"decision", "request"}},
		{"session=alpha&outcome=deny", []string{"not today"}},
		{"outcome=allow_once&source=human", []string{"alice (telegram:111)"}},
		{"source=policy", []string{"read_file"}},
		{"agent=agent2", []string{"read_file"}},
		{"tool=read_file", []string{"agent2"}},
		{"session=beta&tool=bash", []string{"alice", "make deploy"}},
		{"session=gamma", nil},
		{"until=" + url.QueryEscape(denied.CreatedAt.Add(-time.Hour).Format(time.RFC3339)), nil},
		{"since=1h&session=alpha", []string{"decision", "request"}},
	}
	for _, c := range cases {
		t.Run(c.query, func(t *testing.T) {
			a := b.get("/ui/history?" + c.query)
			if a.status != http.StatusOK {
				t.Fatalf("%d %s", a.status, a.body)
			}
			got := rows(a.body)
			if len(got) != len(c.want) {
				t.Fatalf("%d rows, want %d:\n%s", len(got), len(c.want), strings.Join(got, "\n"))
			}
			for i, w := range c.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("row %d lacks %q: %s", i, w, got[i])
				}
			}
			if len(got) == 0 && !strings.Contains(a.body, "No entries match.") {
				t.Error("an empty result does not say so")
			}
		})
	}
	// The filter form keeps what was chosen, and each entry links to its request.
	a := b.get("/ui/history?session=alpha&outcome=deny&source=human")
	wantIn(t, a.body, `id="f-session" name="session" type="text" value="alpha"`, `<option value="deny" selected>`, `<option value="human" selected>`,
		`href="/ui/requests/`+denied.ID+`"`)
}

func TestHistoryRefusesBadFilters(t *testing.T) {
	r := newRig(t, policy.Config{})
	b := r.browser()
	b.mustSignIn()
	for q, says := range map[string]string{
		"outcome=allow_forever": "Choose an outcome",
		"since=yesterday":       "From must be",
		"until=soon":            "Until must be",
		"before=-3":             "does not exist",
	} {
		a := b.get("/ui/history?" + q)
		if a.status != http.StatusBadRequest || !strings.Contains(a.body, says) {
			t.Errorf("%s: %d, want 400 saying %q", q, a.status, says)
		}
	}
}

func TestHistoryPages(t *testing.T) {
	r := newRig(t, policy.Config{})
	ctx := context.Background()
	for i := range 130 {
		if err := r.st.AppendAudit(ctx, approval.AuditEntry{Event: approval.EventDecision, Session: "p", Tool: "bash",
			Outcome: approval.OutcomeDeny, Source: approval.SourcePolicy, Summary: fmt.Sprintf("cmd-%03d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	b := r.browser()
	b.mustSignIn()
	first := b.get("/ui/history?session=p")
	got := rows(first.body)
	if len(got) != 100 || !strings.Contains(got[0], "cmd-129") || !strings.Contains(got[99], "cmd-030") {
		t.Fatalf("first page: %d rows, %q … %q", len(got), got[0], got[len(got)-1])
	}
	older := regexp.MustCompile(`href="/ui/history\?([^"]+)">Older`).FindStringSubmatch(first.body)
	if older == nil {
		t.Fatal("no link to older entries")
	}
	second := b.get("/ui/history?" + text(older[1]))
	got = rows(second.body)
	if len(got) != 30 || !strings.Contains(got[0], "cmd-029") || !strings.Contains(got[29], "cmd-000") {
		t.Fatalf("second page: %d rows", len(got))
	}
	if strings.Contains(second.body, ">Older") || !strings.Contains(second.body, `href="/ui/history?session=p">← Newest`) {
		t.Fatal("second page's pager is wrong")
	}
}

func TestHistoryChartCountsDecisionsPerHour(t *testing.T) {
	r := newRig(t, policy.Config{})
	ctx := context.Background()
	now := time.Now().UTC()
	hour := now.Truncate(time.Hour).Add(-2 * time.Hour)
	for i, o := range []approval.Outcome{approval.OutcomeAllowOnce, approval.OutcomeAllowSession, approval.OutcomeDeny, approval.OutcomeTimeout, approval.OutcomeDeny} {
		if err := r.st.AppendAudit(ctx, approval.AuditEntry{Time: hour.Add(time.Duration(i) * time.Minute), Event: approval.EventDecision, Outcome: o, Source: approval.SourceHuman}); err != nil {
			t.Fatal(err)
		}
	}
	b := r.browser()
	b.mustSignIn()
	page := text(b.get("/ui/history").body)
	wantIn(t, page, "Decisions per hour", "5 decisions: 2 allowed, 2 denied, 1 expired, 0 cancelled.",
		"<th scope=\"row\">"+hour.Format("2006-01-02 15:00")+"</th><td>2</td><td>2</td><td>1</td><td>0</td>",
		hour.Format("2006-01-02 15:00")+" UTC: 2 allowed, 2 denied, 1 expired, 0 other", `role="img"`)
	if n := strings.Count(page, "<rect "); n != 3 {
		t.Fatalf("%d bar segments, want 3 (allowed, denied, expired of one hour)", n)
	}
	// A range in the past shows that range.
	day := hour.Add(-72 * time.Hour)
	q := url.Values{"since": {day.Format(time.RFC3339)}, "until": {day.Add(6 * time.Hour).Format(time.RFC3339)}}
	page = text(b.get("/ui/history?" + q.Encode()).body)
	wantIn(t, page, "0 decisions", day.Format("Jan 2 15:00")+" to "+day.Add(6*time.Hour).Format("Jan 2 15:00"))
}
