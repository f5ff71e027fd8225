// Package telegramtest is a fake Telegram Bot API server for tests, on 127.0.0.1. It behaves
// like the real one where approvebot depends on it: every method is POST /bot<token>/<method>
// with multipart/form-data (also urlencoded and JSON) parameters, getUpdates long-polls (the
// request is held open until an update arrives or its timeout passes) with offset
// confirmation and a 409 for a second poller, text is limited to 4096 characters after HTML
// entity parsing, callback_data to 64 bytes, an identical edit is "message is not modified",
// unknown chats and messages are errors, every message in an update has a non-zero date,
// callback queries can be answered once, and faults (429 with retry_after, 5xx, raw proxy
// errors) can be injected. Tests play the humans: Press a button, Say something, Reply to a
// message; and read back what the bot posted, edited and answered.
package telegramtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/approvebot/approvebot/internal/fakewait"
)

// Limits of the real Bot API (https://core.telegram.org/bots/api).
const (
	MaxText          = 4096 // message text after entity parsing, in UTF-16 code units
	MaxCallbackData  = 64   // callback_data, in bytes
	MaxAnswerText    = 200  // answerCallbackQuery text, in characters
	MaxButtonsPerRow = 8
	MaxButtons       = 100
	maxBody          = 10 << 20
	firstUpdateID    = 700000
	firstMessageID   = 1
	maxPollTimeout   = 50 * time.Second
)

// Exact descriptions of the real API's errors, which clients match on.
const (
	ErrNotModified      = "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message"
	ErrMessageNotFound  = "Bad Request: message to edit not found"
	ErrReplyNotFound    = "Bad Request: message to be replied not found"
	ErrChatNotFound     = "Bad Request: chat not found"
	ErrTextEmpty        = "Bad Request: message text is empty"
	ErrTextTooLong      = "Bad Request: message is too long"
	ErrButtonData       = "Bad Request: BUTTON_DATA_INVALID"
	ErrQueryInvalid     = "Bad Request: query is too old and response timeout expired or query ID is invalid"
	ErrAnswerTooLong    = "Bad Request: MESSAGE_TOO_LONG"
	ErrCantEdit         = "Bad Request: message can't be edited"
	ErrPollConflict     = "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"
	ErrWebhookConflict  = "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first"
	ErrTooManyRequests  = "Too Many Requests: retry after %d"
	ErrUnauthorizedDesc = "Unauthorized"
)

// User is a Telegram user as it appears in updates.
type User struct {
	ID        int64  `json:"id"`
	IsBot     bool   `json:"is_bot"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name,omitempty"`
	Username  string `json:"username,omitempty"`
}

// Chat is a chat the bot is a member of.
type Chat struct {
	ID    int64  `json:"id"`
	Type  string `json:"type"` // private, group, supergroup, channel
	Title string `json:"title,omitempty"`
}

// Button is one inline keyboard button as the bot sent it.
type Button struct {
	Text         string          `json:"text"`
	CallbackData string          `json:"callback_data,omitempty"`
	URL          string          `json:"url,omitempty"`
	CopyText     json.RawMessage `json:"copy_text,omitempty"`
}

// Message is a message in a chat, as the fake stores it.
type Message struct {
	ID   int
	Chat int64
	// From is the author: the bot for what approvebot sent, a user for what a test said.
	From *User
	Date int64
	// Text is the text as sent (HTML source when ParseMode is HTML); Plain is what a human
	// sees after entity parsing.
	Text      string
	ParseMode string
	Plain     string
	// Keyboard is the inline keyboard (nil or empty: no buttons).
	Keyboard [][]Button
	// ForceReply is set when the message asked the client to reply to it.
	ForceReply          bool
	ForceReplySelective bool
	ReplyTo             int
	LinkPreviewDisabled bool
	// Edits counts successful editMessageText calls; History holds every earlier Text.
	Edits    int
	EditDate int64
	History  []string
}

// HasButtons reports whether the message shows any button.
func (m Message) HasButtons() bool {
	for _, row := range m.Keyboard {
		if len(row) > 0 {
			return true
		}
	}
	return false
}

// ButtonData returns the callback data of the first button whose data starts with prefix
// or whose text contains it.
func (m Message) ButtonData(match string) (string, bool) {
	for _, row := range m.Keyboard {
		for _, b := range row {
			if strings.HasPrefix(b.CallbackData, match) || strings.Contains(b.Text, match) {
				return b.CallbackData, true
			}
		}
	}
	return "", false
}

