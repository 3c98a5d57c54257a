//! `cairn daemon --user`: one daemon for every repository a user registered
//! ([`crate::running::registry`]). It listens on one port, holds each repository's daemon lock,
//! socket and record (so `cairn serve`, the hooks, `cairn index` and `cairn ui` in a repository
//! find it exactly as they find a repository's own daemon), and loads a repository's index
//! only when something asks for it. Requests go to the repository whose token they carry (a
//! page, to the repository its session cookie logged in to): a token opens its own repository
//! and no other. Every repository shares the process's embedding model. A repository unused
//! for a while, or the least recently used ones once the process is over its memory bound, is
//! unloaded (what it queued is written first); its next request loads it again, bringing the
//! index up to date with what changed meanwhile. A repository with an assistant's session
//! open on its socket is never unloaded. The repositories loaded when the daemon stops are
//! its working set ([`WORKING_SET`]): the next start loads them again, most recently used
//! first and within the memory bound, so the first answer after a log-in does not wait for a
//! load.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt as _;

use super::ui::session::{Sessions, same};
use super::{
    Answering, DaemonRecord, Served, StartError, http, listen, mem0, resident_mb, spawn_http,
    spawn_signal_handler, steady_heap, take_lock, trim_heap, write_record,
};
use crate::app::{Cairn, Registrations};
use crate::config::Repo;
use crate::datadir::DataDir;
use crate::running::registry::{self, Registered};

/// The file in cairn's data home naming the repositories loaded when the user's daemon last
/// stopped, most recently used first.
pub const WORKING_SET: &str = "working-set.json";

/// The checks a repository's health page makes besides cairn's own (the CLI's install checks).
pub type RegistrationsFor = Arc<dyn Fn(&Repo) -> Registrations + Send + Sync>;

/// How the user's daemon runs.
#[derive(Debug, Clone)]
pub struct Options {
    pub model_dir: Option<PathBuf>,
    /// TCP port on 127.0.0.1 (0: any free one).
    pub port: u16,
    /// Past this resident size (MB) after a load, the least recently used repositories
    /// without an open session are unloaded, down to the one just loaded.
    pub memory_mb: u64,
    /// A repository without an open session and unused this long is unloaded.
    pub idle: Duration,
}

/// Runs the user's daemon from cairn's data home `home` until SIGTERM or SIGINT. `ready` is
/// told its record and how many repositories it serves.
pub async fn run(
    home: PathBuf,
    options: Options,
    registrations: RegistrationsFor,
    ready: impl FnOnce(&DaemonRecord, usize),
) -> Result<(), StartError> {
    crate::fsutil::private_dir(&home)
        .with_context(|| format!("cannot create {}", home.display()))?;
    let _lock = take_lock(&home)?;
    let _ = std::fs::remove_file(DataDir::at(&home).daemon_record());
    steady_heap();
    let (listener, port) = listen(options.port).await?;
    let shutdown = CancellationToken::new();
    spawn_signal_handler(shutdown.clone());

    let (again, mut changes) = tokio::sync::mpsc::channel(1);
    let host = Arc::new(Host {
        home: home.clone(),
        options,
        port,
        registrations,
        entries: std::sync::Mutex::new(Vec::new()),
        used: Arc::new(Notify::new()),
        again: again.clone(),
        awaited: std::sync::Mutex::new(Vec::new()),
    });
    let _watcher = watch_registry(&home, again)?;
    host.follow_registry().await;
    let app = Router::new().fallback(dispatch).with_state(host.clone());
    let http = spawn_http(listener, app, &shutdown);
    let record = DaemonRecord {
        pid: std::process::id(),
        url: format!("http://127.0.0.1:{port}/mcp"),
        port,
        socket: PathBuf::new(),
        root: home.clone(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        started_at: crate::clock::now(),
    };
    record
        .write(&home)
        .context("cannot write the user daemon's record")?;
    ready(&record, host.entries().len());
    let preload = tokio::spawn(
        host.clone()
            .preload(read_working_set(&home), shutdown.clone()),
    );

    // The user service sends the daemon's output to `daemon.log` in cairn's data home.
    let mut log_check = tokio::time::interval(super::LOG_CHECK_EVERY);
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => break,
            Some(()) = changes.recv() => host.follow_registry().await,
            () = host.idle_due() => host.unload_idle(),
            _ = log_check.tick() => super::roll_log_over(&home),
        }
    }
    tracing::info!("shutting down");
    let _ = std::fs::remove_file(DataDir::at(&home).daemon_record());
    // Its loads are left to finish: a load cut short would leave its store half written.
    let _ = preload.await;
    write_working_set(&home, &host.entries());
    let entries = std::mem::take(&mut *host.entries_mut());
    for entry in entries {
        release(entry).await;
    }
    let _ = http.await;
    Ok(())
}

