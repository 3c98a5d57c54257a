//! The graph store: the code graph, the per-file extraction cache, the index facts and the
//! mined commit history, loaded whole and written as differences in batched transactions.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use surrealdb::Surreal;
use surrealdb::engine::local::{Db, Mem};
use surrealdb::types::{Object, RecordId};

use super::migrate::{self, Schema, Step};
use super::{Result, StoreError, decode, fields, object, query_error};
use crate::graph::{Edge, EdgeKind, Graph, Node, SourceFile};
use crate::history::CommitInfo;

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
    ],
};

/// The graph schema version this cairn writes.
pub const SCHEMA_VERSION: u32 = SCHEMA.version();

/// Stored fields of a node, besides its id.
const NODE_FIELDS: &[&str] = &[
    "kind",
    "path",
    "name",
    "start_line",
    "end_line",
    "signature",
    "doc",
    "is_test",
    "side_effects",
    "mutations",
    "reach",
    "causal_in",
    "impact",
    "last_change",
    "parent",
];

/// Rows per statement in batched writes.
const BATCH: usize = 2_000;

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
}

/// What changes between the stored graph and a new one.
#[derive(Debug, Default)]
pub struct Delta {
    /// Nothing is stored yet: rows are inserted without looking for existing ones.
    pub fresh: bool,
    pub upsert_nodes: Vec<Node>,
    pub delete_nodes: Vec<String>,
    pub upsert_edges: Vec<Edge>,
    pub delete_edges: Vec<(EdgeKind, String)>,
    pub upsert_sources: Vec<SourceRecord>,
    pub delete_sources: Vec<String>,
}

impl Delta {
    /// The changes that turn `old` into `new`.
    pub fn between(old: &Graph, new: &Graph) -> Delta {
        let mut delta = Delta {
            fresh: old.nodes.is_empty() && old.edges.is_empty(),
            ..Delta::default()
        };
        for node in &new.nodes {
            let before = old.shared_node(&node.id);
            // Shared nodes are unchanged without comparing them.
            if !before.is_some_and(|b| Arc::ptr_eq(b, node) || **b == **node) {
                delta.upsert_nodes.push((**node).clone());
            }
        }
        for node in &old.nodes {
            if new.node(&node.id).is_none() {
                delta.delete_nodes.push(node.id.clone());
            }
        }
        let stored = |e: &&Edge| e.kind != EdgeKind::Contains;
        let old_edges: rustc_hash::FxHashMap<(EdgeKind, String), &Edge> = old
            .edges
            .iter()
            .map(|e| &**e)
            .filter(stored)
            .map(|e| ((e.kind, e.key()), e))
            .collect();
        let new_keys: rustc_hash::FxHashSet<(EdgeKind, String)> = new
            .edges
            .iter()
            .map(|e| &**e)
            .filter(stored)
            .map(|e| (e.kind, e.key()))
            .collect();
        for edge in new.edges.iter().map(|e| &**e).filter(stored) {
            if old_edges.get(&(edge.kind, edge.key())) != Some(&edge) {
                delta.upsert_edges.push(edge.clone());
            }
        }
        for (key, _) in old_edges {
            if !new_keys.contains(&key) {
                delta.delete_edges.push(key);
            }
        }
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

/// An open graph store (`ns cairn`, `db repo`).
pub struct Store {
    db: Surreal<Db>,
    /// The engine's lock file, for persistent stores: released once the engine has flushed
    /// and closed.
    lock_file: Option<PathBuf>,
}

/// A stored node row: the node without its id, which is the record key.
#[derive(Serialize)]
struct NodeRow<'a> {
    #[serde(flatten)]
    node: &'a Node,
}

impl Store {
    /// Opens (creating if needed) the persistent store in `dir`, waiting while another process
    /// holds it, and migrates its schema forward.
    pub async fn open(dir: &Path) -> Result<Store> {
        let db = super::open_engine(dir, super::OPEN_PATIENCE).await?;
        let mut store = Store::prepare(db, dir).await?;
        store.lock_file = Some(dir.join("LOCK"));
        Ok(store)
    }

    /// Closes the store and waits until the engine has flushed its log and let go of the
    /// files, so the next process finds a cleanly closed store.
    pub async fn close(self) {
        let Store { db, lock_file } = self;
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
            lock_file: None,
        };
        migrate::migrate(&store.db, &SCHEMA, &dir.display().to_string()).await?;
        Ok(store)
    }

    async fn select<T: DeserializeOwned>(&self, sql: &str, doing: &str) -> Result<Vec<T>> {
        decode(super::select(&self.db, sql, doing).await?, doing)
    }

