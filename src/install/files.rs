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

/// Largest file install reads (an assistant's settings, an instruction file).
const MAX_READ_BYTES: u64 = 8 * 1024 * 1024;

/// The file's bytes; `None` if there is no such file. The file itself is opened without
/// following a link (a link there is refused, as [`confine`] refuses it) and without blocking,
/// and must be a regular file of at most 8 MiB.
pub(super) fn read(path: &Path) -> Result<Option<Vec<u8>>, Error> {
    use std::io::Read as _;
    let failed = |source| Error::Read {
        path: path.to_path_buf(),
        source,
    };
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    let file = match options.open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        #[cfg(unix)]
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(Error::Link {
                path: path.to_path_buf(),
                target: fs::read_link(path).unwrap_or_default(),
            });
        }
        Err(e) => return Err(failed(e)),
    };
    let metadata = file.metadata().map_err(failed)?;
    let refuse = |what: String| failed(std::io::Error::new(ErrorKind::InvalidData, what));
    if !metadata.is_file() {
        return Err(refuse("not a regular file".to_string()));
    }
    let mut bytes = Vec::new();
    file.take(MAX_READ_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(failed)?;
    if bytes.len() as u64 > MAX_READ_BYTES {
        return Err(refuse(format!(
            "larger than the limit of {} MiB",
            MAX_READ_BYTES / (1024 * 1024)
        )));
    }
    Ok(Some(bytes))
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
/// `within` ([`confine`] says so before anything is written, with the path that leads out).
///
/// Everything after that check happens relative to directory handles opened from `within`
/// (cap-std: a link on the way is followed only while it stays inside), never through a path
/// looked up again: the directories are created and their modes set through handles, the new
/// bytes go to a randomly named staging file created exclusively in the parent's handle, and
/// `renameat` puts it in place of the name — replacing a link planted there, never following
/// it. A directory swapped for a link after the check changes nothing: the handles already
/// hold the directories that were checked.
pub(super) fn write(
    path: &Path,
    bytes: &[u8],
    within: &Path,
    readers: Readers,
) -> Result<Vec<PathBuf>, Error> {
    confine(path, within)?;
    Placement::open(path, within, readers)?.write(bytes)
}

/// Where [`write`] puts a file: the handle on its parent directory (created as needed) and
/// the file's name in it.
pub(super) struct Placement {
    path: PathBuf,
    parent: cap_std::fs::Dir,
    name: std::ffi::OsString,
    created: Vec<PathBuf>,
    readers: Readers,
}

impl Placement {
    /// Opens (creating what is missing) the directories from `within` to `path`'s parent.
    pub(super) fn open(path: &Path, within: &Path, readers: Readers) -> Result<Placement, Error> {
        let failed = |source| Error::Write {
            path: path.to_path_buf(),
            source,
        };
        let escapes = || Error::Escapes {
            path: path.to_path_buf(),
            resolved: resolve(path),
            within: within.to_path_buf(),
        };
        let relative = path.strip_prefix(within).map_err(|_| escapes())?;
        let name = relative.file_name().ok_or_else(escapes)?.to_os_string();
        // `within` itself is the user's (the repository, `~/.codex`): made by path if missing.
        let mut created = create_trusted_dirs(within, readers.dir_mode()).map_err(failed)?;
        let mut dir = cap_std::fs::Dir::open_ambient_dir(within, cap_std::ambient_authority())
            .map_err(failed)?;
        let mut at = within.to_path_buf();
        for component in relative.parent().into_iter().flat_map(Path::components) {
            let std::path::Component::Normal(step) = component else {
                return Err(escapes());
            };
            at.push(step);
            match dir.create_dir(step) {
                Ok(()) => created.push(at.clone()),
                Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
                Err(e) if is_escape(&e) => return Err(escapes()),
                Err(e) => return Err(failed(e)),
            }
            let next = dir
                .open_dir(step)
                .map_err(|e| if is_escape(&e) { escapes() } else { failed(e) })?;
            if created.last() == Some(&at) {
                set_handle_mode(&next, readers.dir_mode()).map_err(failed)?;
            }
            dir = next;
        }
        Ok(Placement {
            path: path.to_path_buf(),
            parent: dir,
            name,
            created,
            readers,
        })
    }

    /// Writes `bytes` as the file; returns the directories [`Placement::open`] created.
    pub(super) fn write(self, bytes: &[u8]) -> Result<Vec<PathBuf>, Error> {
        let failed = |source| Error::Write {
            path: self.path.clone(),
            source,
        };
        // Kept: an existing file's mode. Refused: a link where the file should be.
        let mode = match self.parent.symlink_metadata(&self.name) {
            Ok(metadata) if metadata.file_type().is_symlink() => {
                return Err(Error::Link {
                    path: self.path.clone(),
                    target: self.parent.read_link(&self.name).unwrap_or_default(),
                });
            }
            Ok(metadata) => mode_of(&metadata),
            Err(_) => self.readers.file_mode(),
        };
        let staging = self.staging_name();
        let mut options = cap_std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        let mut file = self.parent.open_with(&staging, &options).map_err(failed)?;
        let written = file
            .write_all(bytes)
            .and_then(|()| file.sync_all())
            .and_then(|()| set_file_mode(&file, mode))
            .and_then(|()| self.parent.rename(&staging, &self.parent, &self.name));
        if let Err(e) = written {
            let _ = self.parent.remove_file(&staging);
            return Err(failed(e));
        }
        Ok(self.created)
    }

    /// A name no one else picks: `.<name>.<random>.cairn-new`.
    fn staging_name(&self) -> PathBuf {
        let random =
            crate::fsutil::random_hex(8).unwrap_or_else(|_| std::process::id().to_string());
        PathBuf::from(format!(
            ".{}.{random}.cairn-new",
            self.name.to_string_lossy()
        ))
    }
}

/// Creates `dir` and its missing parents, each with `mode` whatever the umask; returns those it
/// created, outermost first. Only for directories the user named (never the repository's).
fn create_trusted_dirs(dir: &Path, mode: u32) -> std::io::Result<Vec<PathBuf>> {
    let mut missing: Vec<PathBuf> = dir
        .ancestors()
        .take_while(|ancestor| !ancestor.as_os_str().is_empty() && !ancestor.exists())
        .map(Path::to_path_buf)
        .collect();
    missing.reverse();
    for created in &missing {
        match fs::create_dir(created) {
            Ok(()) => {
                #[cfg(unix)]
                {
                    use std::os::unix::fs::PermissionsExt;
                    fs::set_permissions(created, fs::Permissions::from_mode(mode))?;
                }
            }
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Ok(missing)
}

/// Whether cap-std refused a path for leading out of the directory it was opened on.
fn is_escape(error: &std::io::Error) -> bool {
    #[cfg(unix)]
    if matches!(error.raw_os_error(), Some(libc::EXDEV) | Some(libc::ELOOP)) {
        return true;
    }
    error.kind() == ErrorKind::PermissionDenied
        && error.to_string().contains("outside of the filesystem")
}

/// An existing file's permission bits.
fn mode_of(metadata: &cap_std::fs::Metadata) -> u32 {
    #[cfg(unix)]
    {
        use cap_std::fs::PermissionsExt;
        metadata.permissions().mode() & 0o7777
    }
    #[cfg(not(unix))]
    {
        let _ = metadata;
        0o644
    }
}

fn set_file_mode(file: &cap_std::fs::File, mode: u32) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use cap_std::fs::PermissionsExt;
        file.set_permissions(cap_std::fs::Permissions::from_mode(mode))
    }
    #[cfg(not(unix))]
    {
        let _ = (file, mode);
        Ok(())
    }
}

/// Sets a directory's mode through its handle, whatever the process's umask made it.
fn set_handle_mode(dir: &cap_std::fs::Dir, mode: u32) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use cap_std::fs::PermissionsExt;
        dir.set_permissions(".", cap_std::fs::Permissions::from_mode(mode))
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
