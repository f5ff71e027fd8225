package api

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// apiError is an error safe to show to the caller, with a stable code.
type apiError struct {
	status int
	// retryAfter, in seconds, is sent as Retry-After when positive.
	retryAfter int
	Code       string `json:"code"`
	Message    string `json:"message"`
	// Extra fields for a 409.
	DecidedBy string `json:"decided_by,omitempty"`
	DecidedAt string `json:"decided_at,omitempty"`
	Request   any    `json:"request,omitempty"`
}

func newError(status int, code, msg string) *apiError {
	return &apiError{status: status, Code: code, Message: msg}
}

var (
	errInvalidUTF8  = newError(400, "invalid_utf8", "request body is not valid UTF-8")
	errUnauthorized = newError(401, "unauthorized", "missing or invalid bearer token")
	errForbidden    = newError(403, "forbidden", "this token may not use this endpoint")
	errNotFound     = newError(404, "not_found", "no such request")
	errTooLarge     = newError(413, "body_too_large", "request body is too large")
	errClosing      = newError(503, "shutting_down", "approvebot is shutting down; retry shortly")
	errInternal     = newError(500, "internal", "internal error; the request was not allowed")
)

// Seconds a refused client is told to wait (Retry-After) before trying again.
const (
	retryPendingCap = 5
	retryStore      = 5
)

// storeUnavailable is the answer while the store cannot do what the request needs (a write
// it cannot commit, damaged data): 503, nothing stored, nothing allowed.
func storeUnavailable(detail string) *apiError {
	e := newError(503, "store_unavailable", "approvebot cannot use its database right now ("+detail+"); "+
		"nothing was stored and nothing was allowed: retry later")
	e.retryAfter = retryStore
	return e
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, e *apiError) {
	if e.status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="approvebot"`)
	}
	if e.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.retryAfter))
	}
	writeJSON(w, e.status, map[string]any{"error": e})
}
