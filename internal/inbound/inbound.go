// Package inbound is what the channels' HTTP endpoints (webhooks, signed interactions)
// share: they take POST only, and read a body only up to a cap, answering 405, 413 or 400
// otherwise before anything is parsed.
package inbound

import (
	"errors"
	"io"
	"net/http"
)

// Post reports whether r is a POST, answering 405 with an Allow header when it is not.
func Post(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodPost {
		return true
	}
	w.Header().Set("Allow", http.MethodPost)
	http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	return false
}

// Body reads r's body up to max bytes. A longer body is answered 413 and an unreadable one
// 400; ok is false then.
func Body(w http.ResponseWriter, r *http.Request, max int64) (body []byte, ok bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
			return nil, false
		}
		http.Error(w, "unreadable body", http.StatusBadRequest)
		return nil, false
	}
	return body, true
}
