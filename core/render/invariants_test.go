package render

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/approvebot/approvebot/core/approval"
)

// Checks shared by the injection tests and the fuzz tests: each returns an error describing
// the first way a payload could let user text act as markup, mention, link, forge a line or
// break a platform limit.

// forbiddenRune reports characters that must never reach a card: controls (other than the
// newlines of our own layout), format characters other than the zero-width joiner and space
// that the Discord and Slack escapers insert, line and paragraph separators.
func forbiddenRune(r rune, allowZW bool) bool {
	if r == '\n' {
		return false
	}
	if allowZW && (r == 0x200B || r == 0x200D) {
		return false
	}
	return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == 0x2028 || r == 0x2029 ||
		unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r)
}

func checkText(where, s string, allowZW bool) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s: invalid UTF-8", where)
	}
	for _, r := range s {
		if forbiddenRune(r, allowZW) {
			return fmt.Errorf("%s: forbidden character %U in %q", where, r, s)
		}
	}
	return nil
}

// checkSummary asserts the summary invariants.
func checkSummary(s string) error {
	if n := utf8.RuneCountInString(s); n > MaxSummary {
		return fmt.Errorf("summary has %d characters", n)
	}
	if strings.Contains(s, "\n") {
		return fmt.Errorf("summary has a line break")
	}
	return checkText("summary", s, false)
}

// ---- Telegram ----------------------------------------------------------------------------

var telegramTags = map[string]bool{"b": true, "/b": true, "i": true, "/i": true, "code": true, "/code": true, "pre": true, "/pre": true}

// telegramLinePrefixes are how every line of our Telegram layout starts.
var telegramLinePrefixes = []string{"🔐 <b>", "✅ <b>", "⛔ <b>", "⌛ <b>", "🚫 <b>", "🔒 <b>", "📄 <b>", "<pre>", "<i>", "<b>"}

func checkTelegramText(text string) error {
	if text == "" {
		return fmt.Errorf("telegram: empty text")
	}
	if n := utf16Len(text); n > TelegramMaxText {
		return fmt.Errorf("telegram: text is %d > %d", n, TelegramMaxText)
	}
	if err := checkText("telegram", text, false); err != nil {
		return err
	}
	for _, line := range strings.Split(text, "\n") {
		ok := false
		for _, p := range telegramLinePrefixes {
			if strings.HasPrefix(line, p) {
				ok = true
			}
		}
		if !ok {
			return fmt.Errorf("telegram: line not of our layout: %q", line)
		}
	}
	var stack []string
	inCode := 0
	for i := 0; i < len(text); i++ {
		switch c := text[i]; c {
		case '<':
			j := strings.IndexByte(text[i:], '>')
			if j < 0 {
				return fmt.Errorf("telegram: unclosed tag at %d", i)
			}
			tag := text[i+1 : i+j]
			if !telegramTags[tag] {
				return fmt.Errorf("telegram: tag <%s>", tag)
			}
			if strings.HasPrefix(tag, "/") {
				if len(stack) == 0 || stack[len(stack)-1] != tag[1:] {
					return fmt.Errorf("telegram: unbalanced </%s>", tag[1:])
				}
				stack = stack[:len(stack)-1]
				if tag == "/code" || tag == "/pre" {
					inCode--
				}
			} else {
				stack = append(stack, tag)
				if tag == "code" || tag == "pre" {
					inCode++
				}
			}
			i += j
		case '>':
			return fmt.Errorf("telegram: raw '>'")
		case '&':
			ok := false
			for _, e := range []string{"&lt;", "&gt;", "&amp;", "&#34;", "&#39;"} {
				if strings.HasPrefix(text[i:], e) {
					ok = true
					i += len(e) - 1
					break
				}
			}
			if !ok {
				return fmt.Errorf("telegram: bare '&' at %d", i)
			}
		default:
			// Outside code, Telegram would detect entities: @mentions, /commands,
			// #hashtags, $cashtags and URLs. Our own text has none.
			if inCode == 0 && (c == '@' || c == '/' && i+1 < len(text) && isASCIILetter(text[i+1]) ||
				c == '#' || c == '$' || strings.HasPrefix(text[i:], "://")) {
				return fmt.Errorf("telegram: entity-like %q outside code in %q", text[i:min(i+12, len(text))], text)
			}
		}
	}
	if len(stack) > 0 {
		return fmt.Errorf("telegram: unclosed <%s>", stack[len(stack)-1])
	}
	return nil
}

