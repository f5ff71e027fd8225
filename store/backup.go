package store

import (
	"context"
	"io"

	bolt "go.etcd.io/bbolt"
)

// Backup writes a consistent copy of the live database to w — bbolt's Tx.WriteTo inside one
// read transaction, so writes go on meanwhile — and returns the bytes written. size, when
// not nil, is told the copy's exact length before the first byte (for Content-Length).
// The copy is a complete bbolt file: put it in place of the database with approvebot
// stopped to restore it. It stops early when ctx ends.
func (s *Store) Backup(ctx context.Context, w io.Writer, size func(int64)) (int64, error) {
	var n int64
	err := s.view("", func(tx *bolt.Tx) error {
		if size != nil {
			size(tx.Size())
		}
		var err error
		n, err = tx.WriteTo(ctxWriter{ctx: ctx, w: w})
		return err
	})
	return n, err
}

// ctxWriter stops a long copy once its context ends (the client went away).
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}
