// Package render turns an agent's raw action into what a human may see: a masked, hardened,
// one-line summary of at most 200 characters (summary.go, mask.go with the catalog in
// secrets.go, the command-line rules in mask_shell.go and the folded views in
// mask_fold.go, harden.go), the channel-neutral card (card.go, layout.go), and the exact
// request bodies of each platform's API for a pending, resolved or expired card and for the
// "details" view (telegram.go, slack.go, discord.go, cards.go), built as pure functions with
// every platform limit a named constant. Button data is one opaque encoding for all
// platforms (callback.go). Nothing here touches what is executed or fingerprinted, and
// nothing here imports a chat SDK or does I/O.
package render

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxSummary is the longest summary a card shows, in characters (runes).
const MaxSummary = 200

// Ellipsis marks a cut.
const Ellipsis = "…"

// NewlineMark replaces line breaks so a command cannot draw a fake second line.
const NewlineMark = "⏎"

// MaxDetails is the longest "details" text, in characters (runes): the full redacted action
// shown on demand when the summary was cut. Longer actions end with a note saying how much
// was left out, so nothing is silently hidden; the approver can still deny.
const MaxDetails = 12000

// maxRaw is how much of a raw action is masked and hardened at all. Hardening can at most
// halve the number of characters (CRLF → one mark), so the first MaxDetails characters shown
// come from at most 2·MaxDetails raw characters (≤ 8·MaxDetails bytes); the margin beyond
// keeps any secret that straddles the cut whole, so it is still recognised and masked.
const maxRaw = 8*MaxDetails + 16<<10 // = len(rawPrefix(huge, MaxDetails))

// Summarize renders the action of a call for a human: the shell command itself for shell
// tools (isShell), otherwise k=v pairs of the arguments in key order, with the values of
// secret-named keys masked. It returns the summary (masked, hardened, flattened, cut to
// MaxSummary characters with a visible ellipsis), whether it was cut, and the details text:
// the same, cut only at MaxDetails.
func Summarize(tool string, args map[string]any, command string, isShell bool) (summary string, truncated bool, details string) {
	var text string
	if isShell {
		text = command
	} else {
		text = KV(maskToolArgs(tool, args))
	}
	return summarizeText(text)
}

func summarizeText(text string) (summary string, truncated bool, details string) {
	rawLen := len(text)
	text = rawPrefix(text, MaxDetails)
	full := Clean(Mask(text), -1)
	details, dcut := Cut(full, MaxDetails)
	if dcut || rawLen > len(text) {
		details += " [cut: the action is " + strconv.Itoa(rawLen) + " bytes]"
	}
	summary, truncated = Cut(full, MaxSummary)
	return summary, truncated || rawLen > len(text), details
}

// KV renders arguments as space-separated k=v pairs in sorted key order; nested values are
// compact JSON. A string that is empty or contains spaces, quotes, '=' or control characters
// is quoted (JSON), so that one value can never pass for several pairs.
func KV(args map[string]any) string {
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		writeKVString(&b, k)
		b.WriteByte('=')
		switch v := args[k].(type) {
		case string:
			writeKVString(&b, v)
		default:
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(v); err != nil {
				b.WriteString("?")
			} else {
				b.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
			}
		}
	}
	return b.String()
}

func writeKVString(b *strings.Builder, s string) {
	if s != "" && !strings.ContainsFunc(s, needsQuote) {
		b.WriteString(s)
		return
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	b.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

func needsQuote(r rune) bool {
	return r == '=' || r == '"' || r == '\'' || r == '\\' || unicode.IsSpace(r) || unicode.IsControl(r) ||
		unicode.Is(unicode.Cf, r) || r == utf8.RuneError
}

// rawPrefix returns as much of raw text as can show in max characters once masked and
// hardened, plus a margin, so that a secret crossing the cut is still whole where it shows
// (see maxRaw). Hardening at most halves the number of characters (CRLF → one mark).
func rawPrefix(s string, max int) string {
	limit := 8*max + 16<<10
	if len(s) <= limit {
		return s
	}
	for limit > 0 && !utf8.RuneStart(s[limit]) {
		limit--
	}
	return s[:limit]
}

// Redact is what every string shown to a human or written to a log goes through: Mask,
// then Clean to max characters (max < 0: no cut). Only a bounded prefix of s is processed,
// so a huge input costs no more than what can show.
func Redact(s string, max int) string {
	if max >= 0 {
		s = rawPrefix(s, max)
	}
	return Clean(Mask(s), max)
}

// Clean makes s safe to show on one line — invalid UTF-8 replaced, line breaks flattened to
// NewlineMark, control, invisible and bidi characters made visible, mixed-script look-alikes
// flagged (see harden.go) — and cuts it to max characters (max < 0: no cut). Clean does not
// mask secrets: callers mask first (Mask needs the original line structure), as
// Summarize and CardFor do.
func Clean(s string, max int) string {
	out := lookalikes(harden(s))
	if max >= 0 {
		out, _ = Cut(out, max)
	}
	return out
}

// Cut shortens s to at most max runes, ending with a visible ellipsis when cut.
func Cut(s string, max int) (string, bool) {
	if len(s) <= max || utf8.RuneCountInString(s) <= max {
		return s, false
	}
	if max <= 0 {
		return "", true
	}
	n := 0
	for i := range s {
		if n == max-1 {
			return s[:i] + Ellipsis, true
		}
		n++
	}
	return s, false
}

// CutMiddle shortens s to at most max runes by replacing its middle with an ellipsis, so
// that both ends stay visible (a path's deepest directories are the telling ones). It is
// idempotent: a string of at most max runes is returned unchanged.
func CutMiddle(s string, max int) string {
	n := utf8.RuneCountInString(s)
	if n <= max {
		return s
	}
	if max <= 1 {
		out, _ := Cut(s, max)
		return out
	}
	tail := (max - 1) / 2
	head := max - 1 - tail
	runes := []rune(s)
	return string(runes[:head]) + Ellipsis + string(runes[n-tail:])
}

// Mask hides secrets in text that will be shown or logged (summaries, details, reasons,
// logs, the audit trail): every entry of the catalog in secrets.go. The recognisable part
// stays ("ghp_…[masked]", "password=[masked]", "-----BEGIN RSA PRIVATE KEY-----…[masked]"),
// never any of the secret's tail. It never touches what is executed or fingerprinted.
func Mask(s string) string {
	return maskSecrets(s)
}
