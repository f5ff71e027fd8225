// Package testserver runs the real approvebot binary for end-to-end tests: it builds the
// binary once per test process (with -race when the tests run with it), starts `approvebot
// serve` on a config it writes into a temporary directory, and can stop, kill and restart it
// on the same bbolt file. Tests talk to it over HTTP like any agent or operator would.
package testserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Tokens used by every test server.
const (
	AgentToken    = "test-agent-token-0123456789abcdef"
	Agent2Token   = "test-agent2-token-0123456789abcdef"
	OperatorToken = "test-operator-token-0123456789abcdef"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// Binary builds cmd/approvebot once and returns its path.
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "approvebot-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "approvebot")
		args := []string{"build", "-o", binPath}
		if raceEnabled {
			args = append(args, "-race")
		}
		args = append(args, "github.com/approvebot/approvebot/cmd/approvebot")
		cmd := exec.Command("go", args...)
		cmd.Dir = moduleRoot()
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func moduleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Options configures a test server.
type Options struct {
	// Server is extra TOML lines inside [server] (listen, data and tokens are set here).
	Server string
	// Config is extra TOML appended after [server] and [[agents]]: [policy], [channels.*]…
	Config string
	// Env is extra environment (channel tokens).
	Env []string
	// Dir reuses a directory (and so its database) from an earlier server.
	Dir string
	// Data is the database path (default Dir/approvebot.db): a subdirectory, another file
	// system.
	Data string
}

func (o Options) dbPath() string {
	if o.Data != "" {
		return o.Data
	}
	return filepath.Join(o.Dir, "approvebot.db")
}

// Server is one running approvebot.
type Server struct {
	URL  string
	Dir  string
	DB   string
	opts Options
	t    testing.TB
	cmd  *exec.Cmd
	logs *syncBuffer
	done chan struct{}
	// drained is closed once everything the server printed is in logs.
	drained chan struct{}
}

// Start writes the config and starts the server, waiting until it listens.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	s, ok := TryStart(t, opts)
	if !ok {
		t.Fatalf("approvebot exited before listening:\n%s", s.Logs())
	}
	return s
}

// TryStart starts the server and reports whether it came up: a server given a damaged
// database must exit instead, and then Logs and ExitCode say how.
func TryStart(t testing.TB, opts Options) (*Server, bool) {
	t.Helper()
	bin := Binary(t)
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	s := &Server{Dir: opts.Dir, DB: opts.dbPath(), opts: opts, t: t}
	cfgPath := writeConfig(t, opts, s.DB)
	s.cmd = exec.Command(bin, "serve", "-config", cfgPath)
	s.cmd.Dir = opts.Dir
	s.cmd.Env = append(os.Environ(),
		"TEST_AGENT_TOKEN="+AgentToken, "TEST_AGENT2_TOKEN="+Agent2Token, "TEST_OPERATOR_TOKEN="+OperatorToken)
	s.cmd.Env = append(s.cmd.Env, opts.Env...)
	s.logs = &syncBuffer{}
	pr, pw := io.Pipe()
	s.cmd.Stderr = pw
	s.cmd.Stdout = s.logs
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.done = make(chan struct{})
	addr := make(chan string, 1)
	s.drained = make(chan struct{})
	go func() {
		defer close(s.drained)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 1<<16), 1<<20)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			s.logs.Write([]byte(line + "\n"))
			if !sent {
				if m := listenRe.FindStringSubmatch(line); m != nil {
					addr <- m[1]
					sent = true
				}
			}
		}
	}()
	go func() {
		s.cmd.Wait()
		pw.Close()
		close(s.done)
	}()
	select {
	case a := <-addr:
		s.URL = "http://" + a
	case <-s.done:
		<-s.drained
		return s, false
	case <-time.After(60 * time.Second):
		s.cmd.Process.Kill()
		t.Fatalf("approvebot did not start listening:\n%s", s.logs.String())
	}
	t.Cleanup(func() {
		s.Kill()
		if t.Failed() {
			t.Logf("approvebot logs:\n%s", s.logs.String())
		}
	})
	return s, true
}

var listenRe = regexp.MustCompile(`approvebot listening.*addr=(\S+)`)

