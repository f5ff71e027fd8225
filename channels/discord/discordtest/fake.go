// Package discordtest is a fake Discord for tests, on 127.0.0.1: the REST API approvebot
// uses (create and edit messages, interaction callbacks, followups, command registration,
// the gateway lookup) and a gateway websocket (HELLO, IDENTIFY, READY, heartbeats and their
// ACKs, RESUME and RESUMED with replay, INVALID_SESSION, dispatch of INTERACTION_CREATE and
// MESSAGE_CREATE). It enforces the limits and rules that matter: content ≤ 2000, custom_id
// ≤ 100, components and embed limits, modal rules, the 3-second first response, one
// initial response per interaction, and — stricter than Discord — every message body must
// carry allowed_mentions with an explicit empty parse list. A rejected body is answered the
// way Discord answers (400 with a JSON error code) and recorded in Rejections, so a test can
// assert that nothing was ever rejected. It can answer 429 with retry_after on demand and
// drop gateway connections.
package discordtest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/approvebot/approvebot/internal/fakewait"
	"github.com/gorilla/websocket"
)

// Limits enforced by the fake (https://discord.com/developers/docs).
const (
	MaxContent        = 2000
	MaxCustomID       = 100
	MaxButtonLabel    = 80
	MaxRows           = 5
	MaxButtonsPerRow  = 5
	MaxEmbeds         = 10
	MaxEmbedTitle     = 256
	MaxEmbedDesc      = 4096
	MaxEmbedFields    = 25
	MaxEmbedFieldName = 256
	MaxEmbedFieldVal  = 1024
	MaxEmbedFooter    = 2048
	MaxEmbedAuthor    = 256
	MaxEmbedTotal     = 6000
	MaxModalTitle     = 45
	MaxInputLabel     = 45
	MaxInputLength    = 4000
	MaxNonce          = 25
	// InteractionDeadline is how long after delivery the first response may come.
	InteractionDeadline = 3 * time.Second
)

// Message flags.
const (
	FlagSuppressEmbeds        = 1 << 2
	FlagEphemeral             = 1 << 6
	FlagSuppressNotifications = 1 << 12
)

// Options configure the fake.
type Options struct {
	// Token is the bot token (without "Bot "). Required.
	Token string
	// AppID and BotID default to fixed ids.
	AppID, BotID string
	// Channels are the channel ids that exist, mapped to their guild id ("" for a DM).
	Channels map[string]string
	// HeartbeatInterval sent in HELLO (default 1 s).
	HeartbeatInterval time.Duration
	// NoMessageContent closes an IDENTIFY asking for MESSAGE_CONTENT with 4014, as Discord
	// does when the privileged intent is off in the developer portal.
	NoMessageContent bool
}

// Component is a message component as sent.
type Component struct {
	Type       int         `json:"type"`
	Style      int         `json:"style,omitempty"`
	Label      string      `json:"label,omitempty"`
	CustomID   string      `json:"custom_id,omitempty"`
	URL        string      `json:"url,omitempty"`
	Disabled   bool        `json:"disabled,omitempty"`
	Components []Component `json:"components,omitempty"`
}

// Message is a stored message.
type Message struct {
	ID         string
	ChannelID  string
	GuildID    string
	AuthorID   string
	Bot        bool
	Content    string
	Components []Component
	Flags      int
	ReplyTo    string
	Nonce      string
	Edits      int
	// Body is the last JSON body that created or edited it (bot messages).
	Body json.RawMessage
}

// Buttons lists the custom_ids of the message's buttons.
func (m Message) Buttons() []string {
	var out []string
	var walk func([]Component)
	walk = func(cs []Component) {
		for _, c := range cs {
			if c.Type == 2 {
				out = append(out, c.CustomID)
			}
			walk(c.Components)
		}
	}
	walk(m.Components)
	return out
}

// Response is one answer to an interaction: the initial callback, a followup or an edit of
// the original response.
type Response struct {
	Kind    string // "callback", "followup", "edit"
	Type    int    // callback type (4, 5, 6, 7, 9); 0 for followups and edits
	Content string
	Flags   int
	Data    json.RawMessage
	At      time.Time
}

// Interaction is one interaction the fake created.
type Interaction struct {
	ID, Token string
	Type      int
	ChannelID string
	GuildID   string
	UserID    string
	MessageID string
	// FromComponent is set for modal submits of a form opened by a button.
	FromComponent bool
	Delivered     time.Time
	Responses     []Response
}

// Rejection is a request the fake refused as invalid.
type Rejection struct {
	Method, Path string
	Status       int
	Code         int
	Reason       string
	Body         string
}

// Call is one REST call.
type Call struct {
	Method, Path string
	Status       int
	At           time.Time
}

// Server is the fake.
type Server struct {
	// URL is the api_url to configure: http://127.0.0.1:PORT.
	URL   string
	opts  Options
	ln    net.Listener
	srv   *http.Server
	up    websocket.Upgrader
	start time.Time

	mu           sync.Mutex
	changed      chan struct{}
	nextID       uint64
	messages     map[string]*Message
	order        []string
	nonces       map[string]string // channel/nonce → message id
	interactions map[string]*Interaction
	commands     map[string]json.RawMessage
	rejections   []Rejection
	calls        []Call
	limit        struct {
		n     int
		after time.Duration
		match string
	}
	limited  int
	sessions map[string]*session
	current  *session
	conns    map[*conn]bool
	ackBeats bool
	ident    int
	resumes  int
	intents  []int
	closed   bool
}

type session struct {
	id   string
	seq  int64
	log  []event
	conn *conn
}

type event struct {
	seq  int64
	t    string
	data json.RawMessage
	// interaction whose deadline starts at delivery
	interaction *Interaction
}

type conn struct {
	ws   *websocket.Conn
	s    *session
	out  chan any
	done chan struct{}
}

// write queues a payload; one writer goroutine per connection keeps the order.
func (c *conn) write(v any) {
	select {
	case c.out <- v:
	case <-c.done:
	}
}

func (c *conn) writer() {
	for {
		select {
		case v := <-c.out:
			c.ws.SetWriteDeadline(time.Now().Add(5 * time.Second))
			if err := c.ws.WriteJSON(v); err != nil {
				c.ws.NetConn().Close()
				return
			}
		case <-c.done:
			return
		}
	}
}

