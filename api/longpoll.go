package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
)

// A long-poll that waits for a human holds, in net/http, two goroutines (the connection's
// and its background reader, with stacks grown by the whole request) and its read and write
// buffers for as long as it waits: about 30 KiB per waiting agent. Parking instead takes the
// connection over from net/http once the request is read: the request's goroutine and
// buffers are freed, one small goroutine blocks in Read to learn when the agent goes away,
// and the answer is written when the gate's Watch fires, the wait ends or the gate closes.
// The answer closes the connection (the agent's next poll opens a new one).

// errAnsweredLater tells the route wrapper that a parked long-poll answers on its own.
var errAnsweredLater = &apiError{status: 0, Code: "answered_later"}

// answerWriteTimeout bounds writing a parked long-poll's answer.
const answerWriteTimeout = 10 * time.Second

// maxDrain is how much a parked connection may send before it is treated as gone: nothing
// is expected (the request is complete), pipelined bytes are discarded.
const maxDrain = 64 << 10

type parkedPoll struct {
	s       *Server
	conn    net.Conn
	id      string
	caller  caller
	route   string
	started time.Time
	// cancelOnGone: the agent's going away cancels its request (POST with wait: an orphan
	// must never be approved).
	cancelOnGone bool
	claimed      atomic.Bool
	// mu guards the watch's stop and the wait's timer, set once the watch is in place.
	mu        sync.Mutex
	stopWatch func() bool
	timer     *time.Timer
}

// park takes over the connection to wait for rec's decision. It reports false when the
// connection cannot be taken over (HTTP/2, a test recorder): the caller waits the
// ordinary way.
func (s *Server) park(w http.ResponseWriter, rec approval.Request, wait time.Duration, c caller, cancelOnGone bool, route string) bool {
	conn, bufrw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return false
	}
	// net/http's read and write deadlines stay on a hijacked connection: clear them, the
	// wait is bounded by its own timer.
	_ = conn.SetDeadline(time.Time{})
	_ = bufrw // its buffers go with the request; anything pipelined is discarded
	p := &parkedPoll{s: s, conn: conn, id: rec.ID, caller: c, route: route, started: time.Now(), cancelOnGone: cancelOnGone}
	s.waiting.Add(1)
	s.parked.Add(1)
	p.mu.Lock()
	stop, live := s.gate.Watch(rec.ID, func(r approval.Request) {
		if p.claim() {
			go p.answer(r)
		}
	})
	if live {
		p.stopWatch = stop
		p.timer = time.AfterFunc(wait, func() {
			if p.unwatch() && p.claim() {
				p.answerCurrent()
			}
		})
	}
	p.mu.Unlock()
	if !live && p.claim() {
		// Decided (or the gate closing) between the read and the watch: answer from the store.
		go p.answerCurrent()
	}
	go p.watchGone()
	return true
}

// unwatch cancels the watch; it reports whether the watch had not fired.
func (p *parkedPoll) unwatch() bool {
	p.mu.Lock()
	stop := p.stopWatch
	p.mu.Unlock()
	return stop != nil && stop()
}

func (p *parkedPoll) stopTimer() {
	p.mu.Lock()
	if p.timer != nil {
		p.timer.Stop()
	}
	p.mu.Unlock()
}

// claim makes the caller the one that answers (or drops) this poll.
func (p *parkedPoll) claim() bool { return p.claimed.CompareAndSwap(false, true) }

// watchGone blocks in Read until the agent goes away or the answer closes the connection.
func (p *parkedPoll) watchGone() {
	var buf [16]byte // nothing is expected: this only learns of the close
	for n := 0; n <= maxDrain; {
		k, err := p.conn.Read(buf[:])
		n += k
		if err != nil {
			break
		}
	}
	if !p.claim() {
		return // answered: the close ended the Read
	}
	p.unwatch()
	p.stopTimer()
	if p.cancelOnGone {
		if _, err := p.s.gate.Cancel(context.Background(), p.id, p.caller.name); err != nil {
			var lost *gate.AlreadyDecidedError
			if !errors.As(err, &lost) {
				p.s.log.Warn("cancelling an abandoned request failed", "request_id", p.id, "err", err)
			}
		}
	}
	p.done(499)
}

// answerCurrent answers with the request as the store has it now.
func (p *parkedPoll) answerCurrent() {
	rec, err := p.s.gate.Get(context.Background(), p.id)
	if err != nil {
		e := p.s.gateError(err)
		p.write(e.status, map[string]any{"error": e}, e.retryAfter)
		return
	}
	p.answer(rec)
}

func (p *parkedPoll) answer(rec approval.Request) {
	p.stopTimer()
	status := http.StatusOK
	if rec.State == approval.StatePending {
		status = http.StatusAccepted
	}
	p.write(status, viewOf(&rec), 0)
}

// write sends the whole answer, as writeJSON would, and closes the connection.
func (p *parkedPoll) write(status int, v any, retryAfter int) {
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	var msg bytes.Buffer
	fmt.Fprintf(&msg, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nCache-Control: no-store\r\n", status, http.StatusText(status))
	if retryAfter > 0 {
		fmt.Fprintf(&msg, "Retry-After: %d\r\n", retryAfter)
	}
	fmt.Fprintf(&msg, "Content-Length: %d\r\nConnection: close\r\n\r\n", body.Len())
	msg.Write(body.Bytes())
	_ = p.conn.SetWriteDeadline(time.Now().Add(answerWriteTimeout))
	_, _ = p.conn.Write(msg.Bytes())
	p.done(status)
}

func (p *parkedPoll) done(status int) {
	_ = p.conn.Close()
	if p.s.opts.Metrics != nil {
		p.s.opts.Metrics.HTTP(p.route, status, time.Since(p.started))
	}
	p.s.waiting.Add(-1)
	p.s.parked.Done()
}

// Drain waits until every parked long-poll has been answered (the gate's Close releases
// them) or ctx ends. net/http's Shutdown does not know hijacked connections.
func (s *Server) Drain(ctx context.Context) error {
	done := make(chan struct{})
	go func() { s.parked.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
