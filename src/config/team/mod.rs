//! Team mode's configuration: which server (`--db`, `CAIRN_DB` or the `[team]` table of
//! `cairn.toml`), which shared repository a working copy is ([`identity`]), who signs in
//! (credentials from the environment or a 0600 file bound to its server), and which servers
//! the user trusts a repository to name ([`trust`]). Pure configuration: connecting is
//! `storage::remote`, syncing `memory::team`.

pub mod identity;
pub mod trust;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;

pub use identity::Identity;
pub use trust::is_trusted;

/// Team configuration that cannot work.
#[derive(Debug, thiserror::Error)]
pub enum TeamConfigError {
    #[error("team configuration: {0}")]
    Invalid(String),
    #[error(
        "this repository's cairn.toml sends team memories to {url} ({namespace}/{database}), a server you have not chosen: cairn signs in only where you send it. Run `cairn team trust` to trust it for this repository, or pass --db / set CAIRN_DB yourself"
    )]
    Untrusted {
        url: String,
        namespace: String,
        database: String,
    },
}

/// A password that never prints.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(text: impl Into<String>) -> Secret {
        Secret(text.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(…)")
    }
}

/// A developer's sign-in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credentials {
    pub developer: String,
    pub password: Secret,
}

/// Where a developer's credentials come from, first match wins.
pub(crate) const DEVELOPER_ENV: &str = "CAIRN_TEAM_DEVELOPER";
pub(crate) const PASSWORD_ENV: &str = "CAIRN_TEAM_PASSWORD";
/// The server's root user, for `cairn team init` and member management only.
pub const ADMIN_USER_ENV: &str = "CAIRN_TEAM_ADMIN_USER";
pub const ADMIN_PASSWORD_ENV: &str = "CAIRN_TEAM_ADMIN_PASSWORD";

/// The `[team]` table of `cairn.toml`. A repository's own file is not the user's word: a
/// server named here is used only once the user trusts it ([`trust`]), and credentials go
/// only to the server they were issued for.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TeamSettings {
    /// The server: `ws://host:port` or `wss://host` (`--db` / `CAIRN_DB` take precedence).
    #[serde(default)]
    pub db: Option<String>,
    /// The repository's shared identity; default: the normalised `origin` remote.
    #[serde(default)]
    pub repository: Option<String>,
    /// The namespace; default: the owner part of the repository identity.
    #[serde(default)]
    pub org: Option<String>,
    /// A credentials file (`server = "…"`, `developer = "…"`, `password = "…"`, mode 0600),
    /// `~/…` or relative to the repository root; default `~/.config/cairn/team.toml`. Its
    /// credentials are used only with the server it names.
    #[serde(default)]
    pub credentials: Option<PathBuf>,
}

/// Team mode, resolved: where the server is, which repository, who signs in.
#[derive(Debug, Clone)]
pub struct TeamConfig {
    pub url: String,
    pub identity: Identity,
    pub credentials: Credentials,
}

impl TeamConfig {
    /// The organisation's database on the same server, signed in to as the same member.
    pub fn organisation(&self) -> TeamConfig {
        TeamConfig {
            identity: self.identity.organisation(),
            ..self.clone()
        }
    }
}

/// Whether team mode is on for a repository.
#[derive(Debug, Clone, Default)]
pub enum TeamSetup {
    /// Memories in the embedded store.
    #[default]
    Off,
    On(Arc<TeamConfig>),
    /// Team mode is asked for but cannot work; every memory operation reports this.
    Broken(String),
}

