//! Secrets stated in prose: a password, passphrase, secret, token, key or credentials named,
//! then given ("the password is hunter2", "the root passphrase was 'correct horse'",
//! "password: hunter2", "log in with password Adm1n!", "set the token to T0k3n-2024").
//!
//! The noun is followed by a connective (`is`, `was`, `are`, `were`, optionally with `now`,
//! `still`, `set to`, …; `:`; `=`), or comes after a verb that hands it over (`use`, `with`,
//! `enter`, `pass`, … `the admin password X`; `set`, `change`, `reset`, … `the token to X`).
//! What follows must look like a value, so prose about secrets survives: "the password is
//! stored in Vault", "the token is rotated daily", "token: refresh tokens expire",
//! "the secret is base64-encoded", "the token is signed with HS256". See [`is_stated_value`].
//!
//! Known misses, by design: a value that is a plain lower-case word ("the password is
//! letmein") reads as English and is left, as is a PascalCase word after `:` (`token:
//! TokenV2` is a type annotation in code).

use std::ops::Range;
use std::sync::LazyLock;

use regex::Regex;

use super::{
    has_digit_or_symbol, is_code_path, is_email, is_env_var_name, is_placeholder, is_snake_words,
    is_version, is_word_identifier, value_at,
};

/// What names a secret: an identifier may lead up to it (`DB_PASSWORD`, `root-password`), as
/// long as the noun ends it (`password_hash`, `max_tokens` do not name a secret).
const NOUN: &str = r"(?:[a-z0-9]+[_.-])*(?:(?:api|access|secret|auth|license|master|encryption|signing|private|client|app)[ _-]?key|pass(?:word|phrase|wd)|pass[ ]phrase|pwd|secret|token|credentials)(?-u:\b)";

/// A noun, then a connective: the value starts where the match ends.
static NAMED: LazyLock<Regex> = LazyLock::new(|| {
    let pattern = format!(
        r"(?i)(?-u:\b){NOUN}(?:'s)?(?:[ \t]+(?:for|of|on|in|at)[ \t]+(?:(?:the|a|an|our|my|your|its|their)[ \t]+)?[\w.@-]+(?:[ \t]+[\w.@-]+)?)?(?:[ \t]+(?:is|was|are|were)(?:[ \t]+(?:now|still|currently|just|literally|simply|always|temporarily|actually|(?:set|changed|reset|updated|rotated)[ \t]+to))*[ \t]+|[ \t]*(:|=)[ \t]*|[ \t]+(?:set|changed|reset|updated|rotated)[ \t]+to[ \t]+)"
    );
    Regex::new(&pattern).expect("valid stated-secret pattern")
});

/// A verb handing a secret over, then the noun: the value starts where the match ends.
static HANDED: LazyLock<Regex> = LazyLock::new(|| {
    let pattern = format!(
        r"(?i)(?-u:\b)(?:(?:use|using|with|via|pass|passing|enter|type|try|supply|provide)[ \t]+(?:(?:the|a|an|my|our|this|that)[ \t]+)?(?:[\w-]+[ \t]+)?{NOUN}[ \t]+|(?:set|change|changed|reset|rotate|rotated|update|updated)[ \t]+(?:(?:the|a|an|my|our|its|their)[ \t]+)?(?:[\w-]+[ \t]+)?{NOUN}[ \t]+to[ \t]+)"
    );
    Regex::new(&pattern).expect("valid handed-secret pattern")
});

/// How a value was introduced: code-like connectives (`:`, `=`) ask more of it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Connective {
    Prose,
    Colon,
    Equals,
}

/// The values stated after a secret's name in `text`.
pub(super) fn stated_secrets(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    for caps in NAMED.captures_iter(text) {
        let connective = match caps.get(1).map(|m| m.as_str()) {
            Some(":") => Connective::Colon,
            Some(_) => Connective::Equals,
            None => Connective::Prose,
        };
        let end = caps.get(0).map_or(0, |m| m.end());
        if connective == Connective::Equals && text[end..].starts_with('=') {
            continue;
        }
        out.extend(value_after(text, end, connective));
    }
    for m in HANDED.find_iter(text) {
        out.extend(value_after(text, m.end(), Connective::Prose));
    }
    out
}

/// The value starting at `at`, if it looks like one.
fn value_after(text: &str, at: usize, connective: Connective) -> Option<Range<usize>> {
    let (value, end) = value_at(text, at, &['"', '\'', '`'], |c| {
        c.is_whitespace() || matches!(c, '"' | '\'' | '`')
    });
    let quoted = end > value.end;
    let v = &text[value.clone()];
    if quoted {
        // Words in quotes are a passphrase in prose; after `:` or `=` they are a message.
        let words_allowed = connective == Connective::Prose || !v.chars().any(char::is_whitespace);
        let ok = !v.trim().is_empty()
            && words_allowed
            && !is_placeholder(v)
            && !is_env_var_name(v)
            && !is_snake_words(v)
            && !is_code_path(v)
            && !v.contains(['(', '[', '{', '<'])
            && !v.contains("::");
        return ok.then_some(value);
    }
    let trimmed = v.trim_end_matches(['.', ',', ';', ':', ')']);
    let value = value.start..value.start + trimmed.len();
    is_stated_value(trimmed, connective).then_some(value)
}

