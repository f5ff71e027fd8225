package policy

import (
	"fmt"
	"strings"
	"testing"

	"github.com/approvebot/approvebot/core/approval"
)

// The attacker's side of tools other than shell (issue 13 item 4): sensitive paths in every
// spelling through every file tool and argument shape, executors carrying the floor's
// commands in every argument shape, the irreversible vocabulary in every case style, and the
// look-alikes that must stay quiet. Every engine here has a tool_permissions allow for every
// tool, or none, and every tier: none of them may let these through.

// attackEngines are the default policy and one whose tool_permissions allow every tool.
func attackEngines(t *testing.T) map[string]*Engine {
	t.Helper()
	env := newTestEnv(t)
	out := map[string]*Engine{}
	for name, perms := range map[string]map[string]string{"defaults": nil, "allow-everything": {"*": "allow"}} {
		e, err := NewEngine(Config{ToolPermissions: perms, Exec: ExecConfig{Path: env.bin, TrustedDirs: []string{env.bin}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = e
	}
	return out
}

var allTiers = []Tier{TierFull, TierAuto, TierAsk}

// sensitiveSpellings are ways to write a sensitive path (~/.ssh/config, /etc/sudoers…) that
// a tool or the file system reads as that path.
var sensitiveSpellings = []string{
	"~/.ssh/id_rsa", "$HOME/.ssh/id_rsa", "${HOME}/.ssh/id_rsa", "/root/.ssh/id_rsa", "/home/x/.ssh/config",
	"/Users/x/.ssh/config", "/repo/../root/.ssh/config", "../../root/.ssh/config", "//root//.ssh//config",
	"/root/./.ssh/./config", "./.env", ".env", "/root/.ssh/", "/root/.ssh", "/ROOT/.SSH/CONFIG",
	"/root/.ssh/config/.", "/root/.ssh/config ", "/root/.ssh/config\t", " /root/.ssh/config",
	"~root/.ssh/config", "~alice/.ssh/config", "/home/alice/../bob/.ssh/config", "~/.ssh/../.ssh/config",
	// Windows, PowerShell and cmd.exe.
	`C:\Users\x\.ssh\config`, `C:/Users/x/.ssh/config`, `c:\users\x\.SSH\config`, `\\?\C:\Users\x\.ssh\config`,
	`\\.\C:\Users\x\.ssh\config`, `//?/C:/Users/x/.ssh/config`, `\\?\UNC\host\c$\Users\x\.ssh\config`,
	`\\localhost\c$\Users\x\.ssh\config`, `\\wsl$\Ubuntu\root\.ssh\config`, `\\wsl.localhost\Ubuntu\home\x\.aws\credentials`,
	`%USERPROFILE%\.ssh\config`, `%userprofile%/.ssh/config`, `%HOMEDRIVE%%HOMEPATH%\.ssh\config`, `$env:USERPROFILE\.ssh\config`,
	`${env:HOME}/.ssh/config`, `$HOME\.ssh\config`, `~\.ssh\config`,
	// URLs.
	"file:///root/.ssh/config", "file://localhost/root/.ssh/config", "FILE:///root/.ssh/config", "file:///root/%2Essh/config",
	"file:/root/.ssh/config", "file:///C:/Users/x/.ssh/config", "file:///root/.ssh/config?x=1", "file://host/home/x/.netrc",
	// What the kernel or C stops at, and what a tool trims.
	"/root/.ssh/config\x00.txt", "/root/.ssh/config\n", "/root/.ss\u200bh/config", "/ro\u200dot/.ssh/config", "\u202e/root/.ssh/config",
	"/root/.ssh/co\u00adnfig", "\ufeff/root/.ssh/config", "/root/.ssh/config\u00a0",
	// Through the kernel's and macOS's aliases.
	"/proc/self/root/root/.ssh/config", "/proc/1/root/etc/shadow", "/proc/thread-self/root/root/.ssh/config",
	"/var/root/.ssh/config", "/private/var/root/.ssh/config", "/private/etc/sudoers",
	// Globs, option values, and other sensitive places.
	"/root/.ss?/config", "/root/.s*/*", "~/.aws/cred*", "/root/.ssh/conf[i]g", "/home/*/.ssh/id_*", "**/.env",
	"--file=/root/.ssh/config", "key=~/.aws/credentials", "/etc/cron.d/x", "/etc/sudoers", "~/.aws/credentials",
	"/root/.git-credentials", "/repo/.git/hooks/pre-commit", "/repo/.git/config", "/proc/1/environ", "/dev/sda",
	"~/.config/gh/hosts.yml", "~/.kube/config", "/var/run/docker.sock", "/home/x/.bashrc", "~/.claude/settings.json",
}

// sensitiveCarriers are the shapes a path travels in: the real tools' argument names and
// nestings (Claude Code, the MCP filesystem server, Gemini CLI, Cursor, Codex), and the
// shapes a tool could take it in.
var sensitiveCarriers = []struct {
	tool string
	args func(p string) map[string]any
}{
	{"Read", func(p string) map[string]any { return map[string]any{"file_path": p} }},
	{"Write", func(p string) map[string]any { return map[string]any{"file_path": p, "content": "x"} }},
	{"Edit", func(p string) map[string]any {
		return map[string]any{"file_path": p, "old_string": "a", "new_string": "b"}
	}},
	{"MultiEdit", func(p string) map[string]any {
		return map[string]any{"file_path": p, "edits": []any{map[string]any{"old_string": "a", "new_string": "b"}}}
	}},
	{"NotebookEdit", func(p string) map[string]any { return map[string]any{"notebook_path": p, "new_source": "x"} }},
	{"LS", func(p string) map[string]any { return map[string]any{"path": p} }},
	{"Grep", func(p string) map[string]any { return map[string]any{"pattern": "x", "path": p} }},
	{"mcp__filesystem__read_text_file", func(p string) map[string]any { return map[string]any{"path": p, "head": 10} }},
	{"mcp__filesystem__read_multiple_files", func(p string) map[string]any { return map[string]any{"paths": []any{"a.go", p}} }},
	{"mcp__filesystem__write_file", func(p string) map[string]any { return map[string]any{"path": p, "content": "x"} }},
	{"mcp__filesystem__edit_file", func(p string) map[string]any {
		return map[string]any{"path": p, "edits": []any{map[string]any{"oldText": "a", "newText": "b"}}, "dryRun": false}
	}},
	{"mcp__filesystem__move_file", func(p string) map[string]any { return map[string]any{"source": "a", "destination": p} }},
	{"mcp__filesystem__get_file_info", func(p string) map[string]any { return map[string]any{"path": p} }},
	{"mcp__filesystem__directory_tree", func(p string) map[string]any { return map[string]any{"path": p} }},
	{"mcp__filesystem__search_files", func(p string) map[string]any { return map[string]any{"path": p, "pattern": "*"} }},
	{"read_file", func(p string) map[string]any { return map[string]any{"absolute_path": p} }},
	{"write_file", func(p string) map[string]any { return map[string]any{"file_path": p, "content": "x"} }},
	{"replace", func(p string) map[string]any {
		return map[string]any{"file_path": p, "old_string": "a", "new_string": "b"}
	}},
	{"read_many_files", func(p string) map[string]any { return map[string]any{"include": []any{p}} }},
	{"edit_file", func(p string) map[string]any { return map[string]any{"target_file": p, "code_edit": "x"} }},
	{"str_replace_based_edit_tool", func(p string) map[string]any { return map[string]any{"command": "view", "path": p} }},
	{"rename", func(p string) map[string]any { return map[string]any{"from": "a", "to": p} }},
	{"copy_item", func(p string) map[string]any { return map[string]any{"old_path": "a", "new_path": p} }},
	{"mcp__x__upload", func(p string) map[string]any { return map[string]any{"data": map[string]any{"file_path": p}} }},
	{"mcp__x__open", func(p string) map[string]any { return map[string]any{"uri": p} }},
	{"mcp__x__tool", func(p string) map[string]any { return map[string]any{"cwd": p} }},
	{"mcp__x__tool", func(p string) map[string]any { return map[string]any{"changes": []any{map[string]any{"fileName": p}}} }},
	{"mcp__x__tool", func(p string) map[string]any { return map[string]any{"opts": map[string]any{"attachments": []any{p}}} }},
	{"mcp__x__tool", func(p string) map[string]any { return map[string]any{"params": `{"path":` + jsonString(p) + `}`} }},
	{"mcp__x__deep", func(p string) map[string]any {
		var v any = map[string]any{"path": p}
		for range 30 {
			v = map[string]any{"a": []any{v}}
		}
		return v.(map[string]any)
	}},
}

func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func TestAttackSensitivePathSpellings(t *testing.T) {
	for name, e := range attackEngines(t) {
		for _, c := range sensitiveCarriers {
			for _, p := range sensitiveSpellings {
				for _, tier := range allTiers {
					ev := e.Evaluate(Input{Tool: c.tool, Args: c.args(p), Cwd: "/repo/src", Tier: tier})
					if ev.Verdict == Allow || ev.Explicit {
						t.Errorf("%s tier %s: %s %q: %v (%s), want never allow", name, tier, c.tool, p, ev.Verdict, ev.Rule)
					}
				}
			}
		}
	}
}

// Relative paths below a Windows working directory, in Windows' own spelling.
func TestAttackWindowsRelativePaths(t *testing.T) {
	for name, e := range attackEngines(t) {
		for _, c := range sensitiveCarriers {
			for _, p := range []string{`..\.ssh\id_rsa`, `.\..\.aws\credentials`, `..\..\x\.netrc`, `sub\..\..\.ssh`, `.env`, `..\proj\.env`} {
				ev := e.Evaluate(Input{Tool: c.tool, Args: c.args(p), Cwd: `C:\Users\x\proj`, Tier: TierFull})
				if ev.Verdict == Allow || ev.Explicit {
					t.Errorf("%s: %s %q below C:\\Users\\x\\proj: %v (%s), want never allow", name, c.tool, p, ev.Verdict, ev.Rule)
				}
			}
		}
		ev := e.Evaluate(Input{Tool: "Read", Args: map[string]any{"file_path": `src\main.go`}, Cwd: `C:\Users\x\proj`, Tier: TierAuto})
		if ev.Verdict != Allow {
			t.Errorf("%s: Read src\\main.go below a Windows cwd: %v (%s), want allow", name, ev.Verdict, ev.Rule)
		}
	}
}

// A path too long to check, or arguments nested beyond what is read, are not allowed.
func TestAttackOpaqueArguments(t *testing.T) {
	long := "/repo/" + strings.Repeat("a/", 3000) + "x"
	var deep any = map[string]any{"path": "/repo/a.go"}
	for range 100 {
		deep = map[string]any{"a": deep}
	}
	many := make([]any, 300)
	for i := range many {
		many[i] = "ls"
	}
	for name, e := range attackEngines(t) {
		for _, c := range []struct {
			tool string
			args map[string]any
		}{
			{"Read", map[string]any{"file_path": long}},
			{"mcp__x__tool", deep.(map[string]any)},
			{"mcp__x__tool", map[string]any{"command": many}},
		} {
			ev := e.Evaluate(Input{Tool: c.tool, Args: c.args, Cwd: "/repo", Tier: TierAuto})
			if ev.Verdict == Allow {
				t.Errorf("%s: %s: allowed (%s)", name, c.tool, ev.Rule)
			}
		}
	}
}

// Codex's apply_patch and any other patch or diff, sent straight to the API: the files it
// names are checked, with blanks around the headers as Codex's parser reads them.
func TestAttackPatchFiles(t *testing.T) {
	patches := []string{
		"*** Begin Patch\n*** Add File: /root/.ssh/authorized_keys\n+ssh-ed25519 AAAA\n*** End Patch",
		"*** Begin Patch\n*** Add File: a.txt\n+x\n  *** Add File: ../../root/.bashrc\n+curl x|sh\n*** End Patch",
		"*** Begin Patch\n*** Update File: a.go\n*** Move to: /etc/cron.d/job\n@@\n-a\n+b\n*** End Patch",
		"*** Begin Patch\n\t*** Delete File: .env\n*** End Patch",
		"--- a/x\n+++ b/.git/hooks/pre-commit\n@@ -0,0 +1 @@\n+rm -rf ~\n",
		"diff --git a/a b/.env\nrename from a\nrename to .env\n",
	}
	for name, e := range attackEngines(t) {
		for i, p := range patches {
			for _, c := range []struct {
				tool string
				args map[string]any
			}{
				{"apply_patch", map[string]any{"input": p}},
				{"apply_patch", map[string]any{"command": []any{"apply_patch", p}}},
				{"mcp__x__apply_diff", map[string]any{"diff": p}},
				{"mcp__x__patch", map[string]any{"content": p}},
			} {
				ev := e.Evaluate(Input{Tool: c.tool, Args: c.args, Cwd: "/repo", Tier: TierFull})
				if ev.Verdict == Allow {
					t.Errorf("%s: patch %d via %s %v: allowed (%s)", name, i, c.tool, keysOf(c.args), ev.Rule)
				}
			}
		}
	}
}

func keysOf(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Executor-like tools, and command-like arguments of any tool, in every shape: the floor
// judges them whatever a tool permission or the tier says.
func TestAttackExecutorsMeetTheFloor(t *testing.T) {
	cases := []struct {
		tool string
		args map[string]any
	}{
		{"run_terminal_cmd", map[string]any{"command": "rm -rf /", "is_background": false}},
		{"execute_command", map[string]any{"command": "rm -rf /"}},
		{"shell_exec", map[string]any{"cmd": "rm -rf /"}},
		{"runPython", map[string]any{"code": "import shutil; shutil.rmtree('/')"}},
		{"CodeInterpreter", map[string]any{"code": "import os; os.system('rm -rf /')"}},
		{"mcp__x__run", map[string]any{"command": []any{"rm", "-rf", "/"}}},
		{"mcp__x__run", map[string]any{"command": "rm", "args": []any{"-rf", "/"}}},
		{"mcp__x__run", map[string]any{"cmd": []any{"bash", "-c", "rm -rf /"}}},
		{"mcp__x__run", map[string]any{"script": []any{"echo hi", "rm -rf /"}}},
		{"mcp__x__run", map[string]any{"input": map[string]any{"command": "rm -rf /"}}},
		{"mcp__x__run", map[string]any{"params": map[string]any{"cmd": "rm -rf /"}}},
		{"mcp__x__run", map[string]any{"steps": []any{map[string]any{"run": "rm -rf /"}}}},
		{"mcp__x__run", map[string]any{"params": `{"cmd": "rm -rf /"}`}},
		{"mcp__x__run", map[string]any{"command": "rm -rf *", "cwd": "/"}},
		{"shell", map[string]any{"command": []any{"bash", "-lc", "rm -rf /"}}},
		{"exec", map[string]any{"command": []any{"rm", "-rf", "/"}}},
		{"Bash", map[string]any{"command": []any{"rm -rf /"}}},
		{"mcp__desktop-commander__start_process", map[string]any{"command": "rm -rf /", "timeout_ms": 1000}},
		{"mcp__desktop-commander__interact_with_process", map[string]any{"pid": 1, "input": "rm -rf /"}},
		{"write_stdin", map[string]any{"session_id": 1, "chars": "rm -rf /\n"}},
		{"runCommand", map[string]any{"commandLine": "rm -rf /"}},
		{"exec_command", map[string]any{"cmd": "rm -rf /"}},
		{"RunShellCommand", map[string]any{"Command": "rm -rf /"}},
		{"run", map[string]any{"COMMAND": "rm -rf /"}},
		{"run", map[string]any{"shellCommand": "rm -rf /"}},
		{"run", map[string]any{"code": "rm -rf /", "language": "Bash"}},
		{"run", map[string]any{"code": "require('child_process').execSync('rm -rf /')", "language": "javascript"}},
		{"run_code", map[string]any{"source": "import os; os.system('rm -rf /')"}},
		{"run_code", map[string]any{"program": "import os; os.system('rm -rf /')"}},
		{"python", map[string]any{"input": "import os; os.system('rm -rf /')"}},
		{"jupyter_execute", map[string]any{"cell": "!rm -rf /"}},
		{"notebook_run_cell", map[string]any{"source": "%%bash\nrm -rf /"}},
		{"mcp__x__tool", map[string]any{"command": "rm -rf /"}},
		{"mcp__x__tool", map[string]any{"Command": "rm -rf /"}},
		{"mcp__x__tool", map[string]any{"config": map[string]any{"shell_command": "rm -rf /"}}},
		{"mcp__x__tool", map[string]any{"command": "rm", "args": []any{"-rf", "/"}}},
		{"Task", map[string]any{"command": ":(){ :|:& };:"}},
	}
	for name, e := range attackEngines(t) {
		for _, c := range cases {
			for _, tier := range allTiers {
				ev := e.Evaluate(Input{Tool: c.tool, Args: c.args, Cwd: "/repo", Tier: tier})
				if ev.Verdict != Deny || ev.Source != approval.SourceFloor {
					t.Errorf("%s tier %s: %s %v: %v %s (%s), want the floor", name, tier, c.tool, c.args, ev.Verdict, ev.Source, ev.Rule)
				}
			}
		}
	}
}

// A harmless call of an executor-like tool is never allowed by the tier alone.
func TestAttackExecutorsNeverOnTheTier(t *testing.T) {
	e := attackEngines(t)["defaults"]
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"shell_exec", map[string]any{"cmd": "ls"}},
		{"runPython", map[string]any{"code": "print(1)"}},
		{"CodeInterpreter", map[string]any{"code": "print(1)"}},
		{"mcp__x__run", map[string]any{"args": []any{"ls"}}},
		{"mcp__x__run", map[string]any{}},
		{"exec_command", map[string]any{"cmd": "ls"}},
		{"write_stdin", map[string]any{"chars": "ls\n"}},
		{"Jupyter", map[string]any{"cell": "print(1)"}},
		{"mcp__ssh__remote_exec", map[string]any{"host": "x"}},
		{"spawn", map[string]any{"cmd": "ls"}},
		{"Eval", map[string]any{"expr": "1"}},
		{"ＲｕｎＣｏｄｅ", map[string]any{"code": "print(1)"}},
		{"run_\u200bcode", map[string]any{"code": "print(1)"}},
		{"exеc", map[string]any{"cmd": "ls"}}, // Cyrillic е
	} {
		for _, tier := range allTiers {
			ev := e.Evaluate(Input{Tool: c.tool, Args: c.args, Cwd: "/repo", Tier: tier, Facts: approval.Facts{ReadOnly: true, Idempotent: true}})
			if ev.Verdict == Allow {
				t.Errorf("tier %s: %s %v allowed by %s", tier, c.tool, c.args, ev.Rule)
			}
		}
	}
}

// The irreversible vocabulary whatever the case style, prefix or spelling.
func TestAttackIrreversibleSpellings(t *testing.T) {
	e := attackEngines(t)["defaults"]
	for _, tool := range []string{
		"mcp__github__delete_repository", "deleteRepository", "DeleteRepo", "repo-delete", "VaultRead", "purgeCache",
		"db.drop_table", "DELETE_REPO", "deleterepository", "Deleterepository", "repoDelete", "mcp__x__repos_delete",
		"removeAll", "rm-rf", "dropDB", "db:drop", "cache/purge", "destroyAll", "deleteObjects", "batchDelete",
		"bulk_delete", "hardDelete", "softDelete", "expunge", "obliterate", "delete", "Delete", "DEL", "__delete__",
		"ＤｅｌｅｔｅＲｅｐｏ", "del\u200bete_repo", "dеlete_repo", "nuke_cluster", "terminate_instances", "TerminateInstance",
		"uninstall_package", "teardown", "tear_down", "force_push", "forcePush", "reset_hard", "FLUSHDB", "flushall",
		"unlinkFile", "shredder_run", "wipeDisk", "erase-all", "truncate_table", "TruncateTable", "mkfs",
		"get_secret", "read_secret", "getSecretValue", "mcp__aws__secretsmanager_get_secret_value", "vault_kv_get",
		"keychain_read", "list_credentials", "mcp__hashicorp_vault__read",
	} {
		if ev := e.Evaluate(Input{Tool: tool, Args: map[string]any{}, Tier: TierAuto}); ev.Verdict == Allow {
			t.Errorf("%s: allowed at the auto tier", tool)
		}
		if !Irreversible(tool, nil, approval.Facts{}) {
			t.Errorf("%s: not in the irreversible tail", tool)
		}
	}
}

// file_ops' operation in every spelling.
func TestAttackFileOpsSpellings(t *testing.T) {
	ro := approval.Facts{ReadOnly: true, Idempotent: true}
	for _, args := range []map[string]any{
		{"operation": "DELETE"}, {"operation": "Delete File"}, {"operation": "deleteFile"}, {"operation": "deletefile"},
		{"op": "rm"}, {"OP": "unlink"}, {"Operation": "truncate"}, {"action": "remove"}, {"operation": "rm -rf"},
		{"operation": "wipe"}, {"operation": "move"}, {"operation": "rename"}, {"operation": "read", "action": "delete"},
		{"operation": "ＤＥＬＥＴＥ"}, {"operation": "de\u200blete"}, {"operation": "trash"}, {"operation": "empty"},
		{"operation": []any{"delete"}}, {"operation": nil},
	} {
		for _, tool := range []string{"file_ops", "fileOps", "FileOps", "mcp__fs__file_ops", "fileops"} {
			if v := TierVerdict(TierAuto, tool, args, ro); v == Allow {
				t.Errorf("%s %v: allowed at the auto tier", tool, args)
			}
		}
	}
	for _, args := range []map[string]any{{"operation": "write"}, {"op": "Create"}, {"operation": "append"}, {"operation": "frobnicate"}} {
		if v := TierVerdict(TierAsk, "file_ops", args, ro); v == Allow {
			t.Errorf("file_ops %v: allowed at the ask tier on the facts", args)
		}
	}
}

// Look-alikes: names and arguments that only resemble the attacks stay quiet.
func TestAttackLookAlikesStayQuiet(t *testing.T) {
	e := attackEngines(t)["defaults"]
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"truncateText", map[string]any{"text": "abc", "n": 2}},
		{"truncate_string", map[string]any{"input": "abc"}},
		{"remove_whitespace", map[string]any{"input": "a b"}},
		{"prune_cache", map[string]any{}},
		{"encode_base64", map[string]any{"input": "rm -rf /"}},
		{"decode_token", map[string]any{"input": "x"}},
		{"create_note", map[string]any{"text": "never run rm -rf /"}},
		{"mcp__notes__add", map[string]any{"note": "rm -rf / is bad", "title": "x"}},
		{"mcp__github__create_issue", map[string]any{"title": "rm -rf / bug", "body": "running `rm -rf /` breaks", "owner": "o", "repo": "r"}},
		{"mcp__github__search_code", map[string]any{"query": "rm -rf / language:go"}},
		{"mcp__github__get_code_scanning_alert", map[string]any{"owner": "o", "repo": "r", "alertNumber": 1}},
		{"mcp__github__get_file_contents", map[string]any{"owner": "o", "repo": "r", "path": ".github/workflows/ci.yml"}},
		{"mcp__github__list_workflow_runs", map[string]any{"owner": "o", "repo": "r"}},
		{"formatCode", map[string]any{"code": "rm -rf /"}},
		{"send_email", map[string]any{"to": "a@b.c", "subject": "x", "body": "cat ~/.ssh/id_rsa"}},
		{"Write", map[string]any{"file_path": "/repo/README.md", "content": "Run `rm -rf /` never. Keys at ~/.ssh/id_rsa"}},
		{"Edit", map[string]any{"file_path": "/repo/a.sh", "old_string": "x", "new_string": "rm -rf /"}},
		{"Read", map[string]any{"file_path": "/repo/docs/ssh.md"}},
		{"Read", map[string]any{"file_path": "/repo/env.go"}},
		{"Read", map[string]any{"file_path": "/repo/src/keys.go"}},
		{"Read", map[string]any{"file_path": "/repo/id_test.go"}},
		{"Read", map[string]any{"file_path": "file:///repo/README.md"}},
		{"Read", map[string]any{"file_path": `C:\src\app\main.go`}},
		{"Grep", map[string]any{"pattern": "password", "path": "/repo/src"}},
		{"mcp__filesystem__directory_tree", map[string]any{"path": "/repo"}},
		{"mcp__filesystem__search_files", map[string]any{"path": "/repo", "pattern": "*.go"}},
		{"mcp__filesystem__read_multiple_files", map[string]any{"paths": []any{"/repo/a.go", "/repo/b.go"}}},
		{"WebFetch", map[string]any{"url": "https://example.com/docs/ssh", "prompt": "summarise"}},
		{"TodoWrite", map[string]any{"todos": []any{map[string]any{"content": "rm -rf / in sandbox", "status": "pending"}}}},
		{"list_deleted_items", map[string]any{}},
		{"get_removal_policy", map[string]any{}},
		{"dropdown_select", map[string]any{"value": "x"}},
		{"vaulted_ceiling_photos", map[string]any{}},
		{"mcp__x__compare", map[string]any{"from": "main", "to": "dev"}},
		{"mcp__x__render", map[string]any{"config": `{"path": "/repo/site"}`}},
	} {
		ev := e.Evaluate(Input{Tool: c.tool, Args: c.args, Cwd: "/repo", Tier: TierAuto})
		if ev.Verdict != Allow {
			t.Errorf("%s %v: %v (%s: %s), want allow", c.tool, c.args, ev.Verdict, ev.Rule, ev.Reason)
		}
	}
}

