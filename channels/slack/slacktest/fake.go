// Package slacktest is a fake of the Slack Web API and of Socket Mode, served on 127.0.0.1 for
// tests. It behaves like Slack where approvebot depends on it: form and JSON request
// encodings, tokens (bot token for Web API methods, app-level token for
// apps.connections.open), stored messages with every version of their blocks, chat.update
// of an unknown ts answered message_not_found, the Block Kit limits answered invalid_blocks
// (section text 3000, 50 blocks, action_id 255, value 2000, button text 75, header 150),
// msg_too_long beyond 40000 characters of text, trigger ids that expire after 3 s and work
// once, 429 with Retry-After, and a Socket Mode websocket that says hello, pings, delivers
// envelopes to the newest connection and checks that each is acknowledged within 3 s.
//
// Tests play the humans: Press, SubmitView, CloseView, Slash and Reply build the payloads
// Slack would send and deliver them over the websocket (Socket Mode) or, when a request
// URL is set, as signed HTTP requests (HTTP mode).
package slacktest

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"
)

// Slack's limits, as documented.
const (
	// MaxText is the longest top-level message text; longer is msg_too_long
	// (https://api.slack.com/methods/chat.postMessage#truncating).
	MaxText = 40000
	// MaxBlocks is how many blocks a message holds, MaxViewBlocks a modal.
	MaxBlocks     = 50
	MaxViewBlocks = 100
	// MaxSectionText is the longest section text.
	MaxSectionText = 3000
	// MaxHeaderText is the longest header text.
	MaxHeaderText = 150
	// MaxContextElements is how many elements a context block holds.
	MaxContextElements = 10
	// MaxActionsElements is how many elements an actions block holds.
	MaxActionsElements = 25
	// MaxButtonText, MaxActionID, MaxValue and MaxBlockID bound button fields.
	MaxButtonText = 75
	MaxActionID   = 255
	MaxValue      = 2000
	MaxBlockID    = 255
	// MaxTextObject is the longest text object elsewhere (context elements).
	MaxTextObject = 3000
	// MaxViewTitle is the longest modal title, submit or close label.
	MaxViewTitle = 24
	// MaxPrivateMetadata is the longest private_metadata of a modal.
	MaxPrivateMetadata = 3000
	// TriggerLifetime is how long a trigger_id can open a modal.
	TriggerLifetime = 3 * time.Second
	// AckTimeout is how long Slack waits for a Socket Mode envelope's acknowledgement.
	AckTimeout = 3 * time.Second
)

// Options configures the fake.
type Options struct {
	BotToken string
	AppToken string
	// TeamID is the bot's workspace (auth.test).
	TeamID string
	// Channels the bot is a member of; posting elsewhere is channel_not_found.
	Channels []string
	// SigningSecret signs HTTP-mode deliveries.
	SigningSecret string
	// PingInterval between websocket pings (default 2s; Socket Mode clients reconnect
	// when pings stop).
	PingInterval time.Duration
}

// Message is a posted message as the fake stores it.
type Message struct {
	Channel  string
	TS       string
	ThreadTS string
	User     string
	BotID    string
	Text     string
	Blocks   json.RawMessage
	// Versions are the blocks of every version, the posted one first.
	Versions []json.RawMessage
	// Params are the form parameters of the last post or update (parse, link_names…).
	Params  url.Values
	Updates int
}

// Ephemeral is a message only one user saw.
type Ephemeral struct {
	Channel string
	User    string
	Text    string
	Blocks  json.RawMessage
	// Via is "chat.postEphemeral" or "response_url".
	Via string
}

// View is an opened modal.
type View struct {
	ID        string
	TriggerID string
	User      User
	Channel   string
	View      map[string]any
	Raw       json.RawMessage
}

// User is who acts in the fake workspace.
type User struct {
	ID   string
	Team string
	Name string
}

// Button is one button of a message.
type Button struct {
	BlockID  string
	ActionID string
	Value    string
	Text     string
	Style    string
}

// Call is one Web API call as the fake answered it.
type Call struct {
	Method string
	Status int
	Error  string
}

type fault struct {
	status     int
	retryAfter int
	slackErr   string
	left       int // <0 forever
}

type trigger struct {
	user    User
	channel string
	made    time.Time
	used    bool
}

// Server is the fake.
type Server struct {
	opts Options
	ln   net.Listener
	srv  *http.Server
	url  string

	mu         sync.Mutex
	seq        int
	msgs       map[string]*Message // channel/ts
	order      []*Message
	ephemerals []Ephemeral
	views      map[string]*View
	viewOrder  []string
	triggers   map[string]*trigger
	responses  map[string]responseURL
	channels   map[string]bool
	faults     map[string][]*fault
	revoked    map[string]string
	calls      []Call
	tickets    map[string]bool
	conns      []*wsConn
	connects   int
	acks       map[string]chan json.RawMessage
	ackLog     map[string]time.Duration
	requestURL string
	changed    chan struct{}
	closed     bool
}

type responseURL struct {
	user    User
	channel string
	uses    int
}

