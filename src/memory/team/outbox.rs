//! The durable outbox: shared-memory writes made while the team server could not take them,
//! one JSON line each, appended and synced to disk before the write answers. Replay sends
//! them in order; each carries an idempotency key the server records in the same
//! transaction, so an entry sent twice (the answer was lost, the process died after the
//! server committed) is applied once.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::memory::Memory;
use crate::memory::reviews::ReviewRecord;

/// One write: every row of one transaction of the local writer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// The idempotency key (random, unique per write).
    pub key: String,
    /// When the write was made (ms since the epoch).
    pub at: i64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub memories: Vec<Row>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tombstones: Vec<Tombstone>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<ReviewRecord>,
}

/// A memory as written, with the revision it was based on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub memory: Memory,
    /// Base64 of the little-endian f32 vector, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector: Option<String>,
    /// The `rev` of the version this change started from; `None` for a new memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
}

/// A forgotten memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tombstone {
    pub id: String,
    /// Kept on the tombstone so the server's permissions still know whose it was.
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub developer: Option<String>,
}

impl Entry {
    pub fn new(
        memories: Vec<Row>,
        tombstones: Vec<Tombstone>,
        review: Option<ReviewRecord>,
    ) -> Entry {
        Entry {
            key: new_key(),
            at: crate::clock::now_ms(),
            memories,
            tombstones,
            review,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.memories.is_empty() && self.tombstones.is_empty() && self.review.is_none()
    }
}

/// A fresh idempotency key: 128 random bits from the OS, as hex.
fn new_key() -> String {
    crate::fsutil::random_hex(16).unwrap_or_else(|_| {
        // No /dev/urandom: time, pid and a counter are unique enough for one machine.
        static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        format!("{nanos:032x}{:08x}{n:08x}", std::process::id())
    })
}

/// The outbox file of one team store.
#[derive(Debug, Clone)]
pub struct Outbox {
    path: PathBuf,
    lock: PathBuf,
}

/// What is on disk, and what of it could not be read.
#[derive(Debug, Default)]
pub struct Pending {
    pub entries: Vec<Entry>,
    /// Lines that are not entries (a torn last line after a crash), left in place.
    pub unreadable: usize,
}

impl Outbox {
    pub fn new(dir: &Path) -> Outbox {
        Outbox {
            path: dir.join("outbox.jsonl"),
            lock: dir.join("outbox.lock"),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs `f` holding the outbox lock (appends and rewrites of all processes take turns).
    fn locked<T>(&self, f: impl FnOnce() -> std::io::Result<T>) -> std::io::Result<T> {
        if let Some(dir) = self.lock.parent() {
            crate::fsutil::private_dir(dir)?;
        }
        let lock = crate::fsutil::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&self.lock)?;
        lock.lock()?;
        let result = f();
        drop(lock);
        result
    }

    /// Appends entries and syncs them to disk before returning. A line left torn by a crash
    /// mid-append is first moved aside ([`Outbox::torn_path`]), so the new entry starts a line
    /// of its own and replays.
    pub fn append(&self, entries: &[Entry]) -> std::io::Result<()> {
        let mut text = String::new();
        for entry in entries {
            text.push_str(&serde_json::to_string(entry).map_err(std::io::Error::other)?);
            text.push('\n');
        }
        self.locked(|| {
            let mut file = crate::fsutil::options()
                .read(true)
                .append(true)
                .create(true)
                .open(&self.path)?;
            self.set_aside_torn_tail(&mut file)?;
            file.write_all(text.as_bytes())?;
            file.sync_data()
        })
    }

    /// Where fragments of torn lines are kept, one JSON line each with when it was found.
    pub fn torn_path(&self) -> PathBuf {
        self.path.with_extension("torn.jsonl")
    }

    /// Cuts an unfinished last line off the file, keeping it in [`Outbox::torn_path`].
    fn set_aside_torn_tail(&self, file: &mut File) -> std::io::Result<()> {
        let length = file.metadata()?.len();
        let Some(start) = torn_tail_start(file, length)? else {
            return Ok(());
        };
        let mut fragment = Vec::new();
        file.seek(SeekFrom::Start(start))?;
        file.take(length - start).read_to_end(&mut fragment)?;
        let note = serde_json::json!({
            "found_at": crate::clock::now_ms(),
            "fragment": String::from_utf8_lossy(&fragment),
        });
        let mut torn = crate::fsutil::append(&self.torn_path())?;
        writeln!(torn, "{note}")?;
        torn.sync_data()?;
        tracing::warn!(
            "the team outbox {} ended in a torn line ({} bytes, from a crash mid-write); it was set aside in {}",
            self.path.display(),
            fragment.len(),
            self.torn_path().display()
        );
        file.set_len(start)?;
        file.sync_data()
    }

    /// Every queued entry, oldest first.
    pub fn pending(&self) -> std::io::Result<Pending> {
        let file = match File::open(&self.path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Pending::default()),
            Err(e) => return Err(e),
        };
        let mut pending = Pending::default();
        for line in BufReader::new(file).lines() {
            let line = line?;
            if line.trim().is_empty() {
                continue;
            }
            match serde_json::from_str::<Entry>(&line) {
                Ok(entry) => pending.entries.push(entry),
                Err(_) => pending.unreadable += 1,
            }
        }
        Ok(pending)
    }

