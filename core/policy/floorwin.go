package policy

import (
	"path"
	"strings"

	"github.com/approvebot/approvebot/core/shell"
)

// windowsFloor applies the Windows rules (format, drive-root and system-directory deletion,
// registry hive deletion, shadow-copy deletion) to a cmd.exe or PowerShell statement, or to a
// POSIX segment read as one.
func windowsFloor(s *shell.Segment, raw bool) (FloorHit, bool) {
	if len(s.Args) == 0 {
		return FloorHit{}, false
	}
	name := s.Base()
	switch name {
	case "format", "format-volume", "clear-disk", "remove-partition", "rd", "rmdir", "del", "erase",
		"remove-item", "ri", "rm", "reg", "vssadmin", "wmic", "wbadmin", "diskpart":
	default:
		return FloorHit{}, false
	}
	argv := make([]string, 0, len(s.Args))
	for _, a := range s.Args {
		if !raw || a.Raw == "" {
			argv = append(argv, a.Value)
			continue
		}
		// A POSIX shell joins `C:\ x` into one word; cmd.exe and PowerShell see the
		// backslash end C:\ and x as the next argument.
		argv = append(argv, splitWindowsRaw(a.Raw)...)
	}
	switch name {
	case "format":
		for _, a := range argv[1:] {
			if isDriveSpec(strings.ToLower(a)) {
				return hit(FloorWinFormat, "format of drive "+a, s)
			}
		}
	case "format-volume", "clear-disk", "remove-partition":
		return hit(FloorWinFormat, name, s)
	case "diskpart":
		if s.Input == shell.InputText && containsWord(strings.ToLower(s.InputText), "clean", "format", "delete") {
			return hit(FloorWinFormat, "diskpart script that cleans or formats a disk", s)
		}
	case "rd", "rmdir", "del", "erase", "remove-item", "ri", "rm":
		return windowsDelete(s, name, splitSwitches(argv))
	case "reg":
		return windowsReg(s, argv)
	case "vssadmin":
		if hasWords(argv, "delete", "shadows") || hasWords(argv, "resize", "shadowstorage") {
			return hit(FloorWinShadow, "deletes the volume shadow copies", s)
		}
	case "wmic":
		if hasWords(argv, "shadowcopy", "delete") {
			return hit(FloorWinShadow, "deletes the volume shadow copies", s)
		}
	case "wbadmin":
		if hasWords(argv, "delete", "catalog") || hasWords(argv, "delete", "systemstatebackup") || hasWords(argv, "delete", "backup") {
			return hit(FloorWinShadow, "deletes the Windows backups", s)
		}
	}
	return FloorHit{}, false
}

// splitSwitches splits cmd switches written together (/s/q, /S/Q/F) into one each.
func splitSwitches(argv []string) []string {
	var out []string
	for i, a := range argv {
		if i > 0 && len(a) > 3 && a[0] == '/' && strings.Count(a, "/") > 1 && !strings.ContainsAny(a, `\:.`) {
			ok := true
			for _, p := range strings.Split(a[1:], "/") {
				if len(p) == 0 || len(p) > 2 {
					ok = false
				}
			}
			if ok {
				for _, p := range strings.Split(a[1:], "/") {
					out = append(out, "/"+p)
				}
				continue
			}
		}
		out = append(out, a)
	}
	return out
}

// splitWindowsRaw splits a raw POSIX word where a backslash is followed by a blank.
func splitWindowsRaw(r string) []string {
	var out []string
	for {
		i := strings.Index(r, "\\ ")
		if j := strings.Index(r, "\\\t"); j >= 0 && (i < 0 || j < i) {
			i = j
		}
		if i < 0 {
			break
		}
		out = append(out, r[:i+1])
		r = strings.TrimLeft(r[i+1:], " \t")
	}
	if r != "" || len(out) == 0 {
		out = append(out, r)
	}
	return out
}

