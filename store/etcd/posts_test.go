package etcd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/ledger"
	"github.com/approvebot/approvebot/core/policy"
	"github.com/approvebot/approvebot/core/render"
	"github.com/approvebot/approvebot/store/storetest"
)

var (
	chatA = approval.Target{Channel: "telegram", Chat: "100"}
	chatB = approval.Target{Channel: "slack", Chat: "C200"}
)

func claimOf(t *testing.T, s *Store, id string, to approval.Target) gate.PostClaim {
	t.Helper()
	c, err := s.ClaimPost(context.Background(), id, to)
	if err != nil {
		t.Fatalf("claiming %s's post to %v on %s: %v", id, to, s.Name(), err)
	}
	return c
}

// claimHolder is the replica the claim key names ("" when there is none).
func claimHolder(t *testing.T, s *Store, id string, to approval.Target) string {
	t.Helper()
	resp, err := s.cli.Get(context.Background(), s.k.post(id, to.Channel, to.Chat))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) == 0 {
		return ""
	}
	return string(resp.Kvs[0].Value)
}

func TestClaimPostOncePerChatAcrossReplicas(t *testing.T) {
	rs := replicas(t, 2, nil)
	creator, heir := rs[0], rs[1]
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	id := storetest.ID(1)
	r := pendingReq(id, "s")
	r.Routes = []approval.Target{chatA, chatB}
	if err := creator.Create(ctx, r, approval.AuditEntry{}); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name string
		s    *Store
		to   approval.Target
		want gate.PostClaim
	}{
		{"a replica that does not own the request", heir, chatA, gate.PostClaim{Skip: gate.SkipNotOwner}},
		{"the owner", creator, chatA, gate.PostClaim{Post: true}},
		{"the owner again (its answer lost)", creator, chatA, gate.PostClaim{Post: true}},
		{"the other chat", creator, chatB, gate.PostClaim{Post: true}},
		{"still not the other replica", heir, chatB, gate.PostClaim{Skip: gate.SkipNotOwner}},
	}
	for _, st := range steps {
		if got := claimOf(t, st.s, id, st.to); got != st.want {
			t.Fatalf("%s: %+v, want %+v", st.name, got, st.want)
		}
	}
	if _, err := creator.AddCard(ctx, id, approval.CardRef{Channel: chatA.Channel, Chat: chatA.Chat, Message: "1"}); err != nil {
		t.Fatal(err)
	}
	if got := claimOf(t, creator, id, chatA); got != (gate.PostClaim{Skip: gate.SkipRecorded}) {
		t.Fatalf("after the card was recorded: %+v", got)
	}

	// The creator goes with chat B claimed and no card recorded there.
	f := newFeed()
	go heir.Adopt(ctx, f.add)
	creator.Close()
	f.wait(t, "the adoption", func(g []approval.Request) bool { return len(g) == 1 })
	steps = []struct {
		name string
		s    *Store
		to   approval.Target
		want gate.PostClaim
	}{
		{"the heir, where a card is recorded", heir, chatA, gate.PostClaim{Skip: gate.SkipRecorded}},
		{"the heir, where the gone creator claimed", heir, chatB, gate.PostClaim{Post: true, Previous: creator.Name()}},
		{"the heir again: its own claim", heir, chatB, gate.PostClaim{Post: true}},
	}
	for _, st := range steps {
		if got := claimOf(t, st.s, id, st.to); got != st.want {
			t.Fatalf("%s: %+v, want %+v", st.name, got, st.want)
		}
	}
	if h := claimHolder(t, heir, id, chatB); h != heir.Name() {
		t.Fatalf("chat B's claim is %q's, want the heir's", h)
	}

	if _, _, err := heir.Resolve(ctx, id, humanAt(approval.OutcomeDeny, "op"), ledger.Effects{}); err != nil {
		t.Fatal(err)
	}
	resp, err := heir.cli.Get(ctx, heir.k.postPrefix(id), clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil || resp.Count != 0 {
		t.Fatalf("%v claims left after the decision (%v)", resp, err)
	}
	if got := claimOf(t, heir, id, chatB); got != (gate.PostClaim{Skip: gate.SkipDecided}) {
		t.Fatalf("after the decision: %+v", got)
	}
}

