//! Secret detection and redaction for memory writes.
//!
//! Review memories are short texts about code, written by people and assistants, and they
//! sometimes quote a credential by accident ("the staging DSN is postgres://app:hunter22@…").
//! Secrets are never stored: [`redact`] replaces each one with `[REDACTED:<kind>]` and reports
//! which kinds it found, and the write goes on with the redacted text.
//!
//! For `key = value` assignments, `Authorization` headers, URL passwords, command-line flags
//! and stated passwords only the secret value is replaced, so the sentence keeps its meaning
//! (`postgres://app:[REDACTED:url-password]@db.internal/prod`).
//!
//! Detection runs in five tiers, earlier tiers winning where matches overlap:
//!
//! 1. PEM private key blocks and well-known token formats (AWS access key ids, GitHub,
//!    GitLab, Slack, JWT, Stripe, Google, OpenAI, Anthropic, npm, PyPI, Hugging Face,
//!    SendGrid, Twilio, Discord, Telegram and the prefixed tokens of [`PROVIDER_TOKENS`]),
//!    recognised by their fixed prefixes and shapes, multi-segment tokens whole;
//! 2. context: passwords in URLs, connection-string passwords and account keys, AWS secret
//!    keys next to "aws … secret", `Authorization` headers (`Bearer`, `Basic`, `Token`),
//!    `.env`-style lines (`DB_PASSWORD=…`, `export API_TOKEN="…"`, `SMTP_PASS: …`) whose key
//!    names a secret, whatever the value, 32 or more hex digits after a secret-named key, and
//!    other assignments to secret-looking names (`password =`, `api_key:`,
//!    `"client_secret": "…"`), where the value must itself look like a secret;
//! 3. command lines: the password flags and arguments of common clients
//!    ([`command_line`]: `mysql -pSECRET`, `sshpass -p`, `curl -u user:SECRET`,
//!    `--password SECRET`, `htpasswd -b file user SECRET`, …);
//! 4. prose that names a password, passphrase, secret, token or key and then states its value
//!    ([`prose`]: "the password is hunter2", "use token T0k3n!");
//! 5. generic high-entropy tokens, a dot-joined one (`<id>.<time>.<hmac>`) whole.
//!
//! False positives matter as much as misses, because these texts are about code: identifiers,
//! paths, commit ids, UUIDs, versions, URLs, e-mail addresses and plain English about tokens
//! and passwords must survive untouched. The guards are documented on each detector. The
//! labelled corpus `tests/fixtures/secrets/corpus.tsv` holds both sides; the figures its test
//! measures are in the README's security model.
//!
//! Error messages quote a value from the user only through [`quoted`] and describe a JSON
//! error only through [`json_error`], so no error repeats a secret.

mod command_line;
mod echo;
mod prose;

pub use echo::{json_error, quoted};

use std::fmt;
use std::ops::Range;
use std::sync::LazyLock;

use regex::{Captures, Regex};

/// What kind of secret was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SecretKind {
    /// AWS access key id: `AKIA`/`ASIA`/`ABIA`/`ACCA` + 16 upper-case letters or digits.
    AwsAccessKey,
    /// AWS secret access key: 40 base64 characters after "aws … secret".
    AwsSecretKey,
    /// GitHub token: `ghp_`/`gho_`/`ghu_`/`ghs_`/`ghr_` + 36 or more, or `github_pat_…`.
    GithubToken,
    /// GitLab token: `glpat-`, `gldt-`, `glrt-`, `glptt-`, `glsoat-`, `glft-`, `glcbt-`.
    GitlabToken,
    /// Slack token: `xoxb-`, `xoxp-`, `xoxa-`, `xoxe-`, `xoxo-`, `xoxs-`, `xoxr-`, `xapp-`.
    SlackToken,
    /// Slack incoming-webhook URL path (`hooks.slack.com/services/…`).
    SlackWebhook,
    /// JSON Web Token: `eyJ….eyJ….<signature>`.
    Jwt,
    /// PEM private key block (`-----BEGIN … PRIVATE KEY-----` through its END line).
    PrivateKey,
    /// Password in a URL (`scheme://user:password@host`).
    UrlPassword,
    /// Value assigned to a secret-looking name (`password=…`, `api_key: "…"`, `DB_PASSWORD=…`,
    /// a connection string's `Password=…;`).
    AssignedSecret,
    /// Stripe secret or restricted key (`sk_live_`, `rk_live_`, `sk_test_`, `whsec_`).
    StripeKey,
    /// Google API key: `AIza` + 35.
    GoogleApiKey,
    /// OpenAI key: `sk-…`, `sk-proj-…`, `sk-svcacct-…`, `sk-admin-…`.
    OpenaiKey,
    /// Anthropic key: `sk-ant-…`.
    AnthropicKey,
    /// A random-looking token with no known format.
    HighEntropy,
    /// Credential of an `Authorization: Bearer …` / `Authorization: Token …` header.
    BearerToken,
    /// Credential of an `Authorization: Basic …` header (base64 of `user:password`).
    BasicAuth,
    /// npm access token: `npm_` + 36.
    NpmToken,
    /// PyPI upload token: `pypi-AgEIcHlwaS5vcmc…`.
    PypiToken,
    /// Hugging Face token: `hf_` + 34 letters.
    HuggingfaceToken,
    /// SendGrid API key: `SG.<22>.<43>`.
    SendgridKey,
    /// Twilio API key or account SID: `SK`/`AC` + 32 lower-case hex digits.
    TwilioKey,
    /// Discord bot token, all three segments: `<base64 of the bot's id>.<6>.<27 or more>`.
    DiscordToken,
    /// Telegram bot token: `<bot id>:AA<33>`.
    TelegramToken,
    /// A token of another provider recognised by its fixed prefix and shape
    /// (the `PROVIDER_TOKENS` table: DigitalOcean, Shopify, Databricks, Vault, Grafana, …).
    ProviderToken,
    /// A password or token given to a program on its command line (`mysql -pSECRET`,
    /// `sshpass -p SECRET`, `curl -u user:SECRET`, `--password SECRET`).
    CommandPassword,
    /// A password, passphrase, secret, token or key stated in prose ("the password is
    /// hunter2", "use token T0k3n!").
    StatedSecret,
}

