package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	slackgo "github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/approvebot/approvebot/core/chatops"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/internal/retry"
)

// Run reads presses and commands until ctx ends. It first checks the bot token (auth.test,
// which also names the bot's workspace for bare approver ids), then serves Socket Mode, or
// in HTTP mode lets Handler work. It returns an error, and the channel stops taking cards,
// when Slack rejects a token or a scope (invalid_auth, token_revoked, missing_scope, …).
func (c *Channel) Run(ctx context.Context, r gate.Resolver) error {
	team, err := c.authTest(ctx)
	if err != nil {
		return c.stop(err)
	}
	if c.cfg.Team != "" {
		team = c.cfg.Team
	}
	perChat := map[string][]string{}
	for ch, list := range c.perChat {
		perChat[ch] = approverKeys(list, team)
	}
	ops := &chatops.Ops{Channel: Name, Approvers: chatops.NewApprovers(approverKeys(c.approvers, team), perChat), Resolver: r}
	// Background work (a reason window, a press being handled) outlives ctx briefly so a
	// decision is never cut in half at shutdown; the waits are stopped below.
	workCtx, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	st := &runState{ops: ops, waits: chatops.NewReasonWaits(ops, c.cfg.DenyReasonWindow.Duration), resolver: r, ctx: workCtx}
	c.state.Store(st)
	defer func() {
		c.state.Store(nil)
		st.waits.Stop()
		done := make(chan struct{})
		go func() { c.work.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			c.log.Warn("slack handlers still running at shutdown")
		}
		cancelWork()
	}()
	c.log.Info("slack channel running", "mode", c.cfg.Mode, "team", team, "channels", len(c.cfg.Channels))
	if c.cfg.Mode == ModeHTTP {
		<-ctx.Done()
		return ctx.Err()
	}
	return c.runSocket(ctx, st)
}

// stop records a fatal error, logs it loudly and returns it.
func (c *Channel) stop(err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	if isFatal(err) {
		c.health.setFatal(err)
		c.log.Error("slack channel stopped: Slack rejected the token or the app's scopes; fix the app and restart", "err", err)
		return fmt.Errorf("slack channel stopped: %w", err)
	}
	return err
}

// authTest checks the bot token, retrying transient failures until ctx ends.
func (c *Channel) authTest(ctx context.Context) (string, error) {
	for {
		var team string
		err := c.call(ctx, "auth.test", func(ctx context.Context) error {
			resp, err := c.api.AuthTestContext(ctx)
			if err == nil {
				team = resp.TeamID
			}
			return err
		})
		if err == nil {
			return team, nil
		}
		if isFatal(err) || ctx.Err() != nil {
			return "", err
		}
		c.log.Warn("slack auth.test failed; retrying", "err", err)
		if !retry.Sleep(ctx, c.retry.Max) {
			return "", ctx.Err()
		}
	}
}

// Bounds of the wait before a Socket Mode client is started again.
const (
	socketBackoffMin = time.Second
	socketBackoffMax = time.Minute
)

// runSocket keeps a Socket Mode connection until ctx ends or Slack rejects the app token.
// The library reconnects on its own after a drop or a "disconnect" request; when its loop
// ends on an error that is not fatal, it is started again after a backoff.
func (c *Channel) runSocket(ctx context.Context, st *runState) error {
	backoff := retry.Backoff{Base: socketBackoffMin, Max: socketBackoffMax}
	for {
		err := c.socketOnce(ctx, st)
		if ctx.Err() != nil {
			c.health.setConnected(false, "stopped")
			return ctx.Err()
		}
		if isFatal(err) {
			return c.stop(err)
		}
		c.health.setConnected(false, "reconnecting")
		wait := backoff.Next()
		c.log.Warn("slack socket mode ended; reconnecting", "err", c.scrub(fmt.Sprint(err)), "in", wait)
		if !retry.Sleep(ctx, wait) {
			return ctx.Err()
		}
	}
}

type slogWriter struct{ log *slog.Logger }

func (w slogWriter) Output(_ int, s string) error {
	w.log.Debug("slack-go", "msg", s)
	return nil
}

