package render

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/approvebot/approvebot/core/approval"
)

// BenchmarkRender measures what the gate and the channels do for one ask: the summary
// (mask, harden, cut) and the pending payload of each platform, marshalled to JSON.
func BenchmarkRender(b *testing.B) {
	typical := map[string]any{
		"command": "cd /srv/app && git pull && GITHUB_TOKEN=ghp_" + strings.Repeat("aB3", 12) +
			" ./deploy.sh --env production --api-key " + strings.Repeat("k9Z", 10) + " 2>&1 | tee /tmp/deploy.log",
	}
	// A 1 MB argument: a file write with ordinary source text and a few secrets in it.
	var big strings.Builder
	for big.Len() < 1<<20 {
		big.WriteString("func handler(w http.ResponseWriter, r *http.Request) { // token refresh, see key rotation\n")
		big.WriteString("\tdb, err := sql.Open(\"postgres\", \"postgres://app:s3cretpw@db:5432/app\") // password: hunter22\n")
	}
	huge := map[string]any{"path": "/srv/app/main.go", "content": big.String()[:1<<20]}
	for _, bc := range []struct {
		name    string
		args    map[string]any
		shell   bool
		command string
	}{
		{"typical", typical, true, typical["command"].(string)},
		{"1MB", huge, false, ""},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				summary, truncated, details := Summarize("bash", bc.args, bc.command, bc.shell)
				r := approval.Request{ID: testID, State: approval.StatePending, Tool: "bash", Summary: summary,
					Truncated: truncated, Details: details, Agent: "claude-code", Session: "s1", Cwd: "/srv/app",
					ExpiresAt: time.Unix(1e9, 0)}
				c := CardFor(&r)
				for _, p := range []any{TelegramPending(c, "-100123"), SlackPending(c, "C123"), DiscordPending(c)} {
					if _, err := json.Marshal(p); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkMask measures masking alone on the inputs that stress it: a typical command, a
// long line of shell words, text with invisible separators (folded views), and 100 KB of
// mixed text with newlines.
func BenchmarkMask(b *testing.B) {
	words := strings.Repeat("echo a=b c,d x=y | grep -v z && ", 2000)
	invisible := strings.Repeat("word\u00a0word\u200bword ", 4000)
	mixed := strings.Repeat("curl -H 'Authorization: Bearer abc' https://x \\\n  --data 'k=v' # note\n", 1500)
	for _, bc := range []struct{ name, in string }{
		{"typical", "cd /srv/app && git pull && GITHUB_TOKEN=ghp_" + strings.Repeat("aB3", 12) + " ./deploy.sh --api-key " + strings.Repeat("k9Z", 10)},
		{"words", words},
		{"invisible", invisible},
		{"mixed", mixed},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.in)))
			b.ReportAllocs()
			for b.Loop() {
				Mask(bc.in)
			}
		})
	}
}

// BenchmarkMaskHostile measures masking of 80 KB lines built to make it search the same
// text again for every name (each was quadratic or worse before: "token=" × 13 000 took
// over a minute).
func BenchmarkMaskHostile(b *testing.B) {
	for _, unit := range []string{"password=", "token=", "--token=", "?token=", "machine h login u ", "Bearer ",
		"echo x | docker login --password-stdin | ", "a=password=b "} {
		s := strings.Repeat(unit, 80000/len(unit))
		b.Run(strings.TrimSpace(unit), func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				Mask(s)
			}
		})
	}
}
