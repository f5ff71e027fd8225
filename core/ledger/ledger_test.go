package ledger

import (
	"reflect"
	"testing"

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
