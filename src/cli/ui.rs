//! `cairn ui`: the daemon's page in the browser, started if needed and logged in with a
//! one-time code (the URL carries it; the daemon exchanges it for a session cookie).

use std::ffi::OsString;
use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

use anyhow::Context as _;

use cairn::config::Repo;
use cairn::running::start::{Launch, ensure};
use cairn::running::{client, read_token};

use super::{Global, output};

/// How long a daemon started here may take to index and answer.
const START_PATIENCE: Duration = Duration::from_secs(600);
/// How long the daemon may take to hand out a code.
const CODE_TIMEOUT: Duration = Duration::from_secs(10);

/// Makes sure the daemon runs, asks it for a log-in code and opens the page (or prints its
/// address with `--no-open`, or when no browser opener is there).
pub async fn ui(repo: &Repo, global: &Global, no_open: bool) -> anyhow::Result<ExitCode> {
    let mut options: Vec<OsString> = Vec::new();
    if let Some(db) = &global.db {
        options.extend(["--db".into(), db.into()]);
    }
    if let Some(model_dir) = &global.model_dir {
        options.extend(["--model-dir".into(), model_dir.into()]);
    }
    let launch = Launch {
        program: std::env::current_exe().context("cannot find the cairn binary")?,
        root: repo.root.clone(),
        data_dir: repo.data_dir.clone(),
        options,
    };
    let url = tokio::task::spawn_blocking(move || log_in_url(&launch)).await??;
    if !no_open {
        match open(&url) {
            Ok(()) => {
                eprintln!(
                    "cairn: opened the page in your browser (the link works once, for a minute)"
                );
                return Ok(ExitCode::SUCCESS);
            }
            Err(why) => eprintln!(
                "cairn: cannot open a browser ({why}); open this address within a minute:"
            ),
        }
    }
    output::line(url)?;
    Ok(ExitCode::SUCCESS)
}

/// The page's one-time log-in address, from the running daemon or one started for it.
fn log_in_url(launch: &Launch) -> anyhow::Result<String> {
    let (record, started) = ensure(launch, START_PATIENCE)?;
    if started {
        eprintln!(
            "cairn: started the daemon for {} (pid {})",
            launch.root.display(),
            record.pid
        );
    }
    let token = read_token(&launch.data_dir).context("the daemon's token is missing")?;
    let code = client::post(record.port, &token, "/login-code", CODE_TIMEOUT)
        .context("the daemon gave no log-in code (is it an older cairn? restart it)")?;
    Ok(format!(
        "http://127.0.0.1:{}/ui/login?code={}",
        record.port,
        code.trim()
    ))
}

/// Opens `url` with the desktop's opener.
fn open(url: &str) -> Result<(), String> {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    match Command::new(opener)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
    {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => Err(format!("{opener} failed: {status}")),
        Err(e) => Err(format!("{opener}: {e}")),
    }
}
