package shell

import (
	"strings"
)

// Tools that delete what they archive or copy: tar --remove-files, zip -m, rsync
// --remove-source-files. The floor sees what they delete as the rm it amounts to (a floor-only
// segment), so that archiving / or the home directory away is refused like rm -rf of it.

// deletesAs hands the floor an rm of what a tool deletes.
func (w *walker) deletesAs(label string, recursive bool, files []Arg) {
	if len(files) == 0 {
		return
	}
	argv := []Arg{lit("rm"), lit("-f")}
	if recursive {
		argv[1] = lit("-rf")
	}
	argv = append(argv, lit("--"))
	argv = append(argv, files...)
	c := w.floorOnly(label)
	c.emit(argv, KindCommand).Origin = label
}

// tarRemoves finds tar --remove-files (any abbreviation) with its files, relative to -C.
func (w *walker) tarRemoves(args []Arg) {
	remove, create := false, false
	dir := ""
	var files []Arg
	file := func(a Arg) {
		if dir != "" && a.Known && !strings.HasPrefix(a.Value, "/") {
			v := joinCwd(dir, a.Value)
			if !strings.HasPrefix(dir, "/") {
				v = strings.TrimSuffix(dir, "/") + "/" + a.Value
			}
			a = Arg{Value: v, Raw: v, Known: true, Prefix: len(v), Pattern: a.Pattern}
		}
		files = append(files, a)
	}
	letters := func(cl string, next func() (Arg, bool)) {
		for j := 0; j < len(cl); j++ {
			c := cl[j]
			switch {
			case c == 'c' || c == 'r' || c == 'u' || c == 'A':
				create = true
			case strings.IndexByte(tarShortArg, c) >= 0:
				v, ok := next()
				if ok && c == 'C' {
					dir = joinCwd(dir, v.Value)
					if dir == "" {
						dir = v.Value
					}
				}
				return
			}
		}
	}
	i := 1
	if len(args) > 1 && !strings.HasPrefix(args[1].Value, "-") {
		// Old-style letters whose values follow in order.
		k := 2
		cl := args[1].Value
		for j := 0; j < len(cl); j++ {
			c := cl[j]
			if c == 'c' || c == 'r' || c == 'u' || c == 'A' {
				create = true
			}
			if strings.IndexByte(tarShortArg, c) >= 0 {
				if c == 'C' && k < len(args) {
					dir = args[k].Value
				}
				k++
			}
		}
		i = k
	}
	end := false
	for ; i < len(args); i++ {
		a := args[i]
		v := a.Value
		switch {
		case end || !strings.HasPrefix(v, "-") || v == "-":
			file(a)
		case v == "--":
			end = true
		case strings.HasPrefix(v, "--"):
			name, val, hasVal := strings.Cut(v[2:], "=")
			full, ok := resolveLong(name, tarLong)
			if !ok {
				continue
			}
			switch full {
			case "remove-files":
				remove = true
			case "create", "append", "update", "concatenate", "catenate":
				create = true
			case "directory":
				if !hasVal && i+1 < len(args) {
					i++
					val = args[i].Value
				}
				dir = joinCwd(dir, val)
				if dir == "" {
					dir = val
				}
			default:
				if tarValueOption(full) && !hasVal {
					i++
				}
			}
		default:
			letters(v[1:], func() (Arg, bool) {
				if rest := v[strings.IndexAny(v, tarShortArg)+1:]; rest != "" {
					return Arg{Value: rest, Raw: rest, Known: a.Known}, true
				}
				if i+1 < len(args) {
					i++
					return args[i], true
				}
				return Arg{}, false
			})
		}
	}
	if remove && create {
		w.deletesAs("tar --remove-files", true, files)
	}
}

// tarValueOption names the long options of tar that take a value.
func tarValueOption(full string) bool {
	switch full {
	case "file", "exclude", "exclude-from", "files-from", "format", "group", "owner", "mode", "label", "mtime",
		"newer", "newer-mtime", "after-date", "suffix", "transform", "xform", "strip-components",
		"blocking-factor", "record-size", "tape-length", "index-file", "volno-file", "listed-incremental",
		"starting-file", "quoting-style", "quote-chars", "no-quote-chars", "pax-option", "exclude-tag",
		"exclude-tag-all", "exclude-tag-under", "exclude-ignore", "exclude-ignore-recursive", "group-map",
		"owner-map", "warning", "xattrs-exclude", "xattrs-include", "level", "sparse-version", "hole-detection",
		"add-file", "use-compress-program", "info-script", "new-volume-script", "to-command", "rsh-command",
		"rmt-command", "checkpoint-action":
		return true
	}
	return false
}

// zipMoves finds zip -m (--move): the files after the archive are deleted once zipped,
// recursively with -r.
func (w *walker) zipMoves(args []Arg) {
	move, recursive := false, false
	var ops []Arg
	for i := 1; i < len(args); i++ {
		v := args[i].Value
		switch {
		case v == "--move":
			move = true
		case v == "--recurse-paths" || v == "--recurse-patterns":
			recursive = true
		case v == "-b" || v == "-n" || v == "-t" || v == "-tt" || v == "-x" || v == "-i" || v == "-P" || v == "-Z" || v == "-O" ||
			v == "--temp-path" || v == "--suffixes" || v == "--exclude" || v == "--include" || v == "--password" ||
			v == "--output-file" || v == "-TT" || v == "--unzip-command":
			i++
		case strings.HasPrefix(v, "--"):
		case len(v) > 1 && v[0] == '-':
			move = move || strings.ContainsRune(v, 'm')
			recursive = recursive || strings.ContainsAny(v, "rR")
		default:
			ops = append(ops, args[i])
		}
	}
	if move && len(ops) > 1 {
		w.deletesAs("zip -m", recursive, ops[1:])
	}
}

// rsyncRemoves finds rsync --remove-source-files (and its old name --remove-sent-files): the
// sources are emptied of what was sent.
func (w *walker) rsyncRemoves(args []Arg) {
	remove, recursive := false, false
	var ops []Arg
	for i := 1; i < len(args); i++ {
		a := args[i]
		v := a.Value
		switch {
		case v == "--":
			ops = append(ops, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(v, "--remove-s"):
			remove = true
		case v == "--recursive" || v == "--archive":
			recursive = true
		case strings.HasPrefix(v, "--"):
			name, _, hasVal := strings.Cut(v[2:], "=")
			if full, ok := resolveLong(name, rsyncLongArg); ok && !hasVal && hasName(rsyncLongArg, full) {
				i++
			}
		case len(v) > 1 && v[0] == '-':
			for j := 1; j < len(v); j++ {
				c := v[j]
				if c == 'a' || c == 'r' {
					recursive = true
				}
				if strings.IndexByte("eBfMT@", c) >= 0 {
					if j == len(v)-1 {
						i++
					}
					break
				}
			}
		default:
			ops = append(ops, a)
		}
	}
	if remove && len(ops) > 1 {
		w.deletesAs("rsync --remove-source-files", recursive, ops[:len(ops)-1])
	}
}
