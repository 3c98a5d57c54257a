//! The secret scanner's unit tests: each detector on what it must catch and on the near
//! misses it must leave alone.

use super::*;

/// A GitHub token built at run time, so this file does not look like a leak.
fn github_token() -> String {
    format!("{}_{}", "ghp", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8")
}

/// AWS's documented example secret key.
fn aws_secret_example() -> String {
    ["wJalrXUtnFEMI", "K7MDENG", "bPxRfiCYEXAMPLEKEY"].join("/")
}

/// A random-looking 40-character base64 secret (the documented example spells
/// "EXAMPLEKEY", which reads as words).
fn random_secret() -> String {
    ["Zp3Lk8Qw2Xv9", "Tn4Mb7Rc1+Hy6Jd0Gs5Fa8We3Kq"].join("/")
}

fn jwt() -> String {
    [
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
        "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0",
        "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    ]
    .join(".")
}

/// Redacts `text`, asserting the result is a fixed point.
fn check(text: &str) -> Redacted {
    let r = redact(text);
    let again = redact(&r.text);
    assert_eq!(again.text, r.text, "not idempotent for {text:?}");
    assert!(
        again.kinds.is_empty(),
        "second pass found {:?}",
        again.kinds
    );
    assert_eq!(
        contains_secret(text),
        !r.kinds.is_empty(),
        "contains_secret({text:?})"
    );
    assert!(!contains_secret(&r.text));
    r
}

/// `text` with one secret, `secret`, of `kind`: it must become the marker and nothing else
/// may change.
fn assert_redacts(text: &str, secret: &str, kind: SecretKind) {
    assert!(
        text.contains(secret),
        "bad test: {secret:?} not in {text:?}"
    );
    let r = check(text);
    let expected = text.replacen(secret, &format!("[REDACTED:{}]", kind.as_str()), 1);
    assert_eq!(r.text, expected, "redacting {text:?}");
    assert_eq!(r.kinds, vec![kind], "kinds for {text:?}");
}

fn assert_untouched(text: &str) {
    let r = check(text);
    assert_eq!(r.text, text, "false positive: {:?}", r.kinds);
    assert!(r.kinds.is_empty());
    assert!(!contains_secret(text));
}

/// A text holding one secret: `{}` in `text` is where it goes; the secret is `pieces`
/// joined (at run time, so this file does not look like a leak to secret scanners).
type Planted = (&'static str, &'static [&'static str], SecretKind);

/// The text and the secret in it.
fn plant(&(text, pieces, _): &Planted) -> (String, String) {
    let secret = pieces.concat();
    (text.replacen("{}", &secret, 1), secret)
}

/// The lines of a secret that must never survive (a PEM block's armour lines are public).
fn secret_lines(secret: &str) -> impl Iterator<Item = &str> {
    secret.lines().filter(|l| !l.starts_with("-----"))
}

/// Secrets in the shapes people paste them, each redacted alone. No secret is a piece of
/// the property tests' noise or of a `[REDACTED:…]` marker.
const SECRETS: &[Planted] = &[
    // Values stored verbatim before (issue 13).
    ("DB_PASSWORD={}", &["hunter2"], SecretKind::AssignedSecret),
    ("SMTP_PASS={}", &["Tr0ub4dor&3"], SecretKind::AssignedSecret),
    (
        "PASSWORD={}",
        &["correcthorsebatterystaple"],
        SecretKind::AssignedSecret,
    ),
    (
        "postgres://app:{}@db/prod",
        &["p@ss/w0rd"],
        SecretKind::UrlPassword,
    ),
    (
        "mongodb://admin:{}@cluster0.example.net/?retryWrites=true",
        &["s3@cr/3t"],
        SecretKind::UrlPassword,
    ),
    (
        "cache at redis://:{}@cache.internal:6379/0",
        &["cachepass"],
        SecretKind::UrlPassword,
    ),
    (
        "refresh with {} before it expires",
        &["xox", "e-1-My0xLTI2NTA5NjM5NjA1NjItNjI3NzE4OTk2"],
        SecretKind::SlackToken,
    ),
    (
        "rotating token {}",
        &["xox", "e.xoxp-1-Mi0yLTI2NTA5NjM5NjA1NjItNjI3Nz"],
        SecretKind::SlackToken,
    ),
    (
        "bot {}",
        &[
            "xox",
            "b-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
        ],
        SecretKind::SlackToken,
    ),
    (
        "user {}",
        &["xox", "p-1234567890-abcdefABCDEF12"],
        SecretKind::SlackToken,
    ),
    (
        "app {}",
        &["xox", "a-2-1234567890-abcdefABCDEF12"],
        SecretKind::SlackToken,
    ),
    (
        "socket mode {}",
        &["xap", "p-1-A0123BCDE45-1234567890123-abcdef0123456789"],
        SecretKind::SlackToken,
    ),
    (
        "PAT: {}",
        &[
            "github",
            "_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV",
        ],
        SecretKind::GithubToken,
    ),
    (
        "classic {} here",
        &["gh", "p_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"],
        SecretKind::GithubToken,
    ),
    (
        "session {}",
        &[
            "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9",
            ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0",
            ".dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        ],
        SecretKind::Jwt,
    ),
    (
        "CI key {} for uploads",
        &["AKIA", "IOSFODNN7EXAMPLE"],
        SecretKind::AwsAccessKey,
    ),
    // Private key blocks: ed25519 (OpenSSH), EC, PKCS#8 and encrypted PKCS#8.
    (
        "deploy key:\n{}\nremove it",
        &[
            "-----BEGIN OPENSSH PRIVATE",
            " KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACBhY2tub3dsZWRnZWQgdGhpcyBpcyBub3QgYSByZWFsIGtleQ\n-----END OPENSSH PRIVATE KEY-----",
        ],
        SecretKind::PrivateKey,
    ),
    (
        "{}",
        &[
            "-----BEGIN EC PRIVATE",
            " KEY-----\nMHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oLMmRqzm1rPGoAoGCCqGSM49\n-----END EC PRIVATE KEY-----",
        ],
        SecretKind::PrivateKey,
    ),
    (
        "pkcs8: {}",
        &[
            "-----BEGIN PRIVATE",
            " KEY-----\nMC4CAQAwBQYDK2VwBCIEINTuctv5E1hK1bbY8fdp+K06/nwoy/HU++CXqI9EdVhC\n-----END PRIVATE KEY-----",
        ],
        SecretKind::PrivateKey,
    ),
    (
        "{}",
        &[
            "-----BEGIN ENCRYPTED PRIVATE",
            " KEY-----\nMIIFHDBOBgkqhkiG9w0BBQ0wQTApBgkqhkiG9w0BBQwwHAQIc2VjcmV0c2FsdA\n-----END ENCRYPTED PRIVATE KEY-----",
        ],
        SecretKind::PrivateKey,
    ),
    // Connection strings.
    (
        "Server=tcp:app.database.windows.net,1433;Database=app;User ID=sa;Password={};Encrypt=true",
        &["hunter2"],
        SecretKind::AssignedSecret,
    ),
    (
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={};EndpointSuffix=core.windows.net",
        &[
            "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
        ],
        SecretKind::AssignedSecret,
    ),
    (
        "Driver={ODBC Driver 18};Server=db;Uid=sa;Pwd={{}};",
        &["pa ss!"],
        SecretKind::AssignedSecret,
    ),
    (
        "Endpoint=sb://bus.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey={}",
        &["kE9mQ2pL+7vX0wRt"],
        SecretKind::AssignedSecret,
    ),
    // `.env` lines whose key names a secret, whatever the value.
    (
        "export API_TOKEN={}",
        &["t0k3n"],
        SecretKind::AssignedSecret,
    ),
    (
        "SESSION_SECRET=\"{}\"",
        &["two words"],
        SecretKind::AssignedSecret,
    ),
    (
        "SMTP_PASSWORD: '{}'",
        &["mail pass"],
        SecretKind::AssignedSecret,
    ),
    (
        "DB_PASSWORD: {}  # production",
        &["hunter3"],
        SecretKind::AssignedSecret,
    ),
    ("PWD={}", &["Qz9w!"], SecretKind::AssignedSecret),
    ("PASSWD={}", &["letmein"], SecretKind::AssignedSecret),
    ("STRIPE_KEY={}", &["plainvalue"], SecretKind::AssignedSecret),
    (
        "  - POSTGRES_PASSWORD={}",
        &["pg-dev-pass"],
        SecretKind::AssignedSecret,
    ),
    (
        "the staging env sets REDIS_PASSWORD={} for now",
        &["changeme"],
        SecretKind::AssignedSecret,
    ),
    (
        "https://api.example.com/v1?API_KEY={}&page=2",
        &["qwerty"],
        SecretKind::AssignedSecret,
    ),
    ("password={}", &["hunter4"], SecretKind::AssignedSecret),
    (
        "spring.datasource.password={}",
        &["s3cr3tpw"],
        SecretKind::AssignedSecret,
    ),
    // 32 or more hex digits after a secret-named key.
    (
        "api_key {}",
        &["5f4dcc3b5aa765d6", "1d8327deb882cf99"],
        SecretKind::AssignedSecret,
    ),
    (
        "SECRET_KEY_BASE={}",
        &["9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a0"],
        SecretKind::AssignedSecret,
    ),
    (
        "\"auth_token\": \"{}\"",
        &["1234567890", "1234567890", "1234567890", "12"],
        SecretKind::AssignedSecret,
    ),
];

/// Ordinary code, lockfiles and prose that must come out byte for byte.
const ORDINARY: &[&str] = &[
    "Reverted by 9fceb02d0ae598e95dc970b74767f19372d61af8 last week",
    "token 9fceb02d0ae598e95dc970b74767f19372d61af8 is the commit that rotated it",
    "AWS secret rotation landed in 9fceb02d0ae598e95dc970b74767f19372d61af8",
    "checksum = \"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\"",
    "integrity = \"sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg==\"",
    "\"integrity\": \"sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg==\",",
    "  integrity sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=",
    "golang.org/x/text v0.3.7 h1:olpwvP2KacW1ZWvsR7uQhoyTYvKAupfQrRGBFM352Gk=",
    "sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "request 123e4567-e89b-12d3-a456-426614174000 failed",
    "password_hash = bcrypt.hashpw(password, salt)",
    "user.password_hash is never logged",
    "password_hash",
    "token_count = 3",
    "max_tokens = 4096",
    "MAX_TOKENS=4096",
    "password_field = form.password",
    "if not password:",
    "def reset_password(user):",
    "api_key_header = \"X-Api-Key\"",
    "SECRET_KEY_SETTING_NAME",
    "settings.SECRET_KEY_SETTING_NAME is read at startup",
    "Set DB_PASSWORD in the vault, never in .env",
    "DB_PASSWORD=${DB_PASSWORD}",
    "GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
    "API_KEY=<your key>",
    "API_KEY=YOUR_API_KEY",
    "DB_PASSWORD=",
    "DB_PASSWORD=\"\"",
    "TLS_KEY=/etc/ssl/private/server.key",
    "PWD=/home/alice/src/cairn",
    "PUBLIC_KEY=ssh-ed25519",
    "API_TOKEN: see the vault",
    "DB_PASSWORD: str",
    "if DB_PASSWORD==expected: fail()",
    "login(\n    user=u,\n    password=pw,\n)",
    "    password=form.password,",
    "token_url=https://auth.example.com/oauth2/token",
    "postgres://db.internal:5432/prod",
    "http://localhost:3000/users/@alice",
    "https://medium.com/@alice/post-123",
    "ssh://git@github.com/org/repo.git",
    "https://example.com/login?next=/home&email=a@b.io",
    "Server=db;Database=app;Trusted_Connection=True;",
    "Server=db;User Id=app;Password=<password>;",
    "Server=db;Password=${DB_PASSWORD};",
    "Password reset emails go out hourly; check the queue.",
];

#[test]
fn planted_secrets_are_redacted() {
    for case in SECRETS {
        let (text, secret) = plant(case);
        assert_redacts(&text, &secret, case.2);
    }
}

#[test]
fn ordinary_code_and_prose_survive() {
    for text in ORDINARY {
        assert_untouched(text);
    }
}

// --- tier 1: known formats --------------------------------------------------------------

#[test]
fn aws_access_key_ids() {
    for prefix in ["AKIA", "ASIA", "ABIA", "ACCA"] {
        let key = format!("{prefix}IOSFODNN7EXAMPLE");
        assert_redacts(
            &format!("The CI user uses {key} for S3 uploads."),
            &key,
            SecretKind::AwsAccessKey,
        );
    }
    // Too short, or embedded in a longer word: not a key id.
    assert_untouched("AKIAIOSFODNN7EXAMP is truncated");
    assert_untouched("XAKIAIOSFODNN7EXAMPLEX");
}

#[test]
fn aws_secret_keys_in_context() {
    let secret = aws_secret_example();
    assert_redacts(
        &format!("aws_secret_access_key = {secret}"),
        &secret,
        SecretKind::AwsSecretKey,
    );
    assert_redacts(
        &format!("The AWS secret for staging is {secret}, rotate it."),
        &secret,
        SecretKind::AwsSecretKey,
    );
    assert_redacts(
        &format!("AWS_SECRET_ACCESS_KEY: \"{secret}\""),
        &secret,
        SecretKind::AwsSecretKey,
    );
    // A 40-hex commit id next to "AWS secret" is a commit id.
    assert_untouched("AWS secret rotation landed in 9fceb02d0ae598e95dc970b74767f19372d61af8");
}

#[test]
fn aws_secret_keys_without_context_are_high_entropy() {
    let secret = random_secret();
    assert_redacts(
        &format!("the key is {secret} apparently"),
        &secret,
        SecretKind::HighEntropy,
    );
}

#[test]
fn github_tokens() {
    let token = github_token();
    assert_redacts(
        &format!("Use {token} to call the API."),
        &token,
        SecretKind::GithubToken,
    );
    for prefix in ["gho", "ghu", "ghs", "ghr"] {
        let t = format!("{prefix}_{}", "Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0Pp9Oo8");
        assert_redacts(&format!("token {t} here"), &t, SecretKind::GithubToken);
    }
    let pat = format!(
        "{}_{}",
        "github_pat", "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUV"
    );
    assert_redacts(&format!("PAT: {pat}"), &pat, SecretKind::GithubToken);
    // Too short to be a token.
    assert_untouched("the ghp_ prefix marks personal tokens, e.g. ghp_abc123");
}

#[test]
fn gitlab_tokens() {
    for prefix in ["glpat", "gldt", "glrt"] {
        let t = format!("{prefix}-{}", "xY3zQ9wE5rT7uI1oP2aS");
        assert_redacts(&format!("token {t}."), &t, SecretKind::GitlabToken);
    }
}

#[test]
fn slack_tokens_and_webhooks() {
    let bot = format!(
        "{}-{}",
        "xoxb", "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
    );
    assert_redacts(&format!("bot: {bot}"), &bot, SecretKind::SlackToken);
    let user = format!("{}-{}", "xoxp", "1234567890-abcdefABCDEF12");
    assert_redacts(&format!("user {user} here"), &user, SecretKind::SlackToken);
    let path = ["T00000000", "B00000000", "XXXXXXXXXXXXXXXXXXXXXXXX"].join("/");
    let url = format!("https://hooks.slack.com/services/{path}");
    assert_redacts(
        &format!("Alerts post to {url} on failure."),
        &path,
        SecretKind::SlackWebhook,
    );
    // Prose about Slack is not a token.
    assert_untouched("xoxb- tokens are bot tokens; see https://api.slack.com/authentication");
}

#[test]
fn jwts() {
    let t = jwt();
    assert_redacts(&format!("Sample session: {t}"), &t, SecretKind::Jwt);
    // Inside an assignment or header, the JWT detector names it.
    let r = check(&format!("Authorization: Bearer {t}"));
    assert_eq!(r.text, "Authorization: Bearer [REDACTED:jwt]");
    assert_eq!(r.kinds, vec![SecretKind::Jwt]);
}

#[test]
fn private_key_blocks() {
    for label in [
        "PRIVATE KEY",
        "RSA PRIVATE KEY",
        "EC PRIVATE KEY",
        "DSA PRIVATE KEY",
        "OPENSSH PRIVATE KEY",
        "ENCRYPTED PRIVATE KEY",
        "PGP PRIVATE KEY BLOCK",
    ] {
        let block = format!(
            "-----BEGIN {label}-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nbm9uZSBvZiB5b3VyIGJ1c2luZXNz\n-----END {label}-----"
        );
        let text = format!("The test fixture key:\n{block}\nis only for local runs.");
        let r = check(&text);
        assert_eq!(
            r.text, "The test fixture key:\n[REDACTED:private-key]\nis only for local runs.",
            "{label}"
        );
        assert_eq!(r.kinds, vec![SecretKind::PrivateKey]);
    }
}

#[test]
fn private_key_without_end_runs_to_end_of_text() {
    let text = "key: -----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\nmore";
    let r = check(text);
    assert_eq!(r.text, "key: [REDACTED:private-key]");
    assert_eq!(r.kinds, vec![SecretKind::PrivateKey]);
    // Public keys and certificates are not secrets.
    assert_untouched("-----BEGIN PUBLIC KEY-----\nMFkw\n-----END PUBLIC KEY-----");
}

#[test]
fn private_key_with_escaped_newlines_in_json() {
    let text = r#"{"private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADAN\n-----END PRIVATE KEY-----\n"}"#;
    let r = check(text);
    assert_eq!(r.text, r#"{"private_key": "[REDACTED:private-key]\n"}"#);
    assert_eq!(r.kinds, vec![SecretKind::PrivateKey]);
}

#[test]
fn stripe_keys() {
    for prefix in ["sk_live", "rk_live", "sk_test"] {
        let key = format!("{prefix}_{}", "4eC39HqLyjWDarjtT1zdp7dc");
        assert_redacts(&format!("Stripe: {key}"), &key, SecretKind::StripeKey);
    }
    let wh = format!("{}_{}", "whsec", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
    assert_redacts(&format!("webhook signing {wh}"), &wh, SecretKind::StripeKey);
    // Publishable keys are public.
    assert_untouched("pk_live_51H8xYzAbCdEfGh is the publishable key");
}

#[test]
fn google_api_keys() {
    let key = format!("{}{}", "AIza", "SyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI");
    assert_redacts(&format!("maps key {key}."), &key, SecretKind::GoogleApiKey);
}

#[test]
fn openai_keys() {
    let legacy = format!(
        "{}-{}",
        "sk", "abc123DEF456ghi789JKL012mno345PQR678stu901VWX234"
    );
    assert_redacts(&format!("key {legacy}"), &legacy, SecretKind::OpenaiKey);
    let proj = format!("{}-{}", "sk-proj", "Ab3_De6-Gh9Jk2Mn5Pq8St1Vw4Yz7");
    assert_redacts(&format!("use {proj} in dev"), &proj, SecretKind::OpenaiKey);
    // `sk-learn` and friends are not keys.
    assert_untouched("we pinned sk-learn and task-management-service");
}

#[test]
fn anthropic_keys() {
    let key = format!("{}-{}", "sk-ant-api03", "Xy7_Zw8-Vu9Ts0Rq1Po2Nm3Lk4Ji5Hg6");
    assert_redacts(
        &format!("ANTHROPIC key {key} ok"),
        &key,
        SecretKind::AnthropicKey,
    );
}

#[test]
fn npm_pypi_huggingface_sendgrid() {
    let npm = format!("{}_{}", "npm", "aB1cD2eF3gH4iJ5kL6mN7oP8qR9sT0uV1wX2");
    assert_redacts(&format!("npm {npm}"), &npm, SecretKind::NpmToken);
    let pypi = format!(
        "{}-{}{}",
        "pypi", "AgEIcHlwaS5vcmc", "CJGE4ZTA3ZmQtNmIwNy00ZjE5LWI2MGMtZDE2NjlmNmFhNTg1AAIqWzMsImE5"
    );
    assert_redacts(&format!("twine uses {pypi}"), &pypi, SecretKind::PypiToken);
    let hf = format!("{}_{}", "hf", "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh");
    assert_redacts(&format!("HF {hf}"), &hf, SecretKind::HuggingfaceToken);
    let sg = format!(
        "{}.{}.{}",
        "SG", "ngeVfQFYQlKU0ufo8x5d1A", "TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr"
    );
    assert_redacts(&format!("mail {sg} key"), &sg, SecretKind::SendgridKey);
}

#[test]
fn twilio_discord_telegram() {
    let sk = format!("{}{}", "SK", "2f6d1c8e9b0a47f3a5e4d2c1b0f9e8d7");
    assert_redacts(&format!("Twilio key {sk} here"), &sk, SecretKind::TwilioKey);
    let ac = format!("{}{}", "AC", "7c1e5b9a3d2f48e6b0a4c8d2e6f1a3b5");
    assert_redacts(&format!("account {ac}."), &ac, SecretKind::TwilioKey);
    let discord = format!(
        "{}.{}",
        "MTk4NjIyNDgzNDcxOTI1MjQ4", "GbQxYz.k3j9x0q2m8v7n1b5z4l6p0w2r8t3y7u1abc"
    );
    assert_redacts(
        &format!("bot token {discord} for releases"),
        &discord,
        SecretKind::DiscordToken,
    );
    let telegram = format!("{}:{}", "123456789", "AASc7Tvo-hBKqFYY-kv5ZJr3J1TWDtkwtDD");
    assert_redacts(
        &format!("bot {telegram} answers"),
        &telegram,
        SecretKind::TelegramToken,
    );
    // A dotted name whose first segment is no base64 id, a time, a port.
    assert_untouched("NotificationsServiceClient.handle.retryWithBackoffAndJitter");
    assert_untouched("started 12:30:45, port 123456789:80 refused");
}

#[test]
fn provider_tokens() {
    for (prefix, body) in [
        (
            "dop_v1_",
            "786e4d3cea27d26934b484e73cf575dcad6ba2b0aee0ca923732881584d8c4fa",
        ),
        ("shpat_", "2815d2802827283e0ad8417358156996"),
        ("dapi", "9e58b081006f7e3dfc967a64cb14028d"),
        ("hvs.", "CAESIKMGHZEM9YpvujA-C5Q52ryFlwRlOEV"),
        ("glsa_", "F54Fzbka8FRCztUjAwyuh1vauWv1zh87_6098b2cc"),
        ("NRAK-", "9MTF4BS3E62RYNNEFJ7QXI6RHXO"),
        (
            "AGE-SECRET-KEY-1",
            "BCIXGY29DB8P5QA3E68F7E4QEQPNO35YE4SCMEJVQTIA4D5RGN5S7S333H",
        ),
        ("lin_api_", "bjL5DZPjN0MEQ7wjJJibaZUPgHV7iB3m03nbqnsG"),
        (
            "PMAK-",
            "512c9791e558e08baa7196b5-0ac2f86702824c1c099724caf4941d4072",
        ),
        (
            "gsk_",
            "aF1LlqsajAIxNKu8iS2G8NPRVdD53X83RZJzzzzgEOzdmenCkhvM",
        ),
        ("r8_", "YW2mZp0zVZomHFwUbbYrEqmSM9wCZ7Uw9xfog"),
        ("jU2", "8Q~JngKtFI3~OyV2dZAkg05rK_gqv81Rab"),
        ("key-", "9e58b081006f7e3dfc967a64cb14028d"),
    ] {
        let token = format!("{prefix}{body}");
        assert_redacts(
            &format!("the deploy uses {token}. Rotate it."),
            &token,
            SecretKind::ProviderToken,
        );
    }
    // Prefixes in prose, and a token's prefix with too short a body.
    assert_untouched("hvs. tokens and dop_v1_ tokens are rotated by the vault");
    assert_untouched("shpat_abc is truncated; key-value stores");
}

#[test]
fn multi_segment_tokens_go_whole() {
    for token in [
        "Ab3dE6gH9Jk.2Mn5Pq8St1.Vw4Yz7Ac0Df3",
        "Zx8vQ2mN4pL7rT1wK9sB3dF6hJ0gY5cA.Qm7Rt2.oEmvnEN5N1aE6PwZPf1Qh6yYTWmE4lBY",
    ] {
        assert_redacts(
            &format!("session {token} from staging"),
            token,
            SecretKind::HighEntropy,
        );
    }
    for text in [
        "at com.example.service.PaymentServiceImpl2.process",
        "ip-10-0-1-23.eu-west-1.compute.internal",
        "ec2-54-123-45-67.compute-1.amazonaws.com",
        "django.contrib.auth.backends.ModelBackend2",
    ] {
        assert_untouched(text);
    }
}

#[test]
fn public_and_fixture_data_is_not_high_entropy() {
    for text in [
        "FIXTURE = \"SGVsbG8sIFdvcmxkISBUaGlzIGlzIGEgdGVzdCBmaXh0dXJlLg==\"",
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl ci@x",
        "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk",
        "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUXk3p7Lz9Q2mN4pL7rT1wK9sB3dF6hJ0wCgYIKoZIzj0E\n-----END CERTIFICATE-----",
    ] {
        assert_untouched(text);
    }
    // …but base64 of a credential is still found by its key.
    let r = check("password: aHVudGVyMjAyNA==");
    assert_eq!(r.text, "password: [REDACTED:assigned-secret]");
}

#[test]
fn client_password_variables() {
    for (text, secret) in [
        ("PGPASSWORD=pgpw psql -h db", "pgpw"),
        ("SSHPASS=Ssh!pw sshpass -e ssh web1", "Ssh!pw"),
        ("REDISCLI_AUTH=redisauth1 redis-cli ping", "redisauth1"),
    ] {
        assert_redacts(text, secret, SecretKind::AssignedSecret);
    }
    assert_untouched("BYPASS=1 make test");
}

// --- tier 2: context ----------------------------------------------------------------------

#[test]
fn url_passwords_keep_scheme_user_and_host() {
    let r = check("Staging DSN: postgres://app:s3cr3t-pw@db.internal/prod (read only)");
    assert_eq!(
        r.text,
        "Staging DSN: postgres://app:[REDACTED:url-password]@db.internal/prod (read only)"
    );
    assert_eq!(r.kinds, vec![SecretKind::UrlPassword]);
    let r = check("cache at redis://:hunter2@cache:6379/0");
    assert_eq!(
        r.text,
        "cache at redis://:[REDACTED:url-password]@cache:6379/0"
    );
    let r = check("amqp://guest:guest@localhost:5672// is the local broker");
    assert_eq!(
        r.text,
        "amqp://guest:[REDACTED:url-password]@localhost:5672// is the local broker"
    );
    // A placeholder word is redacted like any password; templates are not passwords.
    let r = check("redis://:secret@host");
    assert_eq!(r.text, "redis://:[REDACTED:url-password]@host");
    assert_untouched("postgres://app:${DB_PASSWORD}@db.internal/prod");
    assert_untouched("mysql://user:<password>@host/db");
    assert_untouched("https://user:****@example.com");
}

#[test]
fn url_password_holding_a_known_token_is_named_by_the_token() {
    let token = github_token();
    let r = check(&format!(
        "git clone https://x-access-token:{token}@github.com/o/r.git"
    ));
    assert_eq!(
        r.text,
        "git clone https://x-access-token:[REDACTED:github-token]@github.com/o/r.git"
    );
    assert_eq!(r.kinds, vec![SecretKind::GithubToken]);
}

#[test]
fn assignments_replace_only_the_value() {
    let cases = [
        (
            "password=Tr0ub4dor&3x",
            "password=[REDACTED:assigned-secret]",
        ),
        (
            "DB_PASSWORD=hunter22",
            "DB_PASSWORD=[REDACTED:assigned-secret]",
        ),
        (
            r#"api_key: "abc123xyz""#,
            r#"api_key: "[REDACTED:assigned-secret]""#,
        ),
        (
            "secret_token = q8Zk2mP0vX",
            "secret_token = [REDACTED:assigned-secret]",
        ),
        (
            r#"{"client_secret": "9f8e7d6c5b4a"}"#,
            r#"{"client_secret": "[REDACTED:assigned-secret]"}"#,
        ),
        (
            "export GITHUB_TOKEN='ci-only'",
            "export GITHUB_TOKEN='[REDACTED:assigned-secret]'",
        ),
        (
            "X-Api-Key: 7Hq2LmN9pX4v",
            "X-Api-Key: [REDACTED:assigned-secret]",
        ),
        (
            "config.auth_token := t0k3n!value",
            "config.auth_token := [REDACTED:assigned-secret]",
        ),
        ("passphrase => `open sesame`", "passphrase => `open sesame`"),
        (
            "SECRET_KEY = 'django-insecure-@x7!k'",
            "SECRET_KEY = '[REDACTED:assigned-secret]'",
        ),
        (
            "password = \"super_secret_2024\"",
            "password = \"[REDACTED:assigned-secret]\"",
        ),
        (
            "see ?access_token=Zx81Lq0pMn&page=2",
            "see ?access_token=[REDACTED:assigned-secret]&page=2",
        ),
    ];
    for (input, expected) in cases {
        let r = check(input);
        assert_eq!(r.text, expected, "for {input:?}");
        let want: Vec<SecretKind> = if input == expected {
            vec![]
        } else {
            vec![SecretKind::AssignedSecret]
        };
        assert_eq!(r.kinds, want, "for {input:?}");
    }
}

#[test]
fn assignments_of_non_secrets_are_left_alone() {
    for text in [
        "token: refresh tokens expire after 30 days",
        "password: see the vault",
        "Password: ask in #infra",
        "token: str",
        "def login(user: str, password: str) -> Token:",
        "api_key: Optional[str] = None",
        "password: SecretStr",
        "token = get_token_v2()",
        "secret = os.environ[\"SECRET2\"]",
        "apiKey: process.env.API_KEY2",
        "SECRET_KEY = settings.SECRET_KEY_V2",
        "token = crate::auth::Token2",
        "password: ${DB_PASSWORD}",
        "password: \"${DB_PASSWORD}\"",
        "token: \"<your token here>\"",
        "api_key: \"YOUR_API_KEY\"",
        "password = \"\"",
        "password: \"***\"",
        "{\"token\": \"string\", \"expires_in\": \"integer\"}",
        "the error says token: \"expired or invalid\"",
        "if token == expected_token2: return",
        "max_tokens: 4096",
        "max_tokens=128000",
        "token_url: https://auth.example.com/oauth2/token",
        "password_file=/etc/app/db_password2",
        "secret: v1.2.3-rc1",
        "secret_owner: alice@example.com",
        "token: oauth2_refresh_flow",
        "tests/test_auth.py::TestToken::test_refresh_token_v2",
        "src/auth/token.py::TokenService.refresh2",
        "token::Kind::Ident2 is the lexer's token type",
        "let signing_key = Hmac::<Sha256>::new(private_key);",
        "let struct_token = input.parse::<Token![struct]>()?;",
        "fn f(token : super::super::Foundation:: HANDLE)",
        "pad_token = \"[PAD]\"",
        "{\"unk_token\": \"[UNK]\", \"bos_token\": \"<s>\"}",
        "let token = \"my_jwt_token\";",
        "grant_type=refresh_token&refresh_token=\"refresh_token\"",
    ] {
        assert_untouched(text);
    }
}

#[test]
fn authorization_headers() {
    let r = check("curl -H 'Authorization: Bearer 4f9Kx2Lm8Qp1Zt7W' https://api.example.com");
    assert_eq!(
        r.text,
        "curl -H 'Authorization: Bearer [REDACTED:bearer-token]' https://api.example.com"
    );
    assert_eq!(r.kinds, vec![SecretKind::BearerToken]);
    let r = check("Authorization: Token 9944b09199c62bcf9418ad846dd0e4bbdfc6ee4b");
    assert_eq!(r.text, "Authorization: Token [REDACTED:bearer-token]");
    // base64("alice:wonderland")
    let r = check("Authorization: Basic YWxpY2U6d29uZGVybGFuZA==");
    assert_eq!(r.text, "Authorization: Basic [REDACTED:basic-auth]");
    assert_eq!(r.kinds, vec![SecretKind::BasicAuth]);
    for text in [
        "Authorization: Bearer <token>",
        "bearer tokens are rotated hourly",
        "Basic authentication is disabled in production",
        "Authorization: required on every endpoint",
        "the Authorization header carries a Bearer token",
    ] {
        assert_untouched(text);
    }
}

// --- tier 3: high entropy -----------------------------------------------------------------

#[test]
fn high_entropy_tokens_are_redacted() {
    for secret in [
        "Zx8vQ2mN4pL7rT1wK9sB3dF6hJ0gY5cA",
        "k3j9x0q2m8v7n1b5z4l6p0w2r8t3y7u1",
        "Q7XK2M9PZ4RW8LT3VN6BJ1HD5FC0GS2Y",
        "UvImZaYMEtKJGF2VDuiBNgkWb2sRPReNbA/TkB/y",
        "Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7Ac0Df3Gi6Lo9",
    ] {
        assert_redacts(
            &format!("temporary credential {secret} for the load test"),
            secret,
            SecretKind::HighEntropy,
        );
    }
    // Base64 padding goes with the token.
    let r = check("value c2VjcmV0LXZhbHVlLTEyMzQ1Njc4OTAK== ok");
    assert_eq!(r.text, "value [REDACTED:high-entropy] ok");
}

#[test]
fn high_entropy_segment_of_a_path_is_redacted_alone() {
    let r = check(
        "download https://files.example.com/share/Zx8vQ2mN4pL7rT1wK9sB3dF6hJ0gY5cA/report.pdf",
    );
    assert_eq!(
        r.text,
        "download https://files.example.com/share/[REDACTED:high-entropy]/report.pdf"
    );
}

#[test]
fn identifiers_with_digits_are_not_high_entropy() {
    for text in [
        "test_http2_connection_reuse_with_tls13",
        "testOAuth2TokenRefreshWithPKCEVerifier2",
        "S3BucketReplicationConfigV2",
        "useOAuth2CallbackWithPKCE",
        "base64EncodedSha256Digest",
        "TestParseRFC3339WithNanos",
        "handle_v2_webhook_signature_verification",
        "x86_64-unknown-linux-gnu",
        "aarch64-apple-darwin-2024",
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
        "aws_lc_0_47_0_X509_STORE_set_default_paths",
        "src/v2/handlers/oauth2_callback_handler.py",
        "01HV3K8Z9QW7X2Y4N6M5P0R1S3",
        "sha256:3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a",
        "0xdd37a898_26bf_467a_9ce5_ccf3fb11371e",
        "0x9E37_79B9_7F4A_7C15u64",
        "DXGI_FORMAT_A4B4G4R4_UNORM",
        "ID3D12DeviceRemovedExtendedData2_Impl",
    ] {
        assert_untouched(text);
    }
}

// --- false positives ----------------------------------------------------------------------

#[test]
fn code_identifiers_and_paths_survive() {
    for text in [
        "select_related",
        "test_select_related_prefetch_objects_with_filter",
        "src/auth/token_service.py",
        "django/db/models/query.py::QuerySet.select_related",
        "useCallbackWithDependencies",
        "src/auth/token.py is security-critical; every change needs a second reviewer",
        "Prefer select_related over prefetch_related in QuerySet.select_related callers \
         (see tests/queries/test_select_related_prefetch_objects_with_filter.py).",
        "crate::secrets::redact",
        "TokenService.refreshAccessToken",
        "PASSWORD_HASHERS",
        "AUTH_PASSWORD_VALIDATORS",
    ] {
        assert_untouched(text);
    }
}

#[test]
fn commit_ids_uuids_and_versions_survive() {
    for text in [
        "Fixed in a3f9c2e.",
        "Reverted by 9fceb02d0ae598e95dc970b74767f19372d61af8 last week",
        "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
        "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "request id 123e4567-e89b-12d3-a456-426614174000",
        "550E8400-E29B-41D4-A716-446655440000",
        "upgrade to 4.2.11, then 5.0.0-rc.1+build.20240101",
        "v1.2.3-beta.4",
    ] {
        assert_untouched(text);
    }
}

#[test]
fn urls_emails_mentions_and_refs_survive() {
    for text in [
        "https://github.com/org/repo/pull/42",
        "postgres://db.internal:5432/prod",
        "https://github.com/rust-lang/regex/blob/c79c40a39ebc4ffdc9b886e34806b9085583b769/src/lib.rs",
        "https://github.com/org/repo/commit/9fceb02d0ae598e95dc970b74767f19372d61af8",
        "https://example.com:8443/api/v2/items?page=2&sort=desc",
        "ssh://git@github.com/org/repo.git",
        "git@github.com:org/repo.git",
        "alice@example.com",
        "ping @alice and @bob-the-reviewer",
        "see #1234 and org/repo#567",
        "https://user-images.githubusercontent.com/1234567/123e4567-e89b-12d3-a456-426614174000.png",
    ] {
        assert_untouched(text);
    }
}

#[test]
fn plain_english_about_secrets_survives() {
    for text in [
        "rotate the API key when a developer leaves",
        "never log the password",
        "Tokens are refreshed by the token service; the secret lives in Vault.",
        "The access key and the secret key are injected by the CI runner.",
        "Use a bearer token, not basic auth, for service-to-service calls.",
        "Private keys must never be committed; use the KMS instead.",
        "password reset emails go through the notifications queue",
        "The JWT secret is loaded at startup from SECRETS_PATH.",
    ] {
        assert_untouched(text);
    }
}

#[test]
fn non_ascii_text_survives() {
    for text in [
        "Ne jamais journaliser le mot de passe ; la clé est dans le coffre-fort.",
        "パスワードをログに出力しないこと。トークンは毎日ローテーションする。",
        "Пароль хранится в Vault, токен обновляется каждый час.",
        "Der Schlüssel für überprüfung_größe_v2 liegt in src/prüfung.rs 🙂",
        "密钥 token: 不要提交",
    ] {
        assert_untouched(text);
    }
    // …and a secret inside non-ASCII text is still found, the rest kept.
    let key = "AKIAIOSFODNN7EXAMPLE";
    assert_redacts(
        &format!("clé AWS : {key} — à révoquer 🙂"),
        key,
        SecretKind::AwsAccessKey,
    );
}

// --- the whole ----------------------------------------------------------------------------

#[test]
fn several_secrets_in_one_text() {
    let token = github_token();
    let text = format!(
        "Deploy notes: the bot uses {token}; the DSN is \
         postgres://svc:pa55w0rd!@db/prod and AWS key AKIAIOSFODNN7EXAMPLE. \
         Also password=Sup3rS3cret! and token {token} again."
    );
    let r = check(&text);
    assert_eq!(
        r.text,
        "Deploy notes: the bot uses [REDACTED:github-token]; the DSN is \
         postgres://svc:[REDACTED:url-password]@db/prod and AWS key \
         [REDACTED:aws-access-key]. Also password=[REDACTED:assigned-secret] and token \
         [REDACTED:github-token] again."
    );
    // Sorted (declaration order) and deduplicated.
    assert_eq!(
        r.kinds,
        vec![
            SecretKind::AwsAccessKey,
            SecretKind::GithubToken,
            SecretKind::UrlPassword,
            SecretKind::AssignedSecret,
        ]
    );
}

#[test]
fn adjacent_secrets_are_all_redacted() {
    // A random tail glued to a key id is found on the second pass.
    let r = check(&format!("AKIAIOSFODNN7EXAMPLE/{}", random_secret()));
    assert_eq!(r.text, "[REDACTED:aws-access-key]/[REDACTED:high-entropy]");
    assert_eq!(
        r.kinds,
        vec![SecretKind::AwsAccessKey, SecretKind::HighEntropy]
    );
}

#[test]
fn surrounding_text_and_whitespace_are_preserved() {
    let token = github_token();
    let text = format!("  line one\n\tuses {token}\r\nline three  ");
    let r = check(&text);
    assert_eq!(
        r.text,
        "  line one\n\tuses [REDACTED:github-token]\r\nline three  "
    );
}

#[test]
fn redaction_is_idempotent() {
    let token = github_token();
    let texts = [
        format!("{token} {}", jwt()),
        "postgres://app:s3cr3t-pw@db.internal/prod".to_string(),
        "password=Tr0ub4dor&3x and api_key: \"abc123xyz\"".to_string(),
        format!("aws_secret_access_key={}", aws_secret_example()),
        "-----BEGIN PRIVATE KEY-----\nabc".to_string(),
        "Authorization: Basic YWxpY2U6d29uZGVybGFuZA==".to_string(),
        "already [REDACTED:github-token] and password: \"[REDACTED:assigned-secret]\"".to_string(),
    ];
    for text in &texts {
        let once = redact(text);
        assert!(!once.kinds.is_empty() || text.starts_with("already"));
        let twice = redact(&once.text);
        assert_eq!(twice.text, once.text);
        assert!(twice.kinds.is_empty());
    }
}

#[test]
fn empty_and_tiny_texts() {
    assert_untouched("");
    assert_untouched(" ");
    assert_untouched("=");
    assert_untouched("://:@");
    assert_untouched("password=");
    assert_untouched("[REDACTED:");
}

#[test]
fn kind_names_match_serde() {
    use SecretKind::*;
    for kind in [
        AwsAccessKey,
        AwsSecretKey,
        GithubToken,
        GitlabToken,
        SlackToken,
        SlackWebhook,
        Jwt,
        PrivateKey,
        UrlPassword,
        AssignedSecret,
        StripeKey,
        GoogleApiKey,
        OpenaiKey,
        AnthropicKey,
        HighEntropy,
        BearerToken,
        BasicAuth,
        NpmToken,
        PypiToken,
        HuggingfaceToken,
        SendgridKey,
        TwilioKey,
        DiscordToken,
        TelegramToken,
        ProviderToken,
        CommandPassword,
        StatedSecret,
    ] {
        let json = serde_json::to_string(&kind).unwrap();
        assert_eq!(json, format!("\"{}\"", kind.as_str()));
        assert_eq!(kind.to_string(), kind.as_str());
    }
}

#[test]
fn ordinary_64kb_text_is_fast_and_untouched() {
    let paragraph = "Review note: QuerySet.select_related in django/db/models/query.py \
        must not be combined with prefetch_related for reverse FKs (see #1234, fixed in \
        a3f9c2e and 9fceb02d0ae598e95dc970b74767f19372d61af8). @alice owns \
        src/auth/token_service.py; rotate the API key when a developer leaves and never \
        log the password. Upgrade to 4.2.11; request 123e4567-e89b-12d3-a456-426614174000 \
        failed on https://github.com/org/repo/pull/42 against postgres://db.internal:5432/prod. \
        useCallbackWithDependencies and test_select_related_prefetch_objects_with_filter \
        cover it. token: refresh tokens expire. Ünïcödé テキスト too.\n";
    let mut text = String::new();
    while text.len() < 64 * 1024 {
        text.push_str(paragraph);
    }
    let _ = redact("warm up the regexes");
    let started = std::time::Instant::now();
    let r = redact(&text);
    let elapsed = started.elapsed();
    eprintln!("redacting {} bytes took {elapsed:?}", text.len());
    assert!(r.kinds.is_empty(), "{:?}", r.kinds);
    assert_eq!(r.text, text);
}

#[test]
fn helpers() {
    assert_eq!(
        decode_base64("YWxpY2U6d29uZGVybGFuZA==").unwrap(),
        b"alice:wonderland"
    );
    assert_eq!(decode_base64("YQ").unwrap(), b"a");
    assert!(decode_base64("a!b=").is_none());
    assert!(is_version("1.2.3") && is_version("v2.0.1-beta.1") && !is_version("a.b"));
    assert!(is_code_path("settings.SECRET_KEY") && is_code_path("a::b::C"));
    assert!(!is_code_path("s3cr3t!"));
    assert!(is_word_identifier("oauth2_refresh") && !is_word_identifier("cl100k_base"));
    assert!(is_env_var_name("DB_PASSWORD") && !is_env_var_name("Hunter22"));
    assert!(shannon_entropy(b"aaaa") < 0.01);
    assert!((shannon_entropy(b"abcd") - 2.0).abs() < 1e-9);
}
mod properties {
    use super::*;
    use proptest::prelude::*;

    /// Pieces of secret syntax, so arbitrary text reaches the detectors' edges.
    const SYNTAX: &[&str] = &[
        "=",
        ": ",
        ";",
        "@",
        "/",
        "://",
        "\"",
        "'",
        "`",
        "\n",
        " ",
        "{",
        "}",
        "?",
        "#",
        "&",
        "-",
        "_",
        "export ",
        "DB_PASSWORD",
        "password",
        "Password=",
        "AccountKey=",
        "api_key",
        "token",
        "TOKEN",
        "postgres://app:",
        "redis://:",
        "ghp_",
        "-----BEGIN PRIVATE KEY-----",
        "-----END PRIVATE KEY-----",
        "xoxe-1-",
        "eyJhbGciOiJIUzI1NiJ9.",
        "[REDACTED:jwt]",
        "[REDACTED:",
        "AKIA",
        "sha512-",
        "h1:",
        "0123456789abcdef0123456789abcdef",
        "Zx8vQ2mN4pL7rT1wK9sB3dF6hJ0gY5cA",
        "é",
        "🙂",
    ];

    /// Arbitrary text mixed with secret syntax, up to `pieces` pieces.
    fn noisy(pieces: usize) -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            "\\PC{0,12}",
            prop::sample::select(SYNTAX).prop_map(str::to_string),
        ];
        prop::collection::vec(piece, 0..pieces).prop_map(|p| p.concat())
    }

    fn assert_fixed_point(text: &str) -> Result<(), TestCaseError> {
        let once = redact(text);
        let twice = redact(&once.text);
        prop_assert_eq!(&twice.text, &once.text);
        prop_assert!(twice.kinds.is_empty(), "{:?}", twice.kinds);
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn redaction_of_arbitrary_text_is_a_fixed_point(text in noisy(60)) {
            assert_fixed_point(&text)?;
        }

        #[test]
        fn redaction_of_arbitrary_unicode_is_a_fixed_point(text in "\\PC{0,400}") {
            assert_fixed_point(&text)?;
        }

        #[test]
        fn planted_secrets_never_survive(
            before in noisy(30),
            case in 0..SECRETS.len(),
            after in noisy(30),
        ) {
            let (line, secret) = plant(&SECRETS[case]);
            let out = redact(&format!("{before}\n{line}\n{after}")).text;
            for piece in secret_lines(&secret) {
                prop_assert!(!out.contains(piece), "{piece:?} survived in {out:?}");
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(16))]

        #[test]
        fn redaction_of_long_text_is_a_fixed_point(text in noisy(3_000)) {
            assert_fixed_point(&text)?;
        }
    }
}