// New starts the fake on 127.0.0.1.
func New(opts Options) (*Server, error) {
	if opts.PingInterval <= 0 {
		opts.PingInterval = 2 * time.Second
	}
	if opts.TeamID == "" {
		opts.TeamID = "T0FAKE"
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{
		opts: opts, ln: ln, url: "http://" + ln.Addr().String(),
		msgs: map[string]*Message{}, views: map[string]*View{}, triggers: map[string]*trigger{},
		responses: map[string]responseURL{}, channels: map[string]bool{}, faults: map[string][]*fault{},
		revoked: map[string]string{}, tickets: map[string]bool{}, acks: map[string]chan json.RawMessage{},
		ackLog: map[string]time.Duration{}, changed: make(chan struct{}),
	}
	for _, c := range opts.Channels {
		s.channels[c] = true
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/", s.api)
	mux.HandleFunc("/ws", s.websocket)
	mux.HandleFunc("/response/", s.response)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// URL is the fake's base URL.
func (s *Server) URL() string { return s.url }

// APIURL is what slack.OptionAPIURL (and approvebot's api_url) takes: with the trailing slash.
func (s *Server) APIURL() string { return s.url + "/api/" }

// Close stops the fake and drops every websocket.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	conns := append([]*wsConn(nil), s.conns...)
	s.mu.Unlock()
	for _, c := range conns {
		c.ws.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	s.srv.Shutdown(ctx)
}

// SetRequestURL makes deliveries signed HTTP POSTs to u (HTTP mode) instead of websocket
// envelopes. An empty u goes back to Socket Mode.
func (s *Server) SetRequestURL(u string) {
	s.mu.Lock()
	s.requestURL = u
	s.mu.Unlock()
}

// ---- faults

// RateLimit answers the next n calls of method ("*" for any) with 429 and Retry-After.
func (s *Server) RateLimit(method string, n, retryAfter int) {
	s.addFault(method, &fault{status: http.StatusTooManyRequests, retryAfter: retryAfter, slackErr: "ratelimited", left: n})
}

// ServerError answers the next n calls of method with HTTP status code (5xx).
func (s *Server) ServerError(method string, n, code int) {
	s.addFault(method, &fault{status: code, left: n})
}

// FailWith answers the next n calls of method (n < 0: every call) with ok:false and err.
func (s *Server) FailWith(method string, n int, err string) {
	s.addFault(method, &fault{status: 200, slackErr: err, left: n})
}

// ClearFaults removes every pending fault.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	s.faults = map[string][]*fault{}
	s.mu.Unlock()
}

// Revoke makes every later call with token fail with err ("token_revoked", "invalid_auth").
func (s *Server) Revoke(token, err string) {
	s.mu.Lock()
	s.revoked[token] = err
	s.mu.Unlock()
}

func (s *Server) addFault(method string, f *fault) {
	s.mu.Lock()
	s.faults[method] = append(s.faults[method], f)
	s.mu.Unlock()
}

func (s *Server) takeFault(method string) *fault {
	for _, m := range []string{method, "*"} {
		q := s.faults[m]
		for len(q) > 0 && q[0].left == 0 {
			q = q[1:]
		}
		s.faults[m] = q
		if len(q) > 0 {
			f := *q[0]
			if q[0].left > 0 {
				q[0].left--
			}
			return &f
		}
	}
	return nil
}

// ---- Web API

type apiError struct {
	status   int
	code     string
	messages []string
}

func (s *Server) api(w http.ResponseWriter, r *http.Request) {
	method := strings.TrimPrefix(r.URL.Path, "/api/")
	params, err := readParams(r)
	if err != nil {
		s.answer(w, method, nil, &apiError{status: 200, code: "invalid_form_data"})
		return
	}
	token := params.Get("token")
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		token = strings.TrimPrefix(h, "Bearer ")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.takeFault(method); f != nil {
		if f.retryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(f.retryAfter))
		}
		s.answer(w, method, nil, &apiError{status: f.status, code: f.slackErr})
		return
	}
	if token == "" {
		s.answer(w, method, nil, &apiError{status: 200, code: "not_authed"})
		return
	}
	if e, ok := s.revoked[token]; ok {
		s.answer(w, method, nil, &apiError{status: 200, code: e})
		return
	}
	if method == "apps.connections.open" {
		if token != s.opts.AppToken {
			code := "invalid_auth"
			if token == s.opts.BotToken {
				code = "not_allowed_token_type"
			}
			s.answer(w, method, nil, &apiError{status: 200, code: code})
			return
		}
		ticket := s.newID("ticket")
		s.tickets[ticket] = true
		wsURL := "ws://" + s.ln.Addr().String() + "/ws?ticket=" + ticket
		s.answer(w, method, map[string]any{"url": wsURL}, nil)
		return
	}
	if token != s.opts.BotToken {
		code := "invalid_auth"
		if token == s.opts.AppToken {
			code = "not_allowed_token_type"
		}
		s.answer(w, method, nil, &apiError{status: 200, code: code})
		return
	}
	var out map[string]any
	var ae *apiError
	switch method {
	case "auth.test":
		out = map[string]any{"url": s.url + "/", "team": "Fake Workspace", "user": "approvebot", "team_id": s.opts.TeamID, "user_id": "UBOT", "bot_id": "BBOT"}
	case "chat.postMessage":
		out, ae = s.postMessage(params)
	case "chat.update":
		out, ae = s.update(params)
	case "chat.postEphemeral":
		out, ae = s.postEphemeral(params)
	case "views.open":
		out, ae = s.viewsOpen(params)
	default:
		s.answer(w, method, nil, &apiError{status: 404, code: "unknown_method"})
		return
	}
	s.answer(w, method, out, ae)
}

