//! Episodic events: what an assistant read, edited and ran, appended one JSON line each by
//! `cairn hook` and tallied into per-node access (count, last time) that feeds the recency and
//! frequency parts of every score.
//!
//! The file is append-only and written without locks: a line under the pipe buffer size is
//! written by one `write` call on an `O_APPEND` descriptor, so concurrent hooks never
//! interleave. At [`rotation::LIMIT`] it rolls over to `events.jsonl.1`, one generation kept.
//! Readers keep their place and read only what was appended since, a line at a time through
//! a fixed buffer; after a roll-over they finish the previous generation first. A line that is
//! not an event (cut short by a crash, not UTF-8) is skipped with a warning, and the next
//! event is written on a fresh line after it.

pub mod hook;

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::fsutil::jsonl;
use crate::fsutil::rotation::{self, FileId, identity};
use crate::graph::score::Access;

/// Events are tallied per file; a longer line is not an event cairn wrote.
const MAX_LINE: usize = 4096;

/// How much of the file a tally holds in memory while reading.
const READ_BUFFER: usize = 64 * 1024;

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    SessionStart,
    Read,
    Edit,
    Search,
    Command,
    Stop,
}

/// One event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// Seconds since the epoch.
    pub t: i64,
    pub kind: Kind,
    /// Repository-relative paths the event touched.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
    /// The program of a shell command, for `Command`: its first word after redaction (see
    /// `hook::event_of`), at most 100 characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
}

/// Appends `event` to the events file at `path`, rolling the file over at its size limit.
pub fn append(path: &Path, event: &Event) -> std::io::Result<()> {
    append_within(path, event, rotation::LIMIT)
}

fn append_within(path: &Path, event: &Event, limit: u64) -> std::io::Result<()> {
    let mut line = serde_json::to_string(event)?;
    if line.len() >= MAX_LINE {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "event too large",
        ));
    }
    line.push('\n');
    rotation::append(path, line.as_bytes(), limit)
}

/// Access per node id, kept up to date by reading what was appended since the last look.
#[derive(Debug, Default)]
pub struct Tally {
    path: PathBuf,
    /// The file being read and how far; another file at the path means it rolled over or was
    /// replaced.
    reading: Option<Place>,
    /// The start of a line whose end has not arrived yet (at most [`MAX_LINE`] bytes).
    partial: Vec<u8>,
    /// The line being read outgrew [`MAX_LINE`]: it is skipped to its end.
    skipping: bool,
    /// Lines skipped as no event since the last warning.
    skipped: usize,
    access: Arc<HashMap<String, Access>>,
}

/// Where a tally is: which file, its first bytes (an inode can be reused by a
/// later generation, its first line cannot) and the offset read up to.
#[derive(Debug, Clone)]
struct Place {
    file: Option<FileId>,
    head: Vec<u8>,
    offset: u64,
}

/// How many of a file's first bytes tell it from another at the same inode.
const HEAD: usize = 64;

impl Place {
    /// Whether `file` (with `metadata`) is the one this place is in.
    fn is_in(&self, file: &mut File, metadata: &std::fs::Metadata) -> std::io::Result<bool> {
        if self.file.is_none() || self.file != identity(metadata) || self.offset > metadata.len() {
            return Ok(false);
        }
        Ok(first_bytes(file, self.head.len())? == self.head)
    }
}

/// Up to `n` of the file's first bytes.
fn first_bytes(file: &mut File, n: usize) -> std::io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(n);
    file.seek(SeekFrom::Start(0))?;
    file.by_ref().take(n as u64).read_to_end(&mut head)?;
    Ok(head)
}

impl Tally {
    pub fn new(path: PathBuf) -> Tally {
        Tally {
            path,
            ..Tally::default()
        }
    }

