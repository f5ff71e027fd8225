package render

import (
	"fmt"
	"strings"
	"testing"
)

// The attacker's spellings of issue 13's secret classes (item 8): each is masked wherever
// it stands, and none of the secret's pieces shows.
func TestAttackSecretSpellings(t *testing.T) {
	const pw = "S3cr3tpw99"
	const tok = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	split := func(sep string) string { return tok[:14] + sep + tok[14:] }
	cases := []string{
		// Fed to standard input, however the feed is written.
		`echo "` + pw + `" | docker login -u bob --password-stdin`,
		`echo -e '` + pw + `\n' | docker login --password-stdin`,
		"printf %s " + pw + " | docker login --password-stdin",
		"docker login --password-stdin <<EOF\n" + pw + "\nEOF",
		"docker login --password-stdin <<-EOF\n\t" + pw + "\n\tEOF",
		"docker login --password-stdin <<< \"" + pw + "\"",
		"echo " + pw + "|docker login --password-stdin",
		"echo " + pw + " | sudo docker login --password-stdin",
		"echo " + pw + " | env X=1 docker login --password-stdin",
		"(echo " + pw + ") | docker login --password-stdin",
		"{ echo " + pw + "; } | docker login --password-stdin",
		"( echo x; (echo " + pw + ") ) | docker login --password-stdin",
		"echo " + pw + " | docker login --password-stdin && ls",
		"echo " + pw + " | skopeo login --password-stdin r",
		"docker login --password-stdin -u bob <<<" + pw,
		"echo 'bob:" + pw + "' | chpasswd",
		"echo " + pw + " | openssl enc -pass stdin",
		"run: echo " + pw + " | docker login --password-stdin, then deploy",
		// Password options of login commands.
		"docker login -p " + pw, "docker login --password=" + pw, "sshpass -p " + pw + " ssh host",
		"mysql -p" + pw, "mysql --password=" + pw, "PGPASSWORD=" + pw + " psql", "psql postgres://bob:" + pw + "@host/db",
		"az login -u bob -p " + pw, "oc login -u bob -p " + pw + " https://api:6443", "cf login -u bob -p " + pw,
		"mongosh -u bob -p " + pw, "sqlcmd -S db -U sa -P " + pw, "unzip -P " + pw + " a.zip", "ldapsearch -D cn=admin -w " + pw,
		"curl -u bob:" + pw + " https://x", "wget --password=" + pw + " https://x",
		// --from-literal with punctuation and quoting.
		"kubectl create secret generic db --from-literal=password=\"p@ss w0rd" + pw + "\"",
		"kubectl create secret generic db --from-literal=\"password=p@ss;w0rd" + pw + "\"",
		"kubectl create secret generic db --from-literal password=\"p@ss;w0rd" + pw + "\"",
		"kubectl create secret generic db --from-literal=PASSWORD=" + pw,
		"kubectl create secret generic db --from-literal=db.password=" + pw + "%$#",
		"kubectl create secret docker-registry r --docker-password=" + pw,
		// .netrc on one line or several, in every field order, and its account.
		"default login bob password " + pw,
		"machine h password " + pw + " login bob",
		"echo \"machine h login bob password " + pw + "\" > ~/.netrc",
		"machine h\tlogin bob\tpassword\t" + pw,
		"machine h login bob account " + pw,
		"machine h\n  login bob\n  account " + pw + "\n  password x",
		// Secret setters, with their options anywhere.
		"gh secret set X --body=\"" + pw + "\"", "gh secret set X -b \"" + pw + "\"", "gh secret set X --env prod --body " + pw,
		"gh -R o/r secret set X --body " + pw, "gh --repo o/r secret set X -b " + pw, "gh secret set X --repo o/r -b" + pw,
		"vault kv put -mount=secret db password=" + pw, "vault -namespace=ns kv put secret/db password=" + pw,
		"vault kv patch secret/db password=" + pw, "vault write secret/db value=" + pw,
		"vault login -method=userpass username=bob password=" + pw,
		"aws secretsmanager put-secret-value --secret-id x --secret-string " + pw, "aws ssm put-parameter --value=" + pw,
		"az keyvault secret set --vault-name v -n x --value=" + pw, "heroku config:set API_KEY=" + pw,
		"netlify env:set API_KEY " + pw, "doppler secrets set API_KEY " + pw, "helm install x --set db.password=" + pw,
		"terraform apply -var 'db_password=" + pw + "'", "export API_KEY=" + pw, "app --api-key " + pw,
		"app --client-secret=" + pw, "app --access-token " + pw,
		// A plain, short token under a name that says it is one.
		"app --token " + pw, "GH_TOKEN=" + pw + " gh pr list", "x-token: " + pw, "-token=" + pw,
		// Split by invisible and space-like characters, or a line continuation.
		"echo " + split("\u200d"), "echo " + split("\u200c"), "echo " + split("\u180e"), "echo " + split("\u200a"),
		"echo " + split("\u2009"), "echo " + split("\u200e"), "echo " + split("\u200f"), "echo " + split("\u2066"),
		"echo " + split("\ufe0f"), "echo " + split("\u034f"), "echo " + split("\u3164"), "echo " + split("\U000E0020"),
		"echo " + tok[:6] + "\u200b" + tok[6:20] + "\u00a0" + tok[20:],
		"echo " + tok[:14] + "\\\r\n" + tok[14:], "echo " + tok[:14] + "`\n" + tok[14:],
		"curl -H 'Authorization:\\\n Bearer abcdef0123456789abcdef' https://x",
		"curl -H 'Authorization: Token abcdef0123456789abcdef' https://x",
		"curl -H 'Authorization: Basic Ym9iOlMzY3IzdHB3OTk=' https://x",
	}
	leaks := []string{pw, tok[14:22], tok[26:], "abcdef0123456789abcdef", "Ym9iOlMzY3IzdHB3OTk"}
	for i, c := range cases {
		t.Run(fmt.Sprintf("%02d", i), func(t *testing.T) {
			for name, got := range map[string]string{"Mask": Mask(c), "Redact": Redact(c, 4000)} {
				for _, l := range leaks {
					if strings.Contains(got, l) {
						t.Errorf("%s(%q) = %q shows %q", name, c, got, l)
					}
				}
			}
			if got := Mask(c); Mask(got) != got {
				t.Errorf("not idempotent: %q", got)
			}
			summary, _, details := Summarize("bash", nil, c, true)
			for _, out := range []string{summary, details} {
				if strings.Contains(out, pw) || strings.Contains(out, tok[14:22]) {
					t.Errorf("summary or details show the secret: %q", out)
				}
			}
		})
	}
}

