//! `cairn daemon`: one per repository. It keeps the index in memory and in step with the
//! working tree (file events, debounced, re-read per file; HEAD moves refresh the history),
//! answers from that resident index, and serves it over streamable HTTP on 127.0.0.1 and over
//! a Unix socket that `cairn serve` relays stdio through.
//!
//! The embedded store admits one process at a time, so the daemon does not hold it: each
//! refresh is published to the in-memory service first (answers see it at once), then written
//! under the writer lock with the store opened for that write only. `cairn index`, the CLI and
//! a `cairn serve` without a daemon keep working beside it.

pub mod client;
pub mod files;
pub mod http;
pub mod watch;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::app::{Cairn, Snapshot};
use crate::config::Repo;
use crate::index::{self, Live};

pub use files::{DaemonRecord, ensure_token, read_token};

/// How long a write waits for another writer (a `cairn index` run) before retrying later.
const WRITE_PATIENCE: Duration = Duration::from_secs(30);

/// The longest a burst of events can postpone a refresh.
const MAX_DELAY: Duration = Duration::from_millis(1000);

/// How soon a write that failed (store busy) is tried again.
const RETRY: Duration = Duration::from_secs(5);

/// Why the daemon did not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("a cairn daemon is already running for {root} (pid {pid}, {url})")]
    Running {
        root: PathBuf,
        pid: u32,
        url: String,
    },
    #[error("a cairn daemon is already starting for this repository (lock {0})")]
    Starting(PathBuf),
    #[error(transparent)]
    Other(#[from] anyhow::Error),
}

/// Runs the daemon until SIGTERM or SIGINT. `ready` is told the record once it serves.
pub async fn run(
    repo: Repo,
    model_dir: Option<PathBuf>,
    port: Option<u16>,
    ready: impl FnOnce(&DaemonRecord),
) -> Result<(), StartError> {
    std::fs::create_dir_all(&repo.data_dir)
        .with_context(|| format!("cannot create {}", repo.data_dir.display()))?;
    let _lock = take_lock(&repo.data_dir)?;
    let token = ensure_token(&repo.data_dir).context("cannot create the bearer token")?;
    let port = port.unwrap_or(repo.settings.daemon.port);
    let listener = tokio::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, port))
        .await
        .with_context(|| format!("cannot listen on 127.0.0.1:{port}"))?;
    let port = listener.local_addr().context("no local address")?.port();

    let shutdown = CancellationToken::new();
    spawn_signal_handler(shutdown.clone());

    let started = Instant::now();
    let (report, live) = index::load_live(&repo, Duration::from_secs(600), |holder| {
        tracing::info!(?holder, "waiting for another index run");
    })
    .await
    .context("the first index run failed")?;
    tracing::info!(
        files = report.files,
        parsed = report.parsed,
        seconds = started.elapsed().as_secs_f64(),
        "index ready"
    );
    trim_heap();
    let cairn = Cairn::resident(repo.clone(), model_dir);
    let mut state = State {
        repo: repo.clone(),
        cairn: cairn.clone(),
        live,
        commit: report.commit.clone(),
        history: crate::app::stored_history(&repo.store_dir()).await.ok(),
        unwritten: false,
    };
    state.publish().await;

    let (sender, mut events) = mpsc::unbounded_channel();
    let mut filter = watch::Filter::new(&repo);
    let dirs = watch::directories(&repo, &repo.root);
    let mut watcher = watch::watch(&repo, &dirs, sender).context("cannot watch the repository")?;
    tracing::info!(directories = dirs.len(), "watching");

    let server = {
        let app = http::router(cairn.clone(), token, port, shutdown.child_token());
        let stop = shutdown.clone();
        tokio::spawn(async move {
            let served = axum::serve(listener, app)
                .with_graceful_shutdown(async move { stop.cancelled().await })
                .await;
            if let Err(e) = served {
                tracing::error!("the HTTP server stopped: {e}");
            }
        })
    };
    let socket = files::socket_path(&repo.data_dir);
    let relay = serve_socket(&socket, cairn.clone(), shutdown.clone());

    let record = DaemonRecord {
        pid: std::process::id(),
        url: format!("http://127.0.0.1:{port}/mcp"),
        port,
        socket: socket.clone(),
        root: repo.root.clone(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        started_at: index::now(),
    };
    record
        .write(&repo.data_dir)
        .context("cannot write daemon.json")?;
    ready(&record);

    let debounce = Duration::from_millis(repo.settings.daemon.debounce_ms);
    let mut batch = watch::Batch::default();
    let mut first: Option<Instant> = None;
    let mut last = Instant::now();
    loop {
        let wake = match first {
            Some(first) => (last + debounce).min(first + MAX_DELAY),
            None if state.unwritten => Instant::now() + RETRY,
            None => Instant::now() + Duration::from_secs(3600),
        };
        tokio::select! {
            _ = shutdown.cancelled() => break,
            event = events.recv() => {
                let Some(event) = event else { break };
                match event {
                    Ok(event) => filter.classify(&event, &mut batch),
                    Err(e) => {
                        tracing::warn!("watch error: {e}");
                        batch.rescan = true;
                    }
                }
                if !batch.is_empty() || !batch.new_dirs.is_empty() {
                    last = Instant::now();
                    first.get_or_insert(last);
                }
            }
            _ = tokio::time::sleep_until(wake.into()) => {
                let ready = std::mem::take(&mut batch);
                first = None;
                for dir in &ready.new_dirs {
                    for inner in watch::directories(&repo, dir) {
                        watch::add(&mut watcher, &inner);
                    }
                }
                state.refresh(ready).await;
            }
        }
    }
    tracing::info!("shutting down");
    drop(watcher);
    shutdown.cancel();
    let _ = server.await;
    if let Some(relay) = relay {
        let _ = relay.await;
    }
    if state.unwritten {
        state.write(index::Update::default()).await;
    }
    if let Err(e) = cairn.memories.flush_access().await {
        tracing::warn!("writing memory read statistics failed: {e}");
    }
    cairn.memories.close().await;
    let _ = std::fs::remove_file(files::record_path(&repo.data_dir));
    let _ = std::fs::remove_file(&socket);
    Ok(())
}

