package main

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/approvebot/approvebot/channels/slack"
	"github.com/approvebot/approvebot/config"
	"github.com/approvebot/approvebot/core/gate"
)

// buildSlack constructs the slack channel when [channels.slack] is configured.
func buildSlack(cfg *config.Config, log *slog.Logger, refused func(string), handlers map[string]http.Handler) (gate.Channel, error) {
	sc := cfg.Channels.Slack
	if sc == nil {
		return nil, nil
	}
	bot := config.Secret(sc.BotTokenEnv)
	if bot == "" {
		return nil, fmt.Errorf("channels.slack: the bot token environment variable %s is not set", sc.BotTokenEnv)
	}
	var app, secret string
	switch sc.Mode {
	case slack.ModeHTTP:
		secret = config.Secret(sc.SigningSecretEnv)
		if secret == "" {
			return nil, fmt.Errorf("channels.slack: http mode needs the signing secret in %s, which is not set", sc.SigningSecretEnv)
		}
	default:
		app = config.Secret(sc.AppTokenEnv)
		if app == "" {
			return nil, fmt.Errorf("channels.slack: socket mode needs the app-level token (xapp-…) in %s, which is not set", sc.AppTokenEnv)
		}
	}
	ch, err := slack.New(slack.Config{
		BotToken: bot, AppToken: app, SigningSecret: secret, APIURL: sc.APIURL, Mode: sc.Mode,
		Channels: sc.Channels, Approvers: sc.Approvers, ChannelApprovers: sc.ChannelApprovers, Team: sc.Team,
		DenyReasonWindow: sc.DenyReasonWindow.Duration, SlashCommand: sc.SlashCommand,
		Logger: log, Refused: func() { refused(slack.Name) },
	})
	if err != nil {
		return nil, err
	}
	for i, r := range cfg.Routes {
		for _, chat := range r.Chats {
			if r.Channel == slack.Name && !slack.ValidChannelID(chat) {
				return nil, fmt.Errorf("routes[%d].chats: %q is not a Slack channel id (C…, G…)", i, chat)
			}
		}
	}
	if len(sc.Channels) == 0 {
		log.Warn("channels.slack.channels is empty: cards go only where [[routes]] send them")
	}
	if sc.Mode == slack.ModeHTTP {
		handlers["POST "+sc.HTTPPath] = ch.Handler()
	}
	return ch, nil
}
