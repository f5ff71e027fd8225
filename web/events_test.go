package web_test

import (
	"bufio"
	"context"
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

type sse struct {
	id, event, data string
}

type eventStream struct {
	t      *testing.T
	resp   *http.Response
	events chan sse
	cancel context.CancelFunc
}

// stream opens the panel's event stream with the browser's cookies.
func (b *browser) stream(query string, header ...string) *eventStream {
	b.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", b.base+"/ui/events"+query, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	c := *b.c
	c.Timeout = 0
	resp, err := c.Do(req)
	if err != nil {
		cancel()
		b.t.Fatal(err)
	}
	es := &eventStream{t: b.t, resp: resp, events: make(chan sse, 64), cancel: cancel}
	b.t.Cleanup(es.close)
	go func() {
		defer close(es.events)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<16), 1<<22)
		var cur sse
		var data []string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if cur.event != "" {
					cur.data = strings.Join(data, "\n")
					es.events <- cur
				}
				cur, data = sse{}, nil
			case strings.HasPrefix(line, "id: "):
				cur.id = line[4:]
			case strings.HasPrefix(line, "event: "):
				cur.event = line[7:]
			case strings.HasPrefix(line, "data: "):
				data = append(data, line[6:])
			}
		}
	}()
	return es
}

func (es *eventStream) close() { es.cancel(); es.resp.Body.Close() }

// next returns the next event, or fails; an event stream that ended gives event "".
func (es *eventStream) next() sse {
	es.t.Helper()
	select {
	case ev := <-es.events:
		return ev
	case <-time.After(10 * time.Second):
		es.t.Fatal("no event within 10s")
	}
	return sse{}
}

// until skips events until one satisfies ok.
func (es *eventStream) until(what string, ok func(sse) bool) sse {
	es.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev, open := <-es.events:
			if !open {
				es.t.Fatalf("stream ended before %s", what)
			}
			if ok(ev) {
				return ev
			}
		case <-deadline:
			es.t.Fatalf("no %s within 10s", what)
		}
	}
}

func requestEvent(id, state string) func(sse) bool {
	return func(ev sse) bool {
		return ev.event == "request" && strings.Contains(ev.data, `id="req-`+id+`"`) && strings.Contains(ev.data, `data-state="`+state+`"`)
	}
}

var afterRe = regexp.MustCompile(`data-events="/ui/events\?after=(\d+)"`)

func TestEventsStreamTheRequestsAsTheyChange(t *testing.T) {
	r := newRig(t, policy.Config{})
	b := r.browser()
	b.mustSignIn()
	page := b.get("/ui/")
	m := afterRe.FindStringSubmatch(page.body)
	if m == nil {
		t.Fatal("page without a stream position")
	}
	es := b.stream("?after=" + m[1])
	if es.resp.StatusCode != 200 || es.resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %q", es.resp.StatusCode, es.resp.Header.Get("Content-Type"))
	}

	rec := r.ask("s", map[string]any{"command": "rm -rf ./build"}, "clean up")
	ev := es.until("the new request", requestEvent(rec.ID, "pending"))
	wantIn(t, text(ev.data), "<code>rm -rf ./build</code>", "clean up", ">Allow once</button>", `name="csrf" value="`+b.csrf+`"`)
	es.until("its card", func(ev sse) bool {
		return ev.event == "cards" && strings.Contains(ev.data, `id="cards-`+rec.ID+`"`) && strings.Contains(ev.data, "telegram")
	})

	// A decision made elsewhere (the operator API, a chat) reaches the page.
	if _, err := r.g.Decide(context.Background(), rec.ID, gate.Decision{Outcome: approval.OutcomeDeny, Reason: "not now", DecidedBy: "alice (telegram:111)", Channel: "telegram"}); err != nil {
		t.Fatal(err)
	}
	ev = es.until("the decision", requestEvent(rec.ID, "denied"))
	wantIn(t, text(ev.data), "<h2", "Denied", "alice (telegram:111)", "not now")
	if strings.Contains(ev.data, "<button") {
		t.Fatal("a decided request is streamed with buttons")
	}
}

func TestEventsReplayWhatHappenedBeforeTheStreamOpened(t *testing.T) {
	r := newRig(t, policy.Config{})
	b := r.browser()
	b.mustSignIn()
	m := afterRe.FindStringSubmatch(b.get("/ui/").body)
	// Between the page and its stream: a request arrives and is decided.
	rec := r.askCmd("s", "make deploy")
	if _, err := r.g.Decide(context.Background(), rec.ID, gate.Decision{Outcome: approval.OutcomeAllowOnce, DecidedBy: "alice"}); err != nil {
		t.Fatal(err)
	}
	es := b.stream("?after=" + m[1])
	first := es.until("the replayed request", func(ev sse) bool { return ev.event == "request" })
	if !strings.Contains(first.data, rec.ID) {
		t.Fatalf("replayed %+v", first)
	}
	es.close()

	// A reconnecting browser sends Last-Event-ID and gets only what came after it.
	later := r.askCmd("s", "make test")
	es = b.stream("?after=0", "Last-Event-ID", first.id)
	for {
		ev := es.next()
		if ev.event == "request" && strings.Contains(ev.data, later.ID) {
			break
		}
		if ev.id == first.id {
			t.Fatalf("event %s replayed again", ev.id)
		}
	}
}

func TestEventsTellAPageFromBeforeARestartToReload(t *testing.T) {
	r := newRig(t, policy.Config{})
	b := r.browser()
	b.mustSignIn()
	es := b.stream("?after=99999")
	if ev := es.next(); ev.event != "resync" {
		t.Fatalf("got %+v, want resync", ev)
	}
}

func TestEventsEndWithTheSignIn(t *testing.T) {
	r := newRig(t, policy.Config{})
	b := r.browser()
	b.mustSignIn()
	csrf := b.csrf
	es := b.stream("")
	if a := b.post("/ui/signout", url.Values{"csrf": {csrf}}); a.status != http.StatusSeeOther {
		t.Fatal(a.status)
	}
	r.askCmd("s", "make deploy") // wakes the stream
	ev := es.next()
	if ev.event != "signedout" || strings.Contains(ev.data, "make deploy") {
		t.Fatalf("after sign-out the stream sent %+v", ev)
	}
	if ev := es.next(); ev.event != "" {
		t.Fatalf("stream went on after sign-out: %+v", ev)
	}
}

func TestEventsEndWhenTheGateCloses(t *testing.T) {
	r := newRig(t, policy.Config{})
	b := r.browser()
	b.mustSignIn()
	es := b.stream("")
	r.g.Close(context.Background())
	if ev := es.next(); ev.event != "" {
		t.Fatalf("stream went on after the gate closed: %+v", ev)
	}
}
