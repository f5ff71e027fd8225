package config

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Environment variables that configure channels when approvebot runs without a config file.
const (
	EnvTelegramToken     = "APPROVEBOT_TELEGRAM_TOKEN"
	EnvTelegramChats     = "APPROVEBOT_TELEGRAM_CHATS"
	EnvTelegramApprovers = "APPROVEBOT_TELEGRAM_APPROVERS"
	EnvSlackBotToken     = "APPROVEBOT_SLACK_BOT_TOKEN"
	EnvSlackAppToken     = "APPROVEBOT_SLACK_APP_TOKEN"
	EnvSlackChannels     = "APPROVEBOT_SLACK_CHANNELS"
	EnvSlackApprovers    = "APPROVEBOT_SLACK_APPROVERS"
	EnvDiscordToken      = "APPROVEBOT_DISCORD_TOKEN"
	EnvDiscordChannels   = "APPROVEBOT_DISCORD_CHANNELS"
	EnvDiscordApprovers  = "APPROVEBOT_DISCORD_APPROVERS"
)

// Defaults returns the embedded defaults: loopback listener, bbolt file in the working
// directory, and whichever channels have their token environment variables set (with chats
// and approvers from the variables above, comma-separated).
func Defaults() (*Config, error) {
	var c Config
	if os.Getenv(EnvTelegramToken) != "" {
		chats, err := int64List(EnvTelegramChats)
		if err != nil {
			return nil, err
		}
		approvers, err := int64List(EnvTelegramApprovers)
		if err != nil {
			return nil, err
		}
		c.Channels.Telegram = &Telegram{TokenEnv: EnvTelegramToken, Chats: chats, Approvers: approvers}
		if len(approvers) == 0 {
			return nil, fmt.Errorf("%s is set but %s is empty: name at least one approver's numeric user id", EnvTelegramToken, EnvTelegramApprovers)
		}
	}
	if os.Getenv(EnvSlackBotToken) != "" {
		c.Channels.Slack = &Slack{BotTokenEnv: EnvSlackBotToken, AppTokenEnv: EnvSlackAppToken,
			Channels: stringList(EnvSlackChannels), Approvers: stringList(EnvSlackApprovers)}
		if len(c.Channels.Slack.Approvers) == 0 {
			return nil, fmt.Errorf("%s is set but %s is empty: name at least one approver's Slack user id", EnvSlackBotToken, EnvSlackApprovers)
		}
	}
	if os.Getenv(EnvDiscordToken) != "" {
		c.Channels.Discord = &Discord{TokenEnv: EnvDiscordToken, Channels: stringList(EnvDiscordChannels), Approvers: stringList(EnvDiscordApprovers)}
		if len(c.Channels.Discord.Approvers) == 0 {
			return nil, fmt.Errorf("%s is set but %s is empty: name at least one approver's Discord user id", EnvDiscordToken, EnvDiscordApprovers)
		}
	}
	c.defaults()
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

func stringList(env string) []string {
	var out []string
	for _, f := range strings.Split(os.Getenv(env), ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func int64List(env string) ([]int64, error) {
	var out []int64
	for _, f := range stringList(env) {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not a numeric id", env, f)
		}
		out = append(out, n)
	}
	return out, nil
}
