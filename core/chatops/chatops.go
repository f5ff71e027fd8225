// Package chatops is the part of the channel contract every chat platform shares: parsing
// /approve, /deny and /pending, checking the presser against the approver ids, turning a
// press or a command into a decision through the gate's single compare-and-set, the
// private answers to losers and strangers, auditing refused attempts, and the short window
// in which a Deny press waits for a typed reason. Platforms only translate.
package chatops

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/render"
)

// Verb is a typed command.
type Verb string

const (
	VerbApprove Verb = "approve"
	VerbDeny    Verb = "deny"
	VerbPending Verb = "pending"
)

// Command is a parsed /approve, /deny or /pending.
type Command struct {
	Verb Verb
	// ID is the request id when given ("" targets the replied-to card or the oldest).
	ID     string
	Reason string
}

// ParseCommand reads a typed command. It accepts a leading "/" or not (Slack's
// "/approvebot approve …" arrives as "approve …"), Telegram's "/approve@botname", and
// "/deny <id> <reason>" where the first word is a request id only if it has an id's shape.
// It is strict where a loose reading could approve by accident: "approve" and "pending"
// take nothing but an optional id, so chat such as "approve this later?" is not a command.
func ParseCommand(text string) (Command, bool) {
	text = strings.TrimSpace(text)
	text = strings.TrimPrefix(text, "/")
	verb, rest := text, ""
	if i := strings.IndexFunc(text, unicode.IsSpace); i >= 0 {
		verb, rest = text[:i], strings.TrimSpace(text[i:])
	}
	if i := strings.IndexByte(verb, '@'); i >= 0 {
		verb = verb[:i]
	}
	var c Command
	switch strings.ToLower(verb) {
	case "approve":
		c.Verb = VerbApprove
	case "deny":
		c.Verb = VerbDeny
	case "pending":
		c.Verb = VerbPending
		return c, rest == ""
	default:
		return Command{}, false
	}
	first, more := rest, ""
	if i := strings.IndexFunc(rest, unicode.IsSpace); i >= 0 {
		first, more = rest[:i], strings.TrimSpace(rest[i:])
	}
	if gate.ValidID(strings.ToLower(first)) {
		c.ID = strings.ToLower(first)
		rest = more
	}
	if c.Verb == VerbApprove {
		return c, rest == ""
	}
	c.Reason = rest
	return c, true
}

// IDList splits a comma-separated list of ids (an environment variable's value), dropping
// blanks.
func IDList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// Approvers is who may decide in one channel: user ids for every chat, optionally narrowed
// per chat. Ids are the platform's immutable user ids, never usernames.
type Approvers struct {
	all     map[string]bool
	perChat map[string]map[string]bool
}

// NewApprovers builds the set. perChat may be nil; a chat listed there accepts only its own
// list (each id must also be a channel approver).
func NewApprovers(ids []string, perChat map[string][]string) Approvers {
	a := Approvers{all: map[string]bool{}, perChat: map[string]map[string]bool{}}
	for _, id := range ids {
		if id = strings.TrimSpace(id); id != "" {
			a.all[id] = true
		}
	}
	for chat, list := range perChat {
		m := map[string]bool{}
		for _, id := range list {
			m[strings.TrimSpace(id)] = true
		}
		a.perChat[chat] = m
	}
	return a
}

// Allowed reports whether user may decide in chat.
func (a Approvers) Allowed(chat, user string) bool {
	if user == "" || !a.all[user] {
		return false
	}
	if m, ok := a.perChat[chat]; ok {
		return m[user]
	}
	return true
}

// Actor is who pressed or typed.
type Actor struct {
	// ID is the immutable platform user id.
	ID string
	// Name is a display name for cards and logs; never used for authorization.
	Name string
}

// Label is how the decider is shown: "Name (id)".
func (a Actor) Label(channel string) string {
	name := render.Clean(a.Name, 40)
	if name == "" {
		return channel + ":" + a.ID
	}
	return fmt.Sprintf("%s (%s:%s)", name, channel, a.ID)
}

// Kind is what became of a press or a command. Platforms act on the kind, never on the
// display text.
type Kind int

