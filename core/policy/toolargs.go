package policy

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/approvebot/approvebot/core/approval"
)

// Tools other than the shell tools: what their names and arguments say. A tool's name is read
// as words whatever its case style (delete_repository, deleteRepository, delete-repository,
// VaultRead); file_ops' operation is read the same way; path-like arguments are checked
// against the sensitive paths; executor-like tools (run_code, executeCommand…) have their
// commands and code judged like a shell command line and are never allowed by the tier alone.

// Rule names of what this file decides.
const (
	RuleToolSensitive = "tool.sensitive" // a path-like argument names a sensitive path
	RuleToolExecutor  = "tool.executor"  // an executor-like tool that only the tier would allow
)

// ToolWords splits a tool name (or any identifier) into lower-case words: at every character
// that is not a letter or digit, and where the case changes from lower to upper
// (deleteRepository) or an upper-case run ends before a lower-case letter (HTTPDelete: http,
// delete). Digits stay with the letters before them (s3Delete: s3, delete).
func ToolWords(name string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(name)
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			continue
		}
		if unicode.IsUpper(r) && len(cur) > 0 {
			prev := rs[i-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || unicode.IsUpper(prev) && nextLower {
				flush()
			}
		}
		cur = append(cur, r)
	}
	flush()
	return words
}

// irreversibleWords are the words of a tool name that make it part of the auto tier's
// irreversible tail.
var irreversibleWords = map[string]bool{
	"delete": true, "del": true, "remove": true, "rm": true, "rmdir": true, "unlink": true,
	"drop": true, "destroy": true, "purge": true, "truncate": true, "wipe": true, "erase": true,
	"shred": true, "disband": true, "vault": true,
}

// fileOp is what a file_ops call does, from the most to the least severe.
type fileOp int

const (
	fileOpRead fileOp = iota
	fileOpUnknown
	fileOpWrite
	fileOpMove
	fileOpDestroy
)

var fileOpWords = map[string]fileOp{
	"delete": fileOpDestroy, "del": fileOpDestroy, "remove": fileOpDestroy, "rm": fileOpDestroy,
	"rmdir": fileOpDestroy, "unlink": fileOpDestroy, "erase": fileOpDestroy, "destroy": fileOpDestroy,
	"purge": fileOpDestroy, "wipe": fileOpDestroy, "truncate": fileOpDestroy, "drop": fileOpDestroy,
	"shred": fileOpDestroy, "clear": fileOpDestroy,
	"move": fileOpMove, "mv": fileOpMove, "rename": fileOpMove, "ren": fileOpMove,
	"write": fileOpWrite, "overwrite": fileOpWrite, "create": fileOpWrite, "append": fileOpWrite,
	"replace": fileOpWrite, "put": fileOpWrite, "save": fileOpWrite, "edit": fileOpWrite,
	"update": fileOpWrite, "modify": fileOpWrite, "patch": fileOpWrite, "insert": fileOpWrite,
	"set": fileOpWrite, "chmod": fileOpWrite, "chown": fileOpWrite, "copy": fileOpWrite,
	"cp": fileOpWrite, "touch": fileOpWrite, "mkdir": fileOpWrite, "upload": fileOpWrite,
	"link": fileOpWrite, "symlink": fileOpWrite, "ln": fileOpWrite,
	"read": fileOpRead, "list": fileOpRead, "ls": fileOpRead, "stat": fileOpRead, "exists": fileOpRead,
	"get": fileOpRead, "cat": fileOpRead, "view": fileOpRead, "search": fileOpRead, "find": fileOpRead,
	"glob": fileOpRead, "info": fileOpRead, "head": fileOpRead, "tail": fileOpRead, "show": fileOpRead,
	"tree": fileOpRead,
}

// isFileOps reports the file_ops tool in any case style (file_ops, fileOps, FileOps,
// mcp__x__file_ops).
func isFileOps(words []string) bool {
	n := len(words)
	return n >= 2 && words[n-2] == "file" && words[n-1] == "ops"
}

