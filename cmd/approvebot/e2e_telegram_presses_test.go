package main

import (
	"strings"
	"testing"
	"time"

	"github.com/approvebot/approvebot/internal/testserver"
)

// 1,000 presses on the live cards at once — allow and deny from the approver, in both chats,
// mixed with a stranger's — end in exactly one decision; every press is answered, and every
// loser is told the request was already decided.
func TestTelegramThousandPressesOneDecision(t *testing.T) {
	t.Parallel()
	r := tgStart(t, `approval_timeout = "120s"`, "")
	id := r.ask(t, "tg-thousand", "terraform destroy -auto-approve")
	cards := map[int64]int{}
	for _, chat := range []int64{tgOps, tgOncall} {
		cards[chat] = r.card(t, chat, id).ID
	}
	const n = 1000
	queries := make([]string, 0, n)
	for i := 0; i < n; i++ {
		chat := tgOps
		if i%2 == 1 {
			chat = tgOncall
		}
		who, data := tgAlice, "ab1:once:"+id
		switch i % 5 {
		case 1:
			data = "ab1:session:" + id
		case 3:
			who = tgBob
		}
		queries = append(queries, r.fake.Press(chat, cards[chat], who, data))
	}
	r.fake.WaitFor(t, 90*time.Second, "every press answered", func() bool {
		return len(r.fake.Unanswered()) == 0 && len(r.fake.Answers()) >= n
	})
	won, lost, strangers := 0, 0, 0
	for _, q := range queries {
		a, ok := r.fake.AnswerTo(q)
		switch {
		case !ok:
			t.Fatalf("press %s was not answered", q)
		case strings.HasPrefix(a.Text, "Allowed"):
			won++
		case strings.HasPrefix(a.Text, "Already decided"):
			lost++
		case strings.Contains(a.Text, "not an approver"):
			strangers++
		default:
			t.Errorf("unexpected answer %+v", a)
		}
	}
	if won != 1 || strangers != n/5 || won+lost+strangers != n {
		t.Fatalf("won %d, lost %d, strangers %d", won, lost, strangers)
	}
	got := r.waitDecided(t, id)
	tgWant(t, got, "state", "allowed", "source", "human", "decided_by", "Alice (telegram:111)")
	_, m := r.s.JSON(t, "GET", "/v1/audit?limit=5000&request="+id, testserver.OperatorToken, nil)
	decisions := 0
	for _, e := range m["entries"].([]any) {
		if e.(map[string]any)["event"] == "decision" {
			decisions++
		}
	}
	if decisions != 1 {
		t.Fatalf("%d decision entries in the audit trail, want 1", decisions)
	}
}
