package render

import "regexp"

// The secret catalog, as data. Each entry keeps the recognisable part of the match (a vendor
// prefix, a header or variable name) and replaces the rest, so an approver sees what kind of
// credential is in a command and never any of its characters past the prefix.
//
// Sources for the formats: the rules of the well-known scanners (gitleaks' default config,
// GitHub secret scanning partner patterns, trufflehog detectors) and each vendor's
// documentation of its token prefixes. Every entry has at least one synthetic sample in
// secrets_test.go; TestCatalogEveryRuleHasSample enforces it.
//
// The order does not matter: spans of all entries are merged before replacement.
//
// Why not a library: the module proxy offers no gitleaks or trufflehog as a library, and the
// one detector it lists (github.com/DefangLabs/secret-detector, a port of Yelp's
// detect-secrets) has about twenty detectors — none for Anthropic, OpenAI project keys,
// GitLab, Telegram, Discord or most of the vendors below — reports findings rather than
// masking in place, and brings YAML, INI and JWT modules; core/render is standard library
// only by design. A catalog as data, each entry tested, is smaller than that dependency.

func rx(s string) *regexp.Regexp { return regexp.MustCompile(s) }

// .netrc tokens are separated by white space, which a printf format or a JSON string
// writes as \n or \t (\\n once more escaped).
const (
	netrcSep = `(?:\s|\\+[nt])+`
	netrcTok = `[^\s\\'"]+`
)

// Boundaries: RE2 has no look-behind, so a token that must not be the tail of a longer word
// starts with (?:^|[^A-Za-z0-9_]) outside the kept part, or uses \b where the prefix is
// alphanumeric.