/// Whether a bare word after a secret's name is its value: at least six characters, with a
/// digit or a symbol (a trailing `!` or `?` does not count), and none of what prose and code
/// put there — a template or placeholder, code (a call, index, generic, path or reference),
/// a URL, version, e-mail address, file name or path, issue key, commit id or digest,
/// identifier (`oauth2_refresh`, `OAuth2Token`), a technical word with a number (`sha256`,
/// `base64-encoded`, `HS256`) or a measure (`3600s`, `256-bit`).
fn is_stated_value(v: &str, connective: Connective) -> bool {
    let core = v.trim_end_matches(['!', '?']);
    (6..=200).contains(&v.chars().count())
        && !v.starts_with([
            '=', ':', '.', '/', '~', '\\', '$', '%', '@', '&', '*', '(', '[', '{', '<', '-', '#',
        ])
        && !v.contains(['(', '[', '{', '<'])
        && !v.contains("://")
        && !v.contains("::")
        && has_digit_or_symbol(core)
        && !is_placeholder(v)
        && !is_env_var_name(v)
        && !is_code_path(v)
        && !is_version(v)
        && !is_email(v)
        && !is_word_identifier(v)
        && !is_lower_snake(v)
        && !is_path_or_file(v)
        && !is_issue_key(v)
        && !is_commit_like(v)
        && !is_technical(v)
        && !is_camel_identifier(v)
        && !(connective == Connective::Colon && is_pascal_word(v))
}

/// `token_v2`, `pw_hash2`: a lower-case snake_case identifier.
fn is_lower_snake(v: &str) -> bool {
    v.contains('_')
        && v.starts_with(|c: char| c.is_ascii_lowercase())
        && v.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// `src/config/prod2.yaml`, `admin/ops2`, `secrets2.env`: a path or a file name.
fn is_path_or_file(v: &str) -> bool {
    let path_chars = v
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'.' | b'_' | b'-'));
    let file = v.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && (1..=5).contains(&ext.len())
            && ext.bytes().all(|b| b.is_ascii_lowercase())
    });
    path_chars && (v.contains('/') || file)
}

/// `PROJ-1234`, `GH-42`: an issue key.
fn is_issue_key(v: &str) -> bool {
    v.split_once('-').is_some_and(|(project, number)| {
        project.len() >= 2
            && project
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
            && !number.is_empty()
            && number.bytes().all(|b| b.is_ascii_digit())
    })
}

/// A commit id (7 to 12 hex digits, or 40) or a SHA-256 digest (64).
fn is_commit_like(v: &str) -> bool {
    v.bytes().all(|b| b.is_ascii_hexdigit()) && matches!(v.len(), 7..=12 | 40 | 64)
}

/// Bit and byte widths that follow an algorithm's name (`sha256`, `base64`, `int32`).
const WIDTHS: &[&str] = &[
    "8", "16", "32", "64", "128", "256", "384", "512", "1024", "2048", "3072", "4096",
];

/// Technical words with a number that are not a width.
const TECHNICAL: &[&str] = &[
    "md5",
    "sha1",
    "sha3",
    "oauth2",
    "oauth1",
    "http2",
    "http3",
    "ipv4",
    "ipv6",
    "x509",
    "pbkdf2",
    "argon2",
    "argon2i",
    "argon2d",
    "argon2id",
    "ed25519",
    "x25519",
    "ed448",
    "curve25519",
    "p256",
    "tls12",
    "tls13",
    "s3",
    "ec2",
    "k8s",
    "i18n",
    "l10n",
    "a11y",
    "utf8",
    "2fa",
    "mfa2",
    "totp6",
    "v1",
    "v2",
    "v3",
    "v4",
];

/// A technical word or measure, alone or hyphenated with plain words: `sha256`, `HS256`,
/// `ed25519`, `3600s`, `256-bit`, `base64-encoded`, `utf-8`, `aes-256-gcm`.
fn is_technical(v: &str) -> bool {
    let lower = v.to_ascii_lowercase();
    let technical = |p: &str| {
        TECHNICAL.contains(&p)
            || is_measure(p)
            || (p.starts_with(|c: char| c.is_ascii_lowercase())
                && WIDTHS.contains(&p.trim_start_matches(|c: char| c.is_ascii_lowercase())))
    };
    let pieces: Vec<&str> = lower.split(['-', '_']).collect();
    if pieces.len() == 1 {
        return technical(&lower);
    }
    // `Blue-Horse-7` is a passphrase: technical runs are lower-case or acronyms.
    let capitalised = v.split(['-', '_']).any(|p| {
        p.starts_with(|c: char| c.is_ascii_uppercase()) && p.bytes().any(|b| b.is_ascii_lowercase())
    });
    if capitalised {
        return false;
    }
    let (numbered, words): (Vec<&str>, Vec<&str>) = pieces
        .iter()
        .partition(|p| p.bytes().any(|b| b.is_ascii_digit()));
    let number = |p: &str| p.len() <= 4 && p.bytes().all(|b| b.is_ascii_digit());
    numbered.len() == 1
        && (technical(numbered[0]) || number(numbered[0]))
        && words
            .iter()
            .all(|w| !w.is_empty() && w.bytes().all(|b| b.is_ascii_lowercase()))
}