// socketOnce runs one socketmode client until it stops.
func (c *Channel) socketOnce(ctx context.Context, st *runState) error {
	api := slackgo.New(c.secrets.BotToken, slackgo.OptionAPIURL(c.apiURL), slackgo.OptionHTTPClient(c.hc),
		slackgo.OptionAppLevelToken(c.secrets.AppToken))
	smc := socketmode.New(api, socketmode.OptionLog(slogWriter{c.log}), socketmode.OptionReadLimit(4<<20))
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- smc.RunContext(runCtx) }()
	var fatal error
	for {
		select {
		case err := <-done:
			if fatal != nil {
				return fatal
			}
			return err
		case evt := <-smc.Events:
			if err := c.onSocketEvent(runCtx, st, smc, evt); err != nil && fatal == nil {
				fatal = err
				cancel()
			}
		}
	}
}

// onSocketEvent handles one event of the socketmode client. It returns a fatal error when
// the connection cannot succeed with these credentials.
func (c *Channel) onSocketEvent(ctx context.Context, st *runState, smc *socketmode.Client, evt socketmode.Event) error {
	switch evt.Type {
	case socketmode.EventTypeConnecting:
		c.health.setConnected(false, "connecting")
	case socketmode.EventTypeConnected:
		c.health.setConnected(true, "")
		c.health.ok()
		c.log.Info("slack socket mode connected")
	case socketmode.EventTypeConnectionError:
		var err error = errors.New("connection error")
		if ce, ok := evt.Data.(*slackgo.ConnectionErrorEvent); ok && ce.ErrorObj != nil {
			err = ce.ErrorObj
		}
		c.health.setConnected(false, "connection error: "+c.scrub(err.Error()))
		if isFatal(err) {
			return err
		}
		c.log.Warn("slack socket mode connection failed", "err", c.scrub(err.Error()))
	case socketmode.EventTypeInvalidAuth:
		return errors.New("invalid_auth")
	case socketmode.EventTypeIncomingError, socketmode.EventTypeErrorBadMessage:
		c.log.Warn("slack socket mode: unreadable message", "type", string(evt.Type))
	case socketmode.EventTypeErrorWriteFailed:
		c.log.Warn("slack socket mode: an acknowledgement could not be written; Slack will send that event again")
	case socketmode.EventTypeInteractive, socketmode.EventTypeSlashCommand, socketmode.EventTypeEventsAPI:
		if evt.Request == nil {
			return nil
		}
		// Acknowledge first (Slack waits at most 3 s), then do the work.
		actx, cancel := context.WithTimeout(ctx, ackWindow)
		err := smc.AckCtx(actx, evt.Request.EnvelopeID, nil)
		cancel()
		if err != nil {
			c.log.Warn("slack socket mode: acknowledgement failed", "err", err)
		}
		first, taken := c.firstEverywhere(ctx, st, "env:"+evt.Request.EnvelopeID)
		if !first {
			return nil
		}
		taken(true) // acknowledged above: Slack does not send it again
		switch evt.Type {
		case socketmode.EventTypeInteractive:
			cb, ok := evt.Data.(slackgo.InteractionCallback)
			if ok {
				c.dispatch(st, func(ctx context.Context) { c.onInteraction(ctx, st, cb) })
			}
		case socketmode.EventTypeSlashCommand:
			cmd, ok := evt.Data.(slackgo.SlashCommand)
			if ok {
				c.dispatch(st, func(ctx context.Context) { c.onSlash(ctx, st, cmd) })
			}
		case socketmode.EventTypeEventsAPI:
			var env eventEnvelope
			if err := json.Unmarshal(evt.Request.Payload, &env); err == nil {
				if first, taken := c.firstEverywhere(ctx, st, "ev:"+env.EventID); first {
					taken(true)
					c.dispatch(st, func(ctx context.Context) { c.onEvent(ctx, st, env) })
				}
			}
		}
	}
	return nil
}

// dispatch runs f in the background with a bounded number of workers. It reports false when
// every worker stayed busy for the whole acknowledgement window.
func (c *Channel) dispatch(st *runState, f func(ctx context.Context)) bool {
	t := time.NewTimer(ackWindow)
	defer t.Stop()
	select {
	case c.sem <- struct{}{}:
	case <-t.C:
		c.log.Error("slack: too many presses at once; one was dropped (nothing was decided)")
		return false
	}
	c.work.Add(1)
	go func() {
		defer c.work.Done()
		defer func() { <-c.sem }()
		defer func() {
			if p := recover(); p != nil {
				c.log.Error("slack handler panicked; nothing was decided by it", "panic", fmt.Sprint(p))
			}
		}()
		ctx, cancel := context.WithTimeout(st.ctx, workTimeout)
		defer cancel()
		f(ctx)
	}()
	return true
}
