package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/approvebot/approvebot/internal/testserver"
)

// The fault suites: each injects one fault into the real binary and asserts the outcome an
// operator and an agent see — refused, clearly reported, nothing acknowledged lost, nothing
// allowed. The ones that need root (mounts, chattr, ioctls on a file system) run only with
// APPROVEBOT_INTEGRATION=1 (see faults_root_test.go).

// acked is what clients were told: request id → state ("pending", "allowed", "denied").
type acked map[string]string

// fileRequests files pending, policy-allowed and human-decided requests and returns what
// the clients were told about each.
func fileRequests(t *testing.T, s *testserver.Server, prefix string, n int) acked {
	t.Helper()
	got := acked{}
	for i := 0; i < n; i++ {
		switch i % 3 {
		case 0:
			got[pendingID(t, s, bash(prefix+strconv.Itoa(i%5), fmt.Sprintf("deploy %s-%d", prefix, i)))] = "pending"
		case 1:
			code, m := ask(t, s, map[string]any{"tool": "read_file", "args": map[string]any{"path": fmt.Sprint("/tmp/", i)}, "session": prefix})
			if code != 200 || m["state"] != "allowed" {
				t.Fatalf("policy allow: %d %v", code, m)
			}
			got[m["id"].(string)] = "allowed"
		case 2:
			id := pendingID(t, s, bash(fmt.Sprint(prefix, "-h", i), fmt.Sprintf("deploy %s-%d", prefix, i)))
			if code, m := decide(t, s, id, "deny", "not now"); code != 200 {
				t.Fatalf("deny: %d %v", code, m)
			}
			got[id] = "denied"
		}
	}
	return got
}

// checkAcked asserts that the server still holds every acknowledged request as the client
// was told (a pending one may have been decided since, but never allowed by itself).
func checkAcked(t *testing.T, s *testserver.Server, want acked) {
	t.Helper()
	for id, state := range want {
		code, m := s.JSON(t, "GET", "/v1/requests/"+id, operator, nil)
		if code != 200 && code != 202 {
			t.Errorf("acknowledged request %s lost: %d %v", id, code, m)
			continue
		}
		if got := m["state"]; got != state && !(state == "pending" && got == "denied") {
			t.Errorf("request %s: state %v, the client was told %s", id, got, state)
		}
	}
}

// crashed matches what the Go runtime prints when a panic or a fault ends the process. A
// recovered one is reported by approvebot in its own words (a log line naming the bucket)
// and may quote the panic's text, which is not a crash.
var crashed = regexp.MustCompile(`(?m)^(panic: |fatal error: |goroutine \d+ \[)|\[signal SIG`)

// noCrash asserts that output is a clean refusal: no Go panic or runtime fault ended it.
func noCrash(t *testing.T, out string) {
	t.Helper()
	if m := crashed.FindString(out); m != "" {
		t.Fatalf("output shows a crash (%q):\n%s", m, out)
	}
}

