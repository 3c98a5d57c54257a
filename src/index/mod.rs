//! Indexing: walk, read and parse what changed (content hash), rebuild the graph from the
//! extractions, and write only the difference to the store.

pub mod progress;
pub mod roots;
pub mod walk;

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::config::Repo;
use crate::extract;
use crate::fsutil::repo::{Limit, RepoFiles};
use crate::graph::{self, BuildStats, SourceFile};
use crate::languages::Registry;
use crate::storage::{Delta, FileStamp, IndexMeta, SourceRecord, Store, StoreError};
pub use progress::{Phase, Progress};
use walk::{Found, Skipped};

/// What an index run did.
#[derive(Debug, Clone, Serialize, Deserialize)]
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
    /// Whether the graph was built this run: not when no file changed and the stored graph
    /// was built by this build of cairn with the same module roots.
    #[serde(default)]
    pub rebuilt: bool,
    /// How long the last exact build of the graph took: this run's, or the one that made the
    /// graph kept (the daemon paces its rebuilds by it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build_seconds: Option<f64>,
    pub seconds: f64,
    /// The pid of the daemon that did the run, when `cairn index` handed it over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub daemon: Option<u32>,
}

/// A file that moved (renamed or relocated with its content unchanged).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
pub(crate) enum Read {
    Cached,
    Parsed(Box<SourceRecord>),
    Skipped(Skipped),
}

/// Indexes the repository into the store, re-parsing only what changed since the last run.
pub async fn run(repo: &Repo, store: &Store) -> Result<Report, StoreError> {
    let started = Instant::now();
    let mut live = Live::load(store).await?;
    tracing::info!(elapsed = ?started.elapsed(), "loaded the stored index");
    let update = live.refresh(repo, None);
    tracing::info!(elapsed = ?started.elapsed(), "read, parsed and built the graph");
    let report = live.report(&update);
    commit(repo, store, &update, report, started)
        .await
        .map(|(report, _)| report)
}

/// An exact rebuild of one state of a [`Live`] index, taken with [`Live::rebuild_later`]:
/// it owns what it needs (the file records are shared), so it runs on another thread.
pub struct Rebuild {
    files: Vec<Arc<SourceRecord>>,
    roots: Vec<graph::Roots>,
    epoch: u64,
    /// The graph when the rebuild was taken: the new one shares what is unchanged with it.
    previous: Arc<graph::Graph>,
    /// Whether `previous` is a quick patch of these files: then the rebuild checks it.
    checks: bool,
}

impl Rebuild {
    /// Builds the graph (the costly part: resolution, promotions and measures over every file).
    pub fn run(self) -> Built {
        let started = Instant::now();
        let files: Vec<&SourceFile> = self.files.iter().map(|s| &s.file).collect();
        let (graph, stats) = graph::build(&files, &self.roots);
        let (graph, difference) = graph.sharing(&self.previous);
        let built_from = build_key(&self.roots);
        Built {
            graph: Arc::new(graph),
            difference: self.checks.then_some(difference),
            stats,
            built_from,
            epoch: self.epoch,
            took: started.elapsed(),
        }
    }
}

/// A finished [`Rebuild`], for [`Live::install`].
pub struct Built {
    graph: Arc<graph::Graph>,
    /// How the graph differs from the patched one it checks, when it checks one.
    difference: Option<graph::Difference>,
    stats: BuildStats,
    built_from: Option<String>,
    epoch: u64,
    took: std::time::Duration,
}

impl Built {
    /// How long the rebuild ran.
    pub fn took(&self) -> std::time::Duration {
        self.took
    }

    /// How the exact graph differs from the quick patch answers came from, when it followed
    /// one (empty: the patch was exact).
    pub fn difference(&self) -> Option<graph::Difference> {
        self.difference
    }
}

/// What the exact rebuilds after quick patches found ([`Live::patch`]): each is a check of the
/// patched graph answers came from meanwhile. Counted while the index lives (the daemon's).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Checks {
    /// Exact rebuilds of a patched graph, taken.
    pub rebuilds: u64,
    /// Those whose graph differed from the patched one.
    pub found: u64,
    /// The last difference found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_found: Option<graph::Difference>,
}

/// What a graph is built from besides the files: this build of cairn (its version and the
/// size and time of its executable, so any rebuilt binary counts as another) and the module
/// roots. `None` when the executable cannot be looked at: the graph is then always rebuilt.
fn build_key(roots: &[graph::Roots]) -> Option<String> {
    static BUILDER: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    let builder = BUILDER
        .get_or_init(|| {
            let exe = std::fs::metadata(std::env::current_exe().ok()?).ok()?;
            Some(format!(
                "{} {} {}",
                env!("CARGO_PKG_VERSION"),
                exe.len(),
                walk::mtime_ns(&exe)
            ))
        })
        .as_ref()?;
    let roots = xxhash_rust::xxh3::xxh3_64(format!("{roots:?}").as_bytes());
    Some(format!("{builder} {roots:016x}"))
}

/// The name a file's module is imported by: its file name without the extension, or its
/// directory's for a package's own file (`__init__.py`, `index.ts`, `mod.rs`).
fn module_name(path: &str) -> Option<&str> {
    let mut parts = path.rsplit('/');
    let file = parts.next()?;
    let stem = file.split('.').next().filter(|s| !s.is_empty())?;
    match stem {
        "__init__" | "index" | "mod" | "lib" | "main" => parts.next(),
        _ => Some(stem),
    }
}

/// Most files a patch reads again because they may name what a changed file newly defines
/// ([`Live::with_referrers`]): more are left to the exact rebuild.
const REFERRERS_READ: usize = 2_000;

/// A number never handed out before in this process.
fn next_epoch() -> u64 {
    static EPOCHS: AtomicU64 = AtomicU64::new(1);
    EPOCHS.fetch_add(1, Ordering::Relaxed)
}

