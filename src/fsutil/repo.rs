//! The one reader of the repository's own files. A repository is untrusted input: it can hold
//! links to anywhere (`/dev/zero`, `/proc/self/environ`, the user's `~/.aws/credentials`),
//! FIFOs that block a reader forever, and files of any size. Every read of repository content
//! (sources, `cairn.toml`, manifests, module configs, guideline files) goes through
//! [`RepoFiles`], which
//!
//! - opens each path relative to a handle on the repository root (cap-std: `openat2` with
//!   `RESOLVE_BENEATH` on Linux, a checked component walk elsewhere), so a link is followed only
//!   while it stays inside the repository, and a directory swapped for a link mid-read cannot
//!   lead out either;
//! - accepts only regular files (opened non-blocking, then checked on the descriptor);
//! - reads at most a [`Limit`] per kind of file and says which limit a bigger file broke.
//!
//! A test (`tests/it/layers.rs`) fails when code under `src/` reads a file any other way
//! without a stated reason.

use std::io::Read;
use std::path::{Path, PathBuf};

use cap_std::ambient_authority;
use cap_std::fs::{Dir, Metadata, OpenOptions};

/// The most bytes read of one kind of repository file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    /// What kind of file it is, as an error names it.
    pub what: &'static str,
    pub bytes: u64,
}

impl Limit {
    /// `cairn.toml`.
    pub const CONFIG: Limit = Limit {
        what: "cairn.toml",
        bytes: 256 * 1024,
    };
    /// A package manifest (`package.json`, `pyproject.toml`, …).
    pub const MANIFEST: Limit = Limit {
        what: "a manifest",
        bytes: 1 << 20,
    };
    /// A module system's config (`tsconfig.json`, `go.mod`, `Cargo.toml`, …).
    pub const MODULE_CONFIG: Limit = Limit {
        what: "a module config",
        bytes: 1 << 20,
    };
    /// An assistant guideline file (`CLAUDE.md`, `AGENTS.md`, Cursor rules, …).
    pub const GUIDELINE: Limit = Limit {
        what: "a guideline file",
        bytes: 256 * 1024,
    };

    /// A source file, within the index's `max_file_bytes`.
    pub const fn source(bytes: u64) -> Limit {
        Limit {
            what: "a source file (index.max_file_bytes)",
            bytes,
        }
    }
}

/// Why a repository file was not read. Never quotes the file's content.
#[derive(Debug, thiserror::Error)]
pub enum RepoReadError {
    #[error("{path}: not found")]
    Missing { path: String },
    #[error("{path}: leads outside the repository (a link or `..`); not followed")]
    Outside { path: String },
    #[error("{path}: not a regular file ({kind}); not read")]
    NotFile { path: String, kind: &'static str },
    #[error("{path}: larger than the limit for {what} ({size} > {limit} bytes); not read")]
    TooLarge {
        path: String,
        what: &'static str,
        size: u64,
        limit: u64,
    },
    #[error("{path}: not UTF-8 text (invalid byte at offset {at}); not read")]
    NotText { path: String, at: usize },
    #[error("{path}: unreadable: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
}

impl RepoReadError {
    /// Whether the file is simply not there (an absent optional file, not a fault).
    pub fn is_missing(&self) -> bool {
        matches!(self, RepoReadError::Missing { .. })
    }

    /// The repository-relative path the error is about.
    pub fn path(&self) -> &str {
        match self {
            RepoReadError::Missing { path }
            | RepoReadError::Outside { path }
            | RepoReadError::NotFile { path, .. }
            | RepoReadError::TooLarge { path, .. }
            | RepoReadError::NotText { path, .. }
            | RepoReadError::Io { path, .. } => path,
        }
    }

    /// The error without its path, for lists that show the path beside the reason.
    pub fn reason(&self) -> String {
        let full = self.to_string();
        full.strip_prefix(self.path())
            .and_then(|rest| rest.strip_prefix(": "))
            .map_or_else(|| full.clone(), str::to_string)
    }
}

/// What [`RepoFiles::stat`] tells of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    pub size: u64,
    /// Modification time in nanoseconds since the epoch (0 if unknown).
    pub mtime_ns: i64,
}