impl SecretKind {
    /// The kebab-case name, as used inside `[REDACTED:…]` (and in JSON).
    pub fn as_str(self) -> &'static str {
        match self {
            SecretKind::AwsAccessKey => "aws-access-key",
            SecretKind::AwsSecretKey => "aws-secret-key",
            SecretKind::GithubToken => "github-token",
            SecretKind::GitlabToken => "gitlab-token",
            SecretKind::SlackToken => "slack-token",
            SecretKind::SlackWebhook => "slack-webhook",
            SecretKind::Jwt => "jwt",
            SecretKind::PrivateKey => "private-key",
            SecretKind::UrlPassword => "url-password",
            SecretKind::AssignedSecret => "assigned-secret",
            SecretKind::StripeKey => "stripe-key",
            SecretKind::GoogleApiKey => "google-api-key",
            SecretKind::OpenaiKey => "openai-key",
            SecretKind::AnthropicKey => "anthropic-key",
            SecretKind::HighEntropy => "high-entropy",
            SecretKind::BearerToken => "bearer-token",
            SecretKind::BasicAuth => "basic-auth",
            SecretKind::NpmToken => "npm-token",
            SecretKind::PypiToken => "pypi-token",
            SecretKind::HuggingfaceToken => "huggingface-token",
            SecretKind::SendgridKey => "sendgrid-key",
            SecretKind::TwilioKey => "twilio-key",
            SecretKind::DiscordToken => "discord-token",
            SecretKind::TelegramToken => "telegram-token",
            SecretKind::ProviderToken => "provider-token",
            SecretKind::CommandPassword => "command-password",
            SecretKind::StatedSecret => "stated-secret",
        }
    }
}

impl fmt::Display for SecretKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The text with every secret replaced, and the kinds found (sorted, deduplicated).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redacted {
    pub text: String,
    pub kinds: Vec<SecretKind>,
}

/// Replaces every secret in `text` with `[REDACTED:<kind>]`.
///
/// Idempotent: redacting the result again changes nothing and finds no kinds (existing
/// `[REDACTED:…]` markers are never matched).
pub fn redact(text: &str) -> Redacted {
    let mut kinds = Vec::new();
    let mut current: Option<String> = None;
    // Replacing a secret can expose a remainder that a detector skipped because it
    // overlapped the secret (e.g. a random tail glued to an AWS key id with `/`): repeat until
    // nothing more is found, which makes the result a fixed point. One pass is the norm, and
    // the loop ends: every pass turns some text outside markers into a marker.
    loop {
        let source = current.as_deref().unwrap_or(text);
        let spans = find(source);
        if spans.is_empty() {
            break;
        }
        kinds.extend(spans.iter().map(|s| s.kind));
        current = Some(replace(source, &spans));
    }
    kinds.sort_unstable();
    kinds.dedup();
    Redacted {
        text: current.unwrap_or_else(|| text.to_string()),
        kinds,
    }
}

/// True if `text` holds anything [`redact`] would replace.
pub fn contains_secret(text: &str) -> bool {
    !find(text).is_empty()
}

/// One secret: where it is in the text and what it is.
#[derive(Debug, Clone, Copy)]
struct Span {
    start: usize,
    end: usize,
    kind: SecretKind,
}

fn replace(text: &str, spans: &[Span]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for span in spans {
        out.push_str(&text[at..span.start]);
        out.push_str("[REDACTED:");
        out.push_str(span.kind.as_str());
        out.push(']');
        at = span.end;
    }
    out.push_str(&text[at..]);
    out
}

/// Every secret in `text`, sorted by position, none overlapping.
fn find(text: &str) -> Vec<Span> {
    // Existing markers stay as they are (so redaction is idempotent); a detection around one
    // (a key block whose BEGIN line comes before an earlier redaction) takes the rest. Other
    // detections claim their ranges in priority order.
    let markers: Vec<Range<usize>> = MARKER.find_iter(text).map(|m| m.range()).collect();
    let mut taken: Vec<Range<usize>> = Vec::new();
    let mut spans = Vec::new();
    let mut claim = |range: Range<usize>, kind: SecretKind| {
        if range.is_empty() || overlaps(&taken, &range) {
            return;
        }
        for piece in outside(&markers, range) {
            spans.push(Span {
                start: piece.start,
                end: piece.end,
                kind,
            });
            taken.push(piece);
        }
    };
    for detector in DETECTORS.iter() {
        for caps in detector.re.captures_iter(text) {
            if let Some(range) = (detector.pick)(text, &caps) {
                claim(range, detector.kind);
            }
        }
    }
    for range in command_line::passwords(text) {
        claim(range, SecretKind::CommandPassword);
    }
    for range in prose::stated_secrets(text) {
        claim(range, SecretKind::StatedSecret);
    }
    for range in high_entropy_tokens(text) {
        claim(range, SecretKind::HighEntropy);
    }
    spans.sort_unstable_by_key(|s| s.start);
    spans
}

fn overlaps(ranges: &[Range<usize>], range: &Range<usize>) -> bool {
    ranges
        .iter()
        .any(|r| r.start < range.end && range.start < r.end)
}

/// The non-empty pieces of `range` outside `markers` (sorted by position).
fn outside(markers: &[Range<usize>], range: Range<usize>) -> Vec<Range<usize>> {
    let mut pieces = Vec::new();
    let mut at = range.start;
    for m in markers
        .iter()
        .filter(|m| m.start < range.end && range.start < m.end)
    {
        if m.start > at {
            pieces.push(at..m.start);
        }
        at = at.max(m.end);
    }
    if at < range.end {
        pieces.push(at..range.end);
    }
    pieces
}

// ---------------------------------------------------------------------------------------------
// Detectors

