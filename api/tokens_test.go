package api_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/approvebot/approvebot/api"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/policy"
	"github.com/approvebot/approvebot/store"
)

// Two names with one token would be one caller: an agent could act in the other's sessions,
// or with an operator's rights. The server refuses to start with them.
func TestOneTokenPerName(t *testing.T) {
	const tok = "abt_same_token_0123456789"
	st, err := store.Open(filepath.Join(t.TempDir(), "t.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	eng, err := policy.NewEngine(policy.Config{}, st)
	if err != nil {
		t.Fatal(err)
	}
	g, err := gate.New(gate.Options{ApprovalTimeout: time.Minute, OperatorOnly: true}, st, eng, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close(context.Background())
	for _, tokens := range [][]api.Token{
		{{Name: "a", Role: api.RoleAgent, Value: tok}, {Name: "b", Role: api.RoleAgent, Value: tok}},
		{{Name: "agent", Role: api.RoleAgent, Value: tok}, {Name: "op", Role: api.RoleOperator, Value: tok}},
	} {
		_, err := api.New(api.Options{Gate: g, Audit: st, Tokens: tokens})
		if err == nil || !strings.Contains(err.Error(), "have the same token") {
			t.Fatalf("%v: %v", tokens, err)
		}
	}
	if _, err := api.New(api.Options{Gate: g, Audit: st, Tokens: []api.Token{{Name: "a", Role: api.RoleAgent, Value: tok}, {Name: "b", Role: api.RoleAgent, Value: tok + "x"}}}); err != nil {
		t.Fatal(err)
	}
}
