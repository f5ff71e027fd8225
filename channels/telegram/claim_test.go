package telegram

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/approvebot/approvebot/channels/telegram/telegramtest"
	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/render"
	"github.com/approvebot/approvebot/internal/chattest"
)

// claiming is the resolver of a replica of a cluster: the store remembers which updates
// some replica claimed.
type claiming struct {
	*chattest.Resolver
	mu      sync.Mutex
	claimed map[string]bool
	asked   []string
	// first makes the first update asked about one another replica claimed already.
	first bool
}

func (c *claiming) Claim(_ context.Context, channel, id string) (bool, func(bool)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.asked = append(c.asked, channel+":"+id)
	if c.first && len(c.asked) == 1 {
		c.claimed[id] = true // handled by the replica before this one
		return false, func(bool) {}
	}
	if c.claimed[id] {
		return false, func(bool) {}
	}
	c.claimed[id] = true
	return true, func(handled bool) {
		if !handled {
			c.mu.Lock()
			delete(c.claimed, id)
			c.mu.Unlock()
		}
	}
}

// TestUpdateClaimedElsewhereIsNotHandled: an update another replica already claimed (a new
// leader re-reading what the old one handled but never confirmed) is skipped: no decision,
// no answer; a new update is claimed and handled.
func TestUpdateClaimedElsewhereIsNotHandled(t *testing.T) {
	fake := telegramtest.Start(t, telegramtest.Options{Token: testToken})
	fake.AddChat(telegramtest.Chat{ID: group, Type: "supergroup", Title: "ops"})
	// The first update the fake hands out was handled by the replica before this one.
	res := &claiming{Resolver: chattest.New(), claimed: map[string]bool{}, first: true}
	ch := newChannel(t, baseConfig(fake.URL), &syncBuffer{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		ch.Run(ctx, res)
	}()
	defer func() { cancel(); <-done }()
	fake.WaitFor(t, 10*time.Second, "the channel to poll", fake.Polling)

	req := res.Add(approval.Request{Tool: "bash", Summary: "make deploy", Session: "s1", Agent: "agent",
		Routes: []approval.Target{{Channel: Name, Chat: strconv.FormatInt(group, 10)}}})
	posted, err := ch.Post(ctx, strconv.FormatInt(group, 10), render.CardFor(&req))
	if err != nil {
		t.Fatal(err)
	}
	res.AddCard(req.ID, posted)
	msgID, _ := strconv.Atoi(posted.Message)

	old := fake.PressButton(group, msgID, alice, "ab1:deny:")
	fake.WaitFor(t, 10*time.Second, "the first update confirmed", func() bool { return fake.PendingUpdates() == 0 })
	if _, answered := fake.AnswerTo(old); answered || len(res.Decisions()) != 0 {
		t.Fatalf("an update claimed by another replica was handled: answered=%v decisions=%v", answered, res.Decisions())
	}
	fresh := fake.PressButton(group, msgID, alice, "ab1:once:")
	fake.WaitFor(t, 10*time.Second, "the answer to the new press", func() bool { _, ok := fake.AnswerTo(fresh); return ok })
	if d := res.Decisions(); len(d) != 1 || d[0].Outcome != approval.OutcomeAllowOnce {
		t.Fatalf("decisions %+v", d)
	}
	res.mu.Lock()
	defer res.mu.Unlock()
	if len(res.asked) != 2 || res.asked[0] == res.asked[1] {
		t.Fatalf("claims asked: %v, want one per update", res.asked)
	}
}