/// Picks the range to redact from a match, or rejects it.
type Pick = fn(&str, &Captures<'_>) -> Option<Range<usize>>;

struct Detector {
    kind: SecretKind,
    re: Regex,
    pick: Pick,
}

/// An existing redaction marker.
static MARKER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\[REDACTED:[a-z0-9-]+\]").expect("valid marker pattern"));

/// The detectors of tiers 1 and 2, in priority order.
static DETECTORS: LazyLock<Vec<Detector>> = LazyLock::new(|| {
    use SecretKind::*;
    let d = |kind, pattern: &str, pick: Pick| Detector {
        kind,
        re: Regex::new(pattern).unwrap_or_else(|e| panic!("bad secret pattern {pattern}: {e}")),
        pick,
    };
    vec![
        // The whole block, or to the end of the text when the END line is missing.
        d(
            PrivateKey,
            r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----(?s:.*?)(?:-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|\z)",
            whole,
        ),
        d(
            AwsAccessKey,
            r"(?-u:\b)((?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})(?-u:\b)",
            group1,
        ),
        d(
            GithubToken,
            r"(?-u:\b)(gh[pousr]_[A-Za-z0-9]{36,255})(?-u:\b)",
            group1,
        ),
        d(
            GithubToken,
            r"(?-u:\b)(github_pat_[A-Za-z0-9_]{22,255})",
            group1,
        ),
        d(
            GitlabToken,
            r"(?-u:\b)(gl(?:pat|dt|rt|ptt|soat|ft|cbt)-[A-Za-z0-9_-]{20,})",
            group1,
        ),
        // Only the path: `https://hooks.slack.com/services/[REDACTED:slack-webhook]`.
        d(
            SlackWebhook,
            r"(?i)hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9_/-]{8,})",
            group1,
        ),
        d(
            SlackToken,
            r"(?-u:\b)((?:xoxe\.)?xox[abeposr]-[A-Za-z0-9-]{10,})",
            group1_mixed,
        ),
        d(
            SlackToken,
            r"(?-u:\b)(xapp-[0-9]+-[A-Za-z0-9-]{10,})",
            group1,
        ),
        d(
            Jwt,
            r"(?-u:\b)(eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*)",
            group1,
        ),
        // Before OpenAI: `sk-ant-…` would otherwise read as an OpenAI key.
        d(AnthropicKey, r"(?-u:\b)(sk-ant-[A-Za-z0-9_-]{20,})", group1),
        d(
            OpenaiKey,
            r"(?-u:\b)(sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,})",
            group1,
        ),
        d(
            OpenaiKey,
            r"(?-u:\b)(sk-[A-Za-z0-9]{20,})(?-u:\b)",
            group1_mixed,
        ),
        d(
            StripeKey,
            r"(?-u:\b)((?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,})(?-u:\b)",
            group1,
        ),
        d(StripeKey, r"(?-u:\b)(whsec_[A-Za-z0-9+/]{24,})", group1),
        d(
            GoogleApiKey,
            r"(?-u:\b)(AIza[0-9A-Za-z_-]{35})(?:[^0-9A-Za-z_-]|\z)",
            group1,
        ),
        d(
            NpmToken,
            r"(?-u:\b)(npm_[A-Za-z0-9]{36})(?-u:\b)",
            group1_mixed,
        ),
        d(
            PypiToken,
            r"(?-u:\b)(pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,})",
            group1,
        ),
        d(
            HuggingfaceToken,
            r"(?-u:\b)(hf_[A-Za-z]{34})(?-u:\b)",
            group1_mixed_case,
        ),
        d(
            SendgridKey,
            r"(?-u:\b)(SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})(?:[^A-Za-z0-9_-]|\z)",
            group1,
        ),
        d(
            TwilioKey,
            r"(?-u:\b)((?:SK|AC)[0-9a-f]{32})(?-u:\b)",
            group1,
        ),
        d(
            DiscordToken,
            r"(?-u:\b)([MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6,7}\.[A-Za-z0-9_-]{27,40})(?:[^A-Za-z0-9_.-]|\z)",
            discord_token,
        ),
        d(
            TelegramToken,
            r"(?-u:\b)([0-9]{8,10}:AA[A-Za-z0-9_-]{33})(?:[^A-Za-z0-9_-]|\z)",
            group1,
        ),
        d(ProviderToken, &provider_tokens(), group1),
        // Tier 2: context.
        //
        // `scheme://user:` — the password and host are read by `url_password`; the user may
        // be empty (`redis://:pw@host`).
        d(
            UrlPassword,
            r"(?-u:\b)[A-Za-z][A-Za-z0-9+.-]*://[^\s:/?#@\[\]]*:",
            url_password,
        ),
        // `…;Password=…;`, `AccountKey=…` — the value is read by `connection_string_value`.
        d(
            AssignedSecret,
            r"(?i)(?-u:\b)(?:password|pwd|accountkey|sharedaccesskey|sharedaccesssignature)[ \t]*=[ \t]*",
            connection_string_value,
        ),
        d(
            AwsSecretKey,
            r"(?i)aws[\x20-\x7e]{0,40}?secret[\x20-\x7e]{0,40}?[^A-Za-z0-9/+]([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|\z)",
            aws_secret,
        ),
        d(
            BasicAuth,
            r"(?i)(?-u:\b)basic[ \t]+([A-Za-z0-9+/]{8,}={0,2})(?:[^A-Za-z0-9+/=]|\z)",
            basic_credentials,
        ),
        d(
            BearerToken,
            r"(?i)(?-u:\b)bearer[ \t]+([A-Za-z0-9._~+/-]+=*)",
            token_value,
        ),
        d(
            BearerToken,
            r#"(?i)(?-u:\b)authorization["']?[ \t]*[:=][ \t]*["']?(?:token[ \t]+)?([A-Za-z0-9._~+/-]+=*)"#,
            token_value,
        ),
        // `.env`-style: `DB_PASSWORD=…`, `export API_TOKEN="…"`, `SMTP_PASS: …`.
        d(
            AssignedSecret,
            r"(?-u:\b)([A-Z][A-Z0-9_]*)(=|:[ \t]+)",
            env_value,
        ),
        // dotenv, ini and properties lines in any case: `password=…`, `db.password=…`.
        d(
            AssignedSecret,
            r"(?m)^[ \t]*(?:[-*][ \t]+)?(?:export[ \t]+)?([A-Za-z][A-Za-z0-9_.-]*)=",
            line_value,
        ),
        // 32 or more hex digits after a secret-named key: `api_key 9f8e…`, `"token": "9f8e…"`.
        d(
            AssignedSecret,
            r#"(?-u:\b)([A-Za-z0-9_.-]+)["']?([ \t]*(?::=|=>|=|:)[ \t]*|[ \t]+)["']?([0-9a-fA-F]{32,})(?-u:\b)"#,
            hex_after_key,
        ),
        // `name <sep> value` where the name ends in a secret-ish word: password, passwd, pwd,
        // passphrase, secret, token, credentials, or `<qualifier>_key` (api_key, access_key,
        // secret_key, private_key, auth_key, signing_key, encryption_key, master_key,
        // client_key, app_key, service_key, account_key, license_key, webhook_key, apikey),
        // with any prefix (`DB_PASSWORD`, `X-Auth-Token`, `github.token`) and a trailing `s`.
        // Separators: `=`, `:=`, `=>`, `:`. Values: double, single or back-quoted, or a bare
        // run; group 1-3 are quoted, group 4 bare.
        d(
            AssignedSecret,
            r#"(?i)(?-u:\b)(?:[a-z0-9]+[_.-])*(?:[a-z0-9]*(?:password|passwd|passphrase|secret|token)|pwd|(?:api|access|secret|private|auth|signing|encryption|master|client|app|service|account|license|webhook)[_.-]?key|apikey|credentials?)s?["']?[ \t]*(?::=|=>|=|:)[ \t]*(?:"([^"\n]*)"|'([^'\n]*)'|`([^`\n]*)`|([^\s"'`,;()\[\]{}<>&|]+))"#,
            assigned_value,
        ),
    ]
});

/// Tokens of providers recognised by a fixed prefix and an exact shape, each one with the
/// provider's published format; the whole token is redacted, dots and all.
const PROVIDER_TOKENS: &[&str] = &[
    // DigitalOcean personal, OAuth and refresh tokens.
    r"do[por]_v1_[a-f0-9]{64}",
    // Shopify admin, custom-app, private-app tokens and shared secrets.
    r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
    // Mailgun (legacy) and Mailchimp API keys.
    r"key-[a-f0-9]{32}",
    r"[a-f0-9]{32}-us[0-9]{1,2}",
    // Databricks.
    r"dapi[a-f0-9]{32}(?:-[0-9])?",
    // Linear, Postman, Notion, Airtable, Figma, Supabase, Pulumi, Buildkite, RubyGems,
    // Docker Hub, PlanetScale.
    r"lin_api_[A-Za-z0-9]{40}",
    r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}",
    r"secret_[A-Za-z0-9]{43}",
    r"ntn_[A-Za-z0-9]{46}",
    r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}",
    r"figd_[A-Za-z0-9_-]{40}",
    r"sbp_[a-f0-9]{40}",
    r"pul-[a-f0-9]{40}",
    r"bkua_[a-f0-9]{40}",
    r"rubygems_[a-f0-9]{48}",
    r"dckr_pat_[A-Za-z0-9_-]{27,}",
    r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{32,64}",
    // HashiCorp Vault service, batch and recovery tokens; Terraform Cloud.
    r"hv[sbr]\.[A-Za-z0-9_-]{24,}",
    r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}",
    // Doppler.
    r"dp\.(?:st|sa|ct|pt|scim|audit)\.[A-Za-z0-9_.-]{40,}",
    // Grafana service-account and cloud tokens.
    r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}",
    r"glc_[A-Za-z0-9+/]{32,}={0,2}",
    // New Relic user keys, Sentry auth tokens, age secret keys, Fly.io, Atlassian.
    r"NRAK-[A-Z0-9]{27}",
    r"sntry[su]_[A-Za-z0-9+/=_.-]{40,}",
    r"AGE-SECRET-KEY-1[0-9A-Z]{58}",
    r"fo1_[A-Za-z0-9_-]{43}",
    r"ATATT3[A-Za-z0-9_=-]{100,}",
    // Square, Heroku, Mapbox secret tokens (`pk.` tokens are public).
    r"sq0(?:atp|csp)-[0-9A-Za-z_-]{22,43}",
    r"HRKU-[A-Za-z0-9_-]{30,}",
    r"sk\.eyJ[A-Za-z0-9_-]{50,}\.[A-Za-z0-9_-]{20,}",
    // Groq, xAI, Replicate, Perplexity, LangSmith.
    r"gsk_[A-Za-z0-9]{52}",
    r"xai-[A-Za-z0-9]{80}",
    r"r8_[A-Za-z0-9]{37}",
    r"pplx-[A-Za-z0-9]{48}",
    r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}",
    // Azure AD client secrets (`…8Q~…`).
    r"[A-Za-z0-9_~.-]{3}[0-9]Q~[A-Za-z0-9_~.-]{30,33}[A-Za-z0-9_~-]",
];

