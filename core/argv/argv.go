// Package argv reads a command's arguments the way the program's own option parser will, so a
// policy judges the options that take effect and not the ones it guessed. It implements GNU
// getopt_long: clustered short options (-abc), short option values attached or in the next
// word (-ofile, -o file), optional values that must be attached (-d5, --debug=5), long options
// with "=" or the next word as their value, unambiguous abbreviations of long options (--ex=…
// is --expression=…; aliases of one option are not ambiguous), "--" ending the options, "-"
// as an operand, and GNU's permutation (options after operands) — or, for programs that stop
// at the first operand (POSIXLY_CORRECT, a "+" optstring, BSD-style tools), no permutation.
// getopt_long_only ("-foo" as a long option) is available for the programs that use it.
//
// A Spec is immutable once built and safe for concurrent use. Parse never guesses: an option
// the spec does not know, an ambiguous abbreviation, or a missing value is an error, and a
// caller judging safety must then refuse.
package argv

import (
	"errors"
	"fmt"
	"strings"
)

// ArgKind says whether an option takes a value.
type ArgKind uint8

const (
	// NoArg options take no value.
	NoArg ArgKind = iota
	// RequiredArg options take a value: attached, after "=", or the next word.
	RequiredArg
	// OptionalArg options take a value only when it is attached (-d5, --debug=5).
	OptionalArg
)

// Long is a long option.
type Long struct {
	Name string
	Arg  ArgKind
	// Same names the option this one is an alias of (--colour for --color): abbreviations
	// that match only an option and its aliases are not ambiguous. Empty: itself.
	Same string
}

// Spec is a program's option grammar.
type Spec struct {
	short [256]ArgKind
	known [256]bool
	longs []Long
	// stop ends option parsing at the first operand (no permutation).
	stop bool
	// longOnly reads "-foo" as a long option when it is one (getopt_long_only).
	longOnly bool
	// noAbbrev refuses abbreviated long options (programs with their own parser).
	noAbbrev bool
}

// Option is one option found.
type Option struct {
	// Name is the long option's full name (an alias's canonical option), or the short
	// option's letter.
	Name string
	// Long is true for an option given in long form (possibly abbreviated).
	Long bool
	// Value is the option's value; HasValue tells an empty value from none.
	Value    string
	HasValue bool
	// Index is the index in args of the word the option starts in; ValueIndex the word its
	// value is in (Index, or Index+1 for a value in the next word).
	Index, ValueIndex int
}

// Parsed is the result of a parse.
type Parsed struct {
	Options []Option
	// Operands are the non-option arguments, in order; OperandIndex their indexes in args.
	Operands     []string
	OperandIndex []int
	// DashDash is the index of the "--" that ended the options, or -1.
	DashDash int
}

// Has reports whether an option (by long name or short letter) was given.
func (p *Parsed) Has(names ...string) bool {
	for _, o := range p.Options {
		for _, n := range names {
			if o.Name == n {
				return true
			}
		}
	}
	return false
}

// Values returns the values of an option (by long name or short letter), in order.
func (p *Parsed) Values(names ...string) []string {
	var out []string
	for _, o := range p.Options {
		for _, n := range names {
			if o.Name == n && o.HasValue {
				out = append(out, o.Value)
			}
		}
	}
	return out
}

// Error is a parse error: what getopt would complain about.
type Error struct {
	// Arg is the word at fault, Index its index in args.
	Arg   string
	Index int
	// Option is the option at fault ("x" for -x inside a cluster, the long name as written).
	Option string
	// Reason is getopt's complaint.
	Reason string
}

func (e *Error) Error() string {
	if e.Option != "" && e.Option != e.Arg {
		return fmt.Sprintf("%s (%s): %s", e.Arg, e.Option, e.Reason)
	}
	return fmt.Sprintf("%s: %s", e.Arg, e.Reason)
}

// Option flags for New.
type Flag uint8

const (
	// StopAtOperand ends option parsing at the first operand (POSIXLY_CORRECT, "+" optstrings).
	StopAtOperand Flag = 1 << iota
	// LongOnly reads a single-dash word as a long option when it matches one (getopt_long_only).
	LongOnly
	// NoAbbrev refuses abbreviated long options.
	NoAbbrev
)

