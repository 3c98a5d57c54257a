//! Where things are: the repository root, cairn's per-repository data directory (outside the
//! repository), and the optional `cairn.toml` settings, team mode's among them ([`team`]).

pub mod team;

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde::Deserialize;

use crate::fsutil::repo::{Limit, RepoFiles};

/// The environment variable naming the memory store (`--db`).
pub(crate) const DB_ENV: &str = "CAIRN_DB";

/// The environment variable naming where organisation memories live on this machine
/// (default `$XDG_DATA_HOME/cairn/orgs`).
pub(crate) const ORGS_DIR_ENV: &str = "CAIRN_ORGS_DIR";

/// Default largest file that is parsed; larger ones are reported as skipped.
pub(crate) const DEFAULT_MAX_FILE_BYTES: u64 = 2 * 1024 * 1024;

/// Settings from `cairn.toml` at the repository root.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    #[serde(default)]
    pub index: IndexSettings,
    #[serde(default)]
    pub memory: MemorySettings,
    #[serde(default)]
    pub history: HistorySettings,
    #[serde(default)]
    pub review: ReviewSettings,
    #[serde(default)]
    pub daemon: DaemonSettings,
    #[serde(default)]
    pub team: team::TeamSettings,
    #[serde(default)]
    pub ui: UiSettings,
}

/// Days after which a memory never read is listed as needing attention, by default.
pub(crate) const DEFAULT_STALE_DAYS: u32 = 90;

/// The `[ui]` table: the daemon's page.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UiSettings {
    /// A memory never read this many days after it was written needs attention (the page's
    /// `days` parameter overrides it).
    #[serde(default = "default_stale_days")]
    pub stale_days: u32,
}

impl Default for UiSettings {
    fn default() -> Self {
        UiSettings {
            stale_days: DEFAULT_STALE_DAYS,
        }
    }
}

fn default_stale_days() -> u32 {
    DEFAULT_STALE_DAYS
}

/// The `[daemon]` table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DaemonSettings {
    /// TCP port on 127.0.0.1 for MCP over HTTP; 0 picks a free one (recorded in
    /// `daemon.json` in the data directory and shown by `cairn status`).
    #[serde(default)]
    pub port: u16,
    /// Quiet time after the last file event before re-indexing, in milliseconds.
    #[serde(default = "default_debounce_ms")]
    pub debounce_ms: u64,
}

impl Default for DaemonSettings {
    fn default() -> Self {
        DaemonSettings {
            port: 0,
            debounce_ms: default_debounce_ms(),
        }
    }
}

fn default_debounce_ms() -> u64 {
    50
}

/// Commits mined from the history by default.
pub(crate) const DEFAULT_HISTORY_COMMITS: usize = 2_000;

/// The `[history]` table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HistorySettings {
    /// How many of the latest commits are mined for experts, fixes and co-change.
    #[serde(default = "default_history_commits")]
    pub max_commits: usize,
}

impl Default for HistorySettings {
    fn default() -> Self {
        HistorySettings {
            max_commits: DEFAULT_HISTORY_COMMITS,
        }
    }
}

fn default_history_commits() -> usize {
    DEFAULT_HISTORY_COMMITS
}

/// Default cap on the commits of a reviewed `base..head` range: a large pull request has a
/// few dozen, a release branch a few hundred; `root..HEAD` of a living repository has more.
pub(crate) const DEFAULT_REVIEW_COMMITS: usize = 500;

/// Default cap on the files of a reviewed change: each is parsed on both sides, and a broad
/// refactor fits while a whole repository's worth does not.
pub(crate) const DEFAULT_REVIEW_FILES: usize = 2_000;

/// The `[review]` table: how large a change one review takes on.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReviewSettings {
    /// Most commits in a reviewed `base..head` range.
    #[serde(default = "default_review_commits")]
    pub max_commits: usize,
    /// Most changed files in a reviewed change.
    #[serde(default = "default_review_files")]
    pub max_files: usize,
}

impl Default for ReviewSettings {
    fn default() -> Self {
        ReviewSettings {
            max_commits: DEFAULT_REVIEW_COMMITS,
            max_files: DEFAULT_REVIEW_FILES,
        }
    }
}

