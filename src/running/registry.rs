//! The repositories a user's daemon (`cairn daemon --user`) serves: `repositories.json` in
//! cairn's data home (`$XDG_DATA_HOME/cairn`), each entry a repository's root and its data
//! directory. `cairn install` adds the repository it sets up, `cairn uninstall` removes it; a
//! running user daemon sees the file change and follows. Writes are whole (a new file renamed
//! over the old) under a lock, so two installs at once both land.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::fsutil::{private_dir, write_atomic};

/// The file's name in cairn's data home.
pub const FILE: &str = "repositories.json";

/// One registered repository.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Registered {
    pub root: PathBuf,
    pub data_dir: PathBuf,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct File {
    repositories: Vec<Registered>,
}

/// cairn's data home (`$XDG_DATA_HOME/cairn`, else `~/.local/share/cairn`), where the user's
/// daemon keeps its lock, its record and the registry; `None` when the system has none.
pub fn home() -> Option<PathBuf> {
    dirs::data_dir().map(|base| base.join("cairn"))
}

/// The repositories registered in `home`, in the order they were added. A file that does not
/// parse is an error that names it (nothing is served from a guess).
pub fn registered(home: &Path) -> anyhow::Result<Vec<Registered>> {
    let path = home.join(FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            let file: File = serde_json::from_str(&text)
                .map_err(|e| anyhow::anyhow!("{} does not parse: {e}", path.display()))?;
            Ok(file.repositories)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(anyhow::anyhow!("cannot read {}: {e}", path.display())),
    }
}

/// Adds the repository at `root` (its data directory `data_dir`, made absolute: the daemon
/// reading it runs elsewhere); `false` if it was there already (with this data directory).
pub fn register(home: &Path, root: &Path, data_dir: &Path) -> anyhow::Result<bool> {
    let data_dir = &std::path::absolute(data_dir)?;
    change(home, |entries| {
        let entry = Registered {
            root: root.to_path_buf(),
            data_dir: data_dir.to_path_buf(),
        };
        if entries.contains(&entry) {
            return false;
        }
        entries.retain(|e| e.root != root);
        entries.push(entry);
        true
    })
}

/// Removes the repository at `root`; `false` if it was not registered.
pub fn unregister(home: &Path, root: &Path) -> anyhow::Result<bool> {
    change(home, |entries| {
        let before = entries.len();
        entries.retain(|e| e.root != root);
        entries.len() != before
    })
}

/// Rewrites the registry through `edit` (which says whether it changed anything), under the
/// registry's lock.
fn change(home: &Path, edit: impl FnOnce(&mut Vec<Registered>) -> bool) -> anyhow::Result<bool> {
    private_dir(home).map_err(|e| anyhow::anyhow!("cannot create {}: {e}", home.display()))?;
    // The directory itself is the lock: no lock file is left behind.
    let lock = std::fs::File::open(home)?;
    lock.lock()?;
    let mut entries = registered(home)?;
    if !edit(&mut entries) {
        return Ok(false);
    }
    let path = home.join(FILE);
    if entries.is_empty() {
        // The last one gone: nothing of the registry is left.
        std::fs::remove_file(&path)?;
        return Ok(true);
    }
    let text = serde_json::to_string_pretty(&File {
        repositories: entries,
    })?;
    write_atomic(&path, text.as_bytes())?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repositories_are_added_once_and_removed() {
        let home = tempfile::tempdir().unwrap();
        let (a, b) = (Path::new("/work/a"), Path::new("/work/b"));
        assert!(registered(home.path()).unwrap().is_empty());
        assert!(register(home.path(), a, Path::new("/data/a")).unwrap());
        assert!(!register(home.path(), a, Path::new("/data/a")).unwrap());
        assert!(register(home.path(), b, Path::new("/data/b")).unwrap());
        // A new data directory for a registered root replaces the old entry.
        assert!(register(home.path(), a, Path::new("/data/a2")).unwrap());
        let roots: Vec<_> = registered(home.path())
            .unwrap()
            .into_iter()
            .map(|e| (e.root, e.data_dir))
            .collect();
        assert_eq!(
            roots,
            [
                (b.to_path_buf(), PathBuf::from("/data/b")),
                (a.to_path_buf(), PathBuf::from("/data/a2"))
            ]
        );
        assert!(unregister(home.path(), b).unwrap());
        assert!(!unregister(home.path(), b).unwrap());
        assert_eq!(registered(home.path()).unwrap().len(), 1);
        assert_eq!(crate::fsutil::mode_of(&home.path().join(FILE)), Some(0o600));
        assert!(unregister(home.path(), a).unwrap());
        assert_eq!(
            std::fs::read_dir(home.path()).unwrap().count(),
            0,
            "nothing is left once the last repository goes"
        );
    }

    #[test]
    fn a_relative_data_directory_is_registered_whole() {
        let home = tempfile::tempdir().unwrap();
        register(home.path(), Path::new("/work/a"), Path::new("data/a")).unwrap();
        let entries = registered(home.path()).unwrap();
        assert_eq!(
            entries[0].data_dir,
            std::env::current_dir().unwrap().join("data/a")
        );
    }

    #[test]
    fn a_damaged_registry_is_named_and_left_alone() {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(home.path().join(FILE), "{\"repositories\": [").unwrap();
        let error = registered(home.path()).unwrap_err().to_string();
        assert!(error.contains(FILE) && error.contains("parse"), "{error}");
        assert!(register(home.path(), Path::new("/a"), Path::new("/d")).is_err());
        assert_eq!(
            std::fs::read_to_string(home.path().join(FILE)).unwrap(),
            "{\"repositories\": ["
        );
    }
}