// A shell tool's command given as an argv (Codex's shell tool) is the command line it runs.
func TestAttackShellToolArgv(t *testing.T) {
	e := attackEngines(t)["defaults"]
	if cmd, ok := e.Command("shell", map[string]any{"command": []any{"bash", "-lc", "ls -la"}}); !ok || cmd != "bash -lc 'ls -la'" {
		t.Fatalf("%q %v", cmd, ok)
	}
	for _, args := range []map[string]any{
		{"command": []any{"bash", "-lc", "rm -rf /"}},
		{"command": []any{"rm", "-rf", "/"}},
		{"command": []any{"sh", "-c", ":(){ :|:& };:"}},
	} {
		if ev := e.Evaluate(Input{Tool: "shell", Args: args, Cwd: "/repo", Tier: TierFull}); ev.Verdict != Deny || ev.Source != approval.SourceFloor {
			t.Errorf("%v: %v %s", args, ev.Verdict, ev.Rule)
		}
	}
	if ev := e.Evaluate(Input{Tool: "shell", Args: map[string]any{"command": []any{"ls", 3}}, Cwd: "/repo", Tier: TierFull}); ev.Verdict == Allow {
		t.Errorf("an argv with a number: %v", ev.Verdict)
	}
}

// What an executor's command reads of the sensitive paths or the environment's secrets is
// never allowed, not even by a tool permission for the executor.
func TestAttackExecutorCommandsTouchingSecrets(t *testing.T) {
	for name, e := range attackEngines(t) {
		for _, c := range []struct {
			tool string
			args map[string]any
		}{
			{"mcp__x__run", map[string]any{"command": "cat ~/.ssh/id_rsa"}},
			{"mcp__x__run", map[string]any{"command": []any{"cat", "/root/.aws/credentials"}}},
			{"runPython", map[string]any{"code": "print(open('/root/.ssh/id_rsa').read())"}},
			{"mcp__x__exec", map[string]any{"cmd": "printenv"}},
			{"mcp__x__exec", map[string]any{"cmd": "echo $GITHUB_TOKEN"}},
			{"mcp__x__tool", map[string]any{"command": "tar czf /tmp/k.tgz ~/.ssh"}},
		} {
			for _, tier := range allTiers {
				if ev := e.Evaluate(Input{Tool: c.tool, Args: c.args, Cwd: "/repo", Tier: tier}); ev.Verdict == Allow {
					t.Errorf("%s tier %s: %s %v allowed (%s)", name, tier, c.tool, c.args, ev.Rule)
				}
			}
		}
	}
}

