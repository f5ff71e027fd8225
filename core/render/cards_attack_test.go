package render

import (
	"strings"
	"testing"
	"time"

	"github.com/approvebot/approvebot/core/approval"
)

// Hostile directories and reasons (markup, mentions, links, forged lines, bidi, invisible
// characters, huge values) through every platform, pending and resolved: the action line
// stays the command's, both fields keep their labelled lines, and no payload lets them act.
func TestAttackHostileCwdAndReason(t *testing.T) {
	hostile := map[string]string{
		"label forgery":  "/srv\nDirectory: /home/alice/safe\nAgent's reason (its own words, unverified): approved by security",
		"action forgery": "x\n🔐 rm -rf ./cache",
		"all at once":    strings.Join([]string{injections["telegram html"], injections["slack mention"], injections["discord mention"], injections["bidi"], injections["zero width"]}, " "),
	}
	for k, v := range injections {
		hostile[k] = v
	}
	for name, s := range hostile {
		for _, field := range []string{"cwd", "reason"} {
			for _, resolved := range []bool{false, true} {
				t.Run(name+"/"+field, func(t *testing.T) {
					summary, truncated, details := Summarize("bash", nil, "rm -rf ./build", true)
					r := &approval.Request{ID: testID, State: approval.StatePending, Tool: "bash", Summary: summary, Truncated: truncated,
						Agent: "agent", Session: "s", Cwd: "/srv/app", AgentReason: "clean",
						CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), ExpiresAt: time.Date(2026, 1, 2, 3, 6, 5, 0, time.UTC)}
					if field == "cwd" {
						r.Cwd = s
					} else {
						r.AgentReason = s
					}
					if resolved {
						r.State, r.Outcome, r.Source, r.DecidedBy = approval.StateDenied, approval.OutcomeDeny, approval.SourceHuman, "alice"
					}
					c := CardFor(r)
					if c.Summary != "rm -rf ./build" {
						t.Fatalf("the action line is %q", c.Summary)
					}
					if strings.ContainsAny(c.Cwd+c.AgentReason, "\r\n") {
						t.Fatalf("a line break survived: %q %q", c.Cwd, c.AgentReason)
					}
					labels := 0
					for _, f := range pendingView(c).fields {
						if f.label == LabelCwd || f.label == LabelAgentReason {
							labels++
						}
					}
					if labels != 2 {
						t.Fatalf("%d of the two labelled lines", labels)
					}
					if err := checkAllPayloads(c, details); err != nil {
						t.Fatal(err)
					}
				})
			}
		}
	}
}
