//! What a memory is: its type, scope, anchors, provenance, validity, statistics and history.

use std::collections::BTreeMap;

use crate::secrets::quoted;
use serde::{Deserialize, Serialize};

/// The ten kinds of memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryType {
    ProjectPattern,
    Decision,
    DeveloperPattern,
    DeveloperStrength,
    RiskModule,
    ContributorProfile,
    RejectionPattern,
    FrameworkKnowledge,
    ReviewOutcome,
    RuleEffectiveness,
}

impl MemoryType {
    pub const ALL: [MemoryType; 10] = [
        MemoryType::ProjectPattern,
        MemoryType::Decision,
        MemoryType::DeveloperPattern,
        MemoryType::DeveloperStrength,
        MemoryType::RiskModule,
        MemoryType::ContributorProfile,
        MemoryType::RejectionPattern,
        MemoryType::FrameworkKnowledge,
        MemoryType::ReviewOutcome,
        MemoryType::RuleEffectiveness,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            MemoryType::ProjectPattern => "project_pattern",
            MemoryType::Decision => "decision",
            MemoryType::DeveloperPattern => "developer_pattern",
            MemoryType::DeveloperStrength => "developer_strength",
            MemoryType::RiskModule => "risk_module",
            MemoryType::ContributorProfile => "contributor_profile",
            MemoryType::RejectionPattern => "rejection_pattern",
            MemoryType::FrameworkKnowledge => "framework_knowledge",
            MemoryType::ReviewOutcome => "review_outcome",
            MemoryType::RuleEffectiveness => "rule_effectiveness",
        }
    }

    /// Types that belong to one developer: stored and searched in that developer's scope only.
    pub fn developer_scoped(self) -> bool {
        matches!(
            self,
            MemoryType::DeveloperPattern
                | MemoryType::DeveloperStrength
                | MemoryType::ContributorProfile
        )
    }

    /// The index of this type in [`MemoryType::ALL`], for bit masks.
    pub fn bit(self) -> u16 {
        1 << (self as u16)
    }

    /// How much a type counts in rankings without a query (the context pack).
    pub fn weight(self) -> f64 {
        match self {
            MemoryType::RiskModule | MemoryType::Decision => 1.3,
            MemoryType::ProjectPattern | MemoryType::RejectionPattern => 1.2,
            MemoryType::FrameworkKnowledge => 1.0,
            MemoryType::ReviewOutcome | MemoryType::RuleEffectiveness => 0.6,
            _ => 1.0,
        }
    }
}

impl std::fmt::Display for MemoryType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for MemoryType {
    type Err = MemoryError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim().to_ascii_lowercase().replace('-', "_");
        MemoryType::ALL
            .into_iter()
            .find(|t| t.as_str() == wanted)
            .ok_or_else(|| MemoryError::UnknownType(s.to_string()))
    }
}

/// Which store a memory lives in: the repository's own, or the organisation's (shared by
/// every repository of the organisation on this machine, or its team server).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    #[default]
    #[serde(alias = "repo")]
    Repository,
    Org,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Repository => "repository",
            Scope::Org => "org",
        }
    }

    /// The short label answers print beside a memory.
    pub fn label(self) -> &'static str {
        match self {
            Scope::Repository => "repo",
            Scope::Org => "org",
        }
    }

    /// The scope a write gets when it names none: developer memories follow their developer
    /// across the organisation; framework knowledge and rejection patterns go to the
    /// organisation when their file pattern is generic ([`is_generic_pattern`]); everything
    /// else stays in the repository. Only types in `org_types` (`cairn.toml`'s `[memory]
    /// org_types`) ever default to the organisation.
    pub fn default_for(
        kind: MemoryType,
        file_pattern: Option<&str>,
        org_types: &[MemoryType],
    ) -> Scope {
        if !org_types.contains(&kind) {
            return Scope::Repository;
        }
        let generic = match kind {
            MemoryType::RejectionPattern | MemoryType::FrameworkKnowledge => {
                file_pattern.is_some_and(is_generic_pattern)
            }
            _ => true,
        };
        if generic {
            Scope::Org
        } else {
            Scope::Repository
        }
    }
}

impl std::fmt::Display for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Scope {
    type Err = MemoryError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "repository" | "repo" => Ok(Scope::Repository),
            "org" | "organisation" | "organization" => Ok(Scope::Org),
            other => Err(MemoryError::Invalid(format!(
                "unknown scope {}: use repository or org",
                quoted(other)
            ))),
        }
    }
}

