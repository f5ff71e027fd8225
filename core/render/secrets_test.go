package render

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// Synthetic, format-valid secrets, built at run time from a seeded generator so that no
// credential-shaped literal sits in the repository (and secret scanners stay quiet).

const (
	alnum   = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	upperN  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	hexL    = "0123456789abcdef"
	hexU    = "0123456789ABCDEF"
	lowerN  = "abcdefghijklmnopqrstuvwxyz0123456789"
	letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	b64     = alnum + "+/"
	b64url  = alnum + "-_"
	bech32  = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
)

type gen struct{ r *rand.Rand }

func newGen(seed uint64) *gen { return &gen{rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))} }

// s returns n random characters of alphabet, always mixing classes where it can (so the
// entropy checks see a realistic value).
func (g *gen) s(alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[g.r.IntN(len(alphabet))]
	}
	return string(b)
}

// secretSample is one secret in a context. secret is the part that must never be shown;
// keep is the part that must stay (the kind), when the rule keeps one.
type secretSample struct {
	rule   string
	text   string
	secret string
	keep   string
}

func (s secretSample) String() string { return s.rule + ": " + s.text }

// samples returns every synthetic secret: at least one per catalog entry, and more than 100.
func samples() []secretSample {
	g := newGen(42)
	var out []secretSample
	add := func(rule, ctx, keep, secret string) {
		out = append(out, secretSample{rule: rule, text: fmt.Sprintf(ctx, keep+secret), secret: secret, keep: keep})
	}
	// private keys
	pemBody := g.s(b64, 64) + "\n" + g.s(b64, 64) + "\n" + g.s(b64, 20) + "=="
	for _, kind := range []string{"RSA ", "EC ", "OPENSSH ", "ENCRYPTED ", "DSA ", ""} {
		hdr := "-----BEGIN " + kind + "PRIVATE KEY-----"
		body := "\n" + pemBody + "\n-----END " + kind + "PRIVATE KEY-----"
		add("pem-private-key", "cat > key.pem <<'EOF'\n%s\nEOF", hdr, body)
	}
	// a JSON-escaped key (service account file) and an unterminated one
	add("pem-private-key", `{"type":"service_account","private_key":"%s\n","client_email":"x@y.iam"}`,
		"-----BEGIN PRIVATE KEY-----", `\n`+g.s(b64, 64)+`\n`+g.s(b64, 30)+`\n-----END PRIVATE KEY-----`)
	add("pem-private-key", "echo '%s' | ssh-add -", "-----BEGIN OPENSSH PRIVATE KEY-----", "\n"+g.s(b64, 70)+"\n"+g.s(b64, 70))
	add("pgp-private-key", "gpg --import <<EOF\n%s\nEOF", "-----BEGIN PGP PRIVATE KEY BLOCK-----",
		"\n\n"+g.s(b64, 64)+"\n="+g.s(b64, 4)+"\n-----END PGP PRIVATE KEY BLOCK-----")
	add("putty-private-key", "cat > k.ppk <<EOF\n%s\nEOF", "PuTTY-User-Key-File-3:",
		" ssh-ed25519\nEncryption: none\nPublic-Lines: 2\n"+g.s(b64, 64)+"\nPrivate-Lines: 1\n"+g.s(b64, 44)+"\nPrivate-MAC: "+g.s(hexL, 64))
	add("age-secret-key", "echo %s > key.txt", "AGE-SECRET-KEY-1", g.s(bech32, 58))

	// cloud
	for _, p := range []string{"AKIA", "ASIA"} {
		add("aws-access-key-id", "aws configure set aws_access_key_id %s", p, g.s(upperN, 16))
	}
	add("aws-access-key-id", `{"AccessKeyId": "%s"}`, "AKIA", g.s(upperN, 16))
	add("aws-secret-access-key", "aws configure set aws_secret_access_key %s", "", g.s(b64, 40))
	add("aws-secret-access-key", "export AWS_SECRET_ACCESS_KEY=%s", "", g.s(b64, 40))
	add("aws-session-token", "export AWS_SESSION_TOKEN=%s", "IQoJ", "b3JpZ2luX2Vj"+g.s(b64, 200))
	add("gcp-api-key", "curl 'https://maps.googleapis.com/maps/api/geocode/json?address=x&key=%s'", "AIza", g.s(b64url, 35))
	add("gcp-api-key", "GEMINI_API_KEY=%s python run.py", "AIza", g.s(b64url, 35))
	add("google-oauth-client-secret", `{"client_secret":"%s"}`, "GOCSPX-", g.s(b64url, 28))
	add("google-oauth-access-token", "gcloud --access-token-file=/dev/stdin <<< %s", "ya29.", g.s(b64url, 120))
	add("google-oauth-refresh-token", "refresh=%s", "1//0", g.s(b64url, 100))
	add("azure-storage-key", `az storage blob list --connection-string "DefaultEndpointsProtocol=https;AccountName=acct;%s;EndpointSuffix=core.windows.net"`,
		"AccountKey=", g.s(b64, 86)+"==")
	add("azure-sas-signature", `azcopy copy x 'https://acct.blob.core.windows.net/c?sv=2022-11-02&ss=b&srt=co&sp=rl&se=2026-01-01&%s'`,
		"sig=", g.s(alnum, 40)+"%3D")
	add("azure-ad-client-secret", `az login --service-principal -u app -p %s --tenant t`, g.s(alnum, 3)+"8Q~", g.s(b64url, 34))
	add("digitalocean-token", "doctl auth init -t %s", "dop_v1_", g.s(hexL, 64))
	add("alibaba-access-key-id", "aliyun configure set --access-key-id %s", "LTAI", g.s(alnum, 20))
	add("vault-token", "VAULT_TOKEN=%s vault kv get secret/x", "hvs.", g.s(b64url, 90))
	add("terraform-cloud-token", `credentials "app.terraform.io" { token = "%s" }`, g.s(alnum, 14)+".atlasv1.", g.s(b64url, 67))
	add("doppler-token", "doppler run --token %s -- ./app", "dp.st.", g.s(alnum, 43))
	add("pulumi-token", "PULUMI_ACCESS_TOKEN=%s pulumi up", "pul-", g.s(hexL, 40))
	add("flyio-token", "fly deploy --access-token %s", "fo1_", g.s(b64url, 43))
	add("databricks-token", "databricks configure --token <<< %s", "dapi", g.s(hexL, 32))
	add("supabase-token", "supabase login --token %s", "sbp_", g.s(hexL, 40))
	add("planetscale-token", "pscale auth login --service-token %s", "pscale_tkn_", g.s(b64url, 43))
	add("cloudflare-origin-ca-key", "CF_ORIGIN=%s", "v1.0-"+g.s(hexL, 24)+"-", g.s(hexL, 146))
	add("heroku-api-key", "heroku auth:token %s", "HRKU-", g.s(b64url, 60))
	add("scaleway-secret-key", "SCW_SECRET_KEY=%s terraform apply", "", strings.Join([]string{g.s(hexL, 8), g.s(hexL, 4), g.s(hexL, 4), g.s(hexL, 4), g.s(hexL, 12)}, "-"))

	// source control, CI, registries, observability
	for _, p := range []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"} {
		add("github-token", "git clone https://x-access-token:%s@github.com/o/r.git", p, g.s(alnum, 36))
	}
	add("github-token", "gh auth login --with-token <<< %s", "ghp_", g.s(alnum, 36))
	add("github-fine-grained-pat", "GH_TOKEN=%s gh pr list", "github_pat_", g.s(alnum+"_", 82))
	for _, p := range []string{"glpat-", "glptt-", "gldt-", "glrt-", "glcbt-", "gloas-"} {
		add("gitlab-token", "curl --header 'PRIVATE-TOKEN: %s' https://gitlab.com/api/v4/projects", p, g.s(b64url, 20))
	}
	add("gitlab-runner-registration", "gitlab-runner register --registration-token %s", "GR1348941", g.s(b64url, 20))
	add("bitbucket-app-password", "git remote add o https://bob:%s@bitbucket.org/o/r.git", "ATBB", g.s(alnum, 32))
	add("atlassian-api-token", "JIRA_API_TOKEN=%s jira issue list", "ATATT3", g.s(b64url, 186))
	add("npm-token", "npm config set //registry.npmjs.org/:_authToken %s", "npm_", g.s(alnum, 36))
	add("npmrc-auth-token", "echo '//npm.pkg.github.com/:_authToken=%s' >> ~/.npmrc", "", g.s(b64url, 40))
	add("pypi-token", "twine upload -u __token__ -p %s dist/*", "pypi-AgEIcHlwaS5vcmc", g.s(b64url, 120))
	add("rubygems-token", "GEM_HOST_API_KEY=%s gem push x.gem", "rubygems_", g.s(hexL, 48))
	add("nuget-api-key", "dotnet nuget push x.nupkg --api-key %s", "oy2", g.s("abcdefghijklmnopqrstuvwxyz0123456789", 43))
	add("dockerhub-pat", "echo %s | docker login -u bob --password-stdin", "dckr_pat_", g.s(b64url, 27))
	add("buildkite-token", "BUILDKITE_API_TOKEN=%s bk build list", "bkua_", g.s(hexL, 40))
	add("circleci-token", "circleci setup --token %s", "CCIPAT_", g.s(alnum, 22)+"_"+g.s(hexL, 40))
	add("sentry-token", "SENTRY_AUTH_TOKEN=%s sentry-cli releases new v1", "sntryu_", g.s(hexL, 64))
	add("grafana-token", "curl -H 'Authorization: Bearer %s' https://grafana.example/api/dashboards", "glsa_", g.s(alnum, 32)+"_"+g.s(hexL, 8))
	add("grafana-token", "GRAFANA_CLOUD=%s", "glc_", g.s(b64, 60)+"=")
	add("newrelic-key", "NEW_RELIC_API_KEY=%s newrelic apm", "NRAK-", g.s(upperN, 27))
	add("postman-key", "postman login --with-api-key %s", "PMAK-", g.s(hexL, 24)+"-"+g.s(hexL, 34))
	add("snyk-token", "SNYK_TOKEN=%s snyk test", "", strings.Join([]string{g.s(hexL, 8), g.s(hexL, 4), g.s(hexL, 4), g.s(hexL, 4), g.s(hexL, 12)}, "-"))
	add("datadog-key", "DD_API_KEY=%s datadog-agent run", "", g.s(hexL, 32))
	add("shopify-token", "curl -H 'X-Shopify-Access-Token: %s' https://shop.myshopify.com/admin/api/2024-01/orders.json", "shpat_", g.s(hexL, 32))
	add("linear-api-key", "LINEAR=%s", "lin_api_", g.s(alnum, 40))
	add("notion-token", "NOTION=%s node sync.js", "ntn_"+g.s("0123456789", 11), g.s(alnum, 35))
	add("notion-token", "notion --auth %s", "secret_", g.s(alnum, 43))
	add("airtable-pat", "AIRTABLE=%s", "pat"+g.s(alnum, 14)+".", g.s(hexL, 64))
	add("figma-token", "curl -H 'X-Figma-Token: %s' https://api.figma.com/v1/me", "figd_", g.s(b64url, 40))
	add("hubspot-pat", "hubspot --account-token %s", "pat-na1-", strings.Join([]string{g.s(hexL, 8), g.s(hexL, 4), g.s(hexL, 4), g.s(hexL, 4), g.s(hexL, 12)}, "-"))

	// chat platforms and messaging
	for _, p := range []string{"xoxb-", "xoxp-", "xoxa-", "xoxe.xoxp-"} {
		add("slack-token", "curl -F token=%s https://slack.com/api/chat.postMessage", p, g.s("0123456789", 12)+"-"+g.s("0123456789", 13)+"-"+g.s(alnum, 24))
	}
	add("slack-app-token", "SLACK_APP_TOKEN=%s ./bot", "xapp-1-", "A"+g.s(upperN, 10)+"-"+g.s("0123456789", 13)+"-"+g.s(hexL, 64))
	add("slack-webhook", "curl -X POST -d '{\"text\":\"hi\"}' https://%s", "hooks.slack.com/services/", "T"+g.s(upperN, 8)+"/B"+g.s(upperN, 8)+"/"+g.s(alnum, 24))
	add("telegram-bot-token", "curl https://api.telegram.org/bot%s/getMe", g.s("123456789", 10)+":", "AA"+g.s(b64url, 33))
	add("telegram-bot-token", "TELEGRAM_BOT_TOKEN=%s ./approvebot serve", g.s("123456789", 9)+":", "AA"+g.s(b64url, 33))
	add("discord-bot-token", "DISCORD_TOKEN=%s node bot.js", "M"+g.s(b64url, 25)+".", g.s(b64url, 6)+"."+g.s(b64url, 38))
	add("discord-webhook", "curl -H 'Content-Type: application/json' -d '{}' https://%s", "discord.com/api/webhooks/"+g.s("0123456789", 18)+"/", g.s(b64url, 68))
	add("teams-webhook", "curl -d @card.json https://contoso.%s", "webhook.office.com/webhookb2/", g.s(hexL, 8)+"-"+g.s(hexL, 4)+"@"+g.s(hexL, 8)+"/IncomingWebhook/"+g.s(hexL, 32)+"/"+g.s(hexL, 8))
	add("twilio-api-key", "twilio login --api-key %s", "SK", g.s(hexL, 32))
	add("sendgrid-key", "SENDGRID=%s node mail.js", "SG.", g.s(b64url, 22)+"."+g.s(b64url, 43))
	add("mailgun-key", "curl -s --user 'api:%s' https://api.mailgun.net/v3/x/messages", "key-", g.s(hexL, 32))
	add("mailchimp-key", "MC=%s-us21 node list.js", "", g.s(hexL, 32))
	add("sendinblue-key", "BREVO=%s", "xkeysib-", g.s(hexL, 64)+"-"+g.s(alnum, 16))

	// AI providers
	add("anthropic-key", "ANTHROPIC_API_KEY=%s claude", "sk-ant-api03-", g.s(b64url, 93)+"AA")
	add("anthropic-key", `curl https://api.anthropic.com/v1/messages -H "x-api-key: %s"`, "sk-ant-api03-", g.s(b64url, 95))
	add("anthropic-key", "ADMIN=%s", "sk-ant-admin01-", g.s(b64url, 95))
	add("openai-project-key", "OPENAI_API_KEY=%s python app.py", "sk-proj-", g.s(b64url, 156))
	add("openai-project-key", `curl https://api.openai.com/v1/models -H "Authorization: Bearer %s"`, "sk-svcacct-", g.s(b64url, 120))
	add("openrouter-key", "OPENROUTER=%s aider", "sk-or-v1-", g.s(hexL, 64))
	add("openai-style-key", "openai api models.list -k %s", "sk-", g.s(alnum, 20)+"T3BlbkFJ"+g.s(alnum, 20))
	add("openai-style-key", "DEEPSEEK=%s", "sk-", g.s(hexL, 32))
	add("huggingface-token", "huggingface-cli login --token %s", "hf_", g.s(letters, 34))
	add("groq-key", "GROQ=%s", "gsk_", g.s(alnum, 52))
	add("replicate-token", "REPLICATE=%s", "r8_", g.s(alnum, 37))
	add("perplexity-key", "PPLX=%s", "pplx-", g.s(alnum, 48))
	add("xai-key", "XAI=%s", "xai-", g.s(alnum, 80))
	add("fireworks-key", "FIREWORKS=%s", "fw_", g.s(alnum, 24))
	add("langsmith-key", "LANGSMITH=%s", "lsv2_pt_", g.s(hexL, 32)+"_"+g.s(hexL, 10))
	add("ai-provider-key-assignment", "COHERE_API_KEY=%s python rerank.py", "", g.s(alnum, 40))
	add("ai-provider-key-assignment", `{"mistral_key": "%s"}`, "", g.s(alnum, 32))

	// payments
	for _, p := range []string{"sk_live_", "sk_test_", "rk_live_"} {
		add("stripe-secret-key", "curl https://api.stripe.com/v1/charges -u %s:", p, g.s(alnum, 99))
	}
	add("stripe-webhook-secret", "stripe listen --secret %s", "whsec_", g.s(alnum, 32))
	add("square-token", "SQUARE=%s", "EAAA", g.s(b64url, 60))
	add("square-token", "SQ=%s", "sq0atp-", g.s(b64url, 22))
	add("braintree-token", "BT=%s", "access_token$production$", g.s("abcdefghijklmnopqrstuvwxyz0123456789", 16)+"$"+g.s(hexL, 32))
	add("razorpay-key", "RZP=%s", "rzp_live_", g.s(alnum, 14))
	add("flutterwave-key", "FLW=%s", "FLWSECK_TEST-", g.s(hexL, 32)+"-X")
	add("shippo-token", "SHIPPO=%s", "shippo_live_", g.s(hexL, 40))
	add("easypost-key", "EASYPOST=%s", "EZAK", g.s(alnum, 54))
	add("paypal-client-secret", "PAYPAL_CLIENT_SECRET=%s", "", g.s(b64url, 80))

	// generic shapes
	jwt := "eyJ" + g.s(b64url, 33) + ".eyJ" + g.s(b64url, 60) + "." + g.s(b64url, 43)
	add("jwt", "curl -b 'session=%s' https://app.example/api", "eyJ", jwt[3:])
	add("jwt", "kubectl --token=%s get pods", "eyJ", "hbGciOiJSUzI1NiIsImtpZCI6Ij"+g.s(b64url, 20)+".eyJ"+g.s(b64url, 80)+"."+g.s(b64url, 86))
	for _, sch := range []string{"postgres://app:", "mysql://root:", "redis://:", "mongodb+srv://admin:", "amqp://guest:", "https://deploy:", "ftp://u:"} {
		add("url-credentials", "psql %s@db.internal:5432/prod", sch, g.s(alnum, 18))
	}
	add("url-token-param", "curl 'https://api.example.com/v1/items?limit=10&access_token=%s'", "", g.s(alnum, 40))
	add("authorization-header", `curl -H "Authorization: Basic %s" https://api.example.com`, "", g.s(b64, 40)+"==")
	add("authorization-header", `curl -H 'authorization: token %s' https://api.example.com`, "", g.s(hexL, 40))
	add("authorization-header", `{"headers":{"Authorization":"Bot %s"}}`, "", g.s(b64url, 60))
	add("authorization-header", `curl -H 'Authorization: Digest %s' https://x`, "", `username=u, realm=r, nonce=`+g.s(hexL, 32)+`, response=`+g.s(hexL, 32))
	add("bearer-token", "wget --header='Bearer %s' https://x", "", g.s(b64url, 30))
	add("basic-auth-header", `requests.get(u, headers={"X-Auth": "Basic %s"})`, "", g.s(b64, 32)+"=")
	add("curl-user", "curl -u admin:%s https://jenkins.local/api/json", "", g.s(alnum, 14))
	add("curl-user", "curl --user deploy:%s -X POST https://x", "", g.s(alnum, 14))
	add("curl-user", "http -a alice:%s GET https://api.example.com", "", g.s(alnum, 12))
	add("netrc-password", "echo 'machine api.example.com login bob password %s' >> ~/.netrc", "", g.s(alnum, 14))
	add("netrc-password", "printf 'machine git.example.com\\nlogin bob\\npassword %s\\n' > ~/.netrc", "", g.s(alnum, 14))
	add("netrc-password", "cat >> ~/.authinfo <<EOF\nmachine imap.example.com port 993 login bob@example.com password %s\nEOF", "", g.s(alnum+"!@#%", 16))
	add("netrc-password", "machine h\n  login bob\n  password \"%s\"", "", g.s(alnum, 10)+" "+g.s(alnum, 6))
	add("netrc-account", "echo 'machine ftp.example.com login bob account %s' >> ~/.netrc", "", g.s(alnum, 14))
	add("netrc-account", "machine h\n\tlogin bob\n\tpassword x1\n\taccount %s", "", g.s(alnum+"!@#%", 16))
	add("mysql-password-flag", "mysql -u root -p%s -h db prod", "", g.s(alnum, 14))
	add("mysql-password-flag", "mysqldump -uroot -p%s --all-databases", "", g.s(alnum, 10))
	add("password-short-flag", "sshpass -p %s ssh root@host", "", g.s(alnum, 12))
	add("password-short-flag", "redis-cli -h cache -a %s FLUSHALL", "", g.s(alnum, 16))
	add("password-short-flag", "docker login -u bob -p %s registry.example.com", "", g.s(alnum, 16))
	add("password-short-flag", "7z x backup.7z -p%s", "", g.s(alnum, 12))
	add("password-short-flag", "zip -r -P %s out.zip dir", "", g.s(alnum, 12))
	add("openssl-pass", "openssl pkcs12 -export -in c.pem -passout pass:%s -out c.p12", "", g.s(alnum, 12))
	add("password-flag", "mongo --password %s --username admin", "", g.s(alnum, 12))
	add("secret-assignment", "vault login -method=userpass username=bob password=%s", "", g.s(alnum, 12))
	add("password-flag", "wget --http-password=%s https://x/file", "", g.s(alnum, 12))
	add("secret-assignment", "terraform apply -var db_password=%s", "", "hunter2!"+g.s(alnum, 4))
	add("password-flag", "tool --api-key %s --verbose", "", g.s(alnum, 24))
	add("password-flag", "cli --client-secret '%s' run", "", g.s(alnum, 10)+" "+g.s(alnum, 6))
	add("secret-assignment", "export DB_PASSWORD=%s && ./migrate", "", "correct-horse-"+g.s(alnum, 6))
	add("secret-assignment", "PGPASSWORD='%s' psql -h db", "", "p@ss w0rd "+g.s(alnum, 4))
	add("secret-assignment", `{"username":"bob","password":"%s"}`, "", g.s(alnum, 16))
	add("secret-assignment", "password: %s", "", g.s(alnum, 9))
	add("secret-assignment", "$env:API_TOKEN = \"%s\"", "", g.s(alnum, 32))
	add("secret-assignment", "set MY_SECRET=%s", "", g.s(alnum, 20))
	add("secret-assignment", "kubectl create secret generic db --from-literal=password=%s", "", g.s(alnum, 12))
	add("secret-assignment", "docker run -e JWT_SIGNING_KEY=%s app", "", g.s(b64, 44))
	add("secret-assignment", "SESSION_SECRET=%s node server.js", "", g.s(alnum, 40))
	add("secret-assignment", "client_secret = \"%s\"", "", g.s(alnum, 30))
	add("secret-assignment", "export GITLAB_TOKEN=%s", "", g.s(alnum, 26))
	add("secret-assignment", `{"auth": {"token": "%s"}}`, "", g.s(alnum, 28))
	add("secret-assignment", "curl -H 'X-Api-Key: %s' https://api.example.com", "", g.s(alnum, 24))
	add("secret-assignment", "curl -b 'cookie=%s' https://x", "", g.s(alnum, 24))
	add("secret-assignment", "export ENCRYPTION_KEY=%s", "", g.s(hexL, 64))
	add("secret-assignment", "DATABASE_PASS=%s rails s", "", g.s(alnum, 12))
	return out
}

