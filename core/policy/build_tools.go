package policy

import (
	"path"
	"strings"

	"github.com/approvebot/approvebot/core/shell"
)

// An allowlisted build tool trusts the project's files: make runs the project's Makefile, npm
// its package.json scripts. Pointed at another directory (make -C /tmp/evil, make -f
// /tmp/x.mk, npm --prefix /tmp/evil, cd /tmp/evil && make) it runs that directory's files,
// which the entry does not vouch for; and npm's configuration can name the programs it runs.

// runsOutside adds a concern when a build tool runs the files of a directory outside the
// request's working directory.
func (e *effectJudge) runsOutside(s *shell.Segment, tool, dir, what string) {
	if e.insideRequest(dir) {
		return
	}
	shown := dir
	if shown == "" {
		shown = "a directory that is not known"
	}
	e.cs.add(Concern{Kind: ConcernUnknown, What: shown,
		Reason: tool + " runs " + what + " in " + shown + ", outside the working directory"})
}

// absIn is p made absolute against base ("" when base is unknown and p relative).
func absIn(base, p, home string) string {
	p = expandTilde(p, home)
	switch {
	case path.IsAbs(p):
		return path.Clean(p)
	case base == "":
		return ""
	case p == "":
		return base
	}
	return path.Clean(base + "/" + p)
}

// makeSegment: where make runs (-C, --directory, and the segment's cwd) and the makefiles it
// reads (-f, --file, --makefile).
func (e *effectJudge) makeSegment(s *shell.Segment) {
	dir := s.Cwd
	var files []string
	args := s.Args[1:]
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		next := func() string {
			if i+1 < len(args) {
				i++
				return args[i].Value
			}
			return ""
		}
		switch {
		case v == "--":
			i = len(args)
		case v == "-C" || v == "--directory" || strings.HasPrefix("--directory", v) && len(v) > 4:
			dir = absIn(dir, next(), s.Home)
		case strings.HasPrefix(v, "--directory=") || strings.HasPrefix(v, "--dir=") || strings.HasPrefix(v, "--direc="):
			_, d, _ := strings.Cut(v, "=")
			dir = absIn(dir, d, s.Home)
		case v == "-f" || v == "--file" || v == "--makefile":
			files = append(files, next())
		case strings.HasPrefix(v, "--file=") || strings.HasPrefix(v, "--makefile="):
			_, f, _ := strings.Cut(v, "=")
			files = append(files, f)
		case len(v) > 1 && v[0] == '-' && v[1] != '-':
			// A cluster (-sC dir, -Cdir, -kf x.mk): C and f take the rest or the next word.
			for j := 1; j < len(v); j++ {
				c := v[j]
				if c == 'C' || c == 'f' || c == 'I' || c == 'o' || c == 'W' || c == 'E' {
					val := v[j+1:]
					if val == "" {
						val = next()
					}
					switch c {
					case 'C':
						dir = absIn(dir, val, s.Home)
					case 'f':
						files = append(files, val)
					}
					break
				}
			}
		}
	}
	if dir != s.Cwd || s.Cwd != e.cwd {
		e.runsOutside(s, "make", dir, "the Makefile")
	}
	for _, f := range files {
		if f == "-" || harmlessDevice(f) {
			continue // standard input (the analysis reads it as a script), or nothing
		}
		e.runsOutside(s, "make", absIn(dir, path.Dir(f), s.Home), "the makefile "+f)
	}
}

// npmDangerousConfig are the npm settings that name a program npm runs, code it loads, the
// configuration files it reads, or where it installs from.
var npmDangerousConfig = map[string]bool{
	"script-shell": true, "shell": true, "git": true, "editor": true, "browser": true, "viewer": true,
	"node-options": true, "onload-script": true, "init-module": true, "userconfig": true, "globalconfig": true,
	"prefix": true, "registry": true, "ignore-scripts": true, "node-gyp": true, "cafile": true, "ca": true,
	"strict-ssl": true, "proxy": true, "https-proxy": true, "globalignorefile": true, "cache": true,
	"script-shell-args": true, "npm-version": true, "engine-strict": true, "foreground-scripts": true,
	"location": true, "global": true, "workspace": true, "workspaces": true,
}

// npmSecretConfig reports the settings that hold credentials.
func npmSecretConfig(key string) bool {
	k := strings.ToLower(key)
	return strings.Contains(k, "_auth") || strings.Contains(k, "_password") || strings.Contains(k, "token") ||
		strings.HasSuffix(k, "certfile") || strings.HasSuffix(k, "keyfile") || strings.HasSuffix(k, ":username") ||
		strings.HasSuffix(k, ":email") || k == "otp"
}

func npmKey(k string) string {
	k = strings.ToLower(strings.TrimLeft(k, "-"))
	if strings.HasPrefix(k, "@") || strings.HasPrefix(k, "//") {
		if strings.HasSuffix(k, ":registry") {
			return "registry"
		}
		return k
	}
	return strings.ReplaceAll(k, "_", "-")
}