func metric(t *testing.T, s *testserver.Server, name string) float64 {
	t.Helper()
	_, raw := s.Do(t, "GET", "/metrics", "", nil)
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			f, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return f
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// waitHealth polls /healthz until it answers code, and returns the answer.
func waitHealth(t *testing.T, s *testserver.Server, code int) map[string]any {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, m := s.JSON(t, "GET", "/healthz", "", nil)
		if got == code {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("healthz stayed %d %v, want %d", got, m, code)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// wantStoreUnavailable asserts a refusal because of the store: 503 store_unavailable with
// Retry-After, never a 500.
func wantStoreUnavailable(t *testing.T, s *testserver.Server, method, path string, body any) {
	t.Helper()
	code, hdr, raw := rawDo(t, s, method, path, bytes.NewReader(mustJSON(t, body)), "Authorization", "Bearer "+operatorOrAgent(path))
	if code != 503 || errCode(raw) != "store_unavailable" || hdr.Get("Retry-After") == "" {
		t.Fatalf("%s %s: %d %s (Retry-After %q), want 503 store_unavailable", method, path, code, raw, hdr.Get("Retry-After"))
	}
}

func operatorOrAgent(path string) string {
	if strings.HasSuffix(path, "/decision") {
		return operator
	}
	return agent
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	if v == nil {
		return nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// boltLayout reads the page size, the pages in use and the free-list page from a database's
// newest meta page.
func boltLayout(t *testing.T, raw []byte) (pageSize, hwm, freelist int) {
	t.Helper()
	le := binary.LittleEndian
	ps := int(le.Uint32(raw[16+8:]))
	tx0, tx1 := le.Uint64(raw[16+48:]), le.Uint64(raw[ps+16+48:])
	meta := raw[16:]
	if tx1 > tx0 {
		meta = raw[ps+16:]
	}
	return ps, int(le.Uint64(meta[40:])), int(le.Uint64(meta[32:]))
}

// TestFaultDamagedDatabaseRefusedAtStart: copies of a real database, truncated, emptied or
// scrambled, are each refused with one clear error naming the file and what to do — never
// a panic, never a fresh database in its place — and `approvebot verify` says the same.
func TestFaultDamagedDatabaseRefusedAtStart(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	fileRequests(t, s, "seed", 150)
	s.Stop()
	orig, err := os.ReadFile(s.DB)
	if err != nil {
		t.Fatal(err)
	}
	ps, hwm, freelist := boltLayout(t, orig)
	tests := []struct {
		name   string
		damage func([]byte) []byte
		detail string
	}{
		{"zero length", func([]byte) []byte { return nil }, "the file is empty"},
		{"one byte left", func(b []byte) []byte { return b[:1] }, "shorter than the two meta pages"},
		{"half of it", func(b []byte) []byte { return b[:len(b)/2] }, "truncated"},
		{"the last page cut", func(b []byte) []byte { return b[:(hwm-1)*ps] }, "truncated"},
		{"both meta pages scrambled", func(b []byte) []byte {
			b[16+30] ^= 0x5a
			b[ps+16+30] ^= 0x5a
			return b
		}, "both meta pages are damaged"},
		{"the free-list page scrambled", func(b []byte) []byte {
			// Free page ids past the end of the file: bbolt would hand out pages in use.
			binary.LittleEndian.PutUint16(b[freelist*ps+10:], 8) // eight entries…
			for i := 0; i < 64; i++ {
				b[freelist*ps+16+i] = 0xff // …each past the end of the file
			}
			return b
		}, "free-list page"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			db := filepath.Join(dir, "approvebot.db")
			damaged := tc.damage(append([]byte(nil), orig...))
			if err := os.WriteFile(db, damaged, 0o600); err != nil {
				t.Fatal(err)
			}
			srv, started := testserver.TryStart(t, testserver.Options{Dir: dir})
			if started {
				t.Fatal("approvebot started on a damaged database")
			}
			out := srv.Logs()
			noCrash(t, out)
			if code := srv.ExitCode(); code != 1 {
				t.Fatalf("exit code %d:\n%s", code, out)
			}
			line := regexp.MustCompile(`(?m)^approvebot: database ` + regexp.QuoteMeta(db) + ` is damaged: .*$`).FindString(out)
			for _, want := range []string{tc.detail, "restore the file from a backup", "approvebot verify " + db, "will not replace it with an empty database"} {
				if !strings.Contains(line, want) {
					t.Errorf("the error line does not say %q:\n%s", want, out)
				}
			}
			if after, _ := os.ReadFile(db); !bytes.Equal(after, damaged) {
				t.Fatal("the damaged file was changed")
			}
			vout, err := runBinary(testserver.Binary(t), dir, "verify", db)
			if err == nil || !strings.Contains(vout, "DAMAGED") {
				t.Fatalf("verify passed a damaged file (%v):\n%s", err, vout)
			}
			noCrash(t, vout)
		})
	}
}

// TestFaultScrambledDatabaseNeverAllows: random bursts of garbage in copies of a real
// database. approvebot refuses the copy clearly, or starts and never allows what was not
// allowed, never crashes, and never answers 500.
func TestFaultScrambledDatabaseNeverAllows(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	want := fileRequests(t, s, "seed", 90)
	s.Stop()
	orig, _ := os.ReadFile(s.DB)
	ps, _, _ := boltLayout(t, orig)
	for seed := uint64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 7))
			raw := append([]byte(nil), orig...)
			for n := 2 + r.IntN(4); n > 0; n-- {
				at := 2*ps + r.IntN(len(raw)-2*ps)
				for i := 0; i < 8+r.IntN(120) && at+i < len(raw); i++ {
					raw[at+i] = byte(r.Uint32())
				}
			}
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "approvebot.db"), raw, 0o600)
			srv, started := testserver.TryStart(t, testserver.Options{Dir: dir})
			if !started {
				noCrash(t, srv.Logs())
				if !strings.Contains(srv.Logs(), "is damaged:") {
					t.Fatalf("refused without saying the database is damaged:\n%s", srv.Logs())
				}
				return
			}
			for id, state := range want {
				code, _, body := rawDo(t, srv, "GET", "/v1/requests/"+id, nil, "Authorization", "Bearer "+operator)
				if code >= 500 && code != 503 {
					t.Fatalf("GET %s: %d %s", id, code, body)
				}
				if strings.Contains(string(body), `"allowed":true`) && state != "allowed" {
					t.Fatalf("request %s (told %s) reads as allowed: %s", id, state, body)
				}
				if state == "pending" {
					code, _, body := rawDo(t, srv, "POST", "/v1/requests/"+id+"/decision", strings.NewReader(`{"outcome":"deny"}`), "Authorization", "Bearer "+operator)
					if code >= 500 && code != 503 {
						t.Fatalf("decision on %s: %d %s", id, code, body)
					}
				}
			}
			noCrash(t, srv.Logs())
			srv.Stop()
			noCrash(t, srv.Logs())
		})
	}
}

