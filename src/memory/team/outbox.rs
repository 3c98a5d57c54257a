//! The durable outbox: shared-memory writes made while the team server could not take them,
//! one JSON line each, appended and synced to disk before the write answers. Replay sends
//! them in order; each carries an idempotency key the server records in the same
//! transaction, so an entry sent twice (the answer was lost, the process died after the
//! server committed) is applied once.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::fsutil::jsonl::{self, Segment};
use crate::memory::Memory;
use crate::memory::guidelines::GuidelineChange;
use crate::memory::reviews::ReviewRecord;

/// The outbox file's size and modification time: a change in either means new entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    size: u64,
    modified: std::time::SystemTime,
}

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
    /// Guideline changes recorded or decided (each whole, as this copy holds it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub guidelines: Vec<GuidelineChange>,
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
            guidelines: Vec::new(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.memories.is_empty()
            && self.tombstones.is_empty()
            && self.review.is_none()
            && self.guidelines.is_empty()
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
    /// Lines that are not entries (a line cut short by a crash, a byte that is not UTF-8),
    /// left in place until the next write or replay sets them aside.
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
        crate::fsutil::locked(&self.lock, f)
    }

    /// Appends entries and syncs them to disk before returning. Lines that are not entries (a
    /// line left torn by a crash mid-append) are first moved aside ([`Outbox::torn_path`]), so
    /// the new entries start a line of their own and replay.
    pub fn append(&self, entries: &[Entry]) -> std::io::Result<()> {
        let mut text = Vec::new();
        for entry in entries {
            serde_json::to_writer(&mut text, entry)?;
            text.push(b'\n');
        }
        self.locked(|| {
            let on_disk = jsonl::read_if_present(&self.path)?;
            let sorted = self.sort(&on_disk, |_| true)?;
            if sorted.set_aside == 0 {
                let mut file = crate::fsutil::append(&self.path)?;
                file.write_all(&jsonl::on_fresh_line(&file, &text)?)?;
                return file.sync_data();
            }
            let mut kept = sorted.kept;
            kept.extend_from_slice(&text);
            crate::fsutil::write_atomic(&self.path, &kept)
        })
    }

    /// Where lines that are not entries are kept, one JSON line each with when it was found.
    pub fn torn_path(&self) -> PathBuf {
        self.path.with_extension("torn.jsonl")
    }

    /// The entry lines of `on_disk` that pass `keep`, each ended by a newline; every line that
    /// is not an entry is moved to [`Outbox::torn_path`] with a warning. Runs under the lock,
    /// where no write is under way, so a cut last line is torn for good.
    fn sort(&self, on_disk: &[u8], keep: impl Fn(&Entry) -> bool) -> std::io::Result<Sorted> {
        let mut sorted = Sorted::default();
        for segment in jsonl::segments::<Entry>(on_disk) {
            match segment {
                Segment::Record { bytes, record } => {
                    if keep(&record) {
                        sorted.kept.extend_from_slice(bytes);
                        sorted.kept.push(b'\n');
                    }
                }
                Segment::Unreadable { bytes, line, flaw } => {
                    self.set_aside(
                        bytes,
                        &format!("line {line} is not a queued write ({flaw})"),
                    )?;
                    sorted.set_aside += 1;
                }
                Segment::Torn { bytes } => {
                    self.set_aside(bytes, "it ended in a line torn by a crash mid-write")?;
                    sorted.set_aside += 1;
                }
            }
        }
        Ok(sorted)
    }

    /// Keeps `fragment` in [`Outbox::torn_path`] (as text; a cut character becomes U+FFFD)
    /// and says so.
    fn set_aside(&self, fragment: &[u8], why: &str) -> std::io::Result<()> {
        let note = serde_json::json!({
            "found_at": crate::clock::now_ms(),
            "fragment": String::from_utf8_lossy(fragment),
        });
        let mut line = note.to_string().into_bytes();
        line.push(b'\n');
        jsonl::append_line(&self.torn_path(), &line)?;
        tracing::warn!(
            "the team outbox {}: {why} ({} bytes); it was set aside in {}",
            self.path.display(),
            fragment.len(),
            self.torn_path().display()
        );
        Ok(())
    }

    /// Every queued entry, oldest first. Never fails on what the file holds: lines that are
    /// not entries are counted in [`Pending::unreadable`].
    pub fn pending(&self) -> std::io::Result<Pending> {
        let on_disk = jsonl::read_if_present(&self.path)?;
        let mut pending = Pending::default();
        for segment in jsonl::segments::<Entry>(&on_disk) {
            match segment {
                Segment::Record { record, .. } => pending.entries.push(record),
                Segment::Unreadable { .. } | Segment::Torn { .. } => pending.unreadable += 1,
            }
        }
        Ok(pending)
    }

    /// The file's size and modification time: a cheap "did anything change" check.
    pub fn stamp(&self) -> Option<Stamp> {
        let meta = std::fs::metadata(&self.path).ok()?;
        Some(Stamp {
            size: meta.len(),
            modified: meta.modified().ok()?,
        })
    }

    /// Removes the entries with these keys (they reached the server), keeping every other
    /// entry, including entries appended meanwhile, and setting aside lines that are not
    /// entries; the file is replaced atomically.
    pub fn remove(&self, keys: &std::collections::HashSet<String>) -> std::io::Result<()> {
        if keys.is_empty() {
            return Ok(());
        }
        self.locked(|| {
            if !self.path.exists() {
                return Ok(());
            }
            let on_disk = jsonl::read_if_present(&self.path)?;
            let sorted = self.sort(&on_disk, |entry| !keys.contains(&entry.key))?;
            crate::fsutil::write_atomic(&self.path, &sorted.kept)
        })
    }
}

