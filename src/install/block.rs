//! cairn's instruction block in a markdown file (CLAUDE.md, AGENTS.md, GEMINI.md), between
//! markers so that it can be updated and taken out without touching the rest.

use std::ops::Range;
use std::path::Path;

use super::Error;
use super::piece::Stripped;

pub(super) const BEGIN: &str = "<!-- cairn:begin -->";
pub(super) const END: &str = "<!-- cairn:end -->";

/// `text` with cairn's block holding `body`: replaced where it is, or appended after a blank
/// line.
pub(super) fn set_block(path: &Path, current: Option<&str>, body: &str) -> Result<String, Error> {
    let text = current.unwrap_or_default();
    let newline = newline_of(text);
    let block = render(body, newline);
    if let Some(range) = find(path, text)? {
        let mut updated = text.to_string();
        updated.replace_range(range, &block);
        return Ok(updated);
    }
    let separator = if text.is_empty() || text.ends_with(&newline.repeat(2)) {
        String::new()
    } else if text.ends_with('\n') {
        newline.to_string()
    } else {
        newline.repeat(2)
    };
    Ok(format!("{text}{separator}{block}"))
}

/// `text` without cairn's block and the blank line that set it apart.
pub(super) fn remove_block(path: &Path, text: &str) -> Result<Stripped, Error> {
    let Some(range) = find(path, text)? else {
        return Ok(stripped(text.to_string()));
    };
    let newline = newline_of(text);
    let blank = newline.repeat(2);
    let mut before = &text[..range.start];
    let mut after = &text[range.end..];
    if after.is_empty() {
        if before.ends_with(&blank) {
            before = &before[..before.len() - newline.len()];
        }
    } else if before.ends_with(&blank) || before.is_empty() {
        after = after.strip_prefix(newline).unwrap_or(after);
    }
    Ok(stripped(format!("{before}{after}")))
}

/// Whether `text` has cairn's block.
pub(super) fn has_block(text: &str) -> bool {
    text.find(BEGIN)
        .is_some_and(|start| text[start..].contains(END))
}

/// Where the block is, through the line break after its end marker.
fn find(path: &Path, text: &str) -> Result<Option<Range<usize>>, Error> {
    let Some(start) = text.find(BEGIN) else {
        return Ok(None);
    };
    let Some(end) = text[start..].find(END) else {
        return Err(Error::OpenBlock {
            path: path.to_path_buf(),
        });
    };
    let mut end = start + end + END.len();
    for newline in ["\r\n", "\n"] {
        if text[end..].starts_with(newline) {
            end += newline.len();
            break;
        }
    }
    Ok(Some(start..end))
}

fn render(body: &str, newline: &str) -> String {
    let mut block = format!("{BEGIN}{newline}");
    for line in body.trim_end().lines() {
        block.push_str(line);
        block.push_str(newline);
    }
    block.push_str(END);
    block.push_str(newline);
    block
}

fn newline_of(text: &str) -> &'static str {
    if text.contains("\r\n") { "\r\n" } else { "\n" }
}

fn stripped(text: String) -> Stripped {
    let empty = text.trim().is_empty();
    Stripped { text, empty }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BODY: &str = "Call `get_context` first.\n";

    fn check(before: &str, expected: &str) {
        let path = Path::new("CLAUDE.md");
        let installed = set_block(path, Some(before), BODY).unwrap();
        assert_eq!(installed, expected, "install");
        assert_eq!(
            set_block(path, Some(&installed), BODY).unwrap(),
            installed,
            "again"
        );
        let removed = remove_block(path, &installed).unwrap();
        assert_eq!(removed.text, before, "uninstall");
    }

    #[test]
    fn the_block_is_set_apart_by_one_blank_line_and_taken_out_cleanly() {
        let block = "<!-- cairn:begin -->\nCall `get_context` first.\n<!-- cairn:end -->\n";
        check("", block);
        check("# Notes\n", &format!("# Notes\n\n{block}"));
        let spaced = set_block(Path::new("CLAUDE.md"), Some("# Notes\n\n"), BODY).unwrap();
        assert_eq!(spaced, format!("# Notes\n\n{block}"));
        check(
            "# Notes\r\n",
            "# Notes\r\n\r\n<!-- cairn:begin -->\r\nCall `get_context` first.\r\n<!-- cairn:end -->\r\n",
        );
    }

    #[test]
    fn an_edited_block_is_replaced_where_it_is() {
        let path = Path::new("AGENTS.md");
        let text = "top\n\n<!-- cairn:begin -->\nold\n<!-- cairn:end -->\n\nbottom\n";
        let updated = set_block(path, Some(text), BODY).unwrap();
        assert_eq!(
            updated,
            "top\n\n<!-- cairn:begin -->\nCall `get_context` first.\n<!-- cairn:end -->\n\nbottom\n"
        );
        assert_eq!(
            remove_block(path, &updated).unwrap().text,
            "top\n\nbottom\n"
        );
    }

    #[test]
    fn a_block_without_its_end_marker_is_an_error() {
        let err = set_block(
            Path::new("GEMINI.md"),
            Some("<!-- cairn:begin -->\nx\n"),
            BODY,
        )
        .unwrap_err();
        assert!(err.to_string().contains("GEMINI.md"), "{err}");
    }
}