/// One pattern for every [`PROVIDER_TOKENS`] entry: the token in group 1, not running on into
/// more token characters.
fn provider_tokens() -> String {
    format!(
        r"(?-u:\b)({})(?:[^A-Za-z0-9_~.+/=-]|[.](?:[^A-Za-z0-9_-]|\z)|\z)",
        PROVIDER_TOKENS.join("|")
    )
}

/// A Discord bot token: its first segment is the bot's numeric id in base64, which no
/// dotted identifier is.
fn discord_token(_: &str, caps: &Captures<'_>) -> Option<Range<usize>> {
    let m = caps.get(1)?;
    let id = m.as_str().split('.').next()?;
    let decoded = decode_base64(&id.replace('-', "+").replace('_', "/"))?;
    (decoded.len() >= 17 && decoded.iter().all(u8::is_ascii_digit)).then(|| m.range())
}

fn whole(_: &str, caps: &Captures<'_>) -> Option<Range<usize>> {
    caps.get(0).map(|m| m.range())
}

fn group1(_: &str, caps: &Captures<'_>) -> Option<Range<usize>> {
    caps.get(1).map(|m| m.range())
}

/// Group 1, if it holds both letters and digits (real keys of these formats always do).
fn group1_mixed(_: &str, caps: &Captures<'_>) -> Option<Range<usize>> {
    let m = caps.get(1)?;
    has_letter_and_digit(m.as_str()).then(|| m.range())
}

/// Group 1, if it holds both upper- and lower-case letters.
fn group1_mixed_case(_: &str, caps: &Captures<'_>) -> Option<Range<usize>> {
    let m = caps.get(1)?;
    let s = m.as_str();
    (s.bytes().any(|b| b.is_ascii_uppercase()) && s.bytes().any(|b| b.is_ascii_lowercase()))
        .then(|| m.range())
}

/// The password after `scheme://user:`: everything up to the last `@` followed by a host, so
/// a password holding `@` or `/` goes whole (`postgres://app:p@ss/w0rd@db/prod`). Not a
/// password: a port (`host:5432/db`, even with an `@` further down the path), a candidate
/// holding `?` or `#` (the `@` is in the query: `?email=a@b.io`), or a template
/// (`${DB_PASSWORD}`, `<password>`, `***`).
fn url_password(text: &str, caps: &Captures<'_>) -> Option<Range<usize>> {
    let start = caps.get(0)?.end();
    let rest = &text[start..];
    let run = &rest[..rest
        .find(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '`'))
        .unwrap_or(rest.len())];
    let first = run.split('/').next().unwrap_or_default();
    if !first.is_empty() && first.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let at = run
        .match_indices('@')
        .map(|(i, _)| i)
        .rev()
        .find(|&i| i > 0 && !run[..i].contains(['?', '#']) && is_host(&run[i + 1..]))?;
    (!is_template(&run[..at])).then_some(start..start + at)
}

/// Whether a URL goes on with a host (`db`, `db.internal:5432`, `[::1]`) up to its path,
/// query or fragment; punctuation closing a sentence is not part of it.
fn is_host(after: &str) -> bool {
    let host = after.split(['/', '?', '#']).next().unwrap_or_default();
    let host = host.trim_end_matches(['.', ',', ';', ':', ')', '>', '!']);
    let name = match host.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    };
    let bracketed = name.len() > 2 && name.starts_with('[') && name.ends_with(']');
    !name.is_empty()
        && (bracketed
            || name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_')))
}

/// The value of a connection string's `Password=`, `Pwd=`, `AccountKey=`,
/// `SharedAccessKey=` or `SharedAccessSignature=` (ADO.NET, ODBC, Azure Storage), whatever
/// its length: up to the next `;`, or inside quotes or braces. A `;` must end the value or
/// come before the key, as it does in a connection string.
fn connection_string_value(text: &str, caps: &Captures<'_>) -> Option<Range<usize>> {
    let m = caps.get(0)?;
    let (value, end) = value_at(text, m.end(), &['"', '\'', '{'], |c| {
        matches!(c, ';' | '"' | '\'' | '\n' | '\r')
    });
    let before = text[..m.start()].trim_end_matches([' ', '\t']);
    let after = text[end..].trim_start_matches([' ', '\t']);
    let in_string = before.ends_with(';') || after.starts_with(';');
    (in_string && !value.is_empty() && !is_template(&text[value.clone()])).then_some(value)
}