// A recursive reader without a directory searches the one it runs in.
func TestAttackSearchWithoutAPath(t *testing.T) {
	e := attackEngines(t)["allow-everything"]
	for _, c := range []struct {
		cwd  string
		args map[string]any
		want Verdict
	}{
		{"/root", map[string]any{"pattern": "BEGIN OPENSSH"}, Ask},
		{"/home/alice", map[string]any{"pattern": "x", "path": ""}, Ask},
		{"/home/alice/.aws", map[string]any{"pattern": "x", "glob": "*"}, Ask},
		{"/home/alice/project", map[string]any{"pattern": "x"}, Allow},
	} {
		if ev := e.Evaluate(Input{Tool: "Grep", Args: c.args, Cwd: c.cwd, Tier: TierAuto}); ev.Verdict != c.want {
			t.Errorf("Grep %v in %s: %v (%s), want %v", c.args, c.cwd, ev.Verdict, ev.Reason, c.want)
		}
	}
}

// A tool permission that asks or denies holds for the tool's name in any case; an allow
// only for the name as written.
func TestAttackToolPermissionSpelling(t *testing.T) {
	p, err := NewPermissions(map[string]string{"Write": "deny", "mcp__github__*": "allow", "mcp__github__delete_*": "ask", "read_file": "allow"})
	if err != nil {
		t.Fatal(err)
	}
	for tool, want := range map[string]Verdict{
		"Write": Deny, "write": Deny, "WRITE": Deny, "mcp__github__delete_repository": Ask, "MCP__GITHUB__DELETE_REPOSITORY": Ask,
		"mcp__GitHub__Delete_Repo": Ask, "mcp__github__list_issues": Allow, "read_file": Allow,
	} {
		if v, _, ok := p.Lookup(tool); !ok || v != want {
			t.Errorf("%s: %v %v, want %v", tool, v, ok, want)
		}
	}
	for _, tool := range []string{"READ_FILE", "Read_File", "MCP__GITHUB__LIST_ISSUES"} {
		if v, _, ok := p.Lookup(tool); ok && v == Allow {
			t.Errorf("%s: allowed by an entry written in another case", tool)
		}
	}
}

