package slack_test

import (
	"testing"

	"github.com/approvebot/approvebot/internal/testserver"
)

// TestMain runs the end-to-end tests, which mostly wait, several at a time.
func TestMain(m *testing.M) { testserver.Main(m) }