// Answer is an answerCallbackQuery call.
type Answer struct {
	QueryID   string
	Text      string
	ShowAlert bool
	At        time.Time
}

// Call is one request the bot made.
type Call struct {
	Method      string
	ContentType string
	Params      map[string]string
	Status      int
	At          time.Time
}

// Fault makes the next matching calls fail.
type Fault struct {
	// Method matches one method (case-insensitive); "" matches every method but getUpdates.
	Method string
	// Code is the HTTP status and error_code (429, 500, 502…).
	Code int
	// Description defaults to the real API's text for the code.
	Description string
	// RetryAfter is parameters.retry_after in seconds (429).
	RetryAfter int
	// Raw, when set, is sent as a text/html body instead of the API's JSON (a proxy error).
	Raw string
	// Times is how many calls it hits (0 means 1).
	Times int
}

// Options configures a fake.
type Options struct {
	// Token is the bot token the fake accepts; others get 401.
	Token string
	// BotUsername is the bot's @username (without @).
	BotUsername string
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Server is a running fake.
type Server struct {
	URL   string
	Token string
	Bot   User

	srv  *httptest.Server
	now  func() time.Time
	tb   testing.TB
	quit chan struct{}

	mu           sync.Mutex
	changed      chan struct{}
	chats        map[int64]*chatState
	nextUpdateID int64
	updates      []update
	confirmed    int64
	poller       *poll
	queries      map[string]*query
	nextQueryID  int
	answers      []Answer
	calls        []Call
	faults       []*Fault
	webhook      *webhook
	closed       bool
}

type chatState struct {
	chat     Chat
	messages map[int]*Message
	order    []int
	nextID   int
}

type update struct {
	id   int64
	body map[string]any
}

type poll struct {
	terminated chan struct{}
}

type query struct {
	id       string
	answered bool
	created  time.Time
}

type webhook struct {
	url    string
	secret string
	stop   chan struct{}
}

// Start runs a fake on 127.0.0.1 until the test ends.
func Start(tb testing.TB, opts Options) *Server {
	tb.Helper()
	if opts.Token == "" {
		opts.Token = "123456789:AAtest-token-for-the-fake-0123456789"
	}
	if opts.BotUsername == "" {
		opts.BotUsername = "approvebot_test_bot"
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	botID, _ := strconv.ParseInt(strings.SplitN(opts.Token, ":", 2)[0], 10, 64)
	s := &Server{
		Token: opts.Token, Bot: User{ID: botID, IsBot: true, FirstName: "approvebot", Username: opts.BotUsername},
		now: opts.Now, tb: tb, quit: make(chan struct{}), changed: make(chan struct{}),
		chats: map[int64]*chatState{}, nextUpdateID: firstUpdateID, queries: map[string]*query{},
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	s.URL = s.srv.URL
	tb.Cleanup(s.Close)
	return s
}

// Close stops the fake, releasing held polls.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.quit)
	if s.webhook != nil {
		close(s.webhook.stop)
		s.webhook = nil
	}
	s.mu.Unlock()
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// AddChat makes a chat the bot is a member of.
func (s *Server) AddChat(c Chat) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.Type == "" {
		c.Type = "group"
		if c.ID > 0 {
			c.Type = "private"
		}
	}
	if _, ok := s.chats[c.ID]; !ok {
		s.chats[c.ID] = &chatState{chat: c, messages: map[int]*Message{}, nextID: firstMessageID}
	}
}

// Inject queues a fault.
func (s *Server) Inject(f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f.Times <= 0 {
		f.Times = 1
	}
	s.faults = append(s.faults, &f)
}

// ClearFaults drops every queued fault.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = nil
}

// --- what the humans do -------------------------------------------------------------------

// Press presses a button: it queues a callback_query update from user on message msgID of
// chat with the given data (any data: tests forge it too) and returns the query id.
func (s *Server) Press(chat int64, msgID int, from User, data string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	cs := s.chats[chat]
	var msg map[string]any
	if cs != nil {
		if m := cs.messages[msgID]; m != nil {
			msg = s.messageJSON(cs, m)
		}
	}
	if msg == nil {
		// Telegram sends an inaccessible message (date 0) for messages it cannot show.
		msg = map[string]any{"message_id": msgID, "date": 0, "chat": s.chatJSON(chat)}
	}
	s.nextQueryID++
	qid := fmt.Sprintf("%d%06d", s.Bot.ID, s.nextQueryID)
	s.queries[qid] = &query{id: qid, created: s.now()}
	s.pushLocked(map[string]any{"callback_query": map[string]any{
		"id": qid, "from": from, "message": msg, "chat_instance": fmt.Sprintf("ci%d", chat), "data": data,
	}})
	return qid
}

// PressButton presses the button of message msgID whose callback data starts with (or whose
// text contains) match. It fails the test when there is no such button.
func (s *Server) PressButton(chat int64, msgID int, from User, match string) string {
	s.tb.Helper()
	m, ok := s.Message(chat, msgID)
	if !ok {
		s.tb.Fatalf("telegramtest: no message %d in chat %d", msgID, chat)
	}
	data, ok := m.ButtonData(match)
	if !ok {
		s.tb.Fatalf("telegramtest: message %d in chat %d has no button %q (keyboard %v)", msgID, chat, match, m.Keyboard)
	}
	return s.Press(chat, msgID, from, data)
}

// Say posts a text message from user into chat (from nil: an anonymous or channel post
// without a sender) and queues its update. replyTo > 0 makes it a reply to that message.
func (s *Server) Say(chat int64, from *User, text string, replyTo int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	cs := s.chatLocked(chat)
	m := &Message{ID: cs.nextID, Chat: chat, From: from, Date: s.now().Unix(), Text: text, Plain: text, ReplyTo: replyTo}
	cs.nextID++
	cs.messages[m.ID] = m
	cs.order = append(cs.order, m.ID)
	body := s.messageJSON(cs, m)
	if replyTo > 0 {
		if r := cs.messages[replyTo]; r != nil {
			inner := s.messageJSON(cs, r)
			delete(inner, "reply_to_message") // Telegram does not nest replies
			body["reply_to_message"] = inner
		}
	}
	if from == nil {
		body["sender_chat"] = s.chatJSON(chat)
	}
	if strings.HasPrefix(text, "/") {
		cmd, _, _ := strings.Cut(text, " ")
		body["entities"] = []map[string]any{{"type": "bot_command", "offset": 0, "length": utf16Len(cmd)}}
	}
	s.pushLocked(map[string]any{"message": body})
	return m.ID
}

// ForwardUnknownOrigin posts, from user into chat, a message forwarded from an origin of a
// type newer than any the Bot API library knows ("future_origin"), and returns its update
// id. That is valid Bot API JSON a client cannot decode: the library's whole getUpdates
// batch fails on it, as it would when Telegram ships a new variant.
func (s *Server) ForwardUnknownOrigin(chat int64, from User, text string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	cs := s.chatLocked(chat)
	m := &Message{ID: cs.nextID, Chat: chat, From: &from, Date: s.now().Unix(), Text: text, Plain: text}
	cs.nextID++
	cs.messages[m.ID] = m
	cs.order = append(cs.order, m.ID)
	body := s.messageJSON(cs, m)
	body["forward_origin"] = map[string]any{"type": "future_origin", "date": s.now().Unix()}
	return s.pushLocked(map[string]any{"message": body})
}

// PushRaw queues an arbitrary update body (update_id is added).
func (s *Server) PushRaw(body map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pushLocked(body)
}

func (s *Server) pushLocked(body map[string]any) int64 {
	id := s.nextUpdateID
	s.nextUpdateID++
	body["update_id"] = id
	s.updates = append(s.updates, update{id: id, body: body})
	s.notifyLocked()
	return id
}

func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// --- what the bot did ---------------------------------------------------------------------

// Messages returns a copy of every message in chat, oldest first.
func (s *Server) Messages(chat int64) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	cs := s.chats[chat]
	if cs == nil {
		return nil
	}
	out := make([]Message, 0, len(cs.order))
	for _, id := range cs.order {
		out = append(out, cs.messages[id].clone())
	}
	return out
}

