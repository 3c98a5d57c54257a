//! The graph store: the code graph, the per-file extraction cache, the index facts and the
//! mined commit history, loaded whole and written as differences in batched transactions.
//!
//! The graph is stored by file ([`Part`]): a file's nodes and the edges out of them, and its
//! extraction, are each one LZ4-compressed JSON value, since the graph is only ever loaded
//! whole and rewritten where files changed (schema version 4 says why).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use surrealdb::Surreal;
use surrealdb::engine::local::{Db, Mem};
use surrealdb::types::{Bytes, Object, RecordId};

use super::migrate::{self, Schema, Step};
use super::{Result, StoreError, decode, fields, object, query_error};
use crate::graph::{Edge, EdgeKind, Graph, Node, SourceFile};
use crate::history::{CommitInfo, StoredHistory};

/// The graph store's schema.
const SCHEMA: Schema = Schema {
    name: "the graph schema",
    record: "meta:schema",
    steps: &[
        Step {
            version: 1,
            sql: include_str!("schema/graph/1.surql"),
        },
        Step {
            version: 2,
            sql: include_str!("schema/graph/2.surql"),
        },
        Step {
            version: 3,
            sql: include_str!("schema/graph/3.surql"),
        },
        Step {
            version: 4,
            sql: include_str!("schema/graph/4.surql"),
        },
    ],
};

/// The graph schema version this cairn writes.
pub const SCHEMA_VERSION: u32 = SCHEMA.version();

/// The first version that stores the graph by file; older stores are read and rewritten.
const PARTS_VERSION: u32 = 4;

/// Rows per statement in batched writes.
const BATCH: usize = 500;

/// A stored source file: what the last index saw, and its extraction (the parse cache).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceRecord {
    pub file: SourceFile,
    /// Modification time in nanoseconds, to skip hashing unchanged files.
    pub mtime_ns: i64,
}

/// What an indexed file looked like on disk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileStamp {
    pub path: String,
    pub mtime_ns: i64,
    pub size: u64,
}

/// Facts about the last index run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IndexMeta {
    pub indexed_at: i64,
    pub commit: Option<String>,
    /// Increases with every write, so readers can tell their snapshot is stale.
    pub generation: u64,
    pub summary: serde_json::Value,
    /// What the stored graph was built from besides the files (cairn's build and the module
    /// roots, see `index::build_key`): a load that finds no file changed and the same key
    /// keeps the graph instead of building it again.
    #[serde(default)]
    pub built_from: Option<String>,
}

/// The unit the graph is stored in: the nodes of one file (or external module), by `path`,
/// and the stored edges out of them (by position in the delta's graph). A part with neither
/// is deleted.
#[derive(Debug, Default)]
pub struct Part {
    pub path: String,
    pub nodes: Vec<Arc<Node>>,
    pub edges: Vec<u32>,
}

/// What changes between the stored graph and a new one.
#[derive(Debug, Default)]
pub struct Delta {
    /// Nothing is stored yet: rows are inserted without looking for existing ones.
    pub fresh: bool,
    /// The new graph, which the parts' and `upsert_edges`' positions are of.
    pub graph: Arc<Graph>,
    pub upsert_nodes: Vec<Arc<Node>>,
    pub delete_nodes: Vec<String>,
    /// Positions in `graph`'s edges.
    pub upsert_edges: Vec<u32>,
    pub delete_edges: Vec<EdgeId>,
    /// The parts the node and edge changes fall in, as the new graph has them: what is written.
    pub parts: Vec<Part>,
    /// Shared with the index that holds them (the daemon keeps every file's record).
    pub upsert_sources: Vec<Arc<SourceRecord>>,
    pub delete_sources: Vec<String>,
}

/// A stored edge's identity: its kind and its key ([`Edge::key`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EdgeId {
    pub kind: EdgeKind,
    pub key: String,
}

impl EdgeId {
    fn of(edge: &Edge) -> EdgeId {
        EdgeId {
            kind: edge.kind,
            key: edge.key(),
        }
    }
}