/// The index held in memory between runs (by the daemon): every file's extraction and the
/// graph built from them. `refresh` re-reads what changed and says what to write.
pub struct Live {
    /// Shared with rebuilds that run away from the index (the daemon's).
    sources: BTreeMap<String, Arc<SourceRecord>>,
    graph: Arc<graph::Graph>,
    /// Changes whenever `sources` does; process-wide, so it names one state of one index.
    epoch: u64,
    /// Whether `graph` is the exact build of `sources` (not a quick patch, not older).
    exact: bool,
    /// The graph the store holds (`graph` once the pending changes are written).
    written: Arc<graph::Graph>,
    /// Source records changed since the last write: `None` for a file gone.
    pending: BTreeMap<String, Option<Arc<SourceRecord>>>,
    pending_moves: Vec<Moved>,
    /// The store generation this index equals.
    generation: u64,
    stats: BuildStats,
    /// The [`build_key`] of the last exact graph (as the store recorded it, after a load).
    built_from: Option<String>,
    /// Whether the last refresh built the graph.
    rebuilt: bool,
    /// How long the last exact build took (as the store recorded it, after a load).
    build_took: Option<std::time::Duration>,
    /// Module-resolution configs found by the last walk.
    configs: Vec<String>,
    /// Module roots read from those configs (read again only on a whole walk).
    roots: Vec<graph::Roots>,
    /// What the last walk passed over (build outputs are not listed; oversized files are).
    walk_skipped: Vec<Skipped>,
    /// Files that could not be read, by path.
    read_skipped: BTreeMap<String, Skipped>,
    /// Where the current run reports how far it is.
    progress: Arc<Progress>,
    /// What quick patches keep between them (module tables, the repository's names), told
    /// of every change to `sources` once the first patch tracks it.
    kept: graph::Kept,
    /// The epoch `graph` is a quick patch of, if it is one.
    patched: Option<u64>,
    checks: Checks,
    /// Names that files read since the last patch define and did not before: the next patch
    /// re-reads the files referring to those files whose code names one of them.
    fresh_names: rustc_hash::FxHashSet<extract::Text>,
    /// The module names of files new since the last patch (`ro` of `locales/ro.ts`, `pkg` of
    /// `pkg/__init__.py`): the next patch re-reads the files whose imports name one.
    fresh_modules: rustc_hash::FxHashSet<String>,
}

/// What one refresh changed: the rows to write and the facts for the report.
#[derive(Default)]
pub struct Update {
    pub delta: Delta,
    pub parsed: usize,
    pub moved: Vec<Moved>,
    /// The [`build_key`] of the graph written, recorded with it.
    pub built_from: Option<String>,
}

/// Where a quick patch ([`Live::patch`]) spent its time.
#[derive(Debug, Clone, Copy)]
pub struct PatchTiming {
    /// Building the changed files' nodes and edges against every file.
    pub built: std::time::Duration,
    /// Making the patched graph from the previous one.
    pub patched: std::time::Duration,
    /// Both, and freeing the graph replaced.
    pub total: std::time::Duration,
}

/// What a read found.
#[derive(Debug, Default)]
pub struct Reading {
    pub parsed: usize,
    /// Files whose content changed, appeared or went.
    pub changed: Vec<String>,
    /// A whole walk was done (the module roots were read again: the graph is rebuilt even if
    /// no file changed, unless it was built by this cairn with the same roots).
    pub whole: bool,
}

/// What a read changed in the file records, before it is told as changed paths and moves.
#[derive(Default)]
struct Changes {
    /// Records of files that were not indexed before (shared with the index's).
    added: Vec<Arc<SourceRecord>>,
    /// Paths of indexed files whose record changed.
    updated: Vec<String>,
    /// Paths of files whose record was dropped.
    gone: Vec<String>,
    /// The dropped records, by path.
    removed: HashMap<String, SourceRecord>,
}

/// Changes waiting to be written: the graph the store holds, the graph to write, and the
/// source records that changed (`None`: the file is gone).
pub struct Pending {
    pub old: Arc<graph::Graph>,
    pub new: Arc<graph::Graph>,
    pub sources: BTreeMap<String, Option<Arc<SourceRecord>>>,
    pub moved: Vec<Moved>,
    /// The [`build_key`] of `new`.
    pub built_from: Option<String>,
}

impl Pending {
    /// Nothing to write.
    pub fn is_empty(&self) -> bool {
        Arc::ptr_eq(&self.old, &self.new) && self.sources.is_empty()
    }

    /// Folds later changes in: still from the graph the store holds, now to the later graph.
    pub fn merge(&mut self, later: Pending) {
        self.new = later.new;
        self.built_from = later.built_from;
        self.sources.extend(later.sources);
        self.moved.extend(later.moved);
    }

    /// The rows to write (diffing the two graphs: the costly part, kept off the answer path).
    pub fn into_update(self) -> Update {
        let mut delta = if Arc::ptr_eq(&self.old, &self.new) {
            Delta::default()
        } else {
            Delta::between(&self.old, &self.new)
        };
        for (path, record) in self.sources {
            match record {
                Some(record) => delta.upsert_sources.push(record),
                None => delta.delete_sources.push(path),
            }
        }
        Update {
            delta,
            parsed: 0,
            moved: self.moved,
            built_from: self.built_from,
        }
    }
}

impl Live {
    /// The index as the store holds it.
    pub async fn load(store: &Store) -> Result<Live, StoreError> {
        let sources = store
            .load_sources()
            .await?
            .into_iter()
            .map(|s| (s.file.path.clone(), Arc::new(s)))
            .collect();
        let graph = Arc::new(store.load_graph().await?);
        let meta = store.meta().await?.unwrap_or_default();
        // The build's statistics as the last write reported them, for a graph kept as stored.
        let stats = meta
            .summary
            .get("stats")
            .and_then(|stats| BuildStats::deserialize(stats).ok());
        let build_took = meta
            .summary
            .get("build_seconds")
            .and_then(serde_json::Value::as_f64)
            .and_then(|s| std::time::Duration::try_from_secs_f64(s).ok());
        Ok(Live {
            sources,
            written: graph.clone(),
            graph,
            epoch: next_epoch(),
            exact: true,
            pending: BTreeMap::new(),
            pending_moves: Vec::new(),
            generation: meta.generation,
            built_from: meta.built_from.filter(|_| stats.is_some()),
            stats: stats.unwrap_or_default(),
            rebuilt: false,
            build_took,
            configs: Vec::new(),
            roots: Vec::new(),
            walk_skipped: Vec::new(),
            read_skipped: BTreeMap::new(),
            progress: Arc::default(),
            kept: Default::default(),
            patched: None,
            checks: Checks::default(),
            fresh_names: Default::default(),
            fresh_modules: Default::default(),
        })
    }

