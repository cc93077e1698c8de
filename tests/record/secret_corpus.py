"""A corpus of real credential shapes: each vendor's documented format, filled with seeded random
characters (never a live key), as it turns up in a run: bare, or after the name it is kept under.

``SHAPES`` is a list of (name, text, secret): ``text`` is planted in a run, ``secret`` is the part
of it that must never be printed (the random body, past any public prefix).
"""

from __future__ import annotations

import random
import string

_rng = random.Random(28)
_ALPHABETS = {
    "A": string.ascii_letters + string.digits, "a": string.ascii_lowercase + string.digits,
    "U": string.ascii_uppercase + string.digits, "L": string.ascii_letters, "h": "0123456789abcdef",
    "H": "0123456789ABCDEF", "d": string.digits, "w": string.ascii_letters + string.digits + "_-",
    "b": string.ascii_letters + string.digits + "+/", "c": "qpzry9x8gf2tvdw0s3jn54khce6mua7l".upper(),
    "B": string.ascii_uppercase + "234567",
}


def fill(template: str, rng: random.Random = _rng) -> tuple[str, str]:
    """``template`` with each ``{A:20}`` replaced by 20 random characters of alphabet A; the
    secret is the longest filled part."""
    out, parts, i = [], [], 0
    while i < len(template):
        if template[i] == "{":
            end = template.index("}", i)
            kind, n = template[i + 1:end].split(":")
            part = "".join(rng.choice(_ALPHABETS[kind]) for _ in range(int(n)))
            if kind in "Aab" and len(part) >= 8:   # a realistic key mixes digits in
                part = part[:-2] + rng.choice(string.digits) + part[-1]
            out.append(part)
            parts.append(part)
            i = end + 1
        else:
            out.append(template[i])
            i += 1
    return "".join(out), max(parts, key=len)