/// `KEY=value`, `KEY: value`, `export KEY="value"` where `KEY` is an environment variable
/// naming a secret ([`names_a_secret`]): the value, whatever its length or alphabet, unless
/// it is a template or a file path (`DB_PASSWORD=/run/secrets/db`). After `:` a bare value
/// must end its line (a `#` comment may follow) and not be a placeholder word:
/// `API_TOKEN: see the vault` and `DB_PASSWORD: str` hold no value.
fn env_value(text: &str, caps: &Captures<'_>) -> Option<Range<usize>> {
    let key = caps.get(1)?.as_str();
    if !names_a_secret(key) {
        return None;
    }
    let colon = caps.get(2)?.as_str().starts_with(':');
    // In a URL query (`?API_KEY=…&page=2`) the value ends at the next parameter.
    let in_query = text[..caps.get(1)?.start()].ends_with(['?', '&']);
    let (value, end) = value_at(text, caps.get(0)?.end(), &['"', '\''], |c| {
        c.is_whitespace() || matches!(c, '"' | '\'' | '`') || (in_query && c == '&')
    });
    let v = &text[value.clone()];
    let quoted = end > value.end;
    if v.is_empty() || v.starts_with('=') || is_template(v) || is_file_path(v) {
        return None;
    }
    if colon && !quoted {
        let line_rest = text[end..].lines().next().unwrap_or_default().trim_start();
        if !(line_rest.is_empty() || line_rest.starts_with('#')) || is_placeholder(v) {
            return None;
        }
    }
    Some(value)
}

/// `name=value` starting a line (dotenv, ini, Java properties: `password=…`,
/// `spring.datasource.password=…`) where the name ends in a secret word: the value, whatever
/// its length, unless it reads as code — a placeholder, an environment variable's name, a
/// reference (`form.password`), a call or index, or a keyword argument on a line of its own
/// (`password=pw,`). Upper-case names are [`env_value`]'s.
fn line_value(text: &str, caps: &Captures<'_>) -> Option<Range<usize>> {
    let key = caps.get(1)?.as_str();
    let upper = !key.bytes().any(|b| b.is_ascii_lowercase());
    if upper || !names_a_secret(key) {
        return None;
    }
    let (value, end) = value_at(text, caps.get(0)?.end(), &['"', '\''], |c| {
        c.is_whitespace() || matches!(c, '"' | '\'' | '`')
    });
    let v = &text[value.clone()];
    let quoted = end > value.end;
    let code = !quoted
        && (v.starts_with(['.', '/', '~', '\\', ':', '=', '@'])
            || v.ends_with([',', ')', ';'])
            || v.contains(['(', '[', '{'])
            || v.contains("://")
            || is_code_path(v));
    let secret = !v.is_empty() && !code && !is_placeholder(v) && !is_env_var_name(v);
    secret.then_some(value)
}

/// 32 or more hex digits after a key that names a secret ([`holds_secret_word`]): a hex
/// secret cannot be told from a digest by its look, so the key decides. Separated by blanks
/// alone (`api_key 9f8e…`), the key must be a compound name: `token 9f8e…` is prose.
fn hex_after_key(_: &str, caps: &Captures<'_>) -> Option<Range<usize>> {
    let key = caps.get(1)?.as_str();
    let blank = caps.get(2)?.as_str().trim().is_empty();
    let words = words_of(key);
    let secret = holds_secret_word(&words) && !(blank && words.len() < 2);
    secret.then(|| caps.get(3).map(|m| m.range())).flatten()
}

/// The value starting at `at`: inside a pair of `quotes` (`{` pairs with `}`) closed on the
/// same line, else up to the first character `ends` accepts (trailing blanks left out).
/// Returns the value and where it ends, closing quote included.
fn value_at(
    text: &str,
    at: usize,
    quotes: &[char],
    ends: impl Fn(char) -> bool,
) -> (Range<usize>, usize) {
    let rest = &text[at..];
    if let Some(open) = rest.chars().next().filter(|c| quotes.contains(c)) {
        let close = if open == '{' { '}' } else { open };
        let inner = &rest[1..];
        let line = inner.find(['\n', '\r']).unwrap_or(inner.len());
        if let Some(len) = inner[..line].find(close) {
            return (at + 1..at + 1 + len, at + len + 2);
        }
        let len = inner.find(&ends).unwrap_or(inner.len());
        return (at + 1..at + 1 + len, at + 1 + len);
    }
    let len = rest.find(&ends).unwrap_or(rest.len());
    let value = rest[..len].trim_end();
    (at..at + value.len(), at + value.len())
}

/// Words of a key, lower-cased: split at `_`, `.`, `-` and lower-to-upper case changes
/// (`DB_PASSWORD` → db, password; `apiKey` → api, key; `APIKey` → apikey).
fn words_of(key: &str) -> Vec<String> {
    let mut words = Vec::new();
    for part in key.split(['_', '.', '-']).filter(|p| !p.is_empty()) {
        let mut word = String::new();
        let mut lower_before = false;
        for c in part.chars() {
            if c.is_ascii_uppercase() && lower_before {
                words.push(std::mem::take(&mut word));
            }
            lower_before = c.is_ascii_lowercase() || c.is_ascii_digit();
            word.push(c.to_ascii_lowercase());
        }
        words.push(word);
    }
    words
}

/// Words that name a secret when they end a key.
const SECRET_WORDS: &[&str] = &[
    "pass",
    "password",
    "passwd",
    "pwd",
    "passphrase",
    "secret",
    "token",
    "apikey",
];

/// Words before `key` that make it something other than a secret (`PUBLIC_KEY`, `sort_key`).
const PUBLIC_KEY_WORDS: &[&str] = &[
    "public",
    "publishable",
    "primary",
    "foreign",
    "sort",
    "partition",
];

/// Last words of a key that hold something about a secret rather than the secret
/// (`password_hash`, `token_count`, `api_key_header`).
const ABOUT_A_SECRET: &[&str] = &[
    "hash",
    "digest",
    "checksum",
    "sha",
    "sha1",
    "sha256",
    "sha512",
    "md5",
    "id",
    "name",
    "file",
    "path",
    "url",
    "header",
    "field",
    "type",
    "count",
    "len",
    "length",
    "size",
    "prefix",
    "hint",
    "fingerprint",
    "version",
];

/// Environment variables that hold a password without a secret word of their own.
const SECRET_VARIABLES: &[&str] = &["sshpass", "rediscli_auth"];

/// A key ending in a secret word (`DB_PASSWORD`, `SMTP_PASS`, `GITHUB_TOKEN`, `PWD`,
/// `dbPassword`, `PGPASSWORD`, where the word closes a longer one) or in `key` after a
/// qualifier (`API_KEY`, `stripe.key`), not a public one, or a client's password variable
/// (`SSHPASS`, `REDISCLI_AUTH`).
fn names_a_secret(key: &str) -> bool {
    if SECRET_VARIABLES.contains(&key.to_ascii_lowercase().as_str()) {
        return true;
    }
    let words = words_of(key);
    match words.as_slice() {
        [.., before, last] if last == "key" => !PUBLIC_KEY_WORDS.contains(&before.as_str()),
        [.., last] => {
            SECRET_WORDS.contains(&last.as_str())
                || ["password", "passwd", "passphrase"]
                    .iter()
                    .any(|word| last.ends_with(word))
        }
        [] => false,
    }
}