/// `3600s`, `12chars`, `90days`, `32bytes`: a number and a unit.
fn is_measure(p: &str) -> bool {
    let letters = p.trim_start_matches(|c: char| c.is_ascii_digit());
    letters.len() < p.len()
        && !letters.is_empty()
        && letters.len() <= 8
        && letters.bytes().all(|b| b.is_ascii_lowercase())
}

/// `OAuth2Token`, `S3BucketPolicy`: two or more capitalised words (three letters or more).
fn is_camel_identifier(v: &str) -> bool {
    let bytes = v.as_bytes();
    if !bytes.iter().all(u8::is_ascii_alphanumeric) {
        return false;
    }
    let mut words = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_uppercase() {
            let run = bytes[i + 1..]
                .iter()
                .take_while(|b| b.is_ascii_lowercase())
                .count();
            if run >= 2 {
                words += 1;
            }
            i += run + 1;
        } else {
            i += 1;
        }
    }
    words >= 2
}

/// `TokenV2`, `Secret2`: a capitalised word with letters and digits only (a type name after
/// `:`).
fn is_pascal_word(v: &str) -> bool {
    v.starts_with(|c: char| c.is_ascii_uppercase()) && v.bytes().all(|b| b.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::super::{SecretKind, redact};

    const M: &str = "[REDACTED:stated-secret]";

    #[test]
    fn stated_passwords_are_redacted() {
        for (text, expected) in [
            ("the password is hunter2", format!("the password is {M}")),
            (
                "The root password is still Tr0ub4dor&3.",
                format!("The root password is still {M}."),
            ),
            ("password: hunter2", format!("password: {M}")),
            (
                "the passphrase was 'correct horse'",
                format!("the passphrase was '{M}'"),
            ),
            (
                "use token abc123XYZ to call it",
                format!("use token {M} to call it"),
            ),
            (
                "log in with password Adm1n! first",
                format!("log in with password {M} first"),
            ),
            (
                "set the staging token to T0k3n-2024",
                format!("set the staging token to {M}"),
            ),
            (
                "the password for the staging db is s3cr3t!",
                format!("the password for the staging db is {M}"),
            ),
            (
                "we found password=hunter2 in an old log",
                format!("we found password={M} in an old log"),
            ),
            (
                "the API key is 12345-abcde-67890",
                format!("the API key is {M}"),
            ),
            (
                "the client secret is \"x y z 9\"",
                format!("the client secret is \"{M}\""),
            ),
            (
                "credentials are admin:hunter2",
                format!("credentials are {M}"),
            ),
            ("my password is 123456", format!("my password is {M}")),
            ("DB password is Summer2024", format!("DB password is {M}")),
            (
                "The admin passphrase is now Blue-Horse-7",
                format!("The admin passphrase is now {M}"),
            ),
        ] {
            let r = redact(text);
            assert_eq!(r.text, expected, "{text:?}");
            assert_eq!(r.kinds, vec![SecretKind::StatedSecret], "{text:?}");
        }
    }

    #[test]
    fn prose_about_secrets_survives() {
        for text in [
            "the password is stored in Vault",
            "the token is rotated daily",
            "The password is required.",
            "the token is expired!",
            "the secret is base64-encoded",
            "the token is signed with HS256",
            "the secret is 256-bit",
            "the token is valid for 3600s",
            "the password is at least 12chars long",
            "the password is hashed with argon2id",
            "the token is a JWT",
            "the api key is in src/config/prod2.yaml",
            "the token fix is a3f9c2e",
            "the token rotation landed in 9fceb02d0ae598e95dc970b74767f19372d61af8",
            "the secret is v1.2.3-rc1",
            "the token is OAuth2Token",
            "the password is PROJ-1234's problem",
            "token: TokenV2",
            "password: Option<String>",
            "token: u32",
            "max_tokens=128000",
            "token_count = 3",
            "with token authentication enabled",
            "use the token service, not the password",
            "set the password to expire after 90 days",
            "the password is the user's email",
            "the token is `refresh_token`",
            "the secret is `SECRET_KEY`",
            "the error says token: \"expired or invalid\"",
            "passwords are hashed; tokens are random",
            "the password is changed by the user2 account",
            "the api key is read from API_KEY2 at startup",
        ] {
            let r = redact(text);
            assert_eq!(r.text, text, "false positive: {:?}", r.kinds);
        }
    }
}