// damageRecordBytes breaks, in every copy of it in the file, the JSON of the record that
// starts with `{"<field>":"<value>"` (or contains it, for audit entries): the file stays a
// sound bbolt file, only that record no longer decodes.
func damageRecordBytes(t *testing.T, path, field, value string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	needle := []byte(`"` + field + `":"` + value + `"`)
	n := 0
	for i := 0; ; {
		j := bytes.Index(raw[i:], needle)
		if j < 0 {
			break
		}
		raw[i+j+len(field)+2] = ';' // the colon after the field name
		i += j + len(needle)
		n++
	}
	if n == 0 {
		t.Fatalf("no %s in %s", needle, path)
	}
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestFaultDamagedRecordIsQuarantined: one request's record and one audit entry no longer
// decode. approvebot starts, shows that request denied by the store (never allowed),
// keeps every other request working, and the audit trail skips and reports the entry.
func TestFaultDamagedRecordIsQuarantined(t *testing.T) {
	s := testserver.Start(t, testserver.Options{})
	victim := pendingID(t, s, bash("q", "deploy victim"))
	other := pendingID(t, s, bash("q", "deploy other"))
	audited := pendingID(t, s, bash("q2", "deploy audited"))
	s.Stop()
	damageRecordBytes(t, s.DB, "id", victim)
	damageRecordBytes(t, s.DB, "request_id", audited)

	s = s.Restart(t)
	m := mustGet(t, s, victim)
	want(t, m, "state", "denied", "allowed", false, "outcome", "deny", "source", "store")
	if !strings.Contains(fmt.Sprint(m["message"]), "damaged") {
		t.Fatalf("message does not say the record was damaged: %v", m)
	}
	if code, m := decide(t, s, victim, "allow_once", ""); code != 409 {
		t.Fatalf("a decision on the quarantined request: %d %v", code, m)
	}
	if code, m := decide(t, s, other, "allow_once", ""); code != 200 || m["allowed"] != true {
		t.Fatalf("another request is not decidable: %d %v", code, m)
	}
	code, a := s.JSON(t, "GET", "/v1/audit?limit=1000", operator, nil)
	if code != 200 || len(a["damaged"].([]any)) != 1 || len(a["entries"].([]any)) == 0 {
		t.Fatalf("audit with a damaged entry: %d %v", code, a)
	}
	if got := metric(t, s, "approvebot_store_damaged_records_total"); got < 2 {
		t.Fatalf("damaged records metric = %v", got)
	}
	if !strings.Contains(s.Logs(), "damaged record in the store") {
		t.Fatalf("no log line about the damaged record:\n%s", s.Logs())
	}
	s.Stop()
	out, err := runBinary(testserver.Binary(t), s.Dir, "verify", s.DB)
	if err == nil || !strings.Contains(out, "DAMAGED RECORD: bucket audit") || strings.Contains(out, "bucket requests") {
		t.Fatalf("verify after the quarantine (%v):\n%s", err, out)
	}
}

// TestFaultDatabaseDeletedWhileRunning: the data directory is deleted (or the file
// replaced) under the running server. It stops accepting work at once — 503
// store_unavailable, /healthz unhealthy, a loud log line — instead of acknowledging into
// an unlinked file; what it held can be rescued with `approvebot backup` and nothing
// acknowledged is lost.
func TestFaultDatabaseDeletedWhileRunning(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fault  func(db string)
		reason string
	}{
		{"directory deleted", func(db string) { os.RemoveAll(filepath.Dir(db)) }, "was deleted"},
		{"file replaced", func(db string) {
			os.Rename(db, db+".moved")
			os.WriteFile(db, nil, 0o600)
		}, "was replaced"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := testserver.Start(t, testserver.Options{Dir: dir, Data: filepath.Join(dir, "data", "approvebot.db")})
			acks := fileRequests(t, s, "d", 9)
			tc.fault(s.DB)
			h := waitHealth(t, s, 503)
			want(t, h, "status", "unhealthy", "store_writable", false)
			if !strings.Contains(fmt.Sprint(h["store_error"]), tc.reason) {
				t.Fatalf("store_error does not say why: %v", h)
			}
			wantStoreUnavailable(t, s, "POST", "/v1/requests", bash("d", "deploy after the loss"))
			for id, st := range acks {
				if st == "pending" {
					wantStoreUnavailable(t, s, "POST", "/v1/requests/"+id+"/decision", map[string]any{"outcome": "allow_once"})
					break
				}
			}
			if got := metric(t, s, "approvebot_store_writable"); got != 0 {
				t.Fatalf("approvebot_store_writable = %v", got)
			}
			if !strings.Contains(s.Logs(), "DATABASE FILE LOST") {
				t.Fatalf("no loud log line:\n%s", s.Logs())
			}
			// Rescue what the running server holds, then put it back.
			rescued := filepath.Join(dir, "rescued.db")
			out, err := runBinaryEnv(testserver.Binary(t), dir, []string{"APPROVEBOT_URL=" + s.URL, "APPROVEBOT_TOKEN=" + operator}, "backup", rescued)
			if err != nil || !strings.Contains(out, "verified") {
				t.Fatalf("backup of the lost database (%v):\n%s", err, out)
			}
			s.Stop()
			os.MkdirAll(filepath.Dir(s.DB), 0o700)
			os.Remove(s.DB)
			if err := os.Rename(rescued, s.DB); err != nil {
				t.Fatal(err)
			}
			s = s.Restart(t)
			checkAcked(t, s, acks)
		})
	}
}

