//! `cairn daemon`: one per repository. It keeps the index in memory and in step with the
//! working tree (file events, debounced, re-read per file; HEAD moves refresh the history),
//! answers from that resident index, and serves it over streamable HTTP on 127.0.0.1 and over
//! a Unix socket that `cairn serve` relays stdio through.
//!
//! The embedded store admits one process at a time, so the daemon does not hold it: each
//! refresh is published to the in-memory service first (answers see it at once), then written
//! under the writer lock with the store opened for that write only. `cairn index`, the CLI and
//! a `cairn serve` without a daemon keep working beside it.

pub mod handoff;
pub mod host;
pub mod http;
pub mod mem0;
pub mod ui;
pub mod watch;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use tokio::sync::{mpsc, watch as signal};
use tokio_util::sync::CancellationToken;

use crate::app::{Cairn, Registrations, Snapshot};
use crate::config::Repo;
use crate::datadir::DataDir;
use crate::index::{self, Live};

pub use crate::running::{DaemonRecord, ensure_token, read_token};

/// How often the daemon exchanges with the team server when nothing else does.
const TEAM_SYNC_EVERY: Duration = Duration::from_secs(15);
/// How long a write waits for another writer (a `cairn index` run) before retrying later.
const WRITE_PATIENCE: Duration = Duration::from_secs(30);

/// The longest a burst of events can postpone a refresh.
const MAX_DELAY: Duration = Duration::from_millis(1000);

/// Changes to at most this many files are patched into the graph before the exact rebuild.
const PATCH_FILES: usize = 8;

/// How long the exact rebuild waits after a patch is published, at least.
const PATCH_GRACE: Duration = Duration::from_millis(60);

/// The longest quiet the exact rebuild waits for after a change (see [`State::rebuild_later`]).
const REBUILD_QUIET: Duration = Duration::from_secs(10);

/// The longest the exact rebuild is put off by changes that keep coming.
const REBUILD_PUT_OFF: Duration = Duration::from_secs(60);

/// How long the daemon is quiet (no save, rebuild or write) before it hands the heap freed
/// meanwhile back to the system (see [`Trim`]).
const TRIM_QUIET: Duration = Duration::from_secs(2);

/// How soon a write that failed (store busy) is tried again.
const RETRY: Duration = Duration::from_secs(5);

/// How long a write at shutdown waits for another writer.
const SHUTDOWN_PATIENCE: Duration = Duration::from_secs(5);

/// How often a write is tried at shutdown before the changes are left to the next start's
/// catch-up index.
const SHUTDOWN_TRIES: usize = 3;

/// How many reports from the writer wait for the loop (it reads them between refreshes; the
/// writer waits when they are not read).
const NEWS_QUEUE: usize = 16;

/// How many handed-over `cairn index` runs wait for the loop.
const ASKS_QUEUE: usize = 4;

/// How often the daemon looks whether its log has reached its size limit.
const LOG_CHECK_EVERY: Duration = Duration::from_secs(60);

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

/// Runs the daemon until SIGTERM or SIGINT. `registrations` are the checks its health page
/// makes besides cairn's own (the CLI's install checks); `ready` is told the record once it
/// serves.
pub async fn run(
    repo: Repo,
    model_dir: Option<PathBuf>,
    port: Option<u16>,
    registrations: Registrations,
    ready: impl FnOnce(&DaemonRecord),
) -> Result<(), StartError> {
    let _lock = take_place(&repo)?;
    steady_heap();
    let token = ensure_token(&repo.data_dir).context("cannot create the bearer token")?;
    let (listener, port) = listen(port.unwrap_or(repo.settings.daemon.port)).await?;

    let shutdown = CancellationToken::new();
    spawn_signal_handler(shutdown.clone());

    let served = Served::start(&repo, model_dir, shutdown.child_token()).await?;
    let socket = DataDir::at(&repo.data_dir).socket();
    let app = http::router(
        served.cairn.clone(),
        registrations,
        served.reindex.clone(),
        token,
        port,
        shutdown.child_token(),
        Arc::default(),
    );
    let servers = Servers {
        http: spawn_http(listener, app, &shutdown),
        relay: serve_socket(&socket, Arc::new(served.cairn.clone()), shutdown.clone()),
    };
    // What starting freed (the history read, the watches set) goes back before the daemon
    // says it is ready.
    trim_heap();
    let record = write_record(&repo, port, &socket)?;
    ready(&record);

    // Until shutdown, or until the repository is lost; then what is queued is written.
    let cairn = served.cairn.clone();
    served.finished().await;
    tracing::info!("shutting down");
    let _ = std::fs::remove_file(DataDir::at(&repo.data_dir).daemon_record());
    shutdown.cancel();
    servers.join().await;
    // What answers started while the loop was stopping (its own finish came before them).
    cairn.finish().await;
    let _ = std::fs::remove_file(DataDir::at(&repo.data_dir).daemon_record());
    let _ = std::fs::remove_file(&socket);
    Ok(())
}

/// One repository served: its index loaded and kept in step with the tree by its own loop,
/// which stops when `stop` is cancelled or the repository is lost, after writing what is
/// queued. The per-repository daemon has one; a user's daemon one per repository it holds
/// in memory.
pub(crate) struct Served {
    pub cairn: Arc<Cairn>,
    /// Where handed-over `cairn index` runs go.
    pub reindex: handoff::Reindex,
    stop: CancellationToken,
    done: tokio::task::JoinHandle<()>,
}

