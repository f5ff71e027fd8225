package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// The raw client reads what net/http's server writes: Content-Length and chunked answers,
// keep-alive and Connection: close, and sends what it parses.
func TestRawConn(t *testing.T) {
	var calls int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		body, _ := io.ReadAll(r.Body)
		if r.Header.Get("Authorization") != "Bearer tok" || r.Header.Get("Content-Type") != "application/json" {
			w.WriteHeader(401)
			return
		}
		switch r.URL.Path {
		case "/small":
			w.WriteHeader(201)
			fmt.Fprintf(w, "echo %s", body)
		case "/big": // more than net/http buffers: chunked
			w.WriteHeader(200)
			io.WriteString(w, strings.Repeat("x", 10000))
		case "/close":
			w.Header().Set("Connection", "close")
			io.WriteString(w, "bye")
		}
	}))
	defer srv.Close()
	c, err := newRawConn(srv.URL, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	for i, tt := range []struct {
		path string
		code int
		body string
	}{
		{"/small", 201, `echo {"a":1}`},
		{"/big", 200, strings.Repeat("x", 10000)},
		{"/small", 201, `echo {"a":1}`},
		{"/close", 200, "bye"},
		{"/small", 201, `echo {"a":1}`}, // on a new connection
	} {
		code, body, err := c.do(rawRequest(c.addr, "POST", tt.path, "tok", []byte(`{"a":1}`)))
		if err != nil || code != tt.code || string(body) != tt.body {
			t.Fatalf("call %d %s: %d %q %v", i, tt.path, code, body, err)
		}
	}
	if calls != 5 {
		t.Fatalf("%d calls reached the server", calls)
	}
}