// fileOpOf reads file_ops' operation ("operation" or "op", any case): the most severe thing
// any of its words says. Read operations are only those it names and nothing else; a value
// that names nothing known, or none, is unknown (mutating).
func fileOpOf(args map[string]any) fileOp {
	op, found := fileOpUnknown, false
	for k, v := range args {
		if !strings.EqualFold(k, "operation") && !strings.EqualFold(k, "op") {
			continue
		}
		s, ok := v.(string)
		if !ok {
			return fileOpUnknown
		}
		this, known := fileOpRead, false
		for _, w := range ToolWords(s) {
			if o, ok := fileOpWords[w]; ok {
				known = true
				this = max(this, o)
			}
		}
		if !known {
			this = fileOpUnknown
		}
		if !found || this > op || op == fileOpRead && this == fileOpUnknown {
			op, found = this, true
		}
	}
	return op
}

// mutatingDespiteFacts reports a call that is mutating whatever facts its agent declares: a
// file_ops write (the server cannot see whether the file exists) or any file_ops operation
// that is not a plain read.
func mutatingDespiteFacts(tool string, args map[string]any) bool {
	return isFileOps(ToolWords(tool)) && fileOpOf(args) != fileOpRead
}

// commandLikeArgs are argument names that carry a command line in tools the config does not
// name as shell tools. The floor is applied to them too, so a renamed shell tool (a custom
// "run" tool, an MCP server's "execute") cannot carry `rm -rf /` past it.
var commandLikeArgs = []string{"command", "cmd", "script", "command_line", "commandLine", "shell_command"}

// executorWords are the words of a tool name that make it executor-like.
var executorWords = map[string]bool{
	"exec": true, "execute": true, "run": true, "shell": true, "terminal": true, "command": true,
	"process": true, "python": true, "code": true, "cmd": true, "bash": true, "powershell": true,
	"pwsh": true, "eval": true, "repl": true, "interpreter": true, "script": true,
}

// executorArgWords are the words of an executor-like tool's argument names that carry
// commands (strings, or lists of strings); codeArgWords those that carry interpreter code.
var (
	executorArgWords = map[string]bool{
		"command": true, "commands": true, "cmd": true, "cmds": true, "cmdline": true, "script": true,
		"scripts": true, "input": true, "args": true, "argv": true,
	}
	codeArgWords = map[string]bool{"code": true}
)

// interpreters maps a language an executor names to the command line that runs code in it;
// the code is appended, quoted.
var interpreters = map[string]string{
	"python": "python3 -c ", "python3": "python3 -c ", "py": "python3 -c ",
	"javascript": "node -e ", "js": "node -e ", "node": "node -e ", "nodejs": "node -e ", "typescript": "node -e ",
	"ruby": "ruby -e ", "rb": "ruby -e ", "perl": "perl -e ", "php": "php -r ",
	"powershell": "pwsh -Command ", "pwsh": "pwsh -Command ",
	"bash": "", "sh": "", "shell": "", "zsh": "",
}

// pathArgWords are the words of argument names that carry file paths, in any tool.
var pathArgWords = map[string]bool{
	"path": true, "paths": true, "file": true, "files": true, "filename": true, "filenames": true,
	"filepath": true, "dir": true, "dirs": true, "directory": true, "directories": true,
	"folder": true, "folders": true, "source": true, "sources": true, "src": true,
	"destination": true, "dest": true, "dst": true, "target": true, "notebook": true,
}

// fileToolWords are the words of a tool name that make it a file tool: there every
// argument whose value looks like a path is checked, whatever its name.
var fileToolWords = map[string]bool{
	"file": true, "files": true, "fs": true, "filesystem": true, "read": true, "write": true,
	"edit": true, "notebook": true, "dir": true, "directory": true, "folder": true, "ls": true,
	"glob": true, "grep": true, "cat": true, "patch": true, "editor": true, "replace": true,
	"path": true, "upload": true, "download": true, "copy": true, "move": true, "mkdir": true,
	"tree": true, "search": true,
}

