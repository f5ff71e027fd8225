package policy

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSafeBins(t *testing.T) {
	env := newTestEnv(t)
	j := env.judge(t, ExecConfig{SafeBins: append(append([]string(nil), DefaultSafeBins...), "git", "yq", "xxd")})
	cases := []struct {
		cmd  string
		safe bool
	}{
		{"ls -la /tmp", true},
		{"cat README.md", true},
		{"cat README.md > /dev/null", true},
		{"cat README.md 2>/dev/null", true},
		{"cat x > ~/.bashrc", false},
		{"cat x >> notes.txt", true}, // a write inside the project
		{"cat x >> /tmp/notes.txt", false},
		{"cat x > $OUT", false},
		{"ls $HOME", true}, // a value the request tells: checked like a literal
		{"ls $UNSET_VAR", false},
		{"ls $(pwd)", false},
		{"grep -rn TODO src", true},
		{"grep -f patterns.txt file", true},
		{"head -n 5 file", true},
		{"tail -f log", true},
		{"wc -l *.go", true}, // no option of wc does harm when a file name supplies it
		{"wc -l ./*.go", true},
		{"wc -l src/*.go", true},
		{"sort *", false},
		{"cat -- -*", true},
		{"sort -- -*", true},
		{"sort -u *.txt", false},
		{"LC_ALL=C sort file", true},
		{"RIPGREP_CONFIG_PATH=./x rg foo", false},
		{"HOME=/tmp/x git log", false},
		{"export RIPGREP_CONFIG_PATH=./x; rg foo", false},
		{"set -a; X=1; rg foo", false},
		{"env RIPGREP_CONFIG_PATH=./x rg foo", false},
		{"curl x | xargs sed", false},
		{"echo -i | xargs sed", false},
		{"tree -R -H .", false},
		{"sort -u file", true},
		{"sort -k2 -t, file", true},
		{"sort -o out.txt file", true}, // writes inside the project are the effects' to judge
		{"sort -o /tmp/out.txt file", false},
		{"sort -o ../out.txt file", false},
		{"sort -uo out.txt file", true},
		{"sort --output=out.txt file", true},
		{"sort --out=out.txt file", true},
		{"sort --compress-program=sh file", false},
		{"sort --files0-from=list", false},
		{"uniq file", true},
		{"uniq in out", true},
		{"uniq in /tmp/out", false},
		{"uniq in out extra", false},
		{"base64 file", true},
		{"base64 -d file", true},
		{"base64 -o out file", false},
		{"base64 --output out file", false},
		{"rg -n foo src", true},
		{"rg --pre ./evil foo", false},
		{"rg --pre=./evil foo", false},
		{"rg --hostname-bin ./evil foo", false},
		{"sed -n '1,5p' file", true},
		{"sed 's/a/b/g' file", true},
		{"sed -E 's|a|b|' file", true},
		{"sed -e 's/a/b/' -e '/x/d' file", true},
		{"sed -i 's/a/b/' file", true},
		{"sed -i 's/a/b/' /etc/hosts", false},
		{"sed -i 's/a/b/' ~/.bashrc", false},
		{"sed -i'/tmp/*' p file", false},
		{"sed -i'bak/*' p file", true},
		{"sed -i.bak p ../file", false},
		{"sed -ni 's/a/b/p' file", true},
		{"sed --in-place 's/a/b/' file", true},
		{"sed -f script.sed file", false},
		{"sed 's/a/b/w out.txt' file", true},
		{"sed 's/a/b/w /tmp/out.txt' file", false},
		{"sed 's/a/id/e' file", false},
		{"sed 'w out.txt' file", true},
		{"sed 'w ../out.txt' file", false},
		{"sed '1e rm -rf x' file", false},
		{"sed -n '/x/{p;q}' file", true},
		{"sed --sandbox 's/a/b/w out' file", true},
		{"find . -name '*.go'", true},
		{"find . -name '*.go' -print0", true},
		{"find . -delete", false},
		{"find . -exec rm {} +", false},
		{"find . -fprint out", false},
		{"find . -execdir sh -c x \\;", false},
		{"jq .name package.json", true},
		{"tr a-z A-Z", true},
		{"tree -L 2", true},
		{"tree -o out.txt", true},
		{"tree -o /tmp/out.txt", false},
		{"date +%s", true},
		{"date -s 2020-01-01", false},
		{"date --set=2020-01-01", false},
		{"diff a b", true},
		{"file x", true},
		{"file -C -m magic", false},
		{"uname -a", true},
		{"yq .a f.yaml", true},
		{"yq -i .a=1 f.yaml", false},
		{"xxd file", true},
		{"xxd file out", false},
		{"git status", true},
		{"git log --oneline -5", true},
		{"git diff HEAD~1", true},
		{"git -C sub status", true},
		{"git --no-pager log", true},
		{"git branch", true},
		{"git branch -a", true},
		{"git branch newname", false},
		{"git branch -D main", false},
		{"git branch --list 'feat*'", true},
		{"git tag", true},
		{"git tag v1.0", false},
		{"git remote -v", true},
		{"git remote add x y", false},
		{"git config --get user.name", true},
		{"git config user.name x", false},
		{"git stash list", true},
		{"git stash", false},
		{"git push", false},
		{"git commit -m x", false},
		{"git -c core.pager=sh log", false},
		{"git --exec-path=/tmp log", false},
		{"git diff --output=x", false},
		{"git log --ext-diff", false},
		{"git grep -O foo", false},
		{"curl example.com", false},
		{"awk '{print}' file", false},
		// Options as the programs' getopt reads them: abbreviations, clusters, values.
		{"sed --ex=p file", true},
		{"sed --expr 's/a/b/' file", true},
		{"sed --in=.bak 's/a/b/' file", true},
		{"sed --in-pl 's/a/b/' file", true},
		{"sed -n -i.bak p file", true},
		{"sed -ni.bak p file", true},
		{"sed -s -E -z p file", true},
		{"sed --expression='s/a/b/w /tmp/x' file", false},
		{"sed -e p -e 'w x' file", true},
		{"sed --fi=script file", false},
		{"sed --follow-symlinks -i p file", false},
		{"sed --bogus p file", false},
		{"sort --ou=/tmp/x file", false},
		{"sort --o /tmp/x file", false},
		{"sort -mo /tmp/x file", false},
		{"sort -nro out file", true},
		{"sort -ko file", true}, // -k takes "o" as its key
		{"sort -t o -k2 file", true},
		{"sort --comp=gzip file", false},
		{"sort --rand=x file", false}, // ambiguous: --random-sort or --random-source
		{"sort -T /tmp file", false},
		{"sort -T tmp file", true},
		{"sort --para=2 file", true},
		{"date 0101000020", false},
		{"date +%s 0101", false},
		{"date --se=2020-01-01", false},
		{"date -d yesterday +%F", true},
		{"date -Iseconds", true},
		{"grep --colo=auto foo file", true},
		{"grep -P 'x' file", true},
		{"grep --bogus foo file", false},
		{"head -5 file", true},
		{"tail -20f log", true},
		{"tail -n +3 file", true},
		{"uniq -c in", true},
		{"uniq -c in out", true},
		{"find . -newermt 2020-01-01 -type f", true},
		{"find -L . -name x", true},
		{"find . -bogus", false},
		{"find . -files0-from list", false},
		{"find . -ok rm {} \\;", false},
		{"jq -r .a file.json", true},
		{"jq --arg a b .x file.json", true},
		{"jq -nr '$a'", true},
		{"jq --bogus .", false},
		{"jq -L lib .", true},
		{"rg -z foo", false},
		{"rg --search-zip foo", false},
		{"rg --pr=x foo", false}, // ripgrep takes no abbreviations
		{"wc --files0-from=list", false},
		{"wc --files0=list", false},
		{"tr -d x", true},
		{"tr a b c", false},
	}
	for _, tc := range cases {
		t.Run(tc.cmd, func(t *testing.T) {
			got := j.Judge(CommandInput{Command: tc.cmd, Cwd: env.root})
			safe := len(got.Segments) > 0 && got.Verdict == Allow
			for _, s := range got.Segments {
				if s.SatisfiedBy != SatisfiedSafeBin {
					safe = false
				}
			}
			if safe != tc.safe {
				t.Fatalf("safe = %v, want %v (%+v)", safe, tc.safe, got.Segments)
			}
		})
	}
}