const (
	// KindDecided: the press or command decided the request (Request is the decision).
	KindDecided Kind = iota + 1
	// KindNeedReason: a Deny press waits for a typed reason; nothing is decided yet.
	KindNeedReason
	// KindDetails: the full redacted action after a Details press (Details, may be empty).
	KindDetails
	// KindList: the answer to /pending.
	KindList
	// KindNotApprover: the actor may not decide here; the attempt was refused and audited.
	KindNotApprover
	// KindAlreadyDecided: someone decided first (Request is that decision).
	KindAlreadyDecided
	// KindExpired: the request timed out.
	KindExpired
	// KindNotFound: no such request, or none that was sent to this chat.
	KindNotFound
	// KindNotLiveCard: a reply to a message that is not a card waiting for a decision.
	KindNotLiveCard
	// KindNoPending: a command found nothing waiting in this chat.
	KindNoPending
	// KindFailed: the gate could not carry the decision out; nothing changed.
	KindFailed
)

// Answer is what the platform shows the actor privately, and what became of the attempt.
type Answer struct {
	Kind Kind
	Text string
	// Request is the request as it is now (decided, already decided, expired, or waiting
	// for a reason).
	Request approval.Request
	// Details is the full redacted action after a Details press by an approver (Text holds
	// it too); platforms whose private answers are short send it as follow-up messages.
	Details string
}

// Decided reports whether the attempt decided the request.
func (a Answer) Decided() bool { return a.Kind == KindDecided }

// NotApprover is the answer to someone who may not decide here.
func NotApprover() Answer { return Answer{Kind: KindNotApprover, Text: TextNotApprover} }

// Failed is the answer when a decision could not be carried out (nothing changed).
func Failed() Answer { return Answer{Kind: KindFailed, Text: TextFailed} }

func notFound() Answer { return Answer{Kind: KindNotFound, Text: TextNotFound} }

// Private answers.
const (
	TextNotApprover = "You are not an approver here. Nothing was changed."
	TextExpired     = "This request expired. Nothing was changed."
	TextNotFound    = "No such request. Nothing was changed."
	TextNoPending   = "No request is waiting in this chat."
	TextFailed      = "That did not go through: the request was not changed. Try again."
	TextNotLiveCard = "That message is not a request waiting for a decision. Nothing was changed."
)

// Counter counts what a channel refuses or skips besides its decisions (the service's
// metrics). The resolver a channel runs with implements it when the service counts; reach
// it through CounterOf.
type Counter interface {
	// Refused counts a refused attempt: a press or command by a non-approver, a decision
	// from the wrong chat, a webhook call with a bad signature.
	Refused(channel string)
	// Skipped counts a platform update the channel could not read and skipped.
	Skipped(channel string)
}

// CounterOf is r's Counter, or one that counts nothing when r does not count.
func CounterOf(r gate.Resolver) Counter {
	if c, ok := r.(Counter); ok {
		return c
	}
	return noCounter{}
}

type noCounter struct{}

func (noCounter) Refused(string) {}
func (noCounter) Skipped(string) {}

// Ops carries out presses and commands for one channel.
type Ops struct {
	Channel   string
	Approvers Approvers
	// Resolver is the gate; when it is also a Counter, refused attempts are counted.
	Resolver gate.Resolver
}

// Press handles a button press on a card. A Deny press returns KindNeedReason (nothing
// decided yet) when askReason is true; the platform then prompts and calls Deny.
func (o *Ops) Press(ctx context.Context, chat, message string, actor Actor, action render.Action, id string, askReason bool) Answer {
	if !o.Approvers.Allowed(chat, actor.ID) {
		o.refuse(ctx, chat, actor, id, "press by a non-approver ("+string(action)+")")
		return NotApprover()
	}
	if action == render.ActionDetails {
		if _, refused := o.lookup(ctx, chat, actor, id); refused != nil {
			return *refused
		}
		d, err := o.Resolver.Details(ctx, id)
		if err != nil {
			return notFound()
		}
		return Answer{Kind: KindDetails, Text: d, Details: d}
	}
	outcome, ok := action.Outcome()
	if !ok {
		return notFound()
	}
	if outcome == approval.OutcomeDeny && askReason {
		cur, refused := o.lookup(ctx, chat, actor, id)
		if refused != nil {
			return *refused
		}
		if cur.State != approval.StatePending {
			return already(cur)
		}
		return Answer{Kind: KindNeedReason, Request: cur, Text: "Type the reason for denying (or wait and it is denied without one)."}
	}
	return o.decide(ctx, chat, actor, id, gate.Decision{Outcome: outcome})
}

