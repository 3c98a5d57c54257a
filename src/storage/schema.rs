//! The declared schema, versioned and migrated forward when a store is opened.

use std::path::Path;

use surrealdb::Surreal;
use surrealdb::engine::local::Db;

use super::{StoreError, query_error};
use crate::graph::EdgeKind;

/// The schema version this cairn writes.
pub const SCHEMA_VERSION: u32 = 1;

/// Stored fields of a node, besides its id.
pub const NODE_FIELDS: &[&str] = &[
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
    "last_change",
];

fn version_1() -> String {
    let mut sql = String::from(
        "DEFINE TABLE IF NOT EXISTS node SCHEMAFULL;
         DEFINE FIELD IF NOT EXISTS kind ON node TYPE string;
         DEFINE FIELD IF NOT EXISTS path ON node TYPE string;
         DEFINE FIELD IF NOT EXISTS name ON node TYPE string;
         DEFINE FIELD IF NOT EXISTS start_line ON node TYPE int;
         DEFINE FIELD IF NOT EXISTS end_line ON node TYPE int;
         DEFINE FIELD IF NOT EXISTS signature ON node TYPE option<string>;
         DEFINE FIELD IF NOT EXISTS doc ON node TYPE option<string>;
         DEFINE FIELD IF NOT EXISTS is_test ON node TYPE bool;
         DEFINE FIELD IF NOT EXISTS side_effects ON node TYPE array<string>;
         DEFINE FIELD IF NOT EXISTS mutations ON node TYPE int;
         DEFINE FIELD IF NOT EXISTS reach ON node TYPE int;
         DEFINE FIELD IF NOT EXISTS causal_in ON node TYPE int;
         DEFINE FIELD IF NOT EXISTS last_change ON node TYPE int;
         DEFINE INDEX IF NOT EXISTS node_path ON node FIELDS path;
         DEFINE TABLE IF NOT EXISTS source SCHEMAFULL;
         DEFINE FIELD IF NOT EXISTS record ON source TYPE string;
         DEFINE FIELD IF NOT EXISTS mtime_ns ON source TYPE int;
         DEFINE FIELD IF NOT EXISTS size ON source TYPE int;
         DEFINE TABLE IF NOT EXISTS meta SCHEMALESS;
        ",
    );
    for kind in EdgeKind::ALL {
        let table = kind.table();
        sql.push_str(&format!(
            "DEFINE TABLE IF NOT EXISTS {table} TYPE RELATION IN node OUT node SCHEMAFULL;
             DEFINE FIELD IF NOT EXISTS lines ON {table} TYPE array<int>;
             DEFINE FIELD IF NOT EXISTS reasons ON {table} TYPE array<string>;
            "
        ));
    }
    sql
}

/// Brings a store's schema up to [`SCHEMA_VERSION`]; refuses a store from a newer cairn.
pub async fn migrate(db: &Surreal<Db>, path: &Path) -> Result<(), StoreError> {
    let mut response = db
        .query("SELECT VALUE version FROM ONLY meta:schema")
        .await
        .map_err(query_error("reading the schema version"))?;
    let found: Option<i64> = response.take(0).unwrap_or(None);
    let found = found.unwrap_or(0) as u32;
    if found > SCHEMA_VERSION {
        return Err(StoreError::TooNew {
            path: path.to_path_buf(),
            found,
            supported: SCHEMA_VERSION,
        });
    }
    if found == SCHEMA_VERSION {
        return Ok(());
    }
    let migrations: [(u32, fn() -> String); 1] = [(1, version_1)];
    for (version, sql) in migrations.iter().filter(|(v, _)| *v > found) {
        db.query(format!(
            "BEGIN TRANSACTION; {} UPSERT meta:schema SET version = {version}; COMMIT TRANSACTION;",
            sql()
        ))
        .await
        .and_then(|r| r.check())
        .map_err(query_error("migrating the schema"))?;
    }
    Ok(())
}
