//! `cairn hook`: Claude Code hook events (JSON on stdin) become episodic events — files read,
//! edited, searched, commands run — appended to the repository's event file, which feeds the
//! recency and frequency of every score. On `SessionStart` it prints the context pack (from
//! the running daemon when there is one), which Claude Code adds to the session.
//!
//! A hook must never get in the assistant's way: every failure is logged to
//! `<data dir>/hook.log` (rolled over at a size limit) and the process still exits 0 with
//! nothing on stdout.

use std::io::Read;
use std::path::Path;
use std::time::Duration;

use anyhow::Context as _;

use crate::app::Cairn;
use crate::config::Repo;
use crate::datadir::DataDir;
use crate::events::hook::{HookInput, record};
use crate::running;

/// Hook events larger than this are not Claude Code's.
const MAX_EVENT_BYTES: u64 = 1024 * 1024;

/// How long `SessionStart` waits for the daemon's context.
const CONTEXT_TIMEOUT: Duration = Duration::from_secs(5);

/// `cairn hook`: reads the event from stdin, records it, and returns what the session
/// should start with (the caller prints it). Never fails: errors go to `hook.log`.
pub fn run(repo: Option<&Path>, data_dir: Option<&Path>) -> Option<String> {
    let mut bytes = Vec::new();
    let located = std::io::stdin()
        .take(MAX_EVENT_BYTES)
        .read_to_end(&mut bytes)
        .context("reading the hook event")
        .and_then(|_| {
            let input = HookInput::parse(&bytes)?;
            let start = match (repo, &input.cwd) {
                (Some(repo), _) => repo.to_path_buf(),
                (None, Some(cwd)) => cwd.clone(),
                (None, None) => std::env::current_dir().context("no working directory")?,
            };
            Ok((Repo::discover(&start, data_dir)?, input))
        });
    let (repo, input) = match located {
        Ok(located) => located,
        Err(e) => {
            // No repository to log beside: the user's cache directory.
            if let Some(dir) = dirs::cache_dir() {
                log(&dir.join("cairn"), &e);
            }
            return None;
        }
    };
    record_and_answer(&repo, &input).unwrap_or_else(|e| {
        log(&repo.data_dir, &e);
        None
    })
}

fn record_and_answer(repo: &Repo, input: &HookInput) -> anyhow::Result<Option<String>> {
    if !record(repo, input)? {
        return Ok(None);
    }
    if let Some(record) = running::DaemonRecord::running(&repo.data_dir) {
        let token = running::read_token(&repo.data_dir).unwrap_or_default();
        match crate::running::client::get(record.port, &token, "/context", CONTEXT_TIMEOUT) {
            Ok(text) => return Ok(Some(text)),
            Err(e) => tracing::debug!("the daemon did not answer: {e:#}"),
        }
    }
    // No daemon: build the context here (loads the stored index once).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let report = runtime.block_on(async {
        let cairn = Cairn::new(repo.clone());
        let report = cairn.context(Default::default()).await;
        cairn.memories.close().await;
        report
    })?;
    Ok(Some(report.text))
}

/// Appends the failure to `hook.log` in `dir`, which rolls over at its size limit.
fn log(dir: &Path, error: &anyhow::Error) {
    let _ = std::fs::create_dir_all(dir);
    let line = format!("{} cairn hook: {error:#}\n", crate::clock::now());
    let _ = crate::fsutil::rotation::append(
        &DataDir::at(dir).hook_log(),
        line.as_bytes(),
        crate::fsutil::rotation::LIMIT,
    );
}
