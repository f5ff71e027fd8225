package discord

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/chatops"
	"github.com/approvebot/approvebot/internal/inbound"
)

const (
	// MaxInteractionBody caps an HTTP interaction's body; Discord's are a few KiB.
	MaxInteractionBody = 64 << 10
	// SignatureWindow is how far an interaction's signed timestamp may be from now.
	// discordgo.VerifyInteraction checks neither the age nor the size.
	SignatureWindow = 5 * time.Minute
)

// HTTPHandler is what the channel serves on the API listener: in http mode, the
// interactions endpoint at http_path (Ed25519 signature over timestamp and body, a
// freshness window and a body cap, checked before anything is parsed; a bad signature is
// answered 401 and audited); in gateway mode nothing ("", nil).
func (c *Channel) HTTPHandler() (string, http.Handler) {
	if c.cfg.Mode != ModeHTTP {
		return "", nil
	}
	return c.cfg.HTTPPath, http.HandlerFunc(c.serveInteraction)
}

func (c *Channel) serveInteraction(w http.ResponseWriter, r *http.Request) {
	if !inbound.Post(w, r) {
		return
	}
	body, ok := inbound.Body(w, r, MaxInteractionBody)
	if !ok {
		return
	}
	if !c.verify(r.Header, body) {
		c.badSignature(r)
		http.Error(w, "invalid request signature", http.StatusUnauthorized)
		return
	}
	var i discordgo.Interaction
	if err := json.Unmarshal(body, &i); err != nil {
		http.Error(w, "bad interaction", http.StatusBadRequest)
		return
	}
	if i.Type == discordgo.InteractionPing {
		writeJSON(w, &response{Type: respPong})
		return
	}
	first := make(chan *response, 1)
	respond := func(ctx context.Context, resp *response) error {
		select {
		case first <- resp:
			return nil
		default:
			return errors.New("interaction already answered")
		}
	}
	// The work may outlive this HTTP exchange (a deferred answer, then followups).
	go func() {
		defer c.guard("http interaction")
		c.handleInteraction(context.WithoutCancel(r.Context()), &i, respond)
	}()
	t := time.NewTimer(respondTimeout)
	defer t.Stop()
	select {
	case resp := <-first:
		writeJSON(w, resp)
	case <-t.C:
		http.Error(w, "no answer in time", http.StatusServiceUnavailable)
	case <-r.Context().Done():
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	raw, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "encoding failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(raw)
}

// verify checks X-Signature-Ed25519 over X-Signature-Timestamp + body, and that the
// timestamp is within SignatureWindow of now.
func (c *Channel) verify(h http.Header, body []byte) bool {
	if c.publicKey == nil {
		return false
	}
	sig, err := hex.DecodeString(h.Get("X-Signature-Ed25519"))
	if err != nil || len(sig) != ed25519.SignatureSize {
		return false
	}
	ts := h.Get("X-Signature-Timestamp")
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(ts) > 12 {
		return false
	}
	age := c.now().Sub(time.Unix(sec, 0))
	if age > SignatureWindow || age < -SignatureWindow {
		return false
	}
	msg := make([]byte, 0, len(ts)+len(body))
	msg = append(append(msg, ts...), body...)
	return ed25519.Verify(c.publicKey, msg, sig)
}

// badSignature counts every rejected interaction and audits one at most once a second (an
// attacker cannot flood the audit trail); the skipped count goes into the next entry.
// Before Run there is no resolver to count or audit with.
func (c *Channel) badSignature(r *http.Request) {
	ops := c.ops.Load()
	if ops != nil {
		chatops.CounterOf(ops.Resolver).Refused(Name)
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	c.sigMu.Lock()
	now := c.now()
	if now.Sub(c.sigLastAudit) < time.Second {
		c.sigSkipped++
		c.sigMu.Unlock()
		return
	}
	skipped := c.sigSkipped
	c.sigLastAudit, c.sigSkipped = now, 0
	c.sigMu.Unlock()
	reason := "interaction with a bad or stale signature"
	if skipped > 0 {
		reason += " (and " + strconv.Itoa(skipped) + " more since the last entry)"
	}
	c.log.Warn("rejected an interaction with a bad signature", "remote", host)
	if ops != nil {
		ops.Resolver.Audit(context.WithoutCancel(r.Context()), approval.AuditEntry{
			Event: approval.EventUnauthorized, Channel: Name, Actor: "http " + host, Reason: reason,
		})
	}
}
