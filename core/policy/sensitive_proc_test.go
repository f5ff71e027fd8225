package policy

import "testing"

func TestCleanProc(t *testing.T) {
	for _, c := range []struct {
		in, clean, through string
		at                 bool
	}{
		{"/etc/shadow", "/etc/shadow", "", false},
		{"/home/u/proj/../x", "/home/u/x", "", false},
		{"/proc/self/root/etc/shadow", "/etc/shadow", "", false},
		{"/proc/self/root//etc/shadow", "/etc/shadow", "", false},
		{"/proc/1/root/etc/shadow", "/etc/shadow", "", false},
		{"/proc/thread-self/root/etc/shadow", "/etc/shadow", "", false},
		{"/proc/1/task/1/root/etc/shadow", "/etc/shadow", "", false},
		{"/proc/self/root/../etc/shadow", "/etc/shadow", "", false},
		{"/proc/self/root/proc/self/root/home/u/.netrc", "/home/u/.netrc", "", false},
		{"/proc/self/root", "/", "", false},
		{"/proc/self/root/proc/1/environ", "/proc/1/environ", "", false},
		{"/proc/../proc/self/root/etc/shadow", "/etc/shadow", "", false},
		{"/proc/self/cwd/../.aws/credentials", "/proc/.aws/credentials", procCwdGlob, false},
		{"/proc/1/cwd/x", "/proc/1/cwd/x", procCwdGlob, false},
		{"/proc/1/task/7/cwd/.netrc", "/proc/1/task/7/cwd/.netrc", procCwdGlob, false},
		{"/proc/self/cwd", "/proc/self/cwd", "", true},
		{"/proc/self/cwd/.", "/proc/self/cwd", "", true},
		{"/proc/1/fd/3", "/proc/1/fd/3", procFdGlob, false},
		{"/proc/self/fd/1", "/proc/self/fd/1", "", false},
		{"/proc/self/fd/5", "/proc/self/fd/5", "", false},
		{"/proc/self/fd/5/../.ssh/id_rsa", "/proc/self/.ssh/id_rsa", procFdGlob, false},
		{"/dev/fd/63", "/dev/fd/63", "", false},
		{"/dev/fd/3/.env", "/dev/fd/3/.env", procFdGlob, false},
		{"/proc/1/map_files/x", "/proc/1/map_files/x", procMapFilesGlob, false},
		{"/proc/cpuinfo", "/proc/cpuinfo", "", false},
		{"/home/u/procedures/x", "/home/u/procedures/x", "", false},
	} {
		t.Run(c.in, func(t *testing.T) {
			clean, through, at := cleanProc(c.in)
			if through == "" && clean != c.clean || through != c.through || at != c.at {
				t.Errorf("cleanProc(%q) = %q, %q, %v; want %q, %q, %v", c.in, clean, through, at, c.clean, c.through, c.at)
			}
		})
	}
}

func TestSensitiveThroughProc(t *testing.T) {
	s := defaultSensitive(t)
	for _, c := range []struct {
		path, want string
		glob, tree bool
	}{
		{"/proc/self/root/etc/shadow", "/etc/shadow*", false, false},
		{"/proc/1/root/home/u/.ssh/id_rsa", "~/.ssh", false, false},
		{"/proc/self/root/proc/self/environ", "/proc/*/environ", false, false},
		{"/proc/self/cwd/../.aws/credentials", procCwdGlob, false, false},
		{"/proc/1/cwd/../.netrc", procCwdGlob, false, false},
		{"/dev/fd/../root/etc/shadow", "/etc/shadow*", false, false},
		{"/dev/fd/../../etc/shadow", "/etc/shadow*", false, false},
		{"/proc/self/cwd/README.md", procCwdGlob, false, false},
		{"/proc/cpuinfo", "", false, false},
		{"/proc/self/status", "", false, false},
		{"/proc/self/fd/1", "", false, false},
		{"/dev/fd/63", "", false, false},
		// Globs.
		{"/proc/[0-9]*/root/etc/shadow", "/etc/shadow*", true, false},
		{"/proc/*/root/etc/sha*", "/etc/shadow*", true, false},
		{"/pro?/self/ro?t/etc/shadow", "/etc/shadow*", true, false},
		{"/proc/*/*/etc/shadow", procCwdGlob, true, false},
		{"/proc/[0-9]*/cwd/.netrc", procCwdGlob, true, false},
		{"/proc/*/fd/*", procFdGlob, true, false},
		{"/proc/[0-9]*/status", "", true, false},
		{"/proc/[0-9]*/cmdline", "", true, false},
		// Recursive reads.
		{"/proc/1/root", "~/.ssh", false, true},
		{"/proc/1/cwd", procCwdGlob, false, true},
		{"/proc/*/root", "~/.ssh", true, true},
		{"/proc/self/fd/63", "", false, true},
	} {
		t.Run(c.path, func(t *testing.T) {
			var got string
			var ok bool
			switch {
			case c.glob && c.tree:
				got, ok = s.MatchGlobTree(c.path, sensProj, sensHome)
			case c.glob:
				got, ok = s.MatchGlob(c.path, sensProj, sensHome)
			case c.tree:
				got, ok = s.MatchTree(c.path, sensProj, sensHome)
			default:
				got, ok = s.Match(c.path, sensProj, sensHome)
			}
			if c.want == "" && ok || c.want != "" && (!ok || c.tree && got == "") || c.want != "" && !c.tree && got != c.want {
				t.Errorf("got %q, %v; want %q", got, ok, c.want)
			}
		})
	}
}
