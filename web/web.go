// Package web is approvebot's operator panel at /ui/: server-rendered pages (html/template)
// and assets embedded in the binary, for the people on call at a desk. It shows what waits
// for a human with exactly what the chat cards show, lets an operator decide through the
// same gate call as every other surface, lists grants, allowlist entries, paused sessions
// and the denial ledger, and reads the audit trail with filters and a per-hour chart.
//
// Sign-in exchanges an operator token for an HttpOnly, SameSite=Strict session cookie;
// every state-changing form carries a CSRF token; pages read without JavaScript, and a
// small script adds live updates from server-sent events on /ui/events. Nothing an agent
// sent is ever rendered as markup or a link: every such string is masked and hardened by
// core/render, then escaped by html/template.
package web

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/approvebot/approvebot/api"
	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/ledger"
	"github.com/approvebot/approvebot/store"
)

// Prefix is where the panel is mounted.
const Prefix = "/ui/"

// DefaultSessionTTL is how long a sign-in lasts when Options says nothing.
const DefaultSessionTTL = 12 * time.Hour

// Gate is what the panel asks of the gate: the same calls every other surface makes.
type Gate interface {
	LivePending(channel, chat string) []approval.Request
	Get(ctx context.Context, id string) (approval.Request, error)
	Decide(ctx context.Context, id string, d gate.Decision) (approval.Request, error)
	Unpause(ctx context.Context, name, agent, by string) (gate.SessionState, error)
	Subscribe(buffer int) *gate.Subscription
}

// Store is what the panel reads from the store (and the one write it makes there besides
// decisions: revoking an allowlist entry).
type Store interface {
	Audit(ctx context.Context, q approval.AuditQuery) (approval.AuditPage, error)
	AuditCounts(ctx context.Context, since, until time.Time) ([]approval.HourCount, error)
	ListAllowlist(ctx context.Context) ([]store.AllowlistItem, error)
	RevokeAllowlist(ctx context.Context, sel store.AllowlistSelector, audit approval.AuditEntry) ([]store.AllowlistItem, error)
	Grants(ctx context.Context, limit int) ([]store.LedgerItem, int, error)
	Denials(ctx context.Context, limit int) ([]store.LedgerItem, int, error)
	PausedSessions(ctx context.Context, limit int) ([]ledger.Session, int, error)
}

// Authenticator checks a token the way the API does and returns its name and role.
type Authenticator func(token string) (name string, role api.Role, ok bool)

// Options configures the panel.
type Options struct {
	Gate  Gate
	Store Store
	Auth  Authenticator
	// SessionTTL is how long a sign-in lasts (DefaultSessionTTL when zero).
	SessionTTL time.Duration
	Logger     *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Server is the panel. It is an http.Handler for everything under Prefix.
type Server struct {
	gate     Gate
	store    Store
	auth     Authenticator
	log      *slog.Logger
	now      func() time.Time
	pages    map[string]*template.Template
	frag     *template.Template
	static   http.Handler
	assetVer string
	sessions *sessions
	limiter  *signinLimiter
	hub      *hub
	mux      *http.ServeMux
	xorigin  *http.CrossOriginProtection
}

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// New builds the panel and starts following the gate's events; it stops when the gate
// closes.
func New(opts Options) (*Server, error) {
	if opts.Gate == nil || opts.Store == nil || opts.Auth == nil {
		return nil, errors.New("web: gate, store and auth are required")
	}
	if opts.SessionTTL <= 0 {
		opts.SessionTTL = DefaultSessionTTL
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &Server{
		gate: opts.Gate, store: opts.Store, auth: opts.Auth, log: opts.Logger, now: opts.Now,
		sessions: newSessions(opts.SessionTTL, opts.Now),
		limiter:  newSigninLimiter(opts.Now),
		mux:      http.NewServeMux(),
		xorigin:  http.NewCrossOriginProtection(),
	}
	static, err := fs.Sub(staticFS, "static")
	if err != nil {
		return nil, err
	}
	s.assetVer, err = assetVersion(static)
	if err != nil {
		return nil, err
	}
	s.static = http.StripPrefix(Prefix+"static/", http.FileServerFS(static))
	if err := s.parseTemplates(); err != nil {
		return nil, err
	}
	s.hub = newHub(opts.Gate, opts.Logger)
	s.routes()
	return s, nil
}

func (s *Server) routes() {
	s.mux.HandleFunc("GET "+Prefix+"{$}", s.pendingPage)
	s.mux.HandleFunc("POST "+Prefix+"signin", s.signin)
	s.mux.HandleFunc("POST "+Prefix+"signout", s.form(s.signout))
	s.mux.HandleFunc("GET "+Prefix+"events", s.events)
	s.mux.HandleFunc("GET "+Prefix+"requests/{id}", s.signedIn(s.requestPage))
	s.mux.HandleFunc("POST "+Prefix+"requests/{id}/decision", s.form(s.decide))
	s.mux.HandleFunc("GET "+Prefix+"history", s.signedIn(s.historyPage))
	s.mux.HandleFunc("GET "+Prefix+"grants", s.signedIn(s.grantsPage))
	s.mux.HandleFunc("GET "+Prefix+"allowlist", s.signedIn(s.allowlistPage))
	s.mux.HandleFunc("POST "+Prefix+"allowlist/revoke", s.form(s.revoke))
	s.mux.HandleFunc("GET "+Prefix+"sessions", s.signedIn(s.sessionsPage))
	s.mux.HandleFunc("POST "+Prefix+"sessions/unpause", s.form(s.unpause))
	s.mux.HandleFunc("GET "+Prefix+"ledger", s.signedIn(s.ledgerPage))
	s.mux.HandleFunc("GET "+Prefix+"static/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=86400")
		s.static.ServeHTTP(w, r)
	})
	s.mux.HandleFunc(Prefix, func(w http.ResponseWriter, r *http.Request) {
		s.errorPage(w, r, http.StatusNotFound, "There is no such page.")
	})
}

// ServeHTTP serves the panel with its security headers.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	// Nothing but this origin's own files: no inline script or style, no frames, forms
	// post only here.
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "+
		"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	if !strings.HasPrefix(r.URL.Path, Prefix+"static/") {
		h.Set("Cache-Control", "no-store")
	}
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			s.log.Error("panel handler panic", "path", r.URL.Path, "panic", fmt.Sprint(p))
			http.Error(w, "internal error", http.StatusInternalServerError)
		}
	}()
	s.mux.ServeHTTP(w, r)
}
