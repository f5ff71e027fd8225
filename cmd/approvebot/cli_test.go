package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/approvebot/approvebot/internal/testserver"
)

// runCLI runs one command in-process and returns stdout, stderr and the exit code.
func runCLI(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), args, strings.NewReader(stdin), &stdout, &stderr)
	code := exitCode(err, &stderr)
	return stdout.String(), stderr.String(), code
}

// usages are the positional syntax each subcommand's -h must show.
var usages = map[string]string{
	"serve":          "usage: approvebot serve [-config FILE]",
	"check":          "usage: approvebot check [flags] -- 'COMMAND LINE'   |   check [flags] -tool TOOL -args '{…}'",
	"example-config": "usage: approvebot example-config",
	"ask":            "usage: approvebot ask [flags] -- COMMAND…   |   ask [flags] -tool TOOL -args '{…}'",
	"exec":           "usage: approvebot exec [flags] -- PROGRAM [ARGS…]",
	"hook":           "usage: approvebot hook claude-code|codex|cursor|gemini [flags]",
	"mcp":            "usage: approvebot mcp [flags]",
	"pending":        "usage: approvebot pending [flags]",
	"decide":         "usage: approvebot decide [flags] ID allow|allow-session|allow-always|deny [REASON…]",
	"audit":          "usage: approvebot audit [flags]",
	"compact":        "usage: approvebot compact [-config FILE | -db FILE]",
	"allowlist":      "usage: approvebot allowlist [flags] list | revoke PATTERN",
	"session":        "usage: approvebot session [flags] set NAME",
	"token":          "usage: approvebot token",
	"version":        "usage: approvebot version",
	"backup":         "usage: approvebot backup [flags] FILE",
	"verify":         "usage: approvebot verify FILE",
}

var flagLine = regexp.MustCompile(`^  -(\S+)`)

// Every subcommand's -h shows its positional syntax and its flags, each default at most
// once, and does nothing else: no output on stdout, no file, exit 0 — a hook's -h exits 2,
// which every agent reads as a refusal.
func TestEverySubcommandHelp(t *testing.T) {
	t.Setenv("APPROVEBOT_URL", "http://127.0.0.1:1")
	t.Setenv("APPROVEBOT_UNATTENDED", "1")
	for name := range commands() {
		if _, ok := usages[name]; !ok {
			t.Errorf("no expected usage for %s", name)
		}
		for _, h := range []string{"-h", "--help"} {
			t.Run(name+"/"+h, func(t *testing.T) {
				dir := t.TempDir()
				t.Chdir(dir)
				args := []string{name, h}
				if name == "hook" {
					args = []string{name, "claude-code", h}
				}
				stdout, stderr, code := runCLI(t, "", args...)
				want := 0
				if name == "hook" {
					want = 2
				}
				if code != want || stdout != "" {
					t.Fatalf("exit %d (want %d), stdout %q", code, want, stdout)
				}
				if !strings.HasPrefix(stderr, usages[name]) {
					t.Fatalf("usage %q, want it to start with %q", stderr, usages[name])
				}
				flags, current := map[string]int{}, ""
				for _, l := range strings.Split(stderr, "\n") {
					if m := flagLine.FindStringSubmatch(l); m != nil {
						current = m[1]
					}
					if current != "" {
						flags[current] += strings.Count(l, "(default")
					}
				}
				for f, n := range flags {
					if n > 1 {
						t.Errorf("-%s prints its default %d times:\n%s", f, n, stderr)
					}
				}
				if entries, _ := os.ReadDir(dir); len(entries) != 0 {
					t.Fatalf("-h left files behind: %v", entries)
				}
			})
		}
	}
	t.Run("hook without an agent", func(t *testing.T) {
		stdout, stderr, code := runCLI(t, "", "hook")
		if code != 2 || stdout != "" || !strings.HasPrefix(stderr, usages["hook"]) {
			t.Fatalf("exit %d, %q, %q", code, stdout, stderr)
		}
	})
}

