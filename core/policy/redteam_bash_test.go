package policy_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/approvebot/approvebot/internal/sandbox"
)

// The real-bash check of the red-team corpus: every case with a `ran` string runs in real bash
// inside bubblewrap — the host read-only, a tmpfs /home with the project at /home/dev/proj
// (the cwd and home the policy is asked about), no network, no capabilities — with stubs on the
// PATH that record how they were called. The stubs for what destroys or talks to the network
// (rm, dd, mkfs, nc, curl, sudo, …) only record; the stubs for everything else record and then
// run the real program, so that git, make, find, sed, awk, vim, gdb, … really run what they
// are given and the record shows what reached the shell. A case holds when some recorded call
// (the program's name, a space, its arguments) starts with its `ran` string. Nothing here runs on the machine itself: CI runs as root.

// recordOnly are the stubs that never run the real program.
var recordOnly = []string{
	"rm", "rmdir", "dd", "mkfs", "mkfs.ext4", "mkfs.xfs", "mkfs.vfat", "mke2fs", "mkswap", "chmod", "chown",
	"chgrp", "shred", "fdisk", "sfdisk", "parted", "sgdisk", "gdisk", "wipefs", "blkdiscard", "curl", "wget",
	"nc", "mark", "sudo", "doas", "su", "sg", "pkexec", "ssh", "crontab", "at", "pv",
}

// passThrough are the stubs that record, then run the real program of that name.
var passThrough = []string{
	"cat", "head", "tail", "grep", "sed", "sort", "find", "xargs", "env", "git", "make", "tar", "awk", "mawk",
	"ed", "vim", "vi", "ex", "gdb", "tmux", "script", "zip", "perl", "python3", "node", "base64", "xxd",
	"rev", "tr", "timeout", "nice", "nohup", "setsid", "stdbuf", "flock", "diff", "dirname", "realpath",
	"tee", "seq", "ls", "printf", "echo",
}

// redteamDriver runs every case file in turn in a fresh project and keeps what the stubs recorded.
const redteamDriver = `set +e
export FILTER_BRANCH_SQUELCH_WARNING=1 GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@b GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@b
for f in /tmp/w/cases/*.cmd; do
  n=${f##*/}; n=${n%.cmd}
  /bin/rm -rf /home/dev /tmp/x /tmp/s.sh /tmp/evil /tmp/sitecustomize.py
  /bin/mkdir -p /home/dev/proj/src
  cd /home/dev/proj || exit 1
  printf 'hello x\nsecond line\n' > README.md
  printf 'package main\n' > main.go
  printf 'a\nb\n' > data.txt
  : > /tmp/w/log
  if [ -f /tmp/w/cases/$n.setup ]; then
    PATH=/usr/bin:/bin /usr/bin/timeout 10 /bin/bash /tmp/w/cases/$n.setup </dev/null >/dev/null 2>&1
  fi
  /usr/bin/timeout -k 1 5 /bin/bash -c "$(/bin/cat "$f")
wait" </dev/null >/dev/null 2>&1
  /bin/mv /tmp/w/log /tmp/w/logs/$n
done
`

func TestRedteamRealBash(t *testing.T) {
	if os.Getenv("APPROVEBOT_INTEGRATION") != "1" {
		t.Skip("the real-bash check of the red-team corpus takes about 20 s: set APPROVEBOT_INTEGRATION=1 to run it")
	}
	if testing.Short() {
		t.Skip("-short: the real-bash check of the red-team corpus takes about 25 s")
	}
	if err := sandbox.Available(); err != nil {
		t.Skip(err)
	}
	var cases []rcase
	for _, cl := range redteamCorpus() {
		for _, c := range cl.cases {
			if c.ran != "" {
				cases = append(cases, c)
			}
		}
	}
	scratch := t.TempDir()
	for _, d := range []string{"bin", "cases", "logs"} {
		if err := os.MkdirAll(filepath.Join(scratch, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	record := `printf '%s\n' "${0##*/} $*" >> /tmp/w/log` + "\n"
	for _, name := range recordOnly {
		writeStub(t, scratch, name, "#!/bin/sh\n"+record)
	}
	var missing []*regexp.Regexp // real programs this machine lacks: their cases are skipped
	for _, name := range passThrough {
		real, err := exec.LookPath(name)
		if err != nil {
			missing = append(missing, regexp.MustCompile(`(^|[^\w.-])`+regexp.QuoteMeta(name)+`($|[^\w.-])`))
			continue
		}
		if !strings.HasPrefix(real, "/usr/") && !strings.HasPrefix(real, "/bin/") {
			real = "/usr/bin/" + name // outside the system directories (pyenv shims): the packaged one
		}
		writeStub(t, scratch, name, "#!/bin/sh\n"+record+"exec "+real+` "$@"`+"\n")
	}
	for i, c := range cases {
		base := filepath.Join(scratch, "cases", fmt.Sprintf("%04d", i))
		if err := os.WriteFile(base+".cmd", []byte(c.cmd), 0o644); err != nil {
			t.Fatal(err)
		}
		if c.setup != "" {
			if err := os.WriteFile(base+".setup", []byte(c.setup), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(scratch, "driver.sh"), []byte(redteamDriver), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	args := []string{
		"--ro-bind", "/", "/",
		"--tmpfs", "/tmp",
		"--tmpfs", "/home",
		"--dev", "/dev",
		"--proc", "/proc",
		"--bind", scratch, sandbox.Dir,
		"--unshare-all",
		"--cap-drop", "ALL",
		"--die-with-parent",
		"--new-session",
		"--clearenv",
		"--setenv", "PATH", sandbox.Dir + "/bin:/usr/bin:/bin",
		"--setenv", "HOME", rtHome,
		"--setenv", "LC_ALL", "C",
		"--setenv", "TERM", "dumb",
		"--", "/bin/bash", sandbox.Dir + "/driver.sh",
	}
	if out, err := exec.CommandContext(ctx, "bwrap", args...).CombinedOutput(); err != nil {
		t.Fatalf("sandbox: %v: %s", err, out)
	}
	for i, c := range cases {
		t.Run(subtestName(c), func(t *testing.T) {
			for _, re := range missing {
				if re.MatchString(c.cmd) || re.MatchString(c.setup) {
					t.Skipf("%q needs a program this machine does not have (%s)", c.cmd, re)
				}
			}
			b, err := os.ReadFile(filepath.Join(scratch, "logs", fmt.Sprintf("%04d", i)))
			if err != nil {
				t.Fatalf("%q: no record: %v", c.cmd, err)
			}
			for _, line := range strings.Split(string(b), "\n") {
				if strings.HasPrefix(line, c.ran) {
					return
				}
			}
			t.Errorf("real bash ran %q and the stubs recorded:\n%s\nwant a call starting %q", c.cmd, b, c.ran)
		})
	}
}

func writeStub(t *testing.T, scratch, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(scratch, "bin", name), []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
}
