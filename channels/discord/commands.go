package discord

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/approvebot/approvebot/core/render"
)

// command is an application command definition
// (https://discord.com/developers/docs/interactions/application-commands).
type command struct {
	Name        string          `json:"name"`
	Type        int             `json:"type"`
	Description string          `json:"description"`
	Options     []commandOption `json:"options"`
	// Contexts: guild (0) and the bot's DMs (1); only for global commands.
	Contexts []int `json:"contexts,omitempty"`
}

type commandOption struct {
	Type        int    `json:"type"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Required    bool   `json:"required"`
	MinLength   *int   `json:"min_length,omitempty"`
	MaxLength   int    `json:"max_length,omitempty"`
}

// commands are the application commands approvebot registers: /approve [id],
// /deny reason:… [id] and /pending. Global commands are also usable in the bot's DMs.
func commands(global bool) []command {
	var contexts []int
	if global {
		contexts = []int{0, 1}
	}
	idLen := render.RequestIDLen
	one := 1
	id := commandOption{Type: 3, Name: "id", Description: "Request id (default: the oldest waiting here)", MinLength: &idLen, MaxLength: idLen}
	return []command{
		{Name: "approve", Type: 1, Description: "Allow once: the oldest request waiting here, or the one with this id",
			Options: []commandOption{id}, Contexts: contexts},
		{Name: "deny", Type: 1, Description: "Deny with a reason the agent is told: the oldest request here, or this id",
			Options: []commandOption{
				{Type: 3, Name: "reason", Description: "Why (the agent reads it)", Required: true, MinLength: &one, MaxLength: maxReason},
				id,
			}, Contexts: contexts},
		{Name: "pending", Type: 1, Description: "List the requests waiting in this channel", Options: []commandOption{}, Contexts: contexts},
	}
}

// registerCommands bulk-overwrites the commands in every configured guild (or globally
// when no guild is configured), once per process. Failure is logged: buttons and replies
// still work without the commands.
func (c *Channel) registerCommands(ctx context.Context) {
	if !c.registered.CompareAndSwap(false, true) {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	appID, _ := c.ids()
	if appID == "" {
		raw, err := c.request(ctx, "get application", http.MethodGet, discordgo.EndpointApplication("@me"), discordgo.EndpointApplication("@me"), nil)
		var app struct {
			ID string `json:"id"`
		}
		if err != nil || json.Unmarshal(raw, &app) != nil || !snowflake(app.ID) {
			c.registered.Store(false)
			c.log.Warn("cannot register /approve, /deny and /pending: application id unknown; set channels.discord.application_id", "err", err)
			return
		}
		appID = app.ID
		c.idMu.Lock()
		c.appID = appID
		c.idMu.Unlock()
	}
	cmds := commands(len(c.cfg.Guilds) == 0)
	endpoints := []string{discordgo.EndpointApplicationGlobalCommands(appID)}
	if len(c.cfg.Guilds) > 0 {
		endpoints = endpoints[:0]
		for _, g := range c.cfg.Guilds {
			endpoints = append(endpoints, discordgo.EndpointApplicationGuildCommands(appID, g))
		}
	}
	for _, ep := range endpoints {
		if _, err := c.request(ctx, "register commands", http.MethodPut, ep, ep, cmds); err != nil {
			c.registered.Store(false)
			c.log.Warn("registering application commands failed", "err", err)
			return
		}
	}
	c.log.Info("application commands registered", "scopes", len(endpoints))
}
