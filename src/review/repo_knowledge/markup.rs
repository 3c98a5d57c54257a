//! Markdown reduced to what it says: the text cairn quotes from a decision record or a guide
//! keeps its words and its code, not its markup (HTML comments and tags, image embeds, link
//! targets and reference definitions). Code spans and fenced blocks are kept as written.

use std::sync::LazyLock;

use regex::{Captures, Regex};

use crate::review::guidelines::fence;

/// Opens and closes a piece of code set aside while the markup around it is taken out.
const OPEN: char = '\u{E000}';
const CLOSE: char = '\u{E001}';

/// HTML elements that end a line or a block: taken out as a space, so words do not join.
const BLOCK_TAGS: &[&str] = &[
    "br",
    "p",
    "div",
    "li",
    "ul",
    "ol",
    "tr",
    "td",
    "th",
    "table",
    "thead",
    "tbody",
    "hr",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "blockquote",
    "details",
    "summary",
    "figure",
    "figcaption",
    "pre",
    "dl",
    "dt",
    "dd",
];

/// HTML elements kept inline (their tags go, their text stays).
const INLINE_TAGS: &[&str] = &[
    "a", "abbr", "b", "big", "center", "code", "del", "em", "font", "i", "img", "ins", "kbd",
    "mark", "picture", "s", "samp", "small", "source", "span", "strike", "strong", "sub", "sup",
    "u", "var", "video",
];

/// `text` without its HTML comments (outside code), each replaced by the line breaks it held,
/// so that lines keep their numbers.
pub fn without_comments(text: &str) -> String {
    static COMMENT: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?s)<!--.*?-->").expect("valid pattern"));
    let (masked, code) = set_code_aside(text);
    let kept = COMMENT.replace_all(&masked, |found: &Captures| {
        "\n".repeat(found[0].matches('\n').count())
    });
    put_code_back(&kept, &code)
}

/// `text` as prose: HTML comments, HTML tags, images and link reference definitions taken
/// out, a link as its text (`[the pool](../src/db.py)` → `the pool`), an autolink as its
/// address; code spans and fenced blocks as written.
pub fn prose(text: &str) -> String {
    static COMMENT: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?s)<!--.*?-->").expect("valid pattern"));
    // A target may hold one level of parentheses (`…/Foo_(bar)`).
    static IMAGE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"!\[[^\]]*\](?:\((?:[^()]|\([^()]*\))*\)|\[[^\]]*\])").expect("valid pattern")
    });
    static LINK: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"\[([^\]]*)\](?:\((?:[^()]|\([^()]*\))*\)|\[[^\]]*\])").expect("valid pattern")
    });
    static DEFINITION: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?m)^ {0,3}\[[^\]]+\]:[ \t]*\S+.*$").expect("valid pattern"));
    static AUTOLINK: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"<((?:https?|mailto):[^<>\s]+)>").expect("valid pattern"));
    static TAG: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"</?([A-Za-z][A-Za-z0-9]*)(?:\s[^<>]*)?/?>").expect("valid pattern")
    });
    let (masked, code) = set_code_aside(text);
    let text = COMMENT.replace_all(&masked, " ");
    let text = IMAGE.replace_all(&text, "");
    let text = LINK.replace_all(&text, "$1");
    let text = DEFINITION.replace_all(&text, "");
    let text = AUTOLINK.replace_all(&text, "$1");
    let text = TAG.replace_all(&text, |found: &Captures| {
        let name = found[1].to_lowercase();
        if BLOCK_TAGS.contains(&name.as_str()) {
            " ".to_string()
        } else if INLINE_TAGS.contains(&name.as_str()) {
            String::new()
        } else {
            found[0].to_string()
        }
    });
    put_code_back(&text, &code)
}

