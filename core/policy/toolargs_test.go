package policy

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/approvebot/approvebot/core/approval"
)

func TestToolWords(t *testing.T) {
	for in, want := range map[string]string{
		"delete_repository":           "delete repository",
		"deleteRepository":            "delete repository",
		"delete-repository":           "delete repository",
		"DeleteRepository":            "delete repository",
		"VaultRead":                   "vault read",
		"HTTPDelete":                  "http delete",
		"getHTTPResponse":             "get http response",
		"s3Delete":                    "s3 delete",
		"mcp__github__delete_repo":    "mcp github delete repo",
		"mcp__filesystem__read_file":  "mcp filesystem read file",
		"str_replace_based_edit_tool": "str replace based edit tool",
		"RUN_CODE":                    "run code",
		"file.ops":                    "file ops",
		"Delete File":                 " delete file",
		"":                            "",
	} {
		if got := strings.Join(ToolWords(in), " "); got != strings.TrimSpace(want) {
			t.Errorf("ToolWords(%q) = %q, want %q", in, got, strings.TrimSpace(want))
		}
	}
}

// The irreversible vocabulary of the auto tier, on the words of the name in any case style.
func TestIrreversibleVocabulary(t *testing.T) {
	none := approval.Facts{}
	for _, tool := range []string{
		"delete_repository", "deleteRepository", "delete-repository", "DeleteRepository", "mcp__github__delete_repo",
		"VaultRead", "read_vault", "mcp__vault__list", "vault",
		"remove_user", "removeUser", "rm_file", "rmdir", "unlink_path", "drop_table", "DropTable", "destroy_stack",
		"purgeCache", "truncate_table", "wipe_disk", "erase-all", "shred_file", "team_disband", "del_key", "RemoveItem",
	} {
		t.Run(tool, func(t *testing.T) {
			if !Irreversible(tool, nil, none) {
				t.Fatal("not in the irreversible tail")
			}
			if v := TierVerdict(TierAuto, tool, nil, none); v != Ask {
				t.Fatalf("auto tier: %v", v)
			}
		})
	}
	for _, tool := range []string{
		"list_deleted_items", "redeploy", "model_info", "formatter", "dropdown_select", "vaulted_ceiling_photos",
		"removal_report_view", "erased_count", "rmq_status", "get_repository", "readme",
	} {
		t.Run(tool, func(t *testing.T) {
			if Irreversible(tool, nil, none) {
				t.Fatal("a name that only contains the letters is in the tail")
			}
		})
	}
}