// treeToolWords make a tool a recursive reader: a directory it is given is read below.
var treeToolWords = map[string]bool{
	"grep": true, "rg": true, "ripgrep": true, "search": true, "tree": true, "many": true, "recursive": true,
}

// contentArgWords are the words of argument names whose values are contents, not paths.
var contentArgWords = map[string]bool{
	"content": true, "contents": true, "text": true, "body": true, "data": true, "string": true,
	"message": true, "description": true, "prompt": true, "pattern": true, "query": true,
	"regex": true, "comment": true, "title": true, "note": true, "summary": true,
}

// maxArgDepth bounds how deep nested arguments are searched.
const maxArgDepth = 16

// judgeToolArgs applies to a call of a tool that is not a shell tool what its name and
// arguments say: the floor (and exec deny rules, for executor-like tools) on its commands and
// code, the sensitive paths on its path-like arguments, and the executor rule. explicit says
// whether a tool_permissions entry decided the verdict.
func (e *Engine) judgeToolArgs(in Input, explicit bool, ev *Evaluation) {
	words := ToolWords(in.Tool)
	executor := anyWord(words, executorWords)
	for _, line := range commandLines(in.Args, words, executor) {
		j := e.commands.Judge(CommandInput{Command: line, Cwd: in.Cwd, Agent: in.Agent})
		if j.Source == approval.SourceFloor || executor && j.Source == approval.SourceRule && j.Verdict == Deny {
			ev.Verdict, ev.Source, ev.Rule, ev.Reason = Deny, j.Source, j.Rule, j.Reason
			return
		}
	}
	if p, glob, ok := e.sensitiveArg(in, words); ok {
		ev.Verdict = Tighter(ev.Verdict, Ask)
		if ev.Verdict == Ask {
			ev.Source, ev.Rule = approval.SourcePolicy, RuleToolSensitive
			ev.Reason = "an argument names the sensitive path " + p + " (" + glob + ")"
		}
		return
	}
	if executor && !explicit && ev.Verdict == Allow {
		ev.Verdict, ev.Source, ev.Rule = Ask, approval.SourcePolicy, RuleToolExecutor
		ev.Reason = in.Tool + " runs commands or code: the tier alone does not allow it"
	}
}

func anyWord(words []string, set map[string]bool) bool {
	for _, w := range words {
		if set[w] {
			return true
		}
	}
	return false
}

// commandLines returns the command lines a call carries: for any tool the string values of
// commandLikeArgs; for an executor-like tool also every string or list of strings under an
// argument whose name has a command word (each element as a line, and the list as an argv),
// and the code under a "code" argument as its interpreter would run it.
func commandLines(args map[string]any, toolWords []string, executor bool) []string {
	var lines []string
	if !executor {
		for _, name := range commandLikeArgs {
			if line, ok := args[name].(string); ok && line != "" {
				lines = append(lines, line)
			}
		}
		return lines
	}
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		kw := ToolWords(k)
		switch {
		case anyWord(kw, codeArgWords):
			if code, ok := args[k].(string); ok && code != "" {
				lines = append(lines, codeLines(code, args, toolWords)...)
			}
		case anyWord(kw, executorArgWords):
			switch v := args[k].(type) {
			case string:
				if v != "" {
					lines = append(lines, v)
				}
			case []any:
				var argv []string
				for _, el := range v {
					if s, ok := el.(string); ok {
						if s != "" {
							lines = append(lines, s)
						}
						argv = append(argv, quoteWord(s))
					}
				}
				if len(argv) > 1 {
					lines = append(lines, strings.Join(argv, " "))
				}
			}
		}
	}
	return lines
}

