//! How far an index run is: its phase and, while files are parsed, how many of how many.
//! The run only counts; whoever holds the other end (`cairn index` on a terminal) draws it.

use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

/// The phases of an index run, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Before the writer lock is held (another run may hold it).
    Waiting,
    Loading,
    Walking,
    Parsing,
    Building,
    Writing,
    History,
    /// Handed to the daemon serving the repository.
    Daemon,
}

impl Phase {
    const ALL: [Phase; 8] = [
        Phase::Waiting,
        Phase::Loading,
        Phase::Walking,
        Phase::Parsing,
        Phase::Building,
        Phase::Writing,
        Phase::History,
        Phase::Daemon,
    ];

    /// What the phase does, for a person.
    pub fn label(self) -> &'static str {
        match self {
            Phase::Waiting => "waiting for another index run",
            Phase::Loading => "loading the stored index",
            Phase::Walking => "walking the repository",
            Phase::Parsing => "parsing",
            Phase::Building => "building the graph",
            Phase::Writing => "writing the store",
            Phase::History => "reading the commit history",
            Phase::Daemon => "indexing in the daemon",
        }
    }
}

/// Counters an index run updates as it goes; cheap to update from parsing threads.
#[derive(Debug, Default)]
pub struct Progress {
    phase: AtomicU8,
    parsed: AtomicUsize,
    to_parse: AtomicUsize,
}

impl Progress {
    /// The run entered `phase`.
    pub fn enter(&self, phase: Phase) {
        self.phase.store(phase as u8, Ordering::Relaxed);
    }

    /// Parsing begins with `files` files to read (most may come from the parse cache).
    pub fn parsing(&self, files: usize) {
        self.parsed.store(0, Ordering::Relaxed);
        self.to_parse.store(files, Ordering::Relaxed);
        self.enter(Phase::Parsing);
    }

    /// One more file read.
    pub(crate) fn parsed_one(&self) {
        self.parsed.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn phase(&self) -> Phase {
        Phase::ALL[usize::from(self.phase.load(Ordering::Relaxed)).min(Phase::ALL.len() - 1)]
    }

    /// Files read and files to read in the last parsing phase.
    pub fn files(&self) -> (usize, usize) {
        (
            self.parsed.load(Ordering::Relaxed),
            self.to_parse.load(Ordering::Relaxed),
        )
    }

    /// One line for a terminal `width` columns wide: the phase, and while parsing a bar with
    /// the files read.
    pub fn line(&self, width: usize) -> String {
        let phase = self.phase();
        let text = if phase == Phase::Parsing {
            let (done, total) = self.files();
            let share = if total == 0 {
                1.0
            } else {
                done.min(total) as f64 / total as f64
            };
            const BAR: usize = 24;
            let filled = (share * BAR as f64).round() as usize;
            format!(
                "cairn: parsing [{}{}] {done}/{total} files",
                "#".repeat(filled),
                "-".repeat(BAR - filled)
            )
        } else {
            format!("cairn: {}…", phase.label())
        };
        text.chars().take(width.saturating_sub(1)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsing_shows_a_bar_with_files_read_of_files_to_read() {
        let progress = Progress::default();
        assert_eq!(progress.line(80), "cairn: waiting for another index run…");
        progress.enter(Phase::Loading);
        assert_eq!(progress.line(80), "cairn: loading the stored index…");
        progress.parsing(4);
        progress.parsed_one();
        assert_eq!(
            progress.line(80),
            "cairn: parsing [######------------------] 1/4 files"
        );
        for _ in 0..3 {
            progress.parsed_one();
        }
        assert!(progress.line(80).contains("[########################] 4/4"));
        progress.enter(Phase::Writing);
        assert_eq!(progress.line(80), "cairn: writing the store…");
        assert_eq!(progress.files(), (4, 4));
    }

    #[test]
    fn a_narrow_terminal_gets_a_line_that_does_not_wrap() {
        let progress = Progress::default();
        progress.parsing(10);
        assert_eq!(progress.line(12).chars().count(), 11);
    }
}