func TestClaimPostRefusedOnceTheOwnersLeaseIsGone(t *testing.T) {
	s := replicas(t, 1, nil)[0]
	ctx := context.Background()
	id := storetest.ID(1)
	if err := s.Create(ctx, pendingReq(id, "s"), approval.AuditEntry{}); err != nil {
		t.Fatal(err)
	}
	// The lease expires under the replica (etcd revokes it; the replica takes a new one):
	// its requests belong to the maintenance leader now, which posts their cards.
	if _, err := s.cli.Revoke(ctx, s.lease.id()); err != nil {
		t.Fatal(err)
	}
	if got := claimOf(t, s, id, chatA); got != (gate.PostClaim{Skip: gate.SkipNotOwner}) {
		t.Fatalf("%+v, want refused (not the owner)", got)
	}
	if h := claimHolder(t, s, id, chatA); h != "" {
		t.Fatalf("a claim by %q was written", h)
	}
}

func TestClaimPostWhoseAnswerIsLostIsHeld(t *testing.T) {
	lost := newLostAnswers()
	s := openAt(t, etcdEndpoints(t), freshPrefix(), func(o *Options) { o.wrapKV = lost.wrap; o.Name = "poster" })
	ctx := context.Background()
	id := storetest.ID(1)
	if err := s.Create(ctx, pendingReq(id, "s"), approval.AuditEntry{}); err != nil {
		t.Fatal(err)
	}
	lost.arm(s.k.post(id, chatA.Channel, chatA.Chat), 1)
	if got := claimOf(t, s, id, chatA); got != (gate.PostClaim{Post: true}) {
		t.Fatalf("%+v, want held: the lost answer's commit was this replica's", got)
	}
	if lost.lostCount() != 1 || claimHolder(t, s, id, chatA) != "poster" {
		t.Fatalf("lost %d answers; claim %q", lost.lostCount(), claimHolder(t, s, id, chatA))
	}
}

// chatPlatform is one chat platform the replicas share: it numbers the messages posted
// and counts posts and edits.
type chatPlatform struct {
	mu    sync.Mutex
	n     int
	posts map[string][]approval.CardRef // request -> every card posted, in order
	edits map[approval.CardRef]int
}

func newChatPlatform() *chatPlatform {
	return &chatPlatform{posts: map[string][]approval.CardRef{}, edits: map[approval.CardRef]int{}}
}

func (p *chatPlatform) postsOf(id string) []approval.CardRef {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]approval.CardRef(nil), p.posts[id]...)
}

func (p *chatPlatform) editsOf(ref approval.CardRef) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.edits[ref]
}

// platformChannel is one replica's connection to a chatPlatform for one chat. before runs
// before a post reaches the platform and after once it did, before the replica learns the
// message: either may hold the post or fail it (nil: neither).
type platformChannel struct {
	p             *chatPlatform
	to            approval.Target
	before, after func(ctx context.Context) error
}

func (c *platformChannel) Name() string        { return c.to.Channel }
func (c *platformChannel) Chats() []string     { return []string{c.to.Chat} }
func (c *platformChannel) Health() gate.Health { return gate.Health{OK: true} }

func (c *platformChannel) Post(ctx context.Context, chat string, card render.Card) (approval.CardRef, error) {
	if c.before != nil {
		if err := c.before(ctx); err != nil {
			return approval.CardRef{}, err
		}
	}
	c.p.mu.Lock()
	c.p.n++
	ref := approval.CardRef{Channel: c.to.Channel, Chat: chat, Message: fmt.Sprint(c.p.n)}
	c.p.posts[card.RequestID] = append(c.p.posts[card.RequestID], ref)
	c.p.mu.Unlock()
	if c.after != nil {
		if err := c.after(ctx); err != nil {
			return approval.CardRef{}, err
		}
	}
	return ref, nil
}

func (c *platformChannel) Edit(ctx context.Context, ref approval.CardRef, card render.Card) error {
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	c.p.edits[ref]++
	return nil
}

// logBuffer keeps what a replica's gate logs, for the test to read.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// gateOn starts a gate on st with chans, logging into the returned buffer.
func gateOn(t *testing.T, st *Store, chans ...gate.Channel) (*gate.Gate, *logBuffer) {
	t.Helper()
	eng, err := policy.NewEngine(policy.Config{}, st)
	if err != nil {
		t.Fatal(err)
	}
	logs := &logBuffer{}
	g, err := gate.New(gate.Options{ApprovalTimeout: time.Minute, Logger: slog.New(slog.NewTextHandler(logs, nil))}, st, eng, chans, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := g.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		g.Close(context.Background())
		if t.Failed() {
			t.Logf("%s logs:\n%s", st.Name(), logs.String())
		}
	})
	return g, logs
}

