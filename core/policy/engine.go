package policy

import (
	"strconv"
	"strings"

	"github.com/approvebot/approvebot/core/approval"
)

// Input is one call to judge.
type Input struct {
	Tool  string
	Args  map[string]any
	Cwd   string
	Agent string
	Facts approval.Facts
	// Tier is the tier resolved for this request (request > session > global, clamped).
	Tier Tier
}

// Evaluation is the policy's answer for one call.
type Evaluation struct {
	Verdict Verdict
	// Source is policy, rule or floor.
	Source approval.Source
	// Rule names what decided: a tool_permissions entry, an exec rule, a floor rule, an
	// allowlist entry or the tier.
	Rule   string
	Reason string
	// Explicit is true when an allow rests on something the operator configured for this
	// call or what the analysis proved harmless: a tool_permissions allow, or a shell command
	// every segment of which is allowlisted, a safe bin, a skill or an inert builtin. It is
	// false for an allow that is only the tier's (or the configured default's) leniency, and
	// for security = "full". An integration answers "allow" to its agent only when Explicit
	// (otherwise it defers to the agent's own permission flow), so it is never true unless
	// Verdict is Allow.
	Explicit bool
	// Shell is set for shell tools.
	Shell *CommandJudgement
}

// Command is the shell command of a shell-tool call, or ok=false when the tool is not a
// shell tool. Shell tools match exactly or, failing that, case-insensitively ("BASH" is bash:
// an agent must not slip past the command policy by spelling). A command given as a list of
// strings (an argv, as Codex's shell tool gives it: ["bash", "-lc", "…"]) is the command
// line execvp would run, each word quoted. A shell tool whose command argument is missing
// or neither yields ok=true and an empty command, which the command policy refuses to allow.
func (e *Engine) Command(tool string, args map[string]any) (cmd string, ok bool) {
	arg, isShell := e.shellArg(tool)
	if !isShell {
		return "", false
	}
	switch v := args[arg].(type) {
	case string:
		return v, true
	case []any:
		return argvLine(v), true
	}
	return "", true
}

func (e *Engine) shellArg(tool string) (string, bool) {
	arg, isShell := e.cfg.Exec.ShellTools[tool]
	if !isShell {
		arg, isShell = e.shellFold[strings.ToLower(tool)]
	}
	return arg, isShell
}

// CommandInput is one shell command line to judge.
type CommandInput struct {
	Command string
	Cwd     string
	Agent   string
}

// CommandJudgement is the command policy's answer (seed 003 plus the floor and exec rules).
type CommandJudgement struct {
	Verdict Verdict `json:"-"`
	// Source is floor, rule or policy.
	Source approval.Source `json:"-"`
	Rule   string          `json:"-"`
	Reason string          `json:"-"`
	// AnalysisOK is false when the command could not be fully analysed (fail closed).
	AnalysisOK bool `json:"analysis_ok"`
	// AllowlistSatisfied is true when every segment is satisfied by the allowlist, a safe bin
	// or a skill; ask_fallback = "allowlist" allows exactly these.
	AllowlistSatisfied bool `json:"allowlist_satisfied"`
	// Normalized is the command as the parser prints it, for the human's summary.
	Normalized string `json:"normalized,omitempty"`
	// AlwaysPatterns are the resolved executable paths "allow always" would persist.
	AlwaysPatterns []string `json:"always_patterns,omitempty"`
	// Segments describe every executed segment (for `check -json`).
	Segments []Segment `json:"segments"`
	// Problems say why the analysis is not OK (line continuation, a variable in command
	// position, …), in the order found.
	Problems []string `json:"problems,omitempty"`
	// Concerns are what the command touches that nothing allows without a human: sensitive
	// paths, the environment's secrets, writes outside the project, network endpoints.
	Concerns []Concern `json:"concerns,omitempty"`
}

// Segment is one executed command found in a command line.
type Segment struct {
	Argv         []string `json:"argv"`
	Executable   string   `json:"executable"`
	ResolvedPath string   `json:"resolved_path,omitempty"`
	// RealPath is ResolvedPath with symlinks resolved, when it differs.
	RealPath string `json:"real_path,omitempty"`
	// SatisfiedBy is "allowlist", "safe_bin", "skill", "builtin" (a shell builtin that only
	// changes the shell's own state), "function" (declared in the same command; its body is
	// judged) or "" (nothing).
	SatisfiedBy string `json:"satisfied_by"`
	// Entry is the allowlist pattern that matched, if any, and EntryArgs its argv pattern.
	Entry     string `json:"entry,omitempty"`
	EntryArgs string `json:"entry_args,omitempty"`
	// ArgsOnly is the argv pattern of an entry for this executable that the arguments did
	// not match (the entry allows other calls of it).
	ArgsOnly string `json:"args_only,omitempty"`
	// Wrappers lists the wrappers unwrapped to reach this segment.
	Wrappers []string `json:"wrappers,omitempty"`
	Writes   []string `json:"writes,omitempty"`
}

// CommandJudge is the shell-command policy.
type CommandJudge interface {
	Judge(in CommandInput) CommandJudgement
}

// PersistedAllowlist supplies allowlist entries stored at run time by "allow always". It
// hands out the same slice, never changed in place, until the entries change (then a new
// one): the judge recompiles only then.
type PersistedAllowlist interface {
	AllowlistEntries() []AllowlistEntry
}

// Engine evaluates calls against one validated configuration.
type Engine struct {
	cfg         Config
	perms       Permissions
	def         Verdict
	globalTier  Tier
	commands    CommandJudge
	askFallback string
	// shellFold maps lower-cased shell tool names to their command argument.
	shellFold map[string]string
	sensitive *Sensitive
}

