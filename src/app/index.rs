//! Indexing the repository: one run under the writer lock.

use std::time::Duration;

use super::{AskError, Cairn};
use crate::index::{self, Report};

/// Told once, with the holder's pid if known, when another run holds the lock.
pub type Waiting = Box<dyn FnOnce(Option<&str>) + Send>;

/// One index run: how long to wait for another run to finish, and what to do meanwhile.
pub struct IndexRequest {
    pub patience: Duration,
    pub waiting: Waiting,
}

impl Default for IndexRequest {
    fn default() -> Self {
        IndexRequest {
            patience: Duration::from_secs(60),
            waiting: Box::new(|_| {}),
        }
    }
}

impl Cairn {
    /// Indexes the repository (only changed files are parsed again) and tells readers.
    pub async fn index(&self, request: IndexRequest) -> Result<Report, AskError> {
        index::index_repository(&self.repo, request.patience, request.waiting)
            .await
            .map_err(AskError::Index)
    }
}
