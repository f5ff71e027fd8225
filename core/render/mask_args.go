package render

// Secrets in a tool call's arguments, masked before the arguments are shown as k=v pairs:
//   - the value under a name that says it is a secret ("password", "api_key",
//     "clientSecret"; a weak name such as "token" or "auth" when the value looks like one);
//   - the value of a name/value pair whose name says so ({"name": "X-Api-Key", "value": …},
//     {"key": "DB_PASSWORD", "val": …}), as headers and environment lists are written;
//   - in a tool that sets or reads secrets (set_secret, create_or_update_secret,
//     vault_write, put_secret_value…), every value under a name that holds contents
//     ("value", "data", "encrypted_value", "plaintext"…), as the --body and --value of a
//     secret-setting command are.

// secretToolWords are words of a tool name that make it a tool that sets or reads secrets.
var secretToolWords = map[string]bool{
	"secret": true, "secrets": true, "secretsmanager": true, "password": true, "passwords": true,
	"credential": true, "credentials": true, "vault": true, "keyvault": true, "keychain": true,
	"keyring": true, "passphrase": true,
}

// contentKeyWords are words of argument names that hold a value rather than name or locate
// one.
var contentKeyWords = map[string]bool{
	"value": true, "val": true, "values": true, "data": true, "string": true, "body": true,
	"content": true, "contents": true, "plaintext": true, "payload": true, "text": true, "blob": true,
}

// pairNameKeys and pairValueKeys are the field names of a name/value pair.
var (
	pairNameKeys  = []string{"name", "Name", "key", "Key", "header", "Header", "variable", "var", "env"}
	pairValueKeys = []string{"value", "Value", "val", "Val"}
)

// maskToolArgs returns a copy of args with their secrets replaced by MaskMark, at any depth.
func maskToolArgs(tool string, args map[string]any) map[string]any {
	secretTool := false
	for _, w := range nameWords(tool) {
		if secretToolWords[w] {
			secretTool = true
		}
	}
	out, _ := maskValue(args, secretTool, 0).(map[string]any)
	return out
}

func maskValue(v any, secretTool bool, depth int) any {
	if depth > 64 {
		return MaskMark // deeper than the server accepts: nothing of it shows
	}
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		pairSecret := false
		for _, nk := range pairNameKeys {
			if n, ok := x[nk].(string); ok && classifyName(n) != nameNone {
				pairSecret = true
			}
		}
		for k, val := range x {
			s, isString := val.(string)
			switch {
			case isString && isPlaceholder(s):
				out[k] = val
			case classifyName(k) == nameStrong:
				out[k] = MaskMark
			case isString && classifyName(k) == nameWeak && (looksRandom(s) || tokenValue(k, s)):
				out[k] = MaskMark
			case isString && pairSecret && isPairValueKey(k):
				out[k] = MaskMark
			case isString && secretTool && anyContentWord(k):
				out[k] = MaskMark
			default:
				out[k] = maskValue(val, secretTool, depth+1)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = maskValue(val, secretTool, depth+1)
		}
		return out
	}
	return v
}

func isPairValueKey(k string) bool {
	for _, v := range pairValueKeys {
		if k == v {
			return true
		}
	}
	return false
}

func anyContentWord(k string) bool {
	for _, w := range nameWords(k) {
		if contentKeyWords[w] {
			return true
		}
	}
	return false
}