// Start runs a fake on 127.0.0.1 until the test ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	if opts.Token == "" {
		t.Fatal("discordtest: Token is required")
	}
	if opts.AppID == "" {
		opts.AppID = "1100000000000000001"
	}
	if opts.BotID == "" {
		opts.BotID = "1100000000000000002"
	}
	if opts.HeartbeatInterval == 0 {
		opts.HeartbeatInterval = time.Second
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{
		URL: "http://" + ln.Addr().String(), opts: opts, ln: ln, start: time.Now(),
		changed: make(chan struct{}), nextID: 1200000000000000000,
		messages: map[string]*Message{}, nonces: map[string]string{}, interactions: map[string]*Interaction{},
		commands: map[string]json.RawMessage{}, sessions: map[string]*session{}, conns: map[*conn]bool{},
		ackBeats: true,
		up:       websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }},
	}
	if s.opts.Channels == nil {
		s.opts.Channels = map[string]string{}
	}
	s.srv = &http.Server{Handler: http.HandlerFunc(s.serve), ReadHeaderTimeout: 5 * time.Second}
	go s.srv.Serve(ln)
	t.Cleanup(s.Close)
	return s
}

// Close stops the fake and drops every connection.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.ws.NetConn().Close()
	}
	s.srv.Close()
}

// AppID is the application id READY announces.
func (s *Server) AppID() string { return s.opts.AppID }

// BotID is the bot's user id.
func (s *Server) BotID() string { return s.opts.BotID }

// AddChannel makes a channel exist.
func (s *Server) AddChannel(id, guildID string) {
	s.mu.Lock()
	s.opts.Channels[id] = guildID
	s.mu.Unlock()
}

func (s *Server) id() string {
	s.nextID++
	return strconv.FormatUint(s.nextID, 10)
}

func token() string {
	b := make([]byte, 24)
	rand.Read(b)
	return "aW50ZXJhY3Rpb24" + hex.EncodeToString(b)
}

// bump wakes waiters; s.mu must be held.
func (s *Server) bump() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Wait polls cond (called with the fake's state readable through its methods) until it is
// true or timeout passes.
func (s *Server) Wait(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	fakewait.Until(t, "discordtest", timeout, 100*time.Millisecond, what, s.changedCh, cond)
}

// changedCh is the channel closed on the fake's next change.
func (s *Server) changedCh() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// ---- state readers ----

// Messages returns the messages of a channel, oldest first.
func (s *Server) Messages(channel string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, id := range s.order {
		if m := s.messages[id]; m.ChannelID == channel {
			out = append(out, *m)
		}
	}
	return out
}

// Cards returns the bot's messages in a channel that are not replies (the cards).
func (s *Server) Cards(channel string) []Message {
	var out []Message
	for _, m := range s.Messages(channel) {
		if m.Bot && m.ReplyTo == "" {
			out = append(out, m)
		}
	}
	return out
}

// Message returns a message by id.
func (s *Server) Message(id string) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.messages[id]
	if !ok {
		return Message{}, false
	}
	return *m, true
}

// Interaction returns a copy of an interaction's record.
func (s *Server) Interaction(id string) Interaction {
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.interactions[id]
	if in == nil {
		return Interaction{}
	}
	cp := *in
	cp.Responses = append([]Response(nil), in.Responses...)
	return cp
}

// WaitResponses waits until the interaction has at least n responses and returns them.
func (s *Server) WaitResponses(t testing.TB, id string, n int, timeout time.Duration) []Response {
	t.Helper()
	s.Wait(t, timeout, fmt.Sprintf("%d responses to interaction %s", n, id), func() bool {
		return len(s.Interaction(id).Responses) >= n
	})
	return s.Interaction(id).Responses
}

// Rejections lists the requests the fake refused as invalid.
func (s *Server) Rejections() []Rejection {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Rejection(nil), s.rejections...)
}

// Calls lists every REST call.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// Commands returns the registered commands of a scope: "global" or a guild id.
func (s *Server) Commands(scope string) json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.commands[scope]
}

// Identifies, Resumes and Intents report the gateway handshakes seen.
func (s *Server) Identifies() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ident
}

// Resumes counts successful RESUMEs.
func (s *Server) Resumes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.resumes
}

// Intents lists the intents of every IDENTIFY.
func (s *Server) Intents() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.intents...)
}

// Connected reports whether a gateway connection is live.
func (s *Server) Connected() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.current != nil && s.current.conn != nil
}

// RateLimited counts the 429 answers given.
func (s *Server) RateLimited() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.limited
}

// ---- knobs ----

// RateLimit answers the next n REST calls whose path contains match ("" for all but the
// gateway lookup) with 429 and retry_after.
func (s *Server) RateLimit(n int, retryAfter time.Duration, match string) {
	s.mu.Lock()
	s.limit.n, s.limit.after, s.limit.match = n, retryAfter, match
	s.mu.Unlock()
}

// AckHeartbeats turns heartbeat ACKs on or off (off makes the client reconnect).
func (s *Server) AckHeartbeats(on bool) {
	s.mu.Lock()
	s.ackBeats = on
	s.mu.Unlock()
}

// Disconnect drops every gateway connection without a close frame, as a network failure
// would. Events dispatched until the client resumes are replayed on RESUME.
func (s *Server) Disconnect() {
	s.mu.Lock()
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.ws.NetConn().Close()
	}
}

// ---- users acting ----

// User is who acts in an interaction or message.
type User struct {
	ID       string
	Username string
	Nick     string
}

func (s *Server) userJSON(u User) map[string]any {
	name := u.Username
	if name == "" {
		name = "user" + u.ID
	}
	return map[string]any{"id": u.ID, "username": name, "global_name": name, "discriminator": "0", "bot": false}
}

func (s *Server) memberJSON(u User) map[string]any {
	return map[string]any{"user": s.userJSON(u), "nick": u.Nick, "roles": []string{}, "joined_at": "2024-01-01T00:00:00Z", "permissions": "0"}
}

// messageJSON is a message as Discord sends it; s.mu must be held.
func (s *Server) messageJSON(m *Message) map[string]any {
	author := map[string]any{"id": m.AuthorID, "username": "bot", "discriminator": "0", "bot": m.Bot}
	if !m.Bot {
		author = s.userJSON(User{ID: m.AuthorID})
	}
	out := map[string]any{
		"id": m.ID, "channel_id": m.ChannelID, "content": m.Content, "author": author,
		"components": m.Components, "flags": m.Flags, "type": 0, "tts": false,
		"timestamp": s.start.UTC().Format(time.RFC3339), "embeds": []any{}, "attachments": []any{},
		"mentions": []any{}, "mention_roles": []any{}, "mention_everyone": false, "pinned": false,
	}
	if m.Components == nil {
		out["components"] = []any{}
	}
	if m.GuildID != "" {
		out["guild_id"] = m.GuildID
	}
	if m.ReplyTo != "" {
		out["type"] = 19
		ref := map[string]any{"message_id": m.ReplyTo, "channel_id": m.ChannelID}
		if m.GuildID != "" {
			ref["guild_id"] = m.GuildID
		}
		out["message_reference"] = ref
	}
	return out
}