    /// The access map, after reading new events; a file that shrank (replaced) is read anew.
    /// An unreadable file leaves the tally as it was.
    pub fn current(&mut self) -> Arc<HashMap<String, Access>> {
        if let Err(e) = self.catch_up()
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!("reading {}: {e}", self.path.display());
        }
        if self.skipped > 0 {
            tracing::warn!(
                "skipped {} line(s) of {} that are not events (cut short by a crash, or not written by cairn)",
                self.skipped,
                self.path.display()
            );
            self.skipped = 0;
        }
        self.access.clone()
    }

    fn catch_up(&mut self) -> std::io::Result<()> {
        let mut file = File::open(&self.path)?;
        let metadata = file.metadata()?;
        let continues = match &self.reading {
            Some(at) => at.is_in(&mut file, &metadata)?,
            None => false,
        };
        if !continues {
            if !self.finish_rolled_over()? {
                // The first look, or the file was replaced: both generations are read anew.
                self.access = Arc::default();
                self.read_previous_generation()?;
            }
            self.start(identity(&metadata));
        }
        self.read_on(file, metadata.len())
    }

    /// Reads the rest of the file this tally was reading if it is now the previous
    /// generation; says whether it was.
    fn finish_rolled_over(&mut self) -> std::io::Result<bool> {
        let Some(at) = &self.reading else {
            return Ok(false);
        };
        let Some(mut previous) = open_if_present(&rotation::previous(&self.path))? else {
            return Ok(false);
        };
        let metadata = previous.metadata()?;
        if !at.is_in(&mut previous, &metadata)? {
            return Ok(false);
        }
        self.read_on(previous, metadata.len())?;
        Ok(true)
    }

    /// Reads the previous generation whole, if there is one.
    fn read_previous_generation(&mut self) -> std::io::Result<()> {
        let Some(previous) = open_if_present(&rotation::previous(&self.path))? else {
            return Ok(());
        };
        let metadata = previous.metadata()?;
        self.start(identity(&metadata));
        self.read_on(previous, metadata.len())
    }

    /// Starts reading another file from its beginning (a torn line left by the last one is
    /// dropped).
    fn start(&mut self, file: Option<FileId>) {
        self.reading = Some(Place {
            file,
            head: Vec::new(),
            offset: 0,
        });
        self.partial.clear();
        self.skipping = false;
    }

    /// Tallies the complete lines of `file` from where this tally is up to `len`.
    fn read_on(&mut self, mut file: File, len: u64) -> std::io::Result<()> {
        let Some(at) = self.reading.as_mut() else {
            return Ok(());
        };
        if len <= at.offset {
            return Ok(());
        }
        if at.head.len() < HEAD {
            at.head = first_bytes(&mut file, HEAD.min(len as usize))?;
        }
        file.seek(SeekFrom::Start(at.offset))?;
        let mut reader = BufReader::with_capacity(READ_BUFFER, file.take(len - at.offset));
        let access = Arc::make_mut(&mut self.access);
        loop {
            let chunk = reader.fill_buf()?;
            if chunk.is_empty() {
                return Ok(());
            }
            let end = chunk.iter().position(|&b| b == b'\n');
            let piece = &chunk[..end.unwrap_or(chunk.len())];
            if !self.skipping {
                if self.partial.len() + piece.len() > MAX_LINE {
                    // Not a line cairn wrote: skipped rather than held.
                    self.skipping = true;
                    self.skipped += 1;
                    self.partial.clear();
                } else {
                    self.partial.extend_from_slice(piece);
                }
            }
            if end.is_some() {
                if !self.skipping {
                    match jsonl::decode::<Event>(&self.partial) {
                        Some(Ok(event)) => count(access, event),
                        Some(Err(_)) => self.skipped += 1,
                        None => {}
                    }
                }
                self.partial.clear();
                self.skipping = false;
            }
            let used = end.map_or(chunk.len(), |i| i + 1);
            reader.consume(used);
            at.offset += used as u64;
        }
    }
}

/// Adds an event to the tally, if it is one that counts as access.
fn count(access: &mut HashMap<String, Access>, event: Event) {
    if !matches!(
        event.kind,
        Kind::Read | Kind::Edit | Kind::Search | Kind::Command
    ) {
        return;
    }
    for path in event.paths {
        let entry = access.entry(path).or_default();
        entry.count += 1;
        entry.last = entry.last.max(event.t);
    }
}