/// Checks a server address: `ws://` or `wss://`, with no credentials in it.
pub fn check_url(url: &str) -> Result<String, TeamConfigError> {
    let url = url.trim();
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err(TeamConfigError::Invalid(format!(
            "`{url}` is not a server address: use ws://host:port or wss://host"
        )));
    };
    if !matches!(scheme, "ws" | "wss") {
        return Err(TeamConfigError::Invalid(format!(
            "`{scheme}://` is not supported: use ws://host:port or wss://host (TLS)"
        )));
    }
    let authority = rest.split('/').next().unwrap_or(rest);
    if authority.contains('@') {
        return Err(TeamConfigError::Invalid(
            "the server address carries credentials: remove them and set CAIRN_TEAM_DEVELOPER / CAIRN_TEAM_PASSWORD or a 0600 credentials file".to_string(),
        ));
    }
    if authority.is_empty() {
        return Err(TeamConfigError::Invalid(format!("`{url}` names no host")));
    }
    if scheme == "ws" && !is_loopback(authority) {
        return Err(TeamConfigError::Invalid(format!(
            "`{url}` is plain ws:// to another machine, which would send the password and every memory unencrypted: use wss:// (ws:// is for 127.0.0.1, ::1 and localhost only)"
        )));
    }
    Ok(url.trim_end_matches('/').to_string())
}

/// Whether `host[:port]` is this machine.
fn is_loopback(authority: &str) -> bool {
    let host = match authority.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or_default(),
        None => authority.rsplit_once(':').map_or(authority, |(h, _)| h),
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Who named the team server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The user: `--db` or `CAIRN_DB`.
    User,
    /// The repository's `cairn.toml`, which anyone who wrote the repository chose.
    Repository,
}

/// The team server asked for and who asked: `--db` (or `CAIRN_DB`), else `[team] db`; `None`
/// for the embedded store.
pub fn server_url<'a>(
    settings: &'a TeamSettings,
    db_flag: Option<&'a str>,
) -> Option<(&'a str, Origin)> {
    let asked = match db_flag.filter(|u| !u.trim().is_empty()) {
        Some(url) => (url, Origin::User),
        None => (settings.db.as_deref()?, Origin::Repository),
    };
    (asked.0.trim() != "embedded").then_some(asked)
}

/// The server to use for the repository at `root`, checked: one the user named, or one the
/// repository names that the user trusts for it; `None` for the embedded store.
pub fn chosen_server(
    root: &Path,
    settings: &TeamSettings,
    db_flag: Option<&str>,
) -> Result<Option<(String, Identity)>, TeamConfigError> {
    let Some((url, origin)) = server_url(settings, db_flag) else {
        return Ok(None);
    };
    let url = check_url(url)?;
    let identity = repository_identity(root, settings)?;
    if origin == Origin::Repository && !is_trusted(root, &url, &identity)? {
        return Err(TeamConfigError::Untrusted {
            url,
            namespace: identity.namespace,
            database: identity.database,
        });
    }
    Ok(Some((url, identity)))
}

/// Resolves team mode for the repository at `root` from `--db` (or `CAIRN_DB`) and `[team]`.
pub fn resolve(root: &Path, settings: &TeamSettings, db_flag: Option<&str>) -> TeamSetup {
    match resolve_on(root, settings, db_flag) {
        Ok(None) => TeamSetup::Off,
        Ok(Some(config)) => TeamSetup::On(Arc::new(config)),
        Err(error) => TeamSetup::Broken(error.to_string()),
    }
}

fn resolve_on(
    root: &Path,
    settings: &TeamSettings,
    db_flag: Option<&str>,
) -> Result<Option<TeamConfig>, TeamConfigError> {
    let Some((url, identity)) = chosen_server(root, settings, db_flag)? else {
        return Ok(None);
    };
    let file = settings
        .credentials
        .as_deref()
        .map(|path| match path.strip_prefix("~") {
            Ok(rest) => dirs::home_dir().unwrap_or_default().join(rest),
            Err(_) => root.join(path),
        });
    let credentials = credentials(file.as_deref(), &url)?;
    Ok(Some(TeamConfig {
        url,
        identity,
        credentials,
    }))
}

