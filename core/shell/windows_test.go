package shell

import "testing"

// The floor reads a line the Windows way only when it carries a mark of cmd.exe or PowerShell;
// a POSIX short option in capitals is not one.
func TestLooksWindows(t *testing.T) {
	for _, tc := range []struct {
		line string
		want bool
	}{
		{`git log -S 'id_rsa' --oneline`, false},
		{`grep -E 'a|b' -R src`, false},
		{`ls -la "$HOME/notes"`, false},
		{`make CFLAGS=-O2`, false},
		{`cat /tmp/x:/y`, false},
		{`Remove-Item -Recurse -Force C:/`, true},
		{`rm -r -fo C:/`, true},
		{`rd /s /q c:\`, true},
		{`del %USERPROFILE%`, true},
		{`:a & start %0 & goto a`, true},
		{`Get-Content $env:USERPROFILE/.ssh/id_rsa`, true},
		{`[IO.Directory]::Delete('C:/', $true)`, true},
		{`ri -Recurse x`, true},
	} {
		t.Run(tc.line, func(t *testing.T) {
			if got := looksWindows(tc.line); got != tc.want {
				t.Errorf("looksWindows(%q) = %v, want %v", tc.line, got, tc.want)
			}
		})
	}
}