impl Served {
    /// Loads the repository's index (brought up to date with the tree) and starts following
    /// the tree.
    pub(crate) async fn start(
        repo: &Repo,
        model_dir: Option<PathBuf>,
        stop: CancellationToken,
    ) -> Result<Served, StartError> {
        let root = watch::Root::of(&repo.root);
        let (report, live) = load_index(repo).await?;
        // Watched before any task starts: a repository that cannot be watched leaves none
        // behind (a user's daemon tries again at the next request).
        let dirs = watch::directories(repo, &repo.root);
        let (mut watcher, notifications) =
            watch::watch(repo, &dirs).context("cannot watch the repository")?;
        tracing::info!(root = %repo.root.display(), directories = dirs.len(), "watching");
        let cairn = Cairn::resident(repo.clone(), model_dir);
        load_memories_ahead(&cairn);
        let jobs = Arc::new(Mailbox::default());
        let (news_sender, mut news) = mpsc::channel(NEWS_QUEUE);
        let (settled_sender, settled) = signal::channel(handoff::Settled::default());
        let writer = tokio::spawn(writer(
            repo.clone(),
            live.generation(),
            jobs.clone(),
            news_sender,
            settled_sender,
        ));
        let (asks, mut asked) = mpsc::channel(ASKS_QUEUE);
        let mut state = State::start(repo, &cairn, live, report.commit.clone(), &jobs).await;
        let team_sync = spawn_team_sync(&cairn, &stop);
        let following = (repo.clone(), cairn.clone(), stop.clone());
        let done = tokio::spawn(async move {
            let (repo, cairn, stop) = following;
            let events = Events {
                root,
                notifications,
                news: &mut news,
                asked: &mut asked,
            };
            follow(&repo, &mut state, &mut watcher, events, &stop).await;
            state.settle().await;
            drop(watcher);
            stop.cancel();
            if let Some(team_sync) = team_sync {
                let _ = team_sync.await;
            }
            // The writer finishes what is queued, then stops.
            drop(state);
            jobs.close();
            drop(news);
            if let Err(e) = writer.await {
                tracing::error!("the writer failed: {e}");
            }
            cairn.finish().await;
        });
        Ok(Served {
            cairn,
            reindex: handoff::Reindex { asks, settled },
            stop,
            done,
        })
    }

    /// Whether its loop has ended (stopped, or the repository lost).
    pub(crate) fn has_ended(&self) -> bool {
        self.done.is_finished()
    }

    /// Waits for the loop to end by itself or by `stop`, and for its last write.
    pub(crate) async fn finished(self) {
        if let Err(e) = self.done.await {
            tracing::error!("the daemon's loop failed: {e}");
        }
    }

    /// Stops the loop and waits for its last write.
    pub(crate) async fn stop(self) {
        self.stop.cancel();
        self.finished().await;
    }
}

/// Takes the repository's place for one daemon (the lock, held while it lives), clearing
/// what a daemon that died left.
fn take_place(repo: &Repo) -> Result<std::fs::File, StartError> {
    crate::fsutil::private_dir(&repo.data_dir)
        .with_context(|| format!("cannot create {}", repo.data_dir.display()))?;
    let lock = take_lock(&repo.data_dir)?;
    // A record left by a daemon that died must not send clients to its port or socket.
    let _ = std::fs::remove_file(DataDir::at(&repo.data_dir).daemon_record());
    let _ = std::fs::remove_file(DataDir::at(&repo.data_dir).socket());
    Ok(lock)
}

/// Listens on `port` of 127.0.0.1 (any free port for 0); says which port it is.
async fn listen(port: u16) -> Result<(tokio::net::TcpListener, u16), StartError> {
    let listener = tokio::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, port))
        .await
        .with_context(|| format!("cannot listen on 127.0.0.1:{port}"))?;
    let port = listener.local_addr().context("no local address")?.port();
    Ok((listener, port))
}

/// Loads the index the daemon starts from (the stored one brought up to date), waiting for
/// another index run if one holds the store.
async fn load_index(repo: &Repo) -> Result<(index::Report, Live), StartError> {
    let started = Instant::now();
    let waiting = |holder: Option<&str>| {
        tracing::info!(?holder, "waiting for another index run");
    };
    let (report, live) = index::load_live(repo, Duration::from_secs(600), waiting, Arc::default())
        .await
        .context("the first index run failed")?;
    tracing::info!(
        files = report.files,
        parsed = report.parsed,
        seconds = started.elapsed().as_secs_f64(),
        "index ready"
    );
    trim_heap();
    tracing::debug!(rss_mb = resident_mb(), "heap trimmed after loading");
    Ok((report, live))
}

/// Loads the memories now rather than on the first question (10,000 memories take ~0.5 s).
fn load_memories_ahead(cairn: &Arc<Cairn>) {
    let loading = cairn.clone();
    tokio::spawn(async move {
        match loading.load_memories().await {
            Ok(count) => tracing::debug!(count, "memories loaded"),
            Err(e) => tracing::warn!("memories not loaded ahead: {e}"),
        }
    });
}

