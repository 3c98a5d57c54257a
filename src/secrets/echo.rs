//! Values from the user in error messages: an error names the field and what is wrong, and
//! repeats the value only when it is a short plain word the scanner passes, so no error
//! message (printed, logged or handed back to an assistant) carries a secret.

use std::fmt;
use std::sync::LazyLock;

use regex::Regex;

/// Longest value an error repeats, in characters.
const MAX_SHOWN: usize = 64;

/// A value from the user, for an error message: see [`quoted`].
#[derive(Debug, Clone, Copy)]
pub struct Quoted<'a>(&'a str);

/// `value` for an error message: in backquotes when it is short (at most 64 characters),
/// one word (no whitespace, control character or backquote) and holds nothing the scanner
/// flags; otherwise `(value withheld)`.
pub fn quoted(value: &str) -> Quoted<'_> {
    Quoted(value)
}

impl Quoted<'_> {
    /// Whether the value itself is shown.
    pub(crate) fn is_shown(&self) -> bool {
        let v = self.0;
        !v.is_empty()
            && v.chars().count() <= MAX_SHOWN
            && !v
                .chars()
                .any(|c| c.is_whitespace() || c.is_control() || c == '`')
            && !super::contains_secret(v)
    }
}

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_shown() {
            write!(f, "`{}`", self.0)
        } else {
            f.write_str("(value withheld)")
        }
    }
}

/// Input that serde's messages quote: a string or character value, an unknown variant or
/// field name.
static QUOTED_INPUT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(?:(string|character) (?:"(?:[^"\\]|\\.)*"|`[^`]*`)|unknown (variant|field) `[^`]*`)"#,
    )
    .expect("valid serde message pattern")
});

/// The last object key before a position: `"name":`.
static KEY: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#""((?:[^"\\]|\\.)*)"[ \t]*:"#).expect("valid key pattern"));

/// A JSON error on `text`, described without the input it quotes: serde's message with every
/// quoted string, character, variant and field name taken out, the field whose value is
/// wrong (through [`quoted`]), and where. A message that would still hold a secret is cut to
/// its category.
pub fn json_error(text: &str, e: &serde_json::Error) -> String {
    let message = e.to_string();
    let message = match message.rfind(" at line ") {
        Some(at) if e.line() > 0 => &message[..at],
        _ => message.as_str(),
    };
    let mut message = QUOTED_INPUT
        .replace_all(message, |caps: &regex::Captures<'_>| {
            match (caps.get(1), caps.get(2)) {
                (Some(what), _) => format!("a {}", what.as_str()),
                (_, Some(what)) => format!("an unknown {}", what.as_str()),
                _ => String::new(),
            }
        })
        .into_owned();
    if super::contains_secret(&message) {
        message = match e.classify() {
            serde_json::error::Category::Syntax => "not valid JSON",
            serde_json::error::Category::Eof => "the JSON ends early",
            serde_json::error::Category::Io => "the JSON could not be read",
            serde_json::error::Category::Data => "a value does not fit its field",
        }
        .to_string();
    }
    let about_a_value = [
        "invalid type",
        "invalid value",
        "an unknown variant",
        "invalid length",
    ]
    .iter()
    .any(|start| message.starts_with(start));
    let field = about_a_value
        .then(|| field_at(text, e.line(), e.column()))
        .flatten();
    let place = if e.line() > 0 {
        format!(" at line {} column {}", e.line(), e.column())
    } else {
        String::new()
    };
    match field {
        Some(field) => format!("field {}: {message}{place}", quoted(&field)),
        None => format!("{message}{place}"),
    }
}

/// The key of the value that ends at `line` and `column` (both from 1, as serde_json counts
/// them), if one does: an error placed elsewhere (at the end of an object) names no field.
fn field_at(text: &str, line: usize, column: usize) -> Option<String> {
    let line = text.lines().nth(line.checked_sub(1)?)?;
    let mut end = column.min(line.len());
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    let caps = KEY.captures_iter(&line[..end]).last()?;
    let value = line[caps.get(0)?.end()..end].trim_start();
    let whole = match value.strip_prefix('"') {
        Some(string) => closing_quote(string) == Some(string.len() - 1),
        None => !value.is_empty() && !value.contains([',', '{', '}', '[', ']']),
    };
    whole
        .then(|| caps.get(1).map(|m| m.as_str().to_string()))
        .flatten()
}

/// Where the JSON string whose body starts `string` closes.
fn closing_quote(string: &str) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in string.char_indices() {
        match c {
            '\\' if !escaped => escaped = true,
            '"' if !escaped => return Some(i),
            _ => escaped = false,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_words_are_shown_and_secrets_withheld() {
        assert_eq!(quoted("decison").to_string(), "`decison`");
        assert_eq!(quoted("src/app.py").to_string(), "`src/app.py`");
        let token = ["gh", "p_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"].concat();
        for withheld in [
            token.as_str(),
            "the password is hunter2",
            "two words",
            "",
            "a`b",
            &"x".repeat(65),
        ] {
            assert_eq!(
                quoted(withheld).to_string(),
                "(value withheld)",
                "{withheld:?}"
            );
        }
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Record {
        kind: Kind,
        count: u32,
        note: Option<String>,
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum Kind {
        Decision,
    }

    fn error(text: &str) -> String {
        let e = serde_json::from_str::<Record>(text).unwrap_err();
        json_error(text, &e)
    }

    #[test]
    fn json_errors_name_the_field_and_never_the_value() {
        let token = ["gh", "p_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"].concat();
        let bad_variant = format!(r#"{{"kind": "{token}", "count": 1}}"#);
        let message = error(&bad_variant);
        assert!(!message.contains(&token), "{message}");
        assert!(
            message.starts_with("field `kind`: an unknown variant, expected"),
            "{message}"
        );
        assert!(message.contains("`decision`"), "{message}");
        let bad_type = r#"{"kind": "decision", "count": "the password is hunter2"}"#;
        let message = error(bad_type);
        assert!(!message.contains("hunter2"), "{message}");
        assert!(
            message.starts_with("field `count`: invalid type: a string, expected u32"),
            "{message}"
        );
        let bad_field = format!(r#"{{"kind": "decision", "count": 1, "{token}": 2}}"#);
        let message = error(&bad_field);
        assert!(!message.contains(&token), "{message}");
        assert!(
            message.starts_with("an unknown field, expected"),
            "{message}"
        );
        assert_eq!(
            error(r#"{"kind": "decision"}"#),
            "missing field `count` at line 1 column 20"
        );
        assert!(error("{\"kind\": ").starts_with("EOF while parsing"));
    }
}
