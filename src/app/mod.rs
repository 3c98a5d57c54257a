//! The use cases of cairn, one method of [`Cairn`] each: a plain request in, an answer out.
//! The CLI and the MCP server are adapters over them: they map their arguments to requests
//! and answers to text or structured content, and hold no behaviour of their own.
//!
//! The service one process holds: the repository, a snapshot of its stored graph (reloaded
//! when an index run writes a new generation), the memories, and the work a write leaves to
//! do after answering. The embedded store admits one process at a time, so readers open it
//! only to load a snapshot and close it again: `cairn index` can run while `cairn serve` is up.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use tokio::sync::Mutex;

use crate::config::Repo;
use crate::context::{Freshness, MemoryNote};
use crate::graph::Graph;
use crate::graph::score::Access;
use crate::history::{CommitInfo, History, StoredHistory};
use crate::memory::{Memories, SemanticSettings};
use crate::storage::{FileStamp, IndexMeta, Store};

mod attention;
mod bootstrap;
mod context;
mod decisions;
mod doctor;
mod guidelines;
mod index;
mod labels;
mod learn;
mod learn_repo;
mod memory;
mod phrase;
mod recurring;
pub mod render;
mod review;
mod revise;
mod status;
mod team;

pub use attention::{Attention, AttentionRequest, Changed, Duplicate, Gone, Listed};
pub use bootstrap::{Bootstrap, BootstrapRequest, Seeded};
pub use context::{ContextRequest, ExpandRequest, Expanded};
pub use decisions::{DecideManyRequest, MAX_DECIDED};
pub use doctor::{Check, Doctor, DoctorRequest, Registrations, Verdict};
pub use guidelines::{
    CategoryBrief, Evidence, GuidelineBrief, GuidelineChangeRequest, ProposeRequest, SectionText,
};
pub use index::IndexRequest;
pub use labels::{
    Condition, Entity, EntityKind, FindRequest, LabelFilter, LearnRequest, MAX_FOUND,
    MAX_LEARNINGS, MetadataCondition, RewriteRequest, SelectRequest, Selected,
};
pub use learn::{DecidedBy, LearnProgress, LearnReviewsRequest, LearnedReviews, SkippedGroup};
pub use learn_repo::{LearnRepoRequest, LearnedRepo, RepoCounts, RepoProposal};
pub use memory::{
    DecideRequest, Decided, ExportRequest, Exported, ForgetRequest, Forgotten, ImportRequest,
    ListRequest, MemoryHistory, MemoryList, MemoryRequest, OrgTypes, RememberRequest, SearchAnswer,
    SearchBody, SearchRequest, Shared, WriteLabels, asked_type, write_labels,
};
pub use phrase::PhraseBrief;
pub use recurring::Proposed;
pub use render::Text;
pub use review::{
    Addressed, AddressedRequest, AuthorRecord, Learning, RecordReviewRequest, ReviewHistory,
    ReviewRequest, Rules, RulesRequest,
};
pub use revise::{Chain, ReviseRequest};
pub use status::{DaemonStatus, Status, TeamLinks, TeamState};
pub use team::{
    AddMemberRequest, MemberAdded, MemberRemoved, Members, MembersRequest, PasswordRotated,
    RemoveMemberRequest, RotatePasswordRequest, SyncRequest, Synced, TeamInit, TeamInitRequest,
    TrustRequest, Trusted, UntrustRequest, Untrusted, team_line,
};

/// How long a server keeps the memory store open after using it.
const MEMORY_LINGER: Duration = Duration::from_secs(1);

/// How long a freshness check is reused.
const FRESHNESS_TTL: Duration = Duration::from_secs(2);

/// How long a published graph must stay current before its standing and freshness are worked
/// out ahead of the first pack that needs them.
const STANDING_AFTER: Duration = Duration::from_secs(1);