impl Delta {
    /// The changes that turn `old` into `new`.
    pub fn between(old: &Graph, new: &Arc<Graph>) -> Delta {
        let mut delta = Delta {
            fresh: old.nodes.is_empty() && old.edges.is_empty(),
            graph: new.clone(),
            ..Delta::default()
        };
        let stored = |e: &Edge| e.kind != EdgeKind::Contains;
        if delta.fresh {
            // Everything is new: no key of the new graph's is made or looked up (at 50,000
            // files, 3M edge keys held at once while a cold index writes).
            delta.upsert_nodes = new.nodes.clone();
            delta.upsert_edges = stored_edges(new).map(|(at, _)| at).collect();
            delta.parts = parts(new, None);
            return delta;
        }
        for node in &new.nodes {
            let before = old.shared_node(&node.id);
            // Shared nodes are unchanged without comparing them.
            if !before.is_some_and(|b| Arc::ptr_eq(b, node) || **b == **node) {
                delta.upsert_nodes.push(node.clone());
            }
        }
        let mut changed: rustc_hash::FxHashSet<&str> = delta
            .upsert_nodes
            .iter()
            .map(|n| part_of(new, &n.id))
            .collect();
        for node in &old.nodes {
            if new.node(&node.id).is_none() {
                delta.delete_nodes.push(node.id.to_string());
                changed.insert(&node.path);
            }
        }
        let old_edges: rustc_hash::FxHashMap<EdgeId, &Edge> = old
            .edges
            .iter()
            .filter(|e| stored(e))
            .map(|e| (EdgeId::of(e), e))
            .collect();
        let new_keys: rustc_hash::FxHashSet<EdgeId> = new
            .edges
            .iter()
            .filter(|e| stored(e))
            .map(EdgeId::of)
            .collect();
        for (at, edge) in stored_edges(new) {
            if old_edges.get(&EdgeId::of(edge)) != Some(&edge) {
                changed.insert(part_of(new, &edge.src));
                delta.upsert_edges.push(at);
            }
        }
        for (key, edge) in old_edges {
            if !new_keys.contains(&key) {
                changed.insert(part_of(old, &edge.src));
                delta.delete_edges.push(key);
            }
        }
        delta.parts = parts(new, Some(&changed));
        delta
    }

    pub fn is_empty(&self) -> bool {
        self.upsert_nodes.is_empty()
            && self.delete_nodes.is_empty()
            && self.upsert_edges.is_empty()
            && self.delete_edges.is_empty()
            && self.upsert_sources.is_empty()
            && self.delete_sources.is_empty()
    }
}

/// The part a node is stored in: its file (its id, for an edge end the graph lacks).
fn part_of<'a>(graph: &'a Graph, id: &'a str) -> &'a str {
    graph.node(id).map_or(id, |n| &*n.path)
}

/// The edges the store holds (containment is each node's `parent`), with their positions.
fn stored_edges(graph: &Graph) -> impl Iterator<Item = (u32, &Edge)> + '_ {
    (0u32..)
        .zip(graph.edges.iter())
        .filter(|(_, e)| e.kind != EdgeKind::Contains)
}

/// The parts of `graph`, in path order: all of them, or those of the `changed` paths (a
/// changed path with nothing left gives an empty part, to delete).
fn parts(graph: &Graph, changed: Option<&rustc_hash::FxHashSet<&str>>) -> Vec<Part> {
    let mut parts: BTreeMap<&str, Part> = BTreeMap::new();
    for &path in changed.into_iter().flatten() {
        parts.insert(path, Part::default());
    }
    let wanted = |path: &str| changed.is_none_or(|c| c.contains(path));
    for node in graph.nodes.iter().filter(|n| wanted(&n.path)) {
        parts
            .entry(&node.path)
            .or_default()
            .nodes
            .push(node.clone());
    }
    for (at, edge) in stored_edges(graph) {
        let path = part_of(graph, &edge.src);
        if wanted(path) {
            parts.entry(path).or_default().edges.push(at);
        }
    }
    parts
        .into_iter()
        .map(|(path, part)| Part {
            path: path.to_string(),
            ..part
        })
        .collect()
}

/// An open graph store (`ns cairn`, `db repo`).
pub struct Store {
    db: Surreal<Db>,
    /// Where it lives (`memory` for an in-memory one), for the errors that say it is damaged.
    dir: PathBuf,
    /// The engine's lock file, for persistent stores: released once the engine has flushed
    /// and closed.
    lock_file: Option<PathBuf>,
}

/// An open or a read of the graph store that failed on its contents, said so with the way out
/// (the graph store only mirrors the repository, so a rebuild loses nothing); a store locked
/// by another process or written by a newer cairn is left as it is.
fn damaged(dir: &Path) -> impl FnOnce(StoreError) -> StoreError + '_ {
    move |error| match error {
        StoreError::Open { message, .. } => StoreError::Damaged {
            path: dir.to_path_buf(),
            cause: message,
        },
        StoreError::Decode { .. } | StoreError::Query { .. } => StoreError::Damaged {
            path: dir.to_path_buf(),
            cause: error.to_string(),
        },
        other => other,
    }
}

impl Store {
    /// Opens (creating if needed) the persistent store in `dir`, waiting while another process
    /// holds it, and migrates its schema forward.
    pub async fn open(dir: &Path) -> Result<Store> {
        let opened = async {
            let db = super::open_engine(dir, super::OPEN_PATIENCE).await?;
            let mut store = Store::prepare(db, dir).await?;
            store.lock_file = Some(dir.join("LOCK"));
            Ok(store)
        };
        opened.await.map_err(damaged(dir))
    }

    /// Closes the store and waits until the engine has flushed its log and let go of the
    /// files, so the next process finds a cleanly closed store.
    pub async fn close(self) {
        let Store { db, lock_file, .. } = self;
        super::close_engine(db, lock_file).await;
    }

    /// An in-memory store (for tests and dry runs).
    pub async fn memory() -> Result<Store> {
        let db = Surreal::new::<Mem>(())
            .await
            .map_err(|e| StoreError::Open {
                path: PathBuf::from("memory"),
                message: e.to_string(),
            })?;
        Store::prepare(db, Path::new("memory")).await
    }

