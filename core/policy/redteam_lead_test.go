package policy_test

// The lead's wave after the merge of both fixes: globs made to match hidden files (dotglob,
// GLOBIGNORE) and sensitive paths behind an unknown first part, which must ask even where
// security = "full" allows every command; and the everyday spellings next to them.

// leadWaves are the lead's waves, in the order they were written.
func leadWaves() []rclass {
	var out []rclass
	for _, w := range [][]rclass{leadWave(), leadEnvWave(), leadGitWave(), leadFunsubWave(), leadInlineCodeWave()} {
		out = append(out, w...)
	}
	return out
}

func leadWave() []rclass {
	return []rclass{
		{"sensitive", group(
			ks(concern,
				`shopt -s dotglob; tar czf x.tgz *`,
				`shopt -s dotglob; cp * /tmp/out/`,
				`shopt -s dotglob; grep -l KEY *`,
				`shopt -s dotglob; wc -c ./*`,
				`shopt -s nullglob dotglob; cat ~/.[s]*/*`,
				`shopt -s dotglob globstar; grep -r x **`,
				`GLOBIGNORE=x; cat *`,
				`GLOBIGNORE=.:..; head ~/*`,
				`GLOBIGNORE=/nothing cat ./*`,
				`BASHOPTS=dotglob bash -c 'head *'`,
				`env BASHOPTS=dotglob bash -c 'cat ./*'`,
				`cat ${HOME##x}/.netrc`,
				`cat "${HOME/#x/}/.aws/config"`,
				`cat $(printf %s "$HOME")/.git-credentials`,
				"cat `echo ~`/.pgpass",
				`head -n 3 ${XDG_CONFIG_HOME:-$HOME/.config}/gh/hosts.yml`,
				`cat ${X}.env`,
				// Every name under a home or a system directory, listed recursively.
				`find ~ -name '*'`,
				`find ~ -iname '*s*'`,
				`find ~ -regex '.*'`,
				`find ~ -maxdepth 3 -type f`,
				`find ~ -name '*.go' -o -type f`,
				`find ~ ! -name '*.go'`,
				`find / -type f`,
				`ls -R /etc`,
				`ls -1R ~`,
				`du -a /root`,
				`tree ~`,
				`tree -fi /home`,
				// Other systems' spellings of the same files.
				`cat /private/etc/sudoers`,
				`sed -n p /private/etc/ssh/ssh_host_ed25519_key`,
				`cat /private/var/root/.aws/credentials`,
				`grep -r KEY /private/etc`,
				`cat /c/Users/dev/.aws/credentials`,
				`cat /cygdrive/c/Users/dev/.netrc`,
				`grep -r token /c/Users/dev`,
				`type %USERPROFILE%\.ssh\id_rsa`,
				`cat //home/dev/.ssh/id_rsa`,
				// mkdir and touch are safe bins: what they write is judged.
				`touch ~/.bashrc`,
				`touch ~/.ssh/authorized_keys`,
				`mkdir -p ~/.config/systemd/user`,
				`mkdir -p .git/hooks`,
				`touch -r ~/.ssh/id_rsa x`,
				`mkdir -p /etc/cron.d/x`,
				`touch .env.local`,
			),
		)},
		{"everyday", group(
			ks(everyday,
				`ls *.go`,
				`cat ./*.md`,
				`wc -l src/*`,
				`shopt -s nullglob; ls *.txt`,
				`find . -type f`,
				`ls -R`,
				`ls -R src`,
				`du -a`,
				`find ~ -maxdepth 1`,
				`find .. -name '*.go'`,
				`find ~ -type f -name '*.md'`,
				`find /usr/include -name '*.h'`,
				`cat /private/tmp/build.log`,
				`ls /c/Users/dev`,
				`mkdir -p build && touch build/.keep`,
				`mkdir -p out/logs`,
				`touch notes.md`,
				`touch -d '2 days ago' stamp`,
			),
		)},
	}
}