/// An entry of a listed directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedEntry {
    pub name: String,
    /// Whether it is a directory (a link is not).
    pub is_dir: bool,
}

/// A handle on a repository's root through which its files are read.
#[derive(Debug)]
pub struct RepoFiles {
    root: PathBuf,
    dir: Dir,
}

impl RepoFiles {
    /// Opens the repository at `root` (a directory the user chose: the one ambient path).
    pub fn open(root: &Path) -> std::io::Result<RepoFiles> {
        let dir = Dir::open_ambient_dir(root, ambient_authority())?;
        Ok(RepoFiles {
            root: root.to_path_buf(),
            dir,
        })
    }

    /// The root this reader was opened on.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The bytes of the regular file at `path` (repository-relative), at most `limit.bytes`.
    pub fn read(&self, path: &str, limit: Limit) -> Result<Vec<u8>, RepoReadError> {
        let file = self.open_file(path)?;
        let metadata = file.metadata().map_err(|e| io_error(path, e))?;
        check_regular(path, &metadata)?;
        let too_large = |size: u64| RepoReadError::TooLarge {
            path: path.to_string(),
            what: limit.what,
            size,
            limit: limit.bytes,
        };
        if metadata.len() > limit.bytes {
            return Err(too_large(metadata.len()));
        }
        let mut bytes = Vec::with_capacity(metadata.len() as usize);
        file.take(limit.bytes + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| io_error(path, e))?;
        // The file grew while it was read.
        if bytes.len() as u64 > limit.bytes {
            return Err(too_large(bytes.len() as u64));
        }
        Ok(bytes)
    }

    /// The UTF-8 text of the file at `path`, at most `limit.bytes`.
    pub fn text(&self, path: &str, limit: Limit) -> Result<String, RepoReadError> {
        let bytes = self.read(path, limit)?;
        String::from_utf8(bytes).map_err(|e| RepoReadError::NotText {
            path: path.to_string(),
            at: e.utf8_error().valid_up_to(),
        })
    }

    /// The size and modification time of the regular file `path` leads to (links inside the
    /// repository followed), without opening it.
    pub fn stat(&self, path: &str) -> Result<Stat, RepoReadError> {
        check_relative(path)?;
        let metadata = self.dir.metadata(path).map_err(|e| open_error(path, e))?;
        check_regular(path, &metadata)?;
        Ok(Stat {
            size: metadata.len(),
            mtime_ns: mtime_ns(&metadata),
        })
    }

    /// The size and modification time of `path` if it is a regular file reached through no
    /// link at all (as the index's walk, which follows no links, would find it); `None` when it
    /// is missing, a link, under a link, or not a regular file.
    pub fn plain_file(&self, path: &str) -> Result<Option<Stat>, RepoReadError> {
        check_relative(path)?;
        let mut prefix = PathBuf::new();
        let mut last = None;
        for component in Path::new(path).components() {
            let std::path::Component::Normal(name) = component else {
                return Ok(None);
            };
            prefix.push(name);
            match self.dir.symlink_metadata(&prefix) {
                Ok(metadata) if metadata.file_type().is_symlink() => return Ok(None),
                Ok(metadata) => last = Some(metadata),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                Err(e) => return Err(open_error(path, e)),
            }
        }
        Ok(last.filter(Metadata::is_file).map(|metadata| Stat {
            size: metadata.len(),
            mtime_ns: mtime_ns(&metadata),
        }))
    }

    /// Whether anything (a file, a directory, a link to anywhere) is at `path`, links not
    /// followed.
    pub fn exists(&self, path: &str) -> bool {
        check_relative(path).is_ok() && self.dir.symlink_metadata(path).is_ok()
    }

    /// The entries of the directory at `path` (links to directories inside the repository
    /// followed), at most `max`.
    pub fn list(&self, path: &str, max: usize) -> Result<Vec<ListedEntry>, RepoReadError> {
        check_relative(path)?;
        let entries = self.dir.read_dir(path).map_err(|e| open_error(path, e))?;
        let mut listed = Vec::new();
        for entry in entries.flatten().take(max) {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            listed.push(ListedEntry {
                name: entry.file_name().to_string_lossy().into_owned(),
                is_dir: kind.is_dir(),
            });
        }
        Ok(listed)
    }

