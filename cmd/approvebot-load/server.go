package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// target is the server under load: one this tool started, or one named by -url.
type target struct {
	url       string
	agents    []string // agent tokens
	operator  string   // operator token
	pid       int      // 0 when unknown (-url without -pid)
	db        string   // bbolt file, "" when unknown
	cmd       *exec.Cmd
	done      chan struct{}
	logs      *tail
	startedBy bool
	// startup is from starting the process to its first 200 on /healthz.
	startup time.Duration
}

// serverConfig is what the started server is configured with.
type serverConfig struct {
	agents          int
	maxPending      int
	approvalTimeout time.Duration
	logLevel        string
	// gomaxprocs, when > 0, is the server's GOMAXPROCS.
	gomaxprocs int
	// extra is TOML appended to the config (another store backend).
	extra string
	// serverTOML is more lines for [server] (retention settings).
	serverTOML string
	// readyPoll is how often /healthz is polled while the server starts (default 20ms).
	readyPoll time.Duration
}

// checkLoopback refuses any target that is not on this machine: the tool is for measuring
// your own server, never for hammering someone else's.
func checkLoopback(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("-url %q: want http://127.0.0.1:PORT", raw)
	}
	host := u.Hostname()
	if host == "localhost" {
		return u, nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("-url %q: only loopback targets are allowed (127.0.0.0/8, ::1, localhost)", raw)
	}
	return u, nil
}

func randomToken(prefix string) string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("crypto/rand: " + err.Error())
	}
	return prefix + hex.EncodeToString(b[:])
}

// buildServer compiles cmd/approvebot into dir (the tool must run inside the module).
func buildServer(ctx context.Context, dir string, stderr io.Writer) (string, error) {
	bin := filepath.Join(dir, "approvebot")
	fmt.Fprintln(stderr, "approvebot-load: building approvebot (use -bin to skip)…")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/approvebot/approvebot/cmd/approvebot")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build approvebot (run from inside the repository, or pass -bin): %v\n%s", err, out)
	}
	return bin, nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// startServer writes a config into dir and starts bin on it, waiting for /healthz.
func startServer(ctx context.Context, bin, dir string, sc serverConfig) (*target, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	t := &target{
		url: fmt.Sprintf("http://127.0.0.1:%d", port), db: filepath.Join(dir, "approvebot.db"),
		operator: randomToken("load-op-"), logs: &tail{max: 64 << 10}, startedBy: true,
	}
	env := append(os.Environ(), "APPROVEBOT_LOAD_OPERATOR="+t.operator)
	var agents strings.Builder
	for i := 0; i < sc.agents; i++ {
		tok := randomToken("load-agent-")
		t.agents = append(t.agents, tok)
		env = append(env, fmt.Sprintf("APPROVEBOT_LOAD_AGENT_%d=%s", i, tok))
		fmt.Fprintf(&agents, "[[agents]]\nname = \"load-agent-%d\"\ntoken_env = \"APPROVEBOT_LOAD_AGENT_%d\"\nrole = \"agent\"\n\n", i, i)
	}
	if sc.gomaxprocs > 0 {
		env = append(env, "GOMAXPROCS="+strconv.Itoa(sc.gomaxprocs))
	}
	// The rate limit is lifted: this run measures the server, not its abuse limits.
	cfg := fmt.Sprintf(`# written by approvebot-load
[server]
listen = "127.0.0.1:%d"
data = %q
approval_timeout = %q
max_wait = "10m"
rate_limit = 1e9
rate_burst = 1000000000
max_pending = %d
max_pending_per_session = 200
%s

[log]
level = %q

%s[[agents]]
name = "load-operator"
token_env = "APPROVEBOT_LOAD_OPERATOR"
role = "operator"

[policy.tool_permissions]
%q = "deny"

%s
`, port, t.db, sc.approvalTimeout.String(), sc.maxPending, sc.serverTOML, sc.logLevel, agents.String(), deniedTool, sc.extra)
	cfgPath := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "serve", "-config", cfgPath)
	cmd.Dir = dir
	cmd.Env = env
	// Keep only the tail of the server's log (it may log every decision).
	cmd.Stdout, cmd.Stderr = t.logs, t.logs
	poll := sc.readyPoll
	if poll <= 0 {
		poll = 20 * time.Millisecond
	}
	began := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	t.cmd, t.pid, t.done = cmd, cmd.Process.Pid, make(chan struct{})
	go func() { _ = cmd.Wait(); close(t.done) }()
	deadline := time.Now().Add(60 * time.Second)
	hc := &http.Client{Timeout: time.Second}
	for {
		resp, err := hc.Get(t.url + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				t.startup = time.Since(began)
				return t, nil
			}
		}
		select {
		case <-t.done:
			return nil, fmt.Errorf("approvebot exited before it was ready:\n%s", t.logs.String())
		case <-ctx.Done():
			t.stop()
			return nil, ctx.Err()
		case <-time.After(poll):
		}
		if time.Now().After(deadline) {
			t.stop()
			return nil, fmt.Errorf("approvebot did not become ready within 60s:\n%s", t.logs.String())
		}
	}
}

// stop ends a server this tool started: SIGTERM, then SIGKILL after 20s.
func (t *target) stop() error {
	if t.cmd == nil {
		return nil
	}
	select {
	case <-t.done:
		return nil
	default:
	}
	_ = t.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-t.done:
	case <-time.After(20 * time.Second):
		_ = t.cmd.Process.Kill()
		<-t.done
		return errors.New("approvebot did not stop within 20s of SIGTERM; killed")
	}
	if code := t.cmd.ProcessState.ExitCode(); code != 0 {
		return fmt.Errorf("approvebot exited with code %d:\n%s", code, t.logs.String())
	}
	return nil
}

// procStatus reads VmHWM (peak RSS) and VmRSS of a process, in bytes.
func procStatus(pid int) (peak, rss int64, err error) {
	if pid <= 0 {
		return 0, 0, errors.New("no server pid")
	}
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		fields := strings.Fields(v)
		if len(fields) == 0 {
			continue
		}
		n, _ := strconv.ParseInt(fields[0], 10, 64)
		switch k {
		case "VmHWM":
			peak = n << 10
		case "VmRSS":
			rss = n << 10
		}
	}
	return peak, rss, sc.Err()
}

// clockTicks is USER_HZ, 100 on every Linux this runs on.
const clockTicks = 100

// procCPU is the user+system CPU time a process has used.
func procCPU(pid int) (time.Duration, error) {
	if pid <= 0 {
		return 0, errors.New("no server pid")
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name may contain spaces; fields after the closing parenthesis are fixed.
	s := string(raw)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, errors.New("unreadable /proc stat")
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, errors.New("short /proc stat")
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / clockTicks, nil
}

func fileSize(path string) int64 {
	if path == "" {
		return 0
	}
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	if len(b) > t.max {
		b = b[len(b)-t.max:]
	}
	return string(b)
}

// selfCPU is this process's user+system CPU time.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// procRSSAnon is a process's anonymous resident memory (RssAnon: heap, stacks), without
// the pages of mapped files; 0 when unknown.
func procRSSAnon(pid int) int64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "RssAnon:"); ok {
			if f := strings.Fields(v); len(f) > 0 {
				n, _ := strconv.ParseInt(f[0], 10, 64)
				return n << 10
			}
		}
	}
	return 0
}
