//! The team server: a SurrealDB server reached over `ws://`/`wss://`, signed in as the
//! developer's record user ([`Connection`]), or as its root user for `cairn team init` and
//! member management ([`Admin`]). Connecting and signing in have a timeout, so do queries;
//! a server found away is left alone for a few seconds; an expired session signs in again.
//!
//! What the server holds per repository (namespace = org, database = repository): `memory`
//! rows (as in the local store, plus `rev`: the idempotency key of the write that made the
//! version), `review` and `guideline_change` rows, `memory_meta:head` (the write sequence,
//! which numbers all three), `applied` (keys of the
//! writes already applied) and `member` (record users: one identity per developer per server,
//! the same password hash in every database the developer belongs to). Table permissions
//! (`schema/team/2.surql`) keep private developer memories to their developer whatever query
//! a client sends.

use std::sync::Arc;
use std::time::{Duration, Instant};

use surrealdb::Surreal;
use surrealdb::engine::any::Any;
use surrealdb::types::{Object, SurrealValue, Value};

use super::migrate::{self, Schema, Step};
use super::{Row, StoreError, object};
use crate::config::team::Credentials;

/// The team server's schema, which `cairn team init` applies.
const SCHEMA: Schema = Schema {
    name: "the team schema",
    record: "memory_meta:schema",
    steps: &[
        Step {
            version: 2,
            sql: include_str!("schema/team/2.surql"),
        },
        Step {
            version: 3,
            sql: include_str!("schema/team/3.surql"),
        },
        Step {
            version: 4,
            sql: include_str!("schema/team/4.surql"),
        },
    ],
};

/// The server schema version `cairn team init` applies.
pub const TEAM_SCHEMA_VERSION: u32 = SCHEMA.version();

/// The first schema version with a `guideline_change` table: an older server neither answers
/// a read of it nor keeps a write to it.
const GUIDELINES_FROM: u32 = 4;

/// The access method's definition, applied by every `cairn team init` when it is missing (a
/// restored backup holds none).
const ACCESS_DEFINITION: &str = include_str!("schema/team/access.surql");

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

/// Team server failures.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    #[error("the team server at {url} is unreachable: {message}")]
    Unreachable { url: String, message: String },
    #[error(
        "the team server at {url} refused the credentials of `{developer}`{}: {message} (check CAIRN_TEAM_DEVELOPER / CAIRN_TEAM_PASSWORD or the credentials file, and that `cairn team add-member` was run for this repository; a member removed from the team can no longer sign in, and `cairn memory export` still saves what this copy holds, queued writes included)",
        if namespace.is_empty() { String::new() } else { format!(" for {namespace}/{database}") }
    )]
    Credentials {
        url: String,
        developer: String,
        namespace: String,
        database: String,
        message: String,
    },
    #[error(
        "the team server at {url} no longer accepts `{developer}` in {namespace}/{database} (removed from the team, or the password was rotated): this copy's queued writes stay in its outbox, and `cairn memory export` saves everything it holds, queued writes included"
    )]
    Removed {
        url: String,
        developer: String,
        namespace: String,
        database: String,
    },
    #[error(
        "the team server at {url} has no team set up for {namespace}/{database} ({message}): whoever holds its root user runs `cairn team init` for this repository (or `[team] repository`/`org` name another)"
    )]
    NotSetUp {
        url: String,
        namespace: String,
        database: String,
        message: String,
    },
    #[error(
        "the team server at {url} runs a SurrealDB this cairn cannot use ({message}): cairn needs a SurrealDB 3.x server"
    )]
    Incompatible { url: String, message: String },
    #[error("the team server refused the write: {0}")]
    Refused(String),
    #[error("memory {0} changed on the team server since it was read")]
    Conflict(String),
    #[error("the team server is busy: {0}")]
    Busy(String),
    #[error("team server query failed while {doing}: {message}")]
    Query { doing: String, message: String },
}

/// One write as the push query takes it: its idempotency key and its rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Push {
    pub key: String,
    pub memories: Vec<Pushed>,
    pub tombstones: Vec<Pushed>,
    pub reviews: Vec<Pushed>,
    pub guidelines: Vec<Pushed>,
}

/// A row of a pushed write: its record key and what is stored under it; for a memory, the
/// `rev` of the version its change started from (`None` for a new memory).
#[derive(Debug, Clone, PartialEq)]
pub struct Pushed {
    pub key: String,
    pub base: Option<String>,
    pub body: Row,
}

