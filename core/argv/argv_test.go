package argv

import (
	"context"
	"math/rand"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/approvebot/approvebot/internal/sandbox"
)

// sedLike is GNU sed's grammar (sed/sed.c), a good exercise: optional values, aliases, and
// long options that abbreviate to each other's prefixes.
var sedLike = MustNew("bsnrzuEe:f:l:i::", 0,
	"binary", "debug", "follow-symlinks", "help", "in-place[=]", "line-length=", "null-data",
	"zero-terminated>null-data", "posix", "quiet", "silent>quiet", "sandbox", "separate",
	"regexp-extended", "unbuffered", "version", "expression=", "file=")

func show(p Parsed) string {
	var b []string
	for _, o := range p.Options {
		if o.HasValue {
			b = append(b, "o:"+o.Name+"="+o.Value)
		} else {
			b = append(b, "o:"+o.Name)
		}
	}
	for _, a := range p.Operands {
		b = append(b, "a:"+a)
	}
	return strings.Join(b, " ")
}

func TestParse(t *testing.T) {
	cases := []struct {
		name string
		spec *Spec
		args []string
		want string // "ERR" for an error
	}{
		{"long abbreviation", sedLike, []string{"--ex=p", "f"}, "o:expression=p a:f"},
		{"long value in next word", sedLike, []string{"--expression", "-n", "f"}, "o:expression=-n a:f"},
		{"abbreviation value in next word", sedLike, []string{"--exp", "s/a/b/"}, "o:expression=s/a/b/"},
		{"ambiguous abbreviation", sedLike, []string{"--s", "x"}, "ERR"},
		{"aliases are not ambiguous", sedLike, []string{"--qu", "--si", "x"}, "o:quiet o:quiet a:x"},
		{"alias by its canonical name", sedLike, []string{"--zero", "x"}, "o:null-data a:x"},
		{"optional value attached", sedLike, []string{"--in-place=.bak", "x"}, "o:in-place=.bak a:x"},
		{"optional value not taken from the next word", sedLike, []string{"--in-place", ".bak", "x"}, "o:in-place a:.bak a:x"},
		{"abbreviated optional", sedLike, []string{"--in", "x"}, "o:in-place a:x"},
		{"short optional attached", sedLike, []string{"-i.bak", "x"}, "o:i=.bak a:x"},
		{"short optional alone", sedLike, []string{"-i", "x"}, "o:i a:x"},
		{"cluster ending in a value", sedLike, []string{"-nes/a/b/", "x"}, "o:n o:e=s/a/b/ a:x"},
		{"cluster value in next word", sedLike, []string{"-ne", "p", "x"}, "o:n o:e=p a:x"},
		{"cluster with optional in the middle", sedLike, []string{"-ni", "x"}, "o:n o:i a:x"},
		{"optional swallows the rest", sedLike, []string{"-in", "x"}, "o:i=n a:x"},
		{"permutation", sedLike, []string{"x", "-n", "y", "--posix"}, "o:n o:posix a:x a:y"},
		{"double dash", sedLike, []string{"-n", "--", "-e", "x"}, "o:n a:-e a:x"},
		{"single dash is an operand", sedLike, []string{"-", "-n"}, "o:n a:-"},
		{"unknown short", sedLike, []string{"-nX"}, "ERR"},
		{"unknown long", sedLike, []string{"--bogus"}, "ERR"},
		{"no value allowed", sedLike, []string{"--posix=1"}, "ERR"},
		{"missing value", sedLike, []string{"-e"}, "ERR"},
		{"missing long value", sedLike, []string{"x", "--file"}, "ERR"},
		{"empty value", sedLike, []string{"--expression=", "x"}, "o:expression= a:x"},
		{"value equals sign", sedLike, []string{"-e=x"}, "o:e==x"},
		{"triple dash", sedLike, []string{"---x"}, "ERR"},
		{"exact beats prefix", MustNew("", 0, "out", "output="), []string{"--out", "x"}, "o:out a:x"},
		{"stop at operand", MustNew("+ab:", 0), []string{"-a", "x", "-b", "y"}, "o:a a:x a:-b a:y"},
		{"stop at operand flag", MustNew("ab:", StopAtOperand), []string{"x", "-a"}, "a:x a:-a"},
		{"long only", MustNew("ab:", LongOnly, "all", "bar="), []string{"-all", "-bar", "v", "-b", "w", "-a"}, "o:all o:bar=v o:b=w o:a"},
		{"long only falls back to short", MustNew("ab:", LongOnly, "all"), []string{"-ab", "v"}, "o:a o:b=v"},
		{"no abbreviations", MustNew("", NoAbbrev, "output="), []string{"--out=x"}, "ERR"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := c.spec.Parse(c.args)
			got := show(p)
			if err != nil {
				got = "ERR"
			}
			if got != c.want {
				t.Fatalf("Parse(%q) = %q (err %v), want %q", c.args, got, err, c.want)
			}
		})
	}
}