// check exits with the verdict: 0 allow, 1 ask, 2 deny, 3 a usage or config error.
func TestCheckExitCodes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		args     []string
		code     int
		explicit bool
	}{
		{"allowlisted command", []string{"-json", "--", "ls -la"}, 0, true},
		{"a human decides", []string{"-json", "--", "rm -rf ./build"}, 1, false},
		{"floor", []string{"-json", "--", "rm -rf /"}, 2, false},
		{"tier default", []string{"-json", "-tool", "Write", "-args", `{"file_path":"/tmp/x","content":"y"}`}, 0, false},
		{"strict tier", []string{"-json", "-tier", "ask", "-tool", "Write", "-args", `{"file_path":"/tmp/x"}`}, 1, false},
		{"nothing to check", nil, 3, false},
		{"two commands", []string{"--", "ls", "pwd"}, 3, false},
		{"args not an object", []string{"-args", "[1]"}, 3, false},
		{"duplicate keys", []string{"-tool", "Write", "-args", `{"p":1,"p":2}`}, 3, false},
		{"bad tier", []string{"-tier", "yolo", "--", "ls"}, 3, false},
		{"not a shell tool", []string{"-tool", "Write", "--", "ls"}, 3, false},
		{"missing config", []string{"-config", "/nonexistent/approvebot.toml", "--", "ls"}, 3, false},
		{"unknown flag", []string{"-nope", "--", "ls"}, 3, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, "", append([]string{"check"}, c.args...)...)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stdout %s stderr %s", code, c.code, stdout, stderr)
			}
			if c.code == 3 {
				if stdout != "" || stderr == "" {
					t.Fatalf("an error must say why on stderr only: %q / %q", stdout, stderr)
				}
				return
			}
			var res checkResult
			if err := json.Unmarshal([]byte(stdout), &res); err != nil {
				t.Fatalf("%v: %s", err, stdout)
			}
			if res.Explicit != c.explicit || res.Verdict != map[int]string{0: "allow", 1: "ask", 2: "deny"}[c.code] {
				t.Fatalf("verdict %s explicit %v", res.Verdict, res.Explicit)
			}
		})
	}
}

func TestTokenAndVersion(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for range 3 {
		stdout, stderr, code := runCLI(t, "", "token")
		tok := strings.TrimSuffix(stdout, "\n")
		if code != 0 || stderr != "" || !regexp.MustCompile(`^abt_[A-Za-z0-9_-]{43}$`).MatchString(tok) || seen[tok] {
			t.Fatalf("exit %d, token %q, stderr %q", code, stdout, stderr)
		}
		seen[tok] = true
	}
	if _, _, code := runCLI(t, "", "token", "extra"); code != exitUsage {
		t.Fatalf("token with an argument: exit %d", code)
	}
	stdout, _, code := runCLI(t, "", "version")
	if code != 0 || !strings.HasPrefix(stdout, "approvebot ") || !strings.Contains(stdout, runtime.Version()) {
		t.Fatalf("exit %d, %q", code, stdout)
	}
}

