package render

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImports keeps core/render on the standard library and core/approval: no chat SDK,
// bbolt, HTTP server or any other module.
func TestImports(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			if p == "github.com/approvebot/approvebot/core/approval" {
				continue
			}
			if strings.Contains(strings.Split(p, "/")[0], ".") || p == "net/http" {
				t.Errorf("%s imports %s", f, p)
			}
		}
	}
}
