package policy

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/shell"
)

// Rule names the command policy reports for its own decisions.
const (
	RuleSecurity  = "exec.security"  // security = deny or full decided
	RuleAnalysis  = "exec.analysis"  // the command could not be fully analysed
	RuleAllowlist = "exec.allowlist" // allowlist, safe bins and skills decided
	RuleAskAlways = "exec.ask"       // ask = always
)

// What satisfied a segment (Segment.SatisfiedBy).
const (
	SatisfiedAllowlist = "allowlist"
	SatisfiedSafeBin   = "safe_bin"
	SatisfiedSkill     = "skill"
	SatisfiedBuiltin   = "builtin"  // a shell builtin that only changes the shell's own state
	SatisfiedFunction  = "function" // a function declared earlier in the same command (its body is judged)
)

// defaultResolveTTL is used when the configuration leaves resolve_cache_ttl at zero.
const defaultResolveTTL = 5 * time.Second

// ExecJudge is the command policy of seed 003 with the hardline floor and exec rules on top.
// It is safe for concurrent use.
type ExecJudge struct {
	security, ask string
	allow         *Allowlist
	persisted     PersistedAllowlist
	pcache        *persistedCache
	safe          map[string]bool
	// safeSpecs are the enabled safe bins that have a safe-bin profile, with it.
	safeSpecs    map[string]*toolSpec
	trusted      map[string]bool
	skills       map[string]bool
	autoSkills   bool
	rules        []execRule
	res          *shell.Resolver
	home         string
	windows      bool
	sensitive    *Sensitive
	sensitiveSet bool
}

// JudgeOption configures an ExecJudge.
type JudgeOption func(*ExecJudge)

// WithSensitive sets the sensitive path list (default: DefaultSensitivePaths); nil turns it off.
func WithSensitive(s *Sensitive) JudgeOption {
	return func(j *ExecJudge) { j.sensitive, j.sensitiveSet = s, true }
}

var _ CommandJudge = (*ExecJudge)(nil)

// NewCommandJudge builds the command policy from [policy.exec]. persisted, when not nil,
// supplies the entries stored by "allow always"; it is read on every judgement so that a
// revocation takes effect at once.
func NewCommandJudge(cfg ExecConfig, persisted PersistedAllowlist, opts ...JudgeOption) (CommandJudge, error) {
	return NewExecJudge(cfg, persisted, opts...)
}

// NewExecJudge is NewCommandJudge returning the concrete type.
func NewExecJudge(cfg ExecConfig, persisted PersistedAllowlist, opts ...JudgeOption) (*ExecJudge, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	home, _ := os.UserHomeDir()
	if home != "" {
		home = filepath.Clean(home)
	}
	j := &ExecJudge{
		security:   cfg.Security,
		ask:        cfg.Ask,
		persisted:  persisted,
		pcache:     newPersistedCache(home),
		autoSkills: cfg.AutoAllowSkills,
		home:       home,
		windows:    runtime.GOOS == "windows",
	}
	for _, o := range opts {
		o(j)
	}
	var err error
	switch {
	case !j.sensitiveSet:
		j.sensitive, err = CompileSensitive(DefaultSensitivePaths)
	case j.sensitive == nil:
		j.sensitive, err = CompileSensitive(nil) // no sensitive paths; writes are still judged
	}
	if err != nil {
		return nil, err
	}
	if j.security == "" {
		j.security = "allowlist"
	}
	if j.ask == "" {
		j.ask = "on-miss"
	}
	if j.allow, err = CompileAllowlist(cfg.Allowlist, home); err != nil {
		return nil, err
	}
	if j.rules, err = compileRules(cfg.Rules); err != nil {
		return nil, err
	}
	bins := cfg.SafeBins
	if bins == nil {
		bins = DefaultSafeBins
	}
	j.safe = make(map[string]bool, len(bins))
	j.safeSpecs = make(map[string]*toolSpec, len(bins))
	for _, b := range bins {
		b = strings.TrimSpace(b)
		j.safe[b] = true
		if ts := toolSpecs[b]; ts != nil && ts.safe != nil {
			j.safeSpecs[b] = ts
		}
	}
	dirs := cfg.TrustedDirs
	if dirs == nil {
		dirs = DefaultTrustedDirs
	}
	j.trusted = make(map[string]bool, len(dirs)*2)
	for _, d := range dirs {
		d = filepath.Clean(d)
		j.trusted[d] = true
		// A trusted directory is trusted under its real name too (/bin -> /usr/bin).
		if r, err := filepath.EvalSymlinks(d); err == nil {
			j.trusted[r] = true
		}
	}
	j.skills = make(map[string]bool, len(cfg.SkillBins))
	for _, b := range cfg.SkillBins {
		j.skills[strings.TrimSpace(b)] = true
	}
	pathList := cfg.Path
	if pathList == "" {
		pathList = os.Getenv("PATH")
	}
	ttl := cfg.ResolveCacheTTL.Duration
	if ttl == 0 {
		ttl = defaultResolveTTL
	}
	j.res = shell.NewResolver(pathList, ttl)
	return j, nil
}

