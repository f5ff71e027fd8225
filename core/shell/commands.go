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
		case v == "-S" && base != "ssh" && i+1 < len(args):
			// scp -S and sftp -S: the program run instead of ssh.
			i++
			w.hiddenArgv(base+" -S", args[i:i+1])
		case v == "-D" && base == "sftp" && i+1 < len(args):
			i++
			w.hiddenScript("sftp -D", args[i].Value, args[i].Known)
		case v == "-b" && base == "sftp" && i+1 < len(args):
			i++
			if isStdinPath(args[i].Value) || args[i].Value == "-" {
				if text, kind := w.stdinText(); kind == stdinKnown {
					w.edScript("sftp -b", text)
				}
			}
			w.problem("sftp -b runs a batch of commands")
		case v == "-I" && base == "ssh":
			w.problem("ssh -I loads a PKCS#11 library")
		case v == "-F" && i+1 < len(args) && (isStdinPath(args[i+1].Value) || args[i+1].Value == "-"):
			w.problem("ssh -F reads its configuration from the standard input")
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
	c.cwd, c.home, c.cwdRel = remoteHome, remoteHome, ""
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
		w.hiddenScript("ssh -o "+key, val, true)
	case "pkcs11provider", "securitykeyprovider", "include", "permitlocalcommand":
		if strings.ToLower(strings.TrimSpace(key)) != "permitlocalcommand" {
			w.problem("ssh -o %s loads code or configuration", key)
		}
	case "remotecommand":
		c := w.floorOnly("ssh")
		c.cwd, c.home, c.cwdRel = remoteHome, remoteHome, ""
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
		c.hide("find " + op)
		if op == "-execdir" || op == "-okdir" {
			c.unknownCwd()
		}
		c.command(inner)
		// The floor also reads the command with {} standing for what find finds.
		for _, item := range findItems(args) {
			argv := make([]Arg, len(inner))
			for k, a := range inner {
				argv[k] = a
				if strings.Contains(a.Value, "{}") {
					v := strings.ReplaceAll(a.Value, "{}", item)
					argv[k] = Arg{Value: v, Raw: v, Known: a.Known, Prefix: len(v)}
					if validGlob([]byte(v)) {
						argv[k].Pattern = v
					}
				}
			}
			if d := w.floorOnly("find " + op).deeper("find " + op); d != nil {
				d.hide("find " + op)
				d.command(argv)
			}
		}
	}
}

// findItems are globs for what a find command finds: each start path with the first -name
// pattern below it (/dev/sd* for find /dev -name 'sd*'), or every name below it.
func findItems(args []Arg) []string {
	var starts []string
	name := "*"
	named := false
	i := 1
	for i < len(args) && (args[i].Value == "-H" || args[i].Value == "-L" || args[i].Value == "-P") {
		i++
	}
	for ; i < len(args); i++ {
		v := args[i].Value
		if strings.HasPrefix(v, "-") || v == "(" || v == "!" {
			break
		}
		if len(starts) < 4 {
			starts = append(starts, v)
		}
	}
	for ; i+1 < len(args); i++ {
		if v := args[i].Value; (v == "-name" || v == "-iname") && !named {
			name, named = args[i+1].Value, true
		}
	}
	if len(starts) == 0 {
		starts = []string{"."}
	}
	out := make([]string, 0, len(starts))
	for _, st := range starts {
		if strings.ContainsAny(name, "/{}") {
			continue
		}
		out = append(out, strings.TrimSuffix(st, "/")+"/"+name)
	}
	return out
}