func hasWords(argv []string, words ...string) bool {
	for _, w := range words {
		found := false
		for _, a := range argv[1:] {
			if strings.EqualFold(strings.Trim(a, `"'`), w) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// isDriveSpec matches "c:", "c:\", "c:/".
func isDriveSpec(a string) bool {
	a = strings.TrimRight(a, `\/`)
	return len(a) == 2 && a[1] == ':' && a[0] >= 'a' && a[0] <= 'z'
}

// windowsTarget says whether deleting a Windows path hits a drive root or a system directory.
func windowsTarget(p string) (string, bool) { return windowsTargetIn(p, "") }

// windowsTargetIn is windowsTarget for a path relative to the Windows directory cwd ("" when
// not known: a path that climbs with .. may then reach the drive's root).
func windowsTargetIn(p, cwd string) (string, bool) {
	a := strings.ToLower(strings.Trim(p, `"'`))
	a = strings.ReplaceAll(a, "/", `\`)
	unc := strings.HasPrefix(a, `\\?\`)
	a = strings.TrimPrefix(a, `\\?\`)
	for strings.Contains(a, `\\`) {
		a = strings.ReplaceAll(a, `\\`, `\`) // C:\\Windows is C:\Windows
	}
	_ = unc
	for _, v := range [...][2]string{
		{"%systemroot%", `c:\windows`}, {"$env:systemroot", `c:\windows`}, {"%windir%", `c:\windows`},
		{"$env:windir", `c:\windows`}, {"%systemdrive%", "c:"}, {"$env:systemdrive", "c:"},
		{"%programfiles%", `c:\program files`}, {"$env:programfiles", `c:\program files`},
		{"%programfiles(x86)%", `c:\program files (x86)`}, {"${env:programfiles(x86)}", `c:\program files (x86)`},
		{"%programdata%", `c:\programdata`}, {"$env:programdata", `c:\programdata`},
		{"%userprofile%", `c:\users\~`}, {"$env:userprofile", `c:\users\~`}, {"$home", `c:\users\~`},
		{"%homedrive%%homepath%", `c:\users\~`}, {"%public%", `c:\users\public`},
		{"$env:homedrive$env:homepath", `c:\users\~`}, {"%homedrive%", "c:"}, {"$env:homedrive", "c:"},
		{"${env:homedrive}", "c:"}, {"${env:systemdrive}", "c:"}, {"${env:systemroot}", `c:\windows`},
		{"${env:windir}", `c:\windows`}, {"${env:userprofile}", `c:\users\~`}, {"%homepath%", `\users\~`},
		{"$env:homepath", `\users\~`}, {"%allusersprofile%", `c:\programdata`}, {"$env:allusersprofile", `c:\programdata`},
		{"%programw6432%", `c:\program files`}, {"$env:programw6432", `c:\program files`},
		{"%commonprogramfiles%", `c:\program files\common files`}, {"%public%", `c:\users\public`},
		{"$env:public", `c:\users\public`}, {"%systemdrive%", "c:"},
	} {
		if strings.HasPrefix(a, v[0]) {
			a = v[1] + a[len(v[0]):]
			break
		}
	}
	if a == "~" || strings.HasPrefix(a, `~\`) {
		a = `c:\users\~` + a[1:]
	}
	a = strings.TrimPrefix(a, `\\?\`)
	a = strings.TrimPrefix(a, `filesystem::`)
	a = strings.TrimPrefix(a, `microsoft.powershell.core\filesystem::`)
	drive := len(a) >= 2 && a[1] == ':' && a[0] >= 'a' && a[0] <= 'z'
	if !drive && !strings.HasPrefix(a, `\`) {
		// Relative to the working directory: .., ..\..\.., *, ..\*.
		var joined string
		if cwd != "" {
			joined = winClean(strings.ToLower(strings.ReplaceAll(cwd, "/", `\`)) + `\` + a)
		} else if strings.HasPrefix(a, "..") {
			// Climbing out of a directory that is not known: up to the drive's root.
			rest := a
			for strings.HasPrefix(rest, `..\`) || rest == ".." {
				rest = strings.TrimPrefix(strings.TrimPrefix(rest, ".."), `\`)
			}
			joined = `c:\` + rest
		}
		if joined == "" {
			return "", false
		}
		a = joined
		drive = true
	}
	// Strip what matches everything inside a directory: \*, \*.*.
	for {
		t := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(a, `*.*`), `*`), `\`)
		if t == a {
			break
		}
		a = t
	}
	if a == "" {
		return `\`, true
	}
	rest := a
	if drive {
		rest = a[2:]
		if rest == "" || rest == `\` {
			return p, true
		}
	}
	switch r := strings.TrimRight(rest, `\`); r {
	case `\windows`, `\windows\system32`, `\windows\syswow64`, `\program files`, `\program files (x86)`,
		`\programdata`, `\users`, `\users\~`, `\boot`, `\recovery`, `\efi`, `\windows\winsxs`,
		`\program files\common files`, `\system volume information`:
		return p, true
	default:
		// A user's profile: C:\Users\NAME.
		if u, ok := strings.CutPrefix(r, `\users\`); ok && u != "" && !strings.Contains(u, `\`) && u != "." && u != ".." {
			return p, true
		}
	}
	return "", false
}

// winClean resolves . and .. in a Windows path (the drive is kept).
func winClean(p string) string {
	drive := ""
	if len(p) >= 2 && p[1] == ':' {
		drive, p = p[:2], p[2:]
	}
	var out []string
	for _, e := range strings.Split(p, `\`) {
		switch e {
		case "", ".":
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		default:
			out = append(out, e)
		}
	}
	return drive + `\` + strings.Join(out, `\`)
}

// registryTarget normalises a registry key and says whether it is a hive or one of its
// vital top-level keys.
func registryTarget(k string) (string, bool) {
	a := strings.ToUpper(strings.Trim(k, `"'`))
	a = strings.TrimPrefix(a, `REGISTRY::`)
	a = strings.TrimPrefix(a, `MICROSOFT.POWERSHELL.CORE\REGISTRY::`)
	if strings.HasPrefix(a, `\\`) {
		// \\machine\HKLM\…
		if i := strings.IndexByte(a[2:], '\\'); i >= 0 {
			a = a[2+i+1:]
		}
	}
	a = strings.ReplaceAll(a, "/", `\`)
	a = strings.TrimRight(a, `\*`)
	hive, rest, _ := strings.Cut(a, `\`)
	hive = strings.TrimSuffix(hive, ":")
	switch hive {
	case "HKLM", "HKEY_LOCAL_MACHINE":
		hive = "HKLM"
	case "HKCU", "HKEY_CURRENT_USER":
		hive = "HKCU"
	case "HKCR", "HKEY_CLASSES_ROOT":
		hive = "HKCR"
	case "HKU", "HKEY_USERS":
		hive = "HKU"
	case "HKCC", "HKEY_CURRENT_CONFIG":
		hive = "HKCC"
	default:
		return "", false
	}
	rest = strings.TrimRight(rest, `\`)
	if rest == "" {
		return hive, true
	}
	if vitalRegistryKey(hive, rest) {
		return hive + `\` + rest, true
	}
	if strings.ContainsRune(rest, '\\') {
		return "", false
	}
	switch hive {
	case "HKLM":
		switch rest {
		case "SOFTWARE", "SYSTEM", "SAM", "SECURITY", "HARDWARE", "BCD00000000":
			return hive + `\` + rest, true
		}
	case "HKCU":
		switch rest {
		case "SOFTWARE", "CONTROL PANEL", "ENVIRONMENT", "SYSTEM":
			return hive + `\` + rest, true
		}
	case "HKU":
		if rest == ".DEFAULT" || strings.HasPrefix(rest, "S-1-") {
			return hive + `\` + rest, true
		}
	}
	return "", false
}

// vitalRegistryKey names the keys below a hive whose deletion leaves Windows unbootable or
// unusable (the control sets, the services, Windows' own software key).
func vitalRegistryKey(hive, rest string) bool {
	if hive != "HKLM" {
		return false
	}
	switch rest {
	case `SYSTEM\CURRENTCONTROLSET`, `SYSTEM\CONTROLSET001`, `SYSTEM\CONTROLSET002`, `SYSTEM\SELECT`,
		`SYSTEM\CURRENTCONTROLSET\SERVICES`, `SYSTEM\CURRENTCONTROLSET\CONTROL`, `SYSTEM\CURRENTCONTROLSET\ENUM`,
		`SYSTEM\CONTROLSET001\SERVICES`, `SYSTEM\CONTROLSET001\CONTROL`, `SYSTEM\MOUNTEDDEVICES`,
		`SOFTWARE\MICROSOFT`, `SOFTWARE\MICROSOFT\WINDOWS`, `SOFTWARE\MICROSOFT\WINDOWS NT`,
		`SOFTWARE\MICROSOFT\WINDOWS\CURRENTVERSION`, `SOFTWARE\MICROSOFT\WINDOWS NT\CURRENTVERSION`,
		`SOFTWARE\MICROSOFT\WINDOWS NT\CURRENTVERSION\WINLOGON`, `SOFTWARE\CLASSES`, `SOFTWARE\POLICIES`,
		`SOFTWARE\WOW6432NODE`:
		return true
	}
	return false
}

func windowsDelete(s *shell.Segment, name string, argv []string) (FloorHit, bool) {
	recursive := false
	var targets []string
	ps := name == "remove-item" || name == "ri"
	for i := 1; i < len(argv); i++ {
		a := strings.ToLower(argv[i])
		switch {
		case a == "/s":
			recursive = true
		case len(a) > 1 && a[0] == '/' && len(a) <= 3 && !strings.ContainsAny(a[1:], `/\`):
			// cmd switches: /q /f /a
		case len(a) > 1 && a[0] == '-':
			opt := a[1:]
			switch {
			case len(opt) >= 1 && strings.HasPrefix("recurse", opt):
				recursive = true
			case name == "rm" && strings.Trim(opt, "rfRvid") == "" && strings.ContainsAny(opt, "rR"):
				recursive = true
			case opt == "path" || opt == "literalpath" || opt == "lp" || opt == "pspath" || opt == "p":
				if i+1 < len(argv) {
					i++
					targets = append(targets, argv[i])
				}
			case strings.HasPrefix(opt, "path:") || strings.HasPrefix(opt, "literalpath:"):
				_, v, _ := strings.Cut(argv[i], ":")
				targets = append(targets, v)
			case strings.HasPrefix("include", opt) || strings.HasPrefix("exclude", opt) || strings.HasPrefix("filter", opt) ||
				strings.HasPrefix("credential", opt) || strings.HasPrefix("stream", opt):
				i++
			}
		default:
			targets = append(targets, argv[i])
		}
	}
	for _, t := range targets {
		for _, one := range strings.Split(t, ",") {
			if key, ok := registryTarget(one); ok {
				return hit(FloorWinRegistry, "deletion of the registry key "+key, s)
			}
			if name == "rm" && !strings.ContainsAny(one, `:\%$`) {
				continue // a POSIX rm: the POSIX floor judges it
			}
			if rel := strings.Trim(one, `"'`); s.WinCwd == "" && s.Cwd != "" && rel != "" && !strings.ContainsAny(rel, `:%$`) &&
				rel[0] != '\\' && rel[0] != '/' && rel[0] != '~' {
				// Relative to a POSIX working directory (Git Bash, WSL): that directory's parents.
				p := strings.TrimSuffix(path.Join(s.Cwd, strings.ReplaceAll(rel, `\`, "/")), "/*")
				if p == "" {
					p = "/"
				}
				if t := classify(p, s.Home); t != targetNone && recursive {
					return hit(FloorWinDelete, "recursive deletion of "+one, s)
				}
				continue
			}
			if _, ok := windowsTargetIn(one, s.WinCwd); ok {
				if recursive || (name == "del" || name == "erase") && strings.Contains(one, "*") || ps && strings.Contains(one, "*") {
					return hit(FloorWinDelete, "recursive deletion of "+one, s)
				}
			}
		}
	}
	return FloorHit{}, false
}

func windowsReg(s *shell.Segment, argv []string) (FloorHit, bool) {
	if len(argv) < 3 || !strings.EqualFold(argv[1], "delete") {
		return FloorHit{}, false
	}
	for _, a := range argv[3:] {
		switch strings.ToLower(a) {
		case "/v", "/ve", "/va":
			return FloorHit{}, false
		}
	}
	if key, ok := registryTarget(argv[2]); ok {
		return hit(FloorWinRegistry, "deletion of the registry key "+key, s)
	}
	return FloorHit{}, false
}

// shadowAcross catches the PowerShell pipeline that deletes shadow copies across statements
// (Get-WmiObject Win32_ShadowCopy | ForEach-Object { $_.Delete() }).
func (f *floorCtx) shadowAcross() (FloorHit, bool) {
	var shadow *shell.Segment
	for _, s := range f.an.Segments {
		for i := range s.Args {
			if a := &s.Args[i]; containsFold(a.Raw, "shadowcopy") || containsFold(a.Value, "shadowcopy") {
				shadow = s
				break
			}
		}
	}
	if shadow == nil {
		return FloorHit{}, false
	}
	for _, s := range f.an.Segments {
		for i := range s.Args {
			a := &s.Args[i]
			if containsFold(a.Raw, ".delete") || containsFold(a.Raw, "remove-ciminstance") || containsFold(a.Raw, "remove-wmiobject") {
				return hit(FloorWinShadow, "deletes the volume shadow copies", shadow)
			}
		}
	}
	return FloorHit{}, false
}

// containsFold reports whether s contains the lower-case ASCII sub, ignoring ASCII case,
// without allocating.
func containsFold(s, sub string) bool {
	n := len(sub)
	for i := 0; i+n <= len(s); i++ {
		j := 0
		for ; j < n; j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != sub[j] {
				break
			}
		}
		if j == n {
			return true
		}
	}
	return false
}
