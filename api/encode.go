package api

import (
	"net/http"
	"sync"

	"github.com/approvebot/approvebot/internal/jsonw"
)

// The request object is written on every answer of the agent endpoints: it is encoded by
// hand, exactly as encoding/json (with SetEscapeHTML(false), as writeJSON) would write
// requestView (TestRequestViewEncoding holds the two together).

var answerBufs = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

func appendRequestView(dst []byte, v *requestView) []byte {
	o := jsonw.Start(dst, false)
	o.Str("id", v.ID)
	o.Str("state", v.State)
	o.Bool("allowed", v.Allowed)
	o.Bool("explicit", v.Explicit)
	o.StrPtr("outcome", v.Outcome)
	o.StrPtr("source", v.Source)
	o.Str("reason", v.Reason)
	o.Str("message", v.Message)
	o.Str("summary", v.Summary)
	o.Bool("truncated", v.Truncated)
	o.Str("fingerprint", v.Fingerprint)
	o.StrPtr("decided_by", v.DecidedBy)
	o.Time("created_at", v.CreatedAt)
	o.TimePtr("expires_at", v.ExpiresAt)
	o.TimePtr("decided_at", v.DecidedAt)
	o.Str("tool", v.Tool)
	o.Str("session", v.Session)
	o.StrOmit("agent", v.Agent)
	o.StrOmit("rule", v.Rule)
	o.Str("cwd", v.Cwd)
	o.Str("agent_reason", v.AgentReason)
	o.Str("ask_reason", v.AskReason)
	if len(v.Cards) > 0 {
		o.Key("cards")
		o.B = append(o.B, '[')
		for i, c := range v.Cards {
			if i > 0 {
				o.B = append(o.B, ',')
			}
			e := jsonw.Start(o.B, false)
			e.Str("channel", c.Channel)
			e.Str("chat", c.Chat)
			e.Str("message", c.Message)
			o.B = e.End()
		}
		o.B = append(o.B, ']')
	}
	return o.End()
}

// writeViewJSON answers the request object with status.
func writeViewJSON(w http.ResponseWriter, status int, v *requestView) {
	bp := answerBufs.Get().(*[]byte)
	b := append(appendRequestView((*bp)[:0], v), '\n')
	h := w.Header()
	h["Content-Type"] = contentTypeJSON
	h["Cache-Control"] = cacheNoStore
	w.WriteHeader(status)
	_, _ = w.Write(b)
	if cap(b) <= 64<<10 {
		*bp = b
		answerBufs.Put(bp)
	}
}

var (
	contentTypeJSON = []string{"application/json"}
	cacheNoStore    = []string{"no-store"}
)