func TestCatalogSamples(t *testing.T) {
	all := samples()
	if len(all) < 100 {
		t.Fatalf("only %d samples, want at least 100", len(all))
	}
	for i, s := range all {
		t.Run(fmt.Sprintf("%03d-%s", i, s.rule), func(t *testing.T) {
			got := Mask(s.text)
			assertHidden(t, "Mask", got, s)
			if s.keep != "" && !strings.Contains(got, s.keep) {
				t.Errorf("kind prefix %q not kept in %q", s.keep, got)
			}
			if !strings.Contains(got, MaskMark) {
				t.Errorf("no %s in %q", MaskMark, got)
			}
			if !ruleFires(s.rule, s.text) {
				t.Errorf("rule %s does not fire on its own sample", s.rule)
			}
			if again := Mask(got); again != got {
				t.Errorf("Mask not idempotent:\n%q\n%q", got, again)
			}
		})
	}
}

// assertHidden fails when any 6-character piece of the secret (past its kind prefix) is
// visible in out: no secret and none of its tail.
func assertHidden(t *testing.T, where, out string, s secretSample) {
	t.Helper()
	for _, piece := range secretPieces(s.secret) {
		if strings.Contains(out, piece) && !strings.Contains(s.keep, piece) {
			t.Errorf("%s shows %q of the %s secret:\n%s", where, piece, s.rule, out)
			return
		}
	}
}

