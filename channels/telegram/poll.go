package telegram

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/approvebot/approvebot/core/chatops"
	"github.com/approvebot/approvebot/internal/retry"
)

// Long polling. The library's own loop decodes a whole getUpdates batch into its types at
// once: one update it cannot decode fails the batch, the offset never moves past it, and
// every later press is lost. This loop reads the batch as raw updates and decodes each on
// its own, on the library's types.
const (
	// pollBackoffMin and pollBackoffMax bound the wait after a failed getUpdates.
	pollBackoffMin = 100 * time.Millisecond
	pollBackoffMax = 5 * time.Second
	// maxUpdatesBody caps one getUpdates answer (at most 100 updates of a few KiB).
	maxUpdatesBody = 32 << 20
)

// allowedUpdates are the update types approvebot reads.
var allowedUpdates = []string{"message", "callback_query"}

// poll reads updates until ctx ends and handles each in order. An update that cannot be
// decoded is skipped: logged once with its id, counted, and confirmed with the next
// offset like any other.
func (c *Channel) poll(ctx context.Context, counter chatops.Counter) {
	var offset int64
	backoff := retry.Backoff{Base: pollBackoffMin, Max: pollBackoffMax}
	for ctx.Err() == nil {
		raws, err := c.getUpdates(ctx, offset)
		if err == nil && len(raws) > 0 {
			next := offset
			for _, raw := range raws {
				id, u, derr := decodeUpdate(raw)
				if id >= next {
					next = id + 1
				}
				if derr != nil {
					if id >= 0 {
						c.skipUpdate(counter, id, derr)
					}
					continue
				}
				c.handleUpdate(ctx, u)
			}
			if next == offset {
				// Not one update carried a readable update_id: nothing can be confirmed.
				err = errors.New("telegram getUpdates: an answer without a readable update_id")
			}
			offset = next
		}
		if err == nil {
			backoff.Reset()
			continue
		}
		if ctx.Err() != nil {
			return
		}
		c.loopError(err)
		wait := backoff.Next()
		var ae *APIError
		if errors.As(err, &ae) && ae.RetryAfter > 0 {
			wait = ae.RetryAfter
		}
		retry.Sleep(ctx, wait)
	}
}

// skipUpdate is the one place an undecodable update is given up on.
func (c *Channel) skipUpdate(counter chatops.Counter, id int64, err error) {
	counter.Skipped(Name)
	c.log.Warn("telegram update skipped: it cannot be decoded (a newer Bot API than the library knows?)",
		"update_id", id, "err", c.scrub(err.Error()))
}

// decodeUpdate decodes one update on the library's types. id is its update_id, or -1
// when even that cannot be read.
func decodeUpdate(raw []byte) (int64, *models.Update, error) {
	var head struct {
		ID *int64 `json:"update_id"`
	}
	if err := json.Unmarshal(raw, &head); err != nil || head.ID == nil {
		if err == nil {
			err = errors.New("no update_id")
		}
		return -1, nil, err
	}
	var u models.Update
	if err := json.Unmarshal(raw, &u); err != nil {
		return *head.ID, nil, err
	}
	return *head.ID, &u, nil
}

// getUpdates long-polls once and returns the updates undecoded.
func (c *Channel) getUpdates(ctx context.Context, offset int64) ([]json.RawMessage, error) {
	params := struct {
		Offset         int64    `json:"offset,omitempty"`
		Timeout        int      `json:"timeout"`
		AllowedUpdates []string `json:"allowed_updates"`
	}{offset, int((c.cfg.PollTimeout.Duration - time.Second).Seconds()), allowedUpdates}
	body, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.apiURL+"/bot"+c.token+"/getUpdates", bytes.NewReader(body))
	if err != nil {
		return nil, &APIError{Method: "getUpdates", Description: c.scrub(err.Error())}
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, &APIError{Method: "getUpdates", Description: err.Error()}
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxUpdatesBody))
	if err != nil {
		return nil, &APIError{Method: "getUpdates", Description: c.scrub(err.Error())}
	}
	var answer struct {
		OK          bool              `json:"ok"`
		Result      []json.RawMessage `json:"result"`
		ErrorCode   int               `json:"error_code"`
		Description string            `json:"description"`
		Parameters  struct {
			RetryAfter int `json:"retry_after"`
		} `json:"parameters"`
	}
	if err := json.Unmarshal(data, &answer); err != nil {
		// A proxy's error page, or a body cut at the cap.
		return nil, &APIError{Method: "getUpdates", Code: resp.StatusCode, Description: fmt.Sprintf("an answer that is not the API's JSON (HTTP %d)", resp.StatusCode)}
	}
	if !answer.OK {
		e := &APIError{Method: "getUpdates", Code: answer.ErrorCode, Description: c.scrub(answer.Description),
			RetryAfter: time.Duration(answer.Parameters.RetryAfter) * time.Second}
		if e.Code == 0 {
			e.Code = resp.StatusCode
		}
		if e.Code == http.StatusUnauthorized {
			e.Description = "unauthorized: the bot token was rejected"
		}
		return nil, e
	}
	return answer.Result, nil
}
