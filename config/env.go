package config

import (
	"os"

	"github.com/approvebot/approvebot/channels/discord"
	"github.com/approvebot/approvebot/channels/slack"
	"github.com/approvebot/approvebot/channels/telegram"
)

// Environment variables that configure channels when approvebot runs without a config file.
const (
	EnvTelegramToken     = telegram.EnvToken
	EnvTelegramChats     = telegram.EnvChats
	EnvTelegramApprovers = telegram.EnvApprovers
	EnvSlackBotToken     = slack.EnvBotToken
	EnvSlackAppToken     = slack.EnvAppToken
	EnvSlackChannels     = slack.EnvChannels
	EnvSlackApprovers    = slack.EnvApprovers
	EnvDiscordToken      = discord.EnvToken
	EnvDiscordChannels   = discord.EnvChannels
	EnvDiscordApprovers  = discord.EnvApprovers
)

// Defaults returns the embedded defaults: loopback listener, bbolt file in the working
// directory, and whichever channels have their token environment variables set (with chats
// and approvers from the variables above, comma-separated).
func Defaults() (*Config, error) {
	c := empty()
	var err error
	if c.Channels.Telegram, err = telegram.ConfigFromEnv(os.Getenv); err != nil {
		return nil, err
	}
	if c.Channels.Slack, err = slack.ConfigFromEnv(os.Getenv); err != nil {
		return nil, err
	}
	if c.Channels.Discord, err = discord.ConfigFromEnv(os.Getenv); err != nil {
		return nil, err
	}
	c.defaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}