/// The repository's identity on the server: `[team] repository`, else its git remote.
pub fn repository_identity(
    root: &Path,
    settings: &TeamSettings,
) -> Result<Identity, TeamConfigError> {
    let key = match &settings.repository {
        Some(key) => key.clone(),
        None => identity::remote_url(root)
            .and_then(|url| identity::normalise_remote(&url))
            .ok_or_else(|| {
                TeamConfigError::Invalid(
                    "the repository has no git remote to identify it on the team server: add one, or set `repository` in the [team] table of cairn.toml".to_string(),
                )
            })?,
    };
    Identity::new(&key, settings.org.as_deref()).map_err(TeamConfigError::Invalid)
}

/// The default credentials file.
pub fn default_credentials_file() -> Option<PathBuf> {
    dirs::config_dir().map(|d| d.join("cairn").join("team.toml"))
}

/// The developer's credentials for the server at `url` (one the user chose or trusts): the
/// environment, else the credentials file, which must be readable by its owner only and name
/// that server.
pub fn credentials(file: Option<&Path>, url: &str) -> Result<Credentials, TeamConfigError> {
    let env = |name| std::env::var(name).ok().filter(|v: &String| !v.is_empty());
    match (env(DEVELOPER_ENV), env(PASSWORD_ENV)) {
        (Some(developer), Some(password)) => {
            return Ok(Credentials {
                developer: developer_name(&developer)?,
                password: Secret::new(password),
            });
        }
        (Some(_), None) | (None, Some(_)) => {
            return Err(TeamConfigError::Invalid(format!(
                "set both {DEVELOPER_ENV} and {PASSWORD_ENV}, or neither"
            )));
        }
        (None, None) => {}
    }
    let path = match file {
        Some(path) => path.to_path_buf(),
        None => default_credentials_file().ok_or_else(|| {
            TeamConfigError::Invalid(format!(
                "no credentials: set {DEVELOPER_ENV} and {PASSWORD_ENV}"
            ))
        })?,
    };
    let (server, credentials) = read_credentials(&path)?;
    if server != url {
        return Err(TeamConfigError::Invalid(format!(
            "the credentials in {} are for {server}, not {url}: cairn sends them only to the server they name",
            path.display()
        )));
    }
    Ok(credentials)
}

/// The server a credentials file names, and its credentials.
fn read_credentials(path: &Path) -> Result<(String, Credentials), TeamConfigError> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct File {
        #[serde(default)]
        server: Option<String>,
        developer: String,
        password: String,
    }
    std::fs::metadata(path).map_err(|e| {
        TeamConfigError::Invalid(format!(
            "no credentials: set {DEVELOPER_ENV} and {PASSWORD_ENV}, or write {} (mode 0600) — {e}",
            path.display()
        ))
    })?;
    if let Some(mode) = crate::fsutil::mode_of(path)
        && mode & 0o077 != 0
    {
        return Err(TeamConfigError::Invalid(format!(
            "{} is readable by others (mode {mode:o}): run chmod 600 on it",
            path.display()
        )));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| TeamConfigError::Invalid(format!("cannot read {}: {e}", path.display())))?;
    // The parse error could quote the password: say only where it is.
    let file: File = toml::from_str(&text).map_err(|e| {
        TeamConfigError::Invalid(format!(
            "{} is not a credentials file (developer = \"…\", password = \"…\"){}",
            path.display(),
            e.span()
                .map(|s| format!(" near byte {}", s.start))
                .unwrap_or_default()
        ))
    })?;
    let server = file.server.ok_or_else(|| {
        TeamConfigError::Invalid(format!(
            "{} does not say which server its credentials are for: add a line `server = \"wss://…\"` (credentials go only to the server they name)",
            path.display()
        ))
    })?;
    let server = check_url(&server)
        .map_err(|e| TeamConfigError::Invalid(format!("the server in {}: {e}", path.display())))?;
    let credentials = Credentials {
        developer: developer_name(&file.developer)?,
        password: Secret::new(file.password),
    };
    Ok((server, credentials))
}