    async fn prepare(db: Surreal<Db>, dir: &Path) -> Result<Store> {
        db.use_ns("cairn")
            .use_db("repo")
            .await
            .map_err(query_error("selecting the database"))?;
        let store = Store {
            db,
            dir: dir.to_path_buf(),
            lock_file: None,
        };
        let found = migrate::stored_version(&store.db, &SCHEMA).await?;
        let older = if (1..PARTS_VERSION).contains(&found) {
            Some((
                store.load_graph_rows().await?,
                store.load_source_strings().await?,
            ))
        } else {
            None
        };
        migrate::migrate(&store.db, &SCHEMA, &dir.display().to_string()).await?;
        if let Some((graph, sources)) = older {
            let meta = store.meta().await?.unwrap_or_default();
            let mut delta = Delta::between(&Graph::default(), &Arc::new(graph));
            delta.upsert_sources = sources.into_iter().map(Arc::new).collect();
            store.apply(&delta, &meta).await?;
        }
        Ok(store)
    }

    async fn select<T: DeserializeOwned>(&self, sql: &str, doing: &str) -> Result<Vec<T>> {
        decode(super::select(&self.db, sql, doing).await?, doing)
    }

    /// The stored graph.
    pub async fn load_graph(&self) -> Result<Graph> {
        self.read_graph().await.map_err(damaged(&self.dir))
    }

    async fn read_graph(&self) -> Result<Graph> {
        let doing = "loading the graph";
        let rows: Vec<Vec<Bytes>> = self
            .db
            .query("SELECT VALUE [nodes, edges] FROM part")
            .await
            .and_then(|r| r.check())
            .and_then(|mut r| r.take(0))
            .map_err(query_error(doing))?;
        let mut nodes = Vec::new();
        let mut edges = Vec::new();
        let mut ids = crate::graph::Ids::default();
        let mut stored_edges = Vec::with_capacity(rows.len());
        // Every node first, so the copy of an id that all share is the node's own, made in
        // the order of the nodes: a pass over the nodes then reads their ids in memory order
        // (ids first seen at edges lie scattered among them; measured at 50k files, a
        // search over every node's id took twice as long).
        for row in rows {
            let [part_nodes, part_edges] =
                <[Bytes; 2]>::try_from(row).map_err(|_| StoreError::Decode {
                    doing: doing.to_string(),
                    message: "a part without nodes and edges".to_string(),
                })?;
            let mut part: Vec<Node> = unpack(&part_nodes, doing)?;
            for node in &mut part {
                ids.share_node(node);
            }
            nodes.extend(part);
            stored_edges.push(part_edges);
        }
        for part_edges in stored_edges {
            let mut part: Vec<Edge> = unpack(&part_edges, doing)?;
            ids.share_ends(&mut part);
            edges.extend(part);
        }
        Ok(Graph::from_stored(nodes, edges, ids))
    }

    /// The stored source files with their extractions.
    pub async fn load_sources(&self) -> Result<Vec<SourceRecord>> {
        let doing = "loading sources";
        let rows: Vec<Bytes> = self
            .db
            .query("SELECT VALUE record FROM source")
            .await
            .and_then(|r| r.check())
            .and_then(|mut r| r.take(0))
            .map_err(query_error(doing))
            .map_err(damaged(&self.dir))?;
        rows.iter()
            .map(|row| unpack(row, doing).map_err(damaged(&self.dir)))
            .collect()
    }

    /// The graph as schema versions 1-3 stored it: a row per node, a relation per edge.
    async fn load_graph_rows(&self) -> Result<Graph> {
        let rows: Vec<serde_json::Value> = self
            .select("SELECT *, record::id(id) AS key FROM node", "loading nodes")
            .await?;
        let mut nodes: Vec<Node> = decode(
            rows.into_iter()
                .map(|mut row| {
                    if let Some(object) = row.as_object_mut() {
                        let key = object.remove("key").unwrap_or_default();
                        object.insert("id".to_string(), key);
                    }
                    row
                })
                .collect(),
            "loading nodes",
        )?;
        let mut edges = Vec::new();
        for kind in EdgeKind::STORED {
            let table = kind.table();
            let sql = format!(
                "SELECT '{table}' AS kind, record::id(in) AS src, record::id(out) AS dst, lines, reasons FROM {table}"
            );
            edges.extend(self.select::<Edge>(&sql, "loading edges").await?);
        }
        let mut ids = crate::graph::Ids::default();
        for node in &mut nodes {
            ids.share_node(node);
        }
        ids.share_ends(&mut edges);
        Ok(Graph::from_stored(nodes, edges, ids))
    }

    /// The source records as schema versions 1-3 stored them: JSON strings.
    async fn load_source_strings(&self) -> Result<Vec<SourceRecord>> {
        #[derive(Deserialize)]
        struct Row {
            record: String,
        }
        let rows: Vec<Row> = self
            .select("SELECT record FROM source", "loading sources")
            .await?;
        rows.into_iter()
            .map(|row| {
                serde_json::from_str(&row.record).map_err(|e| StoreError::Decode {
                    doing: "reading a source record".to_string(),
                    message: e.to_string(),
                })
            })
            .collect()
    }

