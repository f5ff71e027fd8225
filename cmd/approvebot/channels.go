package main

import (
	"fmt"
	"log/slog"
	"net/http"
	"os"

	"github.com/approvebot/approvebot/channels/discord"
	"github.com/approvebot/approvebot/channels/slack"
	"github.com/approvebot/approvebot/channels/telegram"
	"github.com/approvebot/approvebot/config"
	"github.com/approvebot/approvebot/core/chatops"
	"github.com/approvebot/approvebot/core/gate"
)

// httpChannel is a channel that may serve platform callbacks (webhooks, signed HTTP
// interactions) on the API listener.
type httpChannel interface {
	// HTTPHandler is the path and handler to mount, or "" and nil when its mode needs none.
	HTTPHandler() (string, http.Handler)
}

// buildChannels is the one place chat channels are constructed: each configured section,
// with its secrets read from the environment. It returns the channels and the HTTP
// handlers to mount on the API listener.
func buildChannels(cfg *config.Config, log *slog.Logger) ([]gate.Channel, map[string]http.Handler, error) {
	builders := []func() (gate.Channel, error){
		func() (gate.Channel, error) {
			return build(cfg.Channels.Telegram, telegram.Config.ReadSecrets, telegram.New, log)
		},
		func() (gate.Channel, error) {
			return build(cfg.Channels.Slack, slack.Config.ReadSecrets, slack.New, log)
		},
		func() (gate.Channel, error) {
			return build(cfg.Channels.Discord, discord.Config.ReadSecrets, discord.New, log)
		},
	}
	var out []gate.Channel
	handlers := map[string]http.Handler{}
	for _, b := range builders {
		ch, err := b()
		if err != nil {
			return nil, nil, err
		}
		if ch == nil {
			continue
		}
		if len(ch.Chats()) == 0 {
			log.Warn(fmt.Sprintf("channels.%s lists no chats: cards go only where [[routes]] send them", ch.Name()))
		}
		if hc, ok := ch.(httpChannel); ok {
			if path, h := hc.HTTPHandler(); h != nil {
				handlers["POST "+path] = h
			}
		}
		out = append(out, ch)
	}
	return out, handlers, nil
}

// build constructs one channel from its section (nil: not configured) the way every
// channel is built: secrets from the environment, then New(section, secrets, logger, nil).
func build[C, S any, Ch gate.Channel](section *C, secrets func(C, func(string) string) (S, error),
	newChannel func(C, S, *slog.Logger, *http.Client) (Ch, error), log *slog.Logger) (gate.Channel, error) {
	if section == nil {
		return nil, nil
	}
	sec, err := secrets(*section, os.Getenv)
	if err != nil {
		return nil, err
	}
	ch, err := newChannel(*section, sec, log, nil)
	if err != nil {
		return nil, err
	}
	return ch, nil
}

// counting is the gate as the channels run with it: it also counts what they refuse and
// the updates they skip, in the metrics (chatops.Counter).
type counting struct {
	*gate.Gate
	chatops.Counter
}