// Deny decides a deny with a reason (after a reason prompt or a modal).
func (o *Ops) Deny(ctx context.Context, chat string, actor Actor, id, reason string) Answer {
	if !o.Approvers.Allowed(chat, actor.ID) {
		o.refuse(ctx, chat, actor, id, "deny by a non-approver")
		return NotApprover()
	}
	return o.decide(ctx, chat, actor, id, gate.Decision{Outcome: approval.OutcomeDeny, Reason: reason})
}

// Command handles a typed command in chat. replyTo is the message the command replied to
// ("" when none): a reply to a card targets that card. Platforms pass replyTo only for a
// reply to one of the bot's own messages; a reply to a message that is not a live card
// (decided, expired, or not a card) changes nothing rather than falling back to the
// oldest request, which the typist did not mean.
func (o *Ops) Command(ctx context.Context, chat string, actor Actor, cmd Command, replyTo string) Answer {
	if !o.Approvers.Allowed(chat, actor.ID) {
		target := cmd.ID
		if target == "" && replyTo != "" {
			// Name the card's request in the audit trail, without touching it.
			if r, ok := o.Resolver.ByCard(o.Channel, chat, replyTo); ok {
				target = r.ID
			}
		}
		o.refuse(ctx, chat, actor, target, "command /"+string(cmd.Verb)+" by a non-approver")
		return NotApprover()
	}
	if cmd.Verb == VerbPending {
		return o.pending(chat)
	}
	id := cmd.ID
	if id == "" && replyTo != "" {
		r, ok := o.Resolver.ByCard(o.Channel, chat, replyTo)
		if !ok {
			return Answer{Kind: KindNotLiveCard, Text: TextNotLiveCard}
		}
		id = r.ID
	}
	if id == "" {
		live := o.Resolver.LivePending(o.Channel, chat)
		if len(live) == 0 {
			return noPending()
		}
		id = live[0].ID
	}
	d := gate.Decision{Outcome: approval.OutcomeAllowOnce}
	if cmd.Verb == VerbDeny {
		d = gate.Decision{Outcome: approval.OutcomeDeny, Reason: cmd.Reason}
	}
	return o.decide(ctx, chat, actor, id, d)
}

func (o *Ops) decide(ctx context.Context, chat string, actor Actor, id string, d gate.Decision) Answer {
	if _, refused := o.lookup(ctx, chat, actor, id); refused != nil {
		return *refused
	}
	d.DecidedBy = actor.Label(o.Channel)
	d.Channel = o.Channel
	rec, err := o.Resolver.Decide(ctx, id, d)
	if err != nil {
		var lost *gate.AlreadyDecidedError
		switch {
		case errors.As(err, &lost):
			return already(lost.Request)
		case errors.Is(err, gate.ErrExpired):
			return Answer{Kind: KindExpired, Text: TextExpired, Request: rec}
		case errors.Is(err, approval.ErrNotFound):
			return notFound()
		}
		return Failed()
	}
	verb := "Allowed"
	if rec.Outcome == approval.OutcomeDeny {
		verb = "Denied"
	}
	return Answer{Kind: KindDecided, Text: fmt.Sprintf("%s (%s).", verb, rec.Outcome), Request: rec}
}

// lookup reads request id for a decision taken in chat. A request whose card was not sent
// to chat is refused (and audited) as unknown: an id typed or forged in another chat must
// not let that chat's approvers decide a request routed elsewhere (per-chat approvers).
func (o *Ops) lookup(ctx context.Context, chat string, actor Actor, id string) (approval.Request, *Answer) {
	r, err := o.Resolver.Get(ctx, id)
	if err != nil {
		a := Failed()
		if errors.Is(err, approval.ErrNotFound) {
			a = notFound()
		}
		return r, &a
	}
	if !o.routedHere(r, chat) {
		CounterOf(o.Resolver).Refused(o.Channel)
		o.Resolver.Audit(ctx, approval.AuditEntry{
			Event: approval.EventUnauthorized, RequestID: id, Channel: o.Channel,
			Actor: o.Channel + ":" + actor.ID + " chat " + chat, Reason: "decision from a chat the request was not sent to",
		})
		a := notFound()
		return approval.Request{}, &a
	}
	return r, nil
}

