package config

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/approvebot/approvebot"
	"github.com/approvebot/approvebot/api"
	"github.com/approvebot/approvebot/channels/discord"
	"github.com/approvebot/approvebot/channels/slack"
	"github.com/approvebot/approvebot/channels/telegram"
	"github.com/approvebot/approvebot/core/gate"
)

// A documented default: one TOML key whose default the code sets, with where it is said.
type documented struct {
	section string // "server", "channels.telegram"
	key     string
	field   string        // the Go field
	value   reflect.Value // the default, as the code sets it
	comment string        // the field's doc comment
	consts  map[string]bool
}

// sectionsUnderTest are the sections whose defaults live in this tree's structs: [server],
// [log] and each channel's (the [policy] keys belong to core/policy).
func sectionsUnderTest(t *testing.T) []struct {
	name, dir, typ string
	value          any
} {
	c, err := Parse(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	var tg telegram.Config
	tg.Defaults()
	var sl slack.Config
	sl.Defaults()
	var dc discord.Config
	dc.Defaults()
	return []struct {
		name, dir, typ string
		value          any
	}{
		{"server", ".", "Server", c.Server},
		{"log", ".", "Log", c.Log},
		{"store", ".", "Store", c.Store},
		{"store.etcd", ".", "StoreEtcd", c.Store.Etcd},
		{"channels.telegram", "../channels/telegram", "Config", tg},
		{"channels.slack", "../channels/slack", "Config", sl},
		{"channels.discord", "../channels/discord", "Config", dc},
	}
}

// derived defaults are computed from other keys, so no constant holds them.
var derived = map[string]bool{"server.tokens_file": true, "server.max_pending_per_agent": true}

func collectDocumented(t *testing.T) []documented {
	t.Helper()
	var out []documented
	for _, s := range sectionsUnderTest(t) {
		comments, consts := parseSource(t, s.dir, s.typ)
		v := reflect.ValueOf(s.value)
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			key := strings.Split(f.Tag.Get("toml"), ",")[0]
			fv := v.Field(i)
			if fv.Kind() == reflect.Pointer {
				if fv.IsNil() {
					continue
				}
				fv = fv.Elem()
			}
			nested := fv.Kind() == reflect.Struct && fv.Type() != reflect.TypeOf(Duration{}) // a section of its own
			if key == "" || fv.IsZero() || fv.Kind() == reflect.Slice || fv.Kind() == reflect.Map || nested {
				continue
			}
			out = append(out, documented{section: s.name, key: key, field: f.Name, value: fv, comment: comments[f.Name], consts: consts})
		}
	}
	if len(out) < 20 {
		t.Fatalf("found only %d documented defaults", len(out))
	}
	return out
}

// parseSource reads the doc comments of struct typ's fields and the constant names in dir.
func parseSource(t *testing.T, dir, typ string) (map[string]string, map[string]bool) {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	comments, consts := map[string]string{}, map[string]bool{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch d := n.(type) {
			case *ast.ValueSpec:
				for _, id := range d.Names {
					consts[id.Name] = true
				}
			case *ast.TypeSpec:
				st, ok := d.Type.(*ast.StructType)
				if !ok || d.Name.Name != typ {
					return true
				}
				for _, fld := range st.Fields.List {
					for _, id := range fld.Names {
						comments[id.Name] = strings.Join(strings.Fields(fld.Doc.Text()), " ")
					}
				}
			}
			return true
		})
	}
	return comments, consts
}

var (
	defaultValueRe = regexp.MustCompile(`default ("[^"]*"|[^\s,;)]+)`)
	defaultMarkRe  = regexp.MustCompile(`("[^"]*") \(default\)`)
)

// saidDefault is the value a comment gives as the default ("" when it gives none).
func saidDefault(comment string) string {
	if m := defaultMarkRe.FindStringSubmatch(comment); m != nil {
		return m[1]
	}
	if m := defaultValueRe.FindStringSubmatch(comment); m != nil {
		return strings.TrimSuffix(m[1], ".")
	}
	return ""
}

