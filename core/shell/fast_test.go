package shell

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// dumpAnalysis renders every exported field of an analysis and its segments, for comparing
// the fast path with the parser.
func dumpAnalysis(an *Analysis) string {
	var b strings.Builder
	dumpValue(&b, reflect.ValueOf(*an))
	for i, s := range an.Segments {
		fmt.Fprintf(&b, "\nsegment %d: ", i)
		dumpValue(&b, reflect.ValueOf(*s))
	}
	return b.String()
}

func dumpValue(b *strings.Builder, v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		b.WriteByte('{')
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			if !f.IsExported() || f.Name == "Segments" {
				continue
			}
			b.WriteString(f.Name)
			b.WriteByte(':')
			dumpValue(b, v.Field(i))
			b.WriteByte(' ')
		}
		b.WriteByte('}')
	case reflect.Slice:
		b.WriteByte('[')
		for i := 0; i < v.Len(); i++ {
			dumpValue(b, v.Index(i))
			b.WriteByte(',')
		}
		b.WriteByte(']')
	case reflect.Pointer:
		if v.IsNil() {
			b.WriteString("nil")
			return
		}
		dumpValue(b, v.Elem())
	default:
		fmt.Fprintf(b, "%q", fmt.Sprint(v.Interface()))
	}
}

// checkFastPath fails when the fast path reads cmd differently from the parser.
func checkFastPath(t *testing.T, cmd string, opts Options) {
	t.Helper()
	var sh shared
	if _, norm, ok := sh.fastSplitNormalized(cmd, true); ok {
		f, err := parse(cmd)
		if err != nil {
			t.Fatalf("the fast path reads %q, which does not parse: %v", cmd, err)
		}
		if printed := printFile(f, hasBackground(f)); printed != norm {
			t.Fatalf("the fast path prints %q as %q, the printer as %q", cmd, norm, printed)
		}
	}
	fast := analyze(cmd, opts, true)
	slow := analyze(cmd, opts, false)
	if f, s := dumpAnalysis(fast), dumpAnalysis(slow); f != s {
		t.Fatalf("fast path and parser differ on %q:\nfast:   %s\nparser: %s", cmd, f, s)
	}
}

func TestFastPathMatchesParser(t *testing.T) {
	for _, cmd := range []string{
		"ls -la /tmp",
		"cd /repo && git status && ls -la | grep foo ; echo done || true",
		`bash -lc "ls /tmp && cat x"`,
		"a && b || c && d",
		"a || b && c | d | e ; f",
		"a | b | c",
		"echo hi | sh",
		"echo ls | bash",
		"printf rm | xargs echo",
		`x 'a b' "c d" e'f'"g" ''`,
		`'if' x`,
		`"a=b" c`,
		"a=b c",
		"if x",
		"echo if then fi",
		"x; y; z",
		"sudo -u bob ls",
		"env -i a x",
		"nice -n 5 nohup timeout 3 a",
		"xargs -0 -n1 a x",
		"find . -exec rm {} ;",
		"git -c alias.x=!ls x",
		"sh -c 'echo a | sh'",
		"bash -c 'bash -c \"ls; pwd\"'",
		"eval 'cd /tmp' ; ls",
		"cd .. && rm -rf build",
		"cd / && pwd",
		"rm -rf /",
		"%1 x,y a:b @x +y",
		"a  &&   b ;c|d   ||e",
		"a &",
		"a |& b",
		"a;",
		"; a",
		"echo 'a;b' \"c|d\"",
		"git commit -m 'fix: a; b && c'",
		"go test ./... -run TestX -count=1",
		"echo -- -n",
		"busybox rm -rf /",
		"npx --yes eslint@8 src",
		"watch -n 1 ls",
		"ssh host rm -rf /",
		"python3 -c print(1)",
		"awk BEGIN{print} x",
	} {
		t.Run(cmd, func(t *testing.T) {
			checkFastPath(t, cmd, Options{Cwd: "/repo", Home: "/home/u"})
			checkFastPath(t, cmd, Options{})
		})
	}
}

// The benchmarked shapes take the fast path (an empty fast path would pass the test above).
func TestFastPathTaken(t *testing.T) {
	for _, cmd := range []string{
		"ls -la /tmp",
		"cd /repo && git status && ls -la | grep foo ; echo done || true",
		`bash -lc "ls /tmp && cat x"`,
		`x 'a b' "c d" e'f'"g" ''`,
	} {
		var sh shared
		if _, ok := sh.fastSplit(cmd); !ok {
			t.Errorf("%q does not take the fast path", cmd)
		}
	}
}
