package store

import (
	"strconv"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/internal/jsonw"
)

// The two records written for every request, the request and its audit entries, are
// encoded by hand, exactly as json.Marshal writes them (TestRecordEncoders holds them
// together, for every field): the audit entry is encoded inside the single writer, where
// every microsecond is one the whole server waits for.

func appendAuditEntry(dst []byte, e *approval.AuditEntry) []byte {
	o := jsonw.Start(dst, true)
	o.Uint("seq", e.Seq)
	o.Time("time", e.Time)
	o.Str("event", e.Event)
	o.StrOmit("request_id", e.RequestID)
	o.StrOmit("session", e.Session)
	o.StrOmit("agent", e.Agent)
	o.StrOmit("tool", e.Tool)
	o.StrOmit("state", string(e.State))
	o.StrOmit("outcome", string(e.Outcome))
	o.StrOmit("source", string(e.Source))
	o.StrOmit("decided_by", e.DecidedBy)
	o.StrOmit("reason", e.Reason)
	o.StrOmit("summary", e.Summary)
	o.StrOmit("fingerprint", e.Fingerprint)
	o.StrOmit("rule", e.Rule)
	o.StrOmit("ask_reason", e.AskReason)
	o.StrOmit("channel", e.Channel)
	o.StrOmit("actor", e.Actor)
	return o.End()
}

func appendRequest(dst []byte, r *approval.Request) []byte {
	o := jsonw.Start(dst, true)
	o.Str("id", r.ID)
	o.Str("state", string(r.State))
	o.Bool("allowed", r.Allowed)
	o.BoolOmit("explicit", r.Explicit)
	o.Str("outcome", string(r.Outcome))
	o.StrOmit("source", string(r.Source))
	o.Str("reason", r.Reason)
	o.Str("message", r.Message)
	o.Str("summary", r.Summary)
	o.BoolOmit("truncated", r.Truncated)
	o.Str("fingerprint", r.Fingerprint)
	o.Str("decided_by", r.DecidedBy)
	o.StrOmit("rule", r.Rule)
	o.Time("created_at", r.CreatedAt)
	o.TimeOmitZero("expires_at", r.ExpiresAt)
	o.TimeOmitZero("decided_at", r.DecidedAt)
	o.Str("tool", r.Tool)
	o.Str("session", r.Session)
	o.StrOmit("parent_session", r.ParentSession)
	o.StrOmit("agent", r.Agent)
	o.StrOmit("cwd", r.Cwd)
	o.StrOmit("agent_reason", r.AgentReason)
	o.StrOmit("ask_reason", r.AskReason)
	o.StrOmit("details", r.Details)
	if len(r.AlwaysPatterns) > 0 {
		o.Key("always_patterns")
		o.B = append(o.B, '[')
		for i, p := range r.AlwaysPatterns {
			if i > 0 {
				o.B = append(o.B, ',')
			}
			o.B = jsonw.String(o.B, p, true)
		}
		o.B = append(o.B, ']')
	}
	if len(r.Routes) > 0 {
		o.Key("routes")
		o.B = append(o.B, '[')
		for i, t := range r.Routes {
			if i > 0 {
				o.B = append(o.B, ',')
			}
			e := jsonw.Start(o.B, true)
			e.Str("channel", t.Channel)
			e.Str("chat", t.Chat)
			o.B = e.End()
		}
		o.B = append(o.B, ']')
	}
	if len(r.Cards) > 0 {
		o.Key("cards")
		o.B = append(o.B, '[')
		for i, c := range r.Cards {
			if i > 0 {
				o.B = append(o.B, ',')
			}
			e := jsonw.Start(o.B, true)
			e.Str("channel", c.Channel)
			e.Str("chat", c.Chat)
			e.Str("message", c.Message)
			o.B = e.End()
		}
		o.B = append(o.B, ']')
	}
	o.BoolOmit("show_allow_always", r.ShowAllowAlways)
	if w := r.Wait; w != nil {
		o.Key("wait")
		e := jsonw.Start(o.B, true)
		e.Key("window")
		e.B = strconv.AppendInt(e.B, int64(w.Window), 10)
		e.Key("waited")
		e.B = strconv.AppendInt(e.B, int64(w.Waited), 10)
		e.Time("at", w.At)
		e.StrOmit("boot", w.Boot)
		if w.Uptime != 0 {
			e.Key("uptime")
			e.B = strconv.AppendInt(e.B, int64(w.Uptime), 10)
		}
		o.B = e.End()
	}
	return o.End()
}
