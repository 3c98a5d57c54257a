//! Store access: where a process's memories are stored and how the store is opened. The
//! embedded engine admits one process at a time, so a store on disk is opened for each read
//! or write (or kept open a little while by a long-running process), and a marker file beside
//! it holds the last write's sequence number so readers know, without opening it, whether
//! another process wrote.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::Mutex;

use super::store::MemoryStore;
use super::{Result, store_error};

/// How long a write waits for another process to release the store.
const WRITE_PATIENCE: Duration = Duration::from_secs(30);
/// How long a read waits before answering from the memories it already holds. A process
/// that holds none yet (a CLI command) has nothing to answer from, and a daemon under load
/// can keep the store a few seconds (its linger, then vectors written after a write): 2 s
/// made `cairn memory show` beside a busy daemon fail.
const READ_PATIENCE: Duration = Duration::from_secs(10);

/// Where memories live.
pub(super) enum Access {
    /// A persistent store opened for each read or write, with a marker file holding the last
    /// write's sequence number.
    Disk {
        dir: PathBuf,
        marker: PathBuf,
        /// A long-running process keeps the store open this long after its last use, so a
        /// burst of writes (an assistant storing a review's learnings) opens it once.
        linger: Option<Duration>,
        /// The store while it lingers.
        open: Arc<Mutex<Option<Lingering>>>,
    },
    /// A store held open by this process (tests, benchmarks).
    Held(MemoryStore),
}

/// A store kept open after its last use.
pub(super) struct Lingering {
    store: MemoryStore,
    last_use: Instant,
}

impl Access {
    /// The store in `dir`, opened for each use.
    pub(super) fn disk(dir: PathBuf, marker: PathBuf) -> Access {
        Access::Disk {
            dir,
            marker,
            linger: None,
            open: Arc::new(Mutex::new(None)),
        }
    }

    /// Keeps the store open for `linger` after each use.
    pub(super) fn linger(&mut self, after: Duration) {
        if let Access::Disk { linger, .. } = self {
            *linger = Some(after);
        }
    }

    /// Moves a store on disk to `dir`, its marker to `marker` (team mode's local copy).
    pub(super) fn relocate(&mut self, to: PathBuf, to_marker: PathBuf) {
        if let Access::Disk { dir, marker, .. } = self {
            *dir = to;
            *marker = to_marker;
        }
    }

    /// False for a store on disk that was never created.
    pub(super) fn exists(&self) -> bool {
        match self {
            Access::Disk { dir, .. } => dir.exists(),
            Access::Held(_) => true,
        }
    }

    /// Closes a lingering store now (before the process exits).
    pub(super) async fn close(&self) {
        if let Access::Disk { open, .. } = self
            && let Some(held) = open.lock().await.take()
        {
            held.store.close().await;
        }
    }

    /// Runs `f` with the store open, closing it afterwards unless it lingers. `Ok(None)`:
    /// there is no store and `create` is false.
    pub(super) async fn with_store<T>(
        &self,
        create: bool,
        f: impl AsyncFnOnce(&MemoryStore) -> Result<T>,
    ) -> Result<Option<T>> {
        let (dir, linger, open) = match self {
            Access::Held(store) => return f(store).await.map(Some),
            Access::Disk {
                dir, linger, open, ..
            } => (dir, linger, open),
        };
        if !create && !dir.exists() {
            return Ok(None);
        }
        // Readers wait briefly and fall back to what they hold; writers wait longer.
        let patience = if create {
            WRITE_PATIENCE
        } else {
            READ_PATIENCE
        };
        let Some(linger) = *linger else {
            let store = MemoryStore::open_within(dir, patience)
                .await
                .map_err(store_error)?;
            let result = f(&store).await;
            store.close().await;
            return result.map(Some);
        };
        let mut held = open.lock().await;
        if held.is_none() {
            let store = MemoryStore::open_within(dir, patience)
                .await
                .map_err(store_error)?;
            *held = Some(Lingering {
                store,
                last_use: Instant::now(),
            });
            spawn_closer(open.clone(), linger);
        }
        let lingering = held.as_mut().expect("opened above");
        let result = f(&lingering.store).await;
        lingering.last_use = Instant::now();
        result.map(Some)
    }

    /// The last sequence number any process wrote, when it can be known without opening
    /// the store.
    pub(super) fn marker(&self) -> Option<u64> {
        match self {
            Access::Held(_) => None,
            Access::Disk { marker, .. } => std::fs::read_to_string(marker)
                .ok()
                .and_then(|s| s.trim().parse().ok()),
        }
    }

    /// Sets the marker back to `seq` (the team copy was cleared to be pulled again).
    pub(super) fn reset_marker(&self, seq: u64) {
        if let Access::Disk { marker, .. } = self
            && let Err(e) = crate::fsutil::write_atomic(marker, seq.to_string().as_bytes())
        {
            tracing::warn!("cannot update {}: {e}", marker.display());
        }
    }

    /// Records the last sequence number; called while the store is still open, so writers
    /// update it in the order they wrote.
    pub(super) fn set_marker(&self, seq: u64) {
        if let Access::Disk { marker, .. } = self {
            if self.marker().is_some_and(|current| current >= seq) {
                return;
            }
            if let Err(e) = crate::fsutil::write_atomic(marker, seq.to_string().as_bytes()) {
                tracing::warn!("cannot update {}: {e}", marker.display());
            }
        }
    }
}

/// Closes a lingering store once it has been idle for `linger`.
fn spawn_closer(open: Arc<Mutex<Option<Lingering>>>, linger: Duration) {
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(linger).await;
            let mut held = open.lock().await;
            match held.as_ref() {
                Some(lingering) if lingering.last_use.elapsed() < linger => continue,
                Some(_) => {
                    if let Some(lingering) = held.take() {
                        lingering.store.close().await;
                    }
                    return;
                }
                None => return,
            }
        }
    });
}