#: (name, template): placeholders ``{alphabet:length}``.
TEMPLATES: list[tuple[str, str]] = [
    ("AWS access key id", "AKIA{B:16}"),
    ("AWS temporary key id", "ASIA{B:16}"),
    ("AWS secret access key, named", "aws_secret_access_key = {b:40}"),
    ("AWS session token, named", "AWS_SESSION_TOKEN={b:300}"),
    ("GitHub classic PAT", "ghp_{A:36}"),
    ("GitHub OAuth token", "gho_{A:36}"),
    ("GitHub user-to-server token", "ghu_{A:36}"),
    ("GitHub server-to-server token", "ghs_{A:36}"),
    ("GitHub refresh token", "ghr_{A:36}"),
    ("GitHub fine-grained PAT", "github_pat_{A:22}_{A:59}"),
    ("GitLab PAT", "glpat-{w:20}"),
    ("GitLab PAT ending in -", "glpat-{A:19}-"),
    ("GitLab deploy token", "gldt-{w:20}"),
    ("GitLab runner token", "glrt-{w:20}"),
    ("GitLab pipeline trigger token", "glptt-{h:40}"),
    ("GitLab feed token", "glft-{w:20}"),
    ("GitLab OAuth app secret", "gloas-{h:64}"),
    ("GitLab SCIM token", "glsoat-{w:20}"),
    ("GitLab CI job token", "glcbt-{A:2}_{w:20}"),
    ("Slack bot token", "xoxb-{d:11}-{d:12}-{A:24}"),
    ("Slack user token", "xoxp-{d:11}-{d:11}-{d:12}-{h:32}"),
    ("Slack app-level token", "xapp-1-A{U:10}-{d:13}-{h:64}"),
    ("Slack webhook", "https://hooks.slack.com/services/T{U:8}/B{U:10}/{A:24}"),
    ("Slack configuration token", "xoxe.xoxp-1-{A:163}"),
    ("Stripe live secret key", "sk_live_{A:24}"),
    ("Stripe restricted key", "rk_live_{A:24}"),
    ("Stripe test key", "sk_test_{A:24}"),
    ("Stripe webhook secret", "whsec_{A:32}"),
    ("Twilio API key", "SK{h:32}"),
    ("Twilio auth token, named", "TWILIO_AUTH_TOKEN={h:32}"),
    ("SendGrid API key", "SG.{w:22}.{w:43}"),
    ("npm access token", "npm_{A:36}"),
    ("PyPI upload token", "pypi-AgEIcHlwaS5vcmc{w:70}"),
    ("Hugging Face token", "hf_{L:34}"),
    ("Hugging Face org token", "api_org_{L:34}"),
    ("OpenAI legacy key", "sk-{A:48}"),
    ("OpenAI project key", "sk-proj-{w:74}T3BlbkFJ{w:74}"),
    ("Anthropic API key", "sk-ant-api03-{w:93}AA"),
    ("Anthropic admin key", "sk-ant-admin01-{w:93}AA"),
    ("Google API key", "AIza{w:35}"),
    ("Google OAuth client secret", "GOCSPX-{w:28}"),
    ("Vault service token", "hvs.{w:95}"),
    ("Vault batch token", "hvb.{w:138}"),
    ("Vault legacy token", "s.{A:24}"),
    ("Telegram bot token", "{d:10}:AA{w:33}"),
    ("Azure storage connection string",
     "DefaultEndpointsProtocol=https;AccountName=acct{a:6};AccountKey={b:86}==;EndpointSuffix=core.windows.net"),
    ("Azure AD client secret", "x{A:2}8Q~{w:34}"),
    ("Azure SAS token", "https://acct.blob.core.windows.net/c?sv=2022-11-02&ss=b&sp=r&se=2030-01-01&sig={b:43}%3D"),
    ("Databricks token", "dapi{h:32}"),
    ("DigitalOcean PAT", "dop_v1_{h:64}"),
    ("DigitalOcean OAuth token", "doo_v1_{h:64}"),
    ("Doppler token", "dp.pt.{A:43}"),
    ("Dynatrace token", "dt0c01.{U:24}.{A:64}"),
    ("Shopify access token", "shpat_{h:32}"),
    ("Shopify shared secret", "shpss_{h:32}"),
    ("Shopify custom app token", "shpca_{h:32}"),
    ("Square access token", "EAAA{w:60}"),
    ("Square OAuth secret", "sq0csp-{w:43}"),
    ("Mailchimp API key, named", "MAILCHIMP_API_KEY={h:32}-us12"),
    ("Mailgun key, named", "MAILGUN_API_KEY=key-{h:32}"),
    ("Postman API key", "PMAK-{h:24}-{h:34}"),
    ("Pulumi token", "pul-{h:40}"),
    ("RubyGems key", "rubygems_{h:48}"),
    ("Sentry user token", "sntryu_{h:64}"),
    ("Grafana cloud token", "glc_{A:32}"),
    ("Grafana service account token", "glsa_{A:32}_{h:8}"),
    ("Linear API key", "lin_api_{A:40}"),
    ("Notion token", "ntn_{d:11}{A:35}"),
    ("New Relic user key", "NRAK-{U:27}"),
    ("New Relic insert key", "NRII-{w:32}"),
    ("PlanetScale token", "pscale_tkn_{w:43}"),
    ("PlanetScale password", "pscale_pw_{w:43}"),
    ("Prefect key", "pnu_{A:36}"),
    ("ReadMe key", "rdme_{a:70}"),
    ("Scalingo token", "tk-us-{w:48}"),
    ("Brevo (Sendinblue) key", "xkeysib-{h:64}-{A:16}"),
    ("Shippo token", "shippo_live_{h:40}"),
    ("Sourcegraph token", "sgp_{h:16}_{h:40}"),
    ("age secret key", "AGE-SECRET-KEY-1{c:58}"),
    ("1Password service account token", "ops_eyJ{b:250}"),
    ("Alibaba key id", "LTAI{A:20}"),
    ("Artifactory key", "AKCp{A:69}"),
    ("Atlassian API token", "ATATT3{w:186}"),
    ("Clojars token", "CLOJARS_{a:60}"),
    ("Cloudflare origin CA key", "v1.0-{h:24}-{h:146}"),
    ("Duffel token", "duffel_test_{w:43}"),
    ("EasyPost key", "EZAK{A:54}"),
    ("Flutterwave secret key", "FLWSECK_TEST-{h:32}-X"),
    ("Frame.io token", "fio-u-{w:64}"),
    ("Fly.io token", "fo1_{w:43}"),
    ("Heroku key v2", "HRKU-AA{w:58}"),
    ("Infracost key", "ico-{A:32}"),
    ("42 intra secret", "s-s4t2ud-{h:64}"),
    ("OpenShift token", "sha256~{w:43}"),
    ("Perplexity key", "pplx-{A:48}"),
    ("Harness PAT", "pat.{A:22}.{h:24}.{A:20}"),
    ("Yandex OAuth token", "y0_{w:55}"),
    ("Docker Hub PAT", "dckr_pat_{w:27}"),
    ("Groq key", "gsk_{A:52}"),
    ("Replicate token", "r8_{A:37}"),
    ("Supabase token", "sbp_{h:40}"),
    ("Tailscale key", "tskey-auth-{A:17}-{A:33}"),
    ("LangSmith key", "lsv2_pt_{h:32}_{h:10}"),
    ("Pinecone key", "pcsk_{A:6}_{A:60}"),
    ("Discord webhook", "https://discord.com/api/webhooks/{d:18}/{w:68}"),
    ("JWT", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ7{A:20}In0.{w:43}"),
    ("PEM private key",
     "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg{b:64}\n{b:64}\n-----END PRIVATE KEY-----"),
    ("OpenSSH private key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA{b:70}\n"
                            "-----END OPENSSH PRIVATE KEY-----"),
    ("URL password", "postgresql://app:{A:16}@db.internal:5432/prod"),
    ("URL password, redis", "redis://:{A:20}@cache:6379/0"),
    ("Bearer token", "Authorization: Bearer {w:40}"),
    ("Basic auth header", "Authorization: Basic {b:32}=="),
    ("password assignment", "password={A:14}"),
    ("client secret, JSON", '"client_secret": "{A:32}"'),
    ("Datadog key, named", "DD_API_KEY={h:32}"),
    ("Okta token, named", "OKTA_API_TOKEN=00{w:40}"),
    ("Snyk token, named", "SNYK_TOKEN={h:8}-{h:4}-{h:4}-{h:4}-{h:12}"),
]

SHAPES: list[tuple[str, str, str]] = [(name, *fill(template)) for name, template in TEMPLATES]
