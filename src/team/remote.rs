//! The team server: a SurrealDB server reached over `ws://`/`wss://`, signed in as the
//! developer's record user. Only this file and `memory/store.rs` speak SurrealQL for memories.
//!
//! What the server holds per repository (namespace = org, database = repository): `memory`
//! rows (as in the local store, plus `rev`: the idempotency key of the write that made the
//! version), `review` rows, `memory_meta:head` (the write sequence), `applied` (keys of the
//! writes already applied) and `member` (record users). Table permissions keep private
//! developer memories to their developer whatever query a client sends.

use std::sync::Arc;
use std::time::{Duration, Instant};

use surrealdb::Surreal;
use surrealdb::engine::any::Any;
use surrealdb::types::{Object, SurrealValue, Value};

use super::outbox::Entry;
use super::{Credentials, TeamError};
use crate::memory::reviews::ReviewRecord;
use crate::memory::store::{self, StoredMemory};
use crate::storage::object;

/// The server schema version `cairn team init` applies.
pub const TEAM_SCHEMA_VERSION: u32 = 2;

/// The record access method developers sign in with.
pub const ACCESS: &str = "member";

/// Memory kinds only their developer may read or write.
pub const PRIVATE_KINDS: [&str; 2] = ["developer_pattern", "developer_strength"];

/// How long connecting (and signing in) may take before the server counts as away.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);
/// How long one query may take.
const QUERY_TIMEOUT: Duration = Duration::from_secs(15);
/// After the server was found away, how long to answer from local state before trying again.
const RETRY_AFTER: Duration = Duration::from_secs(5);
/// Entries per replay transaction.
pub const REPLAY_BATCH: usize = 100;

/// The schema and permissions `cairn team init` applies (idempotent: every statement
/// overwrites its definition). What a member cannot do, whatever client they use: read other
/// developers' private memories, move the write sequence backwards (`memory_meta:head` only
/// grows), write a row numbered beyond it, or change a review record someone else recorded.
pub fn schema() -> String {
    let private = PRIVATE_KINDS
        .iter()
        .map(|k| format!("'{k}'"))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "
    DEFINE TABLE OVERWRITE member SCHEMAFULL PERMISSIONS NONE;
    DEFINE FIELD OVERWRITE pass ON member TYPE string PERMISSIONS NONE;
    DEFINE FIELD OVERWRITE added_at ON member TYPE datetime;
    DEFINE ACCESS OVERWRITE {ACCESS} ON DATABASE TYPE RECORD
        SIGNIN (SELECT * FROM type::record('member', $developer) WHERE crypto::argon2::compare(pass, $password))
        DURATION FOR TOKEN 15m, FOR SESSION 12h;
    DEFINE TABLE OVERWRITE memory SCHEMALESS PERMISSIONS
        FOR select WHERE kind NOT IN [{private}] OR developer = record::id($auth) OR shared = true
        FOR create, update WHERE kind NOT IN [{private}] OR developer = record::id($auth)
        FOR delete NONE;
    DEFINE FIELD OVERWRITE seq ON memory TYPE int
        ASSERT $value > 0 AND $value <= (SELECT VALUE seq FROM ONLY memory_meta:head);
    DEFINE INDEX OVERWRITE memory_seq ON memory FIELDS seq;
    DEFINE TABLE OVERWRITE review SCHEMALESS PERMISSIONS
        FOR select, create FULL
        FOR update WHERE recorded_by = NONE OR recorded_by = $auth
        FOR delete NONE;
    DEFINE FIELD OVERWRITE recorded_by ON review VALUE $before OR $auth;
    DEFINE FIELD OVERWRITE seq ON review TYPE int
        ASSERT $value > 0 AND $value <= (SELECT VALUE seq FROM ONLY memory_meta:head);
    DEFINE INDEX OVERWRITE review_seq ON review FIELDS seq;
    DEFINE TABLE OVERWRITE memory_meta SCHEMALESS PERMISSIONS
        FOR select FULL
        FOR create, update WHERE id = memory_meta:head
        FOR delete NONE;
    DEFINE FIELD OVERWRITE seq ON memory_meta TYPE option<int>
        ASSERT $before = NONE OR $value >= $before;
    DEFINE TABLE OVERWRITE applied SCHEMALESS PERMISSIONS
        FOR select, create FULL FOR update, delete NONE;
    UPSERT memory_meta:schema SET version = {TEAM_SCHEMA_VERSION};
"
    )
}

