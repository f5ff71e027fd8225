package main

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/approvebot/approvebot/client"
	"io"
	"os"
	"strings"

	"github.com/approvebot/approvebot/config"
	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/gate"
	"github.com/approvebot/approvebot/core/policy"
	"github.com/approvebot/approvebot/core/render"
)

// checkResult is the one JSON object `check -json` prints; other tools parse these names.
type checkResult struct {
	Verdict     string               `json:"verdict"`
	Explicit    bool                 `json:"explicit"`
	Source      string               `json:"source"`
	Rule        string               `json:"rule"`
	Reason      string               `json:"reason"`
	Summary     string               `json:"summary"`
	Truncated   bool                 `json:"truncated"`
	Fingerprint string               `json:"fingerprint"`
	Tool        string               `json:"tool"`
	Tier        string               `json:"tier"`
	AnalysisOK  *bool                `json:"analysis_ok,omitempty"`
	Segments    []policy.Segment     `json:"segments,omitempty"`
	Concerns    []policy.Concern     `json:"concerns,omitempty"`
	Cards       render.PlatformCards `json:"cards"`
}

// check's exit codes: the verdict, or exitCheckError for a usage or config error.
const (
	exitCheckAsk   = 1
	exitCheckDeny  = 2
	exitCheckError = 3
)

func cmdCheck(_ context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("check", "check [flags] -- 'COMMAND LINE'   |   check [flags] -tool TOOL -args '{…}'\n"+
		"Exit 0 allow, 1 ask, 2 deny, 3 usage or config error.", stderr)
	configPath := fs.String("config", "", "config file (TOML); empty uses the embedded defaults")
	cwd := fs.String("cwd", "", "working directory of the call (default: this directory)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	tool := fs.String("tool", "bash", "tool name")
	argsJSON := fs.String("args", "", "tool arguments as a JSON object")
	tier := fs.String("tier", "", "exec tier to evaluate under (default: the configured one)")
	if err := fs.Parse(args); err != nil {
		return parseError(err, exitCheckError)
	}
	usage := func(msg string) error {
		fs.Usage()
		return &exitError{code: exitCheckError, msg: msg}
	}
	cfg, err := config.Load(*configPath)
	if err != nil {
		return &exitError{code: exitCheckError, msg: err.Error()}
	}
	engine, err := policy.NewEngine(cfg.Policy, nil)
	if err != nil {
		return &exitError{code: exitCheckError, msg: err.Error()}
	}
	var callArgs map[string]any
	switch {
	case *argsJSON != "" && fs.NArg() > 0:
		return usage("give either -args or a command after --, not both")
	case *argsJSON != "":
		m, err := client.StrictObject([]byte(*argsJSON))
		if err != nil {
			return usage("-args must be one JSON object: " + err.Error())
		}
		callArgs = m
	case fs.NArg() == 1:
		argName, ok := engine.Config().Exec.ShellTools[*tool]
		if !ok {
			return usage(fmt.Sprintf("%q is not a shell tool ([policy.exec] shell_tools); use -args", *tool))
		}
		callArgs = map[string]any{argName: fs.Arg(0)}
	case fs.NArg() > 1:
		return usage("give the command line as one argument after --, quoted")
	default:
		return usage("nothing to check: give -args '{…}' or -- 'COMMAND'")
	}
	if *cwd == "" {
		*cwd, _ = os.Getwd()
	}
	t := engine.GlobalTier()
	if *tier != "" {
		if t, err = policy.ParseTier(*tier); err != nil {
			return usage("-tier: " + err.Error())
		}
	}
	res, err := evaluateOffline(engine, cfg, *tool, callArgs, *cwd, t)
	if err != nil {
		return &exitError{code: exitCheckError, msg: err.Error()}
	}
	if err := printCheck(stdout, res, *asJSON); err != nil {
		return &exitError{code: exitCheckError, msg: err.Error()}
	}
	switch res.Verdict {
	case policy.Allow.String():
		return nil
	case policy.Ask.String():
		return &exitError{code: exitCheckAsk}
	}
	return &exitError{code: exitCheckDeny}
}

func printCheck(stdout io.Writer, res checkResult, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	explicit := ""
	if res.Explicit {
		explicit = ", explicit"
	}
	fmt.Fprintf(stdout, "verdict:     %s (source %s, rule %s%s)\n", res.Verdict, res.Source, res.Rule, explicit)
	if res.Reason != "" {
		fmt.Fprintf(stdout, "reason:      %s\n", res.Reason)
	}
	fmt.Fprintf(stdout, "summary:     %s\n", res.Summary)
	fmt.Fprintf(stdout, "fingerprint: %s\n", res.Fingerprint)
	for i, s := range res.Segments {
		by := s.SatisfiedBy
		if by == "" {
			by = "nothing"
		}
		fmt.Fprintf(stdout, "segment %d:   %s → %s (satisfied by %s)\n", i+1, strings.Join(s.Argv, " "), s.ResolvedPath, by)
	}
	return nil
}

// evaluateOffline runs the policy for one call the way the gate would, minus the session
// memory (grants, ledger, pause), which needs the server.
func evaluateOffline(engine *policy.Engine, cfg *config.Config, tool string, args map[string]any, cwd string, tier policy.Tier) (checkResult, error) {
	canonical, err := gate.Canonical(args)
	if err != nil {
		return checkResult{}, err
	}
	ev := engine.Evaluate(policy.Input{Tool: tool, Args: args, Cwd: cwd, Tier: tier})
	cmd, isShell := engine.Command(tool, args)
	if isShell && ev.Shell != nil && ev.Shell.AnalysisOK && ev.Shell.Normalized != "" {
		cmd = ev.Shell.Normalized
	}
	rec := approval.Request{ID: "", Tool: tool, Cwd: cwd, State: approval.StatePending, Rule: ev.Rule, AskReason: gate.AskReason(ev)}
	rec.Summary, rec.Truncated, rec.Details = render.Summarize(tool, args, cmd, isShell)
	if rec.Fingerprint, err = gate.CallFingerprint(tool, args, canonical, cwd, isShell); err != nil {
		return checkResult{}, err
	}
	res := checkResult{
		Verdict: ev.Verdict.String(), Explicit: ev.Verdict == policy.Allow && ev.Explicit, Source: string(ev.Source), Rule: ev.Rule, Reason: ev.Reason,
		Summary: rec.Summary, Truncated: rec.Truncated, Fingerprint: rec.Fingerprint, Tool: tool, Tier: tier.String(),
	}
	if ev.Shell != nil {
		ok := ev.Shell.AnalysisOK
		res.AnalysisOK = &ok
		res.Segments = ev.Shell.Segments
		res.Concerns = ev.Shell.Concerns
		rec.AlwaysPatterns = ev.Shell.AlwaysPatterns
		rec.ShowAllowAlways = engine.Config().AllowAlways == "persist" && len(rec.AlwaysPatterns) > 0
	}
	res.Cards = checkCards(&rec, cfg)
	return res, nil
}
