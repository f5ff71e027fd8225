package client

import "github.com/approvebot/approvebot/internal/strictjson"

// checkStrict rejects what encoding/json would silently accept and what a fail-closed
// reader must not (see package strictjson): an answer {"allowed":false,"allowed":true} must
// not read as an allow.
func checkStrict(raw []byte) error { return strictjson.Check(raw) }

// StrictObject decodes one JSON object as approvebot's API would accept it: valid UTF-8,
// no duplicate keys, at most 64 levels deep, nothing after it. Numbers stay json.Number so
// that re-encoding the arguments reproduces them exactly (the fingerprint is over the args).
func StrictObject(raw []byte) (map[string]any, error) { return strictjson.Object(raw) }
