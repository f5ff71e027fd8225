package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/approvebot/approvebot/internal/testserver"
)

// An update the Bot API library cannot decode (valid JSON from a newer Bot API) must not
// stall polling: the real binary skips it, logs it once with its id, counts it in
// approvebot_channel_skipped_updates_total, and the press behind it still decides.
func TestTelegramUndecodableUpdateIsSkipped(t *testing.T) {
	t.Parallel()
	r := tgStart(t, "", "")
	id := r.ask(t, "tg-bad-update", "helm rollback prod")
	card := r.card(t, tgOps, id)
	bad := r.fake.ForwardUnknownOrigin(tgOps, tgAlice, "forwarded from somewhere new")
	qid := r.fake.PressButton(tgOps, card.ID, tgAlice, "ab1:once:")
	if a := r.answer(t, qid); a.ShowAlert || !strings.Contains(a.Text, "Allowed") {
		t.Fatalf("the press behind the bad update was answered %+v", a)
	}
	tgWant(t, r.waitDecided(t, id), "state", "allowed", "outcome", "allow_once", "source", "human")
	r.fake.WaitFor(t, 30*time.Second, "every update confirmed", func() bool { return r.fake.PendingUpdates() == 0 })

	line := fmt.Sprintf("update_id=%d", bad)
	testserver.Eventually(t, 10*time.Second, "the skip in the log", func() bool { return strings.Contains(r.s.Logs(), line) })
	if n := strings.Count(r.s.Logs(), "telegram update skipped"); n != 1 {
		t.Fatalf("the skip was logged %d times, want once:\n%s", n, r.s.Logs())
	}
	_, metrics := r.s.Do(t, "GET", "/metrics", "", nil)
	if want := `approvebot_channel_skipped_updates_total{channel="telegram"} 1`; !strings.Contains(string(metrics), want) {
		t.Fatalf("metrics lack %q", want)
	}

	// A restart polls from where the last run confirmed: the bad update is not read again.
	r.s = r.s.Restart(t)
	r.fake.WaitFor(t, 30*time.Second, "approvebot to poll again", r.fake.Polling)
	id2 := r.ask(t, "tg-bad-update", "helm rollback staging")
	card2 := r.card(t, tgOps, id2)
	r.answer(t, r.fake.PressButton(tgOps, card2.ID, tgAlice, "ab1:once:"))
	tgWant(t, r.waitDecided(t, id2), "state", "allowed")
	if strings.Contains(r.s.Logs(), "telegram update skipped") {
		t.Fatalf("the bad update was read again after the restart:\n%s", r.s.Logs())
	}
}
