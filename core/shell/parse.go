package shell

import (
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// Parsers and printers are reusable but not concurrent: pool them.
var (
	parserPool    = sync.Pool{New: func() any { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }}
	printerPool   = sync.Pool{New: func() any { return syntax.NewPrinter(syntax.SingleLine(true)) }}
	multiLinePool = sync.Pool{New: func() any { return syntax.NewPrinter() }}
	readerPool    = sync.Pool{New: func() any { return new(strings.Reader) }}
)

// parse parses src as a bash program.
func parse(src string) (*syntax.File, error) {
	p := parserPool.Get().(*syntax.Parser)
	r := readerPool.Get().(*strings.Reader)
	r.Reset(src)
	f, err := p.Parse(r, "")
	r.Reset("")
	readerPool.Put(r)
	parserPool.Put(p)
	return f, err
}

// parseRecover parses src skipping errors, for a best-effort look at invalid input.
func parseRecover(src string) *syntax.File {
	p := syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.RecoverErrors(8))
	f, _ := p.Parse(strings.NewReader(src), "")
	return f
}

// printFile prints f on one line where the syntax allows (heredocs keep their newlines).
// mvdan.cc/sh v3.14's single-line mode drops the separator after a compound command that
// ends in "&" ("{ a & }; b" prints as "{ a & } b"), so programs with a background statement
// are printed one statement per line instead.
func printFile(f *syntax.File, multiLine bool) string {
	pool := &printerPool
	if multiLine {
		pool = &multiLinePool
	}
	p := pool.Get().(*syntax.Printer)
	var b strings.Builder
	b.Grow(64)
	err := p.Print(&b, f)
	pool.Put(p)
	if err != nil {
		return ""
	}
	return strings.TrimRight(b.String(), "\n")
}

// Normalize returns a command line as the parser prints it, or the input unchanged when it does
// not parse.
func Normalize(cmd string) string {
	f, err := parse(cmd)
	if err != nil {
		return cmd
	}
	return printFile(f, hasBackground(f))
}

// hasBackground reports a statement run with &, |& (coprocess) or &| anywhere in f.
func hasBackground(f *syntax.File) bool {
	found := false
	syntax.Walk(f, func(n syntax.Node) bool {
		if s, ok := n.(*syntax.Stmt); ok && (s.Background || s.Coprocess || s.Disown) {
			found = true
		}
		return !found
	})
	return found
}