    /// The file's size and modification time: a cheap "did anything change" check.
    pub fn stamp(&self) -> Option<(u64, std::time::SystemTime)> {
        let meta = std::fs::metadata(&self.path).ok()?;
        Some((meta.len(), meta.modified().ok()?))
    }

    /// Removes the entries with these keys (they reached the server), keeping everything
    /// else, including entries appended meanwhile; the file is replaced atomically.
    pub fn remove(&self, keys: &std::collections::HashSet<String>) -> std::io::Result<()> {
        if keys.is_empty() {
            return Ok(());
        }
        self.locked(|| {
            let text = match std::fs::read_to_string(&self.path) {
                Ok(text) => text,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
                Err(e) => return Err(e),
            };
            let kept: String = text
                .lines()
                .filter(|line| {
                    serde_json::from_str::<KeyOnly>(line)
                        .map_or(!line.trim().is_empty(), |e| !keys.contains(&e.key))
                })
                .flat_map(|line| [line, "\n"])
                .collect();
            crate::fsutil::write_atomic(&self.path, kept.as_bytes())
        })
    }
}

/// Where the unfinished last line of a file of `length` bytes starts; `None` when the file is
/// empty or ends in a newline.
fn torn_tail_start(file: &mut File, length: u64) -> std::io::Result<Option<u64>> {
    const CHUNK: u64 = 64 * 1024;
    let mut end = length;
    let mut buffer = Vec::new();
    while end > 0 {
        let start = end.saturating_sub(CHUNK);
        buffer.resize((end - start) as usize, 0);
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut buffer)?;
        if end == length && buffer.last() == Some(&b'\n') {
            return Ok(None);
        }
        if let Some(newline) = buffer.iter().rposition(|&b| b == b'\n') {
            return Ok(Some(start + newline as u64 + 1));
        }
        end = start;
    }
    Ok((length > 0).then_some(0))
}

#[derive(Deserialize)]
struct KeyOnly {
    key: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::MemoryType;

    fn entry(title: &str) -> Entry {
        let memory = Memory::new(
            format!("m_{:016x}", xxhash_rust::xxh3::xxh3_64(title.as_bytes())),
            MemoryType::Decision,
            title.to_string(),
            format!("{title} because it matters"),
            1,
        );
        Entry::new(
            vec![Row {
                memory,
                vector: None,
                base: None,
            }],
            Vec::new(),
            None,
        )
    }

    #[test]
    fn entries_survive_in_order_and_removal_keeps_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let outbox = Outbox::new(dir.path());
        assert!(outbox.pending().unwrap().entries.is_empty());
        let (a, b, c) = (entry("a"), entry("b"), entry("c"));
        outbox.append(&[a.clone(), b.clone()]).unwrap();
        outbox.append(std::slice::from_ref(&c)).unwrap();
        let pending = outbox.pending().unwrap();
        assert_eq!(pending.entries, vec![a.clone(), b.clone(), c.clone()]);
        assert_ne!(a.key, b.key);
        outbox
            .remove(&[a.key.clone(), c.key.clone()].into_iter().collect())
            .unwrap();
        assert_eq!(outbox.pending().unwrap().entries, vec![b]);
    }

    #[test]
    fn a_torn_last_line_is_counted_not_fatal() {
        let dir = tempfile::tempdir().unwrap();
        let outbox = Outbox::new(dir.path());
        let a = entry("a");
        outbox.append(std::slice::from_ref(&a)).unwrap();
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(outbox.path())
            .unwrap();
        file.write_all(b"{\"key\":\"abc\",\"at\":1,\"memo").unwrap();
        let pending = outbox.pending().unwrap();
        assert_eq!(pending.entries, vec![a.clone()]);
        assert_eq!(pending.unreadable, 1);
    }

    #[test]
    fn the_write_after_a_torn_line_is_kept_and_the_fragment_set_aside() {
        let dir = tempfile::tempdir().unwrap();
        let outbox = Outbox::new(dir.path());
        let (a, b) = (entry("a"), entry("b"));
        outbox.append(std::slice::from_ref(&a)).unwrap();
        let fragment = "{\"key\":\"abc\",\"at\":1,\"memo";
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(outbox.path())
            .unwrap();
        file.write_all(fragment.as_bytes()).unwrap();
        outbox.append(std::slice::from_ref(&b)).unwrap();
        let pending = outbox.pending().unwrap();
        assert_eq!(pending.entries, vec![a, b]);
        assert_eq!(pending.unreadable, 0);
        let torn = std::fs::read_to_string(outbox.torn_path()).unwrap();
        let note: serde_json::Value = serde_json::from_str(torn.trim()).unwrap();
        assert_eq!(note["fragment"], fragment);
    }

    #[test]
    fn a_file_that_is_one_torn_line_is_cut_whole() {
        let dir = tempfile::tempdir().unwrap();
        let outbox = Outbox::new(dir.path());
        std::fs::write(outbox.path(), "x".repeat(200_000)).unwrap();
        let b = entry("b");
        outbox.append(std::slice::from_ref(&b)).unwrap();
        assert_eq!(outbox.pending().unwrap().entries, vec![b]);
    }
}
