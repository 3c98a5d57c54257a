//! Reading and writing the files install touches: whole-file atomic writes that keep the
//! file's permissions, never follow a link and never leave the directory they belong to, and
//! the directories they needed.

use std::fs;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use super::Error;

/// Who reads a file install writes, which decides the modes it creates: the repository's
/// files are for everyone who clones or works in it, whatever cairn's own private umask;
/// those in the user's configuration directories (`~/.codex`, a service's) are the user's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Readers {
    /// Directories 0755, files 0644.
    Everyone,
    /// Directories 0700, files 0600.
    Owner,
}

impl Readers {
    fn dir_mode(self) -> u32 {
        match self {
            Readers::Everyone => 0o755,
            Readers::Owner => crate::fsutil::DIR_MODE,
        }
    }

    fn file_mode(self) -> u32 {
        match self {
            Readers::Everyone => 0o644,
            Readers::Owner => crate::fsutil::FILE_MODE,
        }
    }
}

/// The file's bytes; `None` if there is no such file.
pub(super) fn read(path: &Path) -> Result<Option<Vec<u8>>, Error> {
    match fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(source) => Err(Error::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// The bytes as text.
pub(super) fn text<'a>(path: &Path, bytes: &'a [u8]) -> Result<&'a str, Error> {
    std::str::from_utf8(bytes).map_err(|_| Error::NotText {
        path: path.to_path_buf(),
    })
}

/// Checks that writing `path` cannot land outside `within`: the file is not a symbolic link,
/// and its resolved path (links in the directories above it followed) stays inside `within`
/// (resolved the same way). A repository can ship links; cairn never writes through them.
pub(super) fn confine(path: &Path, within: &Path) -> Result<(), Error> {
    if let Ok(metadata) = fs::symlink_metadata(path)
        && metadata.file_type().is_symlink()
    {
        return Err(Error::Link {
            path: path.to_path_buf(),
            target: fs::read_link(path).unwrap_or_default(),
        });
    }
    let parent = path.parent().unwrap_or(Path::new("."));
    let (resolved, boundary) = (resolve(parent), resolve(within));
    if !resolved.starts_with(&boundary) {
        return Err(Error::Escapes {
            path: path.to_path_buf(),
            resolved,
            within: within.to_path_buf(),
        });
    }
    Ok(())
}

/// `path` with its deepest existing ancestor canonicalised and the rest (which does not exist
/// yet, so holds no link) appended.
fn resolve(path: &Path) -> PathBuf {
    for ancestor in path.ancestors() {
        if let Ok(real) = fs::canonicalize(ancestor) {
            let rest = path.strip_prefix(ancestor).unwrap_or(Path::new(""));
            return real.join(rest);
        }
    }
    path.to_path_buf()
}

/// Replaces the file's contents at once, creating the directories it needs (with the modes
/// of its `readers`); returns those it created, outermost first. The file must stay inside
/// `within` ([`confine`]); the new bytes go to a randomly named staging file created
/// exclusively (`O_EXCL`, so never through a link planted there) and renamed over the file,
/// which keeps its permissions (a new file gets its `readers`' mode).
pub(super) fn write(
    path: &Path,
    bytes: &[u8],
    within: &Path,
    readers: Readers,
) -> Result<Vec<PathBuf>, Error> {
    let failed = |source| Error::Write {
        path: path.to_path_buf(),
        source,
    };
    confine(path, within)?;
    let parent = path.parent().unwrap_or(Path::new("."));
    let created = create_dirs(parent, readers.dir_mode()).map_err(failed)?;
    // A directory created just now could have been swapped for a link: check again.
    confine(path, within)?;
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let mut staging = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".cairn-new")
        .tempfile_in(parent)
        .map_err(failed)?;
    staging.write_all(bytes).map_err(failed)?;
    staging.as_file().sync_all().map_err(failed)?;
    let permissions = match fs::symlink_metadata(path) {
        Ok(metadata) => metadata.permissions(),
        Err(_) => new_file_permissions(staging.as_file(), readers).map_err(failed)?,
    };
    fs::set_permissions(staging.path(), permissions).map_err(failed)?;
    staging.persist(path).map_err(|e| failed(e.error))?;
    Ok(created)
}

/// What a file cairn creates gets: its readers' mode (the staging file starts private).
fn new_file_permissions(staging: &fs::File, readers: Readers) -> std::io::Result<fs::Permissions> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = staging;
        Ok(fs::Permissions::from_mode(readers.file_mode()))
    }
    #[cfg(not(unix))]
    {
        let _ = readers;
        staging.metadata().map(|m| m.permissions())
    }
}

/// Creates the directories from `dir` up that do not exist, outermost first, each with `mode`
/// whatever the process's umask; returns those it found missing.
fn create_dirs(dir: &Path, mode: u32) -> std::io::Result<Vec<PathBuf>> {
    let missing = missing_dirs(dir);
    for missing_dir in &missing {
        match fs::create_dir(missing_dir) {
            Ok(()) => set_dir_mode(missing_dir, mode)?,
            // Made meanwhile by someone else: theirs, left as it is.
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Ok(missing)
}

/// Sets a directory's mode through the directory itself, opened without following a link, so
/// a link put in its place is never followed to change something else.
fn set_dir_mode(dir: &Path, mode: u32) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        let handle = fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_DIRECTORY)
            .open(dir)?;
        handle.set_permissions(fs::Permissions::from_mode(mode))
    }
    #[cfg(not(unix))]
    {
        let _ = (dir, mode);
        Ok(())
    }
}

/// Writes a file only its owner can read (backups may hold secrets from the configs).
pub(super) fn write_private(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let failed = |source| Error::Write {
        path: path.to_path_buf(),
        source,
    };
    if let Some(parent) = path.parent() {
        crate::fsutil::private_dir(parent).map_err(failed)?;
    }
    let mut file = crate::fsutil::private_file(path).map_err(failed)?;
    file.write_all(bytes).map_err(failed)?;
    file.sync_all().map_err(failed)
}

/// Deletes the file (nothing to do if it is gone already).
pub(super) fn remove(path: &Path) -> Result<(), Error> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != ErrorKind::NotFound => Err(Error::Write {
            path: path.to_path_buf(),
            source: e,
        }),
        _ => Ok(()),
    }
}

/// Deletes those of `dirs` that are empty, innermost first.
pub(super) fn remove_empty_dirs(mut dirs: Vec<PathBuf>) {
    dirs.sort_by_key(|dir| std::cmp::Reverse(dir.components().count()));
    dirs.dedup();
    for dir in dirs {
        // Fails, as it should, when the directory holds anything.
        let _ = fs::remove_dir(dir);
    }
}

/// Whether `path` is a file its owner may run.
pub(super) fn is_executable(path: &Path) -> bool {
    let Ok(metadata) = fs::metadata(path) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        metadata.is_file() && metadata.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        metadata.is_file()
    }
}

/// The directories from `dir` up that do not exist, outermost first.
fn missing_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut missing: Vec<PathBuf> = dir
        .ancestors()
        .take_while(|ancestor| !ancestor.as_os_str().is_empty() && !ancestor.exists())
        .map(Path::to_path_buf)
        .collect();
    missing.reverse();
    missing
}
