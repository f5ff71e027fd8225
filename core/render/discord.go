package render

import "strings"

// Discord API limits.
const (
	// DiscordMaxContent is the longest message content
	// (https://discord.com/developers/docs/resources/message#create-message).
	DiscordMaxContent = 2000
	// DiscordMaxCustomID is the longest custom_id of a component
	// (https://discord.com/developers/docs/components/reference#button).
	DiscordMaxCustomID = 100
	// DiscordMaxButtonLabel is the longest button label
	// (https://discord.com/developers/docs/components/reference#button).
	DiscordMaxButtonLabel = 80
	// DiscordMaxButtonsPerRow is how many buttons one action row holds
	// (https://discord.com/developers/docs/components/reference#action-row).
	DiscordMaxButtonsPerRow = 5
	// DiscordFlagSuppressEmbeds stops Discord from unfurling URLs of the content into
	// embeds (https://discord.com/developers/docs/resources/message#message-object-message-flags).
	DiscordFlagSuppressEmbeds = 1 << 2
)

// Discord component types and button styles
// (https://discord.com/developers/docs/components/reference).
const (
	DiscordComponentActionRow = 1
	DiscordComponentButton    = 2

	DiscordButtonPrimary   = 1
	DiscordButtonSecondary = 2
	DiscordButtonSuccess   = 3
	DiscordButtonDanger    = 4
)

// DiscordAllowedMentions is allowed_mentions
// (https://discord.com/developers/docs/resources/message#allowed-mentions-object). Parse is
// always an explicit empty list, so nothing in a card can ever ping anyone.
type DiscordAllowedMentions struct {
	Parse       []string `json:"parse"`
	RepliedUser bool     `json:"replied_user"`
}

// DiscordComponent is an action row (type 1) or a button (type 2).
type DiscordComponent struct {
	Type       int                `json:"type"`
	Components []DiscordComponent `json:"components,omitempty"`
	Style      int                `json:"style,omitempty"`
	Label      string             `json:"label,omitempty"`
	CustomID   string             `json:"custom_id,omitempty"`
}

// DiscordMessageReference makes a message a reply.
type DiscordMessageReference struct {
	MessageID       string `json:"message_id"`
	FailIfNotExists bool   `json:"fail_if_not_exists"`
}

// DiscordMessage is the body of Create Message and of Edit Message
// (https://discord.com/developers/docs/resources/message#create-message), and the data of
// an interaction response of type 7 (update message). Components is an explicit empty list
// on a resolved card, which removes the buttons.
type DiscordMessage struct {
	Content          string                   `json:"content"`
	Components       []DiscordComponent       `json:"components"`
	AllowedMentions  DiscordAllowedMentions   `json:"allowed_mentions"`
	Flags            int                      `json:"flags"`
	MessageReference *DiscordMessageReference `json:"message_reference,omitempty"`
}

// zwj is put after every '@' of user text, so "@everyone", "@here" and "<@id>" can never
// form, even if something downstream strips other invisible characters.
const zwj = "\u200d"

// DiscordEscape neutralises user text for a code span or block: a zero-width joiner after
// every '@' and a zero-width space after every backtick.
func DiscordEscape(s string) string {
	if strings.Contains(s, "@") {
		s = strings.ReplaceAll(s, "@", "@"+zwj)
	}
	return breakTicks(s)
}

// discordInline puts user text in an inline code span delimited by two backticks (a single
// backtick inside cannot close it, and breakTicks leaves no two in a row), where Discord
// renders no markdown, masked links, URLs or mentions.
func discordInline(s string) string { return "`` " + DiscordEscape(s) + " ``" }

func discordBlock(s string) string { return "```\n" + DiscordEscape(s) + "\n```" }

func discordMentions() DiscordAllowedMentions {
	return DiscordAllowedMentions{Parse: []string{}}
}

// DiscordPending is the Create Message body of a pending card.
func DiscordPending(c Card) DiscordMessage {
	v := pendingView(c)
	return DiscordMessage{
		Content:         fit(v, discordContent, discordContentOK),
		Components:      discordButtons(v),
		AllowedMentions: discordMentions(),
		Flags:           DiscordFlagSuppressEmbeds,
	}
}

