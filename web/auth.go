package web

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/approvebot/approvebot/api"
)

// Cookie names. The session cookie holds a random id that maps to a sign-in held in
// memory (a restart signs everyone out); the sign-in cookie carries the CSRF token of the
// sign-in form, before there is a session (double submit).
const (
	sessionCookie = "approvebot_session"
	signinCookie  = "approvebot_signin"
	csrfField     = "csrf"
)

// maxSessions bounds the sign-ins kept in memory; the oldest goes first.
const maxSessions = 10000

type flash struct {
	Error bool
	Text  string
}

type session struct {
	key      [32]byte
	operator string
	csrf     string
	created  time.Time
	expires  time.Time
	flashes  []flash
}

type sessions struct {
	ttl time.Duration
	now func() time.Time

	mu   sync.Mutex
	byID map[[32]byte]*session
}

func newSessions(ttl time.Duration, now func() time.Time) *sessions {
	return &sessions{ttl: ttl, now: now, byID: map[[32]byte]*session{}}
}

func randomToken() string {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// The map is keyed by a hash of the cookie value, so a lookup's timing says nothing about
// how much of a guessed value matches.
func sessionKey(cookie string) [32]byte { return sha256.Sum256([]byte(cookie)) }

// create starts a sign-in and returns the cookie value.
func (ss *sessions) create(operator string) (string, *session) {
	id := randomToken()
	now := ss.now()
	sess := &session{key: sessionKey(id), operator: operator, csrf: randomToken(), created: now, expires: now.Add(ss.ttl)}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if len(ss.byID) >= maxSessions {
		var oldest *session
		for _, o := range ss.byID {
			if !now.Before(o.expires) {
				delete(ss.byID, o.key)
				continue
			}
			if oldest == nil || o.created.Before(oldest.created) {
				oldest = o
			}
		}
		if len(ss.byID) >= maxSessions && oldest != nil {
			delete(ss.byID, oldest.key)
		}
	}
	ss.byID[sess.key] = sess
	return id, sess
}

// get returns a copy of the live sign-in of a cookie value, or false.
func (ss *sessions) get(cookie string) (session, bool) {
	if cookie == "" {
		return session{}, false
	}
	k := sessionKey(cookie)
	ss.mu.Lock()
	defer ss.mu.Unlock()
	sess, ok := ss.byID[k]
	if !ok {
		return session{}, false
	}
	if !ss.now().Before(sess.expires) {
		delete(ss.byID, k)
		return session{}, false
	}
	return *sess, true
}

func (ss *sessions) alive(key [32]byte) bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	sess, ok := ss.byID[key]
	return ok && ss.now().Before(sess.expires)
}

func (ss *sessions) remove(key [32]byte) {
	ss.mu.Lock()
	delete(ss.byID, key)
	ss.mu.Unlock()
}

func (ss *sessions) addFlash(key [32]byte, f flash) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if sess, ok := ss.byID[key]; ok && len(sess.flashes) < 8 {
		sess.flashes = append(sess.flashes, f)
	}
}

func (ss *sessions) takeFlashes(key [32]byte) []flash {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	sess, ok := ss.byID[key]
	if !ok {
		return nil
	}
	f := sess.flashes
	sess.flashes = nil
	return f
}

// secure reports whether the browser reached us over HTTPS (directly or through a proxy
// that says so); the cookies are then marked Secure. Believing the header can only add the
// flag, never remove a protection.
func secure(r *http.Request) bool {
	return r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

func setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge time.Duration) {
	c := &http.Cookie{
		Name: name, Value: value, Path: Prefix, HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: secure(r),
	}
	if maxAge > 0 {
		c.MaxAge = int(maxAge / time.Second)
		c.Expires = time.Now().Add(maxAge)
	} else {
		c.MaxAge = -1
	}
	http.SetCookie(w, c)
}

func cookieValue(r *http.Request, name string) string {
	c, err := r.Cookie(name)
	if err != nil {
		return ""
	}
	return c.Value
}

// current returns the request's live sign-in.
func (s *Server) current(r *http.Request) (session, bool) {
	return s.sessions.get(cookieValue(r, sessionCookie))
}