    /// The stored graph.
    pub async fn load_graph(&self) -> Result<Graph> {
        let rows: Vec<serde_json::Value> = self
            .select("SELECT *, record::id(id) AS key FROM node", "loading nodes")
            .await?;
        let nodes: Vec<Node> = decode(
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
        Ok(Graph::from_stored(nodes, edges))
    }

    /// The stored source files with their extractions.
    pub async fn load_sources(&self) -> Result<Vec<SourceRecord>> {
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
    pub async fn load_history(&self) -> Result<(Vec<CommitInfo>, Option<String>)> {
        let doing = "loading the commit history";
        let commits: Vec<CommitInfo> = self
            .select("SELECT *, record::id(id) AS id FROM commit", doing)
            .await?;
        #[derive(Deserialize)]
        struct Head {
            head: Option<String>,
        }
        let head: Vec<Head> = self.select("SELECT head FROM meta:history", doing).await?;
        Ok((commits, head.into_iter().next().and_then(|h| h.head)))
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

        let node_fields = NODE_FIELDS
            .iter()
            .map(|f| format!("{f} = $input.{f}"))
            .collect::<Vec<_>>()
            .join(", ");
        for (i, chunk) in delta.upsert_nodes.chunks(BATCH).enumerate() {
            let rows = chunk
                .iter()
                .map(|node| {
                    let mut row = object(fields(&NodeRow { node }));
                    row.insert("id", RecordId::new("node", node.id.as_str()));
                    row
                })
                .collect();
            let var = format!("nodes{i}");
            let statement = if delta.fresh {
                format!("INSERT INTO node ${var}")
            } else {
                format!("INSERT INTO node ${var} ON DUPLICATE KEY UPDATE {node_fields}")
            };
            writer.rows(statement, var, rows).await?;
        }
        for kind in EdgeKind::STORED {
            let table = kind.table();
            let edges: Vec<&Edge> = delta
                .upsert_edges
                .iter()
                .filter(|e| e.kind == kind)
                .collect();
            for (i, chunk) in edges.chunks(BATCH).enumerate() {
                let rows = chunk
                    .iter()
                    .map(|edge| {
                        let mut row = Object::new();
                        row.insert("id", RecordId::new(table, edge.key()));
                        row.insert("in", RecordId::new("node", edge.src.as_str()));
                        row.insert("out", RecordId::new("node", edge.dst.as_str()));
                        row.insert(
                            "lines",
                            edge.lines.iter().map(|&l| l as i64).collect::<Vec<_>>(),
                        );
                        row.insert("reasons", edge.reasons.clone());
                        row
                    })
                    .collect();
                let var = format!("{table}{i}");
                let statement = if delta.fresh {
                    format!("INSERT RELATION INTO {table} ${var}")
                } else {
                    format!(
                        "INSERT RELATION INTO {table} ${var} ON DUPLICATE KEY UPDATE lines = $input.lines, reasons = $input.reasons"
                    )
                };
                writer.rows(statement, var, rows).await?;
            }
        }
        let deleted_edges: Vec<RecordId> = delta
            .delete_edges
            .iter()
            .map(|(kind, key)| RecordId::new(kind.table(), key.as_str()))
            .collect();
        for (i, chunk) in deleted_edges.chunks(BATCH).enumerate() {
            let var = format!("gone_edges{i}");
            writer
                .ids(format!("DELETE ${var}"), var, chunk.to_vec())
                .await?;
        }
        let deleted_nodes: Vec<RecordId> = delta
            .delete_nodes
            .iter()
            .map(|id| RecordId::new("node", id.as_str()))
            .collect();
        for (i, chunk) in deleted_nodes.chunks(BATCH).enumerate() {
            let var = format!("gone_nodes{i}");
            writer
                .ids(format!("DELETE ${var}"), var, chunk.to_vec())
                .await?;
        }
        for (i, chunk) in delta.upsert_sources.chunks(BATCH / 4).enumerate() {
            let rows = chunk
                .iter()
                .map(|source| {
                    let mut row = Object::new();
                    row.insert("id", RecordId::new("source", source.file.path.as_str()));
                    row.insert(
                        "record",
                        serde_json::to_string(source).expect("source records serialise"),
                    );
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

/// Batched writes: statements run in transactions of about [`ROWS_PER_TRANSACTION`] rows, so a
/// large index does not hold every row in memory at once. The index facts go in the last
/// transaction, and readers reload only after the writer has finished (the generation marker).
struct Writer<'a> {
    db: &'a Surreal<Db>,
    statements: Vec<String>,
    rows: Vec<(String, Vec<Object>)>,
    ids: Vec<(String, Vec<RecordId>)>,
    pending: usize,
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
        self.rows.push((var, rows));
        self.flush_if_full().await
    }

    async fn ids(&mut self, statement: String, var: String, ids: Vec<RecordId>) -> Result<()> {
        self.pending += ids.len();
        self.statements.push(statement);
        self.ids.push((var, ids));
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
        for (var, rows) in self.rows.drain(..) {
            query = query.bind((var, rows));
        }
        for (var, ids) in self.ids.drain(..) {
            query = query.bind((var, ids));
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

    /// A store in `dir` as an older cairn left it: `sql` run on a new engine, then closed.
    async fn older_store(dir: &Path, sql: String) {
        let db = super::super::open_engine(dir, super::super::OPEN_PATIENCE)
            .await
            .unwrap();
        db.use_ns("cairn").use_db("repo").await.unwrap();
        db.query(sql).await.and_then(|r| r.check()).unwrap();
        super::super::close_engine(db, Some(dir.join("LOCK"))).await;
    }

    #[tokio::test]
    async fn a_version_2_store_opens_with_neutral_impacts() {
        let dir = tempfile::tempdir().unwrap();
        older_store(
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
        older_store(
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
        let (commits, head) = store.load_history().await.unwrap();
        assert_eq!(commits, [commit]);
        assert_eq!(head.as_deref(), Some("abc123"));
        store.close().await;
    }
}