var catalog = compileRules([]secretRule{
	// ---- private keys ------------------------------------------------------------------
	{id: "pem-private-key", kind: "private key", keywords: []string{"PRIVATE KEY-----"},
		// Through the END line; an unterminated block is masked to the end of the text.
		re: rx(`-----BEGIN[A-Z ]*PRIVATE KEY-----(?P<s>(?s:.*?-----END[A-Z ]*PRIVATE KEY-----|.+))`)},
	{id: "pgp-private-key", kind: "private key", keywords: []string{"PGP PRIVATE KEY BLOCK"},
		re: rx(`-----BEGIN PGP PRIVATE KEY BLOCK-----(?P<s>(?s:.*?-----END PGP PRIVATE KEY BLOCK-----|.+))`)},
	{id: "putty-private-key", kind: "private key", keywords: []string{"PuTTY-User-Key-File"},
		re: rx(`PuTTY-User-Key-File-\d+:(?P<s>(?s:.*?Private-MAC: *[0-9a-fA-F]+|.+))`)},
	{id: "age-secret-key", kind: "private key", keywords: []string{"AGE-SECRET-KEY-1"},
		re: rx(`AGE-SECRET-KEY-1(?P<s>[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58})`)},

	// ---- cloud -------------------------------------------------------------------------
	{id: "aws-access-key-id", kind: "AWS", keywords: []string{"AKIA", "ASIA", "ABIA", "ACCA", "A3T"},
		re: rx(`\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])(?P<s>[A-Z2-7]{16})\b`)},
	{id: "aws-secret-access-key", kind: "AWS", keywords: []string{"aws"},
		re:    rx(`(?i)(?P<n>aws[A-Za-z0-9_.-]{0,30}(?:secret|key))[A-Za-z0-9_.-]*(?:\\?["'])?(?:\s*[:=]\s*|\s+)(?:\\?["'])?(?P<s>[A-Za-z0-9/+=]{40})\b`),
		valid: validRandom},
	{id: "aws-session-token", kind: "AWS", keywords: []string{"FwoG", "IQoJ"},
		re: rx(`\b(?:FwoG|IQoJ)(?P<s>[A-Za-z0-9/+=]{80,})`)},
	{id: "gcp-api-key", kind: "Google", keywords: []string{"AIza"},
		re: rx(`\bAIza(?P<s>[0-9A-Za-z_\-]{35})`)},
	{id: "google-oauth-client-secret", kind: "Google", keywords: []string{"GOCSPX-"},
		re: rx(`\bGOCSPX-(?P<s>[A-Za-z0-9_\-]{28})`)},
	{id: "google-oauth-access-token", kind: "Google", keywords: []string{"ya29."},
		re: rx(`\bya29\.(?P<s>[0-9A-Za-z_\-]{20,})`)},
	{id: "google-oauth-refresh-token", kind: "Google", keywords: []string{"1//0"},
		re: rx(`(?:^|[^A-Za-z0-9/])1//0(?P<s>[0-9A-Za-z_\-]{30,})`)},
	{id: "azure-storage-key", kind: "Azure", keywords: []string{"accountkey="},
		re: rx(`(?i)AccountKey=(?P<s>[A-Za-z0-9+/]{86}==)`)},
	{id: "azure-sas-signature", kind: "Azure", keywords: []string{"sig="},
		re: rx(`[?&]sig=(?P<s>[A-Za-z0-9%+/=]{30,})`)},
	{id: "azure-ad-client-secret", kind: "Azure", keywords: []string{"Q~"},
		re: rx(`(?:^|[^A-Za-z0-9_~.])[A-Za-z0-9_~.]{3}\dQ~(?P<s>[A-Za-z0-9_~.\-]{31,34})\b`)},
	{id: "digitalocean-token", kind: "DigitalOcean", keywords: []string{"dop_v1_", "doo_v1_", "dor_v1_"},
		re: rx(`\bdo[opr]_v1_(?P<s>[a-f0-9]{64})\b`)},
	{id: "alibaba-access-key-id", kind: "Alibaba", keywords: []string{"LTAI"},
		re: rx(`\bLTAI(?P<s>[A-Za-z0-9]{20})\b`)},
	{id: "vault-token", kind: "HashiCorp Vault", keywords: []string{"hvs.", "hvb.", "hvr."},
		re: rx(`\bhv[sbr]\.(?P<s>[A-Za-z0-9_\-]{24,})`)},
	{id: "terraform-cloud-token", kind: "Terraform", keywords: []string{".atlasv1."},
		re: rx(`\b[A-Za-z0-9]{14}\.atlasv1\.(?P<s>[A-Za-z0-9_=\-]{60,70})`)},
	{id: "doppler-token", kind: "Doppler", keywords: []string{"dp.pt.", "dp.st.", "dp.sa.", "dp.ct."},
		re: rx(`\bdp\.(?:pt|st|sa|ct|scim|audit)\.(?P<s>[A-Za-z0-9]{40,44})`)},
	{id: "pulumi-token", kind: "Pulumi", keywords: []string{"pul-"},
		re: rx(`\bpul-(?P<s>[a-f0-9]{40})\b`)},
	{id: "flyio-token", kind: "Fly.io", keywords: []string{"fo1_", "fm1", "fm2_"},
		re: rx(`\b(?:fo1_|fm1[ar]_|fm2_)(?P<s>[A-Za-z0-9+/=_\-]{40,})`)},
	{id: "databricks-token", kind: "Databricks", keywords: []string{"dapi"},
		re: rx(`\bdapi(?P<s>[a-f0-9]{32}(?:-\d)?)\b`)},
	{id: "supabase-token", kind: "Supabase", keywords: []string{"sbp_", "sb_secret_"},
		re: rx(`\b(?:sbp_|sb_secret_)(?P<s>[A-Za-z0-9_\-]{30,})`)},
	{id: "planetscale-token", kind: "PlanetScale", keywords: []string{"pscale_"},
		re: rx(`\bpscale_(?:tkn|pw|oauth)_(?P<s>[A-Za-z0-9_.\-]{32,64})`)},
	{id: "cloudflare-origin-ca-key", kind: "Cloudflare", keywords: []string{"v1.0-"},
		re: rx(`\bv1\.0-[a-f0-9]{24}-(?P<s>[a-f0-9]{146})`)},
	{id: "heroku-api-key", kind: "Heroku", keywords: []string{"HRKU-"},
		re: rx(`\bHRKU-(?P<s>[A-Za-z0-9_\-]{30,60})`)},
	{id: "scaleway-secret-key", kind: "Scaleway", keywords: []string{"scw"},
		re: rx(`(?i)(?P<n>scw[A-Za-z0-9_]*secret[A-Za-z0-9_]*)(?:\\?["'])?\s*[:=]\s*(?:\\?["'])?(?P<s>[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12})`)},

	// ---- source control, CI, registries, observability ----------------------------------
	{id: "github-token", kind: "GitHub", keywords: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"},
		re: rx(`\bgh[pousr]_(?P<s>[A-Za-z0-9]{36,})\b`)},
	{id: "github-fine-grained-pat", kind: "GitHub", keywords: []string{"github_pat_"},
		re: rx(`\bgithub_pat_(?P<s>[A-Za-z0-9_]{82})\b`)},
	{id: "gitlab-token", kind: "GitLab", keywords: []string{"glpat-", "glptt-", "gldt-", "glrt-", "glcbt-", "glsoat-", "gloas-", "glft-", "glimt-", "glagent-", "glffct-", "glrtr-"},
		re: rx(`\b(?:glpat|glptt|gldt|glrt|glrtr|glcbt|glsoat|gloas|glft|glimt|glagent|glffct)-(?P<s>[A-Za-z0-9_\-.]{20,})`)},
	{id: "gitlab-runner-registration", kind: "GitLab", keywords: []string{"GR1348941"},
		re: rx(`\bGR1348941(?P<s>[A-Za-z0-9_\-]{20,})`)},
	{id: "bitbucket-app-password", kind: "Bitbucket", keywords: []string{"ATBB"},
		re: rx(`\bATBB(?P<s>[A-Za-z0-9]{32,})`)},
	{id: "atlassian-api-token", kind: "Atlassian", keywords: []string{"ATATT3", "ATCTT3"},
		re: rx(`\bAT[AC]TT3(?P<s>[A-Za-z0-9_\-=]{60,})`)},
	{id: "npm-token", kind: "npm", keywords: []string{"npm_"},
		re: rx(`\bnpm_(?P<s>[A-Za-z0-9]{36})\b`)},
	{id: "npmrc-auth-token", generic: true, kind: "npm", keywords: []string{"_authtoken"},
		re: rx(`(?i)_authToken\s*=\s*(?P<s>[^\s"'$][^\s"']*)`)},
	{id: "pypi-token", kind: "PyPI", keywords: []string{"pypi-AgEIcHlwaS5vcmc"},
		re: rx(`\bpypi-AgEIcHlwaS5vcmc(?P<s>[A-Za-z0-9_\-]{50,})`)},
	{id: "rubygems-token", kind: "RubyGems", keywords: []string{"rubygems_"},
		re: rx(`\brubygems_(?P<s>[a-f0-9]{48})\b`)},
	{id: "nuget-api-key", kind: "NuGet", keywords: []string{"oy2"},
		re: rx(`\boy2(?P<s>[a-z0-9]{43})\b`)},
	{id: "dockerhub-pat", kind: "Docker Hub", keywords: []string{"dckr_pat_", "dckr_oat_"},
		re: rx(`\bdckr_(?:pat|oat)_(?P<s>[A-Za-z0-9_\-]{27,})`)},
	{id: "buildkite-token", kind: "Buildkite", keywords: []string{"bkua_", "bkagent_"},
		re: rx(`\b(?:bkua|bkagent)_(?P<s>[a-f0-9]{40})\b`)},
	{id: "circleci-token", kind: "CircleCI", keywords: []string{"CCIPAT_"},
		re: rx(`\bCCIPAT_(?P<s>[A-Za-z0-9]{20,}_[a-f0-9]{40})\b`)},
	{id: "sentry-token", kind: "Sentry", keywords: []string{"sntrys_", "sntryu_"},
		re: rx(`\bsntry[su]_(?P<s>[A-Za-z0-9+/=_\-]{40,})`)},
	{id: "grafana-token", kind: "Grafana", keywords: []string{"glc_", "glsa_"},
		re: rx(`\b(?:glc_|glsa_)(?P<s>[A-Za-z0-9+/=_\-]{32,})`)},
	{id: "newrelic-key", kind: "New Relic", keywords: []string{"NRAK-", "NRII-", "NRJS-"},
		re: rx(`\bNR(?:AK|II|JS)-(?P<s>[A-Za-z0-9]{19,27})\b`)},
	{id: "postman-key", kind: "Postman", keywords: []string{"PMAK-"},
		re: rx(`\bPMAK-(?P<s>[a-f0-9]{24}-[a-f0-9]{34})\b`)},
	{id: "snyk-token", kind: "Snyk", keywords: []string{"snyk"},
		re: rx(`(?i)(?P<n>snyk[A-Za-z0-9_]*(?:token|key))(?:\\?["'])?\s*[:=]\s*(?:\\?["'])?(?P<s>[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12})`)},
	{id: "datadog-key", kind: "Datadog", keywords: []string{"dd_", "datadog"},
		re: rx(`(?i)(?P<n>(?:dd|datadog)_(?:api|app|application)_key)(?:\\?["'])?\s*[:=]\s*(?:\\?["'])?(?P<s>[a-f0-9]{32,40})\b`)},
	{id: "shopify-token", kind: "Shopify", keywords: []string{"shpat_", "shpss_", "shpca_", "shppa_"},
		re: rx(`\bshp(?:at|ss|ca|pa)_(?P<s>[a-fA-F0-9]{32})\b`)},
	{id: "linear-api-key", kind: "Linear", keywords: []string{"lin_api_"},
		re: rx(`\blin_api_(?P<s>[A-Za-z0-9]{40})\b`)},
	{id: "notion-token", kind: "Notion", keywords: []string{"ntn_", "secret_"},
		re: rx(`\b(?:ntn_[0-9]{11}|secret_)(?P<s>[A-Za-z0-9]{35,43})\b`)},
	{id: "airtable-pat", kind: "Airtable", keywords: []string{"pat"},
		re: rx(`\bpat[A-Za-z0-9]{14}\.(?P<s>[a-f0-9]{64})\b`)},
	{id: "figma-token", kind: "Figma", keywords: []string{"figd_"},
		re: rx(`\bfigd_(?P<s>[A-Za-z0-9_\-]{40})`)},
	{id: "hubspot-pat", kind: "HubSpot", keywords: []string{"pat-na", "pat-eu"},
		re: rx(`\bpat-(?:na|eu)\d-(?P<s>[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12})\b`)},

	// ---- chat platforms and messaging ---------------------------------------------------
	{id: "slack-token", kind: "Slack", keywords: []string{"xox"},
		re: rx(`\bxox(?:[abposr]|e\.xox[bp])-(?P<s>[0-9A-Za-z\-]{10,})`)},
	{id: "slack-app-token", kind: "Slack", keywords: []string{"xapp-"},
		re: rx(`\bxapp-\d-(?P<s>[A-Z0-9]+-\d+-[a-z0-9]+)`)},
	{id: "slack-webhook", kind: "Slack", keywords: []string{"hooks.slack.com"},
		re: rx(`(?i)hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9+/_\-]{20,})`)},
	{id: "telegram-bot-token", kind: "Telegram", keywords: []string{":A"},
		re: rx(`(?:^|[^0-9A-Za-z_]|bot)[0-9]{5,16}:(?P<s>A[A-Za-z0-9_\-]{34})(?:$|[^A-Za-z0-9_\-])`)},
	{id: "discord-bot-token", kind: "Discord", pre: hasDiscordShape,
		re: rx(`\b[MNO][A-Za-z0-9_\-]{23,25}\.(?P<s>[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,38})\b`)},
	{id: "discord-webhook", kind: "Discord", keywords: []string{"/api/webhooks/"},
		re: rx(`(?i)discord(?:app)?\.com/api/webhooks/[0-9]+/(?P<s>[A-Za-z0-9_\-]{60,68})`)},
	{id: "teams-webhook", kind: "Microsoft Teams", keywords: []string{"webhook.office.com", "logic.azure.com"},
		re: rx(`(?i)(?:webhook\.office\.com/webhookb2/|logic\.azure\.com[:0-9]*/workflows/)(?P<s>[^\s"'<>]{20,})`)},
	{id: "twilio-api-key", kind: "Twilio", keywords: []string{"SK"},
		re: rx(`\bSK(?P<s>[0-9a-f]{32})\b`)},
	{id: "sendgrid-key", kind: "SendGrid", keywords: []string{"SG."},
		re: rx(`\bSG\.(?P<s>[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43})`)},
	{id: "mailgun-key", kind: "Mailgun", keywords: []string{"key-"},
		re: rx(`(?:^|[^A-Za-z0-9_\-])key-(?P<s>[a-f0-9]{32})\b`)},
	{id: "mailchimp-key", kind: "Mailchimp", keywords: []string{"-us"},
		re: rx(`\b(?P<s>[a-f0-9]{32})-us[0-9]{1,2}\b`)},
	{id: "sendinblue-key", kind: "Brevo", keywords: []string{"xkeysib-", "xsmtpsib-"},
		re: rx(`\bx(?:keysib|smtpsib)-(?P<s>[a-f0-9]{64}-[A-Za-z0-9]{16})`)},

	// ---- AI providers --------------------------------------------------------------------
	{id: "anthropic-key", kind: "Anthropic", keywords: []string{"sk-ant-"},
		re: rx(`\bsk-ant-(?:api|admin|sid|oat|ort)[0-9]{2}-(?P<s>[A-Za-z0-9_\-]{20,})`)},
	{id: "openai-project-key", kind: "OpenAI", keywords: []string{"sk-proj-", "sk-svcacct-", "sk-admin-", "sk-None-"},
		re: rx(`\bsk-(?:proj|svcacct|admin|None)-(?P<s>[A-Za-z0-9_\-]{20,})`)},
	{id: "openrouter-key", kind: "OpenRouter", keywords: []string{"sk-or-v1-"},
		re: rx(`\bsk-or-v1-(?P<s>[a-f0-9]{64})\b`)},
	{id: "openai-style-key", kind: "OpenAI-style", keywords: []string{"sk-"},
		// sk-… keys of OpenAI (legacy, T3BlbkFJ inside), DeepSeek, Moonshot and others.
		re: rx(`(?:^|[^A-Za-z0-9_\-])sk-(?P<s>[A-Za-z0-9]{32,})\b`)},
	{id: "huggingface-token", kind: "Hugging Face", keywords: []string{"hf_", "api_org_"},
		re: rx(`\b(?:hf_|api_org_)(?P<s>[A-Za-z]{34,})\b`)},
	{id: "groq-key", kind: "Groq", keywords: []string{"gsk_"},
		re: rx(`\bgsk_(?P<s>[A-Za-z0-9]{52})\b`)},
	{id: "replicate-token", kind: "Replicate", keywords: []string{"r8_"},
		re: rx(`\br8_(?P<s>[A-Za-z0-9]{37})\b`)},
	{id: "perplexity-key", kind: "Perplexity", keywords: []string{"pplx-"},
		re: rx(`\bpplx-(?P<s>[A-Za-z0-9]{48})\b`)},
	{id: "xai-key", kind: "xAI", keywords: []string{"xai-"},
		re: rx(`\bxai-(?P<s>[A-Za-z0-9]{80})\b`)},
	{id: "fireworks-key", kind: "Fireworks", keywords: []string{"fw_"},
		re: rx(`\bfw_(?P<s>[A-Za-z0-9]{24,})\b`)},
	{id: "langsmith-key", kind: "LangSmith", keywords: []string{"lsv2_"},
		re: rx(`\blsv2_(?:pt|sk)_(?P<s>[a-f0-9]{32}_[a-f0-9]{10})\b`)},
	{id: "ai-provider-key-assignment", kind: "AI provider", keywords: []string{"cohere", "mistral", "together", "voyage", "deepgram", "elevenlabs", "assemblyai", "pinecone", "anyscale"},
		re:    rx(`(?i)(?P<n>(?:cohere|co|mistral|together|voyage|deepgram|elevenlabs|assemblyai|pinecone|anyscale)[A-Za-z0-9_]*(?:key|token))(?:\\?["'])?\s*[:=]\s*(?:\\?["'])?(?P<s>[A-Za-z0-9_\-]{20,})`),
		valid: validRandom},

	// ---- payments --------------------------------------------------------------------------
	{id: "stripe-secret-key", kind: "Stripe", keywords: []string{"sk_live_", "sk_test_", "rk_live_", "rk_test_"},
		re: rx(`\b[rs]k_(?:live|test)_(?P<s>[A-Za-z0-9]{10,})\b`)},
	{id: "stripe-webhook-secret", kind: "Stripe", keywords: []string{"whsec_"},
		re: rx(`\bwhsec_(?P<s>[A-Za-z0-9+/=]{24,})`)},
	{id: "square-token", kind: "Square", keywords: []string{"sq0atp-", "sq0csp-", "EAAA"},
		re: rx(`\b(?:sq0atp-|sq0csp-|EAAA)(?P<s>[A-Za-z0-9_\-]{22,60})`)},
	{id: "braintree-token", kind: "Braintree", keywords: []string{"access_token$production$", "access_token$sandbox$"},
		re: rx(`access_token\$(?:production|sandbox)\$(?P<s>[a-z0-9]{16}\$[a-f0-9]{32})`)},
	{id: "razorpay-key", kind: "Razorpay", keywords: []string{"rzp_"},
		re: rx(`\brzp_(?:live|test)_(?P<s>[A-Za-z0-9]{14,})\b`)},
	{id: "flutterwave-key", kind: "Flutterwave", keywords: []string{"FLWSECK"},
		re: rx(`\bFLWSECK(?:_TEST)?-(?P<s>[a-hA-H0-9]{32}-X)`)},
	{id: "shippo-token", kind: "Shippo", keywords: []string{"shippo_"},
		re: rx(`\bshippo_(?:live|test)_(?P<s>[a-f0-9]{40})\b`)},
	{id: "easypost-key", kind: "EasyPost", keywords: []string{"EZAK", "EZTK"},
		re: rx(`\bEZ[AT]K(?P<s>[A-Za-z0-9]{54})\b`)},
	{id: "paypal-client-secret", kind: "PayPal", keywords: []string{"paypal"},
		re: rx(`(?i)(?P<n>paypal[A-Za-z0-9_]*secret)(?:\\?["'])?\s*[:=]\s*(?:\\?["'])?(?P<s>[A-Za-z0-9_\-]{40,90})`)},

	// ---- tokens with a generic shape ---------------------------------------------------
	{id: "jwt", kind: "JWT", keywords: []string{"eyJ"},
		re: rx(`\beyJ(?P<s>[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]*)`)},
	{id: "url-credentials", generic: true, kind: "URL password", keywords: []string{"://"},
		// scheme://user:password@host — keeps the user name, masks the password.
		names: &nameRule{scheme: true},
		re:    rx(`^[^\s:/?#@"'<>]*:(?P<s>[^\s/?#@"'<>]+)@`),
		valid: notPlaceholder},
	{id: "url-token-param", generic: true, kind: "URL parameter", keywords: []string{"token", "key", "secret", "password", "signature", "auth"},
		// ?access_token=…&, &api_key=…
		names: &nameRule{after: "?&"},
		re:    rx(`^=(?P<s>[^&#\s"'<>]+)`),
		valid: validAssignment},
	{id: "authorization-header", generic: true, kind: "Authorization", keywords: []string{"authorization"},
		re:    rx(`(?i)\b(?:proxy-)?authorization(?:\\?["'])?\s*[:=]\s*(?:\\?["'])?(?:(?:bearer|basic|token|digest|bot|apikey|api-key|sso-key|negotiate|ntlm|hmac|gitlab-token|aws4-hmac-sha256|splunk|otp)\s+)?(?P<s>[^\s"',;\\` + "`" + `][^\n"'\\` + "`" + `]*)`),
		valid: notPlaceholder},
	{id: "bearer-token", generic: true, kind: "Bearer", keywords: []string{"bearer"},
		re:    rx(`(?i)\bbearer\s+(?P<s>[A-Za-z0-9._~+/=][A-Za-z0-9._~+/=\-]{7,})`),
		valid: tokenish},
	{id: "basic-auth-header", generic: true, kind: "Basic", keywords: []string{"basic"},
		re: rx(`(?i)\bbasic\s+(?P<s>[A-Za-z0-9+/]{12,}={0,2})`)},
	{id: "curl-user", generic: true, kind: "curl -u", keywords: []string{" -u", " --user", " -a", " --auth"}, back: 1024, fwd: 512,
		// curl -u user:pass, --user user:pass, httpie -a user:pass: keeps the user.
		re:    rx(`\b(?:curl|wget|https?|xh|httpie)\b[^\n|;&]*?\s(?:-u|--user|-a|--auth)(?:=|\s*)(?:\\?["'])?[^\s:"']+:(?P<s>[^\s"']+)`),
		valid: notPlaceholder},
	{id: "netrc-password", generic: true, kind: ".netrc password", keywords: []string{"machine", "login"}, fwd: 1024,
		// machine HOST login USER password PASS (.netrc, .authinfo), on one line or several,
		// also with literal \n between the tokens (printf '…\npassword PASS\n' > ~/.netrc)
		// and inside JSON strings (\\n, \").
		re: rx(`(?i)(?:\bmachine` + netrcSep + netrcTok + `|\bdefault` + netrcSep + `login` + netrcSep + netrcTok + `|\blogin` + netrcSep + netrcTok + `)` +
			`(?:` + netrcSep + `(?:login|account|port|protocol|machine)` + netrcSep + netrcTok + `){0,6}?` +
			netrcSep + `(?:password|passwd)` + netrcSep + `(?P<s>\\?"(?:[^"\\]|\\[^"])*\\?"|[^\s\\'"]+)`),
		valid: notPlaceholder},
	{id: "netrc-account", generic: true, kind: ".netrc account", keywords: []string{"machine", "login"}, fwd: 1024,
		// .netrc's account is an additional password.
		re: rx(`(?i)(?:\bmachine` + netrcSep + netrcTok + `|\bdefault|\blogin` + netrcSep + netrcTok + `)` +
			`(?:` + netrcSep + `(?:login|password|passwd|port|protocol|machine)` + netrcSep + netrcTok + `){0,6}?` +
			netrcSep + `account` + netrcSep + `(?P<s>\\?"(?:[^"\\]|\\[^"])*\\?"|[^\s\\'"]+)`),
		valid: notPlaceholder},
	{id: "mysql-password-flag", generic: true, kind: "-p password", keywords: []string{"mysql", "mariadb"},
		re:    rx(`\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlshow|mysqlsh|mariadb|mariadb-dump)\b[^\n|;&]*?\s-p(?P<s>[^\s-][^\s]*)`),
		valid: notPlaceholder},
	{id: "password-short-flag", generic: true, kind: "-p password", keywords: []string{"sshpass", "redis-cli", "login", "7z", "zip", "unrar", "mongo", "rabbitmqadmin", "sqlcmd", "bcp", "ldap", "vsql"},
		// sshpass -p, redis-cli -a, docker/podman/helm login -p, 7z -p…, zip -P.
		re:    rx(`\b(?:(?:sshpass)\s+-p|redis-cli\b[^\n|;&]*?\s-a|(?:docker|podman|helm|buildah|skopeo|nerdctl|oras)\s+(?:registry\s+)?login\b[^\n|;&]*?\s-p|(?:az|oc|cf|argocd)\s+login\b[^\n|;&]*?\s-p|(?:mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport|rabbitmqadmin)\b[^\n|;&]*?\s-p|(?:sqlcmd|bcp|unzip)\b[^\n|;&]*?\s-P|(?:ldapsearch|ldapadd|ldapmodify|ldapdelete|ldapwhoami|ldappasswd|ldapcompare|ldapmodrdn|vsql)\b[^\n|;&]*?\s-w|(?:7z|7za|unrar)\s+[ax]\b[^\n|;&]*?\s-p|zip\b[^\n|;&]*?\s-P)\s*(?P<s>[^\s-][^\s]*)`),
		valid: notPlaceholder},
	{id: "openssl-pass", generic: true, kind: "openssl pass:", keywords: []string{"pass:"},
		re:    rx(`(?i)-pass(?:in|out|word)?\s+(?:\\?["'])?pass:(?P<s>[^\s"']+)`),
		valid: notPlaceholder},
	{id: "password-flag", generic: true, kind: "--password", keywords: []string{"pass", "pwd", "secret", "token", "key", "auth", "cred", "cookie"},
		// --password value, --token=value, -password value (long and single-dash long flags).
		names: &nameRule{flag: true, after: " \t\n\"'"},
		re:    rx(`^(?:=|[ \t]+)(?:\\?"(?P<s>(?:[^"\\\n]|\\[^"\n])+)\\?"|'(?P<s2>[^'\n]+)'|(?P<s3>[^\s"'\-\\][^\s"'\\]*))`),
		valid: validAssignment},
	{id: "secret-assignment", generic: true, kind: "assignment", keywords: []string{"pass", "pwd", "secret", "token", "key", "auth", "cred", "cookie", "sig", "salt", "jwt", "bearer", "hmac", "pin", "otp", "session", "nonce", "pw"},
		// NAME=value, name: value, "name": "value", export X_KEY=…, $env:X_TOKEN = …
		names: &nameRule{},
		re:    rx(`^(?:\\?["'])?[ \t]*(?::=|=>|:|=)[ \t]*(?:\\?"(?P<s>(?:[^"\\\n]|\\[^"\n])+)\\?"|'(?P<s2>[^'\n]+)'|(?P<s3>[^\s"'&;,|)}\]<>\\][^\s"'&;,|)}\]<>\\]*))`),
		valid: validAssignment},
})
