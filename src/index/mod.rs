//! Indexing: walk, read and parse what changed (content hash), rebuild the graph from the
//! extractions, and write only the difference to the store.

pub mod tsconfig;
pub mod walk;

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use serde::Serialize;

use crate::config::Repo;
use crate::extract;
use crate::graph::{self, BuildStats, SourceFile};
use crate::languages::Registry;
use crate::storage::{Delta, IndexMeta, SourceRecord, Store, StoreError};
use walk::{Found, Skipped};

/// What an index run did.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub files: usize,
    pub symbols: usize,
    pub external_modules: usize,
    pub edges: BTreeMap<String, usize>,
    pub stats: BuildStats,
    pub unresolved_call_share: f64,
    /// Files read and parsed this run (the rest came from the parse cache).
    pub parsed: usize,
    pub removed: usize,
    /// Files that moved: a path gone and a new path with the same content.
    pub moved: Vec<Moved>,
    pub skipped: Vec<Skipped>,
    /// Files that parsed with problems (kept, with what could be read).
    pub diagnostics: Vec<Skipped>,
    pub nodes_written: usize,
    pub edges_written: usize,
    pub commit: Option<String>,
    /// Commits in the mined history window, and how many were read this run.
    pub history_commits: usize,
    pub history_new: usize,
    /// Whether anything was written to the store.
    pub wrote: bool,
    pub seconds: f64,
}

/// A file that moved (renamed or relocated with its content unchanged).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Moved {
    pub from: String,
    pub to: String,
}

/// Pairs each removed file with the one new file holding the same content; a content that
/// several files share is ambiguous and left out.
fn moves(
    removed: &[String],
    added: &[&SourceRecord],
    cached: &HashMap<String, SourceRecord>,
) -> Vec<Moved> {
    let mut gone: HashMap<&str, Vec<&str>> = HashMap::new();
    for path in removed {
        if let Some(record) = cached.get(path) {
            gone.entry(record.file.hash.as_str())
                .or_default()
                .push(path);
        }
    }
    let mut new: HashMap<&str, Vec<&str>> = HashMap::new();
    for record in added {
        new.entry(record.file.hash.as_str())
            .or_default()
            .push(record.file.path.as_str());
    }
    let mut moved: Vec<Moved> = gone
        .iter()
        .filter_map(
            |(hash, from)| match (from.as_slice(), new.get(hash)?.as_slice()) {
                ([from], [to]) => Some(Moved {
                    from: from.to_string(),
                    to: to.to_string(),
                }),
                _ => None,
            },
        )
        .collect();
    moved.sort_by(|a, b| a.from.cmp(&b.from));
    moved
}

/// A file after reading: either still as the cache has it, or freshly parsed, or unusable.
enum Read {
    Cached(SourceRecord),
    Parsed(SourceRecord),
    Skipped(Skipped),
}