/// Writes the record that tells clients where this daemon serves.
fn write_record(repo: &Repo, port: u16, socket: &Path) -> Result<DaemonRecord, StartError> {
    let record = DaemonRecord {
        pid: std::process::id(),
        url: format!("http://127.0.0.1:{port}/mcp"),
        port,
        socket: socket.to_path_buf(),
        root: repo.root.clone(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        started_at: crate::clock::now(),
    };
    record
        .write(&repo.data_dir)
        .context("cannot write daemon.json")?;
    Ok(record)
}

/// The tasks serving beside the daemon's loop, until shutdown is cancelled.
struct Servers {
    http: tokio::task::JoinHandle<()>,
    /// The Unix socket `cairn serve` relays through, where there is one.
    relay: Option<tokio::task::JoinHandle<()>>,
}

impl Servers {
    /// Waits for every server to stop.
    async fn join(self) {
        let _ = self.http.await;
        if let Some(relay) = self.relay {
            let _ = relay.await;
        }
    }
}

/// What the daemon's loop listens to besides shutdown.
struct Events<'a> {
    /// The root as found at start: the loop ends when it is lost.
    root: watch::Root,
    notifications: watch::Notifications,
    news: &'a mut mpsc::Receiver<News>,
    /// `cairn index` runs handed over.
    asked: &'a mut mpsc::Receiver<handoff::Ask>,
}

/// Follows the working tree until shutdown: debounces watch events into batches, watches new
/// directories, refreshes the index, hears from the writer and runs handed-over index runs.
async fn follow(
    repo: &Repo,
    state: &mut State,
    watcher: &mut notify::RecommendedWatcher,
    events: Events<'_>,
    shutdown: &CancellationToken,
) {
    let Events {
        root,
        mut notifications,
        news,
        asked,
    } = events;
    let mut filter = watch::Filter::new(repo);
    let debounce = Duration::from_millis(repo.settings.daemon.debounce_ms);
    let mut batch = watch::Batch::default();
    let mut first: Option<Instant> = None;
    let mut last = Instant::now();
    let mut log_check = tokio::time::interval(LOG_CHECK_EVERY);
    let mut trim = Trim::default();
    trim.after_work();
    loop {
        let wake = match first {
            Some(first) => (last + debounce).min(first + MAX_DELAY),
            None => Instant::now() + Duration::from_secs(3600),
        };
        tokio::select! {
            _ = shutdown.cancelled() => break,
            _ = log_check.tick() => {
                if root_lost(repo, &root) {
                    break;
                }
                roll_log_over(&repo.data_dir);
            }
            Some(news) = news.recv() => {
                state.heard(news).await;
                trim.after_work();
            }
            Some(ask) = asked.recv() => {
                let answer = state.reindex().await;
                let _ = ask.send(answer);
                trim.after_work();
            }
            _ = state.rebuild_due.reached() => state.start_rebuild(),
            built = rebuilt(&mut state.rebuilding) => {
                state.rebuilt(built).await;
                trim.after_work();
            }
            _ = trim.reached() => {
                trim = Trim::default();
                // A rebuild running now frees its garbage when it ends, and trims after.
                if state.rebuilding.is_none() {
                    let _ = tokio::task::spawn_blocking(trim_heap).await;
                    tracing::debug!(rss_mb = resident_mb(), "heap trimmed after a quiet");
                }
            }
            notification = notifications.recv() => {
                let Some(notification) = notification else { break };
                match notification {
                    Ok(notification) => filter.classify(&notification, &mut batch),
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
                if root_lost(repo, &root) {
                    break;
                }
                // After a rescan (lost events, an ignore file changed) every walked directory is
                // watched again; otherwise only the new ones.
                let tops = if ready.rescan {
                    vec![repo.root.clone()]
                } else {
                    ready.new_dirs.clone()
                };
                for dir in &tops {
                    for inner in watch::directories(repo, dir) {
                        watch::add(watcher, &inner);
                    }
                }
                state.refresh(ready).await;
                trim.after_work();
            }
        }
    }
}

/// When the heap freed by the last work is handed back: once the daemon has been quiet for
/// [`TRIM_QUIET`]. glibc keeps freed memory in its arenas (only the top of the heap goes back
/// by itself); each patch frees the graph it replaced, each rebuild and write its
/// transients, so without this a 50,000-file repository's daemon held ~350 MB more than it
/// used. A trim costs ~50 ms there, off the answer path and after a burst, not during it.
#[derive(Debug, Default, Clone, Copy)]
struct Trim {
    at: Option<Instant>,
}

impl Trim {
    /// Work was done now: the trim waits for the quiet after it.
    fn after_work(&mut self) {
        self.at = Some(Instant::now() + TRIM_QUIET);
    }

    /// When the trim is due; never, when no work was done since the last.
    async fn reached(self) {
        until(self.at).await
    }
}

/// Sleeps until `at`; forever when there is none.
async fn until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at.into()).await,
        None => std::future::pending().await,
    }
}