/// Applies a batch of writes in one transaction: writes whose key is already recorded are
/// skipped; every memory must still be at the revision it was based on (else `cairn-conflict`
/// is thrown, naming it); a write takes its rows' sequence numbers with one update of the
/// head (`off` is each row's place in the write, from 1).
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
    FOR $g IN $e.guidelines {
        LET $done = (UPSERT type::record('guideline_change', $g.key) CONTENT object::extend($g.body, { seq: $base + $g.off }) RETURN VALUE id);
        IF array::len($done) = 0 { THROW 'cairn-refused ' + $g.key };
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

/// What else changed after `$after`, from a server whose schema shares guideline changes.
const PULL_GUIDELINES: &str = "
SELECT * OMIT id FROM guideline_change WHERE seq > $after AND seq <= $head ORDER BY seq;
";

/// The rows a pull read, per table, in write order.
#[derive(Debug, Default)]
pub struct Pulled {
    pub memories: Vec<serde_json::Value>,
    pub reviews: Vec<serde_json::Value>,
    pub guidelines: Vec<serde_json::Value>,
    /// The server's write sequence now.
    pub head: u64,
}

/// A connection to the team server, made on first use and again after a failure.
pub struct Connection {
    url: String,
    namespace: String,
    database: String,
    credentials: Credentials,
    /// Shared, never cloned: a clone of a `Surreal` handle is a new session, which signs in
    /// again (an argon2 check on the server, 25–75 ms).
    client: tokio::sync::Mutex<Option<Arc<Surreal<Any>>>>,
    /// When the server was last found away (reads answer locally until `RETRY_AFTER`).
    away_since: std::sync::Mutex<Option<Instant>>,
    /// The schema version the server keeps, read at each sign-in (0 until then).
    schema: std::sync::atomic::AtomicU32,
}

impl Connection {
    pub fn new(url: &str, namespace: &str, database: &str, credentials: Credentials) -> Connection {
        Connection {
            url: url.to_string(),
            namespace: namespace.to_string(),
            database: database.to_string(),
            credentials,
            client: tokio::sync::Mutex::new(None),
            away_since: std::sync::Mutex::new(None),
            schema: std::sync::atomic::AtomicU32::new(0),
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
    async fn client(&self) -> Result<Arc<Surreal<Any>>, RemoteError> {
        let mut held = self.client.lock().await;
        if let Some(client) = held.as_ref() {
            return Ok(client.clone());
        }
        let client = self.connect().await;
        self.mark(matches!(client, Err(RemoteError::Unreachable { .. })));
        let client = Arc::new(client?);
        *held = Some(client.clone());
        Ok(client)
    }

    async fn connect(&self) -> Result<Surreal<Any>, RemoteError> {
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
            .map_err(|e| RemoteError::Unreachable {
                url: self.url.clone(),
                message: e.message().to_string(),
            })?;
        let version =
            migrate::stored_version(&db, &SCHEMA)
                .await
                .map_err(|e| RemoteError::Query {
                    doing: "reading the team schema's version".to_string(),
                    message: e.to_string(),
                })?;
        self.schema
            .store(version, std::sync::atomic::Ordering::Relaxed);
        Ok(db)
    }

    /// The schema version the server keeps (after the first exchange).
    fn schema(&self) -> u32 {
        self.schema.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Runs a query, dropping the connection when it failed so the next use reconnects.
    async fn run(
        &self,
        doing: &str,
        query: &str,
        bindings: Vec<(&'static str, Value)>,
    ) -> Result<surrealdb::IndexedResults, RemoteError> {
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
                RemoteError::Unreachable {
                    url: self.url.clone(),
                    message,
                }
            } else {
                RemoteError::Query {
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
            self.mark(matches!(error, RemoteError::Unreachable { .. }));
        } else {
            self.mark(false);
        }
        outcome
    }

    /// Memory rows (each with its id as `key`) changed after `after`, and review records, in
    /// write order (only what the server lets this developer read). Rows numbered beyond the
    /// server's head are left out: taking one would move this copy's cursor past writes still
    /// to come.
    pub async fn changes_since(&self, after: u64) -> Result<Pulled, RemoteError> {
        let doing = "reading shared memories";
        // The client first, so the schema version is known.
        self.client().await?;
        let guidelines = self.schema() >= GUIDELINES_FROM;
        let query = if guidelines {
            format!("{PULL}{PULL_GUIDELINES}RETURN $head;")
        } else {
            format!("{PULL}RETURN $head;")
        };
        let mut response = self
            .run(doing, &query, vec![("after", (after as i64).into_value())])
            .await?;
        let errors = response.take_errors();
        if let Some((_, e)) = errors.into_iter().next() {
            return Err(query_failed(doing, &e));
        }
        let memories = response.take(1).map_err(|e| query_failed(doing, &e))?;
        let reviews = response.take(2).map_err(|e| query_failed(doing, &e))?;
        let (guidelines, head) = if guidelines {
            (response.take(3).map_err(|e| query_failed(doing, &e))?, 4)
        } else {
            (Vec::new(), 3)
        };
        let head: Option<i64> = response.take(head).map_err(|e| query_failed(doing, &e))?;
        Ok(Pulled {
            memories,
            reviews,
            guidelines,
            head: head.unwrap_or(0).max(0) as u64,
        })
    }

    /// One memory row (with its id as `key`) as the server holds it now (`None` if it does
    /// not exist or is not this developer's to read).
    pub async fn row(&self, id: &str) -> Result<Option<serde_json::Value>, RemoteError> {
        let doing = "reading a shared memory";
        let mut response = self
            .run(
                doing,
                "SELECT *, record::id(id) AS key FROM type::record('memory', $id);",
                vec![("id", id.to_string().into_value())],
            )
            .await?;
        let rows: Vec<serde_json::Value> = response.take(0).map_err(|e| query_failed(doing, &e))?;
        Ok(rows.into_iter().next())
    }

    /// Applies writes in one transaction (see `PUSH`).
    pub async fn push(&self, writes: &[Push]) -> Result<(), RemoteError> {
        let doing = "writing shared memories";
        self.client().await?;
        if self.schema() < GUIDELINES_FROM && writes.iter().any(|w| !w.guidelines.is_empty()) {
            return Err(RemoteError::Refused(format!(
                "the team server at {} keeps schema version {}, set up by an older cairn; guideline changes are shared from version {GUIDELINES_FROM} on: whoever holds its root user runs `cairn team init` again (the change stays in this copy)",
                self.url,
                self.schema()
            )));
        }
        let bound: Vec<Value> = writes
            .iter()
            .map(|w| Value::Object(push_value(w)))
            .collect();
        let mut response = match self
            .run(doing, PUSH, vec![("entries", bound.into_value())])
            .await
        {
            Err(error @ RemoteError::Query { .. }) => return Err(self.unless_removed(error).await),
            other => other?,
        };
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
            return Err(RemoteError::Conflict(id));
        }
        // A removed member's session is refused everything, in whichever statement first.
        if let Some(id) = thrown(&message, "cairn-refused ") {
            let what = if id.starts_with("g_") {
                "guideline change"
            } else {
                "memory"
            };
            let refused = RemoteError::Refused(format!(
                "the server does not let {} write {what} {id}",
                self.credentials.developer
            ));
            return Err(self.unless_removed(refused).await);
        }
        if error.is_not_allowed() {
            return Err(self.unless_removed(RemoteError::Refused(message)).await);
        }
        if message.to_lowercase().contains("conflict") {
            return Err(RemoteError::Busy(message));
        }
        Err(self
            .unless_removed(RemoteError::Query {
                doing: doing.to_string(),
                message,
            })
            .await)
    }

    /// `error`, unless it came of this member having been removed from the team: a session
    /// opened before the removal is refused everything, in whichever statement first, and a
    /// new one cannot sign in. Either way nothing is set aside: the writes stay queued.
    async fn unless_removed(&self, error: RemoteError) -> RemoteError {
        match self.still_member().await {
            Ok(true) => error,
            Ok(false) => self.removed(),
            // The session itself is refused (the server cannot find its member): a new
            // sign-in tells whether the credentials still open one.
            Err(_) => match self.connect().await {
                Err(RemoteError::Credentials { .. }) => self.removed(),
                _ => error,
            },
        }
    }

    fn removed(&self) -> RemoteError {
        RemoteError::Removed {
            url: self.url.clone(),
            developer: self.credentials.developer.clone(),
            namespace: self.namespace.clone(),
            database: self.database.clone(),
        }
    }

    /// Whether the signed-in member still exists (a session opened before `cairn team
    /// remove-member` outlives the member, and is refused everything).
    async fn still_member(&self) -> Result<bool, RemoteError> {
        let doing = "checking this member is still on the team";
        let mut response = self
            .run(doing, "RETURN record::exists($auth);", Vec::new())
            .await?;
        let exists: Option<bool> = response.take(0).map_err(|e| query_failed(doing, &e))?;
        Ok(exists.unwrap_or(false))
    }

    /// Whether a write's key is recorded as applied (for status and tests).
    pub async fn applied(&self, key: &str) -> Result<bool, RemoteError> {
        let doing = "reading applied writes";
        let mut response = self
            .run(
                doing,
                "RETURN record::exists(type::record('applied', $key));",
                vec![("key", key.to_string().into_value())],
            )
            .await?;
        let found: Option<bool> = response.take(0).map_err(|e| query_failed(doing, &e))?;
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
) -> Result<Surreal<Any>, RemoteError>
where
    C: surrealdb::opt::auth::Credentials<surrealdb::opt::auth::Signin>,
{
    let away = |message: String| RemoteError::Unreachable {
        url: url.to_string(),
        message,
    };
    let late = || away(format!("no answer within {CONNECT_TIMEOUT:?}"));
    let db = tokio::time::timeout(CONNECT_TIMEOUT, surrealdb::engine::any::connect(url))
        .await
        .map_err(|_| late())?
        .map_err(|e| connect_failed(url, e.message()))?;
    match tokio::time::timeout(CONNECT_TIMEOUT, db.signin(credentials)).await {
        Err(_) => Err(late()),
        Ok(Err(e)) if e.is_connection() => Err(away(e.message().to_string())),
        Ok(Err(e)) if e.message().contains("does not exist") => Err(RemoteError::NotSetUp {
            url: url.to_string(),
            namespace: namespace.to_string(),
            database: database.to_string(),
            message: e.message().to_string(),
        }),
        Ok(Err(e)) => Err(RemoteError::Credentials {
            url: url.to_string(),
            developer: who.to_string(),
            namespace: namespace.to_string(),
            database: database.to_string(),
            message: e.message().to_string(),
        }),
        Ok(Ok(_)) => Ok(db),
    }
}

/// Why connecting failed: a server whose version the client does not support is there to stay
/// (not away: answers from the local copy would never catch up), anything else is away.
fn connect_failed(url: &str, message: &str) -> RemoteError {
    if message.contains("does not match the range supported") {
        return RemoteError::Incompatible {
            url: url.to_string(),
            message: message.to_string(),
        };
    }
    RemoteError::Unreachable {
        url: url.to_string(),
        message: message.to_string(),
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

/// A query's failure as a `Query` error.
fn query_failed(doing: &str, error: &surrealdb::Error) -> RemoteError {
    RemoteError::Query {
        doing: doing.to_string(),
        message: error.message().to_string(),
    }
}

/// A write as the push query binds it: each row numbered by its place in the write (`off`,
/// from 1), and the number of rows (`count`).
fn push_value(write: &Push) -> Object {
    let mut value = Object::new();
    value.insert("key", write.key.as_str());
    let mut off: i64 = 0;
    let mut rows = |rows: &[Pushed]| -> Value {
        let bound: Vec<Value> = rows
            .iter()
            .map(|row| {
                off += 1;
                let mut bound = Object::new();
                bound.insert("key", row.key.as_str());
                bound.insert("off", off);
                if let Some(base) = &row.base {
                    bound.insert("base", base.as_str());
                }
                bound.insert("body", Value::Object(object(row.body.clone())));
                Value::Object(bound)
            })
            .collect();
        bound.into_value()
    };
    let memories = rows(&write.memories);
    let tombstones = rows(&write.tombstones);
    let reviews = rows(&write.reviews);
    let guidelines = rows(&write.guidelines);
    value.insert("memories", memories);
    value.insert("tombstones", tombstones);
    value.insert("reviews", reviews);
    value.insert("guidelines", guidelines);
    value.insert("count", off);
    value
}

/// A database on the team server.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct TeamDatabase {
    pub namespace: String,
    pub database: String,
}

impl TeamDatabase {
    pub fn new(namespace: &str, database: &str) -> TeamDatabase {
        TeamDatabase {
            namespace: namespace.to_string(),
            database: database.to_string(),
        }
    }
}

impl std::fmt::Display for TeamDatabase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.namespace, self.database)
    }
}

/// A member's sign-in as one database holds it: the argon2 hash of the password (never the
/// password) and when it was set (ns since the epoch).
#[derive(Clone, PartialEq, Eq)]
pub struct Member {
    pub hash: String,
    pub set_at: i64,
}

impl std::fmt::Debug for Member {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Member {{ set_at: {} }}", self.set_at)
    }
}

/// Administration with the server's root (or namespace owner) user: `cairn team init` and
/// member management. The credentials come from the environment, never from arguments.
pub struct Admin {
    db: Surreal<Any>,
    url: String,
}

impl Admin {
    pub async fn connect(url: &str, user: &str, password: &str) -> Result<Admin, RemoteError> {
        let credentials = surrealdb::opt::auth::Root {
            username: user.to_string(),
            password: password.to_string(),
        };
        let db = sign_in(url, credentials, user, "", "").await?;
        Ok(Admin {
            db,
            url: url.to_string(),
        })
    }

    async fn run(
        &self,
        doing: &str,
        query: String,
        bindings: Vec<(&'static str, Value)>,
    ) -> Result<surrealdb::IndexedResults, RemoteError> {
        let mut request = self.db.query(query);
        for binding in bindings {
            request = request.bind(binding);
        }
        request
            .await
            .and_then(|r| r.check())
            .map_err(|e| RemoteError::Query {
                doing: doing.to_string(),
                message: e.message().to_string(),
            })
    }

    /// Creates the namespace and database if needed and brings the schema and permissions
    /// up to [`TEAM_SCHEMA_VERSION`].
    pub async fn init(&self, namespace: &str, database: &str) -> Result<(), RemoteError> {
        self.run(
            "creating the namespace and database",
            format!(
                "DEFINE NAMESPACE IF NOT EXISTS `{namespace}`; USE NS `{namespace}`; DEFINE DATABASE IF NOT EXISTS `{database}`;"
            ),
            Vec::new(),
        )
        .await?;
        self.use_db(namespace, database).await?;
        let store = format!("{} ({namespace}/{database})", self.url);
        migrate::migrate(&self.db, &SCHEMA, &store)
            .await
            .map_err(|e| match e {
                StoreError::Query { doing, message } => RemoteError::Query { doing, message },
                other => RemoteError::Query {
                    doing: "applying the team schema".to_string(),
                    message: other.to_string(),
                },
            })?;
        self.run(
            "defining the members' sign-in",
            ACCESS_DEFINITION.to_string(),
            Vec::new(),
        )
        .await
        .map(|_| ())
    }

    async fn use_db(&self, namespace: &str, database: &str) -> Result<(), RemoteError> {
        self.db
            .use_ns(namespace)
            .use_db(database)
            .await
            .map(|_| ())
            .map_err(|e| RemoteError::Query {
                doing: "selecting the database".to_string(),
                message: e.message().to_string(),
            })
    }

    /// Every database on the server that carries cairn's team schema, in name order.
    pub async fn team_databases(&self) -> Result<Vec<TeamDatabase>, RemoteError> {
        let mut found = Vec::new();
        for namespace in self.names("INFO FOR ROOT", "namespaces").await? {
            self.db
                .use_ns(&namespace)
                .await
                .map_err(|e| RemoteError::Query {
                    doing: "selecting a namespace".to_string(),
                    message: e.message().to_string(),
                })?;
            for database in self.names("INFO FOR NS", "databases").await? {
                self.use_db(&namespace, &database).await?;
                // A database of something else may refuse the question: it is not cairn's.
                let versions: Vec<serde_json::Value> = match self
                    .run(
                        "reading the schema version",
                        "SELECT VALUE version FROM memory_meta:schema;".to_string(),
                        Vec::new(),
                    )
                    .await
                {
                    Ok(mut response) => response.take(0).unwrap_or_default(),
                    Err(_) => Vec::new(),
                };
                if !versions.is_empty() {
                    found.push(TeamDatabase {
                        namespace: namespace.clone(),
                        database,
                    });
                }
            }
        }
        found.sort();
        Ok(found)
    }

    /// The names of the definitions `info` lists under `key` (namespaces, databases).
    async fn names(&self, info: &str, key: &str) -> Result<Vec<String>, RemoteError> {
        let doing = format!("listing {key}");
        let mut response = self.run(&doing, info.to_string(), Vec::new()).await?;
        let info: Option<serde_json::Value> = response.take(0).map_err(|e| RemoteError::Query {
            doing: doing.clone(),
            message: e.message().to_string(),
        })?;
        Ok(info
            .as_ref()
            .and_then(|info| info[key].as_object())
            .map(|names| names.keys().cloned().collect())
            .unwrap_or_default())
    }

    /// A developer's member record in one database, if they are a member there.
    pub async fn member(
        &self,
        at: &TeamDatabase,
        developer: &str,
    ) -> Result<Option<Member>, RemoteError> {
        self.use_db(&at.namespace, &at.database).await?;
        let doing = "reading a member";
        let mut response = self
            .run(
                doing,
                "SELECT pass, time::nano(pass_at ?? added_at) AS set_at FROM type::record('member', $developer);".to_string(),
                vec![("developer", developer.to_string().into_value())],
            )
            .await?;
        let rows: Vec<serde_json::Value> = response.take(0).map_err(|e| RemoteError::Query {
            doing: doing.to_string(),
            message: e.message().to_string(),
        })?;
        Ok(rows.into_iter().next().and_then(|row| {
            Some(Member {
                hash: row["pass"].as_str()?.to_string(),
                set_at: row["set_at"].as_i64().unwrap_or(0),
            })
        }))
    }

    /// The argon2 hash of a new password, made by the server.
    pub async fn hash(&self, password: &str) -> Result<Member, RemoteError> {
        let doing = "hashing a password";
        let mut response = self
            .run(
                doing,
                "RETURN { hash: crypto::argon2::generate($password), set_at: time::nano(time::now()) };"
                    .to_string(),
                vec![("password", password.to_string().into_value())],
            )
            .await?;
        let made: Option<serde_json::Value> = response.take(0).map_err(|e| RemoteError::Query {
            doing: doing.to_string(),
            message: e.message().to_string(),
        })?;
        made.and_then(|made| {
            Some(Member {
                hash: made["hash"].as_str()?.to_string(),
                set_at: made["set_at"].as_i64()?,
            })
        })
        .ok_or_else(|| RemoteError::Query {
            doing: doing.to_string(),
            message: "the server returned no hash".to_string(),
        })
    }

    /// Makes `developer` a member of one database with this password hash (kept as it is
    /// when they are one already; the date they were first added stays).
    pub async fn put_member(
        &self,
        at: &TeamDatabase,
        developer: &str,
        member: &Member,
    ) -> Result<(), RemoteError> {
        self.use_db(&at.namespace, &at.database).await?;
        self.run(
            "adding a member",
            "UPSERT type::record('member', $developer) SET pass = $hash, pass_at = time::from_nanos($set_at), added_at = added_at ?? time::now();".to_string(),
            vec![
                ("developer", developer.to_string().into_value()),
                ("hash", member.hash.clone().into_value()),
                ("set_at", member.set_at.into_value()),
            ],
        )
        .await?;
        Ok(())
    }

    /// Removes a member (their memories stay; the server ends their open sessions at their
    /// next query).
    pub async fn remove_member(
        &self,
        at: &TeamDatabase,
        developer: &str,
    ) -> Result<bool, RemoteError> {
        self.use_db(&at.namespace, &at.database).await?;
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
    pub async fn members(
        &self,
        namespace: &str,
        database: &str,
    ) -> Result<Vec<String>, RemoteError> {
        self.use_db(namespace, database).await?;
        let mut response = self
            .run(
                "listing members",
                "SELECT VALUE record::id(id) FROM member ORDER BY id;".to_string(),
                Vec::new(),
            )
            .await?;
        response.take(0).map_err(|e| RemoteError::Query {
            doing: "listing members".to_string(),
            message: e.message().to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_keeps_private_kinds_to_their_developer() {
        // The newest step that defines the `memory` table's permissions.
        let sql = SCHEMA
            .steps
            .iter()
            .rev()
            .map(|step| step.sql)
            .find(|sql| sql.contains("DEFINE TABLE OVERWRITE memory "))
            .unwrap();
        let private = PRIVATE_KINDS
            .iter()
            .map(|k| format!("'{k}'"))
            .collect::<Vec<_>>()
            .join(", ");
        let rule = format!("kind NOT IN [{private}] OR developer = record::id($auth)");
        // Both the read and the write permission of `memory` name exactly these kinds.
        assert_eq!(sql.matches(&rule).count(), 2, "{rule}");
        assert_eq!(sql.matches("kind NOT IN").count(), 2);
    }

    #[test]
    fn every_permission_since_version_3_asks_that_the_member_still_exists() {
        for step in SCHEMA.steps.iter().filter(|step| step.version >= 3) {
            let sql = step.sql;
            let granted = sql.matches(" WHERE ").count() - sql.matches("WHERE id = $auth").count();
            assert_eq!(sql.matches("WHERE record::exists($auth)").count(), granted);
            assert!(!sql.contains(" FULL"), "a FULL permission asks nothing");
        }
    }

    #[test]
    fn the_schema_defines_the_access_developers_sign_in_with() {
        let sql = SCHEMA.steps[0].sql;
        assert!(sql.contains(&format!(
            "DEFINE ACCESS OVERWRITE {ACCESS} ON DATABASE TYPE RECORD"
        )));
        assert!(sql.contains(&format!("type::record('{ACCESS}', $developer)")));
    }

    #[test]
    fn a_server_of_another_major_version_is_incompatible_not_away() {
        // The client's own words for a SurrealDB 2 server.
        let said = "server version `2.3.7` does not match the range supported by the client `>=3.0.0-alpha.1, <4.0.0`";
        let error = connect_failed("wss://team.example.com", said);
        assert!(
            matches!(error, RemoteError::Incompatible { .. }),
            "{error:?}"
        );
        let message = error.to_string();
        assert!(message.contains("needs a SurrealDB 3.x server") && message.contains("2.3.7"));
        let away = connect_failed(
            "wss://team.example.com",
            "Connection refused (os error 111)",
        );
        assert!(matches!(away, RemoteError::Unreachable { .. }), "{away:?}");
    }

    #[test]
    fn the_access_init_restores_is_the_one_the_schema_defines() {
        let definition = |sql: &str| -> String {
            let start = sql.find("DEFINE ACCESS").unwrap();
            let end = start + sql[start..].find(';').unwrap();
            sql[start..end]
                .replace("IF NOT EXISTS", "OVERWRITE")
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
        };
        assert_eq!(
            definition(ACCESS_DEFINITION),
            definition(SCHEMA.steps[0].sql)
        );
    }

    #[tokio::test]
    async fn a_version_1_server_is_brought_up_to_the_current_version() {
        let db = Surreal::new::<surrealdb::engine::local::Mem>(())
            .await
            .unwrap();
        db.use_ns("acme").use_db("app").await.unwrap();
        db.query("DEFINE TABLE memory SCHEMALESS; UPSERT memory_meta:schema SET version = 1;")
            .await
            .and_then(|r| r.check())
            .unwrap();
        migrate::migrate(&db, &SCHEMA, "test").await.unwrap();
        assert_eq!(
            migrate::stored_version(&db, &SCHEMA).await.unwrap(),
            TEAM_SCHEMA_VERSION
        );
        let mut response = db.query("INFO FOR DB").await.unwrap();
        let info: Option<serde_json::Value> = response.take(0).unwrap();
        let info = info.unwrap();
        assert!(info["accesses"][ACCESS].is_string(), "{info}");
        for table in [
            "member",
            "memory",
            "review",
            "memory_meta",
            "applied",
            "guideline_change",
        ] {
            assert!(info["tables"][table].is_string(), "{table}: {info}");
        }
        assert!(
            info["tables"]["memory"]
                .as_str()
                .unwrap()
                .contains("PERMISSIONS FOR select WHERE")
        );
    }

    #[test]
    fn pushed_rows_are_numbered_in_order() {
        let row = |key: &str| Pushed {
            key: key.to_string(),
            base: None,
            body: Row::new(),
        };
        let write = Push {
            key: "k".to_string(),
            memories: vec![
                Pushed {
                    base: Some("r1".to_string()),
                    ..row("m1")
                },
                row("m2"),
            ],
            tombstones: vec![row("m3")],
            reviews: vec![row("PR-1")],
            guidelines: vec![row("g_0000000000000001")],
        };
        let bound = Value::Object(push_value(&write)).into_json_value();
        let offs = |list: &str| -> Vec<i64> {
            bound[list]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["off"].as_i64().unwrap())
                .collect()
        };
        assert_eq!(offs("memories"), [1, 2]);
        assert_eq!(offs("tombstones"), [3]);
        assert_eq!(offs("reviews"), [4]);
        assert_eq!(offs("guidelines"), [5]);
        assert_eq!(bound["count"], 5);
        assert_eq!(bound["memories"][0]["base"], "r1");
        assert!(bound["memories"][1].get("base").is_none());
    }
}