func TestFileOpsOperation(t *testing.T) {
	ro := approval.Facts{ReadOnly: true}
	cases := []struct {
		tool   string
		args   map[string]any
		tier   Tier
		facts  approval.Facts
		want   Verdict
		reason string
	}{
		{"file_ops", map[string]any{"operation": "DELETE"}, TierAuto, ro, Ask, "case"},
		{"file_ops", map[string]any{"operation": "  Delete  "}, TierAuto, ro, Ask, "spaces"},
		{"file_ops", map[string]any{"operation": "unlink"}, TierAuto, ro, Ask, "synonym unlink"},
		{"file_ops", map[string]any{"operation": "truncate"}, TierAuto, ro, Ask, "synonym truncate"},
		{"file_ops", map[string]any{"operation": "remove-file"}, TierAuto, ro, Ask, "words"},
		{"file_ops", map[string]any{"operation": "deleteFile"}, TierAuto, ro, Ask, "camel case"},
		{"file_ops", map[string]any{"op": "rm"}, TierAuto, ro, Ask, "op"},
		{"file_ops", map[string]any{"Operation": "erase"}, TierAuto, ro, Ask, "key case"},
		{"file_ops", map[string]any{"op": "read", "operation": "delete"}, TierAuto, ro, Ask, "both keys: the worse"},
		{"file_ops", map[string]any{"operation": "Move"}, TierAuto, ro, Ask, "move"},
		{"file_ops", map[string]any{"operation": "rename"}, TierAuto, ro, Ask, "rename"},
		{"fileOps", map[string]any{"operation": "delete"}, TierAuto, ro, Ask, "tool case style"},
		{"mcp__files__file_ops", map[string]any{"op": "delete"}, TierAuto, ro, Ask, "mcp"},
		{"file_ops", map[string]any{"operation": "write"}, TierAuto, ro, Allow, "auto lets a write through"},
		{"file_ops", map[string]any{"operation": "write"}, TierAsk, ro, Ask, "a write is mutating whatever the facts"},
		{"file_ops", map[string]any{"operation": "overwrite"}, TierAsk, approval.Facts{Idempotent: true}, Ask, "idempotent claim"},
		{"file_ops", map[string]any{"operation": "frobnicate"}, TierAsk, ro, Ask, "unknown operation is mutating"},
		{"file_ops", map[string]any{}, TierAsk, ro, Ask, "no operation is mutating"},
		{"file_ops", map[string]any{"operation": 3}, TierAsk, ro, Ask, "not a string"},
		{"file_ops", map[string]any{"operation": "read"}, TierAsk, ro, Allow, "a read-only read"},
		{"file_ops", map[string]any{"operation": "List"}, TierAsk, ro, Allow, "a read-only list"},
		{"file_ops", map[string]any{"operation": "read then delete"}, TierAuto, ro, Ask, "a read that also deletes"},
	}
	for _, c := range cases {
		t.Run(c.reason, func(t *testing.T) {
			if got := TierVerdict(c.tier, c.tool, c.args, c.facts); got != c.want {
				t.Fatalf("%v %v: %v, want %v", c.tool, c.args, got, c.want)
			}
		})
	}
}