// sameValue reports whether text (a Go comment's, a TOML value's or the guide's spelling)
// says v.
func sameValue(text string, v reflect.Value) bool {
	text = strings.TrimSpace(text)
	if d, ok := v.Interface().(Duration); ok {
		if u, err := strconv.Unquote(text); err == nil {
			text = u
		}
		got, err := time.ParseDuration(strings.ReplaceAll(text, " ", ""))
		return err == nil && got == d.Duration
	}
	switch v.Kind() {
	case reflect.String:
		u, err := strconv.Unquote(text)
		return err == nil && u == v.String()
	case reflect.Bool:
		return text == strconv.FormatBool(v.Bool())
	case reflect.Int, reflect.Int64, reflect.Float64:
		want := v.Convert(reflect.TypeOf(float64(0))).Float()
		for suffix, unit := range map[string]float64{" MiB": 1 << 20, " KiB": 1 << 10, "": 1} {
			if n, ok := strings.CutSuffix(text, suffix); ok {
				if got, err := strconv.ParseFloat(n, 64); err == nil && got*unit == want {
					return true
				}
			}
		}
	}
	return false
}

// exampleValues maps "section.key" to the value config.example.toml shows for it, set or
// commented out.
func exampleValues(example string) map[string]string {
	out := map[string]string{}
	section := ""
	header := regexp.MustCompile(`^#?\s*\[+([a-z_.]+)\]+\s*$`)
	line := regexp.MustCompile(`^#?\s*([a-z_]+)\s*=\s*(.*)$`)
	for _, l := range strings.Split(example, "\n") {
		if m := header.FindStringSubmatch(l); m != nil {
			section = m[1]
			continue
		}
		m := line.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		v := m[2]
		if strings.HasPrefix(v, `"`) {
			if end := strings.Index(v[1:], `"`); end >= 0 {
				v = v[:end+2]
			}
		} else if i := strings.Index(v, "#"); i >= 0 {
			v = v[:i]
		}
		if _, seen := out[section+"."+m[1]]; !seen {
			out[section+"."+m[1]] = strings.TrimSpace(v)
		}
	}
	return out
}

// guideDefaults maps a [server] or [log] key to the defaults docs/operations.md gives it.
func guideDefaults(guide, key string) []string {
	re := regexp.MustCompile("`(?:\\[[a-z.]+\\] )?" + regexp.QuoteMeta(key) + "`[^`|]*?default ([^),;|]+)")
	var out []string
	for _, m := range re.FindAllStringSubmatch(guide, -1) {
		out = append(out, m[1])
	}
	return out
}

// TestDefaultsAreDocumented holds every default to one named constant and to what the
// field's comment, config.example.toml and the operations guide say about it.
func TestDefaultsAreDocumented(t *testing.T) {
	example := exampleValues(string(approvebot.ExampleConfig))
	guide, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range collectDocumented(t) {
		t.Run(d.section+"."+d.key, func(t *testing.T) {
			for _, problem := range checkDocumented(d, example, string(guide)) {
				t.Error(problem)
			}
		})
	}
}