/// A key holding a secret word anywhere (`SECRET_KEY_BASE`, `api_key`, `auth_token_hex`),
/// unless its last word says it holds something about the secret.
fn holds_secret_word(words: &[String]) -> bool {
    let secret = words.iter().enumerate().any(|(i, w)| {
        SECRET_WORDS.contains(&w.as_str())
            || (w == "key" && i > 0 && !PUBLIC_KEY_WORDS.contains(&words[i - 1].as_str()))
    });
    secret
        && words
            .last()
            .is_some_and(|w| !ABOUT_A_SECRET.contains(&w.as_str()))
}

/// 40 base64 characters near "aws … secret": must mix letters and digits and not be a hex
/// digest (a 40-hex commit id mentioned next to "AWS secret rotation").
fn aws_secret(_: &str, caps: &Captures<'_>) -> Option<Range<usize>> {
    let m = caps.get(1)?;
    let s = m.as_str();
    (has_letter_and_digit(s) && !s.bytes().all(|b| b.is_ascii_hexdigit())).then(|| m.range())
}

/// `Basic <base64>`, if the base64 decodes to printable `user:password`
/// ("Basic authentication is disabled" does not).
fn basic_credentials(_: &str, caps: &Captures<'_>) -> Option<Range<usize>> {
    let m = caps.get(1)?;
    let decoded = decode_base64(m.as_str())?;
    let printable = decoded.iter().all(|b| (0x20..0x7f).contains(b));
    (printable && decoded.contains(&b':') && decoded.len() >= 3).then(|| m.range())
}

/// The credential of `Bearer …` / `Authorization: …`, if it looks like a secret
/// ("bearer tokens expire", "Authorization: Bearer" do not).
fn token_value(_: &str, caps: &Captures<'_>) -> Option<Range<usize>> {
    let m = caps.get(1)?;
    let v = m.as_str();
    (v.chars().count() >= 8
        && !is_placeholder(v)
        && has_letter(v)
        && has_digit_or_symbol(v)
        && !is_word_identifier(v))
    .then(|| m.range())
}

/// The value of a secret-looking assignment, if it looks like a secret.
///
/// Quoted values count unless empty, holding whitespace (prose: `token: "expired or
/// invalid"`), a placeholder (`"${API_KEY}"`, `"<your token>"`, `"[PAD]"`, `"***"`,
/// `"string"`), an environment variable's name (`"DB_PASSWORD"`) or a snake_case word
/// identifier without digits (`"refresh_token"`). Bare values must be at least 8 characters mixing letters
/// with digits or symbols, and are not code: no paths, URLs, comparisons (`token == x`), call,
/// index or generic expressions (`get_token2()`, `os.environ[…]`, `Hmac::<Sha256>::new`),
/// dotted or `::` paths (`settings.SECRET_KEY`, `Config::token_v2`), versions, e-mail
/// addresses or lower-case word identifiers (`oauth2_refresh`).
fn assigned_value(text: &str, caps: &Captures<'_>) -> Option<Range<usize>> {
    if let Some(m) = caps.get(1).or_else(|| caps.get(2)).or_else(|| caps.get(3)) {
        let v = m.as_str();
        let secret = !v.is_empty()
            && !v.chars().any(char::is_whitespace)
            && !is_placeholder(v)
            && !is_env_var_name(v)
            && !is_snake_words(v);
        return secret.then(|| m.range());
    }
    let m = caps.get(4)?;
    let v = m.as_str();
    let next = text[m.end()..].chars().next();
    let secret = v.chars().count() >= 8
        && !v.starts_with(['=', ':', '.', '/', '~', '\\', '$', '%', '@'])
        && !v.ends_with(':')
        && !v.contains("://")
        && !matches!(next, Some('(' | '[' | '<'))
        && has_letter(v)
        && has_digit_or_symbol(v)
        && !is_placeholder(v)
        && !is_code_path(v)
        && !is_version(v)
        && !is_email(v)
        && !is_word_identifier(v);
    secret.then(|| m.range())
}

// ---------------------------------------------------------------------------------------------
// Value heuristics

fn has_letter(s: &str) -> bool {
    s.chars().any(char::is_alphabetic)
}

fn has_letter_and_digit(s: &str) -> bool {
    let (mut letter, mut digit) = (false, false);
    for &b in s.as_bytes() {
        letter |= b.is_ascii_alphabetic();
        digit |= b.is_ascii_digit();
    }
    letter && digit
}