/// Whether the repository's root is lost (moved, deleted, replaced): then the daemon stops,
/// saying so, and keeps the stored index as it is; a service unit does not restart it (it
/// exits successfully), and a client in the repository's new place starts its own.
fn root_lost(repo: &Repo, root: &watch::Root) -> bool {
    let Some(why) = root.lost() else { return false };
    tracing::warn!(
        "the repository at {} was {why}: the daemon stops; its index stays in {}",
        repo.root.display(),
        repo.data_dir.display()
    );
    true
}

/// When the exact rebuild of changed files starts. It waits for the changes to settle: the
/// answers waiting for the patch just published go first, and a burst of saves is patched
/// without a rebuild competing for the cores and memory. The quiet it waits for is twice the
/// last exact build (a 50 ms rebuild waits 0.1 s, a 1 s one 2 s, a 40 s one
/// [`REBUILD_QUIET`]), at least [`PATCH_GRACE`]: a rebuild started sooner would still run when
/// the next save of a burst comes, slowing its patch. Each change starts the wait again, for at
/// most [`REBUILD_PUT_OFF`] after the first. Answers come from the patched graph meanwhile
/// (`cairn serve` relays to the daemon); only the store, for the CLI, waits.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct RebuildDue {
    at: Option<DueAt>,
}

/// When a waiting rebuild starts, and the first change it waits for.
#[derive(Debug, Clone, Copy, PartialEq)]
struct DueAt {
    starts: Instant,
    first_change: Instant,
}

impl RebuildDue {
    /// Files changed at `now`; the last exact build took `took`.
    fn changed(&mut self, now: Instant, took: Option<Duration>) {
        let quiet = took
            .map_or(PATCH_GRACE, |took| took * 2)
            .clamp(PATCH_GRACE, REBUILD_QUIET);
        let first_change = self.at.map_or(now, |at| at.first_change);
        self.at = Some(DueAt {
            starts: (now + quiet).min(first_change + REBUILD_PUT_OFF),
            first_change,
        });
    }

    /// When the rebuild is due; never, when none waits.
    async fn reached(self) {
        until(self.at.map(|at| at.starts)).await
    }
}

/// The exact rebuild's graph once it is done; never, when none runs. Cancel-safe: the
/// rebuild is polled again by the next call.
async fn rebuilt(
    rebuilding: &mut Option<tokio::task::JoinHandle<index::Built>>,
) -> Option<index::Built> {
    let Some(running) = rebuilding.as_mut() else {
        return std::future::pending().await;
    };
    let built = running.await;
    *rebuilding = None;
    match built {
        Ok(built) => Some(built),
        Err(e) => {
            tracing::error!("the exact rebuild failed: {e}");
            None
        }
    }
}

/// The HTTP server (MCP at `/mcp`, `/context`, `/hook`, `/index`, `/health`) until shutdown.
fn spawn_http(
    listener: tokio::net::TcpListener,
    app: axum::Router,
    shutdown: &CancellationToken,
) -> tokio::task::JoinHandle<()> {
    let stop = shutdown.clone();
    tokio::spawn(async move {
        // Answers are small writes: without TCP_NODELAY one waits for the client's delayed
        // acknowledgement of the last (40 ms on Linux) on most calls.
        let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
            if let Err(e) = tcp.set_nodelay(true) {
                tracing::debug!("cannot set TCP_NODELAY: {e}");
            }
        });
        let served = axum::serve(listener, app)
            .with_graceful_shutdown(async move { stop.cancelled().await })
            .await;
        if let Err(e) = served {
            tracing::error!("the HTTP server stopped: {e}");
        }
    })
}

/// Team mode: queued writes are replayed and teammates' writes pulled without waiting for a
/// question.
fn spawn_team_sync(
    cairn: &Arc<Cairn>,
    shutdown: &CancellationToken,
) -> Option<tokio::task::JoinHandle<()>> {
    cairn.memories.team().is_some().then(|| {
        let cairn = cairn.clone();
        let stop = shutdown.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = stop.cancelled() => break,
                    _ = tokio::time::sleep(TEAM_SYNC_EVERY) => {}
                }
                if let Err(e) = cairn.team_sync(crate::app::SyncRequest {}).await {
                    tracing::warn!("team sync failed: {e}");
                }
            }
        })
    })
}

/// The daemon's moving parts between events.
struct State {
    repo: Repo,
    cairn: Arc<Cairn>,
    live: Live,
    commit: Option<String>,
    history: Option<crate::history::StoredHistory>,
    /// Changes for the writer.
    jobs: Arc<Mailbox>,
    /// The number of the last job queued.
    sequence: u64,
    /// The exact rebuild running on the blocking pool, if any.
    rebuilding: Option<tokio::task::JoinHandle<index::Built>>,
    /// When the exact rebuild waiting for the changes to settle starts.
    rebuild_due: RebuildDue,
    /// What the changes waiting for an exact graph add to the next job.
    waiting: Waiting,
}

/// What the changes waiting for an exact graph add to the next job.
#[derive(Debug, Default)]
struct Waiting {
    /// Files parsed.
    parsed: usize,
    /// The job must be written even if nothing changed (HEAD moved).
    force: bool,
}

/// Work for the writer: changes to write, and whether to write even if there are none (HEAD
/// moved). `generation` resets what the writer expects the store to hold (after a reload).
struct Job {
    pending: index::Pending,
    report: index::Report,
    force: bool,
    generation: Option<u64>,
    /// The number of the latest job folded in (numbers only grow).
    sequence: u64,
}

