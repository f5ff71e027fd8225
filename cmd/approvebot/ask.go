package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/approvebot/approvebot/client"
)

// Exit codes of ask and exec. 0 is allowed (exec: the program's own status).
const (
	exitUsage      = 2   // bad flags or arguments
	exitNoDecision = 69  // no decision could be obtained (EX_UNAVAILABLE): refused
	exitDenied     = 77  // refused (EX_NOPERM)
	exitTimeout    = 124 // nobody decided in time (as timeout(1)): refused
	exitNoRun      = 126 // exec: allowed, but the program could not be started
	exitNotFound   = 127 // exec: no such program (nothing was asked)
)

func cmdAsk(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("ask", "ask [flags] -- COMMAND…   |   ask [flags] -tool TOOL -args '{…}'\n"+
		"Exit 0 allowed, 77 denied, 124 timed out, 69 no decision, 2 usage.", stderr)
	var af agentFlags
	af.register(fs, "session (default $"+client.EnvSession+", else cli-$USER)")
	reason := fs.String("reason", "", "why the agent wants this (shown to the human as the agent's claim)")
	cwd := fs.String("cwd", "", "working directory of the call (default: this directory)")
	tool := fs.String("tool", "bash", "tool name; a shell tool takes the COMMAND after --")
	argsJSON := fs.String("args", "", "tool arguments as a JSON object (instead of a COMMAND)")
	asJSON := fs.Bool("json", false, "print the result as one JSON object")
	if err := fs.Parse(args); err != nil {
		return parseError(err, exitUsage)
	}
	var callArgs map[string]any
	switch {
	case *argsJSON != "" && fs.NArg() > 0:
		return &exitError{code: exitUsage, msg: "give either -args or a command after --, not both"}
	case *argsJSON != "":
		m, err := client.StrictObject([]byte(*argsJSON))
		if err != nil {
			return &exitError{code: exitUsage, msg: "-args must be one JSON object: " + err.Error()}
		}
		callArgs = m
	case fs.NArg() == 1:
		callArgs = map[string]any{"command": fs.Arg(0)}
	case fs.NArg() > 1:
		callArgs = map[string]any{"command": shellQuote(fs.Args())}
	default:
		fs.Usage()
		return &exitError{code: exitUsage, msg: "nothing to ask: give -- COMMAND or -args '{…}'"}
	}
	dir, err := workDir(*cwd)
	if err != nil {
		return &exitError{code: exitUsage, msg: err.Error()}
	}
	res := af.ask(ctx, client.Ask{Tool: *tool, Args: callArgs, Cwd: dir, Reason: *reason})
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(struct {
			Verdict string          `json:"verdict"`
			Allowed bool            `json:"allowed"`
			Message string          `json:"message"`
			Request *client.Request `json:"request,omitempty"`
			Error   string          `json:"error,omitempty"`
		}{res.Verdict.String(), res.Allowed(), res.Message, res.Request, errText(res.Err)})
	} else {
		fmt.Fprintln(stdout, res.Message)
	}
	return refusalExit(res)
}

func cmdExec(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("exec", "exec [flags] -- PROGRAM [ARGS…]\n"+
		"Runs PROGRAM (no shell) only when allowed and passes its exit status through. Refused: 77 denied,\n"+
		"124 timed out, 69 no decision; 126 could not start, 127 not found, 2 usage.", stderr)
	var af agentFlags
	af.register(fs, "session (default $"+client.EnvSession+", else cli-$USER)")
	reason := fs.String("reason", "", "why the agent wants this (shown to the human as the agent's claim)")
	cwd := fs.String("cwd", "", "directory to run in (default: this directory)")
	tool := fs.String("tool", "bash", "shell tool name the command is asked as")
	if err := fs.Parse(args); err != nil {
		return parseError(err, exitUsage)
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return &exitError{code: exitUsage, msg: "nothing to run: give -- PROGRAM ARGS…"}
	}
	dir, err := workDir(*cwd)
	if err != nil {
		return &exitError{code: exitUsage, msg: err.Error()}
	}
	argv := fs.Args()
	// Ask about exactly what will run: the program as resolved here, by absolute path.
	path, err := resolveProgram(argv[0], dir)
	if err != nil {
		return &exitError{code: exitNotFound, msg: err.Error()}
	}
	argv = append([]string{path}, argv[1:]...)
	res := af.ask(ctx, client.Ask{Tool: *tool, Args: map[string]any{"command": shellQuote(argv)}, Cwd: dir, Reason: *reason})
	if !res.Allowed() {
		fmt.Fprintln(stderr, res.Message)
		return refusalExit(res)
	}
	return runProgram(ctx, argv, dir, stdin, stdout, stderr)
}

