package main

import (
	"context"
	"io"

	"github.com/approvebot/approvebot"
)

func cmdExampleConfig(_ context.Context, _ []string, _ io.Reader, stdout, _ io.Writer) error {
	_, err := stdout.Write(approvebot.ExampleConfig)
	return err
}
