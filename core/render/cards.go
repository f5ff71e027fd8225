package render

// PlaceholderChat stands for a chat when `approvebot check` has none configured.
const PlaceholderChat = "<chat>"

// Chats names where each platform's card would go; an empty one is PlaceholderChat.
type Chats struct {
	Telegram string
	Slack    string
}

// PlatformCards holds, per platform, the exact request body its API would receive for one
// card: Telegram sendMessage parameters, Slack chat.postMessage arguments, and Discord's
// Create Message body (its channel is in the URL path, not the body). It is the "cards"
// object of `approvebot check -json`.
type PlatformCards struct {
	Telegram TelegramMessage `json:"telegram"`
	Slack    SlackMessage    `json:"slack"`
	Discord  DiscordMessage  `json:"discord"`
}

// ExampleRequestID stands for the id of a request that has none yet (`approvebot check`
// stores nothing), so that the cards it shows carry their buttons as a real one would.
const ExampleRequestID = "exampleexampleexampleexamp"

// PendingCards renders the pending card of c for every platform. A card without a request
// id gets ExampleRequestID.
func PendingCards(c Card, to Chats) PlatformCards {
	if c.RequestID == "" {
		c.RequestID = ExampleRequestID
	}
	tg, sl := to.Telegram, to.Slack
	if tg == "" {
		tg = PlaceholderChat
	}
	if sl == "" {
		sl = PlaceholderChat
	}
	return PlatformCards{
		Telegram: TelegramPending(c, tg),
		Slack:    SlackPending(c, sl),
		Discord:  DiscordPending(c),
	}
}