/// The types whose memories follow their developer, and the types that go to the
/// organisation when their file pattern is generic: the default of `[memory] org_types`.
pub const DEFAULT_ORG_TYPES: [MemoryType; 5] = [
    MemoryType::DeveloperPattern,
    MemoryType::DeveloperStrength,
    MemoryType::ContributorProfile,
    MemoryType::FrameworkKnowledge,
    MemoryType::RejectionPattern,
];

/// The types that may carry a file pattern.
pub(crate) fn takes_file_pattern(kind: MemoryType) -> bool {
    matches!(
        kind,
        MemoryType::RejectionPattern | MemoryType::FrameworkKnowledge
    )
}

/// Directory names found in most repositories: a pattern whose directories are only these and
/// wildcards (`tests/**`, `**/__tests__/*.ts`) says nothing about one repository's layout.
const CONVENTIONAL_DIRS: [&str; 9] = [
    "tests",
    "test",
    "spec",
    "specs",
    "__tests__",
    "e2e",
    "docs",
    "doc",
    ".github",
];

/// A file pattern is generic when it names no directory of one repository: it has no
/// directory part (`*.py`), or every directory in it is a wildcard or a conventional name
/// (`**/*.ts`, `tests/**`, `**/__tests__/**`). `src/api/**/*.ts` is not.
pub(crate) fn is_generic_pattern(pattern: &str) -> bool {
    let pattern = pattern.trim().trim_end_matches('/');
    let mut segments: Vec<&str> = pattern.split('/').collect();
    let last = segments.pop();
    if last.is_none_or(str::is_empty) {
        return false;
    }
    segments
        .iter()
        .all(|s| s.chars().all(|c| c == '*') || CONVENTIONAL_DIRS.contains(s))
}

/// Longest file pattern, in bytes.
pub(crate) const MAX_FILE_PATTERN_BYTES: usize = 200;

/// A compiled file pattern (gitignore-style): without a `/` it matches a file or folder name
/// at any depth (`*.py`, `migrations`); with one it is anchored at the repository root
/// (`tests/**`, `src/api/**/*.ts`); a folder matches everything under it.
#[derive(Debug, Clone)]
pub struct FilePattern(globset::GlobSet);

impl FilePattern {
    /// Checks and compiles a pattern: repository-relative, no `..`, no backslashes or control
    /// characters, at most [`MAX_FILE_PATTERN_BYTES`], a valid glob.
    pub fn compile(raw: &str) -> Result<FilePattern, MemoryError> {
        let pattern = raw.trim();
        let bad =
            |why: &str| MemoryError::Invalid(format!("`file_pattern` {} {why}", quoted(pattern)));
        if pattern.is_empty() {
            return Err(bad("is empty"));
        }
        if pattern.len() > MAX_FILE_PATTERN_BYTES {
            return Err(bad(&format!(
                "is {} bytes; at most {MAX_FILE_PATTERN_BYTES}",
                pattern.len()
            )));
        }
        if pattern.starts_with('/') || pattern.starts_with('~') || pattern.contains(':') {
            return Err(bad(
                "is absolute: use a repository-relative glob such as `tests/**` or `*.py`",
            ));
        }
        if pattern.contains('\\') || pattern.chars().any(char::is_control) {
            return Err(bad("holds a backslash or a control character: use `/`"));
        }
        let body = pattern.trim_end_matches('/');
        if body.split('/').any(|s| s == ".." || s == ".") {
            return Err(bad(
                "climbs with `..` or `.`: patterns stay inside the repository",
            ));
        }
        if body.is_empty() || body.split('/').any(str::is_empty) {
            return Err(bad("has an empty path segment"));
        }
        let forms = if body.contains('/') {
            [body.to_string(), format!("{body}/**")]
        } else {
            [format!("**/{body}"), format!("**/{body}/**")]
        };
        let mut set = globset::GlobSetBuilder::new();
        for form in forms {
            let glob = globset::GlobBuilder::new(&form)
                .literal_separator(true)
                .build()
                .map_err(|e| bad(&format!("is not a valid glob: {}", e.kind())))?;
            set.add(glob);
        }
        set.build()
            .map(FilePattern)
            .map_err(|e| bad(&format!("is not a valid glob: {e}")))
    }

    /// True when the repository-relative `path` matches.
    pub fn matches(&self, path: &str) -> bool {
        self.0.is_match(path)
    }
}

/// Where a memory came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    Review,
    #[default]
    Manual,
    Import,
    Hook,
}

impl std::str::FromStr for Source {
    type Err = MemoryError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "review" => Ok(Source::Review),
            "manual" => Ok(Source::Manual),
            "import" => Ok(Source::Import),
            "hook" => Ok(Source::Hook),
            other => Err(MemoryError::Invalid(format!(
                "unknown source {}: use review, manual, import or hook",
                quoted(other)
            ))),
        }
    }
}