func (s *Server) answer(w http.ResponseWriter, method string, out map[string]any, e *apiError) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	c := Call{Method: method, Status: 200}
	if e != nil {
		c.Status, c.Error = e.status, e.code
		if e.status >= 500 {
			w.WriteHeader(e.status)
			io.WriteString(w, "<html>server error</html>")
			s.calls = append(s.calls, c)
			s.notify()
			return
		}
		body := map[string]any{"ok": false, "error": e.code}
		if len(e.messages) > 0 {
			body["errors"] = e.messages
			body["response_metadata"] = map[string]any{"messages": e.messages}
		}
		w.WriteHeader(e.status)
		json.NewEncoder(w).Encode(body)
		s.calls = append(s.calls, c)
		s.notify()
		return
	}
	if out == nil {
		out = map[string]any{}
	}
	out["ok"] = true
	json.NewEncoder(w).Encode(out)
	s.calls = append(s.calls, c)
	s.notify()
}

func readParams(r *http.Request) (url.Values, error) {
	if r.Method != http.MethodPost && r.Method != http.MethodGet {
		return nil, errors.New("method")
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
	if err != nil {
		return nil, err
	}
	q := r.URL.Query()
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		var m map[string]any
		if len(strings.TrimSpace(string(body))) > 0 {
			if err := json.Unmarshal(body, &m); err != nil {
				return nil, err
			}
		}
		for k, v := range m {
			switch x := v.(type) {
			case string:
				q.Set(k, x)
			default:
				raw, _ := json.Marshal(x)
				q.Set(k, string(raw))
			}
		}
		return q, nil
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return nil, err
	}
	for k, v := range form {
		q[k] = v
	}
	return q, nil
}

func (s *Server) checkMessage(p url.Values, maxBlocks int) *apiError {
	text := p.Get("text")
	blocks := p.Get("blocks")
	if text == "" && (blocks == "" || blocks == "[]") {
		return &apiError{status: 200, code: "no_text"}
	}
	if utf8.RuneCountInString(text) > MaxText {
		return &apiError{status: 200, code: "msg_too_long"}
	}
	if blocks != "" {
		if errs := ValidateBlocks(json.RawMessage(blocks), maxBlocks); len(errs) > 0 {
			return &apiError{status: 200, code: "invalid_blocks", messages: errs}
		}
	}
	return nil
}

func (s *Server) postMessage(p url.Values) (map[string]any, *apiError) {
	ch := p.Get("channel")
	if !s.channels[ch] {
		return nil, &apiError{status: 200, code: "channel_not_found"}
	}
	if e := s.checkMessage(p, MaxBlocks); e != nil {
		return nil, e
	}
	m := &Message{Channel: ch, TS: s.newTS(), ThreadTS: p.Get("thread_ts"), User: "UBOT", BotID: "BBOT", Text: p.Get("text"), Params: p}
	if b := p.Get("blocks"); b != "" {
		m.Blocks = json.RawMessage(b)
	}
	m.Versions = append(m.Versions, m.Blocks)
	s.msgs[ch+"/"+m.TS] = m
	s.order = append(s.order, m)
	return map[string]any{"channel": ch, "ts": m.TS, "message": map[string]any{"type": "message", "ts": m.TS, "text": m.Text, "bot_id": "BBOT", "user": "UBOT"}}, nil
}

func (s *Server) update(p url.Values) (map[string]any, *apiError) {
	ch := p.Get("channel")
	if !s.channels[ch] {
		return nil, &apiError{status: 200, code: "channel_not_found"}
	}
	m, ok := s.msgs[ch+"/"+p.Get("ts")]
	if !ok || p.Get("ts") == "" {
		return nil, &apiError{status: 200, code: "message_not_found"}
	}
	if m.BotID != "BBOT" {
		return nil, &apiError{status: 200, code: "cant_update_message"}
	}
	if e := s.checkMessage(p, MaxBlocks); e != nil {
		return nil, e
	}
	m.Text = p.Get("text")
	if b, ok := p["blocks"]; ok {
		m.Blocks = json.RawMessage(b[0])
	}
	m.Versions = append(m.Versions, m.Blocks)
	m.Params = p
	m.Updates++
	return map[string]any{"channel": ch, "ts": m.TS, "text": m.Text}, nil
}

func (s *Server) postEphemeral(p url.Values) (map[string]any, *apiError) {
	ch := p.Get("channel")
	if !s.channels[ch] {
		return nil, &apiError{status: 200, code: "channel_not_found"}
	}
	if p.Get("user") == "" {
		return nil, &apiError{status: 200, code: "user_not_found"}
	}
	if e := s.checkMessage(p, MaxBlocks); e != nil {
		return nil, e
	}
	e := Ephemeral{Channel: ch, User: p.Get("user"), Text: p.Get("text"), Via: "chat.postEphemeral"}
	if b := p.Get("blocks"); b != "" {
		e.Blocks = json.RawMessage(b)
	}
	s.ephemerals = append(s.ephemerals, e)
	return map[string]any{"message_ts": s.newTS()}, nil
}

func (s *Server) viewsOpen(p url.Values) (map[string]any, *apiError) {
	tid := p.Get("trigger_id")
	t, ok := s.triggers[tid]
	switch {
	case !ok:
		return nil, &apiError{status: 200, code: "invalid_trigger_id"}
	case t.used || time.Since(t.made) > TriggerLifetime:
		return nil, &apiError{status: 200, code: "expired_trigger_id"}
	}
	raw := json.RawMessage(p.Get("view"))
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, &apiError{status: 200, code: "invalid_arguments"}
	}
	if errs := validateView(v, raw); len(errs) > 0 {
		return nil, &apiError{status: 200, code: "invalid_arguments", messages: errs}
	}
	t.used = true
	id := s.newID("V")
	v["id"] = id
	v["team_id"] = t.user.Team
	s.views[id] = &View{ID: id, TriggerID: tid, User: t.user, Channel: t.channel, View: v, Raw: raw}
	s.viewOrder = append(s.viewOrder, id)
	return map[string]any{"view": v}, nil
}