fn open_if_present(path: &Path) -> std::io::Result<Option<File>> {
    match File::open(path) {
        Ok(file) => Ok(Some(file)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// The repository-relative form of `path` (absolute or relative to `root`), or `None` when
/// it lies outside the repository.
pub fn relative(root: &Path, path: &str) -> Option<String> {
    let path = Path::new(path);
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        root.join(path)
    };
    let mut parts: Vec<&str> = Vec::new();
    for component in joined.strip_prefix(root).ok()?.components() {
        match component {
            std::path::Component::Normal(part) => parts.push(part.to_str()?),
            std::path::Component::ParentDir => {
                parts.pop()?;
            }
            std::path::Component::CurDir => {}
            _ => return None,
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    fn event(t: i64, kind: Kind, paths: &[&str]) -> Event {
        Event {
            t,
            kind,
            paths: paths.iter().map(|p| p.to_string()).collect(),
            command: None,
            session: None,
        }
    }

    #[test]
    fn the_tally_counts_reads_and_edits_and_keeps_the_latest_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let mut tally = Tally::new(path.clone());
        assert!(tally.current().is_empty());
        append(&path, &event(100, Kind::Read, &["a.py"])).unwrap();
        append(&path, &event(300, Kind::Edit, &["a.py", "b.py"])).unwrap();
        append(&path, &event(200, Kind::Read, &["a.py"])).unwrap();
        append(&path, &event(400, Kind::SessionStart, &[])).unwrap();
        let access = tally.current();
        assert_eq!(
            access["a.py"],
            Access {
                count: 3,
                last: 300
            }
        );
        assert_eq!(
            access["b.py"],
            Access {
                count: 1,
                last: 300
            }
        );
        append(&path, &event(500, Kind::Read, &["b.py"])).unwrap();
        assert_eq!(
            tally.current()["b.py"],
            Access {
                count: 2,
                last: 500
            }
        );
    }

    #[test]
    fn a_half_written_line_waits_for_its_end_and_junk_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let line = serde_json::to_string(&event(100, Kind::Read, &["a.py"])).unwrap();
        let (head, tail) = line.split_at(10);
        std::fs::write(&path, format!("not json\n{head}")).unwrap();
        let mut tally = Tally::new(path.clone());
        assert!(tally.current().is_empty());
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        writeln!(file, "{tail}").unwrap();
        assert_eq!(tally.current()["a.py"].count, 1);
        // Replaced by a shorter file: read from the start.
        std::fs::write(&path, "").unwrap();
        assert!(tally.current().is_empty());
    }

    #[test]
    fn a_replaced_file_is_read_anew_even_when_larger() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        append(&path, &event(100, Kind::Read, &["a.py"])).unwrap();
        let mut tally = Tally::new(path.clone());
        assert_eq!(tally.current()["a.py"].count, 1);
        let staging = dir.path().join("next.jsonl");
        append(&staging, &event(200, Kind::Edit, &["b.py"])).unwrap();
        append(&staging, &event(300, Kind::Edit, &["b.py"])).unwrap();
        std::fs::rename(&staging, &path).unwrap();
        let access = tally.current();
        assert!(!access.contains_key("a.py"));
        assert_eq!(
            access["b.py"],
            Access {
                count: 2,
                last: 300
            }
        );
    }

    #[test]
    fn the_tally_reads_on_across_a_roll_over_counting_each_event_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let line = serde_json::to_string(&event(1, Kind::Read, &["a.py"])).unwrap();
        // Room for three events a generation.
        let limit = 3 * (line.len() as u64 + 1);
        let mut tally = Tally::new(path.clone());
        append_within(&path, &event(1, Kind::Read, &["a.py"]), limit).unwrap();
        assert_eq!(tally.current()["a.py"].count, 1);
        append_within(&path, &event(2, Kind::Read, &["a.py"]), limit).unwrap();
        append_within(&path, &event(3, Kind::Read, &["a.py"]), limit).unwrap();
        // Rolls over: the two events above are still unread in the previous generation.
        append_within(&path, &event(4, Kind::Edit, &["b.py"]), limit).unwrap();
        assert!(rotation::previous(&path).exists());
        let access = tally.current();
        assert_eq!(access["a.py"], Access { count: 3, last: 3 });
        assert_eq!(access["b.py"], Access { count: 1, last: 4 });
        append_within(&path, &event(5, Kind::Edit, &["b.py"]), limit).unwrap();
        assert_eq!(tally.current()["b.py"], Access { count: 2, last: 5 });
        // A tally starting now reads both generations to the same counts.
        assert_eq!(Tally::new(path.clone()).current(), tally.current());
    }

    #[test]
    fn a_tally_two_roll_overs_behind_reads_both_generations_anew() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let line = serde_json::to_string(&event(1, Kind::Read, &["a.py"])).unwrap();
        let limit = line.len() as u64 + 1;
        let mut tally = Tally::new(path.clone());
        append_within(&path, &event(1, Kind::Read, &["a.py"]), limit).unwrap();
        assert_eq!(tally.current()["a.py"].count, 1);
        for t in 2..=4 {
            append_within(&path, &event(t, Kind::Read, &["b.py"]), limit).unwrap();
        }
        let access = tally.current();
        assert!(!access.contains_key("a.py"), "{access:?}");
        assert_eq!(access["b.py"], Access { count: 2, last: 4 });
    }

    #[test]
    fn an_over_long_line_is_skipped_without_being_held() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let mut file = crate::fsutil::append(&path).unwrap();
        let mut tally = Tally::new(path.clone());
        for _ in 0..4 {
            file.write_all(&[b'x'; MAX_LINE / 2]).unwrap();
            assert!(tally.current().is_empty());
            assert!(tally.partial.len() <= MAX_LINE);
        }
        assert!(tally.skipping);
        let line = serde_json::to_string(&event(7, Kind::Read, &["a.py"])).unwrap();
        writeln!(file, "\n{line}").unwrap();
        assert_eq!(tally.current()["a.py"], Access { count: 1, last: 7 });
        assert!(tally.partial.is_empty() && !tally.skipping);
    }

    #[test]
    fn a_line_that_is_not_utf8_is_skipped_and_counted_as_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let good = serde_json::to_string(&event(5, Kind::Read, &["a.py"])).unwrap();
        let bad = b"{\"t\":1,\"kind\":\"read\",\"paths\":[\"caf\xc3\"]}\n";
        std::fs::write(&path, [bad.as_slice(), good.as_bytes(), b"\n"].concat()).unwrap();
        let mut tally = Tally::new(path.clone());
        tally.catch_up().unwrap();
        assert_eq!(tally.skipped, 1);
        assert_eq!(tally.current()["a.py"], Access { count: 1, last: 5 });
        assert_eq!(tally.skipped, 0, "warned about once");
    }

    /// What a tally of `events` holds.
    fn tallied(events: &[Event]) -> HashMap<String, Access> {
        let mut access = HashMap::new();
        for event in events {
            count(&mut access, event.clone());
        }
        access
    }

    /// Writes `events`, cuts the file after `cut(length)` bytes, and checks that a tally
    /// counts the events before the cut, and after one more event was appended, those and it.
    fn check_cut(events: &[Event], cut: impl FnOnce(usize) -> usize) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        for event in events {
            append(&path, event).unwrap();
        }
        let whole = std::fs::read(&path).unwrap();
        let cut = cut(whole.len());
        std::fs::write(&path, &whole[..cut]).unwrap();
        let complete = whole[..cut].iter().filter(|&&b| b == b'\n').count();
        // An event cut just before its newline is whole once the next write ends its line.
        let only_newline_lost = whole.get(cut) == Some(&b'\n');

        let mut reading = Tally::new(path.clone());
        assert_eq!(
            *reading.current(),
            tallied(&events[..complete]),
            "cut at {cut}"
        );
        let later = event(99, Kind::Edit, &["later/café ✓.py"]);
        append(&path, &later).unwrap();
        let mut now = events[..complete + usize::from(only_newline_lost)].to_vec();
        now.push(later);
        assert_eq!(*reading.current(), tallied(&now), "cut at {cut}");
        assert_eq!(*Tally::new(path).current(), tallied(&now), "cut at {cut}");
    }

    #[test]
    fn a_cut_at_any_byte_loses_at_most_the_cut_event_and_never_blocks_a_write() {
        let events = [
            event(1, Kind::Read, &["src/café.py"]),
            event(2, Kind::Edit, &["src/日本/✓.py", "src/café.py"]),
            event(3, Kind::Read, &["src/日本/✓.py"]),
        ];
        let length: usize = events
            .iter()
            .map(|e| serde_json::to_string(e).unwrap().len() + 1)
            .sum();
        for cut in 0..=length {
            check_cut(&events, |_| cut);
        }
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(256))]

            #[test]
            fn any_cut_of_any_event_log_loses_at_most_the_cut_event(
                paths in prop::collection::vec(("[a-zé✓日本]{1,8}", 0usize..2), 1..8),
                cut in any::<prop::sample::Index>(),
            ) {
                let kinds = [Kind::Read, Kind::Edit];
                let events: Vec<Event> = paths
                    .iter()
                    .enumerate()
                    .map(|(t, (path, kind))| event(t as i64, kinds[*kind], &[path.as_str()]))
                    .collect();
                check_cut(&events, |length| cut.index(length + 1));
            }
        }
    }

    #[test]
    fn paths_are_made_relative_and_outsiders_refused() {
        let root = Path::new("/repo");
        assert_eq!(
            relative(root, "/repo/src/a.py").as_deref(),
            Some("src/a.py")
        );
        assert_eq!(relative(root, "src/./b.py").as_deref(), Some("src/b.py"));
        assert_eq!(relative(root, "/elsewhere/a.py"), None);
        assert_eq!(relative(root, "../a.py"), None);
        assert_eq!(relative(root, "/repo"), None);
    }
}
