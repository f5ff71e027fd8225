// Package etcdtest runs real etcd members (the installed etcd binary, 3.4 in CI) on
// loopback for tests: a cluster of one or three members in a temporary directory, each of
// which a test can kill and restart on its own data. It speaks to etcd only over its HTTP
// health endpoint, so the etcd client stays the etcd backend's alone.
package etcdtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// EnvIntegration is the variable that enables the suites needing installed servers.
const EnvIntegration = "APPROVEBOT_INTEGRATION"

// EnvEndpoints names an etcd cluster a developer already runs: the store contract runs
// against it (under a fresh prefix) without APPROVEBOT_INTEGRATION.
const EnvEndpoints = "APPROVEBOT_ETCD_ENDPOINTS"

// Timing tuned for a loaded 2-core machine shared by several test processes: etcd's own
// defaults (100 ms heartbeats, 1 s election timeout) elect new leaders under CPU
// starvation alone, which tests then see as failures that are not theirs.
const (
	HeartbeatMillis = 200
	ElectionMillis  = 2000
)

// Binary returns the etcd binary to run: $ETCD_BIN, else etcd on PATH, else /usr/bin/etcd.
func Binary() (string, error) {
	if b := os.Getenv("ETCD_BIN"); b != "" {
		return b, nil
	}
	if b, err := exec.LookPath("etcd"); err == nil {
		return b, nil
	}
	if _, err := os.Stat("/usr/bin/etcd"); err == nil {
		return "/usr/bin/etcd", nil
	}
	return "", errors.New("no etcd binary: install etcd-server (Debian) or set ETCD_BIN")
}

// Require skips the test unless APPROVEBOT_INTEGRATION=1 and etcd is installed; with the
// variable set, a missing etcd fails the test instead (CI must not skip silently).
func Require(t testing.TB) string {
	t.Helper()
	if os.Getenv(EnvIntegration) != "1" {
		t.Skip("etcd cluster suite: set APPROVEBOT_INTEGRATION=1 to run it (needs /usr/bin/etcd)")
	}
	bin, err := Binary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// Member is one etcd process.
type Member struct {
	Name      string
	ClientURL string
	PeerURL   string
	Dir       string

	c    *Cluster
	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
	logs *bytes.Buffer
}

// Cluster is a set of members started together.
type Cluster struct {
	Members []*Member
	bin     string
	initial string
}

// Start starts a cluster of n members (1 or 3) and waits until it has a leader. The
// members are killed when the test ends.
func Start(t testing.TB, n int) *Cluster {
	t.Helper()
	bin := Require(t)
	c, err := Launch(bin, t.TempDir(), n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s", c.Logs(4000))
		}
		c.Stop()
	})
	return c
}

// Launch starts n members with their data under dir and waits until they are healthy.
// Stop kills them.
func Launch(bin, dir string, n int) (*Cluster, error) {
	c := &Cluster{bin: bin}
	var peers []string
	ports, err := freePorts(2 * n)
	if err != nil {
		return nil, err
	}
	for i := 0; i < n; i++ {
		m := &Member{
			Name:      fmt.Sprintf("m%d", i),
			ClientURL: fmt.Sprintf("http://127.0.0.1:%d", ports[2*i]),
			PeerURL:   fmt.Sprintf("http://127.0.0.1:%d", ports[2*i+1]),
			Dir:       filepath.Join(dir, fmt.Sprintf("m%d", i)),
			c:         c,
			logs:      &bytes.Buffer{},
		}
		c.Members = append(c.Members, m)
		peers = append(peers, m.Name+"="+m.PeerURL)
	}
	c.initial = strings.Join(peers, ",")
	for _, m := range c.Members {
		if err := m.start(); err != nil {
			c.Stop()
			return nil, err
		}
	}
	if err := c.WaitHealthy(60 * time.Second); err != nil {
		err = fmt.Errorf("%w\n%s", err, c.Logs(4000))
		c.Stop()
		return nil, err
	}
	return c, nil
}

// Stop kills every member.
func (c *Cluster) Stop() {
	for _, m := range c.Members {
		m.Kill()
	}
}

