//! What a commit says of itself: whether it fixes something or takes a change back. Judged by
//! its subject line, words as words, and by git's `This reverts commit <sha>` line: a body that
//! mentions bugs ("this could lead to bugs") or a sentence that pins "a fixed sha" makes no fix.

use std::sync::LazyLock;

use regex::Regex;

/// Words before `fixed` that make it an adjective or a fix still to come (`with a fixed sha`,
/// `add fixed URL`, `until fixed`).
const BEFORE_FIXED: &[&str] = &[
    "a", "an", "the", "with", "to", "at", "of", "on", "for", "in", "into", "add", "adds", "added",
    "adding", "use", "uses", "using", "keep", "pin", "pins", "pinned", "until",
];

/// Words after `bug`, `crash` or `regression` that make it name a kind of thing
/// (`bug report template`, `regression tests`, `crash reporting`).
const AFTER_NOUN: &[&str] = &[
    "report",
    "reports",
    "reporting",
    "reporter",
    "template",
    "templates",
    "test",
    "tests",
    "testing",
    "tracker",
    "tracking",
    "bounty",
    "label",
    "labels",
    "form",
];

/// Whether a commit is a fix or a revert: its subject line speaks of a fix, bug, regression,
/// crash, hotfix or revert, or its message has git's `This reverts commit <sha>` line.
pub fn is_fix(message: &str) -> bool {
    reverted_commit(message).is_some() || subject_speaks_of_a_fix(subject(message))
}

/// The commit a revert names on git's `This reverts commit <sha>` line, lowercased.
pub fn reverted_commit(message: &str) -> Option<String> {
    static REVERTS: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?im)^\s*this reverts commit ([0-9a-f]{7,40})\b").expect("valid pattern")
    });
    REVERTS
        .captures(message)
        .map(|found| found[1].to_lowercase())
}

/// The first line of a message, trimmed.
fn subject(message: &str) -> &str {
    message.lines().next().unwrap_or_default().trim()
}

/// Whether a subject line has a word of a fix used as one.
fn subject_speaks_of_a_fix(subject: &str) -> bool {
    static WORDS: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?i)\b(fix(es|ed|ing)?|bug(fix(es)?|s)?|hotfix(es)?|revert(s|ed|ing)?|regressions?|crash(es|ed)?)\b",
        )
        .expect("valid pattern")
    });
    WORDS.find_iter(subject).any(|word| {
        let before = last_word(&subject[..word.start()]);
        let after = &subject[word.end()..];
        let next = first_word(after);
        match word.as_str().to_lowercase().as_str() {
            "fixed" => !(BEFORE_FIXED.contains(&before.as_str()) || after.starts_with('-')),
            "bug" | "bugs" | "crash" | "regression" | "regressions" => {
                !AFTER_NOUN.contains(&next.as_str())
            }
            _ => true,
        }
    })
}

/// The last word of a text, lowercased (empty when it ends in something else than a space
/// after a word).
fn last_word(text: &str) -> String {
    text.trim_end()
        .rsplit(|c: char| !c.is_alphanumeric() && c != '\'')
        .next()
        .unwrap_or_default()
        .to_lowercase()
}

/// The first word of a text after spaces, lowercased.
fn first_word(text: &str) -> String {
    text.trim_start()
        .split(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap_or_default()
        .to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixes_are_recognised_by_their_words() {
        for fix in [
            "Fix crash in dispatch",
            "Revert \"Add cache\"",
            "bugfix: off by one",
            "fix(deps): pin ajv",
            "GOV.UK Chat: fix CloudWatch metric names",
            "changed from 'warn' to 'warning' to fix crashloop errors",
            "Broken links fixed in docs",
            "Quickstart cURL example fixed",
            "Bug/1279 (#1280)",
            "Regression in the cart totals",
            "Import successful, revert commit.",
        ] {
            assert!(is_fix(fix), "{fix}");
        }
        for other in [
            "Add prefix support",
            "Refactor the suffixes",
            "Update module sources to specify the modules as from github with a fixed sha",
            "#1 add fixed CTP URL",
            "Use fixed-size buffers",
            "Commented out denylist control until fixed to stop blocking other changes",
            "Add a bug report template",
            "Add regression tests for the cart",
        ] {
            assert!(!is_fix(other), "{other}");
        }
    }

    #[test]
    fn the_subject_line_judges_and_the_body_only_reverts() {
        // alphagov/govuk-infrastructure's 2a3a1e8f and c6a4960c.
        let named = "Give metric IDs more meaningful names\n\nIt also helps with the `for_each` conditional. This could lead\nto bugs in future if the expression ends changing.\n";
        assert!(!is_fix(named));
        let archived = "Archive `github-trello-poster`, `fastly-exporter` and `markdown-toolbar-element`\n\nDescription:\n- Effectively reverts https://github.com/alphagov/govuk-infrastructure/pull/3246\n";
        assert!(!is_fix(archived));
        assert_eq!(reverted_commit(archived), None);
        let reverted =
            "Restore the cache\n\nThis reverts commit 1605BBB1584423b37c79c1a6da3b5048f0e4a977.\n";
        assert!(is_fix(reverted));
        assert_eq!(
            reverted_commit(reverted).as_deref(),
            Some("1605bbb1584423b37c79c1a6da3b5048f0e4a977")
        );
        assert_eq!(
            reverted_commit("Tidy\n\nSaying this reverts commit abcdef1 in passing."),
            None
        );
    }
}