    /// The store generation this index was loaded at or last written as.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Records the generation a write of this index's changes produced.
    pub fn set_generation(&mut self, generation: u64) {
        self.generation = generation;
    }

    /// The graph as of the last refresh.
    pub fn graph(&self) -> Arc<graph::Graph> {
        self.graph.clone()
    }

    /// Size and modification time of every indexed file (for freshness checks).
    pub fn stamps(&self) -> Vec<FileStamp> {
        self.sources
            .values()
            .map(|s| FileStamp {
                path: s.file.path.clone(),
                mtime_ns: s.mtime_ns,
                size: s.file.size,
            })
            .collect()
    }

    /// Index facts for a snapshot of this index.
    pub fn meta(&self, commit: Option<String>) -> IndexMeta {
        IndexMeta {
            indexed_at: crate::clock::now(),
            commit,
            generation: self.generation,
            summary: serde_json::json!({ "checks": self.checks }),
            built_from: self.built_from.clone(),
        }
    }

    /// Re-reads `paths` (repository-relative), or walks the whole tree when `None`, and
    /// rebuilds the graph. A path that names a module-resolution config, or no longer a
    /// plain file or a missing one (a directory), makes the refresh a whole walk.
    pub fn refresh(&mut self, repo: &Repo, paths: Option<&[String]>) -> Update {
        let parsed = self.reread(repo, paths);
        let mut update = self.take_pending().into_update();
        update.parsed = parsed;
        update
    }

    /// Re-reads like [`Live::refresh`] and rebuilds the graph if anything changed, keeping
    /// the changes for [`Live::take_pending`] instead of diffing them now. Returns how many
    /// files were parsed.
    pub(crate) fn reread(&mut self, repo: &Repo, paths: Option<&[String]>) -> usize {
        let reading = self.read(repo, paths);
        self.rebuild_after(&reading);
        reading.parsed
    }

    /// Rebuilds the graph after a read if it can differ: a file changed, or a whole walk
    /// found a graph that is not exact or that another cairn or other roots built. Says
    /// whether it rebuilt (the report's `rebuilt`).
    pub fn rebuild_after(&mut self, reading: &Reading) -> bool {
        self.rebuilt = !reading.changed.is_empty() || (reading.whole && !self.built_as_now());
        if self.rebuilt {
            self.rebuild();
        }
        self.rebuilt
    }

    /// Re-reads `paths` (or walks everything) into the file records, without touching the
    /// graph; says what changed.
    pub fn read(&mut self, repo: &Repo, paths: Option<&[String]>) -> Reading {
        if paths.is_some_and(|paths| paths.is_empty()) {
            return Reading::default();
        }
        let targeted = paths.and_then(|paths| self.targeted(repo, paths));
        let files = match RepoFiles::open(&repo.root) {
            Ok(files) => files,
            Err(e) => {
                // The root is gone or unreadable for now: keep what is indexed.
                tracing::warn!("cannot open {}: {e}", repo.root.display());
                return Reading::default();
            }
        };
        let limit = Limit::source(repo.settings.index.max_file_bytes);
        let reads = match &targeted {
            Some(paths) => self.read_paths(&files, repo, limit, paths),
            None => self.read_walked(&files, repo, limit),
        };
        self.apply(reads, targeted.is_none())
    }

    /// The files of registered languages among `paths`, or none when the paths need a whole
    /// walk. Files of no registered language are not indexed (editor backups, docs): passed
    /// over. A config, a directory, or a path that held indexed files (a directory moved
    /// away) needs a whole walk.
    fn targeted(&self, repo: &Repo, paths: &[String]) -> Option<Vec<String>> {
        let needs_walk = |path: &String| {
            let name = path.rsplit('/').next().unwrap_or(path);
            let prefix = format!("{path}/");
            roots::is_config(name)
                || repo.root.join(path).is_dir()
                || self
                    .sources
                    .range(prefix.clone()..)
                    .next()
                    .is_some_and(|(p, _)| p.starts_with(&prefix))
        };
        if paths.iter().any(needs_walk) {
            return None;
        }
        let registry = Registry::get();
        Some(
            paths
                .iter()
                .filter(|p| registry.for_path(p).is_some())
                .cloned()
                .collect(),
        )
    }

    /// Reads the named files; a file that is no longer there reads as none.
    fn read_paths(
        &self,
        files: &RepoFiles,
        repo: &Repo,
        limit: Limit,
        paths: &[String],
    ) -> Vec<(String, Option<Read>)> {
        paths
            .iter()
            .map(|path| {
                let read = match found(files, repo, path) {
                    Ok(Some(file)) => Some(read_one(
                        files,
                        limit,
                        &file,
                        self.sources.get(path).map(|s| &**s),
                    )),
                    Ok(None) => None,
                    Err(skip) => Some(Read::Skipped(skip)),
                };
                (path.clone(), read)
            })
            .collect()
    }

    /// Walks the whole tree and reads every file it finds; each file known before and not
    /// found reads as none. Keeps the walk's module roots, configs and skipped files.
    fn read_walked(
        &mut self,
        files: &RepoFiles,
        repo: &Repo,
        limit: Limit,
    ) -> Vec<(String, Option<Read>)> {
        self.progress.enter(Phase::Walking);
        let walked = walk::walk(
            &repo.root,
            &repo.settings.index.exclude,
            repo.settings.index.max_file_bytes,
        );
        let present: std::collections::HashSet<&str> =
            walked.sources.iter().map(|f| f.path.as_str()).collect();
        let mut reads: Vec<(String, Option<Read>)> = Vec::new();
        for path in self.sources.keys().chain(self.read_skipped.keys()) {
            if !present.contains(path.as_str()) {
                reads.push((path.clone(), None));
            }
        }
        for (file, read) in walked.sources.iter().zip(read_all(
            files,
            limit,
            &walked.sources,
            &self.sources,
            &self.progress,
        )) {
            reads.push((file.path.clone(), Some(read)));
        }
        self.roots = roots::read(files, &walked.configs);
        self.kept.paths_changed();
        self.configs = walked.configs;
        self.walk_skipped = walked.skipped;
        reads
    }