/// Whether a memory may be served: approved (every memory written by a person, and every
/// memory stored before the approval gate existed), waiting for a person's approval, or
/// rejected by one (kept, invalid, for the record). Only approved memories are ever served.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    #[default]
    Approved,
    Pending,
    Rejected,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Approved => "approved",
            Status::Pending => "pending",
            Status::Rejected => "rejected",
        }
    }

    pub fn is_approved(&self) -> bool {
        *self == Status::Approved
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which assistant-written memories wait for a person's approval (`[memory] approval`):
/// none, every type, or the types named.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Approval {
    #[default]
    Off,
    All,
    Types(Vec<MemoryType>),
}

impl Approval {
    /// Reads the setting: `"required"` or `"off"`, or a list of memory types.
    pub fn parse(value: &crate::config::ApprovalSetting) -> Result<Approval, MemoryError> {
        match value {
            crate::config::ApprovalSetting::Word(word) => {
                match word.trim().to_ascii_lowercase().as_str() {
                    "required" | "all" => Ok(Approval::All),
                    "off" | "none" => Ok(Approval::Off),
                    other => Err(MemoryError::Invalid(format!(
                        "approval = {}: use \"required\", \"off\" or a list of memory types",
                        quoted(other)
                    ))),
                }
            }
            crate::config::ApprovalSetting::Types(names) => {
                let mut types = names
                    .iter()
                    .map(|name| name.parse::<MemoryType>())
                    .collect::<Result<Vec<_>, _>>()?;
                types.sort();
                types.dedup();
                Ok(if types.is_empty() {
                    Approval::Off
                } else {
                    Approval::Types(types)
                })
            }
        }
    }

    /// True when an assistant's memory of type `kind` waits for approval.
    pub fn gates(&self, kind: MemoryType) -> bool {
        match self {
            Approval::Off => false,
            Approval::All => true,
            Approval::Types(types) => types.contains(&kind),
        }
    }

    /// Both settings at once: a type is gated when either gates it (the user's setting can
    /// only be tightened by a repository's, never loosened).
    pub fn union(self, other: Approval) -> Approval {
        match (self, other) {
            (Approval::All, _) | (_, Approval::All) => Approval::All,
            (Approval::Off, other) | (other, Approval::Off) => other,
            (Approval::Types(mut a), Approval::Types(b)) => {
                a.extend(b);
                a.sort();
                a.dedup();
                Approval::Types(a)
            }
        }
    }
}

/// What a write did (its action). Serialised under the published field name `event`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Action {
    /// A new memory.
    Add,
    /// An existing memory absorbed the write (its previous text is kept in history).
    Update,
    /// Nothing new: the existing memory is returned.
    None,
    /// The new memory replaces an older one, which stays in history as superseded.
    Supersede,
    /// The memory was removed.
    Delete,
}

/// One change in a memory's life.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Revision {
    /// Milliseconds since the Unix epoch.
    pub at: i64,
    pub event: Action,
    /// The title and content as they were before this change (for UPDATE), or as written.
    pub title: String,
    pub content: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A stored memory. Its parts are flattened into one JSON object: the stored rows, the
/// exports and the answers keep the field layout they had before the parts existed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Memory {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: MemoryType,
    pub title: String,
    pub content: String,
    #[serde(flatten)]
    pub owner: Owner,
    /// Labels its writer attached (a client's own keys and values, kept and filterable).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: Metadata,
    #[serde(flatten)]
    pub anchors: Anchors,
    #[serde(flatten)]
    pub provenance: Provenance,
    #[serde(flatten)]
    pub validity: Validity,
    #[serde(flatten)]
    pub reads: Reads,
    /// 0–1; grows when the same learning is written again.
    pub confidence: f64,
    /// Which store it lives in (rows written before scopes existed are the repository's).
    #[serde(default)]
    pub scope: Scope,
    #[serde(flatten)]
    pub rule: Rule,
    /// A developer memory its developer shared with the team (team mode: readable by all
    /// members; only its developer can change it).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub shared: bool,
    /// Kinds of secret redacted from what was written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub redacted: Vec<String>,
    /// Approved (absent: rows from before the gate), waiting for approval, or rejected.
    #[serde(default, skip_serializing_if = "Status::is_approved")]
    pub status: Status,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<Revision>,
    /// The write sequence number of the last change (orders changes across processes).
    #[serde(default)]
    pub seq: u64,
}

/// Whose memory it is: the developer, organisation, agent and run it belongs to.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Owner {
    /// The developer a developer-scoped memory belongs to (or whom a project memory is about).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub developer: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub org: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
}