// codeLines is the command line that runs code in the language the call or the tool names,
// as python by default (the scan of `python -c`); code in a shell language is judged as it
// is, and code in no known language both ways.
func codeLines(code string, args map[string]any, toolWords []string) []string {
	lang, named := "", false
	for k, v := range args {
		switch strings.ToLower(k) {
		case "language", "lang", "runtime", "interpreter", "kernel":
			if s, ok := v.(string); ok {
				lang, named = strings.ToLower(strings.TrimSpace(s)), true
			}
		}
	}
	if !named {
		for _, w := range toolWords {
			if _, ok := interpreters[w]; ok {
				lang, named = w, true
				break
			}
		}
	}
	if prefix, ok := interpreters[lang]; ok {
		if prefix == "" {
			return []string{code}
		}
		return []string{prefix + quoteWord(code)}
	}
	// Unknown or no language: the python scan, and the shell's.
	return []string{interpreters["python"] + quoteWord(code), code}
}

// quoteWord quotes s for a POSIX shell.
func quoteWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("-_./=:,@%+", r)))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// sensitiveArg finds a path-like argument that names a sensitive path: the value of every
// argument named like a path (file_path, path, paths, source, destination…), at any depth,
// and in a file tool also every value that looks like a path, whatever its name. Paths are
// taken against the request's cwd and any user's home. In a recursive reader (grep, search)
// a directory counts when a sensitive path lies below it.
func (e *Engine) sensitiveArg(in Input, toolWords []string) (p, glob string, ok bool) {
	s := e.sensitive
	if s == nil {
		return "", "", false
	}
	fileTool := anyWord(toolWords, fileToolWords)
	tree := anyWord(toolWords, treeToolWords)
	if r, ok := in.Args["recursive"].(bool); ok && r {
		tree = true
	}
	var walk func(v any, named bool, depth int) bool
	check := func(v string) bool {
		if v == "" || len(v) > 4096 || strings.ContainsAny(v, "\n\x00") {
			return false
		}
		if rest, ok := strings.CutPrefix(v, "file://"); ok {
			v = strings.TrimPrefix(rest, "localhost")
		}
		if g, ok := s.Match(v, in.Cwd, ""); ok {
			p, glob = v, g
			return true
		}
		if tree {
			if g, ok := s.MatchTree(v, in.Cwd, ""); ok {
				p, glob = v, g
				return true
			}
		}
		return false
	}
	walk = func(v any, named bool, depth int) bool {
		if depth > maxArgDepth {
			return false
		}
		switch x := v.(type) {
		case string:
			return (named || fileTool && looksLikePath(x)) && check(x)
		case []any:
			for _, el := range x {
				if walk(el, named, depth+1) {
					return true
				}
			}
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				kw := ToolWords(k)
				if anyWord(kw, contentArgWords) && !anyWord(kw, pathArgWords) {
					continue
				}
				if walk(x[k], anyWord(kw, pathArgWords), depth+1) {
					return true
				}
			}
		}
		return false
	}
	if walk(in.Args, false, 0) {
		return p, glob, true
	}
	return "", "", false
}

// looksLikePath reports a value written as a path: from the root, a home, the current or
// parent directory, a drive, or with a directory separator and no blank; or a dotfile name.
func looksLikePath(v string) bool {
	if v == "" || len(v) > 4096 || strings.ContainsAny(v, "\n\x00") {
		return false
	}
	switch {
	case strings.HasPrefix(v, "/"), strings.HasPrefix(v, "~"), strings.HasPrefix(v, "./"), strings.HasPrefix(v, "../"),
		strings.HasPrefix(v, "$HOME"), strings.HasPrefix(v, "${HOME}"), strings.HasPrefix(v, `\\`),
		strings.HasPrefix(v, "file:"):
		return true
	case len(v) >= 3 && v[1] == ':' && (v[2] == '\\' || v[2] == '/') && unicode.IsLetter(rune(v[0])):
		return true
	case strings.ContainsAny(v, " \t"):
		return false
	case strings.ContainsAny(v, `/\`), strings.HasPrefix(v, ".") && len(v) > 1:
		return true
	}
	return false
}
