//! One writer per repository: an exclusive lock on a file in the data directory, held for the
//! whole of an index run. A second writer waits (up to a limit) and then refuses clearly.

use std::fs::{File, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Why the lock could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("another cairn process{} is indexing this repository; gave up after {waited:?} (lock file {path})", .holder.as_ref().map(|p| format!(" (pid {p})")).unwrap_or_default())]
    Busy {
        path: PathBuf,
        holder: Option<String>,
        waited: Duration,
    },
    #[error("cannot use the lock file {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// A held lock; released when dropped.
pub struct WriterLock {
    _file: File,
}

/// Takes the writer lock at `path`, waiting up to `patience`; `on_wait` is told once when
/// waiting starts, with the holder's pid if known.
pub fn acquire(
    path: &Path,
    patience: Duration,
    on_wait: impl FnOnce(Option<&str>),
) -> Result<WriterLock, LockError> {
    let io = |source| LockError::Io {
        path: path.to_path_buf(),
        source,
    };
    if let Some(parent) = path.parent() {
        crate::fsutil::private_dir(parent).map_err(io)?;
    }
    let mut file = crate::fsutil::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(io)?;
    let started = Instant::now();
    let mut on_wait = Some(on_wait);
    loop {
        match file.try_lock() {
            Ok(()) => break,
            Err(TryLockError::WouldBlock) => {
                let holder = holder(&mut file);
                if let Some(tell) = on_wait.take() {
                    tell(holder.as_deref());
                }
                if started.elapsed() >= patience {
                    return Err(LockError::Busy {
                        path: path.to_path_buf(),
                        holder,
                        waited: started.elapsed(),
                    });
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(TryLockError::Error(e)) => return Err(io(e)),
        }
    }
    file.set_len(0).map_err(io)?;
    file.rewind().map_err(io)?;
    write!(file, "{}", std::process::id()).map_err(io)?;
    Ok(WriterLock { _file: file })
}

fn holder(file: &mut File) -> Option<String> {
    let mut text = String::new();
    file.rewind().ok()?;
    file.read_to_string(&mut text).ok()?;
    let pid = text.trim();
    (!pid.is_empty()).then(|| pid.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_writer_is_refused_after_waiting() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.lock");
        let held = acquire(&path, Duration::ZERO, |_| {}).unwrap();
        let mut told = None;
        let err = acquire(&path, Duration::from_millis(200), |pid| {
            told = Some(pid.map(str::to_string))
        })
        .err()
        .expect("second writer refused");
        assert!(err.to_string().contains("another cairn process"), "{err}");
        assert_eq!(told, Some(Some(std::process::id().to_string())));
        drop(held);
        assert!(acquire(&path, Duration::ZERO, |_| {}).is_ok());
    }
}