/// Applies a batch of entries in one transaction: entries whose key is already recorded are
/// skipped; every memory must still be at the revision it was based on (else `cairn-conflict`
/// is thrown, naming it); an entry takes its rows' sequence numbers with one update of the
/// head (`off` is each row's place in the entry, from 1), and each row is one write.
const PUSH: &str = "
BEGIN TRANSACTION;
FOR $e IN $entries {
    IF record::exists(type::record('applied', $e.key)) { CONTINUE };
    LET $base = (UPSERT ONLY memory_meta:head SET seq += $e.count RETURN VALUE seq) - $e.count;
    FOR $row IN $e.memories {
        LET $id = type::record('memory', $row.key);
        IF $id.rev != $row.base { THROW 'cairn-conflict ' + $row.key };
        LET $done = (UPSERT $id CONTENT object::extend($row.body, { seq: $base + $row.off, rev: $e.key }) RETURN VALUE id);
        IF array::len($done) = 0 { THROW 'cairn-refused ' + $row.key };
    };
    FOR $t IN $e.tombstones {
        LET $id = type::record('memory', $t.key);
        LET $done = (UPSERT $id CONTENT object::extend($t.body, { seq: $base + $t.off, rev: $e.key }) RETURN VALUE id);
        IF array::len($done) = 0 { THROW 'cairn-refused ' + $t.key };
    };
    FOR $r IN $e.reviews {
        UPSERT type::record('review', $r.key) CONTENT object::extend($r.body, { seq: $base + $r.off }) RETURN NONE;
    };
    CREATE type::record('applied', $e.key) SET at = time::now() RETURN NONE;
};
COMMIT TRANSACTION;
";

/// What changed after `$after`, up to the head of the write sequence (a row numbered beyond
/// it was not written by cairn's push).
const PULL: &str = "
LET $head = (SELECT VALUE seq FROM memory_meta:head)[0] ?? 0;
SELECT *, record::id(id) AS key FROM memory WHERE seq > $after AND seq <= $head ORDER BY seq;
SELECT * OMIT id, recorded_by FROM review WHERE seq > $after AND seq <= $head ORDER BY seq;
";

/// A pulled row that decodes; one that does not is skipped with a warning, so a bad row any
/// member's client wrote does not stop everyone's pull (the warning is redacted: decoding
/// errors quote values).
fn decoded<T>(row: Result<T, crate::storage::StoreError>) -> Option<T> {
    row.inspect_err(|e| {
        let message = crate::memory::secrets::redact(&e.to_string()).text;
        tracing::warn!("skipped a row from the team server that does not decode: {message}");
    })
    .ok()
}

/// A connection to the team server, made on first use and again after a failure.
pub struct Server {
    url: String,
    namespace: String,
    database: String,
    credentials: Credentials,
    /// Shared, never cloned: a clone of a `Surreal` handle is a new session, which signs in
    /// again (an argon2 check on the server, 25–75 ms).
    client: tokio::sync::Mutex<Option<Arc<Surreal<Any>>>>,
    /// When the server was last found away (reads answer locally until `RETRY_AFTER`).
    away_since: std::sync::Mutex<Option<Instant>>,
}

