//! A repository's data directory (`~/.local/share/cairn/repos/<name>-<hash>` unless
//! configured): one method per file or directory cairn keeps there, so every path is named
//! once; and an organisation's (`~/.local/share/cairn/orgs/<org>-<hash>`), which holds its
//! memory store in the same layout. Everything in them is private to the user (see
//! [`crate::fsutil`]).

use std::path::{Path, PathBuf};

/// The directory of one organisation's memories under `orgs` (`<org>-<hash>`): the same
/// layout as a repository's data directory for its memory store ([`DataDir::memory`],
/// [`DataDir::memory_marker`]), private like it.
pub fn org_dir(orgs: &Path, org: &str) -> PathBuf {
    let name: String = org
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    let hash = xxhash_rust::xxh3::xxh3_64(org.as_bytes());
    orgs.join(format!("{name}-{hash:016x}"))
}

/// The data directory of one repository.
#[derive(Debug, Clone, Copy)]
pub struct DataDir<'a>(&'a Path);

impl<'a> DataDir<'a> {
    pub fn at(path: &'a Path) -> DataDir<'a> {
        DataDir(path)
    }

    /// The directory itself.
    pub fn path(&self) -> &'a Path {
        self.0
    }

    /// The embedded graph store.
    pub fn store(&self) -> PathBuf {
        self.0.join("store")
    }

    /// The lock that serialises index runs.
    pub fn index_lock(&self) -> PathBuf {
        self.0.join("index.lock")
    }

    /// The marker an index run rewrites after every commit to the store; readers reload
    /// their snapshot when it changes.
    pub fn generation(&self) -> PathBuf {
        self.0.join("generation")
    }

    /// The embedded memory store (solo mode).
    pub fn memory(&self) -> PathBuf {
        self.0.join("memory")
    }

    /// The memory store's sequence marker (solo mode).
    pub fn memory_marker(&self) -> PathBuf {
        self.0.join("memory.seq")
    }

    /// The local copy of one team server's memories, keyed by a hash of server, namespace and
    /// database.
    pub fn team(&self, key: u64) -> PathBuf {
        self.0.join(format!("team-{key:016x}"))
    }

    /// What assistants read, edited and ran (appended by `cairn hook`).
    pub fn events(&self) -> PathBuf {
        self.0.join("events.jsonl")
    }

    /// The hook's failures.
    pub fn hook_log(&self) -> PathBuf {
        self.0.join("hook.log")
    }

    /// The daemon's log when it runs as a service.
    pub fn daemon_log(&self) -> PathBuf {
        self.0.join("daemon.log")
    }

    /// The bearer token HTTP clients present (`Authorization: Bearer …`).
    pub fn token(&self) -> PathBuf {
        self.0.join("daemon.token")
    }

    /// Where a running daemon says how to reach it.
    pub fn daemon_record(&self) -> PathBuf {
        self.0.join("daemon.json")
    }

    /// The lock that keeps one daemon per repository.
    pub fn daemon_lock(&self) -> PathBuf {
        self.0.join("daemon.lock")
    }

    /// The daemon's Unix socket (`cairn serve` relays stdio through it).
    pub fn socket(&self) -> PathBuf {
        self.0.join("daemon.sock")
    }

    /// What `cairn install` wrote, for `uninstall` and `doctor`.
    pub fn install_manifest(&self) -> PathBuf {
        self.0.join("install.json")
    }

    /// Copies of files `cairn install` replaced.
    pub fn backups(&self) -> PathBuf {
        self.0.join("backups")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_is_distinct_and_inside() {
        let root = Path::new("/data");
        let dir = DataDir::at(root);
        let all = [
            dir.store(),
            dir.index_lock(),
            dir.generation(),
            dir.memory(),
            dir.memory_marker(),
            dir.team(7),
            dir.events(),
            dir.hook_log(),
            dir.daemon_log(),
            dir.token(),
            dir.daemon_record(),
            dir.daemon_lock(),
            dir.socket(),
            dir.install_manifest(),
            dir.backups(),
        ];
        let distinct: std::collections::HashSet<_> = all.iter().collect();
        assert_eq!(distinct.len(), all.len());
        assert!(all.iter().all(|p| p.parent() == Some(root)));
        assert_eq!(dir.team(7), root.join("team-0000000000000007"));
    }

    #[test]
    fn an_organisation_has_one_directory_of_its_own() {
        let orgs = Path::new("/data/orgs");
        let acme = org_dir(orgs, "acme");
        assert_eq!(acme.parent(), Some(orgs));
        assert!(
            acme.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("acme-")
        );
        assert_eq!(acme, org_dir(orgs, "acme"));
        assert_ne!(acme, org_dir(orgs, "acme_two"));
        let odd = org_dir(orgs, "../x");
        assert_eq!(odd.parent(), Some(orgs));
    }
}