func checkDocumented(d documented, example map[string]string, guide string) []string {
	var problems []string
	name := d.section + "." + d.key
	if !derived[name] && !d.consts["Default"+d.field] {
		problems = append(problems, fmt.Sprintf("%s: no constant Default%s holds its default %v", name, d.field, d.value))
	}
	switch said := saidDefault(d.comment); {
	case derived[name]:
		if !strings.Contains(d.comment, "default") {
			problems = append(problems, fmt.Sprintf("%s: the comment of %s does not say how its default is derived: %q", name, d.field, d.comment))
		}
	case said == "":
		problems = append(problems, fmt.Sprintf("%s: the comment of %s does not say its default %v: %q", name, d.field, d.value, d.comment))
	case !sameValue(said, d.value):
		problems = append(problems, fmt.Sprintf("%s: the comment of %s says default %s, the code %v", name, d.field, said, d.value))
	}
	if shown, ok := example[name]; !ok {
		problems = append(problems, fmt.Sprintf("%s: config.example.toml shows no value", name))
	} else if !sameValue(shown, d.value) {
		problems = append(problems, fmt.Sprintf("%s: config.example.toml shows %s, the code %v", name, shown, d.value))
	}
	if (d.section == "server" || d.section == "log") && !derived[name] {
		for _, said := range guideDefaults(guide, d.key) {
			if !sameValue(said, d.value) {
				problems = append(problems, fmt.Sprintf("%s: docs/operations.md says default %s, the code %v", name, said, d.value))
			}
		}
	}
	return problems
}

// The check itself catches the drift it exists for.
func TestDefaultsCheckCatchesDrift(t *testing.T) {
	v := reflect.ValueOf(float64(DefaultRateLimit))
	good := documented{section: "server", key: "rate_limit", field: "RateLimit", value: v,
		comment: "RateLimit is per token (default 2000; 0 disables).", consts: map[string]bool{"DefaultRateLimit": true}}
	example := map[string]string{"server.rate_limit": "2000.0"}
	guide := "`[server] rate_limit` (per second, default 2000)"
	if p := checkDocumented(good, example, guide); len(p) != 0 {
		t.Fatalf("a consistent default was flagged: %v", p)
	}
	cases := []struct {
		name    string
		edit    func(*documented, map[string]string, *string)
		problem string
	}{
		{"comment", func(d *documented, _ map[string]string, _ *string) { d.comment = "(0: default 200)" }, "comment of RateLimit says default 200"},
		{"no value in the comment", func(d *documented, _ map[string]string, _ *string) { d.comment = "per token" }, "does not say its default"},
		{"example", func(_ *documented, e map[string]string, _ *string) { e["server.rate_limit"] = "200" }, "config.example.toml shows 200"},
		{"example lacks it", func(_ *documented, e map[string]string, _ *string) { delete(e, "server.rate_limit") }, "shows no value"},
		{"guide", func(_ *documented, _ map[string]string, g *string) { *g = "`rate_limit` (default 200)" }, "docs/operations.md says default 200"},
		{"no constant", func(d *documented, _ map[string]string, _ *string) { d.consts = map[string]bool{} }, "no constant DefaultRateLimit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, e, g := good, map[string]string{"server.rate_limit": "2000.0"}, guide
			c.edit(&d, e, &g)
			p := strings.Join(checkDocumented(d, e, g), "\n")
			if !strings.Contains(p, c.problem) {
				t.Fatalf("drift not caught: %q, want %q", p, c.problem)
			}
		})
	}
}

// constructorsWithFallbacks are the constructors that give a zero option its default: each
// must take it from the one named constant (which [server] names too), never repeat it.
var constructorsWithFallbacks = []struct{ file, fn string }{
	{"../core/gate/gate.go", "New"},
	{"../api/server.go", "New"},
	{"../web/web.go", "New"},
}

// literalFallbacks lists the options that function fn of src sets to a literal when they
// are zero or unset: `if o.F <= 0 { o.F = 120 * time.Second }`.
func literalFallbacks(t *testing.T, name string, src []byte, fn string) (found int, literal []string) {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), name, src, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Name.Name != fn || fd.Recv != nil {
			continue
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			ifs, ok := n.(*ast.IfStmt)
			if !ok || len(ifs.Body.List) != 1 {
				return true
			}
			cond, ok := ifs.Cond.(*ast.BinaryExpr)
			as, ok2 := ifs.Body.List[0].(*ast.AssignStmt)
			if !ok || !ok2 || len(as.Lhs) != 1 || len(as.Rhs) != 1 {
				return true
			}
			sel, ok := as.Lhs[0].(*ast.SelectorExpr)
			if !ok || exprString(cond.X) != exprString(sel) {
				return true
			}
			found++
			ast.Inspect(as.Rhs[0], func(n ast.Node) bool {
				if lit, ok := n.(*ast.BasicLit); ok {
					literal = append(literal, fmt.Sprintf("%s: %s defaults to the literal %s", name, exprString(sel), lit.Value))
				}
				return true
			})
			return true
		})
	}
	return found, literal
}

