package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// apiClient is a bare HTTP client of approvebot's v1 API: no retries, no checks beyond what the
// load tool measures, so the figures are the server's.
type apiClient struct {
	base string
	hc   *http.Client
}

func newAPI(base string, conns int) *apiClient {
	tr := &http.Transport{
		Proxy:               nil, // loopback only: never through a proxy
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	return &apiClient{base: base, hc: &http.Client{Transport: tr}}
}

func (a *apiClient) close() { a.hc.CloseIdleConnections() }

// do sends one request and reads the whole answer.
func (a *apiClient) do(ctx context.Context, method, path, token string, body []byte) (int, []byte, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, r)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, nil, err
	}
	return resp.StatusCode, out, nil
}

// view is the part of the request object (or error) the tool reads.
type view struct {
	ID        string    `json:"id"`
	State     string    `json:"state"`
	Allowed   bool      `json:"allowed"`
	Outcome   *string   `json:"outcome"`
	Source    *string   `json:"source"`
	Session   string    `json:"session"`
	Tool      string    `json:"tool"`
	Summary   string    `json:"summary"`
	CreatedAt time.Time `json:"created_at"`
	Error     *struct {
		Code string `json:"code"`
	} `json:"error"`
}

func (v view) source() string {
	if v.Source == nil {
		return ""
	}
	return *v.Source
}

func (v view) outcome() string {
	if v.Outcome == nil {
		return ""
	}
	return *v.Outcome
}

// decidedView is what the tool checks of every policy-decided answer.
type decidedView struct {
	ID      string  `json:"id"`
	State   string  `json:"state"`
	Allowed bool    `json:"allowed"`
	Source  *string `json:"source"`
}

func (v decidedView) source() string {
	if v.Source == nil {
		return ""
	}
	return *v.Source
}

func decodeDecided(raw []byte) (decidedView, error) {
	var v decidedView
	err := json.Unmarshal(raw, &v)
	return v, err
}

func decodeView(raw []byte) (view, error) {
	var v view
	err := json.Unmarshal(raw, &v)
	return v, err
}

// errName turns a failed call into a short error name for the report.
func errName(prefix string, code int, raw []byte, err error) string {
	if err != nil {
		var ne net.Error
		switch {
		case errors.Is(err, context.Canceled):
			return prefix + "_cancelled"
		case errors.As(err, &ne) && ne.Timeout():
			return prefix + "_timeout"
		}
		return prefix + "_transport"
	}
	if v, derr := decodeView(raw); derr == nil && v.Error != nil {
		return fmt.Sprintf("%s_%d_%s", prefix, code, v.Error.Code)
	}
	return fmt.Sprintf("%s_%d", prefix, code)
}
