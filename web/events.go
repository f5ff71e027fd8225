package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
)

// Live updates. One subscription to the gate feeds a ring of the latest events, each with
// a sequence number. A page is rendered with the sequence number it was current at; its
// event stream starts after that number (and resumes after Last-Event-ID when the browser
// reconnects), so nothing that happened between the page and its stream is missed. A
// browser that falls further behind than the ring is told to reload.

// ringSize is how many events are kept for streams to catch up on.
const ringSize = 1024

// heartbeat keeps proxies from closing an idle stream and bounds how long a stream of a
// signed-out session lives.
const heartbeat = 25 * time.Second

type hubEvent struct {
	seq  uint64
	kind gate.EventKind
	id   string
}

type hub struct {
	log *slog.Logger

	mu      sync.Mutex
	ring    []hubEvent
	last    uint64 // sequence number of the newest event
	changed chan struct{}
	closed  bool
}

func newHub(g Gate, log *slog.Logger) *hub {
	h := &hub{log: log, changed: make(chan struct{})}
	sub := g.Subscribe(ringSize)
	go h.run(g, sub)
	return h
}

func (h *hub) run(g Gate, sub *gate.Subscription) {
	for {
		for ev := range sub.C {
			h.append(ev.Kind, ev.Request.ID)
		}
		if !sub.Dropped() {
			h.close()
			return
		}
		// We fell behind the gate: whatever was lost, every page must re-read.
		h.log.Warn("panel fell behind the gate's events; open pages will reload")
		sub = g.Subscribe(ringSize)
		h.append(kindResync, "")
	}
}

// kindResync tells pages to reload: events were lost.
const kindResync gate.EventKind = "resync"

func (h *hub) append(kind gate.EventKind, id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.last++
	if len(h.ring) == ringSize {
		copy(h.ring, h.ring[1:])
		h.ring = h.ring[:ringSize-1]
	}
	h.ring = append(h.ring, hubEvent{seq: h.last, kind: kind, id: id})
	close(h.changed)
	h.changed = make(chan struct{})
}

func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.closed {
		h.closed = true
		close(h.changed)
	}
}

// seq is the sequence number of the newest event.
func (h *hub) seq() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.last
}

// since returns the events after seq, whether some were already gone from the ring, a
// channel closed on the next event, and whether the hub has ended.
func (h *hub) since(seq uint64) (evs []hubEvent, lost bool, wake <-chan struct{}, closed bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if seq > h.last {
		// A number from before a restart: everything is new.
		return nil, true, h.changed, h.closed
	}
	if seq < h.last {
		first := h.last - uint64(len(h.ring)) + 1
		if seq+1 < first {
			lost = true
			seq = first - 1
		}
		evs = append(evs, h.ring[seq+1-first:]...)
	}
	return evs, lost, h.changed, h.closed
}

// events streams server-sent events to a signed-in page: "request" with the HTML of a
// request that appeared or was decided, "cards" with the HTML of its card list, "resync"
// when the page must reload, "signedout" when the sign-in ended.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	sess, ok := s.current(r)
	if !ok {
		// EventSource does not reconnect after a non-200 answer.
		http.Error(w, "signed out", http.StatusUnauthorized)
		return
	}
	after, err := strconv.ParseUint(r.Header.Get("Last-Event-ID"), 10, 64)
	if err != nil {
		after, err = strconv.ParseUint(r.URL.Query().Get("after"), 10, 64)
		if err != nil {
			after = s.hub.seq()
		}
	}
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	st := &stream{w: w, rc: rc}
	st.write("retry: 3000\n\n")
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	for st.err == nil {
		evs, lost, wake, closed := s.hub.since(after)
		if !s.sessions.alive(sess.key) {
			st.send("", "signedout", "")
			return
		}
		if lost {
			st.send(strconv.FormatUint(s.hub.seq(), 10), string(kindResync), "")
			return
		}
		for _, ev := range evs {
			after = ev.seq
			s.sendEvent(r.Context(), st, sess, ev)
		}
		if closed {
			return
		}
		st.flush()
		select {
		case <-r.Context().Done():
			return
		case <-wake:
		case <-tick.C:
			st.write(": ping\n\n")
		}
	}
}

func (s *Server) sendEvent(ctx context.Context, st *stream, sess session, ev hubEvent) {
	id := strconv.FormatUint(ev.seq, 10)
	if ev.kind == kindResync {
		st.send(id, string(kindResync), "")
		return
	}
	// The event says which request changed; what it is now comes from the store.
	rec, err := s.gate.Get(ctx, ev.id)
	if err != nil {
		if !errors.Is(err, approval.ErrNotFound) {
			s.log.Warn("panel event: reading request failed", "request_id", ev.id, "err", err)
		}
		return
	}
	v := s.requestView(&rec, sess)
	var buf bytes.Buffer
	switch ev.kind {
	case gate.EventCardPosted, gate.EventCardEdited:
		err = s.frag.ExecuteTemplate(&buf, "cards", v)
		st.send(id, "cards", buf.String())
	default:
		err = s.frag.ExecuteTemplate(&buf, "request", v)
		st.send(id, "request", buf.String())
	}
	if err != nil {
		s.log.Error("panel event: rendering failed", "request_id", ev.id, "err", err)
	}
}

type stream struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	err error
}

func (st *stream) write(s string) {
	if st.err != nil {
		return
	}
	// The listener's write timeout is sized for API calls; a stream extends it per write.
	_ = st.rc.SetWriteDeadline(time.Now().Add(heartbeat + 10*time.Second))
	_, st.err = fmt.Fprint(st.w, s)
}

// send writes one event; every line of data gets its own "data:" field.
func (st *stream) send(id, event, data string) {
	var b strings.Builder
	if id != "" {
		b.WriteString("id: " + id + "\n")
	}
	b.WriteString("event: " + event + "\n")
	for line := range strings.SplitSeq(data, "\n") {
		b.WriteString("data: " + strings.TrimSuffix(line, "\r") + "\n")
	}
	b.WriteString("\n")
	st.write(b.String())
	st.flush()
}

func (st *stream) flush() {
	if st.err == nil {
		st.err = st.rc.Flush()
	}
}