/// The user's daemon: the repositories it serves.
struct Host {
    home: PathBuf,
    options: Options,
    port: u16,
    registrations: RegistrationsFor,
    entries: std::sync::Mutex<Vec<Arc<Entry>>>,
    /// Told whenever a repository is loaded or a session on one ends: the idle deadline moves.
    used: Arc<Notify>,
    /// Asks for the registry to be followed again (it changed, or a repository's own daemon
    /// stopped).
    again: tokio::sync::mpsc::Sender<()>,
    /// The data directories whose own daemon is awaited (see [`Host::await_own_daemon`]).
    awaited: std::sync::Mutex<Vec<PathBuf>>,
}

/// One registered repository served by the user's daemon.
struct Entry {
    repo: Repo,
    token: String,
    /// Its page's session cookie name.
    cookie: String,
    sessions: Arc<Sessions>,
    socket: PathBuf,
    /// The repository's daemon lock, held while it is served here.
    _lock: std::fs::File,
    /// Cancelled when the repository is no longer served: its socket stops, and its loop.
    released: CancellationToken,
    loaded: tokio::sync::Mutex<Option<Loaded>>,
    last_used: std::sync::Mutex<Instant>,
    /// Sessions and requests in progress.
    holders: AtomicUsize,
    /// An unload of it is under way.
    unloading: std::sync::atomic::AtomicBool,
    used: Arc<Notify>,
}

/// A repository's index in memory, its loop and its routes.
struct Loaded {
    served: Served,
    app: Router,
    /// Ends the MCP-over-HTTP sessions of this load: once unloaded, they would answer from
    /// an index no longer kept in step (their clients start a new session).
    sessions: CancellationToken,
}

/// Keeps a repository in use (not unloaded) while it lives.
pub struct Held(Arc<Entry>);

impl Held {
    fn new(entry: Arc<Entry>) -> Held {
        entry.holders.fetch_add(1, Ordering::SeqCst);
        entry.touch();
        Held(entry)
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.0.touch();
        self.0.holders.fetch_sub(1, Ordering::SeqCst);
        self.0.used.notify_one();
    }
}

impl Entry {
    fn touch(&self) {
        *self
            .last_used
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Instant::now();
    }

    fn last_used(&self) -> Instant {
        *self
            .last_used
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Whether its index is in memory now (a load in progress is not).
    fn is_loaded(&self) -> bool {
        self.loaded
            .try_lock()
            .is_ok_and(|slot| slot.as_ref().is_some_and(|l| !l.served.has_ended()))
    }

    /// Whether it is loaded and nothing holds it (a load in progress counts as held).
    fn unloadable(&self) -> bool {
        self.holders.load(Ordering::SeqCst) == 0
            && !self.unloading.load(Ordering::SeqCst)
            && self.loaded.try_lock().is_ok_and(|slot| slot.is_some())
    }
}

impl Host {
    fn awaited(&self) -> std::sync::MutexGuard<'_, Vec<PathBuf>> {
        self.awaited
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn entries(&self) -> Vec<Arc<Entry>> {
        self.entries_mut().clone()
    }

