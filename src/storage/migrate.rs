//! One migration mechanism for every schema cairn keeps (the graph store, the memory store and
//! its team copy, the team server): a schema is a list of versioned steps, SurrealQL files
//! under `schema/`, and [`migrate`] applies the steps above the version a store records, each
//! in one transaction with the new version.

use surrealdb::{Connection, Surreal};

use super::{StoreError, query_error};

/// The statements that bring a store from the version before to `version`.
pub struct Step {
    pub version: u32,
    pub sql: &'static str,
}

/// A store's schema: its steps, oldest first, and the record that holds its version.
pub struct Schema {
    /// What the schema is, in messages: `the graph schema`.
    pub name: &'static str,
    /// The record holding the version, e.g. `meta:schema`.
    pub record: &'static str,
    pub steps: &'static [Step],
}

impl Schema {
    /// The version this cairn writes: the last step's.
    pub const fn version(&self) -> u32 {
        self.steps[self.steps.len() - 1].version
    }
}

/// The version a store records (0 for a new store).
pub async fn stored_version<C: Connection>(
    db: &Surreal<C>,
    schema: &Schema,
) -> Result<u32, StoreError> {
    let doing = format!("reading the version of {}", schema.name);
    let mut response = db
        .query(format!("SELECT VALUE version FROM ONLY {}", schema.record))
        .await
        .map_err(query_error(&doing))?;
    let found: Option<i64> = response.take(0).unwrap_or(None);
    Ok(found.unwrap_or(0) as u32)
}

/// Brings a store up to the schema's version, applying each step above the stored version in
/// its own transaction; refuses a store from a newer cairn. `store` names it in errors.
pub async fn migrate<C: Connection>(
    db: &Surreal<C>,
    schema: &Schema,
    store: &str,
) -> Result<(), StoreError> {
    let found = stored_version(db, schema).await?;
    if found > schema.version() {
        return Err(StoreError::TooNew {
            store: store.to_string(),
            found,
            supported: schema.version(),
        });
    }
    let doing = format!("migrating {}", schema.name);
    for step in schema.steps.iter().filter(|step| step.version > found) {
        db.query(format!(
            "BEGIN TRANSACTION;\n{}\nUPSERT {} SET version = {};\nCOMMIT TRANSACTION;",
            step.sql, schema.record, step.version
        ))
        .await
        .and_then(|r| r.check())
        .map_err(query_error(&doing))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use surrealdb::engine::local::Mem;

    use super::*;

    const STEPS: Schema = Schema {
        name: "the test schema",
        record: "meta:schema",
        steps: &[
            Step {
                version: 1,
                sql: "DEFINE TABLE IF NOT EXISTS first SCHEMALESS;",
            },
            Step {
                version: 2,
                sql: "-- a comment\nDEFINE TABLE IF NOT EXISTS second SCHEMALESS;",
            },
        ],
    };

    async fn empty() -> Surreal<surrealdb::engine::local::Db> {
        let db = Surreal::new::<Mem>(()).await.unwrap();
        db.use_ns("cairn").use_db("test").await.unwrap();
        db
    }

    async fn tables(db: &Surreal<surrealdb::engine::local::Db>) -> Vec<String> {
        let mut response = db.query("INFO FOR DB").await.unwrap();
        let info: Option<serde_json::Value> = response.take(0).unwrap();
        let mut names: Vec<String> = info.unwrap()["tables"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        names.sort();
        names
    }

    #[tokio::test]
    async fn only_the_steps_above_the_stored_version_run() {
        let db = empty().await;
        db.query("UPSERT meta:schema SET version = 1")
            .await
            .unwrap();
        migrate(&db, &STEPS, "test").await.unwrap();
        assert_eq!(stored_version(&db, &STEPS).await.unwrap(), 2);
        // Step 1 was taken as done: its table was not made.
        assert_eq!(tables(&db).await, ["meta", "second"]);
        migrate(&db, &STEPS, "test").await.unwrap();
        assert_eq!(stored_version(&db, &STEPS).await.unwrap(), 2);
    }

    #[tokio::test]
    async fn a_new_store_takes_every_step() {
        let db = empty().await;
        migrate(&db, &STEPS, "test").await.unwrap();
        assert_eq!(stored_version(&db, &STEPS).await.unwrap(), 2);
        assert_eq!(tables(&db).await, ["first", "meta", "second"]);
    }

    #[tokio::test]
    async fn a_store_from_a_newer_cairn_is_refused() {
        let db = empty().await;
        db.query("UPSERT meta:schema SET version = 3")
            .await
            .unwrap();
        let error = migrate(&db, &STEPS, "the test store").await.unwrap_err();
        assert!(
            matches!(
                error,
                StoreError::TooNew {
                    found: 3,
                    supported: 2,
                    ..
                }
            ),
            "{error}"
        );
        assert!(error.to_string().contains("the test store"), "{error}");
    }

    #[tokio::test]
    async fn a_failing_step_leaves_the_version_where_it_was() {
        const BROKEN: Schema = Schema {
            name: "the broken schema",
            record: "meta:schema",
            steps: &[Step {
                version: 1,
                sql: "DEFINE TABLE first SCHEMALESS; THROW 'no';",
            }],
        };
        let db = empty().await;
        assert!(migrate(&db, &BROKEN, "test").await.is_err());
        assert_eq!(stored_version(&db, &BROKEN).await.unwrap(), 0);
    }
}
