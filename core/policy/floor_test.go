package policy

import (
	"encoding/base64"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/shell"
)

const (
	testHome = "/home/agent"
	testCwd  = "/home/agent/project"
)

func floorOf(cmd string) (FloorHit, bool) {
	return CheckFloor(shell.Analyze(cmd, shell.Options{Cwd: testCwd, Home: testHome}))
}

// psEncode is what PowerShell's -EncodedCommand expects: base64 of UTF-16LE.
func psEncode(s string) string {
	u := utf16.Encode([]rune(s))
	b := make([]byte, 2*len(u))
	for i, r := range u {
		b[2*i], b[2*i+1] = byte(r), byte(r>>8)
	}
	return base64.StdEncoding.EncodeToString(b)
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// floorCases are adversarial commands the floor must refuse, with the rule expected.
var floorCases = []struct {
	cmd, rule string
}{
	// Recursive delete of / in every spelling.
	{"rm -rf /", FloorRmRoot},
	{"rm -rf //", FloorRmRoot},
	{"rm -rf /.", FloorRmRoot},
	{"rm -rf /*", FloorRmRoot},
	{"rm -rf /..", FloorRmRoot},
	{"rm -rf /./", FloorRmRoot},
	{"rm -rf /../../..", FloorRmRoot},
	{"rm -fr /", FloorRmRoot},
	{"rm -Rf /", FloorRmRoot},
	{"rm -r -f /", FloorRmRoot},
	{"rm -r /", FloorRmRoot},
	{"rm --recursive --force /", FloorRmRoot},
	{"rm --rec --force /", FloorRmRoot},
	{"rm -rf --no-preserve-root /", FloorRmRoot},
	{"rm / -rf", FloorRmRoot},
	{"rm -rf -- /", FloorRmRoot},
	{"rm -rfv /", FloorRmRoot},
	{"rm -rf ./ /", FloorRmRoot},
	{"rm -rf /bin/..", FloorRmRoot},
	{"rm -rf /*/*", FloorRmRoot},
	{"/bin/rm -rf /", FloorRmRoot},
	{"/usr/bin/rm -rf /", FloorRmRoot},
	{`\rm -rf /`, FloorRmRoot},
	{"r''m -rf /", FloorRmRoot},
	{`r\m -r\f /`, FloorRmRoot},
	{`"rm" -rf "/"`, FloorRmRoot},
	{"rm -rf '/'", FloorRmRoot},
	{`$'\x72\x6d' -rf /`, FloorRmRoot},
	{`rm -rf $'\x2f'`, FloorRmRoot},
	{`rm -rf $'\057'`, FloorRmRoot},
	{"RM -RF /", FloorRmRoot},
	// Through wrappers.
	{"sudo rm -rf /", FloorRmRoot},
	{"sudo -u root rm -rf /", FloorRmRoot},
	{"sudo -E env rm -rf /", FloorRmRoot},
	{"sudo --preserve-env -H -- rm -rf /", FloorRmRoot},
	{"doas rm -rf /", FloorRmRoot},
	{"env -i rm -rf /", FloorRmRoot},
	{"env FOO=1 BAR=2 rm -rf /", FloorRmRoot},
	{"nice -n 19 rm -rf /", FloorRmRoot},
	{"nice -19 rm -rf /", FloorRmRoot},
	{"nohup rm -rf / &", FloorRmRoot},
	{"timeout 10 rm -rf /", FloorRmRoot},
	{"timeout -s KILL 5m rm -rf /", FloorRmRoot},
	{"command rm -rf /", FloorRmRoot},
	{"exec rm -rf /", FloorRmRoot},
	{"time rm -rf /", FloorRmRoot},
	{"busybox rm -rf /", FloorRmRoot},
	{"stdbuf -oL ionice -c3 rm -rf /", FloorRmRoot},
	{"sudo --weird-option rm -rf /", FloorRmRoot},
	{"strace -f rm -rf /", FloorRmRoot},
	// Shell wrappers, eval, substitutions.
	{"bash -c 'rm -rf /'", FloorRmRoot},
	{`sh -c "rm -rf /"`, FloorRmRoot},
	{"bash -lc 'rm -rf /'", FloorRmRoot},
	{"zsh -c 'rm -rf /'", FloorRmRoot},
	{"dash -ec 'rm -rf /'", FloorRmRoot},
	{`bash -c "bash -c 'rm -rf /'"`, FloorRmRoot},
	{`sudo bash -c "cd / && rm -rf *"`, FloorRmRoot},
	{"sh -c 'rm -rf \"$1\"' _ /", FloorRmRoot},
	{"sh -c '$0 -rf /' rm", FloorRmRoot},
	{`eval "rm -rf /"`, FloorRmRoot},
	{"eval 'rm' '-rf' '/'", FloorRmRoot},
	{"trap 'rm -rf /' EXIT", FloorRmRoot},
	{"$(rm -rf /)", FloorRmRoot},
	{"echo `rm -rf /`", FloorRmRoot},
	{`echo "$(rm -rf /)"`, FloorRmRoot},
	{"ls <(rm -rf /)", FloorRmRoot},
	{"(rm -rf /)", FloorRmRoot},
	{"{ rm -rf /; }", FloorRmRoot},
	{"if true; then rm -rf /; fi", FloorRmRoot},
	{"true && rm -rf / || echo failed", FloorRmRoot},
	{"while false; do :; done; rm -rf /", FloorRmRoot},
	{"case x in x) rm -rf / ;; esac", FloorRmRoot},
	{"ls | rm -rf /", FloorRmRoot},
	// Values the analysis can work out.
	{"X=/; rm -rf $X", FloorRmRoot},
	{"X=/ && Y=$X && rm -rf $Y", FloorRmRoot},
	{"export T=/; rm -rf \"$T\"", FloorRmRoot},
	{"rm -rf $(echo /)", FloorRmRoot},
	{"rm -rf `echo /`", FloorRmRoot},
	{"rm -rf $(printf /)", FloorRmRoot},
	{"rm -rf /$UNSET", FloorRmRoot},
	{"rm -rf /${UNSET}/", FloorRmRoot},
	{"rm -rf ${X:-/}", FloorRmRoot},
	{"r=rm; $r -rf /", FloorRmRoot},
	{"{rm,-rf,/}", FloorRmRoot},
	{"rm${IFS}-rf${IFS}/", FloorRmRoot},
	{`X="-rf /"; rm $X`, FloorRmRoot},
	{"set -- -rf /; rm \"$@\"", FloorRmRoot},
	{"for d in /tmp /; do rm -rf $d; done", FloorRmRoot},
	{"for a in x; do for d in /; do rm -rf $d; done; done", FloorRmRoot},
	{"f() { rm -rf \"$1\"; }; f /", FloorRmRoot},
	// Scripts piped into a shell.
	{`echo "rm -rf /" | sh`, FloorRmRoot},
	{`printf 'rm -rf /\n' | bash`, FloorRmRoot},
	{"printf '%s' 'rm -rf /' | sh", FloorRmRoot},
	{"echo " + b64("rm -rf /") + " | base64 -d | sh", FloorRmRoot},
	{"echo '" + b64("rm -rf /") + "' | base64 --decode | sudo bash", FloorRmRoot},
	{"base64 -d <<< " + b64("rm -rf /") + " | bash", FloorRmRoot},
	{"sh -c \"$(echo " + b64("rm -rf /") + " | base64 -d)\"", FloorRmRoot},
	{"echo '726d202d7266202f' | xxd -r -p | sh", FloorRmRoot},
	{"rev <<< '/ fr- mr' | sh", FloorRmRoot},
	{"echo 'ez -eS /' | tr 'a-z' 'n-za-m' | sh", FloorRmRoot},
	{"sh <<< 'rm -rf /'", FloorRmRoot},
	{"bash <<EOF\nrm -rf /\nEOF", FloorRmRoot},
	{"cat <<'EOF' | sh\nrm -rf /\nEOF", FloorRmRoot},
	{"bash <(echo 'rm -rf /')", FloorRmRoot},
	{"source <(echo 'rm -rf /')", FloorRmRoot},
	{"bash < <(echo 'rm -rf /')", FloorRmRoot},
	{"echo 'rm -rf /' | at now", FloorRmRoot},
	{"alias x='rm -rf /'; x", FloorRmRoot},
	// Commands hidden in options and environment variables.
	{"PAGER='rm -rf /' git log", FloorRmRoot},
	{"git -c alias.x='!rm -rf /' x", FloorRmRoot},
	{"git -c core.pager='rm -rf /' log", FloorRmRoot},
	{"ssh -o ProxyCommand='rm -rf /' host", FloorRmRoot},
	{"env -S 'rm -rf /'", FloorRmRoot},
	{"watch 'rm -rf /'", FloorRmRoot},
	{"watch -n 1 rm -rf /", FloorRmRoot},
	{"flock /tmp/lock -c 'rm -rf /'", FloorRmRoot},
	{"su -c 'rm -rf /'", FloorRmRoot},
	{"su root -c 'rm -rf /'", FloorRmRoot},
	{"script -qc 'rm -rf /' /dev/null", FloorRmRoot},
	{"npx -c 'rm -rf /'", FloorRmRoot},
	// xargs and find.
	{"echo / | xargs rm -rf", FloorRmRoot},
	{"xargs rm -rf <<< /", FloorRmRoot},
	{"echo / | xargs -I{} rm -rf {}", FloorRmRoot},
	{"find / | xargs rm -rf", FloorRmRoot},
	{"find / -type f -print0 | xargs -0 rm -f", FloorRmRoot},
	{"find / -delete", FloorRmRoot},
	{"find / -exec rm -rf {} \\;", FloorRmRoot},
	{"find / -exec rm -rf {} +", FloorRmRoot},
	{"find / -exec rm {} \\;", FloorRmRoot},
	{"find -L / -delete", FloorRmRoot},
	{"find / -depth -delete", FloorRmRoot},
	{"find / -type f -delete", FloorRmRoot},
	{"find / -name '*' -delete", FloorRmRoot},
	{"find / -name x -o -delete", FloorRmRoot},
	{"find / -mtime +1 -delete", FloorRmRoot},
	{"cd / && find . -delete", FloorRmRoot},
	{"rsync -a --delete /tmp/empty/ /", FloorRmRoot},
	// The working directory.
	{"cd / && rm -rf *", FloorRmRoot},
	{"cd /; rm -rf ./*", FloorRmRoot},
	{"cd / || exit; rm -rf -- *", FloorRmRoot},
	{"(cd / && rm -rf *)", FloorRmRoot},
	{"cd /etc && rm -rf *", FloorRmSystem},
	{"cd /usr/local/.. && rm -rf .", FloorRmSystem},
	{"pushd / && rm -rf *", FloorRmRoot},
	{"env -C / rm -rf *", FloorRmRoot},
	{"sudo -D / rm -rf *", FloorRmRoot},
	// Remote shells and interpreters.
	{"ssh host 'rm -rf /'", FloorRmRoot},
	{"ssh -p 2222 -i key user@host rm -rf /", FloorRmRoot},
	{"ssh host -- sudo rm -rf /", FloorRmRoot},
	{"ssh host 'rm -rf ~'", FloorRmHome},
	{"ssh host 'cd ~ && rm -rf *'", FloorRmHome},
	{`python3 -c 'import os; os.system("rm -rf /")'`, FloorRmRoot},
	{`python -c "import subprocess; subprocess.run(['rm', '-rf', '/'])"`, FloorRmRoot},
	{`python3 -c "import subprocess; subprocess.call('rm -rf /', shell=True)"`, FloorRmRoot},
	{`python3 -c "__import__('os').system('rm -rf /')"`, FloorRmRoot},
	{`python3 -c "import os; os.system('rm -rf ' + '/')"`, FloorRmRoot},
	{`python3 -c "import shutil; shutil.rmtree('/')"`, FloorRmRoot},
	{`python3 -c "import shutil; shutil.rmtree('/etc')"`, FloorRmSystem},
	{`python3 -c "exec('import os; os.system(\"rm -rf /\")')"`, FloorRmRoot},
	{"python3 <<EOF\nimport os\nos.system('rm -rf /')\nEOF", FloorRmRoot},
	{`perl -e 'system("rm -rf /")'`, FloorRmRoot},
	{"perl -e '`rm -rf /`'", FloorRmRoot},
	{`perl -e 'system "rm", "-rf", "/"'`, FloorRmRoot},
	{`perl -le 'qx{rm -rf /}'`, FloorRmRoot},
	{`ruby -e 'system("rm", "-rf", "/")'`, FloorRmRoot},
	{`ruby -e '%x(rm -rf /)'`, FloorRmRoot},
	{`ruby -e 'require "fileutils"; FileUtils.rm_rf("/")'`, FloorRmRoot},
	{`node -e 'require("child_process").execSync("rm -rf /")'`, FloorRmRoot},
	{`node -e "require('fs').rmSync('/', {recursive: true})"`, FloorRmRoot},
	{`awk 'BEGIN { system("rm -rf /") }'`, FloorRmRoot},
	{`awk 'BEGIN { print "rm -rf /" | "sh" }'`, FloorRmRoot},
	{`php -r 'system("rm -rf /");'`, FloorRmRoot},
	{`lua -e 'os.execute("rm -rf /")'`, FloorRmRoot},
	{`osascript -e 'do shell script "rm -rf /"'`, FloorRmRoot},
	// Home.
	{"rm -rf ~", FloorRmHome},
	{"rm -rf ~/", FloorRmHome},
	{"rm -rf ~/.", FloorRmHome},
	{"rm -rf $HOME", FloorRmHome},
	{`rm -rf "$HOME"`, FloorRmHome},
	{"rm -rf ${HOME}", FloorRmHome},
	{"rm -rf ${HOME:?}/", FloorRmHome},
	{"rm -rf ~/*", FloorRmHome},
	{"rm -rf /home/agent", FloorRmHome},
	{"cd ~ && rm -rf *", FloorRmHome},
	{"cd && rm -rf .", FloorRmHome},
	{"rm -rf ..", FloorRmHome},
	{"find ~ -delete", FloorRmHome},
	{"find $HOME -exec rm -rf {} +", FloorRmHome},
	// System directories.
	{"rm -rf $HOME/..", FloorRmSystem},
	{"rm -rf /etc", FloorRmSystem},
	{"rm -rf /usr", FloorRmSystem},
	{"rm -rf /var/", FloorRmSystem},
	{"rm -rf /boot", FloorRmSystem},
	{"rm -rf /lib", FloorRmSystem},
	{"rm -rf /lib64", FloorRmSystem},
	{"rm -rf /sys", FloorRmSystem},
	{"rm -rf /proc", FloorRmSystem},
	{"rm -rf /dev", FloorRmSystem},
	{"rm -rf /home", FloorRmSystem},
	{"rm -rf /root", FloorRmSystem},
	{"rm -rf /sbin", FloorRmSystem},
	{"rm -rf /bin", FloorRmSystem},
	{"rm -rf /usr/bin", FloorRmSystem},
	{"rm -rf /etc/*", FloorRmSystem},
	{"rm -rf /home/*", FloorRmSystem},
	{"rm -rf /usr/*/*", FloorRmSystem},
	{"rm -rf /l*", FloorRmSystem},
	{"rm -rf /[e]tc", FloorRmSystem},
	{"rm -rf /{bin,usr}", FloorRmSystem},
	{"rm -rf /usr/$UNSET", FloorRmSystem},
	{"sudo rm -rf /var", FloorRmSystem},
	{"find /etc -delete", FloorRmSystem},
	// Recursive chmod/chown of /.
	{"chmod -R 777 /", FloorChmodRoot},
	{"chmod -R 000 /", FloorChmodRoot},
	{"chmod --recursive 777 /", FloorChmodRoot},
	{"chmod -Rf a+rwx /*", FloorChmodRoot},
	{"chmod -R -x /", FloorChmodRoot},
	{"sudo chmod -R 777 /", FloorChmodRoot},
	{"chmod -R 700 /etc", FloorChmodRoot},
	{"chown -R nobody /", FloorChownRoot},
	{"chown -R nobody:nogroup /etc", FloorChownRoot},
	{"chgrp -R users /", FloorChownRoot},
	{"sudo chown -R $USER /usr", FloorChownRoot},
	// Raw block devices.
	{"dd if=/dev/zero of=/dev/sda", FloorBlockWrite},
	{"dd if=x.img of=/dev/nvme0n1 bs=4M status=progress", FloorBlockWrite},
	{"sudo dd if=/dev/urandom of=/dev/mmcblk0", FloorBlockWrite},
	{"gzip -dc img.gz | sudo dd of=/dev/disk2 bs=1m", FloorBlockWrite},
	{"cd /dev && dd if=x of=sda", FloorBlockWrite},
	{"dd if=/dev/zero of=/dev//sda", FloorBlockWrite},
	{"cat img > /dev/sda", FloorBlockWrite},
	{"echo x > /dev/sda", FloorBlockWrite},
	{"echo x >> /dev/sdb1", FloorBlockWrite},
	{"{ cat img; } > /dev/sda", FloorBlockWrite},
	{"tee /dev/sda < img", FloorBlockWrite},
	{"cat img | sudo tee /dev/nvme0n1 > /dev/null", FloorBlockWrite},
	{"cp img /dev/sdb", FloorBlockWrite},
	{"sudo cp disk.img /dev/mapper/root", FloorBlockWrite},
	{"echo 1 > /dev/mem", FloorBlockWrite},
	{"mkfs.ext4 /dev/sda1", FloorBlockFormat},
	{"mkfs -t ext4 /dev/sdb", FloorBlockFormat},
	{"mkfs.xfs -f /dev/vdb", FloorBlockFormat},
	{"mke2fs /dev/sdc", FloorBlockFormat},
	{"mkswap /dev/sda2", FloorBlockFormat},
	{"wipefs -a /dev/sda", FloorBlockFormat},
	{"shred /dev/sda", FloorBlockFormat},
	{"shred -n 3 -z /dev/nvme0n1", FloorBlockFormat},
	{"blkdiscard /dev/sda", FloorBlockFormat},
	{"sgdisk --zap-all /dev/sda", FloorBlockFormat},
	{"sudo mkfs.vfat /dev/disk/by-id/usb-stick", FloorBlockFormat},
	// Fork bombs.
	{":(){ :|:& };:", FloorForkBomb},
	{":(){ :|: & };:", FloorForkBomb},
	{"bomb(){ bomb|bomb& };bomb", FloorForkBomb},
	{"f() { f & f; }; f", FloorForkBomb},
	{"bash -c ':(){ :|:& };:'", FloorForkBomb},
	{`perl -e 'fork while fork'`, FloorForkBomb},
	{"python3 -c $'import os\\nwhile True: os.fork()'", FloorForkBomb},
	{`ruby -e 'loop { fork }'`, FloorForkBomb},
	{`node -e 'while(true){require("child_process").fork(__filename)}'`, FloorForkBomb},
	{"%0|%0", FloorForkBomb},
	// Windows.
	{"format c:", FloorWinFormat},
	{"format C: /q /y", FloorWinFormat},
	{"cmd.exe /c format d: /q", FloorWinFormat},
	{"Format-Volume -DriveLetter C", FloorWinFormat},
	{`rd /s /q C:\`, FloorWinDelete},
	{`cmd /c "rd /s /q C:\"`, FloorWinDelete},
	{`rmdir /s /q C:\`, FloorWinDelete},
	{`del /f /s /q C:\*.*`, FloorWinDelete},
	{`Remove-Item -Recurse -Force C:\`, FloorWinDelete},
	{`Remove-Item -Path C:\Windows -Recurse -Force`, FloorWinDelete},
	{`Remove-Item C:\* -Recurse -Force`, FloorWinDelete},
	{`rm -r -fo C:\`, FloorWinDelete},
	{`rmdir /s /q %SystemRoot%`, FloorWinDelete},
	{`powershell -Command "Remove-Item $env:windir -Recurse -Force"`, FloorWinDelete},
	{`powershell -Command "Remove-Item -Recurse -Force C:\Users"`, FloorWinDelete},
	{`reg delete HKLM\SOFTWARE /f`, FloorWinRegistry},
	{`reg delete HKEY_LOCAL_MACHINE\SYSTEM /f`, FloorWinRegistry},
	{`reg.exe delete "HKCU" /f`, FloorWinRegistry},
	{`powershell Remove-Item -Path HKLM:\SOFTWARE -Recurse`, FloorWinRegistry},
	{`vssadmin delete shadows /all /quiet`, FloorWinShadow},
	{`vssadmin.exe Delete Shadows /All /Quiet`, FloorWinShadow},
	{`wmic shadowcopy delete`, FloorWinShadow},
	{`wbadmin delete catalog -quiet`, FloorWinShadow},
	{`powershell -Command "Get-WmiObject Win32_ShadowCopy | ForEach-Object { $_.Delete() }"`, FloorWinShadow},
	{`cmd /c "vssadmin delete shadows /all /quiet & echo done"`, FloorWinShadow},
	{"powershell -EncodedCommand " + psEncode(`Remove-Item -Recurse -Force C:\`), FloorWinDelete},
	{"powershell -enc " + psEncode("vssadmin delete shadows /all /quiet"), FloorWinShadow},
	{"powershell.exe -NoProfile -ExecutionPolicy Bypass -enco " + psEncode("format c:"), FloorWinFormat},
	{"pwsh -e " + psEncode("Format-Volume -DriveLetter D"), FloorWinFormat},
	{"powershell -ec " + psEncode(`reg delete HKLM\SYSTEM /f`), FloorWinRegistry},
	{"powershell -EncodedCommand " + psEncode(`cmd /c "rd /s /q C:\"`), FloorWinDelete},
	{"powershell -enc " + psEncode("powershell -enc "+psEncode("wmic shadowcopy delete")), FloorWinShadow},
	{"powershell -enc " + psEncode(`Remove-Item -Recurse -Force /`), FloorWinDelete},
	{"pwsh -c 'iex \"format c:\"'", FloorWinFormat},
}

func TestFloorRefuses(t *testing.T) {
	if len(floorCases) < 100 {
		t.Fatalf("only %d adversarial floor cases", len(floorCases))
	}
	for _, tc := range floorCases {
		t.Run(tc.cmd, func(t *testing.T) {
			h, ok := floorOf(tc.cmd)
			if !ok {
				t.Fatalf("floor did not refuse %q", tc.cmd)
			}
			if h.Rule != tc.rule {
				t.Errorf("rule = %s, want %s (%s)", h.Rule, tc.rule, h.Reason)
			}
			if !strings.HasPrefix(h.Reason, "refused by the hardline floor: ") {
				t.Errorf("reason %q", h.Reason)
			}
		})
	}
}

// nearMisses mention dangerous commands or work inside a project: never the floor.
var nearMisses = []string{
	`echo "rm -rf /"`,
	"echo rm -rf /",
	"grep 'mkfs' notes.txt",
	`git commit -m "fix rm -rf / bug"`,
	`git log --format='%H rm -rf /'`,
	"rm -rf ./build",
	"rm -rf /tmp/x",
	"rm -rf build/ dist/",
	"rm -rf node_modules",
	"rm -rf ../other-project",
	"rm -r ~/projects/old",
	"rm -rf $HOME/.cache/foo",
	"rm -rf ~/.npm",
	"rm -rf ~/.cache/*",
	`rm -rf "$HOME/$PROJECT"`,
	`rm -rf "$BUILD_DIR"`,
	`rm -rf "$BUILD_DIR"/*`,
	"rm -rf -- -weird-dir",
	"rm -rf /tmp/*",
	"rm -rf /usr/local/go",
	"rm -rf /var/lib/apt/lists/*",
	"rm -rf /var/www/html/*",
	"rm -f /etc/nginx/sites-enabled/default",
	"rm /",
	"sudo rm -rf /var/cache/apt/archives",
	"sudo rm -rf /opt/old-app",
	"mkdir -p /tmp/x && cd /tmp/x && rm -rf *",
	"cd /tmp && rm -rf *",
	"cd / && ls",
	"cd / && cd tmp && rm -rf *",
	"git rm -r --cached .",
	"git clean -fdx",
	"kubectl delete pod x",
	"find . -name '*.pyc' -delete",
	"find /tmp/x -delete",
	"find / -name foo -print",
	"find /var/log/app -name '*.gz' -delete",
	"find / -name node_modules -type d -prune -exec rm -rf {} +",
	"find ~/Downloads -name '*.tmp' -delete",
	"find . -type f -exec rm {} \\;",
	"chmod -R 755 ./dist",
	"chmod 755 /",
	"chmod -R g+w /srv/app",
	"chown -R me ~/project",
	"chmod -R u+w ~",
	"chown -R www-data: /var/www/html",
	"ls -la /",
	"du -sh /*",
	"tar -czf backup.tgz /etc",
	"cat /etc/passwd",
	"cat /dev/sda | head -c 512 | xxd",
	"dd of=./disk.img if=/dev/zero bs=1M count=10",
	"dd if=/dev/sda of=./backup.img",
	"sudo dd if=/dev/sda of=/tmp/mbr.bin bs=512 count=1",
	"cp a.img ./disk.img",
	"cat disk.img > ./copy.img",
	"echo hi > /dev/null",
	"make 2>/dev/null",
	"echo x > /dev/stderr",
	"tee /tmp/log",
	"ls /dev/sda*",
	"blkid /dev/sda",
	"lsblk",
	"fdisk -l /dev/sda",
	"mkfs.ext4 ./disk.img",
	"mkfs.ext4 -F disk.img",
	"mkswap ./swapfile",
	"wipefs -n /dev/sda",
	"shred secret.txt",
	"shred -u ~/secret.key",
	"printf 'rm -rf /\\n' > notes.txt",
	"echo 'dd of=/dev/sda' >> notes.md",
	"cat <<EOF > x.sh\nrm -rf /\nEOF",
	`python -c 'print("rm -rf /")'`,
	`python3 -c "import shutil; shutil.rmtree('build')"`,
	`python3 -c "import os; os.fork()"`,
	`node -e 'console.log("rm -rf /")'`,
	`awk '{print "rm -rf /"}' file`,
	`perl -e 'print "rm -rf /\n"'`,
	"grep -r \"os.system\" .",
	"echo fork while fork",
	"echo ':(){ :|:& };:'",
	"bash -c 'echo rm -rf /'",
	"sh -c 'ls /'",
	`eval "echo hi"`,
	"ssh host ls /",
	"ssh host 'rm -rf /tmp/x'",
	"ssh host 'rm -rf ~/build'",
	"xargs rm -rf < files.txt",
	"echo build | xargs rm -rf",
	"rsync -a --delete src/ dst/",
	"docker run --rm -v /:/host alpine ls /host",
	"go vet ./...",
	"git format-patch HEAD~1",
	"clang-format -i main.c",
	"npm run format",
	`reg query HKLM\SOFTWARE`,
	`reg delete HKCU\Software\MyApp /f`,
	`reg delete HKLM\SOFTWARE /v Foo /f`,
	"vssadmin list shadows",
	"wmic shadowcopy list",
	`Remove-Item -Recurse .\build`,
	`Remove-Item C:\temp\foo -Recurse`,
	`rd /s /q C:\temp\build`,
	`del C:\temp\x.txt`,
	`del /s /q *.tmp`,
	"powershell -EncodedCommand " + psEncode("Get-ChildItem C:\\"),
	"powershell -Command \"Get-ChildItem C:\\Windows\"",
	"format-check --all",
}

func TestFloorNearMisses(t *testing.T) {
	if len(nearMisses) < 60 {
		t.Fatalf("only %d near-misses", len(nearMisses))
	}
	for _, cmd := range nearMisses {
		t.Run(cmd, func(t *testing.T) {
			if h, ok := floorOf(cmd); ok {
				t.Fatalf("floor refused a near-miss: %s (%s)", h.Rule, h.Reason)
			}
		})
	}
}

// The floor wins in every mode, with everything allowlisted.
func TestFloorBeatsEverything(t *testing.T) {
	for _, security := range []string{"deny", "allowlist", "full"} {
		for _, ask := range []string{"off", "on-miss", "always"} {
			j, err := NewExecJudge(ExecConfig{Security: security, Ask: ask, Allowlist: []AllowlistEntry{{Pattern: "/**"}}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, tc := range floorCases[:40] {
				got := j.Judge(CommandInput{Command: tc.cmd, Cwd: testCwd})
				if got.Verdict != Deny || got.Source != approval.SourceFloor || got.Rule != tc.rule {
					t.Errorf("%s/%s %q: got %v %s %s", security, ask, tc.cmd, got.Verdict, got.Source, got.Rule)
				}
			}
		}
	}
}