    fn entries_mut(&self) -> std::sync::MutexGuard<'_, Vec<Arc<Entry>>> {
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Serves what the registry lists now: repositories added are taken on, those removed let
    /// go. A repository that cannot be served (gone, served by its own daemon) is logged and
    /// tried again at the registry's next change.
    async fn follow_registry(self: &Arc<Self>) {
        let wanted = match registry::registered(&self.home) {
            Ok(wanted) => wanted,
            Err(e) => {
                tracing::warn!("the registry is left as it is: {e:#}");
                return;
            }
        };
        let gone: Vec<Arc<Entry>> = {
            let mut entries = self.entries_mut();
            let (kept, gone) = std::mem::take(&mut *entries).into_iter().partition(|e| {
                wanted
                    .iter()
                    .any(|w| w.root == e.repo.root && w.data_dir == e.repo.data_dir)
            });
            *entries = kept;
            gone
        };
        for entry in gone {
            tracing::info!(root = %entry.repo.root.display(), "no longer registered");
            // Off the loop: a load in progress finishes first.
            tokio::spawn(release(entry));
        }
        for registered in wanted {
            let served = self
                .entries()
                .iter()
                .any(|e| e.repo.root == registered.root);
            if served {
                continue;
            }
            match self.adopt(&registered) {
                Ok(entry) => {
                    tracing::info!(root = %registered.root.display(), "serving");
                    self.entries_mut().push(entry);
                }
                Err(e) => tracing::warn!(
                    root = %registered.root.display(),
                    "not served: {e:#}"
                ),
            }
        }
    }

    /// Takes a registered repository on: its lock, token, socket and record; its index is
    /// loaded when first asked for.
    fn adopt(self: &Arc<Self>, registered: &Registered) -> anyhow::Result<Arc<Entry>> {
        anyhow::ensure!(
            registered.root.is_dir(),
            "the repository is not there (moved or deleted?); `cairn uninstall` in its new place, or `cairn install` there, updates the registry"
        );
        let repo = Repo::discover(&registered.root, Some(&registered.data_dir))?;
        anyhow::ensure!(
            repo.root == registered.root,
            "{} is inside the repository at {}, not a repository's root",
            registered.root.display(),
            repo.root.display()
        );
        crate::fsutil::private_dir(&repo.data_dir)
            .with_context(|| format!("cannot create {}", repo.data_dir.display()))?;
        let lock = take_lock(&repo.data_dir).map_err(|e| match e {
            StartError::Running { pid, .. } => {
                self.await_own_daemon(&repo.data_dir);
                anyhow::anyhow!("its own daemon serves it (pid {pid}); taken on when it stops")
            }
            StartError::Starting(_) => {
                self.await_own_daemon(&repo.data_dir);
                anyhow::anyhow!("its own daemon is starting; taken on when it stops")
            }
            e => anyhow::Error::from(e),
        })?;
        let data = DataDir::at(&repo.data_dir);
        let _ = std::fs::remove_file(data.daemon_record());
        let socket = data.socket();
        let token = super::ensure_token(&repo.data_dir).context("cannot create the token")?;
        let entry = Arc::new(Entry {
            cookie: super::ui::cookie_name(&repo.data_dir),
            repo,
            token,
            sessions: Arc::default(),
            socket: socket.clone(),
            _lock: lock,
            released: CancellationToken::new(),
            loaded: tokio::sync::Mutex::new(None),
            last_used: std::sync::Mutex::new(Instant::now()),
            holders: AtomicUsize::new(0),
            unloading: std::sync::atomic::AtomicBool::new(false),
            used: self.used.clone(),
        });
        let opening = Arc::new(Opening {
            host: self.clone(),
            entry: entry.clone(),
        });
        super::serve_socket(&socket, opening, entry.released.clone());
        if let Err(e) = write_record(&entry.repo, self.port, &socket) {
            // Let go of what was taken: the socket's task ends, the lock goes with the entry.
            entry.released.cancel();
            let _ = std::fs::remove_file(&socket);
            return Err(e.into());
        }
        Ok(entry)
    }

