package render

import "strings"

// Button data: one opaque encoding shared by all platforms (Telegram callback_data, Slack
// action_id and value, Discord custom_id): "ab1:<action>:<request id>". It carries nothing
// but the action and the request id; who pressed is always taken from the platform's own
// presser field, never from the data.
const callbackPrefix = "ab1:"

// RequestIDLen is the length of a request id: 26 lowercase base32 characters (RFC 4648
// alphabet a–z, 2–7), as core/gate makes them.
const RequestIDLen = 26

// maxCallbackLen is the longest data ParseCallback accepts; the longest valid data is
// "ab1:session:" plus an id, 38 bytes, within every platform's limit.
const maxCallbackLen = TelegramMaxCallbackData

// CallbackData encodes a button press. It returns "" for an unknown action or a malformed
// request id, so a card never carries a button that could not be parsed back.
func CallbackData(a Action, requestID string) string {
	if !a.valid() || !ValidRequestID(requestID) {
		return ""
	}
	return callbackPrefix + string(a) + ":" + requestID
}

// ParseCallback decodes button data made by CallbackData and rejects anything else: wrong
// prefix or version, unknown action, malformed id, extra fields, too long.
func ParseCallback(data string) (a Action, requestID string, ok bool) {
	if len(data) > maxCallbackLen || !strings.HasPrefix(data, callbackPrefix) {
		return "", "", false
	}
	rest := data[len(callbackPrefix):]
	act, id, found := strings.Cut(rest, ":")
	if !found {
		return "", "", false
	}
	a = Action(act)
	if !a.valid() || !ValidRequestID(id) {
		return "", "", false
	}
	return a, id, true
}

func (a Action) valid() bool {
	switch a {
	case ActionAllowOnce, ActionAllowSession, ActionAllowAlways, ActionDeny, ActionDetails:
		return true
	}
	return false
}

// ValidRequestID reports whether s has the shape of a request id.
func ValidRequestID(s string) bool {
	if len(s) != RequestIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '2' <= c && c <= '7') {
			return false
		}
	}
	return true
}