/// The outbox's lines sorted under its lock.
#[derive(Default)]
struct Sorted {
    /// The entry lines that stay, each ended by a newline.
    kept: Vec<u8>,
    /// How many lines were moved aside.
    set_aside: usize,
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
    fn a_line_that_is_not_utf8_is_counted_then_set_aside_by_the_next_rewrite() {
        let dir = tempfile::tempdir().unwrap();
        let outbox = Outbox::new(dir.path());
        let (a, b) = (entry("a"), entry("b"));
        outbox.append(std::slice::from_ref(&a)).unwrap();
        let mut file = crate::fsutil::append(outbox.path()).unwrap();
        file.write_all(b"{\"key\":\"caf\xc3\"}\n").unwrap();
        outbox
            .append(std::slice::from_ref(&b))
            .unwrap_or_else(|e| panic!("{e}"));
        // Appending moved it aside already: the file holds entries only.
        let pending = outbox.pending().unwrap();
        assert_eq!(pending.entries, vec![a.clone(), b.clone()]);
        assert_eq!(pending.unreadable, 0);
        let torn = std::fs::read_to_string(outbox.torn_path()).unwrap();
        let note: serde_json::Value = serde_json::from_str(torn.trim()).unwrap();
        assert_eq!(note["fragment"], "{\"key\":\"caf\u{fffd}\"}");

        // One written by something else after the last append is counted, and a replay that
        // rewrites the file sets it aside.
        let mut file = crate::fsutil::append(outbox.path()).unwrap();
        file.write_all(b"\xff\xfe\n").unwrap();
        let pending = outbox.pending().unwrap();
        assert_eq!(pending.entries, vec![a.clone(), b.clone()]);
        assert_eq!(pending.unreadable, 1);
        outbox
            .remove(&[a.key.clone()].into_iter().collect())
            .unwrap();
        let pending = outbox.pending().unwrap();
        assert_eq!((pending.entries, pending.unreadable), (vec![b], 0));
        let notes = std::fs::read_to_string(outbox.torn_path()).unwrap();
        assert_eq!(notes.lines().count(), 2);
    }

    #[test]
    fn a_last_entry_missing_only_its_newline_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let outbox = Outbox::new(dir.path());
        let (a, b) = (entry("a"), entry("b"));
        outbox.append(std::slice::from_ref(&a)).unwrap();
        let whole = std::fs::read(outbox.path()).unwrap();
        std::fs::write(outbox.path(), &whole[..whole.len() - 1]).unwrap();
        assert_eq!(outbox.pending().unwrap().entries, vec![a.clone()]);
        outbox.append(std::slice::from_ref(&b)).unwrap();
        assert_eq!(outbox.pending().unwrap().entries, vec![a, b]);
        assert!(!outbox.torn_path().exists());
    }

    /// Writes `entries` to a fresh outbox, cuts the file after `cut(length)` bytes, and checks
    /// that the entries before the cut are all still queued, that an append works, and that
    /// the cut line went to the torn file.
    fn check_cut(entries: &[Entry], cut: impl FnOnce(usize) -> usize) {
        let dir = tempfile::tempdir().unwrap();
        let outbox = Outbox::new(dir.path());
        outbox.append(entries).unwrap();
        let whole = std::fs::read(outbox.path()).unwrap();
        let cut = cut(whole.len());
        std::fs::write(outbox.path(), &whole[..cut]).unwrap();
        let line_start = whole[..cut]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let complete = whole[..cut].iter().filter(|&&b| b == b'\n').count();
        // A line cut just before its newline is a whole entry still.
        let only_newline_lost = whole.get(cut) == Some(&b'\n');
        let kept = complete + usize::from(only_newline_lost);
        let torn = cut > line_start && !only_newline_lost;

        let pending = outbox
            .pending()
            .unwrap_or_else(|e| panic!("cut at {cut}: {e}"));
        assert_eq!(pending.entries, entries[..kept], "cut at {cut}");
        assert_eq!(pending.unreadable, usize::from(torn), "cut at {cut}");

        let later = entry("later, café ✓ 日本");
        outbox.append(std::slice::from_ref(&later)).unwrap();
        let pending = outbox.pending().unwrap();
        let mut expected = entries[..kept].to_vec();
        expected.push(later);
        assert_eq!(pending.entries, expected, "cut at {cut}");
        assert_eq!(pending.unreadable, 0, "cut at {cut}");
        match std::fs::read_to_string(outbox.torn_path()) {
            Ok(notes) => {
                assert!(torn, "cut at {cut}: nothing was torn");
                let note: serde_json::Value = serde_json::from_str(notes.trim()).unwrap();
                let fragment = String::from_utf8_lossy(&whole[line_start..cut]);
                assert_eq!(note["fragment"], *fragment, "cut at {cut}");
            }
            Err(_) => assert!(!torn, "cut at {cut}: the torn line was not kept"),
        }
    }

    #[test]
    fn a_cut_at_any_byte_loses_at_most_the_cut_entry_and_never_blocks_a_write() {
        let entries = [entry("café ✓ 日本"), entry("日本 ✓")];
        let length = {
            let mut text = Vec::new();
            for entry in &entries {
                serde_json::to_writer(&mut text, entry).unwrap();
                text.push(b'\n');
            }
            text.len()
        };
        for cut in 0..=length {
            check_cut(&entries, |_| cut);
        }
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(128))]

            #[test]
            fn any_cut_of_any_outbox_loses_at_most_the_cut_entry(
                titles in prop::collection::vec("[a-z é✓日本]{1,12}", 1..5),
                cut in any::<prop::sample::Index>(),
            ) {
                let entries: Vec<Entry> = titles.iter().map(|t| entry(t)).collect();
                check_cut(&entries, |length| cut.index(length + 1));
            }
        }
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