    /// Follows the registry again once the daemon holding `data_dir`'s lock stops, so the
    /// repository it served is taken on. The wait is a thread of its own, blocked on the lock
    /// (the process's exit does not wait for it).
    fn await_own_daemon(self: &Arc<Self>, data_dir: &Path) {
        let mut awaited = self.awaited();
        if awaited.iter().any(|d| d == data_dir) {
            return;
        }
        let Ok(lock) = std::fs::File::open(DataDir::at(data_dir).daemon_lock()) else {
            return;
        };
        awaited.push(data_dir.to_path_buf());
        let host = Arc::downgrade(self);
        let dir = data_dir.to_path_buf();
        let spawned = std::thread::Builder::new()
            .name("cairn-await-daemon".into())
            .spawn(move || {
                // Shared: the daemon holds it exclusively until it exits.
                let _ = lock.lock_shared();
                drop(lock);
                let Some(host) = host.upgrade() else { return };
                tracing::info!(data_dir = %dir.display(), "its own daemon stopped");
                host.awaited().retain(|d| *d != dir);
                let _ = host.again.try_send(());
            });
        if spawned.is_err() {
            awaited.pop();
        }
    }

    /// The repository's service and routes, loading its index if it is not in memory.
    async fn load(&self, entry: &Arc<Entry>) -> anyhow::Result<(Arc<Cairn>, Router)> {
        let mut slot = entry.loaded.lock().await;
        if let Some(loaded) = slot.as_ref().filter(|l| !l.served.has_ended()) {
            return Ok((loaded.served.cairn.clone(), loaded.app.clone()));
        }
        if let Some(ended) = slot.take() {
            ended.served.finished().await;
        }
        anyhow::ensure!(
            !entry.released.is_cancelled(),
            "the repository is no longer registered"
        );
        anyhow::ensure!(
            entry.repo.root.is_dir(),
            "the repository at {} is gone (moved or deleted); its index stays in {}",
            entry.repo.root.display(),
            entry.repo.data_dir.display()
        );
        let started = Instant::now();
        let served = Served::start(
            &entry.repo,
            self.options.model_dir.clone(),
            entry.released.child_token(),
        )
        .await?;
        let sessions = entry.released.child_token();
        let app = http::router(
            served.cairn.clone(),
            (self.registrations)(&entry.repo),
            served.reindex.clone(),
            entry.token.clone(),
            self.port,
            sessions.clone(),
            entry.sessions.clone(),
        );
        let answer = (served.cairn.clone(), app.clone());
        *slot = Some(Loaded {
            served,
            app,
            sessions,
        });
        drop(slot);
        trim_heap();
        tracing::info!(
            root = %entry.repo.root.display(),
            seconds = started.elapsed().as_secs_f64(),
            rss_mb = resident_mb(),
            "loaded"
        );
        self.used.notify_one();
        self.make_room(entry).await;
        Ok(answer)
    }

    /// Loads the repositories at `roots` (the working set, most recently used first) one after
    /// another while the process is within its memory bound; a root no longer registered is
    /// passed over. Stops at `shutdown`.
    async fn preload(self: Arc<Self>, roots: Vec<PathBuf>, shutdown: CancellationToken) {
        for root in roots {
            if shutdown.is_cancelled() || resident_mb() > self.options.memory_mb {
                break;
            }
            let Some(entry) = self.entries().into_iter().find(|e| e.repo.root == root) else {
                continue;
            };
            if entry.is_loaded() {
                continue;
            }
            match self.load(&entry).await {
                Ok(_) => tracing::info!(root = %root.display(), "preloaded"),
                Err(e) => tracing::warn!(root = %root.display(), "not preloaded: {e:#}"),
            }
        }
    }

    /// Unloads the least recently used repositories without an open session while the process
    /// is over its memory bound, never `keep`.
    async fn make_room(&self, keep: &Arc<Entry>) {
        while resident_mb() > self.options.memory_mb {
            let victim = self
                .entries()
                .into_iter()
                .filter(|e| !Arc::ptr_eq(e, keep) && e.unloadable())
                .min_by_key(|e| e.last_used());
            let Some(victim) = victim else { break };
            unload(&victim, "over the memory bound").await;
        }
    }

    /// Unloads every repository without an open session unused for the idle time, each on a
    /// task of its own (its last write can take a while; the loop goes on meanwhile).
    fn unload_idle(&self) {
        for entry in self.entries() {
            if entry.unloadable() && entry.last_used().elapsed() >= self.options.idle {
                entry.unloading.store(true, Ordering::SeqCst);
                tokio::spawn(async move {
                    unload(&entry, "idle").await;
                    entry.unloading.store(false, Ordering::SeqCst);
                });
            }
        }
    }

