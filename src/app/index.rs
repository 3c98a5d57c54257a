//! Indexing the repository: one run under the writer lock.

use std::sync::Arc;
use std::time::Duration;

use super::{AskError, Cairn};
use crate::index::{self, Progress, Report};
use crate::running::{self, client};

/// Told once, with the holder's pid if known, when another run holds the lock.
pub type Waiting = Box<dyn FnOnce(Option<&str>) + Send>;

/// One index run: how long to wait for another run to finish, what to do meanwhile, where
/// the run says how far it is, and whether it starts from an empty graph store.
pub struct IndexRequest {
    pub patience: Duration,
    pub waiting: Waiting,
    pub progress: Arc<Progress>,
    /// Discard the graph store first (a damaged one); the memories are another store, kept.
    pub rebuild: bool,
}

impl Default for IndexRequest {
    fn default() -> Self {
        IndexRequest {
            patience: Duration::from_secs(60),
            waiting: Box::new(|_| {}),
            progress: Arc::default(),
            rebuild: false,
        }
    }
}

/// How long `cairn index` waits for a daemon it handed the run to.
const HANDOFF_TIMEOUT: Duration = Duration::from_secs(900);

impl Cairn {
    /// Indexes the repository (only changed files are parsed again, or every file after a
    /// rebuild) and tells readers. When a daemon serves the repository, it does an
    /// incremental run against the index it holds; a rebuild runs here, and the daemon
    /// reloads what it wrote.
    pub async fn index(&self, request: IndexRequest) -> Result<Report, AskError> {
        if !request.rebuild
            && let Some(report) = self.index_by_daemon(&request.progress).await
        {
            return Ok(report);
        }
        let run = if request.rebuild {
            self.refuse_rebuild_under_daemon()?;
            index::Run::Rebuild
        } else {
            index::Run::Incremental
        };
        index::index_repository(
            &self.repo,
            request.patience,
            request.waiting,
            request.progress,
            run,
        )
        .await
        .map_err(AskError::Index)
    }
}

impl Cairn {
    /// A rebuild while a daemon serves the repository is refused: the daemon holds the index
    /// in memory and would write its changes onto the rebuilt store as if onto its own.
    fn refuse_rebuild_under_daemon(&self) -> Result<(), AskError> {
        match running::DaemonRecord::running(&self.repo.data_dir) {
            Some(record) => Err(AskError::Index(anyhow::anyhow!(
                "the daemon (pid {}) serves this repository from the index it holds: stop it, run `cairn index --rebuild`, then start it again",
                record.pid
            ))),
            None => Ok(()),
        }
    }

    /// The report of an index run done by the daemon serving this repository; `None` when no
    /// daemon runs or it did not take the run (then the caller indexes itself).
    async fn index_by_daemon(&self, progress: &Progress) -> Option<Report> {
        let data_dir = &self.repo.data_dir;
        let record = running::DaemonRecord::running(data_dir)?;
        let token = running::read_token(data_dir)?;
        progress.enter(index::Phase::Daemon);
        let port = record.port;
        let answer = tokio::task::spawn_blocking(move || {
            let body = client::post(port, &token, "/index", HANDOFF_TIMEOUT)?;
            Ok::<Report, anyhow::Error>(serde_json::from_str(&body)?)
        })
        .await;
        match answer {
            Ok(Ok(report)) => Some(report),
            Ok(Err(e)) => {
                tracing::warn!(
                    "the daemon (pid {}) did not take the index run, indexing here: {e:#}",
                    record.pid
                );
                None
            }
            Err(e) => {
                tracing::warn!("handing the index run to the daemon failed: {e}");
                None
            }
        }
    }
}