// NewEngine validates cfg and builds the engine. persisted may be nil.
func NewEngine(cfg Config, persisted PersistedAllowlist) (*Engine, error) {
	cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	perms, err := NewPermissions(cfg.ToolPermissions)
	if err != nil {
		return nil, err
	}
	sensitive, err := cfg.compileSensitive()
	if err != nil {
		return nil, err
	}
	def, _ := ParseVerdict(cfg.Default)
	tier, _ := ParseTier(cfg.ExecTier)
	judge, err := NewCommandJudge(cfg.Exec, persisted, WithSensitive(sensitive))
	if err != nil {
		return nil, err
	}
	fold := make(map[string]string, len(cfg.Exec.ShellTools))
	for name, arg := range cfg.Exec.ShellTools {
		fold[strings.ToLower(name)] = arg
	}
	return &Engine{cfg: cfg, perms: perms, def: def, globalTier: tier, commands: judge, askFallback: cfg.AskFallback,
		shellFold: fold, sensitive: sensitive}, nil
}

// Sensitive is the compiled sensitive path list ([policy] sensitive_paths and
// extra_sensitive_paths): what no tool's arguments may touch without a human.
func (e *Engine) Sensitive() *Sensitive { return e.sensitive }

// Config returns the effective (defaulted) configuration.
func (e *Engine) Config() Config { return e.cfg }

// GlobalTier is [policy] exec_tier.
func (e *Engine) GlobalTier() Tier { return e.globalTier }

// Evaluate judges one call. For shell tools the floor and deny rules come first and nothing
// lowers them; otherwise the lattice's verdict, tightened by the command policy.
func (e *Engine) Evaluate(in Input) Evaluation {
	ev := e.evaluate(in)
	ev.Explicit = explicitAllow(&ev)
	if ev.Verdict == Ask && ev.Reason == "" {
		ev.Reason = e.askReason(in, ev.Rule)
	}
	return ev
}

// askReason says why a human is asked when only the lattice asks (a tool permission, the
// tier or the default), for the card's "why" line: every ask names its reason.
func (e *Engine) askReason(in Input, rule string) string {
	if p, ok := strings.CutPrefix(rule, "tool_permissions."); ok {
		return "the tool permission " + strconv.Quote(p) + " asks a human for this tool"
	}
	if TierVerdict(in.Tier, in.Tool, in.Args, in.Facts) != Ask {
		return `the policy's default is "ask"`
	}
	if Irreversible(in.Tool, in.Args, in.Facts) {
		return "the " + in.Tier.String() + " tier asks a human before an irreversible tool (a delete, purge or vault tool, a destructive hint, a file move or delete)"
	}
	return "the " + in.Tier.String() + " tier asks a human for every tool not declared read-only or idempotent"
}

// explicitAllow says whether an evaluation's allow is explicit (see Evaluation.Explicit).
func explicitAllow(ev *Evaluation) bool {
	if ev.Verdict != Allow || ev.Source != approval.SourcePolicy {
		return false
	}
	if ev.Shell == nil {
		return strings.HasPrefix(ev.Rule, "tool_permissions.")
	}
	j := ev.Shell
	return j.Verdict == Allow && j.Rule == RuleAllowlist && j.AnalysisOK && j.AllowlistSatisfied
}

func (e *Engine) evaluate(in Input) Evaluation {
	verdict, entry := Effective(e.perms, e.def, in.Tier, in.Tool, in.Args, in.Facts)
	ev := Evaluation{Verdict: verdict, Source: approval.SourcePolicy, Rule: entry}
	if entry == "" {
		ev.Rule = "tier." + in.Tier.String()
	}
	cmd, isShell := e.Command(in.Tool, in.Args)
	if !isShell {
		e.judgeToolArgs(in, entry != "", &ev) // toolargs.go
		return ev
	}
	j := e.commands.Judge(CommandInput{Command: cmd, Cwd: in.Cwd, Agent: in.Agent})
	ev.Shell = &j
	if arg, _ := e.shellArg(in.Tool); j.Source != approval.SourceFloor {
		if list, ok := in.Args[arg].([]any); ok {
			// Each element of an argv is also what a careless runner would hand a shell.
			for _, el := range list {
				if line, ok := el.(string); ok && strings.ContainsAny(line, " \t\n;|&$`") {
					if f := e.commands.Judge(CommandInput{Command: line, Cwd: in.Cwd, Agent: in.Agent}); f.Source == approval.SourceFloor {
						j.Verdict, j.Source, j.Rule, j.Reason = f.Verdict, f.Source, f.Rule, f.Reason
						break
					}
				}
			}
		}
	}
	if j.Source == approval.SourceFloor || (j.Source == approval.SourceRule && j.Verdict == Deny) {
		ev.Verdict, ev.Source, ev.Rule, ev.Reason = Deny, j.Source, j.Rule, j.Reason
		return ev
	}
	// The command policy only tightens; when it agrees, its rule is the more telling one.
	if j.Verdict >= ev.Verdict && j.Rule != "" {
		ev.Verdict, ev.Source, ev.Rule, ev.Reason = j.Verdict, j.Source, j.Rule, j.Reason
	}
	return ev
}

// FallbackAllows says whether ask_fallback lets an undeliverable ask run: only with
// ask_fallback = "allowlist" and a shell command the allowlist fully satisfies.
func (e *Engine) FallbackAllows(ev Evaluation) bool {
	return e.askFallback == "allowlist" && ev.Shell != nil && ev.Shell.AnalysisOK && ev.Shell.AllowlistSatisfied &&
		ev.Shell.Source != approval.SourceRule && len(ev.Shell.Concerns) == 0
}