func (s *Server) response(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimPrefix(r.URL.Path, "/response/")
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	s.mu.Lock()
	defer s.mu.Unlock()
	ru, ok := s.responses[id]
	if !ok || ru.uses >= 5 {
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, "expired_url")
		return
	}
	ru.uses++
	s.responses[id] = ru
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, "invalid_payload")
		return
	}
	text, _ := m["text"].(string)
	if utf8.RuneCountInString(text) > MaxText {
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, "msg_too_long")
		return
	}
	s.ephemerals = append(s.ephemerals, Ephemeral{Channel: ru.channel, User: ru.user.ID, Text: text, Via: "response_url"})
	s.notify()
	w.Header().Set("Content-Type", "text/plain")
	io.WriteString(w, "ok")
}

// ---- limits

// ValidateBlocks checks a message's blocks against Block Kit limits and returns every
// problem found (empty when the blocks are valid).
func ValidateBlocks(raw json.RawMessage, maxBlocks int) []string {
	var blocks []map[string]any
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return []string{"[ERROR] blocks must be a JSON array of objects"}
	}
	var errs []string
	bad := func(i int, f string, a ...any) {
		errs = append(errs, fmt.Sprintf("[ERROR] %s [json-pointer:/blocks/%d]", fmt.Sprintf(f, a...), i))
	}
	if len(blocks) > maxBlocks {
		errs = append(errs, fmt.Sprintf("[ERROR] no more than %d items allowed [json-pointer:/blocks]", maxBlocks))
	}
	blockIDs := map[string]bool{}
	actionIDs := map[string]bool{}
	for i, b := range blocks {
		if id, ok := b["block_id"].(string); ok {
			if len(id) > MaxBlockID {
				bad(i, "block_id must be at most %d characters", MaxBlockID)
			}
			if blockIDs[id] {
				bad(i, "duplicate block_id %q", id)
			}
			blockIDs[id] = true
		}
		switch b["type"] {
		case "header":
			if msg := checkText(b["text"], MaxHeaderText, true); msg != "" {
				bad(i, "header text: %s", msg)
			}
		case "section":
			if b["text"] == nil && b["fields"] == nil {
				bad(i, "section needs text or fields")
			}
			if b["text"] != nil {
				if msg := checkText(b["text"], MaxSectionText, false); msg != "" {
					bad(i, "section text: %s", msg)
				}
			}
			if fs, ok := b["fields"].([]any); ok {
				if len(fs) > 10 {
					bad(i, "no more than 10 fields allowed")
				}
				for _, f := range fs {
					if msg := checkText(f, 2000, false); msg != "" {
						bad(i, "field: %s", msg)
					}
				}
			}
			if acc, ok := b["accessory"].(map[string]any); ok {
				checkElement(acc, actionIDs, func(m string) { bad(i, "%s", m) })
			}
		case "context":
			els, _ := b["elements"].([]any)
			if len(els) == 0 || len(els) > MaxContextElements {
				bad(i, "context needs 1 to %d elements", MaxContextElements)
			}
			for _, e := range els {
				em, _ := e.(map[string]any)
				switch em["type"] {
				case "plain_text", "mrkdwn":
					if msg := checkText(e, MaxTextObject, false); msg != "" {
						bad(i, "context element: %s", msg)
					}
				case "image":
				default:
					bad(i, "context element type %v not allowed", em["type"])
				}
			}
		case "actions":
			els, _ := b["elements"].([]any)
			if len(els) == 0 || len(els) > MaxActionsElements {
				bad(i, "actions needs 1 to %d elements", MaxActionsElements)
			}
			for _, e := range els {
				em, _ := e.(map[string]any)
				checkElement(em, actionIDs, func(m string) { bad(i, "%s", m) })
			}
		case "divider":
		case "input":
			if msg := checkText(b["label"], 2000, true); msg != "" {
				bad(i, "input label: %s", msg)
			}
			el, _ := b["element"].(map[string]any)
			if el == nil {
				bad(i, "input needs an element")
			} else {
				checkElement(el, actionIDs, func(m string) { bad(i, "%s", m) })
			}
		default:
			bad(i, "unknown block type %v", b["type"])
		}
	}
	return errs
}

func checkText(v any, max int, plainOnly bool) string {
	m, ok := v.(map[string]any)
	if !ok {
		return "must be a text object"
	}
	typ, _ := m["type"].(string)
	if typ != "plain_text" && typ != "mrkdwn" {
		return "type must be plain_text or mrkdwn"
	}
	if plainOnly && typ != "plain_text" {
		return "must be plain_text"
	}
	if _, ok := m["emoji"]; ok && typ == "mrkdwn" {
		return "emoji is only allowed in plain_text"
	}
	t, _ := m["text"].(string)
	if t == "" {
		return "text must not be empty"
	}
	if n := utf8.RuneCountInString(t); n > max {
		return fmt.Sprintf("must be at most %d characters, got %d", max, n)
	}
	return ""
}