/// Indexes the repository into the store, re-parsing only what changed since the last run.
pub async fn run(repo: &Repo, store: &Store) -> Result<Report, StoreError> {
    let started = Instant::now();
    let cached: HashMap<String, SourceRecord> = store
        .load_sources()
        .await?
        .into_iter()
        .map(|s| (s.file.path.clone(), s))
        .collect();
    let old_graph = store.load_graph().await?;
    tracing::info!(elapsed = ?started.elapsed(), "loaded the stored index");
    let walked = walk::walk(
        &repo.root,
        &repo.settings.index.exclude,
        repo.settings.index.max_file_bytes,
    );
    let mut skipped = walked.skipped;
    tracing::info!(elapsed = ?started.elapsed(), files = walked.sources.len(), "walked");
    let reads = read_all(&walked.sources, &cached);
    tracing::info!(elapsed = ?started.elapsed(), "read and parsed");
    let mut sources = Vec::new();
    let mut delta = Delta::default();
    let mut parsed = 0;
    for read in reads {
        match read {
            Read::Cached(record) => sources.push(record),
            Read::Parsed(record) => {
                parsed += 1;
                if cached.get(&record.file.path) != Some(&record) {
                    delta.upsert_sources.push(record.clone());
                }
                sources.push(record);
            }
            Read::Skipped(skip) => skipped.push(skip),
        }
    }
    let present: std::collections::HashSet<&str> =
        sources.iter().map(|s| s.file.path.as_str()).collect();
    delta.delete_sources = cached
        .keys()
        .filter(|p| !present.contains(p.as_str()))
        .cloned()
        .collect();
    delta.delete_sources.sort();
    let added: Vec<&SourceRecord> = delta
        .upsert_sources
        .iter()
        .filter(|r| !cached.contains_key(&r.file.path))
        .collect();
    let moved = moves(&delta.delete_sources, &added, &cached);
    let files: Vec<SourceFile> = sources.into_iter().map(|s| s.file).collect();
    let aliases = tsconfig::aliases(&repo.root, &walked.configs);
    let (graph, stats) = graph::build(&files, &aliases);
    tracing::info!(elapsed = ?started.elapsed(), "built the graph");
    let graph_delta = Delta::between(&old_graph, &graph);
    delta.fresh = graph_delta.fresh;
    delta.upsert_nodes = graph_delta.upsert_nodes;
    delta.delete_nodes = graph_delta.delete_nodes;
    delta.upsert_edges = graph_delta.upsert_edges;
    delta.delete_edges = graph_delta.delete_edges;

    let diagnostics: Vec<Skipped> = files
        .iter()
        .flat_map(|f| {
            f.extract.diagnostics.iter().map(|d| Skipped {
                path: f.path.clone(),
                reason: d.clone(),
            })
        })
        .collect();
    skipped.sort_by(|a, b| a.path.cmp(&b.path));
    let commit = if repo.is_git {
        head_commit(&repo.root)
    } else {
        None
    };
    let mut report = Report {
        files: files.len(),
        symbols: graph.nodes.iter().filter(|n| n.kind.is_symbol()).count(),
        external_modules: graph
            .nodes
            .iter()
            .filter(|n| n.kind == graph::NodeKind::External)
            .count(),
        edges: graph
            .edge_counts()
            .into_iter()
            .map(|(k, n)| (k.table().to_string(), n))
            .collect(),
        unresolved_call_share: stats.unresolved_call_share(),
        stats,
        parsed,
        removed: delta.delete_sources.len(),
        moved,
        skipped,
        diagnostics,
        nodes_written: delta.upsert_nodes.len() + delta.delete_nodes.len(),
        edges_written: delta.upsert_edges.len() + delta.delete_edges.len(),
        commit: commit.clone(),
        history_commits: 0,
        history_new: 0,
        wrote: false,
        seconds: 0.0,
    };
    let previous = store.meta().await?.unwrap_or_default();
    let changed = !delta.is_empty() || previous.commit != commit;
    if changed || previous.generation == 0 {
        report.seconds = started.elapsed().as_secs_f64();
        let meta = IndexMeta {
            indexed_at: now(),
            commit,
            generation: previous.generation + 1,
            summary: serde_json::to_value(&report).unwrap_or_default(),
        };
        tracing::info!(elapsed = ?started.elapsed(), "diffed");
        store.apply(&delta, &meta).await?;
        tracing::info!(elapsed = ?started.elapsed(), "written");
        report.wrote = true;
    }
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}