    /// Size and modification time of every indexed file, by path (cheap: no extractions).
    pub async fn file_stamps(&self) -> Result<Vec<FileStamp>> {
        self.select(
            "SELECT record::id(id) AS path, mtime_ns, size FROM source",
            "reading file stamps",
        )
        .await
    }

    pub async fn meta(&self) -> Result<Option<IndexMeta>> {
        let rows: Vec<IndexMeta> = self
            .select("SELECT * OMIT id FROM meta:index", "reading index facts")
            .await?;
        Ok(rows.into_iter().next())
    }

    /// The mined commit history, and the HEAD it was mined at.
    pub async fn load_history(&self) -> Result<StoredHistory> {
        let doing = "loading the commit history";
        let commits: Vec<CommitInfo> = self
            .select("SELECT *, record::id(id) AS id FROM commit", doing)
            .await?;
        #[derive(Deserialize)]
        struct Head {
            head: Option<String>,
        }
        let head: Vec<Head> = self.select("SELECT head FROM meta:history", doing).await?;
        Ok(StoredHistory {
            commits,
            head: head.into_iter().next().and_then(|h| h.head),
        })
    }

    /// Stores newly mined commits and drops those that left the window, in one transaction.
    pub async fn write_history(
        &self,
        added: &[CommitInfo],
        dropped: &[String],
        head: Option<&str>,
    ) -> Result<()> {
        let rows: Vec<Object> = added
            .iter()
            .map(|c| {
                let mut row = object(fields(c));
                row.insert("id", RecordId::new("commit", c.id.as_str()));
                row
            })
            .collect();
        let gone: Vec<RecordId> = dropped
            .iter()
            .map(|id| RecordId::new("commit", id.as_str()))
            .collect();
        self.db
            .query(
                "BEGIN TRANSACTION;
                 INSERT INTO commit $rows ON DUPLICATE KEY UPDATE files = $input.files;
                 FOR $id IN $gone { DELETE $id };
                 UPSERT meta:history SET head = $head;
                 COMMIT TRANSACTION;",
            )
            .bind(("rows", rows))
            .bind(("gone", gone))
            .bind(("head", head.map(str::to_string)))
            .await
            .and_then(|r| r.check())
            .map_err(query_error("writing the commit history"))?;
        Ok(())
    }

    /// Applies a delta and the new index facts, in transactions of bounded size.
    pub async fn apply(&self, delta: &Delta, meta: &IndexMeta) -> Result<()> {
        let mut writer = Writer::new(&self.db);

        let (kept, gone): (Vec<&Part>, Vec<&Part>) = delta
            .parts
            .iter()
            .partition(|p| !p.nodes.is_empty() || !p.edges.is_empty());
        for (i, chunk) in kept.chunks(BATCH).enumerate() {
            let rows = chunk
                .iter()
                .map(|part| {
                    let mut row = Object::new();
                    row.insert("id", RecordId::new("part", part.path.as_str()));
                    row.insert("nodes", pack(&part.nodes));
                    let edges: Vec<&Edge> = part
                        .edges
                        .iter()
                        .map(|&at| &delta.graph.edges[at as usize])
                        .collect();
                    row.insert("edges", pack(&edges));
                    row
                })
                .collect();
            let var = format!("parts{i}");
            let statement = if delta.fresh {
                format!("INSERT INTO part ${var}")
            } else {
                format!(
                    "INSERT INTO part ${var} ON DUPLICATE KEY UPDATE nodes = $input.nodes, edges = $input.edges"
                )
            };
            writer.rows(statement, var, rows).await?;
        }
        let gone: Vec<RecordId> = gone
            .iter()
            .map(|part| RecordId::new("part", part.path.as_str()))
            .collect();
        for (i, chunk) in gone.chunks(BATCH).enumerate() {
            let var = format!("gone_parts{i}");
            writer
                .ids(format!("DELETE ${var}"), var, chunk.to_vec())
                .await?;
        }
        for (i, chunk) in delta.upsert_sources.chunks(BATCH).enumerate() {
            let rows = chunk
                .iter()
                .map(|source| {
                    let mut row = Object::new();
                    row.insert("id", RecordId::new("source", source.file.path.as_str()));
                    row.insert("record", pack(source));
                    row.insert("mtime_ns", source.mtime_ns);
                    row.insert("size", source.file.size as i64);
                    row
                })
                .collect();
            let var = format!("sources{i}");
            let statement = format!(
                "INSERT INTO source ${var} ON DUPLICATE KEY UPDATE record = $input.record, mtime_ns = $input.mtime_ns, size = $input.size"
            );
            writer.rows(statement, var, rows).await?;
        }
        let deleted_sources: Vec<RecordId> = delta
            .delete_sources
            .iter()
            .map(|path| RecordId::new("source", path.as_str()))
            .collect();
        if !deleted_sources.is_empty() {
            writer
                .ids(
                    "DELETE $gone_sources".to_string(),
                    "gone_sources".to_string(),
                    deleted_sources,
                )
                .await?;
        }
        writer.finish(object(fields(meta))).await
    }
}