    /// Takes what was read into the file records and the pending changes, and says what
    /// changed.
    fn apply(&mut self, reads: Vec<(String, Option<Read>)>, whole: bool) -> Reading {
        let mut changes = Changes::default();
        let mut parsed = 0;
        for (path, read) in reads {
            self.read_skipped.remove(&path);
            match read {
                Some(Read::Cached) => {}
                Some(Read::Parsed(record)) => {
                    parsed += 1;
                    self.keep_parsed(path, *record, &mut changes);
                }
                Some(Read::Skipped(skip)) => {
                    self.read_skipped.insert(path.clone(), skip);
                    self.drop_source(path, &mut changes);
                }
                None => self.drop_source(path, &mut changes),
            }
        }
        Reading {
            parsed,
            changed: self.note_changes(changes),
            whole,
        }
    }

    /// Keeps a parsed file's record if it differs from the one held.
    fn keep_parsed(&mut self, path: String, record: SourceRecord, changes: &mut Changes) {
        let old = self.sources.get(&path);
        if old.map(|s| &**s) == Some(&record) {
            return;
        }
        let record = Arc::new(record);
        if let Some(old) = old {
            changes.updated.push(path.clone());
            let before: rustc_hash::FxHashSet<extract::Text> =
                old.file.extract.symbols.iter().map(|s| s.name).collect();
            self.fresh_names.extend(
                record
                    .file
                    .extract
                    .symbols
                    .iter()
                    .map(|s| s.name)
                    .filter(|name| !before.contains(name)),
            );
        } else {
            changes.added.push(record.clone());
            self.fresh_modules
                .extend(module_name(&path).map(String::from));
        }
        self.kept.file_changed(
            &path,
            old.map(|s| &s.file.extract),
            Some(&record.file.extract),
        );
        self.pending.insert(path.clone(), Some(record.clone()));
        self.sources.insert(path, record);
    }

    /// Drops the record of a file that is gone or skipped, if one is held.
    fn drop_source(&mut self, path: String, changes: &mut Changes) {
        if let Some(old) = self.sources.remove(&path) {
            self.kept.file_changed(&path, Some(&old.file.extract), None);
            self.pending.insert(path.clone(), None);
            changes.gone.push(path.clone());
            changes.removed.insert(path, Arc::unwrap_or_clone(old));
        }
    }

    /// Notes the moves among a read's changes and starts a new epoch if anything changed;
    /// returns the changed paths, sorted.
    fn note_changes(&mut self, changes: Changes) -> Vec<String> {
        let Changes {
            added,
            updated,
            mut gone,
            removed,
        } = changes;
        let mut changed: Vec<String> = added.iter().map(|r| r.file.path.clone()).collect();
        changed.extend(gone.iter().cloned());
        gone.sort();
        let added: Vec<&SourceRecord> = added.iter().map(|r| &**r).collect();
        self.pending_moves.extend(moves(&gone, &added, &removed));
        changed.extend(updated);
        changed.sort();
        changed.dedup();
        if !changed.is_empty() {
            self.epoch = next_epoch();
            self.exact = false;
        }
        changed
    }

    /// Rebuilds the graph from every file record (exact: equals a fresh index).
    pub fn rebuild(&mut self) {
        self.progress.enter(Phase::Building);
        let built = self.rebuild_later().run();
        self.install(built);
    }

    /// How long the last exact build of this index took, when known.
    pub fn build_took(&self) -> Option<std::time::Duration> {
        self.build_took
    }

    /// What the exact rebuilds after quick patches found so far.
    pub fn checks(&self) -> Checks {
        self.checks
    }

    /// Whether the graph is the exact build of the files as last read.
    pub fn is_exact(&self) -> bool {
        self.exact
    }

    /// Whether the graph is exact and was built by this cairn from the roots last read, so
    /// building it again from the same files would give it back.
    fn built_as_now(&self) -> bool {
        self.exact && self.built_from.is_some() && self.built_from == build_key(&self.roots)
    }

    /// The exact rebuild of the files as they are now, to run elsewhere (the daemon's
    /// blocking pool) while the index goes on answering and reading.
    pub fn rebuild_later(&self) -> Rebuild {
        Rebuild {
            files: self.sources.values().cloned().collect(),
            roots: self.roots.clone(),
            epoch: self.epoch,
            previous: self.graph.clone(),
            checks: self.patched == Some(self.epoch),
        }
    }

    /// Takes a rebuild's graph if the files have not changed since it started; a rebuild
    /// of an older state is dropped (answers keep the newer patched graph). Says whether
    /// the graph was taken.
    pub fn install(&mut self, built: Built) -> bool {
        if built.epoch != self.epoch {
            return false;
        }
        if let Some(difference) = built.difference {
            self.checks.rebuilds += 1;
            if !difference.is_empty() {
                self.checks.found += 1;
                self.checks.last_found = Some(difference);
            }
        }
        self.patched = None;
        // What the files read since the last patch newly define is bound in an exact graph.
        self.fresh_names.clear();
        self.fresh_modules.clear();
        self.graph = built.graph;
        self.stats = built.stats;
        self.built_from = built.built_from;
        self.build_took = Some(built.took);
        self.exact = true;
        true
    }

    /// A quick graph for answers after a few files changed: their nodes and outgoing edges
    /// rebuilt against every file, the rest of the graph kept, measures (reach, dependents, impact)
    /// carried over by id. Edges into names that only now resolve, and promotions, wait for
    /// the exact [`Live::rebuild`] that follows; the store only ever receives rebuilt graphs.
    pub fn patch(&mut self, changed: &[String]) -> PatchTiming {
        let started = std::time::Instant::now();
        let changed = self.with_referrers(changed);
        let changed = &changed[..];
        if !self.kept.is_tracked() {
            self.kept.track(
                self.sources
                    .iter()
                    .map(|(path, s)| (path.as_str(), &s.file.extract)),
            );
        }
        // In path order, as the records are kept.
        let files: Vec<&SourceFile> = self.sources.values().map(|s| &s.file).collect();
        let focus: std::collections::HashSet<usize> = changed
            .iter()
            .filter_map(|path| files.binary_search_by(|f| f.path.cmp(path)).ok())
            .collect();
        let (fresh_nodes, fresh_edges) =
            graph::build_focused(&files, &self.roots, &focus, &mut self.kept);
        let built = started.elapsed();
        let graph = self.graph.patch(changed, fresh_nodes, fresh_edges);
        let patched = started.elapsed() - built;
        // The graph replaced is freed here, as part of the patch.
        self.graph = Arc::new(graph);
        self.patched = Some(self.epoch);
        let timing = PatchTiming {
            built,
            patched,
            total: started.elapsed(),
        };
        tracing::debug!(?timing, "patch");
        timing
    }

