//! `cairn index` handed to the running daemon: the daemon walks the tree against the index it
//! holds (no reload of the store), publishes the result, and answers once its writer has
//! stored it — the run costs what changed, not what the repository holds.

use std::time::{Duration, Instant};

use anyhow::Context as _;
use tokio::sync::{mpsc, oneshot, watch};

use crate::index::Report;

/// An ask from the HTTP side to the daemon's loop: answered with the refresh's report and the
/// sequence number of the write that will store it.
pub(crate) type Ask = oneshot::Sender<(Report, u64)>;

/// How far the writer has got: every job up to `through` is stored (or was dropped because
/// another process wrote the store), with the report of the last write.
#[derive(Debug, Clone, Default)]
pub struct Settled {
    pub through: u64,
    pub report: Option<Report>,
}

/// The HTTP side's handle: where to ask, and where to watch the writer.
#[derive(Clone)]
pub struct Reindex {
    pub asks: mpsc::Sender<Ask>,
    pub settled: watch::Receiver<Settled>,
}

impl Reindex {
    /// One index run by the daemon, answered when it is stored (at most `patience` for the
    /// write: the store may be held by another writer).
    pub async fn run(&self, patience: Duration) -> anyhow::Result<Report> {
        let started = Instant::now();
        let (reply, answer) = oneshot::channel();
        self.asks
            .send(reply)
            .await
            .ok()
            .context("the daemon is stopping")?;
        let (mut report, sequence) = answer.await.ok().context("the daemon is stopping")?;
        let mut settled = self.settled.clone();
        let written = tokio::time::timeout(patience, settled.wait_for(|s| s.through >= sequence))
            .await
            .ok()
            .context("the daemon has not stored the index yet (the store is busy)")?
            .ok()
            .context("the daemon is stopping")?
            .report
            .clone();
        if let Some(written) = written {
            report = Report {
                parsed: report.parsed,
                ..written
            };
        }
        report.seconds = started.elapsed().as_secs_f64();
        report.daemon = Some(std::process::id());
        Ok(report)
    }
}
