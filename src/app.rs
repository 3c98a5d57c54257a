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
use crate::memory::{self, Memories, SemanticSettings};
use crate::storage::{FileStamp, IndexMeta, Store};

/// How long a server keeps the memory store open after using it.
const MEMORY_LINGER: Duration = Duration::from_secs(1);

/// How long a freshness check is reused.
const FRESHNESS_TTL: Duration = Duration::from_secs(2);

/// A loaded view of the store.
pub struct Snapshot {
    pub graph: Graph,
    pub meta: IndexMeta,
    stamps: Vec<FileStamp>,
    generation: Option<String>,
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
}

/// The service.
pub struct Cairn {
    pub repo: Repo,
    pub memories: Arc<Memories>,
    snapshot: Mutex<Option<Arc<Snapshot>>>,
    freshness: Mutex<Option<(Instant, Freshness)>>,
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
        Cairn::build(repo, model_dir, None)
    }

    /// The service for a long-running server: the memory store stays open for a second
    /// after each use, so a burst of `remember` calls opens it once.
    pub fn serving(repo: Repo, model_dir: Option<PathBuf>) -> Arc<Cairn> {
        Cairn::build(repo, model_dir, Some(MEMORY_LINGER))
    }

    fn build(repo: Repo, model_dir: Option<PathBuf>, linger: Option<Duration>) -> Arc<Cairn> {
        let semantic = SemanticSettings::resolve(
            model_dir.or_else(|| repo.configured_model_dir()),
            repo.settings.memory.semantic,
        );
        let memories = match linger {
            Some(linger) => Memories::lingering(&repo.root, &repo.data_dir, semantic, linger),
            None => Memories::open(&repo.root, &repo.data_dir, semantic),
        };
        Arc::new(Cairn {
            memories,
            repo,
            snapshot: Mutex::new(None),
            freshness: Mutex::new(None),
        })
    }

    /// The current snapshot, reloaded if the store changed since it was taken.
    pub async fn snapshot(&self) -> Result<Arc<Snapshot>, AskError> {
        let mut current = self.snapshot.lock().await;
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
    async fn freshness(&self, snapshot: &Snapshot) -> Freshness {
        let mut cached = self.freshness.lock().await;
        if let Some((at, freshness)) = cached.as_ref()
            && at.elapsed() < FRESHNESS_TTL
        {
            return freshness.clone();
        }
        let fresh = freshness(&self.repo, snapshot);
        *cached = Some((Instant::now(), fresh.clone()));
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
        let access = HashMap::<String, Access>::new();
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
        let access = HashMap::<String, Access>::new();
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
        Ok(context::expand(
            &scorer, node, include, &memories, budget, &read, notes,
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
            .remember(new, snapshot.as_ref().map(|s| &s.graph))
            .await?)
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

async fn load_snapshot(store_dir: &Path, generation: Option<String>) -> anyhow::Result<Snapshot> {
    let store = Store::open(store_dir)
        .await
        .context("cannot open the index")?;
    let loaded = async {
        Ok::<_, crate::storage::StoreError>((
            store.load_graph().await?,
            store.meta().await?.unwrap_or_default(),
            store.file_stamps().await?,
        ))
    }
    .await;
    store.close().await;
    let (graph, meta, stamps) = loaded?;
    Ok(Snapshot {
        graph,
        meta,
        stamps,
        generation,
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
