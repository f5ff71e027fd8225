package gate

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/ledger"
)

// What every store reads a damaged record as, so that all backends fail the same way:
// closed.

// DamagedRequest stands in for a request whose record does not decode: denied by the
// store, never allowed. What can still be read of the record (agent, session, tool) is kept
// so that the agent that filed it can read the refusal and an operator can place it.
func DamagedRequest(id string, raw []byte, at time.Time) approval.Request {
	f := salvage(raw)
	r := approval.Request{
		ID: id, State: approval.StateDenied, Outcome: approval.OutcomeDeny, Source: approval.SourceStore,
		DecidedBy: "approvebot", Reason: "the stored record of this request was damaged", Message: DamagedRecordMessage(),
		Summary: "(damaged record)", DecidedAt: at, Agent: f["agent"], Session: f["session"], Tool: f["tool"],
		Fingerprint: f["fingerprint"],
	}
	if t, err := time.Parse(time.RFC3339Nano, f["created_at"]); err == nil {
		r.CreatedAt = t
	} else {
		r.CreatedAt = at
	}
	return r
}

// DamagedSession stands in for a session whose record does not decode: paused, so nothing
// in it is decided without a human until an operator unpauses it.
func DamagedSession(name, agent string, at time.Time) ledger.Session {
	return ledger.Session{Name: name, Agent: agent, Paused: true, PausedAt: at}
}

// salvage reads what it can of a few string fields of a damaged request record: each
// `"name":"` at the record's top level, wherever the damage is. (Inside a JSON string a
// quote is escaped, so the sequence cannot come from a value.)
func salvage(raw []byte) map[string]string {
	out := map[string]string{}
	for _, key := range []string{"agent", "session", "tool", "fingerprint", "created_at"} {
		i := bytes.Index(raw, []byte(`"`+key+`":"`))
		if i < 0 {
			continue
		}
		open := i + len(key) + 3 // the value's opening quote
		for j := open + 1; j < len(raw); j++ {
			if raw[j] == '\\' {
				j++
				continue
			}
			if raw[j] == '"' {
				var v string
				if json.Unmarshal(raw[open:j+1], &v) == nil {
					out[key] = v
				}
				break
			}
		}
	}
	return out
}
