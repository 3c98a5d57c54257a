//! File helpers for the whole crate. Above all, files only the user can read: cairn's data
//! directories are 0700 and the files in them 0600, set by cairn itself rather than left to
//! the user's umask (the stores hold every memory and review, the token opens the daemon).
//!
//! - [`jsonl`] — append-only JSON-lines files read back byte by byte, written on fresh lines.
//! - [`repo`] — the one reader of the repository's own files (links kept inside, limits).
//! - [`rotation`] — append-only files that roll over at a size limit.

pub mod jsonl;
pub mod repo;
pub mod rotation;

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Mode of cairn's data directories.
pub const DIR_MODE: u32 = 0o700;
/// Mode of the files in them.
pub const FILE_MODE: u32 = 0o600;

/// Makes what this process creates private by default (umask 077), so files the embedded
/// stores create on their own are too. Files cairn writes for others to read (an assistant's
/// config in the repository) set their mode explicitly.
pub fn restrict_new_files() {
    #[cfg(unix)]
    // SAFETY: umask only sets the process's file-creation mask; it cannot fail.
    unsafe {
        libc::umask(0o077);
    }
}

/// Creates `dir` and its missing parents as 0700, and narrows `dir` itself if it is wider.
pub fn private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(DIR_MODE);
    }
    builder.create(dir)?;
    narrow(dir, DIR_MODE, true).map(|_| ())
}

/// Replaces `path`'s contents at once with a 0600 file (a randomly named sibling renamed over
/// it), creating its directory as 0700.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    private_dir(dir)?;
    let mut staging = tempfile::Builder::new()
        .prefix(".cairn-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    staging.write_all(bytes)?;
    staging.as_file().sync_data()?;
    staging.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Options that create a file as 0600.
pub fn options() -> std::fs::OpenOptions {
    let mut options = std::fs::OpenOptions::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(FILE_MODE);
    }
    options
}

/// Runs `f` holding an exclusive lock on the file `lock` (made as 0600, in a 0700 directory, if
/// missing): every process that takes the same lock takes its turn.
pub fn locked<T>(lock: &Path, f: impl FnOnce() -> std::io::Result<T>) -> std::io::Result<T> {
    if let Some(dir) = lock.parent() {
        private_dir(dir)?;
    }
    let file = options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(lock)?;
    file.lock()?;
    let result = f();
    drop(file);
    result
}

/// Opens `path` for appending, created as 0600 (and narrowed to 0600 if it was wider); open
/// for reading too, so a writer can see whether the file ends inside a line.
pub fn append(path: &Path) -> std::io::Result<std::fs::File> {
    let file = options().read(true).append(true).create(true).open(path)?;
    // Through the descriptor, not the path: a writer rolling the file over may have renamed
    // it since it was opened.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if file.metadata()?.permissions().mode() & 0o077 != 0 {
            file.set_permissions(std::fs::Permissions::from_mode(FILE_MODE))?;
        }
    }
    Ok(file)
}

/// An entry under a data directory that others could read, with the mode it had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opened {
    pub path: PathBuf,
    pub mode: u32,
}

/// Narrows every directory under (and including) `dir` to 0700 and every other entry to
/// 0600; links are left alone (their own bits mean nothing). Returns what was wider.
pub fn tighten(dir: &Path) -> std::io::Result<Vec<Opened>> {
    modes_under(dir, true)
}

/// What [`tighten`] would narrow under `dir`, changing nothing.
pub fn exposed(dir: &Path) -> std::io::Result<Vec<Opened>> {
    modes_under(dir, false)
}

/// The entries under `dir` that group or others can reach, narrowed when `change`.
fn modes_under(dir: &Path, change: bool) -> std::io::Result<Vec<Opened>> {
    let mut opened = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(path) = pending.pop() {
        let metadata = match std::fs::symlink_metadata(&path) {
            Ok(metadata) => metadata,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        if metadata.file_type().is_symlink() {
            continue;
        }
        let wanted = if metadata.is_dir() {
            DIR_MODE
        } else {
            FILE_MODE
        };
        if let Some(mode) = narrow(&path, wanted, change)? {
            opened.push(Opened {
                path: path.clone(),
                mode,
            });
        }
        if metadata.is_dir() {
            for entry in std::fs::read_dir(&path)? {
                pending.push(entry?.path());
            }
        }
    }
    opened.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(opened)
}

/// The mode of `path` if group or others have any access, then set to `wanted` when `change`.
fn narrow(path: &Path, wanted: u32, change: bool) -> std::io::Result<Option<u32>> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path)?.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            if change {
                std::fs::set_permissions(path, std::fs::Permissions::from_mode(wanted))?;
            }
            return Ok(Some(mode));
        }
    }
    #[cfg(not(unix))]
    let _ = (path, wanted, change);
    Ok(None)
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn tighten_narrows_what_others_can_read_and_reports_it() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("data");
        std::fs::create_dir_all(dir.join("store")).unwrap();
        std::fs::write(dir.join("store/0001.sst"), "x").unwrap();
        std::fs::write(dir.join("memory.seq"), "1").unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        let sst = dir.join("store/0001.sst");
        std::fs::set_permissions(&sst, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::set_permissions(
            dir.join("memory.seq"),
            std::fs::Permissions::from_mode(0o600),
        )
        .unwrap();
        std::os::unix::fs::symlink("/etc/passwd", dir.join("link")).unwrap();

        // Finding changes nothing; narrowing finds the same.
        let found = exposed(&dir).unwrap();
        assert_eq!(mode(&sst), 0o644);
        let opened = tighten(&dir).unwrap();
        assert_eq!(found, opened);
        let paths: Vec<&Path> = opened.iter().map(|o| o.path.as_path()).collect();
        assert!(paths.contains(&dir.as_path()) && paths.contains(&sst.as_path()));
        assert!(!paths.contains(&dir.join("memory.seq").as_path()));
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&sst), 0o600);
        assert_eq!(
            mode(Path::new("/etc/passwd")),
            0o644,
            "links are not followed"
        );
        assert!(tighten(&dir).unwrap().is_empty());
    }

    #[test]
    fn private_dirs_and_atomic_writes_are_private_whatever_was_there() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("a/b");
        private_dir(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&root.path().join("a")), 0o700);
        let file = dir.join("marker");
        std::fs::write(&file, "old").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        write_atomic(&file, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "new");
        assert_eq!(mode(&file), 0o600);
        let log = dir.join("log");
        append(&log).unwrap().write_all(b"x\n").unwrap();
        assert_eq!(mode(&log), 0o600);
    }
}

/// Creates (truncating) a file only its owner can read and write.
pub fn private_file(path: &Path) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let file = options.open(path)?;
    restrict(path)?;
    Ok(file)
}

/// Sets mode 0600 (a no-op off Unix).
pub fn restrict(path: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path)?.permissions().mode() & 0o777;
        if mode != 0o600 {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
        }
    }
    Ok(())
}

/// The permission bits of `path` (Unix), for `cairn doctor`.
pub fn mode_of(path: &Path) -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path)
            .ok()
            .map(|m| m.permissions().mode() & 0o777)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// `bytes` random bytes from the OS, as hex.
pub fn random_hex(bytes: usize) -> std::io::Result<String> {
    let mut buffer = vec![0u8; bytes];
    File::open("/dev/urandom")?.read_exact(&mut buffer)?;
    Ok(buffer.iter().map(|b| format!("{b:02x}")).collect())
}