/// What in the code a memory is about.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Anchors {
    /// Repo-relative paths it is about.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<String>,
    /// Symbols it is about (`path::Name` where the graph knows them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub symbols: Vec<String>,
    /// Anchors the code graph does not know (flagged, not refused).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_anchors: Vec<String>,
    /// The repository an organisation memory was written in (its identity, the normalised
    /// remote: `github.com/acme/one`): the repository whose files the paths and symbols
    /// name. Absent on a repository's own memories and on rows written before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
}

impl Anchors {
    /// Every anchor, paths first, for display and search.
    pub fn all(&self) -> impl Iterator<Item = &String> {
        self.paths.iter().chain(self.symbols.iter())
    }

    /// The files and folders the anchors are in: the paths, and the file of each symbol
    /// (`path::Name` → `path`).
    pub fn files(&self) -> Vec<&str> {
        let mut paths: Vec<&str> = self
            .paths
            .iter()
            .map(String::as_str)
            .chain(
                self.symbols
                    .iter()
                    .filter_map(|s| s.split_once("::").map(|(path, _)| path)),
            )
            .filter(|p| !p.is_empty())
            .collect();
        paths.sort_unstable();
        paths.dedup();
        paths
    }

    /// The names of its symbols without their files (`src/app.py::App.run` → `App.run`):
    /// what a symbol anchor still says in another repository.
    pub fn symbol_names(&self) -> impl Iterator<Item = &str> {
        self.symbols.iter().map(|s| symbol_name(s))
    }

    /// Whether they name one of `paths` (or a folder above one) or one of `symbols`; anchors
    /// `elsewhere` (in another repository) only by a symbol of the same name
    /// (`src/app.py::App.run` and `lib/app.py::App.run` both name `App.run`), never by a path.
    pub fn on_any(&self, paths: &[String], symbols: &[String], elsewhere: bool) -> bool {
        if elsewhere {
            let names: Vec<&str> = symbols
                .iter()
                .filter_map(|s| s.split_once("::").map(|(_, name)| name))
                .collect();
            return self.symbol_names().any(|n| names.contains(&n));
        }
        self.paths.iter().any(|p| {
            paths
                .iter()
                .any(|q| q == p || q.starts_with(&format!("{p}/")))
        }) || self.symbols.iter().any(|s| symbols.contains(s))
    }

    /// Whether they were written in the repository `here` (its identity).
    pub fn written_in(&self, here: &str) -> bool {
        self.origin.as_deref() == Some(here)
    }
}

/// A symbol's name without its file: the part after `::` (`src/app.py::App.run` →
/// `App.run`), or the whole anchor when it names no file.
pub fn symbol_name(symbol: &str) -> &str {
    symbol.split_once("::").map_or(symbol, |(_, name)| name)
}

/// Where a memory came from and who wrote it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    pub source: Source,
    /// PR, commit or review id the learning came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_ref: Option<String>,
    /// Who wrote it (the assistant or person calling `remember`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written_by: Option<String>,
}

/// When a memory holds: written, changed, valid from, and replaced (milliseconds since the
/// Unix epoch).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Validity {
    pub created_at: i64,
    pub updated_at: i64,
    pub valid_from: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invalidated_at: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub superseded_by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supersedes: Option<String>,
}

/// How often and when a memory was last read.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Reads {
    #[serde(default)]
    pub access_count: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_access: Option<i64>,
}

/// What a rule-like memory (a rejection pattern, framework knowledge) applies to, and the
/// guideline change that took it up.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Rule {
    /// The files it applies to, as a gitignore-style glob (rejection patterns and framework
    /// knowledge): `*.py`, `tests/**`, `src/api/**/*.ts`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_pattern: Option<String>,
    /// The review rule category a rejection pattern is about (`naming`, `security`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// A rejection pattern consumed by a guideline update.
    #[serde(default)]
    pub addressed: bool,
    /// The accepted guideline change (`g_…`) that addressed this rejection pattern.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub addressed_by: Option<String>,
}

impl Memory {
    /// A live memory written at `now` (milliseconds), with no anchors, labels or history.
    pub fn new(id: String, kind: MemoryType, title: String, content: String, now: i64) -> Memory {
        Memory {
            id,
            kind,
            title,
            content,
            owner: Owner::default(),
            metadata: Metadata::new(),
            anchors: Anchors::default(),
            provenance: Provenance::default(),
            validity: Validity {
                created_at: now,
                updated_at: now,
                valid_from: now,
                ..Validity::default()
            },
            reads: Reads::default(),
            confidence: 0.5,
            scope: Scope::Repository,
            rule: Rule::default(),
            shared: false,
            redacted: Vec::new(),
            status: Status::Approved,
            history: Vec::new(),
            seq: 0,
        }
    }

    pub fn is_live(&self) -> bool {
        self.validity.invalidated_at.is_none()
    }

