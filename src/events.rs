//! Episodic events: what an assistant read, edited and ran, appended one JSON line each by
//! `cairn hook` and tallied into per-node access (count, last time) that feeds the recency and
//! frequency parts of every score.
//!
//! The file is append-only and written without locks: a line under the pipe buffer size is
//! written by one `write` call on an `O_APPEND` descriptor, so concurrent hooks never
//! interleave. Readers keep their offset and read only what was appended since.

use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::graph::score::Access;

/// Events are tallied per file; a longer line is not an event cairn wrote.
const MAX_LINE: usize = 4096;

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
    /// The shell command, for `Command` (cut to 300 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
}

/// Appends `event` to the events file at `path`.
pub fn append(path: &Path, event: &Event) -> std::io::Result<()> {
    let mut line = serde_json::to_string(event)?;
    if line.len() >= MAX_LINE {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "event too large",
        ));
    }
    line.push('\n');
    let mut options = std::fs::OpenOptions::new();
    options.append(true).create(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)?.write_all(line.as_bytes())
}

/// Access per node id, kept up to date by reading what was appended since the last look.
#[derive(Debug, Default)]
pub struct Tally {
    path: PathBuf,
    offset: u64,
    /// The file read so far (device, inode): another file at the path is read anew.
    identity: Option<(u64, u64)>,
    /// An incomplete last line, kept until its end arrives.
    partial: Vec<u8>,
    access: Arc<HashMap<String, Access>>,
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
        self.access.clone()
    }

    fn catch_up(&mut self) -> std::io::Result<()> {
        let mut file = std::fs::File::open(&self.path)?;
        let metadata = file.metadata()?;
        let len = metadata.len();
        let identity = identity(&metadata);
        if len < self.offset || identity != self.identity {
            self.identity = identity;
            self.offset = 0;
            self.partial.clear();
            self.access = Arc::default();
        }
        if len == self.offset {
            return Ok(());
        }
        file.seek(SeekFrom::Start(self.offset))?;
        let mut bytes = std::mem::take(&mut self.partial);
        file.take(len - self.offset).read_to_end(&mut bytes)?;
        self.offset = len;
        let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        self.partial = bytes.split_off(complete);
        if self.partial.len() >= MAX_LINE {
            // Not a line cairn wrote: skip it rather than hold it.
            self.partial.clear();
        }
        let access = Arc::make_mut(&mut self.access);
        for line in bytes.split(|&b| b == b'\n') {
            let Ok(event) = serde_json::from_slice::<Event>(line) else {
                continue;
            };
            if !matches!(
                event.kind,
                Kind::Read | Kind::Edit | Kind::Search | Kind::Command
            ) {
                continue;
            }
            for path in &event.paths {
                let entry = access.entry(path.clone()).or_default();
                entry.count += 1;
                entry.last = entry.last.max(event.t);
            }
        }
        Ok(())
    }
}

fn identity(metadata: &std::fs::Metadata) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        Some((metadata.dev(), metadata.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = metadata;
        None
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