func (o *Ops) routedHere(r approval.Request, chat string) bool {
	for _, t := range r.Routes {
		if t.Channel == o.Channel && t.Chat == chat {
			return true
		}
	}
	for _, c := range r.Cards {
		if c.Channel == o.Channel && c.Chat == chat {
			return true
		}
	}
	return false
}

// already is the answer to an attempt on a request decided before (a timeout reads as
// expired).
func already(r approval.Request) Answer {
	if r.Outcome == approval.OutcomeTimeout {
		return Answer{Kind: KindExpired, Text: TextExpired, Request: r}
	}
	by := r.DecidedBy
	if by == "" {
		by = string(r.Source)
	}
	text := fmt.Sprintf("Already decided (%s) by %s at %s. Nothing was changed.", r.Outcome, render.Clean(by, 80), r.DecidedAt.UTC().Format("2006-01-02 15:04:05 UTC"))
	return Answer{Kind: KindAlreadyDecided, Text: text, Request: r}
}

func noPending() Answer { return Answer{Kind: KindNoPending, Text: TextNoPending} }

func (o *Ops) pending(chat string) Answer {
	live := o.Resolver.LivePending(o.Channel, chat)
	if len(live) == 0 {
		return noPending()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d waiting (oldest first):", len(live))
	for i, r := range live {
		if i == 10 {
			fmt.Fprintf(&b, "\n… and %d more", len(live)-10)
			break
		}
		fmt.Fprintf(&b, "\n%s  %s: %s", r.ID, render.Clean(r.Tool, 32), render.Clean(r.Summary, 80))
	}
	return Answer{Kind: KindList, Text: b.String()}
}

func (o *Ops) refuse(ctx context.Context, chat string, actor Actor, id, what string) {
	CounterOf(o.Resolver).Refused(o.Channel)
	o.Resolver.Audit(ctx, approval.AuditEntry{
		Event: approval.EventUnauthorized, RequestID: id, Channel: o.Channel,
		Actor: o.Channel + ":" + actor.ID + " chat " + chat, Reason: what,
	})
}

// ReasonWaits tracks Deny presses waiting for a typed reason. When none comes within the
// window, the request is denied without one.
type ReasonWaits struct {
	ops    *Ops
	window time.Duration
	mu     sync.Mutex
	waits  map[string]*reasonWait
}

type reasonWait struct {
	id    string
	chat  string
	actor Actor
	timer *time.Timer
}

// NewReasonWaits builds the tracker; window is how long a prompt waits.
func NewReasonWaits(ops *Ops, window time.Duration) *ReasonWaits {
	return &ReasonWaits{ops: ops, window: window, waits: map[string]*reasonWait{}}
}

// Start registers a prompt under key (for example the prompt message's id, or chat+user).
// onDone is called with the answer when the window passes without a reason.
func (w *ReasonWaits) Start(ctx context.Context, key, chat string, actor Actor, id string, onTimeout func(Answer)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if old, ok := w.waits[key]; ok {
		old.timer.Stop()
	}
	rw := &reasonWait{id: id, chat: chat, actor: actor}
	rw.timer = time.AfterFunc(w.window, func() {
		if !w.take(key, rw) {
			return
		}
		a := w.ops.Deny(context.WithoutCancel(ctx), chat, actor, id, "")
		if onTimeout != nil {
			onTimeout(a)
		}
	})
	w.waits[key] = rw
}

// Reason completes the wait under key with the typed reason. ok is false when nothing was
// waiting (or the typist is not the one who pressed Deny).
func (w *ReasonWaits) Reason(ctx context.Context, key string, actor Actor, reason string) (Answer, bool) {
	w.mu.Lock()
	rw, found := w.waits[key]
	if !found || rw.actor.ID != actor.ID {
		w.mu.Unlock()
		return Answer{}, false
	}
	delete(w.waits, key)
	rw.timer.Stop()
	w.mu.Unlock()
	return w.ops.Deny(ctx, rw.chat, actor, rw.id, reason), true
}

func (w *ReasonWaits) take(key string, rw *reasonWait) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.waits[key] != rw {
		return false
	}
	delete(w.waits, key)
	return true
}

// Stop cancels every wait without deciding (shutdown: the requests stay pending).
func (w *ReasonWaits) Stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k, rw := range w.waits {
		rw.timer.Stop()
		delete(w.waits, k)
	}
}