// writeConfig writes the test server's config (its database at db) and returns its path.
func writeConfig(t testing.TB, opts Options, db string) string {
	t.Helper()
	cfg := fmt.Sprintf(`[server]
listen = "127.0.0.1:0"
data = %q
%s

[[agents]]
name = "agent"
token_env = "TEST_AGENT_TOKEN"
role = "agent"

[[agents]]
name = "agent2"
token_env = "TEST_AGENT2_TOKEN"
role = "agent"

[[agents]]
name = "operator"
token_env = "TEST_OPERATOR_TOKEN"
role = "operator"

%s
`, db, opts.Server, opts.Config)
	cfgPath := filepath.Join(opts.Dir, "config.toml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return cfgPath
}

// Logs returns everything the server printed.
func (s *Server) Logs() string { return s.logs.String() }

// Stop sends SIGTERM and waits for a graceful exit.
func (s *Server) Stop() {
	select {
	case <-s.done:
		return
	default:
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
		s.t.Errorf("approvebot did not stop within 30s of SIGTERM")
	}
}

// Kill ends the server with SIGKILL, as a crash would.
func (s *Server) Kill() {
	select {
	case <-s.done:
		return
	default:
	}
	s.cmd.Process.Kill()
	<-s.done
}

// Exited reports whether the process has ended.
func (s *Server) Exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// ExitCode is the process's exit code after it ended.
func (s *Server) ExitCode() int {
	<-s.done
	return s.cmd.ProcessState.ExitCode()
}

// Restart starts a new server on the same directory and database.
func (s *Server) Restart(t testing.TB) *Server {
	s.Stop()
	o := s.opts
	o.Dir = s.Dir
	return Start(t, o)
}

// Do sends one request and returns the status and body.
func (s *Server) Do(t testing.TB, method, path, token string, body any) (int, []byte) {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	case []byte:
		r = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, s.URL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// JSON sends one request and decodes the JSON answer into a map.
func (s *Server) JSON(t testing.TB, method, path, token string, body any) (int, map[string]any) {
	t.Helper()
	code, raw := s.Do(t, method, path, token, body)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s %s: answer is not JSON (%d): %s", method, path, code, raw)
	}
	return code, m
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Eventually checks cond every tick until it holds, failing the test when timeout passes
// first. It is how a test waits for something asynchronous: never a bare sleep.
func Eventually(tb testing.TB, timeout time.Duration, what string, cond func() bool) {
	tb.Helper()
	const tick = 10 * time.Millisecond
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(tick)
	}
}

// WaitCards waits until n cards of request id are recorded in the store (the operator's
// view of the request lists them once their references are committed), so a test can
// kill the server knowing a restart will find them.
func (s *Server) WaitCards(tb testing.TB, id string, n int) {
	tb.Helper()
	Eventually(tb, 20*time.Second, fmt.Sprintf("%d card(s) of %s recorded", n, id), func() bool {
		_, m := s.JSON(tb, "GET", "/v1/requests/"+id, OperatorToken, nil)
		cards, _ := m["cards"].([]any)
		return len(cards) >= n
	})
}

// SleepUntil waits for the wall clock to pass t: for tests that need a deadline behind
// them (a request that must expire while the server is down), not for asynchronous work.
func SleepUntil(t time.Time) {
	time.Sleep(time.Until(t))
}

// ExpiresAt is request id's deadline as the server reports it.
func (s *Server) ExpiresAt(tb testing.TB, id string) time.Time {
	tb.Helper()
	_, m := s.JSON(tb, "GET", "/v1/requests/"+id, OperatorToken, nil)
	at, err := time.Parse(time.RFC3339Nano, fmt.Sprint(m["expires_at"]))
	if err != nil {
		tb.Fatalf("request %s has no expires_at: %v", id, m)
	}
	return at
}

// Integration skips a test that needs installed servers, root or fault injection unless
// APPROVEBOT_INTEGRATION=1 is set (.ci/run sets it after installing what they need).
func Integration(tb testing.TB, needs string) {
	tb.Helper()
	if os.Getenv("APPROVEBOT_INTEGRATION") != "1" {
		tb.Skipf("integration test (needs %s): set APPROVEBOT_INTEGRATION=1 to run it", needs)
	}
}

// Main runs an end-to-end test binary. These tests wait on server processes and fakes far
// more than they compute, so unless -parallel is given, Main lets four of them (at least
// GOMAXPROCS) run at once instead of testing's default of GOMAXPROCS. Call it from
// TestMain: func TestMain(m *testing.M) { testserver.Main(m) }.
func Main(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		flag.Set("test.parallel", strconv.Itoa(max(4, runtime.GOMAXPROCS(0))))
	}
	os.Exit(m.Run())
}
