package render

import "strings"

// Slack Block Kit limits.
const (
	// SlackMaxSectionText is the longest text of a section block
	// (https://api.slack.com/reference/block-kit/blocks#section).
	SlackMaxSectionText = 3000
	// SlackMaxHeaderText is the longest text of a header block
	// (https://api.slack.com/reference/block-kit/blocks#header).
	SlackMaxHeaderText = 150
	// SlackMaxContextElements is how many elements a context block holds
	// (https://api.slack.com/reference/block-kit/blocks#context).
	SlackMaxContextElements = 10
	// SlackMaxBlocks is how many blocks one message holds
	// (https://api.slack.com/reference/block-kit/blocks).
	SlackMaxBlocks = 50
	// SlackMaxButtonText is the longest button label
	// (https://api.slack.com/reference/block-kit/block-elements#button).
	SlackMaxButtonText = 75
	// SlackMaxActionID is the longest action_id, and SlackMaxButtonValue the longest value
	// (https://api.slack.com/reference/block-kit/block-elements#button).
	SlackMaxActionID    = 255
	SlackMaxButtonValue = 2000
	// SlackMaxText is the length beyond which Slack truncates a message's top-level text;
	// Slack advises at most 4000 (https://api.slack.com/methods/chat.postMessage#truncating).
	SlackMaxText = 4000
	// SlackMaxTextObject is the longest text of a text object in a context block
	// (https://api.slack.com/reference/block-kit/composition-objects#text).
	SlackMaxTextObject = 3000
)

// SlackText is a text object (https://api.slack.com/reference/block-kit/composition-objects#text).
// User text is sent in code blocks of mrkdwn with verbatim set (no auto-linking of URLs,
// channels or users) and &, <, > escaped, or as plain_text, escaped the same way.
type SlackText struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	Emoji    *bool  `json:"emoji,omitempty"`
	Verbatim *bool  `json:"verbatim,omitempty"`
}

// SlackButton is a button element (https://api.slack.com/reference/block-kit/block-elements#button).
type SlackButton struct {
	Type     string    `json:"type"`
	Text     SlackText `json:"text"`
	ActionID string    `json:"action_id"`
	Value    string    `json:"value"`
	Style    string    `json:"style,omitempty"`
}

// SlackBlock is one layout block: header, section, context or actions. Elements hold
// SlackText (context) or SlackButton (actions).
type SlackBlock struct {
	Type     string     `json:"type"`
	BlockID  string     `json:"block_id,omitempty"`
	Text     *SlackText `json:"text,omitempty"`
	Elements []any      `json:"elements,omitempty"`
}

// SlackMessage is the JSON body of chat.postMessage (https://api.slack.com/methods/chat.postMessage).
// Mentions are never resolved (link_names false, parse none) and URLs never unfurled.
type SlackMessage struct {
	Channel     string       `json:"channel"`
	ThreadTS    string       `json:"thread_ts,omitempty"`
	Text        string       `json:"text"`
	Blocks      []SlackBlock `json:"blocks"`
	LinkNames   bool         `json:"link_names"`
	Parse       string       `json:"parse"`
	UnfurlLinks bool         `json:"unfurl_links"`
	UnfurlMedia bool         `json:"unfurl_media"`
}

// SlackUpdate is the JSON body of chat.update (https://api.slack.com/methods/chat.update).
// Its blocks carry no actions: a resolved card has no buttons.
type SlackUpdate struct {
	Channel   string       `json:"channel"`
	TS        string       `json:"ts"`
	Text      string       `json:"text"`
	Blocks    []SlackBlock `json:"blocks"`
	LinkNames bool         `json:"link_names"`
	Parse     string       `json:"parse"`
}

// SlackEscape escapes the three characters Slack treats as control characters in any text
// (https://api.slack.com/reference/surfaces/formatting#escaping): it defuses <!channel>,
// <!here>, <@U…>, <#C…> and <url|text> links.
func SlackEscape(s string) string {
	if !strings.ContainsAny(s, "&<>") {
		return s
	}
	return slackEscaper.Replace(s)
}

var slackEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// breakTicks puts a zero-width space after every backtick of user text, so it can never
// form a run of backticks that would close our code block or span. The visible text is
// unchanged; input zero-width characters are shown as [U+200B] by Clean, so every invisible
// character in a payload is one of ours.
func breakTicks(s string) string {
	if !strings.Contains(s, "`") {
		return s
	}
	return strings.ReplaceAll(s, "`", "`\u200b")
}

func slackCode(s string) string { return "```\n" + breakTicks(SlackEscape(s)) + "\n```" }

func boolPtr(b bool) *bool { return &b }

func slackPlain(s string) SlackText {
	return SlackText{Type: "plain_text", Text: SlackEscape(s), Emoji: boolPtr(false)}
}

func slackMrkdwn(s string) SlackText {
	return SlackText{Type: "mrkdwn", Text: s, Verbatim: boolPtr(true)}
}

// SlackPending is the chat.postMessage body of a pending card.
func SlackPending(c Card, channel string) SlackMessage {
	v := pendingView(c)
	b := fit(v, slackBlocks, slackBlocksOK)
	return SlackMessage{
		Channel:     channel,
		Text:        slackFallback(v),
		Blocks:      b,
		Parse:       "none",
		UnfurlLinks: false,
		UnfurlMedia: false,
	}
}

// SlackResolved is the chat.update body that turns a posted card (channel, ts) into its
// resolved or expired form, without buttons.
func SlackResolved(c Card, channel, ts string) SlackUpdate {
	v := resolvedView(c)
	return SlackUpdate{
		Channel: channel,
		TS:      ts,
		Text:    slackFallback(v),
		Blocks:  fit(v, slackBlocks, slackBlocksOK),
		Parse:   "none",
	}
}