// secretPieces are the alphanumeric runs of length ≥ 6 of a secret, cut into 8-character
// windows (stepping by 4), which is how a leak would show.
func secretPieces(secret string) []string {
	var pieces []string
	for _, run := range strings.FieldsFunc(secret, func(r rune) bool {
		return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
	}) {
		if len(run) < 8 {
			continue
		}
		for i := 0; i+8 <= len(run); i += 4 {
			pieces = append(pieces, run[i:i+8])
		}
		pieces = append(pieces, run[len(run)-8:])
	}
	return pieces
}

// ruleFires reports whether the catalog entry id alone finds a valid secret in text.
func ruleFires(id, text string) bool {
	for i := range catalog {
		r := &catalog[i]
		if r.id != id {
			continue
		}
		for _, c := range r.candidates(text, asciiLower(text)) {
			if r.valid == nil || r.valid(c.name, text[c.a:c.b]) {
				return true
			}
		}
		return false
	}
	return false
}

func TestCatalogEveryRuleHasSample(t *testing.T) {
	have := map[string]int{}
	for _, s := range samples() {
		have[s.rule]++
	}
	seen := map[string]bool{}
	for _, r := range catalog {
		if seen[r.id] {
			t.Errorf("duplicate rule id %s", r.id)
		}
		seen[r.id] = true
		if have[r.id] == 0 {
			t.Errorf("rule %s has no sample", r.id)
		}
	}
	for id := range have {
		if !seen[id] {
			t.Errorf("sample names unknown rule %s", id)
		}
	}
}