impl Job {
    fn merge(&mut self, later: Job) {
        if later.generation.is_some() {
            *self = later;
            return;
        }
        self.pending.merge(later.pending);
        self.report = later.report;
        self.force |= later.force;
        self.sequence = later.sequence;
    }

    /// A copy of this job to write again if its write fails.
    fn copy_for_retry(&self) -> Job {
        Job {
            pending: index::Pending {
                old: self.pending.old.clone(),
                new: self.pending.new.clone(),
                sources: self.pending.sources.clone(),
                moved: self.pending.moved.clone(),
                built_from: self.pending.built_from.clone(),
            },
            report: self.report.clone(),
            force: self.force,
            generation: None,
            sequence: self.sequence,
        }
    }
}

/// Jobs on their way to the writer: at most one waits, and later ones are folded into it, so
/// what waits never grows however long a write takes.
#[derive(Default)]
struct Mailbox {
    slot: std::sync::Mutex<Slot>,
    ready: tokio::sync::Notify,
}

#[derive(Default)]
struct Slot {
    job: Option<Job>,
    closed: bool,
}

impl Mailbox {
    /// Leaves a job for the writer, folded into the one waiting if there is one.
    fn put(&self, job: Job) {
        let mut slot = self.slot();
        match slot.job.as_mut() {
            Some(waiting) => waiting.merge(job),
            None => slot.job = Some(job),
        }
        drop(slot);
        self.ready.notify_one();
    }

    /// No more jobs: the writer finishes the one waiting, then stops.
    fn close(&self) {
        self.slot().closed = true;
        self.ready.notify_one();
    }

    /// The waiting job, if any, and whether more can come.
    fn try_take(&self) -> (Option<Job>, bool) {
        let mut slot = self.slot();
        (slot.job.take(), !slot.closed)
    }

    /// The next job; `None` once closed with nothing waiting.
    async fn take(&self) -> Option<Job> {
        loop {
            match self.try_take() {
                (Some(job), _) => return Some(job),
                (None, false) => return None,
                (None, true) => self.ready.notified().await,
            }
        }
    }

    fn slot(&self) -> std::sync::MutexGuard<'_, Slot> {
        self.slot
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// What the writer reports back.
enum News {
    Written {
        commit: Option<String>,
        history_new: usize,
        generation: u64,
    },
    /// Another process wrote the store: the index in memory must be reloaded.
    Stale,
}

impl State {
    /// The loop's state over the index loaded at start (HEAD at `commit`), published to
    /// the service.
    async fn start(
        repo: &Repo,
        cairn: &Arc<Cairn>,
        live: Live,
        commit: Option<String>,
        jobs: &Arc<Mailbox>,
    ) -> State {
        let state = State {
            repo: repo.clone(),
            cairn: cairn.clone(),
            live,
            commit,
            history: crate::app::stored_history(&repo.store_dir()).await.ok(),
            jobs: jobs.clone(),
            sequence: 0,
            rebuilding: None,
            rebuild_due: RebuildDue::default(),
            waiting: Waiting::default(),
        };
        state.publish().await;
        state
    }

    async fn publish(&self) {
        let history = self.history.clone().unwrap_or_default();
        self.cairn
            .publish(Snapshot::resident(
                self.live.graph(),
                self.live.meta(self.commit.clone()),
                self.live.stamps(),
                history.commits,
                history.head,
            ))
            .await;
    }

    /// A handed-over `cairn index`: a whole walk against the index held here, written even
    /// when nothing changed (HEAD may have moved). Its report, and the job that stores it.
    async fn reindex(&mut self) -> (index::Report, u64) {
        let batch = watch::Batch {
            rescan: true,
            head_moved: true,
            ..watch::Batch::default()
        };
        let parsed = self.refresh(batch).await;
        let report = self.live.report(&index::Update {
            parsed,
            ..index::Update::default()
        });
        (report, self.sequence)
    }

    /// Re-reads what a batch of events names, publishes the new graph for answers at once,
    /// and queues the write. Returns how many files were parsed.
    ///
    /// A few changed files are patched into the graph and published, and the exact rebuild
    /// runs on the blocking pool while the loop goes on: the next save is patched and
    /// answered without waiting for it, and a rebuild that finishes after newer changes is
    /// dropped for one of the newer state (one runs at a time). A whole walk, or many files,
    /// is rebuilt here and now.
    async fn refresh(&mut self, batch: watch::Batch) -> usize {
        if batch.is_empty() {
            return 0;
        }
        let started = Instant::now();
        let paths: Vec<String> = batch.files.into_iter().collect();
        let scope = (!batch.rescan).then_some(paths.as_slice());
        let reading = tokio::task::block_in_place(|| self.live.read(&self.repo, scope));
        self.waiting.parsed += reading.parsed;
        self.waiting.force |= batch.head_moved;
        if !reading.whole && reading.changed.len() <= PATCH_FILES {
            if !reading.changed.is_empty() {
                // Answers first see a quick patch of the changed files, then the exact graph.
                tokio::task::block_in_place(|| self.live.patch(&reading.changed));
                self.publish().await;
                tracing::info!(
                    files = reading.changed.len(),
                    elapsed = ?started.elapsed(),
                    "patched"
                );
            }
            if self.live.is_exact() {
                self.queue_waiting();
            } else {
                self.rebuild_later();
            }
        } else {
            // A whole walk that found nothing changed keeps an exact graph this cairn built
            // from the same roots.
            if tokio::task::block_in_place(|| self.live.rebuild_after(&reading)) {
                self.publish().await;
                tracing::info!(
                    files = reading.changed.len(),
                    parsed = reading.parsed,
                    rescan = batch.rescan,
                    elapsed = ?started.elapsed(),
                    "rebuilt"
                );
            }
            self.queue_waiting();
        }
        reading.parsed
    }

