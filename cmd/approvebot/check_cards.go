package main

import (
	"strconv"
	"time"

	"github.com/approvebot/approvebot/config"
	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/render"
)

// checkCards returns, per platform, the exact request body its API would receive for the
// pending card of rec, addressed to the first configured chat of each channel.
func checkCards(rec *approval.Request, cfg *config.Config) render.PlatformCards {
	r := *rec
	if r.ID == "" {
		r.ID = gate.NewID()
	}
	now := time.Now().UTC()
	r.CreatedAt, r.ExpiresAt = now, now.Add(cfg.Server.ApprovalTimeout.Duration)
	var to render.Chats
	if t := cfg.Channels.Telegram; t != nil && len(t.Chats) > 0 {
		to.Telegram = strconv.FormatInt(t.Chats[0], 10)
	}
	if s := cfg.Channels.Slack; s != nil && len(s.Channels) > 0 {
		to.Slack = s.Channels[0]
	}
	return render.PendingCards(render.CardFor(&r), to)
}
