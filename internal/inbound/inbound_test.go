package inbound

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestPostAndBody(t *testing.T) {
	cases := []struct {
		name, method, body string
		status             int
		ok                 bool
	}{
		{"a POST under the cap", http.MethodPost, "hello", http.StatusOK, true},
		{"exactly the cap", http.MethodPost, strings.Repeat("x", 8), http.StatusOK, true},
		{"one byte over", http.MethodPost, strings.Repeat("x", 9), http.StatusRequestEntityTooLarge, false},
		{"GET", http.MethodGet, "", http.StatusMethodNotAllowed, false},
		{"PUT", http.MethodPut, "hello", http.StatusMethodNotAllowed, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			r := httptest.NewRequest(c.method, "/hook", strings.NewReader(c.body))
			var got []byte
			ok := Post(w, r)
			if ok {
				got, ok = Body(w, r, 8)
			}
			if ok != c.ok || w.Code != c.status {
				t.Fatalf("ok %v status %d, want %v %d", ok, w.Code, c.ok, c.status)
			}
			if ok && string(got) != c.body {
				t.Fatalf("body %q", got)
			}
			if c.status == http.StatusMethodNotAllowed && w.Header().Get("Allow") != http.MethodPost {
				t.Fatalf("Allow %q", w.Header().Get("Allow"))
			}
		})
	}
}
