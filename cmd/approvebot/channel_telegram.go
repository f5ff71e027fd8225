package main

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/approvebot/approvebot/channels/telegram"
	"github.com/approvebot/approvebot/config"
	"github.com/approvebot/approvebot/core/gate"
)

// buildTelegram constructs the telegram channel when [channels.telegram] is configured.
func buildTelegram(cfg *config.Config, log *slog.Logger, refused func(string), handlers map[string]http.Handler) (gate.Channel, error) {
	tc := cfg.Channels.Telegram
	if tc == nil {
		return nil, nil
	}
	token := config.Secret(tc.TokenEnv)
	if token == "" {
		return nil, fmt.Errorf("channels.telegram: the bot token environment variable %s is not set", tc.TokenEnv)
	}
	var secret string
	if tc.Mode == "webhook" {
		secret = config.Secret(tc.WebhookSecretEnv)
		if secret == "" {
			return nil, fmt.Errorf("channels.telegram: webhook mode needs the secret in %s, which is not set", tc.WebhookSecretEnv)
		}
	}
	ch, err := telegram.New(telegram.Options{
		Config: *tc, Token: token, WebhookSecret: secret, Logger: log,
		Refused: func() { refused(telegram.Name) },
	})
	if err != nil {
		return nil, fmt.Errorf("channels.%w", err)
	}
	if len(tc.Chats) == 0 {
		log.Warn("channels.telegram.chats is empty: cards go only where [[routes]] send them")
	}
	if tc.Mode == "webhook" {
		handlers["POST "+tc.WebhookPath] = ch.WebhookHandler()
	}
	return ch, nil
}