func checkElement(e map[string]any, actionIDs map[string]bool, bad func(string)) {
	if id, ok := e["action_id"].(string); ok {
		if len(id) > MaxActionID {
			bad(fmt.Sprintf("action_id must be at most %d characters", MaxActionID))
		}
		if actionIDs[id] {
			bad(fmt.Sprintf("duplicate action_id %q", id))
		}
		actionIDs[id] = true
	}
	switch e["type"] {
	case "button":
		if msg := checkText(e["text"], MaxButtonText, true); msg != "" {
			bad("button text: " + msg)
		}
		if v, ok := e["value"].(string); ok && len(v) > MaxValue {
			bad(fmt.Sprintf("button value must be at most %d characters", MaxValue))
		}
		if st, ok := e["style"].(string); ok && st != "primary" && st != "danger" {
			bad("button style must be primary or danger")
		}
	case "plain_text_input":
		if ml, ok := e["max_length"].(float64); ok && (ml < 1 || ml > 3000) {
			bad("max_length must be 1 to 3000")
		}
	default:
		bad(fmt.Sprintf("element type %v not supported by the fake", e["type"]))
	}
}

func validateView(v map[string]any, raw json.RawMessage) []string {
	var errs []string
	if v["type"] != "modal" {
		errs = append(errs, "[ERROR] view type must be modal")
	}
	for _, k := range []string{"title", "submit", "close"} {
		if v[k] == nil {
			if k == "title" {
				errs = append(errs, "[ERROR] title is required")
			}
			continue
		}
		if msg := checkText(v[k], MaxViewTitle, true); msg != "" {
			errs = append(errs, "[ERROR] "+k+": "+msg)
		}
	}
	if pm, _ := v["private_metadata"].(string); len(pm) > MaxPrivateMetadata {
		errs = append(errs, "[ERROR] private_metadata too long")
	}
	var blocks struct {
		Blocks json.RawMessage `json:"blocks"`
	}
	json.Unmarshal(raw, &blocks)
	errs = append(errs, ValidateBlocks(blocks.Blocks, MaxViewBlocks)...)
	return errs
}

// ---- state for tests

