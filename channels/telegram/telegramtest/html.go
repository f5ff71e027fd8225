package telegramtest

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// htmlTags are the tags Telegram's HTML parse mode accepts
// (https://core.telegram.org/bots/api#html-style).
var htmlTags = map[string]bool{
	"b": true, "strong": true, "i": true, "em": true, "u": true, "ins": true, "s": true,
	"strike": true, "del": true, "span": true, "tg-spoiler": true, "a": true, "code": true,
	"pre": true, "blockquote": true, "tg-emoji": true,
}

// visibleText returns the text a human sees once entities are parsed, with the real API's
// errors for bad markup, an empty text and a text over MaxText.
func visibleText(text, parseMode string) (string, error) {
	plain := text
	switch strings.ToLower(parseMode) {
	case "":
	case "html":
		var err error
		if plain, err = parseHTML(text); err != nil {
			return "", err
		}
	case "markdown", "markdownv2":
		// Accepted without validation: approvebot never uses them.
	default:
		return "", badRequest("Bad Request: unsupported parse_mode")
	}
	if !utf8.ValidString(text) {
		return "", badRequest("Bad Request: text must be encoded in UTF-8")
	}
	if strings.TrimSpace(plain) == "" {
		return "", badRequest(ErrTextEmpty)
	}
	if utf16Len(plain) > MaxText {
		return "", badRequest(ErrTextTooLong)
	}
	return plain, nil
}

func entityError(format string, args ...any) error {
	return badRequest("Bad Request: can't parse entities: " + fmt.Sprintf(format, args...))
}

// parseHTML strips Telegram HTML to its visible text, rejecting unknown tags, unmatched or
// unclosed tags and a bare '<', as the real parser does.
func parseHTML(s string) (string, error) {
	var out strings.Builder
	var open []string
	for i := 0; i < len(s); {
		c := s[i]
		switch c {
		case '<':
			end := strings.IndexByte(s[i:], '>')
			if end < 0 {
				return "", entityError("Unclosed start tag at byte offset %d", i)
			}
			tag := s[i+1 : i+end]
			if strings.HasPrefix(tag, "/") {
				name := strings.ToLower(strings.TrimSpace(tag[1:]))
				if len(open) == 0 {
					return "", entityError("Unexpected end tag at byte offset %d", i)
				}
				if top := open[len(open)-1]; top != name {
					return "", entityError("Unmatched end tag at byte offset %d, expected \"</%s>\", found \"</%s>\"", i, top, name)
				}
				open = open[:len(open)-1]
			} else {
				name, attrs, _ := strings.Cut(tag, " ")
				name = strings.ToLower(name)
				if name == "" || !htmlTags[name] {
					return "", entityError("Unsupported start tag \"%s\" at byte offset %d", name, i)
				}
				if name == "span" && !strings.Contains(attrs, `class="tg-spoiler"`) {
					return "", entityError("Tag \"span\" must have class \"tg-spoiler\" at byte offset %d", i)
				}
				if name == "pre" || name == "code" {
					for _, o := range open {
						if o == "pre" && name == "pre" || o == "code" {
							return "", entityError("Can't nest tag \"%s\" inside \"%s\" at byte offset %d", name, o, i)
						}
					}
				}
				open = append(open, name)
			}
			i += end + 1
		case '&':
			semi := strings.IndexByte(s[i:], ';')
			if semi > 0 && semi <= 10 {
				if r, ok := htmlEntity(s[i+1 : i+semi]); ok {
					out.WriteString(r)
					i += semi + 1
					continue
				}
			}
			out.WriteByte('&')
			i++
		case '>':
			// Telegram accepts a bare '>' as text.
			out.WriteByte('>')
			i++
		default:
			out.WriteByte(c)
			i++
		}
	}
	if len(open) > 0 {
		return "", entityError("Can't find end tag corresponding to start tag \"%s\"", open[len(open)-1])
	}
	return out.String(), nil
}

func htmlEntity(name string) (string, bool) {
	switch name {
	case "lt":
		return "<", true
	case "gt":
		return ">", true
	case "amp":
		return "&", true
	case "quot":
		return `"`, true
	}
	if n, ok := strings.CutPrefix(name, "#"); ok {
		base := 10
		if h, ok := strings.CutPrefix(strings.ToLower(n), "x"); ok {
			n, base = h, 16
		}
		v, err := strconv.ParseUint(n, base, 32)
		if err != nil || !utf8.ValidRune(rune(v)) {
			return "", false
		}
		return string(rune(v)), true
	}
	return "", false
}
