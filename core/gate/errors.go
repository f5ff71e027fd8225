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
	// ErrStoreUnavailable is matched by store errors that are the store's state, not the
	// request's fault: a write that could not be committed (disk full, EPERM, read-only,
	// EIO, the file deleted or replaced) or damaged data met by the operation. Nothing was
	// allowed; the API answers 503 store_unavailable.
	ErrStoreUnavailable = errors.New("the store is unavailable")
)

// DamagedRecordMessage is what an agent reads on a request whose stored record was damaged
// and quarantined: it was denied, never allowed.
func DamagedRecordMessage() string {
	return "Denied: approvebot could not read the stored record of this request (it was damaged on disk), " +
		"so the request was refused and quarantined. It was not allowed. Ask again if the action is still needed."
}

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