func (s *Server) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Wait blocks until cond (called under the fake's lock, with the fake as argument) holds or
// ctx ends.
func (s *Server) Wait(ctx context.Context, cond func(*State) bool) error {
	for {
		s.mu.Lock()
		ok := cond(&State{s})
		ch := s.changed
		s.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// State reads the fake's state inside Wait or Do.
type State struct{ s *Server }

// Do calls f with the state under the fake's lock.
func (s *Server) Do(f func(*State)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&State{s})
}

// Messages lists the posted messages of channel ("" for every channel) in posting order.
func (st *State) Messages(channel string) []Message {
	var out []Message
	for _, m := range st.s.order {
		if channel == "" || m.Channel == channel {
			out = append(out, copyMessage(m))
		}
	}
	return out
}

// Message returns one stored message.
func (st *State) Message(channel, ts string) (Message, bool) {
	m, ok := st.s.msgs[channel+"/"+ts]
	if !ok {
		return Message{}, false
	}
	return copyMessage(m), true
}

// Ephemerals lists ephemeral messages to user ("" for everyone).
func (st *State) Ephemerals(user string) []Ephemeral {
	var out []Ephemeral
	for _, e := range st.s.ephemerals {
		if user == "" || e.User == user {
			out = append(out, e)
		}
	}
	return out
}

// Views lists the opened modals in order.
func (st *State) Views() []View {
	var out []View
	for _, id := range st.s.viewOrder {
		out = append(out, *st.s.views[id])
	}
	return out
}

// Calls lists the Web API calls of method ("" for all).
func (st *State) Calls(method string) []Call {
	var out []Call
	for _, c := range st.s.calls {
		if method == "" || c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// Connects is how many websocket connections were accepted so far.
func (st *State) Connects() int { return st.s.connects }

// LiveConns is how many websocket connections are open now.
func (st *State) LiveConns() int { return len(st.s.conns) }

// Acks maps envelope ids to how long their acknowledgement took.
func (st *State) Acks() map[string]time.Duration {
	out := make(map[string]time.Duration, len(st.s.ackLog))
	for k, v := range st.s.ackLog {
		out[k] = v
	}
	return out
}

func copyMessage(m *Message) Message {
	c := *m
	c.Versions = append([]json.RawMessage(nil), m.Versions...)
	return c
}

// Buttons lists the buttons in blocks.
func Buttons(blocks json.RawMessage) []Button {
	var bs []struct {
		Type     string `json:"type"`
		BlockID  string `json:"block_id"`
		Elements []struct {
			Type     string `json:"type"`
			ActionID string `json:"action_id"`
			Value    string `json:"value"`
			Style    string `json:"style"`
			Text     struct {
				Text string `json:"text"`
			} `json:"text"`
		} `json:"elements"`
	}
	json.Unmarshal(blocks, &bs)
	var out []Button
	for _, b := range bs {
		if b.Type != "actions" {
			continue
		}
		for _, e := range b.Elements {
			if e.Type == "button" {
				out = append(out, Button{BlockID: b.BlockID, ActionID: e.ActionID, Value: e.Value, Text: e.Text.Text, Style: e.Style})
			}
		}
	}
	return out
}

// BlockText concatenates every text in blocks (to assert what a card shows).
func BlockText(blocks json.RawMessage) string {
	var v any
	json.Unmarshal(blocks, &v)
	var b strings.Builder
	var walk func(any)
	walk = func(x any) {
		switch t := x.(type) {
		case map[string]any:
			if s, ok := t["text"].(string); ok {
				b.WriteString(s)
				b.WriteString("\n")
			}
			for k, v := range t {
				if k != "text" || !isString(v) {
					walk(v)
				}
			}
		case []any:
			for _, e := range t {
				walk(e)
			}
		}
	}
	walk(v)
	return b.String()
}

func isString(v any) bool { _, ok := v.(string); return ok }

func (s *Server) newTS() string {
	s.seq++
	return fmt.Sprintf("%d.%06d", 1700000000+s.seq, s.seq)
}

func (s *Server) newID(prefix string) string {
	var b [8]byte
	rand.Read(b[:])
	return prefix + strings.ToUpper(hex.EncodeToString(b[:]))
}

// ---- Socket Mode

type wsConn struct {
	ws      *websocket.Conn
	writeMu sync.Mutex
	done    chan struct{}
}

func (c *wsConn) write(v any) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return c.ws.WriteJSON(v)
}

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

func (s *Server) websocket(w http.ResponseWriter, r *http.Request) {
	ticket := r.URL.Query().Get("ticket")
	s.mu.Lock()
	ok := s.tickets[ticket] && !s.closed
	delete(s.tickets, ticket)
	s.mu.Unlock()
	if !ok {
		http.Error(w, "invalid ticket", http.StatusUnauthorized)
		return
	}
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c := &wsConn{ws: ws, done: make(chan struct{})}
	s.mu.Lock()
	s.conns = append(s.conns, c)
	s.connects++
	n := len(s.conns)
	s.notify()
	s.mu.Unlock()
	c.write(map[string]any{"type": "hello", "num_connections": n,
		"debug_info":      map[string]any{"host": "slacktest", "approximate_connection_time": 18060},
		"connection_info": map[string]any{"app_id": "AFAKE"}})
	go func() {
		t := time.NewTicker(s.opts.PingInterval)
		defer t.Stop()
		for {
			select {
			case <-c.done:
				return
			case <-t.C:
				c.writeMu.Lock()
				err := ws.WriteControl(websocket.PingMessage, []byte("ping"), time.Now().Add(5*time.Second))
				c.writeMu.Unlock()
				if err != nil {
					return
				}
			}
		}
	}()
	defer func() {
		close(c.done)
		ws.Close()
		s.mu.Lock()
		for i, x := range s.conns {
			if x == c {
				s.conns = append(s.conns[:i], s.conns[i+1:]...)
				break
			}
		}
		s.notify()
		s.mu.Unlock()
	}()
	for {
		_, data, err := ws.ReadMessage()
		if err != nil {
			return
		}
		var ack struct {
			EnvelopeID string          `json:"envelope_id"`
			Payload    json.RawMessage `json:"payload"`
		}
		if json.Unmarshal(data, &ack) != nil || ack.EnvelopeID == "" {
			continue
		}
		s.mu.Lock()
		ch := s.acks[ack.EnvelopeID]
		delete(s.acks, ack.EnvelopeID)
		s.mu.Unlock()
		if ch != nil {
			ch <- ack.Payload
		}
	}
}

// Drop closes every websocket abruptly, without a close frame, as a network failure would.
func (s *Server) Drop() {
	s.mu.Lock()
	conns := append([]*wsConn(nil), s.conns...)
	s.mu.Unlock()
	for _, c := range conns {
		c.ws.UnderlyingConn().Close()
	}
}

// Disconnect asks every client to reconnect, as Slack does before it recycles a server.
func (s *Server) Disconnect() {
	s.mu.Lock()
	conns := append([]*wsConn(nil), s.conns...)
	s.mu.Unlock()
	for _, c := range conns {
		c.write(map[string]any{"type": "disconnect", "reason": "refresh_requested",
			"debug_info": map[string]any{"host": "slacktest"}})
	}
}

// ErrNotAcked is returned when a Socket Mode envelope was not acknowledged within 3 s.
var ErrNotAcked = errors.New("slacktest: envelope not acknowledged within 3s")

// deliverSocket sends an envelope to the newest connection and waits for its ack. When the
// connection drops first, it is sent again (retry_attempt+1) on the next one, as Slack does.
func (s *Server) deliverSocket(ctx context.Context, typ string, payload any) (json.RawMessage, error) {
	envID := s.newIDLocked("env-")
	raw, err := json.Marshal(payload)
	if err != nil {
		return nil, err
	}
	var failed *wsConn // the connection the last attempt died on
	for attempt := 0; attempt < 4; attempt++ {
		var c *wsConn
		err := s.Wait(ctx, func(st *State) bool {
			if len(st.s.conns) == 0 {
				return false
			}
			c = st.s.conns[len(st.s.conns)-1]
			select {
			case <-c.done:
				return false // dropped, not yet forgotten: wait for the client's next one
			default:
			}
			return c != failed
		})
		if err != nil {
			return nil, fmt.Errorf("slacktest: no Socket Mode connection: %w", err)
		}
		ch := make(chan json.RawMessage, 1)
		s.mu.Lock()
		s.acks[envID] = ch
		s.mu.Unlock()
		env := map[string]any{"envelope_id": envID, "type": typ, "payload": json.RawMessage(raw),
			"accepts_response_payload": typ != "events_api", "retry_attempt": attempt, "retry_reason": ""}
		if attempt > 0 {
			env["retry_reason"] = "timeout"
		}
		start := time.Now()
		if err := c.write(env); err != nil {
			s.forgetAck(envID)
			failed = c
			continue
		}
		t := time.NewTimer(AckTimeout)
		select {
		case p := <-ch:
			t.Stop()
			s.mu.Lock()
			s.ackLog[envID] = time.Since(start)
			s.mu.Unlock()
			return p, nil
		case <-c.done:
			t.Stop()
			s.forgetAck(envID)
			failed = c
			continue
		case <-t.C:
			s.forgetAck(envID)
			return nil, ErrNotAcked
		case <-ctx.Done():
			t.Stop()
			s.forgetAck(envID)
			return nil, ctx.Err()
		}
	}
	return nil, errors.New("slacktest: envelope not delivered after 4 attempts")
}

func (s *Server) forgetAck(id string) {
	s.mu.Lock()
	delete(s.acks, id)
	s.mu.Unlock()
}

func (s *Server) newIDLocked(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.newID(prefix)
}

// ---- HTTP mode

// Sign returns the X-Slack-Signature of body at ts with secret.
func Sign(secret string, ts time.Time, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "v0:%d:", ts.Unix())
	mac.Write(body)
	return "v0=" + hex.EncodeToString(mac.Sum(nil))
}

// HTTPDelivery is one HTTP-mode request as Slack would send it.
type HTTPDelivery struct {
	ContentType string
	Body        []byte
}

// SignedRequest builds the HTTP request Slack sends for a delivery, signed with secret at ts.
func SignedRequest(ctx context.Context, target string, d HTTPDelivery, secret string, ts time.Time) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, strings.NewReader(string(d.Body)))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", d.ContentType)
	req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set("X-Slack-Signature", Sign(secret, ts, d.Body))
	req.Header.Set("User-Agent", "Slackbot 1.0 (+https://api.slack.com/robots)")
	return req, nil
}

