//! A running daemon as other processes find it: its files in the repository's data directory
//! (the bearer token, 0600; the record of where it serves; the lock that keeps it one per
//! repository) and, in [`client`], how short-lived processes talk to it. The daemon itself
//! (`crate::daemon`) writes these; the use cases and the hook only read them. [`start`]
//! starts one when none runs (`cairn ui`).

pub mod client;
pub mod registry;
pub mod start;

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::datadir::DataDir;
use crate::fsutil::{private_file, random_hex, restrict};

/// The token, created (32 random bytes, hex, mode 0600) if there is none yet. A token file
/// that others can read is tightened to 0600. Creation is exclusive: when two processes (an
/// install and a first daemon start) race, both end up with the one token that landed.
pub fn ensure_token(data_dir: &Path) -> std::io::Result<String> {
    crate::fsutil::private_dir(data_dir)?;
    let path = DataDir::at(data_dir).token();
    if let Some(token) = existing_token(&path)? {
        return Ok(token);
    }
    let token = random_hex(32)?;
    let mut staging = tempfile::Builder::new()
        .prefix(".daemon.token.")
        .tempfile_in(data_dir)?;
    staging.write_all(token.as_bytes())?;
    staging.as_file().sync_all()?;
    match staging.persist_noclobber(&path) {
        Ok(_) => Ok(token),
        Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => {
            match existing_token(&path)? {
                Some(theirs) => Ok(theirs),
                // A damaged token is there: replace it.
                None => {
                    e.file.persist(&path).map_err(|e| e.error)?;
                    Ok(token)
                }
            }
        }
        Err(e) => Err(e.error),
    }
}

/// The token at `path` if a whole one is there (tightened to 0600).
fn existing_token(path: &Path) -> std::io::Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(token) if token.trim().len() >= 32 => {
            restrict(path)?;
            Ok(Some(token.trim().to_string()))
        }
        Ok(_) => Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// The token if one exists.
pub fn read_token(data_dir: &Path) -> Option<String> {
    let token = std::fs::read_to_string(DataDir::at(data_dir).token()).ok()?;
    let token = token.trim();
    (!token.is_empty()).then(|| token.to_string())
}

/// What a running daemon writes about itself.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DaemonRecord {
    pub pid: u32,
    /// `http://127.0.0.1:PORT/mcp`.
    pub url: String,
    pub port: u16,
    pub socket: PathBuf,
    pub root: PathBuf,
    pub version: String,
    /// Seconds since the epoch.
    pub started_at: i64,
}

impl DaemonRecord {
    pub fn write(&self, data_dir: &Path) -> std::io::Result<()> {
        let path = DataDir::at(data_dir).daemon_record();
        let staging = path.with_extension("json.new");
        {
            let mut file = private_file(&staging)?;
            file.write_all(serde_json::to_string_pretty(self)?.as_bytes())?;
            file.sync_all()?;
        }
        std::fs::rename(staging, path)
    }

    /// The record of the daemon running now for this data directory, if one is: the record
    /// exists and its lock is held.
    pub fn running(data_dir: &Path) -> Option<DaemonRecord> {
        let text = std::fs::read_to_string(DataDir::at(data_dir).daemon_record()).ok()?;
        let record: DaemonRecord = serde_json::from_str(&text).ok()?;
        is_locked(&DataDir::at(data_dir).daemon_lock()).then_some(record)
    }
}

/// `path` if it is a Unix socket owned by this user: `cairn serve` relays an assistant's
/// session only to a daemon of the same user, whatever a `daemon.json` says.
#[cfg(unix)]
pub fn owned_socket(path: &Path) -> std::io::Result<&Path> {
    use std::os::unix::fs::{FileTypeExt, MetadataExt};
    let metadata = std::fs::symlink_metadata(path)?;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if !metadata.file_type().is_socket() {
        return Err(std::io::Error::other("not a socket"));
    }
    if metadata.uid() != me {
        return Err(std::io::Error::other(format!(
            "owned by uid {}, not by this user (uid {me})",
            metadata.uid()
        )));
    }
    Ok(path)
}

/// Whether another process holds the lock at `path`.
pub fn is_locked(path: &Path) -> bool {
    match File::open(path) {
        Ok(file) => match file.try_lock_shared() {
            Ok(()) => false,
            Err(std::fs::TryLockError::WouldBlock) => true,
            Err(std::fs::TryLockError::Error(_)) => false,
        },
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_is_private_and_stable() {
        let dir = tempfile::tempdir().unwrap();
        let first = ensure_token(dir.path()).unwrap();
        assert_eq!(first.len(), 64);
        assert!(first.chars().all(|c| c.is_ascii_hexdigit()));
        assert_eq!(
            crate::fsutil::mode_of(&DataDir::at(dir.path()).token()),
            Some(0o600)
        );
        assert_eq!(ensure_token(dir.path()).unwrap(), first);
        assert_eq!(read_token(dir.path()).as_deref(), Some(first.as_str()));
    }

    #[test]
    fn racing_creators_share_one_token() {
        let dir = tempfile::tempdir().unwrap();
        let tokens: Vec<String> = std::thread::scope(|scope| {
            let racers: Vec<_> = (0..8)
                .map(|_| scope.spawn(|| ensure_token(dir.path()).unwrap()))
                .collect();
            racers.into_iter().map(|r| r.join().unwrap()).collect()
        });
        let on_disk = read_token(dir.path()).unwrap();
        assert!(
            tokens.iter().all(|t| *t == on_disk),
            "{tokens:?} vs {on_disk}"
        );
        let leftovers = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(leftovers, 1, "only the token file is left");
    }

    #[cfg(unix)]
    #[test]
    fn a_readable_token_is_tightened() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let token = ensure_token(dir.path()).unwrap();
        let path = DataDir::at(dir.path()).token();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(ensure_token(dir.path()).unwrap(), token);
        assert_eq!(crate::fsutil::mode_of(&path), Some(0o600));
    }
}
