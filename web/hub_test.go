package web

import (
	"log/slog"
	"testing"

	"github.com/approvebot/approvebot/core/gate"
)

func TestHubRingReplaysAndReportsLoss(t *testing.T) {
	h := &hub{log: slog.New(slog.DiscardHandler), changed: make(chan struct{})}
	if evs, lost, _, _ := h.since(0); len(evs) != 0 || lost {
		t.Fatalf("empty hub: %v %v", evs, lost)
	}
	_, _, wake, _ := h.since(0)
	h.append(gate.EventCreated, "a")
	select {
	case <-wake:
	default:
		t.Fatal("an append did not wake the waiting streams")
	}
	h.append(gate.EventDecided, "a")
	evs, lost, _, _ := h.since(1)
	if lost || len(evs) != 1 || evs[0].seq != 2 || evs[0].id != "a" || evs[0].kind != gate.EventDecided {
		t.Fatalf("since(1) = %+v lost=%v", evs, lost)
	}
	if evs, lost, _, _ := h.since(2); len(evs) != 0 || lost {
		t.Fatalf("since(last) = %+v lost=%v", evs, lost)
	}
	// A position from another run of the server (ahead of this one) must reload.
	if _, lost, _, _ := h.since(3); !lost {
		t.Fatal("a position ahead of the hub is not reported lost")
	}
	for range ringSize + 10 {
		h.append(gate.EventCardPosted, "b")
	}
	last := h.seq()
	if last != ringSize+12 {
		t.Fatalf("seq %d", last)
	}
	evs, lost, _, _ = h.since(5)
	if !lost || len(evs) != ringSize || evs[0].seq != last-ringSize+1 || evs[len(evs)-1].seq != last {
		t.Fatalf("after the ring wrapped: %d events from %d, lost=%v", len(evs), evs[0].seq, lost)
	}
	evs, lost, _, _ = h.since(last - ringSize)
	if lost || len(evs) != ringSize {
		t.Fatalf("the oldest kept position: %d events, lost=%v", len(evs), lost)
	}
	h.close()
	if _, _, wake, closed := h.since(last); !closed {
		t.Fatal("closed hub not reported closed")
	} else {
		select {
		case <-wake:
		default:
			t.Fatal("closing did not wake the streams")
		}
	}
}
