package gate

import (
	"errors"
	"fmt"
	"time"

	"github.com/approvebot/approvebot/core/approval"
)

var (
	// ErrExpired is returned when a decision arrives after the request's deadline.
	ErrExpired = errors.New("this request expired")
	// ErrTooManyPending is returned when a pending cap is reached.
	ErrTooManyPending = errors.New("too many pending requests")
	// ErrClosed is returned after Close.
	ErrClosed = errors.New("gate is shutting down")
	// ErrInvalid wraps validation failures of an ask or a decision.
	ErrInvalid = errors.New("invalid")
)

// AlreadyDecidedError is the loser's answer in a race to decide.
type AlreadyDecidedError struct {
	Request approval.Request
}

func (e *AlreadyDecidedError) Error() string {
	r := e.Request
	by := r.DecidedBy
	if by == "" {
		by = string(r.Source)
	}
	return fmt.Sprintf("already decided (%s) by %s at %s", r.Outcome, by, r.DecidedAt.UTC().Format(time.RFC3339))
}

func invalid(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, a...))
}