impl Server {
    pub fn new(url: &str, namespace: &str, database: &str, credentials: Credentials) -> Server {
        Server {
            url: url.to_string(),
            namespace: namespace.to_string(),
            database: database.to_string(),
            credentials,
            client: tokio::sync::Mutex::new(None),
            away_since: std::sync::Mutex::new(None),
        }
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    /// Whether the server was found away less than a few seconds ago.
    pub fn recently_away(&self) -> bool {
        self.away_since
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .is_some_and(|at| at.elapsed() < RETRY_AFTER)
    }

    fn mark(&self, away: bool) {
        *self
            .away_since
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = away.then(Instant::now);
    }

    /// The signed-in client, connecting if needed.
    async fn client(&self) -> Result<Arc<Surreal<Any>>, TeamError> {
        let mut held = self.client.lock().await;
        if let Some(client) = held.as_ref() {
            return Ok(client.clone());
        }
        let client = self.connect().await;
        self.mark(matches!(client, Err(TeamError::Unreachable { .. })));
        let client = Arc::new(client?);
        *held = Some(client.clone());
        Ok(client)
    }

    async fn connect(&self) -> Result<Surreal<Any>, TeamError> {
        let mut params = Object::new();
        params.insert("developer", self.credentials.developer.as_str());
        params.insert("password", self.credentials.password.expose());
        let credentials = surrealdb::opt::auth::Record {
            namespace: self.namespace.clone(),
            database: self.database.clone(),
            access: ACCESS.to_string(),
            params,
        };
        let db = sign_in(
            &self.url,
            credentials,
            &self.credentials.developer,
            &self.namespace,
            &self.database,
        )
        .await?;
        db.use_ns(&self.namespace)
            .use_db(&self.database)
            .await
            .map_err(|e| TeamError::Unreachable {
                url: self.url.clone(),
                message: e.message().to_string(),
            })?;
        Ok(db)
    }

    /// Runs a query, dropping the connection when it failed so the next use reconnects.
    async fn run(
        &self,
        doing: &str,
        query: &str,
        bindings: Vec<(&'static str, Value)>,
    ) -> Result<surrealdb::IndexedResults, TeamError> {
        let mut retried = false;
        let result = loop {
            let client = self.client().await?;
            let mut request = client.query(query);
            for (name, value) in &bindings {
                request = request.bind((*name, value.clone()));
            }
            let result = tokio::time::timeout(QUERY_TIMEOUT, request).await;
            match &result {
                // An expired session (tokens last 15 minutes, sessions 12 hours): sign in
                // again, once.
                Ok(Err(e)) if !retried && !e.is_connection() && is_expired(e) => {
                    *self.client.lock().await = None;
                    retried = true;
                }
                _ => break result,
            }
        };
        let failed = |message: String, connection: bool| {
            if connection {
                TeamError::Unreachable {
                    url: self.url.clone(),
                    message,
                }
            } else {
                TeamError::Query {
                    doing: doing.to_string(),
                    message,
                }
            }
        };
        let outcome = match result {
            Err(_) => Err(failed(format!("no answer within {QUERY_TIMEOUT:?}"), true)),
            Ok(Err(e)) => Err(failed(e.message().to_string(), e.is_connection())),
            Ok(Ok(response)) => Ok(response),
        };
        if let Err(error) = &outcome {
            // A broken or expired session is replaced on the next use.
            *self.client.lock().await = None;
            self.mark(matches!(error, TeamError::Unreachable { .. }));
        } else {
            self.mark(false);
        }
        outcome
    }

    /// Memory rows changed after `after`, and review records, in write order (only what the
    /// server lets this developer read). Rows numbered beyond the server's head are left out:
    /// taking one would move this copy's cursor past writes still to come.
    pub async fn changes_since(
        &self,
        after: u64,
    ) -> Result<(Vec<StoredMemory>, Vec<ReviewRecord>), TeamError> {
        let doing = "reading shared memories";
        let mut response = self
            .run(doing, PULL, vec![("after", (after as i64).into_value())])
            .await?;
        let query = |e: surrealdb::Error| TeamError::Query {
            doing: doing.to_string(),
            message: e.message().to_string(),
        };
        let errors = response.take_errors();
        if let Some((_, e)) = errors.into_iter().next() {
            return Err(query(e));
        }
        let rows: Vec<serde_json::Value> = response.take(1).map_err(query)?;
        let reviews: Vec<serde_json::Value> = response.take(2).map_err(query)?;
        let memories = rows
            .into_iter()
            .filter_map(|row| decoded(store::from_row(row, doing)))
            .collect();
        let reviews = reviews
            .into_iter()
            .filter_map(|row| decoded(crate::storage::decode(vec![row], doing)))
            .flatten()
            .collect();
        Ok((memories, reviews))
    }

    /// One memory row as the server holds it now (`None` if it does not exist or is not
    /// this developer's to read).
    pub async fn row(&self, id: &str) -> Result<Option<StoredMemory>, TeamError> {
        let doing = "reading a shared memory";
        let mut response = self
            .run(
                doing,
                "SELECT *, record::id(id) AS key FROM type::record('memory', $id);",
                vec![("id", id.to_string().into_value())],
            )
            .await?;
        let rows: Vec<serde_json::Value> = response.take(0).map_err(|e| TeamError::Query {
            doing: doing.to_string(),
            message: e.message().to_string(),
        })?;
        rows.into_iter()
            .next()
            .map(|row| store::from_row(row, doing))
            .transpose()
            .map_err(|e| TeamError::Query {
                doing: doing.to_string(),
                message: e.to_string(),
            })
    }

    /// Applies entries in one transaction (see [`PUSH`]).
    pub async fn push(&self, entries: &[Entry]) -> Result<(), TeamError> {
        let doing = "writing shared memories";
        let bound: Vec<Value> = entries
            .iter()
            .map(|e| Value::Object(entry_value(e)))
            .collect();
        let mut response = self
            .run(doing, PUSH, vec![("entries", bound.into_value())])
            .await?;
        let mut errors: Vec<(usize, surrealdb::Error)> =
            response.take_errors().into_iter().collect();
        errors.sort_by_key(|(index, _)| *index);
        tracing::debug!(?errors, "push");
        let first = errors.iter().position(|(_, e)| !is_cancelled(e));
        let Some((_, error)) = first
            .map(|i| errors.swap_remove(i))
            .or_else(|| errors.into_iter().next())
        else {
            return Ok(());
        };
        let message = error.message().to_string();
        if let Some(id) = thrown(&message, "cairn-conflict ") {
            return Err(TeamError::Conflict(id));
        }
        if let Some(id) = thrown(&message, "cairn-refused ") {
            return Err(TeamError::Refused(format!(
                "the server does not let {} write memory {id}",
                self.credentials.developer
            )));
        }
        if error.is_not_allowed() {
            return Err(TeamError::Refused(message));
        }
        if message.to_lowercase().contains("conflict") {
            return Err(TeamError::Busy(message));
        }
        Err(TeamError::Query {
            doing: doing.to_string(),
            message,
        })
    }

    /// Whether an entry's key is recorded as applied (for status and tests).
    pub async fn applied(&self, key: &str) -> Result<bool, TeamError> {
        let doing = "reading applied writes";
        let mut response = self
            .run(
                doing,
                "RETURN record::exists(type::record('applied', $key));",
                vec![("key", key.to_string().into_value())],
            )
            .await?;
        let found: Option<bool> = response.take(0).map_err(|e| TeamError::Query {
            doing: doing.to_string(),
            message: e.message().to_string(),
        })?;
        Ok(found.unwrap_or(false))
    }
}

/// An error saying the session or its token expired (or is no longer valid).
fn is_expired(error: &surrealdb::Error) -> bool {
    let message = error.message().to_lowercase();
    ["expired", "token", "authenticat", "invalid session"]
        .iter()
        .any(|word| message.contains(word))
}

/// Connects to `url` and signs in, each within `CONNECT_TIMEOUT`: no answer or a broken
/// connection is `Unreachable`, a refusal is `Credentials` (naming `who`, never the password).
async fn sign_in<C>(
    url: &str,
    credentials: C,
    who: &str,
    namespace: &str,
    database: &str,
) -> Result<Surreal<Any>, TeamError>
where
    C: surrealdb::opt::auth::Credentials<surrealdb::opt::auth::Signin>,
{
    let away = |message: String| TeamError::Unreachable {
        url: url.to_string(),
        message,
    };
    let late = || away(format!("no answer within {CONNECT_TIMEOUT:?}"));
    let db = tokio::time::timeout(CONNECT_TIMEOUT, surrealdb::engine::any::connect(url))
        .await
        .map_err(|_| late())?
        .map_err(|e| away(e.message().to_string()))?;
    match tokio::time::timeout(CONNECT_TIMEOUT, db.signin(credentials)).await {
        Err(_) => Err(late()),
        Ok(Err(e)) if e.is_connection() => Err(away(e.message().to_string())),
        Ok(Err(e)) => Err(TeamError::Credentials {
            url: url.to_string(),
            developer: who.to_string(),
            namespace: namespace.to_string(),
            database: database.to_string(),
            message: e.message().to_string(),
        }),
        Ok(Ok(_)) => Ok(db),
    }
}

/// A statement cancelled because another in its transaction failed.
fn is_cancelled(error: &surrealdb::Error) -> bool {
    let message = error.message().to_lowercase();
    message.contains("cancelled")
        || message.contains("not executed")
        || message.contains("prior error")
        || message.contains("failed transaction")
}

/// The id after `marker` in a thrown message.
fn thrown(message: &str, marker: &str) -> Option<String> {
    let rest = &message[message.find(marker)? + marker.len()..];
    Some(
        rest.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect(),
    )
}

/// An entry as the push query binds it.
fn entry_value(entry: &Entry) -> Object {
    let mut value = Object::new();
    value.insert("key", entry.key.as_str());
    let mut off: i64 = 0;
    let mut next = || {
        off += 1;
        off
    };
    let memories: Vec<Value> = entry
        .memories
        .iter()
        .map(|row| {
            let mut bound = Object::new();
            bound.insert("key", row.memory.id.as_str());
            bound.insert("off", next());
            if let Some(base) = &row.base {
                bound.insert("base", base.as_str());
            }
            let vector = row.vector.as_deref().and_then(store::decode_vector);
            let mut body = store::to_row(&row.memory, vector.as_deref());
            body.remove("id");
            body.remove("seq");
            bound.insert("body", Value::Object(object(body)));
            Value::Object(bound)
        })
        .collect();
    value.insert("memories", memories.into_value());
    let tombstones: Vec<Value> = entry
        .tombstones
        .iter()
        .map(|t| {
            let mut body = Object::new();
            body.insert("forgotten", true);
            body.insert("kind", t.kind.as_str());
            if let Some(dev) = &t.developer {
                body.insert("developer", dev.as_str());
            }
            let mut bound = Object::new();
            bound.insert("key", t.id.as_str());
            bound.insert("off", next());
            bound.insert("body", Value::Object(body));
            Value::Object(bound)
        })
        .collect();
    value.insert("tombstones", tombstones.into_value());
    let reviews: Vec<Value> = entry
        .review
        .iter()
        .map(|record| {
            let mut body = store::review_body(record);
            body.remove("seq");
            let body = object(body);
            let mut bound = Object::new();
            bound.insert("key", record.id.as_str());
            bound.insert("off", next());
            bound.insert("body", Value::Object(body));
            Value::Object(bound)
        })
        .collect();
    value.insert("reviews", reviews.into_value());
    value.insert("count", off);
    value
}

/// Administration with the server's root (or namespace owner) user: `cairn team init` and
/// member management. The credentials come from the environment, never from arguments.
pub struct Admin {
    db: Surreal<Any>,
}

impl Admin {
    pub async fn connect(url: &str, user: &str, password: &str) -> Result<Admin, TeamError> {
        let credentials = surrealdb::opt::auth::Root {
            username: user.to_string(),
            password: password.to_string(),
        };
        let db = sign_in(url, credentials, user, "", "").await?;
        Ok(Admin { db })
    }

    async fn run(
        &self,
        doing: &str,
        query: String,
        bindings: Vec<(&'static str, Value)>,
    ) -> Result<surrealdb::IndexedResults, TeamError> {
        let mut request = self.db.query(query);
        for binding in bindings {
            request = request.bind(binding);
        }
        request
            .await
            .and_then(|r| r.check())
            .map_err(|e| TeamError::Query {
                doing: doing.to_string(),
                message: e.message().to_string(),
            })
    }

    /// Creates the namespace and database if needed and applies the schema and permissions.
    pub async fn init(&self, namespace: &str, database: &str) -> Result<(), TeamError> {
        self.run(
            "creating the namespace and database",
            format!(
                "DEFINE NAMESPACE IF NOT EXISTS `{namespace}`; USE NS `{namespace}`; DEFINE DATABASE IF NOT EXISTS `{database}`;"
            ),
            Vec::new(),
        )
        .await?;
        self.use_db(namespace, database).await?;
        self.run(
            "applying the team schema",
            format!("BEGIN TRANSACTION; {} COMMIT TRANSACTION;", schema()),
            Vec::new(),
        )
        .await?;
        Ok(())
    }

    async fn use_db(&self, namespace: &str, database: &str) -> Result<(), TeamError> {
        self.db
            .use_ns(namespace)
            .use_db(database)
            .await
            .map(|_| ())
            .map_err(|e| TeamError::Query {
                doing: "selecting the database".to_string(),
                message: e.message().to_string(),
            })
    }

    /// Adds (or resets the password of) a member.
    pub async fn add_member(
        &self,
        namespace: &str,
        database: &str,
        developer: &str,
        password: &str,
    ) -> Result<(), TeamError> {
        self.use_db(namespace, database).await?;
        self.run(
            "adding a member",
            "UPSERT type::record('member', $developer) SET pass = crypto::argon2::generate($password), added_at = time::now();".to_string(),
            vec![
                ("developer", developer.to_string().into_value()),
                ("password", password.to_string().into_value()),
            ],
        )
        .await?;
        Ok(())
    }

    /// Removes a member (their memories stay; their sessions end when they expire).
    pub async fn remove_member(
        &self,
        namespace: &str,
        database: &str,
        developer: &str,
    ) -> Result<bool, TeamError> {
        self.use_db(namespace, database).await?;
        let mut response = self
            .run(
                "removing a member",
                "DELETE type::record('member', $developer) RETURN BEFORE;".to_string(),
                vec![("developer", developer.to_string().into_value())],
            )
            .await?;
        let removed: Vec<serde_json::Value> = response.take(0).unwrap_or_default();
        Ok(!removed.is_empty())
    }

    /// The members' developer ids.
    pub async fn members(&self, namespace: &str, database: &str) -> Result<Vec<String>, TeamError> {
        self.use_db(namespace, database).await?;
        let mut response = self
            .run(
                "listing members",
                "SELECT VALUE record::id(id) FROM member ORDER BY id;".to_string(),
                Vec::new(),
            )
            .await?;
        response.take(0).map_err(|e| TeamError::Query {
            doing: "listing members".to_string(),
            message: e.message().to_string(),
        })
    }
}