// validate checks the [policy.exec] keys this package owns; errors name the key.
func (c *ExecConfig) validate() error {
	switch c.Security {
	case "", "deny", "allowlist", "full":
	default:
		return fmt.Errorf("policy.exec.security: want \"deny\", \"allowlist\" or \"full\", got %q", c.Security)
	}
	switch c.Ask {
	case "", "off", "on-miss", "always":
	default:
		return fmt.Errorf("policy.exec.ask: want \"off\", \"on-miss\" or \"always\", got %q", c.Ask)
	}
	for i, b := range c.SafeBins {
		b = strings.TrimSpace(b)
		if !HasSafeBinProfile(b) {
			names := SafeBinProfiles()
			sort.Strings(names)
			return fmt.Errorf("policy.exec.safe_bins[%d]: %q has no argv profile, so it cannot be a safe bin (use the allowlist, or one of: %s)",
				i, b, strings.Join(names, ", "))
		}
	}
	for i, d := range c.TrustedDirs {
		if !filepath.IsAbs(d) {
			return fmt.Errorf("policy.exec.trusted_dirs[%d]: %q is not an absolute path", i, d)
		}
	}
	for i, b := range c.SkillBins {
		if strings.TrimSpace(b) == "" || strings.ContainsAny(b, `/\`) {
			return fmt.Errorf("policy.exec.skill_bins[%d]: want a command name, got %q", i, b)
		}
	}
	for _, d := range filepath.SplitList(c.Path) {
		if d != "" && !filepath.IsAbs(d) {
			return fmt.Errorf("policy.exec.path: %q is not an absolute directory", d)
		}
	}
	if _, err := CompileAllowlist(c.Allowlist, homeDir()); err != nil {
		return err
	}
	if _, err := compileRules(c.Rules); err != nil {
		return err
	}
	return nil
}

func homeDir() string {
	h, _ := os.UserHomeDir()
	return h
}

// InvalidateResolutions forgets every cached executable resolution (after installing or
// removing programs, or on SIGHUP).
func (j *ExecJudge) InvalidateResolutions() { j.res.Invalidate() }

// Resolver exposes the executable resolver (for tests and `approvebot check`).
func (j *ExecJudge) Resolver() *shell.Resolver { return j.res }

// Judge judges one command line.
func (j *ExecJudge) Judge(in CommandInput) CommandJudgement {
	opts := shell.Options{Cwd: in.Cwd, Home: j.home}
	if path.IsAbs(in.Cwd) {
		opts.Project = projectDir(path.Clean(in.Cwd), j.home)
	}
	an := shell.Analyze(in.Command, opts)
	out := j.JudgeAnalysis(an, in)
	an.Release() // out holds copies only
	return out
}

// JudgeAnalysis judges an analysis made by shell.Analyze for in (in.Command is not read again).
func (j *ExecJudge) JudgeAnalysis(an *shell.Analysis, in CommandInput) CommandJudgement {
	out := CommandJudgement{AnalysisOK: an.OK, Normalized: an.Normalized, Problems: an.Problems}
	// One pooled scratch for the whole judgement: the safe-bin parses and the effects.
	e := effectPool.Get().(*effectJudge)
	defer e.release()
	var persisted *Allowlist
	if j.persisted != nil {
		persisted = j.pcache.compile(j.persisted.AllowlistEntries())
	}
	judged, satisfied := 0, true
	firstMiss := ""
	var resBuf [8]shell.Resolution
	var resolved []shell.Resolution
	if len(an.Segments) <= len(resBuf) {
		resolved = resBuf[:len(an.Segments)]
	} else {
		resolved = make([]shell.Resolution, len(an.Segments))
	}
	// One backing array for every segment's argv.
	nargs := 0
	for _, s := range an.Segments {
		if s.Judged {
			nargs += len(s.Args)
		}
	}
	var argv []string
	switch {
	case len(an.Segments) == 1 && nargs <= len(oneJudgement{}.argv):
		// The common case in one allocation of less than 512 bytes (no heap header).
		sm := new(oneJudgement)
		argv = sm.argv[:nargs]
		out.Segments = sm.segs[:0:1]
	case len(an.Segments) <= 2 && nargs <= 10:
		sm := new(smallJudgement)
		argv = sm.argv[:nargs]
		out.Segments = sm.segs[:0:len(an.Segments)]
	default:
		argv = make([]string, nargs)
		out.Segments = make([]Segment, 0, len(an.Segments))
	}
	for i, s := range an.Segments {
		if !s.Judged {
			continue
		}
		judged++
		a := argv[:len(s.Args):len(s.Args)]
		argv = argv[len(s.Args):]
		for k := range s.Args {
			a[k] = s.Args[k].Value
		}
		seg, res, ok := j.segment(s, a, in.Agent, persisted, an, &e.safeCall)
		resolved[i] = res
		out.Segments = append(out.Segments, seg)
		if !ok {
			satisfied = false
			if firstMiss == "" {
				firstMiss = describeMiss(seg)
			}
		}
	}
	out.AllowlistSatisfied = an.OK && judged > 0 && satisfied

	if h, ok := CheckFloor(an); ok {
		out.Verdict, out.Source, out.Rule, out.Reason = Deny, approval.SourceFloor, h.Rule, h.Reason
		return out
	}
	concerns, fh := j.concerns(e, an, in)
	if fh != nil {
		// A tool's own write option onto a raw block device (sort -o /dev/sda) is the same
		// catastrophe as a redirection onto it: the floor's.
		out.Verdict, out.Source, out.Rule, out.Reason = Deny, approval.SourceFloor, fh.Rule, fh.Reason
		return out
	}
	var askRule *execRule
	var askSeg *shell.Segment
	for ri := range j.rules {
		r := &j.rules[ri]
		for i, s := range an.Segments {
			if !r.matches(s, resolved[i].Path, resolved[i].Real) {
				continue
			}
			if r.action == Deny {
				out.Verdict, out.Source, out.Rule = Deny, approval.SourceRule, r.name
				out.Reason = r.message
				if out.Reason == "" {
					out.Reason = "refused by rule " + r.name + ": " + showSegment(s)
				}
				return out
			}
			if askRule == nil {
				askRule, askSeg = r, s
			}
		}
	}
	out.Concerns = concerns
	out.Verdict, out.Rule, out.Reason = j.policy(an, out.AllowlistSatisfied, firstMiss)
	if len(out.Concerns) > 0 {
		out.AllowlistSatisfied = false
	}
	out.Source = approval.SourcePolicy
	if askRule != nil && out.Verdict != Deny {
		out.Verdict, out.Source, out.Rule = Ask, approval.SourceRule, askRule.name
		out.Reason = askRule.message
		if out.Reason == "" {
			out.Reason = "rule " + askRule.name + " asks a human for " + showSegment(askSeg)
		}
	}
	if len(out.Concerns) > 0 {
		// Nothing allows these without a human; the card says why first.
		c := out.Concerns[0]
		also := ""
		if out.Verdict != Allow {
			also = "; also " + out.Reason
		}
		out.Source, out.Rule = approval.SourcePolicy, c.rule()
		out.Reason = c.Reason
		if len(out.Concerns) > 1 {
			out.Reason += fmt.Sprintf(" (and %d more)", len(out.Concerns)-1)
		}
		out.Reason += also
		if j.ask == "off" {
			out.Verdict = Deny
			out.Reason += ` (ask = "off")`
		} else {
			out.Verdict = Ask
		}
	}
	if out.Verdict == Ask && an.OK {
		out.AlwaysPatterns = alwaysPatterns(an, resolved)
	}
	return out
}

// alwaysPatterns are the resolved executables "allow always" would persist, or nil when one
// of the commands was not found (then nothing can be persisted that covers the command).
func alwaysPatterns(an *shell.Analysis, resolved []shell.Resolution) []string {
	var out []string
	for i, s := range an.Segments {
		if !s.Judged || s.Kind != shell.KindCommand {
			continue
		}
		if resolved[i].Path == "" {
			return nil
		}
		if p := escapeGlob(alwaysPath(s, resolved[i])); !containsString(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// smallJudgement holds the segments and strings of a judgement of one or two commands, and
// oneJudgement those of one short command.
type smallJudgement struct {
	segs [2]Segment
	argv [10]string
}

type oneJudgement struct {
	segs [1]Segment
	argv [6]string
}

// policy is seed 003's decision: security mode, ask mode, analysis and allowlist.
func (j *ExecJudge) policy(an *shell.Analysis, satisfied bool, miss string) (Verdict, string, string) {
	switch j.security {
	case "deny":
		if j.ask == "off" {
			return Deny, RuleSecurity, "security = \"deny\" refuses every command"
		}
		return Ask, RuleSecurity, "security = \"deny\": every command needs a human"
	case "full":
		if j.ask == "always" {
			return Ask, RuleAskAlways, "ask = \"always\": every command needs a human"
		}
		return Allow, RuleSecurity, "security = \"full\" allows every command the floor and rules allow"
	}
	miss2 := func(reason string) (Verdict, string, string) {
		if j.ask == "off" {
			return Deny, "", reason + " (ask = \"off\")"
		}
		return Ask, "", reason
	}
	if !an.OK {
		reason := "the command cannot be fully analysed"
		if len(an.Problems) > 0 {
			reason += ": " + an.Problems[0]
		}
		v, _, r := miss2(reason)
		return v, RuleAnalysis, r
	}
	if !satisfied {
		v, _, r := miss2("not allowlisted: " + miss)
		return v, RuleAllowlist, r
	}
	if j.ask == "always" {
		return Ask, RuleAskAlways, "ask = \"always\": every command needs a human"
	}
	return Allow, RuleAllowlist, "every command is allowlisted, a safe bin, a skill or a harmless builtin"
}

func describeMiss(s Segment) string {
	name := s.Executable
	if name == "" {
		name = "redirection"
	}
	switch {
	case len(s.Writes) > 0 && s.SatisfiedBy == "" && s.ResolvedPath != "":
		return name + " (" + s.ResolvedPath + ", writes " + strings.Join(s.Writes, ", ") + ")"
	case s.ArgsOnly != "":
		return name + " (" + s.ResolvedPath + ", allowlisted only for the arguments \"" + s.ArgsOnly + "\")"
	case s.ResolvedPath != "":
		return name + " (" + s.ResolvedPath + ")"
	case len(s.Writes) > 0:
		return name + " (writes " + strings.Join(s.Writes, ", ") + ")"
	}
	return name + " (not found on the PATH)"
}

// segment evaluates one judged segment: resolution and what satisfies it. What it writes does
// not decide here: the effects (concerns) allow writes inside the project and nothing else.
func (j *ExecJudge) segment(s *shell.Segment, argv []string, agent string, persisted *Allowlist, an *shell.Analysis, scratch *toolCall) (Segment, shell.Resolution, bool) {
	seg := Segment{Argv: argv, Executable: s.Name(), Wrappers: s.Wrappers}
	for _, w := range s.Writes {
		t := w.Target
		if !w.Known {
			t = "?"
		}
		seg.Writes = append(seg.Writes, t)
	}
	var res shell.Resolution
	switch s.Kind {
	case shell.KindRedirect:
		seg.SatisfiedBy = SatisfiedBuiltin
	case shell.KindBuiltin:
		if s.Benign {
			seg.SatisfiedBy = SatisfiedBuiltin
		}
	case shell.KindFunction:
		// The function may not be defined when the call runs (declared in a branch): then
		// the executable of that name runs, and it must pass on its own.
		if len(s.Args) > 0 && s.Args[0].Static {
			res = j.res.Resolve(s.Name(), s.Cwd, "")
			if res.Path != "" {
				seg.ResolvedPath = res.Path
				if !j.commandSatisfied(&seg, s, res, agent, persisted, nil, scratch) {
					break
				}
			}
		}
		seg.SatisfiedBy = SatisfiedFunction
	default:
		if len(s.Args) == 0 || !s.Args[0].Static {
			break
		}
		res = j.res.Resolve(s.Name(), s.Cwd, s.LocalBins)
		seg.ResolvedPath = res.Path
		if res.Real != res.Path {
			seg.RealPath = res.Real
		}
		if res.Path == "" {
			break
		}
		j.commandSatisfied(&seg, s, res, agent, persisted, an, scratch)
	}
	return seg, res, seg.SatisfiedBy != ""
}

// commandSatisfied sets what satisfies a resolved command: the allowlist (configured, then
// persisted), a safe bin, or a skill.
func (j *ExecJudge) commandSatisfied(seg *Segment, s *shell.Segment, res shell.Resolution, agent string, persisted *Allowlist, an *shell.Analysis, scratch *toolCall) bool {
	q := allowQuery{resolved: res.Path, real: res.Real, agent: agent, args: s.Args[1:]}
	if len(s.Args) == 0 {
		q.noArgs = true
	}
	if p, ok := j.allow.first(&q); ok {
		seg.SatisfiedBy, seg.Entry, seg.EntryArgs = SatisfiedAllowlist, p.entry.Pattern, p.entry.Args
		return true
	}
	if p, ok := persisted.first(&q); ok {
		seg.SatisfiedBy, seg.Entry, seg.EntryArgs = SatisfiedAllowlist, p.entry.Pattern, p.entry.Args
		return true
	}
	name := s.Base()
	if ts := j.safeSpecs[name]; an != nil && ts != nil && safeExports(an, name) && (!s.MoreArgs || findFeeds(an, s)) &&
		safeArgs(s, ts, name) && j.safeBin(name, ts, res.Path, res.Real, seg.Argv[1:], scratch) {
		seg.SatisfiedBy = SatisfiedSafeBin
		return true
	}
	if j.autoSkills && j.skills[name] {
		seg.SatisfiedBy = SatisfiedSkill
		return true
	}
	// Say so when an entry names the executable but not these arguments.
	q.anyArgs = true
	if p, ok := j.allow.first(&q); ok && p.entry.Args != "" {
		seg.ArgsOnly = p.entry.Args
	}
	return false
}

// safeArgs is what a safe bin needs beyond its profile: literal arguments, an environment that
// cannot reconfigure it, and no glob that could expand to a file name starting with "-" (a
// file called --output=x turns sort * into a write) unless no option of the program does harm
// (wc -l *.go). Arguments arriving through xargs are findFeeds' to judge.
func safeArgs(s *shell.Segment, ts *toolSpec, name string) bool {
	for i := range s.Args {
		// A value the analysis knows exactly ("$PWD" from the request's cwd) is checked by the
		// profile like a literal; an unknown one could be any option.
		if a := &s.Args[i]; !a.Static && !a.Known {
			return false
		}
	}
	for _, e := range s.Env {
		v, _, _ := strings.Cut(e, "=")
		if !envHarmlessFor(v, name) {
			return false
		}
	}
	if ts != nil && ts.injectSafe {
		return true
	}
	for _, a := range s.Args[1:] {
		if a.Static && a.Value == "--" && ts != nil && ts.opts != nil && ts.parse == nil {
			return true // getopt reads operands from here on, whatever they expand to
		}
		if a.Pattern != "" && strings.IndexByte(`*?[\-`, a.Pattern[0]) >= 0 {
			return false
		}
	}
	return true
}

// alwaysPath is what "allow always" stores for a segment: the resolved path, or for the
// binaries of package runners (npx eslint) the package's real file, which a later install
// cannot silently swap (seed 003: /usr/local/lib/node_modules/eslint/bin/eslint.js).
func alwaysPath(s *shell.Segment, res shell.Resolution) string {
	if s.LocalBins != "" && res.Real != "" {
		return res.Real
	}
	return res.Path
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// escapeGlob escapes the allowlist glob characters of a literal path, so that persisting it
// allows that file and nothing else.
func escapeGlob(p string) string {
	if !strings.ContainsAny(p, `*?[\`) {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '*', '?', '[', '\\':
			b.WriteByte('\\')
		}
		b.WriteByte(p[i])
	}
	return b.String()
}
