package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/approvebot/approvebot/internal/testserver"
)

// audit_max_entries bounds the trail and takes the decided requests whose entries it
// drops with them (a pending one stays); approvebot compact, with the server stopped,
// gives the space back and leaves the data as it was.
func TestRetentionAndCompact(t *testing.T) {
	s := testserver.Start(t, testserver.Options{Server: `audit_max_entries = 40`})
	waiting := pendingID(t, s, bash("ret", "deploy --service keep-me"))
	var ids []string
	for i := 0; i < 300; i++ {
		code, m := ask(t, s, map[string]any{"tool": "read_file", "args": map[string]any{"path": fmt.Sprintf("/etc/f%d", i)},
			"session": fmt.Sprint("ret-", i%5), "facts": map[string]any{"read_only": true}})
		if code != 200 || m["allowed"] != true {
			t.Fatalf("%d %v", code, m)
		}
		ids = append(ids, m["id"].(string))
	}
	// Retention runs at start and every minute: restart to have it run now.
	s = s.Restart(t)
	entries := func() []any {
		_, m := s.JSON(t, "GET", "/v1/audit?limit=1000", operator, nil)
		return m["entries"].([]any)
	}
	deadline := time.Now().Add(20 * time.Second)
	for len(entries()) > 40 {
		if time.Now().After(deadline) {
			t.Fatalf("%d audit entries after retention to 40", len(entries()))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if code, _ := s.JSON(t, "GET", "/v1/requests/"+ids[0], operator, nil); code != 404 {
		t.Fatalf("the oldest decided request: %d, want 404 (pruned with its entry)", code)
	}
	if code, _ := s.JSON(t, "GET", "/v1/requests/"+ids[len(ids)-1], operator, nil); code != 200 {
		t.Fatalf("the newest request: %d", code)
	}
	if code, m := s.JSON(t, "GET", "/v1/requests/"+waiting, operator, nil); code != 202 || m["state"] != "pending" {
		t.Fatalf("the pending request: %d %v", code, m)
	}
	newest := fmt.Sprint(entries()[39])

	// compact refuses while the server runs.
	bin := testserver.Binary(t)
	cfg := filepath.Join(s.Dir, "config.toml")
	if out, err := runBinary(bin, s.Dir, "compact", "-config", cfg); err == nil || !strings.Contains(out, "stop approvebot serve first") {
		t.Fatalf("compact with the server running: %v %s", err, out)
	}
	s.Stop()
	out, err := runBinary(bin, s.Dir, "compact", "-config", cfg)
	if err != nil || !strings.Contains(out, "compacted "+s.DB) {
		t.Fatalf("compact: %v %s", err, out)
	}
	s = testserver.Start(t, testserver.Options{Server: `audit_max_entries = 40`, Dir: s.Dir})
	if got := entries(); len(got) != 40 || fmt.Sprint(got[39]) != newest {
		t.Fatalf("after compaction: %d entries, newest %v", len(got), got[len(got)-1])
	}
	if code, m := s.JSON(t, "GET", "/v1/requests/"+waiting, operator, nil); code != 202 || m["state"] != "pending" {
		t.Fatalf("the pending request after compaction: %d %v", code, m)
	}
}
