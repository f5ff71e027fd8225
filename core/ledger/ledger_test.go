package ledger

import (
	"reflect"
	"testing"
	"time"

	"github.com/approvebot/approvebot/core/approval"
)

func TestEffectsOf(t *testing.T) {
	pats := []string{"/usr/bin/make"}
	cases := []struct {
		outcome approval.Outcome
		source  approval.Source
		want    Effects
	}{
		{approval.OutcomeAllowOnce, approval.SourceHuman, Effects{}},
		{approval.OutcomeAllowSession, approval.SourceHuman, Effects{Grant: true}},
		{approval.OutcomeAllowAlways, approval.SourceHuman, Effects{Grant: true, Allowlist: pats}},
		{approval.OutcomeDeny, approval.SourceHuman, Effects{Denial: true, PauseAfter: 3}},
		// Only a human's denial is ledgered and counts toward the pause.
		{approval.OutcomeDeny, approval.SourceFallback, Effects{}},
		{approval.OutcomeDeny, approval.SourcePolicy, Effects{}},
		// An expired card is not a decision; a cancel is the agent's own.
		{approval.OutcomeTimeout, approval.SourceTimeout, Effects{}},
		{approval.OutcomeCancelled, approval.SourceAgent, Effects{}},
	}
	for _, c := range cases {
		if got := EffectsOf(c.outcome, c.source, 3, pats); !reflect.DeepEqual(got, c.want) {
			t.Errorf("EffectsOf(%s, %s) = %+v, want %+v", c.outcome, c.source, got, c.want)
		}
	}
}

func TestMerge(t *testing.T) {
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		name        string
		own, shared Session
		want        Session
	}{
		{"own only", Session{Name: "s", Agent: "a", Tier: "full", Denials: 2}, Session{}, Session{Name: "s", Agent: "a", Tier: "full", Denials: 2}},
		{"shared tier when own has none", Session{Name: "s", Agent: "a"}, Session{Tier: "ask"}, Session{Name: "s", Agent: "a", Tier: "ask"}},
		{"own tier beats shared", Session{Agent: "a", Tier: "full"}, Session{Tier: "ask"}, Session{Agent: "a", Tier: "full"}},
		{"unattended in either", Session{Agent: "a"}, Session{Unattended: true}, Session{Agent: "a", Unattended: true}},
		{"pause in shared holds", Session{Agent: "a", Denials: 1}, Session{Paused: true, PausedAt: at, Denials: 5}, Session{Agent: "a", Denials: 1, Paused: true, PausedAt: at}},
		{"own pause kept", Session{Agent: "a", Paused: true, PausedAt: at}, Session{}, Session{Agent: "a", Paused: true, PausedAt: at}},
		{"own parent beats shared", Session{Agent: "a", Parent: "p"}, Session{Parent: "q"}, Session{Agent: "a", Parent: "p"}},
		{"shared parent when own has none", Session{Agent: "a"}, Session{Parent: "q"}, Session{Agent: "a", Parent: "q"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Merge(c.own, c.shared); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("Merge = %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestSettingsApplyAndYield(t *testing.T) {
	ask, yes := "ask", true
	set := Settings{Tier: &ask, Unattended: &yes}
	s := Session{Tier: "full", Denials: 3, Paused: true}
	set.Apply(&s)
	if s.Tier != "ask" || !s.Unattended || s.Denials != 3 || !s.Paused {
		t.Fatalf("Apply: %+v", s)
	}
	set.Yield(&s)
	if s.Tier != "" || s.Unattended || s.Denials != 3 || !s.Paused {
		t.Fatalf("Yield: %+v", s)
	}
	only := Settings{Tier: &ask}
	s = Session{Tier: "full", Unattended: true}
	only.Yield(&s)
	if s.Tier != "" || !s.Unattended {
		t.Fatalf("Yield of the tier alone: %+v", s)
	}
}
