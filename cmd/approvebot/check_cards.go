package main

import "github.com/approvebot/approvebot/core/approval"

// checkCards returns, per platform, the exact request body its API would receive for the
// pending card of rec.
func checkCards(rec *approval.Request) any {
	return map[string]any{}
}