    /// Returns when the next repository may have been idle long enough, or when one was used.
    async fn idle_due(&self) {
        let next = self
            .entries()
            .iter()
            .filter(|e| e.unloadable())
            .map(|e| e.last_used() + self.options.idle)
            .min();
        tokio::select! {
            () = super::until(next) => {}
            () = self.used.notified() => {}
        }
    }

    /// The repository a request is for: the one whose token it carries; for the page, the
    /// one its log-in code or session cookie belongs to (the latest log-in when the browser
    /// holds several).
    fn entry_for(&self, request: &Request) -> Option<Arc<Entry>> {
        let entries = self.entries();
        for key in mem0::presented(request.headers()) {
            let mut found = None;
            for entry in &entries {
                if same(key.as_bytes(), entry.token.as_bytes()) && found.is_none() {
                    found = Some(entry.clone());
                }
            }
            if found.is_some() {
                return found;
            }
        }
        let path = request.uri().path();
        if path != "/ui" && !path.starts_with("/ui/") {
            return None;
        }
        if path == "/ui/login" {
            // Not decoded: codes are hex.
            let code = http::query_value(request.uri().query().unwrap_or(""), "code")?.trim();
            return entries.into_iter().find(|e| e.sessions.holds_code(code));
        }
        let cookies: Vec<(&str, &str)> = request
            .headers()
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .collect();
        entries
            .into_iter()
            .filter_map(|entry| {
                let at = cookies
                    .iter()
                    .filter(|(name, _)| *name == entry.cookie)
                    .filter_map(|(_, id)| entry.sessions.logged_in_at(id))
                    .max()?;
                Some((at, entry))
            })
            .max_by_key(|(at, _)| *at)
            .map(|(_, entry)| entry)
    }
}

/// Unloads a repository's index (after its last write) unless something took hold of it
/// meanwhile (always, when it is `released`); its socket and record stay.
async fn unload(entry: &Entry, why: &str) {
    let mut slot = entry.loaded.lock().await;
    if entry.holders.load(Ordering::SeqCst) > 0 && !entry.released.is_cancelled() {
        return;
    }
    let Some(loaded) = slot.take() else {
        return;
    };
    // Held while it stops: a request meanwhile waits, then loads what was written.
    loaded.sessions.cancel();
    loaded.served.stop().await;
    drop(slot);
    let _ = tokio::task::spawn_blocking(trim_heap).await;
    tracing::info!(
        root = %entry.repo.root.display(),
        why,
        rss_mb = resident_mb(),
        "unloaded"
    );
}

/// The working set the daemon last stopped with (empty when there is none, or when it cannot
/// be read: then the start loads nothing ahead).
fn read_working_set(home: &Path) -> Vec<PathBuf> {
    let path = home.join(WORKING_SET);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
        Err(e) => {
            tracing::warn!(
                "no repository loaded ahead: cannot read {}: {e}",
                path.display()
            );
            return Vec::new();
        }
    };
    #[derive(serde::Deserialize)]
    struct WorkingSet {
        roots: Vec<PathBuf>,
    }
    match serde_json::from_str::<WorkingSet>(&text) {
        Ok(set) => set.roots,
        Err(e) => {
            tracing::warn!(
                "no repository loaded ahead: {} is damaged: {e}",
                path.display()
            );
            Vec::new()
        }
    }
}

/// Writes which of `entries` are loaded now, most recently used first, as the working set.
fn write_working_set(home: &Path, entries: &[Arc<Entry>]) {
    let mut loaded: Vec<&Arc<Entry>> = entries.iter().filter(|e| e.is_loaded()).collect();
    loaded.sort_by_key(|e| std::cmp::Reverse(e.last_used()));
    let roots: Vec<&Path> = loaded.iter().map(|e| e.repo.root.as_path()).collect();
    let text = serde_json::json!({ "roots": roots }).to_string();
    if let Err(e) = crate::fsutil::write_atomic(&home.join(WORKING_SET), text.as_bytes()) {
        tracing::warn!("cannot write the working set: {e}");
    }
}

