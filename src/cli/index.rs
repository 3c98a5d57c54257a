//! `cairn index`, `cairn serve` and `cairn daemon`.

use std::fmt::Write as _;
use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::Context as _;
use cairn::app::{Cairn, IndexRequest};
use cairn::config::Repo;
use cairn::index::{Progress, Report};

use super::output;

/// `cairn index`: one run (from an empty graph store when `rebuild`), its summary or its
/// report as JSON; a progress line on a terminal unless `quiet`.
pub async fn index(
    cairn: &Cairn,
    json: bool,
    wait: u64,
    quiet: bool,
    rebuild: bool,
) -> anyhow::Result<ExitCode> {
    let progress = Arc::new(Progress::default());
    let line = (!quiet && std::io::stderr().is_terminal()).then(|| ProgressLine::show(&progress));
    let result = cairn
        .index(IndexRequest {
            patience: Duration::from_secs(wait),
            waiting: Box::new(|holder| {
                eprintln!(
                    "cairn: waiting for another index run{} to finish…",
                    holder.map(|p| format!(" (pid {p})")).unwrap_or_default()
                );
            }),
            progress,
            rebuild,
        })
        .await;
    drop(line);
    let report = result?;
    if json {
        output::json(&report)?;
    } else {
        output::text(summary(&cairn.repo, &report))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The run's progress redrawn on stderr every tenth of a second from its first second on,
/// erased when dropped.
pub(super) struct ProgressLine {
    stop: Arc<AtomicBool>,
    drawer: Option<std::thread::JoinHandle<()>>,
}

impl ProgressLine {
    const AFTER: Duration = Duration::from_secs(1);
    const EVERY: Duration = Duration::from_millis(100);

    fn show(progress: &Arc<Progress>) -> ProgressLine {
        let progress = progress.clone();
        ProgressLine::of(move |width| progress.line(width))
    }

    /// Draws the line `line(width)` makes, as [`ProgressLine::show`] draws an index run's.
    pub(super) fn of(line: impl Fn(usize) -> String + Send + 'static) -> ProgressLine {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        let width = std::env::var("COLUMNS")
            .ok()
            .and_then(|c| c.parse().ok())
            .unwrap_or(80);
        let drawer = std::thread::spawn(move || {
            let started = std::time::Instant::now();
            let mut drawn = false;
            while !stopped.load(Ordering::Relaxed) {
                std::thread::sleep(Self::EVERY);
                if started.elapsed() >= Self::AFTER {
                    eprint!("\r\x1b[2K{}", line(width));
                    drawn = true;
                }
            }
            if drawn {
                eprint!("\r\x1b[2K");
            }
        });
        ProgressLine {
            stop,
            drawer: Some(drawer),
        }
    }
}

impl Drop for ProgressLine {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(drawer) = self.drawer.take() {
            let _ = drawer.join();
        }
    }
}

/// `cairn serve`: MCP over stdio, relayed to the daemon when one answers for the repository.
pub async fn serve(repo: Repo, model_dir: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    #[cfg(unix)]
    if let Some(record) = cairn::daemon::DaemonRecord::running(&repo.data_dir) {
        let socket = cairn::running::owned_socket(&record.socket);
        match async { tokio::net::UnixStream::connect(socket?).await }.await {
            Ok(stream) => {
                cairn::running::client::relay(stream).await?;
                return Ok(ExitCode::SUCCESS);
            }
            Err(e) => tracing::warn!(
                "the daemon's socket {} did not answer ({e}); serving from the store",
                record.socket.display()
            ),
        }
    }
    cairn::mcp::serve_stdio(Cairn::serving(repo, model_dir)).await?;
    Ok(ExitCode::SUCCESS)
}

/// `cairn daemon`: runs until a signal; a daemon already running is not a failure.
pub async fn daemon(
    repo: Repo,
    model_dir: Option<PathBuf>,
    port: Option<u16>,
) -> anyhow::Result<ExitCode> {
    let root = repo.root.clone();
    let registrations = super::doctor::registrations(&repo);
    match cairn::daemon::run(repo, model_dir, port, registrations, |record| {
        eprintln!(
            "cairn: daemon for {} serving {} (pid {})",
            root.display(),
            record.url,
            record.pid
        );
    })
    .await
    {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(e @ cairn::daemon::StartError::Running { .. }) => {
            eprintln!("cairn: {e}");
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => Err(e.into()),
    }
}

/// `cairn daemon --user`: one daemon for every registered repository.
pub async fn user_daemon(
    options: cairn::daemon::host::Options,
    data_home: Option<PathBuf>,
) -> anyhow::Result<ExitCode> {
    let home = data_home
        .or_else(cairn::running::registry::home)
        .context("this system has no data directory for cairn's registry")?;
    let registrations: cairn::daemon::host::RegistrationsFor =
        std::sync::Arc::new(super::doctor::registrations);
    match cairn::daemon::host::run(home, options, registrations, |record, served| {
        eprintln!(
            "cairn: daemon for this user's {served} registered repositories serving {} (pid {})",
            record.url, record.pid
        );
    })
    .await
    {
        Ok(()) => Ok(ExitCode::SUCCESS),
        Err(cairn::daemon::StartError::Running { pid, url, .. }) => {
            eprintln!("cairn: this user's daemon is already running (pid {pid}, {url})");
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => Err(e.into()),
    }
}

/// What an index run did, a few lines for a person.
fn summary(repo: &Repo, report: &Report) -> String {
    let mut text = String::new();
    let stats = &report.stats;
    let by = report
        .daemon
        .map(|pid| format!(" by the daemon (pid {pid})"))
        .unwrap_or_default();
    let _ = writeln!(
        text,
        "indexed {} in {:.2}s{by}",
        repo.root.display(),
        report.seconds
    );
    let _ = writeln!(
        text,
        "  files {} (parsed {}, removed {}), symbols {}, external modules {}",
        report.files, report.parsed, report.removed, report.symbols, report.external_modules
    );
    let edges: Vec<String> = report
        .edges
        .iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect();
    let _ = writeln!(text, "  edges: {}", edges.join(", "));
    let _ = writeln!(
        text,
        "  calls: {} resolved, {} unresolved ({:.1}% of calls into project code; {} of them possible calls of a method on a receiver of unknown type), {} to libraries, {} builtins",
        stats.calls_resolved,
        stats.calls_unresolved,
        report.unresolved_call_share * 100.0,
        stats.calls_untyped,
        stats.calls_external,
        stats.calls_builtin
    );
    let _ = writeln!(
        text,
        "  imports: {} to project files, {} external, {} unresolved",
        stats.imports_internal, stats.imports_external, stats.imports_unresolved
    );
    let _ = writeln!(
        text,
        "  written: {} node changes, {} edge changes; store {}",
        report.nodes_written,
        report.edges_written,
        repo.store_dir().display()
    );
    if !report.moved.is_empty() {
        let _ = writeln!(
            text,
            "  moved {} files (memories anchored on them follow)",
            report.moved.len()
        );
    }
    if !report.skipped.is_empty() {
        let _ = writeln!(text, "  skipped {} files:", report.skipped.len());
        for skip in report.skipped.iter().take(20) {
            let _ = writeln!(text, "    {}: {}", skip.path, skip.reason);
        }
        if report.skipped.len() > 20 {
            let _ = writeln!(
                text,
                "    … {} more (see --json)",
                report.skipped.len() - 20
            );
        }
    }
    if !report.diagnostics.is_empty() {
        let _ = writeln!(
            text,
            "  {} files parsed with errors (kept what parsed):",
            report.diagnostics.len()
        );
        for d in report.diagnostics.iter().take(10) {
            let _ = writeln!(text, "    {}: {}", d.path, d.reason);
        }
    }
    text
}