    /// Live and approved: a memory cairn may serve.
    pub fn is_served(&self) -> bool {
        self.is_live() && self.status.is_approved()
    }

    /// Whether its anchors name another repository's files than `here`'s (the identity of
    /// the repository reading it, when it has one): an organisation memory written elsewhere,
    /// or before cairn kept where ([`Anchors::origin`]). Such a memory is matched by its file
    /// pattern and its symbols' names, never by its paths. A repository's own memory never is.
    pub fn anchored_elsewhere(&self, here: Option<&str>) -> bool {
        self.scope == Scope::Org && !here.is_some_and(|here| self.anchors.written_in(here))
    }

    /// Where its anchors are when they are not `here`'s (see [`Memory::anchored_elsewhere`]):
    /// the repository it was written in, or `another repository`; `None` for anchors of
    /// `here` and for a memory without path or symbol anchors.
    pub fn anchors_from(&self, here: Option<&str>) -> Option<&str> {
        (self.anchored_elsewhere(here) && self.anchors.all().next().is_some())
            .then(|| self.anchors.origin.as_deref().unwrap_or(UNKNOWN_ORIGIN))
    }

    /// The index partition the memory is searched in: the project, or one developer.
    pub fn partition(&self) -> String {
        partition(self.kind, self.owner.developer.as_deref())
    }

    /// When its text was last written (milliseconds): its creation, or the last revision
    /// that changed the text. Re-reads, new anchors and sharing do not count.
    pub fn stated_at(&self) -> i64 {
        let mut stated = self.validity.created_at;
        let later_texts = self
            .history
            .iter()
            .skip(1)
            .map(|r| r.content.as_str())
            .chain(std::iter::once(self.content.as_str()));
        for (revision, next) in self.history.iter().zip(later_texts) {
            if revision.content != next {
                stated = stated.max(revision.at);
            }
        }
        stated
    }
}

/// The partition key of a type and developer.
pub fn partition(kind: MemoryType, developer: Option<&str>) -> String {
    match developer {
        Some(dev) if kind.developer_scoped() => format!("dev:{dev}"),
        _ => PROJECT_PARTITION.to_string(),
    }
}

pub(crate) const PROJECT_PARTITION: &str = "project";

/// How answers name the origin of an organisation memory written before cairn kept it.
const UNKNOWN_ORIGIN: &str = "another repository";

/// Memory failures the caller can act on.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    #[error(
        "unknown memory type {}: use one of project_pattern, decision, developer_pattern, developer_strength, risk_module, contributor_profile, rejection_pattern, framework_knowledge, review_outcome, rule_effectiveness",
        crate::secrets::quoted(.0)
    )]
    UnknownType(String),
    #[error("{0}")]
    Invalid(String),
    #[error("no memory with id {}", crate::secrets::quoted(.0))]
    NotFound(String),
    #[error("{0:#}")]
    Store(anyhow::Error),
}

impl From<crate::review::records::Invalid> for MemoryError {
    fn from(invalid: crate::review::records::Invalid) -> MemoryError {
        MemoryError::Invalid(invalid.0)
    }
}

/// Largest content accepted, in bytes: a memory is a learning of a few sentences.
pub const MAX_CONTENT_BYTES: usize = 4_096;
/// Largest title, in bytes.
pub const MAX_TITLE_BYTES: usize = 200;
/// Most anchors on one memory.
pub(crate) const MAX_ANCHORS: usize = 32;
/// Longest anchor, in bytes.
pub(crate) const MAX_ANCHOR_BYTES: usize = 512;
/// Most revisions kept in a memory's history (the first and the latest).
pub const MAX_HISTORY: usize = 50;
/// Longest label (org, agent, run, source ref, writer, category, a revision's author), in
/// bytes.
pub const MAX_LABEL_BYTES: usize = 200;
/// Longest note on a revision, in bytes.
pub(crate) const MAX_NOTE_BYTES: usize = 1_024;
/// Largest metadata, in bytes of its JSON.
pub(crate) const MAX_METADATA_BYTES: usize = 2_048;
/// Longest metadata key, in bytes.
pub(crate) const MAX_METADATA_KEY_BYTES: usize = 64;

/// A memory's metadata: its writer's keys and JSON values.
pub type Metadata = BTreeMap<String, serde_json::Value>;

/// The size of metadata as stored: the bytes of its JSON.
pub(crate) fn metadata_bytes(metadata: &Metadata) -> usize {
    serde_json::to_string(metadata).map_or(usize::MAX, |json| json.len())
}

