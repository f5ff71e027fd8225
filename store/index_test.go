package store

import (
	"encoding/json"
	"testing"

	"github.com/approvebot/approvebot/core/approval"
)

// decodeIndexed finds the fields by their keys instead of decoding the entry: it must
// read what encoding/json reads, whatever the strings hold.
func FuzzDecodeIndexed(f *testing.F) {
	for _, s := range []string{"", "a", `"session":"x`, `x","session":"evil`, "a\x00b", "<s&x>", `back\slash`, "\u2028", "é", "\xff", `\"`, `"agent":"`} {
		f.Add(s, s+"2", "decision")
	}
	f.Fuzz(func(t *testing.T, session, agent, summary string) {
		e := approval.AuditEntry{Seq: 1, Event: approval.EventDecision, RequestID: agent + session, Session: session, Agent: agent,
			Outcome: approval.OutcomeDeny, Summary: summary, Reason: session, Tool: `"session":"` + agent}
		raw, err := json.Marshal(e)
		if err != nil {
			t.Skip()
		}
		got, err := decodeIndexed(raw)
		if err != nil {
			t.Fatal(err)
		}
		var want indexedFields
		if err := json.Unmarshal(raw, &want); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("decodeIndexed(%s) = %+v, want %+v", raw, got, want)
		}
	})
}
