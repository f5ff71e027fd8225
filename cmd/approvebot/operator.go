package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/approvebot/approvebot/client"
	"github.com/approvebot/approvebot/core/render"
)

// maxCwdChars is more than any cwd the server accepts (4096 bytes).
const maxCwdChars = 4096

// The operator commands talk to a running server with an operator token.

type operatorFlags struct {
	serverFlags
	timeout time.Duration
}

func newOperatorFlags(name, usage string, stderr io.Writer) (*flag.FlagSet, *operatorFlags) {
	fs := newFlagSet(name, usage, stderr)
	of := &operatorFlags{}
	of.register(fs)
	fs.DurationVar(&of.timeout, "timeout", 30*time.Second, "give up after this long")
	return fs, of
}

func (of *operatorFlags) open(ctx context.Context) (*client.Client, context.Context, context.CancelFunc, error) {
	c, err := of.client(client.Options{UserAgent: "approvebot-cli"})
	if err != nil {
		return nil, nil, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, of.timeout)
	return c, ctx, cancel, nil
}

// parseInterspersed parses flags that may come before, between or after the positional
// arguments ("session set NAME -tier ask"). Everything after "--" is positional.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for len(args) > 0 {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	return pos, nil
}

func usageError(fs *flag.FlagSet, _ io.Writer, _, msg string) error {
	fs.Usage()
	return &exitError{code: exitUsage, msg: msg}
}

func cmdPending(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs, of := newOperatorFlags("pending", "pending [flags]", stderr)
	asJSON := fs.Bool("json", false, "print {\"requests\":[…]}")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return parseError(err, exitUsage)
	}
	if len(pos) > 0 {
		return usageError(fs, stderr, "pending [flags]", "pending takes no arguments")
	}
	c, ctx, cancel, err := of.open(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	list, err := c.Pending(ctx)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, map[string]any{"requests": list})
	}
	if len(list) == 0 {
		fmt.Fprintln(stdout, "no pending requests")
		return nil
	}
	now := time.Now()
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	// The directory, the policy's reason for asking and the agent's own reason are columns
	// of their own, never part of the summary: a human must see where "rm -rf ./build" runs,
	// which sensitive path or outside write made approvebot ask, and whose words the reason is.
	fmt.Fprintln(tw, "ID\tAGE\tEXPIRES IN\tSESSION\tAGENT\tTOOL\tCWD\tSUMMARY\tWHY APPROVEBOT ASKS\tAGENT'S REASON (ITS OWN WORDS)")
	for _, r := range list {
		expires := "-"
		if !r.ExpiresAt.IsZero() {
			expires = roundDur(r.ExpiresAt.Sub(now))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, roundDur(now.Sub(r.CreatedAt)), expires,
			client.Printable(r.Session, 40), client.Printable(r.Agent, 30), client.Printable(r.Tool, 40),
			orDash(render.CutMiddle(client.Printable(r.Cwd, maxCwdChars), 120)), client.Printable(r.Summary, 200),
			orDash(askWhy(r.AskReason, r.Rule)), orDash(client.Printable(r.AgentReason, 200)))
	}
	return tw.Flush()
}

// askWhy is the pending table's "why" column: the policy's reason and the rule that asked,
// or "" when the server gave no reason.
func askWhy(reason, rule string) string {
	if reason == "" {
		return ""
	}
	why := client.Printable(reason, maxAskWhyChars)
	if rule != "" {
		why += " (rule " + client.Printable(rule, 100) + ")"
	}
	return why
}

// maxAskWhyChars is how much of the policy's reason the pending table shows: as much as a
// card does.
const maxAskWhyChars = 300

func roundDur(d time.Duration) string {
	if d < 0 {
		return "0s"
	}
	return d.Round(time.Second).String()
}

// decisionOutcomes maps what an operator types to the API's outcome.
var decisionOutcomes = map[string]string{
	"allow": client.OutcomeAllowOnce, "allow-once": client.OutcomeAllowOnce, "allow_once": client.OutcomeAllowOnce,
	"allow-session": client.OutcomeAllowSession, "allow_session": client.OutcomeAllowSession,
	"allow-always": client.OutcomeAllowAlways, "allow_always": client.OutcomeAllowAlways,
	"deny": client.OutcomeDeny,
}