// DiscordResolved is the Edit Message body (or type-7 interaction response data) that turns
// a posted card into its resolved or expired form, without buttons.
func DiscordResolved(c Card) DiscordMessage {
	return DiscordMessage{
		Content:         fit(resolvedView(c), discordContent, discordContentOK),
		Components:      []DiscordComponent{},
		AllowedMentions: discordMentions(),
		Flags:           DiscordFlagSuppressEmbeds,
	}
}

// DiscordDetails are the messages that show the full redacted action of a request, each
// within DiscordMaxContent, as replies to the card when replyTo is set.
func DiscordDetails(requestID, details, replyTo string) []DiscordMessage {
	id := Clean(requestID, RequestIDLen)
	head := func(i, n int) string {
		return "📄 **Details** of request " + discordInline(id) + " (" + itoa(i) + "/" + itoa(n) + ")\n"
	}
	const moreNote = "\n*… and more, not shown: deny if you cannot see enough.*"
	budget := DiscordMaxContent - utf16Len(head(maxDetailMessages, maxDetailMessages)) - len("```\n\n```") - utf16Len(moreNote)
	text := Redact(details, MaxDetails+100)
	chunks, left := chunkRunes(text, budget, maxDetailMessages, func(r rune) int {
		return utf16Len(DiscordEscape(string(r)))
	})
	out := make([]DiscordMessage, 0, len(chunks))
	for i, ch := range chunks {
		content := head(i+1, len(chunks)) + discordBlock(ch)
		if i == len(chunks)-1 && left > 0 {
			content += moreNote
		}
		m := DiscordMessage{
			Content:         content,
			Components:      []DiscordComponent{},
			AllowedMentions: discordMentions(),
			Flags:           DiscordFlagSuppressEmbeds,
		}
		if replyTo != "" {
			m.MessageReference = &DiscordMessageReference{MessageID: replyTo}
		}
		out = append(out, m)
	}
	return out
}

func discordContentOK(s string) bool { return utf16Len(s) <= DiscordMaxContent }

func discordContent(v view) string {
	var b strings.Builder
	b.WriteString(v.icon + " **" + v.title + "**")
	if v.tool != "" {
		b.WriteString(" · " + discordInline(v.tool))
	}
	b.WriteString("\n")
	if v.summary != "" {
		b.WriteString(discordBlock(v.summary) + "\n")
	} else {
		b.WriteString("*(no action text)*\n")
	}
	if v.notice != "" {
		b.WriteString("*" + v.notice + "*\n")
	}
	for _, f := range v.fields {
		b.WriteString("**" + f.label + ":** " + discordInline(f.value) + "\n")
	}
	for i, f := range v.footer {
		if i > 0 {
			b.WriteString(" · ")
		}
		b.WriteString(f.label + ": " + discordInline(f.value))
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func discordButtons(v view) []DiscordComponent {
	var rows []DiscordComponent
	var row []DiscordComponent
	for _, bt := range v.buttons {
		id := CallbackData(bt.action, v.requestID)
		if id == "" || len(id) > DiscordMaxCustomID {
			continue
		}
		style := DiscordButtonSecondary
		switch {
		case bt.action == ActionAllowOnce:
			style = DiscordButtonSuccess
		case bt.style == stylePrimary:
			style = DiscordButtonPrimary
		case bt.style == styleDanger:
			style = DiscordButtonDanger
		}
		row = append(row, DiscordComponent{Type: DiscordComponentButton, Style: style, Label: bt.label, CustomID: id})
		if len(row) == DiscordMaxButtonsPerRow {
			rows = append(rows, DiscordComponent{Type: DiscordComponentActionRow, Components: row})
			row = nil
		}
	}
	if len(row) > 0 {
		rows = append(rows, DiscordComponent{Type: DiscordComponentActionRow, Components: row})
	}
	if rows == nil {
		rows = []DiscordComponent{}
	}
	return rows
}