// exprString renders a selector expression (opts.ApprovalTimeout) for comparison and messages.
func exprString(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.SelectorExpr:
		return exprString(x.X) + "." + x.Sel.Name
	case *ast.Ident:
		return x.Name
	}
	return fmt.Sprintf("%T", e)
}

// TestFallbacksNameTheirDefault: the gate, the API and the panel take a zero option's
// default from its named constant — the one [server] uses — so no default is written twice.
func TestFallbacksNameTheirDefault(t *testing.T) {
	for _, c := range constructorsWithFallbacks {
		t.Run(c.file, func(t *testing.T) {
			src, err := os.ReadFile(c.file)
			if err != nil {
				t.Fatal(err)
			}
			found, literal := literalFallbacks(t, c.file, src, c.fn)
			if found == 0 {
				t.Fatalf("no fallback found in %s: the check no longer reads this code", c.fn)
			}
			for _, l := range literal {
				t.Error(l)
			}
		})
	}
	// The same [server] defaults, as the gate and the API fall back to them.
	pairs := []struct {
		key            string
		config, theirs any
	}{
		{"approval_timeout", DefaultApprovalTimeout, gate.DefaultApprovalTimeout},
		{"delivery_timeout", DefaultDeliveryTimeout, gate.DefaultDeliveryTimeout},
		{"max_pending", DefaultMaxPending, gate.DefaultMaxPendingTotal},
		{"max_pending_per_session", DefaultMaxPendingPerSession, gate.DefaultMaxPendingPerSession},
		{"max_body", DefaultMaxBody, api.DefaultMaxBody},
		{"max_wait", DefaultMaxWait, api.DefaultMaxWait},
	}
	for _, p := range pairs {
		if fmt.Sprint(p.config) != fmt.Sprint(p.theirs) {
			t.Errorf("[server] %s defaults to %v, the code that uses it to %v", p.key, p.config, p.theirs)
		}
	}
	// And the check catches a repeated literal.
	const planted = `package gate
func New(opts Options) {
	if opts.ApprovalTimeout <= 0 {
		opts.ApprovalTimeout = 120 * time.Second
	}
	if opts.MaxPendingTotal <= 0 {
		opts.MaxPendingTotal = DefaultMaxPendingTotal
	}
}`
	if found, literal := literalFallbacks(t, "planted.go", []byte(planted), "New"); found != 2 || len(literal) != 1 ||
		!strings.Contains(literal[0], "opts.ApprovalTimeout defaults to the literal 120") {
		t.Fatalf("planted literal not caught: %d %v", found, literal)
	}
}

// max_pending_per_agent derives from max_pending however the rest of [server] is set (a
// tokens_file of its own included), as the gate derives it.
func TestPerAgentCapDerives(t *testing.T) {
	for _, server := range []string{"", "tokens_file = \"/tmp/t\"", "max_pending = 10", "max_pending = 1\ntokens_file = \"x\"", "max_pending_per_agent = 7"} {
		c, err := Parse([]byte("[server]\n"+server+"\n"), "")
		if err != nil {
			t.Fatal(err)
		}
		want := gate.DefaultMaxPendingPerAgent(c.Server.MaxPending)
		if strings.Contains(server, "per_agent") {
			want = 7
		}
		if c.Server.MaxPendingPerAgent != want {
			t.Errorf("%q: max_pending_per_agent %d, want %d", server, c.Server.MaxPendingPerAgent, want)
		}
	}
}
