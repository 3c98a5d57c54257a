//! Starting the daemon when none runs: `cairn daemon` as a detached child (its own process
//! group, so the terminal's Ctrl-C does not reach it; its output appended to the data
//! directory's log), then waited for until it answers `/health` with the token.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};

use super::{DaemonRecord, client, is_locked, read_token};
use crate::datadir::DataDir;

/// How long a health check may take.
const HEALTH_TIMEOUT: Duration = Duration::from_secs(5);
/// How often a starting daemon is looked at.
const POLL: Duration = Duration::from_millis(100);

/// How to start a daemon for one repository.
pub struct Launch {
    /// The `cairn` binary.
    pub program: PathBuf,
    pub root: PathBuf,
    pub data_dir: PathBuf,
    /// Global options to pass on (`--db`, `--model-dir`).
    pub options: Vec<OsString>,
}

/// The daemon serving the repository, and whether this call started it. A daemon that is
/// running but does not answer is not replaced: that is an error to look into.
pub fn ensure(launch: &Launch, patience: Duration) -> anyhow::Result<(DaemonRecord, bool)> {
    if let Some(record) = DaemonRecord::running(&launch.data_dir) {
        answers(&launch.data_dir, &record).with_context(|| {
            format!(
                "the daemon (pid {}) runs but does not answer on port {}",
                record.pid, record.port
            )
        })?;
        return Ok((record, false));
    }
    let log = DataDir::at(&launch.data_dir).daemon_log();
    let output = crate::fsutil::append(&log)
        .with_context(|| format!("cannot open the daemon's log {}", log.display()))?;
    let mut command = Command::new(&launch.program);
    command
        .arg("daemon")
        .arg("--repo")
        .arg(&launch.root)
        .arg("--data-dir")
        .arg(&launch.data_dir)
        .args(&launch.options)
        .current_dir(&launch.root)
        .stdin(Stdio::null())
        .stdout(output.try_clone()?)
        .stderr(output);
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut child = command
        .spawn()
        .with_context(|| format!("cannot start {} daemon", launch.program.display()))?;
    let started = Instant::now();
    let mut exited = false;
    loop {
        if let Some(record) = DaemonRecord::running(&launch.data_dir)
            && answers(&launch.data_dir, &record).is_ok()
        {
            return Ok((record, true));
        }
        if !exited && let Some(status) = child.try_wait()? {
            exited = true;
            // Another daemon may have won the start; it is waited for like ours.
            if !status.success() && !is_locked(&DataDir::at(&launch.data_dir).daemon_lock()) {
                bail!(
                    "the daemon did not start ({status}); its log is {}",
                    log.display()
                );
            }
        }
        if started.elapsed() > patience {
            bail!(
                "the daemon did not answer within {} s; its log is {}",
                patience.as_secs(),
                log.display()
            );
        }
        std::thread::sleep(POLL);
    }
}

/// Whether the daemon of `record` answers `/health` with this data directory's token.
fn answers(data_dir: &Path, record: &DaemonRecord) -> anyhow::Result<()> {
    let token = read_token(data_dir).context("the daemon's token is missing")?;
    client::get(record.port, &token, "/health", HEALTH_TIMEOUT).map(drop)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn launch(program: PathBuf, dir: &Path) -> Launch {
        Launch {
            program,
            root: dir.to_path_buf(),
            data_dir: dir.to_path_buf(),
            options: Vec::new(),
        }
    }

    /// A program that runs `body` when started as `program daemon --repo …`: the shell,
    /// reading `body` from a file named `daemon` in `dir` (the daemon's working directory).
    /// Read, not executed: a script written and executed at once fails now and then with
    /// "text file busy" while other tests fork.
    fn script(dir: &Path, body: &str) -> PathBuf {
        std::fs::write(dir.join("daemon"), format!("{body}\n")).unwrap();
        PathBuf::from("/bin/sh")
    }

    #[test]
    fn a_daemon_that_fails_to_start_is_reported_with_its_log() {
        let dir = tempfile::tempdir().unwrap();
        let program = script(dir.path(), "echo \"cannot index: $*\" >&2; exit 3");
        let error = ensure(&launch(program, dir.path()), Duration::from_secs(30)).unwrap_err();
        let message = format!("{error:#}");
        assert!(message.contains("the daemon did not start"), "{message}");
        assert!(message.contains("daemon.log"), "{message}");
        let log = std::fs::read_to_string(DataDir::at(dir.path()).daemon_log()).unwrap();
        assert!(log.contains("cannot index: --repo"), "{log}");
    }

    #[test]
    fn a_daemon_that_never_answers_is_given_up_on() {
        let dir = tempfile::tempdir().unwrap();
        // It ends by itself soon after the test gives up.
        let program = script(dir.path(), "exec sleep 3");
        let error = ensure(&launch(program, dir.path()), Duration::from_secs(1)).unwrap_err();
        let message = format!("{error:#}");
        assert!(message.contains("did not answer within 1 s"), "{message}");
    }
}
