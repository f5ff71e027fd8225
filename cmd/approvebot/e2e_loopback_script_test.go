package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/approvebot/approvebot/internal/etcdtest"
	"github.com/approvebot/approvebot/internal/testserver"
)

// freeBase finds a base port whose 31 successors (the script's ports) are free.
func freeBase(t *testing.T) int {
	t.Helper()
	for try := 0; try < 50; try++ {
		base := 30000 + int(time.Now().UnixNano()%20000)
		ok := true
		for p := base; p <= base+30 && ok; p++ {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
			if err != nil {
				ok = false
				break
			}
			l.Close()
		}
		if ok {
			return base
		}
	}
	t.Fatal("no free range of ports for the loopback topology")
	return 0
}

// TestLoopbackScriptStartsTheDocumentedTopology runs docs/cluster/loopback.sh, the
// README's topology on one machine: three etcd members, two replicas, haproxy. An agent
// asks through the load balancer, waits on one replica and is answered by a decision on
// the other; with one replica killed the load balancer still serves; stop ends everything.
func TestLoopbackScriptStartsTheDocumentedTopology(t *testing.T) {
	etcdtest.Require(t)
	if _, err := exec.LookPath("haproxy"); err != nil {
		if _, err := os.Stat("/usr/sbin/haproxy"); err != nil {
			t.Fatal("haproxy is not installed (CI installs it; apt-get install haproxy)")
		}
	}
	dir := t.TempDir()
	base := freeBase(t)
	script, err := filepath.Abs(filepath.Join("..", "..", "docs", "cluster", "loopback.sh"))
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "APPROVEBOT="+testserver.Binary(t), "BASE_PORT="+strconv.Itoa(base))
	run := func(cmd string) {
		t.Helper()
		c := exec.Command("bash", script, cmd, dir)
		c.Env = env
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("loopback.sh %s: %v\n%s", cmd, err, out)
		}
	}
	run("start")
	stopped := false
	defer func() {
		if !stopped {
			run("stop")
		}
	}()
	tok := readEnv(t, filepath.Join(dir, "env"))
	lb := tok["APPROVEBOT_URL"]
	r0, r1 := fmt.Sprintf("http://127.0.0.1:%d", base+20), fmt.Sprintf("http://127.0.0.1:%d", base+21)
	f := &fleet{t: t, http: &http.Client{Timeout: 40 * time.Second}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	code, m, err := f.call(ctx, "POST", lb+"/v1/requests", tok["APPROVEBOT_AGENT_TOKEN"],
		map[string]any{"tool": "bash", "args": map[string]any{"command": "make deploy"}, "session": "s"})
	if err != nil || code != 202 {
		t.Fatalf("ask through the load balancer: %d %v %v", code, m, err)
	}
	id := str(m, "id")
	got := make(chan map[string]any, 1)
	go func() {
		_, m, err := f.call(ctx, "GET", r0+"/v1/requests/"+id+"?wait=30s", tok["APPROVEBOT_AGENT_TOKEN"], nil)
		if err != nil {
			m = map[string]any{"error": err.Error()}
		}
		got <- m
	}()
	// The decision goes to the other replica once the first has the agent waiting.
	f.waitWaitingAt(t, r0)
	if code, m, err := f.call(ctx, "POST", r1+"/v1/requests/"+id+"/decision", tok["APPROVEBOT_OPERATOR_TOKEN"],
		map[string]any{"outcome": "allow_once"}); err != nil || code != 200 {
		t.Fatalf("decide on the other replica: %d %v %v", code, m, err)
	}
	if m := <-got; str(m, "state") != "allowed" || str(m, "decided_by") != "oncall" {
		t.Fatalf("the agent waiting on the first replica got %v", m)
	}

	// One replica goes: the load balancer sends every call to the other.
	pid := readPid(t, filepath.Join(dir, "replica0.pid"))
	syscall.Kill(pid, syscall.SIGKILL)
	deadline := time.Now().Add(30 * time.Second)
	for served := 0; served < 10; {
		code, m, err := f.call(ctx, "POST", lb+"/v1/requests", tok["APPROVEBOT_AGENT_TOKEN"],
			map[string]any{"tool": "Read", "args": map[string]any{"path": fmt.Sprint("/x", served)}, "session": "s"})
		if err == nil && code == 200 && str(m, "state") == "allowed" {
			served++
			continue
		}
		if time.Now().After(deadline) {
			t.Fatalf("the load balancer did not route around the dead replica: %d %v %v", code, m, err)
		}
		time.Sleep(100 * time.Millisecond)
	}

	pids := []int{readPid(t, filepath.Join(dir, "replica1.pid")), readPid(t, filepath.Join(dir, "haproxy.pid")),
		readPid(t, filepath.Join(dir, "etcd0.pid"))}
	run("stop")
	stopped = true
	for _, p := range pids {
		if syscall.Kill(p, 0) == nil {
			t.Errorf("process %d still runs after stop", p)
		}
	}
}

func readEnv(t *testing.T, path string) map[string]string {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimPrefix(sc.Text(), "export "), "=")
		if ok {
			out[k] = v
		}
	}
	return out
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}