// lookalikes are strings with the shape of secrets that are not: Mask must leave them whole.
var notSecrets = []string{
	"git checkout 3f786850e387550fdab836ed7e6dc881de23001b",
	"git show 9fceb02 --stat",
	"git rebase -i a94a8fe5ccb19ba61c4c0873d391e987982fbbd3~3",
	"cat /var/lib/app/123e4567-e89b-12d3-a456-426614174000/config.json",
	"rm -rf /nix/store/0c0jh0zl1y0l3g9xp1a2lqdp0c9j3hx5-hello-2.12",
	"docker pull alpine@sha256:c5b1261d6d3e43071626931fc004f70149baeba2c8ec672bd4f27761f8e1ad6b",
	"ls /var/lib/docker/overlay2/9d8c8d7b6b4e1f5a3c2e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c/merged",
	"sha256sum dist/app.tar.gz # e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
	`npm ci # integrity sha512-9q3Fj1f3R0bZ6nT5pS0bKj0yT3x1n2hXzVQZPp8Wm1Q5LwR7rW0yT1A2B3C4D5E6F7G8H9I0J1K2L3M4N5O6P7==`,
	"echo 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl bob@host' >> ~/.ssh/authorized_keys",
	`curl -d '{"model":"claude","max_tokens":4096,"temperature":0.2}' https://api.example.com/v1/messages`,
	"oauth2 --token_type=bearer --grant_type=client_credentials",
	"echo $TOKEN | docker login -u bob --password-stdin ghcr.io",
	"PWD=/home/bob/project OLDPWD=/home/bob make",
	"export GITHUB_TOKEN=$GH_TOKEN && gh pr list",
	"TOKEN=${CI_JOB_TOKEN} ./deploy.sh",
	"aws s3 cp s3://bucket/path/key.txt . --region us-east-1",
	"kubectl get secret db-credentials -o yaml",
	"mkdir -p /tmp/a && ssh -p 2222 host && sort -k2 file && tar -xpf x.tar",
	"mysql -u root -p -h db prod",
	"go get golang.org/x/text@v0.3.0 # h1:g61tztE5qeGQ89tm6NTjjM9VPIm088od1l6aSorWRWg=",
	`git commit -m "fix token refresh when the key rotates"`,
	"secretary=bob compass=north bypass_cache=true passthrough=1",
	"docker run -u 1000:1000 -v $PWD:/src image",
	"curl https://example.com/api?page=2&sort=key&order=asc",
	"echo eyJhbGciOiJIUzI1NiJ9 | base64 -d",
	"stripe pk: pk_test_TYooMQauvdEDq54NiTphI7jx",
	"ghp_short is not a token",
	"export KEYMAP=us SSH_AUTH_SOCK=/run/user/1000/ssh-agent.socket",
	"uuidgen # 7d444840-9dc0-11d1-b245-5ffdce74fad2",
	"--key-file ./tls/server.key --cert-file ./tls/server.crt",
	"the api key: see the wiki",
	"cat /proc/self/cgroup # 0::/system.slice/docker-4f1c2b3a5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7a8.scope",
	"ssh-keygen -lf ~/.ssh/id_ed25519.pub # SHA256:uNiVztksCsDhcc0u9e8BujQXVUpKZIDTMczCvj3tD2s",
}

