package slack

import (
	"context"
	"encoding/json"
	"errors"
	"mime"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	slackgo "github.com/slack-go/slack"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/chatops"
	"github.com/approvebot/approvebot/internal/inbound"
)

// replayWindow is how long a signed request stays valid (Slack's own rule, enforced by
// slack.NewSecretsVerifier); a signature seen within it is not processed twice.
const replayWindow = 5 * time.Minute

// serveHTTP is the HTTP-mode endpoint for interactivity, slash commands and events. It
// verifies the signing secret before reading anything, answers 401 (and audits) a bad or
// stale signature, and answers 200 at once, doing the work afterwards.
func (c *Channel) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if !inbound.Post(w, r) {
		return
	}
	body, ok := inbound.Body(w, r, c.maxBody)
	if !ok {
		return
	}
	if err := c.verify(r.Header, body); err != nil {
		c.rejected(r, err)
		http.Error(w, "invalid signature", http.StatusUnauthorized)
		return
	}
	st := c.state.Load()
	if st == nil {
		http.Error(w, "approvebot is starting", http.StatusServiceUnavailable)
		return
	}
	sig := r.Header.Get("X-Slack-Signature")
	if !c.replay.first(sig) {
		// The same signed request again within the window: already handled.
		w.WriteHeader(http.StatusOK)
		return
	}
	accepted := false
	defer func() {
		if !accepted {
			c.replay.forget(sig) // not handled: Slack may send it again
		}
	}()
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		var env eventEnvelope
		if err := json.Unmarshal(body, &env); err != nil {
			http.Error(w, "bad event", http.StatusBadRequest)
			return
		}
		if env.Type == "url_verification" {
			accepted = true
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]string{"challenge": env.Challenge})
			return
		}
		if first, taken := c.firstEverywhere(r.Context(), st, "ev:"+env.EventID); first {
			ok := c.dispatch(st, func(ctx context.Context) { c.onEvent(ctx, st, env) })
			taken(ok)
			if !ok {
				http.Error(w, "busy", http.StatusServiceUnavailable)
				return
			}
		}
		accepted = true
		w.WriteHeader(http.StatusOK)
	case "application/x-www-form-urlencoded":
		form, err := url.ParseQuery(string(body))
		if err != nil {
			http.Error(w, "bad form", http.StatusBadRequest)
			return
		}
		var job func(context.Context)
		switch {
		case form.Get("payload") != "":
			var cb slackgo.InteractionCallback
			if err := json.Unmarshal([]byte(form.Get("payload")), &cb); err != nil {
				http.Error(w, "bad payload", http.StatusBadRequest)
				return
			}
			job = func(ctx context.Context) { c.onInteraction(ctx, st, cb) }
		case form.Get("command") != "":
			cmd := slashFromForm(form)
			job = func(ctx context.Context) { c.onSlash(ctx, st, cmd) }
		default:
			http.Error(w, "unknown request", http.StatusBadRequest)
			return
		}
		if !c.dispatch(st, job) {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		// An empty 200 acknowledges a press, closes a submitted modal and shows nothing
		// for a slash command; the answers come privately afterwards.
		accepted = true
		w.WriteHeader(http.StatusOK)
	default:
		http.Error(w, "unsupported content type", http.StatusUnsupportedMediaType)
	}
}

// verify checks Slack's v0 signature over the raw body and the 5-minute timestamp window.
func (c *Channel) verify(h http.Header, body []byte) error {
	sv, err := slackgo.NewSecretsVerifier(h, c.secrets.SigningSecret)
	if err != nil {
		return err
	}
	if _, err := sv.Write(body); err != nil {
		return err
	}
	return sv.Ensure()
}

// rejected logs, counts and audits a request that failed verification. Audits are rate
// limited so a flood of forged requests cannot flood the audit trail (the log and the
// counter see every one). Before Run there is no resolver to count or audit with.
func (c *Channel) rejected(r *http.Request, err error) {
	why := "bad signature"
	switch {
	case errors.Is(err, slackgo.ErrExpiredTimestamp):
		why = "stale timestamp (older than 5 minutes)"
	case errors.Is(err, slackgo.ErrMissingHeaders):
		why = "missing signature headers"
	}
	host, _, _ := net.SplitHostPort(r.RemoteAddr)
	c.log.Warn("slack: rejected an HTTP request", "why", why, "remote", host)
	st := c.state.Load()
	if st == nil {
		return
	}
	chatops.CounterOf(st.resolver).Refused(Name)
	if !c.badSig.Allow() {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 5*time.Second)
	defer cancel()
	st.resolver.Audit(ctx, approval.AuditEntry{
		Event: approval.EventUnauthorized, Channel: Name, Actor: "slack http " + host,
		Reason: "rejected Slack request: " + why,
	})
}

func slashFromForm(f url.Values) slackgo.SlashCommand {
	return slackgo.SlashCommand{
		Token: f.Get("token"), TeamID: f.Get("team_id"), TeamDomain: f.Get("team_domain"),
		EnterpriseID: f.Get("enterprise_id"), ChannelID: f.Get("channel_id"), ChannelName: f.Get("channel_name"),
		UserID: f.Get("user_id"), UserName: f.Get("user_name"), Command: f.Get("command"), Text: f.Get("text"),
		ResponseURL: f.Get("response_url"), TriggerID: f.Get("trigger_id"), APIAppID: f.Get("api_app_id"),
	}
}

// replayCache remembers signatures for the replay window.
type replayCache struct {
	mu   sync.Mutex
	seen map[string]time.Time
}

func newReplayCache() *replayCache { return &replayCache{seen: map[string]time.Time{}} }

func (rc *replayCache) forget(sig string) {
	rc.mu.Lock()
	delete(rc.seen, sig)
	rc.mu.Unlock()
}

func (rc *replayCache) first(sig string) bool {
	now := time.Now()
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if t, ok := rc.seen[sig]; ok && now.Sub(t) < 2*replayWindow {
		return false
	}
	if len(rc.seen) > 4096 {
		for k, t := range rc.seen {
			if now.Sub(t) >= 2*replayWindow {
				delete(rc.seen, k)
			}
		}
	}
	if len(rc.seen) > 65536 {
		// Only a flood of valid signatures gets here; forget the oldest half at random.
		for k := range rc.seen {
			delete(rc.seen, k)
			if len(rc.seen) <= 32768 {
				break
			}
		}
	}
	rc.seen[sig] = now
	return true
}
