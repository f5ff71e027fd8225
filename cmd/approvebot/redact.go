package main

import (
	"log/slog"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/render"
)

type approvalAuditEntry = approval.AuditEntry

// redactAttr passes every logged string through the same masker as the cards, so a secret
// that reaches a log line (an error text, a summary) is masked there too.
func redactAttr(_ []string, a slog.Attr) slog.Attr {
	switch a.Key {
	case "request_id", "outcome", "source", "summary", "time", "level", "msg":
		// Ids and enums carry no secrets; the summary was masked when it was made.
		return a
	}
	if a.Value.Kind() == slog.KindString {
		return slog.String(a.Key, render.Mask(a.Value.String()))
	}
	if a.Value.Kind() == slog.KindAny {
		if err, ok := a.Value.Any().(error); ok {
			return slog.String(a.Key, render.Mask(err.Error()))
		}
	}
	return a
}