func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func checkTelegramKeyboard(kb *TelegramKeyboard) error {
	if kb == nil {
		return nil
	}
	for _, row := range kb.InlineKeyboard {
		if len(row) > TelegramMaxButtonsPerRow {
			return fmt.Errorf("telegram: %d buttons in a row", len(row))
		}
		for _, b := range row {
			if len(b.CallbackData) > TelegramMaxCallbackData {
				return fmt.Errorf("telegram: callback_data %d bytes", len(b.CallbackData))
			}
			if _, _, ok := ParseCallback(b.CallbackData); !ok {
				return fmt.Errorf("telegram: callback_data %q does not parse", b.CallbackData)
			}
		}
	}
	return nil
}

// ---- Slack -------------------------------------------------------------------------------

func checkSlackTextObject(t SlackText, where string) error {
	if err := checkText("slack "+where, t.Text, true); err != nil {
		return err
	}
	if strings.ContainsAny(t.Text, "<>") {
		return fmt.Errorf("slack %s: raw '<' or '>' in %q", where, t.Text)
	}
	for i := 0; i < len(t.Text); i++ {
		if t.Text[i] == '&' && !strings.HasPrefix(t.Text[i:], "&amp;") && !strings.HasPrefix(t.Text[i:], "&lt;") && !strings.HasPrefix(t.Text[i:], "&gt;") {
			return fmt.Errorf("slack %s: bare '&'", where)
		}
	}
	switch t.Type {
	case "plain_text":
		if t.Emoji == nil || *t.Emoji {
			return fmt.Errorf("slack %s: plain_text must set emoji false", where)
		}
	case "mrkdwn":
		if t.Verbatim == nil || !*t.Verbatim {
			return fmt.Errorf("slack %s: mrkdwn must be verbatim", where)
		}
		if strings.HasPrefix(t.Text, "```\n") {
			inner, ok := strings.CutSuffix(strings.TrimPrefix(t.Text, "```\n"), "\n```")
			if !ok || strings.Contains(inner, "``") || strings.Contains(inner, "\n") {
				return fmt.Errorf("slack %s: code block broken: %q", where, t.Text)
			}
		} else if strings.ContainsAny(t.Text, "@`\n") || strings.Contains(t.Text, "://") {
			return fmt.Errorf("slack %s: user text outside a code block or plain_text: %q", where, t.Text)
		}
	default:
		return fmt.Errorf("slack %s: text type %q", where, t.Type)
	}
	return nil
}

func checkSlackBlocks(fallback string, blocks []SlackBlock, wantButtons bool) error {
	if problem := slackCheck(blocks); problem != "" {
		return fmt.Errorf("slack: limit: %s", problem)
	}
	if utf16Len(fallback) > SlackMaxText || strings.ContainsAny(fallback, "<>\n") {
		return fmt.Errorf("slack: fallback text %q", fallback)
	}
	if err := checkText("slack fallback", fallback, false); err != nil {
		return err
	}
	buttons := 0
	for i, b := range blocks {
		where := fmt.Sprintf("block %d (%s)", i, b.Type)
		if b.Text != nil {
			if err := checkSlackTextObject(*b.Text, where); err != nil {
				return err
			}
		}
		for _, e := range b.Elements {
			switch x := e.(type) {
			case SlackText:
				if err := checkSlackTextObject(x, where); err != nil {
					return err
				}
			case SlackButton:
				buttons++
				if _, _, ok := ParseCallback(x.ActionID); !ok || x.Value != x.ActionID {
					return fmt.Errorf("slack: button data %q / %q", x.ActionID, x.Value)
				}
			default:
				return fmt.Errorf("slack: element %T", e)
			}
		}
	}
	if wantButtons != (buttons > 0) {
		return fmt.Errorf("slack: %d buttons, want buttons %v", buttons, wantButtons)
	}
	return nil
}

