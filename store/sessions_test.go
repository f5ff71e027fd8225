package store

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/ledger"
)

func pendingOf(agent, id, session, fp string) *approval.Request {
	r := pending(id, session, fp)
	r.Agent = agent
	return r
}

func decide(t *testing.T, s *Store, r *approval.Request, o approval.Outcome, pauseAfter int, always []string) {
	t.Helper()
	ctx := context.Background()
	if err := s.Create(ctx, r, approval.AuditEntry{Event: approval.EventRequest, RequestID: r.ID, Session: r.Session, Agent: r.Agent}); err != nil {
		t.Fatal(err)
	}
	if _, won, err := s.Resolve(ctx, r.ID, human(o), ledger.EffectsOf(o, approval.SourceHuman, pauseAfter, always)); !won || err != nil {
		t.Fatalf("resolve %s: won=%v err=%v", r.ID, won, err)
	}
}

// One agent's grants, denials and pause are invisible to another agent using the same
// session name.
func TestSessionMemoryBelongsToAgent(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	decide(t, s, pendingOf("alice", "g1", "shared", "fp-grant"), approval.OutcomeAllowSession, 1, nil)
	decide(t, s, pendingOf("alice", "d1", "shared", "fp-deny"), approval.OutcomeDeny, 1, nil) // pauses alice's "shared"
	look := func(agent, fp string) ledger.Lookup {
		t.Helper()
		l, err := s.Lookup(ctx, agent, "shared", fp)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	if l := look("alice", "fp-grant"); !l.Granted || !l.Session.Paused || l.Session.Denials != 1 {
		t.Fatalf("alice: %+v", l)
	}
	if l := look("alice", "fp-deny"); !l.Denied {
		t.Fatalf("alice's denial: %+v", l)
	}
	for _, fp := range []string{"fp-grant", "fp-deny"} {
		if l := look("bob", fp); l.Granted || l.Denied || l.Session.Paused || l.Session.Denials != 0 {
			t.Fatalf("bob sees alice's memory for %s: %+v", fp, l)
		}
	}
	// A nameless agent never reads or writes the shared record as its own.
	if l := look("", "fp-grant"); l.Granted {
		t.Fatalf("empty agent got a grant: %+v", l)
	}
	r := pendingOf("", "n1", "shared", "fp-x")
	s.Create(ctx, r, approval.AuditEntry{})
	if _, _, err := s.Resolve(ctx, "n1", human(approval.OutcomeDeny), ledger.EffectsOf(approval.OutcomeDeny, approval.SourceHuman, 1, nil)); err == nil {
		t.Fatal("a denial without an agent was written")
	}
	if l := look("bob", "fp-x"); l.Denied || l.Session.Paused {
		t.Fatalf("a nameless denial reached bob: %+v", l)
	}
}

// Keys of different (agent, session, fingerprint) triples never collide, whatever bytes
// the names hold.
func TestSessionKeysAreUnambiguous(t *testing.T) {
	triples := [][3]string{
		{"ab", "c", "fp"}, {"a", "bc", "fp"}, {"a", "b", "cfp"}, {"", "abc", "fp"}, {"abc", "", "fp"},
		{"a\x00", "b", "fp"}, {"a", "\x00b", "fp"}, {"a", "b\x00", "fp"}, {"a\x00b", "", "fp"},
		{"\x00\x01", "x", "fp"}, {"", "\x00\x01x", "fp"},
	}
	seen := map[string][3]string{}
	sessions := map[string][2]string{}
	for _, tr := range triples {
		k := string(ledgerKey(tr[0], tr[1], tr[2]))
		if prev, dup := seen[k]; dup {
			t.Fatalf("ledger keys of %q and %q collide", prev, tr)
		}
		seen[k] = tr
		sk := string(sessionKey(tr[0], tr[1]))
		if prev, dup := sessions[sk]; dup && prev != [2]string{tr[0], tr[1]} {
			t.Fatalf("session keys of %q and %q collide", prev, tr[:2])
		}
		sessions[sk] = [2]string{tr[0], tr[1]}
	}
}

func TestUpdateSessionForOneOrEveryAgent(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	full, ask, auto := "full", "ask", "auto"
	yes, no := true, false
	audit := approval.AuditEntry{Event: approval.EventSession}
	tierOf := func(agent string) (string, bool) {
		t.Helper()
		sess, err := s.Session(ctx, agent, "job")
		if err != nil {
			t.Fatal(err)
		}
		return sess.Tier, sess.Unattended
	}
	if _, err := s.UpdateSession(ctx, "alice", "job", ledger.Settings{Tier: &full}, audit); err != nil {
		t.Fatal(err)
	}
	if tier, _ := tierOf("alice"); tier != "full" {
		t.Fatalf("alice tier %q", tier)
	}
	if tier, _ := tierOf("bob"); tier != "" {
		t.Fatalf("alice's setting reached bob: %q", tier)
	}
	// For every agent: the newest instruction applies to alice too, and to agents that
	// come later.
	recs, err := s.UpdateSession(ctx, "", "job", ledger.Settings{Tier: &ask, Unattended: &yes}, audit)
	if err != nil || recs.Shared.Tier != "ask" || len(recs.Agents) != 1 || recs.Agents[0].Agent != "alice" || recs.Agents[0].Tier != "" {
		t.Fatalf("every agent: %+v %v", recs, err)
	}
	for _, a := range []string{"alice", "bob", "carol"} {
		if tier, un := tierOf(a); tier != "ask" || !un {
			t.Fatalf("%s: tier %q unattended %v", a, tier, un)
		}
	}
	// One agent's own tier beats the shared one; an unattended mark in either holds.
	s.UpdateSession(ctx, "bob", "job", ledger.Settings{Tier: &auto, Unattended: &no}, audit)
	if tier, un := tierOf("bob"); tier != "auto" || !un {
		t.Fatalf("bob: tier %q unattended %v", tier, un)
	}
	s.UpdateSession(ctx, "", "job", ledger.Settings{Unattended: &no}, audit)
	if tier, un := tierOf("bob"); tier != "auto" || un {
		t.Fatalf("bob after clearing for everyone: tier %q unattended %v", tier, un)
	}
	page, _ := s.Audit(ctx, approval.AuditQuery{})
	if len(page.Entries) != 4 {
		t.Fatalf("%d audit entries, want one per change", len(page.Entries))
	}
}

func TestUnpauseOneOrEveryAgent(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	decide(t, s, pendingOf("alice", "a1", "job", "fa"), approval.OutcomeDeny, 1, nil)
	decide(t, s, pendingOf("bob", "b1", "job", "fb"), approval.OutcomeDeny, 1, nil)
	paused := func(agent string) bool {
		sess, _ := s.Session(ctx, agent, "job")
		return sess.Paused
	}
	if !paused("alice") || !paused("bob") || paused("carol") {
		t.Fatal("pauses not per agent")
	}
	recs, err := s.Unpause(ctx, "alice", "job", approval.AuditEntry{Event: approval.EventUnpause})
	if err != nil || len(recs.Agents) != 1 || recs.Agents[0].Paused {
		t.Fatalf("%+v %v", recs, err)
	}
	if paused("alice") || !paused("bob") {
		t.Fatal("unpausing alice changed bob")
	}
	recs, err = s.Unpause(ctx, "", "job", approval.AuditEntry{Event: approval.EventUnpause})
	if err != nil || len(recs.Agents) != 2 || paused("bob") {
		t.Fatalf("%+v %v", recs, err)
	}
	// Denied fingerprints stay denied after an unpause.
	if l, _ := s.Lookup(ctx, "bob", "job", "fb"); !l.Denied || l.Session.Denials != 0 {
		t.Fatalf("%+v", l)
	}
}

func TestLinkParentKeepsTheFirst(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	if err := s.LinkParent(ctx, "alice", "child", "p1"); err != nil {
		t.Fatal(err)
	}
	s.LinkParent(ctx, "alice", "child", "p2")
	if sess, _ := s.Session(ctx, "alice", "child"); sess.Parent != "p1" {
		t.Fatalf("parent %q", sess.Parent)
	}
	if sess, _ := s.Session(ctx, "bob", "child"); sess.Parent != "" {
		t.Fatalf("bob adopted alice's link: %q", sess.Parent)
	}
	if err := s.LinkParent(ctx, "", "child", "p3"); err == nil {
		t.Fatal("a link without an agent was written")
	}
}

func TestAllowAlwaysBelongsToTheAgent(t *testing.T) {
	s := open(t)
	ctx := context.Background()
	decide(t, s, pendingOf("alice", "a1", "s", "f1"), approval.OutcomeAllowAlways, 3, []string{"/usr/bin/make"})
	decide(t, s, pendingOf("bob", "b1", "s", "f2"), approval.OutcomeAllowAlways, 3, []string{"/usr/bin/make"})
	items, err := s.ListAllowlist(ctx)
	if err != nil || len(items) != 2 || items[0].Agent == items[1].Agent {
		t.Fatalf("%+v %v", items, err)
	}
	for _, e := range s.AllowlistEntries() {
		if e.Agent != "alice" && e.Agent != "bob" {
			t.Fatalf("entry for every agent: %+v", e)
		}
	}
	alice, none := "alice", ""
	if got, _ := s.RevokeAllowlist(ctx, AllowlistSelector{Pattern: "/usr/bin/make", Agent: &none}, approval.AuditEntry{}); len(got) != 0 {
		t.Fatalf("revoked %+v for an agent selector that matches nothing", got)
	}
	got, err := s.RevokeAllowlist(ctx, AllowlistSelector{Pattern: "/usr/bin/make", Agent: &alice}, approval.AuditEntry{Event: approval.EventAllowlist})
	if err != nil || len(got) != 1 || got[0].Agent != "alice" {
		t.Fatalf("%+v %v", got, err)
	}
	if e := s.AllowlistEntries(); len(e) != 1 || e[0].Agent != "bob" {
		t.Fatalf("left %+v", e)
	}
	page, _ := s.Audit(ctx, approval.AuditQuery{})
	last := page.Entries[len(page.Entries)-1]
	if last.Agent != "alice" || !strings.Contains(last.Reason, "for agent alice") {
		t.Fatalf("audit %+v", last)
	}
}

// An entry restricted to arguments is not served to a policy that cannot match them.
func TestAllowlistEntryWithArgsIsNotWidened(t *testing.T) {
	if _, ok := policyEntry(AllowlistItem{Pattern: "/usr/bin/git", Args: "status*"}); ok {
		t.Fatal("an args-restricted entry would be served without its restriction")
	}
}

// copyFixture copies a database file written by an earlier version into a temporary
// directory and returns its path.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	src, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	path := filepath.Join(t.TempDir(), name)
	dst, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	dst.Close()
	return path
}

