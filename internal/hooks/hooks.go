// Package hooks adapts coding agents' hook protocols to approvebot. An Adapter reads one
// hook input of its agent (Claude Code, OpenAI Codex CLI, Gemini CLI, Cursor) into a Call
// and writes a Verdict back in that agent's own format; Decide is the one rule every
// integration follows between the two. Adapters are pure functions of their input: the
// command hooks (`approvebot hook NAME`) and the HTTP hook endpoints (/v1/hooks/NAME) share
// them and differ only in how they ask approvebot.
//
// The rule, "never wider than the agent": an integration answers allow only for an
// explicit allow (a tool permission, the allowlist, a safe bin, a proven-inert builtin, a
// session grant, a human). An allow that is only the exec tier's default gives the agent no
// decision, so its own permission rules and prompts apply unchanged. Refusals — the floor,
// rules, the denial ledger, a pause, an unattended run, a human, a failure — are denials in
// the agent's format.
package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/approvebot/approvebot/client"
	"github.com/approvebot/approvebot/internal/strictjson"
)

// Facts are what an adapter declares about a tool (see the API's facts).
type Facts struct {
	ReadOnly    bool
	Idempotent  bool
	Destructive bool
}

// Call is one tool call an agent's hook asks about.
type Call struct {
	// Event is the agent's hook event ("PreToolUse", "PermissionRequest", "BeforeTool",
	// "beforeShellExecution"…). It is set even when Parse fails, if it could be read.
	Event   string
	Tool    string
	Args    map[string]any
	Session string
	Cwd     string
	// Reason is the agent's stated reason (Claude Code's Bash description), for the card.
	Reason string
	Facts  Facts
	// AgentAsks: the agent itself is about to ask a person (a PermissionRequest, the MCP
	// permission tool). approvebot then answers for that person, so an allow that is only
	// the tier's default is asked again at tier "ask" (a human, unless something explicit
	// allows it).
	AgentAsks bool
	// SessionRules are permission updates the agent offered that allow exactly this call;
	// an "allow for session" answer hands them back for the rest of the agent's session.
	SessionRules []json.RawMessage
}

// Ask is one question to approvebot (POST /v1/requests, or the gate itself).
type Ask struct {
	Tool    string
	Args    map[string]any
	Session string
	Cwd     string
	Reason  string
	Facts   *Facts
	// Tier is "ask" for the second question of an agent that asks a person; empty
	// otherwise (the session's and server's tier apply).
	Tier string
}

// Outcome is approvebot's answer to an Ask. The zero value refuses.
type Outcome struct {
	Allowed bool
	// Explicit: the allow rests on something explicit (see the package doc).
	Explicit bool
	// ForSession: a human allowed this call for the session, or a session grant did.
	ForSession bool
	// Message is for the model; a refusal's says why.
	Message string
}

// Kind is what an agent is told. The zero value denies.
type Kind int

const (
	Deny Kind = iota
	Allow
	// Defer gives no decision: the agent's own flow applies (no output, or the agent's
	// own "ask" where it has no "no decision").
	Defer
)

func (k Kind) String() string {
	switch k {
	case Allow:
		return "allow"
	case Defer:
		return "defer"
	}
	return "deny"
}

// Verdict is the answer an adapter renders.
type Verdict struct {
	Kind    Kind
	Message string
	// ForSession marks an allow for the rest of the session (see Call.SessionRules).
	ForSession bool
}

// Asker asks approvebot one question. Every failure is a refusing Outcome with a message.
type Asker func(ctx context.Context, a Ask) Outcome

// Decide is the rule between an agent's hook and approvebot. The call is asked as the
// agent described it; an explicit allow is an allow, a refusal a denial, and an allow that
// is only the tier's default gives no decision — unless the agent is itself about to ask a
// person (AgentAsks), when the call is asked once more at tier "ask" and without declared
// facts, so that a human decides unless something explicit allows it.
func Decide(ctx context.Context, c Call, ask Asker) (v Verdict) {
	defer func() {
		if p := recover(); p != nil {
			v = Verdict{Kind: Deny, Message: FailureMessage(fmt.Errorf("internal error: %v", p))}
		}
	}()
	a := Ask{Tool: c.Tool, Args: c.Args, Session: c.Session, Cwd: c.Cwd, Reason: c.Reason}
	if c.Facts != (Facts{}) {
		f := c.Facts
		a.Facts = &f
	}
	o := ask(ctx, a)
	if o.Allowed && !o.Explicit && c.AgentAsks {
		a.Tier, a.Facts = "ask", nil
		o = ask(ctx, a)
	}
	switch {
	case !o.Allowed:
		return Verdict{Kind: Deny, Message: messageOr(o.Message, "Refused by approvebot.")}
	case o.Explicit:
		return Verdict{Kind: Allow, Message: messageOr(o.Message, "Allowed by approvebot."), ForSession: o.ForSession}
	}
	return Verdict{Kind: Defer, Message: messageOr(o.Message, "approvebot has no objection; the agent's own permission rules decide.")}
}

func messageOr(m, fallback string) string {
	if strings.TrimSpace(m) == "" {
		return fallback
	}
	return m
}

// FailureMessage is the model-facing refusal when no decision could be obtained, the same
// text the Go client gives.
func FailureMessage(err error) string { return client.FailureMessage(err) }