// hold is a post hook that holds the posts until release is closed, or their context ends;
// entered is closed when the first post is held.
type hold struct {
	once    sync.Once
	entered chan struct{}
	release chan struct{}
}

func newHold() *hold { return &hold{entered: make(chan struct{}), release: make(chan struct{})} }

func (h *hold) wait(ctx context.Context) error {
	h.once.Do(func() { close(h.entered) })
	select {
	case <-h.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func waitClosed(t *testing.T, what string, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(20 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// TestAReplicaThatAdoptsItsOwnRequestBackPostsItsCardOnce: a replica's lease is lost while
// it posts a card; as the maintenance leader it adopts the request back on its new lease.
// Its post in flight is the card: it is not posted a second time.
func TestAReplicaThatAdoptsItsOwnRequestBackPostsItsCardOnce(t *testing.T) {
	st := replicas(t, 1, nil)[0]
	p := newChatPlatform()
	first := newHold()
	var held sync.Once
	ch := &platformChannel{p: p, to: chatA, before: func(ctx context.Context) error {
		var err error
		hit := false
		held.Do(func() { hit = true; err = first.wait(ctx) })
		if hit {
			return err
		}
		return nil
	}}
	g, logs := gateOn(t, st, ch)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	adopted := make(chan struct{})
	var once sync.Once
	go st.Lead(ctx, "maintenance", func(ctx context.Context) {
		st.Adopt(ctx, func(r approval.Request) {
			g.Adopt(r)
			once.Do(func() { close(adopted) })
		})
	})
	rec, err := g.Submit(ctx, ask("make once"), gate.Caller{Name: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	waitClosed(t, "the post in flight", first.entered)
	if _, err := st.cli.Revoke(ctx, st.lease.id()); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, "the request adopted back", adopted)
	close(first.release)
	eventually(t, "a card recorded", func() bool {
		live := g.LivePending(chatA.Channel, chatA.Chat)
		return len(live) == 1 && len(live[0].Cards) > 0
	})
	g.Close(context.Background()) // every delivery has ended
	if posts := p.postsOf(rec.ID); len(posts) != 1 {
		t.Fatalf("posted %d cards (%v), want one", len(posts), posts)
	}
	if !strings.Contains(logs.String(), "delivering a request whose replica is gone") {
		t.Fatal("the request was not delivered on adoption: the test did not test the adoption")
	}
}

// TestTheHeirOfAPosterThatDiedBeforeRecordingPostsAgainAndSaysSo: the creator's post reached
// the chat and the creator died before it learned the message. Nothing knows that message:
// the heir posts the card again (a second card is better than none a human could press),
// and says so; its card is the one recorded and edited.
func TestTheHeirOfAPosterThatDiedBeforeRecordingPostsAgainAndSaysSo(t *testing.T) {
	rs := replicas(t, 2, nil)
	p := newChatPlatform()
	lostAnswer := newHold()
	creator, _ := gateOn(t, rs[0], &platformChannel{p: p, to: chatA, after: lostAnswer.wait})
	heir, heirLogs := gateOn(t, rs[1], &platformChannel{p: p, to: chatA})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec, err := creator.Submit(ctx, ask("make twice"), gate.Caller{Name: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	waitClosed(t, "the creator's post on the platform", lostAnswer.entered)
	go rs[1].Adopt(ctx, heir.Adopt)
	cctx, ccancel := context.WithTimeout(ctx, 100*time.Millisecond)
	creator.Close(cctx) // the post's answer never comes
	ccancel()
	rs[0].Close()
	var ref approval.CardRef
	eventually(t, "the heir's card recorded", func() bool {
		live := heir.LivePending(chatA.Channel, chatA.Chat)
		if len(live) == 1 && len(live[0].Cards) == 1 {
			ref = live[0].Cards[0]
			return true
		}
		return false
	})
	posts := p.postsOf(rec.ID)
	if len(posts) != 2 || posts[1] != ref {
		t.Fatalf("posts %v, recorded %v: want the creator's unrecorded card and the heir's recorded one", posts, ref)
	}
	want := fmt.Sprintf("request_id=%s channel=%s chat=%s claimed_by=%s", rec.ID, chatA.Channel, chatA.Chat, rs[0].Name())
	if l := heirLogs.String(); !strings.Contains(l, "posting a card again") || !strings.Contains(l, want) {
		t.Fatalf("the heir did not say it posts the card again (%s)", want)
	}
	if h := claimHolder(t, rs[1], rec.ID, chatA); h != rs[1].Name() {
		t.Fatalf("the claim is %q's, want the heir's", h)
	}
	if _, err := heir.Decide(ctx, rec.ID, gate.Decision{Outcome: approval.OutcomeDeny, DecidedBy: "alice", Channel: "telegram"}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the recorded card edited", func() bool { return p.editsOf(ref) == 1 })
	if n := p.editsOf(posts[0]); n != 0 {
		t.Fatalf("the unknown card was edited %d times", n)
	}
}

// TestTheHeirPostsToEveryChatWithoutARecordedCard: the creator's card reached one chat
// (recorded) and its post to the other failed; the creator dies. The heir posts to the
// chat without a card, and only there.
func TestTheHeirPostsToEveryChatWithoutARecordedCard(t *testing.T) {
	rs := replicas(t, 2, nil)
	p := newChatPlatform()
	failed := make(chan struct{})
	var once sync.Once
	creator, _ := gateOn(t, rs[0],
		&platformChannel{p: p, to: chatA},
		&platformChannel{p: p, to: chatB, before: func(context.Context) error {
			once.Do(func() { close(failed) })
			return errors.New("slack: 503")
		}})
	heir, _ := gateOn(t, rs[1], &platformChannel{p: p, to: chatA}, &platformChannel{p: p, to: chatB})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec, err := creator.Submit(ctx, ask("make both"), gate.Caller{Name: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	waitClosed(t, "the failed post", failed)
	eventually(t, "chat A's card recorded", func() bool {
		live := heir.LivePending(chatA.Channel, chatA.Chat)
		return len(live) == 1 && len(live[0].Cards) == 1
	})
	go rs[1].Adopt(ctx, heir.Adopt)
	creator.Close(ctx)
	rs[0].Close()
	eventually(t, "chat B's card recorded", func() bool {
		live := heir.LivePending(chatB.Channel, chatB.Chat)
		return len(live) == 1 && len(live[0].Cards) == 2
	})
	heir.Close(ctx)
	count := map[approval.Target]int{}
	for _, ref := range p.postsOf(rec.ID) {
		count[approval.Target{Channel: ref.Channel, Chat: ref.Chat}]++
	}
	if count[chatA] != 1 || count[chatB] != 1 {
		t.Fatalf("cards posted per chat: %v, want one in each", count)
	}
}

// TestAReplicaWhoseLeaseEndsBeforeItPostsLeavesTheCardToTheAdoption: the creator's lease
// ends between storing the request and claiming its card's post. It does not post: the
// request is no longer its own. Leading maintenance on its new lease, it adopts the
// request back and posts the card then, once.
func TestAReplicaWhoseLeaseEndsBeforeItPostsLeavesTheCardToTheAdoption(t *testing.T) {
	faults := newLostAnswers()
	st := openAt(t, etcdEndpoints(t), freshPrefix(), func(o *Options) { o.wrapKV = faults.wrap; o.Name = "creator" })
	p := newChatPlatform()
	g, logs := gateOn(t, st, &platformChannel{p: p, to: chatA})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	faults.afterCommit(st.k.pendingPrefix(), func() {
		if _, err := st.cli.Revoke(ctx, st.lease.id()); err != nil {
			t.Error(err)
		}
	})
	go st.Lead(ctx, "maintenance", func(ctx context.Context) { st.Adopt(ctx, g.Adopt) })
	rec, err := g.Submit(ctx, ask("make later"), gate.Caller{Name: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the card recorded", func() bool {
		live := g.LivePending(chatA.Channel, chatA.Chat)
		return len(live) == 1 && len(live[0].Cards) > 0
	})
	g.Close(context.Background())
	if posts := p.postsOf(rec.ID); len(posts) != 1 {
		t.Fatalf("posted %d cards (%v), want one", len(posts), posts)
	}
	l := logs.String()
	if !strings.Contains(l, "delivering a request whose replica is gone") {
		t.Fatal("the card was not posted by the adoption: the test did not test it")
	}
	if strings.Contains(l, "posting a card again") {
		t.Fatal("the adoption took over a claim: the creator claimed although its lease had ended")
	}
}
