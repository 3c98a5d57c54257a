//! The team servers the user trusts a repository's `cairn.toml` to name, kept outside every
//! repository (`~/.config/cairn/trusted.toml`, mode 0600) so that no repository can trust
//! itself. An entry holds the repository's root, the server and the namespace and database
//! there: a `cairn.toml` that later names anything else is refused again.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Identity, TeamConfigError};

/// One repository's server, trusted by the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trusted {
    pub repository: PathBuf,
    pub server: String,
    pub namespace: String,
    pub database: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TrustFile {
    #[serde(default)]
    trusted: Vec<Trusted>,
}

/// Where the user's trust is recorded.
pub fn trust_file() -> Option<PathBuf> {
    dirs::config_dir().map(|dir| dir.join("cairn").join("trusted.toml"))
}

/// Whether the user trusts the repository at `root` to send its memories to `url` as
/// `identity`.
pub fn is_trusted(root: &Path, url: &str, identity: &Identity) -> Result<bool, TeamConfigError> {
    let Some(path) = trust_file() else {
        return Ok(false);
    };
    let wanted = entry(root, url, identity);
    Ok(load(&path)?.trusted.contains(&wanted))
}

/// Records that the user trusts the repository at `root` with `url` as `identity` (replacing
/// what it trusted for that repository before); returns the file it is recorded in.
pub fn trust(root: &Path, url: &str, identity: &Identity) -> Result<PathBuf, TeamConfigError> {
    let path = trust_file().ok_or_else(no_config_dir)?;
    let mut file = load(&path)?;
    file.trusted.retain(|t| t.repository != root);
    file.trusted.push(entry(root, url, identity));
    save(&path, &file)?;
    Ok(path)
}

/// Forgets the trust given to the repository at `root`; whether there was any.
pub fn untrust(root: &Path) -> Result<bool, TeamConfigError> {
    let Some(path) = trust_file() else {
        return Ok(false);
    };
    let mut file = load(&path)?;
    let before = file.trusted.len();
    file.trusted.retain(|t| t.repository != root);
    if file.trusted.len() == before {
        return Ok(false);
    }
    save(&path, &file)?;
    Ok(true)
}

fn entry(root: &Path, url: &str, identity: &Identity) -> Trusted {
    Trusted {
        repository: root.to_path_buf(),
        server: url.to_string(),
        namespace: identity.namespace.clone(),
        database: identity.database.clone(),
    }
}

fn no_config_dir() -> TeamConfigError {
    TeamConfigError::Invalid(
        "no configuration directory on this system (set XDG_CONFIG_HOME)".into(),
    )
}

/// The file's entries; none if it does not exist. A file others could write is refused: it
/// would let them choose where the user's credentials go.
fn load(path: &Path) -> Result<TrustFile, TeamConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(TrustFile::default()),
        Err(e) => {
            return Err(TeamConfigError::Invalid(format!(
                "cannot read {}: {e}",
                path.display()
            )));
        }
    };
    if let Some(mode) = crate::fsutil::mode_of(path)
        && mode & 0o022 != 0
    {
        return Err(TeamConfigError::Invalid(format!(
            "{} can be written by others (mode {mode:o}): run chmod 600 on it",
            path.display()
        )));
    }
    crate::config::parse_toml(&text, &path.display().to_string())
        .map_err(|e| TeamConfigError::Invalid(format!("{e:#}")))
}

fn save(path: &Path, file: &TrustFile) -> Result<(), TeamConfigError> {
    let text = toml::to_string(file).map_err(|e| TeamConfigError::Invalid(e.to_string()))?;
    crate::fsutil::write_atomic(path, text.as_bytes())
        .map_err(|e| TeamConfigError::Invalid(format!("cannot write {}: {e}", path.display())))
}