fn default_review_commits() -> usize {
    DEFAULT_REVIEW_COMMITS
}

fn default_review_files() -> usize {
    DEFAULT_REVIEW_FILES
}

/// The `[memory]` table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemorySettings {
    /// The all-MiniLM-L6-v2 model directory for semantic search (relative to the repository
    /// root, or absolute). `--model-dir` / `CAIRN_MODEL_DIR` take precedence.
    #[serde(default)]
    pub model_dir: Option<PathBuf>,
    /// Set to false to use keyword search only, even with a model present.
    #[serde(default = "yes")]
    pub semantic: bool,
    /// Memory types written to the organisation's memories unless a write names its
    /// `scope` (`framework_knowledge` and `rejection_pattern` only when their file pattern is
    /// generic); `[]` keeps every memory in its repository. `None`: the default set
    /// (`memory::model::DEFAULT_ORG_TYPES`). Only narrows: a type beyond the user's own
    /// `[memory] org_types` (else the default set) is ignored.
    #[serde(default)]
    pub org_types: Option<Vec<String>>,
    /// Which memories written by assistants wait for a person's approval: `"required"` (all
    /// types), `"off"`, or a list of types. `None`: off.
    #[serde(default)]
    pub approval: Option<ApprovalSetting>,
}

impl Default for MemorySettings {
    fn default() -> Self {
        MemorySettings {
            model_dir: None,
            semantic: true,
            org_types: None,
            approval: None,
        }
    }
}

/// `[memory] approval` as written: a word (`"required"`, `"off"`) or a list of memory types.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(
    untagged,
    expecting = "`approval` is \"required\", \"off\" or a list of memory types"
)]
pub enum ApprovalSetting {
    Word(String),
    Types(Vec<String>),
}

/// The user's own settings (`$XDG_CONFIG_HOME/cairn/config.toml`), which no repository can
/// loosen: the approval gate, the memory types allowed to go to the organisation, and
/// whether mem0 clients may call without the token.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct UserSettings {
    #[serde(default)]
    pub memory: UserMemorySettings,
    #[serde(default)]
    pub mem0: UserMem0Settings,
}

/// The user's `[mem0]` table: the daemon's mem0-compatible routes.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct UserMem0Settings {
    /// Lets clients that cannot send a header call the mem0 routes without the daemon's
    /// token (the Host and Origin checks stay). Off unless the user sets it; `cairn doctor`
    /// warns while it is on.
    #[serde(default)]
    pub allow_without_token: bool,
}

/// The user's `[memory]` table.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct UserMemorySettings {
    /// As `cairn.toml`'s `[memory] approval`; a type either gates waits for approval.
    #[serde(default)]
    pub approval: Option<ApprovalSetting>,
    /// The memory types that default to the organisation's memories, and the most a
    /// repository's `[memory] org_types` may ask for. `None`: the default set.
    #[serde(default)]
    pub org_types: Option<Vec<String>>,
}

/// The user's settings file: `$XDG_CONFIG_HOME/cairn/config.toml`.
pub(crate) fn user_settings_file() -> Option<PathBuf> {
    dirs::config_dir().map(|dir| dir.join("cairn").join("config.toml"))
}