// Encode turns a delivery (typ as in Socket Mode: interactive, slash_commands, events_api)
// into the body Slack posts over HTTP.
func Encode(typ string, payload any) (HTTPDelivery, error) {
	raw, err := json.Marshal(payload)
	if err != nil {
		return HTTPDelivery{}, err
	}
	switch typ {
	case "interactive":
		return HTTPDelivery{ContentType: "application/x-www-form-urlencoded", Body: []byte(url.Values{"payload": {string(raw)}}.Encode())}, nil
	case "slash_commands":
		var m map[string]string
		if err := json.Unmarshal(raw, &m); err != nil {
			return HTTPDelivery{}, err
		}
		v := url.Values{}
		for k, x := range m {
			v.Set(k, x)
		}
		return HTTPDelivery{ContentType: "application/x-www-form-urlencoded", Body: []byte(v.Encode())}, nil
	case "events_api":
		return HTTPDelivery{ContentType: "application/json", Body: raw}, nil
	}
	return HTTPDelivery{}, fmt.Errorf("slacktest: unknown delivery type %q", typ)
}

// ErrHTTPStatus is returned when an HTTP-mode delivery is not answered 200.
type ErrHTTPStatus struct {
	Code int
	Body string
}

func (e *ErrHTTPStatus) Error() string {
	return fmt.Sprintf("slacktest: delivery answered %d: %s", e.Code, e.Body)
}

func (s *Server) deliver(ctx context.Context, typ string, payload any) (json.RawMessage, error) {
	s.mu.Lock()
	target := s.requestURL
	s.mu.Unlock()
	if target == "" {
		return s.deliverSocket(ctx, typ, payload)
	}
	d, err := Encode(typ, payload)
	if err != nil {
		return nil, err
	}
	req, err := SignedRequest(ctx, target, d, s.opts.SigningSecret, time.Now())
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, AckTimeout)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return nil, &ErrHTTPStatus{Code: resp.StatusCode, Body: string(body)}
	}
	return body, nil
}

// ---- the humans

func (s *Server) userJSON(u User) map[string]any {
	name := u.Name
	if name == "" {
		name = strings.ToLower(u.ID)
	}
	return map[string]any{"id": u.ID, "username": name, "name": name, "team_id": u.Team}
}

func (s *Server) newResponseURL(u User, channel string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.newID("R")
	s.responses[id] = responseURL{user: u, channel: channel}
	return s.url + "/response/" + id
}

func (s *Server) newTrigger(u User, channel string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.newID("13345224609.738474920.")
	s.triggers[id] = &trigger{user: u, channel: channel, made: time.Now()}
	return id
}

// PressPayload builds the block_actions payload of u pressing the button with actionID on
// message (channel, ts), as shown in its current version (stale: its first version). It
// fails when that version has no such button.
func (s *Server) PressPayload(u User, channel, ts, actionID string, stale bool) (map[string]any, error) {
	s.mu.Lock()
	m, ok := s.msgs[channel+"/"+ts]
	var blocks json.RawMessage
	var text string
	if ok {
		blocks, text = m.Blocks, m.Text
		if stale {
			blocks = m.Versions[0]
		}
	}
	s.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("slacktest: no message %s/%s", channel, ts)
	}
	var btn *Button
	for _, b := range Buttons(blocks) {
		if b.ActionID == actionID {
			btn = &b
			break
		}
	}
	if btn == nil {
		return nil, fmt.Errorf("slacktest: message %s/%s has no button %q", channel, ts, actionID)
	}
	actionTS := fmt.Sprintf("%d.%06d", time.Now().Unix(), time.Now().Nanosecond()/1000)
	return map[string]any{
		"type": "block_actions", "user": s.userJSON(u), "api_app_id": "AFAKE", "token": "verification-token",
		"container":  map[string]any{"type": "message", "message_ts": ts, "channel_id": channel, "is_ephemeral": false},
		"trigger_id": s.newTrigger(u, channel),
		"team":       map[string]any{"id": u.Team, "domain": "fake"},
		"enterprise": nil, "is_enterprise_install": false,
		"channel":      map[string]any{"id": channel, "name": "approvals"},
		"message":      map[string]any{"type": "message", "user": "UBOT", "bot_id": "BBOT", "ts": ts, "text": text, "blocks": blocks},
		"state":        map[string]any{"values": map[string]any{}},
		"response_url": s.newResponseURL(u, channel),
		"actions": []any{map[string]any{
			"action_id": btn.ActionID, "block_id": btn.BlockID, "value": btn.Value, "type": "button", "action_ts": actionTS,
			"text": map[string]any{"type": "plain_text", "text": btn.Text, "emoji": true}, "style": btn.Style,
		}},
	}, nil
}

