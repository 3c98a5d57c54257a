//! What the repository itself holds that a team has already learned: its decision records
//! ([`decisions`], anchored on the paths they name: [`anchors`]), its contributing and style
//! guides ([`guides`]), its `CODEOWNERS` ([`codeowners`]) and the commits that were reverted
//! or fixed again soon after ([`reverts`]). What is quoted from Markdown is its prose
//! ([`markup`]).
//!
//! Files are read only through the repository reader, git only through gix, each within a
//! bound (files, bytes, commits); a file that cannot be read is skipped with its reason.
//! Nothing here writes or knows memories: `app`'s `learn_repo` turns what is found into
//! proposals that wait for a person.

pub mod anchors;
pub mod codeowners;
pub mod decisions;
pub mod guides;
pub mod markup;
pub mod reverts;

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

use serde::Serialize;

/// Something found but not learned from, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// The file, the file and section, or the commit.
    pub item: String,
    pub why: String,
}

impl Skipped {
    pub(crate) fn new(item: impl Into<String>, why: impl Into<String>) -> Skipped {
        Skipped {
            item: item.into(),
            why: why.into(),
        }
    }
}

/// `text` cut to at most `bytes` bytes at a character boundary, `…` marking the cut.
pub fn cut(text: &str, bytes: usize) -> String {
    if text.len() <= bytes {
        return text.to_string();
    }
    let mut end = bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", text[..end].trim_end())
}

/// Runs of white space (line breaks included) as one space.
pub fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The parts of learning from the repository, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Files,
    History,
    Comparing,
    Writing,
}

impl Stage {
    const ALL: [Stage; 4] = [
        Stage::Files,
        Stage::History,
        Stage::Comparing,
        Stage::Writing,
    ];

    /// What the stage does, for a person.
    pub fn label(self) -> &'static str {
        match self {
            Stage::Files => "reading decision records, guides and CODEOWNERS",
            Stage::History => "walking the commit history",
            Stage::Comparing => "comparing fixes with the commits before them",
            Stage::Writing => "writing proposals",
        }
    }
}

/// How far learning from the repository is; whoever holds the other end (the command line on
/// a terminal) draws it.
#[derive(Debug, Default)]
pub struct Progress {
    stage: AtomicU8,
    done: AtomicUsize,
    total: AtomicUsize,
}

impl Progress {
    /// The run entered `stage`, with `total` items to go through (0: not counted).
    pub fn enter(&self, stage: Stage, total: usize) {
        self.done.store(0, Ordering::Relaxed);
        self.total.store(total, Ordering::Relaxed);
        self.stage.store(stage as u8, Ordering::Relaxed);
    }

    /// One more item of the stage done.
    pub fn one_done(&self) {
        self.done.fetch_add(1, Ordering::Relaxed);
    }

    fn stage(&self) -> Stage {
        let at = usize::from(self.stage.load(Ordering::Relaxed));
        Stage::ALL[at.min(Stage::ALL.len() - 1)]
    }

    /// One line for a terminal `width` columns wide: the stage, and a bar when it counts.
    pub fn line(&self, width: usize) -> String {
        const BAR: usize = 24;
        let stage = self.stage();
        let total = self.total.load(Ordering::Relaxed);
        let text = if total == 0 {
            format!("cairn: {}…", stage.label())
        } else {
            let done = self.done.load(Ordering::Relaxed).min(total);
            let filled = done * BAR / total;
            format!(
                "cairn: {} [{}{}] {done}/{total}",
                stage.label(),
                "#".repeat(filled),
                "-".repeat(BAR - filled)
            )
        };
        text.chars().take(width.saturating_sub(1)).collect()
    }
}

/// Writes `text` at `path` under `root`, its folders made (the tests' small repositories).
#[cfg(test)]
pub(crate) fn write_under(root: &std::path::Path, path: &str, text: &str) {
    let full = root.join(path);
    std::fs::create_dir_all(full.parent().expect("a file's folder")).expect("folders made");
    std::fs::write(full, text).expect("file written");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_names_the_stage_and_counts_when_it_can() {
        let progress = Progress::default();
        assert_eq!(
            progress.line(80),
            "cairn: reading decision records, guides and CODEOWNERS…"
        );
        progress.enter(Stage::Comparing, 4);
        progress.one_done();
        assert_eq!(
            progress.line(100),
            "cairn: comparing fixes with the commits before them [######------------------] 1/4"
        );
        assert_eq!(progress.line(10).chars().count(), 9);
    }

    #[test]
    fn cuts_keep_characters_whole() {
        assert_eq!(cut("déjà vu", 2), "d…");
        assert_eq!(cut("short", 10), "short");
        assert_eq!(one_line(" a\n\n b\tc "), "a b c");
    }
}
