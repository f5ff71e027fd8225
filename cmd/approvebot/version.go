package main

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
)

// cmdVersion prints the module version, the commit it was built from (when the build
// recorded it) and the Go version: `approvebot v1.2.3 (commit 0123abcd, go1.26.0)`.
func cmdVersion(_ context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", "version", stderr)
	if err := fs.Parse(args); err != nil {
		return parseError(err, exitUsage)
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return &exitError{code: exitUsage, msg: "version takes no arguments"}
	}
	_, err := fmt.Fprintln(stdout, versionString())
	return err
}

func versionString() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "approvebot (unknown version: no build information)"
	}
	version := bi.Main.Version
	if version == "" {
		version = "(devel)"
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = ", modified"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev == "" {
		return fmt.Sprintf("approvebot %s (%s)", version, bi.GoVersion)
	}
	return fmt.Sprintf("approvebot %s (commit %s%s, %s)", version, rev, dirty, bi.GoVersion)
}