func toolEngine(t *testing.T, perms map[string]string) (*Engine, *testEnv) {
	t.Helper()
	env := newTestEnv(t)
	e, err := NewEngine(Config{ToolPermissions: perms, Exec: ExecConfig{Path: env.bin, TrustedDirs: []string{env.bin}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return e, env
}

// Path-like arguments are checked against the sensitive paths — any user's home — and such a
// call is never allowed without a human, whatever would otherwise allow it.
func TestSensitiveToolArguments(t *testing.T) {
	e, _ := toolEngine(t, map[string]string{"Read": "allow", "mcp__filesystem__*": "allow", "blocked_tool": "deny"})
	cases := []struct {
		tool string
		args map[string]any
		want Verdict
	}{
		{"Read", map[string]any{"file_path": "~/.ssh/id_rsa"}, Ask},
		{"Read", map[string]any{"file_path": "/home/alice/.ssh/id_ed25519"}, Ask},
		{"Read", map[string]any{"file_path": "/Users/bob/.aws/credentials"}, Ask},
		{"Read", map[string]any{"file_path": "/repo/.env"}, Ask},
		{"Read", map[string]any{"file_path": ".env.production"}, Ask},
		{"Read", map[string]any{"file_path": `C:\Users\bob\.ssh\id_rsa`}, Ask},
		{"Read", map[string]any{"file_path": "file:///root/.ssh/id_rsa"}, Ask},
		{"Read", map[string]any{"file_path": "/repo/src/../../root/.ssh/id_rsa"}, Ask},
		{"Write", map[string]any{"file_path": "/home/bob/.ssh/authorized_keys", "content": "ssh-ed25519 AAAA"}, Ask},
		{"Edit", map[string]any{"file_path": "/root/.bashrc", "old_string": "a", "new_string": "b"}, Ask},
		{"MultiEdit", map[string]any{"file_path": "~/.zshrc", "edits": []any{map[string]any{"old_string": "a", "new_string": "b"}}}, Ask},
		{"NotebookEdit", map[string]any{"notebook_path": "~/.aws/credentials", "new_source": "x"}, Ask},
		{"read_file", map[string]any{"path": "/etc/shadow"}, Ask},
		{"write_file", map[string]any{"path": "/etc/sudoers.d/agent", "content": "ALL"}, Ask},
		{"mcp__filesystem__read_multiple_files", map[string]any{"paths": []any{"/repo/a.go", "/root/.kube/config"}}, Ask},
		{"mcp__filesystem__move_file", map[string]any{"source": "/repo/a", "destination": "/etc/cron.d/x"}, Ask},
		{"mcp__filesystem__read_file", map[string]any{"path": "/repo/README.md"}, Allow},
		{"str_replace_based_edit_tool", map[string]any{"command": "view", "path": "/root/.git-credentials"}, Ask},
		{"Grep", map[string]any{"pattern": "BEGIN", "path": "~"}, Ask},
		{"Grep", map[string]any{"pattern": "TODO", "path": "/repo/src"}, Allow},
		{"search_file_content", map[string]any{"pattern": "x", "dir_path": "/home/bob"}, Ask},
		{"upload_to_bucket", map[string]any{"local_file": "~/.aws/credentials"}, Ask},
		{"attach", map[string]any{"files": []any{map[string]any{"path": "~/.netrc"}}}, Ask},
		{"read_file", map[string]any{"location": "~/.docker/config.json"}, Ask},
		{"blocked_tool", map[string]any{"path": "~/.ssh/id_rsa"}, Deny},
		// Not paths: contents, and values in tools that are not about files.
		{"Write", map[string]any{"file_path": "/repo/notes.md", "content": "keys live in ~/.ssh/id_rsa"}, Allow},
		{"send_email", map[string]any{"to": "bob@example.com", "body": "see ~/.ssh/id_rsa"}, Allow},
		{"Read", map[string]any{"file_path": "/repo/src/main.go"}, Allow},
	}
	for i, c := range cases {
		t.Run(fmt.Sprintf("%02d-%s", i, c.tool), func(t *testing.T) {
			ev := e.Evaluate(Input{Tool: c.tool, Args: c.args, Cwd: "/repo", Tier: TierAuto})
			if ev.Verdict != c.want {
				t.Fatalf("%v: %v (%s: %s), want %v", c.args, ev.Verdict, ev.Rule, ev.Reason, c.want)
			}
			if c.want == Ask && (ev.Rule != RuleToolSensitive || ev.Explicit) {
				t.Fatalf("rule %q explicit %v", ev.Rule, ev.Explicit)
			}
		})
	}
	// A permitted file tool on an ordinary path is an explicit allow.
	if ev := e.Evaluate(Input{Tool: "Read", Args: map[string]any{"file_path": "/repo/a.go"}, Cwd: "/repo", Tier: TierAsk}); ev.Verdict != Allow || !ev.Explicit {
		t.Fatalf("%+v", ev)
	}
}

func TestExecutorLikeTools(t *testing.T) {
	for tool, want := range map[string]bool{
		"run_code": true, "executeCommand": true, "TerminalRun": true, "python_repl": true, "mcp__desktop__start_process": true,
		"shellExec": true, "RunScript": true, "code-interpreter": true, "evalJS": true,
		"truncate_table": false, "prune_images": false, "encode_base64": false, "runner_status": false,
		"codec_info": false, "processor_list": false, "read_file": false,
	} {
		if got := isExecutor(ToolWords(tool)); got != want {
			t.Errorf("%s executor-like = %v, want %v", tool, got, want)
		}
	}
	e, _ := toolEngine(t, map[string]string{"trusted_runner_exec": "allow"})
	cases := []struct {
		name string
		tool string
		args map[string]any
		want Verdict
		rule string
	}{
		{"command", "executeCommand", map[string]any{"command": "rm -rf /"}, Deny, FloorRmRoot},
		{"cmdline", "run_task", map[string]any{"cmdline": "rm -rf ~"}, Deny, ""},
		{"argv list", "run_process", map[string]any{"args": []any{"rm", "-rf", "/"}}, Deny, ""},
		{"commands list", "TerminalRun", map[string]any{"commands": []any{"ls", "rm -rf /"}}, Deny, ""},
		{"input", "terminal_send", map[string]any{"input": "rm -rf /\n"}, Deny, ""},
		{"script", "run_script", map[string]any{"script": "cd / && rm -rf *"}, Deny, ""},
		{"python code", "run_code", map[string]any{"code": "import os\nos.system('rm -rf /')"}, Deny, ""},
		{"code as shell", "execute_code", map[string]any{"code": "rm -rf /", "language": "bash"}, Deny, ""},
		{"code without language", "code_runner", map[string]any{"code": ":(){ :|:& };:"}, Deny, ""},
		{"nested key case", "RunShell", map[string]any{"Command": "rm -rf /"}, Deny, ""},
		{"harmless, tier alone", "run_code", map[string]any{"code": "print(1)"}, Ask, RuleToolExecutor},
		{"harmless command, tier alone", "executeCommand", map[string]any{"command": "ls"}, Ask, RuleToolExecutor},
		{"no arguments", "start_process", map[string]any{}, Ask, RuleToolExecutor},
		{"permitted", "trusted_runner_exec", map[string]any{"command": "make test"}, Allow, "tool_permissions.trusted_runner_exec"},
		{"permitted but the floor", "trusted_runner_exec", map[string]any{"command": "rm -rf /"}, Deny, ""},
		// Other tools keep today's rule: only command-style arguments meet the floor.
		{"a note that mentions a command", "create_note", map[string]any{"text": "never run rm -rf /"}, Allow, ""},
		{"a renamed shell tool's command", "log_event", map[string]any{"command": "rm -rf /"}, Deny, ""},
		{"not an executor: truncate", "truncate_log", map[string]any{"input": "rm -rf /"}, Ask, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ev := e.Evaluate(Input{Tool: c.tool, Args: c.args, Cwd: "/repo", Tier: TierAuto})
			if ev.Verdict != c.want || c.rule != "" && ev.Rule != c.rule {
				t.Fatalf("%v: %v (%s: %s), want %v %s", c.args, ev.Verdict, ev.Rule, ev.Reason, c.want, c.rule)
			}
			if c.want == Deny && c.rule == "" && ev.Source != approval.SourceFloor {
				t.Fatalf("denied by %s, want the floor", ev.Source)
			}
		})
	}
	// The full tier allows an executor-like tool only when nothing else stops it.
	if ev := e.Evaluate(Input{Tool: "run_code", Args: map[string]any{"code": "print(1)"}, Tier: TierFull}); ev.Verdict != Ask {
		t.Fatalf("full tier: %+v", ev)
	}
}

func TestCommandLinesOfExecutors(t *testing.T) {
	got, _ := commandLines(map[string]any{"args": []any{"echo", "it's"}, "note": "x"}, ToolWords("run"), true)
	want := []string{"echo", "it's", `echo 'it'\''s'`}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q, want %q", got, want)
	}
	got, _ = commandLines(map[string]any{"code": "print(1)", "lang": "Ruby"}, ToolWords("run_code"), true)
	if !reflect.DeepEqual(got, []string{"ruby -e 'print(1)'"}) {
		t.Fatalf("%q", got)
	}
	got, _ = commandLines(map[string]any{"code": "x"}, ToolWords("python_exec"), true)
	if !reflect.DeepEqual(got, []string{"python3 -c x"}) {
		t.Fatalf("%q", got)
	}
}

// BenchmarkEvaluateTool measures the policy for calls of tools that are not shell tools: a
// file read (the sensitive paths), an executor (the floor on its command), a plain tool.
func BenchmarkEvaluateTool(b *testing.B) {
	env := newTestEnv(b)
	e, err := NewEngine(Config{Exec: ExecConfig{Path: env.bin, TrustedDirs: []string{env.bin}}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		in   Input
	}{
		{"read_file", Input{Tool: "Read", Args: map[string]any{"file_path": "/repo/src/main.go"}, Cwd: "/repo", Tier: TierAuto}},
		{"executor", Input{Tool: "run_command", Args: map[string]any{"command": "make test && go vet ./..."}, Cwd: "/repo", Tier: TierAuto}},
		{"plain", Input{Tool: "mcp__github__list_issues", Args: map[string]any{"repo": "o/r", "state": "open"}, Tier: TierAuto}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				e.Evaluate(bc.in)
			}
		})
	}
}