/// Stops serving a repository: its loop (after its last write), socket and record.
async fn release(entry: Arc<Entry>) {
    entry.released.cancel();
    unload(&entry, "released").await;
    let data = DataDir::at(&entry.repo.data_dir);
    let _ = std::fs::remove_file(data.daemon_record());
    let _ = std::fs::remove_file(&entry.socket);
}

/// A session opening on a repository's socket.
struct Opening {
    host: Arc<Host>,
    entry: Arc<Entry>,
}

impl Answering for Opening {
    async fn open(&self) -> Option<(Arc<Cairn>, Option<Held>)> {
        let held = Held::new(self.entry.clone());
        match self.host.load(&self.entry).await {
            Ok((cairn, _)) => Some((cairn, Some(held))),
            Err(e) => {
                tracing::warn!(root = %self.entry.repo.root.display(), "cannot serve: {e:#}");
                None
            }
        }
    }
}

/// Every HTTP request: to the repository it is for, loaded if it was not. The repository is
/// held until the answer's body is sent (an MCP tool call answers in a stream while it runs).
async fn dispatch(State(host): State<Arc<Host>>, request: Request) -> Response {
    let Some(entry) = host.entry_for(&request) else {
        return unrouted(request.uri().path());
    };
    let held = Held::new(entry.clone());
    // Whether the daemon serves the repository, without waiting for its index to load
    // (`cairn ui` asks, with a short patience).
    if request.uri().path() == "/health" && !entry.is_loaded() {
        return health_unloaded(&entry);
    }
    // Loaded on a task of its own: a client that gives up does not cut a load short.
    let loading = {
        let (host, entry) = (host.clone(), entry.clone());
        tokio::spawn(async move { host.load(&entry).await })
    };
    let loaded = match loading.await {
        Ok(loaded) => loaded,
        Err(e) => Err(anyhow::anyhow!("the load failed: {e}")),
    };
    match loaded {
        Ok((_, app)) => match app.oneshot(request).await {
            Ok(response) => response.map(|body| Body::new(HeldBody { body, _held: held })),
            Err(never) => match never {},
        },
        Err(e) => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("{}: {e:#}\n", entry.repo.root.display()),
        )
            .into_response(),
    }
}

/// `/health` of a repository served here but not loaded now.
fn health_unloaded(entry: &Entry) -> Response {
    let body = serde_json::json!({
        "root": entry.repo.root,
        "pid": std::process::id(),
        "version": env!("CARGO_PKG_VERSION"),
        "loaded": false,
    });
    (
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// An answer's body that keeps its repository held until it is sent.
struct HeldBody {
    body: Body,
    _held: Held,
}

impl http_body::Body for HeldBody {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        std::pin::Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// A request that names no repository served here.
fn unrouted(path: &str) -> Response {
    if mem0::serves(path) {
        return mem0::Refusal::new(
            StatusCode::UNAUTHORIZED,
            "send the repository's token (`cairn status` in the repository says where it is) as `Authorization: Token …`",
        )
        .into_response();
    }
    if path == "/ui" || path.starts_with("/ui/") {
        return (
            StatusCode::UNAUTHORIZED,
            super::ui::pages::problem(
                "cairn",
                "Not logged in",
                "Run `cairn ui` in the repository whose pages you want: it opens them logged in.",
            ),
        )
            .into_response();
    }
    http::unauthorized()
}

/// Watches cairn's data home for changes to the registry; each change is one message to
/// `sender` (those that come while one waits are folded into it).
fn watch_registry(
    home: &Path,
    sender: tokio::sync::mpsc::Sender<()>,
) -> anyhow::Result<notify::RecommendedWatcher> {
    use notify::Watcher as _;
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        // Only changes: the daemon's own reads of the file are events too (inotify's opens and
        // closes), and following them would read it again, without end.
        let about_registry = event.is_ok_and(|event| {
            !event.kind.is_access()
                && !event.kind.is_other()
                && event
                    .paths
                    .iter()
                    .any(|p| p.file_name().is_some_and(|n| n == registry::FILE))
        });
        if about_registry {
            let _ = sender.try_send(());
        }
    })
    .context("cannot watch the registry")?;
    watcher
        .watch(home, notify::RecursiveMode::NonRecursive)
        .with_context(|| format!("cannot watch {}", home.display()))?;
    Ok(watcher)
}