/// Holds an imported memory to the limits a write applies: a text, label or anchor over its
/// limit is refused, naming the memory and the field; what cairn itself lets grow (the
/// history, a revision's note) is cut the way cairn cuts it.
pub(crate) fn bound_imported(memory: &mut Memory) -> Result<(), MemoryError> {
    let too_long = |field: &str, len: usize, max: usize| {
        MemoryError::Invalid(format!(
            "memory {}: {field} is {len} bytes; at most {max}",
            memory.id
        ))
    };
    let check = |field: &str, text: &str, max: usize| {
        if text.len() > max {
            return Err(too_long(field, text.len(), max));
        }
        Ok(())
    };
    check("`title`", &memory.title, MAX_TITLE_BYTES)?;
    check("`content`", &memory.content, MAX_CONTENT_BYTES)?;
    let labels = [
        ("`org`", &memory.owner.org),
        ("`agent`", &memory.owner.agent),
        ("`run`", &memory.owner.run),
        ("`source_ref`", &memory.provenance.source_ref),
        ("`written_by`", &memory.provenance.written_by),
        ("`category`", &memory.rule.category),
        ("`file_pattern`", &memory.rule.file_pattern),
        ("`supersedes`", &memory.validity.supersedes),
        ("`origin`", &memory.anchors.origin),
        ("`superseded_by`", &memory.validity.superseded_by),
    ];
    for (field, label) in labels {
        check(field, label.as_deref().unwrap_or_default(), MAX_LABEL_BYTES)?;
    }
    let anchors = memory.anchors.paths.len() + memory.anchors.symbols.len();
    for (field, list, max) in [
        ("`paths` and `symbols`", anchors, MAX_ANCHORS),
        (
            "`unknown_anchors`",
            memory.anchors.unknown_anchors.len(),
            MAX_ANCHORS,
        ),
        ("`redacted`", memory.redacted.len(), MAX_ANCHORS),
    ] {
        if list > max {
            return Err(MemoryError::Invalid(format!(
                "memory {}: {field} hold {list} entries; at most {max}",
                memory.id
            )));
        }
    }
    for anchor in memory.anchors.all().chain(&memory.anchors.unknown_anchors) {
        check("an anchor", anchor, MAX_ANCHOR_BYTES)?;
    }
    for kind in &memory.redacted {
        check("`redacted`", kind, MAX_LABEL_BYTES)?;
    }
    check_metadata_size(&memory.metadata)
        .map_err(|e| MemoryError::Invalid(format!("memory {}: {e}", memory.id)))?;
    for (n, revision) in memory.history.iter().enumerate() {
        let field = |name: &str| format!("`history[{n}].{name}`");
        check(&field("title"), &revision.title, MAX_TITLE_BYTES)?;
        check(&field("content"), &revision.content, MAX_CONTENT_BYTES)?;
        check(
            &field("by"),
            revision.by.as_deref().unwrap_or_default(),
            MAX_LABEL_BYTES,
        )?;
    }
    clip_history(&mut memory.history);
    Ok(())
}

/// Refuses metadata over [`MAX_METADATA_BYTES`] or with a key over [`MAX_METADATA_KEY_BYTES`]
/// or empty.
pub(crate) fn check_metadata_size(metadata: &Metadata) -> Result<(), MemoryError> {
    // The key is not repeated: one that is empty or that long is nothing to show.
    if metadata
        .keys()
        .any(|k| k.trim().is_empty() || k.len() > MAX_METADATA_KEY_BYTES)
    {
        return Err(MemoryError::Invalid(format!(
            "a `metadata` key is empty or over {MAX_METADATA_KEY_BYTES} bytes"
        )));
    }
    let bytes = metadata_bytes(metadata);
    if bytes > MAX_METADATA_BYTES {
        return Err(MemoryError::Invalid(format!(
            "`metadata` is {bytes} bytes as JSON; at most {MAX_METADATA_BYTES}"
        )));
    }
    Ok(())
}

/// Keeps the first revision (the original text) and the latest, at most [`MAX_HISTORY`] in
/// all, and cuts each note to [`MAX_NOTE_BYTES`].
fn clip_history(history: &mut Vec<Revision>) {
    if history.len() > MAX_HISTORY {
        history.drain(1..history.len() + 1 - MAX_HISTORY);
    }
    for note in history.iter_mut().filter_map(|r| r.note.as_mut()) {
        if note.len() > MAX_NOTE_BYTES {
            let mut end = MAX_NOTE_BYTES;
            while !note.is_char_boundary(end) {
                end -= 1;
            }
            note.truncate(end);
        }
    }
}

/// Normalises a developer handle: trimmed, without a leading `@`, lowercase.
pub fn developer_id(raw: &str) -> Result<String, MemoryError> {
    crate::config::team::developer_id(raw).map_err(MemoryError::Invalid)
}