func TestParsedHelpers(t *testing.T) {
	p, err := sedLike.Parse([]string{"-e", "p", "--expression=d", "-n", "f"})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Has("n") || p.Has("i") {
		t.Fatal("Has")
	}
	if v := p.Values("e", "expression"); strings.Join(v, ",") != "p,d" {
		t.Fatalf("Values %q", v)
	}
	if p.OperandIndex[0] != 4 || p.DashDash != -1 {
		t.Fatalf("indexes %v %d", p.OperandIndex, p.DashDash)
	}
	_, err = sedLike.Parse([]string{"--bogus"})
	if !IsUnknown(err) {
		t.Fatalf("IsUnknown(%v)", err)
	}
	_, err = sedLike.Parse([]string{"-e"})
	if IsUnknown(err) || err == nil {
		t.Fatalf("missing value is not unknown: %v", err)
	}
}

func TestNewErrors(t *testing.T) {
	for _, c := range []struct {
		opt   string
		longs []string
	}{
		{"a:a", nil}, {"::", nil}, {"a-", nil}, {"", []string{"x", "x"}}, {"", []string{"=x"}},
		{"", []string{"-x"}}, {"", []string{"x>y"}}, {"", []string{""}},
	} {
		if _, err := New(c.opt, 0, c.longs...); err == nil {
			t.Errorf("New(%q, %q) accepted", c.opt, c.longs)
		}
	}
}