/// A stored value: JSON, compressed (a third to a fifth of the JSON's size).
fn pack(value: &impl Serialize) -> Bytes {
    let json = serde_json::to_vec(value).expect("stored values serialise");
    Bytes::from(lz4_flex::compress_prepend_size(&json))
}

/// A value [`pack`] stored.
fn unpack<T: DeserializeOwned>(bytes: &[u8], doing: &str) -> Result<T> {
    let error = |message: String| StoreError::Decode {
        doing: doing.to_string(),
        message,
    };
    // LZ4 expands at most 255 times: a size prefix beyond that is damage, not a value, and
    // must not make the reader allocate it.
    let prefix = bytes
        .get(..4)
        .map(|p| u32::from_le_bytes(p.try_into().expect("4 bytes")));
    if prefix.is_some_and(|size| size as usize > bytes.len().saturating_mul(255) + 16) {
        return Err(error(
            "a stored value larger than its compression allows".to_string(),
        ));
    }
    let json = lz4_flex::decompress_size_prepended(bytes).map_err(|e| error(e.to_string()))?;
    serde_json::from_slice(&json).map_err(|e| error(e.to_string()))
}

/// Batched writes: statements run in transactions of about [`ROWS_PER_TRANSACTION`] rows, so a
/// large index does not hold every row in memory at once. The index facts go in the last
/// transaction, and readers reload only after the writer has finished (the generation marker).
struct Writer<'a> {
    db: &'a Surreal<Db>,
    statements: Vec<String>,
    rows: Vec<Bound<Object>>,
    ids: Vec<Bound<RecordId>>,
    pending: usize,
}

/// A list bound to a statement's variable.
struct Bound<T> {
    var: String,
    list: Vec<T>,
}

/// Rows per transaction when writing the graph.
const ROWS_PER_TRANSACTION: usize = 20_000;

impl<'a> Writer<'a> {
    fn new(db: &'a Surreal<Db>) -> Self {
        Writer {
            db,
            statements: Vec::new(),
            rows: Vec::new(),
            ids: Vec::new(),
            pending: 0,
        }
    }

    async fn rows(&mut self, statement: String, var: String, rows: Vec<Object>) -> Result<()> {
        self.pending += rows.len();
        self.statements.push(statement);
        self.rows.push(Bound { var, list: rows });
        self.flush_if_full().await
    }

    async fn ids(&mut self, statement: String, var: String, ids: Vec<RecordId>) -> Result<()> {
        self.pending += ids.len();
        self.statements.push(statement);
        self.ids.push(Bound { var, list: ids });
        self.flush_if_full().await
    }

    async fn flush_if_full(&mut self) -> Result<()> {
        if self.pending >= ROWS_PER_TRANSACTION {
            self.commit(None).await?;
        }
        Ok(())
    }

    async fn finish(mut self, meta: Object) -> Result<()> {
        self.commit(Some(meta)).await
    }