// Press delivers u's press of the button actionID on the current version of the message.
func (s *Server) Press(ctx context.Context, u User, channel, ts, actionID string) error {
	p, err := s.PressPayload(u, channel, ts, actionID, false)
	if err != nil {
		return err
	}
	_, err = s.deliver(ctx, "interactive", p)
	return err
}

// PressStale delivers a press on the first (posted) version of the message: a user whose
// client still shows the old buttons.
func (s *Server) PressStale(ctx context.Context, u User, channel, ts, actionID string) error {
	p, err := s.PressPayload(u, channel, ts, actionID, true)
	if err != nil {
		return err
	}
	_, err = s.deliver(ctx, "interactive", p)
	return err
}

func (s *Server) viewPayload(typ string, u User, viewID string, input string) (map[string]any, error) {
	s.mu.Lock()
	v, ok := s.views[viewID]
	s.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("slacktest: no view %s", viewID)
	}
	values := map[string]any{}
	blocks, _ := v.View["blocks"].([]any)
	for _, b := range blocks {
		bm, _ := b.(map[string]any)
		if bm["type"] != "input" {
			continue
		}
		el, _ := bm["element"].(map[string]any)
		bid, _ := bm["block_id"].(string)
		aid, _ := el["action_id"].(string)
		var val any = input
		if input == "" {
			val = nil
		}
		values[bid] = map[string]any{aid: map[string]any{"type": el["type"], "value": val}}
	}
	view := map[string]any{}
	for k, x := range v.View {
		view[k] = x
	}
	view["state"] = map[string]any{"values": values}
	view["hash"] = "156772938.1827394"
	p := map[string]any{
		"type": typ, "team": map[string]any{"id": u.Team, "domain": "fake"}, "user": s.userJSON(u),
		"api_app_id": "AFAKE", "token": "verification-token", "trigger_id": s.newTrigger(u, v.Channel),
		"view": view, "enterprise": nil, "is_enterprise_install": false,
	}
	if typ == "view_closed" {
		p["is_cleared"] = false
	} else {
		p["response_urls"] = []any{}
	}
	return p, nil
}

// SubmitView delivers u submitting modal viewID with text typed into its input.
func (s *Server) SubmitView(ctx context.Context, u User, viewID, text string) (json.RawMessage, error) {
	p, err := s.viewPayload("view_submission", u, viewID, text)
	if err != nil {
		return nil, err
	}
	return s.deliver(ctx, "interactive", p)
}

// CloseView delivers u closing modal viewID (notify_on_close).
func (s *Server) CloseView(ctx context.Context, u User, viewID string) error {
	p, err := s.viewPayload("view_closed", u, viewID, "")
	if err != nil {
		return err
	}
	_, err = s.deliver(ctx, "interactive", p)
	return err
}

// SlashPayload builds the payload of u typing command text in channel.
func (s *Server) SlashPayload(u User, channel, command, text string) map[string]any {
	name := u.Name
	if name == "" {
		name = strings.ToLower(u.ID)
	}
	return map[string]any{
		"token": "verification-token", "team_id": u.Team, "team_domain": "fake", "channel_id": channel,
		"channel_name": "approvals", "user_id": u.ID, "user_name": name, "command": command, "text": text,
		"api_app_id": "AFAKE", "is_enterprise_install": "false",
		"response_url": s.newResponseURL(u, channel), "trigger_id": s.newTrigger(u, channel),
	}
}

// Slash delivers u typing `command text` in channel.
func (s *Server) Slash(ctx context.Context, u User, channel, command, text string) error {
	_, err := s.deliver(ctx, "slash_commands", s.SlashPayload(u, channel, command, text))
	return err
}

// Reply stores u's message text in the thread of threadTS (or in the channel when threadTS
// is empty) and delivers the message event. It returns the new message's ts.
func (s *Server) Reply(ctx context.Context, u User, channel, threadTS, text string) (string, error) {
	s.mu.Lock()
	ts := s.newTS()
	m := &Message{Channel: channel, TS: ts, ThreadTS: threadTS, User: u.ID, Text: text}
	m.Versions = []json.RawMessage{nil}
	s.msgs[channel+"/"+ts] = m
	s.order = append(s.order, m)
	evID := s.newID("Ev")
	s.notify()
	s.mu.Unlock()
	ev := map[string]any{"type": "message", "channel": channel, "user": u.ID, "team": u.Team, "text": text,
		"ts": ts, "event_ts": ts, "channel_type": "channel", "client_msg_id": evID}
	if threadTS != "" {
		ev["thread_ts"] = threadTS
	}
	p := map[string]any{"token": "verification-token", "team_id": s.opts.TeamID, "api_app_id": "AFAKE", "event": ev,
		"type": "event_callback", "event_id": evID, "event_time": time.Now().Unix(),
		"authorizations":        []any{map[string]any{"team_id": s.opts.TeamID, "user_id": "UBOT", "is_bot": true}},
		"is_ext_shared_channel": false, "event_context": "4-fake"}
	_, err := s.deliver(ctx, "events_api", p)
	return ts, err
}
