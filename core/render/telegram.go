package render

import (
	"encoding/json"
	"html"
	"strconv"
	"strings"
)

// Telegram Bot API limits.
const (
	// TelegramMaxText is the longest message text, 1–4096 characters after entity parsing
	// (https://core.telegram.org/bots/api#sendmessage). We check the HTML source, which is
	// never shorter than the parsed text.
	TelegramMaxText = 4096
	// TelegramMaxCallbackData is the longest callback_data, in bytes
	// (https://core.telegram.org/bots/api#inlinekeyboardbutton).
	TelegramMaxCallbackData = 64
	// TelegramMaxButtonsPerRow is Telegram's limit of buttons in one keyboard row
	// (https://core.telegram.org/bots/api#inlinekeyboardmarkup, enforced at 8).
	TelegramMaxButtonsPerRow = 8
)

// TelegramParseMode is the only parse mode approvebot uses: every user string goes through
// html.EscapeString and sits inside <code> or <pre>, where Telegram detects no entities
// (no @mentions, /commands, #hashtags or links).
const TelegramParseMode = "HTML"

// TelegramChatID is a chat_id: sent as a JSON number when it is one (a chat's numeric id),
// otherwise as a string ("@channelusername", or a placeholder).
type TelegramChatID string

// MarshalJSON writes numeric ids as numbers.
func (c TelegramChatID) MarshalJSON() ([]byte, error) {
	if n, err := strconv.ParseInt(string(c), 10, 64); err == nil {
		return []byte(strconv.FormatInt(n, 10)), nil
	}
	return json.Marshal(string(c))
}

// TelegramLinkPreview is link_preview_options
// (https://core.telegram.org/bots/api#linkpreviewoptions). Previews are always off: a URL in
// an agent's command must not make Telegram fetch it or draw a preview under the card.
type TelegramLinkPreview struct {
	IsDisabled bool `json:"is_disabled"`
}

// TelegramButton is an InlineKeyboardButton with callback data.
type TelegramButton struct {
	Text         string `json:"text"`
	CallbackData string `json:"callback_data"`
}

// TelegramKeyboard is an InlineKeyboardMarkup. An empty keyboard removes the buttons.
type TelegramKeyboard struct {
	InlineKeyboard [][]TelegramButton `json:"inline_keyboard"`
}

// TelegramReplyParameters makes a message a reply (https://core.telegram.org/bots/api#replyparameters).
type TelegramReplyParameters struct {
	MessageID                int64 `json:"message_id"`
	AllowSendingWithoutReply bool  `json:"allow_sending_without_reply"`
}

// TelegramMessage is the body of sendMessage (https://core.telegram.org/bots/api#sendmessage).
type TelegramMessage struct {
	ChatID             TelegramChatID           `json:"chat_id"`
	Text               string                   `json:"text"`
	ParseMode          string                   `json:"parse_mode"`
	LinkPreviewOptions TelegramLinkPreview      `json:"link_preview_options"`
	ReplyMarkup        *TelegramKeyboard        `json:"reply_markup,omitempty"`
	ReplyParameters    *TelegramReplyParameters `json:"reply_parameters,omitempty"`
}

// TelegramEdit is the body of editMessageText
// (https://core.telegram.org/bots/api#editmessagetext). Its reply_markup is always an empty
// keyboard: a resolved card has no buttons.
type TelegramEdit struct {
	ChatID             TelegramChatID      `json:"chat_id"`
	MessageID          int64               `json:"message_id"`
	Text               string              `json:"text"`
	ParseMode          string              `json:"parse_mode"`
	LinkPreviewOptions TelegramLinkPreview `json:"link_preview_options"`
	ReplyMarkup        TelegramKeyboard    `json:"reply_markup"`
}

// TelegramPending is the sendMessage body of a pending card.
func TelegramPending(c Card, chat string) TelegramMessage {
	v := pendingView(c)
	text := fit(v, telegramText, telegramTextOK)
	m := TelegramMessage{
		ChatID:             TelegramChatID(chat),
		Text:               text,
		ParseMode:          TelegramParseMode,
		LinkPreviewOptions: TelegramLinkPreview{IsDisabled: true},
	}
	if kb := telegramKeyboard(v); len(kb.InlineKeyboard) > 0 {
		m.ReplyMarkup = &kb
	}
	return m
}

