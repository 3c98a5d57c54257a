//! Append-only files that roll over at a size: a file that has reached its limit is renamed to
//! `<name>.1` (replacing the generation before it) and a new one is started, so the event file
//! and the logs never take more than about twice their limit on disk.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Where the event file and the logs roll over. Events are a few hundred bytes each, so a
/// generation holds weeks of heavy assistant use; the logs hold warnings only unless
/// `CAIRN_LOG` asks for more; and a tally starting cold reads at most two generations.
pub const LIMIT: u64 = 4 * 1024 * 1024;

/// The previous generation of `path`: `<name>.1` beside it.
pub fn previous(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".1");
    path.with_file_name(name)
}

/// Appends `bytes` to `path` in one `write` (the file created 0600), first rolling the file
/// over when it has reached `limit`, and on a fresh line when the file ends inside one (cut
/// short by a crash).
pub fn append(path: &Path, bytes: &[u8], limit: u64) -> std::io::Result<()> {
    let mut file = crate::fsutil::append(path)?;
    if file.metadata()?.len() >= limit {
        file = roll_over(path, file)?;
    }
    let bytes = super::jsonl::on_fresh_line(&file, bytes)?;
    file.write_all(&bytes)
}

/// Moves the full file at `path` to its previous generation and opens a new one. Writers that
/// find it full at once take turns under an exclusive lock on it, and only the first, which
/// still finds it at `path`, moves it.
fn roll_over(path: &Path, full: File) -> std::io::Result<File> {
    full.lock()?;
    if still_at(&full, path)? {
        std::fs::rename(path, previous(path))?;
    }
    drop(full);
    crate::fsutil::append(path)
}

/// Whether `file` is the file at `path`.
fn still_at(file: &File, path: &Path) -> std::io::Result<bool> {
    match std::fs::metadata(path) {
        Ok(at_path) => Ok(identity(&file.metadata()?) == identity(&at_path)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// What names a file whatever its path: its device and inode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileId {
    pub device: u64,
    pub inode: u64,
}

/// A file's identity, which stays with it across renames; `None` where there is none.
pub fn identity(metadata: &std::fs::Metadata) -> Option<FileId> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        Some(FileId {
            device: metadata.dev(),
            inode: metadata.ino(),
        })
    }
    #[cfg(not(unix))]
    {
        let _ = metadata;
        None
    }
}

/// Rolls this process's own log over: when the file at `path` has reached `limit` and is where
/// this process's stdout or stderr goes (a service manager opened it for the daemon), it is
/// renamed to its previous generation and those descriptors are pointed at a new file, so no
/// line is lost. Says whether it rolled over.
#[cfg(unix)]
pub fn roll_own_log(path: &Path, limit: u64) -> std::io::Result<bool> {
    use std::os::fd::{AsFd, AsRawFd};
    let metadata = match std::fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
    };
    if metadata.len() < limit {
        return Ok(false);
    }
    let log = identity(&metadata);
    let (stdout, stderr) = (std::io::stdout(), std::io::stderr());
    let ours: Vec<i32> = [stdout.as_fd(), stderr.as_fd()]
        .into_iter()
        .filter(|fd| log.is_some() && descriptor_identity(*fd) == log)
        .map(|fd| fd.as_raw_fd())
        .collect();
    if ours.is_empty() {
        return Ok(false);
    }
    std::fs::rename(path, previous(path))?;
    let fresh = crate::fsutil::append(path)?;
    for fd in ours {
        // SAFETY: dup2 makes `fd` (this process's stdout or stderr, open all along) another
        // descriptor of `fresh`; it touches no memory.
        if unsafe { libc::dup2(fresh.as_raw_fd(), fd) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(true)
}

/// The identity of the file a descriptor is open on.
#[cfg(unix)]
fn descriptor_identity(fd: std::os::fd::BorrowedFd<'_>) -> Option<FileId> {
    let file = File::from(fd.try_clone_to_owned().ok()?);
    identity(&file.metadata().ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_file_rolls_over_keeping_one_generation() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hook.log");
        append(&path, b"first\n", 10).unwrap();
        append(&path, b"second\n", 10).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "first\nsecond\n");
        append(&path, b"third\n", 10).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "third\n");
        let old = previous(&path);
        assert_eq!(std::fs::read_to_string(&old).unwrap(), "first\nsecond\n");
        append(&path, b"fourth\n", 10).unwrap();
        append(&path, b"fifth\n", 10).unwrap();
        assert_eq!(std::fs::read_to_string(&old).unwrap(), "third\nfourth\n");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "fifth\n");
    }

    #[test]
    fn a_line_cut_short_keeps_the_next_apart() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hook.log");
        std::fs::write(&path, "first\nsec").unwrap();
        append(&path, b"third\n", 100).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "first\nsec\nthird\n"
        );
    }

    #[test]
    fn writers_racing_at_the_limit_move_the_full_file_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        std::fs::write(&path, "x".repeat(100)).unwrap();
        std::thread::scope(|scope| {
            for i in 0..8 {
                let path = &path;
                scope.spawn(move || append(path, format!("{i}\n").as_bytes(), 100).unwrap());
            }
        });
        assert_eq!(
            std::fs::read_to_string(previous(&path)).unwrap(),
            "x".repeat(100)
        );
        let mut lines: Vec<String> = std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        lines.sort();
        assert_eq!(lines, ["0", "1", "2", "3", "4", "5", "6", "7"]);
    }

    #[cfg(unix)]
    #[test]
    fn a_log_this_process_does_not_write_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("daemon.log");
        std::fs::write(&path, "x".repeat(100)).unwrap();
        assert!(!roll_own_log(&path, 10).unwrap());
        assert!(!previous(&path).exists());
        assert!(!roll_own_log(&dir.path().join("missing.log"), 10).unwrap());
    }
}