fn developer_name(raw: &str) -> Result<String, TeamConfigError> {
    developer_id(raw).map_err(TeamConfigError::Invalid)
}

/// A developer handle as cairn keeps it: trimmed, without a leading `@`, lowercase; letters,
/// digits and `. _ - @ +` only.
pub fn developer_id(raw: &str) -> Result<String, String> {
    let id = raw.trim().trim_start_matches('@').to_lowercase();
    let valid = !id.is_empty()
        && id.len() <= 128
        && id
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '.' | '_' | '-' | '@' | '+'));
    if valid {
        Ok(id)
    } else {
        Err(format!(
            "invalid developer {}: use a handle or email (letters, digits, . _ - @ +)",
            crate::secrets::quoted(raw)
        ))
    }
}

/// Writes a credentials file for `server`, readable by its owner only.
pub fn write_credentials(
    path: &Path,
    server: &str,
    developer: &str,
    password: &Secret,
) -> std::io::Result<()> {
    use std::io::Write;
    if let Some(dir) = path.parent() {
        crate::fsutil::private_dir(dir)?;
    }
    let text = toml::to_string(&serde_json::json!({
        "server": server,
        "developer": developer,
        "password": password.expose(),
    }))
    .map_err(std::io::Error::other)?;
    let mut file = crate::fsutil::private_file(path)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()
}

/// A new random password (256 bits, hex).
pub fn new_password() -> std::io::Result<Secret> {
    crate::fsutil::random_hex(32).map(Secret::new)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_addresses_are_checked() {
        assert_eq!(
            check_url("ws://127.0.0.1:8000/").unwrap(),
            "ws://127.0.0.1:8000"
        );
        assert!(check_url("wss://cairn.example.com").is_ok());
        let with_password = check_url("wss://alice:hunter2@cairn.example.com").unwrap_err();
        assert!(with_password.to_string().contains("carries credentials"));
        assert!(!with_password.to_string().contains("hunter2"));
        assert!(check_url("http://x").is_err());
        assert!(check_url("cairn.example.com").is_err());
        assert!(check_url("ws://").is_err());
    }

    #[test]
    fn plain_ws_is_for_this_machine_only() {
        for local in [
            "ws://127.0.0.1:8000",
            "ws://127.8.9.10",
            "ws://localhost:8000",
            "ws://[::1]:8000",
        ] {
            assert!(check_url(local).is_ok(), "{local}");
        }
        for remote in [
            "ws://cairn.example.com:8000",
            "ws://10.0.0.5:8000",
            "ws://[2001:db8::1]:8000",
            "ws://127.0.0.1.evil.example",
            "ws://localhost.evil.example",
        ] {
            let error = check_url(remote).unwrap_err().to_string();
            assert!(error.contains("use wss://"), "{remote}: {error}");
        }
        assert!(check_url("wss://10.0.0.5:8000").is_ok());
    }

    #[test]
    fn credentials_files_must_be_private_and_never_echo_the_password() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("team.toml");
        let server = "wss://cairn.example.com";
        write_credentials(&path, server, "alice", &Secret::new("s3cret-pass")).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let (named, read) = read_credentials(&path).unwrap();
        assert_eq!(named, server);
        assert_eq!(read.developer, "alice");
        assert_eq!(read.password.expose(), "s3cret-pass");
        assert!(!format!("{read:?}").contains("s3cret"));

        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let open = read_credentials(&path).unwrap_err().to_string();
        assert!(open.contains("chmod 600"), "{open}");

        std::fs::write(&path, "developer = \"alice\"\npassword = \"s3cret\"\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let unbound = read_credentials(&path).unwrap_err().to_string();
        assert!(unbound.contains("which server"), "{unbound}");

        std::fs::write(&path, "developer = \"alice\"\npassword = s3cret-unquoted\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let bad = read_credentials(&path).unwrap_err().to_string();
        assert!(bad.contains("not a credentials file"), "{bad}");
        assert!(!bad.contains("s3cret"), "{bad}");
    }
}
