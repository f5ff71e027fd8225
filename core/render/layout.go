package render

import (
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/approvebot/approvebot/core/approval"
)

// The channel-neutral layout every platform renders. Trusted strings (labels, titles,
// notices) are this package's own; every value that came from an agent, a human or a
// platform is "user" text, which each platform puts inside code spans or blocks and escapes.

// Field limits, in characters, applied to a card's user strings (after masking and
// hardening) before any platform escaping. Platforms may cut further to fit their limits.
const (
	maxToolLen      = 64
	maxAgentLen     = 64
	maxSessionLen   = 64
	maxCwdLen       = 120
	maxAgentWhyLen  = 200
	maxAskReasonLen = 300
	maxRuleLen      = 100
	maxDecidedByLen = 64
	maxReasonLen    = 300
)

// Labels of the request's context on every card.
const (
	LabelCwd = "Directory"
	// CwdNotGiven is the Directory line of a request that names no working directory.
	CwdNotGiven      = "(not given: relative paths are unknown)"
	LabelAgentReason = "Agent's reason (its own words, unverified)"
	// LabelAskReason and LabelAskedReason head the policy's reason for asking on pending
	// and resolved cards.
	LabelAskReason   = "Why approvebot asks"
	LabelAskedReason = "Why approvebot asked"
)

// timeLayout shows times in UTC on every platform.
const timeLayout = "2006-01-02 15:04:05 UTC"

type field struct {
	label string // trusted
	value string // user
}

type button struct {
	label  string
	action Action
	style  buttonStyle
}

type buttonStyle int

const (
	stylePrimary buttonStyle = iota
	styleSecondary
	styleDanger
)

type view struct {
	icon, title string // trusted
	tool        string // user
	summary     string // user; shown in a code block
	notice      string // trusted, optional
	fields      []field
	footer      []field
	buttons     []button
	requestID   string
}

// cardStrings are the strings of a card that sanitize rewrites.
type cardStrings struct {
	tool, summary, agent, session, cwd, why, ask, rule, id, by, reason string
}

func (c *Card) strings() cardStrings {
	cs := cardStrings{c.Tool, c.Summary, c.Agent, c.Session, c.Cwd, c.AgentReason, c.AskReason, c.Rule, c.RequestID, "", ""}
	if c.Resolution != nil {
		cs.by, cs.reason = c.Resolution.DecidedBy, c.Resolution.Reason
	}
	return cs
}

// sanitize re-applies masking and hardening to every string of a card, so a Card built by
// hand (or changed after CardFor) is as safe as one from CardFor. All steps are idempotent,
// so strings equal to those of an earlier sanitize need no work again.
func (c Card) sanitize() Card {
	if c.safe != nil && *c.safe == c.strings() {
		return c
	}
	c.Tool = Redact(c.Tool, maxToolLen)
	c.Summary = Redact(c.Summary, MaxSummary)
	c.Agent = Redact(c.Agent, maxAgentLen)
	c.Session = Redact(c.Session, maxSessionLen)
	// A directory's tail says most about it: cut in the middle. (Only a hand-built card can
	// carry one longer than the server accepts; that is cut at the end, to bound the work.)
	if len(c.Cwd) <= maxRaw {
		c.Cwd = CutMiddle(Redact(c.Cwd, -1), maxCwdLen)
	} else {
		c.Cwd = Redact(c.Cwd, maxCwdLen)
	}
	c.AgentReason = Redact(c.AgentReason, maxAgentWhyLen)
	c.AskReason = Redact(c.AskReason, maxAskReasonLen)
	c.Rule = Redact(c.Rule, maxRuleLen)
	if !ValidRequestID(c.RequestID) {
		c.RequestID = Clean(c.RequestID, RequestIDLen)
	}
	if c.Resolution != nil {
		r := *c.Resolution
		r.DecidedBy = Redact(r.DecidedBy, maxDecidedByLen)
		r.Reason = Redact(r.Reason, maxReasonLen)
		c.Resolution = &r
	}
	cs := c.strings()
	c.safe = &cs
	return c
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(timeLayout)
}

// pendingView lays out a card that waits for a decision. A card that has a Resolution is
// laid out resolved instead: a decided request never gets buttons.
func pendingView(c Card) view {
	if c.Resolution != nil {
		return resolvedView(c)
	}
	c = c.sanitize()
	v := view{icon: "🔐", title: "Approval needed", tool: c.Tool, summary: c.Summary, requestID: c.RequestID}
	if c.Truncated {
		v.notice = "✂️ Cut at " + itoa(MaxSummary) + " characters: press Details to see the whole action before you decide."
	}
	v.fields = append(askFields(c, LabelAskReason), metaFields(c)...)
	v.footer = []field{{"Request", c.RequestID}}
	if e := fmtTime(c.ExpiresAt); e != "" {
		v.footer = append(v.footer, field{"Expires", e})
	}
	if ValidRequestID(c.RequestID) {
		v.buttons = []button{
			{"✅ Allow once", ActionAllowOnce, stylePrimary},
			{"🔁 Allow for session", ActionAllowSession, styleSecondary},
		}
		if c.AllowAlways {
			v.buttons = append(v.buttons, button{"♾️ Allow always", ActionAllowAlways, styleSecondary})
		}
		v.buttons = append(v.buttons, button{"⛔ Deny", ActionDeny, styleDanger})
		if c.Truncated {
			v.buttons = append(v.buttons, button{"📄 Details", ActionDetails, styleSecondary})
		}
	}
	return v
}