func sameToken(a, b string) bool {
	return a != "" && len(a) == len(b) && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// signedIn wraps a page that needs a sign-in: without one the browser goes to the
// sign-in form, which brings it back here afterwards.
func (s *Server) signedIn(h func(w http.ResponseWriter, r *http.Request, sess session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sess, ok := s.current(r)
		if !ok {
			http.Redirect(w, r, Prefix+"?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		h(w, r, sess)
	}
}

// maxForm caps a form body: a deny reason is the largest field.
const maxForm = 64 << 10

// form wraps a state-changing POST: it needs a sign-in, a same-origin request and the
// sign-in's CSRF token in the form; anything else is refused with 403 and changes nothing.
func (s *Server) form(h func(w http.ResponseWriter, r *http.Request, sess session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, maxForm)
		if err := r.ParseForm(); err != nil {
			s.errorPage(w, r, http.StatusBadRequest, "The form could not be read.")
			return
		}
		sess, ok := s.current(r)
		if !ok {
			s.errorPage(w, r, http.StatusForbidden, "You are signed out: sign in again, then repeat what you did.")
			return
		}
		if err := s.xorigin.Check(r); err != nil {
			s.errorPage(w, r, http.StatusForbidden, "This form was sent from another site, so it was refused.")
			return
		}
		if !sameToken(r.PostForm.Get(csrfField), sess.csrf) {
			s.errorPage(w, r, http.StatusForbidden, "This form is missing its security token (or it is stale), so it was refused. Reload the page and try again.")
			return
		}
		h(w, r, sess)
	}
}

// safeNext returns a panel path to go to after signing in, or the pending page.
func safeNext(v string) string {
	u, err := url.Parse(v)
	if err != nil || v == "" || u.Scheme != "" || u.Host != "" || u.User != nil || !strings.HasPrefix(u.Path, Prefix) ||
		strings.Contains(v, "\\") || strings.HasPrefix(v, "//") || strings.Contains(u.Path, "/../") || strings.HasPrefix(u.Path, Prefix+"signout") {
		return Prefix
	}
	u.RawQuery = u.Query().Encode()
	u.Fragment, u.RawFragment = "", ""
	return u.RequestURI()
}

// signinLimiter slows down token guessing: each client address may fail a few sign-ins in
// a row, then one every few seconds. A success costs nothing.
type signinLimiter struct {
	now func() time.Time
	mu  sync.Mutex
	by  map[string]*rate.Limiter
}

const (
	signinBurst   = 10
	signinEvery   = 6 * time.Second
	maxLimiterIPs = 4096
)

func newSigninLimiter(now func() time.Time) *signinLimiter {
	return &signinLimiter{now: now, by: map[string]*rate.Limiter{}}
}

func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func (l *signinLimiter) limiter(addr string) *rate.Limiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	lim, ok := l.by[addr]
	if !ok {
		if len(l.by) >= maxLimiterIPs {
			// Forget the addresses that are back to a full allowance.
			for a, o := range l.by {
				if o.TokensAt(l.now()) >= signinBurst {
					delete(l.by, a)
				}
			}
		}
		lim = rate.NewLimiter(rate.Every(signinEvery), signinBurst)
		if len(l.by) < maxLimiterIPs {
			l.by[addr] = lim
		}
	}
	return lim
}

// blocked reports whether addr has no failed attempts left for now.
func (l *signinLimiter) blocked(addr string) bool { return l.limiter(addr).TokensAt(l.now()) < 1 }

func (l *signinLimiter) failed(addr string) { l.limiter(addr).AllowN(l.now(), 1) }

func (s *Server) signin(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		s.errorPage(w, r, http.StatusBadRequest, "The form could not be read.")
		return
	}
	next := safeNext(r.PostForm.Get("next"))
	if err := s.xorigin.Check(r); err != nil || !sameToken(r.PostForm.Get(csrfField), cookieValue(r, signinCookie)) {
		s.signinPage(w, r, http.StatusForbidden, next, "This form is missing its security token (or it is stale), so it was refused. Try again.")
		return
	}
	addr := clientAddr(r)
	if s.limiter.blocked(addr) {
		s.signinPage(w, r, http.StatusTooManyRequests, next, "Too many failed sign-ins from here. Wait a minute and try again.")
		return
	}
	name, role, ok := s.auth(r.PostForm.Get("token"))
	switch {
	case !ok:
		s.limiter.failed(addr)
		s.log.Warn("panel sign-in refused: unknown token", "addr", addr)
		s.signinPage(w, r, http.StatusUnauthorized, next, "That token is not valid. Paste an operator token.")
		return
	case role != api.RoleOperator:
		s.limiter.failed(addr)
		s.log.Warn("panel sign-in refused: not an operator token", "addr", addr, "token_name", name)
		s.signinPage(w, r, http.StatusForbidden, next, "That is an agent token. The panel needs an operator token: agents ask, operators decide.")
		return
	}
	id, _ := s.sessions.create(name)
	setCookie(w, r, sessionCookie, id, s.sessions.ttl)
	setCookie(w, r, signinCookie, "", 0)
	s.log.Info("panel sign-in", "operator", name, "addr", addr)
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (s *Server) signout(w http.ResponseWriter, r *http.Request, sess session) {
	s.sessions.remove(sess.key)
	setCookie(w, r, sessionCookie, "", 0)
	s.log.Info("panel sign-out", "operator", sess.operator)
	http.Redirect(w, r, Prefix, http.StatusSeeOther)
}
