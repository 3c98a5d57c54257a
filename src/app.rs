//! The cairn service one process holds: the repository, a snapshot of its stored graph
//! (reloaded when an index run writes a new generation), and the answers built from it.
//!
//! The embedded store admits one process at a time, so readers open it only to load a
//! snapshot and close it again: `cairn index` can run while `cairn serve` is up.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use tokio::sync::Mutex;

use crate::config::Repo;
use crate::context::{self, ContextReport, ExpandReport, Freshness, Include, MemoryNote, Scorer};
use crate::graph::score::Access;
use crate::graph::{Graph, Node, NodeKind};
use crate::index;
use crate::memory::{self, Memories, MemoryType, SemanticSettings};
use crate::review::briefing::{self, ReviewReport};
use crate::review::history::{CommitInfo, History};
use crate::review::{self, git::Git};
use crate::storage::{FileStamp, IndexMeta, Store};

/// How long a server keeps the memory store open after using it.
const MEMORY_LINGER: Duration = Duration::from_secs(1);

/// How long a freshness check is reused.
const FRESHNESS_TTL: Duration = Duration::from_secs(2);

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
        }
    }
}

/// A tool-level failure the caller can fix (bad target, bad budget, no index yet).
#[derive(Debug, thiserror::Error)]
pub enum AskError {
    #[error(transparent)]
    Target(#[from] context::TargetError),
    #[error(transparent)]
    Budget(#[from] context::BudgetTooSmall),
    #[error("this repository has not been indexed yet: run `cairn index` in {0}")]
    NotIndexed(PathBuf),
    #[error("{0:#}")]
    Store(anyhow::Error),
    #[error(transparent)]
    Memory(#[from] memory::MemoryError),
    #[error(transparent)]
    Diff(#[from] review::DiffError),
    #[error(transparent)]
    Git(#[from] review::git::GitError),
    #[error(transparent)]
    TooLarge(#[from] review::TooLarge),
    #[error("{0}")]
    Review(String),
}

/// What to review: a unified diff, or git revisions; nothing means the working tree (staged
/// and unstaged changes) against HEAD.
#[derive(Debug, Clone, Default)]
pub struct ReviewRequest {
    pub diff: Option<String>,
    pub base: Option<String>,
    pub head: Option<String>,
    pub author: Option<String>,
    pub max_tokens: Option<usize>,
}

/// The service.
pub struct Cairn {
    pub repo: Repo,
    pub memories: Arc<Memories>,
    snapshot: Mutex<Option<Arc<Snapshot>>>,
    freshness: Mutex<Option<(Instant, u64, Freshness)>>,
    /// The commit history at the current HEAD (stored window plus commits mined since).
    history: Mutex<Option<(Option<String>, Arc<History>)>>,
    /// Assistant activity per node, from the hook's event file.
    tally: std::sync::Mutex<crate::events::Tally>,
    /// Snapshots are published by the daemon that holds the index, never loaded.
    resident: bool,
}

/// The marker file an index run rewrites after every commit to the store.
pub fn generation_path(repo: &Repo) -> PathBuf {
    repo.data_dir.join("generation")
}

fn read_generation(repo: &Repo) -> Option<String> {
    std::fs::read_to_string(generation_path(repo)).ok()
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
        let memories =
            Memories::for_setup(&repo.root, &repo.data_dir, semantic, linger, &repo.team);
        let tally = crate::events::Tally::new(crate::daemon::files::events_path(&repo.data_dir));
        Arc::new(Cairn {
            memories,
            repo,
            snapshot: Mutex::new(None),
            freshness: Mutex::new(None),
            history: Mutex::new(None),
            tally: std::sync::Mutex::new(tally),
            resident,
        })
    }

    /// Replaces the snapshot (the daemon, after each refresh of its index).
    pub async fn publish(&self, snapshot: Snapshot) {
        let old = self.snapshot.lock().await.replace(Arc::new(snapshot));
        *self.freshness.lock().await = None;
        // Freeing a large graph takes a while: not on the way to the next answer.
        if let Some(old) = old {
            tokio::task::spawn_blocking(move || drop(old));
        }
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
                .map_err(AskError::Store)?,
        );
        *current = Some(loaded.clone());
        *self.freshness.lock().await = None;
        Ok(loaded)
    }

    /// Which indexed files changed on disk and where HEAD is; cached for a moment.
    pub async fn freshness(&self, snapshot: &Snapshot) -> Freshness {
        let mut cached = self.freshness.lock().await;
        // Keyed by the snapshot too: an answer still on an older snapshot must not leave its
        // view for the next one.
        let key = snapshot.serial;
        if let Some((at, of, freshness)) = cached.as_ref()
            && *of == key
            && at.elapsed() < FRESHNESS_TTL
        {
            return freshness.clone();
        }
        let fresh = freshness(&self.repo, snapshot);
        *cached = Some((Instant::now(), key, fresh.clone()));
        fresh
    }

    /// The context pack.
    pub async fn context(
        &self,
        focus: Option<&str>,
        max_tokens: Option<usize>,
    ) -> Result<ContextReport, AskError> {
        let (budget, note) = context::budget(max_tokens, context::DEFAULT_CONTEXT_TOKENS)?;
        let snapshot = self.snapshot().await?;
        let freshness = self.freshness(&snapshot).await;
        let access = self.access();
        let scorer = Scorer::new(&snapshot.graph, &access, index::now());
        let mut notes: Vec<String> = note.into_iter().collect();
        let memories = match self.top_memories(focus).await {
            Ok(memories) => memories,
            Err(error) => {
                notes.push(format!("memories unavailable: {error}"));
                Vec::new()
            }
        };
        Ok(context::context(
            &scorer,
            &self.repo.name(),
            freshness,
            focus,
            &memories,
            budget,
            notes,
        ))
    }

    /// Everything about one file or symbol.
    pub async fn expand(
        &self,
        target: &str,
        include: &[Include],
        max_tokens: Option<usize>,
    ) -> Result<ExpandReport, AskError> {
        let (budget, note) = context::budget(max_tokens, context::DEFAULT_EXPAND_TOKENS)?;
        let snapshot = self.snapshot().await?;
        let node = context::resolve_target(&snapshot.graph, target)?;
        let access = self.access();
        let scorer = Scorer::new(&snapshot.graph, &access, index::now());
        let root = self.repo.root.clone();
        let read = move |node: &Node| read_node_source(&root, node);
        let mut notes: Vec<String> = note.into_iter().collect();
        let wants_memories = include.is_empty() || include.contains(&Include::Memories);
        let memories = if wants_memories {
            let mut symbols = vec![node.id.clone()];
            let mut parent = node.parent.as_deref();
            while let Some(id) = parent {
                symbols.push(id.to_string());
                parent = snapshot.graph.node(id).and_then(|n| n.parent.as_deref());
            }
            let paths = vec![node.path.clone()];
            match self.memories.anchored(&paths, &symbols).await {
                Ok(found) => found.iter().take(20).map(note_of).collect(),
                Err(error) => {
                    notes.push(format!("memories unavailable: {error}"));
                    Vec::new()
                }
            }
        } else {
            Vec::new()
        };
        let history = if include.is_empty() || include.contains(&Include::History) {
            let history = self.history(&snapshot).await;
            file_history(&history, &node.path)
        } else {
            Vec::new()
        };
        Ok(context::expand(
            &scorer,
            node,
            include,
            context::Known {
                memories: &memories,
                history: &history,
            },
            budget,
            &read,
            notes,
        ))
    }

    /// The project memories the context pack shows: those matching the focus first, then the
    /// standing ones (by type, confidence, use and age).
    async fn top_memories(&self, focus: Option<&str>) -> Result<Vec<MemoryNote>, AskError> {
        const SHOWN: usize = 12;
        let mut found = Vec::new();
        if let Some(focus) = focus.filter(|f| !f.trim().is_empty()) {
            found = self
                .memories
                .search(&memory::Query {
                    text: focus.to_string(),
                    limit: SHOWN / 2,
                    keyword_only: true,
                    ..memory::Query::default()
                })
                .await?;
        }
        let standing = self
            .memories
            .search(&memory::Query {
                limit: SHOWN,
                ..memory::Query::default()
            })
            .await?;
        for f in standing {
            if found.len() >= SHOWN {
                break;
            }
            if !found.iter().any(|g| g.memory.id == f.memory.id) {
                found.push(f);
            }
        }
        Ok(found.iter().map(|f| note_of(&f.memory)).collect())
    }

    /// Flags anchors of found memories that the current graph no longer has (the file was
    /// deleted or moved): memories are flagged, never dropped, when their anchor disappears.
    pub async fn flag_gone_anchors(&self, memories: &mut [memory::Memory]) {
        let Some(snapshot) = self.graph_if_indexed().await else {
            return;
        };
        let graph = &snapshot.graph;
        for m in memories {
            let gone: Vec<String> = m
                .paths
                .iter()
                .filter(|p| {
                    graph.node(p).is_none()
                        && !graph.files().any(|f| f.path.starts_with(&format!("{p}/")))
                })
                .chain(m.symbols.iter().filter(|s| graph.node(s).is_none()))
                .filter(|a| !m.unknown_anchors.contains(a))
                .cloned()
                .collect();
            m.unknown_anchors.extend(gone);
        }
    }

    /// The code graph, if the repository has been indexed (for checking memory anchors).
    pub async fn graph_if_indexed(&self) -> Option<Arc<Snapshot>> {
        self.snapshot().await.ok()
    }

    /// Stores a learning, checking its anchors against the code graph when there is one.
    pub async fn remember(&self, new: memory::NewMemory) -> Result<memory::WriteOutcome, AskError> {
        let snapshot = self.graph_if_indexed().await;
        Ok(self
            .memories
            .remember(new, snapshot.as_ref().map(|s| &*s.graph))
            .await?)
    }
}

/// How many files of a change get experts and co-change partners listed.
const HISTORY_FILES: usize = 5;

impl Cairn {
    /// The commit history at the current HEAD: the stored window, plus commits made since
    /// the last index run (read once per HEAD, not stored by readers).
    async fn history(&self, snapshot: &Snapshot) -> Arc<History> {
        if !self.repo.is_git {
            return Arc::new(History::default());
        }
        let head = index::head_commit(&self.repo.root);
        let mut cached = self.history.lock().await;
        if let Some((at, history)) = cached.as_ref()
            && *at == head
        {
            return history.clone();
        }
        let mut commits = snapshot.commits.clone();
        if head != snapshot.history_head {
            let known: std::collections::HashSet<String> =
                commits.iter().map(|c| c.id.clone()).collect();
            let max = self.repo.settings.history.max_commits;
            let root = self.repo.root.clone();
            let mined = off_runtime(move || Git::open(&root).and_then(|git| git.mine(&known, max)))
                .await
                .and_then(|mined| Ok(mined?));
            match mined {
                Ok(mined) => {
                    let window: std::collections::HashSet<&str> =
                        mined.window.iter().map(String::as_str).collect();
                    commits.retain(|c| window.contains(c.id.as_str()));
                    commits.extend(mined.commits);
                }
                Err(e) => tracing::warn!("history not refreshed: {e}"),
            }
        }
        let history = Arc::new(History::new(commits));
        *cached = Some((head, history.clone()));
        history
    }

    /// The review briefing for a change (DESIGN §6).
    pub async fn review(&self, request: &ReviewRequest) -> Result<ReviewReport, AskError> {
        let (budget, note) = context::budget(request.max_tokens, briefing::DEFAULT_REVIEW_TOKENS)?;
        let snapshot = self.snapshot().await?;
        let (mut analysis, label, empty) = {
            let (repo, request) = (self.repo.clone(), request.clone());
            let (graph, access) = (snapshot.graph.clone(), self.access());
            off_runtime(move || analyse_change(&repo, &request, &graph, &access)).await??
        };
        let graph = &snapshot.graph;
        analysis.notes.extend(note);
        if empty {
            analysis.notes.push(format!("no changes ({label})"));
        }
        let mut extras = briefing::Extras {
            label: label.clone(),
            ..briefing::Extras::default()
        };
        let paths = analysis.paths();
        let symbols = analysis.symbol_ids();
        let text = analysis.query_text();

        // The team's memories on these files and symbols, then those the text matches.
        let memories_failed = |e: memory::MemoryError, notes: &mut Vec<String>| {
            notes.push(format!("memories unavailable: {e}"));
        };
        match self.memories.anchored(&paths, &symbols).await {
            Ok(anchored) => {
                for m in anchored {
                    let note = note_of(&m);
                    match m.kind {
                        MemoryType::RiskModule => extras.risks.push(briefing::Risk {
                            kind: "risk_module".to_string(),
                            subject: m.anchors().next().cloned().unwrap_or_default(),
                            detail: format!("{}: {}", m.id, m.content),
                        }),
                        MemoryType::RejectionPattern if !m.addressed => {
                            extras.rejections.push(note)
                        }
                        MemoryType::ProjectPattern
                        | MemoryType::Decision
                        | MemoryType::FrameworkKnowledge => extras.memories.push(note),
                        _ => {}
                    }
                }
            }
            Err(e) => memories_failed(e, &mut extras.notes),
        }
        if !text.is_empty() {
            let searches = [
                (
                    vec![
                        MemoryType::ProjectPattern,
                        MemoryType::Decision,
                        MemoryType::FrameworkKnowledge,
                    ],
                    6,
                ),
                (vec![MemoryType::RejectionPattern], 4),
            ];
            for (types, limit) in searches {
                let rejection = types.contains(&MemoryType::RejectionPattern);
                let found = self
                    .memories
                    .search(&memory::Query {
                        text: text.clone(),
                        types,
                        paths: paths.clone(),
                        limit,
                        keyword_only: true,
                        ..memory::Query::default()
                    })
                    .await;
                match found {
                    Ok(found) => {
                        let list = if rejection {
                            &mut extras.rejections
                        } else {
                            &mut extras.memories
                        };
                        for f in found {
                            if list.len() >= limit || (rejection && f.memory.addressed) {
                                continue;
                            }
                            if !list.iter().any(|n| n.id == f.memory.id) {
                                list.push(note_of(&f.memory));
                            }
                        }
                    }
                    Err(e) => memories_failed(e, &mut extras.notes),
                }
            }
        }
        match self.memories.rule_stats().await {
            Ok(stats) => {
                let mut high: Vec<_> = stats
                    .into_iter()
                    .filter(|s| review::stats::is_high_rejection(s, 3, 0.5))
                    .collect();
                high.sort_by(|a, b| b.rejection_rate.total_cmp(&a.rejection_rate));
                high.truncate(5);
                extras.rules = high;
            }
            Err(e) => memories_failed(e, &mut extras.notes),
        }

        // Risk from the graph: changes to the most depended-on code.
        let mut reaches: Vec<u32> = graph
            .nodes
            .iter()
            .filter(|n| n.kind.is_symbol())
            .map(|n| n.reach)
            .collect();
        reaches.sort_unstable();
        let p95 = reaches
            .get(reaches.len().saturating_sub(1) * 95 / 100)
            .copied()
            .unwrap_or(0)
            .max(50);
        for file in &analysis.files {
            for s in &file.symbols {
                if s.indexed && s.reach >= p95 && s.change != review::SymbolChangeKind::Added {
                    extras.risks.push(briefing::Risk {
                        kind: "central".to_string(),
                        subject: s.id.clone(),
                        detail: format!(
                            "reaches {} nodes (top 5% of this repository's symbols)",
                            s.reach
                        ),
                    });
                }
            }
        }

        // History: fix-prone files, experts, partners missing from the diff, past commits.
        let history = self.history(&snapshot).await;
        if !history.is_empty() {
            let now = index::now();
            for path in paths.iter().take(HISTORY_FILES * 2) {
                if let Some(fixes) = history.is_fix_prone(path) {
                    extras.risks.push(briefing::Risk {
                        kind: "fix_prone".to_string(),
                        subject: path.clone(),
                        detail: format!(
                            "{} of its {} recent commits were fixes or reverts ({:.1}× this repository's share)",
                            fixes.fixes, fixes.commits, fixes.lift
                        ),
                    });
                }
            }
            for file in analysis.files.iter().take(HISTORY_FILES) {
                let experts = history.experts(&file.path, now, 3);
                if !experts.is_empty() {
                    extras.experts.push(briefing::FileExperts {
                        path: file.path.clone(),
                        experts,
                    });
                }
                for partner in history.co_changes(&file.path, 3, 0.3) {
                    let exists = graph.node(&partner.path).is_some()
                        || self.repo.root.join(&partner.path).is_file();
                    if exists
                        && !paths.contains(&partner.path)
                        && !extras.co_changes.iter().any(|p| p.path == partner.path)
                    {
                        extras.co_changes.push(briefing::MissingPartner {
                            path: partner.path,
                            with: file.path.clone(),
                            support: partner.support,
                            confidence: partner.confidence,
                        });
                    }
                }
            }
            extras.co_changes.truncate(5);
            let mut seen = std::collections::HashSet::new();
            let mut related: Vec<&CommitInfo> = paths
                .iter()
                .flat_map(|p| history.commits_of(p))
                .filter(|c| seen.insert(c.id.clone()))
                .collect();
            related.sort_by_key(|c| std::cmp::Reverse(c.time));
            extras.commits = related
                .into_iter()
                .take(5)
                .map(|c| briefing::CommitBrief {
                    id: c.id.chars().take(10).collect(),
                    date: date_of(c.time),
                    author: c.author.clone(),
                    summary: c.summary.clone(),
                    fix: c.fix,
                })
                .collect();
        } else if self.repo.is_git {
            extras
                .notes
                .push("no commit history mined yet: run `cairn index`".to_string());
        }

        // The author: given, or from git.
        let author = match request.author.as_deref().filter(|a| !a.trim().is_empty()) {
            Some(a) => Some((a.to_string(), "given")),
            None if request.diff.is_some() => None,
            None => Git::open(&self.repo.root).ok().and_then(|git| {
                match (request.base.is_some() || request.head.is_some(), &git) {
                    (true, git) => git
                        .author_of(request.head.as_deref().unwrap_or("HEAD"))
                        .ok(),
                    (false, git) => git.configured_author(),
                }
                .map(|a| (a, "git"))
            }),
        };
        if let Some((raw, from)) = author {
            match memory::model::developer_id(&raw) {
                Ok(developer) => {
                    let profile = self.memories.profile(&developer).await.ok().flatten();
                    let stats = self
                        .memories
                        .author_stats(&developer)
                        .await
                        .unwrap_or_default();
                    let memories = self
                        .memories
                        .search(&memory::Query {
                            text: text.clone(),
                            developer: Some(developer.clone()),
                            types: vec![
                                MemoryType::DeveloperPattern,
                                MemoryType::DeveloperStrength,
                            ],
                            paths: paths.clone(),
                            limit: 3,
                            keyword_only: true,
                            ..memory::Query::default()
                        })
                        .await
                        .map(|found| found.iter().map(|f| note_of(&f.memory)).collect())
                        .unwrap_or_default();
                    extras.author = Some(briefing::AuthorBrief {
                        developer,
                        from: from.to_string(),
                        profile: profile.as_ref().map(note_of),
                        stats,
                        memories,
                    });
                }
                Err(e) => extras.notes.push(format!("author left out: {e}")),
            }
        } else if request.diff.is_some() {
            extras
                .notes
                .push("pass `author` to include the author's profile".to_string());
        }
        off_runtime(move || briefing::render(analysis, extras, budget)).await
    }

    /// Records a review's outcome (anchors checked against the graph when there is one).
    pub async fn record_review(
        &self,
        input: memory::ReviewInput,
    ) -> Result<memory::RecordedReview, AskError> {
        let snapshot = self.graph_if_indexed().await;
        Ok(self
            .memories
            .record_review(input, snapshot.as_ref().map(|s| &*s.graph))
            .await?)
    }
}

/// A file's experts and latest commits, one line each, for `expand`.
fn file_history(history: &History, path: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let experts = history.experts(path, index::now(), 3);
    if !experts.is_empty() {
        lines.push(format!(
            "- experts: {}",
            experts
                .iter()
                .map(|e| format!(
                    "{} ({} commits, last {})",
                    e.author,
                    e.commits,
                    date_of(e.last)
                ))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if let Some(fixes) = history.is_fix_prone(path) {
        lines.push(format!(
            "- fix-prone: {} of {} commits were fixes or reverts",
            fixes.fixes, fixes.commits
        ));
    }
    for partner in history.co_changes(path, 3, 0.3).into_iter().take(3) {
        lines.push(format!(
            "- usually changes with {} ({} commits)",
            partner.path, partner.support
        ));
    }
    for c in history.commits_of(path).into_iter().take(3) {
        lines.push(format!(
            "- {} {} {}: {}",
            &c.id[..c.id.len().min(10)],
            date_of(c.time),
            c.author,
            c.summary
        ));
    }
    lines
}

/// `YYYY-MM-DD HH:MM:SS UTC` of a time in milliseconds since the epoch.
pub fn time_of_ms(ms: i64) -> String {
    let seconds = ms.div_euclid(1_000);
    let of_day = seconds.rem_euclid(86_400);
    format!(
        "{} {:02}:{:02}:{:02} UTC",
        date_of(seconds),
        of_day / 3_600,
        of_day % 3_600 / 60,
        of_day % 60
    )
}

/// `YYYY-MM-DD` of a time in seconds since the epoch (UTC).
pub fn date_of(seconds: i64) -> String {
    let days = seconds.div_euclid(86_400);
    // Civil from days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    format!("{:04}-{:02}-{:02}", if m <= 2 { y + 1 } else { y }, m, d)
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

/// The change a review request names, analysed against the graph: the analysis, what was
/// compared, and whether nothing changed.
fn analyse_change(
    repo: &Repo,
    request: &ReviewRequest,
    graph: &Graph,
    access: &HashMap<String, Access>,
) -> Result<(review::Analysis, String, bool), AskError> {
    let (changes, label) = changes_for(repo, request)?;
    let scorer = Scorer::new(graph, access, index::now());
    let rank = |id: &str| graph.node(id).map_or(0.0, |n| scorer.score(n).total());
    let read = |path: &str| std::fs::read_to_string(repo.root.join(path)).ok();
    let analysis = review::analyse(&changes, graph, &rank, &read);
    Ok((analysis, label, changes.is_empty()))
}

/// The change a review request names, with file texts where they can be had; a change larger
/// than the `[review]` caps is refused before its files are read.
fn changes_for(
    repo: &Repo,
    request: &ReviewRequest,
) -> Result<(Vec<review::FileChange>, String), AskError> {
    let root = &repo.root;
    let caps = repo.settings.review;
    if let Some(text) = request.diff.as_deref() {
        if request.base.is_some() || request.head.is_some() {
            return Err(AskError::Review(
                "pass either `diff` or `base`/`head`, not both".to_string(),
            ));
        }
        let mut changes = review::diff::parse(text)?;
        review::check_files(changes.len(), caps.max_files)?;
        let git = if repo.is_git {
            Git::open(root).ok()
        } else {
            None
        };
        for change in &mut changes {
            fill_texts(change, root, git.as_ref());
        }
        return Ok((changes, "pasted diff".to_string()));
    }
    if !repo.is_git {
        return Err(AskError::Review(
            "not a git repository: pass the change as `diff` (unified diff text)".to_string(),
        ));
    }
    let git = Git::open(root)?;
    match (request.base.as_deref(), request.head.as_deref()) {
        (None, None) => Ok((
            git.worktree_changes(root, caps.max_files)?,
            "HEAD → working tree".to_string(),
        )),
        (base, head) => {
            let head = head.unwrap_or("HEAD");
            let base = base.map_or_else(|| format!("{head}~1"), str::to_string);
            let range = format!("{base}..{head}");
            if git.commits_between(&base, head, caps.max_commits)? > caps.max_commits {
                return Err(review::TooLarge::Commits {
                    range,
                    cap: caps.max_commits,
                }
                .into());
            }
            Ok((git.changes_between(&base, head, caps.max_files)?, range))
        }
    }
}

/// Gives a parsed change its texts: the working tree's new side with the old side rebuilt
/// from it, or HEAD's old side with the new side rebuilt; added and deleted files carry
/// their whole text in the diff.
fn fill_texts(change: &mut review::FileChange, root: &Path, git: Option<&Git>) {
    use review::ChangeKind;
    if change.binary {
        return;
    }
    let whole = |lines: Vec<&str>| {
        let mut text = lines.join("\n");
        text.push('\n');
        text
    };
    match change.kind {
        ChangeKind::Added => {
            change.new_text = Some(whole(change.added().map(|(_, t)| t).collect()));
            return;
        }
        ChangeKind::Deleted => {
            change.old_text = Some(whole(change.removed().map(|(_, t)| t).collect()));
            return;
        }
        _ => {}
    }
    if let Some(new_path) = change.new_path.as_deref()
        && let Some(current) =
            context::normalise(new_path).and_then(|p| std::fs::read_to_string(root.join(p)).ok())
        && let Some(old) = review::diff::reconstruct(change, &current, true)
    {
        change.old_text = Some(old);
        change.new_text = Some(review::diff::normalise_newlines(&current));
        return;
    }
    if let (Some(git), Some(old_path)) = (git, change.old_path.as_deref())
        && let Some(before) = git.text_at_head(old_path)
        && let Some(new) = review::diff::reconstruct(change, &before, false)
    {
        change.new_text = Some(new);
        change.old_text = Some(review::diff::normalise_newlines(&before));
    }
}

/// A memory as the context and expansions show it.
pub fn note_of(memory: &memory::Memory) -> MemoryNote {
    MemoryNote {
        id: memory.id.clone(),
        kind: memory.kind.to_string(),
        content: memory.content.clone(),
        anchors: memory.anchors().cloned().collect(),
    }
}

/// The commit history the store holds and the HEAD it was mined at.
pub async fn stored_history(store_dir: &Path) -> anyhow::Result<(Vec<CommitInfo>, Option<String>)> {
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
    let (graph, meta, stamps, (commits, history_head)) = loaded?;
    Ok(Snapshot {
        graph: Arc::new(graph),
        meta,
        commits,
        history_head,
        stamps,
        generation,
        serial: next_serial(),
    })
}

fn freshness(repo: &Repo, snapshot: &Snapshot) -> Freshness {
    let mut changed: Vec<String> = snapshot
        .stamps
        .iter()
        .filter(|stamp| {
            let metadata = std::fs::metadata(repo.root.join(&stamp.path));
            match metadata {
                Err(_) => true,
                Ok(m) => {
                    let mtime_ns = m
                        .modified()
                        .ok()
                        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                        .map_or(0, |d| d.as_nanos() as i64);
                    m.len() != stamp.size || mtime_ns != stamp.mtime_ns
                }
            }
        })
        .map(|stamp| stamp.path.clone())
        .collect();
    changed.sort();
    let count = changed.len();
    changed.truncate(5);
    Freshness {
        indexed_commit: snapshot.meta.commit.clone(),
        head_commit: if repo.is_git {
            index::head_commit(&repo.root)
        } else {
            None
        },
        indexed_at: snapshot.meta.indexed_at,
        changed_files: changed,
        changed_count: count,
    }
}

/// The lines of a node as they are on disk now, if the file still reads.
fn read_node_source(root: &Path, node: &Node) -> Option<String> {
    if node.kind == NodeKind::External {
        return None;
    }
    let text = std::fs::read_to_string(root.join(&node.path)).ok()?;
    let start = node.start_line.max(1) as usize - 1;
    let count = (node.end_line as usize + 1).saturating_sub(node.start_line.max(1) as usize);
    Some(
        text.lines()
            .skip(start)
            .take(count)
            .collect::<Vec<_>>()
            .join("\n"),
    )
}