// SlackDetails are the messages (thread replies to the card when threadTS is set) that show
// the full redacted action of a request, each section within SlackMaxSectionText.
func SlackDetails(channel, threadTS, requestID, details string) []SlackMessage {
	text := Redact(details, MaxDetails+100)
	const fence = len("```\n\n```")
	chunks, left := chunkRunes(text, SlackMaxSectionText-fence, maxDetailMessages*4, func(r rune) int {
		return utf16Len(breakTicks(SlackEscape(string(r))))
	})
	id := Clean(requestID, RequestIDLen)
	var out []SlackMessage
	const perMessage = 10
	for i := 0; i < len(chunks); i += perMessage {
		end := min(i+perMessage, len(chunks))
		title := "📄 Details of request " + id + " (" + itoa(i/perMessage+1) + "/" + itoa((len(chunks)+perMessage-1)/perMessage) + ")"
		blocks := []SlackBlock{{Type: "context", Elements: []any{slackPlain(title)}}}
		for _, ch := range chunks[i:end] {
			t := slackMrkdwn(slackCode(ch))
			blocks = append(blocks, SlackBlock{Type: "section", Text: &t})
		}
		if end == len(chunks) && left > 0 {
			blocks = append(blocks, SlackBlock{Type: "context", Elements: []any{slackPlain("… and more, not shown: deny if you cannot see enough.")}})
		}
		out = append(out, SlackMessage{
			Channel: channel, ThreadTS: threadTS, Text: SlackEscape(title), Blocks: blocks, Parse: "none",
		})
	}
	return out
}

// slackFallback is the top-level text, shown in notifications: escaped, one line, short.
func slackFallback(v view) string {
	s := v.icon + " " + v.title
	if v.tool != "" {
		s += " · " + v.tool
	}
	if v.summary != "" {
		s += ": " + v.summary
	}
	s, _ = Cut(s, 300)
	return SlackEscape(s)
}

func slackBlocksOK(bs []SlackBlock) bool { return slackCheck(bs) == "" }

// slackCheck returns what in bs breaks a Block Kit limit, or "".
func slackCheck(bs []SlackBlock) string {
	if len(bs) > SlackMaxBlocks {
		return "too many blocks"
	}
	for _, b := range bs {
		switch b.Type {
		case "header":
			if b.Text == nil || utf16Len(b.Text.Text) > SlackMaxHeaderText {
				return "header text"
			}
		case "section":
			if b.Text == nil || utf16Len(b.Text.Text) > SlackMaxSectionText {
				return "section text"
			}
		case "context":
			if len(b.Elements) > SlackMaxContextElements {
				return "context elements"
			}
			for _, e := range b.Elements {
				if t, ok := e.(SlackText); ok && utf16Len(t.Text) > SlackMaxTextObject {
					return "context text"
				}
			}
		case "actions":
			for _, e := range b.Elements {
				bt, ok := e.(SlackButton)
				if !ok || utf16Len(bt.Text.Text) > SlackMaxButtonText || len(bt.ActionID) > SlackMaxActionID || len(bt.Value) > SlackMaxButtonValue {
					return "button"
				}
			}
		}
	}
	return ""
}

func slackBlocks(v view) []SlackBlock {
	title := v.icon + " " + v.title
	if v.tool != "" {
		title += " · " + v.tool
	}
	title, _ = Cut(title, SlackMaxHeaderText/2) // escaping may lengthen it
	for utf16Len(SlackEscape(title)) > SlackMaxHeaderText {
		title, _ = Cut(title, len([]rune(title))-8)
	}
	head := SlackText{Type: "plain_text", Text: SlackEscape(title), Emoji: boolPtr(false)}
	blocks := []SlackBlock{{Type: "header", Text: &head}}
	if v.summary != "" {
		t := slackMrkdwn(slackCode(v.summary))
		blocks = append(blocks, SlackBlock{Type: "section", Text: &t})
	} else {
		t := slackMrkdwn("_(no action text)_")
		blocks = append(blocks, SlackBlock{Type: "section", Text: &t})
	}
	if v.notice != "" {
		blocks = append(blocks, SlackBlock{Type: "context", Elements: []any{slackMrkdwn(SlackEscape(v.notice))}})
	}
	blocks = append(blocks, slackFields(v.fields)...)
	blocks = append(blocks, slackFields(v.footer)...)
	if len(v.buttons) > 0 {
		var els []any
		for _, bt := range v.buttons {
			data := CallbackData(bt.action, v.requestID)
			if data == "" {
				continue
			}
			b := SlackButton{Type: "button", Text: SlackText{Type: "plain_text", Text: bt.label, Emoji: boolPtr(false)}, ActionID: data, Value: data}
			switch bt.style {
			case stylePrimary:
				b.Style = "primary"
			case styleDanger:
				b.Style = "danger"
			}
			els = append(els, b)
		}
		if len(els) > 0 {
			blocks = append(blocks, SlackBlock{Type: "actions", BlockID: callbackPrefix + v.requestID, Elements: els})
		}
	}
	return blocks
}

// slackFields renders label/value pairs as context blocks: the label as mrkdwn (ours), the
// value as plain_text, which Slack never formats, links or resolves mentions in.
func slackFields(fs []field) []SlackBlock {
	var blocks []SlackBlock
	var els []any
	for _, f := range fs {
		if len(els)+2 > SlackMaxContextElements {
			blocks = append(blocks, SlackBlock{Type: "context", Elements: els})
			els = nil
		}
		els = append(els, slackMrkdwn("*"+SlackEscape(f.label)+":*"), slackPlain(f.value))
	}
	if len(els) > 0 {
		blocks = append(blocks, SlackBlock{Type: "context", Elements: els})
	}
	return blocks
}