func TestLookalikesSurvive(t *testing.T) {
	if len(notSecrets) < 20 {
		t.Fatalf("only %d look-alikes, want at least 20", len(notSecrets))
	}
	for i, s := range notSecrets {
		t.Run(fmt.Sprintf("%02d", i), func(t *testing.T) {
			if got := Mask(s); got != s {
				t.Errorf("masked a non-secret:\n in: %s\nout: %s\nspans: %v", s, got, findSecrets(s))
			}
		})
	}
}

func TestNameClasses(t *testing.T) {
	tests := []struct {
		name string
		want nameClass
	}{
		{"AWS_SECRET_ACCESS_KEY", nameStrong},
		{"clientSecret", nameStrong},
		{"--api-key", nameStrong},
		{"APIKey", nameStrong},
		{"DB_PASSWORD", nameStrong},
		{"accessToken", nameStrong},
		{"GITHUB_TOKEN", nameWeak},
		{"max_tokens", nameNone},
		{"TOKEN_FILE", nameNone},
		{"--password-stdin", nameNone},
		{"PWD", nameNone},
		{"public_key", nameNone},
		{"secretary", nameNone},
		{"AWS_ACCESS_KEY_ID", nameNone},
		{"keyboard", nameNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := classifyName(tt.name); got != tt.want {
				t.Errorf("classifyName(%q) = %d, want %d (words %q)", tt.name, got, tt.want, nameWords(tt.name))
			}
		})
	}
}