// What only looks like those classes stays readable.
func TestAttackSecretLookalikesStayReadable(t *testing.T) {
	for i, s := range []string{
		"git checkout 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39",
		"docker pull nginx@sha256:4c0fdaa8b6341bfdeca5f18f7837462c80cff90527ee35ef185571e1c327beac",
		"kubectl get pod web-7d9f8b6c5-x2k4j",
		"echo 550e8400-e29b-41d4-a716-446655440000",
		"npm run build -- --token-limit 500",
		"python train.py --max-tokens 4096 --tokenizer bpe",
		"echo password-stdin is a flag",
		"grep -r 'token' src/",
		"git log --grep='rotate the token'",
		"echo 'account balance is 100'",
		"terraform plan -var region=eu-west-1",
		"kubectl create secret generic x --from-file=key=./k.pem",
		"gh secret list", "gh -R o/r secret list",
		"unzip -o archive.zip -d out",
		"ldapsearch -x -b dc=example,dc=com",
		"az login --use-device-code",
		"oc login https://api.cluster:6443 --token=$OC_TOKEN",
		"(cd build && make) | tee log.txt",
		"{ echo a; echo b; } | sort",
		"(echo hello) | grep h",
		"export NODE_OPTIONS=--max-old-space-size=4096",
		"TOKEN_URL=https://auth.example.com/token ./run",
		"app --token-type bearer", "x --token-file ~/.tok", "TOKEN=${CI_JOB_TOKEN} ./deploy.sh",
		"aws s3 ls --page-token 12345", "GH_TOKEN=$(gh auth token) make release",
	} {
		t.Run(fmt.Sprintf("%02d", i), func(t *testing.T) {
			if got := Mask(s); got != s {
				t.Errorf("masked a non-secret:\n in: %q\nout: %q", s, got)
			}
		})
	}
}

// Secrets in a tool call's arguments: under secret names, as name/value pairs, and as the
// value of a tool that sets secrets; what only resembles them stays readable.
func TestAttackSecretsInToolArguments(t *testing.T) {
	const pw = "S3cr3tpw99"
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"mcp__vault__write_secret", map[string]any{"path": "secret/db", "value": pw}},
		{"mcp__x__set_secret", map[string]any{"name": "DB_PASSWORD", "value": pw}},
		{"mcp__aws__put_secret_value", map[string]any{"SecretId": "x", "SecretString": pw}},
		{"mcp__github__create_or_update_secret", map[string]any{"secret_name": "X", "encrypted_value": pw}},
		{"mcp__x__login", map[string]any{"username": "bob", "password": pw}},
		{"mcp__x__auth", map[string]any{"token": pw}},
		{"mcp__x__call", map[string]any{"headers": map[string]any{"Authorization": "Bearer " + pw + "abcdefgh"}}},
		{"mcp__x__call", map[string]any{"headers": []any{map[string]any{"name": "X-Api-Key", "value": pw}}}},
		{"mcp__x__deploy", map[string]any{"env": []any{map[string]any{"key": "GITHUB_TOKEN", "val": pw}}}},
		{"mcp__x__env", map[string]any{"env": map[string]any{"GITHUB_TOKEN": pw}}},
		{"mcp__x__kv", map[string]any{"key": "db_password", "val": pw}},
		{"Write", map[string]any{"file_path": "/repo/.env", "content": "DB_PASSWORD=" + pw}},
		{"Write", map[string]any{"file_path": "/repo/netrc", "content": "machine h login bob password " + pw}},
	} {
		s, _, d := Summarize(c.tool, c.args, "", false)
		for _, out := range []string{s, d} {
			if strings.Contains(out, pw) {
				t.Errorf("%s %v shows the secret: %q", c.tool, c.args, out)
			}
		}
	}
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"mcp__x__set_label", map[string]any{"name": "build", "value": "green"}, "name=build value=green"},
		{"mcp__x__prefs", map[string]any{"key": "theme", "val": "dark"}, "key=theme val=dark"},
		{"mcp__github__list_secrets", map[string]any{"owner": "o", "repo": "r"}, "owner=o repo=r"},
		{"mcp__x__set_secret", map[string]any{"name": "DEPLOY_KEY", "visibility": "private"}, "name=DEPLOY_KEY visibility=private"},
		{"mcp__x__tokenize", map[string]any{"text": "hello world"}, `text="hello world"`},
	} {
		if s, _, _ := Summarize(c.tool, c.args, "", false); s != c.want {
			t.Errorf("%s %v: %q, want %q", c.tool, c.args, s, c.want)
		}
	}
}
