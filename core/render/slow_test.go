package render

import (
	"strings"
	"testing"
	"time"
)

// raceEnabled is set by race_test.go under -race, which slows everything tenfold.
var raceEnabled bool

// TestNoQuadraticBlowUp feeds adversarial repetitions of what the catalog and the hardening
// look for; each must render in well under a second.
func TestNoQuadraticBlowUp(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("timing test: not with -short or -race")
	}
	inputs := map[string]string{
		"names":         strings.Repeat("token ", 20000),
		"names no sep":  strings.Repeat("passwordkeytoken", 8000),
		"open quotes":   strings.Repeat("password=\"abc ", 10000),
		"open quote nl": strings.Repeat("password=\"abc\n", 10000),
		"flags":         strings.Repeat(" --token ", 15000),
		"schemes":       strings.Repeat("a://", 30000),
		"pem":           strings.Repeat("-----BEGIN PRIVATE KEY-----", 4000),
		"dots":          strings.Repeat("M.abcdef.", 15000),
		"curl":          strings.Repeat("curl -u ", 15000),
		"bearer":        strings.Repeat("Bearer ", 20000),
		"auth":          strings.Repeat("Authorization: ", 8000),
		"host dots":     strings.Repeat("а.", 50000),
		"marks":         "a" + strings.Repeat("\u0301", 100000),
		"one token":     strings.Repeat("аb", 100000),
		"ghp":           strings.Repeat("ghp_", 30000),
		"key=":          strings.Repeat("&key=", 25000),
	}
	for name, in := range inputs {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			c, details := cardOf(in, true)
			_ = PendingCards(c, Chats{})
			_ = TelegramDetails("1", testID, details, 0)
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("%s took %v", name, d)
			}
		})
	}
}
