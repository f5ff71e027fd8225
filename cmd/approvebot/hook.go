package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/approvebot/approvebot/client"
	"github.com/approvebot/approvebot/internal/hooks"
)

// stdinTimeout bounds the wait for the agent to finish writing the event: a hook that
// hangs until the agent kills it would not be a refusal.
const stdinTimeout = 10 * time.Second

var hookUsage = "usage: approvebot hook " + strings.Join(hooks.Names(), "|") + " [flags]   (hook input JSON on stdin)"

// cmdHook answers one hook event of a coding agent: its hook input on stdin, the decision
// in the agent's own format on stdout. Everything that goes wrong is a refusal the agent
// reads as one; -h prints the usage and exits 2, which every supported agent also reads as
// a refusal, so a hook configured with it by mistake refuses rather than waves calls on.
func cmdHook(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 || isHelp(args[0]) {
		fmt.Fprintln(stderr, hookUsage)
		newHookFlags(stderr).fs.PrintDefaults()
		return &exitError{code: 2}
	}
	adapter, ok := hooks.Lookup(args[0])
	if !ok {
		fmt.Fprintln(stderr, hookUsage)
		return &exitError{code: 2, msg: fmt.Sprintf("unknown agent %q: the call is refused", client.Printable(args[0], 40))}
	}
	reply := hookAnswer(ctx, adapter, args[1:], stdin, stderr)
	if len(reply.Body) > 0 {
		_, _ = stdout.Write(reply.Body)
	}
	if reply.Exit != 0 {
		if reply.Stderr != "" {
			fmt.Fprintln(stderr, reply.Stderr)
		}
		return &exitError{code: reply.Exit}
	}
	return nil
}

type hookFlags struct {
	fs *flag.FlagSet
	af agentFlags
}

func newHookFlags(stderr io.Writer) *hookFlags {
	h := &hookFlags{fs: flag.NewFlagSet("hook", flag.ContinueOnError)}
	h.fs.SetOutput(stderr)
	h.af.register(h.fs, "session (default: the agent's session id)")
	return h
}

// hookAnswer is the reply to one event; it never fails (a failure is a refusing reply).
func hookAnswer(ctx context.Context, adapter hooks.Adapter, args []string, stdin io.Reader, stderr io.Writer) (reply hooks.Reply) {
	defer func() {
		if p := recover(); p != nil {
			reply = hooks.Refuse(adapter, hooks.Call{}, fmt.Errorf("internal error: %v", p))
		}
	}()
	// The flag package's own messages stay off stderr: an agent may read all of it as the
	// reason of a refusal.
	h := newHookFlags(io.Discard)
	if err := h.fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, hookUsage)
			h.fs.SetOutput(stderr)
			h.fs.PrintDefaults()
			return hooks.Reply{Exit: 2}
		}
		return hooks.Refuse(adapter, hooks.Call{}, fmt.Errorf("bad hook flags: %v", err))
	}
	if h.fs.NArg() > 0 {
		return hooks.Refuse(adapter, hooks.Call{}, fmt.Errorf("unexpected arguments: %q", h.fs.Args()))
	}
	raw, err := readInput(stdin, hooks.MaxInput, stdinTimeout)
	if err != nil {
		return hooks.Refuse(adapter, hooks.Call{}, fmt.Errorf("reading the hook input: %v", err))
	}
	return hooks.Answer(ctx, adapter, raw, hooks.Options{Session: h.af.session}, h.af.hookAsker(stderr))
}

// hookAsker asks the server through the Go client, with the agent flags.
func (af *agentFlags) hookAsker(stderr io.Writer) hooks.Asker {
	return func(ctx context.Context, a hooks.Ask) hooks.Outcome {
		ask := client.Ask{Tool: a.Tool, Args: a.Args, Session: a.Session, Cwd: a.Cwd, Reason: a.Reason, Tier: a.Tier}
		if a.Facts != nil {
			ask.Facts = &client.Facts{ReadOnly: a.Facts.ReadOnly, Idempotent: a.Facts.Idempotent, Destructive: a.Facts.Destructive}
		}
		res := af.ask(ctx, ask)
		if res.Err != nil {
			fmt.Fprintln(stderr, "approvebot:", res.Err)
		}
		return outcomeOf(res)
	}
}

// outcomeOf reduces a client result to what an integration may tell its agent.
func outcomeOf(res client.Result) hooks.Outcome {
	o := hooks.Outcome{Allowed: res.Allowed(), Explicit: res.ExplicitlyAllowed(), Message: res.Message}
	if o.Allowed && res.Request != nil {
		o.ForSession = res.Request.Outcome == client.OutcomeAllowSession
	}
	return o
}

// readInput reads all of r (at most max+1 bytes) within d.
func readInput(r io.Reader, max int64, d time.Duration) ([]byte, error) {
	type result struct {
		raw []byte
		err error
	}
	ch := make(chan result, 1)
	go func() {
		raw, err := io.ReadAll(io.LimitReader(r, max+1))
		ch <- result{raw, err}
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case res := <-ch:
		return res.raw, res.err
	case <-t.C:
		return nil, fmt.Errorf("stdin not closed within %s", d)
	}
}

func isHelp(s string) bool { return s == "-h" || s == "-help" || s == "--help" || s == "help" }
