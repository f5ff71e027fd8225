package main

import (
	"log/slog"
	"net/http"

	"github.com/approvebot/approvebot/config"
	"github.com/approvebot/approvebot/core/gate"
)

// buildChannels is the one place chat channels are constructed. refused counts refused
// presses per channel. It returns the channels and any HTTP handlers (webhooks) to mount.
func buildChannels(cfg *config.Config, log *slog.Logger, refused func(channel string)) ([]gate.Channel, map[string]http.Handler, error) {
	var out []gate.Channel
	handlers := map[string]http.Handler{}
	builders := []func(*config.Config, *slog.Logger, func(string), map[string]http.Handler) (gate.Channel, error){
		buildTelegram, buildSlack, buildDiscord,
	}
	for _, b := range builders {
		ch, err := b(cfg, log, refused, handlers)
		if err != nil {
			return nil, nil, err
		}
		if ch != nil {
			out = append(out, ch)
		}
	}
	return out, handlers, nil
}