// npmAliases maps npm's command aliases to the command.
var npmAliases = map[string]string{
	"c": "config", "set": "config set", "get": "config get", "i": "install", "in": "install", "ins": "install",
	"inst": "install", "insta": "install", "instal": "install", "isnt": "install", "isnta": "install",
	"isntal": "install", "isntall": "install", "add": "install", "ci": "ci", "clean-install": "ci", "ic": "ci",
	"install-clean": "ci", "isntall-clean": "ci", "un": "uninstall", "unlink": "uninstall", "remove": "uninstall",
	"rm": "uninstall", "r": "uninstall", "up": "update", "upgrade": "update", "udpate": "update", "ln": "link",
	"rb": "rebuild", "create": "init", "innit": "init", "adduser": "login", "add-user": "login",
}

// npmSegment: the directories npm runs in (--prefix, -C, --workspace), the settings on its
// command line, global installs, the configuration it writes, logins and initializers.
func (e *effectJudge) npmSegment(s *shell.Segment) {
	var ops []string
	global := false
	args := s.Args[1:]
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		if v == "--" {
			break // the rest goes to the script
		}
		if !strings.HasPrefix(v, "-") || v == "-" {
			ops = append(ops, v)
			continue
		}
		key, val, hasVal := strings.Cut(v, "=")
		switch key {
		case "-g", "--global":
			global = !hasVal || val != "false"
			continue
		case "-C":
			key = "--prefix"
		case "-w":
			key = "--workspace"
		case "-L":
			key = "--location"
		}
		k := npmKey(key)
		if !hasVal && npmDangerousConfig[k] && i+1 < len(args) && !strings.HasPrefix(args[i+1].Value, "-") {
			i++
			val = args[i].Value
		}
		switch k {
		case "prefix":
			e.runsOutside(s, "npm", absIn(s.Cwd, val, s.Home), "the package")
		case "workspace", "workspaces":
			if val != "" && val != "true" && val != "false" {
				e.runsOutside(s, "npm", absIn(s.Cwd, val, s.Home), "the workspace")
			}
		case "location":
			global = global || val == "global"
		default:
			if npmDangerousConfig[k] {
				e.cs.add(Concern{Kind: ConcernUnknown, What: v, Reason: "npm " + v + " sets " + k + ", which changes what npm runs or where it installs from"})
			}
		}
	}
	if s.Cwd != e.cwd {
		e.runsOutside(s, "npm", s.Cwd, "the package")
	}
	if len(ops) == 0 {
		return
	}
	cmd := ops[0]
	if a, ok := npmAliases[cmd]; ok {
		cmd = a
	}
	rest := ops[1:]
	if sub, ok := strings.CutPrefix(cmd, "config "); ok {
		cmd, rest = "config", append([]string{sub}, rest...)
	}
	switch cmd {
	case "install", "ci", "uninstall", "update", "link", "rebuild", "dedupe", "prune":
		if global {
			e.cs.add(Concern{Kind: ConcernWrite, What: "npm " + ops[0] + " -g",
				Reason: "npm " + ops[0] + " --global writes npm's global prefix, outside the project"})
		}
	case "init":
		if len(rest) > 0 {
			e.cs.add(Concern{Kind: ConcernUnknown, What: "npm " + ops[0] + " " + rest[0],
				Reason: "npm " + ops[0] + " " + rest[0] + " downloads and runs the initializer package create-" + strings.TrimPrefix(rest[0], "create-")})
		}
	case "login", "logout", "token", "owner", "access", "profile", "team":
		e.cs.add(Concern{Kind: ConcernSensitive, What: "npm " + ops[0], Glob: "~/.npmrc",
			Reason: "npm " + ops[0] + " reads or changes the registry credentials in ~/.npmrc"})
	case "config":
		if len(rest) == 0 {
			return
		}
		action := rest[0]
		keys := rest[1:]
		switch action {
		case "set", "delete", "rm", "del":
			for k, kv := range keys {
				key, _, _ := strings.Cut(kv, "=")
				if action == "set" && !strings.Contains(kv, "=") && k%2 == 1 {
					continue // the value of the key before
				}
				nk := npmKey(key)
				if npmDangerousConfig[nk] || npmSecretConfig(nk) {
					e.cs.add(Concern{Kind: ConcernUnknown, What: "npm config " + action + " " + key,
						Reason: "npm config " + action + " " + key + " changes a setting that names what npm runs, loads, trusts or logs in with"})
				}
			}
		case "edit", "fix":
			e.cs.add(Concern{Kind: ConcernUnknown, What: "npm config " + action,
				Reason: "npm config " + action + " rewrites npm's configuration (edit opens an editor)"})
		case "get", "list", "ls":
			for _, key := range keys {
				if npmSecretConfig(npmKey(key)) {
					e.cs.add(Concern{Kind: ConcernSensitive, What: "npm config get " + key, Glob: "~/.npmrc",
						Reason: "npm config get " + key + " prints a registry credential"})
				}
			}
		}
	}
}