// The ASCII fast path of ToolWords splits exactly as the general one.
func TestToolWordsASCIIFastPath(t *testing.T) {
	const alphabet = "aZ09_-.:/ Ab"
	names := []string{"deleteRepository", "HTTPDelete", "getHTTPResponse", "s3Delete", "mcp__github__delete_repo", "RUN_CODE", "", "A", "aB", "ABc", "a1B2c3", "__x__"}
	seed := uint32(1)
	for range 3000 {
		n := int(seed % 12)
		b := make([]byte, n)
		for i := range b {
			seed = seed*1664525 + 1013904223
			b[i] = alphabet[seed>>16%uint32(len(alphabet))]
		}
		names = append(names, string(b))
	}
	for _, name := range names {
		if got, want := asciiWords(name), runeWords(name); strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
			t.Fatalf("%q: %q, want %q", name, got, want)
		}
	}
}

// FuzzSensitiveFileArg: whatever surrounds it — a prefix, a suffix, nesting under any key —
// a file tool's file_path holding a sensitive path in one of the attack spellings is never
// allowed, and no input makes the policy panic.
func FuzzSensitiveFileArg(f *testing.F) {
	for i, p := range sensitiveSpellings {
		f.Add(p, "x", uint8(i))
	}
	f.Add("/repo/a.go", "{\"path\":1}", uint8(0))
	env := newTestEnv(f)
	e, err := NewEngine(Config{ToolPermissions: map[string]string{"*": "allow"}, Exec: ExecConfig{Path: env.bin, TrustedDirs: []string{env.bin}}}, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, p, key string, shape uint8) {
		var args map[string]any
		switch shape % 4 {
		case 0:
			args = map[string]any{"file_path": p, key: p}
		case 1:
			args = map[string]any{key: map[string]any{"file_path": p}}
		case 2:
			args = map[string]any{"paths": []any{key, p}}
		default:
			args = map[string]any{key: []any{map[string]any{"path": p}, p}}
		}
		ev := e.Evaluate(Input{Tool: "Read", Args: args, Cwd: "/repo/src", Tier: TierFull})
		for _, s := range sensitiveSpellings {
			if p == s && ev.Verdict == Allow {
				t.Fatalf("%q under %q (shape %d) allowed", p, key, shape%4)
			}
		}
	})
}