    async fn commit(&mut self, meta: Option<Object>) -> Result<()> {
        let mut statements = vec!["BEGIN TRANSACTION".to_string()];
        statements.append(&mut self.statements);
        if meta.is_some() {
            statements.push("UPSERT meta:index CONTENT $meta".to_string());
        }
        statements.push("COMMIT TRANSACTION".to_string());
        let mut query = self.db.query(statements.join(";\n"));
        for rows in self.rows.drain(..) {
            query = query.bind((rows.var, rows.list));
        }
        for ids in self.ids.drain(..) {
            query = query.bind((ids.var, ids.list));
        }
        if let Some(meta) = meta {
            query = query.bind(("meta", meta));
        }
        self.pending = 0;
        query
            .await
            .and_then(|r| r.check())
            .map_err(query_error("writing the index"))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tables `1.surql` defines as relations, in order.
    fn relation_tables(sql: &str) -> Vec<&str> {
        sql.lines()
            .filter_map(|line| line.strip_prefix("DEFINE TABLE IF NOT EXISTS "))
            .filter(|rest| rest.contains("TYPE RELATION"))
            .filter_map(|rest| rest.split_whitespace().next())
            .collect()
    }

    #[test]
    fn the_edge_tables_are_the_stored_edge_kinds() {
        let sql = SCHEMA.steps[0].sql;
        let stored: Vec<&str> = EdgeKind::STORED.iter().map(|k| k.table()).collect();
        assert_eq!(relation_tables(sql), stored);
        for table in stored {
            for field in [
                format!("DEFINE FIELD IF NOT EXISTS lines ON {table} TYPE array<int>;"),
                format!("DEFINE FIELD IF NOT EXISTS reasons ON {table} TYPE array<string>;"),
            ] {
                assert!(sql.contains(&field), "{field}");
            }
        }
    }

    #[tokio::test]
    async fn a_version_2_store_opens_with_neutral_impacts() {
        let dir = tempfile::tempdir().unwrap();
        older::store(
            dir.path(),
            format!(
                "{} {} UPSERT meta:schema SET version = 2;
                 CREATE node:⟨a.py⟩ CONTENT {{ kind: 'file', path: 'a.py', name: 'a.py',
                   start_line: 1, end_line: 3, signature: NONE, doc: NONE, is_test: false,
                   side_effects: [], mutations: 0, reach: 4, causal_in: 2, last_change: 0,
                   parent: NONE }};",
                SCHEMA.steps[0].sql, SCHEMA.steps[1].sql
            ),
        )
        .await;
        let store = Store::open(dir.path()).await.unwrap();
        assert_eq!(
            migrate::stored_version(&store.db, &SCHEMA).await.unwrap(),
            SCHEMA_VERSION
        );
        let graph = store.load_graph().await.unwrap();
        let node = graph.node("a.py").unwrap();
        assert_eq!((node.reach, node.causal_in, node.impact), (4, 2, 1.0));
        store.close().await;
    }

    #[tokio::test]
    async fn a_version_1_store_gains_the_commit_history() {
        let dir = tempfile::tempdir().unwrap();
        older::store(
            dir.path(),
            format!(
                "{} UPSERT meta:schema SET version = 1;
                 UPSERT meta:index CONTENT {{ indexed_at: 1, generation: 3, summary: {{}} }};",
                SCHEMA.steps[0].sql
            ),
        )
        .await;
        let store = Store::open(dir.path()).await.unwrap();
        assert_eq!(
            migrate::stored_version(&store.db, &SCHEMA).await.unwrap(),
            SCHEMA_VERSION
        );
        assert_eq!(store.meta().await.unwrap().unwrap().generation, 3);
        let commit = CommitInfo {
            id: "abc123".to_string(),
            time: 1_700_000_000,
            author: "alice@example.com".to_string(),
            name: "Alice".to_string(),
            summary: "Fix the parser".to_string(),
            fix: true,
            files: vec!["src/parse.py".to_string()],
        };
        store
            .write_history(std::slice::from_ref(&commit), &[], Some("abc123"))
            .await
            .unwrap();
        let history = store.load_history().await.unwrap();
        assert_eq!(history.commits, [commit]);
        assert_eq!(history.head.as_deref(), Some("abc123"));
        store.close().await;
    }

    /// Every store's parts, by path.
    async fn part_paths(store: &Store) -> Vec<String> {
        let mut paths: Vec<String> = store
            .select::<String>("SELECT VALUE record::id(id) FROM part", "listing parts")
            .await
            .unwrap();
        paths.sort();
        paths
    }

    fn node(id: &str, path: &str, parent: Option<&str>) -> Node {
        Node {
            id: id.into(),
            kind: if parent.is_some() {
                crate::graph::NodeKind::Function
            } else {
                crate::graph::NodeKind::File
            },
            path: path.into(),
            name: id.rsplit("::").next().unwrap().into(),
            start_line: 1,
            end_line: 9,
            signature: parent.map(|_| format!("def {id}(x)")),
            doc: None,
            is_test: false,
            side_effects: vec!["io".to_string()],
            mutations: 2,
            reach: 3,
            causal_in: 1,
            impact: 2.5,
            last_change: 1_700_000_000,
            parent: parent.map(Into::into),
            untyped_calls: Box::default(),
        }
    }

    fn edge(kind: EdgeKind, src: &str, dst: &str, reasons: &[&str]) -> Edge {
        Edge {
            kind,
            src: src.into(),
            dst: dst.into(),
            lines: [3, 7].into(),
            reasons: reasons.iter().map(|&r| r.into()).collect(),
        }
    }

    fn assert_same(loaded: &Graph, expected: &Graph) {
        let nodes = |g: &Graph| g.nodes.iter().map(|n| (**n).clone()).collect::<Vec<_>>();
        let edges = |g: &Graph| g.edges.iter().cloned().collect::<Vec<_>>();
        assert_eq!(nodes(loaded), nodes(expected));
        assert_eq!(edges(loaded), edges(expected));
    }

    #[tokio::test]
    async fn the_graph_comes_back_as_written_and_as_patched() {
        let store = Store::memory().await.unwrap();
        let before = Graph::from_stored(
            vec![
                node("a.py", "a.py", None),
                node("a.py::f", "a.py", Some("a.py")),
                node("b.py", "b.py", None),
                node("b.py::g", "b.py", Some("b.py")),
                node("os", "os", None),
            ],
            vec![
                edge(EdgeKind::Calls, "a.py::f", "b.py::g", &[]),
                edge(EdgeKind::Imports, "a.py", "os", &[]),
                edge(
                    EdgeKind::Calls,
                    "b.py::g",
                    "a.py::f",
                    &["promoted: a reason"],
                ),
            ],
            Default::default(),
        );
        let meta = IndexMeta::default();
        store
            .apply(
                &Delta::between(&Graph::default(), &Arc::new(before.clone())),
                &meta,
            )
            .await
            .unwrap();
        let loaded = store.load_graph().await.unwrap();
        assert_same(&loaded, &before);
        assert_eq!(part_paths(&store).await, ["a.py", "b.py", "os"]);
        // Edges stored in different parts, and containment made on loading, hold one copy of
        // each id they share.
        let ends_at = |id: &str| -> Vec<Arc<str>> {
            loaded
                .edges
                .iter()
                .flat_map(|e| [&e.src, &e.dst])
                .filter(|end| &***end == id)
                .cloned()
                .collect()
        };
        for id in ["a.py::f", "b.py::g", "a.py"] {
            let ends = ends_at(id);
            assert!(ends.len() >= 2, "{id} ends {} edges", ends.len());
            assert!(ends.iter().all(|end| Arc::ptr_eq(end, &ends[0])), "{id}");
        }
        assert_one_copy_of_each_id(&loaded);

        // b.py is gone, a.py::f changed and calls into the standard library instead.
        let mut f = node("a.py::f", "a.py", Some("a.py"));
        f.signature = Some("def f(x, y)".to_string());
        let after = Arc::new(Graph::from_stored(
            vec![node("a.py", "a.py", None), f, node("os", "os", None)],
            vec![
                edge(EdgeKind::Imports, "a.py", "os", &[]),
                edge(EdgeKind::Calls, "a.py::f", "os", &[]),
            ],
            Default::default(),
        ));
        let delta = Delta::between(&before, &after);
        let written: Vec<&str> = delta.parts.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(written, ["a.py", "b.py"], "only the parts that changed");
        store.apply(&delta, &meta).await.unwrap();
        assert_same(&store.load_graph().await.unwrap(), &after);
        assert_eq!(part_paths(&store).await, ["a.py", "os"]);
    }

    /// Every node holds the one copy of its id that the edges at it hold, and its file and
    /// parent are the ids of those nodes, not copies.
    fn assert_one_copy_of_each_id(graph: &Graph) {
        let mut checked = 0;
        for node in &graph.nodes {
            if let Some(file) = graph.shared_node(&node.path) {
                assert!(Arc::ptr_eq(&node.path, &file.id), "{}", node.id);
                checked += 1;
            }
            if let Some(parent) = &node.parent {
                let parent_node = graph.shared_node(parent).expect("a parent in the graph");
                assert!(Arc::ptr_eq(parent, &parent_node.id), "{}", node.id);
                checked += 1;
            }
        }
        for edge in graph.edges.iter() {
            for end in [&edge.src, &edge.dst] {
                if let Some(node) = graph.shared_node(end) {
                    assert!(Arc::ptr_eq(end, &node.id), "{} -> {}", edge.src, edge.dst);
                    checked += 1;
                }
            }
        }
        assert!(checked > graph.nodes.len(), "only {checked} ids checked");
    }

    /// A built graph and the same graph loaded hold each id once.
    #[tokio::test]
    async fn a_built_and_a_loaded_graph_hold_each_id_once() {
        let sources = extractions();
        let files: Vec<&SourceFile> = sources.iter().map(|s| &s.file).collect();
        let (graph, _) = crate::graph::build(&files, &[]);
        let graph = Arc::new(graph);
        assert_one_copy_of_each_id(&graph);
        let store = Store::memory().await.unwrap();
        store
            .apply(
                &Delta::between(&Graph::default(), &graph),
                &IndexMeta::default(),
            )
            .await
            .unwrap();
        let loaded = store.load_graph().await.unwrap();
        assert_same(&loaded, &graph);
        assert_one_copy_of_each_id(&loaded);
    }

    /// Extractions of several languages, with every optional and tagged field in use.
    fn extractions() -> Vec<SourceRecord> {
        let registry = crate::languages::Registry::get();
        let files = [
            (
                "python",
                "app.py",
                "import os\nfrom .models import User as U\n\nclass A(Base):\n    \"\"\"Doc.\"\"\"\n    def m(self, x: int) -> str:\n        self.n = 1\n        return os.path.join(U().name, x.strip())\n\ndef f():\n    A().m(1)\n    print((\n",
            ),
            (
                "java",
                "A.java",
                "package com.shop;\nclass A {\n  A() { this.x = 1; }\n  void m() { this.x = 2; }\n}\n",
            ),
            (
                "csharp",
                "App.cs",
                "namespace Shop.Web;\npublic partial class App { }\ninternal sealed class Other { }\n",
            ),
            (
                "typescript",
                "main.ts",
                "import { x } from './x';\nexport class C extends B { run(): number { return x.go(this.y); } }\n",
            ),
        ];
        files
            .iter()
            .enumerate()
            .map(|(i, (language, path, source))| {
                let extract = crate::extract::extract(registry.by_name(language).unwrap(), source);
                SourceRecord {
                    file: SourceFile {
                        path: path.to_string(),
                        language: registry.shared_name(language),
                        hash: format!("{i:016x}"),
                        size: source.len() as u64,
                        last_change: 1_700_000_000 + i as i64,
                        is_test: i == 3,
                        extract,
                    },
                    mtime_ns: -(i as i64),
                }
            })
            .collect()
    }

    #[test]
    fn a_damaged_stored_value_is_a_decode_error_not_an_allocation() {
        let good = pack(&vec![1u32, 2, 3]);
        assert_eq!(unpack::<Vec<u32>>(&good, "reading").unwrap(), [1, 2, 3]);
        let mut huge = good.to_vec();
        huge[..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(
            unpack::<Vec<u32>>(&huge, "reading"),
            Err(StoreError::Decode { .. })
        ));
        assert!(unpack::<Vec<u32>>(&[1, 0], "reading").is_err());
    }

    #[tokio::test]
    async fn extractions_come_back_exactly() {
        let records = extractions();
        let python = &records[0].file.extract;
        assert!(!python.calls.is_empty() && !python.diagnostics.is_empty());
        assert!(!records[1].file.extract.packages.is_empty());
        assert!(!records[2].file.extract.parts.is_empty());
        let store = Store::memory().await.unwrap();
        let delta = Delta {
            upsert_sources: records.iter().cloned().map(Arc::new).collect(),
            ..Delta::default()
        };
        store.apply(&delta, &IndexMeta::default()).await.unwrap();
        let mut loaded = store.load_sources().await.unwrap();
        loaded.sort_by(|a, b| a.file.path.cmp(&b.file.path));
        let mut expected = records;
        expected.sort_by(|a, b| a.file.path.cmp(&b.file.path));
        assert_eq!(loaded, expected);
    }

    #[tokio::test]
    async fn a_version_3_store_is_rewritten_by_file_as_it_was() {
        let root = tempfile::tempdir().unwrap();
        let sources = extractions();
        let files: Vec<&SourceFile> = sources.iter().map(|s| &s.file).collect();
        let (graph, _) = crate::graph::build(&files, &[]);
        assert!(graph.edges.iter().any(|e| e.kind != EdgeKind::Contains));
        let meta = IndexMeta {
            indexed_at: 1_700_000_000,
            commit: Some("abc".to_string()),
            generation: 7,
            summary: serde_json::json!({"files": 4}),
            built_from: None,
        };
        older::write_version_3(root.path(), &graph, &sources, &meta).await;

        let store = Store::open(root.path()).await.unwrap();
        assert_same(&store.load_graph().await.unwrap(), &graph);
        let mut loaded = store.load_sources().await.unwrap();
        loaded.sort_by(|a, b| a.file.path.cmp(&b.file.path));
        let mut expected = sources.clone();
        expected.sort_by(|a, b| a.file.path.cmp(&b.file.path));
        assert_eq!(loaded, expected);
        assert_eq!(store.meta().await.unwrap().unwrap(), meta);
        let mut files: Vec<String> = graph.nodes.iter().map(|n| n.path.to_string()).collect();
        files.sort();
        files.dedup();
        assert_eq!(part_paths(&store).await, files);
        let info: Option<serde_json::Value> = store
            .db
            .query("INFO FOR DB")
            .await
            .unwrap()
            .take(0)
            .unwrap();
        let info = info.unwrap();
        let tables = info["tables"].as_object().unwrap();
        assert!(!tables.contains_key("node") && !tables.contains_key("calls"));
        store.close().await;
    }
}

/// Stores as cairn wrote them before schema 4 (a row per node, a relation per edge, the
/// extraction as a JSON string), for the tests of the conversion.
#[cfg(test)]
pub(crate) mod older {
    use super::*;