    /// Opens `path` for reading without blocking (a FIFO must not stall cairn) and without
    /// leaving the repository.
    fn open_file(&self, path: &str) -> Result<cap_std::fs::File, RepoReadError> {
        check_relative(path)?;
        let mut options = OpenOptions::new();
        options.read(true);
        #[cfg(unix)]
        {
            use cap_std::fs::OpenOptionsExt;
            options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
        }
        self.dir
            .open_with(path, &options)
            .map_err(|e| open_error(path, e))
    }
}

/// A parser's error message with every quoted piece of input left out: what precedes
/// "expected" is the input (`invalid type: string "hunter2"`, ``unknown field `x` ``), what
/// follows is the schema's own words, kept. For errors about files cairn did not write.
pub fn without_values(message: &str) -> String {
    let (input, schema) = match message.find("expected") {
        Some(at) => message.split_at(at),
        None => (message, ""),
    };
    let mut out = String::with_capacity(message.len());
    let mut quote: Option<char> = None;
    for c in input.chars() {
        match quote {
            Some(open) if c == open => {
                out.push('…');
                out.push(c);
                quote = None;
            }
            Some(_) => {}
            None => {
                out.push(c);
                if matches!(c, '"' | '`') {
                    quote = Some(c);
                }
            }
        }
    }
    if quote.is_some() {
        out.push('…');
    }
    out.push_str(schema);
    out.split('\n')
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

/// Line and column (both from 1) of byte `offset` in `text`.
pub fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text.as_bytes()[..offset.min(text.len())];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let column = String::from_utf8_lossy(&before[start..]).chars().count() + 1;
    (line, column)
}

/// A file's modification time in nanoseconds since the epoch (0 if unknown).
fn mtime_ns(metadata: &Metadata) -> i64 {
    metadata
        .modified()
        .ok()
        .and_then(|t| t.into_std().duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i64)
}

/// Refuses what is not a repository-relative path before the file system sees it.
fn check_relative(path: &str) -> Result<(), RepoReadError> {
    let relative = Path::new(path);
    if path.is_empty() || relative.is_absolute() || path.contains('\0') {
        return Err(RepoReadError::Outside {
            path: path.to_string(),
        });
    }
    Ok(())
}

/// Refuses anything but a regular file, naming what it is.
fn check_regular(path: &str, metadata: &Metadata) -> Result<(), RepoReadError> {
    if metadata.is_file() {
        return Ok(());
    }
    let kind = if metadata.is_dir() {
        "a directory"
    } else {
        special_kind(metadata)
    };
    Err(RepoReadError::NotFile {
        path: path.to_string(),
        kind,
    })
}

#[cfg(unix)]
fn special_kind(metadata: &Metadata) -> &'static str {
    use cap_std::fs::FileTypeExt;
    let kind = metadata.file_type();
    if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_block_device() || kind.is_char_device() {
        "a device"
    } else {
        "not a file"
    }
}

#[cfg(not(unix))]
fn special_kind(_: &Metadata) -> &'static str {
    "not a file"
}

/// An error from opening a path: gone, leading outside, or unreadable.
fn open_error(path: &str, error: std::io::Error) -> RepoReadError {
    if error.kind() == std::io::ErrorKind::NotFound {
        return RepoReadError::Missing {
            path: path.to_string(),
        };
    }
    if is_escape(&error) {
        return RepoReadError::Outside {
            path: path.to_string(),
        };
    }
    io_error(path, error)
}

/// Whether cap-std refused the path for leaving the root (its own error, or the kernel's
/// `EXDEV` from `RESOLVE_BENEATH`, or a link loop).
fn is_escape(error: &std::io::Error) -> bool {
    #[cfg(unix)]
    if matches!(error.raw_os_error(), Some(libc::EXDEV) | Some(libc::ELOOP)) {
        return true;
    }
    error.kind() == std::io::ErrorKind::PermissionDenied
        && error.to_string().contains("outside of the filesystem")
}

fn io_error(path: &str, source: std::io::Error) -> RepoReadError {
    RepoReadError::Io {
        path: path.to_string(),
        source,
    }
}

#[cfg(test)]
#[path = "repo_tests.rs"]
mod tests;
