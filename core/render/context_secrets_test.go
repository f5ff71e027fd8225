package render

import (
	"fmt"
	"strings"
	"testing"
)

// Secrets that only context gives away (item 8 of issue 13), by class. Each case is the
// exact masked text, so that what stays visible is pinned too.
func TestContextSecrets(t *testing.T) {
	const pw = "S3cr3tpw99"
	const tok = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	split := func(sep string) string { return tok[:14] + sep + tok[14:] }
	cases := []struct{ class, in, want string }{
		// A literal fed to a command that reads a secret from standard input.
		{"stdin", "echo " + pw + " | docker login -u bob --password-stdin", "echo [masked] | docker login -u bob --password-stdin"},
		{"stdin", "echo -n '" + pw + "' | podman login --password-stdin quay.io", "echo -n '[masked]' | podman login --password-stdin quay.io"},
		{"stdin", "printf '%s\\n' " + pw + " | gh auth login --with-token", "printf '%s\\n' [masked] | gh auth login --with-token"},
		{"stdin", "printf '" + pw + "' | helm registry login --password-stdin r.example", "printf '[masked]' | helm registry login --password-stdin r.example"},
		{"stdin", "docker login -u bob --password-stdin <<< '" + pw + "'", "docker login -u bob --password-stdin <<< '[masked]'"},
		{"stdin", "cat <<EOF | docker login -u bob --password-stdin\n" + pw + "\nEOF", "cat <<EOF | docker login -u bob --password-stdin\n[masked]\nEOF"},
		{"stdin", "chpasswd <<'EOF'\nbob:" + pw + "\nEOF\necho done", "chpasswd <<'EOF'\n[masked]\nEOF\necho done"},
		{"stdin", "echo '" + pw + "' | tr -d '\\n' | sudo -S apt-get update", "echo '[masked]' | tr -d '\\n' | sudo -S apt-get update"},
		{"stdin", "echo " + pw + " | gh secret set DEPLOY_KEY", "echo [masked] | gh secret set DEPLOY_KEY"},
		{"stdin", "echo " + pw + " | passwd --stdin bob", "echo [masked] | passwd --stdin bob"},
		{"stdin", "vault login - <<< " + pw, "vault login - <<< [masked]"},
		{"stdin", "echo -n " + pw + " | gcloud secrets versions add db --data-file=-", "echo -n [masked] | gcloud secrets versions add db --data-file=-"},
		{"stdin", "echo " + pw + " | docker secret create db -", "echo [masked] | docker secret create db -"},
		{"stdin", "echo " + pw + " | wrangler secret put API_KEY", "echo [masked] | wrangler secret put API_KEY"},
		{"stdin", "echo " + pw + " | openssl rsa -in k.pem -passin stdin", "echo [masked] | openssl rsa -in k.pem -passin stdin"},
		{"stdin", "echo " + pw + " | gpg --batch --passphrase-fd 0 -d x.gpg", "echo [masked] | gpg --batch --passphrase-fd 0 -d x.gpg"},
		{"stdin", "echo " + pw + " | app --token-file=/dev/stdin", "echo [masked] | app --token-file=/dev/stdin"},
		{"stdin", "sudo -u ci docker login --password-stdin <<<" + pw, "sudo -u ci docker login --password-stdin <<<[masked]"},

		// --from-literal and other assignments: the whole shell word, punctuation included.
		{"literal", "kubectl create secret generic db --from-literal=password=p@ss,w0rd}x!", "kubectl create secret generic db --from-literal=password=[masked]"},
		{"literal", "kubectl create secret generic db --from-literal=password='p@ss;w0rd&x'", "kubectl create secret generic db --from-literal=password='[masked]'"},
		{"literal", "kubectl create secret generic db --from-literal password=p,ss}w0rd!", "kubectl create secret generic db --from-literal password=[masked]"},
		{"literal", "kubectl create secret generic app --from-literal=api=" + pw + " --from-literal=user=bob", "kubectl create secret generic app --from-literal=api=[masked] --from-literal=user=[masked]"},
		{"literal", "docker run -e DB_PASSWORD=a,b}" + pw + " app", "docker run -e DB_PASSWORD=[masked] app"},
		{"literal", "curl -d 'password=" + pw + "&user=bob' https://x", "curl -d 'password=[masked]&user=bob' https://x"},

		// .netrc-style credentials.
		{"netrc", "echo 'machine api.example.com login bob password " + pw + "' >> ~/.netrc", "echo 'machine api.example.com login bob password [masked]' >> ~/.netrc"},
		{"netrc", "printf 'machine h\\nlogin bob\\npassword " + pw + "\\n' > ~/.netrc", "printf 'machine h\\nlogin bob\\npassword [masked]\\n' > ~/.netrc"},
		{"netrc", "cat > ~/.netrc <<EOF\nmachine git.example.com\n  login bob\n  password " + pw + "\nEOF", "cat > ~/.netrc <<EOF\nmachine git.example.com\n  login bob\n  password [masked]\nEOF"},

		// Values of secret-setting commands.
		{"setter", "gh secret set DB --body '" + pw + "'", "gh secret set DB --body '[masked]'"},
		{"setter", "gh secret set DB --body=" + pw, "gh secret set DB --body=[masked]"},
		{"setter", "gh secret set DB -b " + pw + " --repo o/r", "gh secret set DB -b [masked] --repo o/r"},
		{"setter", "gh secret set DB -b" + pw, "gh secret set DB -b…[masked]"},
		{"setter", "vault kv put secret/db value=" + pw + " user=bob", "vault kv put secret/db value=[masked] user=[masked]"},
		{"setter", "vault write auth/approle/role/x secret_id_ttl=10m", "vault write auth/approle/role/x secret_id_ttl=[masked]"},
		{"setter", "vault login " + pw, "vault login [masked]"},
		{"setter", "aws ssm put-parameter --name p --value " + pw + " --type SecureString", "aws ssm put-parameter --name p --value [masked] --type SecureString"},
		{"setter", `aws secretsmanager create-secret --name x --secret-string '{"user":"bob","k":"` + pw + `"}'`, "aws secretsmanager create-secret --name x --secret-string '[masked]'"},
		{"setter", "az keyvault secret set --vault-name v --name n --value " + pw, "az keyvault secret set --vault-name v --name n --value [masked]"},
		{"setter", "glab variable set DEPLOY " + pw + " --masked", "glab variable set DEPLOY [masked] --masked"},
		{"setter", "doppler secrets set API=" + pw, "doppler secrets set API=[masked]"},
		{"setter", "fly secrets set API=" + pw + " -a app", "fly secrets set API=[masked] -a app"},
		{"setter", "security add-generic-password -a bob -s svc -w " + pw, "security add-generic-password -a bob -s svc -w [masked]"},
		{"setter", "htpasswd -bc .htpasswd bob " + pw, "htpasswd -bc .htpasswd bob [masked]"},
		{"setter", "mysqladmin -u root password " + pw, "mysqladmin -u root password [masked]"},

		// Tokens split by invisible or space-like separators.
		{"separator", "echo " + split("\u00a0"), "echo ghp_…[masked]"},
		{"separator", "echo " + split("\u200b"), "echo ghp_…[masked]"},
		{"separator", "echo " + split("\u2060"), "echo ghp_…[masked]"},
		{"separator", "echo " + split("\u00ad"), "echo ghp_…[masked]"},
		{"separator", "echo " + split("\u202f"), "echo ghp_…[masked]"},
		{"separator", "echo " + split("\u3000"), "echo ghp_…[masked]"},
		{"separator", "echo " + split("\ufeff"), "echo ghp_…[masked]"},
		{"separator", "echo " + split("\u200b\u00a0\u2060"), "echo ghp_…[masked]"},
		{"separator", "echo " + split("\x00"), "echo ghp_…[masked]"},
		{"separator", "git clone https://x:" + split("\u2060") + "@github.com/o/r", "git clone https://x:[masked]@github.com/o/r"},
		{"separator", "curl -H 'Authorization: Bearer\u00a0abcdef0123456789abcdef' https://x", "curl -H 'Authorization: [masked]' https://x"},

		// A bearer token (or any token) after a line continuation.
		{"continuation", "curl -H 'Authorization: Bearer \\\n  abcdef0123456789abcdef' https://x", "curl -H 'Authorization: Bearer \\\n  [masked]' https://x"},
		{"continuation", "curl -H \"Authorization: Bearer \\\r\nabcdef0123456789abcdef\" https://x", "curl -H \"Authorization: Bearer \\\r\n[masked]\" https://x"},
		{"continuation", "curl https://x \\\n  -H 'Authorization: bearer \\\n abcdef0123456789abcdef'", "curl https://x \\\n  -H 'Authorization: bearer \\\n [masked]'"},
		{"continuation", "wget --header='Bearer \\\n  abcdef0123456789abcdef' https://x", "wget --header='Bearer \\\n  [masked]' https://x"},
		{"continuation", "echo " + tok[:14] + "\\\n" + tok[14:], "echo ghp_…[masked]"},
		{"continuation", "Invoke-RestMethod -Headers @{Authorization = \"Bearer `\n  abcdef0123456789abcdef\"}", "Invoke-RestMethod -Headers @{Authorization = \"Bearer `\n  [masked]\"}"},
	}
	for i, c := range cases {
		t.Run(fmt.Sprintf("%s-%02d", c.class, i), func(t *testing.T) {
			got := Mask(c.in)
			if got != c.want {
				t.Errorf("Mask(%q)\n got %q\nwant %q", c.in, got, c.want)
			}
			if again := Mask(got); again != got {
				t.Errorf("not idempotent: %q → %q", got, again)
			}
			for _, leak := range []string{pw, tok[4:12], tok[20:28], tok[30:]} {
				if strings.Contains(got, leak) {
					t.Errorf("%q shows %q", got, leak)
				}
			}
			summary, _, details := Summarize("bash", nil, c.in, true)
			for _, out := range []string{summary, details} {
				if strings.Contains(out, pw) || strings.Contains(out, tok[20:28]) {
					t.Errorf("summary or details show the secret: %q", out)
				}
			}
		})
	}
}

