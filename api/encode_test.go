package api

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/approvebot/approvebot/core/approval"
)

// The hand-written encoder writes exactly what encoding/json writes for requestView, for
// every field the view has: a field added to the view and not to the encoder fails here.
func FuzzRequestViewEncoding(f *testing.F) {
	f.Add("id1", "bash", "rm -rf ./build", "policy", "<b>&\"\u2028\xff", int64(1767261600123456789), true, uint8(0))
	f.Add("", "", "", "", "", int64(0), false, uint8(255))
	f.Fuzz(func(t *testing.T, id, tool, summary, source, text string, nanos int64, allowed bool, shape uint8) {
		at := time.Unix(0, nanos).UTC()
		r := approval.Request{
			ID: id, Tool: tool, Summary: summary, Source: approval.Source(source), Reason: text, Message: text + text,
			Fingerprint: id + tool, Session: text, Agent: tool, Rule: source, CreatedAt: at, Allowed: allowed, Truncated: shape&1 != 0,
			Cwd: summary, AgentReason: text, AskReason: summary + text,
			State: approval.StatePending,
		}
		if shape&2 != 0 {
			r.State, r.Outcome, r.DecidedBy, r.DecidedAt = approval.StateAllowed, approval.OutcomeAllowOnce, text, at.Add(time.Second)
		}
		if shape&4 != 0 {
			r.ExpiresAt = at.Add(time.Minute)
		}
		v := viewOf(&r)
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Skip() // a time encoding/json refuses
		}
		if got := append(appendRequestView(nil, &v), '\n'); string(got) != want.String() {
			t.Fatalf("hand-written:\n%s\nencoding/json:\n%s", got, want.String())
		}
	})
}

func TestRequestViewEncodingCoversEveryField(t *testing.T) {
	// Every field of the view set to a value that is not empty: the encoder must write
	// each, exactly as encoding/json does.
	var v requestView
	rv := reflect.ValueOf(&v).Elem()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < rv.NumField(); i++ {
		f := rv.Field(i)
		switch f.Interface().(type) {
		case string:
			f.SetString("x" + rv.Type().Field(i).Name)
		case bool:
			f.SetBool(true)
		case *string:
			s := "p" + rv.Type().Field(i).Name
			f.Set(reflect.ValueOf(&s))
		case time.Time:
			f.Set(reflect.ValueOf(at))
		case *time.Time:
			f.Set(reflect.ValueOf(&at))
		case []cardView:
			f.Set(reflect.ValueOf([]cardView{{"c1", "<chat>", "m&1"}, {"c2", "chat2", "m2"}}))
		default:
			t.Fatalf("requestView.%s has a type this test does not set (%s): teach it and the encoder", rv.Type().Field(i).Name, f.Type())
		}
	}
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
	if got := append(appendRequestView(nil, &v), '\n'); string(got) != want.String() {
		t.Fatalf("hand-written:\n%s\nencoding/json:\n%s", got, want.String())
	}
}
