package web_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/policy"
)

func TestGrantsAndLedgerPages(t *testing.T) {
	r := newRig(t, policy.Config{})
	granted := r.askCmd("build-1", "make release")
	denied := r.askCmd("build-2", "rm -rf ./dist")
	b := r.browser()
	b.mustSignIn()
	b.follow(b.decide(granted.ID, "allow_session", ""))
	b.follow(b.decide(denied.ID, "deny", "keep dist"))

	page := text(b.get("/ui/grants").body)
	wantIn(t, page, "1 in all", "<code>agent</code>", "<code>build-1</code>", "make release", `href="/ui/requests/`+granted.ID+`"`)
	if strings.Contains(page, "rm -rf ./dist") {
		t.Fatal("a denial is listed as a grant")
	}
	page = text(b.get("/ui/ledger").body)
	wantIn(t, page, "1 in all", "<code>build-2</code>", "rm -rf ./dist", "keep dist", `href="/ui/requests/`+denied.ID+`"`)

	// The grant works: the same call in the same session is allowed at once.
	again, err := r.g.Submit(context.Background(), askOf("build-1", "make release"), gate.Caller{Name: "agent"})
	if err != nil || !again.Allowed || again.Source != approval.SourceGrant {
		t.Fatalf("granted call asked again: %+v %v", again, err)
	}
}

func TestRevokeAnAllowlistEntry(t *testing.T) {
	r := newRig(t, policy.Config{AllowAlways: "persist"})
	rec := r.askCmd("s", "mkfifo approvebot-panel-revoke")
	b := r.browser()
	b.mustSignIn()
	b.follow(b.decide(rec.ID, "allow_always", ""))
	entries := r.st.AllowlistEntries()
	if len(entries) != 1 {
		t.Fatalf("allowlist after allow always: %+v", entries)
	}
	pattern := entries[0].Pattern
	page := b.get("/ui/allowlist").body
	wantIn(t, text(page), "<code>"+pattern+"</code>", ">Revoke</button>", `href="/ui/requests/`+rec.ID+`"`)

	// Another mkfifo is allowed by the entry until it is revoked.
	if got, _ := r.g.Submit(context.Background(), askOf("s2", "mkfifo approvebot-panel-revoke-2"), gate.Caller{Name: "agent"}); !got.Allowed {
		t.Fatalf("entry does not allow: %+v", got)
	}
	// The form names the one entry: this pattern for another agent is not it.
	a := b.post("/ui/allowlist/revoke", url.Values{"csrf": {b.csrf}, "pattern": {pattern}, "agent": {"agent2"}, "args": {""}})
	wantIn(t, text(b.follow(a).body), "There is no allowlist entry "+pattern+" for agent agent2")
	if len(r.st.AllowlistEntries()) != 1 {
		t.Fatal("revoking another agent's entry removed this one")
	}
	wantIn(t, page, `name="agent" value="agent"`, `name="args" value=""`)
	a = b.post("/ui/allowlist/revoke", url.Values{"csrf": {b.csrf}, "pattern": {pattern}, "agent": {"agent"}, "args": {""}})
	wantIn(t, text(b.follow(a).body), "Revoked "+pattern+" for agent agent: it no longer allows anything.", "No stored entries.")
	if got := r.st.AllowlistEntries(); len(got) != 0 {
		t.Fatalf("entries after revoke: %+v", got)
	}
	if got, _ := r.g.Submit(context.Background(), askOf("s3", "mkfifo approvebot-panel-revoke-3"), gate.Caller{Name: "agent"}); got.State != approval.StatePending {
		t.Fatalf("revoked entry still allows: %+v", got)
	}
	trail, _ := r.st.Audit(context.Background(), approval.AuditQuery{})
	last := trail.Entries[len(trail.Entries)-1]
	for _, e := range trail.Entries {
		if e.Event == approval.EventAllowlist {
			last = e
		}
	}
	if last.Event != approval.EventAllowlist || last.Actor != "operator" || last.Channel != "web" || last.Agent != "agent" || !strings.Contains(last.Reason, pattern) {
		t.Fatalf("revoke audit: %+v", last)
	}
	// Twice: nothing left to revoke, and it says so.
	a = b.post("/ui/allowlist/revoke", url.Values{"csrf": {b.csrf}, "pattern": {pattern}})
	wantIn(t, text(b.follow(a).body), "There is no allowlist entry "+pattern+" (already revoked?)")
}

func TestUnpauseASession(t *testing.T) {
	r := newRig(t, policy.Config{DenialsBeforePause: 2})
	b := r.browser()
	b.mustSignIn()
	for _, cmd := range []string{"rm -rf ./a", "rm -rf ./b"} {
		b.follow(b.decide(r.askCmd("loop-7", cmd).ID, "deny", "no"))
		// Another agent's session of the same name is paused too, on its own.
		other, err := r.g.Submit(context.Background(), askOf("loop-7", cmd), gate.Caller{Name: "agent2"})
		if err != nil {
			t.Fatal(err)
		}
		b.follow(b.decide(other.ID, "deny", "no"))
	}
	paused, err := r.g.Submit(context.Background(), askOf("loop-7", "ls"), gate.Caller{Name: "agent"})
	if err != nil || paused.Source != approval.SourcePaused {
		t.Fatalf("session not paused: %+v %v", paused, err)
	}
	page := text(b.get("/ui/sessions").body)
	wantIn(t, page, "2 paused", "<code>loop-7</code>", "<td>2</td>", ">Unpause</button>", `name="agent" value="agent"`, `name="agent" value="agent2"`)
	a := b.post("/ui/sessions/unpause", url.Values{"csrf": {b.csrf}, "session": {"loop-7"}, "agent": {"agent"}})
	page = text(b.follow(a).body)
	wantIn(t, page, "Unpaused loop-7 for agent agent", "1 paused", `name="agent" value="agent2"`)
	if strings.Contains(page, `name="agent" value="agent"`+"\n") {
		t.Fatal("the unpaused session is still listed")
	}
	if still, _ := r.g.Submit(context.Background(), askOf("loop-7", "ls"), gate.Caller{Name: "agent2"}); still.Source != approval.SourcePaused {
		t.Fatalf("unpausing one agent's session lifted another's: %+v", still)
	}
	got, err := r.g.Submit(context.Background(), askOf("loop-7", "make test"), gate.Caller{Name: "agent"})
	if err != nil || got.State != approval.StatePending {
		t.Fatalf("after unpause: %+v %v", got, err)
	}
	a = b.post("/ui/sessions/unpause", url.Values{"csrf": {b.csrf}, "session": {""}})
	wantIn(t, text(b.follow(a).body), "session name must be")
}