// New builds a spec from a getopt optstring ("ab:c::": ':' a required value, '::' an optional
// one; a leading '+' is StopAtOperand) and long options written "name" (no value), "name="
// (a required value) or "name[=]" (an optional one), followed by ">canonical" for an alias of
// another option ("colour[=]>color").
func New(optstring string, flags Flag, longs ...string) (*Spec, error) {
	s := &Spec{stop: flags&StopAtOperand != 0, longOnly: flags&LongOnly != 0, noAbbrev: flags&NoAbbrev != 0}
	if strings.HasPrefix(optstring, "+") {
		s.stop = true
		optstring = optstring[1:]
	}
	optstring = strings.TrimPrefix(optstring, ":") // getopt's "silent" marker changes nothing here
	for i := 0; i < len(optstring); i++ {
		c := optstring[i]
		if c == ':' || c == '-' || c == ' ' {
			return nil, fmt.Errorf("argv: bad optstring %q at %d", optstring, i)
		}
		if s.known[c] {
			return nil, fmt.Errorf("argv: option -%c twice in %q", c, optstring)
		}
		s.known[c] = true
		if i+1 < len(optstring) && optstring[i+1] == ':' {
			s.short[c] = RequiredArg
			i++
			if i+1 < len(optstring) && optstring[i+1] == ':' {
				s.short[c] = OptionalArg
				i++
			}
		}
	}
	seen := map[string]bool{}
	for _, l := range longs {
		name, same, _ := strings.Cut(l, ">")
		kind := NoArg
		switch {
		case strings.HasSuffix(name, "[=]"):
			kind, name = OptionalArg, strings.TrimSuffix(name, "[=]")
		case strings.HasSuffix(name, "="):
			kind, name = RequiredArg, strings.TrimSuffix(name, "=")
		}
		if name == "" || strings.ContainsAny(name, "= ") || strings.HasPrefix(name, "-") {
			return nil, fmt.Errorf("argv: bad long option %q", l)
		}
		if seen[name] {
			return nil, fmt.Errorf("argv: long option --%s twice", name)
		}
		seen[name] = true
		s.longs = append(s.longs, Long{Name: name, Arg: kind, Same: same})
	}
	for _, l := range s.longs {
		if l.Same != "" && !seen[l.Same] {
			return nil, fmt.Errorf("argv: --%s is an alias of unknown --%s", l.Name, l.Same)
		}
	}
	return s, nil
}

// MustNew is New for specs written in the source: it panics on a malformed spec.
func MustNew(optstring string, flags Flag, longs ...string) *Spec {
	s, err := New(optstring, flags, longs...)
	if err != nil {
		panic(err)
	}
	return s
}

// ShortKind reports whether the short option c is known and what value it takes.
func (s *Spec) ShortKind(c byte) (ArgKind, bool) { return s.short[c], s.known[c] }

// Longs returns the long options.
func (s *Spec) Longs() []Long { return append([]Long(nil), s.longs...) }

// canonical is the option an alias stands for.
func (l *Long) canonical() string {
	if l.Same != "" {
		return l.Same
	}
	return l.Name
}

// The Reasons of Errors.
const (
	errUnknown   = "unrecognized option"
	errAmbiguous = "ambiguous option"
	errNeedsArg  = "option requires an argument"
	errNoArg     = "option doesn't allow an argument"
)

// IsUnknown reports whether err is an unknown option (not a missing value or ambiguity).
func IsUnknown(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Reason == errUnknown
}

// lookupLong finds the long option name (without "--" and "=value") names: an exact match, or
// the one option all prefix matches stand for.
func (s *Spec) lookupLong(name string) (*Long, string) {
	var found *Long
	for i := range s.longs {
		l := &s.longs[i]
		if l.Name == name {
			return l, ""
		}
	}
	if s.noAbbrev {
		return nil, errUnknown
	}
	for i := range s.longs {
		l := &s.longs[i]
		if !strings.HasPrefix(l.Name, name) {
			continue
		}
		if found == nil {
			found = l
			continue
		}
		// glibc: matches that are the same option (aliases with the same value rule) are one.
		if found.canonical() != l.canonical() || found.Arg != l.Arg {
			return nil, errAmbiguous
		}
	}
	if found == nil {
		return nil, errUnknown
	}
	return found, ""
}

// Reset empties p for reuse, keeping its memory.
func (p *Parsed) Reset() {
	p.Options, p.Operands, p.OperandIndex, p.DashDash = p.Options[:0], p.Operands[:0], p.OperandIndex[:0], -1
}