func (s *Server) newInteraction(typ int, channel string, u User, message string, data map[string]any) (*Interaction, map[string]any, error) {
	guild, ok := s.opts.Channels[channel]
	if !ok {
		return nil, nil, fmt.Errorf("no channel %s", channel)
	}
	in := &Interaction{ID: s.id(), Token: token(), Type: typ, ChannelID: channel, GuildID: guild, UserID: u.ID, MessageID: message}
	d := map[string]any{
		"id": in.ID, "application_id": s.opts.AppID, "type": typ, "token": in.Token, "version": 1,
		"channel_id": channel, "data": data, "locale": "en-US", "app_permissions": "0",
		"channel": map[string]any{"id": channel, "type": 0},
	}
	if guild != "" {
		d["guild_id"] = guild
		d["member"] = s.memberJSON(u)
		d["context"] = 0
	} else {
		d["user"] = s.userJSON(u)
		d["context"] = 1
	}
	if message != "" {
		m, ok := s.messages[message]
		if !ok {
			return nil, nil, fmt.Errorf("no message %s", message)
		}
		d["message"] = s.messageJSON(m)
	}
	s.interactions[in.ID] = in
	return in, d, nil
}

// Press presses the button with customID on message, as user. It returns the interaction id.
func (s *Server) Press(t testing.TB, channel, message string, u User, customID string) string {
	t.Helper()
	return s.press(t, channel, message, u, customID, true)
}

// PressStale presses a button the message may no longer show, as a client still showing an
// older version of the card would (the loser of a race).
func (s *Server) PressStale(t testing.TB, channel, message string, u User, customID string) string {
	t.Helper()
	return s.press(t, channel, message, u, customID, false)
}

func (s *Server) press(t testing.TB, channel, message string, u User, customID string, strict bool) string {
	t.Helper()
	s.mu.Lock()
	m, ok := s.messages[message]
	found := ok && !strict
	if ok {
		for _, b := range m.Buttons() {
			found = found || b == customID
		}
	}
	if !found {
		s.mu.Unlock()
		t.Fatalf("discordtest: message %s has no button %q", message, customID)
	}
	in, d, err := s.newInteraction(3, channel, u, message, map[string]any{"custom_id": customID, "component_type": 2})
	if err == nil {
		s.dispatchLocked("INTERACTION_CREATE", d, in)
	}
	s.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	return in.ID
}

// SubmitModal submits the form opened by the interaction from (which must have been
// answered with a modal), with the given text input values.
func (s *Server) SubmitModal(t testing.TB, from string, u User, values map[string]string) string {
	t.Helper()
	s.mu.Lock()
	src := s.interactions[from]
	var modal struct {
		CustomID   string      `json:"custom_id"`
		Components []Component `json:"components"`
	}
	ok := false
	if src != nil {
		for _, r := range src.Responses {
			if r.Kind == "callback" && r.Type == 9 {
				ok = json.Unmarshal(r.Data, &modal) == nil
			}
		}
	}
	if !ok {
		s.mu.Unlock()
		t.Fatalf("discordtest: interaction %s was not answered with a modal", from)
	}
	var rows []map[string]any
	for _, row := range modal.Components {
		var inputs []map[string]any
		for _, c := range row.Components {
			inputs = append(inputs, map[string]any{"type": 4, "custom_id": c.CustomID, "value": values[c.CustomID]})
		}
		rows = append(rows, map[string]any{"type": 1, "components": inputs})
	}
	in, d, err := s.newInteraction(5, src.ChannelID, u, src.MessageID, map[string]any{"custom_id": modal.CustomID, "components": rows})
	if err == nil {
		in.FromComponent = src.Type == 3
		s.dispatchLocked("INTERACTION_CREATE", d, in)
	}
	s.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	return in.ID
}

// Slash runs an application command (which must be registered in the channel's guild or
// globally) with string options.
func (s *Server) Slash(t testing.TB, channel string, u User, name string, options map[string]string) string {
	t.Helper()
	s.mu.Lock()
	guild := s.opts.Channels[channel]
	if !s.commandRegistered(guild, name) {
		s.mu.Unlock()
		t.Fatalf("discordtest: command /%s is not registered for guild %q", name, guild)
	}
	var opts []map[string]any
	for k, v := range options {
		opts = append(opts, map[string]any{"name": k, "type": 3, "value": v})
	}
	in, d, err := s.newInteraction(2, channel, u, "", map[string]any{"id": "1300000000000000001", "name": name, "type": 1, "options": opts})
	if err == nil {
		s.dispatchLocked("INTERACTION_CREATE", d, in)
	}
	s.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	return in.ID
}

func (s *Server) commandRegistered(guild, name string) bool {
	for _, scope := range []string{"global", guild} {
		var cmds []struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(s.commands[scope], &cmds) != nil {
			continue
		}
		for _, c := range cmds {
			if c.Name == name {
				return true
			}
		}
	}
	return false
}

// Say posts a user's message (a reply when replyTo is set) and dispatches MESSAGE_CREATE.
// It returns the message id.
func (s *Server) Say(t testing.TB, channel string, u User, content, replyTo string) string {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	guild, ok := s.opts.Channels[channel]
	if !ok {
		t.Fatalf("discordtest: no channel %s", channel)
	}
	m := &Message{ID: s.id(), ChannelID: channel, GuildID: guild, AuthorID: u.ID, Content: content, ReplyTo: replyTo}
	s.messages[m.ID] = m
	s.order = append(s.order, m.ID)
	d := s.messageJSON(m)
	d["author"] = s.userJSON(u)
	if ref, ok := s.messages[replyTo]; ok {
		d["referenced_message"] = s.messageJSON(ref)
	}
	if guild != "" {
		mem := s.memberJSON(u)
		delete(mem, "user")
		d["member"] = mem
	}
	s.dispatchLocked("MESSAGE_CREATE", d, nil)
	s.bump()
	return m.ID
}

// ---- gateway ----

