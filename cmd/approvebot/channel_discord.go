package main

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/approvebot/approvebot/channels/discord"
	"github.com/approvebot/approvebot/config"
	"github.com/approvebot/approvebot/core/gate"
)

// buildDiscord constructs the discord channel when [channels.discord] is configured.
func buildDiscord(cfg *config.Config, log *slog.Logger, refused func(string), handlers map[string]http.Handler) (gate.Channel, error) {
	d := cfg.Channels.Discord
	if d == nil {
		return nil, nil
	}
	token := config.Secret(d.TokenEnv)
	if token == "" {
		return nil, fmt.Errorf("channels.discord: the bot token environment variable %s is not set", d.TokenEnv)
	}
	ch, err := discord.New(*d, discord.Options{
		Token:   token,
		Logger:  log,
		Refused: func() { refused(discord.Name) },
	})
	if err != nil {
		return nil, err
	}
	if ch.Mode() == discord.ModeHTTP {
		handlers["POST "+ch.HTTPPath()] = ch.Handler()
	}
	return ch, nil
}