// ---- Discord -----------------------------------------------------------------------------

// discordStripCode removes our code blocks and spans (as Discord would parse them: a run of
// n backticks closes at the next run of exactly n) and returns what is left, with the code
// replaced by "CODE".
func discordStripCode(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '`' {
			b.WriteByte(s[i])
			i++
			continue
		}
		n := 0
		for i+n < len(s) && s[i+n] == '`' {
			n++
		}
		open := s[i : i+n]
		j := i + n
		closed := false
		for j < len(s) {
			k := strings.Index(s[j:], open)
			if k < 0 {
				break
			}
			k += j
			m := 0
			for k+m < len(s) && s[k+m] == '`' {
				m++
			}
			if m == n {
				j = k + n
				closed = true
				break
			}
			j = k + m
		}
		if !closed {
			return "", fmt.Errorf("discord: unclosed code %q at %d", open, i)
		}
		b.WriteString("CODE")
		i = j
	}
	return b.String(), nil
}

var discordLinePrefixes = []string{"🔐 **", "✅ **", "⛔ **", "⌛ **", "🚫 **", "🔒 **", "📄 **", "CODE", "*", "**", "Request: "}

func checkDiscord(m DiscordMessage, wantButtons bool) error {
	if n := utf16Len(m.Content); n > DiscordMaxContent || n == 0 {
		return fmt.Errorf("discord: content length %d", n)
	}
	if err := checkText("discord", m.Content, true); err != nil {
		return err
	}
	for i, r := range m.Content {
		if r == '@' && !strings.HasPrefix(m.Content[i+1:], zwj) {
			return fmt.Errorf("discord: live '@' in %q", m.Content)
		}
	}
	j, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if !strings.Contains(string(j), `"allowed_mentions":{"parse":[]`) {
		return fmt.Errorf("discord: allowed_mentions not an explicit empty parse list: %s", j)
	}
	if m.Flags&DiscordFlagSuppressEmbeds == 0 {
		return fmt.Errorf("discord: embeds not suppressed")
	}
	rest, err := discordStripCode(m.Content)
	if err != nil {
		return err
	}
	if strings.ContainsAny(rest, "@<>[]`|~_\\#") || strings.Contains(rest, "://") {
		return fmt.Errorf("discord: markup-capable text outside code: %q", rest)
	}
	for _, line := range strings.Split(rest, "\n") {
		ok := false
		for _, p := range discordLinePrefixes {
			if strings.HasPrefix(line, p) {
				ok = true
			}
		}
		if !ok {
			return fmt.Errorf("discord: line not of our layout: %q", line)
		}
	}
	buttons := 0
	for _, row := range m.Components {
		if row.Type != DiscordComponentActionRow || len(row.Components) > DiscordMaxButtonsPerRow {
			return fmt.Errorf("discord: bad action row %+v", row)
		}
		for _, b := range row.Components {
			buttons++
			if len(b.CustomID) > DiscordMaxCustomID || utf16Len(b.Label) > DiscordMaxButtonLabel {
				return fmt.Errorf("discord: button limits %+v", b)
			}
			if _, _, ok := ParseCallback(b.CustomID); !ok {
				return fmt.Errorf("discord: custom_id %q does not parse", b.CustomID)
			}
		}
	}
	if m.Components == nil {
		return fmt.Errorf("discord: components must be an explicit list")
	}
	if wantButtons != (buttons > 0) {
		return fmt.Errorf("discord: %d buttons, want buttons %v", buttons, wantButtons)
	}
	return nil
}

// ---- all platforms -----------------------------------------------------------------------

const testID = "abcdefghijklmnopqrstuvwxyz"

