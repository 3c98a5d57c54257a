//! Indexing the repository: one run under the writer lock.

use std::sync::Arc;
use std::time::Duration;

use super::{AskError, Cairn};
use crate::index::{self, Progress, Report};
use crate::running::{self, client};

/// Told once, with the holder's pid if known, when another run holds the lock.
pub type Waiting = Box<dyn FnOnce(Option<&str>) + Send>;

/// One index run: how long to wait for another run to finish, what to do meanwhile, and
/// where the run says how far it is.
pub struct IndexRequest {
    pub patience: Duration,
    pub waiting: Waiting,
    pub progress: Arc<Progress>,
}

impl Default for IndexRequest {
    fn default() -> Self {
        IndexRequest {
            patience: Duration::from_secs(60),
            waiting: Box::new(|_| {}),
            progress: Arc::default(),
        }
    }
}

/// How long `cairn index` waits for a daemon it handed the run to.
const HANDOFF_TIMEOUT: Duration = Duration::from_secs(900);

impl Cairn {
    /// Indexes the repository (only changed files are parsed again) and tells readers. When
    /// a daemon serves the repository, it does the run against the index it holds.
    pub async fn index(&self, request: IndexRequest) -> Result<Report, AskError> {
        if let Some(report) = self.index_by_daemon(&request.progress).await {
            return Ok(report);
        }
        index::index_repository(
            &self.repo,
            request.patience,
            request.waiting,
            request.progress,
        )
        .await
        .map_err(AskError::Index)
    }
}

impl Cairn {
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