    /// `changed` (in path order) and the files that name what a changed file now defines and
    /// did not before (a new name, or the module of a new file), so a patch binds them as an
    /// exact build would; when more than [`REFERRERS_READ`] might, they are left to the exact
    /// rebuild, which follows.
    fn with_referrers(&mut self, changed: &[String]) -> Vec<String> {
        let fresh = std::mem::take(&mut self.fresh_names);
        let modules = std::mem::take(&mut self.fresh_modules);
        let mut paths = changed.to_vec();
        paths.extend(self.naming_modules(changed, &modules));
        paths.extend(self.naming_names(changed, &fresh));
        paths.sort();
        paths.dedup();
        paths
    }

    /// The files outside `changed` whose imports name one of `modules` (new files): what
    /// imports a module that did not exist is in no list of the graph's edges, so every
    /// file's imports are read. None when more than [`REFERRERS_READ`] do.
    fn naming_modules(
        &self,
        changed: &[String],
        modules: &rustc_hash::FxHashSet<String>,
    ) -> Vec<String> {
        if modules.is_empty() {
            return Vec::new();
        }
        let names_one = |import: &extract::Import| {
            // `./ro.js` names `ro`, `pkg.newmod` names `newmod`, `from pkg import newmod` too.
            (import.module.rsplit(['/', '.', ':', '\\']).take(2))
                .chain(import.name.as_deref())
                .any(|name| modules.contains(name))
        };
        let importing: Vec<String> = (self.sources.iter())
            .filter(|(path, s)| {
                !changed.contains(path) && s.file.extract.imports.iter().any(names_one)
            })
            .map(|(path, _)| path.clone())
            .take(REFERRERS_READ + 1)
            .collect();
        if importing.len() > REFERRERS_READ {
            return Vec::new();
        }
        importing
    }

    /// The files the graph shows referring to a file at `changed` whose calls, imports or
    /// bases name one of `fresh` (names those files now define). None when more than
    /// [`REFERRERS_READ`] refer to them.
    fn naming_names(
        &self,
        changed: &[String],
        fresh: &rustc_hash::FxHashSet<extract::Text>,
    ) -> Vec<String> {
        if fresh.is_empty() {
            return Vec::new();
        }
        let Some(referring) = self.graph.referring_files(changed, REFERRERS_READ) else {
            return Vec::new();
        };
        let names = |extract: &extract::FileExtract| {
            let named = |text: &str| {
                let last = text.rsplit(['.', ':']).next().unwrap_or(text);
                extract::interned(last).is_some_and(|name| fresh.contains(&name))
            };
            extract.calls.iter().any(|c| fresh.contains(&c.name))
                || (extract.imports.iter()).any(|i| i.name.is_some_and(|n| fresh.contains(&n)))
                || extract.bases.iter().any(|b| named(&b.expr))
        };
        referring
            .into_iter()
            .filter(|path| {
                self.sources
                    .get(*path)
                    .is_some_and(|s| names(&s.file.extract))
            })
            .map(String::from)
            .collect()
    }

    /// The changes not yet written: from the graph the store holds to the current one,
    /// which must be exact (the store only receives exact graphs). Afterwards they count as
    /// written.
    pub fn take_pending(&mut self) -> Pending {
        debug_assert!(self.exact, "only an exact graph is written");
        let pending = Pending {
            old: self.written.clone(),
            new: self.graph.clone(),
            sources: std::mem::take(&mut self.pending),
            moved: std::mem::take(&mut self.pending_moves),
            built_from: self.built_from.clone(),
        };
        self.written = self.graph.clone();
        pending
    }

    /// The report of a refresh.
    pub fn report(&self, update: &Update) -> Report {
        let graph = &*self.graph;
        let mut skipped: Vec<Skipped> = self
            .walk_skipped
            .iter()
            .chain(self.read_skipped.values())
            .cloned()
            .collect();
        skipped.sort_by(|a, b| a.path.cmp(&b.path));
        let diagnostics: Vec<Skipped> = self
            .sources
            .values()
            .flat_map(|s| {
                s.file.extract.diagnostics.iter().map(|d| Skipped {
                    path: s.file.path.clone(),
                    reason: d.clone(),
                })
            })
            .collect();
        let delta = &update.delta;
        Report {
            files: self.sources.len(),
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
            unresolved_call_share: self.stats.unresolved_call_share(),
            stats: self.stats.clone(),
            rebuilt: self.rebuilt,
            build_seconds: self.build_took.map(|took| took.as_secs_f64()),
            parsed: update.parsed,
            removed: delta.delete_sources.len(),
            moved: update.moved.clone(),
            skipped,
            diagnostics,
            nodes_written: delta.upsert_nodes.len() + delta.delete_nodes.len(),
            edges_written: delta.upsert_edges.len() + delta.delete_edges.len(),
            commit: None,
            history_commits: 0,
            history_new: 0,
            wrote: false,
            seconds: 0.0,
            daemon: None,
        }
    }
}

/// The file at `path` as a walk would find it (a regular file reached through no link): `None`
/// if it is gone or not such a file, an error if it is too large or unreadable.
fn found(files: &RepoFiles, repo: &Repo, path: &str) -> Result<Option<Found>, Skipped> {
    let skipped = |reason: String| Skipped {
        path: path.to_string(),
        reason,
    };
    let stat = match files.plain_file(path) {
        Ok(Some(stat)) => stat,
        Ok(None) => return Ok(None),
        Err(e) => return Err(skipped(e.reason())),
    };
    let max_bytes = repo.settings.index.max_file_bytes;
    if stat.size > max_bytes {
        return Err(skipped(format!(
            "larger than the limit ({} > {} bytes; raise index.max_file_bytes in cairn.toml)",
            stat.size, max_bytes
        )));
    }
    Ok(Some(Found {
        path: path.to_string(),
        size: stat.size,
        mtime_ns: stat.mtime_ns,
    }))
}