/// Indexes under the repository's writer lock, then tells readers (the generation file) that
/// the store changed. `on_wait` is told once if another writer holds the lock.
pub async fn index_repository(
    repo: &Repo,
    patience: std::time::Duration,
    on_wait: impl FnOnce(Option<&str>),
) -> anyhow::Result<Report> {
    use anyhow::Context as _;
    let _lock = crate::lock::acquire(&repo.lock_path(), patience, on_wait)?;
    let store = Store::open(&repo.store_dir()).await?;
    let mut report = run(repo, &store).await;
    if let Ok(report) = report.as_mut()
        && repo.is_git
    {
        match crate::review::refresh_history(repo, &store).await {
            Ok((window, new)) => {
                report.history_commits = window;
                report.history_new = new;
                report.wrote |= new > 0;
            }
            Err(e) => tracing::warn!("the commit history was not mined: {e:#}"),
        }
    }
    store.close().await;
    let report = report?;
    let marker = crate::app::generation_path(repo);
    if report.wrote || !marker.exists() {
        let stamp = format!(
            "{}-{}",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
            std::process::id()
        );
        let temporary = marker.with_extension("tmp");
        std::fs::write(&temporary, stamp)
            .and_then(|()| std::fs::rename(&temporary, &marker))
            .with_context(|| format!("cannot write {}", marker.display()))?;
    }
    if !report.moved.is_empty() {
        // Memories follow their files.
        let memories = crate::memory::Memories::open(
            &repo.root,
            &repo.data_dir,
            crate::memory::SemanticSettings::default(),
        );
        let moves: Vec<(String, String)> = report
            .moved
            .iter()
            .map(|m| (m.from.clone(), m.to.clone()))
            .collect();
        if let Err(e) = memories.move_anchors(&moves).await {
            tracing::warn!("memories anchored on moved files were not updated: {e}");
        }
    }
    Ok(report)
}

/// Reads and parses files in parallel; unchanged files (same size and mtime, or same content
/// hash) come from the cache.
fn read_all(found: &[Found], cached: &HashMap<String, SourceRecord>) -> Vec<Read> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, Read)>> = Mutex::new(Vec::with_capacity(found.len()));
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                let mut local = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(file) = found.get(i) else { break };
                    local.push((i, read_one(file, cached.get(&file.path))));
                }
                results.lock().expect("no worker panics").extend(local);
            });
        }
    });
    let mut results = results.into_inner().expect("no worker panics");
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

fn read_one(file: &Found, cached: Option<&SourceRecord>) -> Read {
    let registry = Registry::get();
    let language = registry
        .for_path(&file.path)
        .expect("the walk keeps files of registered languages");
    // A cache entry made for another language (a grammar changed between versions) is stale.
    let cached = cached.filter(|record| record.file.language == language.name);
    if let Some(record) = cached
        && record.mtime_ns == file.mtime_ns
        && record.file.size == file.size
    {
        return Read::Cached(record.clone());
    }
    let skip = |reason: String| {
        Read::Skipped(Skipped {
            path: file.path.clone(),
            reason,
        })
    };
    let bytes = match std::fs::read(&file.absolute) {
        Ok(bytes) => bytes,
        Err(e) => return skip(format!("unreadable: {e}")),
    };
    if bytes.iter().take(8192).any(|&b| b == 0) {
        return skip("binary content".to_string());
    }
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            return skip(format!(
                "not valid UTF-8 (at byte {})",
                e.utf8_error().valid_up_to()
            ));
        }
    };
    let hash = format!("{:016x}", xxhash_rust::xxh3::xxh3_64(text.as_bytes()));
    let last_change = file.mtime_ns / 1_000_000_000;
    if let Some(record) = cached
        && record.file.hash == hash
    {
        let mut record = record.clone();
        record.mtime_ns = file.mtime_ns;
        record.file.last_change = last_change;
        return Read::Parsed(record);
    }
    Read::Parsed(SourceRecord {
        file: SourceFile {
            path: file.path.clone(),
            language: language.name.clone(),
            hash,
            size: file.size,
            last_change,
            is_test: language.is_test_path(&file.path),
            extract: extract::extract(language, &text),
        },
        mtime_ns: file.mtime_ns,
    })
}

/// The commit HEAD points at, if git can tell.
pub fn head_commit(root: &std::path::Path) -> Option<String> {
    let output = std::process::Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["rev-parse", "--verify", "--quiet", "HEAD"])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).trim().to_string())
        .filter(|c| !c.is_empty())
}

/// Seconds since the epoch.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}