// cardOf builds a card whose every user string is s (the summary through Summarize).
func cardOf(s string, resolved bool) (Card, string) {
	summary, truncated, details := Summarize("bash", nil, s, true)
	r := &approval.Request{
		ID: testID, State: approval.StatePending, Tool: s, Summary: summary, Truncated: truncated,
		Agent: s, Session: s, Cwd: s, AgentReason: s, AskReason: s, Rule: s, ShowAllowAlways: true,
		CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), ExpiresAt: time.Date(2026, 1, 2, 3, 6, 5, 0, time.UTC),
	}
	if resolved {
		r.State, r.Outcome, r.Source, r.DecidedBy, r.Reason = approval.StateDenied, approval.OutcomeDeny, approval.SourceHuman, s, s
		r.DecidedAt = time.Date(2026, 1, 2, 3, 5, 0, 0, time.UTC)
	}
	return CardFor(r), details
}

// checkAllPayloads renders c and details on every platform and checks every invariant.
func checkAllPayloads(c Card, details string) error {
	pending := c.Resolution == nil
	tg := TelegramPending(c, "-1001234567890")
	if err := checkTelegramText(tg.Text); err != nil {
		return err
	}
	if err := checkTelegramKeyboard(tg.ReplyMarkup); err != nil {
		return err
	}
	if pending != (tg.ReplyMarkup != nil) && ValidRequestID(c.RequestID) {
		return fmt.Errorf("telegram: pending %v but keyboard %v", pending, tg.ReplyMarkup != nil)
	}
	if !tg.LinkPreviewOptions.IsDisabled || tg.ParseMode != "HTML" {
		return fmt.Errorf("telegram: previews or parse mode")
	}
	ed := TelegramResolved(c, "-1001234567890", 42)
	if err := checkTelegramText(ed.Text); err != nil {
		return err
	}
	if len(ed.ReplyMarkup.InlineKeyboard) != 0 {
		return fmt.Errorf("telegram: resolved card has buttons")
	}
	for _, m := range TelegramDetails("-100", c.RequestID, details, 42) {
		if err := checkTelegramText(m.Text); err != nil {
			return fmt.Errorf("details: %w", err)
		}
	}

	sl := SlackPending(c, "C123")
	if err := checkSlackBlocks(sl.Text, sl.Blocks, pending && ValidRequestID(c.RequestID)); err != nil {
		return err
	}
	if sl.LinkNames || sl.UnfurlLinks || sl.UnfurlMedia || sl.Parse != "none" {
		return fmt.Errorf("slack: link_names/unfurl/parse")
	}
	su := SlackResolved(c, "C123", "1700000000.000100")
	if err := checkSlackBlocks(su.Text, su.Blocks, false); err != nil {
		return fmt.Errorf("resolved: %w", err)
	}
	for _, m := range SlackDetails("C123", "1.2", c.RequestID, details) {
		if err := checkSlackBlocks(m.Text, m.Blocks, false); err != nil {
			return fmt.Errorf("details: %w", err)
		}
	}

	if err := checkDiscord(DiscordPending(c), pending && ValidRequestID(c.RequestID)); err != nil {
		return err
	}
	if err := checkDiscord(DiscordResolved(c), false); err != nil {
		return fmt.Errorf("resolved: %w", err)
	}
	for _, m := range DiscordDetails(c.RequestID, details, "99") {
		if err := checkDiscord(m, false); err != nil {
			return fmt.Errorf("details: %w", err)
		}
	}
	for name, v := range map[string]any{"telegram": tg, "slack": sl, "discord": DiscordPending(c), "edit": ed, "update": su} {
		if _, err := json.Marshal(v); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

func mustJSON(t interface{ Fatal(...any) }, v any) string {
	b, err := jsonMarshalNoEscape(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// jsonMarshalNoEscape is json.Marshal without HTML escaping (so '&', '<', '>' read as sent
// by a client that does not escape them; both forms are valid JSON).
func jsonMarshalNoEscape(v any) ([]byte, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return []byte(b.String()), err
}