/// Writes a refresh to the store (when anything changed, or nothing was ever written) with
/// the index facts, and reports it with the store's generation after the write.
async fn commit(
    repo: &Repo,
    store: &Store,
    update: &Update,
    mut report: Report,
    started: Instant,
) -> Result<(Report, u64), StoreError> {
    let commit = if repo.is_git {
        crate::history::head(&repo.root)
    } else {
        None
    };
    report.commit = commit.clone();
    let delta = &update.delta;
    report.removed = delta.delete_sources.len();
    report.moved = update.moved.clone();
    report.nodes_written = delta.upsert_nodes.len() + delta.delete_nodes.len();
    report.edges_written = delta.upsert_edges.len() + delta.delete_edges.len();
    let previous = store.meta().await?.unwrap_or_default();
    let changed = !update.delta.is_empty()
        || previous.commit != commit
        || previous.built_from != update.built_from;
    let mut generation = previous.generation;
    if changed || previous.generation == 0 {
        report.seconds = started.elapsed().as_secs_f64();
        let meta = IndexMeta {
            indexed_at: crate::clock::now(),
            commit,
            generation: previous.generation + 1,
            summary: serde_json::to_value(&report).unwrap_or_default(),
            built_from: update.built_from.clone(),
        };
        store.apply(&update.delta, &meta).await?;
        tracing::info!(elapsed = ?started.elapsed(), "written");
        generation = meta.generation;
        report.wrote = true;
    }
    report.seconds = started.elapsed().as_secs_f64();
    Ok((report, generation))
}

/// Where an index run starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Run {
    /// The stored index: only changed files are parsed again.
    Incremental,
    /// An empty graph store: the stored one (graph, parse cache, mined history) is discarded
    /// first, as a damaged store must be. The memories live in stores of their own.
    Rebuild,
}

/// Indexes under the repository's writer lock, then tells readers (the generation file) that
/// the store changed. `on_wait` is told once if another writer holds the lock.
pub async fn index_repository(
    repo: &Repo,
    patience: std::time::Duration,
    on_wait: impl FnOnce(Option<&str>),
    progress: Arc<Progress>,
    run: Run,
) -> anyhow::Result<Report> {
    index_and_keep(repo, patience, on_wait, progress, run)
        .await
        .map(|(report, _)| report)
}

/// Indexes like [`index_repository`] and keeps the index in memory for later refreshes.
/// `progress` follows the run's phases.
pub async fn load_live(
    repo: &Repo,
    patience: std::time::Duration,
    on_wait: impl FnOnce(Option<&str>),
    progress: Arc<Progress>,
) -> anyhow::Result<(Report, Live)> {
    index_and_keep(repo, patience, on_wait, progress, Run::Incremental).await
}

async fn index_and_keep(
    repo: &Repo,
    patience: std::time::Duration,
    on_wait: impl FnOnce(Option<&str>),
    progress: Arc<Progress>,
    run: Run,
) -> anyhow::Result<(Report, Live)> {
    let started = Instant::now();
    let _lock = crate::lock::acquire(&repo.lock_path(), patience, on_wait)?;
    if run == Run::Rebuild {
        discard_graph_store(repo)?;
    }
    progress.enter(Phase::Loading);
    let store = Store::open(&repo.store_dir()).await?;
    let mut held = None;
    let result = async {
        let mut live = Live::load(&store).await?;
        tracing::info!(elapsed = ?started.elapsed(), "loaded the stored index");
        live.progress = progress.clone();
        let update = live.refresh(repo, None);
        let report = live.report(&update);
        progress.enter(Phase::Writing);
        let (report, generation) = commit(repo, &store, &update, report, started).await?;
        progress.enter(Phase::History);
        live.generation = generation;
        held = Some(live);
        Ok(report)
    }
    .await;
    let report = finish(repo, store, result).await?;
    Ok((
        report,
        held.expect("the index loaded when the report is ready"),
    ))
}

/// Removes the graph store and the generation file (under the writer lock), so the run
/// that follows writes both afresh and readers load what it wrote.
fn discard_graph_store(repo: &Repo) -> anyhow::Result<()> {
    use anyhow::Context as _;
    let store = repo.store_dir();
    match std::fs::remove_dir_all(&store) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(e).with_context(|| format!("cannot remove {}", store.display()));
        }
        _ => {}
    }
    let marker = crate::datadir::DataDir::at(&repo.data_dir).generation();
    match std::fs::remove_file(&marker) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("cannot remove {}", marker.display()))
        }
        _ => Ok(()),
    }
}

/// Why changes held in memory were not written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// Another process (`cairn index` beside the daemon) wrote the store since: a difference
    /// taken against the view held in memory would be wrong, so the holder must reload.
    #[error("the store was written by another process (generation {stored}, expected {expected})")]
    Stale { stored: u64, expected: u64 },
    #[error("{0:#}")]
    Failed(anyhow::Error),
}

/// Writes changes of an index held in memory, if the store is still at generation
/// `expected`. Returns the report (with `report` as the base) and the new generation.
pub async fn write_pending(
    repo: &Repo,
    pending: Pending,
    report: Report,
    expected: u64,
    patience: std::time::Duration,
) -> Result<(Report, u64), WriteError> {
    let started = Instant::now();
    let update = tokio::task::spawn_blocking(move || pending.into_update())
        .await
        .map_err(|e| WriteError::Failed(e.into()))?;
    let lock_path = repo.lock_path();
    // The lock waits by sleeping: not on a runtime worker.
    let _lock =
        tokio::task::spawn_blocking(move || crate::lock::acquire(&lock_path, patience, |_| {}))
            .await
            .map_err(|e| WriteError::Failed(e.into()))?
            .map_err(|e| WriteError::Failed(e.into()))?;
    let store = Store::open(&repo.store_dir())
        .await
        .map_err(|e| WriteError::Failed(e.into()))?;
    let stored = match store.meta().await {
        Ok(meta) => meta.unwrap_or_default().generation,
        Err(e) => {
            store.close().await;
            return Err(WriteError::Failed(e.into()));
        }
    };
    if stored != expected {
        store.close().await;
        return Err(WriteError::Stale { stored, expected });
    }
    let mut generation = stored;
    let result = commit(repo, &store, &update, report, started)
        .await
        .map(|(report, written)| {
            generation = written;
            report
        });
    let report = finish(repo, store, result)
        .await
        .map_err(WriteError::Failed)?;
    Ok((report, generation))
}