// BotMessages returns the messages the bot sent to chat, oldest first.
func (s *Server) BotMessages(chat int64) []Message {
	var out []Message
	for _, m := range s.Messages(chat) {
		if m.From != nil && m.From.ID == s.Bot.ID {
			out = append(out, m)
		}
	}
	return out
}

// Message returns one message.
func (s *Server) Message(chat int64, id int) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cs := s.chats[chat]; cs != nil {
		if m := cs.messages[id]; m != nil {
			return m.clone(), true
		}
	}
	return Message{}, false
}

// Answers returns every answerCallbackQuery call.
func (s *Server) Answers() []Answer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Answer(nil), s.answers...)
}

// AnswerTo returns the answer to one callback query.
func (s *Server) AnswerTo(queryID string) (Answer, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.answers {
		if a.QueryID == queryID {
			return a, true
		}
	}
	return Answer{}, false
}

// Unanswered lists callback queries nobody answered.
func (s *Server) Unanswered() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for id, q := range s.queries {
		if !q.answered {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// Calls returns every call the bot made (method "" for all).
func (s *Server) Calls(method string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Call
	for _, c := range s.calls {
		if method == "" || strings.EqualFold(c.Method, method) {
			out = append(out, c)
		}
	}
	return out
}

// PendingUpdates is how many updates were not confirmed yet.
func (s *Server) PendingUpdates() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, u := range s.updates {
		if u.id > s.confirmed {
			n++
		}
	}
	return n
}

// Polling reports whether a getUpdates request is being held open now.
func (s *Server) Polling() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.poller != nil
}

