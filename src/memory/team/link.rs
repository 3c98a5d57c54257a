//! A team store in use: the server, the outbox, the local copy of what the server let this
//! developer read (`<data>/team-<hash>/memory`, same layout as the embedded memory store) and
//! the record of the last sync, which `cairn status` and `cairn doctor` show.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::outbox;
use super::server::Server;
use super::skipped::{SkipLog, Skipped};
use crate::config::team::TeamConfig;
use crate::fsutil::jsonl;

/// A team store in use: the server, the outbox, the local copy and the sync record.
pub struct Link {
    pub config: Arc<TeamConfig>,
    pub server: Server,
    pub outbox: outbox::Outbox,
    dir: PathBuf,
    /// When this process last recorded a successful exchange (ms), so a search does not read
    /// the sync record each time.
    recorded_ok: std::sync::atomic::AtomicI64,
}

/// The last sync, as recorded on disk for `cairn status` and `cairn doctor`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SyncRecord {
    /// Last successful exchange with the server (ms since the epoch).
    #[serde(default)]
    pub synced_at: Option<i64>,
    /// The last failure, if the server was away at the last attempt.
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub error_at: Option<i64>,
}

/// What `cairn status` shows of team mode.
#[derive(Debug, Clone, Serialize)]
pub struct TeamStatus {
    pub server: String,
    pub developer: String,
    pub repository: String,
    pub namespace: String,
    pub database: String,
    pub queued: usize,
    /// Lines of the outbox that are not writes (cut short by a crash), set aside at the next
    /// write or replay.
    pub unreadable: usize,
    pub rejected: usize,
    #[serde(flatten)]
    pub sync: SyncRecord,
}

impl Link {
    /// The link for `config`, its local files under `data_dir/team-<hash of server and
    /// repository>` (another server or repository gets another copy).
    pub fn new(config: Arc<TeamConfig>, data_dir: &Path) -> Link {
        let hash = xxhash_rust::xxh3::xxh3_64(
            format!(
                "{}\n{}\n{}",
                config.url, config.identity.namespace, config.identity.database
            )
            .as_bytes(),
        );
        let dir = crate::datadir::DataDir::at(data_dir).team(hash);
        Link {
            server: Server::new(
                &config.url,
                &config.identity.namespace,
                &config.identity.database,
                config.credentials.clone(),
            ),
            outbox: outbox::Outbox::new(&dir),
            config,
            dir,
            recorded_ok: std::sync::atomic::AtomicI64::new(0),
        }
    }

    /// The local copy's store directory.
    pub(crate) fn mirror_dir(&self) -> PathBuf {
        self.dir.join("memory")
    }

    /// The local copy's sequence marker.
    pub fn marker(&self) -> PathBuf {
        self.dir.join("memory.seq")
    }

    /// Writes that the server refused for good (kept for inspection).
    pub(crate) fn rejected_path(&self) -> PathBuf {
        self.dir.join("outbox.rejected.jsonl")
    }

    fn sync_path(&self) -> PathBuf {
        self.dir.join("sync.json")
    }

    pub(crate) fn sync_record(&self) -> SyncRecord {
        std::fs::read_to_string(self.sync_path())
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default()
    }

    /// Records the outcome of an exchange with the server.
    pub(crate) fn record_sync(&self, error: Option<&str>) {
        use std::sync::atomic::Ordering;
        let now = crate::clock::now_ms();
        // Not worth a file read and write per query.
        if error.is_none() && now - self.recorded_ok.load(Ordering::Relaxed) < 1_000 {
            return;
        }
        let mut record = self.sync_record();
        match error {
            None => {
                self.recorded_ok.store(now, Ordering::Relaxed);
                record.synced_at = Some(now);
                record.error = None;
                record.error_at = None;
            }
            Some(error) => {
                self.recorded_ok.store(0, Ordering::Relaxed);
                record.error = Some(error.to_string());
                record.error_at = Some(now);
            }
        }
        let written = serde_json::to_vec(&record)
            .map_err(std::io::Error::other)
            .and_then(|bytes| crate::fsutil::write_atomic(&self.sync_path(), &bytes));
        if let Err(e) = written {
            tracing::warn!("cannot record the team sync state: {e}");
        }
    }

    /// Team mode's state for `cairn status` / `cairn doctor`.
    pub fn status(&self) -> TeamStatus {
        let (queued, unreadable) = match self.outbox.pending() {
            Ok(pending) => (pending.entries.len(), pending.unreadable),
            Err(e) => {
                tracing::warn!("cannot read {}: {e}", self.outbox.path().display());
                (0, 0)
            }
        };
        let rejected = jsonl::read_if_present(&self.rejected_path()).map_or(0, |bytes| {
            jsonl::segments::<serde::de::IgnoredAny>(&bytes).len()
        });
        TeamStatus {
            server: self.config.url.clone(),
            developer: self.config.credentials.developer.clone(),
            repository: self.config.identity.key.clone(),
            namespace: self.config.identity.namespace.clone(),
            database: self.config.identity.database.clone(),
            queued,
            unreadable,
            rejected,
            sync: self.sync_record(),
        }
    }

    /// The record of pulled rows this copy skipped past.
    pub fn skip_log(&self) -> SkipLog {
        SkipLog::new(&self.dir)
    }

    /// Warns about pulled rows skipped past (each once, however many processes pull them)
    /// and records them for `cairn doctor`.
    pub(crate) fn skip(&self, skipped: Vec<Skipped>) {
        if skipped.is_empty() {
            return;
        }
        let log = self.skip_log();
        let fresh = log.record(&skipped).unwrap_or_else(|e| {
            tracing::warn!(
                "cannot record skipped rows in {}: {e}",
                log.path().display()
            );
            skipped
        });
        let identity = &self.config.identity;
        for row in fresh {
            tracing::warn!(
                "skipped {} from the team server at {} ({}/{}); it stays on the server, and `cairn doctor` lists it",
                row.describe(),
                self.config.url,
                identity.namespace,
                identity.database
            );
        }
    }

    /// Keeps entries the server will never take, so nothing is silently dropped.
    pub fn reject(&self, entry: &outbox::Entry, reason: &str) -> std::io::Result<()> {
        let mut record = serde_json::to_value(entry).map_err(std::io::Error::other)?;
        record["rejected"] = serde_json::Value::String(reason.to_string());
        let mut line = record.to_string().into_bytes();
        line.push(b'\n');
        crate::fsutil::private_dir(&self.dir)?;
        jsonl::append_line(&self.rejected_path(), &line)
    }
}