    /// Schedules the exact rebuild of the files as they are (see [`RebuildDue`]), unless one
    /// runs: its end schedules the next.
    fn rebuild_later(&mut self) {
        if self.rebuilding.is_some() {
            return;
        }
        self.rebuild_due
            .changed(Instant::now(), self.live.build_took());
    }

    /// Starts the exact rebuild that was due, on the blocking pool.
    fn start_rebuild(&mut self) {
        self.rebuild_due = RebuildDue::default();
        if self.rebuilding.is_some() || self.live.is_exact() {
            return;
        }
        let rebuild = self.live.rebuild_later();
        self.rebuilding = Some(tokio::task::spawn_blocking(move || rebuild.run()));
    }

    /// An exact rebuild ended: its graph is published and written if no file changed since
    /// it started; otherwise the rebuild of the newer state starts.
    async fn rebuilt(&mut self, built: Option<index::Built>) {
        let Some(built) = built else {
            // A rebuild that failed is done here, so the changes still reach the store.
            tokio::task::block_in_place(|| self.live.rebuild());
            self.publish().await;
            self.queue_waiting();
            return;
        };
        let took = built.took();
        let difference = built.difference();
        if self.live.install(built) {
            self.publish().await;
            // What the check of the patched graph found (nothing, mostly).
            tracing::info!(?took, ?difference, rss_mb = resident_mb(), "rebuilt");
            self.queue_waiting();
        } else if !self.live.is_exact() {
            // Older than the files: the newer state's rebuild (a whole walk may have rebuilt
            // it meanwhile).
            self.rebuild_later();
        }
    }

    /// At shutdown: the changes still waiting for their exact graph are rebuilt and queued
    /// for the writer's last writes.
    async fn settle(&mut self) {
        if let Some(running) = self.rebuilding.take() {
            running.abort();
        }
        if !self.live.is_exact() {
            tokio::task::block_in_place(|| self.live.rebuild());
            self.queue_waiting();
        }
    }

    /// Queues what waited for an exact graph.
    fn queue_waiting(&mut self) {
        let waiting = std::mem::take(&mut self.waiting);
        self.queue(waiting.parsed, waiting.force, None);
    }

    fn queue(&mut self, parsed: usize, force: bool, generation: Option<u64>) {
        let pending = self.live.take_pending();
        if pending.is_empty() && !force && generation.is_none() {
            return;
        }
        let report = self.live.report(&index::Update {
            parsed,
            ..index::Update::default()
        });
        self.sequence += 1;
        let job = Job {
            pending,
            report,
            force,
            generation,
            sequence: self.sequence,
        };
        self.jobs.put(job);
    }