// Webhook returns the URL and secret set by setWebhook ("" when none).
func (s *Server) Webhook() (url, secret string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.webhook == nil {
		return "", ""
	}
	return s.webhook.url, s.webhook.secret
}

// WaitFor waits until cond holds (it is checked after every change and every 50 ms), and
// fails the test with what when timeout passes first.
func (s *Server) WaitFor(tb testing.TB, timeout time.Duration, what string, cond func() bool) {
	tb.Helper()
	fakewait.Until(tb, "telegramtest", timeout, 50*time.Millisecond, what, s.changedCh, cond)
}

// changedCh is the channel closed on the fake's next change.
func (s *Server) changedCh() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

func (m *Message) clone() Message {
	c := *m
	c.History = append([]string(nil), m.History...)
	c.Keyboard = nil
	for _, row := range m.Keyboard {
		c.Keyboard = append(c.Keyboard, append([]Button(nil), row...))
	}
	if m.From != nil {
		u := *m.From
		c.From = &u
	}
	return c
}

// --- the API ------------------------------------------------------------------------------

type apiError struct {
	code        int
	description string
	retryAfter  int
}

func (e *apiError) Error() string { return e.description }

func badRequest(desc string) *apiError { return &apiError{code: 400, description: desc} }

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot")
	token, method, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 {
		writeError(w, &apiError{code: 404, description: "Not Found"})
		return
	}
	if token != s.Token {
		writeError(w, &apiError{code: 401, description: ErrUnauthorizedDesc})
		return
	}
	if r.Method != http.MethodPost && r.Method != http.MethodGet {
		writeError(w, &apiError{code: 405, description: "Method Not Allowed"})
		return
	}
	params, ctype, err := parseParams(r)
	call := Call{Method: method, ContentType: ctype, Params: params, At: time.Now()}
	if err != nil {
		call.Status = 400
		s.record(call)
		writeError(w, badRequest("Bad Request: "+err.Error()))
		return
	}
	if f := s.takeFault(method); f != nil {
		call.Status = f.Code
		s.record(call)
		if f.Raw != "" {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(f.Code)
			io.WriteString(w, f.Raw)
			return
		}
		desc := f.Description
		if desc == "" {
			switch f.Code {
			case 429:
				desc = fmt.Sprintf(ErrTooManyRequests, f.RetryAfter)
			case 500:
				desc = "Internal Server Error"
			case 502:
				desc = "Bad Gateway"
			default:
				desc = http.StatusText(f.Code)
			}
		}
		writeError(w, &apiError{code: f.Code, description: desc, retryAfter: f.RetryAfter})
		return
	}
	var result any
	switch strings.ToLower(method) {
	case "getme":
		result = s.Bot
	case "getupdates":
		result, err = s.getUpdates(r.Context(), params)
	case "sendmessage":
		result, err = s.sendMessage(params)
	case "editmessagetext":
		result, err = s.editMessageText(params)
	case "answercallbackquery":
		result, err = s.answerCallbackQuery(params)
	case "setwebhook":
		result, err = s.setWebhook(params)
	case "deletewebhook":
		result, err = s.deleteWebhook(params)
	case "getwebhookinfo":
		result = s.webhookInfo()
	default:
		err = &apiError{code: 404, description: "Not Found"}
	}
	var ae *apiError
	switch {
	case err == nil:
		call.Status = 200
	case errors.As(err, &ae):
		call.Status = ae.code
	default:
		ae = &apiError{code: 500, description: "Internal Server Error: " + err.Error()}
		call.Status = 500
	}
	s.record(call)
	if ae != nil {
		writeError(w, ae)
		return
	}
	writeJSON(w, 200, map[string]any{"ok": true, "result": result})
}

