package store

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/approvebot/approvebot/core/approval"
)

// fillAll sets every field of the struct v points to a value that is not empty, so an
// omitempty field shows up in encoding/json's output; it fails on a type it cannot set.
func fillAll(t *testing.T, v reflect.Value, tag string) {
	t.Helper()
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	for i := 0; i < v.NumField(); i++ {
		f, name := v.Field(i), tag+v.Type().Field(i).Name
		switch {
		case f.Type() == reflect.TypeOf(time.Time{}):
			f.Set(reflect.ValueOf(at))
		case f.Kind() == reflect.String:
			f.SetString("<" + name + "&\"")
		case f.Kind() == reflect.Bool:
			f.SetBool(true)
		case f.Kind() == reflect.Uint64:
			f.SetUint(42)
		case f.Kind() == reflect.Int64:
			f.SetInt(-42)
		case f.Kind() == reflect.Pointer && f.Type().Elem().Kind() == reflect.Struct:
			p := reflect.New(f.Type().Elem())
			fillAll(t, p.Elem(), name+".")
			f.Set(p)
		case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.String:
			f.Set(reflect.ValueOf([]string{name + "1", name + "2"}))
		case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.Struct:
			s := reflect.MakeSlice(f.Type(), 2, 2)
			fillAll(t, s.Index(0), name+"0")
			fillAll(t, s.Index(1), name+"1")
			f.Set(s)
		default:
			t.Fatalf("field %s of type %s: teach fillAll and the encoder", name, f.Type())
		}
	}
}

func TestRecordEncoders(t *testing.T) {
	var full approval.Request
	fillAll(t, reflect.ValueOf(&full).Elem(), "")
	var entry approval.AuditEntry
	fillAll(t, reflect.ValueOf(&entry).Elem(), "")
	decided := approval.Request{ID: "r", State: approval.StateAllowed, Allowed: true, Outcome: approval.OutcomeAllowOnce,
		Source: approval.SourcePolicy, Summary: "ls\u2028\xff", CreatedAt: time.Unix(0, 1767261600123456789).UTC(), Tool: "bash", Session: "s"}
	requests := map[string]approval.Request{"every field": full, "empty": {}, "decided": decided}
	entries := map[string]approval.AuditEntry{"every field": entry, "empty": {}}
	check := func(t *testing.T, v any, got []byte) {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("hand-written:\n%s\njson.Marshal:\n%s", got, want)
		}
	}
	for name, r := range requests {
		t.Run("request/"+name, func(t *testing.T) { check(t, &r, appendRequest(nil, &r)) })
	}
	for name, e := range entries {
		t.Run("audit entry/"+name, func(t *testing.T) { check(t, &e, appendAuditEntry(nil, &e)) })
	}
}