// Parse reads args (without the program name).
func (s *Spec) Parse(args []string) (Parsed, error) {
	var p Parsed
	err := s.ParseInto(&p, args)
	return p, err
}

// ParseInto is Parse into p, reusing its memory (p is Reset first). On an error p holds what
// was read before it.
func (s *Spec) ParseInto(p *Parsed, args []string) error {
	p.Reset()
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			p.DashDash = i
			for j := i + 1; j < len(args); j++ {
				p.Operands = append(p.Operands, args[j])
				p.OperandIndex = append(p.OperandIndex, j)
			}
			return nil
		case len(a) < 2 || a[0] != '-':
			if s.stop {
				for j := i; j < len(args); j++ {
					p.Operands = append(p.Operands, args[j])
					p.OperandIndex = append(p.OperandIndex, j)
				}
				return nil
			}
			p.Operands = append(p.Operands, a)
			p.OperandIndex = append(p.OperandIndex, i)
		case a[1] == '-':
			next, err := s.long(p, args, i, a[2:])
			if err != nil {
				return err
			}
			i = next
		default:
			if s.longOnly {
				name, _, _ := strings.Cut(a[1:], "=")
				// getopt_long_only: a long option when it matches one, unless it is a
				// one-letter word that is a short option.
				if l, why := s.lookupLong(name); l != nil && !(len(a) == 2 && s.known[a[1]]) {
					next, err := s.long(p, args, i, a[1:])
					if err != nil {
						return err
					}
					i = next
					continue
				} else if why == errAmbiguous && !(len(a) == 2 && s.known[a[1]]) {
					// glibc refuses an ambiguous abbreviation even when its first letter is
					// a short option.
					return &Error{Arg: a, Index: i, Option: name, Reason: errAmbiguous}
				}
			}
			next, err := s.cluster(p, args, i)
			if err != nil {
				return err
			}
			i = next
		}
	}
	return nil
}

// long reads the long option body (after the dashes) at args[i]; it returns the index of the
// last word it used.
func (s *Spec) long(p *Parsed, args []string, i int, body string) (int, error) {
	name, val, hasVal := strings.Cut(body, "=")
	l, why := s.lookupLong(name)
	if l == nil {
		return i, &Error{Arg: args[i], Index: i, Option: name, Reason: why}
	}
	o := Option{Name: l.canonical(), Long: true, Index: i, ValueIndex: i}
	switch l.Arg {
	case NoArg:
		if hasVal {
			return i, &Error{Arg: args[i], Index: i, Option: l.Name, Reason: errNoArg}
		}
	case RequiredArg:
		switch {
		case hasVal:
			o.Value, o.HasValue = val, true
		case i+1 < len(args):
			i++
			o.Value, o.HasValue, o.ValueIndex = args[i], true, i
		default:
			return i, &Error{Arg: args[i], Index: i, Option: l.Name, Reason: errNeedsArg}
		}
	case OptionalArg:
		if hasVal {
			o.Value, o.HasValue = val, true
		}
	}
	p.Options = append(p.Options, o)
	return i, nil
}

// cluster reads a cluster of short options at args[i].
func (s *Spec) cluster(p *Parsed, args []string, i int) (int, error) {
	a := args[i]
	for j := 1; j < len(a); j++ {
		c := a[j]
		if !s.known[c] {
			return i, &Error{Arg: a, Index: i, Option: string(c), Reason: errUnknown}
		}
		// a[j:j+1] is string(c) for the ASCII option characters known holds, without an
		// allocation per option.
		o := Option{Name: a[j : j+1], Index: i, ValueIndex: i}
		switch s.short[c] {
		case RequiredArg:
			switch {
			case j+1 < len(a):
				o.Value, o.HasValue = a[j+1:], true
			case i+1 < len(args):
				i++
				o.Value, o.HasValue, o.ValueIndex = args[i], true, i
			default:
				return i, &Error{Arg: a, Index: i, Option: string(c), Reason: errNeedsArg}
			}
			p.Options = append(p.Options, o)
			return i, nil
		case OptionalArg:
			if j+1 < len(a) {
				o.Value, o.HasValue = a[j+1:], true
			}
			p.Options = append(p.Options, o)
			return i, nil
		}
		p.Options = append(p.Options, o)
	}
	return i, nil
}