/// A digit, or a symbol other than the identifier punctuation `_`, `-`, `.`.
fn has_digit_or_symbol(s: &str) -> bool {
    s.chars()
        .any(|c| c.is_ascii_digit() || !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.')))
}

/// Stand-ins for a value rather than the value: templates ([`is_template`]), type names and
/// the like.
fn is_placeholder(v: &str) -> bool {
    const WORDS: &[&str] = &[
        "string",
        "str",
        "number",
        "int",
        "integer",
        "bool",
        "boolean",
        "null",
        "none",
        "nil",
        "undefined",
        "true",
        "false",
        "required",
        "optional",
        "redacted",
        "hidden",
        "masked",
        "secret",
        "password",
        "passwd",
        "pass",
        "pwd",
        "token",
        "example",
        "placeholder",
        "env",
    ];
    is_template(v) || WORDS.contains(&v.to_ascii_lowercase().as_str())
}

/// A template standing where a value goes: a reference (`${X}`, `$X`, `%(x)s`, `%X%`,
/// `{{ x }}`), `<…>` and `[…]` (also special tokens like `[PAD]` and existing
/// `[REDACTED:…]` markers), a mask (`***`, `xxxx`) or `your…` (`YOUR_API_KEY`).
fn is_template(v: &str) -> bool {
    v.starts_with(['$', '%', '<', '{', '['])
        || v.chars()
            .all(|c| matches!(c, '*' | 'x' | 'X' | '.' | '-' | '_' | '#' | '?' | '•'))
        || v.to_ascii_lowercase().starts_with("your")
}

/// A file the value is read from (`/run/secrets/db`, `~/.ssh/id_ed25519`, `./key.pem`), not
/// the value itself.
fn is_file_path(v: &str) -> bool {
    let path = v.starts_with("~/")
        || v.starts_with("./")
        || v.starts_with("../")
        || (v.starts_with('/') && v[1..].contains('/'));
    path && !v.contains(char::is_whitespace)
}

/// `refresh_token`, `my_jwt_token`: a snake_case word identifier without digits.
fn is_snake_words(v: &str) -> bool {
    v.contains('_') && !v.bytes().any(|b| b.is_ascii_digit()) && is_word_identifier(v)
}

/// `DB_PASSWORD`, `GITHUB_TOKEN`: the name of an environment variable, not its value.
fn is_env_var_name(v: &str) -> bool {
    v.contains('_')
        && v.starts_with(|c: char| c.is_ascii_uppercase())
        && v.bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

/// `settings.SECRET_KEY`, `self.token`, `crate::auth::Token`: a reference in code.
fn is_code_path(v: &str) -> bool {
    let parts: Vec<&str> = v.split("::").flat_map(|p| p.split('.')).collect();
    parts.len() >= 2
        && parts.iter().all(|p| {
            p.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        })
}

/// `1.2.3`, `v2.0.1-beta.1`: a version.
fn is_version(v: &str) -> bool {
    let core = v.strip_prefix(['v', 'V']).unwrap_or(v);
    let mut parts = core.split(['-', '+']).next().unwrap_or("").split('.');
    parts.clone().count() >= 2
        && parts.all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

fn is_email(v: &str) -> bool {
    let Some((user, host)) = v.split_once('@') else {
        return false;
    };
    !user.is_empty()
        && host.contains('.')
        && !host.starts_with('.')
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-')
}

/// A lower-case snake/kebab identifier made of words: `oauth2_refresh`, `sha256_hmac`,
/// `redis-cache-v2` (at least two alphabetic pieces of three or more letters).
fn is_word_identifier(v: &str) -> bool {
    if !v.contains(['_', '-'])
        || !v
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
    {
        return false;
    }
    v.split(|c: char| !c.is_ascii_lowercase())
        .filter(|w| w.len() >= 3)
        .count()
        >= 2
}

/// Standard base64 (padding optional), or `None`.
fn decode_base64(s: &str) -> Option<Vec<u8>> {
    let s = s.trim_end_matches('=');
    if s.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let mut acc: u32 = 0;
    let mut bits = 0;
    for b in s.bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

// ---------------------------------------------------------------------------------------------
// Tier 3: high entropy

/// Shortest token considered.
const MIN_TOKEN: usize = 24;

/// Runs of token characters long enough to judge, with up to two `=` of padding.
static TOKEN_RUN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[A-Za-z0-9+/_-]{24,}={0,2}").expect("valid token pattern"));

/// Dot-joined runs of token segments, four characters or more each: `<id>.<time>.<hmac>`.
static DOTTED_RUN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[A-Za-z0-9_-]{4,}(?:\.[A-Za-z0-9_-]{4,})+").expect("valid dotted pattern")
});

/// Random-looking tokens: runs of `[A-Za-z0-9+/_-]` (with trailing `=` padding) of 24 or
/// more characters, judged by [`looks_random`]. A run that reads as a path (some `/`-segment
/// is a plain lower-case word or a number: `github.com/org/repo/commit/<sha>`) is judged one
/// segment at a time, so only a random segment is replaced.
///
/// Tokens made of dot-joined segments (Discord's, Fernet's, many session tokens) go whole:
/// a dotted run whose segments together look random is one token, so no segment of it is
/// left behind; these come first.
///
/// Random-looking data that is no credential is left: see [`is_public_data`].
fn high_entropy_tokens(text: &str) -> Vec<Range<usize>> {
    let bytes = text.as_bytes();
    let public_blocks: Vec<Range<usize>> =
        PUBLIC_BLOCK.find_iter(text).map(|m| m.range()).collect();
    let public = |start: usize, token: &str| {
        public_blocks.iter().any(|b| b.contains(&start)) || is_public_data(text, start, token)
    };
    let mut out: Vec<Range<usize>> = DOTTED_RUN
        .find_iter(text)
        .filter(|run| {
            let joined = run.as_str().replace('.', "");
            joined.len() >= MIN_TOKEN && looks_random(&joined) && !public(run.start(), &joined)
        })
        .map(|run| run.range())
        .collect();
    for run in TOKEN_RUN.find_iter(text) {
        let body_end = run.start() + run.as_str().trim_end_matches('=').len();
        let (start, trimmed_end) = trim_token(bytes, run.start(), body_end);
        // Padding goes with the token, unless trailing separators were trimmed before it.
        let end = if trimmed_end == body_end {
            run.end()
        } else {
            trimmed_end
        };
        let token = &text[start..trimmed_end];
        // Most runs in prose about code are identifiers and paths without digits.
        if token.len() < MIN_TOKEN
            || !has_letter_and_digit(token)
            || is_digest(text, start)
            || public(start, token)
        {
            continue;
        }
        // A one-letter segment is as likely a piece of base64 (`…/TkB/y`) as a path's.
        let path_like = token.contains('/')
            && token.split('/').any(|seg| {
                !seg.is_empty()
                    && (seg.bytes().all(|b| b.is_ascii_digit())
                        || (seg.len() >= 2
                            && seg.split(['-', '_']).all(|w| {
                                !w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase())
                            })))
            });
        if path_like {
            let mut at = start;
            for seg in token.split('/') {
                let (s, e) = trim_token(bytes, at, at + seg.len());
                if e > s && looks_random(&text[s..e]) {
                    out.push(s..e);
                }
                at += seg.len() + 1;
            }
        } else if looks_random(token) {
            out.push(start..end);
        }
    }
    out
}

/// A content digest in base64, as lockfiles write them: Subresource Integrity
/// (`sha512-…` in package-lock.json, yarn.lock, Nix) and go.sum's `h1:…`.
fn is_digest(text: &str, start: usize) -> bool {
    let token = &text[start..];
    let algorithm = ["sha1-", "sha256-", "sha384-", "sha512-", "md5-"]
        .iter()
        .any(|prefix| token.starts_with(prefix));
    algorithm || text[..start].ends_with("h1:")
}

/// PEM blocks of public material: public keys, certificates and their requests, CRLs, PGP
/// public keys and signatures.
static PUBLIC_BLOCK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"-----BEGIN (?:[A-Z0-9 ]*PUBLIC KEY(?: BLOCK)?|(?:TRUSTED |X509 )?CERTIFICATE(?: REQUEST)?|NEW CERTIFICATE REQUEST|X509 CRL|PGP SIGNATURE|PGP MESSAGE)-----(?s:.*?)(?:-----END [A-Z0-9 ]*-----|\z)",
    )
    .expect("valid public block pattern")
});

/// Base64 headers of binary files fixtures embed: PNG, GIF, JPEG, PDF, gzip, zip, WebP.
const FILE_HEADERS: &[&str] = &[
    "iVBORw0KGgo",
    "R0lGOD",
    "/9j/",
    "JVBERi0",
    "H4sI",
    "UEsDB",
    "UklGR",
];

/// Random-looking data that is not a credential: an SSH public key (`ssh-ed25519 AAAA…`),
/// a base64 data URI or file (`data:image/png;base64,…`, a PNG or PDF header), or base64 of
/// readable prose (`SGVsbG8sIFdvcmxkIQ==` in a test fixture). A credential encoded in base64
/// is still found by its key (`password: aHVudGVyMg==`) in the tiers before.
fn is_public_data(text: &str, start: usize, token: &str) -> bool {
    let before = text[..start].trim_end_matches([' ', '\t']);
    let key_type = before.rsplit(char::is_whitespace).next().is_some_and(|w| {
        w.starts_with("ssh-")
            || w.starts_with("ecdsa-sha2-")
            || w.starts_with("sk-ssh-")
            || w.starts_with("sk-ecdsa-")
    });
    key_type
        || text[..start].ends_with("base64,")
        || FILE_HEADERS.iter().any(|h| token.starts_with(h))
        || decodes_to_prose(token)
}

