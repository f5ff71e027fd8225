package shell

import (
	"strings"
)

var sshSpec = optSpec{short: "46AaCfGgKkMNnqsTtVvXxYy", shortArg: "BbcDEeFIiJLlmOoPpQRSWw"}

// remoteHome stands for the home directory on the other end of ssh.
const remoteHome = "/~remote"

// ssh records the ssh segment; the remote command goes to the floor, and local commands hidden
// in -o options (ProxyCommand, LocalCommand) are judged like any other.
func (w *walker) ssh(base string, args []Arg) {
	r := sshSpec.parse(args, 1)
	w.emit(args, KindCommand)
	end := r.next
	if r.bad != "" {
		end = len(args)
	}
	for i := 1; i < end; i++ {
		v := args[i].Value
		switch {
		case v == "-o" && i+1 < len(args):
			i++
			w.sshOption(args[i].Value, args[i].Static)
		case strings.HasPrefix(v, "-o") && len(v) > 2:
			w.sshOption(v[2:], args[i].Static)
		}
	}
	if r.bad != "" {
		w.problem("cannot read the options of %s: %s", base, r.bad)
		w.floorScan(args, base)
		return
	}
	if base != "ssh" || r.next+1 >= len(args) {
		return
	}
	// OpenSSH reads more options after the destination, and "--" ends them.
	from := r.next + 1
	if r2 := sshSpec.parse(args, from); r2.bad == "" {
		from = r2.next
	}
	if from >= len(args) {
		return
	}
	c := w.floorOnly("ssh")
	c.cwd, c.home = remoteHome, remoteHome
	c.stdin = stdinNone()
	c.shellString("ssh", args, from)
}

func (w *walker) sshOption(kv string, static bool) {
	key, val, ok := strings.Cut(kv, "=")
	if !ok {
		key, val, _ = strings.Cut(strings.TrimSpace(kv), " ")
	}
	switch strings.ToLower(strings.TrimSpace(key)) {
	case "proxycommand", "localcommand", "knownhostscommand":
		val = strings.TrimSpace(val)
		if !static {
			w.problem("ssh -o %s is not a literal", key)
		}
		if val == "" || strings.EqualFold(val, "none") {
			return
		}
		w.script("ssh -o "+key, val, nil, true)
	case "remotecommand":
		c := w.floorOnly("ssh")
		c.cwd, c.home = remoteHome, remoteHome
		c.script("ssh", val, nil, true)
	}
}

// find records find and unwraps the commands of -exec, -execdir, -ok and -okdir.
func (w *walker) find(args []Arg) {
	w.emit(args, KindCommand)
	for i := 1; i < len(args); i++ {
		op := args[i].Value
		switch op {
		case "-exec", "-execdir", "-ok", "-okdir":
		default:
			continue
		}
		j := i + 1
		for j < len(args) && args[j].Value != ";" && args[j].Value != "+" {
			j++
		}
		inner := args[i+1 : j]
		i = j
		if len(inner) == 0 {
			continue
		}
		c := w.deeper("find " + op)
		if c == nil {
			return
		}
		c.stdin = stdinNone()
		c.pipe, c.pipePos = 0, 0
		c.writes, c.reads, c.network = nil, nil, nil
		if op == "-execdir" || op == "-okdir" {
			c.cwd = ""
		}
		c.command(inner)
	}
}

// git records git and judges the commands hidden in -c options (aliases, pagers, editors…).
func (w *walker) git(args []Arg) {
	w.emit(args, KindCommand)
	for i := 1; i < len(args); i++ {
		v := args[i].Value
		switch {
		case v == "-c" && i+1 < len(args):
			i++
			w.gitConfig(args[i].Value, args[i].Static)
		case v == "-C" || v == "--git-dir" || v == "--work-tree" || v == "--namespace" || v == "--exec-path" ||
			v == "--config-env" || v == "--super-prefix" || v == "--list-cmds" || v == "--attr-source":
			i++
		case strings.HasPrefix(v, "-"):
		default:
			return
		}
	}
}

func (w *walker) gitConfig(kv string, static bool) {
	key, val, _ := strings.Cut(kv, "=")
	key = strings.ToLower(key)
	run := false
	switch {
	case strings.HasPrefix(key, "alias."), key == "credential.helper":
		if strings.HasPrefix(val, "!") {
			val, run = val[1:], true
		}
	case key == "core.pager", key == "core.sshcommand", key == "core.editor", key == "core.fsmonitor",
		key == "core.askpass", key == "diff.external", key == "sequence.editor", key == "gpg.program",
		key == "uploadpack.packobjectshook", key == "core.hookspath", strings.HasPrefix(key, "pager."),
		strings.HasPrefix(key, "filter.") && (strings.HasSuffix(key, ".clean") || strings.HasSuffix(key, ".smudge") || strings.HasSuffix(key, ".process")),
		strings.HasPrefix(key, "diff.") && (strings.HasSuffix(key, ".textconv") || strings.HasSuffix(key, ".command")),
		strings.HasPrefix(key, "merge.") && strings.HasSuffix(key, ".driver"):
		run = true
	}
	if !run {
		return
	}
	if !static {
		w.problem("git -c %s is not a literal", key)
	}
	if val == "" || key == "core.fsmonitor" && (val == "true" || val == "false") {
		return
	}
	w.script("git -c "+key, val, nil, true)
}