// Reply is what a hook answers: Body on stdout (or the HTTP response body; empty means no
// decision), the exit code of a command hook, and for exit code 2 the reason on stderr.
type Reply struct {
	Body   []byte
	Exit   int
	Stderr string
}

// Adapter is one agent's hook protocol.
type Adapter interface {
	// Name is the agent's name in `approvebot hook NAME` and POST /v1/hooks/NAME.
	Name() string
	// Parse reads one hook input. On error the Call still carries the Event when it could
	// be read, so that the refusal has the shape the agent reads for that event.
	Parse(raw []byte) (Call, error)
	// Render writes a verdict for the call's event.
	Render(c Call, v Verdict) Reply
}

// Refuse is the answer to an input the adapter could not use: a denial in the agent's
// format for the event (the most common event when even that is unknown), with exit code 2
// and the reason on stderr, which every supported agent also reads as a refusal.
func Refuse(a Adapter, c Call, err error) Reply {
	msg := FailureMessage(err)
	r := a.Render(c, Verdict{Kind: Deny, Message: msg})
	r.Exit, r.Stderr = 2, msg
	return r
}

// ErrNoSession refuses a hook input without a session id (and no override).
var ErrNoSession = errors.New("hook input has no session id")

// Options are a transport's adjustments to every call.
type Options struct {
	// Session overrides the agent's session id (the command hook's -session).
	Session string
}

// Answer is one hook exchange: it parses the input, asks approvebot as Decide says and
// renders the verdict. Every failure is a refusal in the agent's format.
func Answer(ctx context.Context, a Adapter, raw []byte, o Options, ask Asker) (r Reply) {
	var c Call
	defer func() {
		if p := recover(); p != nil {
			r = Refuse(a, c, fmt.Errorf("internal error: %v", p))
		}
	}()
	if len(raw) > MaxInput {
		return Refuse(a, c, fmt.Errorf("hook input larger than %d bytes", MaxInput))
	}
	c, err := a.Parse(raw)
	if err != nil {
		return Refuse(a, c, err)
	}
	if o.Session != "" {
		c.Session = o.Session
	}
	if c.Session == "" {
		return Refuse(a, c, ErrNoSession)
	}
	return a.Render(c, Decide(ctx, c, ask))
}

var adapters = map[string]Adapter{
	claudeCode{}.Name(): claudeCode{},
	codex{}.Name():      codex{},
	gemini{}.Name():     gemini{},
	cursor{}.Name():     cursor{},
}

// Lookup finds an adapter by name.
func Lookup(name string) (Adapter, bool) {
	a, ok := adapters[name]
	return a, ok
}

// Names lists the adapters, sorted.
func Names() []string {
	out := make([]string, 0, len(adapters))
	for n := range adapters {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// MaxInput caps a hook input; the server's body cap (1 MiB by default) refuses larger
// calls anyway.
const MaxInput = 16 << 20

// MaxReason matches the server's cap on reason (bytes).
const MaxReason = 2000

// decodeInput reads a hook input strictly (one JSON object, valid UTF-8, no duplicate
// keys) into v, which ignores fields it does not know: agents add fields freely.
func decodeInput(raw []byte, v any) error {
	if len(strings.TrimSpace(string(raw))) == 0 {
		return errors.New("empty hook input")
	}
	if err := strictjson.Check(raw); err != nil {
		return fmt.Errorf("hook input is not a JSON object: %w", err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("hook input: %w", err)
	}
	return nil
}

// eventOf reads just the event name of an input that may be otherwise unusable.
func eventOf(raw []byte, key string) string {
	var probe map[string]json.RawMessage
	if json.Unmarshal(raw, &probe) != nil {
		return ""
	}
	var s string
	if json.Unmarshal(probe[key], &s) != nil {
		return ""
	}
	return s
}

// object decodes a JSON object argument strictly, keeping numbers exact.
func object(raw json.RawMessage, what string) (map[string]any, error) {
	if len(raw) == 0 {
		return nil, fmt.Errorf("hook input has no %s", what)
	}
	m, err := strictjson.Object(raw)
	if err != nil {
		return nil, fmt.Errorf("%s is not a JSON object: %w", what, err)
	}
	return m, nil
}

// checkTool validates a tool name the way the server will.
func checkTool(tool string) error {
	if tool == "" {
		return errors.New("hook input has no tool name")
	}
	if len(tool) > 256 || !utf8.ValidString(tool) {
		return errors.New("invalid tool name")
	}
	return nil
}

// shellArgs is a shell tool's input as asked: everything but the description, which goes
// to the card as the agent's reason. The other metadata (timeout, run_in_background…)
// stays in the arguments and out of the fingerprint (core/gate ShellMetadata).
func shellArgs(tool string, input map[string]any) (map[string]any, string, error) {
	cmd, ok := input["command"].(string)
	if !ok || strings.TrimSpace(cmd) == "" {
		return nil, "", fmt.Errorf("%s call without a command string", tool)
	}
	args := make(map[string]any, len(input))
	reason := ""
	for k, v := range input {
		if k == "description" {
			if d, ok := v.(string); ok {
				reason = cutBytes(d, MaxReason)
				continue
			}
		}
		args[k] = v
	}
	return args, reason, nil
}

// cutBytes cuts s to at most n bytes on a rune boundary.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

// encode marshals v as one line of JSON without HTML escaping.
func encode(v any) []byte {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Only unencodable values fail; every reply here is plain strings and bools.
		panic("hooks: encoding a reply: " + err.Error())
	}
	return []byte(b.String())
}