/// A memory id: `m_` and 16 hex digits.
pub fn is_memory_id(id: &str) -> bool {
    id.strip_prefix("m_")
        .is_some_and(|hex| hex.len() == 16 && hex.chars().all(|c| c.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_patterns_match_as_gitignore_lines_do() {
        let cases: [(&str, &[&str], &[&str]); 5] = [
            (
                "*.py",
                &["app.py", "src/deep/app.py"],
                &["app.pyc", "py/readme"],
            ),
            (
                "tests/**",
                &["tests/test_x.py", "tests/unit/a.py"],
                &["src/tests.py", "src/tests/a.py"],
            ),
            (
                "src/api/**/*.ts",
                &["src/api/a.ts", "src/api/v1/users/a.ts"],
                &["src/api.ts", "lib/src/api/a.ts", "src/api/a.tsx"],
            ),
            (
                "migrations",
                &["migrations/0001.py", "app/migrations/x.py"],
                &["migration.py"],
            ),
            ("docs/", &["docs/index.md"], &["src/docs.rs"]),
        ];
        for (pattern, yes, no) in cases {
            let compiled = FilePattern::compile(pattern).unwrap();
            for path in yes {
                assert!(compiled.matches(path), "{pattern} should match {path}");
            }
            for path in no {
                assert!(!compiled.matches(path), "{pattern} should not match {path}");
            }
        }
        for bad in [
            "", "/etc/**", "../x/**", "a/../b", "C:/x", "a\\b", "a//b", "[z-a]",
        ] {
            assert!(FilePattern::compile(bad).is_err(), "{bad:?} is refused");
        }
        assert!(FilePattern::compile(&"a".repeat(MAX_FILE_PATTERN_BYTES + 1)).is_err());
    }

    #[test]
    fn scopes_default_by_type_and_pattern() {
        for generic in [
            "*.py",
            "tests/**",
            "**/*.ts",
            "**/__tests__/*.js",
            ".github/**",
        ] {
            assert!(is_generic_pattern(generic), "{generic}");
        }
        for specific in ["src/api/**/*.ts", "app/tasks/**", "**/payments/*.py", ""] {
            assert!(!is_generic_pattern(specific), "{specific}");
        }
        let org = &DEFAULT_ORG_TYPES;
        let scope = |kind, pattern| Scope::default_for(kind, pattern, org);
        assert_eq!(scope(MemoryType::DeveloperPattern, None), Scope::Org);
        assert_eq!(scope(MemoryType::ContributorProfile, None), Scope::Org);
        assert_eq!(
            scope(MemoryType::FrameworkKnowledge, Some("*.py")),
            Scope::Org
        );
        assert_eq!(
            scope(MemoryType::RejectionPattern, Some("src/api/**")),
            Scope::Repository
        );
        assert_eq!(scope(MemoryType::RejectionPattern, None), Scope::Repository);
        assert_eq!(scope(MemoryType::Decision, None), Scope::Repository);
        // `org_types = []` keeps every memory in its repository.
        assert_eq!(
            Scope::default_for(MemoryType::DeveloperPattern, None, &[]),
            Scope::Repository
        );
        // Rows written before scopes existed are the repository's.
        let old: Memory = serde_json::from_value(serde_json::json!({
            "id": "m_0000000000000001", "type": "decision", "title": "t", "content": "c",
            "source": "manual", "created_at": 1, "updated_at": 1, "valid_from": 1,
            "confidence": 0.5,
        }))
        .unwrap();
        assert_eq!(
            (old.scope, old.rule.file_pattern),
            (Scope::Repository, None)
        );
    }

    #[test]
    fn anchors_written_in_another_repository_match_by_symbol_names_only() {
        let mut memory = Memory::new(
            "m_0000000000000001".into(),
            MemoryType::RejectionPattern,
            "t".into(),
            "Close the session after each request.".into(),
            1_000,
        );
        memory.anchors.paths = vec!["src/app.py".into(), "src/db".into()];
        memory.anchors.symbols = vec!["src/app.py::App.handle".into(), "close".into()];
        let strings = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let (app, db_file) = (strings(&["src/app.py"]), strings(&["src/db/pool.py"]));
        let none = Vec::new();
        // In the repository it was written in, paths and symbol ids match.
        assert!(memory.anchors.on_any(&app, &none, false));
        assert!(memory.anchors.on_any(&db_file, &none, false));
        assert!(
            memory
                .anchors
                .on_any(&none, &strings(&["src/app.py::App.handle"]), false)
        );
        assert!(
            !memory
                .anchors
                .on_any(&none, &strings(&["lib/web.py::App.handle"]), false)
        );
        // Elsewhere, a path that happens to exist is not the file it was about; a symbol of
        // the same name is.
        assert!(!memory.anchors.on_any(&app, &strings(&["src/app.py"]), true));
        assert!(!memory.anchors.on_any(&db_file, &none, true));
        assert!(
            memory
                .anchors
                .on_any(&none, &strings(&["lib/web.py::App.handle"]), true)
        );
        assert!(
            memory
                .anchors
                .on_any(&none, &strings(&["lib/db.py::close"]), true)
        );
        assert!(
            !memory
                .anchors
                .on_any(&none, &strings(&["lib/web.py::App"]), true)
        );
        assert_eq!(
            memory.anchors.symbol_names().collect::<Vec<_>>(),
            ["App.handle", "close"]
        );

        // Which memories are anchored elsewhere, and how their origin is named.
        let here = Some("github.com/acme/two");
        assert!(!memory.anchored_elsewhere(here), "a repository's memory");
        assert_eq!(memory.anchors_from(here), None);
        memory.scope = Scope::Org;
        assert!(
            memory.anchored_elsewhere(here),
            "written before origins were kept"
        );
        assert_eq!(memory.anchors_from(here), Some("another repository"));
        memory.anchors.origin = Some("github.com/acme/one".into());
        assert!(memory.anchored_elsewhere(here));
        assert_eq!(memory.anchors_from(here), Some("github.com/acme/one"));
        assert!(!memory.anchored_elsewhere(Some("github.com/acme/one")));
        assert_eq!(memory.anchors_from(Some("github.com/acme/one")), None);
        assert!(memory.anchored_elsewhere(None));
        // Without path or symbol anchors there is nothing to qualify.
        memory.anchors.paths.clear();
        memory.anchors.symbols.clear();
        assert_eq!(memory.anchors_from(here), None);
        // The origin travels in the memory's JSON; rows without one read as before.
        let json = serde_json::to_value(&memory).unwrap();
        assert_eq!(json["origin"], "github.com/acme/one");
        let back: Memory = serde_json::from_value(json).unwrap();
        assert_eq!(back, memory);
    }

    #[test]
    fn the_approval_setting_gates_types_and_only_tightens() {
        use crate::config::ApprovalSetting;
        let word = |w: &str| Approval::parse(&ApprovalSetting::Word(w.to_string()));
        let types = |t: &[&str]| {
            Approval::parse(&ApprovalSetting::Types(
                t.iter().map(|s| s.to_string()).collect(),
            ))
        };
        let all = word("required").unwrap();
        assert!(MemoryType::ALL.iter().all(|&k| all.gates(k)));
        let off = word("off").unwrap();
        assert!(MemoryType::ALL.iter().all(|&k| !off.gates(k)));
        assert!(!Approval::default().gates(MemoryType::Decision));
        let some = types(&["decision", "project-pattern"]).unwrap();
        assert!(some.gates(MemoryType::Decision) && some.gates(MemoryType::ProjectPattern));
        assert!(!some.gates(MemoryType::RiskModule));
        assert_eq!(types(&[]).unwrap(), Approval::Off);
        assert!(
            word("sometimes")
                .unwrap_err()
                .to_string()
                .contains("\"required\"")
        );
        assert!(
            types(&["decisions"])
                .unwrap_err()
                .to_string()
                .contains("decisions")
        );
        // A repository's setting adds to the user's, never lifts it.
        assert_eq!(all.clone().union(off.clone()), Approval::All);
        assert_eq!(off.clone().union(all.clone()), Approval::All);
        assert_eq!(some.clone().union(Approval::Off), some);
        let risk = types(&["risk_module"]).unwrap();
        let both = some.union(risk);
        assert!(both.gates(MemoryType::Decision) && both.gates(MemoryType::RiskModule));
    }

    #[test]
    fn a_memory_is_stated_when_its_text_last_changed() {
        let mut memory = Memory::new(
            "m_0000000000000001".into(),
            MemoryType::Decision,
            "t".into(),
            "Use UTC.".into(),
            1_000,
        );
        memory.anchors.symbols = vec!["src/time.py::now".into(), "src/time.py::today".into()];
        memory.anchors.paths = vec!["src/db".into()];
        assert_eq!(memory.anchors.files(), ["src/db", "src/time.py"]);
        assert_eq!(memory.stated_at(), 1_000);
        let revision = |at: i64, content: &str| Revision {
            at,
            event: Action::Update,
            title: "t".into(),
            content: content.into(),
            by: None,
            note: None,
        };
        // The text changed at 2,000; at 3,000 only its anchors moved.
        memory.history = vec![
            revision(2_000, "Use UTC."),
            revision(3_000, "Use UTC everywhere."),
        ];
        memory.content = "Use UTC everywhere.".into();
        assert_eq!(memory.stated_at(), 2_000);
    }
}