    async fn heard(&mut self, news: News) {
        match news {
            News::Written {
                commit,
                history_new,
                generation,
            } => {
                self.live.set_generation(generation);
                let moved = commit != self.commit;
                self.commit = commit;
                if history_new > 0 || moved {
                    match crate::app::stored_history(&self.repo.store_dir()).await {
                        Ok(history) => self.history = Some(history),
                        Err(e) => tracing::warn!("the history was not reloaded: {e:#}"),
                    }
                }
                if moved || history_new > 0 {
                    self.publish().await;
                }
            }
            News::Stale => {
                tracing::info!("the store was written by another process; reloading the index");
                match index::load_live(&self.repo, WRITE_PATIENCE, |_| {}, Arc::default()).await {
                    Ok((report, live)) => {
                        // A rebuild of the index replaced here is of no use.
                        if let Some(running) = self.rebuilding.take() {
                            running.abort();
                        }
                        self.live = live;
                        self.commit = report.commit;
                        if let Ok(history) =
                            crate::app::stored_history(&self.repo.store_dir()).await
                        {
                            self.history = Some(history);
                        }
                        self.publish().await;
                        let generation = self.live.generation();
                        self.queue(0, false, Some(generation));
                    }
                    Err(e) => tracing::error!("reloading the index failed: {e:#}"),
                }
            }
        }
    }
}

/// Writes queued changes one job at a time, folding jobs that queued up meanwhile into one
/// write. A failed write is kept and retried (newer changes join it); when the queue closes
/// (shutdown) what is left is tried a few times more.
/// `settled` tells handed-over index runs which jobs are done.
async fn writer(
    repo: Repo,
    expected: u64,
    queue: Arc<Mailbox>,
    news: mpsc::Sender<News>,
    settled: signal::Sender<handoff::Settled>,
) {
    let mut writer = Writer {
        repo,
        expected,
        news,
        settled,
        failures: 0,
        awaiting_reload: false,
    };
    let mut held: Option<Job> = None;
    loop {
        let mut job = match held.take() {
            Some(job) => job,
            None => match queue.take().await {
                Some(job) => job,
                None => return,
            },
        };
        let (later, open) = queue.try_take();
        if let Some(later) = later {
            job.merge(later);
        }
        match writer.write(job, open).await {
            Attempt::Done => {}
            Attempt::Retry(job) => held = Some(*job),
            Attempt::GiveUp => return,
        }
    }
}

/// The writer's state between jobs.
struct Writer {
    repo: Repo,
    /// The generation the store is expected to hold.
    expected: u64,
    news: mpsc::Sender<News>,
    settled: signal::Sender<handoff::Settled>,
    /// Failed writes in a row.
    failures: usize,
    /// After `Stale`, jobs taken against the old view are dropped until the reload's job.
    awaiting_reload: bool,
}

/// How one job's write ended.
enum Attempt {
    /// Written, or nothing to write.
    Done,
    /// Not written yet: the job to try again.
    Retry(Box<Job>),
    /// Not written at shutdown after the last try: left to the next start's index run.
    GiveUp,
}

impl Writer {
    /// Writes one job (`open`: the queue is open, not shutting down).
    async fn write(&mut self, mut job: Job, open: bool) -> Attempt {
        if let Some(generation) = job.generation.take() {
            self.expected = generation;
            self.awaiting_reload = false;
        }
        if self.awaiting_reload || (job.pending.is_empty() && !job.force) {
            self.settle(job.sequence, None);
            return Attempt::Done;
        }
        let retry = job.copy_for_retry();
        let sequence = job.sequence;
        // Shutting down: a short wait per try, so the service manager's stop timeout holds.
        let patience = if open {
            WRITE_PATIENCE
        } else {
            SHUTDOWN_PATIENCE
        };
        match index::write_pending(&self.repo, job.pending, job.report, self.expected, patience)
            .await
        {
            Ok((report, generation)) => {
                self.written(sequence, report, generation, retry).await;
                Attempt::Done
            }
            Err(index::WriteError::Stale { .. }) => {
                self.awaiting_reload = true;
                self.settle(sequence, None);
                let _ = self.news.send(News::Stale).await;
                Attempt::Done
            }
            Err(index::WriteError::Failed(e)) => {
                self.failures += 1;
                let failures = self.failures;
                tracing::warn!("the index could not be stored yet (try {failures}): {e:#}");
                if !open && failures >= SHUTDOWN_TRIES {
                    tracing::error!("leaving unwritten changes to the next start's index run");
                    return Attempt::GiveUp;
                }
                tokio::time::sleep(if open { RETRY } else { Duration::from_secs(1) }).await;
                Attempt::Retry(Box::new(retry))
            }
        }
    }

    /// A job was written as `generation`: the copy kept for a retry is freed and the loop told.
    async fn written(&mut self, sequence: u64, report: index::Report, generation: u64, retry: Job) {
        self.expected = generation;
        if self.failures > 0 {
            tracing::info!(
                "the index is stored again, after {} failed tries",
                self.failures
            );
        }
        self.failures = 0;
        // The graph the store held until now lives on only in the copy kept for a retry:
        // freed, then the heap trimmed, off the runtime.
        let _ = tokio::task::spawn_blocking(move || {
            drop(retry);
            trim_heap();
        })
        .await;
        tracing::debug!(rss_mb = resident_mb(), "heap trimmed after writing");
        let (commit, history_new) = (report.commit.clone(), report.history_new);
        self.settle(sequence, Some(report));
        let _ = self
            .news
            .send(News::Written {
                commit,
                history_new,
                generation,
            })
            .await;
    }

