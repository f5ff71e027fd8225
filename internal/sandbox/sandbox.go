// Package sandbox runs a program under bubblewrap for tests that must see what a real tool does
// (how bash expands a glob, which options GNU sed accepts): the host file system read-only, one
// scratch directory writable at /w, no network, no view of other processes, a clean
// environment. Tests call Available first and skip when bubblewrap cannot run here; CI runs as
// root, so nothing a test runs may touch the machine itself.
package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// Dir is where the scratch directory appears inside the sandbox.
const Dir = "/tmp/w"

// Result is what a sandboxed run printed and how it exited.
type Result struct {
	Stdout, Stderr string
	// Code is the exit status; -1 when the program was killed.
	Code int
}

var (
	availOnce sync.Once
	availErr  error
)

// Available reports why the sandbox cannot run here, or nil.
func Available() error {
	availOnce.Do(func() {
		path, err := exec.LookPath("bwrap")
		if err != nil {
			availErr = fmt.Errorf("bubblewrap (bwrap) is not installed: %w", err)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, path, append(baseArgs("/tmp"), "--", "/bin/true")...)
		if out, err := cmd.CombinedOutput(); err != nil {
			availErr = fmt.Errorf("bwrap cannot create a sandbox here (user namespaces off?): %v: %s", err, bytes.TrimSpace(out))
		}
	})
	return availErr
}

func baseArgs(scratch string) []string {
	return []string{
		"--ro-bind", "/", "/",
		"--tmpfs", "/tmp",
		"--dev", "/dev",
		"--proc", "/proc",
		"--bind", scratch, Dir,
		"--chdir", Dir,
		"--unshare-all",
		"--cap-drop", "ALL", // as root outside, no capability inside: date -s, mount, … fail
		"--die-with-parent",
		"--new-session",
		"--clearenv",
		"--setenv", "PATH", "/usr/bin:/bin",
		"--setenv", "HOME", Dir,
		"--setenv", "LC_ALL", "C",
	}
}

// Run runs argv with scratch (a host directory, e.g. t.TempDir()) writable at Dir and as the
// working directory. stdin is empty. A non-zero exit is not an error; failing to start is.
func Run(ctx context.Context, scratch string, argv ...string) (Result, error) {
	return RunInput(ctx, scratch, "", argv...)
}

// RunInput is Run with stdin.
func RunInput(ctx context.Context, scratch, stdin string, argv ...string) (Result, error) {
	if err := Available(); err != nil {
		return Result{}, err
	}
	if len(argv) == 0 {
		return Result{}, errors.New("sandbox: nothing to run")
	}
	args := append(baseArgs(scratch), "--")
	args = append(args, argv...)
	cmd := exec.CommandContext(ctx, "bwrap", args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := Result{Stdout: stdout.String(), Stderr: stderr.String()}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		res.Code = exitErr.ExitCode()
	default:
		return res, fmt.Errorf("sandbox: %w", err)
	}
	return res, nil
}