// What looks like these classes but holds no secret stays as it is.
func TestContextLookalikesSurvive(t *testing.T) {
	for i, s := range []string{
		"aws ecr get-login-password | docker login --password-stdin 123.dkr.ecr.eu-west-1.amazonaws.com",
		"echo $PW | docker login --password-stdin",
		`echo "$REGISTRY_PASSWORD" | docker login -u "$USER" --password-stdin`,
		`printf '%s\n' "$TOKEN" | gh auth login --with-token`,
		"cat ~/.token | gh auth login --with-token",
		"docker login -u bob --password-stdin < ~/.docker-pass",
		"gh secret set NAME < secret.txt",
		"gh secret list --repo o/r",
		"echo S3cr3tpw99 | passwd bob",
		"echo done | tee log.txt",
		"echo hello world | grep hello",
		"kubectl create configmap app --from-literal=mode=fast,debug=true",
		"helm upgrade app --set image.tag=v1.2.3,replicas=3",
		"vault kv put secret/app @data.json",
		"vault kv put secret/app config=@config.json",
		"vault kv get -field=password secret/db",
		"vault login -method=oidc",
		`echo "$(date)" | mail -s hi bob`,
		"ls -la /tmp/my\u00a0file",
		"make \\\n  test \\\n  lint",
		"echo 'the machine learning model is ready'",
		"git log --format='%H %s' | head",
		"printf '%s\\n' a b c | sort",
		"kubectl create secret generic db --from-file=./creds.json",
	} {
		t.Run(fmt.Sprintf("%02d", i), func(t *testing.T) {
			if got := Mask(s); got != s {
				t.Errorf("masked a non-secret:\n in: %q\nout: %q", s, got)
			}
		})
	}
}

