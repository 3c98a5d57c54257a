//! The install record (`<data dir>/install.json`): for each file cairn changed, whether it
//! existed, a backup of its original bytes, and a hash of what cairn wrote, so uninstall can
//! tell an untouched file (restore it exactly) from one the user edited since (take out only
//! cairn's piece).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::clients::Target;
use super::piece::Kind;
use super::service::ServiceRecord;
use super::{Client, Error, Item, files};
use crate::datadir::DataDir;

const VERSION: u32 = 1;

/// Everything cairn installed for one repository.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(super) struct Manifest {
    pub version: u32,
    pub files: Vec<Record>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<ServiceRecord>,
}

/// One file cairn changed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Record {
    pub path: PathBuf,
    /// The client it is for; none for the service file.
    pub client: Option<Client>,
    pub item: Item,
    pub kind: Kind,
    /// Whether the file was there before cairn first wrote it.
    pub existed: bool,
    /// The original bytes, relative to the data directory (when the file existed).
    pub backup: Option<PathBuf>,
    /// Hash of the bytes cairn last wrote (or last found with its piece in place).
    pub written: String,
    /// The user changed the file after cairn wrote it: restoring the backup would lose that.
    pub edited_since: bool,
    /// Directories cairn created for the file, outermost first.
    pub created_dirs: Vec<PathBuf>,
}

/// A content hash of file bytes.
pub(super) fn hash(bytes: &[u8]) -> String {
    format!("{:016x}", xxhash_rust::xxh3::xxh3_64(bytes))
}

impl Manifest {
    fn path(data_dir: &Path) -> PathBuf {
        DataDir::at(data_dir).install_manifest()
    }

    /// The record; an empty one if nothing was installed.
    pub fn load(data_dir: &Path) -> Result<Manifest, Error> {
        let path = Manifest::path(data_dir);
        let Some(bytes) = files::read(&path)? else {
            return Ok(Manifest::default());
        };
        serde_json::from_slice(&bytes).map_err(|e| Error::Manifest {
            path,
            message: e.to_string(),
        })
    }

    /// Writes the record, or deletes it (and the emptied backup folder) when it holds nothing.
    pub fn save(&self, data_dir: &Path) -> Result<(), Error> {
        let path = Manifest::path(data_dir);
        if self.files.is_empty() && self.service.is_none() {
            files::remove(&path)?;
            files::remove_empty_dirs(vec![backups_dir(data_dir)]);
            return Ok(());
        }
        let manifest = Manifest {
            version: VERSION,
            ..self.clone()
        };
        let mut json = serde_json::to_string_pretty(&manifest).expect("a manifest serialises");
        json.push('\n');
        crate::fsutil::write_atomic(&path, json.as_bytes())
            .map_err(|source| Error::Write { path, source })
    }

    pub fn record(&self, path: &Path) -> Option<&Record> {
        self.files.iter().find(|r| r.path == path)
    }

    pub(crate) fn record_mut(&mut self, path: &Path) -> Option<&mut Record> {
        self.files.iter_mut().find(|r| r.path == path)
    }

    /// The clients something is recorded for, in the order installed.
    pub fn clients(&self) -> Vec<Client> {
        let mut clients = Vec::new();
        for client in self.files.iter().filter_map(|r| r.client) {
            if !clients.contains(&client) {
                clients.push(client);
            }
        }
        clients
    }

    /// Makes sure a record (with a backup of `before`) exists before cairn writes to
    /// `target`. A file already recorded keeps its original backup; one that changed since
    /// cairn wrote it is marked edited, and one that vanished starts over as new.
    pub fn prepare(
        &mut self,
        data_dir: &Path,
        target: &Target,
        before: Option<&[u8]>,
    ) -> Result<(), Error> {
        if let Some(record) = self.record_mut(&target.path) {
            match before {
                Some(bytes) => {
                    if hash(bytes) != record.written {
                        record.edited_since = true;
                    }
                    return Ok(());
                }
                None => self.forget(data_dir, &target.path)?,
            }
        }
        let backup = match before {
            Some(bytes) => {
                let relative = backup_name(&target.path);
                files::write_private(&data_dir.join(&relative), bytes)?;
                Some(relative)
            }
            None => None,
        };
        self.files.push(Record {
            path: target.path.clone(),
            client: target.client,
            item: target.item,
            kind: target.piece.kind(),
            existed: before.is_some(),
            backup,
            written: String::new(),
            edited_since: false,
            created_dirs: Vec::new(),
        });
        Ok(())
    }

    /// Drops the record of `path` and its backup.
    pub fn forget(&mut self, data_dir: &Path, path: &Path) -> Result<(), Error> {
        if let Some(index) = self.files.iter().position(|r| r.path == path) {
            let record = self.files.remove(index);
            if let Some(backup) = record.backup {
                files::remove(&data_dir.join(backup))?;
            }
        }
        Ok(())
    }
}

/// The original bytes of a recorded file; `None` if its backup is missing.
pub(super) fn read_backup(data_dir: &Path, record: &Record) -> Result<Option<Vec<u8>>, Error> {
    match &record.backup {
        Some(backup) => files::read(&data_dir.join(backup)),
        None => Ok(None),
    }
}

fn backups_dir(data_dir: &Path) -> PathBuf {
    DataDir::at(data_dir).backups()
}

/// `backups/<hash of the path>-<file name>`: unique per path, readable by a person.
fn backup_name(path: &Path) -> PathBuf {
    let digest = hash(path.to_string_lossy().as_bytes());
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    PathBuf::from("backups").join(format!("{digest}-{name}"))
}
