//! Indexing the repository: one run under the writer lock.

use std::sync::Arc;
use std::time::Duration;

use super::{AskError, Cairn};
use crate::index::{self, Progress, Report};

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

impl Cairn {
    /// Indexes the repository (only changed files are parsed again) and tells readers.
    pub async fn index(&self, request: IndexRequest) -> Result<Report, AskError> {
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