/// The text with each fenced block and code span replaced by a numbered mark, and the code in
/// the order of the marks. The marks' own characters are dropped from the text first.
fn set_code_aside(text: &str) -> (String, Vec<String>) {
    let text: String = text.chars().filter(|&c| c != OPEN && c != CLOSE).collect();
    let mut code = Vec::new();
    let mut out = String::with_capacity(text.len());
    let mut fenced: Option<(String, &'static str)> = None;
    let mut prose = String::new();
    for line in text.split_inclusive('\n') {
        match &mut fenced {
            Some((block, marker)) => {
                block.push_str(line);
                if fence(line) == Some(*marker) {
                    out.push_str(&mark(&mut code, std::mem::take(block)));
                    fenced = None;
                }
            }
            None => match fence(line) {
                Some(marker) => {
                    out.push_str(&spans_aside(&std::mem::take(&mut prose), &mut code));
                    fenced = Some((line.to_string(), marker));
                }
                None => prose.push_str(line),
            },
        }
    }
    out.push_str(&spans_aside(&prose, &mut code));
    if let Some((block, _)) = fenced {
        out.push_str(&mark(&mut code, block));
    }
    (out, code)
}

/// The text with each code span (a run of backticks to the next run as long, within a
/// paragraph) replaced by a mark.
fn spans_aside(text: &str, code: &mut Vec<String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find('`') {
        out.push_str(&rest[..start]);
        let after = &rest[start..];
        let ticks = after.len() - after.trim_start_matches('`').len();
        let body = &after[ticks..];
        match closing_ticks(body, ticks) {
            Some(end) => {
                out.push_str(&mark(code, after[..ticks + end + ticks].to_string()));
                rest = &body[end + ticks..];
            }
            None => {
                out.push_str(&after[..ticks]);
                rest = body;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Where a run of exactly `ticks` backticks starts in `body`, before a blank line.
fn closing_ticks(body: &str, ticks: usize) -> Option<usize> {
    let paragraph = body.find("\n\n").unwrap_or(body.len());
    let mut at = 0;
    while let Some(found) = body[at..paragraph].find('`') {
        let start = at + found;
        let run = body[start..].len() - body[start..].trim_start_matches('`').len();
        if run == ticks {
            return Some(start);
        }
        at = start + run;
    }
    None
}

fn mark(code: &mut Vec<String>, piece: String) -> String {
    code.push(piece);
    format!("{OPEN}{}{CLOSE}", code.len() - 1)
}

/// The text with each mark replaced by its code.
fn put_code_back(text: &str, code: &[String]) -> String {
    static MARK: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(&format!("{OPEN}([0-9]+){CLOSE}")).expect("valid pattern"));
    MARK.replace_all(text, |found: &Captures| {
        found[1]
            .parse::<usize>()
            .ok()
            .and_then(|at| code.get(at))
            .cloned()
            .unwrap_or_default()
    })
    .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The opening of alphagov/govuk-infrastructure's ADR 20's decision, and ADR 18's picture.
    const CROSSPLANE: &str = "<!-- vale RedHat.TermsSuggestions = NO -->\nWe have decided that we want to use [Crossplane](https://www.crossplane.io/) to create\na Kubernetes-flavoured API.<br/>See [the flow][flow] and <https://example.com/api>.\n![A flowchart of the existing CI/CD process](../../img/adr-0018-existing-cicd.png)\n\n[flow]: https://example.com/flow\n<!-- vale RedHat.TermsSuggestions = YES -->\n";

    #[test]
    fn prose_keeps_the_words_of_links_and_drops_the_rest_of_the_markup() {
        assert_eq!(
            super::super::one_line(&prose(CROSSPLANE)),
            "We have decided that we want to use Crossplane to create a Kubernetes-flavoured API. See the flow and https://example.com/api."
        );
        assert_eq!(
            prose(
                "Use [**`external-secrets`**](https://external-secrets.io) and <b>not</b> <Foo>."
            ),
            "Use **`external-secrets`** and not <Foo>."
        );
        assert_eq!(
            prose("[Foo](https://en.wikipedia.org/wiki/Foo_(bar)) [![badge](b.svg)](ci)"),
            "Foo "
        );
    }

    #[test]
    fn code_is_kept_as_written() {
        let text = "Keep `<!-- x -->` and `Vec<String>` and ``a ` [b](c)``.\n```html\n<!-- kept -->\n<br>\n```\nafter <!-- gone --> here\n";
        assert_eq!(
            prose(text),
            "Keep `<!-- x -->` and `Vec<String>` and ``a ` [b](c)``.\n```html\n<!-- kept -->\n<br>\n```\nafter   here\n"
        );
        // A lone backtick is text; the marks' own characters never survive.
        assert_eq!(prose("a ` b [c](d)\u{E000}"), "a ` b c");
    }

    #[test]
    fn comments_leave_their_line_breaks() {
        let text = "<!--\nUsing this template:\n-->\n# 0. Template\n`<!-- code -->`\n";
        assert_eq!(
            without_comments(text),
            "\n\n\n# 0. Template\n`<!-- code -->`\n"
        );
    }
}