// config.example.toml works as shipped once its two token variables hold tokens from
// `approvebot token`: the real binary serves it on its address, an agent asks and an
// operator lists, with the variable names the README's walk-through uses.
func TestExampleConfigServesAsShipped(t *testing.T) {
	t.Parallel()
	const addr = "127.0.0.1:8470" // the example's listen address
	if ln, err := net.Listen("tcp", addr); err != nil {
		t.Skipf("%s is in use here, so the example cannot be served as shipped: %v", addr, err)
	} else {
		ln.Close()
	}
	bin := testserver.Binary(t)
	token := func() string {
		out, err := exec.Command(bin, "token").Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	agentTok, opTok := token(), token()
	example, err := filepath.Abs(filepath.Join("..", "..", "config.example.toml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cmd := exec.Command(bin, "serve", "-config", example)
	cmd.Dir = dir
	cmd.Env = append(agEnv("http://"+addr, ""), "APPROVEBOT_TOKEN="+agentTok, "APPROVEBOT_OPERATOR_TOKEN="+opTok)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	listening := make(chan bool, 1)
	var logs agLockedBuffer
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			logs.Write([]byte(sc.Text() + "\n"))
			if !sent && strings.Contains(sc.Text(), "approvebot listening") {
				listening <- true
				sent = true
			}
		}
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
		}
	})
	select {
	case <-listening:
	case err := <-exited:
		if strings.Contains(logs.String(), "address already in use") {
			t.Skipf("%s was taken meanwhile", addr)
		}
		t.Fatalf("serve exited (%v):\n%s", err, logs.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("serve did not listen:\n%s", logs.String())
	}
	do := func(method, path, tok, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, "http://"+addr+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(raw)
	}
	if code, body := do("POST", "/v1/requests", agentTok, `{"tool":"bash","args":{"command":"ls -la"},"session":"example"}`); code != 200 || !strings.Contains(body, `"allowed":true`) {
		t.Fatalf("agent ask: %d %s", code, body)
	}
	if code, body := do("GET", "/v1/requests?state=pending", opTok, ""); code != 200 || !strings.Contains(body, `"requests"`) {
		t.Fatalf("operator list: %d %s", code, body)
	}
	// The agent-side tools read APPROVEBOT_TOKEN; operator commands take -token-env.
	out, errOut, code := agRunFull(t, cmd.Env, "pending", "-token-env", "APPROVEBOT_OPERATOR_TOKEN")
	if code != 0 || !strings.Contains(out, "no pending requests") {
		t.Fatalf("approvebot pending: exit %d %q %q", code, out, errOut)
	}
	out, errOut, code = agRunFull(t, cmd.Env, "ask", "-session", "example", "--", "ls -la")
	if code != 0 {
		t.Fatalf("approvebot ask: exit %d %q %q", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "approvebot.db")); err != nil {
		t.Fatalf("the example's data file is not in the working directory: %v", err)
	}
}

// agRunFull runs the binary and returns stdout, stderr and the exit code.
func agRunFull(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	p := agStart(t, env, "", args...)
	out, code := p.wait(t)
	return out, p.stderr.String(), code
}

// On a first start without [[agents]] the server prints its two generated tokens as the
// variables the CLI reads; the commands it prints work as printed.
func TestFirstStartPrintsWorkingCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "approvebot.toml")
	if err := os.WriteFile(cfg, []byte("[server]\nlisten = \"127.0.0.1:0\"\ndata = \""+filepath.Join(dir, "approvebot.db")+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(testserver.Binary(t), "serve", "-config", cfg)
	cmd.Dir = dir
	cmd.Env = agEnv("", "")
	var stdout agLockedBuffer
	cmd.Stdout = &stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if _, a, ok := strings.Cut(sc.Text(), "addr="); ok && strings.Contains(sc.Text(), "approvebot listening") {
				addr <- strings.Fields(a)[0]
			}
		}
	}()
	var url string
	select {
	case a := <-addr:
		url = "http://" + a
	case <-time.After(60 * time.Second):
		t.Fatalf("no listening line; stdout %q", stdout.String())
	}
	exports := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^  export (APPROVEBOT_[A-Z_]+)=(\S+)$`).FindAllStringSubmatch(stdout.String(), -1) {
		exports[m[1]] = m[2]
	}
	if !strings.HasPrefix(exports["APPROVEBOT_TOKEN"], "abt_agent_") || !strings.HasPrefix(exports["APPROVEBOT_OPERATOR_TOKEN"], "abt_op_") {
		t.Fatalf("first-start hint:\n%s", stdout.String())
	}
	if !strings.Contains(stdout.String(), "  approvebot pending -token-env APPROVEBOT_OPERATOR_TOKEN\n") {
		t.Fatalf("the hint does not show the operator command:\n%s", stdout.String())
	}
	env := append(agEnv(url, exports["APPROVEBOT_TOKEN"]), "APPROVEBOT_OPERATOR_TOKEN="+exports["APPROVEBOT_OPERATOR_TOKEN"])
	if out, errOut, code := agRunFull(t, env, "ask", "-session", "demo", "--", "ls -la"); code != 0 {
		t.Fatalf("ask with the printed token: exit %d %q %q", code, out, errOut)
	}
	if out, errOut, code := agRunFull(t, env, "pending", "-token-env", "APPROVEBOT_OPERATOR_TOKEN"); code != 0 || !strings.Contains(out, "no pending requests") {
		t.Fatalf("pending with the printed token: exit %d %q %q", code, out, errOut)
	}
}