// The parser against glibc's getopt_long itself: random argument lists over a vocabulary of
// spellings, parsed by a C harness in a sandbox and by Parse, must give the same options,
// values and operands, and fail together.
func TestParseAgainstGlibc(t *testing.T) {
	if err := sandbox.Available(); err != nil {
		t.Skip(err)
	}
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc is not installed")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "getopt")
	if out, err := exec.Command(gcc, "-O1", "-o", bin, "testdata/getopt.c").CombinedOutput(); err != nil {
		t.Skipf("cannot build the glibc harness: %v: %s", err, out)
	}
	type grammar struct {
		name     string
		short    string
		flags    Flag
		longs    []string
		vocab    []string
		longOnly bool
	}
	grammars := []grammar{
		{name: "sed", short: "bsnrzuEe:f:l:i::", longs: []string{"binary", "debug", "follow-symlinks", "help", "in-place[=]",
			"line-length=", "null-data", "zero-terminated>null-data", "posix", "quiet", "silent>quiet", "sandbox",
			"separate", "regexp-extended", "unbuffered", "version", "expression=", "file="},
			vocab: []string{"-n", "-e", "-i", "-i.bak", "-ni", "-in", "-ne", "-nes/a/b/", "-f", "-E", "-l", "-l5", "-x",
				"--in", "--in-place", "--in-place=.b", "--e", "--ex", "--expression", "--expression=p", "--s", "--si",
				"--sa", "--se", "--z", "--ze", "--n", "--null", "--q", "--fi", "--fo", "--f", "--file=x", "--posix",
				"--posix=1", "--l", "--line", "--line-length=3", "--b", "--bin", "--=", "--", "-", "p", "s/a/b/w x",
				"file", "-V", "---", "-e=", "--help", "--ver", "--de"}},
		{name: "sort", short: "ab:cCdfghik:mMno:rRsS:t:T:uVy:z", longs: []string{"ignore-leading-blanks",
			"check[=]", "compress-program=", "debug", "dictionary-order", "files0-from=", "ignore-case",
			"general-numeric-sort", "human-numeric-sort", "ignore-nonprinting", "key=", "merge", "month-sort",
			"numeric-sort", "output=", "random-sort", "random-source=", "reverse", "sort=", "stable",
			"buffer-size=", "field-separator=", "temporary-directory=", "unique", "version-sort",
			"zero-terminated", "parallel=", "batch-size=", "help", "version"},
			vocab: []string{"-o", "-ofile", "-no", "-nr", "-k", "-k1,2", "-t:", "-t", "--o", "--ou", "--out=x", "--output",
				"--c", "--ch", "--check", "--check=quiet", "--co", "--compress-program=gzip", "--r", "--ra", "--re",
				"--s", "--so", "--sort=n", "--st", "--f", "--fi", "--files0-from=-", "--h", "--he", "--hu", "--p",
				"--para=2", "--ran", "--random-s=x", "--b", "--ba", "--bu", "--", "-", "x", "y", "-y", "-y3", "-C",
				"-z", "--v", "--ve", "--vers", "--d", "--de", "--di", "-S", "-S1M", "-T/tmp", "---"}},
		{name: "stop", short: "+ab:c::", longs: []string{"all", "bar=", "baz[=]"},
			vocab: []string{"-a", "-b", "-bx", "-c", "-cx", "-ab", "--a", "--ba", "--bar", "--baz", "--baz=1", "--bar=x",
				"x", "-", "--", "-z", "--zz"}},
		{name: "long only", short: "ab:o:", longs: []string{"all", "bar=", "output=", "out"}, longOnly: true,
			vocab: []string{"-a", "-all", "-al", "-b", "-bar", "-ba", "-o", "-out", "-ou", "-output=x", "-outp", "--all",
				"--o", "--out", "x", "-", "--", "-ab", "-z", "-aa"}},
	}
	r := rand.New(rand.NewSource(12))
	for _, g := range grammars {
		t.Run(g.name, func(t *testing.T) {
			flags := g.flags
			if g.longOnly {
				flags |= LongOnly
			}
			spec, err := New(g.short, flags, g.longs...)
			if err != nil {
				t.Fatal(err)
			}
			var cspec []string
			for _, l := range g.longs {
				name, canon, _ := strings.Cut(l, ">")
				kind := "0"
				switch {
				case strings.HasSuffix(name, "[=]"):
					kind, name = "2", strings.TrimSuffix(name, "[=]")
				case strings.HasSuffix(name, "="):
					kind, name = "1", strings.TrimSuffix(name, "=")
				}
				e := name + ":" + kind
				if canon != "" {
					e += ":" + canon
				}
				cspec = append(cspec, e)
			}
			var cases [][]string
			for n := 0; n < 3000; n++ {
				k := r.Intn(6)
				c := make([]string, k)
				for i := range c {
					c[i] = g.vocab[r.Intn(len(g.vocab))]
				}
				cases = append(cases, c)
			}
			var in strings.Builder
			for _, c := range cases {
				in.WriteString(strings.Join(c, "\x1f"))
				in.WriteByte('\n')
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			lo := "0"
			if g.longOnly {
				lo = "1"
			}
			res, err := sandbox.RunInput(ctx, dir, in.String(), sandbox.Dir+"/getopt", g.short, strings.Join(cspec, ","), lo)
			if err != nil || res.Code != 0 {
				t.Fatalf("harness: %v %+v", err, res)
			}
			lines := strings.Split(strings.TrimSuffix(res.Stdout, "\n"), "\n")
			if len(lines) != len(cases) {
				t.Fatalf("harness printed %d lines for %d cases", len(lines), len(cases))
			}
			bad := 0
			for i, c := range cases {
				want := strings.ReplaceAll(strings.TrimSuffix(lines[i], "\x1e"), "\x1e", " ")
				p, err := spec.Parse(c)
				got := show(p)
				if err != nil {
					got = "ERR"
				}
				if got != want {
					bad++
					if bad <= 10 {
						t.Errorf("%q: ours %q, glibc %q", c, got, want)
					}
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d cases differ from glibc", bad, len(cases))
			}
		})
	}
}

// FuzzParse: Parse never panics, reports indexes inside args, and a successful parse
// accounts for every word exactly once (as an option, a value, an operand or "--").
func FuzzParse(f *testing.F) {
	for _, seed := range []string{"-nes/a/b/ x", "--ex=p --in f", "-i.bak -- -e", "--s x", "-", "--=", "-e"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Fields(line)
		if len(args) > 64 {
			return
		}
		p, err := sedLike.Parse(args)
		if err != nil {
			return
		}
		used := make([]int, len(args))
		for _, o := range p.Options {
			if o.Index < 0 || o.Index >= len(args) || o.ValueIndex < o.Index || o.ValueIndex >= len(args) {
				t.Fatalf("%q: option %+v out of range", args, o)
			}
			used[o.Index] = 1
			used[o.ValueIndex] = 1
		}
		for _, i := range p.OperandIndex {
			if used[i] != 0 {
				t.Fatalf("%q: word %d is an option and an operand", args, i)
			}
			used[i] = 1
		}
		if p.DashDash >= 0 {
			used[p.DashDash] = 1
		}
		for i, u := range used {
			if u == 0 {
				t.Fatalf("%q: word %d (%q) not accounted for: %+v", args, i, args[i], p)
			}
		}
	})
}
