package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/approvebot/approvebot/config"
	"github.com/approvebot/approvebot/store"
)

// cmdCompact rewrites the database without its free pages, with the server stopped.
func cmdCompact(_ context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	const usage = "compact [-config FILE | -db FILE]"
	fs := newFlagSet("compact", usage, stderr)
	configPath := fs.String("config", "", "config file whose [server] data names the database")
	dbPath := fs.String("db", "", "the database file (instead of -config)")
	if err := fs.Parse(args); err != nil {
		return parseError(err, exitUsage)
	}
	if fs.NArg() > 0 {
		return usageError(fs, stderr, usage, "compact takes no arguments")
	}
	path := *dbPath
	if path == "" {
		cfg, err := config.Load(*configPath)
		if err != nil {
			return err
		}
		path = cfg.Server.Data
	} else if *configPath != "" {
		return usageError(fs, stderr, usage, "give -config or -db, not both")
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	res, err := store.Compact(path, time.Second, log)
	if errors.Is(err, store.ErrLocked) {
		return fmt.Errorf("%w; compact works offline: stop approvebot serve first", err)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "compacted %s: %.1f MiB → %.1f MiB in %s\n", path, mib(res.Before), mib(res.After), res.Took.Round(time.Millisecond))
	return nil
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }
