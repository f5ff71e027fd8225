package policy

import (
	"encoding/json"
	"path"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/approvebot/approvebot/core/approval"
)

// Tools other than the shell tools: what their names and arguments say. A tool's name is read
// as words whatever its case style (delete_repository, deleteRepository, delete-repository,
// VaultRead, deleterepository); file_ops' operation is read the same way; path-like arguments
// are checked against the sensitive paths in every spelling a tool or the file system reads
// (toolargs_paths.go); executor-like tools (run_code, executeCommand…) have their commands and
// code judged like a shell command line and are never allowed by the tier alone.

// Rule names of what this file decides.
const (
	RuleToolSensitive = "tool.sensitive" // a path-like argument names a sensitive path
	RuleToolExecutor  = "tool.executor"  // an executor-like tool that only the tier would allow
	// RuleToolOpaque: arguments nested or repeated beyond what the policy reads; what it
	// cannot read it cannot allow.
	RuleToolOpaque = "tool.opaque"
)

// ToolWords splits a tool name (or any identifier) into lower-case words: at every character
// that is not a letter or digit, and where the case changes from lower to upper
// (deleteRepository) or an upper-case run ends before a lower-case letter (HTTPDelete: http,
// delete). Digits stay with the letters before them (s3Delete: s3, delete). Full-width forms
// and the Cyrillic and Greek letters that look like Latin ones are read as those (ＤｅｌｅｔｅＲｅｐｏ,
// dеlete with a Cyrillic е), and invisible characters are dropped (del\u200bete), so a name
// that looks like a word is that word.
func ToolWords(name string) []string {
	if isASCII(name) {
		return asciiWords(name)
	}
	return runeWords(name)
}

// runeWords is ToolWords for any name.
func runeWords(name string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := foldName(name)
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

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// asciiWords is ToolWords for an ASCII name, on bytes: the same splits, no allocation
// beyond the words.
func asciiWords(name string) []string {
	isUpper := func(c byte) bool { return 'A' <= c && c <= 'Z' }
	isLower := func(c byte) bool { return 'a' <= c && c <= 'z' }
	isDigit := func(c byte) bool { return '0' <= c && c <= '9' }
	words := make([]string, 0, 4)
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			words = append(words, strings.ToLower(name[start:end]))
		}
		start = -1
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !isUpper(c) && !isLower(c) && !isDigit(c) {
			flush(i)
			continue
		}
		if isUpper(c) && start >= 0 {
			prev := name[i-1]
			nextLower := i+1 < len(name) && isLower(name[i+1])
			if isLower(prev) || isDigit(prev) || isUpper(prev) && nextLower {
				flush(i)
			}
		}
		if start < 0 {
			start = i
		}
	}
	flush(len(name))
	return words
}

// foldName reads a name as the ASCII it looks like: full-width forms as ASCII, look-alike
// Cyrillic and Greek letters as Latin ones, invisible format characters dropped.
func foldName(name string) []rune {
	out := make([]rune, 0, len(name))
	for _, r := range name {
		switch {
		case r < utf8.RuneSelf:
		case r >= 0xFF01 && r <= 0xFF5E:
			r -= 0xFF01 - '!'
		case unicode.Is(unicode.Cf, r):
			continue
		default:
			if l, ok := lookalikes[r]; ok {
				r = l
			}
		}
		out = append(out, r)
	}
	return out
}

// lookalikes are Cyrillic and Greek letters drawn like Latin ones.
var lookalikes = map[rune]rune{
	'а': 'a', 'е': 'e', 'о': 'o', 'р': 'p', 'с': 'c', 'у': 'y', 'х': 'x', 'і': 'i', 'ј': 'j', 'ѕ': 's',
	'ԁ': 'd', 'ԛ': 'q', 'ԝ': 'w', 'һ': 'h', 'ӏ': 'l', 'к': 'k', 'м': 'm', 'т': 't', 'в': 'b', 'н': 'h',
	'А': 'A', 'В': 'B', 'Е': 'E', 'К': 'K', 'М': 'M', 'Н': 'H', 'О': 'O', 'Р': 'P', 'С': 'C', 'Т': 'T',
	'Х': 'X', 'У': 'Y', 'І': 'I', 'Ј': 'J', 'Ѕ': 'S', 'Ԁ': 'D',
	'α': 'a', 'ο': 'o', 'ρ': 'p', 'ε': 'e', 'ι': 'i', 'κ': 'k', 'ν': 'v', 'τ': 't', 'υ': 'u', 'χ': 'x',
	'Α': 'A', 'Β': 'B', 'Ε': 'E', 'Ζ': 'Z', 'Η': 'H', 'Ι': 'I', 'Κ': 'K', 'Μ': 'M', 'Ν': 'N', 'Ο': 'O',
	'Ρ': 'P', 'Τ': 'T', 'Υ': 'Y', 'Χ': 'X',
}

// irreversibleWords are the words of a tool name that make it part of the auto tier's
// irreversible tail: destroying, and reading secrets (which cannot be taken back).
var irreversibleWords = map[string]bool{
	"delete": true, "del": true, "remove": true, "rm": true, "rmdir": true, "rmrf": true, "unlink": true,
	"drop": true, "destroy": true, "purge": true, "truncate": true, "wipe": true, "erase": true,
	"shred": true, "disband": true, "vault": true,
	"expunge": true, "obliterate": true, "nuke": true, "annihilate": true, "terminate": true,
	"uninstall": true, "deprovision": true, "decommission": true, "teardown": true, "mkfs": true,
	"flushall": true, "flushdb": true,
	"secret": true, "secrets": true, "secretsmanager": true, "credential": true, "credentials": true,
	"password": true, "passwords": true, "passwd": true, "keychain": true, "keyring": true, "keyvault": true,
}

// irreversiblePhrases are pairs of words that together name an irreversible action.
var irreversiblePhrases = [][2]string{{"force", "push"}, {"tear", "down"}, {"reset", "hard"}, {"hard", "reset"}}

// compoundVerbs are the irreversible verbs also recognised at the start of a word written
// without separators (deleterepository, purgecache): a word that starts with one and goes on
// with anything but an inflection (deleted, remover, removal) is that verb and its object.
var compoundVerbs = []string{
	"delete", "remove", "destroy", "purge", "truncate", "erase", "unlink", "shred", "wipe", "expunge",
	"obliterate", "terminate", "uninstall", "deprovision", "decommission", "vault", "nuke",
}

// inflections are the endings that make a verb a description rather than an action.
var inflections = map[string]bool{
	"d": true, "ed": true, "r": true, "rs": true, "er": true, "ers": true, "al": true, "als": true,
	"ion": true, "ions": true, "able": true, "ure": true,
}

// dropObjects are what "drop" destroys when written together with it (dropdb, droptable):
// "drop" alone is too common a prefix (dropdown) to read more into it.
var dropObjects = map[string]bool{
	"db": true, "database": true, "databases": true, "table": true, "tables": true, "schema": true,
	"index": true, "collection": true, "collections": true, "user": true, "role": true, "bucket": true,
	"keyspace": true, "column": true, "view": true, "all": true,
}

// inertObjects are objects an irreversible verb can have without destroying anything stored:
// truncateText shortens a string it is given, remove_whitespace formats one.
var inertObjects = map[string]bool{
	"text": true, "string": true, "strings": true, "str": true, "whitespace": true, "spaces": true,
	"space": true, "line": true, "lines": true, "word": true, "words": true, "title": true,
	"prefix": true, "suffix": true, "punctuation": true, "newline": true, "newlines": true,
	"char": true, "chars": true, "characters": true, "accents": true, "diacritics": true,
	"emoji": true, "markdown": true, "html": true, "formatting": true, "highlight": true,
	"highlights": true, "duplicates": true, "dupes": true, "indent": true, "indentation": true,
}

// irreversibleName reports whether a tool name's words name an irreversible action.
func irreversibleName(words []string) bool {
	for i, w := range words {
		if irreversibleWords[w] && !allInert(words[i+1:]) {
			return true
		}
		if compoundIrreversible(w) {
			return true
		}
		if i+1 < len(words) {
			for _, p := range irreversiblePhrases {
				if w == p[0] && words[i+1] == p[1] {
					return true
				}
			}
		}
	}
	return false
}

// allInert reports a non-empty run of words every one of which is an inert object.
func allInert(words []string) bool {
	if len(words) == 0 {
		return false
	}
	for _, w := range words {
		if !inertObjects[w] {
			return false
		}
	}
	return true
}

func compoundIrreversible(w string) bool {
	for _, v := range compoundVerbs {
		if rest, ok := strings.CutPrefix(w, v); ok && rest != "" && !inflections[rest] && !inertObjects[rest] {
			return true
		}
	}
	if rest, ok := strings.CutPrefix(w, "drop"); ok && dropObjects[rest] {
		return true
	}
	return false
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
	"shred": fileOpDestroy, "clear": fileOpDestroy, "empty": fileOpDestroy, "trash": fileOpDestroy,
	"expunge": fileOpDestroy, "rmrf": fileOpDestroy,
	"move": fileOpMove, "mv": fileOpMove, "rename": fileOpMove, "ren": fileOpMove,
	"write": fileOpWrite, "overwrite": fileOpWrite, "create": fileOpWrite, "append": fileOpWrite,
	"replace": fileOpWrite, "put": fileOpWrite, "save": fileOpWrite, "edit": fileOpWrite,
	"update": fileOpWrite, "modify": fileOpWrite, "patch": fileOpWrite, "insert": fileOpWrite,
	"set": fileOpWrite, "chmod": fileOpWrite, "chown": fileOpWrite, "copy": fileOpWrite,
	"cp": fileOpWrite, "touch": fileOpWrite, "mkdir": fileOpWrite, "upload": fileOpWrite,
	"link": fileOpWrite, "symlink": fileOpWrite, "ln": fileOpWrite, "extract": fileOpWrite,
	"unzip": fileOpWrite, "untar": fileOpWrite, "download": fileOpWrite, "restore": fileOpWrite,
	"read": fileOpRead, "list": fileOpRead, "ls": fileOpRead, "stat": fileOpRead, "exists": fileOpRead,
	"get": fileOpRead, "cat": fileOpRead, "view": fileOpRead, "search": fileOpRead, "find": fileOpRead,
	"glob": fileOpRead, "info": fileOpRead, "head": fileOpRead, "tail": fileOpRead, "show": fileOpRead,
	"tree": fileOpRead,
}

// isFileOps reports the file_ops tool in any case style (file_ops, fileOps, FileOps,
// mcp__x__file_ops, fileops).
func isFileOps(words []string) bool {
	n := len(words)
	return n >= 2 && words[n-2] == "file" && words[n-1] == "ops" || n >= 1 && words[n-1] == "fileops"
}