// dispatchLocked sends an event to the current session (or keeps it for a RESUME).
func (s *Server) dispatchLocked(t string, d any, in *Interaction) {
	raw, _ := json.Marshal(d)
	ss := s.current
	if ss == nil {
		return
	}
	ss.seq++
	ev := event{seq: ss.seq, t: t, data: raw, interaction: in}
	ss.log = append(ss.log, ev)
	if c := ss.conn; c != nil {
		s.deliverLocked(c, ev)
	}
}

func (s *Server) deliverLocked(c *conn, ev event) {
	if ev.interaction != nil {
		ev.interaction.Delivered = time.Now()
	}
	c.write(map[string]any{"op": 0, "s": ev.seq, "t": ev.t, "d": json.RawMessage(ev.data)})
}

func (s *Server) serveGateway(w http.ResponseWriter, r *http.Request) {
	ws, err := s.up.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	c := &conn{ws: ws, out: make(chan any, 4096), done: make(chan struct{})}
	go c.writer()
	defer close(c.done)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ws.Close()
		return
	}
	s.conns[c] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		if c.s != nil && c.s.conn == c {
			c.s.conn = nil
		}
		s.bump()
		s.mu.Unlock()
		ws.Close()
	}()
	c.write(map[string]any{"op": 10, "d": map[string]any{"heartbeat_interval": s.opts.HeartbeatInterval.Milliseconds()}})
	for {
		_, raw, err := ws.ReadMessage()
		if err != nil {
			return
		}
		var p struct {
			Op int             `json:"op"`
			D  json.RawMessage `json:"d"`
		}
		if json.Unmarshal(raw, &p) != nil {
			c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(4002, "Error while decoding payload."), time.Now().Add(time.Second))
			return
		}
		switch p.Op {
		case 1:
			s.mu.Lock()
			ack := s.ackBeats
			s.mu.Unlock()
			if ack {
				c.write(map[string]any{"op": 11})
			}
		case 2:
			var id struct {
				Token   string `json:"token"`
				Intents int    `json:"intents"`
			}
			json.Unmarshal(p.D, &id)
			if strings.TrimPrefix(id.Token, "Bot ") != s.opts.Token {
				c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(4004, "Authentication failed."), time.Now().Add(time.Second))
				return
			}
			if s.opts.NoMessageContent && id.Intents&(1<<15) != 0 {
				s.mu.Lock()
				s.intents = append(s.intents, id.Intents)
				s.mu.Unlock()
				c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(4014, "Disallowed intent(s)."), time.Now().Add(time.Second))
				return
			}
			s.mu.Lock()
			ss := &session{id: token()[:32]}
			s.sessions[ss.id] = ss
			s.current, ss.conn, c.s = ss, c, ss
			s.ident++
			s.intents = append(s.intents, id.Intents)
			ss.seq++
			ready := map[string]any{
				"v": 10, "session_id": ss.id, "resume_gateway_url": "ws://" + s.ln.Addr().String() + "/gw",
				"user":        map[string]any{"id": s.opts.BotID, "username": "approvebot", "discriminator": "0", "bot": true},
				"application": map[string]any{"id": s.opts.AppID, "flags": 0},
				"guilds":      s.guildsLocked(), "private_channels": []any{},
			}
			c.write(map[string]any{"op": 0, "s": ss.seq, "t": "READY", "d": ready})
			s.bump()
			s.mu.Unlock()
		case 6:
			var rs struct {
				Token     string `json:"token"`
				SessionID string `json:"session_id"`
				Seq       int64  `json:"seq"`
			}
			json.Unmarshal(p.D, &rs)
			s.mu.Lock()
			ss := s.sessions[rs.SessionID]
			if ss == nil || strings.TrimPrefix(rs.Token, "Bot ") != s.opts.Token {
				s.mu.Unlock()
				c.write(map[string]any{"op": 9, "d": false})
				continue
			}
			if old := ss.conn; old != nil && old != c {
				old.ws.NetConn().Close()
			}
			ss.conn, c.s = c, ss
			s.current = ss
			s.resumes++
			var missed []event
			for _, ev := range ss.log {
				if ev.seq > rs.Seq {
					missed = append(missed, ev)
				}
			}
			// Replay in order, then RESUMED, queued under the lock so nothing overtakes.
			for _, ev := range missed {
				s.deliverLocked(c, ev)
			}
			c.write(map[string]any{"op": 0, "t": "RESUMED", "d": map[string]any{}})
			s.bump()
			s.mu.Unlock()
		}
	}
}

func (s *Server) guildsLocked() []any {
	seen := map[string]bool{}
	out := []any{}
	for _, g := range s.opts.Channels {
		if g != "" && !seen[g] {
			seen[g] = true
			out = append(out, map[string]any{"id": g, "unavailable": true})
		}
	}
	return out
}

// ---- REST ----

var (
	reChannelMessages = regexp.MustCompile(`^/api/v\d+/channels/(\d+)/messages$`)
	reChannelMessage  = regexp.MustCompile(`^/api/v\d+/channels/(\d+)/messages/(\d+)$`)
	reCallback        = regexp.MustCompile(`^/api/v\d+/interactions/(\d+)/([^/]+)/callback$`)
	reFollowup        = regexp.MustCompile(`^/api/v\d+/webhooks/(\d+)/([^/]+)$`)
	reOriginal        = regexp.MustCompile(`^/api/v\d+/webhooks/(\d+)/([^/]+)/messages/@original$`)
	reGlobalCommands  = regexp.MustCompile(`^/api/v\d+/applications/(\d+)/commands$`)
	reGuildCommands   = regexp.MustCompile(`^/api/v\d+/applications/(\d+)/guilds/(\d+)/commands$`)
)

type apiErr struct {
	status int
	code   int
	msg    string
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/gw") {
		s.serveGateway(w, r)
		return
	}
	var body []byte
	if r.Body != nil {
		body, _ = readAll(r, 1<<20)
	}
	status := s.serveREST(w, r, body)
	s.mu.Lock()
	s.calls = append(s.calls, Call{Method: r.Method, Path: r.URL.Path, Status: status, At: time.Now()})
	s.bump()
	s.mu.Unlock()
}

func readAll(r *http.Request, max int64) ([]byte, error) {
	defer r.Body.Close()
	buf := make([]byte, 0, 4096)
	tmp := make([]byte, 4096)
	for int64(len(buf)) <= max {
		n, err := r.Body.Read(tmp)
		buf = append(buf, tmp[:n]...)
		if err != nil {
			break
		}
	}
	return buf, nil
}

func writeJSON(w http.ResponseWriter, status int, v any) int {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if v != nil {
		json.NewEncoder(w).Encode(v)
	}
	return status
}