// ask runs one ask with the agent flags: session (when the caller set none), unattended,
// tier, deadline.
func (af *agentFlags) ask(ctx context.Context, a client.Ask) client.Result {
	if a.Session == "" {
		a.Session = af.session
	}
	if a.Session == "" {
		a.Session = defaultSession()
	}
	a.Unattended = af.unattended
	a.Tier = stricterTier(a.Tier, af.tier)
	c, err := af.getClient()
	if err != nil {
		return client.Result{Verdict: client.VerdictError, Err: err, Message: client.FailureMessage(err)}
	}
	if af.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, af.timeout)
		defer cancel()
	}
	return c.Ask(ctx, a)
}

// stricterTier is the stricter of two exec tiers ("" is no tier): ask > auto > full.
func stricterTier(a, b string) string {
	rank := map[string]int{"": 0, "full": 1, "auto": 2, "ask": 3}
	ra, oka := rank[a]
	rb, okb := rank[b]
	switch {
	case !oka:
		return a // an unknown tier is the server's to refuse
	case !okb:
		return b
	case ra >= rb:
		return a
	}
	return b
}

func defaultSession() string {
	if s := os.Getenv(client.EnvSession); s != "" {
		return s
	}
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	if name == "" {
		return "cli"
	}
	return "cli-" + name
}

// refusalExit maps a result to the exit code: nil only when allowed.
func refusalExit(res client.Result) error {
	switch {
	case res.Allowed():
		return nil
	case res.Verdict == client.VerdictDenied:
		return &exitError{code: exitDenied}
	case res.Verdict == client.VerdictTimeout:
		return &exitError{code: exitTimeout}
	}
	return &exitError{code: exitNoDecision, msg: errText(res.Err)}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func workDir(cwd string) (string, error) {
	if cwd == "" {
		d, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("working directory: %w", err)
		}
		return d, nil
	}
	d, err := filepath.Abs(cwd)
	if err != nil {
		return "", fmt.Errorf("-cwd: %w", err)
	}
	if st, err := os.Stat(d); err != nil || !st.IsDir() {
		return "", fmt.Errorf("-cwd %s is not a directory", d)
	}
	return d, nil
}

// resolveProgram finds the program the way exec would, relative paths against dir.
func resolveProgram(name, dir string) (string, error) {
	if strings.ContainsRune(name, filepath.Separator) {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		st, err := os.Stat(p)
		if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return "", fmt.Errorf("%s: not an executable file", name)
		}
		return filepath.Clean(p), nil
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("%s: not found in PATH", name)
	}
	return filepath.Abs(p)
}

// runProgram runs argv and returns its exit status; SIGTERM/SIGINT received meanwhile
// are passed on to it.
func runProgram(ctx context.Context, argv []string, dir string, stdin io.Reader, stdout, stderr io.Writer) error {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	if err := cmd.Start(); err != nil {
		return &exitError{code: exitNoRun, msg: fmt.Sprintf("starting %s: %v", argv[0], err)}
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
			_ = cmd.Process.Signal(syscall.SIGTERM)
		case <-done:
		}
	}()
	err := cmd.Wait()
	if err == nil {
		return nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return &exitError{code: 128 + int(ws.Signal())}
		}
		return &exitError{code: ee.ExitCode()}
	}
	return &exitError{code: exitNoRun, msg: err.Error()}
}

// shellQuote joins argv into one POSIX shell command line that parses back to argv.
func shellQuote(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = quoteWord(a)
	}
	return strings.Join(out, " ")
}

func quoteWord(s string) string {
	if s == "" {
		return "''"
	}
	safe := true
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_@%+=:,./-", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