func TestMaskKeepsKindNeverTail(t *testing.T) {
	tests := []struct{ in, want string }{
		{"export GITHUB_TOKEN=ghp_" + strings.Repeat("aB3", 12), "export GITHUB_TOKEN=ghp_…[masked]"},
		{"curl -u admin:hunter2x https://x", "curl -u admin:[masked] https://x"},
		{"psql postgres://bob:s3cr3t@db/x", "psql postgres://bob:[masked]@db/x"},
		{`{"password":"hunter22"}`, `{"password":"[masked]"}`},
		{"echo -----BEGIN RSA PRIVATE KEY-----\nMIIabc\n-----END RSA PRIVATE KEY----- done", "echo -----BEGIN RSA PRIVATE KEY-----…[masked] done"},
		{"-----BEGIN PRIVATE KEY-----\nMIIunterminated", "-----BEGIN PRIVATE KEY-----…[masked]"},
		{"curl -H 'Authorization: Bearer abcdef0123456789abcdef' https://x", "curl -H 'Authorization: Bearer [masked]' https://x"},
		{"curl -H 'Authorization: Bearer sk-ant-api03-" + strings.Repeat("x1Y", 30) + "' https://x", "curl -H 'Authorization: Bearer sk-ant-api03-…[masked]' https://x"},
	}
	for _, tt := range tests {
		if got := Mask(tt.in); got != tt.want {
			t.Errorf("Mask(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
}
