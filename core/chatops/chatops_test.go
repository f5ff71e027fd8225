package chatops

import "testing"

func TestParseCommand(t *testing.T) {
	const id = "agrcvsmokelhyofgwsupdju6tm"
	cases := []struct {
		in   string
		ok   bool
		want Command
	}{
		{"/approve", true, Command{Verb: VerbApprove}},
		{"/approve@approvebot", true, Command{Verb: VerbApprove}},
		{"approve " + id, true, Command{Verb: VerbApprove, ID: id}},
		{"/APPROVE " + id, true, Command{Verb: VerbApprove, ID: id}},
		{"/deny wrong directory, use /tmp", true, Command{Verb: VerbDeny, Reason: "wrong directory, use /tmp"}},
		{"/deny " + id + " not now", true, Command{Verb: VerbDeny, ID: id, Reason: "not now"}},
		{"/deny\tmultiple\nlines", true, Command{Verb: VerbDeny, Reason: "multiple\nlines"}},
		{"/deny", true, Command{Verb: VerbDeny}},
		{"/pending", true, Command{Verb: VerbPending}},
		// Loose chat must not approve.
		{"approve this later?", false, Command{}},
		{"/approve everything", false, Command{}},
		{"allow me to explain", false, Command{}},
		{"pending review", false, Command{}},
		{"approved", false, Command{}},
		{"", false, Command{}},
		{"hello", false, Command{}},
	}
	for _, c := range cases {
		got, ok := ParseCommand(c.in)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("ParseCommand(%q) = %+v, %v; want %+v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestApprovers(t *testing.T) {
	a := NewApprovers([]string{"1", "2"}, map[string][]string{"ops": {"2"}})
	for _, c := range []struct {
		chat, user string
		ok         bool
	}{
		{"any", "1", true}, {"any", "2", true}, {"any", "3", false}, {"any", "", false},
		{"ops", "1", false}, {"ops", "2", true},
	} {
		if got := a.Allowed(c.chat, c.user); got != c.ok {
			t.Errorf("Allowed(%q, %q) = %v", c.chat, c.user, got)
		}
	}
}
