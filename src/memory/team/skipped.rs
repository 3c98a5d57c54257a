//! Rows pulled from the team server that this copy skipped past: a row that does not decode,
//! or that fails the checks and limits `cairn memory import` applies. Any member's client can
//! write any row, so one bad row must never stop the pull cursor; it is left on the server,
//! named by table, id and number (never by its content) in a warning, and recorded beside
//! the local copy for `cairn doctor`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Reasons kept for `cairn doctor`, newest last.
const NEWEST: usize = 10;

/// A pulled row left out. Every text in it is safe to print: the id is shown only when it is
/// a short plain word the secret scanner passes, and the reason quotes no value of the row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    /// `memory` or `review`.
    pub table: String,
    /// The row's id in backquotes, or `(value withheld)`.
    pub id: String,
    /// The row's number in the server's write sequence (0 when it has none).
    pub seq: u64,
    /// What is wrong with it.
    pub reason: String,
    /// When this copy skipped it (ms since the epoch).
    #[serde(default)]
    pub at: i64,
}

impl Skipped {
    /// A row of `table` whose id is `id` (as the server holds it), left out because of
    /// `reason` (redacted once more here, whatever made it).
    pub fn new(table: &str, id: Option<&str>, seq: u64, reason: &str) -> Skipped {
        Skipped {
            table: table.to_string(),
            id: match id {
                Some(id) => crate::secrets::quoted(id).to_string(),
                None => "(no id)".to_string(),
            },
            seq,
            reason: crate::secrets::redact(reason).text,
            at: crate::clock::now_ms(),
        }
    }

    /// One line for a warning or `cairn doctor`.
    pub fn describe(&self) -> String {
        format!(
            "{} {} (number {}): {}",
            self.table, self.id, self.seq, self.reason
        )
    }
}

/// What one team database's copy has skipped so far.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkipRecord {
    /// Rows skipped, all told.
    pub total: u64,
    /// The highest sequence number recorded: a row at or below it was counted already (by
    /// this process or another pulling the same database).
    pub through: u64,
    /// The newest of them, oldest first.
    pub newest: Vec<Skipped>,
}

/// The record of skipped rows in one team copy's directory.
pub struct SkipLog {
    path: PathBuf,
    lock: PathBuf,
}

impl SkipLog {
    pub fn new(dir: &Path) -> SkipLog {
        SkipLog {
            path: dir.join("skipped.json"),
            lock: dir.join("skipped.lock"),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What was recorded (nothing when the file is missing or unreadable).
    pub fn read(&self) -> SkipRecord {
        std::fs::read(&self.path)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    /// Adds the rows not counted yet (by this process or another); returns them.
    pub fn record(&self, skipped: &[Skipped]) -> std::io::Result<Vec<Skipped>> {
        if skipped.is_empty() {
            return Ok(Vec::new());
        }
        crate::fsutil::locked(&self.lock, || {
            let mut record = self.read();
            let added = add(&mut record, skipped);
            if !added.is_empty() {
                let bytes = serde_json::to_vec(&record).map_err(std::io::Error::other)?;
                crate::fsutil::write_atomic(&self.path, &bytes)?;
            }
            Ok(added)
        })
    }
}

/// Counts the rows above the record's mark, keeps the newest [`NEWEST`], and returns the
/// rows counted.
fn add(record: &mut SkipRecord, skipped: &[Skipped]) -> Vec<Skipped> {
    let mut fresh: Vec<Skipped> = skipped
        .iter()
        .filter(|s| s.seq > record.through)
        .cloned()
        .collect();
    fresh.sort_by_key(|s| s.seq);
    for row in &fresh {
        record.total += 1;
        record.through = record.through.max(row.seq);
        record.newest.push(row.clone());
    }
    let extra = record.newest.len().saturating_sub(NEWEST);
    record.newest.drain(..extra);
    fresh
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skipped(seq: u64) -> Skipped {
        Skipped::new("memory", Some("m_00000000000000a1"), seq, "empty content")
    }

    #[test]
    fn a_row_is_counted_once_and_only_the_newest_reasons_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let log = SkipLog::new(dir.path());
        let counted = log.record(&[skipped(3), skipped(1)]).unwrap();
        assert_eq!(counted.iter().map(|s| s.seq).collect::<Vec<_>>(), [1, 3]);
        // Pulled again by another process from an older cursor: not counted twice.
        assert!(log.record(&[skipped(1), skipped(3)]).unwrap().is_empty());
        let many: Vec<Skipped> = (4..4 + NEWEST as u64 + 5).map(skipped).collect();
        log.record(&many).unwrap();
        let record = log.read();
        assert_eq!(record.total, 2 + NEWEST as u64 + 5);
        assert_eq!(record.newest.len(), NEWEST);
        assert_eq!(record.newest.last().unwrap().seq, record.through);
        assert_eq!(record.newest[0].seq, record.through + 1 - NEWEST as u64);
    }

    #[test]
    fn an_id_or_reason_holding_a_secret_is_withheld() {
        let token = ["gh", "p_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"].concat();
        let row = Skipped::new(
            "review",
            Some(&token),
            9,
            &format!("field `author` is {token}"),
        );
        let line = row.describe();
        assert!(!line.contains(&token), "{line}");
        assert!(
            line.starts_with("review (value withheld) (number 9): "),
            "{line}"
        );
    }
}
