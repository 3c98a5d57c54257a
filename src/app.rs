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
use crate::context::{self, ContextReport, ExpandReport, Freshness, Include, Scorer};
use crate::graph::score::Access;
use crate::graph::{Graph, Node, NodeKind};
use crate::index;
use crate::storage::{FileStamp, IndexMeta, Store};

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
}

/// The service.
pub struct Cairn {
    pub repo: Repo,
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
    pub fn new(repo: Repo) -> Arc<Cairn> {
        Arc::new(Cairn {
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
        Ok(context::context(
            &scorer,
            &self.repo.name(),
            freshness,
            focus,
            budget,
            note.into_iter().collect(),
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
        Ok(context::expand(
            &scorer,
            node,
            include,
            budget,
            &read,
            note.into_iter().collect(),
        ))
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