func (s *Server) record(c Call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, c)
	s.notifyLocked()
}

func (s *Server) takeFault(method string) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, f := range s.faults {
		if f.Method == "" && strings.EqualFold(method, "getUpdates") {
			continue
		}
		if f.Method != "" && !strings.EqualFold(f.Method, method) {
			continue
		}
		f.Times--
		if f.Times <= 0 {
			s.faults = append(s.faults[:i], s.faults[i+1:]...)
		}
		c := *f
		return &c
	}
	return nil
}

func writeError(w http.ResponseWriter, e *apiError) {
	body := map[string]any{"ok": false, "error_code": e.code, "description": e.description}
	if e.retryAfter > 0 {
		body["parameters"] = map[string]any{"retry_after": e.retryAfter}
	}
	writeJSON(w, e.code, body)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// parseParams reads the parameters the way the Bot API accepts them: query string,
// application/x-www-form-urlencoded, application/json or multipart/form-data.
func parseParams(r *http.Request) (map[string]string, string, error) {
	out := map[string]string{}
	for k, v := range r.URL.Query() {
		out[k] = v[0]
	}
	ctype := r.Header.Get("Content-Type")
	if r.Body == nil {
		return out, ctype, nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return nil, ctype, fmt.Errorf("reading body: %v", err)
	}
	if len(body) > maxBody {
		return nil, ctype, errors.New("request body too large")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return out, ctype, nil
	}
	mt, mp, err := mime.ParseMediaType(ctype)
	if err != nil {
		return nil, ctype, fmt.Errorf("bad Content-Type %q", ctype)
	}
	switch mt {
	case "multipart/form-data":
		mr := multipart.NewReader(bytes.NewReader(body), mp["boundary"])
		for {
			p, err := mr.NextPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, ctype, fmt.Errorf("bad multipart body: %v", err)
			}
			v, err := io.ReadAll(p)
			if err != nil {
				return nil, ctype, fmt.Errorf("bad multipart part: %v", err)
			}
			out[p.FormName()] = string(v)
		}
	case "application/x-www-form-urlencoded":
		q, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, ctype, fmt.Errorf("bad form body: %v", err)
		}
		for k, v := range q {
			out[k] = v[0]
		}
	case "application/json":
		var m map[string]json.RawMessage
		if err := json.Unmarshal(body, &m); err != nil {
			return nil, ctype, fmt.Errorf("bad JSON body: %v", err)
		}
		for k, v := range m {
			var str string
			if json.Unmarshal(v, &str) == nil {
				out[k] = str
			} else {
				out[k] = string(v)
			}
		}
	default:
		return nil, ctype, fmt.Errorf("unsupported Content-Type %q", mt)
	}
	return out, ctype, nil
}