func TestSafeBinTrust(t *testing.T) {
	env := newTestEnv(t)
	// A safe bin outside the trusted directories is not safe.
	other := filepath.Join(env.root, "other")
	env.exe(t, filepath.Join(other, "ls"))
	j := env.judge(t, ExecConfig{Path: other + ":" + env.bin})
	if got := j.Judge(CommandInput{Command: "ls"}); got.Segments[0].SatisfiedBy == SatisfiedSafeBin {
		t.Fatal("untrusted ls is a safe bin")
	}
	// A trusted name that is a symlink to something else is not the safe bin.
	if err := os.Remove(filepath.Join(env.bin, "cat")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(env.bin, "rm"), filepath.Join(env.bin, "cat")); err != nil {
		t.Fatal(err)
	}
	j = env.judge(t, ExecConfig{})
	if got := j.Judge(CommandInput{Command: "cat x"}); got.Segments[0].SatisfiedBy == SatisfiedSafeBin {
		t.Fatal("cat -> rm is a safe bin")
	}
	// A symlink into an untrusted directory is not trusted either.
	env.exe(t, filepath.Join(other, "wc"))
	if err := os.Remove(filepath.Join(env.bin, "wc")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(other, "wc"), filepath.Join(env.bin, "wc")); err != nil {
		t.Fatal(err)
	}
	if got := j.Judge(CommandInput{Command: "wc x"}); got.Segments[0].SatisfiedBy == SatisfiedSafeBin {
		t.Fatal("wc -> untrusted dir is a safe bin")
	}
	// Not enabled: not safe. Windows-style paths: never.
	j = env.judge(t, ExecConfig{SafeBins: []string{"cat"}})
	if got := j.Judge(CommandInput{Command: "ls"}); got.Segments[0].SatisfiedBy != "" {
		t.Fatal("ls is safe without being enabled")
	}
	if j.safeBin("ls", toolSpecs["ls"], `C:\Windows\ls.exe`, "", nil, new(toolCall)) {
		t.Fatal("safe bin on a Windows path")
	}
}