/// The daemon's moving parts between events.
struct State {
    repo: Repo,
    cairn: Arc<Cairn>,
    live: Live,
    commit: Option<String>,
    history: Option<(Vec<crate::review::history::CommitInfo>, Option<String>)>,
    /// The last refresh is published but not yet in the store (it was busy).
    unwritten: bool,
}

impl State {
    async fn publish(&self) {
        let (commits, head) = self.history.clone().unwrap_or_default();
        self.cairn
            .publish(Snapshot::resident(
                self.live.graph(),
                self.live.meta(self.commit.clone()),
                self.live.stamps(),
                commits,
                head,
            ))
            .await;
    }

    async fn refresh(&mut self, batch: watch::Batch) {
        if batch.is_empty() && !self.unwritten {
            return;
        }
        let started = Instant::now();
        let paths: Vec<String> = batch.files.into_iter().collect();
        let scope = (!batch.rescan).then_some(paths.as_slice());
        let update = tokio::task::block_in_place(|| self.live.refresh(&self.repo, scope));
        let changed = !update.delta.is_empty();
        if changed {
            self.publish().await;
            tracing::info!(
                files = paths.len(),
                rescan = batch.rescan,
                elapsed = ?started.elapsed(),
                "published"
            );
        }
        if changed || batch.head_moved || self.unwritten {
            self.write(update).await;
            if batch.head_moved {
                self.history = crate::app::stored_history(&self.repo.store_dir())
                    .await
                    .ok();
            }
            self.publish().await;
        }
    }

    async fn write(&mut self, update: index::Update) {
        match index::write_update(&self.repo, &mut self.live, update, WRITE_PATIENCE).await {
            Ok(report) => {
                self.commit = report.commit;
                self.unwritten = false;
                tracing::debug!(wrote = report.wrote, "stored");
            }
            Err(e) => {
                // The next write reloads from the store and writes the whole difference.
                tracing::warn!("the index could not be stored yet: {e:#}");
                self.live.invalidate();
                self.unwritten = true;
            }
        }
        trim_heap();
    }
}

/// Takes the one-daemon-per-repository lock, or says who holds it.
fn take_lock(data_dir: &Path) -> Result<std::fs::File, StartError> {
    let path = files::lock_path(data_dir);
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => {
            match std::fs::read_to_string(files::record_path(data_dir))
                .ok()
                .and_then(|text| serde_json::from_str::<DaemonRecord>(&text).ok())
            {
                Some(record) => Err(StartError::Running {
                    root: record.root,
                    pid: record.pid,
                    url: record.url,
                }),
                None => Err(StartError::Starting(path)),
            }
        }
        Err(std::fs::TryLockError::Error(e)) => Err(anyhow::Error::from(e)
            .context("cannot lock daemon.lock")
            .into()),
    }
}

fn spawn_signal_handler(shutdown: CancellationToken) {
    tokio::spawn(async move {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            let (Ok(mut term), Ok(mut interrupt)) = (
                signal(SignalKind::terminate()),
                signal(SignalKind::interrupt()),
            ) else {
                tracing::error!("cannot listen for signals");
                return;
            };
            tokio::select! {
                _ = term.recv() => {}
                _ = interrupt.recv() => {}
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
        shutdown.cancel();
    });
}

/// Serves MCP on the Unix socket, one session per connection.
#[cfg(unix)]
fn serve_socket(
    path: &Path,
    cairn: Arc<Cairn>,
    shutdown: CancellationToken,
) -> Option<tokio::task::JoinHandle<()>> {
    use rmcp::ServiceExt as _;
    let _ = std::fs::remove_file(path);
    let listener = match tokio::net::UnixListener::bind(path) {
        Ok(listener) => listener,
        Err(e) => {
            tracing::warn!(
                "no socket at {} ({e}); `cairn serve` will open the store itself",
                path.display()
            );
            return None;
        }
    };
    if let Err(e) = files::restrict(path) {
        tracing::warn!("cannot restrict {}: {e}", path.display());
    }
    Some(tokio::spawn(async move {
        loop {
            let stream = tokio::select! {
                _ = shutdown.cancelled() => break,
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => stream,
                    Err(e) => {
                        tracing::warn!("socket accept failed: {e}");
                        continue;
                    }
                },
            };
            let server = crate::mcp::Server::new(cairn.clone());
            let stop = shutdown.clone();
            tokio::spawn(async move {
                match server.serve(stream).await {
                    Ok(running) => {
                        tokio::select! {
                            _ = stop.cancelled() => {}
                            _ = running.waiting() => {}
                        }
                    }
                    Err(e) => tracing::debug!("a socket client left during the handshake: {e}"),
                }
            });
        }
    }))
}

#[cfg(not(unix))]
fn serve_socket(
    _path: &Path,
    _cairn: Arc<Cairn>,
    _shutdown: CancellationToken,
) -> Option<tokio::task::JoinHandle<()>> {
    None
}

/// Hands freed heap back to the system after the large transient allocations of loading and
/// re-indexing (glibc keeps it otherwise, and the daemon lives long).
fn trim_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        unsafe extern "C" {
            fn malloc_trim(pad: usize) -> i32;
        }
        // SAFETY: malloc_trim only releases free memory; it has no preconditions.
        unsafe {
            malloc_trim(0);
        }
    }
}