// runBinaryEnv runs the built binary with extra environment.
func runBinaryEnv(bin, dir string, env []string, args ...string) (string, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestFaultFirstStartWithoutDataDirectory: the very first start, with no [[agents]] and a
// data directory that does not exist yet, creates the directory, the database and the
// tokens file, and serves.
func TestFaultFirstStartWithoutDataDirectory(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "var", "lib", "approvebot", "approvebot.db")
	cfg := filepath.Join(dir, "config.toml")
	os.WriteFile(cfg, []byte(fmt.Sprintf("[server]\nlisten = \"127.0.0.1:0\"\ndata = %q\n", data)), 0o600)
	cmd := exec.Command(testserver.Binary(t), "serve", "-config", cfg)
	cmd.Dir = dir
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	sc := bufio.NewScanner(stderr)
	var log strings.Builder
	listening := false
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "approvebot listening") {
			listening = true
			break
		}
	}
	if !listening {
		cmd.Wait()
		t.Fatalf("first start failed:\n%s%s", log.String(), stdout.String())
	}
	fi, err := os.Stat(data + ".tokens")
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("tokens file: %v %v", fi, err)
	}
	if _, err := os.Stat(data); err != nil {
		t.Fatalf("database: %v", err)
	}
}

// TestFaultClockSteppedBackAcrossRestart: the wall clock steps back an hour while
// approvebot is down. A request keeps only what was left of its window (measured on the
// boot clock, or after a reboot from the store's clock checkpoint) — never the hour.
func TestFaultClockSteppedBackAcrossRestart(t *testing.T) {
	const back = "-1h"
	t.Run("same boot: the window is what was left of it", func(t *testing.T) {
		s := testserver.Start(t, testserver.Options{Server: `approval_timeout = "20s"`})
		start := time.Now()
		id := pendingID(t, s, bash("c", "deploy clock"))
		s.Kill()
		time.Sleep(time.Second) // down for a while: that second is part of the wait
		s = testserver.Start(t, testserver.Options{Dir: s.Dir, Server: `approval_timeout = "20s"`, Env: []string{envClockOffset + "=" + back}})
		left := leftOf(t, s, id, time.Hour)
		if max := 20*time.Second - time.Since(start) + 300*time.Millisecond; left > max || left <= 0 {
			t.Fatalf("left after the restart: %v, want (0, %v]", left, max)
		}
		if code, m := decide(t, s, id, "allow_once", ""); code != 200 {
			t.Fatalf("the request was expired too early: %d %v", code, m)
		}
	})
	t.Run("same boot: no decision after the original deadline", func(t *testing.T) {
		s := testserver.Start(t, testserver.Options{Server: `approval_timeout = "2s"`})
		start := time.Now()
		id := pendingID(t, s, bash("c", "deploy clock"))
		s.Kill()
		time.Sleep(time.Second)
		s = testserver.Start(t, testserver.Options{Dir: s.Dir, Server: `approval_timeout = "2s"`, Env: []string{envClockOffset + "=" + back}})
		time.Sleep(time.Until(start.Add(2*time.Second + 300*time.Millisecond))) // past the window, on the real clock
		if code, m := decide(t, s, id, "allow_once", ""); code != 409 {
			t.Fatalf("a decision after the original deadline: %d %v", code, m)
		}
		want(t, poll(t, s, id), "state", "denied", "outcome", "timeout", "allowed", false)
	})
	t.Run("after a reboot: never more than the window", func(t *testing.T) {
		s := testserver.Start(t, testserver.Options{Server: `approval_timeout = "20s"`})
		id := pendingID(t, s, bash("c", "deploy clock"))
		time.Sleep(1500 * time.Millisecond) // a clock checkpoint after the request
		s.Kill()
		s = testserver.Start(t, testserver.Options{Dir: s.Dir, Server: `approval_timeout = "20s"`,
			Env: []string{envClockOffset + "=" + back, envBootID + "=rebooted"}})
		if left := leftOf(t, s, id, time.Hour); left > 20*time.Second || left <= 0 {
			t.Fatalf("left after the reboot: %v, want (0, 20s]", left)
		}
	})
}