/// After a write: the commit history, closing the store, the generation file, and memories
/// following moved files.
async fn finish(
    repo: &Repo,
    store: Store,
    mut report: Result<Report, StoreError>,
) -> anyhow::Result<Report> {
    use anyhow::Context as _;
    if let Ok(report) = report.as_mut()
        && repo.is_git
        && report.commit.is_some()
    {
        match refresh_history(repo, &store).await {
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
    let marker = crate::datadir::DataDir::at(&repo.data_dir).generation();
    if report.wrote || !marker.exists() {
        let stamp = format!(
            "{}-{}",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
            std::process::id()
        );
        crate::fsutil::write_atomic(&marker, stamp.as_bytes())
            .with_context(|| format!("cannot write {}", marker.display()))?;
    }
    if !report.moved.is_empty() {
        // Memories follow their files.
        let memories = crate::memory::Memories::for_setup(
            &repo.root,
            &repo.data_dir,
            crate::memory::SemanticSettings::default(),
            None,
            &repo.team,
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
fn read_all(
    files: &RepoFiles,
    limit: Limit,
    found: &[Found],
    cached: &BTreeMap<String, Arc<SourceRecord>>,
    progress: &Progress,
) -> Vec<Read> {
    progress.parsing(found.len());
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
                    let cached = cached.get(&file.path).map(|s| &**s);
                    local.push((i, read_one(files, limit, file, cached)));
                    progress.parsed_one();
                }
                results.lock().expect("no worker panics").extend(local);
            });
        }
    });
    let mut results = results.into_inner().expect("no worker panics");
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

fn read_one(files: &RepoFiles, limit: Limit, file: &Found, cached: Option<&SourceRecord>) -> Read {
    let registry = Registry::get();
    let language = registry
        .for_path(&file.path)
        .expect("the walk keeps files of registered languages");
    // A cache entry made for another language (a grammar changed between versions) or by
    // another version of the extractor is stale.
    let cached = cached.filter(|record| {
        *record.file.language == *language.spec.name
            && record.file.extract.version == crate::extract::VERSION
    });
    if let Some(record) = cached
        && record.mtime_ns == file.mtime_ns
        && record.file.size == file.size
    {
        return Read::Cached;
    }
    let skip = |reason: String| {
        Read::Skipped(Skipped {
            path: file.path.clone(),
            reason,
        })
    };
    let bytes = match files.read(&file.path, limit) {
        Ok(bytes) => bytes,
        Err(e) => return skip(e.reason()),
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
        return Read::Parsed(Box::new(record));
    }
    Read::Parsed(Box::new(SourceRecord {
        file: SourceFile {
            path: file.path.clone(),
            language: language.shared_name(),
            hash,
            size: file.size,
            last_change,
            is_test: language.is_test_path(&file.path),
            extract: extract::extract(language, &text),
        },
        mtime_ns: file.mtime_ns,
    }))
}

/// Brings the stored commit history up to HEAD: reads only commits not stored yet and drops
/// those that left the window. Returns (commits in the window, commits read).
async fn refresh_history(repo: &Repo, store: &Store) -> anyhow::Result<(usize, usize)> {
    let stored = store.load_history().await?;
    let current = crate::history::head(&repo.root);
    if current.is_some() && current == stored.head {
        return Ok((stored.commits.len(), 0));
    }
    let caught = crate::history::catch_up(
        &repo.root,
        stored.commits,
        repo.settings.history.max_commits,
    )?;
    store
        .write_history(&caught.new, &caught.dropped, caught.head.as_deref())
        .await?;
    Ok((caught.len(), caught.new.len()))
}

#[cfg(test)]
mod tests {
    mod focused {
        use crate::graph::{Edge, Kept, Node, NodeKind, Roots, SourceFile, build_focused};
        use crate::languages::Registry;
        use std::collections::BTreeSet;
        use std::path::{Path, PathBuf};

        /// Every source file under `root` as the index reads it, and the module roots its
        /// configs give.
        fn read_tree(root: &Path) -> (Vec<SourceFile>, Vec<Roots>) {
            let registry = Registry::get();
            let mut files = Vec::new();
            let mut configs = Vec::new();
            let mut pending = vec![root.to_path_buf()];
            while let Some(dir) = pending.pop() {
                for entry in std::fs::read_dir(&dir).unwrap() {
                    let path = entry.unwrap().path();
                    if path.is_dir() {
                        pending.push(path);
                        continue;
                    }
                    let relative = path
                        .strip_prefix(root)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned();
                    let name = path.file_name().unwrap().to_string_lossy();
                    if crate::index::roots::is_config(&name) {
                        configs.push(relative.clone());
                    }
                    let Some(language) = registry.for_path(&relative) else {
                        continue;
                    };
                    let text = std::fs::read_to_string(&path).unwrap();
                    files.push(SourceFile {
                        is_test: language.is_test_path(&relative),
                        language: language.shared_name(),
                        hash: String::new(),
                        size: text.len() as u64,
                        last_change: 0,
                        extract: crate::extract::extract(language, &text),
                        path: relative,
                    });
                }
            }
            files.sort_by(|a, b| a.path.cmp(&b.path));
            configs.sort();
            let reader = crate::fsutil::repo::RepoFiles::open(root).unwrap();
            let roots = crate::index::roots::read(&reader, &configs);
            (files, roots)
        }

        /// Every grammar's fixture trees and the integration tests' mixed trees.
        fn trees() -> Vec<PathBuf> {
            let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
            let mut trees = vec![
                manifest.join("tests/fixtures/mixed"),
                manifest.join("tests/fixtures/resolution"),
            ];
            for language in std::fs::read_dir(manifest.join("grammars")).unwrap() {
                let Ok(cases) = std::fs::read_dir(language.unwrap().path().join("tests")) else {
                    continue;
                };
                trees.extend(cases.map(|c| c.unwrap().path()).filter(|c| c.is_dir()));
            }
            trees.sort();
            trees
        }

        /// A node or edge as one comparable line.
        fn node_line(node: &Node) -> String {
            format!("{node:?}")
        }

        fn edge_line(edge: &Edge) -> String {
            format!("{edge:?}")
        }