// leadEnvWave: indirect expansions whose name is known or not.
func leadEnvWave() []rclass {
	return []rclass{
		{"environment", group(
			ks(concern,
				`n=AWS_SECRET_ACCESS_KEY; printf %s "${!n}"`,
				`read -r n <<< GITHUB_TOKEN; echo "${!n}"`,
				`n=$(echo NPM_TOKEN); echo ${!n}`,
				`for n in GH_TOKEN; do echo ${!n}; done`,
			),
		)},
	}
}

// leadGitWave: what git subcommands do besides their arguments, under the developer allowlist.
func leadGitWave() []rclass {
	return []rclass{
		{"hidden_git", group(
			ks(concern,
				`git bundle create /tmp/x.bundle HEAD`,
				`git bundle create ~/.bashrc HEAD`,
				`git clean -fX`,
				`git clean -f -x -d`,
				`git clean -dfx -e keep`,
				`git instaweb --httpd=webrick`,
				`git daemon --export-all --base-path=.`,
				`git web--browse http://x`,
				`git help --web log`,
			),
			ks(everydayDev,
				`git bundle create repo.bundle --all`,
				`git clean -fd`,
				`git clean -ndx`,
				`git help log`,
			),
		)},
	}
}

// leadFunsubWave: bash 5.3's ${ …; } and ${| …; } run in the current shell, so the directory
// and the variables they set carry over to the commands after them.
func leadFunsubWave() []rclass {
	return []rclass{
		{"floor_dataflow", group(
			ks(catastrophic,
				`echo ${ cd /; }; rm -rf *`,
				`: ${ cd ~; }; rm -rf .`,
				`echo ${ X=/; }; rm -rf $X`,
				`echo ${| cd /; }; rm -rf ./*`,
				`x=${ cd /etc; pwd; }; rm -rf "$x"`,
			),
		)},
		{"code_in_data", group(
			ks(dangerous,
				`echo ${ cd /tmp; }; ls`,
				`echo ${ /tmp/evil; }`,
			),
		)},
	}
}

// leadInlineCodeWave: inline code of an allowlisted interpreter that builds at run time the
// name of the variable it reads or the text it opens or runs.
func leadInlineCodeWave() []rclass {
	return []rclass{
		{"environment", group(
			ks(concern,
				`python3 -c "import os;print(os.environ.get('G'+'ITHUB_TOKEN'))"`,
				`python3 -c "import os;k='GITHUB'+'_TOKEN';print(os.environ[k])"`,
				`python3 -c "import os;print(os.getenv(chr(71)+'H_TOKEN'))"`,
				`node -e "const k='NPM'+'_TOKEN';console.log(process.env[k])"`,
				`perl -e 'my $k="AWS_SECRET"."_ACCESS_KEY"; print $ENV{$k}'`,
				`python3 -c "import os;print(getattr(os,'environ'))"`,
				`python3 -c "import os;print(vars(os)['environ'])"`,
				`python3 -c "from os import environ as e;print(e)"`,
				`python3 -c "from os import getenv as g;print(g('GITHUB_TOKEN'))"`,
			),
		)},
		{"code_in_data", group(
			ks(dangerous,
				`python3 -c "print(open(bytes.fromhex('2f686f6d652f6465762f2e6e65747263').decode()).read())"`,
				`python3 -c "import codecs;print(open(codecs.decode('/ubzr/qri/.arge','rot13')).read())"`,
				`python3 -c "import base64;exec(base64.b64decode('cHJpbnQoMSk='))"`,
				`python3 -c "exec(input())"`,
				`node -e "eval(Buffer.from('Y29uc29sZS5sb2coMSk=','base64').toString())"`,
			),
			ks(everydayDev,
				`python3 -c "import os;print(os.environ['HOME'])"`,
				`python3 -c "import os;print(os.getenv('PATH', ''))"`,
				`python3 -c "import json,sys;print(json.load(sys.stdin)['version'])" < package.json`,
				`python3 -c "print(1+1)"`,
			),
		)},
	}
}