func intParam(p map[string]string, name string) (int64, bool, error) {
	v, ok := p[name]
	if !ok || v == "" {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(strings.Trim(v, `"`), 10, 64)
	if err != nil {
		return 0, true, badRequest(fmt.Sprintf("Bad Request: invalid %s", name))
	}
	return n, true, nil
}

func (s *Server) getUpdates(ctx context.Context, p map[string]string) (any, error) {
	offset, _, err := intParam(p, "offset")
	if err != nil {
		return nil, err
	}
	limit, hasLimit, err := intParam(p, "limit")
	if err != nil {
		return nil, err
	}
	if !hasLimit || limit <= 0 || limit > 100 {
		limit = 100
	}
	timeout, _, err := intParam(p, "timeout")
	if err != nil {
		return nil, err
	}
	wait := min(time.Duration(max(timeout, 0))*time.Second, maxPollTimeout)

	s.mu.Lock()
	if s.webhook != nil {
		s.mu.Unlock()
		return nil, &apiError{code: 409, description: ErrWebhookConflict}
	}
	if offset > 0 && offset-1 > s.confirmed {
		s.confirmed = offset - 1
	}
	if s.poller != nil {
		// The newer request wins, as on the real API.
		close(s.poller.terminated)
	}
	me := &poll{terminated: make(chan struct{})}
	s.poller = me
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if s.poller == me {
			s.poller = nil
		}
		s.notifyLocked()
		s.mu.Unlock()
	}()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		s.mu.Lock()
		var out []map[string]any
		for _, u := range s.updates {
			if u.id > s.confirmed && int64(len(out)) < limit {
				out = append(out, u.body)
			}
		}
		ch := s.changed
		s.mu.Unlock()
		if len(out) > 0 {
			return out, nil
		}
		select {
		case <-ch:
		case <-timer.C:
			return []map[string]any{}, nil
		case <-me.terminated:
			return nil, &apiError{code: 409, description: ErrPollConflict}
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-s.quit:
			return []map[string]any{}, nil
		}
	}
}

func (s *Server) sendMessage(p map[string]string) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cs, err := s.chatParamLocked(p)
	if err != nil {
		return nil, err
	}
	m := &Message{Chat: cs.chat.ID, From: &s.Bot, Date: s.now().Unix(), Text: p["text"], ParseMode: p["parse_mode"]}
	if m.Plain, err = visibleText(m.Text, m.ParseMode); err != nil {
		return nil, err
	}
	if err := parseMarkup(p["reply_markup"], m, false); err != nil {
		return nil, err
	}
	if rp := p["reply_parameters"]; rp != "" {
		var r struct {
			MessageID                int  `json:"message_id"`
			AllowSendingWithoutReply bool `json:"allow_sending_without_reply"`
		}
		if json.Unmarshal([]byte(rp), &r) != nil {
			return nil, badRequest("Bad Request: can't parse reply parameters JSON object")
		}
		if cs.messages[r.MessageID] != nil {
			m.ReplyTo = r.MessageID
		} else if !r.AllowSendingWithoutReply {
			return nil, badRequest(ErrReplyNotFound)
		}
	}
	m.LinkPreviewDisabled = linkPreviewDisabled(p["link_preview_options"])
	m.ID = cs.nextID
	cs.nextID++
	cs.messages[m.ID] = m
	cs.order = append(cs.order, m.ID)
	s.notifyLocked()
	return s.messageJSON(cs, m), nil
}

func (s *Server) editMessageText(p map[string]string) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p["inline_message_id"] != "" {
		return nil, badRequest("Bad Request: inline messages are not supported by this fake")
	}
	cs, err := s.chatParamLocked(p)
	if err != nil {
		return nil, err
	}
	id, has, err := intParam(p, "message_id")
	if err != nil {
		return nil, err
	}
	if !has {
		return nil, badRequest("Bad Request: message identifier is not specified")
	}
	m := cs.messages[int(id)]
	if m == nil {
		return nil, badRequest(ErrMessageNotFound)
	}
	if m.From == nil || m.From.ID != s.Bot.ID {
		return nil, badRequest(ErrCantEdit)
	}
	next := &Message{Text: p["text"], ParseMode: p["parse_mode"]}
	if next.Plain, err = visibleText(next.Text, next.ParseMode); err != nil {
		return nil, err
	}
	if err := parseMarkup(p["reply_markup"], next, true); err != nil {
		return nil, err
	}
	if next.Plain == m.Plain && next.Text == m.Text && next.ParseMode == m.ParseMode && sameKeyboard(next.Keyboard, m.Keyboard) {
		return nil, badRequest(ErrNotModified)
	}
	m.History = append(m.History, m.Text)
	m.Text, m.ParseMode, m.Plain, m.Keyboard = next.Text, next.ParseMode, next.Plain, next.Keyboard
	m.LinkPreviewDisabled = linkPreviewDisabled(p["link_preview_options"])
	m.Edits++
	m.EditDate = s.now().Unix()
	s.notifyLocked()
	return s.messageJSON(cs, m), nil
}