// TelegramResolved is the editMessageText body that turns a posted card into its resolved
// (or expired) form, without buttons.
func TelegramResolved(c Card, chat string, messageID int64) TelegramEdit {
	return TelegramEdit{
		ChatID:             TelegramChatID(chat),
		MessageID:          messageID,
		Text:               fit(resolvedView(c), telegramText, telegramTextOK),
		ParseMode:          TelegramParseMode,
		LinkPreviewOptions: TelegramLinkPreview{IsDisabled: true},
		ReplyMarkup:        TelegramKeyboard{InlineKeyboard: [][]TelegramButton{}},
	}
}

// TelegramDetails are the messages that show the full redacted action of a request (the
// "details" button), each within TelegramMaxText, as replies to the card when replyTo > 0.
func TelegramDetails(chat, requestID, details string, replyTo int64) []TelegramMessage {
	head := func(i, n int) string {
		return "📄 <b>Details</b> of request <code>" + html.EscapeString(Clean(requestID, RequestIDLen)) +
			"</code> (" + itoa(i) + "/" + itoa(n) + ")\n<pre>"
	}
	const tail = "</pre>"
	const moreNote = "\n<i>… and more, not shown: deny if you cannot see enough.</i>"
	budget := TelegramMaxText - utf16Len(head(maxDetailMessages, maxDetailMessages)) - len(tail) - utf16Len(moreNote)
	text := Redact(details, MaxDetails+100)
	chunks, left := chunkRunes(text, budget, maxDetailMessages, func(r rune) int {
		return utf16Len(html.EscapeString(string(r)))
	})
	out := make([]TelegramMessage, 0, len(chunks))
	for i, ch := range chunks {
		body := head(i+1, len(chunks)) + html.EscapeString(ch) + tail
		if ch == "" {
			body = head(i+1, len(chunks)) + " " + tail
		}
		if i == len(chunks)-1 && left > 0 {
			body += moreNote
		}
		m := TelegramMessage{
			ChatID:             TelegramChatID(chat),
			Text:               body,
			ParseMode:          TelegramParseMode,
			LinkPreviewOptions: TelegramLinkPreview{IsDisabled: true},
		}
		if replyTo > 0 {
			m.ReplyParameters = &TelegramReplyParameters{MessageID: replyTo, AllowSendingWithoutReply: true}
		}
		out = append(out, m)
	}
	return out
}

// maxDetailMessages bounds how many messages one details view may post.
const maxDetailMessages = 8

func telegramTextOK(s string) bool { return utf16Len(s) <= TelegramMaxText }

func telegramText(v view) string {
	var b strings.Builder
	esc := html.EscapeString
	b.WriteString(v.icon + " <b>" + esc(v.title) + "</b>")
	if v.tool != "" {
		b.WriteString(" · <code>" + esc(v.tool) + "</code>")
	}
	b.WriteString("\n")
	if v.summary != "" {
		b.WriteString("<pre>" + esc(v.summary) + "</pre>\n")
	} else {
		b.WriteString("<i>(no action text)</i>\n")
	}
	if v.notice != "" {
		b.WriteString("<i>" + esc(v.notice) + "</i>\n")
	}
	for _, f := range v.fields {
		b.WriteString("<b>" + esc(f.label) + ":</b> <code>" + esc(f.value) + "</code>\n")
	}
	for i, f := range v.footer {
		if i > 0 {
			b.WriteString(" · ")
		}
		b.WriteString("<i>" + esc(f.label) + ":</i> <code>" + esc(f.value) + "</code>")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func telegramKeyboard(v view) TelegramKeyboard {
	var kb TelegramKeyboard
	var row []TelegramButton
	for _, bt := range v.buttons {
		data := CallbackData(bt.action, v.requestID)
		if data == "" || len(data) > TelegramMaxCallbackData {
			continue
		}
		row = append(row, TelegramButton{Text: bt.label, CallbackData: data})
		if len(row) == 2 {
			kb.InlineKeyboard = append(kb.InlineKeyboard, row)
			row = nil
		}
	}
	if len(row) > 0 {
		kb.InlineKeyboard = append(kb.InlineKeyboard, row)
	}
	return kb
}
