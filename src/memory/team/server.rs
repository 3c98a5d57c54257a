//! The team server in the memory layer's terms: outbox entries go out, stored memories,
//! review records and guideline changes come in. The connection and the queries are `storage::remote`'s; this
//! file turns entries into pushed rows and pulled rows into memories.

use crate::config::team::Credentials;
use crate::memory::guidelines::GuidelineChange;
use crate::memory::reviews::ReviewRecord;
use crate::memory::store::{self, StoredMemory};
use crate::storage::remote::{Connection, Push, Pushed, RemoteError};

use super::outbox::Entry;
use super::skipped::Skipped;

/// What changed on the server after a sequence number.
#[derive(Debug, Default)]
pub struct Changes {
    pub memories: Vec<StoredMemory>,
    pub reviews: Vec<ReviewRecord>,
    pub guidelines: Vec<GuidelineChange>,
    /// Rows that do not decode, left out.
    pub skipped: Vec<Skipped>,
    /// The highest sequence number among the rows read, decoded or not (`None` when none
    /// was): the pull cursor moves to it.
    pub head: Option<u64>,
    /// The server's write sequence now: below this copy's cursor only when the server was
    /// restored from a backup.
    pub server_head: u64,
}

impl Changes {
    /// Moves the head to `row`'s number.
    fn reach(&mut self, row: &serde_json::Value) {
        let seq = seq_of(row);
        self.head = Some(self.head.map_or(seq, |head| head.max(seq)));
    }
}

/// The team server, signed in as a developer.
pub struct Server {
    connection: Connection,
}

impl Server {
    pub fn new(url: &str, namespace: &str, database: &str, credentials: Credentials) -> Server {
        Server {
            connection: Connection::new(url, namespace, database, credentials),
        }
    }

    pub fn url(&self) -> &str {
        self.connection.url()
    }

    /// Whether the server was found away less than a few seconds ago.
    pub fn recently_away(&self) -> bool {
        self.connection.recently_away()
    }

    /// Memories and review records changed after `after`, in write order (only what the
    /// server lets this developer read). A row that does not decode is skipped, named but not
    /// quoted, and still counts for the head: a bad row any member's client wrote never stops
    /// everyone's pull.
    pub async fn changes_since(&self, after: u64) -> Result<Changes, RemoteError> {
        let pulled = self.connection.changes_since(after).await?;
        let mut changes = Changes {
            server_head: pulled.head,
            ..Changes::default()
        };
        for row in pulled.memories {
            changes.reach(&row);
            match store::parse_row(row.clone()) {
                Ok(memory) => changes.memories.push(memory),
                Err(e) => changes.skipped.push(undecodable("memory", "key", &row, &e)),
            }
        }
        for row in pulled.reviews {
            changes.reach(&row);
            match serde_json::from_value::<ReviewRecord>(row.clone()) {
                Ok(record) => changes.reviews.push(record),
                Err(e) => changes
                    .skipped
                    .push(undecodable("review", "review_id", &row, &e)),
            }
        }
        for row in pulled.guidelines {
            changes.reach(&row);
            match serde_json::from_value::<GuidelineChange>(row.clone()) {
                Ok(change) => changes.guidelines.push(change),
                Err(e) => {
                    let skipped = undecodable("guideline_change", "change_id", &row, &e);
                    changes.skipped.push(skipped);
                }
            }
        }
        Ok(changes)
    }

    /// One memory as the server holds it now (`None` if it does not exist or is not this
    /// developer's to read).
    pub async fn row(&self, id: &str) -> Result<Option<StoredMemory>, RemoteError> {
        let doing = "reading a shared memory";
        self.connection
            .row(id)
            .await?
            .map(|row| store::from_row(row, doing))
            .transpose()
            .map_err(|e| RemoteError::Query {
                doing: doing.to_string(),
                message: e.to_string(),
            })
    }

    /// Applies entries in one transaction: an entry already applied is skipped, a memory
    /// changed since the entry's base is a `Conflict`.
    pub async fn push(&self, entries: &[Entry]) -> Result<(), RemoteError> {
        let writes: Vec<Push> = entries.iter().map(push).collect();
        self.connection.push(&writes).await
    }

    /// Whether an entry's key is recorded as applied (for status and tests).
    pub async fn applied(&self, key: &str) -> Result<bool, RemoteError> {
        self.connection.applied(key).await
    }
}

/// A pulled row that does not decode, named by its table, id and number; the reason is
/// serde's without the values it quotes.
fn undecodable(
    table: &str,
    id_field: &str,
    row: &serde_json::Value,
    error: &serde_json::Error,
) -> Skipped {
    let reason = format!("does not decode: {}", crate::secrets::json_error("", error));
    Skipped::new(table, row[id_field].as_str(), seq_of(row), &reason)
}

/// A pulled row's number in the write sequence (0 when it has none: the server's schema
/// gives every row one).
fn seq_of(row: &serde_json::Value) -> u64 {
    row["seq"].as_u64().unwrap_or(0)
}

/// An entry as the server stores it: memories as rows of the `memory` table (numbered and
/// stamped with the entry's key by the server), forgotten memories as tombstones that keep
/// their kind and developer (so the server's permissions still know whose they were), the
/// review record and guideline changes as their rows.
fn push(entry: &Entry) -> Push {
    let memories = entry
        .memories
        .iter()
        .map(|row| {
            let vector = row.vector.as_deref().and_then(store::decode_vector);
            let mut body = store::to_row(&row.memory, vector.as_deref());
            body.remove("id");
            body.remove("seq");
            Pushed {
                key: row.memory.id.clone(),
                base: row.base.clone(),
                body,
            }
        })
        .collect();
    let tombstones = entry
        .tombstones
        .iter()
        .map(|t| {
            let mut body = crate::storage::Row::new();
            body.insert("forgotten".to_string(), true.into());
            body.insert("kind".to_string(), t.kind.as_str().into());
            if let Some(developer) = &t.developer {
                body.insert("developer".to_string(), developer.as_str().into());
            }
            Pushed {
                key: t.id.clone(),
                base: None,
                body,
            }
        })
        .collect();
    let reviews = entry
        .review
        .iter()
        .map(|record| {
            let mut body = store::review_body(record);
            body.remove("seq");
            Pushed {
                key: record.id.clone(),
                base: None,
                body,
            }
        })
        .collect();
    let guidelines = entry
        .guidelines
        .iter()
        .map(|change| Pushed {
            key: change.id.clone(),
            base: None,
            body: store::guideline_body(change),
        })
        .collect();
    Push {
        key: entry.key.clone(),
        memories,
        tombstones,
        reviews,
        guidelines,
    }
}