func cmdDecide(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	const usage = "decide [flags] ID allow|allow-session|allow-always|deny [REASON…]"
	fs, of := newOperatorFlags("decide", usage, stderr)
	asJSON := fs.Bool("json", false, "print the decided request object")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return parseError(err, exitUsage)
	}
	if len(pos) < 2 {
		return usageError(fs, stderr, usage, "give a request id and an outcome")
	}
	outcome, ok := decisionOutcomes[pos[1]]
	if !ok {
		return usageError(fs, stderr, usage, fmt.Sprintf("unknown outcome %q", pos[1]))
	}
	reason := strings.Join(pos[2:], " ")
	c, ctx, cancel, err := of.open(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	r, err := c.Decide(ctx, pos[0], outcome, reason)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, r)
	}
	fmt.Fprintf(stdout, "%s: %s (%s) by %s — %s\n", r.ID, r.State, r.Outcome, client.Printable(r.DecidedBy, 60), client.Printable(r.Summary, 200))
	return nil
}

// maxAuditPage is the most entries the server returns in one answer.
const maxAuditPage = 10000

func cmdAudit(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs, of := newOperatorFlags("audit", "audit [flags]", stderr)
	asJSON := fs.Bool("json", false, "print one JSON object per entry (JSON lines)")
	var q client.AuditQuery
	fs.StringVar(&q.Session, "session", "", "only this session")
	fs.StringVar(&q.RequestID, "request", "", "only this request id")
	fs.StringVar(&q.Agent, "agent", "", "only this agent (token name)")
	fs.StringVar(&q.Tool, "tool", "", "only this tool")
	fs.StringVar(&q.Outcome, "outcome", "", "only this outcome (allow_once, allow_session, allow_always, deny, timeout, cancelled)")
	fs.StringVar(&q.Source, "source", "", "only this source (policy, human, floor, …)")
	fs.StringVar(&q.Since, "since", "", "only entries since this RFC 3339 time or this long ago (e.g. 1h)")
	fs.StringVar(&q.Until, "until", "", "only entries before this RFC 3339 time or this long ago")
	fs.Uint64Var(&q.Before, "before", 0, "only entries older than the one with this seq (the cursor printed after a full page)")
	limit := fs.Int("limit", 100, "at most this many entries, the newest")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return parseError(err, exitUsage)
	}
	if len(pos) > 0 {
		return usageError(fs, stderr, "audit [flags]", "audit takes no arguments")
	}
	if *limit < 1 {
		return usageError(fs, stderr, "audit [flags]", "-limit must be positive")
	}
	c, ctx, cancel, err := of.open(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	// One answer may hold fewer entries than asked (the server bounds the entries one
	// query examines); follow the cursor until the limit or the oldest entry.
	var entries []client.AuditEntry
	for {
		q.Limit = min(*limit-len(entries), maxAuditPage)
		page, err := c.Audit(ctx, q)
		if err != nil {
			return err
		}
		entries = append(page.Entries, entries...)
		q.Before = page.NextBefore
		if q.Before == 0 || len(entries) >= *limit {
			break
		}
	}
	if q.Before != 0 {
		fmt.Fprintf(stderr, "older entries: approvebot audit -before %d (with the same filters)\n", q.Before)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		for _, e := range entries {
			if err := enc.Encode(e); err != nil {
				return err
			}
		}
		return nil
	}
	for _, e := range entries {
		var b strings.Builder
		b.WriteString(e.Time.Local().Format("2006-01-02 15:04:05"))
		b.WriteString("  " + client.Printable(e.Event, 20))
		for _, kv := range [][2]string{
			{"request", e.RequestID}, {"session", e.Session}, {"agent", e.Agent}, {"tool", e.Tool},
			{"outcome", e.Outcome}, {"source", e.Source}, {"by", e.DecidedBy}, {"actor", e.Actor},
			{"channel", e.Channel}, {"rule", e.Rule},
		} {
			if kv[1] != "" {
				b.WriteString("  " + kv[0] + "=" + client.Printable(kv[1], 80))
			}
		}
		if e.Reason != "" {
			b.WriteString("  reason=" + strconv.Quote(client.Printable(e.Reason, 300)))
		}
		if e.Summary != "" {
			b.WriteString("  summary=" + strconv.Quote(client.Printable(e.Summary, 200)))
		}
		fmt.Fprintln(stdout, b.String())
	}
	return nil
}