func (s *Server) fail(w http.ResponseWriter, r *http.Request, body []byte, e apiErr) int {
	s.mu.Lock()
	s.rejections = append(s.rejections, Rejection{Method: r.Method, Path: redactPath(r.URL.Path), Status: e.status, Code: e.code, Reason: e.msg, Body: string(body)})
	s.mu.Unlock()
	return writeJSON(w, e.status, map[string]any{"code": e.code, "message": e.msg})
}

func redactPath(p string) string {
	if m := reCallback.FindStringSubmatch(p); m != nil {
		return strings.Replace(p, m[2], "TOKEN", 1)
	}
	if m := reFollowup.FindStringSubmatch(p); m != nil {
		return strings.Replace(p, m[2], "TOKEN", 1)
	}
	if m := reOriginal.FindStringSubmatch(p); m != nil {
		return strings.Replace(p, m[2], "TOKEN", 1)
	}
	return p
}

func (s *Server) serveREST(w http.ResponseWriter, r *http.Request, body []byte) int {
	p := r.URL.Path
	webhook := reCallback.MatchString(p) || reFollowup.MatchString(p) || reOriginal.MatchString(p)
	if !webhook && r.Header.Get("Authorization") != "Bot "+s.opts.Token {
		return writeJSON(w, 401, map[string]any{"code": 0, "message": "401: Unauthorized"})
	}
	if !strings.HasSuffix(p, "/gateway") && !strings.HasSuffix(p, "/gateway/bot") {
		s.mu.Lock()
		if s.limit.n > 0 && strings.Contains(p, s.limit.match) {
			s.limit.n--
			s.limited++
			after := s.limit.after
			s.mu.Unlock()
			secs := after.Seconds()
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(secs))))
			w.Header().Set("X-RateLimit-Limit", "5")
			w.Header().Set("X-RateLimit-Remaining", "0")
			w.Header().Set("X-RateLimit-Reset-After", strconv.FormatFloat(secs, 'f', 3, 64))
			w.Header().Set("X-RateLimit-Scope", "user")
			return writeJSON(w, 429, map[string]any{"message": "You are being rate limited.", "retry_after": secs, "global": false, "code": 0})
		}
		s.mu.Unlock()
	}
	switch {
	case r.Method == "GET" && (strings.HasSuffix(p, "/gateway") || strings.HasSuffix(p, "/gateway/bot")):
		return writeJSON(w, 200, map[string]any{"url": "ws://" + s.ln.Addr().String() + "/gw", "shards": 1})
	case r.Method == "GET" && strings.HasSuffix(p, "/applications/@me"):
		return writeJSON(w, 200, map[string]any{"id": s.opts.AppID, "name": "approvebot"})
	}
	if m := reChannelMessages.FindStringSubmatch(p); m != nil && r.Method == "POST" {
		return s.createMessage(w, r, body, m[1])
	}
	if m := reChannelMessage.FindStringSubmatch(p); m != nil && r.Method == "PATCH" {
		return s.editMessage(w, r, body, m[1], m[2])
	}
	if m := reCallback.FindStringSubmatch(p); m != nil && r.Method == "POST" {
		return s.callback(w, r, body, m[1], m[2])
	}
	if m := reFollowup.FindStringSubmatch(p); m != nil && r.Method == "POST" {
		return s.followup(w, r, body, m[1], m[2])
	}
	if m := reOriginal.FindStringSubmatch(p); m != nil && r.Method == "PATCH" {
		return s.editOriginal(w, r, body, m[1], m[2])
	}
	if m := reGlobalCommands.FindStringSubmatch(p); m != nil && r.Method == "PUT" {
		return s.putCommands(w, r, body, m[1], "global")
	}
	if m := reGuildCommands.FindStringSubmatch(p); m != nil && r.Method == "PUT" {
		return s.putCommands(w, r, body, m[1], m[2])
	}
	return s.fail(w, r, body, apiErr{404, 0, "404: Not Found"})
}

// msgBody is what the fake reads of a message body.
type msgBody struct {
	Content          *string         `json:"content"`
	Embeds           json.RawMessage `json:"embeds"`
	Components       json.RawMessage `json:"components"`
	AllowedMentions  json.RawMessage `json:"allowed_mentions"`
	Flags            *int            `json:"flags"`
	Nonce            json.RawMessage `json:"nonce"`
	EnforceNonce     bool            `json:"enforce_nonce"`
	MessageReference *struct {
		MessageID       string `json:"message_id"`
		FailIfNotExists *bool  `json:"fail_if_not_exists"`
	} `json:"message_reference"`
}

func utf16Len(s string) int { return len(utf16.Encode([]rune(s))) }

// checkMessage validates a message body; create is true for new messages, allowedFlags are
// the flags this endpoint accepts.
func checkMessage(raw []byte, create bool, allowedFlags int) (msgBody, []Component, *apiErr) {
	bad := func(f string, a ...any) *apiErr {
		return &apiErr{400, 50035, "Invalid Form Body: " + fmt.Sprintf(f, a...)}
	}
	var b msgBody
	if err := json.Unmarshal(raw, &b); err != nil {
		return b, nil, &apiErr{400, 50109, "The request body contains invalid JSON."}
	}
	// allowed_mentions with an explicit, empty parse list: stricter than Discord, which
	// defaults to parsing everything when it is missing.
	var am map[string]json.RawMessage
	if len(b.AllowedMentions) == 0 || string(b.AllowedMentions) == "null" || json.Unmarshal(b.AllowedMentions, &am) != nil {
		return b, nil, bad("allowed_mentions missing: every send and edit must carry allowed_mentions with parse []")
	}
	parse, ok := am["parse"]
	var list []string
	if !ok || string(parse) == "null" || json.Unmarshal(parse, &list) != nil || list == nil || len(list) != 0 {
		return b, nil, bad("allowed_mentions.parse must be an explicit empty list, got %s", string(parse))
	}
	for _, k := range []string{"users", "roles"} {
		var ids []string
		if v, ok := am[k]; ok && string(v) != "null" && (json.Unmarshal(v, &ids) != nil || len(ids) > 0) {
			return b, nil, bad("allowed_mentions.%s must be empty", k)
		}
	}
	if v, ok := am["replied_user"]; ok && string(v) == "true" {
		return b, nil, bad("allowed_mentions.replied_user must be false")
	}
	content := ""
	if b.Content != nil {
		content = *b.Content
	}
	if n := utf16Len(content); n > MaxContent {
		return b, nil, bad("content: Must be %d or fewer in length (got %d)", MaxContent, n)
	}
	if b.Flags != nil && *b.Flags&^allowedFlags != 0 {
		return b, nil, bad("flags: %d not allowed here", *b.Flags)
	}
	if len(b.Nonce) > 0 && string(b.Nonce) != "null" {
		var ns string
		if json.Unmarshal(b.Nonce, &ns) != nil {
			var n int64
			if json.Unmarshal(b.Nonce, &n) != nil {
				return b, nil, bad("nonce: must be a string or an integer")
			}
			ns = strconv.FormatInt(n, 10)
		}
		if len(ns) > MaxNonce {
			return b, nil, bad("nonce: Must be %d or fewer in length", MaxNonce)
		}
	}
	embeds := 0
	if len(b.Embeds) > 0 && string(b.Embeds) != "null" {
		n, e := checkEmbeds(b.Embeds)
		if e != nil {
			return b, nil, e
		}
		embeds = n
	}
	var comps []Component
	if len(b.Components) > 0 && string(b.Components) != "null" {
		if err := json.Unmarshal(b.Components, &comps); err != nil {
			return b, nil, bad("components: not a list of components")
		}
		if e := checkComponents(comps); e != nil {
			return b, nil, e
		}
	}
	if create && content == "" && embeds == 0 && len(comps) == 0 {
		return b, nil, &apiErr{400, 50006, "Cannot send an empty message"}
	}
	return b, comps, nil
}