func (s *Server) answerCallbackQuery(p map[string]string) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.queries[p["callback_query_id"]]
	if q == nil || q.answered {
		return nil, badRequest(ErrQueryInvalid)
	}
	text := p["text"]
	if len([]rune(text)) > MaxAnswerText {
		return nil, badRequest(ErrAnswerTooLong)
	}
	q.answered = true
	s.answers = append(s.answers, Answer{QueryID: q.id, Text: text, ShowAlert: p["show_alert"] == "true", At: s.now()})
	s.notifyLocked()
	return true, nil
}

func (s *Server) setWebhook(p map[string]string) (any, error) {
	u := p["url"]
	if u == "" {
		return s.deleteWebhook(p)
	}
	if _, err := url.Parse(u); err != nil {
		return nil, badRequest("Bad Request: bad webhook: invalid URL")
	}
	s.UseWebhook(u, p["secret_token"])
	return true, nil
}

func (s *Server) deleteWebhook(p map[string]string) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.webhook != nil {
		close(s.webhook.stop)
		s.webhook = nil
	}
	if p["drop_pending_updates"] == "true" {
		s.confirmed = s.nextUpdateID - 1
	}
	s.notifyLocked()
	return true, nil
}

func (s *Server) webhookInfo() any {
	s.mu.Lock()
	defer s.mu.Unlock()
	info := map[string]any{"url": "", "has_custom_certificate": false, "pending_update_count": 0}
	if s.webhook != nil {
		info["url"] = s.webhook.url
	}
	n := 0
	for _, u := range s.updates {
		if u.id > s.confirmed {
			n++
		}
	}
	info["pending_update_count"] = n
	return info
}

// UseWebhook makes the fake deliver updates by POSTing them to url with the secret header,
// as Telegram does after setWebhook; a non-2xx answer is retried.
func (s *Server) UseWebhook(url, secret string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.webhook != nil {
		close(s.webhook.stop)
	}
	wh := &webhook{url: url, secret: secret, stop: make(chan struct{})}
	s.webhook = wh
	if s.poller != nil {
		close(s.poller.terminated)
		s.poller = nil
	}
	s.notifyLocked()
	go s.deliverWebhook(wh)
}

func (s *Server) deliverWebhook(wh *webhook) {
	client := &http.Client{Timeout: 30 * time.Second}
	backoff := 50 * time.Millisecond
	for {
		s.mu.Lock()
		var next *update
		for i := range s.updates {
			if s.updates[i].id > s.confirmed {
				next = &s.updates[i]
				break
			}
		}
		ch := s.changed
		s.mu.Unlock()
		if next == nil {
			select {
			case <-ch:
				continue
			case <-wh.stop:
				return
			}
		}
		raw, _ := json.Marshal(next.body)
		req, _ := http.NewRequest(http.MethodPost, wh.url, bytes.NewReader(raw))
		req.Header.Set("Content-Type", "application/json")
		if wh.secret != "" {
			req.Header.Set("X-Telegram-Bot-Api-Secret-Token", wh.secret)
		}
		resp, err := client.Do(req)
		ok := false
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			ok = resp.StatusCode/100 == 2
		}
		if ok {
			s.mu.Lock()
			if next.id > s.confirmed {
				s.confirmed = next.id
			}
			s.notifyLocked()
			s.mu.Unlock()
			backoff = 50 * time.Millisecond
			continue
		}
		select {
		case <-time.After(backoff):
			backoff = min(backoff*2, time.Second)
		case <-wh.stop:
			return
		}
	}
}

// --- helpers ------------------------------------------------------------------------------

func (s *Server) chatLocked(id int64) *chatState {
	cs := s.chats[id]
	if cs == nil {
		typ := "group"
		if id > 0 {
			typ = "private"
		}
		cs = &chatState{chat: Chat{ID: id, Type: typ}, messages: map[int]*Message{}, nextID: firstMessageID}
		s.chats[id] = cs
	}
	return cs
}

func (s *Server) chatParamLocked(p map[string]string) (*chatState, error) {
	raw, ok := p["chat_id"]
	if !ok || raw == "" {
		return nil, badRequest("Bad Request: chat_id is empty")
	}
	id, err := strconv.ParseInt(strings.Trim(raw, `"`), 10, 64)
	if err != nil {
		return nil, badRequest(ErrChatNotFound)
	}
	cs := s.chats[id]
	if cs == nil {
		return nil, badRequest(ErrChatNotFound)
	}
	return cs, nil
}

