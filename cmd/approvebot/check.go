package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
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

func cmdCheck(_ context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", "", "config file (TOML); empty uses the embedded defaults")
	cwd := fs.String("cwd", "", "working directory of the call (default: this directory)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	tool := fs.String("tool", "bash", "tool name")
	argsJSON := fs.String("args", "", "tool arguments as a JSON object")
	tier := fs.String("tier", "", "exec tier to evaluate under (default: the configured one)")
	if err := fs.Parse(args); err != nil {
		return &exitError{code: 2}
	}
	cfg, err := config.Load(*configPath)
	if err != nil {
		return err
	}
	engine, err := policy.NewEngine(cfg.Policy, nil)
	if err != nil {
		return err
	}
	var callArgs map[string]any
	switch {
	case *argsJSON != "" && fs.NArg() > 0:
		return &exitError{code: 2, msg: "give either -args or a command after --, not both"}
	case *argsJSON != "":
		dec := json.NewDecoder(strings.NewReader(*argsJSON))
		dec.UseNumber()
		if err := dec.Decode(&callArgs); err != nil || callArgs == nil {
			return &exitError{code: 2, msg: "-args must be a JSON object"}
		}
	case fs.NArg() == 1:
		argName, ok := engine.Config().Exec.ShellTools[*tool]
		if !ok {
			return &exitError{code: 2, msg: fmt.Sprintf("%q is not a shell tool ([policy.exec] shell_tools); use -args", *tool)}
		}
		callArgs = map[string]any{argName: fs.Arg(0)}
	case fs.NArg() > 1:
		return &exitError{code: 2, msg: "give the command line as one argument after --, quoted"}
	default:
		return &exitError{code: 2, msg: "nothing to check: give -args '{…}' or -- 'COMMAND'"}
	}
	if *cwd == "" {
		*cwd, _ = os.Getwd()
	}
	t := engine.GlobalTier()
	if *tier != "" {
		if t, err = policy.ParseTier(*tier); err != nil {
			return &exitError{code: 2, msg: "-tier: " + err.Error()}
		}
	}
	res, err := evaluateOffline(engine, cfg, *tool, callArgs, *cwd, t)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	fmt.Fprintf(stdout, "verdict:     %s (source %s, rule %s)\n", res.Verdict, res.Source, res.Rule)
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
	rec := approval.Request{ID: "", Tool: tool, Cwd: cwd, State: approval.StatePending}
	rec.Summary, rec.Truncated, rec.Details = render.Summarize(tool, args, cmd, isShell)
	rec.Fingerprint = gate.Fingerprint(tool, canonical, cwd)
	res := checkResult{
		Verdict: ev.Verdict.String(), Source: string(ev.Source), Rule: ev.Rule, Reason: ev.Reason,
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