/// Whether a token is base64 of readable text: printable, with spaces between words, mostly
/// letters.
fn decodes_to_prose(token: &str) -> bool {
    let Some(decoded) = decode_base64(&token.replace('-', "+").replace('_', "/")) else {
        return false;
    };
    let printable = decoded.iter().all(|b| (0x20..0x7f).contains(b));
    let spaces = decoded.iter().filter(|&&b| b == b' ').count();
    let wordy = decoded
        .iter()
        .filter(|b| b.is_ascii_alphabetic() || **b == b' ')
        .count();
    printable && spaces >= 2 && wordy * 4 >= decoded.len() * 3
}

/// Drops leading and trailing `+ / _ -` (option dashes, path slashes).
fn trim_token(bytes: &[u8], mut start: usize, mut end: usize) -> (usize, usize) {
    let edge = |b: u8| matches!(b, b'+' | b'/' | b'_' | b'-');
    while start < end && edge(bytes[start]) {
        start += 1;
    }
    while end > start && edge(bytes[end - 1]) {
        end -= 1;
    }
    (start, end)
}

/// Whether a token (ASCII, from `[A-Za-z0-9+/_-]`) looks like a random secret:
///
/// - at least 24 characters, holding both letters and digits;
/// - not structured: not every piece between `_ - + / =` is short, hex (commit ids,
///   digests, UUIDs) or a word with an optional number (`aws_lc_0_47_X509_STORE`,
///   `DXGI_FORMAT_A4B4G4R4_UNORM`, `com/org/repo/pull/42`);
/// - not a ULID;
/// - Shannon entropy of at least min(4.0, log2(len) - 1) bits per character (3.58 at 24
///   characters, 4.0 from 32);
/// - and random in shape rather than made of words: either at least 30% of adjacent
///   characters switch class (upper, lower, digit; an upper-case letter followed by
///   lower-case ones, as in camelCase, does not count), or fewer than 30% of the characters
///   belong to pronounceable words (three or more letters with a vowel).
///
/// Tuned on random tokens of several alphabets and on ~200 000 identifiers and URL paths from
/// published crates. Random mixed-case tokens (base64, alphanumeric) are flagged about 95% of
/// the time at 32 characters and 97-99% from 40; single-case ones (lower-case and digits)
/// 80-90%; hex never (it cannot be told from a digest). Identifiers such as
/// `test_http2_connection_reuse_with_tls13`, `useOAuth2CallbackWithPKCE` or
/// `S3BucketReplicationConfigV2` are not flagged.
fn looks_random(token: &str) -> bool {
    let bytes = token.as_bytes();
    if bytes.len() < MIN_TOKEN || !has_letter_and_digit(token) {
        return false;
    }
    if is_structured(token) || is_ulid(token) {
        return false;
    }
    let threshold = (((bytes.len() as f64).log2()) - 1.0).min(4.0);
    if shannon_entropy(bytes) < threshold {
        return false;
    }
    let (switches, pairs) = class_switches(token);
    let switch_rate = switches as f64 / pairs.max(1) as f64;
    switch_rate >= 0.3 || word_coverage(token) < 0.3
}

/// Every piece between `_ - + / =` is short (8 characters or fewer), hex, or a word with an
/// optional number. Random tokens have long pieces: separators are rare in base64.
fn is_structured(token: &str) -> bool {
    let bytes = token.as_bytes();
    let mut start = 0;
    while start < bytes.len() {
        let mut end = start;
        while end < bytes.len() && bytes[end].is_ascii_alphanumeric() {
            end += 1;
        }
        if !is_structured_piece(&bytes[start..end]) {
            return false;
        }
        start = end + 1;
    }
    true
}

fn is_structured_piece(piece: &[u8]) -> bool {
    if piece.len() <= 8 {
        return true;
    }
    let hex = piece.strip_prefix(b"0x").unwrap_or(piece);
    if hex.iter().all(u8::is_ascii_hexdigit) {
        return true;
    }
    let mut letters = piece.len();
    while letters > 0 && piece[letters - 1].is_ascii_digit() {
        letters -= 1;
    }
    piece[..letters].iter().all(u8::is_ascii_alphabetic)
}

/// 26 characters of Crockford base32, first one 0-7: a sortable id, not a secret.
fn is_ulid(token: &str) -> bool {
    token.len() == 26
        && token.as_bytes()[0] <= b'7'
        && token.bytes().all(|b| {
            b.is_ascii_digit()
                || (b.is_ascii_uppercase() && !matches!(b, b'I' | b'L' | b'O' | b'U'))
        })
}

fn shannon_entropy(bytes: &[u8]) -> f64 {
    let mut counts = [0u32; 256];
    for &b in bytes {
        counts[b as usize] += 1;
    }
    let n = bytes.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum()
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Upper,
    Lower,
    Digit,
}

fn class_of(b: u8) -> Option<Class> {
    match b {
        b'A'..=b'Z' => Some(Class::Upper),
        b'a'..=b'z' => Some(Class::Lower),
        b'0'..=b'9' => Some(Class::Digit),
        _ => None,
    }
}

/// Class switches between adjacent alphanumerics (upper → lower excepted), and the number of
/// adjacent alphanumeric pairs.
fn class_switches(token: &str) -> (usize, usize) {
    let mut switches = 0;
    let mut pairs = 0;
    for w in token.as_bytes().windows(2) {
        let (Some(a), Some(b)) = (class_of(w[0]), class_of(w[1])) else {
            continue;
        };
        pairs += 1;
        if a != b && !(a == Class::Upper && b == Class::Lower) {
            switches += 1;
        }
    }
    (switches, pairs)
}

/// The share of alphanumerics in pronounceable words: camelCase / snake_case words
/// (`Replication`, `config`, `HTTP`) of three or more letters holding a vowel.
fn word_coverage(token: &str) -> f64 {
    let bytes = token.as_bytes();
    let alnum = bytes.iter().filter(|b| b.is_ascii_alphanumeric()).count();
    let mut covered = 0;
    let mut count = |word: &[u8]| {
        if word.len() >= 3 && word.iter().any(|b| b"aeiouyAEIOUY".contains(b)) {
            covered += word.len();
        }
    };
    let mut i = 0;
    while i < bytes.len() {
        if !bytes[i].is_ascii_alphabetic() {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_uppercase() {
            i += 1;
        }
        let uppers = i - start;
        let lower_start = i;
        while i < bytes.len() && bytes[i].is_ascii_lowercase() {
            i += 1;
        }
        let lowers = i - lower_start;
        if lowers > 0 && uppers > 1 {
            // `HTTPServer`: the acronym, then a capitalised word.
            count(&bytes[start..lower_start - 1]);
            count(&bytes[lower_start - 1..i]);
        } else {
            count(&bytes[start..i]);
        }
    }
    covered as f64 / alnum.max(1) as f64
}

#[cfg(test)]
mod tests;