func checkEmbeds(raw json.RawMessage) (int, *apiErr) {
	bad := func(f string, a ...any) *apiErr {
		return &apiErr{400, 50035, "Invalid Form Body: embeds: " + fmt.Sprintf(f, a...)}
	}
	var embeds []struct {
		Title       string `json:"title"`
		Description string `json:"description"`
		Footer      *struct {
			Text string `json:"text"`
		} `json:"footer"`
		Author *struct {
			Name string `json:"name"`
		} `json:"author"`
		Fields []struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"fields"`
	}
	if err := json.Unmarshal(raw, &embeds); err != nil {
		return 0, bad("not a list of embeds")
	}
	if len(embeds) > MaxEmbeds {
		return 0, bad("at most %d embeds", MaxEmbeds)
	}
	total := 0
	for i, e := range embeds {
		n := func(s string) int { c := utf16Len(s); total += c; return c }
		if n(e.Title) > MaxEmbedTitle {
			return 0, bad("%d.title too long", i)
		}
		if n(e.Description) > MaxEmbedDesc {
			return 0, bad("%d.description too long", i)
		}
		if e.Footer != nil && n(e.Footer.Text) > MaxEmbedFooter {
			return 0, bad("%d.footer.text too long", i)
		}
		if e.Author != nil && n(e.Author.Name) > MaxEmbedAuthor {
			return 0, bad("%d.author.name too long", i)
		}
		if len(e.Fields) > MaxEmbedFields {
			return 0, bad("%d.fields: at most %d", i, MaxEmbedFields)
		}
		for j, f := range e.Fields {
			if f.Name == "" || f.Value == "" {
				return 0, bad("%d.fields.%d: name and value are required", i, j)
			}
			if n(f.Name) > MaxEmbedFieldName || n(f.Value) > MaxEmbedFieldVal {
				return 0, bad("%d.fields.%d too long", i, j)
			}
		}
	}
	if total > MaxEmbedTotal {
		return 0, bad("embed size exceeds maximum size of %d", MaxEmbedTotal)
	}
	return len(embeds), nil
}

func checkComponents(rows []Component) *apiErr {
	bad := func(f string, a ...any) *apiErr {
		return &apiErr{400, 50035, "Invalid Form Body: components: " + fmt.Sprintf(f, a...)}
	}
	if len(rows) > MaxRows {
		return bad("at most %d action rows", MaxRows)
	}
	ids := map[string]bool{}
	for i, row := range rows {
		if row.Type != 1 {
			return bad("%d: top-level components must be action rows (type 1), got %d", i, row.Type)
		}
		if len(row.Components) < 1 || len(row.Components) > MaxButtonsPerRow {
			return bad("%d: an action row holds 1 to %d buttons", i, MaxButtonsPerRow)
		}
		for j, b := range row.Components {
			if b.Type != 2 {
				return bad("%d.%d: only buttons (type 2) are expected, got %d", i, j, b.Type)
			}
			if b.Style < 1 || b.Style > 5 {
				return bad("%d.%d.style: invalid", i, j)
			}
			if b.Label == "" || utf16Len(b.Label) > MaxButtonLabel {
				return bad("%d.%d.label: 1 to %d characters", i, j, MaxButtonLabel)
			}
			if b.Style == 5 {
				if b.URL == "" || b.CustomID != "" {
					return bad("%d.%d: a link button has a url and no custom_id", i, j)
				}
				continue
			}
			if b.CustomID == "" || len(b.CustomID) > MaxCustomID {
				return bad("%d.%d.custom_id: 1 to %d characters", i, j, MaxCustomID)
			}
			if b.URL != "" {
				return bad("%d.%d: only link buttons have a url", i, j)
			}
			if ids[b.CustomID] {
				return bad("%d.%d.custom_id: duplicate %q", i, j, b.CustomID)
			}
			ids[b.CustomID] = true
		}
	}
	return nil
}

func (s *Server) createMessage(w http.ResponseWriter, r *http.Request, body []byte, channel string) int {
	s.mu.Lock()
	guild, ok := s.opts.Channels[channel]
	s.mu.Unlock()
	if !ok {
		return s.fail(w, r, body, apiErr{404, 10003, "Unknown Channel"})
	}
	b, comps, e := checkMessage(body, true, FlagSuppressEmbeds|FlagSuppressNotifications)
	if e != nil {
		return s.fail(w, r, body, *e)
	}
	s.mu.Lock()
	var nonce string
	if len(b.Nonce) > 0 {
		json.Unmarshal(b.Nonce, &nonce)
	}
	if b.EnforceNonce && nonce != "" {
		if id, dup := s.nonces[channel+"/"+nonce]; dup {
			out := s.messageJSON(s.messages[id])
			s.mu.Unlock()
			return writeJSON(w, 200, out)
		}
	}
	replyTo := ""
	if ref := b.MessageReference; ref != nil {
		if m, ok := s.messages[ref.MessageID]; ok && m.ChannelID == channel {
			replyTo = ref.MessageID
		} else if ref.FailIfNotExists == nil || *ref.FailIfNotExists {
			s.mu.Unlock()
			return s.fail(w, r, body, apiErr{400, 50035, "Invalid Form Body: message_reference: Unknown message"})
		}
	}
	m := &Message{ID: s.id(), ChannelID: channel, GuildID: guild, AuthorID: s.opts.BotID, Bot: true, Components: comps, ReplyTo: replyTo, Nonce: nonce, Body: append(json.RawMessage(nil), body...)}
	if b.Content != nil {
		m.Content = *b.Content
	}
	if b.Flags != nil {
		m.Flags = *b.Flags
	}
	s.messages[m.ID] = m
	s.order = append(s.order, m.ID)
	if b.EnforceNonce && nonce != "" {
		s.nonces[channel+"/"+nonce] = m.ID
	}
	out := s.messageJSON(m)
	s.dispatchLocked("MESSAGE_CREATE", out, nil)
	s.mu.Unlock()
	return writeJSON(w, 200, out)
}

func (s *Server) editMessage(w http.ResponseWriter, r *http.Request, body []byte, channel, id string) int {
	s.mu.Lock()
	m, ok := s.messages[id]
	s.mu.Unlock()
	if !ok || m.ChannelID != channel {
		return s.fail(w, r, body, apiErr{404, 10008, "Unknown Message"})
	}
	if !m.Bot {
		return s.fail(w, r, body, apiErr{403, 50005, "Cannot edit a message authored by another user"})
	}
	b, comps, e := checkMessage(body, false, FlagSuppressEmbeds)
	if e != nil {
		return s.fail(w, r, body, *e)
	}
	s.mu.Lock()
	s.applyEdit(m, b, comps, body)
	out := s.messageJSON(m)
	s.mu.Unlock()
	return writeJSON(w, 200, out)
}

// applyEdit updates a message; s.mu must be held.
func (s *Server) applyEdit(m *Message, b msgBody, comps []Component, body []byte) {
	if b.Content != nil {
		m.Content = *b.Content
	}
	if len(b.Components) > 0 {
		m.Components = comps
	}
	if b.Flags != nil {
		m.Flags = *b.Flags
	}
	m.Edits++
	m.Body = append(json.RawMessage(nil), body...)
	s.bump()
}

func (s *Server) callback(w http.ResponseWriter, r *http.Request, body []byte, id, tok string) int {
	s.mu.Lock()
	in := s.interactions[id]
	if in == nil || in.Token != tok {
		s.mu.Unlock()
		return s.fail(w, r, body, apiErr{404, 10062, "Unknown interaction"})
	}
	for _, resp := range in.Responses {
		if resp.Kind == "callback" {
			s.mu.Unlock()
			return s.fail(w, r, body, apiErr{400, codeAlreadyAcked, "Interaction has already been acknowledged."})
		}
	}
	late := in.Delivered.IsZero() || time.Since(in.Delivered) > InteractionDeadline
	typ, fromComponent := in.Type, in.Type == 3 || in.FromComponent
	s.mu.Unlock()
	if late {
		return s.fail(w, r, body, apiErr{404, 10062, "Unknown interaction (answered after 3 s)"})
	}
	var cb struct {
		Type int             `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &cb); err != nil {
		return s.fail(w, r, body, apiErr{400, 50109, "The request body contains invalid JSON."})
	}
	resp := Response{Kind: "callback", Type: cb.Type, Data: cb.Data, At: time.Now()}
	var b msgBody
	var comps []Component
	switch cb.Type {
	case 4:
		var e *apiErr
		b, comps, e = checkMessage(cb.Data, true, FlagSuppressEmbeds|FlagEphemeral|FlagSuppressNotifications)
		if e != nil {
			return s.fail(w, r, body, *e)
		}
	case 5:
		// Deferred message: data may only carry flags.
	case 6:
		if !fromComponent {
			return s.fail(w, r, body, apiErr{400, 50035, "Invalid Form Body: type 6 is only for component interactions"})
		}
	case 7:
		if !fromComponent {
			return s.fail(w, r, body, apiErr{400, 50035, "Invalid Form Body: type 7 is only for component interactions"})
		}
		var e *apiErr
		b, comps, e = checkMessage(cb.Data, false, FlagSuppressEmbeds)
		if e != nil {
			return s.fail(w, r, body, *e)
		}
	case 9:
		if typ == 5 {
			return s.fail(w, r, body, apiErr{400, 50035, "Invalid Form Body: a modal cannot answer a modal submit"})
		}
		if e := checkModal(cb.Data); e != nil {
			return s.fail(w, r, body, *e)
		}
	default:
		return s.fail(w, r, body, apiErr{400, 50035, fmt.Sprintf("Invalid Form Body: callback type %d not supported here", cb.Type)})
	}
	if b.Content != nil {
		resp.Content = *b.Content
	}
	if b.Flags != nil {
		resp.Flags = *b.Flags
	}
	s.mu.Lock()
	if cb.Type == 7 {
		if m := s.messages[in.MessageID]; m != nil {
			s.applyEdit(m, b, comps, cb.Data)
		}
	}
	in.Responses = append(in.Responses, resp)
	s.bump()
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
	return http.StatusNoContent
}

