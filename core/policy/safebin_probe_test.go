package policy

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/approvebot/approvebot/core/argv"
	"github.com/approvebot/approvebot/internal/sandbox"
)

// probedGrammar is a program's option grammar as its own getopt reports it.
type probedGrammar struct {
	short map[byte]argv.ArgKind
	long  map[string]argv.ArgKind
}

var (
	reAmbiguous = regexp.MustCompile(`option '--[^']*' is ambiguous; possibilities:((?: '--[^']+')+)`)
	reLongName  = regexp.MustCompile(`'--([^']+)'`)
	reHelpLong  = regexp.MustCompile(`--([a-z0-9][a-z0-9-]*)`)
)

// probeShort are the short option letters tried.
const probeShort = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// probeGrammar asks the real binary, in the sandbox, what every short letter and every long
// option it mentions (in --help or in an ambiguity message) takes. glibc's messages say it:
// "invalid option", "unrecognized option", "requires an argument", "doesn't allow an argument".
// A letter given "@@" attached is optional when getopt does not then complain about "@".
func probeGrammar(t *testing.T, tool string) probedGrammar {
	t.Helper()
	dir := t.TempDir()
	var sc strings.Builder
	sc.WriteString("t() { timeout 2 \"$@\" </dev/null >/dev/null 2>/tmp/err; echo -n \"rc=$? \"; tr '\\n' ' ' </tmp/err | head -c 2000; echo; }\n")
	// The help text and one ambiguity probe per letter give the long names.
	sc.WriteString("echo HELP; timeout 2 " + tool + " --help 2>&1 </dev/null | tr '\\n' ' ' | head -c 60000; echo\n")
	for i := 0; i < 26; i++ {
		fmt.Fprintf(&sc, "echo AMB; t %s --%c\n", tool, 'a'+i)
	}
	for i := 0; i < len(probeShort); i++ {
		c := probeShort[i]
		fmt.Fprintf(&sc, "echo S%c; t %s -%c; t %s -%c@@; t %s -%c -@\n", c, tool, c, tool, c, tool, c)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := sandbox.Run(ctx, dir, "/bin/bash", "--norc", "-c", sc.String())
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	g := probedGrammar{short: map[byte]argv.ArgKind{}, long: map[string]argv.ArgKind{}}
	lines := strings.Split(res.Stdout, "\n")
	names := map[string]bool{}
	for i := 0; i < len(lines); i++ {
		switch l := lines[i]; {
		case l == "HELP" && i+1 < len(lines):
			for _, m := range reHelpLong.FindAllStringSubmatch(lines[i+1], -1) {
				names[m[1]] = true
			}
			i++
		case l == "AMB" && i+1 < len(lines):
			if m := reAmbiguous.FindStringSubmatch(lines[i+1]); m != nil {
				for _, n := range reLongName.FindAllStringSubmatch(m[1], -1) {
					names[n[1]] = true
				}
			}
			i++
		case len(l) == 2 && l[0] == 'S' && i+3 < len(lines):
			alone, attached, before := lines[i+1], lines[i+2], lines[i+3]
			i += 3
			switch {
			case strings.Contains(alone, "invalid option") || strings.Contains(alone, "unrecognized option"):
			case strings.Contains(alone, "requires an argument"):
				g.short[l[1]] = argv.RequiredArg
			case strings.Contains(attached, "invalid option -- '@'"):
				g.short[l[1]] = argv.NoArg
			case strings.Contains(attached, "@@"):
				g.short[l[1]] = argv.OptionalArg // the program took "@@" as the value
			case !strings.Contains(before, "invalid option -- '@'") && (strings.HasPrefix(before, "rc=0 ") || before == alone):
				// The option ends the program before getopt reads on (--help, --version, or
				// an option refused at once: gzip -Z, id -Z without SELinux): no value rule
				// can be seen, and none matters.
				g.short[l[1]] = argv.NoArg
			default:
				g.short[l[1]] = argv.OptionalArg
			}
		}
	}
	// Each long name: alone, and with a value attached.
	list := make([]string, 0, len(names))
	for n := range names {
		list = append(list, n)
	}
	sort.Strings(list)
	sc.Reset()
	sc.WriteString("t() { timeout 2 \"$@\" </dev/null >/dev/null 2>/tmp/err; tr '\\n' ' ' </tmp/err | head -c 2000; echo; }\n")
	for _, n := range list {
		fmt.Fprintf(&sc, "t %s --%s; t %s --%s=@@\n", tool, n, tool, n)
	}
	res, err = sandbox.Run(ctx, dir, "/bin/bash", "--norc", "-c", sc.String())
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	out := strings.Split(res.Stdout, "\n")
	for k, n := range list {
		if 2*k+1 >= len(out) {
			break
		}
		alone, attached := out[2*k], out[2*k+1]
		switch {
		case strings.Contains(alone, "unrecognized option") || strings.Contains(alone, "is ambiguous"):
			// Mentioned in --help but not an option (or only a prefix of several).
		case strings.Contains(alone, "requires an argument"):
			g.long[n] = argv.RequiredArg
		case strings.Contains(attached, "doesn't allow an argument"):
			g.long[n] = argv.NoArg
		default:
			g.long[n] = argv.OptionalArg
		}
	}
	return g
}

// The safe-bin profiles against the real programs: every short letter and long option the
// program's getopt knows must be in the profile's grammar with the same value rule, and the
// profile must know nothing the program does not (a letter it thinks takes no value would
// let "-oFILE" through as a cluster). Needs the programs and bubblewrap; run with
// APPROVEBOT_INTEGRATION=1. APPROVEBOT_PROBE_PRINT=1 prints what was found.
func TestSafeBinGrammarsAgainstBinaries(t *testing.T) {
	if os.Getenv("APPROVEBOT_INTEGRATION") != "1" {
		t.Skip("asks every option of every safe bin of the real programs; set APPROVEBOT_INTEGRATION=1")
	}
	if err := sandbox.Available(); err != nil {
		t.Skip(err)
	}
	names := make([]string, 0, len(toolSpecs))
	for n, ts := range toolSpecs {
		if ts.getopt && ts.opts != nil {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			bin, err := exec.LookPath(name)
			if err != nil {
				t.Skipf("%s is not installed", name)
			}
			if r, err := filepath.EvalSymlinks(bin); err == nil && filepath.Base(r) != name && !strings.HasPrefix(filepath.Base(r), name) {
				t.Skipf("%s is %s here", name, r)
			}
			ts := toolSpecs[name]
			g := probeGrammar(t, name)
			if os.Getenv("APPROVEBOT_PROBE_PRINT") == "1" {
				t.Logf("%s: %s", name, formatGrammar(g))
			}
			for i := 0; i < len(probeShort); i++ {
				c := probeShort[i]
				want, known := g.short[c]
				got, ours := ts.opts.ShortKind(c)
				if ts.digits && (c >= '0' && c <= '9' || name == "tail" && (c == 'b' || c == 'l')) {
					continue // -NUM, tail -b and -l are read before getopt (the obsolete forms)
				}
				switch {
				case known && !ours:
					t.Errorf("-%c: the program takes it (%v), the profile does not know it", c, want)
				case !known && ours:
					t.Errorf("-%c: the profile knows it, the program does not", c)
				case known && got != want:
					t.Errorf("-%c: the program's value rule is %v, the profile's %v", c, want, got)
				}
			}
			ourLongs := map[string]argv.ArgKind{}
			for _, l := range ts.opts.Longs() {
				ourLongs[l.Name] = l.Arg
			}
			for n, want := range g.long {
				got, ok := ourLongs[n]
				switch {
				case !ok:
					t.Errorf("--%s: the program takes it (%v), the profile does not know it", n, want)
				case got != want:
					t.Errorf("--%s: the program's value rule is %v, the profile's %v", n, want, got)
				}
			}
			for n := range ourLongs {
				if _, ok := g.long[n]; !ok {
					t.Errorf("--%s: the profile knows it, the program does not (or does not say so in --help)", n)
				}
			}
		})
	}
}

func formatGrammar(g probedGrammar) string {
	var short strings.Builder
	for i := 0; i < len(probeShort); i++ {
		c := probeShort[i]
		k, ok := g.short[c]
		if !ok {
			continue
		}
		short.WriteByte(c)
		switch k {
		case argv.RequiredArg:
			short.WriteString(":")
		case argv.OptionalArg:
			short.WriteString("::")
		}
	}
	longs := make([]string, 0, len(g.long))
	for n, k := range g.long {
		switch k {
		case argv.RequiredArg:
			n += "="
		case argv.OptionalArg:
			n += "[=]"
		}
		longs = append(longs, fmt.Sprintf("%q", n))
	}
	sort.Strings(longs)
	return fmt.Sprintf("%q, %s", short.String(), strings.Join(longs, ", "))
}