// FuzzSecretClasses: whatever the secret (of the characters a password may hold without
// quoting trouble), none of its 8-character pieces shows in any spelling of these classes,
// and masking is idempotent.
func FuzzSecretClasses(f *testing.F) {
	f.Add("S3cr3tpw99xyz", uint8(0))
	f.Add("p@ss,w0rd}x!Yz9q", uint8(5))
	f.Add("abcdefghijklmnopqrstuvwxyz0123456789", uint8(13))
	templates := []string{
		"echo %s | docker login -u bob --password-stdin",
		"echo -n '%s' | podman login --password-stdin quay.io",
		"docker login --password-stdin <<< '%s'",
		"cat <<EOF | chpasswd\nbob:%s\nEOF",
		"printf '%s' | sudo -S true",
		"kubectl create secret generic db --from-literal=password=%s",
		"kubectl create secret generic db --from-literal=api=%s",
		"machine api.example.com login bob password %s",
		"printf 'machine h\\nlogin u\\npassword %s\\n' > ~/.netrc",
		"gh secret set TOKEN --body %s",
		"gh secret set TOKEN -b'%s'",
		"vault kv put secret/app value=%s",
		"aws ssm put-parameter --name p --type SecureString --value '%s'",
		"curl -H 'Authorization: Bearer \\\n  tok%s' https://x",
		"docker run -e API_SECRET=%s app",
	}
	seps := []string{"\u00a0", "\u200b", "\u2060", "\u00ad", "\ufeff", "\u202f", "\\\n", "\u3000"}
	f.Fuzz(func(t *testing.T, secret string, form uint8) {
		// A leading '@' or '-' changes what some commands do with a value (vault reads the
		// file @name; echo takes -n as an option): such values are not literal secrets there.
		if len(secret) < 8 || len(secret) > 64 || strings.Trim(secret, alnum+"!@%^*,.}{+=_-") != "" || !strings.ContainsRune(alnum, rune(secret[0])) {
			return
		}
		s := secretSample{rule: "class", secret: secret}
		if len(secretPieces(secret)) == 0 {
			return
		}
		idx := int(form) % (len(templates) + len(seps))
		if idx < len(templates) {
			s.text = fmt.Sprintf(templates[idx], secret)
		} else {
			// A vendor token split by a separator.
			body := strings.Map(func(r rune) rune {
				if strings.ContainsRune(alnum, r) {
					return r
				}
				return 'x'
			}, strings.Repeat(secret, 5))[:36]
			s.secret = body
			cut := 1 + int(form)%35
			s.text = "echo ghp_" + body[:cut] + seps[idx-len(templates)] + body[cut:]
		}
		got := Mask(s.text)
		assertHidden(t, "Mask", got, s)
		if Mask(got) != got {
			t.Fatalf("not idempotent: %q → %q", got, Mask(got))
		}
	})
}

// A line with many long values under secret-sounding names is masked from the name where
// searching again would not end (maxLongValues) to the end of the line: fail closed.
func TestManyLongValuesFailClosed(t *testing.T) {
	const secret = "Zq7Kx9Lm2Pw4Rt6Yv8Nb"
	var b strings.Builder
	for i := 0; i < maxLongValues+2; i++ {
		b.WriteString("token=" + strings.Repeat("a", shortValueWindow+10) + " ")
	}
	b.WriteString("token=" + secret + " tail")
	line := b.String()
	got := Mask(line)
	if strings.Contains(got, secret) || strings.Contains(got, "tail") {
		t.Fatalf("the end of the line shows: %q", got[len(got)-80:])
	}
	if !strings.HasPrefix(got, "token=aaaa") {
		t.Fatalf("the first values, not secrets, are masked: %q", got[:40])
	}
	if Mask(got) != got {
		t.Fatal("not idempotent")
	}
	// On a line of its own, the same secret is found the ordinary way.
	if got := Mask(line + "\ntoken=" + secret); strings.Count(got, secret) != 0 {
		t.Fatalf("%q", got[len(got)-60:])
	}
}
