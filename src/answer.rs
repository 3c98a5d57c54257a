//! What every served answer is: a structured body for programs, compact Markdown for the
//! model, and the token budget both were written within — with the budget's rules (the
//! default, the cap, the floor) and the one way an answer ends (what was left out, then the
//! notes, always inside the budget; a warning the reader must see first leads instead).

use std::ops::{Deref, DerefMut};

use serde::Serialize;

use crate::tokens::{self, Budget};

/// Smallest budget an answer can be useful in.
pub(crate) const MIN_TOKENS: usize = 200;
/// Largest budget any answer takes.
pub const MAX_TOKENS: usize = 16_000;

/// A token budget that was asked for and could not be honoured.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("max_tokens must be at least {MIN_TOKENS} (got {0})")]
pub struct BudgetTooSmall(pub usize);

/// The budget to use: the default when none is asked, capped at [`MAX_TOKENS`] (with a note
/// saying so).
pub fn budget(
    asked: Option<usize>,
    default: usize,
) -> Result<(usize, Option<String>), BudgetTooSmall> {
    match asked {
        None => Ok((default, None)),
        Some(n) if n < MIN_TOKENS => Err(BudgetTooSmall(n)),
        Some(n) if n > MAX_TOKENS => Ok((
            MAX_TOKENS,
            Some(format!("max_tokens {n} capped at {MAX_TOKENS}")),
        )),
        Some(n) => Ok((n, None)),
    }
}

/// A served answer: its body (flattened into the JSON), the Markdown text and its budget.
#[derive(Debug, Clone, Serialize)]
pub struct Answer<T> {
    #[serde(flatten)]
    pub body: T,
    /// The Markdown answer.
    #[serde(skip)]
    pub text: String,
    /// Tokens of the text answer.
    pub tokens: usize,
    pub max_tokens: usize,
    /// Items left out to stay within the budget.
    pub truncated: usize,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// The body's fields read through the answer: `answer.files` for `answer.body.files`.
impl<T> Deref for Answer<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.body
    }
}

/// How an answer names what its budget left out: `truncated: {n} {unit} left out to fit
/// {max_tokens} tokens{advice}`.
#[derive(Debug, Clone, Copy)]
pub struct LeftOut {
    /// What was counted: `items`, `lines`.
    pub unit: &'static str,
    /// What the caller can do about it, written right after the count.
    pub advice: &'static str,
}

/// An answer's text while it is written: lines are added while they fit, and the notes close
/// it. Room is kept for the notes known up front and for those added at the end, so the
/// finished text stays within `max_tokens`.
#[derive(Debug)]
pub struct Page {
    lines: Budget,
    max_tokens: usize,
    /// Notes written as they were given, at the top of the answer.
    leading: Vec<String>,
    notes: Vec<String>,
}

/// Tokens kept for notes added after the page was opened (the truncation note, a cut source).
const LATE_NOTES: usize = 80;

impl Page {
    /// A page of `max_tokens`, closed by `notes` and any added later.
    pub fn new(max_tokens: usize, notes: Vec<String>) -> Page {
        let reserved = LATE_NOTES + notes.iter().map(|n| tokens::count(n) + 4).sum::<usize>();
        Page {
            lines: Budget::new(max_tokens.saturating_sub(reserved)),
            max_tokens,
            leading: Vec::new(),
            notes,
        }
    }

    /// Adds a note to the end of the answer.
    pub fn note(&mut self, note: impl Into<String>) {
        self.notes.push(note.into());
    }

    /// Writes a note on the page now, before what follows (a warning that must be read
    /// first); it comes first among the answer's notes and is not written again at the end.
    pub fn lead(&mut self, note: impl Into<String>) {
        let note = note.into();
        self.lines.force(format!("_{note}_"));
        self.leading.push(note);
    }

    /// Ends the answer: says what the budget left out (when anything was), writes the notes
    /// last, and wraps `body` with the text.
    pub fn finish<T>(self, body: T, left_out: LeftOut) -> Answer<T> {
        let Page {
            mut lines,
            max_tokens,
            leading,
            mut notes,
        } = self;
        let truncated = lines.dropped;
        if truncated > 0 {
            notes.push(format!(
                "truncated: {truncated} {} left out to fit {max_tokens} tokens{}",
                left_out.unit, left_out.advice
            ));
        }
        for note in &notes {
            lines.force(format!("_{note}_"));
        }
        notes.splice(0..0, leading);
        Answer {
            body,
            tokens: lines.used(),
            text: lines.into_text(),
            max_tokens,
            truncated,
            notes,
        }
    }
}

/// The page's lines: `push`, `push_until`, `force` and the running totals of [`Budget`].
impl Deref for Page {
    type Target = Budget;

    fn deref(&self) -> &Budget {
        &self.lines
    }
}

impl DerefMut for Page {
    fn deref_mut(&mut self) -> &mut Budget {
        &mut self.lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LEFT_OUT: LeftOut = LeftOut {
        unit: "lines",
        advice: " (raise max_tokens)",
    };

    #[derive(Serialize)]
    struct Body {
        name: &'static str,
    }

    #[test]
    fn budgets_default_cap_and_refuse() {
        assert_eq!(budget(None, 4_000), Ok((4_000, None)));
        assert_eq!(budget(Some(1_000), 4_000), Ok((1_000, None)));
        assert_eq!(
            budget(Some(50_000), 4_000),
            Ok((
                MAX_TOKENS,
                Some("max_tokens 50000 capped at 16000".to_string())
            ))
        );
        assert_eq!(budget(Some(199), 4_000), Err(BudgetTooSmall(199)));
    }

    #[test]
    fn a_finished_page_notes_the_cut_and_stays_within_budget() {
        let mut page = Page::new(200, vec!["an early note".to_string()]);
        page.force("# heading");
        for i in 0..100 {
            page.push(format!("- line number {i} of a long list"));
        }
        page.note("a late note");
        let answer = page.finish(Body { name: "x" }, LEFT_OUT);
        assert!(answer.truncated > 0);
        assert!(answer.tokens <= 200, "{} tokens", answer.tokens);
        let last: Vec<&str> = answer.text.lines().rev().take(3).collect();
        assert_eq!(
            last,
            [
                format!(
                    "_truncated: {} lines left out to fit 200 tokens (raise max_tokens)_",
                    answer.truncated
                )
                .as_str(),
                "_a late note_",
                "_an early note_",
            ]
        );
    }

    #[test]
    fn a_leading_note_is_written_first_and_listed_first() {
        let mut page = Page::new(1_000, vec!["an early note".to_string()]);
        page.lead("read this first");
        page.force("# heading");
        page.note("a late note");
        let answer = page.finish(Body { name: "x" }, LEFT_OUT);
        assert_eq!(
            answer.text,
            "_read this first_\n# heading\n_an early note_\n_a late note_"
        );
        assert_eq!(
            answer.notes,
            ["read this first", "an early note", "a late note"]
        );
        let counted: usize = answer.text.lines().map(|l| tokens::count(l) + 1).sum();
        assert_eq!(answer.tokens, counted, "the leading note counts");
    }

    #[test]
    fn the_body_is_flattened_into_the_json() {
        let answer = Page::new(1_000, Vec::new()).finish(Body { name: "x" }, LEFT_OUT);
        assert_eq!(answer.truncated, 0);
        assert_eq!(answer.name, "x");
        assert_eq!(
            serde_json::to_string(&answer).unwrap(),
            r#"{"name":"x","tokens":0,"max_tokens":1000,"truncated":0}"#
        );
    }
}