// fileOpOf reads file_ops' operation ("operation", "op", "action", "command", "cmd", "mode",
// "type", any case): the most severe thing any of its words says, whole or written together
// (deletefile). Read operations are only those it names and nothing else; a value that names
// nothing known, or none, is unknown (mutating).
func fileOpOf(args map[string]any) fileOp {
	op, found := fileOpUnknown, false
	for k, v := range args {
		switch strings.ToLower(k) {
		case "operation", "op", "action", "command", "cmd", "mode", "type", "method":
		default:
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
				continue
			}
			if compoundIrreversible(w) {
				known = true
				this = fileOpDestroy
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

// Executor-like tool names. A strong word makes a tool an executor whatever else its name
// says; a weak one (code, command, process, run…) unless the name also has a verb that does
// not run anything (search_code, get_code_scanning_alert, formatCode, list_processes).
var (
	strongExecutorWords = map[string]bool{
		"exec": true, "execute": true, "eval": true, "shell": true, "terminal": true, "bash": true,
		"sh": true, "zsh": true, "powershell": true, "pwsh": true, "repl": true, "interpreter": true,
		"spawn": true, "cmd": true, "subprocess": true, "popen": true, "ipython": true, "jupyter": true,
		"stdin": true, "pty": true, "tty": true,
	}
	weakExecutorWords = map[string]bool{
		"run": true, "command": true, "commands": true, "process": true, "python": true, "code": true,
		"script": true, "kernel": true, "perl": true, "ruby": true, "php": true,
	}
	benignVerbs = map[string]bool{
		"search": true, "find": true, "list": true, "get": true, "read": true, "view": true, "show": true,
		"format": true, "formatter": true, "explain": true, "review": true, "lint": true, "analyze": true,
		"analyse": true, "describe": true, "scan": true, "scanning": true, "highlight": true, "count": true,
		"index": true, "complete": true, "completion": true, "suggest": true, "lookup": true, "status": true,
		"info": true, "docs": true, "help": true,
	}
)

// isExecutor reports an executor-like tool from its name's words.
func isExecutor(words []string) bool {
	weak, benign := false, false
	for _, w := range words {
		switch {
		case strongExecutorWords[w]:
			return true
		case weakExecutorWords[w]:
			weak = true
		case benignVerbs[w]:
			benign = true
		}
	}
	return weak && !benign
}

// commandKeyWords are the words of argument names that carry a command line in any tool; the
// floor reads them everywhere (at any depth, any case style: command, cmd, Command,
// command_line, shellCommand, script), so a renamed shell tool (a custom "run" tool, an MCP
// server's "execute") cannot carry `rm -rf /` past it.
var commandKeyWords = map[string]bool{
	"command": true, "commands": true, "cmd": true, "cmds": true, "cmdline": true, "commandline": true,
	"script": true, "scripts": true,
}

// codeArgWords are the words of an executor-like tool's argument names that carry
// interpreter code.
var codeArgWords = map[string]bool{
	"code": true, "source": true, "program": true, "cell": true, "snippet": true, "expr": true,
	"expression": true, "statement": true, "statements": true,
}

// descriptiveArgWords are the words of argument names of an executor-like tool that describe
// the call rather than carry what it runs.
var descriptiveArgWords = map[string]bool{
	"description": true, "desc": true, "title": true, "name": true, "message": true, "comment": true,
	"note": true, "notes": true, "summary": true, "reason": true, "label": true, "id": true,
	"language": true, "lang": true, "runtime": true, "interpreter": true, "kernel": true,
	"cwd": true, "dir": true, "directory": true, "workdir": true, "path": true, "timeout": true,
	"justification": true, "explanation": true, "purpose": true,
}

// interpreters maps a language an executor names to the command line that runs code in it;
// the code is appended, quoted.
var interpreters = map[string]string{
	"python": "python3 -c ", "python3": "python3 -c ", "py": "python3 -c ", "ipython": "python3 -c ",
	"jupyter":    "python3 -c ",
	"javascript": "node -e ", "js": "node -e ", "node": "node -e ", "nodejs": "node -e ", "typescript": "node -e ",
	"ruby": "ruby -e ", "rb": "ruby -e ", "perl": "perl -e ", "php": "php -r ",
	"powershell": "pwsh -Command ", "pwsh": "pwsh -Command ",
	"bash": "", "sh": "", "shell": "", "zsh": "",
}

// Limits of what the policy reads in a call's arguments; beyond them the call is opaque.
const (
	// maxArgDepth matches the server's JSON nesting limit, plus arguments encoded in strings.
	maxArgDepth = 80
	// maxToolLines bounds the command lines judged for one call.
	maxToolLines = 256
)

// judgeToolArgs applies to a call of a tool that is not a shell tool what its name and
// arguments say: the floor (and exec deny rules, for executor-like tools) on its commands and
// code, the sensitive paths on its path-like arguments, and the executor rule. explicit says
// whether a tool_permissions entry decided the verdict.
func (e *Engine) judgeToolArgs(in Input, explicit bool, ev *Evaluation) {
	words := ToolWords(in.Tool)
	executor := isExecutor(words)
	lines, opaque := commandLines(in.Args, words, executor)
	cwd := toolCwd(in.Args, in.Cwd)
	var concern *Concern
	for _, line := range lines {
		j := e.commands.Judge(CommandInput{Command: line, Cwd: cwd, Agent: in.Agent})
		if j.Source == approval.SourceFloor || executor && j.Source == approval.SourceRule && j.Verdict == Deny {
			ev.Verdict, ev.Source, ev.Rule, ev.Reason = Deny, j.Source, j.Rule, j.Reason
			return
		}
		for i := range j.Concerns {
			if c := j.Concerns[i]; concern == nil && (c.Kind == ConcernSensitive || c.Kind == ConcernEnv) {
				concern = &c
			}
		}
	}
	// What a command the tool carries reads or writes of the sensitive paths or the
	// environment's secrets, no tool permission or tier allows.
	if concern != nil {
		ev.Verdict = Tighter(ev.Verdict, Ask)
		if ev.Verdict == Ask {
			ev.Source, ev.Rule, ev.Reason = approval.SourcePolicy, RuleToolSensitive, "a command it carries "+concern.Reason
		}
		return
	}
	if p, glob, ok := e.sensitiveArg(in, words); ok {
		ev.Verdict = Tighter(ev.Verdict, Ask)
		if ev.Verdict == Ask {
			ev.Source, ev.Rule = approval.SourcePolicy, RuleToolSensitive
			ev.Reason = "an argument names the sensitive path " + p + " (" + glob + ")"
			if glob == "" {
				ev.Reason = "an argument (" + p + ") is too large or too deeply nested to check against the sensitive paths"
			}
		}
		return
	}
	if opaque && ev.Verdict == Allow {
		ev.Verdict, ev.Source, ev.Rule = Ask, approval.SourcePolicy, RuleToolOpaque
		ev.Reason = "the arguments hold more commands than approvebot reads in one call"
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

// toolCwd is where an executor's commands run: an absolute cwd, workdir or working_directory
// argument, a relative one against the request's cwd, else the request's cwd.
func toolCwd(args map[string]any, cwd string) string {
	for k, v := range args {
		switch strings.Join(ToolWords(k), "") {
		case "cwd", "workdir", "workingdir", "workingdirectory", "dirpath", "directory":
		default:
			continue
		}
		s, ok := v.(string)
		if !ok || s == "" {
			continue
		}
		if path.IsAbs(s) || isWindowsPath(s) {
			return s
		}
		if path.IsAbs(cwd) {
			return path.Join(cwd, s)
		}
	}
	return cwd
}

// commandLines returns the command lines a call carries, and whether it carries more than
// the policy reads. For any tool: the strings and lists of strings under an argument named
// like a command (command, cmd, script, commandLine… at any depth). For an executor-like
// tool also every other string or list of strings except those that describe the call
// (description, title, cwd…): its code arguments as its interpreter would run them, the rest
// as shell lines (and as code too when the tool or the call names an interpreter). A list is
// judged element by element and as one argv; a command string followed by a list of
// arguments (command + args) as one command line too.
func commandLines(args map[string]any, toolWords []string, executor bool) (lines []string, opaque bool) {
	lang, langNamed := codeLanguage(args, toolWords)
	add := func(s ...string) {
		for _, l := range s {
			if strings.TrimSpace(l) == "" {
				continue
			}
			if len(lines) >= maxToolLines {
				opaque = true
				return
			}
			lines = append(lines, l)
		}
	}
	var walk func(m map[string]any, depth int)
	var walkValue func(v any, kind argKind, depth int)
	walkValue = func(v any, kind argKind, depth int) {
		if depth > maxArgDepth {
			opaque = true
			return
		}
		switch x := v.(type) {
		case string:
			if kind != argCode {
				if decoded, ok := decodeJSONString(x); ok {
					walkValue(decoded, kind, depth+1)
				}
			}
			switch kind {
			case argCommand:
				add(x)
				if executor && langNamed {
					add(codeLines(x, lang, true)...)
				}
			case argCode:
				add(codeLines(x, lang, langNamed)...)
			}
		case []any:
			var argv []string
			strs := true
			for _, el := range x {
				if s, ok := el.(string); ok {
					argv = append(argv, quoteWord(s))
				} else {
					strs = false
				}
				walkValue(el, kind, depth+1)
			}
			if kind == argCommand && strs && len(argv) > 1 {
				add(strings.Join(argv, " "))
			}
		case map[string]any:
			walk(x, depth+1)
		}
	}
	walk = func(m map[string]any, depth int) {
		if depth > maxArgDepth {
			opaque = true
			return
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var head string
		var rest []any
		for _, k := range keys {
			kw := ToolWords(k)
			kind := argKindOf(kw, executor)
			walkValue(m[k], kind, depth)
			switch v := m[k].(type) {
			case string:
				if kind == argCommand && anyWord(kw, commandKeyWords) {
					head = v
				}
			case []any:
				if anyWord(kw, argvWords) {
					rest = v
				}
			}
		}
		if head != "" && len(rest) > 0 {
			if tail := argvLine(rest); tail != "" {
				add(head + " " + tail)
			}
		}
	}
	walk(args, 0)
	return lines, opaque
}

// argvWords name a list of arguments that follows a command.
var argvWords = map[string]bool{"args": true, "argv": true, "arguments": true, "params": true}

type argKind int

const (
	argOther   argKind = iota // not judged as a command (but maps inside are walked)
	argCommand                // a command line, or a list of them / an argv
	argCode                   // interpreter code
)

// argKindOf classifies an argument by the words of its name.
func argKindOf(kw []string, executor bool) argKind {
	if anyWord(kw, commandKeyWords) && !anyWord(kw, contentArgWords) {
		return argCommand
	}
	if !executor {
		return argOther
	}
	switch {
	case anyWord(kw, codeArgWords):
		return argCode
	case anyWord(kw, descriptiveArgWords):
		return argOther
	}
	return argCommand
}

// codeLanguage is the language an executor's code is in: a language/lang/runtime/
// interpreter/kernel argument, else a language the tool's name names.
func codeLanguage(args map[string]any, toolWords []string) (string, bool) {
	for k, v := range args {
		switch strings.ToLower(k) {
		case "language", "lang", "runtime", "interpreter", "kernel", "kernel_name", "kernelname":
			if s, ok := v.(string); ok {
				return strings.ToLower(strings.TrimSpace(s)), true
			}
		}
	}
	for _, w := range toolWords {
		if _, ok := interpreters[w]; ok {
			return w, true
		}
	}
	return "", false
}

// codeLines is the command line that runs code in the given language (python when none is
// named: the scan of `python -c`); code in a shell language is judged as it is, and code in
// no known language both ways. Notebook shell escapes (`!cmd`, `%system`, `%%bash` cells) are
// shell lines whatever the language.
func codeLines(code, lang string, named bool) []string {
	out := notebookShell(code)
	if prefix, ok := interpreters[lang]; ok && named {
		if prefix == "" {
			return append(out, code)
		}
		return append(out, prefix+quoteWord(code))
	}
	return append(out, interpreters["python"]+quoteWord(code), code)
}

// notebookShell returns the shell commands of IPython's escapes in code: lines starting with
// "!" or "%system"/"%sx", and the body of a "%%bash", "%%sh", "%%script" or "%%system" cell.
func notebookShell(code string) []string {
	if !strings.ContainsAny(code, "!%") {
		return nil
	}
	var out []string
	lines := strings.Split(code, "\n")
	for i, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, "%%bash"), strings.HasPrefix(t, "%%sh"), strings.HasPrefix(t, "%%script"),
			strings.HasPrefix(t, "%%system"):
			out = append(out, strings.Join(lines[i+1:], "\n"))
			return out
		case strings.HasPrefix(t, "!"):
			out = append(out, strings.TrimLeft(t, "!"))
		case strings.HasPrefix(t, "%system"), strings.HasPrefix(t, "%sx"):
			_, rest, _ := strings.Cut(t, " ")
			out = append(out, rest)
		default:
			// x = !cmd captures a command's output.
			if _, rest, ok := strings.Cut(t, "= !"); ok {
				out = append(out, rest)
			}
		}
	}
	return out
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

// argvLine renders a list of arguments as the command line execvp would run, or "" when an
// element is not a string.
func argvLine(list []any) string {
	words := make([]string, 0, len(list))
	for _, el := range list {
		s, ok := el.(string)
		if !ok {
			return ""
		}
		words = append(words, quoteWord(s))
	}
	return strings.Join(words, " ")
}

// decodeJSONString reads a string argument that holds a JSON object or array (some tools
// take their parameters encoded), or ok=false.
func decodeJSONString(s string) (any, bool) {
	t := strings.TrimSpace(s)
	if len(t) < 2 || !(t[0] == '{' && t[len(t)-1] == '}' || t[0] == '[' && t[len(t)-1] == ']') {
		return nil, false
	}
	var v any
	if json.Unmarshal([]byte(t), &v) != nil {
		return nil, false
	}
	return v, true
}
