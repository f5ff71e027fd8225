package main

import (
	"context"
	"io"

	"github.com/approvebot/approvebot"
)

func cmdExampleConfig(_ context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("example-config", "example-config   (> approvebot.toml)", stderr)
	if err := fs.Parse(args); err != nil {
		return parseError(err, exitUsage)
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return &exitError{code: exitUsage, msg: "example-config takes no arguments"}
	}
	_, err := stdout.Write(approvebot.ExampleConfig)
	return err
}