/// Reads the user's settings; none when the file is absent.
pub(crate) fn read_user_settings(path: Option<&Path>) -> anyhow::Result<UserSettings> {
    let Some(path) = path else {
        return Ok(UserSettings::default());
    };
    match std::fs::read_to_string(path) {
        Ok(text) => parse_toml(&text, &path.display().to_string()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(UserSettings::default()),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// Parses configuration text; an error says where and what is wrong, never quoting the text
/// (a file given as configuration may be anything: `/proc/self/environ`, a credentials file).
pub(crate) fn parse_toml<T: serde::de::DeserializeOwned>(
    text: &str,
    name: &str,
) -> anyhow::Result<T> {
    toml::from_str(text).map_err(|e| {
        let place = e
            .span()
            .map(|span| {
                let (line, column) = crate::fsutil::repo::line_and_column(text, span.start);
                format!("line {line}, column {column}: ")
            })
            .unwrap_or_default();
        anyhow::anyhow!(
            "{name} is not valid cairn configuration: {place}{}",
            crate::fsutil::repo::without_values(e.message())
        )
    })
}

fn yes() -> bool {
    true
}

/// The `[index]` table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IndexSettings {
    /// Files larger than this are skipped (and reported).
    #[serde(default = "default_max_file_bytes")]
    pub max_file_bytes: u64,
    /// Extra gitignore-style patterns to leave out.
    #[serde(default)]
    pub exclude: Vec<String>,
}

impl Default for IndexSettings {
    fn default() -> Self {
        IndexSettings {
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            exclude: Vec::new(),
        }
    }
}

fn default_max_file_bytes() -> u64 {
    DEFAULT_MAX_FILE_BYTES
}

/// A repository cairn works on.
#[derive(Debug, Clone)]
pub struct Repo {
    /// Canonical path of the repository root.
    pub root: PathBuf,
    /// cairn's data directory for this repository.
    pub data_dir: PathBuf,
    pub is_git: bool,
    pub settings: Settings,
    /// The user's own settings (`config.toml` in cairn's configuration directory).
    pub user: UserSettings,
    /// Team mode (memories on a team server) or not.
    pub team: team::TeamSetup,
    /// Where organisation memories live on this machine (`CAIRN_ORGS_DIR`, else
    /// `$XDG_DATA_HOME/cairn/orgs`); `None` when the system has no data directory.
    pub orgs_dir: Option<PathBuf>,
}

impl Repo {
    /// Finds the repository containing `start` (its git root, or `start` itself outside git)
    /// and its data directory: `data_dir` if given, else `$XDG_DATA_HOME/cairn/repos/<name>-<hash>`.
    pub fn discover(start: &Path, data_dir: Option<&Path>) -> anyhow::Result<Repo> {
        let start = start
            .canonicalize()
            .with_context(|| format!("cannot open repository {}", start.display()))?;
        if !start.is_dir() {
            bail!("{} is not a directory", start.display());
        }
        let git_root = start.ancestors().find(|dir| dir.join(".git").exists());
        let root = git_root.unwrap_or(&start).to_path_buf();
        let data_dir = match data_dir {
            Some(dir) => dir.to_path_buf(),
            None => default_data_dir(&root)?,
        };
        let settings = read_settings(&root)?;
        let user = read_user_settings(user_settings_file().as_deref())?;
        let db = std::env::var(DB_ENV).ok();
        let team = team::resolve(&root, &settings.team, db.as_deref());
        let orgs_dir = std::env::var_os(ORGS_DIR_ENV)
            .filter(|dir| !dir.is_empty())
            .map(PathBuf::from)
            .or_else(|| dirs::data_dir().map(|base| base.join("cairn").join("orgs")));
        Ok(Repo {
            is_git: git_root.is_some(),
            root,
            data_dir,
            settings,
            user,
            team,
            orgs_dir,
        })
    }

    /// Uses the memory store at `db` (`--db`): a team server `ws://…`/`wss://…`, or
    /// `embedded`.
    pub fn use_db(&mut self, db: &str) {
        self.team = team::resolve(&self.root, &self.settings.team, Some(db));
    }

    /// The embedded store's directory.
    pub fn store_dir(&self) -> PathBuf {
        crate::datadir::DataDir::at(&self.data_dir).store()
    }

    /// The model directory configured in `cairn.toml`, resolved against the root.
    pub fn configured_model_dir(&self) -> Option<PathBuf> {
        self.settings
            .memory
            .model_dir
            .as_ref()
            .map(|dir| self.root.join(dir))
    }

    /// The lock file serialising writers.
    pub fn lock_path(&self) -> PathBuf {
        crate::datadir::DataDir::at(&self.data_dir).index_lock()
    }

    /// The organisation whose memories the repository shares on this machine: the owner in
    /// its `origin` remote (`acme` for `git@github.com:acme/app.git`), `None` without one.
    /// Only the remote, which the user's own git configuration holds: `cairn.toml` is the
    /// repository's text and must not choose which organisation's memories it reads and
    /// writes (team mode names the organisation on a server the user trusts instead).
    pub fn org(&self) -> Option<String> {
        let key = team::identity::normalise_remote(&team::identity::remote_url(&self.root)?)?;
        team::identity::Identity::new(&key, None)
            .ok()
            .map(|identity| identity.namespace)
    }

    /// The repository's identity among its organisation's: in team mode its identity on the
    /// server (`[team] repository`, else the normalised remote), otherwise its normalised
    /// `origin` remote (`github.com/acme/app`); `None` without one. The organisation's
    /// memories record it as the repository they were written in.
    pub fn key(&self) -> Option<String> {
        match &self.team {
            team::TeamSetup::On(config) => Some(config.identity.key.clone()),
            _ => team::identity::normalise_remote(&team::identity::remote_url(&self.root)?),
        }
    }

    /// The directory of the organisation's memories on this machine, when the repository
    /// has an organisation.
    pub fn org_dir(&self) -> Option<PathBuf> {
        let orgs = self.orgs_dir.as_ref()?;
        Some(crate::datadir::org_dir(orgs, &self.org()?))
    }

    /// The repository's short name.
    pub fn name(&self) -> String {
        self.root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "repo".to_string())
    }
}

fn default_data_dir(root: &Path) -> anyhow::Result<PathBuf> {
    let base = dirs::data_dir()
        .context("no data directory on this system: set CAIRN_DATA_DIR or pass --data-dir")?;
    let name: String = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let hash = xxhash_rust::xxh3::xxh3_64(root.to_string_lossy().as_bytes());
    Ok(base
        .join("cairn")
        .join("repos")
        .join(format!("{name}-{hash:016x}")))
}

/// `cairn.toml` at the repository root, read through the repository reader (a link out of the
/// repository, a FIFO or an oversized file is refused, and nothing of it is quoted).
fn read_settings(root: &Path) -> anyhow::Result<Settings> {
    let files = RepoFiles::open(root)
        .with_context(|| format!("cannot open repository {}", root.display()))?;
    let name = root.join("cairn.toml").display().to_string();
    match files.text("cairn.toml", Limit::CONFIG) {
        Ok(text) => parse_toml(&text, &name),
        Err(e) if e.is_missing() => Ok(Settings::default()),
        Err(e) => bail!("cannot read {name}: {}", e.reason()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approval_is_a_word_or_a_list_of_types() {
        let read = |text: &str| toml::from_str::<Settings>(text).map(|s| s.memory.approval);
        assert_eq!(
            read("[memory]\napproval = \"required\"").unwrap(),
            Some(ApprovalSetting::Word("required".into()))
        );
        assert_eq!(
            read("[memory]\napproval = [\"decision\"]").unwrap(),
            Some(ApprovalSetting::Types(vec!["decision".into()]))
        );
        assert_eq!(read("").unwrap(), None);
        let error = read("[memory]\napproval = 3").unwrap_err().to_string();
        assert!(
            error.contains("\"required\", \"off\" or a list of memory types"),
            "{error}"
        );
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        assert!(
            read_user_settings(Some(&file))
                .unwrap()
                .memory
                .approval
                .is_none()
        );
        std::fs::write(&file, "[memory]\napproval = [\"decision\"]\n").unwrap();
        assert_eq!(
            read_user_settings(Some(&file)).unwrap().memory.approval,
            Some(ApprovalSetting::Types(vec!["decision".into()]))
        );
        std::fs::write(&file, "[memory]\napproval = true\n").unwrap();
        let error = format!("{:#}", read_user_settings(Some(&file)).unwrap_err());
        assert!(
            error.contains("config.toml is not valid cairn configuration"),
            "{error}"
        );
    }

    #[test]
    fn only_the_users_own_file_opens_the_mem0_routes_without_the_token() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.toml");
        assert!(
            !read_user_settings(Some(&file))
                .unwrap()
                .mem0
                .allow_without_token
        );
        std::fs::write(&file, "[mem0]\nallow_without_token = true\n").unwrap();
        assert!(
            read_user_settings(Some(&file))
                .unwrap()
                .mem0
                .allow_without_token
        );
        // A repository's cairn.toml cannot say it: the table is refused there.
        let repository = toml::from_str::<Settings>("[mem0]\nallow_without_token = true");
        assert!(repository.is_err());
    }
}