func (s *Server) chatJSON(id int64) map[string]any {
	c := Chat{ID: id, Type: "group"}
	if cs := s.chats[id]; cs != nil {
		c = cs.chat
	}
	out := map[string]any{"id": c.ID, "type": c.Type}
	if c.Title != "" {
		out["title"] = c.Title
	}
	return out
}

// messageJSON is a Message object as the API returns it; date is never 0.
func (s *Server) messageJSON(cs *chatState, m *Message) map[string]any {
	out := map[string]any{"message_id": m.ID, "date": m.Date, "chat": s.chatJSON(cs.chat.ID)}
	if m.Date == 0 {
		out["date"] = s.now().Unix()
	}
	if m.From != nil {
		out["from"] = *m.From
	}
	if m.Plain != "" {
		out["text"] = m.Plain
	}
	if m.EditDate != 0 {
		out["edit_date"] = m.EditDate
	}
	if m.HasButtons() {
		out["reply_markup"] = map[string]any{"inline_keyboard": m.Keyboard}
	}
	if m.ReplyTo > 0 {
		if r := cs.messages[m.ReplyTo]; r != nil && r != m {
			inner := map[string]any{"message_id": r.ID, "date": r.Date, "chat": s.chatJSON(cs.chat.ID), "text": r.Plain}
			if r.From != nil {
				inner["from"] = *r.From
			}
			out["reply_to_message"] = inner
		}
	}
	return out
}

func linkPreviewDisabled(raw string) bool {
	var o struct {
		IsDisabled bool `json:"is_disabled"`
	}
	return raw != "" && json.Unmarshal([]byte(raw), &o) == nil && o.IsDisabled
}

// parseMarkup validates reply_markup into m. In an edit only an inline keyboard is allowed.
func parseMarkup(raw string, m *Message, edit bool) error {
	if raw == "" {
		return nil
	}
	var mk struct {
		InlineKeyboard *[][]Button      `json:"inline_keyboard"`
		ForceReply     *bool            `json:"force_reply"`
		Selective      bool             `json:"selective"`
		Keyboard       *json.RawMessage `json:"keyboard"`
		RemoveKeyboard *bool            `json:"remove_keyboard"`
	}
	if err := json.Unmarshal([]byte(raw), &mk); err != nil {
		return badRequest("Bad Request: can't parse reply keyboard markup JSON object")
	}
	switch {
	case mk.InlineKeyboard != nil:
		total := 0
		for _, row := range *mk.InlineKeyboard {
			if len(row) > MaxButtonsPerRow {
				return badRequest("Bad Request: too many buttons in a row")
			}
			for _, b := range row {
				total++
				if b.Text == "" {
					return badRequest("Bad Request: text buttons are unallowed in the inline keyboard")
				}
				if len(b.CallbackData) > MaxCallbackData {
					return badRequest(ErrButtonData)
				}
				if b.CallbackData == "" && b.URL == "" && !nonEmptyCopyText(b.CopyText) {
					return badRequest("Bad Request: text buttons are unallowed in the inline keyboard")
				}
			}
		}
		if total > MaxButtons {
			return badRequest("Bad Request: reply markup is too long")
		}
		m.Keyboard = *mk.InlineKeyboard
	case edit:
		return badRequest("Bad Request: inline keyboard expected")
	case mk.ForceReply != nil:
		if !*mk.ForceReply {
			return badRequest("Bad Request: force_reply must be true")
		}
		m.ForceReply, m.ForceReplySelective = true, mk.Selective
	case mk.Keyboard != nil, mk.RemoveKeyboard != nil:
	default:
		return badRequest("Bad Request: unsupported reply markup")
	}
	return nil
}

func nonEmptyCopyText(raw json.RawMessage) bool {
	var c struct {
		Text string `json:"text"`
	}
	return len(raw) > 0 && json.Unmarshal(raw, &c) == nil && c.Text != ""
}

func sameKeyboard(a, b [][]Button) bool {
	norm := func(k [][]Button) string {
		var rows [][]Button
		for _, r := range k {
			if len(r) > 0 {
				rows = append(rows, r)
			}
		}
		out, _ := json.Marshal(rows)
		return string(out)
	}
	return norm(a) == norm(b)
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}