// Logs returns the tail of every member's log.
func (c *Cluster) Logs(n int) string {
	var b strings.Builder
	for _, m := range c.Members {
		m.mu.Lock()
		fmt.Fprintf(&b, "etcd %s log (tail):\n%s\n", m.Name, tail(m.logs.String(), n))
		m.mu.Unlock()
	}
	return b.String()
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// Endpoints are the members' client URLs.
func (c *Cluster) Endpoints() []string {
	out := make([]string, len(c.Members))
	for i, m := range c.Members {
		out[i] = m.ClientURL
	}
	return out
}

// Args are the command line of one member: the cluster's timing and a quiet log.
func (c *Cluster) args(m *Member) []string {
	return []string{
		"--name", m.Name, "--data-dir", m.Dir,
		"--listen-client-urls", m.ClientURL, "--advertise-client-urls", m.ClientURL,
		"--listen-peer-urls", m.PeerURL, "--initial-advertise-peer-urls", m.PeerURL,
		"--initial-cluster", c.initial, "--initial-cluster-state", "new",
		"--initial-cluster-token", "approvebot-test",
		"--heartbeat-interval", fmt.Sprint(HeartbeatMillis), "--election-timeout", fmt.Sprint(ElectionMillis),
		"--logger", "zap", "--log-level", "warn",
		"--auto-compaction-mode", "revision", "--auto-compaction-retention", "100000",
	}
}

func (m *Member) start() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cmd != nil {
		return fmt.Errorf("etcd %s is already running", m.Name)
	}
	cmd := exec.Command(m.c.bin, m.c.args(m)...)
	cmd.Stdout = &lockedWriter{mu: &m.mu, w: m.logs}
	cmd.Stderr = cmd.Stdout
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting etcd %s: %w", m.Name, err)
	}
	m.cmd = cmd
	done := make(chan struct{})
	m.done = done
	go func() { cmd.Wait(); close(done) }()
	return nil
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w.Len() > 1<<20 {
		l.w.Reset()
	}
	return l.w.Write(p)
}

// Kill sends SIGKILL and waits for the process to end. Killing a stopped member does
// nothing.
func (m *Member) Kill() {
	m.mu.Lock()
	cmd, done := m.cmd, m.done
	m.cmd = nil
	m.mu.Unlock()
	if cmd == nil {
		return
	}
	cmd.Process.Kill()
	<-done
}

// Restart starts a killed member again on its data directory.
func (m *Member) Restart() error {
	return m.start()
}

// Running reports whether the member's process is up.
func (m *Member) Running() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cmd != nil
}

// Healthy asks the member's /health endpoint (true when it is in a cluster with a leader).
func (m *Member) Healthy(ctx context.Context) bool {
	req, _ := http.NewRequestWithContext(ctx, "GET", m.ClientURL+"/health", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var h struct {
		Health string `json:"health"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		return false
	}
	return resp.StatusCode == 200 && h.Health == "true"
}

// WaitHealthy waits until every running member reports healthy.
func (c *Cluster) WaitHealthy(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		all := true
		for _, m := range c.Members {
			if !m.Running() {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			ok := m.Healthy(ctx)
			cancel()
			if !ok {
				all = false
				break
			}
		}
		if all {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("etcd cluster not healthy after %s", timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// FreePorts returns n distinct free TCP ports on 127.0.0.1. They are free when returned;
// a process that binds them later races with any other, which on a test machine is rare
// enough that a start failure is reported rather than retried.
func FreePorts(t testing.TB, n int) []int {
	t.Helper()
	out, err := freePorts(n)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var out []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}

var shared struct {
	once sync.Once
	dir  string
	c    *Cluster
	err  error
}

// Endpoints returns the etcd endpoints the store contract runs against: those in
// APPROVEBOT_ETCD_ENDPOINTS (comma-separated), else a one-member cluster this process
// starts once (with APPROVEBOT_INTEGRATION=1), else it skips the test. Use Main in
// TestMain to stop that member at the end.
func Endpoints(t testing.TB) []string {
	t.Helper()
	if v := os.Getenv(EnvEndpoints); v != "" {
		return strings.Split(v, ",")
	}
	bin := Require(t)
	shared.once.Do(func() {
		shared.dir, shared.err = os.MkdirTemp("", "approvebot-etcd-")
		if shared.err == nil {
			shared.c, shared.err = Launch(bin, shared.dir, 1)
		}
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.c.Endpoints()
}

// Main runs the tests and then stops the member Endpoints started.
func Main(m *testing.M) int {
	code := m.Run()
	if shared.c != nil {
		shared.c.Stop()
	}
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
	return code
}