// resolvedView lays out a decided card: no buttons, the outcome, who and when, and the
// human's reason. A card without a Resolution is shown as closed, never with buttons.
func resolvedView(c Card) view {
	c = c.sanitize()
	v := view{tool: c.Tool, summary: c.Summary, requestID: c.RequestID}
	r := c.Resolution
	if r == nil {
		r = &Resolution{}
	}
	v.icon, v.title = outcomeTitle(r)
	if c.Truncated {
		v.notice = "✂️ Cut at " + itoa(MaxSummary) + " characters."
	}
	var res []field
	if r.DecidedBy != "" {
		by := r.DecidedBy
		if r.Source != "" && r.Source != approval.SourceHuman {
			by += " (" + string(r.Source) + ")"
		}
		res = append(res, field{"By", by})
	} else if r.Source != "" {
		res = append(res, field{"By", string(r.Source)})
	}
	if t := fmtTime(r.DecidedAt); t != "" {
		res = append(res, field{"At", t})
	}
	if r.Reason != "" {
		res = append(res, field{"Reason", r.Reason})
	}
	res = append(res, askFields(c, LabelAskedReason)...)
	v.fields = append(res, metaFields(c)...)
	v.footer = []field{{"Request", c.RequestID}}
	return v
}

func outcomeTitle(r *Resolution) (icon, title string) {
	switch r.Outcome {
	case approval.OutcomeAllowOnce:
		return "✅", "Allowed once"
	case approval.OutcomeAllowSession:
		return "✅", "Allowed for this session"
	case approval.OutcomeAllowAlways:
		return "✅", "Allowed always"
	case approval.OutcomeDeny:
		return "⛔", "Denied"
	case approval.OutcomeTimeout:
		return "⌛", "Expired: nobody answered in time, so it was refused"
	case approval.OutcomeCancelled:
		return "🚫", "Cancelled: the agent withdrew the request"
	}
	switch r.State {
	case approval.StateAllowed:
		return "✅", "Allowed"
	case approval.StateDenied:
		return "⛔", "Refused"
	}
	return "🔒", "Closed"
}

// askFields is the policy's reason for asking, with the rule that asked, as a line of its
// own under label: the human sees which sensitive path, outside write or hidden command made
// approvebot ask, apart from the action it is about.
func askFields(c Card, label string) []field {
	if c.AskReason == "" {
		return nil
	}
	why := c.AskReason
	if c.Rule != "" {
		why += " (rule " + c.Rule + ")"
	}
	return []field{{label, why}}
}

func metaFields(c Card) []field {
	var f []field
	if c.Agent != "" {
		f = append(f, field{"Agent", c.Agent})
	}
	if c.Session != "" {
		f = append(f, field{"Session", c.Session})
	}
	// The directory and the agent's stated reason are lines of their own, never part of
	// the action: a human must see where "rm -rf ./build" runs, and that the reason is only
	// what the agent claims.
	// A request without a cwd says so: a relative path in it could be anywhere.
	cwd := c.Cwd
	if cwd == "" {
		cwd = CwdNotGiven
	}
	f = append(f, field{LabelCwd, cwd})
	if c.AgentReason != "" {
		f = append(f, field{LabelAgentReason, c.AgentReason})
	}
	return f
}

// shrink returns v with every field value cut to at most n characters; the summary is
// never shrunk (it is at most MaxSummary characters, which fits every platform).
func (v view) shrink(n int) view {
	cut := func(fs []field) []field {
		out := make([]field, len(fs))
		for i, f := range fs {
			out[i] = f
			out[i].value, _ = Cut(f.value, n)
		}
		return out
	}
	v.fields = cut(v.fields)
	v.footer = cut(v.footer)
	v.tool, _ = Cut(v.tool, n)
	return v
}

// fit renders v, shrinking its field values until ok accepts the result.
func fit[T any](v view, render func(view) T, ok func(T) bool) T {
	out := render(v)
	for n := 256; !ok(out) && n >= 8; n /= 2 {
		out = render(v.shrink(n))
	}
	return out
}

// utf16Len counts UTF-16 code units, the unit the platforms' JavaScript and Java back ends
// count in; it is never less than the number of characters, so limits checked with it hold
// whichever way a platform counts.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

func itoa(n int) string { return strconv.Itoa(n) }

// chunkRunes splits s into pieces whose cost (as measured by cost per rune) is at most
// limit each, returning at most max pieces and how many characters were left over.
func chunkRunes(s string, limit, max int, cost func(rune) int) (chunks []string, left int) {
	start, used := 0, 0
	for i, r := range s {
		c := cost(r)
		if used+c > limit && i > start {
			chunks = append(chunks, s[start:i])
			if len(chunks) == max {
				return chunks, utf8.RuneCountInString(s[i:])
			}
			start, used = i, 0
		}
		used += c
	}
	if start < len(s) || len(chunks) == 0 {
		chunks = append(chunks, s[start:])
	}
	return chunks, 0
}