const codeAlreadyAcked = 40060

func checkModal(raw json.RawMessage) *apiErr {
	bad := func(f string, a ...any) *apiErr {
		return &apiErr{400, 50035, "Invalid Form Body: modal: " + fmt.Sprintf(f, a...)}
	}
	var m struct {
		CustomID   string `json:"custom_id"`
		Title      string `json:"title"`
		Components []struct {
			Type       int `json:"type"`
			Components []struct {
				Type        int     `json:"type"`
				CustomID    string  `json:"custom_id"`
				Style       int     `json:"style"`
				Label       string  `json:"label"`
				MinLength   *int    `json:"min_length"`
				MaxLength   *int    `json:"max_length"`
				Value       *string `json:"value"`
				Placeholder string  `json:"placeholder"`
			} `json:"components"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return bad("invalid JSON")
	}
	if m.CustomID == "" || len(m.CustomID) > MaxCustomID {
		return bad("custom_id: 1 to %d characters", MaxCustomID)
	}
	if m.Title == "" || utf16Len(m.Title) > MaxModalTitle {
		return bad("title: 1 to %d characters", MaxModalTitle)
	}
	if len(m.Components) < 1 || len(m.Components) > 5 {
		return bad("1 to 5 action rows")
	}
	for i, row := range m.Components {
		if row.Type != 1 || len(row.Components) != 1 {
			return bad("%d: each action row holds exactly one text input", i)
		}
		in := row.Components[0]
		if in.Type != 4 || (in.Style != 1 && in.Style != 2) {
			return bad("%d: a text input (type 4, style 1 or 2) is expected", i)
		}
		if in.CustomID == "" || len(in.CustomID) > MaxCustomID {
			return bad("%d.custom_id: 1 to %d characters", i, MaxCustomID)
		}
		if in.Label == "" || utf16Len(in.Label) > MaxInputLabel {
			return bad("%d.label: 1 to %d characters", i, MaxInputLabel)
		}
		if in.MinLength != nil && (*in.MinLength < 0 || *in.MinLength > MaxInputLength) {
			return bad("%d.min_length: 0 to %d", i, MaxInputLength)
		}
		if in.MaxLength != nil && (*in.MaxLength < 1 || *in.MaxLength > MaxInputLength) {
			return bad("%d.max_length: 1 to %d", i, MaxInputLength)
		}
		if utf16Len(in.Placeholder) > 100 {
			return bad("%d.placeholder: at most 100 characters", i)
		}
	}
	return nil
}

// byToken finds an interaction by application and token; s.mu must be held.
func (s *Server) byToken(app, tok string) *Interaction {
	if app != s.opts.AppID {
		return nil
	}
	for _, in := range s.interactions {
		if in.Token == tok {
			return in
		}
	}
	return nil
}

func acknowledged(in *Interaction) (Response, bool) {
	for _, r := range in.Responses {
		if r.Kind == "callback" {
			return r, true
		}
	}
	return Response{}, false
}

func (s *Server) followup(w http.ResponseWriter, r *http.Request, body []byte, app, tok string) int {
	s.mu.Lock()
	in := s.byToken(app, tok)
	var ok bool
	if in != nil {
		_, ok = acknowledged(in)
	}
	s.mu.Unlock()
	if in == nil || !ok {
		return s.fail(w, r, body, apiErr{404, 10015, "Unknown Webhook"})
	}
	b, _, e := checkMessage(body, true, FlagSuppressEmbeds|FlagEphemeral|FlagSuppressNotifications)
	if e != nil {
		return s.fail(w, r, body, *e)
	}
	resp := Response{Kind: "followup", Data: append(json.RawMessage(nil), body...), At: time.Now()}
	if b.Content != nil {
		resp.Content = *b.Content
	}
	if b.Flags != nil {
		resp.Flags = *b.Flags
	}
	s.mu.Lock()
	in.Responses = append(in.Responses, resp)
	id := s.id()
	s.bump()
	s.mu.Unlock()
	return writeJSON(w, 200, map[string]any{"id": id, "channel_id": in.ChannelID, "content": resp.Content, "flags": resp.Flags,
		"author": map[string]any{"id": s.opts.BotID, "username": "approvebot", "discriminator": "0", "bot": true}, "timestamp": time.Now().UTC().Format(time.RFC3339)})
}

func (s *Server) editOriginal(w http.ResponseWriter, r *http.Request, body []byte, app, tok string) int {
	s.mu.Lock()
	in := s.byToken(app, tok)
	var first Response
	var ok bool
	if in != nil {
		first, ok = acknowledged(in)
	}
	s.mu.Unlock()
	if in == nil || !ok || first.Type == 9 {
		return s.fail(w, r, body, apiErr{404, 10015, "Unknown Webhook"})
	}
	b, comps, e := checkMessage(body, false, FlagSuppressEmbeds)
	if e != nil {
		return s.fail(w, r, body, *e)
	}
	resp := Response{Kind: "edit", Data: append(json.RawMessage(nil), body...), At: time.Now()}
	if b.Content != nil {
		resp.Content = *b.Content
	}
	s.mu.Lock()
	if first.Type == 6 || first.Type == 7 {
		if m := s.messages[in.MessageID]; m != nil {
			s.applyEdit(m, b, comps, body)
		}
	}
	in.Responses = append(in.Responses, resp)
	s.bump()
	s.mu.Unlock()
	return writeJSON(w, 200, map[string]any{"id": in.MessageID, "channel_id": in.ChannelID, "content": resp.Content,
		"author": map[string]any{"id": s.opts.BotID, "username": "approvebot", "discriminator": "0", "bot": true}, "timestamp": time.Now().UTC().Format(time.RFC3339)})
}

var reCommandName = regexp.MustCompile(`^[-_\p{Ll}\p{N}]{1,32}$`)

func (s *Server) putCommands(w http.ResponseWriter, r *http.Request, body []byte, app, scope string) int {
	if app != s.opts.AppID {
		return s.fail(w, r, body, apiErr{403, 50001, "Missing Access"})
	}
	var cmds []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Type        int    `json:"type"`
		Options     []struct {
			Type        int    `json:"type"`
			Name        string `json:"name"`
			Description string `json:"description"`
			Required    bool   `json:"required"`
		} `json:"options"`
	}
	if err := json.Unmarshal(body, &cmds); err != nil {
		return s.fail(w, r, body, apiErr{400, 50109, "The request body contains invalid JSON."})
	}
	seen := map[string]bool{}
	for i, c := range cmds {
		if !reCommandName.MatchString(c.Name) || seen[c.Name] {
			return s.fail(w, r, body, apiErr{400, 50035, fmt.Sprintf("Invalid Form Body: %d.name: invalid or duplicate", i)})
		}
		seen[c.Name] = true
		if c.Description == "" || utf16Len(c.Description) > 100 {
			return s.fail(w, r, body, apiErr{400, 50035, fmt.Sprintf("Invalid Form Body: %d.description: 1 to 100 characters", i)})
		}
		if len(c.Options) > 25 {
			return s.fail(w, r, body, apiErr{400, 50035, fmt.Sprintf("Invalid Form Body: %d.options: at most 25", i)})
		}
		optional := false
		for j, o := range c.Options {
			if !reCommandName.MatchString(o.Name) || o.Description == "" || utf16Len(o.Description) > 100 {
				return s.fail(w, r, body, apiErr{400, 50035, fmt.Sprintf("Invalid Form Body: %d.options.%d: invalid name or description", i, j)})
			}
			if o.Required && optional {
				return s.fail(w, r, body, apiErr{400, 50035, fmt.Sprintf("Invalid Form Body: %d.options.%d: required options must be placed before non-required options", i, j)})
			}
			optional = optional || !o.Required
		}
	}
	s.mu.Lock()
	s.commands[scope] = append(json.RawMessage(nil), body...)
	s.bump()
	s.mu.Unlock()
	return writeJSON(w, 200, json.RawMessage(body))
}