    /// Tells handed-over index runs that the jobs through `through` are done.
    fn settle(&self, through: u64, report: Option<index::Report>) {
        self.settled
            .send_replace(handoff::Settled { through, report });
    }
}

/// Rolls the daemon's log over at its size limit: `daemon.log` in the data directory, where
/// the installed service sends the daemon's output.
fn roll_log_over(data_dir: &Path) {
    #[cfg(unix)]
    match crate::fsutil::rotation::roll_own_log(
        &DataDir::at(data_dir).daemon_log(),
        crate::fsutil::rotation::LIMIT,
    ) {
        Ok(true) => tracing::info!("the log rolled over"),
        Ok(false) => {}
        Err(e) => tracing::warn!("cannot roll the log over: {e}"),
    }
    #[cfg(not(unix))]
    let _ = data_dir;
}

/// Takes the one-daemon-per-repository lock, or says who holds it.
fn take_lock(data_dir: &Path) -> Result<std::fs::File, StartError> {
    let path = DataDir::at(data_dir).daemon_lock();
    let file = crate::fsutil::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => {
            match std::fs::read_to_string(DataDir::at(data_dir).daemon_record())
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
    answering: Arc<impl Answering>,
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
    if let Err(e) = crate::fsutil::restrict(path) {
        tracing::warn!(
            "cannot restrict {} ({e}); serving no socket",
            path.display()
        );
        let _ = std::fs::remove_file(path);
        return None;
    }
    let owner = {
        use std::os::unix::fs::MetadataExt as _;
        std::fs::metadata(path).map(|m| m.uid()).ok()
    };
    Some(tokio::spawn(async move {
        loop {
            let stream = tokio::select! {
                _ = shutdown.cancelled() => break,
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => stream,
                    Err(e) => {
                        tracing::warn!("socket accept failed: {e}");
                        tokio::time::sleep(Duration::from_millis(100)).await;
                        continue;
                    }
                },
            };
            // Only the user who runs the daemon (whatever the socket's mode was at bind).
            let peer = stream.peer_cred().ok().map(|c| c.uid());
            if peer.is_none() || peer != owner {
                tracing::warn!(?peer, "refused a socket client of another user");
                continue;
            }
            let stop = shutdown.clone();
            let answering = answering.clone();
            tokio::spawn(async move {
                // The repository's service, loaded if it was not; and what keeps it held
                // while the session lasts.
                let Some((cairn, _held)) = answering.open().await else {
                    return;
                };
                let server = crate::mcp::Server::new(cairn);
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
    _answering: Arc<impl Answering>,
    _shutdown: CancellationToken,
) -> Option<tokio::task::JoinHandle<()>> {
    None
}

/// What answers a session on a repository's socket: the service, and whatever must be held
/// while the session lasts (a user's daemon keeps a repository with open sessions loaded).
pub(crate) trait Answering: Send + Sync + 'static {
    fn open(
        &self,
    ) -> impl std::future::Future<Output = Option<(Arc<Cairn>, Option<host::Held>)>> + Send;
}

/// A per-repository daemon's service, loaded before it serves.
impl Answering for Arc<Cairn> {
    async fn open(&self) -> Option<(Arc<Cairn>, Option<host::Held>)> {
        Some((self.clone(), None))
    }
}

/// Fixes the size from which an allocation is a mapping of its own (1 MiB: the graph's lists
/// and indexes, a build's larger tables), handed back whole when freed. glibc otherwise
/// raises that threshold, and the one for trimming, each time such a block is freed (up to
/// 32 MiB), after which the lists are carved from the heap between small allocations that
/// keep its pages resident. Measured on Django after 20 saves: 197-198 MB resident instead
/// of 208-213. 128 KiB kept no less and made saves slower (every mid-sized table mapped
/// anew). A threshold the user set (`MALLOC_MMAP_THRESHOLD_`) is left as it is.
fn steady_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_MMAP_THRESHOLD_").is_none() {
        const M_MMAP_THRESHOLD: i32 = -3;
        unsafe extern "C" {
            fn mallopt(param: i32, value: i32) -> i32;
        }
        // SAFETY: mallopt only sets an allocator parameter; it has no preconditions.
        unsafe {
            mallopt(M_MMAP_THRESHOLD, 1024 * 1024);
        }
    }
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

/// The process's resident memory in MB, for the debug log (0 where /proc is missing).
fn resident_mb() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    pages * 4096 / (1024 * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn due_after(took: Option<Duration>) -> Duration {
        let now = Instant::now();
        let mut due = RebuildDue::default();
        due.changed(now, took);
        due.at.expect("a change schedules the rebuild").starts - now
    }

    #[test]
    fn the_rebuild_waits_for_twice_the_last_build_within_bounds() {
        assert_eq!(due_after(None), PATCH_GRACE);
        assert_eq!(due_after(Some(Duration::from_millis(10))), PATCH_GRACE);
        assert_eq!(
            due_after(Some(Duration::from_millis(600))),
            Duration::from_millis(1200)
        );
        assert_eq!(due_after(Some(Duration::from_secs(40))), REBUILD_QUIET);
    }

    #[test]
    fn changes_put_the_rebuild_off_for_a_bounded_time() {
        let took = Some(Duration::from_secs(40));
        let first = Instant::now();
        let at = |starts, first_change| {
            Some(DueAt {
                starts,
                first_change,
            })
        };
        let mut due = RebuildDue::default();
        due.changed(first, took);
        // A save every two seconds keeps postponing it...
        let later = first + Duration::from_secs(2);
        due.changed(later, took);
        assert_eq!(due.at, at(later + REBUILD_QUIET, first));
        // ...but not past the bound after the first change.
        let much_later = first + REBUILD_PUT_OFF - Duration::from_secs(1);
        due.changed(much_later, took);
        assert_eq!(due.at, at(first + REBUILD_PUT_OFF, first));
    }

    #[tokio::test]
    async fn the_heap_is_trimmed_once_after_the_quiet_that_follows_work() {
        let soon = |trim: Trim| tokio::time::timeout(Duration::from_millis(50), trim.reached());
        // Nothing done: no trim.
        assert!(soon(Trim::default()).await.is_err());
        // Work just done: not before the quiet...
        let mut trim = Trim::default();
        trim.after_work();
        assert!(soon(trim).await.is_err());
        let due = trim.at.expect("work schedules a trim");
        assert!(due >= Instant::now() + TRIM_QUIET - Duration::from_millis(100));
        // ...and more work puts it off.
        trim.after_work();
        assert!(trim.at.expect("still scheduled") >= due);
        // Once the quiet has passed, it is due.
        let passed = Trim {
            at: Some(Instant::now() - Duration::from_millis(1)),
        };
        assert!(soon(passed).await.is_ok());
    }
}
