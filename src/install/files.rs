//! Reading and writing the files install touches: whole-file atomic writes that keep the
//! file's permissions and write through symlinks, and the directories they needed.

use std::fs;
use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use super::Error;

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

/// Replaces the file's contents at once (a symlink's target, keeping the link), creating
/// the directories it needs; returns those it created, outermost first.
pub(super) fn write(path: &Path, bytes: &[u8]) -> Result<Vec<PathBuf>, Error> {
    let failed = |source| Error::Write {
        path: path.to_path_buf(),
        source,
    };
    let path = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let parent = path.parent().unwrap_or(Path::new("."));
    let created = missing_dirs(parent);
    fs::create_dir_all(parent).map_err(failed)?;
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let staging = parent.join(format!(".{name}.cairn-new"));
    let result = (|| {
        let mut file = fs::File::create(&staging)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        if let Ok(metadata) = fs::metadata(&path) {
            fs::set_permissions(&staging, metadata.permissions())?;
        }
        fs::rename(&staging, &path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&staging);
    }
    result.map_err(failed)?;
    Ok(created)
}

/// Writes a file only its owner can read (backups may hold secrets from the configs).
pub(super) fn write_private(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let failed = |source| Error::Write {
        path: path.to_path_buf(),
        source,
    };
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).map_err(failed)?;
    }
    let mut file = crate::daemon::files::private_file(path).map_err(failed)?;
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
