package approvebot

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/approvebot/approvebot"

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

// importRules say which packages of this module may import a dependency directly: the one
// package that owns it, and that package's subpackages.
var importRules = []struct {
	dep     string   // an import path; its subpackages count too
	owners  []string // module-relative package paths
	tests   bool     // the rule holds for test files too
	because string
}{
	{"go.etcd.io/bbolt", []string{"store"}, false, "the store is the one package that knows the database file (tests may open a file read-only to verify it)"},
	{"go.etcd.io/etcd", []string{"store/etcd"}, false, "the etcd backend is the one importer of etcd's client packages"},
	{"github.com/go-telegram/bot", []string{"channels/telegram"}, true, "only the Telegram channel speaks Telegram"},
	{"github.com/slack-go/slack", []string{"channels/slack"}, true, "only the Slack channel speaks Slack"},
	{"github.com/bwmarrin/discordgo", []string{"channels/discord"}, true, "only the Discord channel speaks Discord"},
	{"github.com/gorilla/websocket", []string{"channels/discord", "channels/slack"}, true, "the websocket under the Discord and Slack SDKs"},
}

// listed is what go list says about one package.
type listed struct {
	ImportPath   string
	Doc          string
	GoFiles      []string
	Imports      []string
	TestImports  []string
	XTestImports []string
}

// listPackages runs go list over every package below dir, offline; -e keeps listing
// packages whose imports cannot be resolved.
func listPackages(t *testing.T, dir string) []listed {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-json", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-mod=readonly")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list in %s: %v\n%s", dir, err, stderr.String())
	}
	var pkgs []listed
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// depViolations lists every import that breaks importRules and every package without a doc
// comment.
func depViolations(pkgs []listed) []string {
	var out []string
	owns := func(pkg string, owners []string) bool {
		rel := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
		for _, o := range owners {
			if rel == o || strings.HasPrefix(rel, o+"/") {
				return true
			}
		}
		return false
	}
	for _, p := range pkgs {
		if len(p.GoFiles) > 0 && strings.TrimSpace(p.Doc) == "" {
			out = append(out, p.ImportPath+" has no package doc comment")
		}
		for _, r := range importRules {
			if owns(p.ImportPath, r.owners) {
				continue
			}
			imports := p.Imports
			if r.tests {
				imports = append(append(append([]string(nil), imports...), p.TestImports...), p.XTestImports...)
			}
			for _, imp := range imports {
				if imp == r.dep || strings.HasPrefix(imp, r.dep+"/") {
					out = append(out, p.ImportPath+" imports "+imp+": "+r.because)
				}
			}
		}
	}
	return out
}

// TestDependencyRules holds the tree to importRules, and every package to a doc comment.
func TestDependencyRules(t *testing.T) {
	pkgs := listPackages(t, ".")
	if len(pkgs) < 20 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	for _, v := range depViolations(pkgs) {
		t.Error(v)
	}
}

// The rules catch a violation planted in a throwaway copy of the module's layout.
func TestDependencyRulesCatchPlantedViolations(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module " + module + "\n\ngo 1.26\n",
		// Allowed: each owner imports its own dependency.
		"store/store.go":        "// Package store is the store.\npackage store\n\nimport _ \"go.etcd.io/bbolt\"\n",
		"store/etcd/etcd.go":    "// Package etcd is the etcd backend.\npackage etcd\n\nimport _ \"go.etcd.io/etcd/client/v3\"\n",
		"channels/slack/s.go":   "// Package slack is Slack.\npackage slack\n\nimport _ \"github.com/slack-go/slack\"\n",
		"channels/slack/x/x.go": "// Package x is below slack.\npackage x\n\nimport _ \"github.com/gorilla/websocket\"\n",
		// Planted: bbolt outside the store, etcd outside its backend, one channel's SDK in
		// another, an SDK in a test, and a package without a doc comment.
		"core/gate/gate.go":           "// Package gate is the gate.\npackage gate\n\nimport _ \"go.etcd.io/bbolt\"\n",
		"api/api.go":                  "// Package api is the API.\npackage api\n\nimport _ \"go.etcd.io/etcd/client/v3\"\n",
		"channels/telegram/t.go":      "// Package telegram is Telegram.\npackage telegram\n\nimport _ \"github.com/bwmarrin/discordgo\"\n",
		"cmd/approvebot/main.go":      "// Command approvebot is the binary.\npackage main\n\nfunc main() {}\n",
		"cmd/approvebot/main_test.go": "package main\n\nimport _ \"github.com/slack-go/slack\"\n",
		"metrics/metrics.go":          "package metrics\n",
	}
	for name, body := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := strings.Join(depViolations(listPackages(t, dir)), "\n")
	for _, want := range []string{
		"core/gate imports go.etcd.io/bbolt",
		"api imports go.etcd.io/etcd/client/v3",
		"channels/telegram imports github.com/bwmarrin/discordgo",
		"cmd/approvebot imports github.com/slack-go/slack",
		"metrics has no package doc comment",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("planted violation not caught: %q\ngot:\n%s", want, got)
		}
	}
	for _, allowed := range []string{"approvebot/store imports", "store/etcd imports", "channels/slack imports", "channels/slack/x imports"} {
		if strings.Contains(got, allowed) {
			t.Errorf("an allowed import was flagged (%s):\n%s", allowed, got)
		}
	}
}