        /// A build focused on one file (the daemon's patch) gives that file's nodes and the edges
        /// out of them exactly as a build focused on every file does, though it collects other
        /// files' names and resolves other classes' bases only where it needs them.
        #[test]
        fn a_focused_build_equals_the_whole_build_for_its_files() {
            let mut checked = 0;
            // Kept across trees too: a table of another tree's files is not taken.
            let mut kept = Kept::default();
            for tree in trees() {
                let (owned, roots) = read_tree(&tree);
                let files: Vec<&SourceFile> = owned.iter().collect();
                let every: std::collections::HashSet<usize> = (0..files.len()).collect();
                let (nodes, edges) = build_focused(&files, &roots, &every, &mut kept);
                let owner: std::collections::HashMap<&str, &str> =
                    nodes.iter().map(|n| (&*n.id, &*n.path)).collect();
                for (f, file) in files.iter().enumerate() {
                    let focus = std::collections::HashSet::from([f]);
                    let (focused_nodes, focused_edges) =
                        build_focused(&files, &roots, &focus, &mut kept);
                    let of_file = |n: &&Node| n.kind != NodeKind::External && *n.path == *file.path;
                    let expected: BTreeSet<String> =
                        nodes.iter().filter(of_file).map(node_line).collect();
                    let actual: BTreeSet<String> = focused_nodes
                        .iter()
                        .filter(of_file)
                        .map(node_line)
                        .collect();
                    assert_eq!(
                        actual,
                        expected,
                        "{}: nodes of {}",
                        tree.display(),
                        file.path
                    );
                    let expected: BTreeSet<String> = edges
                        .iter()
                        .filter(|e| owner.get(&*e.src) == Some(&file.path.as_str()))
                        .map(edge_line)
                        .collect();
                    let actual: BTreeSet<String> = focused_edges.iter().map(edge_line).collect();
                    assert_eq!(
                        actual,
                        expected,
                        "{}: edges of {}",
                        tree.display(),
                        file.path
                    );
                    checked += 1;
                }
            }
            assert!(checked > 100, "only {checked} files checked");
        }

        /// Lines of a focused build with a kept table (as `Live::patch` keeps one) and with
        /// a table of its own: equal if the kept one is exactly the files'.
        fn both_builds(
            files: &[&SourceFile],
            roots: &[Roots],
            focus: &std::collections::HashSet<usize>,
            kept: &mut Kept,
        ) -> (BTreeSet<String>, BTreeSet<String>) {
            let lines = |(nodes, edges): (Vec<Node>, Vec<Edge>)| -> BTreeSet<String> {
                nodes
                    .iter()
                    .map(node_line)
                    .chain(edges.iter().map(edge_line))
                    .collect()
            };
            (
                lines(build_focused(files, roots, focus, kept)),
                lines(build_focused(files, roots, focus, &mut Kept::default())),
            )
        }

        /// A tracked table, told of each file emptied, swapped for another's extraction, gone
        /// and back, gives the builds that a table made afresh from the files gives (its
        /// counts of methods, interface methods and outside attributes, and its list of files
        /// declaring methods outside their types, are the files').
        #[test]
        fn a_tracked_kept_table_builds_as_a_fresh_one() {
            let mut checked = 0;
            for tree in trees() {
                let (mut owned, roots) = read_tree(&tree);
                let mut kept = Kept::default();
                kept.track(owned.iter().map(|f| (f.path.as_str(), &f.extract)));
                for f in 0..owned.len() {
                    let other = owned[(f + 1) % owned.len()].extract.clone();
                    for replacement in [crate::extract::FileExtract::default(), other] {
                        let old = std::mem::replace(&mut owned[f].extract, replacement);
                        kept.file_changed(&owned[f].path, Some(&old), Some(&owned[f].extract));
                        let files: Vec<&SourceFile> = owned.iter().collect();
                        let focus = std::collections::HashSet::from([f, (f + 2) % files.len()]);
                        let (tracked, fresh) = both_builds(&files, &roots, &focus, &mut kept);
                        assert_eq!(
                            tracked,
                            fresh,
                            "{}: {} changed",
                            tree.display(),
                            files[f].path
                        );
                        let new = std::mem::replace(&mut owned[f].extract, old);
                        kept.file_changed(&owned[f].path, Some(&new), Some(&owned[f].extract));
                    }
                    // Gone, then back.
                    let gone = owned.remove(f);
                    kept.file_changed(&gone.path, Some(&gone.extract), None);
                    let files: Vec<&SourceFile> = owned.iter().collect();
                    let focus = (0..files.len()).collect();
                    let (tracked, fresh) = both_builds(&files, &roots, &focus, &mut kept);
                    assert_eq!(tracked, fresh, "{}: {} gone", tree.display(), gone.path);
                    kept.file_changed(&gone.path, None, Some(&gone.extract));
                    owned.insert(f, gone);
                    checked += 1;
                }
                let files: Vec<&SourceFile> = owned.iter().collect();
                let focus = (0..files.len()).collect();
                let (tracked, fresh) = both_builds(&files, &roots, &focus, &mut kept);
                assert_eq!(tracked, fresh, "{}: restored", tree.display());
            }
            assert!(checked > 100, "only {checked} files checked");
        }
    }

    use super::*;

    #[tokio::test]
    async fn a_store_converted_from_version_3_reindexes_without_parsing_or_writing() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        std::fs::write(
            root.join("a.py"),
            "import os\nfrom b import g\n\ndef f():\n    return g(os.sep)\n",
        )
        .unwrap();
        std::fs::write(root.join("b.py"), "def g(x):\n    return x\n").unwrap();
        let repo = Repo::discover(&root, Some(&root.join("data"))).unwrap();
        let fresh = Store::open(&root.join("fresh")).await.unwrap();
        run(&repo, &fresh).await.unwrap();
        let graph = fresh.load_graph().await.unwrap();
        let sources = fresh.load_sources().await.unwrap();
        let meta = fresh.meta().await.unwrap().unwrap();
        fresh.close().await;
        assert!(graph.edges.iter().any(|e| e.kind == graph::EdgeKind::Calls));
        crate::storage::graph::older::write_version_3(&repo.store_dir(), &graph, &sources, &meta)
            .await;

        let store = Store::open(&repo.store_dir()).await.unwrap();
        let report = run(&repo, &store).await.unwrap();
        assert_eq!((report.parsed, report.nodes_written), (0, 0));
        assert_eq!(store.load_graph().await.unwrap().nodes, graph.nodes);
        store.close().await;
    }
}