    /// A store in `dir` as an older cairn left it: `sql` run on a new engine, then closed.
    pub(crate) async fn store(dir: &Path, sql: String) {
        let db = super::super::open_engine(dir, super::super::OPEN_PATIENCE)
            .await
            .unwrap();
        db.use_ns("cairn").use_db("repo").await.unwrap();
        db.query(sql).await.and_then(|r| r.check()).unwrap();
        super::super::close_engine(db, Some(dir.join("LOCK"))).await;
    }

    /// A version-3 store in `dir` holding `graph`, `sources` and `meta`.
    pub(crate) async fn write_version_3(
        dir: &Path,
        graph: &Graph,
        sources: &[SourceRecord],
        meta: &IndexMeta,
    ) {
        let mut sql = format!(
            "{} {} {} UPSERT meta:schema SET version = 3;",
            SCHEMA.steps[0].sql, SCHEMA.steps[1].sql, SCHEMA.steps[2].sql
        );
        for node in &graph.nodes {
            let mut row = fields(&**node);
            row.remove("id");
            sql.push_str(&format!(
                "CREATE node:⟨{}⟩ CONTENT {};",
                node.id,
                serde_json::Value::Object(row)
            ));
        }
        for edge in graph.edges.iter().filter(|e| e.kind != EdgeKind::Contains) {
            sql.push_str(&format!(
                "RELATE node:⟨{}⟩->{}:⟨{}⟩->node:⟨{}⟩ SET lines = {:?}, reasons = {};",
                edge.src,
                edge.kind.table(),
                edge.key(),
                edge.dst,
                edge.lines,
                serde_json::to_string(&edge.reasons).unwrap(),
            ));
        }
        for source in sources {
            sql.push_str(&format!(
                "CREATE source:⟨{}⟩ SET record = {}, mtime_ns = {}, size = {};",
                source.file.path,
                serde_json::to_string(&serde_json::to_string(source).unwrap()).unwrap(),
                source.mtime_ns,
                source.file.size
            ));
        }
        sql.push_str(&format!(
            "UPSERT meta:index CONTENT {};",
            serde_json::to_string(meta).unwrap()
        ));
        store(dir, sql).await;
    }
}
