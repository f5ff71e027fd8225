package approvebot

import (
	"os/exec"
	"strings"
	"testing"
)

// TestCoreImports enforces the house rule: nothing under core/ reaches a chat SDK, bbolt or
// net/http server code, directly or through another package.
func TestCoreImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}", "./core/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	banned := []string{
		"go.etcd.io/bbolt", "github.com/go-telegram/bot", "github.com/bwmarrin/discordgo",
		"github.com/slack-go/slack", "net/http", "github.com/gorilla/websocket",
		"github.com/approvebot/approvebot/store", "github.com/approvebot/approvebot/api",
		"github.com/approvebot/approvebot/channels",
	}
	pkgs := strings.Fields(string(out))
	if len(pkgs) < 5 {
		t.Fatalf("found only %d core packages: %v", len(pkgs), pkgs)
	}
	for _, pkg := range pkgs {
		deps, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(deps)) {
			for _, b := range banned {
				if dep == b || strings.HasPrefix(dep, b+"/") {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
		}
	}
}