// leftOf is how long the server says a pending request may still wait, its clock being
// offset from ours.
func leftOf(t *testing.T, s *testserver.Server, id string, offset time.Duration) time.Duration {
	t.Helper()
	m := mustGet(t, s, id)
	if m["state"] != "pending" {
		t.Fatalf("request %s is %v", id, m["state"])
	}
	exp, err := time.Parse(time.RFC3339Nano, m["expires_at"].(string))
	if err != nil {
		t.Fatal(err)
	}
	return exp.Sub(time.Now().Add(-offset))
}

// TestFaultOneAgentCannotTakeEveryPendingSlot: the per-agent cap (half of max_pending by
// default) turns the noisy agent away with 429 and Retry-After while the others work.
func TestFaultOneAgentCannotTakeEveryPendingSlot(t *testing.T) {
	s := testserver.Start(t, testserver.Options{Server: "max_pending = 4"})
	for i := 0; i < 2; i++ {
		pendingID(t, s, bash(fmt.Sprint("n", i), fmt.Sprint("deploy noisy ", i)))
	}
	code, hdr, raw := rawDo(t, s, "POST", "/v1/requests", bytes.NewReader(mustJSON(t, bash("n9", "deploy noisy 9"))), "Authorization", "Bearer "+agent)
	if code != 429 || errCode(raw) != "too_many_pending" || hdr.Get("Retry-After") == "" || !strings.Contains(string(raw), "max_pending_per_agent") {
		t.Fatalf("over the per-agent cap: %d %s (Retry-After %q)", code, raw, hdr.Get("Retry-After"))
	}
	if code, m := s.JSON(t, "POST", "/v1/requests", agent2, bash("quiet", "deploy quiet")); code != 202 {
		t.Fatalf("another agent was turned away: %d %v", code, m)
	}
}