// testdata/schema1.bolt was written by the schema-1 code (store + gate), with DenialsBeforePause
// 2 and allow_always = "persist":
//   - alice in "shared": "deploy granted" allowed for the session (a grant),
//     "deploy denied-by-alice" denied;
//   - bob in "shared": "deploy denied-by-bob" denied — the second denial paused "shared";
//   - alice in "child" with parent_session "shared" (refused: paused parent; link recorded);
//   - bob in "solo": "make build" allowed always (a persisted allowlist entry);
//   - the operator set session "ops" to tier "ask", unattended (no request used it).
func TestMigrateSchema1(t *testing.T) {
	path := copyFixture(t, "schema1.bolt")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	fps := map[string]string{}
	page, err := s.Audit(ctx, approval.AuditQuery{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var note string
	for _, e := range page.Entries {
		if e.Event == approval.EventDecision {
			fps[e.Summary] = e.Fingerprint
		}
		if e.Event == approval.EventMigration {
			note = e.Reason
		}
	}
	if len(fps) != 5 {
		t.Fatalf("fixture decisions %v", fps)
	}
	if !strings.Contains(note, "dropped 2 session grants") || !strings.Contains(note, "schema version 1 to 2") {
		t.Fatalf("migration note %q", note)
	}
	look := func(agent, session, summary string) ledger.Lookup {
		t.Helper()
		l, err := s.Lookup(ctx, agent, session, fps[summary])
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	// Grants are dropped: nobody can tell which agent a human granted.
	if l := look("alice", "shared", "deploy granted"); l.Granted {
		t.Fatal("a schema-1 grant survived")
	}
	if l := look("bob", "solo", "make build"); l.Granted {
		t.Fatal("a schema-1 grant survived")
	}
	// Denials and the pause are kept for every agent that used the session...
	for _, agent := range []string{"alice", "bob"} {
		for _, summary := range []string{"deploy denied-by-alice", "deploy denied-by-bob"} {
			if l := look(agent, "shared", summary); !l.Denied || !l.Session.Paused || l.Session.Denials != 2 {
				t.Fatalf("%s, %q: %+v", agent, summary, l)
			}
		}
	}
	// ...and for nobody else.
	if l := look("mallory", "shared", "deploy denied-by-bob"); l.Denied || l.Session.Paused {
		t.Fatalf("mallory: %+v", l)
	}
	if sess, _ := s.Session(ctx, "alice", "child"); sess.Parent != "shared" {
		t.Fatalf("alice's link lost: %+v", sess)
	}
	if sess, _ := s.Session(ctx, "bob", "child"); sess.Parent != "" {
		t.Fatalf("bob adopted alice's link: %+v", sess)
	}
	// Operator settings of a session name apply to every agent.
	for _, agent := range []string{"alice", "mallory"} {
		if sess, _ := s.Session(ctx, agent, "ops"); sess.Tier != "ask" || !sess.Unattended {
			t.Fatalf("%s in ops: %+v", agent, sess)
		}
	}
	items, err := s.ListAllowlist(ctx)
	if err != nil || len(items) != 1 || !strings.HasSuffix(items[0].Pattern, "/make") || items[0].Agent != "" {
		t.Fatalf("allowlist %+v %v", items, err)
	}
	if e := s.AllowlistEntries(); len(e) != 1 || e[0].Pattern != items[0].Pattern {
		t.Fatalf("served %+v", e)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
	// Re-opening migrates nothing again.
	s.Close()
	s2, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	page, _ = s2.Audit(ctx, approval.AuditQuery{Limit: 1000})
	n := 0
	for _, e := range page.Entries {
		if e.Event == approval.EventMigration {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d migrations recorded", n)
	}
	if l, _ := s2.Lookup(ctx, "bob", "shared", fps["deploy denied-by-alice"]); !l.Denied {
		t.Fatal("denial lost on reopen")
	}
}

// Schema-1 memory of a session no stored request or audit entry names (pruned) is kept for
// every agent of that name: it can only restrict.
func TestMigrateUnownedSessionFailsClosed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v1.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, name := range allBuckets {
			if _, err := tx.CreateBucket(name); err != nil {
				return err
			}
		}
		var v [4]byte
		binary.BigEndian.PutUint32(v[:], 1)
		tx.Bucket(bucketMeta).Put(keySchema, v[:])
		tx.Bucket(bucketSessions).Put([]byte("orphan"), []byte(`{"name":"orphan","parent":"root","denials":3,"paused":true}`))
		tx.Bucket(bucketDenials).Put([]byte("orphan\x00fp1"), []byte{1})
		tx.Bucket(bucketDenials).Put([]byte("we\x00ird\x00fp2"), []byte{1})
		tx.Bucket(bucketGrants).Put([]byte("orphan\x00fp3"), []byte{1})
		return nil
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	for _, agent := range []string{"alice", "bob"} {
		l, _ := s.Lookup(ctx, agent, "orphan", "fp1")
		if !l.Denied || !l.Session.Paused || l.Session.Parent != "root" || l.Granted {
			t.Fatalf("%s: %+v", agent, l)
		}
		if l, _ := s.Lookup(ctx, agent, "orphan", "fp3"); l.Granted {
			t.Fatalf("%s: grant kept", agent)
		}
		if l, _ := s.Lookup(ctx, agent, "we\x00ird", "fp2"); !l.Denied {
			t.Fatalf("%s: denial of a session with a NUL in its name lost", agent)
		}
	}
	// An operator unpause of the name for every agent lifts it.
	if _, err := s.Unpause(ctx, "", "orphan", approval.AuditEntry{Event: approval.EventUnpause}); err != nil {
		t.Fatal(err)
	}
	if l, _ := s.Lookup(ctx, "alice", "orphan", "fp1"); l.Session.Paused || !l.Denied {
		t.Fatalf("after unpause: %+v", l)
	}
	if err := s.Check(); err != nil {
		t.Fatal(err)
	}
}

func BenchmarkLookup(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "b.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	for i := 0; i < 100; i++ {
		r := pendingOf(fmt.Sprint("agent", i%5), fmt.Sprint("r", i), fmt.Sprint("s", i%10), fmt.Sprint("fp", i))
		s.Create(ctx, r, approval.AuditEntry{})
		s.Resolve(ctx, r.ID, human(approval.OutcomeDeny), ledger.EffectsOf(approval.OutcomeDeny, approval.SourceHuman, 100, nil))
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Lookup(ctx, "agent1", "s1", "fp11"); err != nil {
			b.Fatal(err)
		}
	}
}