/// A loaded view of the store.
pub struct Snapshot {
    pub graph: Arc<Graph>,
    pub meta: IndexMeta,
    /// The commit history as the last index run stored it, and the HEAD it was mined at.
    pub commits: Vec<CommitInfo>,
    pub history_head: Option<String>,
    stamps: Vec<FileStamp>,
    generation: Option<String>,
    /// Unique per snapshot in this process (cache keys).
    serial: u64,
    /// What the graph alone decides of a context pack without a focus, worked out when first
    /// asked (`standing`).
    standing: std::sync::OnceLock<crate::context::Standing>,
    /// The words of the graph's documents, for a focused pack, made when first asked
    /// (`lexicon`) from the previous snapshot's where files say the same.
    lexicon: std::sync::OnceLock<Arc<crate::context::Lexicon>>,
    previous_lexicon: std::sync::Mutex<Option<Arc<crate::context::Lexicon>>>,
}

fn next_serial() -> u64 {
    static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

impl Snapshot {
    /// A snapshot of an index held in memory (the daemon's), not loaded from the store.
    pub fn resident(
        graph: Arc<Graph>,
        meta: IndexMeta,
        stamps: Vec<FileStamp>,
        commits: Vec<CommitInfo>,
        history_head: Option<String>,
    ) -> Snapshot {
        Snapshot {
            graph,
            meta,
            commits,
            history_head,
            stamps,
            generation: None,
            serial: next_serial(),
            standing: Default::default(),
            lexicon: Default::default(),
            previous_lexicon: Default::default(),
        }
    }

    /// What the graph alone decides of a context pack without a focus: worked out on the
    /// first call, so later packs read only the nodes they show.
    pub fn standing(&self) -> &crate::context::Standing {
        self.standing
            .get_or_init(|| crate::context::Standing::of(&self.graph))
    }

    /// The words of the graph's documents: made on the first focused pack, splitting only
    /// the files that differ from the previous snapshot's.
    pub fn lexicon(&self) -> &crate::context::Lexicon {
        self.lexicon.get_or_init(|| {
            let previous = self
                .previous_lexicon
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take();
            Arc::new(crate::context::Lexicon::of(
                &self.graph,
                previous.as_deref(),
            ))
        })
    }

    /// Whether an earlier snapshot's lexicon was made (a focused pack asked for one).
    fn follows_a_lexicon(&self) -> bool {
        self.previous_lexicon
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some()
    }

    /// Starts this (not yet shared) snapshot's lexicon from `before`'s.
    fn follows(mut self, before: Option<&Snapshot>) -> Snapshot {
        if let Some(before) = before {
            let lexicon = before.lexicon.get().cloned().or_else(|| {
                before
                    .previous_lexicon
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .clone()
            });
            *self
                .previous_lexicon
                .get_mut()
                .unwrap_or_else(|e| e.into_inner()) = lexicon;
        }
        self
    }
}

/// Why a use case could not answer; most are failures the caller can fix (bad target, bad
/// budget, no index yet), which MCP turns into a tool result the model reads.
#[derive(Debug, thiserror::Error)]
pub enum AskError {
    #[error(transparent)]
    Target(#[from] crate::context::TargetError),
    #[error(transparent)]
    Budget(#[from] crate::answer::BudgetTooSmall),
    #[error("this repository has not been indexed yet: run `cairn index` in {0}")]
    NotIndexed(PathBuf),
    #[error("{0:#}")]
    Store(anyhow::Error),
    #[error(transparent)]
    Memory(#[from] crate::memory::MemoryError),
    #[error(transparent)]
    Diff(#[from] crate::review::DiffError),
    #[error(transparent)]
    Git(#[from] crate::review::git::GitError),
    #[error(transparent)]
    TooLarge(#[from] crate::review::TooLarge),
    #[error("{0}")]
    Review(String),
    #[error("{0:#}")]
    Index(anyhow::Error),
    #[error("{0:#}")]
    Team(anyhow::Error),
}

/// A review record or guideline change that cannot be stored: refused as a memory write is.
impl From<crate::review::records::Invalid> for AskError {
    fn from(invalid: crate::review::records::Invalid) -> AskError {
        AskError::Memory(invalid.into())
    }
}

/// The use cases of one repository, and what they share: the snapshot of the code graph, the
/// memories, the assistant activity, and the work writes leave to do after answering.
pub struct Cairn {
    pub repo: Repo,
    /// The repository's memories.
    pub memories: Arc<Memories>,
    /// The organisation's memories, found on first use (see [`Cairn::org_memories`]).
    org: std::sync::OnceLock<OrgStore>,
    /// How the memory stores are opened (for the organisation's, opened later).
    semantic: SemanticSettings,
    linger: Option<Duration>,
    snapshot: Mutex<Option<Arc<Snapshot>>>,
    freshness: Arc<Mutex<Option<CheckedFreshness>>>,
    /// The commit history at the current HEAD (stored window plus commits mined since).
    history: Mutex<Option<HistoryAt>>,
    /// Assistant activity per node, from the hook's event file.
    tally: std::sync::Mutex<crate::events::Tally>,
    /// Snapshots are published by the daemon that holds the index, never loaded.
    resident: bool,
    /// A long-running server (`cairn serve`, the daemon) rather than one command.
    serving: bool,
    /// Work writes left to do after answering: the vectors of new memories.
    background: std::sync::Mutex<tokio::task::JoinSet<()>>,
    /// A memory search read memories whose statistics are not written back yet.
    unwritten_reads: AtomicBool,
}

fn read_generation(repo: &Repo) -> Option<String> {
    std::fs::read_to_string(crate::datadir::DataDir::at(&repo.data_dir).generation()).ok()
}

impl Cairn {
    /// The service for `repo`; `model_dir` overrides the configured embedding model.
    pub fn new(repo: Repo) -> Arc<Cairn> {
        Cairn::with_model_dir(repo, None)
    }

    /// The service, with the semantic layer's model directory given explicitly (flag or
    /// environment) rather than from `cairn.toml` or the default location.
    pub fn with_model_dir(repo: Repo, model_dir: Option<PathBuf>) -> Arc<Cairn> {
        Cairn::build(repo, model_dir, None, false)
    }

    /// The service for a long-running server: the memory store stays open for a second
    /// after each use, so a burst of `remember` calls opens it once.
    pub fn serving(repo: Repo, model_dir: Option<PathBuf>) -> Arc<Cairn> {
        Cairn::build(repo, model_dir, Some(MEMORY_LINGER), false)
    }

    /// The service inside the daemon: snapshots come from [`Cairn::publish`].
    pub fn resident(repo: Repo, model_dir: Option<PathBuf>) -> Arc<Cairn> {
        Cairn::build(repo, model_dir, Some(MEMORY_LINGER), true)
    }

    fn build(
        repo: Repo,
        model_dir: Option<PathBuf>,
        linger: Option<Duration>,
        resident: bool,
    ) -> Arc<Cairn> {
        let semantic = SemanticSettings::resolve(
            model_dir.or_else(|| repo.configured_model_dir()),
            repo.settings.memory.semantic,
        );
        let memories = Memories::for_setup(
            &repo.root,
            &repo.data_dir,
            semantic.clone(),
            linger,
            &repo.team,
        );
        let tally = crate::events::Tally::new(crate::datadir::DataDir::at(&repo.data_dir).events());
        Arc::new(Cairn {
            memories,
            org: std::sync::OnceLock::new(),
            semantic,
            linger,
            repo,
            snapshot: Mutex::new(None),
            freshness: Arc::new(Mutex::new(None)),
            history: Mutex::new(None),
            tally: std::sync::Mutex::new(tally),
            resident,
            serving: linger.is_some(),
            background: std::sync::Mutex::new(tokio::task::JoinSet::new()),
            unwritten_reads: AtomicBool::new(false),
        })
    }

    /// Replaces the snapshot (the daemon, after each refresh of its index).
    pub async fn publish(&self, snapshot: Snapshot) {
        let mut current = self.snapshot.lock().await;
        let fresh = Arc::new(snapshot.follows(current.as_deref()));
        let old = current.replace(fresh.clone());
        drop(current);
        *self.freshness.lock().await = None;
        // Freeing a large graph takes a while: not on the way to the next answer.
        if let Some(old) = old {
            tokio::task::spawn_blocking(move || drop(old));
        }
        // What a pack needs of the new graph, and how fresh it is, worked out once saves pause
        // (not after every save of a burst), so the next `get_context` does not wait for them.
        let published = Arc::downgrade(&fresh);
        drop(fresh);
        let (repo, cache) = (self.repo.clone(), self.freshness.clone());
        tokio::spawn(async move {
            tokio::time::sleep(STANDING_AFTER).await;
            if let Some(snapshot) = published.upgrade() {
                let graph = snapshot.clone();
                let _ = tokio::task::spawn_blocking(move || {
                    graph.standing();
                    // Once a focused pack asked for words, the next graph's are kept ready.
                    if graph.follows_a_lexicon() {
                        graph.lexicon();
                    }
                })
                .await;
                check_freshness(repo, snapshot, cache).await;
            }
        });
    }

    /// Assistant activity per node id (reads, edits, searches recorded by `cairn hook`).
    pub fn access(&self) -> Arc<HashMap<String, Access>> {
        self.tally.lock().expect("no tally reader panics").current()
    }

    /// The current snapshot, reloaded if the store changed since it was taken.
    pub async fn snapshot(&self) -> Result<Arc<Snapshot>, AskError> {
        let mut current = self.snapshot.lock().await;
        if self.resident {
            return current
                .clone()
                .ok_or_else(|| AskError::NotIndexed(self.repo.root.clone()));
        }
        let generation = read_generation(&self.repo);
        if generation.is_none() {
            return Err(AskError::NotIndexed(self.repo.root.clone()));
        }
        if let Some(snapshot) = current.as_ref()
            && snapshot.generation == generation
        {
            return Ok(snapshot.clone());
        }
        let loaded = Arc::new(
            load_snapshot(&self.repo.store_dir(), generation)
                .await
                .map_err(AskError::Store)?
                .follows(current.as_deref()),
        );
        *current = Some(loaded.clone());
        *self.freshness.lock().await = None;
        Ok(loaded)
    }

    /// Which indexed files changed on disk and where HEAD is; cached for a moment.
    pub async fn freshness(&self, snapshot: &Arc<Snapshot>) -> Freshness {
        let mut cached = self.freshness.lock().await;
        // Keyed by the snapshot too: an answer still on an older snapshot must not leave its
        // view for the next one.
        let key = snapshot.serial;
        if let Some(checked) = cached.as_mut()
            && checked.serial == key
        {
            if checked.at.elapsed() < FRESHNESS_TTL {
                return checked.freshness.clone();
            }
            // The daemon keeps the index in step with the tree, so a check is rarely news (and
            // stats every file): answered from the last one, and made again off the way.
            if self.resident {
                checked.at = Instant::now();
                let (repo, cache) = (self.repo.clone(), self.freshness.clone());
                tokio::spawn(check_freshness(repo, snapshot.clone(), cache));
                return checked.freshness.clone();
            }
        }
        let fresh = freshness(&self.repo, snapshot);
        *cached = Some(CheckedFreshness {
            at: Instant::now(),
            serial: key,
            freshness: fresh.clone(),
        });
        fresh
    }

    /// The code graph, if the repository has been indexed (for checking memory anchors).
    pub async fn graph_if_indexed(&self) -> Option<Arc<Snapshot>> {
        self.snapshot().await.ok()
    }

    /// Team mode: says when answers come from the last synced copy (the server is away).
    pub async fn staleness(&self) -> Option<String> {
        self.memories.staleness().await
    }

    /// The organisation's memories: in embedded mode a store per organisation on this
    /// machine, beside the repositories' (`CAIRN_ORGS_DIR/<org>-<hash>`), for a repository
    /// whose organisation is known (`[team] org` or its git remote); in team mode the
    /// organisation's database on the team server. `Err` says why there is none.
    pub(crate) fn org_memories(&self) -> Result<&Arc<Memories>, &str> {
        match self.org.get_or_init(|| self.open_org()) {
            OrgStore::Open(memories) => Ok(memories),
            OrgStore::None(why) => Err(why),
        }
    }

    fn open_org(&self) -> OrgStore {
        match (self.open_org_store(), self.repo.key()) {
            (OrgStore::Open(memories), Some(here)) => {
                OrgStore::Open(Memories::read_from(memories, here))
            }
            (store, _) => store,
        }
    }

    /// The organisation's store, as [`Cairn::open_org`] finds it.
    fn open_org_store(&self) -> OrgStore {
        use crate::config::team::TeamSetup;
        match &self.repo.team {
            TeamSetup::Off => {}
            TeamSetup::Broken(why) => return OrgStore::None(why.clone()),
            // Team mode: the organisation's database on the same server, as the same member.
            TeamSetup::On(config) => {
                let org = TeamSetup::On(Arc::new(config.organisation()));
                return OrgStore::Open(Memories::for_setup(
                    &self.repo.root,
                    &self.repo.data_dir,
                    self.semantic.clone(),
                    self.linger,
                    &org,
                ));
            }
        }
        let Some(dir) = self.repo.org_dir() else {
            return OrgStore::None(
                "this repository has no organisation (no git remote and no [team] org in cairn.toml)".to_string(),
            );
        };
        let memories = match self.linger {
            Some(linger) => {
                Memories::lingering(&self.repo.root, &dir, self.semantic.clone(), linger)
            }
            None => Memories::open(&self.repo.root, &dir, self.semantic.clone()),
        };
        OrgStore::Open(memories)
    }

    /// The repository's identity among its organisation's (see [`Repo::key`]), when it
    /// reads an organisation's memories: an organisation memory written in another
    /// repository is shown with its origin, and its paths are not this repository's.
    pub(crate) fn here(&self) -> Option<&str> {
        self.org_memories().ok()?.here()
    }

    /// A memory as the context, briefings and expansions show it (see [`note_of`]).
    pub(crate) fn note(&self, memory: &crate::memory::Memory) -> MemoryNote {
        note_of(memory, self.here())
    }

    /// A memory as [`Cairn::note`] shows it, flagged when its anchored code changed in
    /// `history` after it was written.
    pub(crate) fn checked_note(
        &self,
        memory: &crate::memory::Memory,
        history: &History,
    ) -> MemoryNote {
        MemoryNote {
            code_changed_since: code_changed_since(memory, history, self.here()),
            ..self.note(memory)
        }
    }

    /// The repository's memories and, when there is one, the organisation's.
    fn every_store(&self) -> Vec<Arc<Memories>> {
        let mut stores = vec![self.memories.clone()];
        stores.extend(self.org_memories().ok().cloned());
        stores
    }

    /// Computes the vectors of newly written memories after the write has answered (a write
    /// must not wait ~15 ms per text); [`Cairn::finish`] waits for them.
    fn queue_embedding(&self) {
        let stores = self.every_store();
        let mut background = self.background.lock().expect("no holder panics");
        while background.try_join_next().is_some() {}
        background.spawn(async move {
            for memories in stores {
                if let Err(e) = memories.embed_pending().await {
                    tracing::warn!("embedding new memories failed: {e}");
                }
            }
        });
    }

    /// Counts the memories an answer shows (their ids in its text) as read, in the store that
    /// holds each: a briefing, a context pack or an expansion serves them as a search does.
    async fn count_shown(&self, text: &str) {
        let ids = memory_ids_in(text);
        if ids.is_empty() {
            return;
        }
        let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
        self.memories.count_reads(&ids).await;
        if let Ok(org) = self.org_memories() {
            org.count_reads(&ids).await;
        }
        self.note_reads();
    }

    /// Notes that a memory search read memories: a server writes read statistics back now
    /// and then, one command when it finishes.
    fn note_reads(&self) {
        if self.serving {
            let stores = self.every_store();
            tokio::spawn(async move {
                for memories in stores {
                    if let Err(e) = memories.flush_access_now_and_then().await {
                        tracing::warn!("writing memory read statistics failed: {e}");
                    }
                }
            });
        } else {
            self.unwritten_reads.store(true, Ordering::Relaxed);
        }
    }

    /// Finishes what answers left behind (vectors of new memories, read statistics) and
    /// closes the memory store: what a command awaits before it exits and a server on
    /// shutdown.
    pub async fn finish(&self) {
        let mut background =
            std::mem::take(&mut *self.background.lock().expect("no holder panics"));
        while let Some(done) = background.join_next().await {
            if let Err(e) = done {
                tracing::error!("computing vectors of new memories stopped: {e}");
            }
        }
        let flush = self.serving || self.unwritten_reads.swap(false, Ordering::Relaxed);
        // Only a store this run opened has anything to write back or close.
        let stores = match self.org.get() {
            Some(OrgStore::Open(org)) => vec![self.memories.clone(), org.clone()],
            _ => vec![self.memories.clone()],
        };
        for memories in stores {
            if flush && let Err(e) = memories.flush_access().await {
                tracing::warn!("writing memory read statistics failed: {e}");
            }
            memories.close().await;
        }
    }

    /// The commit history at the current HEAD: the stored window, plus commits made since
    /// the last index run (read once per HEAD, not stored by readers).
    async fn commit_history(&self, snapshot: &Snapshot) -> Arc<History> {
        if !self.repo.is_git {
            return Arc::new(History::default());
        }
        let head = crate::history::head(&self.repo.root);
        let mut cached = self.history.lock().await;
        if let Some(known) = cached.as_ref()
            && known.head == head
        {
            return known.history.clone();
        }
        let commits = if head == snapshot.history_head {
            snapshot.commits.clone()
        } else {
            let max = self.repo.settings.history.max_commits;
            let root = self.repo.root.clone();
            let stored = snapshot.commits.clone();
            let caught = off_runtime(move || crate::history::catch_up(&root, stored, max))
                .await
                .and_then(|caught| Ok(caught.map_err(crate::review::git::GitError::from)?));
            match caught {
                Ok(caught) => caught.into_commits(),
                Err(e) => {
                    tracing::warn!("history not refreshed: {e}");
                    snapshot.commits.clone()
                }
            }
        };
        let history = Arc::new(History::new(commits));
        *cached = Some(HistoryAt {
            head,
            history: history.clone(),
        });
        history
    }
}

/// A freshness check, reused for a moment ([`FRESHNESS_TTL`]) by answers on the same snapshot.
struct CheckedFreshness {
    /// When it was made.
    at: Instant,
    /// The serial of the snapshot it was made for.
    serial: u64,
    freshness: Freshness,
}

/// The commit history read at a HEAD (none before the first commit).
struct HistoryAt {
    head: Option<String>,
    history: Arc<History>,
}

/// The organisation's memories, or why this repository has none.
enum OrgStore {
    Open(Arc<Memories>),
    None(String),
}

/// Runs heavy review work (git walks, diffing, parsing, rendering) on the blocking pool, so
/// the runtime stays free to answer others meanwhile.
async fn off_runtime<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, AskError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| match e.try_into_panic() {
            Ok(panic) => std::panic::resume_unwind(panic),
            Err(e) => AskError::Review(format!("the review stopped: {e}")),
        })
}

/// The memory ids (`m_` and 16 hex digits, as whole words) a text names.
fn memory_ids_in(text: &str) -> std::collections::BTreeSet<String> {
    let bytes = text.as_bytes();
    let mut out = std::collections::BTreeSet::new();
    for (at, _) in text.match_indices("m_") {
        let before = at.checked_sub(1).map(|i| bytes[i]);
        let id = text.get(at..at + 18);
        let after = bytes.get(at + 18);
        let word = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_';
        if before.is_some_and(|b| word(&b)) || after.is_some_and(word) {
            continue;
        }
        if let Some(id) = id.filter(|id| crate::memory::model::is_memory_id(id)) {
            out.insert(id.to_string());
        }
    }
    out
}

/// Serialises `value` with its keys in alphabetical order, as JSON built with
/// `serde_json::json!` has it (the status answers have always been printed so).
fn sorted<T: serde::Serialize, S: serde::Serializer>(
    value: &T,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::{Error as _, Serialize as _};
    serde_json::to_value(value)
        .map_err(S::Error::custom)?
        .serialize(serializer)
}

/// A memory as the context and expansions show it, read by the repository `here` (see
/// [`Cairn::here`]): an organisation memory anchored in another repository carries its
/// origin.
pub fn note_of(memory: &crate::memory::Memory, here: Option<&str>) -> MemoryNote {
    MemoryNote {
        id: memory.id.clone(),
        kind: memory.kind.to_string(),
        content: memory.content.clone(),
        anchors: memory
            .anchors
            .all()
            .chain(memory.rule.file_pattern.as_ref())
            .cloned()
            .collect(),
        code_changed_since: None,
        scope: (memory.scope == crate::memory::Scope::Org).then(|| "org".to_string()),
        origin: memory.anchors_from(here).map(str::to_string),
    }
}

/// The newest commit in `history` (the history of the repository `here`) that changed a
/// memory's anchored files after its text was written; none for a memory anchored in
/// another repository, whose files are not in this history.
pub fn code_changed_since(
    memory: &crate::memory::Memory,
    history: &History,
    here: Option<&str>,
) -> Option<crate::context::CodeChanged> {
    if memory.anchored_elsewhere(here) {
        return None;
    }
    crate::context::CodeChanged::of(history, &memory.anchors.files(), memory.stated_at())
}

/// The commit history the store holds and the HEAD it was mined at.
pub async fn stored_history(store_dir: &Path) -> anyhow::Result<StoredHistory> {
    let store = Store::open(store_dir)
        .await
        .context("cannot open the index")?;
    let history = store.load_history().await;
    store.close().await;
    Ok(history?)
}

async fn load_snapshot(store_dir: &Path, generation: Option<String>) -> anyhow::Result<Snapshot> {
    let store = Store::open(store_dir)
        .await
        .context("cannot open the index")?;
    let loaded = async {
        Ok::<_, crate::storage::StoreError>((
            store.load_graph().await?,
            store.meta().await?.unwrap_or_default(),
            store.file_stamps().await?,
            store.load_history().await?,
        ))
    }
    .await;
    store.close().await;
    let (graph, meta, stamps, history) = loaded?;
    Ok(Snapshot {
        graph: Arc::new(graph),
        meta,
        commits: history.commits,
        history_head: history.head,
        stamps,
        generation,
        serial: next_serial(),
        standing: Default::default(),
        lexicon: Default::default(),
        previous_lexicon: Default::default(),
    })
}

/// Checks the tree against `snapshot` off the runtime, and keeps the check unless one of a newer
/// snapshot is kept.
async fn check_freshness(
    repo: Repo,
    snapshot: Arc<Snapshot>,
    cache: Arc<Mutex<Option<CheckedFreshness>>>,
) {
    let serial = snapshot.serial;
    let Ok(fresh) = tokio::task::spawn_blocking(move || freshness(&repo, &snapshot)).await else {
        return;
    };
    let mut cached = cache.lock().await;
    if cached.as_ref().is_none_or(|c| c.serial <= serial) {
        *cached = Some(CheckedFreshness {
            at: Instant::now(),
            serial,
            freshness: fresh,
        });
    }
}

fn freshness(repo: &Repo, snapshot: &Snapshot) -> Freshness {
    let files = crate::fsutil::repo::RepoFiles::open(&repo.root).ok();
    let mut changed: Vec<String> = snapshot
        .stamps
        .iter()
        .filter(|stamp| match files.as_ref().map(|f| f.stat(&stamp.path)) {
            Some(Ok(now)) => now.size != stamp.size || now.mtime_ns != stamp.mtime_ns,
            _ => true,
        })
        .map(|stamp| stamp.path.clone())
        .collect();
    changed.sort();
    let count = changed.len();
    changed.truncate(5);
    Freshness {
        indexed_commit: snapshot.meta.commit.clone(),
        head_commit: if repo.is_git {
            crate::history::head(&repo.root)
        } else {
            None
        },
        indexed_at: snapshot.meta.indexed_at,
        changed_files: changed,
        changed_count: count,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn memory_ids_are_found_as_whole_words() {
        let text = "- [decision] m_0123456789abcdef: cents (m_fedcba9876543210)\n\
                    xm_0123456789abcdee m_0123456789abcdefa m_0123 m_0123456789abcdeg";
        let ids: Vec<String> = super::memory_ids_in(text).into_iter().collect();
        assert_eq!(ids, ["m_0123456789abcdef", "m_fedcba9876543210"]);
    }

    #[tokio::test]
    async fn a_published_graph_has_its_words_ready_once_a_focused_pack_asked_for_words() {
        use super::*;
        let tree = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let repo = Repo::discover(tree.path(), Some(data.path())).unwrap();
        let cairn = Cairn::resident(repo, None);
        let publish = |name: &str| {
            let text = format!("def {name}():\n    return 1\n");
            let graph = crate::context::testing::graph_of(&[("a.py", &text), ("b.py", "x = 1\n")]);
            let snapshot =
                Snapshot::resident(Arc::new(graph), IndexMeta::default(), vec![], vec![], None);
            cairn.publish(snapshot)
        };
        publish("first").await;
        publish("second").await;
        let second = cairn.snapshot().await.unwrap();
        tokio::time::sleep(STANDING_AFTER + Duration::from_millis(500)).await;
        // No focused pack yet: no words are split ahead.
        assert!(!second.follows_a_lexicon());
        assert!(second.lexicon.get().is_none());
        second.lexicon();
        publish("third").await;
        let third = cairn.snapshot().await.unwrap();
        assert!(third.follows_a_lexicon());
        tokio::time::sleep(STANDING_AFTER + Duration::from_millis(500)).await;
        assert!(third.lexicon.get().is_some(), "made once saves paused");
        assert!(!third.follows_a_lexicon(), "the earlier words are let go");
    }

    #[tokio::test]
    async fn the_daemon_answers_freshness_from_its_last_check_and_checks_again_off_the_way() {
        use super::*;
        use std::os::unix::fs::MetadataExt;
        let tree = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        let file = tree.path().join("app.py");
        std::fs::write(&file, "x = 1\n").unwrap();
        let stat = std::fs::metadata(&file).unwrap();
        let stamp = FileStamp {
            path: "app.py".to_string(),
            mtime_ns: stat.mtime() * 1_000_000_000 + stat.mtime_nsec(),
            size: stat.len(),
        };
        let repo = Repo::discover(tree.path(), Some(data.path())).unwrap();
        let cairn = Cairn::resident(repo, None);
        let started = Instant::now();
        let graph = Arc::new(crate::graph::Graph::default());
        cairn
            .publish(Snapshot::resident(
                graph,
                IndexMeta::default(),
                vec![stamp],
                vec![],
                None,
            ))
            .await;
        let snapshot = cairn.snapshot().await.unwrap();
        let changed = || async { cairn.freshness(&snapshot).await.changed_count };
        // The check made once saves paused, a moment after publishing.
        tokio::time::sleep(STANDING_AFTER + Duration::from_millis(500)).await;
        assert_eq!(changed().await, 0);
        std::fs::write(&file, "x = 22\n").unwrap();
        // Past the check's lifetime the last check still answers, at once...
        tokio::time::sleep(
            (started + STANDING_AFTER + FRESHNESS_TTL + Duration::from_millis(300))
                .saturating_duration_since(Instant::now()),
        )
        .await;
        assert_eq!(changed().await, 0);
        // ...and the one it started off the way answers soon after.
        let deadline = Instant::now() + Duration::from_secs(20);
        while changed().await != 1 {
            assert!(Instant::now() < deadline, "the change was never seen");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        cairn.finish().await;
    }
}