func cmdAllowlist(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	const usage = "allowlist [flags] list | revoke PATTERN [-agent NAME] [-args GLOB]"
	fs, of := newOperatorFlags("allowlist", usage, stderr)
	asJSON := fs.Bool("json", false, "print {\"entries\":[…]}")
	var agent, argsGlob *string
	fs.Func("agent", "revoke: only the entry of this agent (\"\" for the entry of every agent); default every entry of the pattern", func(v string) error {
		agent = &v
		return nil
	})
	fs.Func("args", "revoke: only the entry with this args glob (\"\" for any arguments); default every entry of the pattern", func(v string) error {
		argsGlob = &v
		return nil
	})
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return parseError(err, exitUsage)
	}
	if len(pos) == 0 {
		return usageError(fs, stderr, usage, "give list or revoke PATTERN")
	}
	switch {
	case pos[0] == "list" && len(pos) == 1:
		c, ctx, cancel, err := of.open(ctx)
		if err != nil {
			return err
		}
		defer cancel()
		entries, err := c.Allowlist(ctx)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(stdout, map[string]any{"entries": entries})
		}
		if len(entries) == 0 {
			fmt.Fprintln(stdout, "no persisted allowlist entries")
			return nil
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "PATTERN\tAGENT\tARGS\tADDED BY\tADDED AT\tREQUEST")
		for _, e := range entries {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", client.Printable(e.Pattern, 200), client.Printable(orStar(e.Agent), 40),
				client.Printable(orStar(e.Args), 80), client.Printable(e.AddedBy, 60), e.AddedAt.Local().Format(time.RFC3339), e.RequestID)
		}
		return tw.Flush()
	case pos[0] == "revoke" && len(pos) == 2:
		c, ctx, cancel, err := of.open(ctx)
		if err != nil {
			return err
		}
		defer cancel()
		revoked, err := c.Revoke(ctx, pos[1], agent, argsGlob)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(stdout, map[string]any{"revoked": revoked})
		}
		for _, e := range revoked {
			line := "revoked " + client.Printable(e.Pattern, 200) + " for agent " + client.Printable(orStar(e.Agent), 40)
			if e.Args != "" {
				line += " with args " + client.Printable(e.Args, 80)
			}
			fmt.Fprintln(stdout, line)
		}
		return nil
	}
	return usageError(fs, stderr, usage, "give list or revoke PATTERN")
}

func cmdSession(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	const usage = "session [flags] set NAME [-agent A] [-tier T] [-unattended=BOOL] | unpause NAME [-agent A]"
	fs, of := newOperatorFlags("session", usage, stderr)
	asJSON := fs.Bool("json", false, "print the session as JSON")
	tier := fs.String("tier", "", "set: exec tier ask|auto|full")
	var unattended *bool
	fs.Func("unattended", "set: true marks the session headless (asks are refused at once); false clears it", func(v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return err
		}
		unattended = &b
		return nil
	})
	agent := fs.String("agent", "", "the agent (token name) whose session it is; default: the session name for every agent")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return parseError(err, exitUsage)
	}
	if len(pos) != 2 || (pos[0] != "set" && pos[0] != "unpause") {
		return usageError(fs, stderr, usage, "give set NAME or unpause NAME")
	}
	var u client.SessionUpdate
	tierSet := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "tier" {
			tierSet = true
		}
	})
	if tierSet {
		u.Tier = tier
	}
	u.Unattended = unattended
	if pos[0] == "set" && u.Tier == nil && u.Unattended == nil {
		return usageError(fs, stderr, usage, "session set needs -tier or -unattended")
	}
	if pos[0] == "unpause" && (u.Tier != nil || u.Unattended != nil) {
		return usageError(fs, stderr, usage, "session unpause takes no -tier or -unattended")
	}
	c, ctx, cancel, err := of.open(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	var s *client.Session
	if pos[0] == "set" {
		u.Agent = *agent
		s, err = c.SetSession(ctx, pos[1], u)
	} else {
		s, err = c.Unpause(ctx, pos[1], *agent)
	}
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(stdout, s)
	}
	tierOf := func(t string) string {
		if t == "" {
			return "(global)"
		}
		return t
	}
	if s.Agent != "" {
		fmt.Fprintf(stdout, "session %s of agent %s: tier %s, unattended %t, paused %t, denials %d\n", client.Printable(s.Session, 100),
			client.Printable(s.Agent, 60), tierOf(s.Tier), s.Unattended, s.Paused, s.Denials)
		return nil
	}
	fmt.Fprintf(stdout, "session %s for every agent: tier %s, unattended %t\n", client.Printable(s.Session, 100), tierOf(s.Tier), s.Unattended)
	if s.Note != "" {
		fmt.Fprintln(stdout, client.Printable(s.Note, 400))
	}
	for _, a := range s.Agents {
		fmt.Fprintf(stdout, "  agent %s: tier %s, unattended %t, paused %t, denials %d\n", client.Printable(a.Agent, 60), tierOf(a.Tier), a.Unattended, a.Paused, a.Denials)
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func orStar(s string) string {
	if s == "" {
		return "*"
	}
	return s
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
